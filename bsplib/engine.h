// bsplib/engine.h: the superstep engine: registration, DRMA (put/get and the unbuffered
// hp variants), BSMP (send/move/tags) and the sync protocol, over a reliable channel.
//
// Communication posted in a superstep is only recorded (puts copy their source now) in
// one record stream per destination (superstep_records.h). bsp_sync then:
//   1. appends hp-put data (read now; large ones are sent from their source during the
//      sync, as are large get replies: Outgoing::gathered) and an `end` record to every stream, and sends the
//      streams as channel payloads, destinations visited in the order pid+1, pid+2, ...
//      so processes do not all hit the same peer at once (scheduling), many records per
//      payload (packing);
//   2. receives until every peer's `end` has arrived (that is the barrier: one payload
//      each way per pair when nothing else is sent; large puts are written while they
//      arrive, undone if the superstep needs the bytes they replaced: early writes), and
//      checks that every process made the same collective calls (bsp_sync or bsp_end, tag
//      size, registrations);
//   3. serves the get requests it received, reading its memory before any get reply or
//      put of the superstep is written anywhere;
//   4. waits for the replies to its own gets, then writes them, then applies the puts
//      (source by source, in call order: a put and a get into one word, the put wins);
//      single copies (shm): a receiver reads large hp-put and get data from the sender's
//      memory itself, and the sender waits for its read mark (await_readers) before that
//      memory may change (an owner: before its puts land; an hp-put's sender: before it
//      leaves the sync);
//   5. commits registration changes and the tag size, and delivers the messages.
// Records of a peer's next superstep that arrive early stay buffered until then.
// That is the dense protocol (engine.cc). The sparse one (engine_sparse.cc, --sync=sparse,
// chosen automatically from 16 processes) replaces steps 1 and 2: records go only to their
// destinations, which acknowledge them, and a dissemination barrier of ⌈log₂ p⌉ rounds
// (dissemination_barrier.h) replaces the `end` to everyone.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "bsplib/byte_stream.h"
#include "bsplib/dissemination_barrier.h"
#include "bsplib/message_queue.h"
#include "bsplib/registration_table.h"
#include "bsplib/mark_wait.h"
#include "bsplib/stall_watchdog.h"
#include "bsplib/sync_clock.h"
#include "bsplib/superstep_records.h"
#include "recovery/channel.h"

namespace bsp {

// What the engine needs from the runtime around it.
class JobControl {
 public:
  virtual ~JobControl() = default;
  // Stops the whole job with message (printed once by the coordinator). Does not return.
  [[noreturn]] virtual void abort_job(const std::string& message) = 0;
  // Checked while waiting: leaves quietly if the coordinator says the job is stopping.
  virtual void check_for_abort() = 0;
  // A process this one waits for, and how long since anything moved between them (a
  // payload arrived from it, or data to it was handed on, so the link took it).
  using Awaited = StallAwaited;
  // The progress watchdog: this process has waited waited_seconds in bsp_sync of
  // superstep for the processes in awaited (empty: the wait is over).
  virtual void report_stall(long superstep, double waited_seconds, const std::vector<Awaited>& awaited) = 0;
};

class Engine : private recovery::PayloadSink {
 public:
  Engine(int pid, int nprocs, std::unique_ptr<recovery::Channel> channel, JobControl& job);
  ~Engine() override;

