// bench/layer_pingpong.cc: round trip (--test=pingpong) or one-way bandwidth
// (--test=bandwidth: `count` messages one way, one small reply at the end, time from the
// first send to the reply, as paper 001's Fig. 2) between two processes through one layer
// of the stack, busy-polling, to give the floor each higher layer is compared with:
//   --layer=transport  bare frames through the transport (no header, no recovery)
//   --layer=channel    payloads through the reliable channel (wire header, CRC, recovery)
// The bare transport's stream counts frames sent; the receiver answers with how many
// arrived and when the last one did, so the line also gives the delivered rate (what a
// lossy stream really moved) and the loss. --batch=N hands N frames per send_batch() call
// (udp segments runs of them: GSO), the best the bare transport can stream.
// The BSPlib superstep on top is bench/sync_time. Two processes are forked here and
// exchange addresses over a pipe: no launcher, no control plane. With --netns=PREFIX
// process i first moves into network namespace PREFIX<i> (tools/cluster.sh; root) and
// binds to its address there, so the two ends talk across the emulated switch. --stats
// prints the reliable channel's packet counters of both processes (channel layer).
// Run: bazel-bin/bench/layer_pingpong --transport=tcp --layer=transport --size=4
#include <arpa/inet.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <ifaddrs.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstring>
#include <cstdlib>
#include <string>
#include <vector>

#include "recovery/channel.h"
#include "recovery/frame_codec.h"
#include "recovery/wire.h"
#include "transport/registry.h"

namespace {

using Clock = std::chrono::steady_clock;

struct Options {
  std::string transport = "tcp";
  std::string layer = "transport";
  std::size_t size = 4;
  int repetitions = 20000;
  std::string test = "pingpong";
  int count = 100000;  // bandwidth: messages sent
  int batch = 1;       // bandwidth, transport layer: frames per send_batch() call
  std::string netns;   // "": both on this host's lo
  bool stats = false;  // print the reliable channel's packet counters at the end
};

// The reliable channel's counters of one process, on stderr (--stats, channel layer).
void print_stats(int pid, const bsp::recovery::ChannelStats& s) {
  fmt::print(stderr,
             "layer_pingpong stats pid {}: data_sent={} data_received={} explicit_acks={} acks_received={} "
             "nacks_sent={} retransmissions={} duplicates={} probes={} send_waits={} overflow_dropped={}\n",
             pid, s.data_sent, s.data_received, s.explicit_acks_sent, s.acks_received, s.nacks_sent, s.retransmissions,
             s.duplicates_received, s.probes_sent, s.send_buffer_waits, s.overflow_dropped);
}

// Moves this process into network namespace `name` and returns the IPv4 address of its
// interface other than lo (where the transports should bind).
std::string enter_namespace(const std::string& name) {
  int fd = ::open(("/var/run/netns/" + name).c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0 || ::setns(fd, CLONE_NEWNET) != 0) {
    fmt::print(stderr,
               "layer_pingpong: cannot enter network namespace {} (tools/cluster.sh up 2 --prefix ...? root?)\n", name);
    std::_Exit(126);
  }
  ::close(fd);
  ifaddrs* list = nullptr;
  std::string found;
  if (::getifaddrs(&list) != 0) return found;
  for (ifaddrs* entry = list; entry && found.empty(); entry = entry->ifa_next) {
    if (!entry->ifa_addr || entry->ifa_addr->sa_family != AF_INET || std::string(entry->ifa_name) == "lo") continue;
    char text[INET_ADDRSTRLEN];
    ::inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(entry->ifa_addr)->sin_addr, text, sizeof text);
    found = text;
  }
  ::freeifaddrs(list);
  return found;
}

