// bsplib/level1.cc: the Oxford toolset's level-1 collectives (bsp_level1.h) on the public
// BSPlib API alone. Each call is one Collective: check the arguments, register a scratch
// area and sync (superstep 1), put the data into the scratch areas and sync (superstep
// 2), check that pid 0 made the same call, pop the area, then compute locally from it.
#include "bsp_level1.h"

// The call-site macros of the header would rename the definitions below.
#undef bsp_bcast
#undef bsp_fold

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

namespace {

using Op = void (*)(void*, void*, void*, int*);

constexpr int kNoRoot = -1;

// Where a collective was called from (the toolset's macros give a file and line).
struct Site {
  const char* function;
  const char* file = nullptr;
  int line = 0;
};

// What pid 0 tells every process about its call, to be compared with their own.
struct Signature {
  char function[24];
  std::int32_t root;
  std::int32_t nbytes;
};
static_assert(sizeof(Signature) == 32);  // keeps the data after it 16-byte aligned

std::string describe(const Signature& call) {
  if (call.root == kNoRoot) return fmt::format("{} (nbytes {})", call.function, call.nbytes);
  return fmt::format("{} (root pid {}, nbytes {})", call.function, call.root, call.nbytes);
}

// One call of a collective on this process.
class Collective {
 public:
  // Checks nbytes and the root pid (kNoRoot: the collective has none).
  Collective(Site site, int root, int nbytes) : site_(site), pid_(bsp_pid()), nprocs_(bsp_nprocs()) {
    signature_ = Signature{{}, root, nbytes};
    std::strncpy(signature_.function, site.function, sizeof signature_.function - 1);
    if (nbytes < 0) fail(fmt::format("nbytes is {}; it must be 0 or more", nbytes));
    if (root != kNoRoot && (root < 0 || root >= nprocs_)) {
      fail(fmt::format("root pid {} is out of range: there are {} processes, 0 .. {}", root, nprocs_, nprocs_ - 1));
    }
  }

  int pid() const { return pid_; }
  int nprocs() const { return nprocs_; }
  int nbytes() const { return signature_.nbytes; }

  [[noreturn]] void fail(const std::string& problem) const {
    std::string where = site_.function;
    if (site_.file != nullptr) where += fmt::format(" (called at {}:{})", site_.file, site_.line);
    bsp_abort("%s on pid %d: %s", where.c_str(), pid_, problem.c_str());
  }

  // Stops the job when buffer is NULL although there are bytes to read or write there.
  void need(const void* buffer, const char* name) const {
    if (buffer == nullptr && nbytes() > 0) fail(fmt::format("{} is NULL but nbytes is {}", name, nbytes()));
  }

  // Superstep 1: registers a scratch area of data_bytes here (sizes may differ between
  // processes) behind room for pid 0's signature, and syncs.
  void open(std::int64_t data_bytes) {
    if (data_bytes > INT_MAX - static_cast<std::int64_t>(sizeof(Signature))) {
      fail(fmt::format("{} bytes of data (nbytes {} on {} processes) is more than one BSPlib registration can hold",
                       data_bytes, nbytes(), nprocs_));
    }
    scratch_.assign(sizeof(Signature) + static_cast<std::size_t>(data_bytes), 0);
    bsp_push_reg(scratch_.data(), static_cast<int>(scratch_.size()));
    bsp_sync();
    if (pid_ == 0) {
      for (int to = 1; to < nprocs_; ++to) bsp_put(to, &signature_, scratch_.data(), 0, sizeof signature_);
    }
  }

  // Superstep 2: nbytes from src into the scratch area of process `to` at offset (copied
  // at once when `to` is this process).
  void put(int to, const void* src, std::int64_t offset) {
    if (nbytes() == 0) return;
    if (to == pid_) {
      std::memcpy(scratch_.data() + sizeof(Signature) + offset, src, nbytes());
    } else {
      bsp_put(to, src, scratch_.data(), static_cast<int>(sizeof(Signature) + offset), nbytes());
    }
  }

  // Ends superstep 2, removes the registration (from the next sync) and checks that
  // this process made the same call as pid 0.
  void close() {
    bsp_sync();
    bsp_pop_reg(scratch_.data());
    if (pid_ == 0) return;
    Signature first;
    std::memcpy(&first, scratch_.data(), sizeof first);
    first.function[sizeof first.function - 1] = '\0';
    if (std::strcmp(first.function, signature_.function) != 0 || first.root != signature_.root ||
        first.nbytes != signature_.nbytes) {
      fail(
          fmt::format("pid 0 called {} where this process called {}; every process must call the same "
                      "level-1 collectives in the same order with the same root pid and nbytes",
                      describe(first), describe(signature_)));
    }
  }

  // The data that arrived (valid until this object goes).
  char* data() { return scratch_.data() + sizeof(Signature); }
  // Element i of a table of nbytes-sized elements.
  char* element(int i) { return data() + static_cast<std::int64_t>(i) * nbytes(); }