  int pid() const { return pid_; }
  // Oxford's -flibrary-level: 0 and 1 check puts and gets against the remote
  // registration at the call, 2 only where they land.
  void set_library_level(int level) { library_level_ = level; }
  // Push-Pull: transfers of at least this many bytes to a peer whose path shares memory
  // are staged and pulled by the receiver (0: never).
  // Oxford's -fcombine-puts: a put into the bytes right after the previous put's, in the
  // same registration on the same process, extends that put's record; a run of puts of
  // one size at equal steps shares one strided record.
  void set_combine_puts(bool on) { combine_puts_ = on; }
  // The sparse superstep protocol (data only to its destinations, acknowledged, then a
  // dissemination barrier) instead of the dense one (an `end` to every process).
  void set_sparse_sync(bool on, int radix = 2);
  bool sparse_sync() const { return sparse_; }
  // Superstep lines: a superstep whose traffic to a peer reached through shared memory is
  // an `end` with nothing to say and at most a cache line of records travels whole in one
  // line that peer reads (transport/staging.h), instead of a frame in its ring.
  void set_superstep_lines(bool on) { superstep_lines_ = on; }
  // Quiet supersteps (nothing sent or received, superstep lines to every peer) wait for
  // the peers' lines by this many looks without the general driver (0: not tried). Worth
  // it only where the peers run on cores of their own: a look only delays a peer that
  // needs this core.
  void set_quiet_polls(int polls) { quiet_polls_ = polls; }
  void set_pull_threshold(long bytes) { pull_threshold_ = bytes > 0 ? static_cast<std::uint64_t>(bytes) : UINT64_MAX; }
  // A wait in bsp_sync longer than this is reported to the coordinator (then every second).
  void set_stall_warning(std::chrono::milliseconds after) { watchdog_.set_warn_after(after); }
  // A peer's staged mark that a pulled copy waits for and that does not move this long
  // stops the job (copy_pulled: the peer stages inside its sync, so it is stuck).
  void set_link_timeout(std::chrono::milliseconds after) { link_timeout_ = after; }
  int nprocs() const { return nprocs_; }

  // DRMA
  void push_reg(const void* address, long size);
  void pop_reg(const void* address);
  void put(int pid, const void* src, void* dst, long offset, long nbytes, bool buffered) {
    // The next put of the run the previous one extended or started (same destination,
    // address and size, at the run's next offset): appended here, inline. Every check of
    // the general path holds for it (run_.limit is the remote check, done once for the
    // run); anything else takes the general path.
    if (buffered && dst == run_.dst && pid == run_.pid && pid >= 0 && nbytes == run_.size &&
        offset == run_.next_offset && src != nullptr) [[likely]] {
      Outgoing& out = outgoing_[static_cast<std::size_t>(pid)];
      if (out.last_put == run_.record && out.last_put_end == out.stream.size() && out.last_put >= out.sent &&
          static_cast<std::uint64_t>(offset + nbytes) <= run_.limit) [[likely]] {
        if (run_.strided) {
          records::extend_strided(out.stream, out.last_put, src, run_.size);
        } else {
          records::extend_put(out.stream, out.last_put, src, run_.size);
        }
        run_.next_offset += run_.step;
        out.last_put_end = out.stream.size();
        if (out.stream.size() - out.sent >= 2 * max_payload_ && pid != pid_) [[unlikely]]
          send_early(pid);
        return;
      }
    }
    put_general(pid, src, dst, offset, nbytes, buffered);
  }
  void get(int pid, const void* src, long offset, void* dst, long nbytes);

  // BSMP
  void set_tagsize(int* tag_nbytes);
  void send(int pid, const void* tag, const void* payload, long nbytes);
  void qsize(int* nmessages, int* accum_nbytes);
  void get_tag(int* status, void* tag);
  void move(void* payload, long reception_nbytes);
  int hpmove(void** tag_ptr, void** payload_ptr);

  // The C++ interface's typed queues (bsplib/cpp/bsp/bsp.hpp): a message to queue number
  // `queue` on pid whose payload is the pieces in order; each queue has its own inbox,
  // filled at the sync and read by index until the next one (apart from bsp_move's queue
  // and its tag size).
  void queue_send(int pid, std::uint32_t queue, const records::Piece* pieces, std::size_t count);
  std::size_t queue_size(std::uint32_t queue) const { return queue < queues_.size() ? queues_[queue].delivered() : 0; }
  // The whole inbox of queue (empty: no queue of that number has had messages).
  const MessageQueue* queue_inbox(std::uint32_t queue) const {
    return queue < queues_.size() ? &queues_[queue] : nullptr;
  }
  // Message index of queue's inbox (index < queue_size(queue)): its payload.
  std::span<const std::byte> queue_message(std::uint32_t queue, std::size_t index) const {
    MessageQueue::Message m = queues_[queue].at(index);
    return {m.payload, m.payload_size};
  }
  // The size in bytes of pid's registration named here by address (after the sync that
  // made it), if known.
  std::optional<std::uint64_t> remote_size(int pid, const void* address) const {
    std::optional<std::uint32_t> index = registrations_.find(address);
    if (!index) return std::nullopt;
    return registrations_.remote_size(pid, *index);
  }

