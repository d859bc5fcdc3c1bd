// bsplib/engine_posting.cc: what the calls of a superstep post: registrations, puts,
// gets and hp-puts (DRMA) and messages (BSMP), written as records into the stream of
// their destination (combined where a put continues the previous one, staged for the
// peer to pull, or sent straight from the caller's memory when large), and the handing
// of those streams to the channel, early or at the sync.
#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "bsplib/bulk_copy.h"
#include "bsplib/engine.h"

namespace bsp {

namespace {
constexpr int kMaxTagSize = 1 << 20;  // a sanity bound on bsp_set_tagsize
// Combined puts: a contiguous record grows to at most this many bytes of data (a strided
// one to records::kMaxStridedData); runs at equal steps, and the inline path of put(),
// are for puts of at most kLargestRun bytes (larger ones gain little from them).
constexpr std::uint64_t kLargestCombined = 1u << 30;
constexpr std::uint32_t kLargestRun = 1024;
}  // namespace

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
    // Buffered: the source is copied now (into staging memory for a large one) and the
    // destination copies it again, unless the path can keep it as it is for the
    // destination to read (a single copy).
    if (static_cast<std::uint64_t>(nbytes) >= pull_threshold_ && pid != pid_ && channel_->staging(pid)) [[unlikely]] {
      if (put_in_place(pid, registration, static_cast<std::uint32_t>(offset), src, static_cast<std::uint32_t>(nbytes)))
        return;
    }
    write_put(pid, registration, static_cast<std::uint32_t>(offset), src, static_cast<std::uint32_t>(nbytes));
    aim_run(pid, dst, registration, static_cast<std::uint32_t>(nbytes));
  } else {
    hpputs_.push_back(
        HpPut{pid, src, registration, static_cast<std::uint32_t>(offset), static_cast<std::uint32_t>(nbytes)});
  }
}

// A large bsp_put to a peer sharing memory, read by it where the path keeps the source
// as it is now (transport::Staging::move_put_source); false: staged or sent (counted).
bool Engine::put_in_place(int pid, std::uint32_t registration, std::uint32_t offset, const void* src,
                          std::uint32_t size) {
  transport::Staging* staging = channel_->staging(pid);
  std::string_view why;
  const std::byte* kept = staging->move_put_source(pid, src, size, why);
  if (!kept) {
    note_two_copies(why);
    return false;
  }
  post_direct_put(pid, registration, offset, size, kept, moved_readers_);
  run_ = RunCursor{};
  ++single_copies_;
  return true;
}

// A put whose data `pid` reads itself at `at` in this process's memory (a pulled token
// with kDirect set); `readers` are the peers this process waits for before that memory
// may change.
void Engine::post_direct_put(int pid, std::uint32_t registration, std::uint32_t offset, std::uint32_t size,
                             const void* at, std::vector<int>& readers) {
  Outgoing& out = records_to(pid);
  records::Writer(out.stream).put_pulled(registration, offset, size, kDirect | reinterpret_cast<std::uintptr_t>(at));
  out.last_put_end = SIZE_MAX;  // its data is not in the stream: nothing extends it
  add_reader(readers, pid);
}

void Engine::add_reader(std::vector<int>& readers, int pid) {
  if (std::find(readers.begin(), readers.end(), pid) == readers.end()) readers.push_back(pid);
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
                              std::uint32_t size, bool deferred) {
  if (size < pull_threshold_ || pid == pid_) return false;
  std::uint64_t token = 0;
  if (!(deferred ? stage_deferred(pid, src, size, token) : stage_copied(pid, src, size, token))) return false;
  records::Writer(out.stream).put_pulled(registration, offset, size, token);
  return true;
}

std::byte* Engine::stage_for(int pid, std::size_t size, std::uint64_t& token) {
  transport::Staging* staging = channel_->staging(pid);
  if (!staging) return nullptr;
  if (!staged_yet_) {
    staged_yet_ = true;
    // The readers of superstep s's staging raise their marks to 2s + 2 after its sync
    // (engine.cc); until then they may still be copying out of it.
    const auto done = static_cast<std::uint64_t>(2 * staged_superstep_ + 2);
    bool all_read = staged_superstep_ >= 0;
    for (int peer : staged_readers_) {
      transport::Staging* path = channel_->staging(peer);
      all_read &= path && path->read_mark(peer) >= done;
    }
    if (all_read) staging->reuse_last();
  }
  std::byte* staged = channel_->stage(pid, size, token);
  if (!staged) return nullptr;
  if (staged_superstep_ != superstep_) {
    staged_superstep_ = superstep_;
    staged_readers_.clear();
  }
  add_reader(staged_readers_, pid);
  return staged;
}

// Staging for size bytes at src, copied there now.
bool Engine::stage_copied(int pid, const void* src, std::uint32_t size, std::uint64_t& token) {
  std::byte* staged = stage_for(pid, size, token);
  if (!staged) return false;
  copy_bytes(staged, src, size);
  return true;
}

// Staging for size bytes at src, copied there after the exchange (copy_deferred) when
// large; src must stay as it is until then (an hp-put's source during its sync, memory a
// get reads before anything of the superstep lands: copy_deferred runs before both).
bool Engine::stage_deferred(int pid, const void* src, std::uint32_t size, std::uint64_t& token) {
  // Below this, too few pieces to overlap: copied now, and the reader never waits for it
  // (a small transfer's reader would otherwise wait for the writer's turn on a shared core).
  constexpr std::uint32_t kDeferFrom = 512u << 10;
  if (size < kDeferFrom) return stage_copied(pid, src, size, token);
  std::byte* staged = stage_for(pid, size, token);
  if (!staged) return false;
  deferred_.push_back({channel_->staging(pid), staged, static_cast<const std::byte*>(src), token, size});
  token |= kDeferred;
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
      recovery::SendResult result = channel_->send(pid, {from + done, piece});
      // Refused: acknowledgements may have come. Looking (a read of memory on shm and nic, a
      // poll(2) on udp and tcp) and taking them costs less than copying the piece into the
      // stream, from where the sync copies it again into the channel's buffers: once the
      // channel is full, every later piece of the put would take that path.
      if (result != recovery::SendResult::ok && channel_->probe()) {
        channel_->progress(*this);
        result = channel_->send(pid, {from + done, piece});
      }
      if (result == recovery::SendResult::ok) {
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

// Single copy: whether pid, reached through shared memory, may read these bytes of this
// process's memory itself (counted either way, with the path's reason when not).
bool Engine::direct_to(int pid, const void* data, std::uint32_t size) {
  if (size < pull_threshold_ || pid == pid_) return false;
  transport::Staging* staging = channel_->staging(pid);
  if (!staging) return false;
  std::string_view why = staging->single_copy_to(pid, data, size);
  if (!why.empty()) {
    note_two_copies(why);
    return false;
  }
  // This process writes its gets' data before its readers are done (they wait for each
  // other's gets in turn): memory one of them lands in is staged, read at the sync's start.
  const auto* begin = static_cast<const std::byte*>(data);
  for (const PendingGet& get : pending_gets_) {
    if (get.dst < begin + size && begin < get.dst + get.size) {
      note_two_copies("own-get-lands-there");
      return false;
    }
  }
  ++single_copies_;
  return true;
}

void Engine::note_two_copies(std::string_view why) {
  ++two_copies_;
  for (auto& [reason, count] : two_copy_reasons_) {
    if (reason == why) {
      ++count;
      return;
    }
  }
  two_copy_reasons_.emplace_back(why, 1);
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

}  // namespace bsp