// Receives exactly one frame/payload, busy-polling.
struct OneFrame : bsp::transport::FrameSink, bsp::recovery::PayloadSink {
  bool got = false;
  long received = 0;
  bool keep = false;  // copy what arrives into `last` (the bandwidth reply)
  std::vector<std::byte> last;
  void on_frame(int, std::span<const std::byte> frame) override { take(frame); }
  void on_payload(int, std::span<const std::byte> payload) override { take(payload); }
  void take(std::span<const std::byte> bytes) {
    got = true;
    ++received;
    if (keep) last.assign(bytes.begin(), bytes.end());
  }
  void on_peer_lost(int peer, std::string_view why) override {
    fmt::print(stderr, "peer {} lost: {}\n", peer, why);
    std::exit(1);
  }
};

std::string read_line(int fd) {
  std::string line;
  char c;
  while (::read(fd, &c, 1) == 1 && c != '\n') line += c;
  return line;
}

// The bandwidth reply's report: frames that arrived and when the last one did
// (steady_clock, shared by the processes of one host), after the reply's own header.
struct Delivery {
  std::int64_t frames = 0;
  std::int64_t last_arrival_ns = 0;
};

// One way: pid 0 sends options.count messages, pid 1 counts them (over a bare unreliable
// transport some may be lost: it gives up after a quiet moment and says how many) and
// answers with one message saying how many came and when the last did; pid 0 reports
// bytes sent / (first send .. answer) and bytes delivered / (first send .. last arrival).
template <typename Send, typename SendMany, typename Receive>
int bandwidth(int pid, const Options& options, Send& send, SendMany& send_many, Receive& receive, OneFrame& sink,
              std::vector<std::byte>& message, std::size_t report_at, bsp::transport::Transport* transport,
              bsp::recovery::Channel* channel) {
  if (pid == 0) {
    sink.keep = true;
    auto start = Clock::now();
    for (int i = 0; i < options.count;) {
      int now = std::min(options.batch, options.count - i);
      send_many(now);
      i += now;
    }
    receive();
    auto end = Clock::now();
    double seconds = std::chrono::duration<double>(end - start).count();
    Delivery delivery{options.count, 0};
    if (sink.last.size() >= report_at + sizeof delivery)
      std::memcpy(&delivery, sink.last.data() + report_at, sizeof delivery);
    double delivered_seconds = delivery.last_arrival_ns > 0
                                   ? std::chrono::duration<double>(
                                         Clock::time_point(std::chrono::nanoseconds(delivery.last_arrival_ns)) - start)
                                         .count()
                                   : seconds;
    fmt::print(
        "layer={} transport={} size={} count={} bandwidth_MBps={:.1f} batch={} delivered={} lost={} "
        "delivered_MBps={:.1f}\n",
        options.layer, options.transport, options.size, options.count,
        options.size * double(options.count) / seconds / 1e6, options.batch, delivery.frames,
        options.count - delivery.frames,
        options.size * double(delivery.frames) / std::max(delivered_seconds, 1e-9) / 1e6);
  } else {
    auto quiet_since = Clock::now();
    auto last_arrival = quiet_since;
    long seen = 0;
    while (sink.received < options.count) {
      if (channel) channel->progress(sink);
      else transport->receive(sink, 64);
      if (sink.received != seen) {
        seen = sink.received;
        quiet_since = last_arrival = Clock::now();
      } else if (!channel && seen > 0 && Clock::now() - quiet_since > std::chrono::milliseconds(300)) {
        fmt::print(stderr, "receiver: {} of {} frames arrived ({} lost at the bare transport)\n", seen, options.count,
                   options.count - seen);
        break;
      }
    }
    Delivery delivery{seen,
                      std::chrono::duration_cast<std::chrono::nanoseconds>(last_arrival.time_since_epoch()).count()};
    if (message.size() >= report_at + sizeof delivery)
      std::memcpy(message.data() + report_at, &delivery, sizeof delivery);
    send();
    if (channel) {
      auto until = Clock::now() + std::chrono::seconds(2);
      while (Clock::now() < until && !channel->all_acknowledged()) channel->progress(sink);
    }
  }
  return 0;
}

