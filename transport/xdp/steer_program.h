// transport/xdp/steer_program.h: the xdp transport's XDP program on one interface:
// loaded from the object embedded in the binary (xdp_steer.bpf.c), attached through
// libxdp's dispatcher so other jobs and programs keep theirs, configured with what this
// process's frames look like, and detached again: by the destructor, by a reaper
// process when this one dies without running it (SIGKILL), and, should the reaper have
// died too, by the next process that attaches on the interface (sweep_stale_programs).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "transport/nic/packet_socket.h"
#include "transport/transport.h"

struct xdp_program;  // libxdp's
struct bpf_object;   // libbpf's

namespace bsp::transport::xdp {

inline constexpr const char* kProgramName = "bsp_xdp_steer";

// What the program steers to the socket map: frames of ether_type addressed to mac
// whose fields (after the Ethernet header) match; everything else passes.
struct Steering {
  std::uint16_t ether_type = 0;
  nic::MacAddress mac{};
  std::vector<FrameMatch> fields;  // at most 4
};

class SteerProgram {
 public:
  // mode: "auto" (native, else generic), "native" or "skb". Throws std::runtime_error
  // naming the interface, what failed and what to use instead.
  SteerProgram(const nic::Interface& interface, const std::string& mode);
  ~SteerProgram();
  SteerProgram(const SteerProgram&) = delete;
  SteerProgram& operator=(const SteerProgram&) = delete;

  // The socket map (key: rx queue index) to put this process's AF_XDP socket in.
  int socket_map_fd() const { return socket_map_fd_; }
  // Starts steering (until then every frame passes).
  void steer(const Steering& steering);
  // "native" (the driver runs it) or "skb" (generic XDP, after the kernel built an skb).
  const std::string& mode() const { return mode_; }
  std::uint32_t id() const { return id_; }

 private:
  void start_reaper();
  void close_program();

  nic::Interface interface_;
  ::bpf_object* object_ = nullptr;  // the program's, closed after it
  ::xdp_program* program_ = nullptr;
  std::string mode_;
  int attach_mode_ = 0;  // enum xdp_attach_mode
  std::uint32_t id_ = 0;
  int socket_map_fd_ = -1;
  int config_map_fd_ = -1;
  int reaper_pipe_ = -1;  // write end; the reaper detaches the program at EOF
};

// Detaches every instance of our program on the interface whose owner process is gone;
// returns how many. Run before attaching, and by tests and tools.
int sweep_stale_programs(int ifindex);
// How many instances of our program the interface carries (for tests and tools).
int count_programs(int ifindex);

}  // namespace bsp::transport::xdp
