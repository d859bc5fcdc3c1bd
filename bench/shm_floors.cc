// bench/shm_floors.cc: the bare floors the shm transport (transport/shm/) is measured
// against, all in one run, with nothing of this library in the path:
//   memcpy      bandwidth of one 8 MiB copy between two pre-touched 8 MiB buffers (GB/s
//               of bytes copied, 10^9 B/s; best and median of --reps copies)
//   busy poll   round trip between two forked processes through a MAP_SHARED|MAP_ANONYMOUS
//               mapping: two std::atomic<uint64_t> counters on their own cache lines, each
//               side spinning with a pause instruction (µs, median and min)
//   futex wake  the same, but the waiter sleeps in FUTEX_WAIT on the shared word and the
//               other side FUTEX_WAKEs it (not FUTEX_PRIVATE: two processes): the cost of
//               waking a sleeping process, twice per round trip (its min can be a round
//               trip in which the answer came before the waiter slept: read the median)
//   pipe wake   the same, the counter in shared memory but the waiter blocked in
//               poll + read of a pipe the other side writes 1 byte to (how the shm
//               transport wakes a sleeping receiver)
// Each round trip is timed on its own (one steady_clock read per round trip, ~30 ns of
// it inside the interval); --warmup round trips first are not counted. Every wait is
// bounded (--timeout-ms; the child also dies with its parent), so a lost process ends the
// run with an error instead of a hang.
//
// Run: bazel build //bench:shm_floors && bazel-bin/bench/shm_floors
//      [--csv] [--rounds=100000] [--reps=30] [--warmup=1000] [--pin] [--timeout-ms=5000]
// --pin puts the parent on the first allowed CPU and the child on the second. --csv prints
// `floor,median,best,unit,samples,p10` (p10: ping-pongs' 10th percentile) with the ids memcpy_8mib_gbps,
// pingpong_spin_us, pingpong_futex_us and pingpong_pipe_us (best: the highest GB/s, the lowest µs).
#include <fcntl.h>
#include <fmt/format.h>
#include <linux/futex.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/bench_flags.h"

namespace {

using Clock = std::chrono::steady_clock;

struct Options {
  bool csv = false;
  long rounds = 100000;
  long reps = 30;
  long warmup = 1000;
  bool pin = false;
  long timeout_ms = 5000;
};

// One result line of the table.
struct Row {
  std::string id;    // the CSV's key (bench/shm_table.sh reads these)
  std::string name;  // the table's
  std::string unit;
  double median = 0;
  double best = 0;  // the highest bandwidth, or the lowest time
  long samples = 0;
  double p10 = 0;  // ping-pongs: the 10th percentile (what a loaded machine's median hides)
};

inline void cpu_pause() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#else
  asm volatile("" ::: "memory");
#endif
}

// ---- (a) memcpy ----------------------------------------------------------------------

Row memcpy_floor(const Options& options) {
  constexpr std::size_t kBytes = std::size_t{8} << 20;
  auto* source = static_cast<std::byte*>(std::aligned_alloc(4096, kBytes));
  auto* destination = static_cast<std::byte*>(std::aligned_alloc(4096, kBytes));
  if (!source || !destination) throw std::runtime_error("out of memory");
  std::memset(source, 0x5a, kBytes);  // pre-touch both: no page faults in the copies
  std::memset(destination, 0xa5, kBytes);
  std::memcpy(destination, source, kBytes);  // and one copy to warm the caches and TLB
  std::vector<double> seconds;
  for (long rep = 0; rep < options.reps; ++rep) {
    source[static_cast<std::size_t>(rep) % kBytes] = static_cast<std::byte>(rep);
    const auto start = Clock::now();
    std::memcpy(destination, source, kBytes);
    asm volatile("" : : "r"(destination) : "memory");  // the copy is used
    seconds.push_back(std::chrono::duration<double>(Clock::now() - start).count());
  }
  std::free(source);
  std::free(destination);
  bench::Summary summary = bench::summarize(seconds);
  return {"memcpy_8mib_gbps",
          "memcpy 8 MiB",
          "GB/s",
          kBytes / summary.median / 1e9,
          kBytes / summary.min / 1e9,
          static_cast<long>(seconds.size())};
}

// ---- the two processes -------------------------------------------------------------

// The shared page: every word on a cache line of its own.
struct Shared {
  alignas(64) std::atomic<std::uint64_t> ping{0};  // parent -> child: round number
  alignas(64) std::atomic<std::uint64_t> pong{0};  // child -> parent
  alignas(64) std::atomic<std::uint32_t> futex_ping{0};
  alignas(64) std::atomic<std::uint32_t> futex_pong{0};
};
static_assert(sizeof(Shared) <= 4096);

enum class Wake { kBusy, kFutex, kPipe };

long futex(std::atomic<std::uint32_t>* word, int op, std::uint32_t value, const timespec* timeout) {
  return ::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(word), op, value, timeout, nullptr, 0);
}

