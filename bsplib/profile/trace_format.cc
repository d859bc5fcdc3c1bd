// bsplib/profile/trace_format.cc: encoding and bounds-checked decoding of the profiler's
// trace (the format is described in trace_format.h).
#include "bsplib/profile/trace_format.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <iterator>
#include <set>

namespace bsp::profile {
namespace {

template <typename T>
void put(std::string& out, T value) {
  static_assert(std::is_integral_v<T>);
  for (std::size_t i = 0; i < sizeof(T); ++i) {
    out.push_back(static_cast<char>(static_cast<std::uint64_t>(value) >> (8 * i) & 0xff));
  }
}

void put_string(std::string& out, const std::string& text) {
  std::size_t length = std::min<std::size_t>(text.size(), kMaxString);
  put<std::uint32_t>(out, static_cast<std::uint32_t>(length));
  out.append(text, 0, length);
}

// Appends type, a length placeholder, the body written by fill, then patches the length.
template <typename Fill>
void record(std::string& out, RecordType type, Fill&& fill) {
  put<std::uint8_t>(out, type);
  std::size_t length_at = out.size();
  put<std::uint32_t>(out, 0);
  fill();
  auto length = static_cast<std::uint32_t>(out.size() - length_at - 4);
  for (std::size_t i = 0; i < 4; ++i) out[length_at + i] = static_cast<char>(length >> (8 * i) & 0xff);
}

// A bounded cursor over untrusted bytes; `base` is the offset of bytes[0] in the file.
class Cursor {
 public:
  Cursor(std::span<const std::byte> bytes, std::size_t base) : bytes_(bytes), base_(base) {}
  std::size_t left() const { return bytes_.size() - at_; }
  std::size_t offset() const { return base_ + at_; }
  [[noreturn]] void fail(const std::string& what) const {
    throw TraceError(fmt::format("profile trace: at byte {}: {}", offset(), what));
  }
  void need(std::size_t n, const char* what) const {
    if (left() < n) fail(fmt::format("{} needs {} bytes, only {} left", what, n, left()));
  }
  template <typename T>
  T get(const char* what) {
    need(sizeof(T), what);
    std::uint64_t value = 0;
    for (std::size_t i = 0; i < sizeof(T); ++i) {
      value |= static_cast<std::uint64_t>(std::to_integer<std::uint8_t>(bytes_[at_ + i])) << (8 * i);
    }
    at_ += sizeof(T);
    return static_cast<T>(value);
  }
  std::string get_string(const char* what) {
    auto length = get<std::uint32_t>(what);
    if (length > kMaxString) fail(fmt::format("{}: length {} exceeds {}", what, length, kMaxString));
    need(length, what);
    std::string text(reinterpret_cast<const char*>(bytes_.data() + at_), length);
    at_ += length;
    return text;
  }
  Cursor sub(std::size_t n, const char* what) {
    need(n, what);
    Cursor inner(bytes_.subspan(at_, n), base_ + at_);
    at_ += n;
    return inner;
  }