 private:
  Site site_;
  int pid_;
  int nprocs_;
  Signature signature_;
  std::vector<char> scratch_;  // operator new's alignment (16) for the data too
};

// The exchange behind fold, scan and the typed reductions: afterwards element i of the
// table holds process i's src, for every i (all), or for i <= pid (prefix).
// Supersteps 2; h-relation (P-1) nbytes either way.
void exchange(Collective& call, const void* src, bool prefix) {
  call.open(static_cast<std::int64_t>(call.nprocs()) * call.nbytes());
  const int first = prefix ? call.pid() : 0;
  for (int to = first; to < call.nprocs(); ++to) {
    call.put(to, src, static_cast<std::int64_t>(call.pid()) * call.nbytes());
  }
  call.close();
}

// dst = element 0 (+) element 1 (+) ... (+) element count-1, left to right, with op never
// given aliased arguments.
void fold_elements(Op op, Collective& call, int count, void* dst) {
  const int nbytes = call.nbytes();
  if (nbytes == 0) return;
  std::vector<char> acc(call.element(0), call.element(0) + nbytes), next(nbytes);
  for (int i = 1; i < count; ++i) {
    int size = nbytes;  // op gets its own copy to write to
    op(next.data(), acc.data(), call.element(i), &size);
    acc.swap(next);
  }
  std::memcpy(dst, acc.data(), nbytes);
}

void fold(Site site, Op op, void* src, void* dst, int nbytes, bool prefix) {
  Collective call(site, kNoRoot, nbytes);
  if (op == nullptr) call.fail("op is NULL");
  call.need(src, "src");
  call.need(dst, "dst");
  exchange(call, src, prefix);
  fold_elements(op, call, prefix ? call.pid() + 1 : call.nprocs(), dst);
}

template <typename T>
T element_as(Collective& call, int i) {
  T value;
  std::memcpy(&value, call.element(i), sizeof value);
  return value;
}

// A typed reduction (or inclusive prefix) in pid order.
template <typename T, typename Combine>
T combine(const char* function, T x, bool prefix, Combine combine2) {
  Collective call(Site{function}, kNoRoot, sizeof(T));
  exchange(call, &x, prefix);
  const int count = prefix ? call.pid() + 1 : call.nprocs();
  T result = element_as<T>(call, 0);
  for (int i = 1; i < count; ++i) result = combine2(result, element_as<T>(call, i));
  return result;
}

// Integer + and * wrap around instead of overflowing (undefined behaviour in C and C++).
int add_int(int a, int b) { return static_cast<int>(static_cast<unsigned>(a) + static_cast<unsigned>(b)); }
int multiply_int(int a, int b) { return static_cast<int>(static_cast<unsigned>(a) * static_cast<unsigned>(b)); }
template <typename T>
T add(T a, T b) {
  return a + b;
}
template <typename T>
T multiply(T a, T b) {
  return a * b;
}
template <typename T>
T min_of(T a, T b) {
  return a < b ? a : b;
}  // the toolset's
template <typename T>
T max_of(T a, T b) {
  return a > b ? a : b;
}  // comparisons
int both(int a, int b) { return a && b; }
int either(int a, int b) { return a || b; }

// The i-th smallest of every process's x on process i.
template <typename T>
T sort_one(const char* function, T x) {
  Collective call(Site{function}, kNoRoot, sizeof(T));
  exchange(call, &x, false);
  std::vector<T> all(call.nprocs());
  for (int i = 0; i < call.nprocs(); ++i) all[i] = element_as<T>(call, i);
  // Ascending by <, with NaNs last (so the order is a strict weak one).
  std::stable_sort(all.begin(), all.end(), [](T a, T b) {
    if constexpr (std::is_floating_point_v<T>) return a < b || (!std::isnan(a) && std::isnan(b));
    return a < b;
  });
  return all[call.pid()];
}

void bcast(Site site, int root, void* src, void* dst, int nbytes) {
  Collective call(site, root, nbytes);
  if (call.pid() == root) call.need(src, "src");
  call.need(dst, "dst");
  call.open(nbytes);
  if (call.pid() == root) {
    for (int to = 0; to < call.nprocs(); ++to) call.put(to, src, 0);  // h: (P-1) n out of the root
  }
  call.close();
  if (nbytes > 0) std::memmove(dst, call.data(), nbytes);
}

}  // namespace

