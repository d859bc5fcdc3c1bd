// bsp/future.hpp: the result of a get (var or coarray): filled at the next sync, read
// with value() after it. Reading it earlier stops the job (with checks on). A future lives
// where it was made (neither copied nor moved: the get writes into it at the sync), so it
// costs no allocation: `auto f = x(t).get();`.
#pragma once

#include <vector>

#include <bsp/detail.hpp>

namespace bsp {

template <class T>
class var;
template <class T>
class coarray;

template <class T>
class future {
 public:
  future(const future&) = delete;
  future& operator=(const future&) = delete;
  // Reading the get's result as another type is a compile-time error.
  template <class U>
  requires(!std::is_same_v<U, T>) future(future<U>&&) {
    static_assert(detail::always_false<U>,
                  "bsp::future<T>: this get() returns a bsp::future of the variable's own type; read it as that "
                  "type (auto f = x(t).get()), not as another one");
  }

  // The value got; valid once the sync that ends the get's superstep has returned.
  const T& value() const {
    if constexpr (checks) {
      if (bsp_cpp_superstep() <= posted_in_) [[unlikely]] {
        detail::fail(
            "bsp::future::value by rank %d: read before the sync that completes its get (posted in "
            "superstep %ld, which has not ended); call world.sync() first",
            bsp_pid(), posted_in_);
      }
    }
    return value_;
  }
  T& value() { return const_cast<T&>(static_cast<const future&>(*this).value()); }

 private:
  friend class var<std::remove_cv_t<T>>;
  template <class>
  friend class coarray;
  // Gets sizeof(T) bytes from pid's registration src at byte offset.
  future(int pid, const void* src, std::size_t offset) : posted_in_(bsp_cpp_superstep()) {
    bsp_get(pid, src, static_cast<int>(offset), &value_, sizeof(T));
  }
  // T a std::vector: gets n elements.
  future(int pid, const void* src, std::size_t offset, std::size_t n) : value_(n), posted_in_(bsp_cpp_superstep()) {
    bsp_get(pid, src, static_cast<int>(offset), value_.data(), static_cast<int>(n * sizeof(typename T::value_type)));
  }

  T value_{};
  long posted_in_;
};

}  // namespace bsp
