// bsplib/profile/trace_format.h: the superstep profiler's binary trace (bsprun --profile),
// its writer and its reader. A trace file is a sequence of sections, one per process (a
// job's file is the concatenation of its processes' sections, in any order). Little-endian.
//
//   section   := magic "BSPPROF\x01" (8 bytes), then records until an `end` record
//   record    := u8 type | u32 body length | body
//   header  1 := u32 version | i32 pid | i32 nprocs | u64 begin_ns | str transport | str executable
//   step    2 := u32 index | u8 flags (bit 0: bsp_end's superstep) | u64 sync_start_ns |
//                u64 sync_end_ns | u64 call_site | u32 puts | u32 gets | u32 sends |
//                7 × u64 channel counters of the superstep (wire bytes sent, received, data
//                frames sent, received, retransmissions, acks sent, acks received) |
//                u32 n | n × (u32 peer | u32 messages out | u64 bytes out | u32 gets from |
//                u64 get bytes from)
//   mapping 3 := u64 start | u64 end | u64 file offset | str path   (executable mappings)
//   end     4 := u64 end_ns | u32 supersteps in the section
//   str       := u32 length | bytes
// Times are CLOCK_MONOTONIC nanoseconds (comparable between processes of one host).
// Unknown record types are skipped (their length says how far), so a newer writer's
// additions do not break an older reader. The reader trusts nothing: every length is
// checked against what is left, and an error names the byte offset and what was wrong.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace bsp::profile {

inline constexpr char kMagic[8] = {'B', 'S', 'P', 'P', 'R', 'O', 'F', '\x01'};
inline constexpr std::uint32_t kVersion = 1;
enum RecordType : std::uint8_t { kHeader = 1, kStep = 2, kMapping = 3, kEnd = 4 };
enum StepFlags : std::uint8_t { kFinalStep = 1 };
// Bounds a reader enforces (a trace is untrusted input).
inline constexpr std::uint32_t kMaxString = 4096;
inline constexpr std::int32_t kMaxProcesses = 1 << 20;

// What one process sent to (or fetched from) one peer in a superstep, counted at the API.
struct PeerTraffic {
  std::uint32_t peer = 0;
  std::uint32_t messages_out = 0;    // bsp_put, bsp_hpput and bsp_send to peer
  std::uint64_t bytes_out = 0;       // their data bytes (puts) and tag + payload bytes (sends)
  std::uint32_t gets_from = 0;       // bsp_get and bsp_hpget from peer
  std::uint64_t get_bytes_from = 0;  // bytes those gets fetch (peer sends them)
  bool operator==(const PeerTraffic&) const = default;
};

// The reliable channel's counters over one superstep (recovery::ChannelStats differenced).
struct WireCounters {
  std::uint64_t bytes_sent = 0, bytes_received = 0, frames_sent = 0, frames_received = 0;
  std::uint64_t retransmissions = 0, acks_sent = 0, acks_received = 0;
  bool operator==(const WireCounters&) const = default;
};

struct Step {
  std::uint32_t index = 0;  // 0 for the first superstep
  std::uint8_t flags = 0;
  std::uint64_t sync_start_ns = 0, sync_end_ns = 0;
  std::uint64_t call_site = 0;  // return address of bsp_sync (bsp_end for the last)
  std::uint32_t puts = 0, gets = 0, sends = 0;
  WireCounters wire;
  std::vector<PeerTraffic> peers;  // only peers with traffic; the process itself included
  bool operator==(const Step&) const = default;
};

struct Mapping {
  std::uint64_t start = 0, end = 0, offset = 0;
  std::string path;
  bool operator==(const Mapping&) const = default;
};

struct ProcessTrace {
  std::int32_t pid = 0, nprocs = 0;
  std::uint64_t begin_ns = 0, end_ns = 0;
  std::string transport, executable;
  std::vector<Step> steps;
  std::vector<Mapping> mappings;
  bool operator==(const ProcessTrace&) const = default;
};

class TraceError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Writer: each call appends one encoded piece to out.
void append_magic(std::string& out);
void append_header(std::string& out, std::int32_t pid, std::int32_t nprocs, std::uint64_t begin_ns,
                   const std::string& transport, const std::string& executable);
void append_step(std::string& out, const Step& step);
void append_mapping(std::string& out, const Mapping& mapping);
void append_end(std::string& out, std::uint64_t end_ns, std::uint32_t steps);
// The whole section of one process.
std::string encode(const ProcessTrace& trace);

// Reader: every section of the bytes, checked (TraceError says where and what). The
// sections must be of one job: the same nprocs, each pid once, pids below nprocs.
std::vector<ProcessTrace> decode(std::span<const std::byte> bytes);
std::vector<ProcessTrace> read_trace_file(const std::string& path);

}  // namespace bsp::profile
