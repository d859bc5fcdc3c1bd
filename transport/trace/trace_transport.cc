// transport/trace/trace_transport.cc: pcap tracing decorator.
#include "transport/trace/trace_transport.h"

#include "auth/private_file.h"

#include <fmt/format.h>
#include <fcntl.h>
#include <pcap/pcap.h>
#include <sys/stat.h>
#include <unistd.h>
#include <sys/time.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <vector>

namespace bsp::transport {
namespace {

constexpr std::uint16_t kEtherType = 0x88B5;

class TraceTransport final : public Transport, private FrameSink {
 public:
  TraceTransport(std::unique_ptr<Transport> inner, const std::string& file, int pid, bool overwrite)
      : inner_(std::move(inner)), pid_(pid), dead_(pcap_open_dead(DLT_EN10MB, 1 << 18)) {
    // A new file, mode 0600: a trace holds the job's data; only its owner may read it,
    // and a file or link someone else put at its name is never written through.
    std::string error;
    int fd = auth::create_private_file(file, overwrite, error);
    FILE* stream = fd < 0 ? nullptr : ::fdopen(fd, "wb");
    if (fd >= 0 && !stream) error = std::strerror(errno);
    dumper_ = stream ? pcap_dump_fopen(dead_, stream) : nullptr;
    if (!dumper_) {
      std::string why = stream ? pcap_geterr(dead_) : error;
      if (stream) std::fclose(stream);
      else if (fd >= 0) ::close(fd);
      pcap_close(dead_);
      throw std::runtime_error(fmt::format("trace: cannot write {}: {}", file, why));
    }
  }
  ~TraceTransport() override {
    pcap_dump_close(dumper_);
    pcap_close(dead_);
  }

  std::string_view name() const override { return inner_->name(); }
  Capabilities capabilities() const override { return inner_->capabilities(); }
  const Transport* wrapped() const override { return inner_.get(); }
  // Frames are recorded as handed to send(); the hook still runs where the real transport
  // runs it, so a traced job takes the production path.
  void set_transmit_hook(TransmitHook hook) override { inner_->set_transmit_hook(std::move(hook)); }
  std::string local_address() override { return inner_->local_address(); }
  void connect(const std::vector<std::string>& addresses) override { inner_->connect(addresses); }

  SendStatus send(int peer, std::span<const std::byte> frame) override {
    SendStatus status = inner_->send(peer, frame);
    if (status == SendStatus::sent) dump(pid_, peer, frame);
    return status;
  }
  std::size_t receive(FrameSink& sink, std::size_t max_frames) override {
    outer_ = &sink;
    std::size_t delivered = inner_->receive(*this, max_frames);
    outer_ = nullptr;
    return delivered;
  }
  bool flush() override { return inner_->flush(); }
  int wait_fd() const override { return inner_->wait_fd(); }
  // Not stage(): a traced job sends all its data through frames, so the trace holds it.
  bool ready() override { return inner_->ready(); }
  bool before_block() override { return inner_->before_block(); }
  void after_block() override { inner_->after_block(); }

 private:
  void on_frame(int peer, std::span<const std::byte> frame) override {
    dump(peer, pid_, frame);
    outer_->on_frame(peer, frame);
  }
  void on_peer_lost(int peer, std::string_view why) override { outer_->on_peer_lost(peer, why); }

  static void write_mac(std::byte* at, int pid) {
    const std::uint8_t mac[6] = {0x02, 0, 0, 0, static_cast<std::uint8_t>((pid >> 8) & 0xFF),
                                 static_cast<std::uint8_t>(pid & 0xFF)};
    std::memcpy(at, mac, 6);
  }

  void dump(int from, int to, std::span<const std::byte> frame) {
    record_.resize(14 + frame.size());
    write_mac(record_.data(), to < 0 ? 0xFFFF : to);
    write_mac(record_.data() + 6, from < 0 ? 0xFFFF : from);
    record_[12] = std::byte{kEtherType >> 8};
    record_[13] = std::byte{kEtherType & 0xFF};
    std::memcpy(record_.data() + 14, frame.data(), frame.size());
    pcap_pkthdr header{};
    ::gettimeofday(&header.ts, nullptr);
    header.caplen = header.len = static_cast<bpf_u_int32>(record_.size());
    pcap_dump(reinterpret_cast<u_char*>(dumper_), &header, reinterpret_cast<const u_char*>(record_.data()));
  }

  std::unique_ptr<Transport> inner_;
  int pid_;
  pcap_t* dead_;
  pcap_dumper_t* dumper_ = nullptr;
  FrameSink* outer_ = nullptr;
  std::vector<std::byte> record_;
};

}  // namespace

std::string trace_file_for(const std::string& path, int pid) {
  auto dot = path.rfind('.');
  auto slash = path.rfind('/');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return fmt::format("{}.{}", path, pid);
  return fmt::format("{}.{}{}", path.substr(0, dot), pid, path.substr(dot));
}

std::unique_ptr<Transport> wrap_with_trace(std::unique_ptr<Transport> inner, const std::string& path, int pid,
                                           bool overwrite) {
  return std::make_unique<TraceTransport>(std::move(inner), trace_file_for(path, pid), pid, overwrite);
}

}  // namespace bsp::transport
