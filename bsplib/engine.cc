// bsplib/engine.cc: the superstep engine (see engine.h for the protocol): its errors,
// and the superstep driver: bsp_sync's steps in order (superstep), the dense exchange,
// the progress loop (pump) and bsp_end. What the calls post is in engine_posting.cc,
// what arrives and is written at the end in engine_receiving.cc, the sparse protocol
// in engine_sparse.cc.
#include "bsplib/engine.h"

#include <fmt/format.h>

#include <sched.h>

#include <algorithm>

namespace bsp {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {
constexpr auto kWaitSlice = 20ms;       // longest single block before re-checking the job
constexpr auto kAbortCheckEvery = 1ms;  // how often an idle superstep asks the coordinator
constexpr auto kDrainLimit = 5s;        // bsp_end: longest wait for the last acknowledgements
}  // namespace

Engine::Engine(int pid, int nprocs, std::unique_ptr<recovery::Channel> channel, JobControl& job)
    : pid_(pid),
      nprocs_(nprocs),
      channel_(std::move(channel)),
      job_(job),
      max_payload_(channel_ ? channel_->max_payload() : 0),
      outgoing_(static_cast<std::size_t>(nprocs)),
      incoming_(static_cast<std::size_t>(nprocs)),
      watchdog_(nprocs, 10s, [&job](long superstep, double waited_seconds, const std::vector<StallAwaited>& awaited) {
        job.report_stall(superstep, waited_seconds, awaited);
      }) {
  line_paths_.assign(static_cast<std::size_t>(nprocs), nullptr);
  lines_to_all_ = channel_ != nullptr;  // (no channel: nothing to post lines through)
  for (int peer = 0; channel_ && peer < nprocs; ++peer) {
    if (peer != pid) line_paths_[static_cast<std::size_t>(peer)] = channel_->staging(peer);
    lines_to_all_ &= peer == pid || line_paths_[static_cast<std::size_t>(peer)] != nullptr;
  }
}

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

// ---------------------------------------------------------------- the superstep driver

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
  if (moved || poll_lines()) return;
  auto now = Clock::now();
  check_for_abort_every(now);
  collect_awaited();
  if (!watchdog_started_) {  // a wait is timed from the sync's first idle moment
    watchdog_.superstep_started(now);
    watchdog_started_ = true;
  }
  watchdog_.waiting(now, superstep_, awaited_);
  channel_->wait(awaited_, kWaitSlice);
}

