// bsp/queue.hpp: typed message queues. bsp::queue<Ts...> q(world); q(t).send(a, b, ...)
// sends a message to process t; in the next superstep `for (auto [a, b] : q)` reads the
// messages that arrived (a queue of one type yields its values themselves). Every queue is
// its own message stream (the engine's queue_message records, by queue number), apart
// from bsp_send / bsp_move and from bsp_set_tagsize. Components are trivially copyable
// types, or std::vector / std::basic_string of them (sent with their length). Sending
// copies the components from where they lie into the record stream: no allocation.
#pragma once

#include <array>
#include <concepts>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <string>
#include <tuple>
#include <vector>

#include <bsp/world.hpp>

namespace bsp {

namespace detail {

template <class T>
struct sequence_of {
  static constexpr bool value = false;
};
template <class U, class A>
struct sequence_of<std::vector<U, A>> {
  static constexpr bool value = true;
  using element = U;
};
template <class C, class Tr, class A>
struct sequence_of<std::basic_string<C, Tr, A>> {
  static constexpr bool value = true;
  using element = C;
};

template <class T>
constexpr bool queue_component() {
  if constexpr (sequence_of<T>::value) {
    return std::is_trivially_copyable_v<typename sequence_of<T>::element>;
  } else {
    return std::is_trivially_copyable_v<T>;
  }
}

// Appends the pieces of one component: itself, or its length and its elements.
template <class T>
void add_pieces(const T& value, bsp_cpp_piece*& piece, std::uint32_t*& length) {
  if constexpr (sequence_of<T>::value) {
    *length = static_cast<std::uint32_t>(value.size());
    *piece++ = {length++, sizeof(std::uint32_t)};
    *piece++ = {value.data(), value.size() * sizeof(typename sequence_of<T>::element)};
  } else {
    *piece++ = {&value, sizeof(T)};
  }
}

// Reads one component from [at, end); false if the message is too short.
template <class T>
bool read_component(const char*& at, const char* end, T& value) {
  if constexpr (sequence_of<T>::value) {
    std::uint32_t n;
    if (end - at < 4) return false;
    std::memcpy(&n, at, 4);
    at += 4;
    using E = typename sequence_of<T>::element;
    if (static_cast<std::size_t>(end - at) / sizeof(E) < n) return false;
    value.resize(n);
    if (n) std::memcpy(value.data(), at, n * sizeof(E));
    at += n * sizeof(E);
  } else {
    if (static_cast<std::size_t>(end - at) < sizeof(T)) return false;
    std::memcpy(&value, at, sizeof(T));
    at += sizeof(T);
  }
  return true;
}

}  // namespace detail

template <class... Ts>
class queue {
  static_assert(sizeof...(Ts) > 0, "bsp::queue<Ts...>: name the types of a message's components");
  static_assert((detail::queue_component<Ts>() && ...),
                "bsp::queue<Ts...>: every component must be trivially copyable, or a std::vector or std::string of "
                "trivially copyable elements");
  static constexpr std::size_t kSequences = (std::size_t{detail::sequence_of<Ts>::value} + ... + 0);

 public:
  // A message as iteration yields it: the value itself for a queue of one type.
  using message = std::conditional_t<sizeof...(Ts) == 1, std::tuple_element_t<0, std::tuple<Ts...>>, std::tuple<Ts...>>;

  // Collective (no communication): queues are numbered in the order they are made, so
  // every process must make its queues in the same order.
  explicit queue(bsp::world& w) : world_(&w), number_(detail::take_queue_number()) {}
  ~queue() { detail::free_queue_number(number_); }
  queue(const queue&) = delete;
  queue& operator=(const queue&) = delete;

  // The queue on process t.
  class sender {
   public:
    // Sends one message; its components are read now.
    void send(const Ts&... values) const {
      std::array<bsp_cpp_piece, sizeof...(Ts) + kSequences> pieces;
      std::array<std::uint32_t, kSequences + 1> lengths;
      bsp_cpp_piece* piece = pieces.data();
      std::uint32_t* length = lengths.data();
      (detail::add_pieces<Ts>(values, piece, length), ...);
      bsp_cpp_queue_send(t_, number_, pieces.data(), pieces.size());
    }

    template <class... Us>
    requires(sizeof...(Us) != sizeof...(Ts) ||
             !(std::convertible_to<const Us&, const Ts&> && ...)) void send(const Us&...) const {
      static_assert(detail::always_false<Us...>,
                    "bsp::queue<Ts...>: send takes one value per component, each of its component's type (or "
                    "converting to it)");
    }

   private:
    friend class queue;
    sender(int t, unsigned number) : t_(t), number_(number) {}
    int t_;
    unsigned number_;
  };
  sender operator()(int t) const { return sender(t, number_); }

  // The messages the last sync delivered (valid until the next one), in no set order
  // between senders, in sending order from each. Read them as often as you like.
  std::size_t size() const { return bsp_cpp_queue_size(number_); }
  bool empty() const { return size() == 0; }
  message operator[](std::size_t i) const {
    std::size_t n = 0;
    const char* at = static_cast<const char*>(bsp_cpp_queue_message(number_, i, &n));
    return decode(at, n, i);
  }

  // Iterates over the inbox as it is when begin() is called (one library call; then
  // every message is decoded inline from where it lies).
  class iterator {
   public:
    using value_type = message;
    using difference_type = std::ptrdiff_t;
    iterator() = default;
    message operator*() const {
      return decode(bytes_ + entry_->payload_at, entry_->payload_size, static_cast<std::size_t>(entry_ - first_));
    }
    iterator& operator++() {
      ++entry_;
      return *this;
    }
    iterator operator++(int) {
      iterator before = *this;
      ++entry_;
      return before;
    }
    bool operator==(const iterator& other) const { return entry_ == other.entry_; }

   private:
    friend class queue;
    iterator(const char* bytes, const bsp_cpp_message_entry* first, const bsp_cpp_message_entry* entry)
        : bytes_(bytes), first_(first), entry_(entry) {}
    const char* bytes_ = nullptr;
    const bsp_cpp_message_entry* first_ = nullptr;
    const bsp_cpp_message_entry* entry_ = nullptr;
  };
  iterator begin() const {
    const char* bytes = nullptr;
    std::size_t count = 0;
    const bsp_cpp_message_entry* first = bsp_cpp_queue_view(number_, &bytes, &count);
    return iterator(bytes, first, first);
  }
  iterator end() const {
    const char* bytes = nullptr;
    std::size_t count = 0;
    const bsp_cpp_message_entry* first = bsp_cpp_queue_view(number_, &bytes, &count);
    return iterator(bytes, first, first + count);
  }

  bsp::world& world() const { return *world_; }

 private:
  static message decode(const char* at, std::size_t n, std::size_t index) {
    const char* end = at + n;
    std::tuple<Ts...> values;
    bool complete = std::apply([&](Ts&... v) { return (detail::read_component<Ts>(at, end, v) && ...); }, values);
    if (!complete || at != end) [[unlikely]] {
      detail::fail(
          "bsp::queue by rank %d: message %zu has %zu bytes, which do not hold the queue's types (every "
          "process must make its queues in the same order)",
          bsp_pid(), index, n);
    }
    if constexpr (sizeof...(Ts) == 1) {
      return std::move(std::get<0>(values));
    } else {
      return values;
    }
  }

  bsp::world* world_;
  unsigned number_;
};

}  // namespace bsp
