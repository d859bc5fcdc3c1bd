// bsplib/dissemination_barrier.cc: the sparse protocol's barrier and its agreement on
// collective calls (see the header for the rounds and the message layout).
#include "bsplib/dissemination_barrier.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <utility>

namespace bsp {

namespace {

constexpr std::size_t kCallsSize = 1 + 4 + 4 + 4;

class BodyWriter {
 public:
  explicit BodyWriter(std::vector<std::byte>& out) : out_(out) {}
  BodyWriter& u8(std::uint8_t v) { return raw(&v, 1); }
  BodyWriter& u32(std::uint32_t v) { return raw(&v, 4); }
  BodyWriter& i32(std::int32_t v) { return raw(&v, 4); }
  BodyWriter& u64(std::uint64_t v) { return raw(&v, 8); }
  BodyWriter& calls(const CollectiveCalls& c) {
    return u8(static_cast<std::uint8_t>(c.final | (c.tagsize_set ? 2 : 0)))
        .u32(c.next_tagsize)
        .u32(c.pushes)
        .u32(c.pops);
  }

 private:
  BodyWriter& raw(const void* v, std::size_t n) {
    const auto* bytes = static_cast<const std::byte*>(v);
    out_.insert(out_.end(), bytes, bytes + n);
    return *this;
  }
  std::vector<std::byte>& out_;
};

// Reads a body front to back; any read past its end marks it bad (and yields zeros).
class BodyReader {
 public:
  explicit BodyReader(std::span<const std::byte> body) : body_(body) {}
  bool bad() const { return bad_; }
  std::size_t left() const { return body_.size() - at_; }
  std::uint8_t u8() { return read<std::uint8_t>(); }
  std::uint32_t u32() { return read<std::uint32_t>(); }
  std::int32_t i32() { return read<std::int32_t>(); }
  std::uint64_t u64() { return read<std::uint64_t>(); }
  CollectiveCalls calls() {
    CollectiveCalls c;
    std::uint8_t flags = u8();
    c.final = flags & 1;
    c.tagsize_set = (flags & 2) != 0;
    c.next_tagsize = u32();
    c.pushes = u32();
    c.pops = u32();
    return c;
  }

