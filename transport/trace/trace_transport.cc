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
#include <memory>
#include <stdexcept>
#include <vector>

#include "transport/forwarding_transport.h"
#include "transport/option_spec.h"
#include "transport/registry.h"

namespace bsp::transport {
namespace {

constexpr std::uint16_t kEtherType = 0x88B5;

// One process's pcap file, shared by the traced paths of a hybrid.
class PcapWriter {
 public:
  PcapWriter(const std::string& file, bool overwrite) : dead_(pcap_open_dead(DLT_EN10MB, 1 << 18)) {
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
  ~PcapWriter() {
    pcap_dump_close(dumper_);
    pcap_close(dead_);
  }
  PcapWriter(const PcapWriter&) = delete;
  PcapWriter& operator=(const PcapWriter&) = delete;

  // A frame from pid `from` to pid `to` (-1: unknown), given in one or two pieces.
  void dump(int from, int to, std::span<const std::byte> head, std::span<const std::byte> body = {}) {
    record_.resize(14 + head.size() + body.size());
    write_mac(record_.data(), to < 0 ? 0xFFFF : to);
    write_mac(record_.data() + 6, from < 0 ? 0xFFFF : from);
    record_[12] = std::byte{kEtherType >> 8};
    record_[13] = std::byte{kEtherType & 0xFF};
    std::memcpy(record_.data() + 14, head.data(), head.size());
    if (!body.empty()) std::memcpy(record_.data() + 14 + head.size(), body.data(), body.size());
    pcap_pkthdr header{};
    ::gettimeofday(&header.ts, nullptr);
    header.caplen = header.len = static_cast<bpf_u_int32>(record_.size());
    pcap_dump(reinterpret_cast<u_char*>(dumper_), &header, reinterpret_cast<const u_char*>(record_.data()));
  }

 private:
  static void write_mac(std::byte* at, int pid) {
    const std::uint8_t mac[6] = {
        0x02, 0, 0, 0, static_cast<std::uint8_t>((pid >> 8) & 0xFF), static_cast<std::uint8_t>(pid & 0xFF)};
    std::memcpy(at, mac, 6);
  }

  pcap_t* dead_;
  pcap_dumper_t* dumper_ = nullptr;
  std::vector<std::byte> record_;
};

class TraceTransport final : public ForwardingTransport, private FrameSink {
 public:
  TraceTransport(std::unique_ptr<Transport> inner, std::shared_ptr<PcapWriter> writer, int pid)
      : ForwardingTransport(std::move(inner)), writer_(std::move(writer)), pid_(pid) {}

  // Frames are recorded as handed to send(); the transmit hook still runs where the real
  // transport runs it, so a traced job takes the production path.
  SendStatus send(int peer, std::span<const std::byte> frame) override {
    SendStatus status = inner().send(peer, frame);
    if (status == SendStatus::sent) writer_->dump(pid_, peer, frame);
    return status;
  }
  SendStatus send_gathered(int peer, std::span<const std::byte> head, std::span<const std::byte> body) override {
    SendStatus status = inner().send_gathered(peer, head, body);
    if (status == SendStatus::sent) writer_->dump(pid_, peer, head, body);
    return status;
  }
  std::size_t send_batch(std::span<const OutFrame> frames) override {
    std::size_t sent = inner().send_batch(frames);
    for (const OutFrame& frame : frames.first(sent)) writer_->dump(pid_, frame.peer, frame.bytes);
    return sent;
  }
  std::size_t receive(FrameSink& sink, std::size_t max_frames) override {
    outer_ = &sink;
    std::size_t delivered = inner().receive(*this, max_frames);
    outer_ = nullptr;
    return delivered;
  }
  // No staging: a traced job sends all its data through frames, so the trace holds it.
  Staging* staging() override { return nullptr; }

 private:
  void on_frame(int peer, std::span<const std::byte> frame) override {
    writer_->dump(peer, pid_, frame);
    outer_->on_frame(peer, frame);
  }
  void on_peer_lost(int peer, std::string_view why) override { outer_->on_peer_lost(peer, why); }

  std::shared_ptr<PcapWriter> writer_;
  int pid_;
  FrameSink* outer_ = nullptr;
};

// The decorator's one option, read by the layer that wraps every transport with it
// (bsplib/runtime.cc); shown by bsprun --help with the transports' own.
const TransportOptionRegistration kTraceOption{
    text_option("trace", "",
                "write every frame each process sends and receives to FILE.<pid>.pcap (a new file, mode 0600; see "
                "--overwrite)"),
    "trace"};

}  // namespace

std::string trace_file_for(const std::string& path, int pid) {
  auto dot = path.rfind('.');
  auto slash = path.rfind('/');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return fmt::format("{}.{}", path, pid);
  return fmt::format("{}.{}{}", path.substr(0, dot), pid, path.substr(dot));
}

std::unique_ptr<Transport> wrap_with_trace(std::unique_ptr<Transport> inner, const std::string& path, int pid,
                                           bool overwrite) {
  auto writer = std::make_shared<PcapWriter>(trace_file_for(path, pid), overwrite);
  return decorate(std::move(inner), [&](std::unique_ptr<Transport> path_transport) -> std::unique_ptr<Transport> {
    return std::make_unique<TraceTransport>(std::move(path_transport), writer, pid);
  });
}

}  // namespace bsp::transport
