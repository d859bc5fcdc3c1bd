// transport/shm/shm_transport.h: the `shm` transport: the processes of one host exchange
// frames through shared memory (paper 002's intra-node path). Each process owns an inbox
// (shm_segment.h) with one ring per sender; a frame is copied into the receiver's ring
// for its sender and delivered in place. Reliable and in order (memory does not drop),
// and its links are authenticated at set-up (only processes that know the job's secret
// could have made the inboxes they accept), so frames carry neither MAC nor CRC.
//
// Waiting: the layer above spins on ready() (a load per ring, no system call), then asks
// before_block(): the process raises its inbox's `sleeping` flag and blocks on a pipe;
// a sender that sees the flag writes a byte to it (it opened the pipe's write end
// through /proc at set-up). A process that never sleeps costs its senders nothing.
//
// Pulled transfers (Push-Pull): stage() hands out this process's staging memory (a sealed
// memfd of 512 MiB, its pages allocated when written; halves used in alternate
// supersteps, or the half last staged into again when its readers' read marks say they
// are done: reuse_last()), which the peers map read-only and copy from by token (staged()).
//
// Single copies: where the kernel lets a process read its peers' memory (probed at
// connect: process_vm_readv of a byte of each peer's staging memory), a large hp-put or get
// reply is read by the receiver straight from where it lies in the sender's memory
// (Staging::single_copy_to / read_peer, cross_memory.h); each process raises a read mark in
// its staging memory's last page when it has read what it was told, which the sender
// waits for before that memory may change. Refused (another user, yama), off, or on 4 KiB
// pages (copied by the kernel at a quarter of memcpy's speed here): staging, as above.
// A large bsp_put's source is moved aside instead of copied, and read there by the
// receiver (Staging::move_put_source, moved_sources.h).
//
// Address: "shm:<host key>:<OS pid>:<inbox fd>:<wake fd>:<ring capacity>:<staging fd>:
// <staging bytes>:<staging address, hex>". connect()
// accepts "" for a peer served by another transport (hybrid jobs) and refuses a peer on
// another host, saying to use a hybrid transport.
//
// Options: "shm_ring" (--shm-ring: bytes of each ring, a power of two; default 16 MiB / (p - 1)
// within 64 KiB .. 4 MiB); "shm_single_copy" (huge, any, off), "shm_single_copy_from" and
// "shm_put_move_from" (bytes).
#pragma once

#include <memory>
#include <string>

#include "transport/transport.h"

namespace bsp::transport {

std::unique_ptr<Transport> make_shm_transport(const TransportConfig& config);

// The host key in an shm address ("" when text is not one): processes whose keys are
// equal can share memory (shm/host_identity.h).
std::string shm_address_host(const std::string& text);

}  // namespace bsp::transport
