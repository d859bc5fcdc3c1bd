// transport/tcp/tcp_transport_class.h: the tcp transport's class, private to transport/tcp.
// Its work is in three files: tcp_transport.cc (the Transport interface, the data path
// and losses), connections.cc (making, proving, adopting, limiting and closing
// connections, and their timers) and frame_stream.cc (each peer's stream framing).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "transport/tcp/frame_stream.h"
#include "transport/tcp/peer_link.h"
#include "transport/tcp/tcp_transport.h"
#include "transport/transport.h"

namespace bsp::transport::tcp {

class TcpTransport final : public Transport, private StreamEvents {
 public:
  explicit TcpTransport(const TransportConfig& config);
  ~TcpTransport() override;

  std::string_view name() const override { return "tcp"; }
  Capabilities capabilities() const override;
  std::string local_address() override;
  void connect(const std::vector<std::string>& addresses) override;
  SendStatus send(int peer_pid, std::span<const std::byte> frame) override {
    return send_gathered(peer_pid, frame, {});
  }
  SendStatus send_gathered(int peer_pid, std::span<const std::byte> head, std::span<const std::byte> body) override;
  std::size_t receive(FrameSink& sink, std::size_t max_frames) override;
  bool flush() override;
  int wait_fd() const override { return epoll_fd_; }

  const TcpSetupStats& setup_stats() const { return stats_; }

 private:
  // ---- connections.cc: holding and dialing
  SendStatus hold(int pid, std::span<const std::byte> head, std::span<const std::byte> body);
  void request_connection(int pid, Clock::time_point now);
  void try_dial(int pid, Clock::time_point now);
  void close_dial_socket(Dial& dial);
  void dial_failed(int pid, std::string problem, bool nobody_listens, Clock::time_point now = Clock::now());
  void lose_dial(int pid);
  void unproven_peer(int pid, std::string problem);
  void progress_dial(int pid);
  // ---- connections.cc: accepting
  void accept_all(Clock::time_point now);
  void progress_incoming(Incoming& connection, Clock::time_point now);
  void decide(Incoming& connection, Clock::time_point now);
  void drop(Incoming& connection, std::string_view why);
  void welcome(Incoming& connection, Clock::time_point now);
  void refuse(Incoming& connection, std::string why, bool say = true);
  void note_refusal();
  // ---- connections.cc: adopting, limiting, closing
  void adopt(int pid, int fd);
  void make_room();
  void begin_close(int pid);
  void on_marker_received(int pid, bool bye);
  void maybe_finish_close(int pid);
  void serve_waiters(Clock::time_point now);
  // ---- connections.cc: timers
  bool setup_active() const { return !dialing_.empty() || !incoming_.empty() || listener_paused_; }
  void service(Clock::time_point now);
  void arm_timer();

  // ---- tcp_transport.cc: data path
  bool all_open() const;
  std::size_t poll_events(FrameSink& sink, std::size_t max_frames, std::size_t used);
  void set_events(int pid);
  bool flush_peer(int pid);
  std::size_t read_and_deliver(int pid, FrameSink& sink, std::size_t max_frames, std::size_t used);
  void settle_end_of_file(int pid);
  bool read_from(int pid);
  std::size_t deliver(int pid, FrameSink& sink, std::size_t max_frames);
  // StreamEvents: what a peer's stream met besides frames.
  bool on_marker(int pid, bool bye) override;
  void on_bad_stream(int pid, std::string why) override;
  void note(int pid, std::vector<int>& list, bool Peer::*in_list);
  void note_backlog(int pid) { note(pid, backlog_, &Peer::in_backlog); }
  void note_buffered(int pid) { note(pid, buffered_, &Peer::in_buffered); }
  void take(std::vector<int>& list, std::vector<int>& into, bool Peer::*in_list);
  // ---- tcp_transport.cc: losses
  std::size_t report_losses(FrameSink& sink);
  void mark_lost(int pid, std::string why, bool drain);
  // ---- tcp_transport.cc: helpers
  void count_socket(int change) { sockets_ = static_cast<std::size_t>(static_cast<long>(sockets_) + change); }
  bool watch(int fd, std::uint32_t events, std::uint64_t value);
  void modify(int fd, std::uint32_t events, std::uint64_t value);
  static bool parse_address(const std::string& address, sockaddr_in& target);
  void tune(int fd);

  TransportConfig config_;
  std::string host_;
  int sndbuf_ = 0;
  int rcvbuf_ = 0;
  int connect_timeout_ms_ = kDefaultConnectTimeoutMs;
  std::size_t limit_ = 1;
  std::size_t max_unproven_ = kMaxUnproven;
  std::size_t place_head_ = 0;  // the sink's FrameSink::placement_head() (0: it places nothing)
  int listen_fd_ = -1;
  int epoll_fd_ = -1;
  int loss_fd_ = -1;   // eventfd in the epoll set: readable while a loss waits to be reported
  int timer_fd_ = -1;  // timerfd in the epoll set: the next retry or deadline
  Clock::time_point timer_at_ = Clock::time_point::max();
  bool listener_paused_ = false;
  Clock::time_point listener_paused_until_{};
  bool losses_pending_ = false;
  bool refusal_said_ = false;
  std::vector<Peer> peers_;
  std::vector<int> dialing_;        // pids whose link is dialing
  std::vector<int> backlog_;        // pids with bytes queued for the kernel or held for a connection
  std::vector<int> buffered_;       // pids whose inbox may hold whole frames not handed out
  std::vector<int> visiting_;       // receive()'s copy of buffered_ while it works through it
  std::vector<int> flushing_;       // flush()'s copy of backlog_
  std::vector<Incoming> incoming_;  // accepted, not adopted
  std::size_t sockets_ = 0;         // data connections and dials holding a socket
  std::size_t closing_ = 0;         // data connections closing
  std::size_t data_connections_ = 0;
  std::uint64_t tick_ = 0;
  TcpSetupStats stats_;
};

}  // namespace bsp::transport::tcp