  void sync() { superstep(false); }
  // bsp_end: a last superstep, then waits (bounded) until the channel has delivered all.
  void finish();
  // Keeps the protocol running (answering acks and probes) while the runtime waits for
  // the other processes to finish.
  void keep_alive(std::chrono::milliseconds how_long);

  double communication_seconds() const { return sync_clock_.seconds(communication_ticks_); }
  // For --stats: how many large transfers over shared memory were single copies, how many
  // went through staging memory (two copies) and why.
  std::string single_copy_report() const;
  // For --stats: large puts written while they arrived, and supersteps that undid them.
  std::string early_write_report() const;
  long supersteps() const { return superstep_; }
  // For --stats: supersteps run whole by quiet_superstep().
  long quiet_supersteps() const { return quiet_supersteps_; }
  const recovery::Channel& channel() const { return *channel_; }

  // Reports a misuse of the API by this process (names the call and pid); never returns.
  [[noreturn]] void usage_error(std::string_view call, const std::string& what);

 private:
  struct Outgoing {
    ByteStream stream;     // records of the superstep (then get replies)
    std::size_t sent = 0;  // bytes handed to the channel
    // The last put record (for combining the next one with it): where it starts, and the
    // stream's size when it was written (equal to the size now: nothing came after it).
    std::size_t last_put = 0, last_put_end = SIZE_MAX;
    std::uint32_t get_requests = 0;
    std::uint64_t reply_bytes_expected = 0;  // for this process's gets from this peer
    bool open = false;                       // records of this superstep written (sparse: an `open` first)
    bool acked = false;                      // sparse: the destination has acknowledged them
    bool listed = false;                     // in writing_
    // Large data sent from where it lies instead of being copied into the stream: a
    // bsp_hpput's source and a get reply's data (both may be read until this process's
    // sync ends, and are all handed to the channel before it writes any data). Each
    // belongs after the stream's first `at` bytes; send_stream() visits them in order.
    struct Gathered {
      std::size_t at;
      const std::byte* data;
      std::size_t size;
    };
    std::vector<Gathered> gathered;
    std::size_t gathered_next = 0, gathered_done = 0;  // the one being sent, and how far
    bool unsent() const { return sent != stream.size() || gathered_next != gathered.size(); }
  };
  enum class Phase { records, replies, complete };
  struct Incoming {
    ByteStream stream;
    std::size_t parsed = 0;
    Phase phase = Phase::records;
    // This superstep's records lie in [records_at, end_at): end_at is where the `end`
    // (dense) or `close` (sparse) record starts; records_at is 0, or after the `open`.
    std::size_t records_at = 0, end_at = 0;
    bool opened = false, in_records = false;  // sparse: `open` seen; `close` not yet
    std::vector<records::GetRequest> get_requests;
    std::vector<records::GetReply> replies;  // written only once every get is served
    std::optional<records::End> end;
    std::uint64_t reply_bytes_missing = 0;
    // A payload being written by the channel straight after the stream's end (placement:
    // payload_room): its size; the stream's bytes must not move until it is confirmed.
    std::size_t placing = 0;
    bool listed = false;  // in receiving_
  };
  struct PendingGet {
    std::byte* dst;
    std::uint32_t size;
    int from;
  };
  struct HpPut {
    int pid;
    const void* src;
    std::uint32_t registration, offset, size;
  };

