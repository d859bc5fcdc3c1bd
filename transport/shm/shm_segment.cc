// transport/shm/shm_segment.cc: creating and opening inboxes (shm_segment.h).
#include "transport/shm/shm_segment.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <utility>

namespace bsp::transport::shm {
namespace {

constexpr std::uint64_t kMagic = 0x31304d4853505342ull;  // "BSPSHM01"
constexpr std::uint32_t kVersion = 1;
constexpr std::size_t kHeaderBytes = 128;
constexpr int kSeals = F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL;

struct Header {
  std::uint64_t magic;
  std::uint32_t version;
  std::uint32_t job_id;
  std::int32_t owner;
  std::int32_t processes;
  std::uint64_t capacity;
  std::uint64_t proof;
  alignas(64) std::atomic<std::uint32_t> sleeping;
};
static_assert(sizeof(Header) <= kHeaderBytes);

std::uint64_t proof_of(const InboxShape& shape, const auth::Key& secret) {
  static constexpr char kPurpose[] = "bsplib shm inbox";
  const std::uint64_t fields[] = {shape.job_id, static_cast<std::uint64_t>(shape.owner),
                                  static_cast<std::uint64_t>(shape.processes), shape.capacity};
  return auth::mac(secret, {std::as_bytes(std::span(kPurpose)), std::as_bytes(std::span(fields))});
}

std::runtime_error failure(const std::string& what) {
  return std::runtime_error(fmt::format("shm transport: {}: {}", what, std::strerror(errno)));
}

}  // namespace

std::size_t inbox_bytes(const InboxShape& shape) {
  return kHeaderBytes + static_cast<std::size_t>(shape.processes) * (kRingControlBytes + shape.capacity);
}

InboxMapping::InboxMapping(InboxMapping&& other) noexcept
    : fd_(std::move(other.fd_)),
      base_(std::exchange(other.base_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      shape_(other.shape_) {}

InboxMapping& InboxMapping::operator=(InboxMapping&& other) noexcept {
  if (this != &other) {
    if (base_) ::munmap(base_, size_);
    fd_ = std::move(other.fd_);
    base_ = std::exchange(other.base_, nullptr);
    size_ = std::exchange(other.size_, 0);
    shape_ = other.shape_;
  }
  return *this;
}

InboxMapping::~InboxMapping() {
  if (base_) ::munmap(base_, size_);
}

InboxMapping InboxMapping::create(const InboxShape& shape, const auth::Key& secret) {
  InboxMapping inbox;
  inbox.shape_ = shape;
  inbox.size_ = inbox_bytes(shape);
  inbox.fd_.reset(::memfd_create("bsplib-shm-inbox", MFD_CLOEXEC | MFD_ALLOW_SEALING));
  if (!inbox.fd_) throw failure("memfd_create");
  // A memory file is made with mode 0777; the peers (the same user) need only the owner's bits.
  if (::fchmod(inbox.fd_.get(), 0600) != 0) throw failure("making the inbox the owner's alone");
  if (::ftruncate(inbox.fd_.get(), static_cast<off_t>(inbox.size_)) != 0) {
    throw failure(fmt::format("sizing the inbox to {} bytes", inbox.size_));
  }
  // Its size is fixed for good: a peer holding it cannot shrink it under the others'
  // mappings (their next access would be SIGBUS).
  if (::fcntl(inbox.fd_.get(), F_ADD_SEALS, kSeals) != 0) throw failure("sealing the inbox's size");
  void* base = ::mmap(nullptr, inbox.size_, PROT_READ | PROT_WRITE, MAP_SHARED, inbox.fd_.get(), 0);
  if (base == MAP_FAILED) throw failure("mapping the inbox");
  inbox.base_ = static_cast<std::byte*>(base);
  auto* header = new (inbox.base_) Header{};
  header->magic = kMagic;
  header->version = kVersion;
  header->job_id = shape.job_id;
  header->owner = shape.owner;
  header->processes = shape.processes;
  header->capacity = shape.capacity;
  header->proof = proof_of(shape, secret);
  return inbox;
}

InboxMapping InboxMapping::open_peer(int os_pid, int fd, const InboxShape& shape, const auth::Key& secret) {
  InboxMapping inbox;
  inbox.shape_ = shape;
  inbox.size_ = inbox_bytes(shape);
  const std::string path = fmt::format("/proc/{}/fd/{}", os_pid, fd);
  inbox.fd_.reset(::open(path.c_str(), O_RDWR | O_CLOEXEC));
  if (!inbox.fd_) throw failure(fmt::format("opening pid {}'s inbox {}", shape.owner, path));
  const int seals = ::fcntl(inbox.fd_.get(), F_GET_SEALS);
  if (seals < 0 || (seals & kSeals) != kSeals) {
    throw std::runtime_error(
        fmt::format("shm transport: {} is not pid {}'s inbox (its size is not sealed)", path, shape.owner));
  }
  struct stat info {};
  if (::fstat(inbox.fd_.get(), &info) != 0 || !S_ISREG(info.st_mode) ||
      static_cast<std::size_t>(info.st_size) != inbox.size_) {
    throw std::runtime_error(fmt::format("shm transport: {} is not pid {}'s inbox (size {}, want {})", path,
                                         shape.owner, info.st_size, inbox.size_));
  }
  void* base = ::mmap(nullptr, inbox.size_, PROT_READ | PROT_WRITE, MAP_SHARED, inbox.fd_.get(), 0);
  if (base == MAP_FAILED) throw failure(fmt::format("mapping pid {}'s inbox", shape.owner));
  inbox.base_ = static_cast<std::byte*>(base);
  Header header_copy;
  std::memcpy(static_cast<void*>(&header_copy), inbox.base_, offsetof(Header, sleeping));
  if (header_copy.magic != kMagic || header_copy.version != kVersion || header_copy.job_id != shape.job_id ||
      header_copy.owner != shape.owner || header_copy.processes != shape.processes ||
      header_copy.capacity != shape.capacity || !auth::same_tag(header_copy.proof, proof_of(shape, secret))) {
    throw std::runtime_error(fmt::format(
        "shm transport: {} is not pid {}'s inbox of this job (its header or proof differs: another job, or a "
        "recycled OS pid)",
        path, shape.owner));
  }
  return inbox;
}

StagingMapping::StagingMapping(StagingMapping&& other) noexcept
    : fd_(std::move(other.fd_)), base_(std::exchange(other.base_, nullptr)), size_(std::exchange(other.size_, 0)) {}

StagingMapping& StagingMapping::operator=(StagingMapping&& other) noexcept {
  if (this != &other) {
    if (base_) ::munmap(base_, size_);
    fd_ = std::move(other.fd_);
    base_ = std::exchange(other.base_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

StagingMapping::~StagingMapping() {
  if (base_) ::munmap(base_, size_);
}

StagingMapping StagingMapping::create(std::size_t bytes) {
  StagingMapping staging;
  staging.size_ = bytes;
  staging.fd_.reset(::memfd_create("bsplib-shm-staging", MFD_CLOEXEC | MFD_ALLOW_SEALING));
  if (!staging.fd_) throw failure("memfd_create (staging)");
  if (::fchmod(staging.fd_.get(), 0600) != 0) throw failure("making the staging area the owner's alone");
  if (::ftruncate(staging.fd_.get(), static_cast<off_t>(bytes)) != 0) throw failure("sizing the staging area");
  if (::fcntl(staging.fd_.get(), F_ADD_SEALS, kSeals) != 0) throw failure("sealing the staging area's size");
  void* base = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, staging.fd_.get(), 0);
  if (base == MAP_FAILED) throw failure("mapping the staging area");
  staging.base_ = static_cast<std::byte*>(base);
  return staging;
}

StagingMapping StagingMapping::open_peer(int os_pid, int fd, int owner, std::size_t bytes) {
  StagingMapping staging;
  staging.size_ = bytes;
  const std::string path = fmt::format("/proc/{}/fd/{}", os_pid, fd);
  staging.fd_.reset(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!staging.fd_) throw failure(fmt::format("opening pid {}'s staging area {}", owner, path));
  const int seals = ::fcntl(staging.fd_.get(), F_GET_SEALS);
  struct stat info {};
  if (seals < 0 || (seals & kSeals) != kSeals || ::fstat(staging.fd_.get(), &info) != 0 ||
      static_cast<std::size_t>(info.st_size) != bytes) {
    throw std::runtime_error(
        fmt::format("shm transport: {} is not pid {}'s staging area (not sealed at {} bytes)", path, owner, bytes));
  }
  void* base = ::mmap(nullptr, bytes, PROT_READ, MAP_SHARED, staging.fd_.get(), 0);
  if (base == MAP_FAILED) throw failure(fmt::format("mapping pid {}'s staging area", owner));
  staging.base_ = static_cast<std::byte*>(base);
  return staging;
}

std::byte* InboxMapping::ring_region(int sender) const {
  return base_ + kHeaderBytes + static_cast<std::size_t>(sender) * (kRingControlBytes + shape_.capacity);
}

std::atomic<std::uint32_t>& InboxMapping::sleeping() const { return reinterpret_cast<Header*>(base_)->sleeping; }

}  // namespace bsp::transport::shm