// The coordinator's news (a system call) at most every kAbortCheckEvery while idle: a
// wait of a microsecond for a peer must not pay one each time.
void Engine::check_for_abort_every(std::chrono::steady_clock::time_point now) {
  if (now < next_abort_check_) return;
  job_.check_for_abort();
  next_abort_check_ = now + kAbortCheckEvery;
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
  if (!final && quiet_superstep()) return;
  sync_started_ = sync_clock_.now();
  watchdog_started_ = false;  // told at the first idle moment, which reads the clock anyway
  in_sync_ = true;
  // Unbuffered puts: large ones are read from their source by the destination itself
  // (single copy, where it shares memory and the kernel allows) or sent from it during the
  // sync (gathered); others (and those staged for a peer to pull) read their source now.
  for (const HpPut& hp : hpputs_) {
    if (hp.size < gather_from() || hp.pid == pid_) {
      write_put(hp.pid, hp.registration, hp.offset, hp.src, hp.size);
      continue;
    }
    if (direct_to(hp.pid, hp.src, hp.size)) {  // the destination reads the source itself
      post_direct_put(hp.pid, hp.registration, hp.offset, hp.size, hp.src, hpput_readers_);
      continue;
    }
    Outgoing& out = records_to(hp.pid);
    if (write_staged_put(hp.pid, out, hp.registration, hp.offset, hp.src, hp.size, true)) continue;
    records::Writer(out.stream).put_header(hp.registration, hp.offset, hp.size);
    out.gathered.push_back({out.stream.size(), static_cast<const std::byte*>(hp.src), hp.size});
    out.last_put_end = SIZE_MAX;  // its data is not in the stream: nothing extends it
  }
  hpputs_.clear();
  std::vector<std::vector<std::uint64_t>> pushes = sparse_ ? sparse_exchange(final) : dense_exchange(final);
  // Get data is written, then put data. Single copies: a process that read others' memory
  // for its gets says so (read mark 2s + 1) before it waits for those reading its own
  // memory for theirs: its puts must not land before; after its puts, 2s + 2 (hp-puts read).
  const std::uint64_t marks = 2 * static_cast<std::uint64_t>(superstep_);
  copy_deferred();  // before this process writes anything of the superstep
  apply_replies();
  if (read_direct_gets_) read_through_->publish_read_mark(marks + 1);
  if (!get_readers_.empty()) await_readers(get_readers_, marks + 1);
  apply_puts();
  early_writes_.clear();
  if (read_through_) read_through_->publish_read_mark(marks + 2);
  read_direct_gets_ = false;
  read_through_ = nullptr;
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
  watchdog_.superstep_ended(superstep_);
  ++superstep_;
  channel_->next_superstep();  // staging written two supersteps ago may be reused
  staged_yet_ = false;
  channel_->progress(*this);  // push out anything the transport still queues
  // Single copies out of this process's hp-put sources: they stay as they are until read.
  if (!hpput_readers_.empty()) await_readers(hpput_readers_, marks + 2);
  if (!moved_readers_.empty()) {  // bsp_put sources kept for their readers: read now
    transport::Staging* kept_by = channel_->staging(moved_readers_.front());
    await_readers(moved_readers_, marks + 2);
    kept_by->moved_read();
  }
  const std::uint64_t ended = sync_clock_.now();
  if (ended > sync_started_) communication_ticks_ += ended - sync_started_;
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
  // An `end` that says nothing but "superstep s is over" is implied by a superstep line.
  const bool plain_end = superstep_lines_ && end.flags == 0 && end.pushes.empty() && end.pops.empty();
  for (int peer = 0; peer < nprocs_; ++peer) {
    Outgoing& out = stream_to(peer);
    incoming_[peer].reply_bytes_missing = out.reply_bytes_expected;
    if (plain_end && post_line(peer, out)) continue;
    if (plain_end && peer == pid_ && own_end_implied(out)) {
      take_implied_end(pid_, incoming_[pid_]);
      continue;
    }
    end.get_requests = out.get_requests;
    records::Writer(out.stream).end(end);
  }
  // From here this process reads its memory for the superstep only to serve gets (after
  // the exchange) and for hp-put data still being sent (own_memory_still_read).
  early_writes_open_ = true;
  for (int src = 0; src < nprocs_; ++src) parse(src);  // early arrivals
  deliver_local();
  // 2. The exchange, until every process's `end` is here; all made the same calls.
  while (ended_ < nprocs_) pump();
  check_collective_calls();
  settle_early_writes();
  // 3. Gets read memory before anything of this superstep is written (but what early
  // writes put where no get reads).
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

// A superstep line holds everything of the superstep to pid, or nothing: only what no
// frame of this superstep has begun to carry, with no get requests (their replies follow
// an `end`) and no data sent from elsewhere.
bool Engine::post_line(int pid, Outgoing& out) {
  transport::Staging* path = line_paths_[static_cast<std::size_t>(pid)];
  if (path == nullptr || out.sent != 0 || out.get_requests != 0 || !out.gathered.empty() ||
      out.stream.size() > transport::Staging::kSuperstepLineBytes) {
    return false;
  }
  if (!path->post_superstep_line(pid, static_cast<std::uint64_t>(superstep_), {out.stream.data(), out.stream.size()})) {
    return false;
  }
  out.sent = out.stream.size();
  moved(pid);
  return true;
}

// src's records of this superstep come all in frames or all in its line. Called before
// the first of them is parsed: a line posted for this superstep means the stream holds
// none of them (bytes there are of the next superstep, sent after the line), so the
// line's records and the `end` they imply go in front.
bool Engine::take_line(int src, Incoming& in) {
  transport::Staging* path = line_paths_[static_cast<std::size_t>(src)];
  line_records_.clear();
  std::byte* room = line_records_.room(transport::Staging::kSuperstepLineBytes);
  long size = path->take_superstep_line(src, static_cast<std::uint64_t>(superstep_), room);
  if (size < 0) return false;
  moved(src);
  if (size == 0) {  // an empty superstep's line: its `end` alone
    take_implied_end(src, in);
    return true;
  }
  heard_from(src);
  line_records_.extend(static_cast<std::size_t>(size));
  records::Writer(line_records_).end(implied_end());
  in.stream.insert(in.parsed, line_records_.data(), line_records_.size());
  return true;
}

// The `end` a superstep line implies: "superstep s is over", nothing else (a line is
// posted only for an `end` with no flags, pushes or pops).
records::End Engine::implied_end() const {
  records::End end;
  end.superstep = static_cast<std::uint32_t>(superstep_);
  end.next_tagsize = static_cast<std::uint32_t>(tagsize_);  // no set_tagsize: the size in force
  return end;
}

// src's implied `end`, with nothing of src's before it to parse (an empty superstep line,
// or this process's own empty stream): taken as parse() takes an `end` record, without
// writing and reading one.
void Engine::take_implied_end(int src, Incoming& in) {
  heard_from(src);
  in.end = implied_end();
  in.end_at = in.parsed;
  in.phase = in.reply_bytes_missing > 0 ? Phase::replies : Phase::complete;
  ++ended_;
}

// Whether this process's own `end` can be implied: a plain one, with nothing else in its
// stream to itself and nothing of its own stream still to parse.
bool Engine::own_end_implied(const Outgoing& out) const {
  const Incoming& in = incoming_[pid_];
  return out.stream.empty() && end_still_due(in) && in.parsed == in.stream.size();
}

bool Engine::poll_lines() {
  if (sparse_ || !in_sync_ || ended_ == nprocs_) return false;
  const int ended = ended_;
  for (int src = 0; src < nprocs_; ++src) {
    if (line_due(src)) parse(src);
  }
  return ended_ != ended;
}

bool Engine::line_due(int src) const { return line_paths_[src] != nullptr && end_still_due(incoming_[src]); }

bool Engine::end_still_due(const Incoming& in) const {
  return in.phase == Phase::records && !in.end && in.parsed == in.records_at && in.placing == 0;
}

// Staging named to peers during this sync is filled now, in staging order, a piece at a
// time, each announced by the staged mark (superstep << 32 | staging offset written
// through) for readers copying behind it (copy_pulled).
void Engine::copy_deferred() {
  constexpr std::size_t kPiece = 128u << 10;  // small enough to overlap, large enough to copy fast
  const std::uint64_t superstep = static_cast<std::uint64_t>(static_cast<std::uint32_t>(superstep_)) << 32;
  for (const DeferredCopy& copy : deferred_) {
    for (std::size_t done = 0; done < copy.size;) {
      const std::size_t piece = std::min<std::size_t>(kPiece, copy.size - done);
      copy_bytes(copy.to + done, copy.from + done, piece);
      done += piece;
      copy.staging->publish_staged_mark(superstep | (copy.token + done));
    }
  }
  deferred_.clear();
}

// Waits until every peer in readers has raised its read mark to `mark` (it has read what
// this process told it to read from its memory), then empties readers. Progress goes on
// meanwhile (arrivals are kept for the next superstep, as between supersteps).
void Engine::await_readers(std::vector<int>& readers, std::uint64_t mark) {
  const bool was_in_sync = in_sync_;
  in_sync_ = false;
  for (int peer : readers) {
    transport::Staging* staging = channel_->staging(peer);
    std::optional<MarkWait> wait;  // from the first idle look on: says and bounds a long wait
    std::uint64_t last = 0;
    for (unsigned spins = 0; staging && (last = staging->read_mark(peer)) < mark; ++spins) {
      channel_->progress(*this);
      if (spins % 64 == 63) {
        auto now = Clock::now();
        check_for_abort_every(now);
        if (!wait) {
          // (mark 2s + 1 or 2s + 2 of superstep s: the hp-puts' wait comes after s ended)
          const long superstep = static_cast<long>((mark - 1) / 2);
          wait.emplace(pid_, peer, superstep, "read mark", "reads this memory", mark_wait_limits(), now);
        }
        auto awaited = [&] {
          return fmt::format("it reaches {} once pid {} has read {}; it says {}", mark, peer,
                             mark % 2 ? "its gets' data in this process's memory" : "this process's hp-put sources",
                             last);
        };
        if (std::string stop = wait->look(now, awaited); !stop.empty()) job_.abort_job(stop);
        sched_yield();  // the reader may be waiting for this core
      }
    }
  }
  readers.clear();
  in_sync_ = was_in_sync;
}

std::string Engine::single_copy_report() const {
  if (single_copies_ == 0 && two_copies_ == 0) return {};
  // Counts as key=value (the coordinator sums them over the job), a reason per key.
  std::string report = fmt::format(" shm_single_copies={} shm_two_copies={}", single_copies_, two_copies_);
  for (const auto& [reason, count] : two_copy_reasons_) {
    std::string key = reason;
    std::replace(key.begin(), key.end(), '-', '_');
    report += fmt::format(" shm_two_copies_{}={}", key, count);
  }
  // Sources moved onto huge pages for their readers (one transport serves every peer).
  for (int peer = 0; peer < nprocs_; ++peer) {
    transport::Staging* staging = peer == pid_ ? nullptr : channel_->staging(peer);
    if (!staging) continue;
    if (std::uint64_t collapses = staging->huge_page_collapses()) report += fmt::format(" shm_collapses={}", collapses);
    report += staging->moved_report();
    if (std::string refusal = staging->collapse_refusal(); !refusal.empty()) {
      std::replace(refusal.begin(), refusal.end(), ' ', '_');
      report += fmt::format(" shm_not_collapsed:{}", refusal);
    }
    break;
  }
  for (int peer = 0; peer < nprocs_; ++peer) {  // why this process may not read a peer's memory (a word, no sum)
    transport::Staging* staging = peer == pid_ ? nullptr : channel_->staging(peer);
    std::string refusal = staging ? staging->single_copy_refusal(peer) : std::string();
    if (refusal.empty()) continue;
    std::replace(refusal.begin(), refusal.end(), ' ', '_');
    report += fmt::format(" shm_cannot_read_pid{}:{}", peer, refusal);
  }
  return report;
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
