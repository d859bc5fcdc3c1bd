// nas/common/huge_buffer.h: an array of trivially copyable elements on transparent huge
// pages where the kernel offers them (anonymous memory, 2 MiB aligned, MADV_HUGEPAGE).
// A bsp_hpput's source on huge pages lets shm's receiver read it straight from this
// process (one copy; the transport offers that only for memory on huge pages, where the
// kernel's cross-process copy runs at memcpy's speed). Zero-filled, like a new mapping.
#pragma once

#include <sys/mman.h>

#include <cstddef>
#include <cstdint>
#include <new>
#include <type_traits>
#include <utility>

namespace nas {

template <typename T>
class HugeBuffer {
  static_assert(std::is_trivially_copyable_v<T>);

 public:
  HugeBuffer() = default;
  explicit HugeBuffer(std::size_t count) : count_(count) {
    constexpr std::size_t kHuge = std::size_t(2) << 20;
    bytes_ = (count * sizeof(T) + kHuge - 1) / kHuge * kHuge;
    if (bytes_ == 0) return;
    // Map one huge page more than needed, then trim to a 2 MiB aligned range.
    void* mapped = ::mmap(nullptr, bytes_ + kHuge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mapped == MAP_FAILED) throw std::bad_alloc();
    auto start = reinterpret_cast<std::uintptr_t>(mapped);
    auto aligned = (start + kHuge - 1) / kHuge * kHuge;
    if (aligned > start) ::munmap(mapped, aligned - start);
    ::munmap(reinterpret_cast<void*>(aligned + bytes_), start + kHuge - aligned);  // never empty
    data_ = reinterpret_cast<T*>(aligned);
    ::madvise(data_, bytes_, MADV_HUGEPAGE);  // a hint: without THP the pages stay 4 KiB
  }
  HugeBuffer(HugeBuffer&& other) noexcept { swap(other); }
  HugeBuffer& operator=(HugeBuffer&& other) noexcept {
    HugeBuffer(std::move(other)).swap(*this);
    return *this;
  }
  HugeBuffer(const HugeBuffer&) = delete;
  HugeBuffer& operator=(const HugeBuffer&) = delete;
  ~HugeBuffer() {
    if (data_ != nullptr) ::munmap(data_, bytes_);
  }

  T* data() { return data_; }
  const T* data() const { return data_; }
  std::size_t size() const { return count_; }

 private:
  void swap(HugeBuffer& other) noexcept {
    std::swap(data_, other.data_);
    std::swap(count_, other.count_);
    std::swap(bytes_, other.bytes_);
  }

  T* data_ = nullptr;
  std::size_t count_ = 0;
  std::size_t bytes_ = 0;
};

}  // namespace nas
