// bsp/var.hpp: a distributed variable: one T on every process, registered for remote
// access by the constructor and removed by the destructor (collective, matched by order
// with every other registration, C calls' included). x.value() and x = v are local; x(t) = v
// puts to process t, x(t).get() gets from it (a bsp::future).
#pragma once

#include <concepts>

#include <bsp/future.hpp>
#include <bsp/world.hpp>

namespace bsp {

template <class T>
class var {
  static_assert(std::is_trivially_copyable_v<T>,
                "bsp::var<T>: T must be trivially copyable (it travels as bytes between processes); for "
                "std::string, std::vector and the like use a bsp::queue");

 public:
  // Collective: registers the variable (bsp_push_reg) and ends the superstep, so it may be
  // used at once.
  explicit var(bsp::world& w, const T& initial = T{}) : world_(&w), value_(initial) {
    bsp_push_reg(&value_, sizeof(T));
    w.sync();
  }
  // Collective: removes the registration (bsp_pop_reg), in effect at the next sync; a
  // var destroyed on some processes and not on others stops the job at that sync.
  ~var() { bsp_pop_reg(&value_); }
  var(const var&) = delete;
  var& operator=(const var&) = delete;

  T& value() { return value_; }
  const T& value() const { return value_; }
  operator T&() { return value_; }
  operator const T&() const { return value_; }
  var& operator=(const T& v) {
    value_ = v;
    return *this;
  }
  bsp::world& world() const { return *world_; }

  // The variable on process t.
  class image {
   public:
    // Puts v into it at the end of the superstep (v is read now).
    void operator=(const T& v) const { bsp_put(t_, &v, &owner_->value_, 0, sizeof(T)); }
    template <class U>
    requires(!std::convertible_to<const U&, const T&>) void operator=(const U&) const {
      static_assert(detail::always_false<U>,
                    "bsp::var<T>: the value put must be of the variable's type T (or convert to it)");
    }
    // Gets its value at the end of the superstep.
    future<T> get() const { return future<T>(t_, &owner_->value_, 0); }

   private:
    friend class var;
    image(var* owner, int t) : owner_(owner), t_(t) {}
    var* owner_;
    int t_;
  };
  image operator()(int t) { return image(this, t); }

  // Puts v into this variable on every process (a one-to-all from here).
  void broadcast(const T& v) {
    for (int t = 0; t < world_->size(); ++t) bsp_put(t, &v, &value_, 0, sizeof(T));
  }

 private:
  bsp::world* world_;
  T value_;
};

}  // namespace bsp