 private:
  std::span<const std::byte> bytes_;
  std::size_t base_;
  std::size_t at_ = 0;
};

// Bytes one step record needs at least (everything but its peer entries).
constexpr std::size_t kStepFixed = 4 + 1 + 8 * 3 + 4 * 3 + 8 * 7 + 4;
constexpr std::size_t kPeerEntry = 4 + 4 + 8 + 4 + 8;

Step decode_step(Cursor& c, std::int32_t nprocs) {
  if (c.left() < kStepFixed) c.fail(fmt::format("a superstep record needs {} bytes, has {}", kStepFixed, c.left()));
  Step s;
  s.index = c.get<std::uint32_t>("superstep index");
  s.flags = c.get<std::uint8_t>("flags");
  s.sync_start_ns = c.get<std::uint64_t>("sync start");
  s.sync_end_ns = c.get<std::uint64_t>("sync end");
  if (s.sync_end_ns < s.sync_start_ns) c.fail("superstep's sync ends before it starts");
  s.call_site = c.get<std::uint64_t>("call site");
  s.puts = c.get<std::uint32_t>("puts");
  s.gets = c.get<std::uint32_t>("gets");
  s.sends = c.get<std::uint32_t>("sends");
  WireCounters& w = s.wire;
  for (std::uint64_t* field : {&w.bytes_sent, &w.bytes_received, &w.frames_sent, &w.frames_received, &w.retransmissions,
                               &w.acks_sent, &w.acks_received}) {
    *field = c.get<std::uint64_t>("channel counter");
  }
  auto n = c.get<std::uint32_t>("peer count");
  if (n > static_cast<std::uint32_t>(nprocs)) c.fail(fmt::format("{} peer entries for {} processes", n, nprocs));
  if (c.left() != std::size_t{n} * kPeerEntry) {
    c.fail(fmt::format("{} peer entries need {} bytes, the record has {}", n, std::size_t{n} * kPeerEntry, c.left()));
  }
  s.peers.resize(n);
  for (PeerTraffic& p : s.peers) {
    p.peer = c.get<std::uint32_t>("peer");
    if (p.peer >= static_cast<std::uint32_t>(nprocs)) c.fail(fmt::format("peer {} of {} processes", p.peer, nprocs));
    p.messages_out = c.get<std::uint32_t>("messages out");
    p.bytes_out = c.get<std::uint64_t>("bytes out");
    p.gets_from = c.get<std::uint32_t>("gets from");
    p.get_bytes_from = c.get<std::uint64_t>("get bytes from");
  }
  return s;
}

ProcessTrace decode_section(Cursor& c) {
  c.need(sizeof kMagic, "section magic");
  Cursor magic = c.sub(sizeof kMagic, "section magic");
  for (char expected : kMagic) {
    if (magic.get<std::uint8_t>("magic") != static_cast<std::uint8_t>(expected)) {
      c.fail("not a BSPlib profile section (bad magic): is this a file written by bsprun --profile?");
    }
  }
  ProcessTrace trace;
  bool have_header = false;
  for (;;) {
    auto type = c.get<std::uint8_t>("record type");
    auto length = c.get<std::uint32_t>("record length");
    Cursor body = c.sub(length, "record body");
    if (!have_header && type != kHeader) body.fail(fmt::format("record of type {} before the header", type));
    switch (type) {
      case kHeader: {
        if (have_header) body.fail("a second header in one section");
        auto version = body.get<std::uint32_t>("version");
        if (version != kVersion) body.fail(fmt::format("trace version {}, this reader knows {}", version, kVersion));
        trace.pid = body.get<std::int32_t>("pid");
        trace.nprocs = body.get<std::int32_t>("nprocs");
        if (trace.nprocs < 1 || trace.nprocs > kMaxProcesses) body.fail(fmt::format("nprocs {}", trace.nprocs));
        if (trace.pid < 0 || trace.pid >= trace.nprocs) {
          body.fail(fmt::format("pid {} of {} processes", trace.pid, trace.nprocs));
        }
        trace.begin_ns = body.get<std::uint64_t>("begin time");
        trace.transport = body.get_string("transport");
        trace.executable = body.get_string("executable");
        have_header = true;
        break;
      }
      case kStep: {
        Step step = decode_step(body, trace.nprocs);
        if (step.index != trace.steps.size()) {
          body.fail(fmt::format("superstep {} where {} was due (pid {})", step.index, trace.steps.size(), trace.pid));
        }
        trace.steps.push_back(std::move(step));
        break;
      }
      case kMapping: {
        Mapping m;
        m.start = body.get<std::uint64_t>("mapping start");
        m.end = body.get<std::uint64_t>("mapping end");
        m.offset = body.get<std::uint64_t>("mapping offset");
        m.path = body.get_string("mapping path");
        if (m.end <= m.start) body.fail("mapping ends before it starts");
        trace.mappings.push_back(std::move(m));
        break;
      }
      case kEnd: {
        trace.end_ns = body.get<std::uint64_t>("end time");
        auto count = body.get<std::uint32_t>("superstep count");
        if (count != trace.steps.size()) {
          body.fail(fmt::format("end record says {} supersteps, the section holds {} (pid {})", count,
                                trace.steps.size(), trace.pid));
        }
        return trace;
      }
      default:
        break;  // a newer writer's record: skipped whole
    }
    if (body.left() != 0 && type <= kEnd)
      body.fail(fmt::format("{} bytes left over in a record of type {}", body.left(), type));
    if (c.left() == 0)
      c.fail(fmt::format("section of pid {} ends without its end record (process stopped?)", trace.pid));
  }
}

}  // namespace

void append_magic(std::string& out) { out.append(kMagic, sizeof kMagic); }

void append_header(std::string& out, std::int32_t pid, std::int32_t nprocs, std::uint64_t begin_ns,
                   const std::string& transport, const std::string& executable) {
  record(out, kHeader, [&] {
    put<std::uint32_t>(out, kVersion);
    put<std::int32_t>(out, pid);
    put<std::int32_t>(out, nprocs);
    put<std::uint64_t>(out, begin_ns);
    put_string(out, transport);
    put_string(out, executable);
  });
}

void append_step(std::string& out, const Step& s) {
  record(out, kStep, [&] {
    put<std::uint32_t>(out, s.index);
    put<std::uint8_t>(out, s.flags);
    put<std::uint64_t>(out, s.sync_start_ns);
    put<std::uint64_t>(out, s.sync_end_ns);
    put<std::uint64_t>(out, s.call_site);
    put<std::uint32_t>(out, s.puts);
    put<std::uint32_t>(out, s.gets);
    put<std::uint32_t>(out, s.sends);
    const WireCounters& w = s.wire;
    for (std::uint64_t v : {w.bytes_sent, w.bytes_received, w.frames_sent, w.frames_received, w.retransmissions,
                            w.acks_sent, w.acks_received}) {
      put<std::uint64_t>(out, v);
    }
    put<std::uint32_t>(out, static_cast<std::uint32_t>(s.peers.size()));
    for (const PeerTraffic& p : s.peers) {
      put<std::uint32_t>(out, p.peer);
      put<std::uint32_t>(out, p.messages_out);
      put<std::uint64_t>(out, p.bytes_out);
      put<std::uint32_t>(out, p.gets_from);
      put<std::uint64_t>(out, p.get_bytes_from);
    }
  });
}

void append_mapping(std::string& out, const Mapping& m) {
  record(out, kMapping, [&] {
    put<std::uint64_t>(out, m.start);
    put<std::uint64_t>(out, m.end);
    put<std::uint64_t>(out, m.offset);
    put_string(out, m.path);
  });
}

void append_end(std::string& out, std::uint64_t end_ns, std::uint32_t steps) {
  record(out, kEnd, [&] {
    put<std::uint64_t>(out, end_ns);
    put<std::uint32_t>(out, steps);
  });
}

std::string encode(const ProcessTrace& trace) {
  std::string out;
  append_magic(out);
  append_header(out, trace.pid, trace.nprocs, trace.begin_ns, trace.transport, trace.executable);
  for (const Step& step : trace.steps) append_step(out, step);
  for (const Mapping& mapping : trace.mappings) append_mapping(out, mapping);
  append_end(out, trace.end_ns, static_cast<std::uint32_t>(trace.steps.size()));
  return out;
}

std::vector<ProcessTrace> decode(std::span<const std::byte> bytes) {
  if (bytes.empty()) throw TraceError("profile trace: the file is empty (did the job reach bsp_end?)");
  Cursor c(bytes, 0);
  std::vector<ProcessTrace> traces;
  std::set<std::int32_t> seen;
  while (c.left() > 0) {
    std::size_t at = c.offset();
    ProcessTrace trace = decode_section(c);
    if (!traces.empty() && trace.nprocs != traces.front().nprocs) {
      throw TraceError(fmt::format("profile trace: at byte {}: section of pid {} says {} processes, the first said {}",
                                   at, trace.pid, trace.nprocs, traces.front().nprocs));
    }
    if (!seen.insert(trace.pid).second) {
      throw TraceError(fmt::format("profile trace: at byte {}: a second section of pid {}", at, trace.pid));
    }
    traces.push_back(std::move(trace));
  }
  std::sort(traces.begin(), traces.end(), [](const ProcessTrace& a, const ProcessTrace& b) { return a.pid < b.pid; });
  return traces;
}

std::vector<ProcessTrace> read_trace_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw TraceError(fmt::format("profile trace: cannot open {}", path));
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  try {
    return decode(std::as_bytes(std::span(bytes.data(), bytes.size())));
  } catch (const TraceError& error) {
    throw TraceError(fmt::format("{}: {}", path, error.what()));
  }
}

}  // namespace bsp::profile