  // The run of combined puts put() continues inline: the record of outgoing_[pid] at
  // `record` (strided, or a contiguous put record), into the registration named by dst,
  // whose next put is size bytes at next_offset; limit is how far it may reach (the
  // remote registration's size at library levels 0 and 1) before the general path is
  // asked again. Set by the general path; pid -1: none (and a put naming pid -1 never
  // matches it).
  struct RunCursor {
    const void* dst = nullptr;
    int pid = -1;
    long size = 0, next_offset = -1, step = 0;
    std::uint64_t limit = 0;
    std::size_t record = 0;
    bool strided = false;
  };
  void put_general(int pid, const void* src, void* dst, long offset, long nbytes, bool buffered);
  void aim_run(int pid, const void* dst, std::uint32_t registration, std::uint32_t size);

  // PayloadSink
  void on_payload(int peer, std::span<const std::byte> payload) override;
  void on_peer_lost(int peer, std::string_view why) override;
  std::span<std::byte> payload_room(int peer, std::size_t size) override;
  void on_payload_placed(int peer) override;
  void payload_abandoned(int peer) override;
  void took_payload(int peer);

  // The superstep protocol; final: this is bsp_end's superstep.
  void superstep(bool final);
  // The whole superstep when neither this process nor any peer had anything to say
  // (engine_quiet.cc); false: nothing done, the general driver runs it.
  bool quiet_superstep();
  // Steps 1 to 4 up to writing data, by the dense protocol (below, engine.cc) or the
  // sparse one (engine_sparse.cc); each returns every process's pushes (empty: none).
  std::vector<std::vector<std::uint64_t>> dense_exchange(bool final);
  std::vector<std::vector<std::uint64_t>> sparse_exchange(bool final);
  void parse_sparse(int src);
  // The records both protocols read alike: a put, a get request or a message from src.
  std::size_t next_record(int src, const Incoming& in, bool in_records);
  void take_record(int src, records::Kind kind, const std::byte* at, Incoming& in);
  void take_reply(int src, records::Kind kind, const std::byte* at, Incoming& in);
  // Sparse: the barrier's next messages, once this process's data is acknowledged.
  void advance_barrier();
  void collect_awaited();
  // The stream to pid, for a write: pid joins writing_, the streams the superstep's passes
  // visit (sending, waiting, the reset), so their work follows the destinations, not p.
  Outgoing& stream_to(int pid) {
    Outgoing& out = outgoing_[pid];
    if (!out.listed) [[unlikely]] {
      out.listed = true;
      writing_.push_back(pid);
      writing_sorted_ = writing_.size() == 1;
    }
    return out;
  }
  // pid's incoming stream has bytes: it joins receiving_.
  void heard_from(int pid) {
    Incoming& in = incoming_[pid];
    if (!in.listed) [[unlikely]] {
      in.listed = true;
      receiving_.push_back(pid);
    }
  }
  // Something moved on the link to pid (a payload received or handed to the channel).
  void moved(int pid) { watchdog_.moved(pid); }
  // The stream of records to pid, opened on first use this superstep.
  Outgoing& records_to(int pid) {
    Outgoing& out = outgoing_[pid];
    if (!out.open) [[unlikely]]
      open_records(pid);
    return out;
  }
  void open_records(int pid);
  // After the barrier: every process made the same collective calls, or the job stops.
  void check_collective_calls();
  void parse(int src);
  // Superstep lines (dense protocol): this superstep's records and a plain `end` to pid in
  // its line, if they fit (true: sent); src's line for this superstep into its stream
  // before anything of the next (true: taken); every awaited peer's line (true: one came).
  bool post_line(int pid, Outgoing& out);
  bool take_line(int src, Incoming& in);
  // An `end` that says only "superstep s is over" (a line's, or this process's own plain
  // one), taken without a record written and parsed (see engine.cc).
  records::End implied_end() const;
  void take_implied_end(int src, Incoming& in);
  bool own_end_implied(const Outgoing& out) const;
  // Whether src's records of this superstep may still come in its line: none parsed yet.
  bool line_due(int src) const;
  // Whether nothing of this superstep's records or `end` has been parsed from in yet.
  bool end_still_due(const Incoming& in) const;
  bool poll_lines();
  void screen_record(int src, const Incoming& in, bool in_records);
  void check_tag_size(int src, const records::Message& message);
  void check_reply(int src, const records::GetReply& reply);
  void apply_replies();
  void write_put(int pid, std::uint32_t registration, std::uint32_t offset, const void* src, std::uint32_t size);
  const std::byte* pulled_data(int src, std::uint64_t token, std::uint32_t size);
  // Staging memory for size bytes pulled by pid (Staging::stage), nullptr where there is
  // none. Before the superstep's first, the memory last staged into is taken again when
  // every peer that pulled from it has raised its read mark past that superstep's sync.
  std::byte* stage_for(int pid, std::size_t size, std::uint64_t& token);
  // stage_for, and size bytes at src copied there now (false: no staging).
  bool stage_copied(int pid, const void* src, std::uint32_t size, std::uint64_t& token);
  // Staging filled during the sync after the exchange (copy_deferred), not before: a token
  // with kDeferred set names bytes its reader copies piece by piece behind the sender's
  // staged mark (copy_pulled), so the sender's copy and the reader's overlap.
  static constexpr std::uint64_t kDeferred = std::uint64_t{1} << 62;
  bool stage_deferred(int pid, const void* src, std::uint32_t size, std::uint64_t& token);
  void copy_deferred();
  void copy_pulled(int src, std::uint64_t token, std::byte* into, std::uint32_t size);
  // Single copy: a pulled token with kDirect set is an address in the sender's memory that
  // the receiver reads itself (read_direct); the sender keeps that memory as it is until the
  // reader's read mark says it is done (await_readers).
  static constexpr std::uint64_t kDirect = std::uint64_t{1} << 63;
  bool direct_to(int pid, const void* data, std::uint32_t size);
  bool put_in_place(int pid, std::uint32_t registration, std::uint32_t offset, const void* src, std::uint32_t size);
  void post_direct_put(int pid, std::uint32_t registration, std::uint32_t offset, std::uint32_t size, const void* at,
                       std::vector<int>& readers);
  static void add_reader(std::vector<int>& readers, int pid);
  void note_two_copies(std::string_view why);
  void read_direct(const char* call, int src, std::uint64_t token, std::byte* into, std::uint32_t size);
  void await_readers(std::vector<int>& readers, std::uint64_t mark);
  // While idle: asks the coordinator whether the job was stopped, if it is time to again.
  void check_for_abort_every(std::chrono::steady_clock::time_point now);
  // How long a wait for a peer's mark stays silent, and how long a still mark is borne.
  MarkWait::Limits mark_wait_limits() const { return {watchdog_.warn_after(), link_timeout_}; }
  // The memory a put from src (or a get by src) touches, checked against the registration
  // as it is on this process; outside it, the job stops with the call, pids and sizes.
  std::byte* target_area(const char* call, const char* direction, int src, std::uint32_t registration,
                         std::uint32_t offset, std::uint64_t size) {
    const Registration* area = registrations_.get(registration);
    if (!area || std::uint64_t{offset} + size > area->size) [[unlikely]] {
      outside_local(call, direction, src, registration, offset, size);
    }
    return static_cast<std::byte*>(const_cast<void*>(area->address)) + offset;
  }
  const std::vector<int>& sources();
  // Early writes (engine_early_writes.cc): a large put's data written into its
  // destination as it arrives, once this process is inside bsp_sync, the destination's old
  // bytes swapped into the stream in its place, so no pass over those bytes is left for
  // after the last `end`. Before any get is served, whatever needed the old bytes (a get
  // reading them, this process's own get writing into them, a put that must land before
  // them) undoes every early write (swapped back, last first), and the superstep runs as
  // if there had been none.
  // Below this a put's bytes cost little after the last `end`; above it they are spread
  // over many payloads, each written while it is still in cache.
  static constexpr std::uint32_t kEarlyWriteFrom = 64 * 1024;
  struct EarlyWrite {
    int src;
    std::size_t record;   // the put record's position in src's stream
    std::size_t data_at;  // its data's
    std::byte* into;
    std::uint32_t size, done;  // bytes of the put, and how many are written
  };
  // Writes what has arrived of the put record at src's parse position, if it may.
  void write_early(int src, Incoming& in);
  // After every `end`, before gets are served: the early writes stand, or all are undone.
  void settle_early_writes();
  bool early_writes_conflict();
  // Whether this process's memory may still be read for this superstep's hp-put data.
  bool own_memory_still_read() const;
  // The early write of src's record at pos, if it stands (walked in stream order: next
  // is the caller's cursor into early_writes_).
  bool written_early(int src, std::size_t pos, std::size_t& next) const;
  void serve_gets();
  void apply_puts();
  void deliver_local();
  bool send_pending();
  void send_early(int pid);
  bool send_stream(int pid, bool whole);
  // Data of at least this many bytes is sent from where it lies (Outgoing::gathered).
  std::size_t gather_from() const { return std::max<std::size_t>(max_payload_, 16384); }
  bool write_staged_put(int pid, Outgoing& out, std::uint32_t registration, std::uint32_t offset, const void* src,
                        std::uint32_t size, bool deferred = false);
  void write_large_put(int pid, Outgoing& out, std::uint32_t registration, std::uint32_t offset, const void* src,
                       std::uint32_t size);
  bool combine_put(Outgoing& out, std::uint32_t registration, std::uint32_t offset, const void* src,
                   std::uint32_t size);
  static void apply_strided(std::byte* into, const records::StridedPut& run, const std::byte* data);
  // One round of progress; blocks (spin, then wait) when nothing moved.
  void pump();
  bool all_sent() const;
  // The registration a call names by address, after checking its pid and sizes.
  std::uint32_t registration_of(std::string_view call, int pid, const void* address, long offset, long nbytes) {
    check_pid(call, pid);
    auto index = registrations_.find(address);
    if ((offset | nbytes) < 0 || !index) [[unlikely]]
      bad_area(call, pid, address, offset, nbytes);
    return *index;
  }
  [[gnu::cold, noreturn]] void bad_pid(std::string_view call, int pid);
  [[gnu::cold, noreturn]] void bad_area(std::string_view call, int pid, const void* address, long offset, long nbytes);
  [[gnu::cold, noreturn]] void null_pointer(std::string_view call, const char* what, long nbytes);
  [[gnu::cold, noreturn]] void outside_remote(const char* call, const char* direction, int pid,
                                              std::uint32_t registration, long offset, long nbytes, std::uint64_t size);
  [[gnu::cold, noreturn]] void outside_local(const char* call, const char* direction, int src,
                                             std::uint32_t registration, std::uint32_t offset, std::uint64_t size);
  void check_pid(std::string_view call, int pid) {
    if (static_cast<unsigned>(pid) >= static_cast<unsigned>(nprocs_)) [[unlikely]]
      bad_pid(call, pid);
  }
  // A pointer the call reads or writes nbytes through must not be NULL.
  void check_pointer(std::string_view call, const char* what, const void* pointer, long nbytes) {
    if (pointer == nullptr && nbytes > 0) [[unlikely]]
      null_pointer(call, what, nbytes);
  }
  // Library levels 0 and 1: a put or get outside the remote registration is reported at
  // the call (so a debugger stops at the offending line); level 2 leaves it to the
  // destination, which checks every arriving record whatever the level.
  void check_remote_area(const char* call, const char* direction, int pid, std::uint32_t registration, long offset,
                         long nbytes) {
    if (library_level_ >= 2) return;
    std::optional<std::uint64_t> size = registrations_.remote_size(pid, registration);
    if (size && static_cast<std::uint64_t>(offset) + static_cast<std::uint64_t>(nbytes) > *size) [[unlikely]] {
      outside_remote(call, direction, pid, registration, offset, nbytes, *size);
    }
  }