void pin_to(int nth) {
  cpu_set_t allowed;
  if (::sched_getaffinity(0, sizeof allowed, &allowed) != 0) return;
  int seen = 0;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (!CPU_ISSET(cpu, &allowed)) continue;
    if (seen++ == nth) {
      cpu_set_t one;
      CPU_ZERO(&one);
      CPU_SET(cpu, &one);
      ::sched_setaffinity(0, sizeof one, &one);
      return;
    }
  }
}

// One side of a ping-pong. Each wait gives up (returns false) after the timeout, or when
// the other process is gone.
class Side {
 public:
  Side(Shared* shared, Wake wake, int read_fd, int write_fd, pid_t other, bool is_child, long timeout_ms)
      : shared_(shared),
        wake_(wake),
        read_fd_(read_fd),
        write_fd_(write_fd),
        other_(other),
        is_child_(is_child),
        timeout_(std::chrono::milliseconds(timeout_ms)) {}

  // Publishes round `n` to the other side (and wakes it).
  void send(std::uint64_t n) {
    switch (wake_) {
      case Wake::kBusy:
        out().store(n, std::memory_order_release);
        break;
      case Wake::kFutex:
        futex_out().store(static_cast<std::uint32_t>(n), std::memory_order_release);
        futex(&futex_out(), FUTEX_WAKE, 1, nullptr);
        break;
      case Wake::kPipe: {
        out().store(n, std::memory_order_release);
        const char byte = 1;
        while (::write(write_fd_, &byte, 1) != 1 && errno == EINTR) {
        }
        break;
      }
    }
  }

  // Waits for round `n` from the other side.
  bool receive(std::uint64_t n) {
    Clock::time_point deadline{};  // set by the first alive(): no clock read on the fast path
    switch (wake_) {
      case Wake::kBusy:
        for (std::uint32_t spins = 1;; ++spins) {  // the clock and the other's state every 4096
          if (in().load(std::memory_order_acquire) == n) return true;
          cpu_pause();
          if ((spins & 0xFFF) == 0 && !alive(deadline)) return in().load(std::memory_order_acquire) == n;
        }
      case Wake::kFutex: {
        const timespec slice{0, 100'000'000};  // re-check the deadline every 100 ms
        for (;;) {
          const std::uint32_t seen = futex_in().load(std::memory_order_acquire);
          if (seen == static_cast<std::uint32_t>(n)) return true;
          futex(&futex_in(), FUTEX_WAIT, seen, &slice);  // EAGAIN when it changed meanwhile
          if (!alive(deadline)) return futex_in().load(std::memory_order_acquire) == static_cast<std::uint32_t>(n);
        }
      }
      case Wake::kPipe:
        for (;;) {
          pollfd fd{read_fd_, POLLIN, 0};
          const int ready = ::poll(&fd, 1, 100);
          if (ready == 1) {
            char byte;
            const ssize_t got = ::read(read_fd_, &byte, 1);
            if (got == 1) return in().load(std::memory_order_acquire) == n;
            if (got == 0) return false;  // the other end closed: it is gone
          }
          if (!alive(deadline)) return false;
        }
    }
    return false;
  }

 private:
  std::atomic<std::uint64_t>& out() { return is_child_ ? shared_->pong : shared_->ping; }
  std::atomic<std::uint64_t>& in() { return is_child_ ? shared_->ping : shared_->pong; }
  std::atomic<std::uint32_t>& futex_out() { return is_child_ ? shared_->futex_pong : shared_->futex_ping; }
  std::atomic<std::uint32_t>& futex_in() { return is_child_ ? shared_->futex_ping : shared_->futex_pong; }