 private:
  template <typename T>
  T read() {
    T value{};
    if (left() < sizeof(T)) {
      bad_ = true;
      return value;
    }
    std::memcpy(&value, body_.data() + at_, sizeof(T));
    at_ += sizeof(T);
    return value;
  }
  std::span<const std::byte> body_;
  std::size_t at_ = 0;
  bool bad_ = false;
};

std::string pid_and_calls(int pid, const CollectiveCalls& calls) {
  return fmt::format("pid {} made {} bsp_push_reg and {} bsp_pop_reg", pid, calls.pushes, calls.pops);
}

}  // namespace

std::string describe_conflict(long superstep, const CallConflict& c) {
  if (c.a.final != c.b.final) {
    int in_sync = c.a.final ? c.pid_b : c.pid_a, in_end = c.a.final ? c.pid_a : c.pid_b;
    return fmt::format(
        "bsplib: mismatched collective calls in superstep {}: pid {} called bsp_sync while pid {} "
        "called bsp_end (every process must make the same sequence of bsp_sync calls)",
        superstep, in_sync, in_end);
  }
  if (c.a.pushes != c.b.pushes || c.a.pops != c.b.pops) {
    return fmt::format(
        "bsplib: registrations differ between processes in superstep {}: {}, {} "
        "(bsp_push_reg/bsp_pop_reg must be called in the same order everywhere)",
        superstep, pid_and_calls(c.pid_a, c.a), pid_and_calls(c.pid_b, c.b));
  }
  if (c.a.next_tagsize != c.b.next_tagsize) {
    return fmt::format(
        "bsplib: bsp_set_tagsize differs between processes in superstep {}: pid {} asks for tags of "
        "{} bytes, pid {} for {} (every process must set the same size)",
        superstep, c.pid_a, c.a.next_tagsize, c.pid_b, c.b.next_tagsize);
  }
  int called = c.a.tagsize_set ? c.pid_a : c.pid_b, not_called = c.a.tagsize_set ? c.pid_b : c.pid_a;
  return fmt::format(
      "bsplib: bsp_set_tagsize called by some processes only in superstep {}: pid {} called it, pid {} "
      "did not (it is collective: every process calls it, with the same size)",
      superstep, called, not_called);
}

DisseminationBarrier::DisseminationBarrier(int pid, int nprocs, int radix)
    : pid_(pid), nprocs_(nprocs), radix_(std::max(radix, 2)) {
  for (long stride = 1; stride < nprocs_; stride *= radix_) {
    stride_.push_back(stride);
    fan_.push_back(static_cast<int>(std::min<long>(radix_ - 1, (nprocs_ - 1) / stride)));
    ++rounds_;
  }
  arrived_.resize(static_cast<std::size_t>(rounds_) * static_cast<std::size_t>(radix_ - 1));
}

long DisseminationBarrier::slot(int round, int src) const {
  long distance = ((pid_ - src) % nprocs_ + nprocs_) % nprocs_;
  if (distance == 0 || distance % stride(round) != 0) return -1;
  long j = distance / stride(round);
  if (j > fan(round)) return -1;
  return static_cast<long>(round) * (radix_ - 1) + j - 1;
}

int DisseminationBarrier::round_at(long distance) const {
  for (int round = 0; round < rounds_; ++round) {
    if (distance % stride(round) == 0 && distance / stride(round) >= 1 && distance / stride(round) <= fan(round)) {
      return round;
    }
  }
  return -1;
}

bool DisseminationBarrier::sends_to(int pid) const {
  return round_at(((pid - pid_) % nprocs_ + nprocs_) % nprocs_) >= 0;
}

bool DisseminationBarrier::hears_from(int src) const {
  return round_at(((pid_ - src) % nprocs_ + nprocs_) % nprocs_) >= 0;
}

std::optional<DisseminationBarrier::Received>& DisseminationBarrier::arrival(int round, int j) {
  return arrived_[static_cast<std::size_t>(round) * static_cast<std::size_t>(radix_ - 1) +
                  static_cast<std::size_t>(j - 1)];
}
const std::optional<DisseminationBarrier::Received>& DisseminationBarrier::arrival(int round, int j) const {
  return const_cast<DisseminationBarrier*>(this)->arrival(round, j);
}

bool DisseminationBarrier::round_here(int round) const {
  for (int j = 1; j <= fan(round); ++j) {
    if (!arrival(round, j)) return false;
  }
  return true;
}

int DisseminationBarrier::awaited() const {
  if (!entered_ || consumed_ >= rounds_) return -1;
  for (int j = 1; j <= fan(consumed_); ++j) {
    if (!arrival(consumed_, j)) {
      return from(consumed_, j);
    }
  }
  return from(consumed_);
}

void DisseminationBarrier::send_round(int round, std::vector<Message>& out) const {
  std::vector<std::byte> body = encode(round);
  for (int j = 1; j <= fan(round); ++j) out.push_back(Message{to(round, j), body});
}

void DisseminationBarrier::start(std::uint32_t superstep, const CollectiveCalls& mine, RegistrationChanges changes) {
  superstep_ = superstep;
  mine_ = mine;
  with_changes_ = mine.pushes > 0 || mine.pops > 0;
  entered_ = false;
  consumed_ = 0;
  for (auto& slot : arrived_) slot.reset();
  conflict_.reset();
  known_.clear();
  known_pid_.clear();
  if (with_changes_) {
    known_pid_.assign(static_cast<std::size_t>(nprocs_), false);
    changes.pid = pid_;
    learn(std::move(changes));
  }
}

std::optional<std::uint32_t> DisseminationBarrier::superstep_of(std::span<const std::byte> body) {
  if (body.size() < 4) return std::nullopt;
  std::uint32_t superstep;
  std::memcpy(&superstep, body.data(), 4);
  return superstep;
}

std::vector<std::byte> DisseminationBarrier::encode(int round) const {
  std::vector<std::byte> body;
  BodyWriter w(body);
  w.u32(superstep_).u8(static_cast<std::uint8_t>(round)).calls(mine_);
  CallConflict none;
  const CallConflict& c = conflict_ ? *conflict_ : none;
  w.u8(conflict_ ? 1 : 0).i32(c.pid_a).calls(c.a).i32(c.pid_b).calls(c.b);
  w.u32(static_cast<std::uint32_t>(known_.size()));
  for (const RegistrationChanges& k : known_) {
    w.i32(k.pid).u32(static_cast<std::uint32_t>(k.pushes.size()));
    for (std::uint64_t size : k.pushes) w.u64(size);
    w.u32(static_cast<std::uint32_t>(k.pops.size()));
    for (const records::Pop& pop : k.pops) w.u32(pop.registration).u8(pop.ambiguous ? 1 : 0);
  }
  return body;
}

std::string DisseminationBarrier::receive(int src, std::span<const std::byte> body) {
  BodyReader r(body);
  std::uint32_t superstep = r.u32();
  int round = r.u8();
  Received message;
  message.calls = r.calls();
  bool has_conflict = r.u8() != 0;
  CallConflict conflict;
  conflict.pid_a = r.i32();
  conflict.a = r.calls();
  conflict.pid_b = r.i32();
  conflict.b = r.calls();
  std::uint32_t count = r.u32();
  if (r.bad()) return "a barrier message too short";
  if (superstep != superstep_)
    return fmt::format("a barrier message of superstep {} in superstep {}", superstep, superstep_);
  long at = round < rounds_ ? slot(round, src) : -1;
  if (at < 0) return fmt::format("a barrier message for round {} it does not send", round);
  if (arrived_[static_cast<std::size_t>(at)]) return fmt::format("a second barrier message for round {}", round);
  auto valid_pid = [this](int pid) { return pid >= 0 && pid < nprocs_; };
  if (has_conflict) {
    if (!valid_pid(conflict.pid_a) || !valid_pid(conflict.pid_b)) return "a barrier message naming no process";
    message.conflict = conflict;
  }
  // Each change takes at least 12 bytes: a count beyond what is there is damage, caught
  // before anything is reserved for it.
  if (count > static_cast<std::uint32_t>(nprocs_) || count > r.left() / 12) {
    return fmt::format("a barrier message announcing {} registration changes", count);
  }
  for (std::uint32_t i = 0; i < count; ++i) {
    RegistrationChanges changes;
    changes.pid = r.i32();
    std::uint32_t pushes = r.u32();
    if (r.bad() || !valid_pid(changes.pid) || pushes > r.left() / 8) return "a barrier message with damaged changes";
    for (std::uint32_t k = 0; k < pushes; ++k) changes.pushes.push_back(r.u64());
    std::uint32_t pops = r.u32();
    if (r.bad() || pops > r.left() / 5) return "a barrier message with damaged changes";
    for (std::uint32_t k = 0; k < pops; ++k) {
      std::uint32_t registration = r.u32();
      changes.pops.push_back(records::Pop{registration, r.u8() != 0});
    }
    message.changes.push_back(std::move(changes));
  }
  if (r.bad() || r.left() != 0) return "a barrier message of the wrong length";
  arrived_[static_cast<std::size_t>(at)] = std::move(message);
  return "";
}

void DisseminationBarrier::enter(std::vector<Message>& out) {
  entered_ = true;
  if (rounds_ > 0) send_round(0, out);
}

void DisseminationBarrier::advance(std::vector<Message>& out) {
  if (!entered_) return;
  while (consumed_ < rounds_ && round_here(consumed_)) {
    int round = consumed_;
    for (int j = 1; j <= fan(round); ++j) {
      std::optional<Received>& arrived = arrival(round, j);
      merge(from(round, j), std::move(*arrived));
      arrived.reset();
    }
    ++consumed_;
    if (consumed_ < rounds_) send_round(consumed_, out);
  }
}

void DisseminationBarrier::merge(int src, Received&& message) {
  if (!conflict_) {
    if (message.conflict) {
      conflict_ = message.conflict;
    } else if (!(message.calls == mine_)) {
      conflict_ = CallConflict{pid_, mine_, src, message.calls};
    }
  }
  if (with_changes_) {
    for (RegistrationChanges& changes : message.changes) learn(std::move(changes));
  }
}

void DisseminationBarrier::learn(RegistrationChanges&& changes) {
  auto pid = static_cast<std::size_t>(changes.pid);
  if (known_pid_[pid]) return;
  known_pid_[pid] = true;
  known_.push_back(std::move(changes));
}

std::vector<RegistrationChanges> DisseminationBarrier::take_changes() {
  std::vector<RegistrationChanges> changes = std::move(known_);
  known_.clear();
  std::sort(changes.begin(), changes.end(),
            [](const RegistrationChanges& a, const RegistrationChanges& b) { return a.pid < b.pid; });
  return changes;
}

}  // namespace bsp