  const int pid_;
  const int nprocs_;
  std::unique_ptr<recovery::Channel> channel_;
  JobControl& job_;
  std::size_t max_payload_;

  RegistrationTable registrations_;
  MessageQueue messages_;
  std::vector<MessageQueue> queues_;  // the C++ typed queues' inboxes, by queue number
  int tagsize_ = 0;
  int next_tagsize_ = 0;
  bool tagsize_set_ = false;  // bsp_set_tagsize was called in this superstep

  std::vector<Outgoing> outgoing_;
  // The pids whose outgoing stream was written this superstep (stream_to), and whether
  // the list is in sending order (pid + 1, pid + 2, ...: no peer is hit by everyone at once).
  std::vector<int> writing_;
  bool writing_sorted_ = true;
  RunCursor run_;
  std::vector<Incoming> incoming_;
  // The pids whose incoming stream received bytes since the last superstep's end, or kept
  // unparsed ones (the next superstep's records) then.
  std::vector<int> receiving_;
  std::vector<PendingGet> pending_gets_;
  std::vector<EarlyWrite> early_writes_;             // in the order they began
  bool early_writes_open_ = false;                   // in this sync's exchange (dense protocol)
  std::uint64_t early_puts_ = 0, early_undone_ = 0;  // for --stats
  std::vector<HpPut> hpputs_;
  // Single copies this superstep: the peers told to read this process's memory for their
  // gets (before its puts land) and for hp-puts (before it leaves the sync), and whether
  // this process read others' memory itself.
  std::vector<int> get_readers_, hpput_readers_;
  // Peers reading this superstep's bsp_put sources where the path keeps them (put_in_place).
  std::vector<int> moved_readers_;
  bool read_direct_gets_ = false;
  transport::Staging* read_through_ = nullptr;  // the path this process read others' memory through
  // Staging named during this sync and filled after the exchange (copy_deferred).
  struct DeferredCopy {
    transport::Staging* staging;
    std::byte* to;
    const std::byte* from;
    std::uint64_t token;
    std::uint32_t size;
  };
  std::vector<DeferredCopy> deferred_;  // in staging order (the staged mark's)
  // The last superstep this process staged data in (-1: none yet), the peers it staged
  // for then, and whether this superstep has staged anything yet (stage_for).
  long staged_superstep_ = -1;
  std::vector<int> staged_readers_;
  bool staged_yet_ = false;
  std::uint64_t single_copies_ = 0, two_copies_ = 0;
  std::vector<std::pair<std::string, std::uint64_t>> two_copy_reasons_;
  std::vector<int> awaited_;
  // The path of each peer that has superstep lines (nullptr: none), and a line's records
  // with their implied `end` being put into a stream.
  std::vector<transport::Staging*> line_paths_;
  ByteStream line_records_;
  bool lines_to_all_ = false;  // every peer has a path of superstep lines
  bool superstep_lines_ = true;
  int quiet_polls_ = 0;  // looks for the peers' lines before a quiet superstep gives up (0: none tried)
  // Quiet supersteps whose peers keep outlasting the looks (they compute, or share this
  // core) are not tried for a while: doubling from kFirstSkip up to kMaxSkip supersteps.
  struct QuietBackoff {
    static constexpr int kFirstSkip = 16, kMaxSkip = 4096;
    int skip = 0, next_skip = kFirstSkip, outlasted = 0;
    void gave_up();
    void came();
  };
  QuietBackoff quiet_;
  long quiet_supersteps_ = 0;
  // Sparse protocol state.
  std::vector<int> destinations_;  // pids with records this superstep, in first-use order
  std::unique_ptr<DisseminationBarrier> barrier_;
  std::vector<DisseminationBarrier::Message> barrier_out_;
  int acks_missing_ = 0;
  // Says who a long sync waits for (pump() tells it while idle; moved() per payload).
  StallWatchdog watchdog_;
  int ended_ = 0;
  bool in_sync_ = false;
  bool finishing_ = false;

  int library_level_ = 1;
  std::uint64_t pull_threshold_ = 256;
  bool combine_puts_ = true;
  bool sparse_ = false;
  std::chrono::steady_clock::time_point next_abort_check_;
  std::chrono::milliseconds link_timeout_{30000};
  long superstep_ = 0;
  // Each sync is timed by two stamps (communication_seconds()); the watchdog learns when
  // the sync began only if it has to wait.
  SyncClock sync_clock_;
  std::uint64_t sync_started_ = 0;
  std::uint64_t communication_ticks_ = 0;
  bool watchdog_started_ = false;
};

}  // namespace bsp