  // False when the wait has lasted too long or the other process is gone (the caller then
  // checks once more: the other may have answered just before it ended). The child is
  // not reaped here (WNOWAIT): its status is read at the end.
  bool alive(Clock::time_point& deadline) const {
    const auto now = Clock::now();
    if (deadline == Clock::time_point{}) deadline = now + timeout_;
    if (now > deadline) return false;
    if (is_child_) return ::getppid() == other_;
    siginfo_t info{};
    return ::waitid(P_PID, static_cast<id_t>(other_), &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == 0;
  }

  Shared* shared_;
  Wake wake_;
  int read_fd_, write_fd_;
  pid_t other_;
  bool is_child_;
  Clock::duration timeout_;
};

// Round-trip times (µs) of a ping-pong with a forked child, `options.rounds` of them
// after `options.warmup` uncounted ones.
Row pingpong_floor(const Options& options, Wake wake, const char* id, const char* name) {
  void* page = ::mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (page == MAP_FAILED) throw std::runtime_error(fmt::format("mmap: {}", std::strerror(errno)));
  auto* shared = new (page) Shared{};
  int to_child[2] = {-1, -1}, to_parent[2] = {-1, -1};
  if (wake == Wake::kPipe && (::pipe2(to_child, O_CLOEXEC) != 0 || ::pipe2(to_parent, O_CLOEXEC) != 0)) {
    throw std::runtime_error(fmt::format("pipe: {}", std::strerror(errno)));
  }
  const long total = options.warmup + options.rounds;
  const pid_t parent = ::getpid();
  std::fflush(stdout);
  const pid_t child = ::fork();
  if (child < 0) throw std::runtime_error(fmt::format("fork: {}", std::strerror(errno)));
  if (child == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(3);
    if (options.pin) pin_to(1);
    if (wake == Wake::kPipe) {
      ::close(to_child[1]);
      ::close(to_parent[0]);
    }
    Side side(shared, wake, to_child[0], to_parent[1], parent, true, options.timeout_ms);
    for (long n = 1; n <= total; ++n) {
      if (!side.receive(static_cast<std::uint64_t>(n))) ::_exit(2);
      side.send(static_cast<std::uint64_t>(n));
    }
    ::_exit(0);
  }
  if (options.pin) pin_to(0);
  if (wake == Wake::kPipe) {
    ::close(to_child[0]);
    ::close(to_parent[1]);
  }
  Side side(shared, wake, to_parent[0], to_child[1], child, false, options.timeout_ms);
  std::vector<double> micros;
  micros.reserve(static_cast<std::size_t>(options.rounds));
  bool ok = true;
  auto before = Clock::now();
  for (long n = 1; n <= total && ok; ++n) {
    side.send(static_cast<std::uint64_t>(n));
    ok = side.receive(static_cast<std::uint64_t>(n));
    const auto now = Clock::now();
    if (n > options.warmup) micros.push_back(std::chrono::duration<double, std::micro>(now - before).count());
    before = now;
  }
  if (!ok) ::kill(child, SIGKILL);
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  if (wake == Wake::kPipe) {
    ::close(to_child[1]);
    ::close(to_parent[0]);
  }
  ::munmap(page, 4096);
  if (!ok || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    const std::string why = WIFSIGNALED(status) && WTERMSIG(status) != SIGKILL
                                ? fmt::format("the child died of signal {}", WTERMSIG(status))
                            : WIFEXITED(status) && WEXITSTATUS(status) != 0
                                ? fmt::format("the child gave up (exit {})", WEXITSTATUS(status))
                            : ok ? "the child ended early"
                                 : fmt::format("no answer within {} ms, or the child died", options.timeout_ms);
    throw std::runtime_error(fmt::format("{}: the ping-pong did not complete: {}", name, why));
  }
  bench::Summary summary = bench::summarize(micros);  // (sorts micros)
  return {
      id, name, "us/rtt", summary.median, summary.min, static_cast<long>(micros.size()), micros[micros.size() / 10]};
}

}  // namespace

int main(int argc, char** argv) {
  bench::Flags flags(argc, argv);
  Options options;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--csv") == 0) options.csv = true;
    if (std::strcmp(argv[i], "--pin") == 0) options.pin = true;
    if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) {
      fmt::print("usage: {} [--csv] [--rounds=100000] [--reps=30] [--warmup=1000] [--pin] [--timeout-ms=5000]\n",
                 argv[0]);
      return 0;
    }
  }
  options.rounds = std::max(1L, flags.number("rounds", options.rounds));
  options.reps = std::max(1L, flags.number("reps", options.reps));
  options.warmup = std::max(0L, flags.number("warmup", options.warmup));
  options.timeout_ms = std::max(1L, flags.number("timeout-ms", options.timeout_ms));

  std::vector<Row> rows;
  try {
    rows.push_back(memcpy_floor(options));
    rows.push_back(pingpong_floor(options, Wake::kBusy, "pingpong_spin_us", "ping-pong, busy poll"));
    rows.push_back(pingpong_floor(options, Wake::kFutex, "pingpong_futex_us", "ping-pong, futex wake"));
    rows.push_back(pingpong_floor(options, Wake::kPipe, "pingpong_pipe_us", "ping-pong, pipe wake"));
  } catch (const std::exception& error) {
    fmt::print(stderr, "shm_floors: {}\n", error.what());
    return 1;
  }

  if (options.csv) {
    fmt::print("floor,median,best,unit,samples,p10\n");
    for (const Row& row : rows)
      fmt::print("{},{:.4f},{:.4f},{},{},{:.4f}\n", row.id, row.median, row.best, row.unit, row.samples, row.p10);
    return 0;
  }
  fmt::print("shm floors ({} CPUs online{})\n", ::sysconf(_SC_NPROCESSORS_ONLN), options.pin ? ", pinned" : "");
  fmt::print("{:<24} {:>10} {:>10}  {:<7} {:>8} {:>8}\n", "floor", "median", "best", "unit", "samples", "p10");
  for (const Row& row : rows) {
    fmt::print("{:<24} {:>10.3f} {:>10.3f}  {:<7} {:>8} {:>8.3f}\n", row.name, row.median, row.best, row.unit,
               row.samples, row.p10);
  }
  fmt::print("(best: highest bandwidth, lowest round trip)\n");
  return 0;
}
