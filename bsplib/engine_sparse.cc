// bsplib/engine_sparse.cc: the sparse superstep protocol (DESIGN.md §3): records go only
// to the processes they are for, each receiver acknowledges them, and a process enters a
// dissemination barrier (dissemination_barrier.h) once all its records are acknowledged
// (NBX, Hoefler, Siebert and Lumsdaine 2010). When the barrier completes, every process
// has entered, so every record sent in the superstep has been received and parsed.
//
// Records to a barrier partner ahead (a process this one sends a barrier message to, in
// any round: pid + 2^r at radix 2) are not acknowledged: the barrier message follows them
// on the same in-order link and the partner cannot complete without parsing it, so it
// has parsed the records first. The partner knows it sends no ack: the sender is a
// partner behind it. A superstep whose data goes only to pid + 1 (a ring, a stencil's
// right neighbour) thus costs what an empty one costs: the records and round 0's barrier
// message leave in one frame.
//
// Frames per process for a superstep that sends nothing: ⌈log₂ p⌉ barrier messages (the
// reliable layer adds its acks). With data for d destinations, a of them not partners:
// d streams, a acks back, and the barrier. Rounds: one for the data, one for the acks
// (none when a = 0), ⌈log₂ p⌉ for the barrier.
//
// On a link, one superstep's traffic from a process is, in this order: its records
// (`open` … `close`), if it had any; its `ack` of the receiver's records and its barrier
// message, in either order; its get replies. The next superstep's begin with an `open`
// or a `barrier` of that superstep, where parsing stops until then.
#include <fmt/format.h>

#include "bsplib/engine.h"

