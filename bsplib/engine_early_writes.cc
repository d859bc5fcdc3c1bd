// bsplib/engine_early_writes.cc: large puts written into their destination while they
// arrive, inside bsp_sync, instead of in one more pass over their bytes after the last
// `end` (engine.h, "Early writes"). A put lands at the end of the superstep; what can tell
// the difference is a get of the superstep reading those bytes (it must see them as they
// were before any put), this process's own get replies (written before puts), and the
// order of puts (source by source in pid order, each in call order). All of those are
// known once every `end` is here, and the destination's old bytes wait in the stream, so
// a superstep that needs them swaps every early write back and applies as always.
#include <fmt/format.h>

#include <algorithm>

#include "bsplib/bulk_copy.h"
#include "bsplib/engine.h"

namespace bsp {
namespace {

// The conflict check compares every early write with every get and put of the superstep.
constexpr std::size_t kMostEarlyWrites = 64;

bool overlap(const std::byte* a, std::uint64_t a_size, const std::byte* b, std::uint64_t b_size) {
  return a_size > 0 && b_size > 0 && a < b + b_size && b < a + a_size;
}

}  // namespace

bool Engine::own_memory_still_read() const {
  // Peers reading hp-put sources here themselves; hp-put sources staged for shm peers
  // after the exchange (copy_deferred); large hp-put data sent from where it lies.
  if (!hpput_readers_.empty() || !deferred_.empty()) return true;
  for (int peer : writing_) {
    const Outgoing& out = outgoing_[peer];
    if (out.gathered_next != out.gathered.size()) return true;
  }
  return false;
}

void Engine::write_early(int src, Incoming& in) {
  const std::size_t available = in.stream.size() - in.parsed;
  const std::byte* at = in.stream.data() + in.parsed;
  if (available < records::kPutHeader || static_cast<records::Kind>(at[0]) != records::Kind::put) return;
  records::Put put = records::read_put(at, in.parsed);
  if (put.size < kEarlyWriteFrom) return;
  EarlyWrite* write = nullptr;
  for (auto it = early_writes_.rbegin(); it != early_writes_.rend(); ++it) {  // src's latest
    if (it->src != src) continue;
    if (it->record == in.parsed) write = &*it;
    break;
  }
  if (write == nullptr) {
    // Not from this process itself (its own puts gain nothing), nor through a superstep
    // line (a line's records go in ahead of the stream's); not while this process's own
    // memory may still be read for the superstep.
    if (src == pid_ || line_paths_[src] != nullptr || early_writes_.size() >= kMostEarlyWrites ||
        own_memory_still_read()) {
      return;
    }
    std::byte* into = target_area("bsp_put", "into", src, put.registration, put.offset, put.size);
    // Nor into bytes another source writes early: their pieces interleave as they arrive,
    // and undoing them whole, one after the other, would not retrace that.
    for (const EarlyWrite& other : early_writes_) {
      if (other.src != src && overlap(other.into, other.size, into, put.size)) return;
    }
    early_writes_.push_back(EarlyWrite{src, in.parsed, put.data_at, into, put.size, 0});
    write = &early_writes_.back();
    ++early_puts_;
  }
  const std::size_t arrived = std::min<std::size_t>(put.size, in.stream.size() - put.data_at);
  if (arrived <= write->done) return;
  swap_bytes(write->into + write->done, in.stream.data() + put.data_at + write->done, arrived - write->done);
  write->done = static_cast<std::uint32_t>(arrived);
}

void Engine::settle_early_writes() {
  early_writes_open_ = false;
  if (early_writes_.empty() || !early_writes_conflict()) return;
  for (auto it = early_writes_.rbegin(); it != early_writes_.rend(); ++it) {
    swap_bytes(it->into, incoming_[it->src].stream.data() + it->data_at, it->done);
  }
  early_puts_ -= early_writes_.size();
  early_writes_.clear();
  ++early_undone_;
}

// Whether anything of the superstep needs the bytes an early write replaced, or would
// land in the wrong order with it.
bool Engine::early_writes_conflict() {
  const auto touches_early = [this](const std::byte* area, std::uint64_t size) {
    return std::any_of(early_writes_.begin(), early_writes_.end(),
                       [&](const EarlyWrite& write) { return overlap(write.into, write.done, area, size); });
  };
  for (const PendingGet& get : pending_gets_) {  // replies are written before puts
    if (touches_early(get.dst, get.size)) return true;
  }
  for (int src : sources()) {
    const Incoming& in = incoming_[src];
    for (const records::GetRequest& request : in.get_requests) {
      if (touches_early(target_area("bsp_get", "from", src, request.registration, request.offset, request.size),
                        request.size)) {
        return true;
      }
    }
    // Every other put lands after the early writes: it must come after each one it
    // overlaps in the order puts are applied (a later source, or later in the same one).
    const std::byte* stream = in.stream.data();
    std::size_t next = 0;
    for (std::size_t pos = in.records_at; pos < in.end_at;) {
      const std::byte* at = stream + pos;
      auto kind = static_cast<records::Kind>(at[0]);
      bool bad = false;
      std::size_t size = records::record_size({stream, in.end_at}, pos, bad);
      if (size == 0) break;
      const std::byte* area = nullptr;
      std::uint64_t extent = 0;
      if ((kind == records::Kind::put || kind == records::Kind::put_pulled) && !written_early(src, pos, next)) {
        records::Put put = records::read_put(at, pos);
        area = target_area("bsp_put", "into", src, put.registration, put.offset, put.size);
        extent = put.size;
      } else if (kind == records::Kind::put_strided) {
        records::StridedPut run = records::read_strided(at, pos);
        area = target_area("bsp_put", "into", src, run.registration, run.offset, run.extent());
        extent = run.extent();
      }
      for (const EarlyWrite& write : early_writes_) {
        if (overlap(write.into, write.done, area, extent) &&
            (src < write.src || (src == write.src && pos < write.record))) {
          return true;
        }
      }
      pos += size;
    }
  }
  return false;
}

bool Engine::written_early(int src, std::size_t pos, std::size_t& next) const {
  while (next < early_writes_.size() && (early_writes_[next].src != src || early_writes_[next].record < pos)) ++next;
  return next < early_writes_.size() && early_writes_[next].src == src && early_writes_[next].record == pos;
}

std::string Engine::early_write_report() const {
  if (early_puts_ == 0 && early_undone_ == 0) return {};
  return fmt::format(" early_puts={} early_undone={}", early_puts_, early_undone_);
}

}  // namespace bsp
