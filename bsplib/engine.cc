// bsplib/engine.cc: the superstep engine (see engine.h for the protocol).
#include "bsplib/engine.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <thread>

#include "bsplib/bulk_copy.h"

namespace bsp {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {
constexpr auto kWaitSlice = 20ms;       // longest single block before re-checking the job
constexpr auto kAbortCheckEvery = 1ms;  // how often an idle superstep asks the coordinator
constexpr auto kDrainLimit = 5s;        // bsp_end: longest wait for the last acknowledgements
constexpr int kMaxTagSize = 1 << 20;    // a sanity bound on bsp_set_tagsize
// Combined puts: a contiguous record grows to at most this many bytes of data (a strided
// one to records::kMaxStridedData); runs at equal steps, and the inline path of put(),
// are for puts of at most kLargestRun bytes (larger ones gain little from them).
constexpr std::uint64_t kLargestCombined = 1u << 30;
constexpr std::uint32_t kLargestRun = 1024;
}  // namespace

Engine::Engine(int pid, int nprocs, std::unique_ptr<recovery::Channel> channel, JobControl& job)
    : pid_(pid),
      nprocs_(nprocs),
      channel_(std::move(channel)),
      job_(job),
      max_payload_(channel_ ? channel_->max_payload() : 0),
      outgoing_(static_cast<std::size_t>(nprocs)),
      incoming_(static_cast<std::size_t>(nprocs)),
      progress_(static_cast<std::size_t>(nprocs), PeerProgress{Clock::now()}) {}

Engine::~Engine() = default;

// ---------------------------------------------------------------- errors and checks

void Engine::usage_error(std::string_view call, const std::string& what) {
  job_.abort_job(fmt::format("bsplib: {} on pid {}: {}", call, pid_, what));
  __builtin_unreachable();
}

void Engine::bad_pid(std::string_view call, int pid) {
  usage_error(call,
              fmt::format("pid {} is out of range (there are {} processes, pids 0..{})", pid, nprocs_, nprocs_ - 1));
}

void Engine::null_pointer(std::string_view call, const char* what, long nbytes) {
  usage_error(call, fmt::format("{} is NULL (for {} bytes)", what, nbytes));
}

void Engine::bad_area(std::string_view call, int pid, const void* address, long offset, long nbytes) {
  if (offset < 0 || nbytes < 0) usage_error(call, fmt::format("negative offset {} or size {}", offset, nbytes));
  usage_error(call, fmt::format("address {} (offset {}, {} bytes, pid {}) is not registered; "
                                "bsp_push_reg takes effect at the next bsp_sync",
                                address, offset, nbytes, pid));
}

void Engine::outside_remote(const char* call, const char* direction, int pid, std::uint32_t registration, long offset,
                            long nbytes, std::uint64_t size) {
  usage_error(call, fmt::format("{} by pid {} {} pid {}: offset {} + {} bytes is outside registration #{} ({} bytes on "
                                "pid {})",
                                call, pid_, direction, pid, offset, nbytes, registration, size, pid));
}

void Engine::outside_local(const char* call, const char* direction, int src, std::uint32_t registration,
                           std::uint32_t offset, std::uint64_t size) {
  const Registration* area = registrations_.get(registration);
  job_.abort_job(fmt::format(
      "bsplib: {} by pid {} {} pid {}: offset {} + {} bytes is outside registration #{} ({} bytes on pid {})", call,
      src, direction, pid_, offset, size, registration, area ? area->size : 0, pid_));
  __builtin_unreachable();
}

// ---------------------------------------------------------------- DRMA

void Engine::push_reg(const void* address, long size) {
  if (size < 0) usage_error("bsp_push_reg", fmt::format("negative size {}", size));
  if (address == nullptr && size > 0) {
    usage_error("bsp_push_reg", fmt::format("NULL registered with size {} (NULL is allowed with size 0 only)", size));
  }
  registrations_.push(address, static_cast<std::size_t>(size));
  run_ = RunCursor{};
}

void Engine::pop_reg(const void* address) {
  run_ = RunCursor{};
  if (!registrations_.pop(address)) {
    usage_error("bsp_pop_reg", fmt::format("address {} is not registered", static_cast<const void*>(address)));
  }
}

void Engine::put_general(int pid, const void* src, void* dst, long offset, long nbytes, bool buffered) {
  const char* call = buffered ? "bsp_put" : "bsp_hpput";
  std::uint32_t registration = registration_of(call, pid, dst, offset, nbytes);
  check_pointer(call, "the source", src, nbytes);
  check_remote_area(call, "into", pid, registration, offset, nbytes);
  if (nbytes == 0) return;
  if (buffered) {
    write_put(pid, registration, static_cast<std::uint32_t>(offset), src, static_cast<std::uint32_t>(nbytes));
    aim_run(pid, dst, registration, static_cast<std::uint32_t>(nbytes));
  } else {
    hpputs_.push_back(
        HpPut{pid, src, registration, static_cast<std::uint32_t>(offset), static_cast<std::uint32_t>(nbytes)});
  }
}

// A put's data: staged for the receiver to pull when large and the path allows, else in
// the record stream, where it joins the previous put's record when it continues it
// (combine_put).
void Engine::write_put(int pid, std::uint32_t registration, std::uint32_t offset, const void* src, std::uint32_t size) {
  Outgoing& out = records_to(pid);
  if (write_staged_put(pid, out, registration, offset, src, size)) return;
  if (!combine_put(out, registration, offset, src, size)) {
    out.last_put = out.stream.size();
    if (size >= gather_from() && pid != pid_) {
      write_large_put(pid, out, registration, offset, src, size);
    } else {
      records::Writer(out.stream).put(registration, offset, src, size);
    }
  }
  out.last_put_end = out.stream.size();
  if (out.stream.size() - out.sent >= 2 * max_payload_ && pid != pid_) [[unlikely]]
    send_early(pid);
}

// Push-Pull: a put of at least the pull threshold to a peer sharing memory is copied into
// this process's staging memory and the peer pulls it; false where there is none.
bool Engine::write_staged_put(int pid, Outgoing& out, std::uint32_t registration, std::uint32_t offset, const void* src,
                              std::uint32_t size) {
  if (size < pull_threshold_ || pid == pid_) return false;
  std::uint64_t token = 0;
  std::byte* staged = channel_->stage(pid, size, token);
  if (!staged) return false;
  copy_bytes(staged, src, size);
  records::Writer(out.stream).put_pulled(registration, offset, size, token);
  return true;
}

// A large put to another process. Whenever everything before it has been handed to the
// channel, its data goes to the channel straight from the caller's memory (the channel
// copies it at once: into the kernel on tcp, into its pool on udp and nic, so bsp_put's
// copy at the call is that one); what the channel cannot take now is copied into the
// stream in pieces, each sent as soon as it is there, and once the stream is drained the
// data goes direct again. On a receiver that keeps up, nothing is copied here at all.
void Engine::write_large_put(int pid, Outgoing& out, std::uint32_t registration, std::uint32_t offset, const void* src,
                             std::uint32_t size) {
  records::Writer(out.stream).put_header(registration, offset, size);
  const auto* from = static_cast<const std::byte*>(src);
  const std::size_t piece_limit = 4 * max_payload_;
  bool direct = out.gathered_next == out.gathered.size();  // (at a sync, hp-puts may be queued)
  if (direct) send_stream(pid, true);
  for (std::size_t done = 0; done < size;) {
    if (direct && out.sent == out.stream.size()) {
      std::size_t piece = std::min<std::size_t>(size - done, max_payload_);
      if (channel_->send(pid, {from + done, piece}) == recovery::SendResult::ok) {
        done += piece;
        moved(pid);
        continue;
      }
    }
    std::size_t piece = std::min<std::size_t>(size - done, piece_limit);
    out.stream.append(from + done, piece);
    done += piece;
    if (done < size) send_early(pid);
  }
}

// Combined puts: a put joins the stream's last record when that is an unsent put into the
// same registration, with nothing written after it, and this put continues it: into the
// bytes right after it (the record grows), or, of the same size, one step further than
// the last put of a run at equal steps (a strided record, started by the second put).
// Returns whether the put was written so.
bool Engine::combine_put(Outgoing& out, std::uint32_t registration, std::uint32_t offset, const void* src,
                         std::uint32_t size) {
  if (!combine_puts_ || out.last_put_end != out.stream.size() || out.last_put < out.sent) return false;
  const std::byte* at = out.stream.data() + out.last_put;
  const records::Put last = records::read_put(at, out.last_put);  // (a strided record starts the same)
  if (last.registration != registration) return false;
  if (static_cast<records::Kind>(at[0]) == records::Kind::put_strided) {
    const records::StridedPut run = records::read_strided(at, out.last_put);
    if (size != run.size || run.offset + std::uint64_t{run.count} * run.stride != offset ||
        (std::uint64_t{run.count} + 1) * size > records::kMaxStridedData) {
      return false;
    }
    records::extend_strided(out.stream, out.last_put, src, size);
    return true;
  }
  if (std::uint64_t{last.offset} + last.size == offset) {
    if (std::uint64_t{last.size} + size > kLargestCombined) return false;
    records::extend_put(out.stream, out.last_put, src, size);
    return true;
  }
  if (size != last.size || offset <= last.offset || size > kLargestRun) return false;
  records::start_strided(out.stream, out.last_put, offset - last.offset, src, size);
  return true;
}

// After a buffered put of size bytes into pid's stream: where the next put of the same
// size would continue its record's run, for put()'s inline path: one stride on (strided
// record) or right after it (contiguous). A record that is not the stream's last, or
// puts too large for runs, aim nowhere.
void Engine::aim_run(int pid, const void* dst, std::uint32_t registration, std::uint32_t size) {
  const Outgoing& out = outgoing_[static_cast<std::size_t>(pid)];
  run_ = RunCursor{};
  if (!combine_puts_ || size > kLargestRun || out.last_put_end != out.stream.size() || out.last_put < out.sent) {
    return;
  }
  const std::byte* at = out.stream.data() + out.last_put;
  const bool strided = static_cast<records::Kind>(at[0]) == records::Kind::put_strided;
  const records::Put last = records::read_put(at, out.last_put);  // (a strided record starts the same)
  std::uint64_t offset = last.offset, step = size, next = offset + last.size;
  // The run ends where the remote registration does (levels 0 and 1), at 4 GiB, or where
  // its record would outgrow what combine_put lets a record hold.
  std::uint64_t limit = UINT32_MAX;
  if (library_level_ < 2) {
    if (std::optional<std::uint64_t> remote = registrations_.remote_size(pid, registration)) limit = *remote;
  }
  if (strided) {
    const records::StridedPut run = records::read_strided(at, out.last_put);
    step = run.stride;
    std::uint64_t count = run.count, room = records::kMaxStridedData / size;
    if (count >= room) return;
    next = offset + count * step;
    limit = std::min(limit, next + (room - count - 1) * step + size);
  } else {
    limit = std::min(limit, offset + kLargestCombined);
  }
  run_ = RunCursor{
      dst,          pid,    static_cast<long>(size), static_cast<long>(next), static_cast<long>(step), limit,
      out.last_put, strided};
}

// Full payloads of pid's stream go now, during the superstep: the receiver keeps them
// until its bsp_sync, and the data flows while this process goes on putting or
// computing. Never blocks: what the channel cannot take now waits for the sync.
void Engine::send_early(int pid) {
  if (send_stream(pid, false)) channel_->progress(*this);  // hands queued frames to the kernel; arrivals are kept
}

// Hands pid's records to the channel in order, stream bytes and gathered data where they
// belong, until the channel refuses one; whole: everything (the sync), else a partial
// payload at the stream's end waits for more records. True when anything was sent.
bool Engine::send_stream(int pid, bool whole) {
  Outgoing& out = outgoing_[pid];
  bool sent_any = false;
  for (;;) {
    const bool gathering = out.gathered_next < out.gathered.size();
    std::span<const std::byte> payload;
    if (gathering && out.sent == out.gathered[out.gathered_next].at) {
      const Outgoing::Gathered& data = out.gathered[out.gathered_next];
      payload = {data.data + out.gathered_done, std::min(max_payload_, data.size - out.gathered_done)};
    } else {
      std::size_t limit = gathering ? out.gathered[out.gathered_next].at : out.stream.size();
      std::size_t size = std::min(max_payload_, limit - out.sent);
      if (size == 0 || (!whole && !gathering && size < max_payload_)) break;
      payload = {out.stream.data() + out.sent, size};
    }
    if (channel_->send(pid, payload) != recovery::SendResult::ok) break;
    if (payload.data() == out.stream.data() + out.sent) {
      out.sent += payload.size();
    } else if ((out.gathered_done += payload.size()) == out.gathered[out.gathered_next].size) {
      ++out.gathered_next;
      out.gathered_done = 0;
    }
    sent_any = true;
    moved(pid);
  }
  return sent_any;
}

// Data a pulled record names in src's staging memory, or the job stops.
const std::byte* Engine::pulled_data(int src, std::uint64_t token, std::uint32_t size) {
  std::span<const std::byte> data = channel_->staged(src, token, size);
  if (data.size() != size) {
    job_.abort_job(fmt::format("bsplib: pid {} names {} bytes at {} of its staging memory to pid {}: outside it", src,
                               size, token, pid_));
  }
  return data.data();
}

void Engine::get(int pid, const void* src, long offset, void* dst, long nbytes) {
  std::uint32_t registration = registration_of("bsp_get", pid, src, offset, nbytes);
  check_pointer("bsp_get", "the destination", dst, nbytes);
  check_remote_area("bsp_get", "from", pid, registration, offset, nbytes);
  if (nbytes == 0) return;
  auto request_id = static_cast<std::uint32_t>(pending_gets_.size());
  pending_gets_.push_back(PendingGet{static_cast<std::byte*>(dst), static_cast<std::uint32_t>(nbytes), pid});
  Outgoing& out = records_to(pid);
  records::Writer(out.stream)
      .get_request(registration, static_cast<std::uint32_t>(offset), static_cast<std::uint32_t>(nbytes), request_id);
  ++out.get_requests;
  out.reply_bytes_expected += static_cast<std::uint64_t>(nbytes);
}

// ---------------------------------------------------------------- BSMP

void Engine::set_tagsize(int* tag_nbytes) {
  if (tag_nbytes == nullptr) usage_error("bsp_set_tagsize", "the tag size pointer is NULL");
  if (*tag_nbytes < 0 || *tag_nbytes > kMaxTagSize) {
    usage_error("bsp_set_tagsize", fmt::format("tag size {} is out of range 0..{}", *tag_nbytes, kMaxTagSize));
  }
  int previous = next_tagsize_;
  next_tagsize_ = *tag_nbytes;
  tagsize_set_ = true;
  *tag_nbytes = previous;
}

void Engine::send(int pid, const void* tag, const void* payload, long nbytes) {
  check_pid("bsp_send", pid);
  if (nbytes < 0) usage_error("bsp_send", fmt::format("negative payload size {}", nbytes));
  check_pointer("bsp_send", "the tag", tag, tagsize_);
  check_pointer("bsp_send", "the payload", payload, nbytes);
  records::Writer(records_to(pid).stream)
      .message(tag, static_cast<std::uint32_t>(tagsize_), payload, static_cast<std::uint32_t>(nbytes));
}

void Engine::queue_send(int pid, std::uint32_t queue, const records::Piece* pieces, std::size_t count) {
  check_pid("bsp::queue::send", pid);
  if (queue >= records::kMaxQueues) {
    usage_error("bsp::queue::send",
                fmt::format("queue number {} is out of range 0..{}", queue, records::kMaxQueues - 1));
  }
  std::uint64_t total = 0;
  for (std::size_t i = 0; i < count; ++i) {
    check_pointer("bsp::queue::send", "a payload piece", pieces[i].data, static_cast<long>(pieces[i].size));
    total += pieces[i].size;
  }
  if (total > INT32_MAX)
    usage_error("bsp::queue::send", fmt::format("a message of {} bytes (at most 2^31 - 1)", total));
  records::Writer(records_to(pid).stream).queue_message(queue, pieces, count, static_cast<std::uint32_t>(total));
}

// accum_nbytes may be NULL (a caller that only counts messages); nmessages may not.
void Engine::qsize(int* nmessages, int* accum_nbytes) {
  if (nmessages == nullptr) usage_error("bsp_qsize", "nmessages is NULL");
  *nmessages = static_cast<int>(messages_.size());
  if (accum_nbytes) *accum_nbytes = static_cast<int>(messages_.payload_bytes());
}

void Engine::get_tag(int* status, void* tag) {
  if (status == nullptr) usage_error("bsp_get_tag", "the status pointer is NULL");
  if (messages_.size() == 0) {
    *status = -1;
    return;
  }
  MessageQueue::Message message = messages_.front();
  check_pointer("bsp_get_tag", "the tag buffer", tag, static_cast<long>(message.tag_size));
  *status = static_cast<int>(message.payload_size);
  if (message.tag_size > 0) std::memcpy(tag, message.tag, message.tag_size);
}

void Engine::move(void* payload, long reception_nbytes) {
  if (reception_nbytes < 0) usage_error("bsp_move", fmt::format("negative reception size {}", reception_nbytes));
  if (messages_.size() == 0) usage_error("bsp_move", "the message queue is empty");
  MessageQueue::Message message = messages_.front();
  std::size_t size = std::min<std::size_t>(message.payload_size, static_cast<std::size_t>(reception_nbytes));
  check_pointer("bsp_move", "the payload buffer", payload, static_cast<long>(size));
  if (size > 0) std::memcpy(payload, message.payload, size);
  messages_.pop_front();
}

int Engine::hpmove(void** tag_ptr, void** payload_ptr) {
  if (tag_ptr == nullptr || payload_ptr == nullptr) {
    usage_error("bsp_hpmove", fmt::format("{} is NULL", tag_ptr == nullptr ? "tag_ptr" : "payload_ptr"));
  }
  if (messages_.size() == 0) return -1;
  MessageQueue::Message message = messages_.front();
  *tag_ptr = const_cast<std::byte*>(message.tag);
  *payload_ptr = const_cast<std::byte*>(message.payload);
  messages_.pop_front();
  return static_cast<int>(message.payload_size);
}

// ---------------------------------------------------------------- receiving

void Engine::on_payload(int peer, std::span<const std::byte> payload) {
  incoming_[peer].stream.append(payload.data(), payload.size());
  took_payload(peer);
}

// Placement: a large payload is read by the transport straight into the end of peer's
// stream (one copy fewer than on_payload). Its bytes are stored once confirmed.
std::span<std::byte> Engine::payload_room(int peer, std::size_t size) {
  Incoming& in = incoming_[peer];
  in.placing = size;  // replaces room given and not confirmed (a smaller one starts there too)
  return {in.stream.room(size), size};
}

void Engine::payload_abandoned(int peer) { incoming_[peer].placing = 0; }

void Engine::on_payload_placed(int peer) {
  Incoming& in = incoming_[peer];
  in.stream.extend(in.placing);  // within the room's capacity: nothing moves
  in.placing = 0;
  took_payload(peer);
}

// A payload from peer is at the end of its stream: parse it now if this process is in
// its sync (else it waits there until then).
void Engine::took_payload(int peer) {
  moved(peer);
  heard_from(peer);
  if (!in_sync_) return;
  if (sparse_) {
    parse_sparse(peer);
  } else {
    parse(peer);
  }
}

void Engine::on_peer_lost(int peer, std::string_view why) {
  if (finishing_) return;
  // The coordinator usually knows better (exit status, signal): give it a moment.
  auto deadline = Clock::now() + 1s;
  while (Clock::now() < deadline) {
    job_.check_for_abort();
    std::this_thread::sleep_for(10ms);
  }
  job_.abort_job(fmt::format("bsplib: pid {} lost contact with pid {} ({})", pid_, peer, why));
}

void Engine::parse(int src) {
  Incoming& in = incoming_[src];
  while (in.phase != Phase::complete) {
    std::size_t size = next_record(src, in, in.phase == Phase::records);
    if (size == 0) return;
    const std::byte* at = in.stream.data() + in.parsed;
    auto kind = static_cast<records::Kind>(at[0]);
    if (in.phase == Phase::records) {
      switch (kind) {
        case records::Kind::put:
        case records::Kind::put_strided:
        case records::Kind::put_pulled:
        case records::Kind::get_request:
        case records::Kind::message:
        case records::Kind::queue_message:
          take_record(src, kind, at, in);
          break;
        case records::Kind::end:
          in.end = records::read_end(at);
          in.end_at = in.parsed;
          if (in.end->superstep != static_cast<std::uint32_t>(superstep_)) {
            job_.abort_job(fmt::format("bsplib: pid {} is in superstep {} but pid {} ended superstep {}", pid_,
                                       superstep_, src, in.end->superstep));
          }
          in.phase = in.reply_bytes_missing > 0 ? Phase::replies : Phase::complete;
          ++ended_;
          break;
        case records::Kind::get_reply:
        case records::Kind::get_reply_pulled:
          job_.abort_job(fmt::format("bsplib: pid {} got an unexpected get reply from pid {}", pid_, src));
          break;
        default:
          job_.abort_job(
              fmt::format("bsplib: pid {} received a record of the sparse sync protocol from pid {} "
                          "(every process of a job must run the same --sync)",
                          pid_, src));
      }
    } else {
      if (kind != records::Kind::get_reply && kind != records::Kind::get_reply_pulled) {
        job_.abort_job(fmt::format("bsplib: pid {} expected get replies from pid {}", pid_, src));
      }
      take_reply(src, kind, at, in);
      if (in.reply_bytes_missing == 0) in.phase = Phase::complete;
    }
    in.parsed += size;
  }
}

// The size of the complete record at src's parse position, or 0 while it is incomplete
// (its header screened: in_records, this superstep's records are being read); a damaged
// one stops the job.
std::size_t Engine::next_record(int src, const Incoming& in, bool in_records) {
  bool bad = false;
  std::size_t size = records::record_size({in.stream.data(), in.stream.size()}, in.parsed, bad);
  if (bad) job_.abort_job(fmt::format("bsplib: pid {} received a malformed record from pid {}", pid_, src));
  if (size == 0 && in.parsed < in.stream.size()) screen_record(src, in, in_records);
  return size;
}

void Engine::take_record(int src, records::Kind kind, const std::byte* at, Incoming& in) {
  switch (kind) {
    case records::Kind::put:
    case records::Kind::put_pulled: {
      // Checked now (registrations change only when the superstep ends); applied from
      // the stream by apply_puts.
      records::Put put = records::read_put(at, in.parsed);
      target_area("bsp_put", "into", src, put.registration, put.offset, put.size);
      break;
    }
    case records::Kind::put_strided: {
      records::StridedPut run = records::read_strided(at, in.parsed);
      target_area("bsp_put", "into", src, run.registration, run.offset, run.extent());
      break;
    }
    case records::Kind::get_request:
      in.get_requests.push_back(records::read_get_request(at));
      break;
    case records::Kind::message: {
      records::Message m = records::read_message(at, in.parsed);
      check_tag_size(src, m);
      const std::byte* tag = in.stream.data() + m.tag_at;
      messages_.add_arriving({tag, m.tag_size}, {tag + m.tag_size, m.payload_size});
      break;
    }
    case records::Kind::queue_message: {
      // record_size has checked the queue number against kMaxQueues.
      records::QueueMessage m = records::read_queue_message(at, in.parsed);
      if (m.queue >= queues_.size()) queues_.resize(std::size_t{m.queue} + 1);
      queues_[m.queue].add_arriving({}, {in.stream.data() + m.payload_at, m.payload_size});
      break;
    }
    default:
      break;
  }
}

// A get reply: kept, not written: a reply may arrive before this process has served the
// gets aimed at it, which must read its memory as the superstep left it.
void Engine::take_reply(int src, records::Kind kind, const std::byte* at, Incoming& in) {
  records::GetReply reply = kind == records::Kind::get_reply ? records::read_get_reply(at, in.parsed)
                                                             : records::read_get_reply_pulled(at);
  check_reply(src, reply);
  in.replies.push_back(reply);
  in.reply_bytes_missing -= std::min<std::uint64_t>(reply.size, in.reply_bytes_missing);
}

// A record whose data has not all arrived is checked by its header: a put that announces
// more bytes than its registration holds is impossible, and waiting for those bytes
// would hang the job. (Complete records are checked where they are used.)
void Engine::screen_record(int src, const Incoming& in, bool in_records) {
  const std::byte* at = in.stream.data() + in.parsed;
  std::size_t available = in.stream.size() - in.parsed;
  auto kind = static_cast<records::Kind>(at[0]);
  if (in_records && kind == records::Kind::put && available >= records::kPutHeader) {
    records::Put put = records::read_put(at, in.parsed);
    target_area("bsp_put", "into", src, put.registration, put.offset, put.size);
  } else if (in_records && kind == records::Kind::put_strided && available >= records::kStridedHeader) {
    records::StridedPut run = records::read_strided(at, in.parsed);
    target_area("bsp_put", "into", src, run.registration, run.offset, run.extent());
  } else if (in_records && kind == records::Kind::message && available >= records::kMessageHeader) {
    check_tag_size(src, records::read_message(at, in.parsed));
  } else if (!in_records && kind == records::Kind::get_reply && available >= records::kGetReplyHeader) {
    check_reply(src, records::read_get_reply(at, in.parsed));
  }
}

void Engine::check_tag_size(int src, const records::Message& message) {
  if (message.tag_size != static_cast<std::uint32_t>(tagsize_)) {
    job_.abort_job(
        fmt::format("bsplib: pid {} received a message from pid {} with a tag of {} bytes; the tag size is {}", pid_,
                    src, message.tag_size, tagsize_));
  }
}

void Engine::check_reply(int src, const records::GetReply& reply) {
  if (reply.request_id >= pending_gets_.size() || pending_gets_[reply.request_id].from != src ||
      std::uint64_t{reply.piece_offset} + reply.size > pending_gets_[reply.request_id].size) {
    job_.abort_job(fmt::format("bsplib: pid {} got a get reply from pid {} that matches no request", pid_, src));
  }
}

// The sources that sent anything this superstep (receiving_), in pid order.
const std::vector<int>& Engine::sources() {
  if (!std::is_sorted(receiving_.begin(), receiving_.end())) std::sort(receiving_.begin(), receiving_.end());
  return receiving_;
}

void Engine::apply_replies() {
  for (int src : sources()) {
    const Incoming& in = incoming_[src];
    for (const records::GetReply& reply : in.replies) {
      const std::byte* data = reply.pulled ? pulled_data(src, reply.token, reply.size)
                                           : in.stream.data() + reply.data_at;
      copy_bytes(pending_gets_[reply.request_id].dst + reply.piece_offset, data, reply.size);
    }
  }
}

// ---------------------------------------------------------------- the end of a superstep

void Engine::serve_gets() {
  for (int src : sources()) {
    for (const records::GetRequest& request : incoming_[src].get_requests) {
      const std::byte* from = target_area("bsp_get", "from", src, request.registration, request.offset, request.size);
      std::uint64_t token = 0;
      std::byte* staged = request.size >= pull_threshold_ && src != pid_ ? channel_->stage(src, request.size, token)
                                                                         : nullptr;
      if (staged) {  // the requester pulls it: one copy here, one there
        copy_bytes(staged, from, request.size);
        records::Writer(stream_to(src).stream).get_reply_pulled(request.request_id, 0, request.size, token);
        continue;
      }
      if (request.size >= gather_from() && src != pid_) {  // sent from this memory during the sync
        Outgoing& out = stream_to(src);
        records::Writer(out.stream).get_reply_header(request.request_id, 0, request.size);
        out.gathered.push_back({out.stream.size(), from, request.size});
        continue;
      }
      // Large replies go out in pieces no bigger than a payload, so they pack and flow.
      std::uint32_t piece = static_cast<std::uint32_t>(std::max<std::size_t>(max_payload_, 4096));
      for (std::uint32_t done = 0; done < request.size; done += piece) {
        std::uint32_t size = std::min(piece, request.size - done);
        records::Writer(stream_to(src).stream).get_reply(request.request_id, done, from + done, size);
      }
    }
  }
}

// The puts of the superstep, from each source in call order: a walk over its records up
// to its `end` (every record there was complete and checked when parsed).
void Engine::apply_puts() {
  for (int src : sources()) {
    const Incoming& in = incoming_[src];
    const std::byte* stream = in.stream.data();
    for (std::size_t pos = in.records_at; pos < in.end_at;) {
      const std::byte* at = stream + pos;
      auto kind = static_cast<records::Kind>(at[0]);
      bool bad = false;
      std::size_t size = records::record_size({stream, in.end_at}, pos, bad);
      if (size == 0) break;  // cannot happen: parse() saw every record here complete
      if (kind == records::Kind::put || kind == records::Kind::put_pulled) {
        records::Put put = records::read_put(at, pos);
        std::byte* into = target_area("bsp_put", "into", src, put.registration, put.offset, put.size);
        if (kind == records::Kind::put) {
          records::Writer::copy_small(into, stream + put.data_at, put.size);
        } else {
          copy_bytes(into, pulled_data(src, records::read_u64(at + records::kPutHeader), put.size), put.size);
        }
      } else if (kind == records::Kind::put_strided) {
        records::StridedPut run = records::read_strided(at, pos);
        apply_strided(target_area("bsp_put", "into", src, run.registration, run.offset, run.extent()), run,
                      stream + run.data_at);
      }
      pos += size;
    }
  }
}

namespace {
// The puts of a strided run, in order; the common word sizes copied without a call.
template <std::uint32_t kSize>
void copy_run(std::byte* into, const std::byte* data, std::uint32_t stride, std::uint32_t count, std::uint32_t size) {
  const std::uint32_t step = kSize ? kSize : size;
  for (std::uint32_t k = 0; k < count; ++k, into += stride, data += step) std::memcpy(into, data, step);
}
}  // namespace

void Engine::apply_strided(std::byte* into, const records::StridedPut& run, const std::byte* data) {
  switch (run.size) {
    case 4:
      return copy_run<4>(into, data, run.stride, run.count, 4);
    case 8:
      return copy_run<8>(into, data, run.stride, run.count, 8);
    case 16:
      return copy_run<16>(into, data, run.stride, run.count, 16);
    default:
      return copy_run<0>(into, data, run.stride, run.count, run.size);
  }
}

// Records addressed to this process skip the channel.
void Engine::deliver_local() {
  Outgoing& out = outgoing_[pid_];
  if (out.sent == out.stream.size()) return;
  Incoming& in = incoming_[pid_];
  heard_from(pid_);
  in.stream.append(out.stream.data() + out.sent, out.stream.size() - out.sent);
  out.sent = out.stream.size();
  if (sparse_) {
    parse_sparse(pid_);
  } else {
    parse(pid_);
  }
}

// The streams written this superstep, in the order pid + 1, pid + 2, ...
bool Engine::send_pending() {
  if (!writing_sorted_) {
    std::sort(writing_.begin(), writing_.end(),
              [this](int a, int b) { return (a - pid_ + nprocs_) % nprocs_ < (b - pid_ + nprocs_) % nprocs_; });
    writing_sorted_ = true;
  }
  bool sent_any = false;
  for (int peer : writing_) {
    if (peer != pid_ && outgoing_[peer].unsent()) sent_any |= send_stream(peer, true);
  }
  return sent_any;
}

bool Engine::all_sent() const {
  for (int peer : writing_) {
    if (outgoing_[peer].unsent()) return false;
  }
  return true;
}

// The peers this process waits for now (for the watchdog, and for the channel, which may
// probe a silent one).
void Engine::collect_awaited() {
  awaited_.clear();
  if (sparse_) {
    if (acks_missing_ > 0) {
      for (int peer : destinations_) {
        if (peer != pid_ && !outgoing_[peer].acked) awaited_.push_back(peer);
      }
    } else if (!barrier_->complete()) {
      if (int peer = barrier_->awaited(); peer >= 0) awaited_.push_back(peer);
    } else {
      for (int peer : destinations_) {  // (the peers this process's gets went to)
        if (peer != pid_ && incoming_[peer].reply_bytes_missing > 0) awaited_.push_back(peer);
      }
    }
    for (int peer : writing_) {  // and those the channel has not taken all for yet
      const Outgoing& out = outgoing_[peer];
      if (peer != pid_ && out.unsent() && std::find(awaited_.begin(), awaited_.end(), peer) == awaited_.end()) {
        awaited_.push_back(peer);
      }
    }
    return;
  }
  for (int peer = 0; peer < nprocs_; ++peer) {
    const Outgoing& out = outgoing_[peer];
    if (peer != pid_ && (incoming_[peer].phase != Phase::complete || out.unsent())) {
      awaited_.push_back(peer);
    }
  }
}

void Engine::pump() {
  bool moved = send_pending();
  moved |= channel_->progress(*this) > 0;
  if (moved) return;
  // The coordinator's news (a system call) at most every kAbortCheckEvery while idle: a
  // superstep that waits a microsecond for its peers must not pay one each time.
  auto now = Clock::now();
  if (now >= next_abort_check_) {
    job_.check_for_abort();
    next_abort_check_ = now + kAbortCheckEvery;
  }
  collect_awaited();
  // Idle: note when the links that moved since the last look did (noted on the busy
  // path, timed only here, at least every wait slice).
  for (int pid : moved_) {
    PeerProgress& peer = progress_[static_cast<std::size_t>(pid)];
    peer.moved = false;
    peer.last_moved = now;
  }
  moved_.clear();
  if (now >= next_stall_report_) {
    std::vector<JobControl::Awaited> awaited;
    for (int peer : awaited_) {
      awaited.push_back(
          {peer, std::chrono::duration<double>(now - progress_[static_cast<std::size_t>(peer)].last_moved).count()});
    }
    job_.report_stall(superstep_, std::chrono::duration<double>(now - sync_started_).count(), awaited);
    stall_reported_ = true;
    next_stall_report_ = now + 1s;
  }
  channel_->wait(awaited_, kWaitSlice);
}

namespace {
// What an `end` record says of its sender's collective calls (as the sparse barrier carries them).
CollectiveCalls collective_calls(const records::End& end) {
  return {static_cast<std::uint8_t>((end.flags & records::kEndFlagFinal) ? 1 : 0), end.next_tagsize,
          static_cast<std::uint32_t>(end.pushes.size()), static_cast<std::uint32_t>(end.pops.size()),
          (end.flags & records::kEndFlagSetTagsize) != 0};
}

std::string pid_list(const std::vector<int>& pids) {
  return fmt::format("{} {}", pids.size() == 1 ? "pid" : "pids", fmt::join(pids, ", "));
}
}  // namespace

void Engine::check_collective_calls() {
  // Everyone sees every `end`, so every process reaches the same verdict. Nothing is
  // allocated unless something differs or was popped.
  const records::End& first = *incoming_[0].end;
  auto final_call = [this](int pid) { return (incoming_[pid].end->flags & records::kEndFlagFinal) != 0; };
  bool any_pops = false;
  for (int pid = 0; pid < nprocs_; ++pid) {
    if (final_call(pid) == final_call(0)) continue;
    std::vector<int> in_sync, in_end;
    for (int q = 0; q < nprocs_; ++q) (final_call(q) ? in_end : in_sync).push_back(q);
    job_.abort_job(
        fmt::format("bsplib: mismatched collective calls in superstep {}: {} called bsp_sync while {} "
                    "called bsp_end (every process must make the same sequence of bsp_sync calls)",
                    superstep_, pid_list(in_sync), pid_list(in_end)));
  }
  for (int pid = 0; pid < nprocs_; ++pid) {
    const records::End& end = *incoming_[pid].end;
    CollectiveCalls calls_0 = collective_calls(first), calls = collective_calls(end);
    if (!(calls == calls_0)) job_.abort_job(describe_conflict(superstep_, {0, calls_0, pid, calls}));
    any_pops |= !end.pops.empty();
  }
  if (!any_pops) return;
  std::vector<std::vector<records::Pop>> pops(static_cast<std::size_t>(nprocs_));
  for (int pid = 0; pid < nprocs_; ++pid) pops[static_cast<std::size_t>(pid)] = incoming_[pid].end->pops;
  if (std::string differs = registrations_.resolve_pops(pops); !differs.empty()) {
    job_.abort_job(fmt::format("bsplib: registrations differ between processes in superstep {}: on pid {}, {}",
                               superstep_, pid_, differs));
  }
}

void Engine::superstep(bool final) {
  auto started = Clock::now();
  sync_started_ = started;
  next_stall_report_ = started + stall_warn_;
  in_sync_ = true;
  // Unbuffered puts: large ones are sent from their source during the sync (gathered),
  // others (and those staged for a peer to pull) read their source now.
  for (const HpPut& hp : hpputs_) {
    if (hp.size < gather_from() || hp.pid == pid_) {
      write_put(hp.pid, hp.registration, hp.offset, hp.src, hp.size);
      continue;
    }
    Outgoing& out = records_to(hp.pid);
    if (write_staged_put(hp.pid, out, hp.registration, hp.offset, hp.src, hp.size)) continue;
    records::Writer(out.stream).put_header(hp.registration, hp.offset, hp.size);
    out.gathered.push_back({out.stream.size(), static_cast<const std::byte*>(hp.src), hp.size});
    out.last_put_end = SIZE_MAX;  // its data is not in the stream: nothing extends it
  }
  hpputs_.clear();
  std::vector<std::vector<std::uint64_t>> pushes = sparse_ ? sparse_exchange(final) : dense_exchange(final);
  // Get data is written, then put data.
  apply_replies();
  apply_puts();
  // 5. The next superstep begins.
  registrations_.commit(pushes);
  messages_.deliver_arrived();
  for (MessageQueue& queue : queues_) queue.deliver_arrived();
  tagsize_ = next_tagsize_;
  tagsize_set_ = false;
  pending_gets_.clear();
  run_ = RunCursor{};  // registrations change: the general path aims it again
  // Only the streams this superstep touched are reset: the others are as they were left.
  for (int pid : writing_) {
    Outgoing& out = outgoing_[pid];
    out.stream.clear();
    out.last_put_end = SIZE_MAX;  // the stream's records are gone: nothing to extend
    out.sent = 0;
    out.get_requests = 0;
    out.reply_bytes_expected = 0;
    out.gathered.clear();
    out.gathered_next = out.gathered_done = 0;
    out.open = out.acked = out.listed = false;
  }
  writing_.clear();
  writing_sorted_ = true;
  destinations_.clear();
  std::size_t kept = 0;
  for (int pid : receiving_) {
    Incoming& in = incoming_[pid];
    if (in.placing == 0) {  // (else a payload is being written after the end: nothing may move yet)
      in.stream.erase_front(in.parsed);
      in.parsed = 0;
    }
    in.phase = Phase::records;
    in.records_at = in.end_at = in.parsed;
    in.opened = in.in_records = false;
    in.get_requests.clear();
    in.replies.clear();
    in.end.reset();
    // A stream holding the next superstep's first records (or a payload being placed)
    // stays listed: the next sync parses it first.
    in.listed = in.parsed < in.stream.size() || in.placing != 0;
    if (in.listed) receiving_[kept++] = pid;
  }
  receiving_.resize(kept);
  ended_ = 0;
  in_sync_ = false;
  if (stall_reported_) {
    job_.report_stall(superstep_, 0, {});
    stall_reported_ = false;
  }
  ++superstep_;
  channel_->next_superstep();  // staging written two supersteps ago may be reused
  channel_->progress(*this);   // push out anything the transport still queues
  communication_seconds_ += std::chrono::duration<double>(Clock::now() - started).count();
}

// The dense protocol: an `end` to every process (DESIGN.md §3).
std::vector<std::vector<std::uint64_t>> Engine::dense_exchange(bool final) {
  // 1. Every stream gets its `end`.
  records::End end;
  end.superstep = static_cast<std::uint32_t>(superstep_);
  end.flags = static_cast<std::uint8_t>((final ? records::kEndFlagFinal : 0) |
                                        (tagsize_set_ ? records::kEndFlagSetTagsize : 0));
  end.next_tagsize = static_cast<std::uint32_t>(next_tagsize_);
  end.pushes = registrations_.pushes_this_superstep();
  end.pops = registrations_.pops_this_superstep();
  for (int peer = 0; peer < nprocs_; ++peer) {
    Outgoing& out = stream_to(peer);
    end.get_requests = out.get_requests;
    records::Writer(out.stream).end(end);
    incoming_[peer].reply_bytes_missing = out.reply_bytes_expected;
  }
  for (int src = 0; src < nprocs_; ++src) parse(src);  // early arrivals
  deliver_local();
  // 2. The exchange, until every process's `end` is here; all made the same calls.
  while (ended_ < nprocs_) pump();
  check_collective_calls();
  // 3. Gets read memory before anything of this superstep is written.
  serve_gets();
  deliver_local();
  // 4. Replies to this process's gets, and everything it owes others, out.
  for (;;) {
    bool complete = all_sent();
    for (const Incoming& in : incoming_) complete &= in.phase == Phase::complete;
    if (complete) break;
    pump();
  }
  std::vector<std::vector<std::uint64_t>> pushes;  // every process pushed as many (checked)
  if (!incoming_[0].end->pushes.empty()) {
    for (Incoming& in : incoming_) pushes.push_back(std::move(in.end->pushes));
  }
  return pushes;
}

void Engine::finish() {
  superstep(true);
  finishing_ = true;
  auto deadline = Clock::now() + kDrainLimit;
  while (!channel_->all_acknowledged() && Clock::now() < deadline) {
    if (channel_->progress(*this) == 0) {
      job_.check_for_abort();
      channel_->wait({}, 1ms);
    }
  }
}

void Engine::keep_alive(std::chrono::milliseconds how_long) {
  auto deadline = Clock::now() + how_long;
  while (Clock::now() < deadline) {
    if (channel_->progress(*this) == 0) channel_->wait({}, std::min<std::chrono::milliseconds>(how_long, 1ms));
  }
}

}  // namespace bsp
