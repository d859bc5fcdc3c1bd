// bsp/partitioning.hpp: how n global indices (or a rows x cols matrix) are spread over p
// processes, with the maps global index -> (owner, local index) and back: block, cyclic,
// block-cyclic, and a 2-D cartesian (block x block over a grid of processes).
#pragma once

#include <cstddef>
#include <utility>

namespace bsp {

// Where a global index lives: its owner and its index there.
struct place {
  int owner;
  std::size_t local;
  bool operator==(const place&) const = default;
};

// Consecutive blocks: the first n % p processes hold ceil(n / p) indices, the others floor.
class block_partitioning {
 public:
  block_partitioning(std::size_t n, int p) : n_(n), p_(static_cast<std::size_t>(p)) {}
  std::size_t global_size() const { return n_; }
  std::size_t local_size(int rank) const {
    auto r = static_cast<std::size_t>(rank);
    return n_ / p_ + (r < n_ % p_ ? 1 : 0);
  }
  // The first global index of rank's block.
  std::size_t offset(int rank) const {
    auto r = static_cast<std::size_t>(rank);
    return r * (n_ / p_) + std::min(r, n_ % p_);
  }
  place local(std::size_t g) const {
    std::size_t big = n_ / p_ + 1, in_big = (n_ % p_) * big;
    if (g < in_big) return {static_cast<int>(g / big), g % big};
    std::size_t small = n_ / p_;
    return {static_cast<int>(n_ % p_ + (g - in_big) / small), (g - in_big) % small};
  }
  int owner(std::size_t g) const { return local(g).owner; }
  std::size_t global(int rank, std::size_t l) const { return offset(rank) + l; }

 private:
  std::size_t n_, p_;
};

// Round robin: index g on process g % p.
class cyclic_partitioning {
 public:
  cyclic_partitioning(std::size_t n, int p) : n_(n), p_(static_cast<std::size_t>(p)) {}
  std::size_t global_size() const { return n_; }
  std::size_t local_size(int rank) const {
    auto r = static_cast<std::size_t>(rank);
    return n_ / p_ + (r < n_ % p_ ? 1 : 0);
  }
  place local(std::size_t g) const { return {static_cast<int>(g % p_), g / p_}; }
  int owner(std::size_t g) const { return static_cast<int>(g % p_); }
  std::size_t global(int rank, std::size_t l) const { return l * p_ + static_cast<std::size_t>(rank); }

 private:
  std::size_t n_, p_;
};

// Blocks of b indices dealt round robin: block k on process k % p.
class block_cyclic_partitioning {
 public:
  block_cyclic_partitioning(std::size_t n, int p, std::size_t b) : n_(n), p_(static_cast<std::size_t>(p)), b_(b) {}
  std::size_t global_size() const { return n_; }
  std::size_t local_size(int rank) const {
    std::size_t size = 0;
    for (std::size_t start = static_cast<std::size_t>(rank) * b_; start < n_; start += p_ * b_) {
      size += std::min(b_, n_ - start);
    }
    return size;
  }
  place local(std::size_t g) const {
    std::size_t block = g / b_;
    return {static_cast<int>(block % p_), (block / p_) * b_ + g % b_};
  }
  int owner(std::size_t g) const { return static_cast<int>((g / b_) % p_); }
  std::size_t global(int rank, std::size_t l) const {
    return ((l / b_) * p_ + static_cast<std::size_t>(rank)) * b_ + l % b_;
  }

 private:
  std::size_t n_, p_, b_;
};

// A grid of rows x cols processes (rank = row * cols + col), and a matrix of m x n
// elements spread over it in blocks (block_partitioning in each dimension).
class cartesian_partitioning {
 public:
  cartesian_partitioning(std::size_t m, std::size_t n, int grid_rows, int grid_cols)
      : rows_(grid_rows), cols_(grid_cols), by_row_(m, grid_rows), by_col_(n, grid_cols) {}
  int grid_rows() const { return rows_; }
  int grid_cols() const { return cols_; }
  int rank(int row, int col) const { return row * cols_ + col; }
  std::pair<int, int> coordinates(int rank) const { return {rank / cols_, rank % cols_}; }
  // The local block's shape on rank.
  std::pair<std::size_t, std::size_t> local_size(int rank) const {
    auto [r, c] = coordinates(rank);
    return {by_row_.local_size(r), by_col_.local_size(c)};
  }
  // Element (i, j): its owner, and its local (row, column) there.
  struct place2 {
    int owner;
    std::size_t row, col;
    bool operator==(const place2&) const = default;
  };
  place2 local(std::size_t i, std::size_t j) const {
    place pi = by_row_.local(i), pj = by_col_.local(j);
    return {rank(pi.owner, pj.owner), pi.local, pj.local};
  }
  int owner(std::size_t i, std::size_t j) const { return local(i, j).owner; }
  std::pair<std::size_t, std::size_t> global(int rank, std::size_t row, std::size_t col) const {
    auto [r, c] = coordinates(rank);
    return {by_row_.global(r, row), by_col_.global(c, col)};
  }

 private:
  int rows_, cols_;
  block_partitioning by_row_, by_col_;
};

}  // namespace bsp
