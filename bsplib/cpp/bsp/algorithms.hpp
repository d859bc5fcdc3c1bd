// bsp/algorithms.hpp: collectives over any trivially copyable T and any associative
// operation (applied in rank order, so it need not commute): gather_all, fold, scan,
// exclusive_scan, broadcast, all_to_all, and sort (sample sort). Each is collective:
// every process calls it, in the same order, and it ends in a sync (its registrations
// share the order of all others).
#pragma once

#include <algorithm>
#include <functional>
#include <span>
#include <vector>

#include <bsp/coarray.hpp>
#include <bsp/queue.hpp>
#include <bsp/var.hpp>

namespace bsp {

// Every process's value, by rank, on every process.
template <class T>
std::vector<T> gather_all(world& w, const T& value) {
  static_assert(std::is_trivially_copyable_v<T>, "bsp::gather_all<T>: T must be trivially copyable");
  coarray<T> all(w, static_cast<std::size_t>(w.size()));
  for (int t = 0; t < w.size(); ++t) all(t)[static_cast<std::size_t>(w.rank())] = value;
  w.sync();
  return std::vector<T>(all.begin(), all.end());
}

// op(...op(op(v0, v1), v2)..., v(p-1)) on every process.
template <class T, class Op>
T fold(world& w, const T& value, Op op) {
  std::vector<T> all = gather_all(w, value);
  T result = all[0];
  for (std::size_t i = 1; i < all.size(); ++i) result = op(result, all[i]);
  return result;
}
template <class T>
T sum(world& w, const T& value) {
  return fold(w, value, std::plus<T>());
}
template <class T>
T max(world& w, const T& value) {
  return fold(w, value, [](const T& a, const T& b) { return a < b ? b : a; });
}
template <class T>
T min(world& w, const T& value) {
  return fold(w, value, [](const T& a, const T& b) { return b < a ? b : a; });
}

// Inclusive prefix: op over the values of ranks 0..rank.
template <class T, class Op>
T scan(world& w, const T& value, Op op) {
  std::vector<T> all = gather_all(w, value);
  T result = all[0];
  for (int i = 1; i <= w.rank(); ++i) result = op(result, all[static_cast<std::size_t>(i)]);
  return result;
}
// Exclusive prefix: op over the values of ranks 0..rank-1, starting from init (rank 0 gets init).
template <class T, class Op>
T exclusive_scan(world& w, const T& value, Op op, T init) {
  std::vector<T> all = gather_all(w, value);
  for (int i = 0; i < w.rank(); ++i) init = op(init, all[static_cast<std::size_t>(i)]);
  return init;
}

// root's value on every process.
template <class T>
T broadcast(world& w, const T& value, int root = 0) {
  static_assert(std::is_trivially_copyable_v<T>, "bsp::broadcast<T>: T must be trivially copyable");
  var<T> x(w, value);
  if (w.rank() == root) x.broadcast(value);
  w.sync();
  return x.value();
}

// values[t] goes to process t; the result's element s came from process s.
template <class T>
std::vector<T> all_to_all(world& w, std::span<const T> values) {
  static_assert(std::is_trivially_copyable_v<T>, "bsp::all_to_all<T>: T must be trivially copyable");
  if (values.size() != static_cast<std::size_t>(w.size())) {
    detail::fail("bsp::all_to_all by rank %d: %zu values for %d processes", w.rank(), values.size(), w.size());
  }
  coarray<T> in(w, static_cast<std::size_t>(w.size()));
  for (int t = 0; t < w.size(); ++t) in(t)[static_cast<std::size_t>(w.rank())] = values[static_cast<std::size_t>(t)];
  w.sync();
  return std::vector<T>(in.begin(), in.end());
}
template <class T>
std::vector<T> all_to_all(world& w, const std::vector<T>& values) {
  return all_to_all(w, std::span<const T>(values));
}

// Sample sort: sorts the elements of all processes' data together; afterwards process s
// holds a sorted run, every element of which is not less than any of process s - 1's.
// Two supersteps and an h-relation of about the data's size (regular samples: no process
// gets more than about twice its share).
template <class T, class Compare = std::less<T>>
std::vector<T> sort(world& w, std::vector<T> data, Compare less = Compare()) {
  static_assert(std::is_trivially_copyable_v<T>, "bsp::sort<T>: T must be trivially copyable");
  const std::size_t p = static_cast<std::size_t>(w.size());
  std::sort(data.begin(), data.end(), less);
  if (p == 1) return data;
  // p regular samples of each process (fewer elements than p: repeated or none).
  coarray<T> samples(w, p * p);
  coarray<int> counts(w, p);
  std::vector<T> mine;
  for (std::size_t k = 0; k < p && !data.empty(); ++k) mine.push_back(data[k * data.size() / p]);
  int count = static_cast<int>(mine.size());
  std::size_t at = static_cast<std::size_t>(w.rank()) * p;
  for (int t = 0; t < w.size(); ++t) {
    if (count > 0) samples(t)[{at, at + mine.size()}] = std::span<const T>(mine);
    counts(t)[static_cast<std::size_t>(w.rank())] = count;
  }
  w.sync();
  std::vector<T> all;
  for (std::size_t s = 0; s < p; ++s) {
    all.insert(all.end(), samples.data() + s * p, samples.data() + s * p + static_cast<std::size_t>(counts[s]));
  }
  std::sort(all.begin(), all.end(), less);
  // Splitters: p - 1 evenly spaced samples; bucket t gets the elements before splitter t.
  std::vector<T> splitters;
  for (std::size_t k = 1; k < p && !all.empty(); ++k) splitters.push_back(all[k * all.size() / p]);
  queue<std::vector<T>> out(w);
  auto from = data.begin();
  for (std::size_t t = 0; t < p; ++t) {
    auto to = t < splitters.size() ? std::lower_bound(from, data.end(), splitters[t], less) : data.end();
    if (to != from) out(static_cast<int>(t)).send(std::vector<T>(from, to));
    from = to;
  }
  w.sync();
  std::vector<T> result;
  for (const std::vector<T>& run : out) result.insert(result.end(), run.begin(), run.end());
  std::sort(result.begin(), result.end(), less);
  return result;
}

}  // namespace bsp
