// bsplib/profile/profile_recorder.h: the superstep profiler's recorder (bsprun --profile).
// One per process, made by the runtime when the option is set; the API entry points
// (api.cc) tell it about every put, get, send and sync, and it writes one `step` record
// per superstep (trace_format.h) to FILE.part<pid>. At bsp_end each process closes its
// part with its load map; pid 0 joins the parts into FILE once every process is done.
// Off (no --profile), active() is null and the entry points do nothing else.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "bsplib/profile/trace_format.h"
#include "recovery/channel.h"

namespace bsp::profile {

class Recorder {
 public:
  // Makes FILE.part<pid> (a new file, mode 0600: auth/private_file.h; an existing one is
  // refused unless overwrite, and pid 0 refuses an existing FILE too, before the job
  // runs). `path` may hold %e (the program's name), %t (the transport) and %% (a percent
  // sign). Throws std::runtime_error if it cannot.
  Recorder(const std::string& path, int pid, int nprocs, const std::string& transport, const recovery::Channel& channel,
           bool overwrite = false);
  ~Recorder();

  void count_put(int pid, long nbytes) {
    PeerTraffic& p = touch(pid);
    ++p.messages_out;
    p.bytes_out += static_cast<std::uint64_t>(nbytes);
    ++step_.puts;
  }
  // A message's bytes: its payload and the tag size in force this superstep.
  void count_send(int pid, long payload_nbytes) {
    PeerTraffic& p = touch(pid);
    ++p.messages_out;
    p.bytes_out += static_cast<std::uint64_t>(payload_nbytes + tagsize_);
    ++step_.sends;
  }
  void count_get(int pid, long nbytes) {
    PeerTraffic& p = touch(pid);
    ++p.gets_from;
    p.get_bytes_from += static_cast<std::uint64_t>(nbytes);
    ++step_.gets;
  }
  // bsp_set_tagsize: the tag size from the next superstep on.
  void set_tagsize(int bytes) { next_tagsize_ = bytes; }
  // Around the engine's superstep: call_site is the return address of bsp_sync (bsp_end).
  void sync_started(const void* call_site, bool final);
  void sync_ended();
  // bsp_end, after its superstep: writes the load map and the end record, closes the part.
  void finish();
  // Pid 0, once every process has finished: joins FILE.part0 .. part<p-1> into FILE;
  // returns what went wrong ("" if nothing), e.g. a part missing on another host.
  std::string join_parts() const;

  const std::string& path() const { return path_; }

 private:
  PeerTraffic& touch(int pid) {
    PeerTraffic& p = peers_[static_cast<std::size_t>(pid)];
    if (p.messages_out == 0 && p.gets_from == 0) touched_.push_back(pid);
    return p;
  }
  void flush(bool all);

  std::string path_;
  bool overwrite_ = false;
  int pid_, nprocs_;
  const recovery::Channel& channel_;
  int fd_ = -1;
  std::string buffer_;
  std::vector<PeerTraffic> peers_;
  std::vector<int> touched_;
  Step step_;
  WireCounters last_wire_;
  std::uint64_t previous_end_ns_ = 0;
  std::uint32_t steps_ = 0;
  long tagsize_ = 0, next_tagsize_ = 0;
};

// The process's recorder, or null when profiling is off.
namespace detail {
inline Recorder* active_recorder = nullptr;
}
inline Recorder* active() { return detail::active_recorder; }
inline void set_active(Recorder* recorder) { detail::active_recorder = recorder; }

// The file name with %e, %t and %% replaced.
std::string expand_path(const std::string& pattern, const std::string& program, const std::string& transport);
// CLOCK_MONOTONIC in nanoseconds.
std::uint64_t now_ns();

}  // namespace bsp::profile