int run(int pid, int to_peer, int from_peer, const Options& options) {
  bsp::transport::TransportConfig config{pid, 2, 4242, {}};
  config.receive_filter = bsp::wire::receive_filter(4242, pid);
  if (!options.netns.empty()) config.options["host"] = enter_namespace(options.netns + std::to_string(pid));
  // Transport settings from the environment, as bsprun passes them (BSP_MTU=8192 ...).
  for (const char* key :
       {"mtu", "nic_rx", "nic_tx", "rx_ring", "tx_ring", "umem_frames", "xdp_mode", "xdp_copy", "busy_poll_us"}) {
    std::string variable = "BSP_";
    for (const char* c = key; *c; ++c) variable += static_cast<char>(std::toupper(static_cast<unsigned char>(*c)));
    if (const char* value = std::getenv(variable.c_str()); value && *value) config.options[key] = value;
  }
  auto transport = bsp::transport::create_transport(options.transport, config);
  std::string mine = transport->local_address() + "\n";
  if (::write(to_peer, mine.data(), mine.size()) < 0) return 1;
  std::string theirs = read_line(from_peer);
  std::vector<std::string> addresses = pid == 0 ? std::vector{mine, theirs} : std::vector{theirs, mine};
  addresses[static_cast<std::size_t>(pid)].pop_back();
  transport->connect(addresses);
  // Both ends ready before the first frame (a datagram sent to an unbound peer is lost).
  char ready = 'r';
  if (::write(to_peer, &ready, 1) != 1 || ::read(from_peer, &ready, 1) != 1) return 1;
  std::unique_ptr<bsp::recovery::Channel> channel;
  if (options.layer == "channel") {
    bsp::recovery::ChannelConfig channel_config;
    channel_config.pid = pid;
    channel_config.nprocs = 2;
    channel_config.job_id = 4242;
    channel_config.spin_us = 2000;  // busy-poll, like the bare layer
    if (const char* buffers = std::getenv("BSP_BUFFERS"); buffers && *buffers)
      channel_config.buffers = std::stoul(buffers);
    if (const char* policy = std::getenv("BSP_ACK_POLICY"); policy && *policy) channel_config.ack_policy = policy;
    channel = bsp::recovery::make_channel(std::move(transport), channel_config);
  }
  const int peer = 1 - pid;
  // At the transport layer the message is a bare wire header (job, source, destination:
  // what nic's kernel filter looks at) followed by the payload; the channel adds its own.
  std::vector<std::byte> message(options.size + (channel ? 0 : bsp::wire::kHeaderSize), std::byte{7});
  if (!channel) {
    bsp::wire::Header header{};
    header.job_id = 4242;
    header.src = static_cast<std::uint16_t>(pid);
    header.dst = static_cast<std::uint16_t>(peer);
    std::memcpy(message.data(), &header, sizeof header);
  }
  OneFrame sink;
  auto send = [&] {
    if (channel) {
      while (channel->send(peer, message) != bsp::recovery::SendResult::ok) channel->progress(sink);
    } else {
      while (transport->send(peer, message) != bsp::transport::SendStatus::sent) transport->flush();
      transport->flush();  // a transport may batch frames until flushed (nic's TX ring)
    }
  };
  // `count` messages at once: one send_batch() at the transport layer (the channel sends
  // one payload at a time anyway).
  std::vector<bsp::transport::OutFrame> many;
  auto send_many = [&](int count) {
    if (channel || count == 1) {
      for (int i = 0; i < count; ++i) send();
      return;
    }
    many.assign(static_cast<std::size_t>(count), bsp::transport::OutFrame{peer, message});
    std::size_t sent = 0;
    while (sent < many.size()) {
      sent += transport->send_batch(std::span(many).subspan(sent));
      transport->flush();
    }
  };
  // Gives up (exit 3) when nothing arrives for a while: a lost frame at the bare transport,
  // or a reliable layer that failed to recover, is reported instead of hanging.
  auto receive = [&] {
    sink.got = false;
    auto since = Clock::now();
    for (long polls = 1; !sink.got; ++polls) {
      if (channel) channel->progress(sink);
      else transport->receive(sink, 1);
      if (polls % 4096 == 0 && Clock::now() - since > std::chrono::seconds(5)) {
        fmt::print(stderr, "layer_pingpong: pid {}: nothing from the peer for 5 s (a frame was lost, not recovered)\n",
                   pid);
        std::_Exit(3);
      }
    }
  };
  if (options.test == "bandwidth") {
    std::size_t report_at = channel ? 0 : bsp::wire::kHeaderSize;
    int status = bandwidth(pid, options, send, send_many, receive, sink, message, report_at, transport.get(),
                           channel.get());
    if (channel && options.stats) print_stats(pid, channel->stats());
    return status;
  }
  std::vector<double> samples;
  samples.reserve(static_cast<std::size_t>(options.repetitions));
  for (int i = -1000; i < options.repetitions; ++i) {
    if (pid == 0) {
      auto start = Clock::now();
      send();
      receive();
      if (i >= 0) samples.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
    } else {
      receive();
      send();
    }
  }
  if (channel) {  // let the last acknowledgements (and any retransmission) flow before leaving
    auto until = Clock::now() + std::chrono::seconds(2);
    while (Clock::now() < until && !channel->all_acknowledged()) channel->progress(sink);
  }
  if (channel && options.stats) print_stats(pid, channel->stats());
  if (pid == 0) {
    std::sort(samples.begin(), samples.end());
    fmt::print("layer={} transport={} size={} round_trip_us median={:.2f} min={:.2f}\n", options.layer,
               options.transport, options.size, samples[samples.size() / 2], samples.front());
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&](const char* name) { return arg.substr(std::strlen(name)); };
    if (arg.rfind("--transport=", 0) == 0) options.transport = value("--transport=");
    else if (arg.rfind("--layer=", 0) == 0) options.layer = value("--layer=");
    else if (arg.rfind("--size=", 0) == 0) options.size = std::stoul(value("--size="));
    else if (arg.rfind("--repetitions=", 0) == 0) options.repetitions = std::stoi(value("--repetitions="));
    else if (arg.rfind("--test=", 0) == 0) options.test = value("--test=");
    else if (arg.rfind("--count=", 0) == 0) options.count = std::stoi(value("--count="));
    else if (arg.rfind("--batch=", 0) == 0) options.batch = std::max(1, std::stoi(value("--batch=")));
    else if (arg.rfind("--netns=", 0) == 0) options.netns = value("--netns=");
    else if (arg == "--stats") options.stats = true;
    else {
      bool help = arg == "--help" || arg == "-h";
      fmt::print(help ? stdout : stderr,
                 "usage: layer_pingpong [--transport=tcp] [--layer=transport|channel] [--test=pingpong|bandwidth] "
                 "[--size=4] [--repetitions=N] [--count=N] [--batch=N] [--netns=PREFIX] [--stats]\n"
                 "  Round trip or one-way bandwidth between two forked processes through one layer: the\n"
                 "  bare transport's frames or the reliable channel; the floor a BSPlib superstep is\n"
                 "  compared with (bench/layer_table.sh puts the layers side by side).\n");
      return help ? 0 : 2;
    }
  }
  int down[2], up[2];
  if (::pipe(down) || ::pipe(up)) return 1;
  pid_t child = ::fork();
  if (child == 0) std::_Exit(run(1, up[1], down[0], options));
  int status = run(0, down[1], up[0], options);
  int child_status = 0;
  ::waitpid(child, &child_status, 0);
  return status != 0 ? status : (WIFEXITED(child_status) ? WEXITSTATUS(child_status) : 1);
}
