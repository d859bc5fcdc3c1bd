// bsp/coarray.hpp: a distributed array: n elements of T on every process (n may differ
// between processes), registered by the constructor and removed by the destructor like a
// bsp::var. xs[i] is local; xs(t)[i] = v and xs(t)[{a, b}] = span put into process t's
// elements, .get() gets them. Indices are elements, checked at the call against the
// remote array's length (BSP_CPP_CHECKS=0 removes the checks).
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include <bsp/future.hpp>
#include <bsp/world.hpp>

namespace bsp {

// Elements [first, last) of a coarray: xs(t)[{first, last}].
struct slice {
  std::size_t first, last;
};

template <class T>
class coarray {
  static_assert(std::is_trivially_copyable_v<T>,
                "bsp::coarray<T>: T must be trivially copyable (its elements travel as bytes between processes)");

 public:
  // Collective: registers n elements here (value-initialized) and ends the superstep, so
  // that the array may be used at once and every process knows every length.
  coarray(bsp::world& w, std::size_t n) : world_(&w), data_(allocate(n)), size_(n) {
    bsp_push_reg(data_.get(), static_cast<int>(n * sizeof(T)));
    w.sync();
    if constexpr (checks) {
      sizes_.resize(static_cast<std::size_t>(w.size()));
      for (int t = 0; t < w.size(); ++t) {
        long long bytes = bsp_cpp_remote_size(t, data_.get());
        sizes_[static_cast<std::size_t>(t)] = bytes < 0 ? n : static_cast<std::size_t>(bytes) / sizeof(T);
      }
    }
  }
  coarray(bsp::world& w, std::size_t n, const T& fill) : coarray(w, n) { std::fill_n(data_.get(), n, fill); }
  // Collective: removes the registration at the next sync.
  ~coarray() { bsp_pop_reg(data_.get()); }
  coarray(const coarray&) = delete;
  coarray& operator=(const coarray&) = delete;

  std::size_t size() const { return size_; }
  T* data() { return data_.get(); }
  const T* data() const { return data_.get(); }
  T* begin() { return data_.get(); }
  T* end() { return data_.get() + size_; }
  const T* begin() const { return data_.get(); }
  const T* end() const { return data_.get() + size_; }
  T& operator[](std::size_t i) {
    check(i, bsp_pid(), size_, "operator[]");
    return data_[i];
  }
  const T& operator[](std::size_t i) const {
    check(i, bsp_pid(), size_, "operator[]");
    return data_[i];
  }
  bsp::world& world() const { return *world_; }

  // One element of process t's array.
  class element {
   public:
    void operator=(const T& v) const {
      bsp_put(t_, &v, owner_->data_.get(), static_cast<int>(i_ * sizeof(T)), sizeof(T));
    }
    template <class U>
    requires(!std::convertible_to<const U&, const T&>) void operator=(const U&) const {
      static_assert(detail::always_false<U>,
                    "bsp::coarray<T>: the element put must be of the coarray's element type T (or convert to it)");
    }
    future<T> get() const { return future<T>(t_, owner_->data_.get(), i_ * sizeof(T)); }
    // Gets the element into `into` at the end of the superstep, without a future: the
    // caller keeps `into` alive and reads it after the sync.
    void get_into(T& into) const {
      bsp_get(t_, owner_->data_.get(), static_cast<int>(i_ * sizeof(T)), &into, sizeof(T));
    }

   private:
    friend class coarray;
    element(coarray* owner, int t, std::size_t i) : owner_(owner), t_(t), i_(i) {}
    coarray* owner_;
    int t_;
    std::size_t i_;
  };