namespace bsp {

void Engine::set_sparse_sync(bool on, int radix) {
  sparse_ = on;
  if (on) barrier_ = std::make_unique<DisseminationBarrier>(pid_, nprocs_, radix);
}

// The first record to pid this superstep: pid becomes a destination, and (sparse) its
// stream starts with an `open` naming the superstep.
void Engine::open_records(int pid) {
  Outgoing& out = stream_to(pid);
  out.open = true;
  destinations_.push_back(pid);
  if (sparse_) records::Writer(out.stream).open(static_cast<std::uint32_t>(superstep_));
}

std::vector<std::vector<std::uint64_t>> Engine::sparse_exchange(bool final) {
  const auto superstep = static_cast<std::uint32_t>(superstep_);
  // 1. Each destination's records are closed and go; the barrier learns this process's
  //    collective calls.
  CollectiveCalls calls;
  calls.final = final ? 1 : 0;
  calls.next_tagsize = static_cast<std::uint32_t>(next_tagsize_);
  calls.tagsize_set = tagsize_set_;
  RegistrationChanges changes;
  changes.pushes = registrations_.pushes_this_superstep();
  changes.pops = registrations_.pops_this_superstep();
  calls.pushes = static_cast<std::uint32_t>(changes.pushes.size());
  calls.pops = static_cast<std::uint32_t>(changes.pops.size());
  barrier_->start(superstep, calls, std::move(changes));
  acks_missing_ = 0;
  for (int pid : destinations_) {
    Outgoing& out = outgoing_[pid];
    records::Writer(out.stream).close(superstep, out.get_requests);
    incoming_[pid].reply_bytes_missing = out.reply_bytes_expected;
    if (pid == pid_ || barrier_->sends_to(pid)) {
      out.acked = true;  // no ack comes: the barrier message behind the records stands for it
    } else {
      ++acks_missing_;
    }
  }
  for (int src : receiving_) {  // early arrivals (parsing receives nothing: the list stays)
    if (incoming_[src].parsed < incoming_[src].stream.size()) parse_sparse(src);
  }
  deliver_local();
  // 2. Until every destination has acknowledged, then the barrier: when it completes,
  //    every record of the superstep, from anyone to this process, has been parsed.
  for (;;) {
    advance_barrier();
    if (barrier_->complete()) break;
    pump();
  }
  if (const auto& conflict = barrier_->conflict()) job_.abort_job(describe_conflict(superstep_, *conflict));
  std::vector<std::vector<std::uint64_t>> pushes;
  if (calls.pushes > 0 || calls.pops > 0) {
    std::vector<RegistrationChanges> all = barrier_->take_changes();
    if (all.size() != static_cast<std::size_t>(nprocs_)) {
      job_.abort_job(
          fmt::format("bsplib: pid {} learned the registration changes of {} of {} processes in "
                      "superstep {}",
                      pid_, all.size(), nprocs_, superstep_));
    }
    if (calls.pops > 0) {
      std::vector<std::vector<records::Pop>> pops;
      for (RegistrationChanges& process : all) pops.push_back(std::move(process.pops));
      if (std::string differs = registrations_.resolve_pops(pops); !differs.empty()) {
        job_.abort_job(fmt::format("bsplib: registrations differ between processes in superstep {}: on pid {}, {}",
                                   superstep_, pid_, differs));
      }
    }
    if (calls.pushes > 0) {
      for (RegistrationChanges& process : all) pushes.push_back(std::move(process.pushes));
    }
  }
  // 3. Gets read memory before anything of this superstep is written.
  serve_gets();
  deliver_local();
  // 4. Replies to this process's gets, and everything it owes others, out.
  for (;;) {
    bool complete = all_sent();
    for (int peer : destinations_) complete &= incoming_[peer].reply_bytes_missing == 0;  // (where gets went)
    if (complete) break;
    pump();
  }
  return pushes;
}

void Engine::advance_barrier() {
  barrier_out_.clear();
  if (!barrier_->entered() && acks_missing_ == 0) barrier_->enter(barrier_out_);
  barrier_->advance(barrier_out_);
  for (const DisseminationBarrier::Message& message : barrier_out_) {
    records::Writer(stream_to(message.to).stream).barrier(message.body);
  }
  if (!barrier_out_.empty()) send_pending();
}

void Engine::parse_sparse(int src) {
  Incoming& in = incoming_[src];
  const auto superstep = static_cast<std::uint32_t>(superstep_);
  auto fail = [&](const std::string& what) {
    job_.abort_job(fmt::format("bsplib: pid {} received {} from pid {} in superstep {}", pid_, what, src, superstep_));
  };
  for (;;) {
    std::size_t size = next_record(src, in, in.in_records);
    if (size == 0) return;
    const std::byte* at = in.stream.data() + in.parsed;
    auto kind = static_cast<records::Kind>(at[0]);
    switch (kind) {
      case records::Kind::open: {
        std::uint32_t of = records::read_u32(at + 1);
        if (of > superstep) return;  // the next superstep's: kept for then
        if (of < superstep || in.opened) fail(fmt::format("records of superstep {} opened again", of));
        in.opened = in.in_records = true;
        in.records_at = in.parsed + size;
        break;
      }
      case records::Kind::close: {
        std::uint32_t of = records::read_u32(at + 1), get_requests = records::read_u32(at + 5);
        if (!in.in_records || of != superstep) fail(fmt::format("a close of superstep {} it did not open", of));
        if (get_requests != in.get_requests.size()) {
          fail(fmt::format("{} get requests announced as {}", in.get_requests.size(), get_requests));
        }
        in.in_records = false;
        in.end_at = in.parsed;
        if (src != pid_ && !barrier_->hears_from(src)) records::Writer(stream_to(src).stream).ack(superstep);
        break;
      }
      case records::Kind::ack: {
        std::uint32_t of = records::read_u32(at + 1);
        Outgoing& out = outgoing_[src];
        if (of != superstep || src == pid_ || !out.open || out.acked) {
          fail(fmt::format("an acknowledgement of superstep {} for records not sent", of));
        }
        out.acked = true;
        --acks_missing_;
        break;
      }
      case records::Kind::barrier: {
        std::span<const std::byte> body{at + records::kBarrierHeader, size - records::kBarrierHeader};
        std::optional<std::uint32_t> of = DisseminationBarrier::superstep_of(body);
        if (of && *of > superstep) return;  // the next superstep's barrier: kept for then
        if (std::string wrong = barrier_->receive(src, body); !wrong.empty()) fail(wrong);
        break;
      }
      case records::Kind::put:
      case records::Kind::put_strided:
      case records::Kind::put_pulled:
      case records::Kind::get_request:
      case records::Kind::message:
      case records::Kind::queue_message:
        if (!in.in_records) fail("a record outside open and close");
        take_record(src, kind, at, in);
        break;
      case records::Kind::get_reply:
      case records::Kind::get_reply_pulled:
        if (in.in_records || in.reply_bytes_missing == 0) fail("an unexpected get reply");
        take_reply(src, kind, at, in);
        break;
      case records::Kind::end:
        fail("a record of the dense sync protocol (every process of a job must run the same --sync)");
    }
    in.parsed += size;
  }
}

}  // namespace bsp
