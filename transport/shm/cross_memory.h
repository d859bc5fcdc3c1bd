// transport/shm/cross_memory.h: single-copy transfers between the processes of one host.
// A receiver copies straight out of a peer's memory with process_vm_readv (one copy
// instead of two through staging memory). The kernel allows it only where ptrace would be
// (same user, yama's rules): probed once per peer. And the kernel pins the peer's pages
// one by one: on the machine measured (docs/figures.md) a range on 4 KiB pages copies at
// a quarter of memcpy's speed, one on 2 MiB (transparent huge) pages at memcpy's, so the
// owner of the memory asks how much of a range lies on huge pages before offering it, and
// may move it there first (huge_page_sources.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace bsp::transport::shm {

// Under yama's ptrace_scope 1 a process may read only its descendants' memory, unless the
// target names a ptracer: this names the launcher (the parent), whose descendants (the
// job's other processes) may then read this one. Nothing happens without yama.
void let_siblings_read();

// Copies size bytes at `address` in OS process os_pid into `into`. "" on success, else
// why not (the system call's error; a short copy is an error).
std::string read_from(int os_pid, std::uint64_t address, void* into, std::size_t size);

// How many bytes of [address, address + size) of this process lie on huge pages (the
// kernel's PAGEMAP_SCAN); 0 when it cannot tell (an older kernel).
std::size_t huge_page_bytes(const void* address, std::size_t size);
// Whether huge_page_bytes can tell (PAGEMAP_SCAN works here).
bool can_count_huge_pages();

// The bytes of [address, address + size) in whole 2 MiB huge pages' ranges: what
// collapse_to_huge_pages can put on huge pages.
std::size_t huge_page_interior(const void* address, std::size_t size);

// Asks the kernel to move the whole 2 MiB ranges inside [address, address + size) of this
// process onto huge pages now (MADV_COLLAPSE, Linux 6.1: it copies them, contents kept).
// 0 when it did, else the errno saying why not (EINVAL: memory advised MADV_NOHUGEPAGE or
// a kernel without it, or no whole huge page inside; ENOMEM: no huge page to be had;
// EAGAIN: a page was busy, e.g. pinned by a peer's read at that moment).
int collapse_to_huge_pages(const void* address, std::size_t size);

}  // namespace bsp::transport::shm