  // Elements [first, last) of process t's array.
  class range {
   public:
    // Puts values (last - first of them, read now) into the range.
    void operator=(std::span<const T> values) const {
      if constexpr (checks) {
        if (values.size() != r_.last - r_.first) [[unlikely]] {
          detail::fail(
              "bsp::coarray::operator[{a, b}] by rank %d: %zu values put into the %zu elements [%zu, %zu) of "
              "rank %d",
              bsp_pid(), values.size(), r_.last - r_.first, r_.first, r_.last, t_);
        }
      }
      bsp_put(t_, values.data(), owner_->data_.get(), static_cast<int>(r_.first * sizeof(T)),
              static_cast<int>(values.size() * sizeof(T)));
    }
    // As operator=, unbuffered (bsp_hpput): the values are read during the sync, so they
    // must stay unchanged until it ends; large ones are sent from where they lie.
    void put_unbuffered(std::span<const T> values) const {
      if constexpr (checks) {
        if (values.size() != r_.last - r_.first) [[unlikely]] {
          detail::fail(
              "bsp::coarray::operator[{a, b}].put_unbuffered by rank %d: %zu values put into the %zu elements "
              "[%zu, %zu) of rank %d",
              bsp_pid(), values.size(), r_.last - r_.first, r_.first, r_.last, t_);
        }
      }
      bsp_hpput(t_, values.data(), owner_->data_.get(), static_cast<int>(r_.first * sizeof(T)),
                static_cast<int>(values.size() * sizeof(T)));
    }
    template <class R>
    requires(!std::convertible_to<const R&, std::span<const T>>) void operator=(const R&) const {
      static_assert(detail::always_false<R>,
                    "bsp::coarray<T>: a slice put takes a std::span<const T> (or a std::vector<T>, std::array<T, n>) "
                    "of the coarray's own element type T");
    }
    // Gets the range's elements at the end of the superstep.
    future<std::vector<T>> get() const {
      return future<std::vector<T>>(t_, owner_->data_.get(), r_.first * sizeof(T), r_.last - r_.first);
    }

    // Gets the range into `into` (of the range's length) at the end of the superstep.
    void get_into(std::span<T> into) const {
      if constexpr (checks) {
        if (into.size() != r_.last - r_.first) [[unlikely]] {
          detail::fail(
              "bsp::coarray::operator[{a, b}].get_into by rank %d: %zu elements of room for the %zu elements "
              "[%zu, %zu) of rank %d",
              bsp_pid(), into.size(), r_.last - r_.first, r_.first, r_.last, t_);
        }
      }
      bsp_get(t_, owner_->data_.get(), static_cast<int>(r_.first * sizeof(T)), into.data(),
              static_cast<int>(into.size() * sizeof(T)));
    }

   private:
    friend class coarray;
    range(coarray* owner, int t, slice r) : owner_(owner), t_(t), r_(r) {}
    coarray* owner_;
    int t_;
    slice r_;
  };

  // Process t's array.
  class image {
   public:
    element operator[](std::size_t i) const {
      if constexpr (checks) owner_->check(i, t_, owner_->remote_size(t_), "operator[]");
      return element(owner_, t_, i);
    }
    range operator[](slice r) const {
      if constexpr (checks) {
        std::size_t n = owner_->remote_size(t_);
        if (r.first > r.last || r.last > n) [[unlikely]] {
          detail::fail(
              "bsp::coarray::operator[{a, b}] by rank %d: elements [%zu, %zu) of rank %d's coarray of %zu "
              "elements (a <= b <= %zu)",
              bsp_pid(), r.first, r.last, t_, n, n);
        }
      }
      return range(owner_, t_, r);
    }

   private:
    friend class coarray;
    image(coarray* owner, int t) : owner_(owner), t_(t) {}
    coarray* owner_;
    int t_;
  };
  image operator()(int t) {
    if constexpr (checks) {
      if (static_cast<unsigned>(t) >= sizes_.size()) [[unlikely]] {
        detail::fail("bsp::coarray::operator() by rank %d: rank %d is out of range 0..%d", bsp_pid(), t,
                     world_->size() - 1);
      }
    }
    return image(this, t);
  }

 private:
  // n value-initialized elements; BSPlib sizes are ints, so a registration holds at most
  // 2^31 - 1 bytes.
  static T* allocate(std::size_t n) {
    if (n > static_cast<std::size_t>(INT32_MAX) / sizeof(T)) {
      detail::fail("bsp::coarray by rank %d: %zu elements of %zu bytes exceed a registration's 2^31 - 1 bytes",
                   bsp_pid(), n, sizeof(T));
    }
    return new T[n]();
  }
  std::size_t remote_size(int t) const { return sizes_[static_cast<std::size_t>(t)]; }
  void check(std::size_t i, int t, std::size_t n, const char* call) const {
    if constexpr (checks) {
      if (i >= n) [[unlikely]] {
        detail::fail("bsp::coarray::%s by rank %d: element %zu of rank %d's coarray of %zu elements (0..%zu)", call,
                     bsp_pid(), i, t, n, n == 0 ? std::size_t{0} : n - 1);
      }
    }
  }

  bsp::world* world_;
  std::unique_ptr<T[]> data_;
  std::size_t size_;
  std::vector<std::size_t> sizes_;  // every process's length (checks on)
};

}  // namespace bsp