extern "C" {

void bsp_bcast(int pid, void* src, void* dst, int nbytes) { bcast(Site{"bsp_bcast"}, pid, src, dst, nbytes); }

void bsp_bcast_cpp(int pid, void* src, void* dst, int nbytes, int lineno, char* filename) {
  bcast(Site{"bsp_bcast", filename, lineno}, pid, src, dst, nbytes);
}

// Supersteps 2; h-relation (P-1) n into the root.
void bsp_gather(int pid, void* src, void* dst, int nbytes) {
  Collective call(Site{"bsp_gather"}, pid, nbytes);
  call.need(src, "src");
  if (call.pid() == pid) call.need(dst, "dst");
  call.open(call.pid() == pid ? static_cast<std::int64_t>(call.nprocs()) * nbytes : 0);
  call.put(pid, src, static_cast<std::int64_t>(call.pid()) * nbytes);
  call.close();
  if (call.pid() == pid && nbytes > 0) {
    std::memmove(dst, call.data(), static_cast<std::size_t>(call.nprocs()) * nbytes);
  }
}

// Supersteps 2; h-relation (P-1) n out of the root.
void bsp_scatter(int pid, void* src, void* dst, int nbytes) {
  Collective call(Site{"bsp_scatter"}, pid, nbytes);
  if (call.pid() == pid) call.need(src, "src");
  call.need(dst, "dst");
  call.open(nbytes);
  if (call.pid() == pid) {
    for (int to = 0; to < call.nprocs(); ++to) {
      call.put(to, static_cast<const char*>(src) + static_cast<std::int64_t>(to) * nbytes, 0);
    }
  }
  call.close();
  if (nbytes > 0) std::memmove(dst, call.data(), nbytes);
}

void bsp_fold(Op op, void* src, void* dst, int nbytes) { fold(Site{"bsp_fold"}, op, src, dst, nbytes, false); }

void bsp_fold_cpp(Op op, void* src, void* dst, int nbytes, int lineno, char* filename) {
  fold(Site{"bsp_fold", filename, lineno}, op, src, dst, nbytes, false);
}

void bsp_scan(Op op, void* src, void* dst, int nbytes) { fold(Site{"bsp_scan"}, op, src, dst, nbytes, true); }

int bsp_all(int x) { return combine("bsp_all", x != 0 ? 1 : 0, false, both); }
int bsp_any(int x) { return combine("bsp_any", x != 0 ? 1 : 0, false, either); }
int bsp_all_prefix(int x) { return combine("bsp_all_prefix", x != 0 ? 1 : 0, true, both); }
int bsp_any_prefix(int x) { return combine("bsp_any_prefix", x != 0 ? 1 : 0, true, either); }

int bsp_constantI(int x) {
  Collective call(Site{"bsp_constantI"}, kNoRoot, sizeof x);
  exchange(call, &x, false);
  for (int i = 1; i < call.nprocs(); ++i) {
    if (element_as<int>(call, i) != element_as<int>(call, 0)) return 0;
  }
  return 1;
}

int bsp_sumI(int x) { return combine("bsp_sumI", x, false, add_int); }
float bsp_sumR(float x) { return combine("bsp_sumR", x, false, add<float>); }
double bsp_sumD(double x) { return combine("bsp_sumD", x, false, add<double>); }
int bsp_productI(int x) { return combine("bsp_productI", x, false, multiply_int); }
float bsp_productR(float x) { return combine("bsp_productR", x, false, multiply<float>); }
double bsp_productD(double x) { return combine("bsp_productD", x, false, multiply<double>); }
int bsp_minI(int x) { return combine("bsp_minI", x, false, min_of<int>); }
float bsp_minR(float x) { return combine("bsp_minR", x, false, min_of<float>); }
double bsp_minD(double x) { return combine("bsp_minD", x, false, min_of<double>); }
int bsp_maxI(int x) { return combine("bsp_maxI", x, false, max_of<int>); }
float bsp_maxR(float x) { return combine("bsp_maxR", x, false, max_of<float>); }
double bsp_maxD(double x) { return combine("bsp_maxD", x, false, max_of<double>); }

int bsp_sumI_prefix(int x) { return combine("bsp_sumI_prefix", x, true, add_int); }
float bsp_sumR_prefix(float x) { return combine("bsp_sumR_prefix", x, true, add<float>); }
double bsp_sumD_prefix(double x) { return combine("bsp_sumD_prefix", x, true, add<double>); }
int bsp_productI_prefix(int x) { return combine("bsp_productI_prefix", x, true, multiply_int); }
float bsp_productR_prefix(float x) { return combine("bsp_productR_prefix", x, true, multiply<float>); }
double bsp_productD_prefix(double x) { return combine("bsp_productD_prefix", x, true, multiply<double>); }
int bsp_minI_prefix(int x) { return combine("bsp_minI_prefix", x, true, min_of<int>); }
float bsp_minR_prefix(float x) { return combine("bsp_minR_prefix", x, true, min_of<float>); }
double bsp_minD_prefix(double x) { return combine("bsp_minD_prefix", x, true, min_of<double>); }
int bsp_maxI_prefix(int x) { return combine("bsp_maxI_prefix", x, true, max_of<int>); }
float bsp_maxR_prefix(float x) { return combine("bsp_maxR_prefix", x, true, max_of<float>); }
double bsp_maxD_prefix(double x) { return combine("bsp_maxD_prefix", x, true, max_of<double>); }

int bsp_sortI(int x) { return sort_one("bsp_sortI", x); }
float bsp_sortR(float x) { return sort_one("bsp_sortR", x); }
double bsp_sortD(double x) { return sort_one("bsp_sortD", x); }
char bsp_sortC(char x) { return sort_one("bsp_sortC", x); }

}  // extern "C"
