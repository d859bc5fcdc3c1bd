// bsplib/engine_receiving.cc: what arrives: payloads appended to each peer's stream,
// parsed into records and checked against this process's registrations and tag size as
// they come; then, at the end of the superstep, the gets served, the replies and puts
// written, and the delivered messages read (bsp_qsize, bsp_move, ...).
#include <fmt/format.h>
#include <sched.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <thread>

#include "bsplib/bulk_copy.h"
#include "bsplib/engine.h"
#include "bsplib/mark_wait.h"

namespace bsp {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// ---------------------------------------------------------------- BSMP: delivered messages

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
  if (line_due(src)) take_line(src, in);
  while (in.phase != Phase::complete) {
    std::size_t size = next_record(src, in, in.phase == Phase::records);
    if (size == 0) {
      if (early_writes_open_ && in.phase == Phase::records) write_early(src, in);  // what has come of it
      return;
    }
    const std::byte* at = in.stream.data() + in.parsed;
    auto kind = static_cast<records::Kind>(at[0]);
    if (in.phase == Phase::records) {
      switch (kind) {
        case records::Kind::put:
          take_record(src, kind, at, in);
          if (early_writes_open_ && size >= records::kPutHeader + kEarlyWriteFrom) write_early(src, in);
          break;
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
      std::byte* into = pending_gets_[reply.request_id].dst + reply.piece_offset;  // (check_reply: inside the get)
      if (reply.pulled && (reply.token & kDirect)) {
        read_direct("bsp_get", src, reply.token, into, reply.size);
        read_direct_gets_ = true;  // (read_direct set read_through_)
        continue;
      }
      if (reply.pulled) {
        copy_pulled(src, reply.token, into, reply.size);
      } else {
        copy_bytes(into, in.stream.data() + reply.data_at, reply.size);
      }
    }
  }
}

// ---------------------------------------------------------------- the end of a superstep

void Engine::serve_gets() {
  for (int src : sources()) {
    for (const records::GetRequest& request : incoming_[src].get_requests) {
      const std::byte* from = target_area("bsp_get", "from", src, request.registration, request.offset, request.size);
      if (direct_to(src, from, request.size)) {  // the requester reads it here itself (before our puts land)
        records::Writer(stream_to(src).stream)
            .get_reply_pulled(request.request_id, 0, request.size, kDirect | reinterpret_cast<std::uintptr_t>(from));
        add_reader(get_readers_, src);
        continue;
      }
      std::uint64_t token = 0;
      if (request.size >= pull_threshold_ && src != pid_ && stage_deferred(src, from, request.size, token)) {
        // the requester pulls it: one copy here (after the exchange), one there, overlapping
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
    std::size_t early = 0;  // cursor into early_writes_
    for (std::size_t pos = in.records_at; pos < in.end_at;) {
      const std::byte* at = stream + pos;
      auto kind = static_cast<records::Kind>(at[0]);
      bool bad = false;
      std::size_t size = records::record_size({stream, in.end_at}, pos, bad);
      if (size == 0) break;  // cannot happen: parse() saw every record here complete
      if (kind == records::Kind::put && !early_writes_.empty() && written_early(src, pos, early)) {
        // landed while it arrived
      } else if (kind == records::Kind::put || kind == records::Kind::put_pulled) {
        records::Put put = records::read_put(at, pos);
        std::byte* into = target_area("bsp_put", "into", src, put.registration, put.offset, put.size);
        if (kind == records::Kind::put) {
          records::Writer::copy_small(into, stream + put.data_at, put.size);
        } else if (std::uint64_t token = records::read_u64(at + records::kPutHeader); token & kDirect) {
          read_direct("bsp_hpput", src, token, into, put.size);  // (target_area checked the size)
        } else {
          copy_pulled(src, token, into, put.size);
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

// ---------------------------------------------------------------- pulled data

// Single copy: size bytes src names at an address in its own memory, read into `into`
// (inside this process's registration or get destination, checked by the caller), or the job stops.
void Engine::read_direct(const char* call, int src, std::uint64_t token, std::byte* into, std::uint32_t size) {
  transport::Staging* staging = channel_->staging(src);
  const std::uint64_t address = token & ~kDirect;
  std::string why = staging ? staging->read_peer(src, address, into, size)
                            : std::string("pid is not reached through shared memory");
  read_through_ = staging;
  if (!why.empty()) {
    job_.abort_job(fmt::format("bsplib: {} by pid {} to pid {}: reading its {} bytes at {:#x} of pid {}'s memory: {}",
                               call, call[4] == 'g' ? pid_ : src, call[4] == 'g' ? src : pid_, size, address, src,
                               why));
  }
}

namespace {
// A staged mark as (superstep, staging offset written through).
std::string mark_text(std::uint64_t mark) { return fmt::format("({}, {})", mark >> 32, mark & 0xffffffffu); }

// What a wait for a staged mark needs and sees (the superstep, staging offset and size of
// the transfer, the mark as last read, the bytes copied so far).
std::string staged_mark_awaited(std::uint32_t superstep, std::uint64_t at, std::uint32_t size, std::uint64_t mark,
                                std::uint32_t copied) {
  const std::uint64_t needed = static_cast<std::uint64_t>(superstep) << 32 | (at + size);
  return fmt::format(
      "(superstep, staging offset) of a pulled transfer of {} bytes at its staging offset {}: needs {}, the mark "
      "says {}, {} of the bytes copied",
      size, at, mark_text(needed), mark_text(mark), copied);
}
}  // namespace

// Pulled data into `into`; a deferred piece (kDeferred) only as far as src's staged mark
// says it has written it this superstep (copy_deferred), waiting for the rest. Nothing is
// received meanwhile: the caller walks streams that arrivals would move, and src waits
// for nothing of this process before it copies (its exchange is done, as ours is).
void Engine::copy_pulled(int src, std::uint64_t token, std::byte* into, std::uint32_t size) {
  const std::uint64_t at = token & ~kDeferred;
  const std::byte* data = pulled_data(src, at, size);
  transport::Staging* staging = channel_->staging(src);
  if (!(token & kDeferred) || size == 0 || !staging) return copy_bytes(into, data, size);  // (staged() checked it)
  const auto superstep = static_cast<std::uint32_t>(superstep_);
  std::uint32_t done = 0;
  std::optional<MarkWait> wait;  // from the first idle look on: says and bounds a long wait
  for (unsigned idle = 0; done < size;) {
    const std::uint64_t mark = staging->staged_mark(src);
    std::uint64_t ready = size;  // a later superstep's mark: all of this one's is written
    if (static_cast<std::uint32_t>(mark >> 32) == superstep) {
      const std::uint64_t end = mark & 0xffffffffu;
      ready = end > at ? std::min<std::uint64_t>(end - at, size) : 0;
    } else if (static_cast<std::int32_t>(static_cast<std::uint32_t>(mark >> 32) - superstep) < 0) {
      ready = 0;  // (still an earlier superstep's)
    }
    if (ready > done) {
      copy_bytes(into + done, data + done, ready - done);
      done = static_cast<std::uint32_t>(ready);
      idle = 0;
      if (wait) wait->moved();
      continue;
    }
    // A piece takes a running writer microseconds; no news for longer, and it is not
    // running (it shares this core): let it.
    if (++idle % 512 == 0) {
      auto now = Clock::now();
      check_for_abort_every(now);
      if (!wait) {
        wait.emplace(pid_, src, superstep_, "staged mark", "stages those bytes", mark_wait_limits(), now);
      }
      auto awaited = [&] { return staged_mark_awaited(superstep, at, size, mark, done); };
      if (std::string stop = wait->look(now, awaited); !stop.empty()) job_.abort_job(stop);
      sched_yield();
    }
  }
}

// Data a pulled record names in src's staging memory, or the job stops.
const std::byte* Engine::pulled_data(int src, std::uint64_t token, std::uint32_t size) {
  std::span<const std::byte> data = channel_->staged(src, token, size);
  if (data.size() != size) {
    job_.abort_job(fmt::format("bsplib: pid {} names {} bytes at {} of its staging memory to pid {}: outside it", src,
                               size, token, pid_));
  }
  read_through_ = channel_->staging(src);  // src may take that memory again once the read mark says so
  return data.data();
}

}  // namespace bsp
