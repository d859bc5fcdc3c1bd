// nas/mg/random_charges.cc: NPB zran3 over a block decomposition (see random_charges.h).
#include "nas/mg/random_charges.h"

#include <algorithm>
#include <vector>

#include "bsplib/bsp.h"
#include "nas/common/collectives.h"
#include "nas/common/randlc.h"
#include "nas/mg/stencils.h"

namespace nas::mg {
namespace {

constexpr int kCharges = 10;                    // points set to +1, and again to -1
constexpr double kSeed = kNpbSeed;              // 314159265
constexpr double kMultiplier = kNpbMultiplier;  // 5^13

struct Candidate {
  double value;
  int g1, g2, g3;  // global point indices
};

// Keeps the kCharges extreme values seen, in the order NPB's scan would settle ties: a
// value replaces the weakest kept one only when strictly more extreme.
class ExtremeValues {
 public:
  explicit ExtremeValues(bool largest) : largest_(largest) {}
  void offer(const Candidate& c) {
    if (kept_.size() < kCharges) {
      kept_.push_back(c);
      std::sort(kept_.begin(), kept_.end(), [this](auto& x, auto& y) { return better(x, y); });
      return;
    }
    if (!better(c, kept_.back())) return;
    kept_.back() = c;
    for (std::size_t i = kept_.size() - 1; i > 0 && better(kept_[i], kept_[i - 1]); --i)
      std::swap(kept_[i], kept_[i - 1]);
  }
  const std::vector<Candidate>& kept() const { return kept_; }

 private:
  bool better(const Candidate& x, const Candidate& y) const { return largest_ ? x.value > y.value : x.value < y.value; }
  bool largest_;
  std::vector<Candidate> kept_;
};

}  // namespace

void fill_random_charges(const Grid3& z, int n, const ProcessGrid& grid, HaloExchange& halo) {
  const int l1 = grid.local_points(0, n), l2 = grid.local_points(1, n), l3 = grid.local_points(2, n);
  const int o1 = grid.first_point(0, n), o2 = grid.first_point(1, n), o3 = grid.first_point(2, n);
  zero(z);

  // Jump to this block's first point, then walk lines of l1 numbers, a row (n numbers)
  // apart in y and a plane (n*n numbers) apart in z.
  const double row_jump = npb_power(kMultiplier, n);
  const double plane_jump = npb_power(kMultiplier, n * n);
  double plane_start = kSeed;
  randlc(&plane_start, npb_power(kMultiplier, o1 + n * (o2 + n * o3)));
  for (int i3 = 1; i3 <= l3; ++i3) {
    double row_start = plane_start;
    for (int i2 = 1; i2 <= l2; ++i2) {
      double x = row_start;
      vranlc(l1, &x, kMultiplier, &z.at(1, i2, i3));
      randlc(&row_start, row_jump);
    }
    randlc(&plane_start, plane_jump);
  }

  ExtremeValues largest(true), smallest(false);
  for (int i3 = 1; i3 <= l3; ++i3)
    for (int i2 = 1; i2 <= l2; ++i2)
      for (int i1 = 1; i1 <= l1; ++i1) {
        const Candidate c{z.at(i1, i2, i3), o1 + i1 - 1, o2 + i2 - 1, o3 + i3 - 1};
        largest.offer(c);
        smallest.offer(c);
      }

  // Every process gets every process's candidates: [pid][largest..., smallest...].
  const int p = bsp_nprocs();
  std::vector<Candidate> mine(2 * kCharges, Candidate{0.0, -1, -1, -1});
  std::copy(largest.kept().begin(), largest.kept().end(), mine.begin());
  std::copy(smallest.kept().begin(), smallest.kept().end(), mine.begin() + kCharges);
  std::vector<Candidate> all(std::size_t(p) * mine.size());
  nas::all_gather(mine.data(), int(mine.size() * sizeof(Candidate)), all.data());

  ExtremeValues global_largest(true), global_smallest(false);
  for (int q = 0; q < p; ++q) {
    for (int i = 0; i < kCharges; ++i) {
      const Candidate& big = all[std::size_t(q) * 2 * kCharges + i];
      const Candidate& small = all[std::size_t(q) * 2 * kCharges + kCharges + i];
      if (big.g1 >= 0) global_largest.offer(big);
      if (small.g1 >= 0) global_smallest.offer(small);
    }
  }

  zero(z);
  auto place = [&](const Candidate& c, double charge) {
    const int i1 = c.g1 - o1 + 1, i2 = c.g2 - o2 + 1, i3 = c.g3 - o3 + 1;
    if (i1 >= 1 && i1 <= l1 && i2 >= 1 && i2 <= l2 && i3 >= 1 && i3 <= l3) z.at(i1, i2, i3) = charge;
  };
  for (const Candidate& c : global_smallest.kept()) place(c, -1.0);
  for (const Candidate& c : global_largest.kept()) place(c, +1.0);
  halo.exchange(z);
}

}  // namespace nas::mg
