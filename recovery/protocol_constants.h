// recovery/protocol_constants.h: every tunable of the reliable protocol (recovery/), named
// and explained in one place (ENet keeps its constants the same way). Times are derived
// from the measured round trip wherever possible: no recovery waits on a fixed 200 ms or
// 1.5 s timer as TCP does (paper 001, section 2.2).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>

#include "recovery/wire.h"
#include "transport/transport.h"

namespace bsp::recovery::tuning {

using namespace std::chrono_literals;

// Shared buffer pool: n MTU-sized buffers for every link, sending and receiving. A frame
// takes a buffer whatever its size, so the count bounds the frames in flight; the memory
// is what this many bytes hold, between kDefaultBuffers and kLargestDefaultPool frames:
// 1024 of 8 KiB on loopback, 4096 of 1500 bytes on Ethernet, where 1024 held a stream
// over the namespace cluster to 75 MB/s and 4096 let it reach 260-300.
inline constexpr std::size_t kDefaultPoolBytes = 8u << 20;
inline constexpr std::size_t kDefaultBuffers = 1024;
inline constexpr std::size_t kLargestDefaultPool = 4096;
// The default pools of one job's processes on a host stay within this (8 MiB each up to
// p = 64, then shrinking), down to the link-window floor below (pool_frames()).
inline constexpr std::size_t kHostPoolBytes = 512u << 20;
// Smallest pool accepted (one buffer per peer is not enough to make progress in bursts).
inline constexpr std::size_t kMinBuffers = 8;
// send() leaves this share of the pool (1/kSendReserveDivisor) to out-of-order arrivals:
// a pool filled with unacknowledged sends would refuse every frame after a loss, and the
// refused frames would be resent again and again (go-back-n by the back door).
inline constexpr std::size_t kSendReserveDivisor = 2;
// A link may hold at most (pool / kLinkWindowDivisor / (p-1)) unacknowledged frames: the
// peer's pool (the same size as ours) can then store everything every sender has in
// flight to it out of order, so a loss in a many-to-one burst does not make the receiver
// refuse (and the senders resend) the frames behind the gap.
// The pool is never smaller than kLinkWindowDivisor * kMinLinkWindow * (p-1) frames, so
// the window this gives is at least kMinLinkWindow and the rule holds at any p (with 4, as
// before, it did not from p = 130 on: 4 frames per link overran the pool).
// (Defined in transport.h, where transports size receive buffers by it: nic's ring on lo.)
inline constexpr std::size_t kLinkWindowDivisor = transport::kLinkWindowDivisor;
inline constexpr std::size_t kMinLinkWindow = 2;
// Out-of-order arrivals are stored only while more than this share of the pool is free
// (1/kReceiveReserveDivisor), so senders are never starved by reordering storage.
inline constexpr std::size_t kReceiveReserveDivisor = 32;

// Data frames further ahead of the expected sequence number than this many link windows
// are refused (a correct sender has at most one window unacknowledged; the slack covers
// peers whose pools differ in size).
inline constexpr std::uint64_t kWindowSlack = 2;
// A probe echo older than this is not a round trip (stale or bogus stamp).
inline constexpr std::chrono::microseconds kLongestRttSample = 10s;

// A wait while the transport still holds frames the kernel refused (a slow link's queue
// is full) lasts at most this long before they are pushed again: about one 1500-byte
// frame's time on 100 Mbit/s Ethernet.
inline constexpr std::chrono::nanoseconds kPendingFlushRetry = 100us;

// Round-trip estimate (RFC 6298 style smoothing) before the first sample arrives.
inline constexpr std::chrono::nanoseconds kInitialRtt = 1ms;
// The retry interval is 2*srtt + 4*rttvar, clamped to [kMinRetry, kMaxRetry] before
// backoff, then doubled per unanswered retry up to kMaxBackoffShift times.
inline constexpr std::chrono::nanoseconds kMinRetry = 200us;
inline constexpr std::chrono::nanoseconds kMaxRetry = 10ms;
inline constexpr int kMaxBackoffShift = 5;  // at most 32x the base interval
// Ceiling of any backed-off interval: a peer that answers late is poked at least this often.
inline constexpr std::chrono::nanoseconds kMaxBackedOff = 40ms;

// A quiet link with unacknowledged frames asks its receiver for an ack (probe with the
// ack-request flag) after this many retry intervals without transmission or ack progress.
inline constexpr int kSenderProbeIntervals = 2;

// A receiver holding frames it has not acknowledged (nobody asked yet) acknowledges them
// with one explicit ack once the link has been quiet this many retry intervals: before
// the sender's quiet-link probe (kSenderProbeIntervals) would ask, so an idle link's last
// frames cost one ack, not a probe and its answer. Not while the engine waits
// for peers (inside a superstep): then the sender holds its unasked frames, see below.
inline constexpr int kIdleAckIntervals = 1;
// While the engine waits for peers, a quiet link whose unacknowledged frames never asked
// for an ack is probed only after this long: every such frame's receiver is waiting for
// it (the superstep needs it) and probes the sender if it is lost, and small link windows
// ask for an ack once half full. Probing after 2 retry intervals instead cost a probe and
// its answer per barrier link and superstep at p >= 64 on 2 cores.
inline constexpr std::chrono::nanoseconds kUnaskedProbeDelay = 250ms;

// Frames handed to the transport per send_batch() call (sendmmsg batch).
inline constexpr std::size_t kSendBatch = 64;
// send() queues; it transmits on its own once this many frames wait (progress() does it
// otherwise), so long bursts go out in batches while the engine is still sending.
inline constexpr std::size_t kAutoTransmit = 64;
// Or once their frames hold this many bytes: large frames then reach the kernel's copy
// while the copy into the pool left them in this core's cache.
inline constexpr std::size_t kAutoTransmitBytes = 128u << 10;
// Frames taken from the transport per receive() call, and calls per progress(). Timers
// (NACK retry, probes) fire only once the transport is drained.
inline constexpr std::size_t kReceiveBatch = 64;
inline constexpr int kReceiveRoundsPerProgress = 32;

// NACK payloads list missing ranges; at most this many per frame (the rest are asked for
// when the first ones are filled, or by the next retry).
inline constexpr std::size_t kMaxRangesPerReport = 128;

// "buffer" policy (paper 001): request an ack when the free buffers would run out within
// one round trip at the current consumption rate, plus this safety margin of buffers.
inline constexpr std::size_t kBufferPolicyMargin = 4;
// Consumption rate is measured over windows of at least this length.
inline constexpr std::chrono::nanoseconds kRateWindow = 200us;

// "pupa" policy (paper 000): per-link share of the pool; the sender enters the
// ack-required state when the link's free share drops below low water and leaves it when
// an ack lifts it above high water (fractions of the share, in percent).
inline constexpr std::size_t kPupaLowWaterPercent = 25;
inline constexpr std::size_t kPupaHighWaterPercent = 50;
// Receiver side of pupa's optimistic flow control: advertised credit is unlimited, zero
// from an overflow until the gap on that link is closed.
inline constexpr std::uint32_t kUnlimitedCredit = wire::kUnlimitedCredit;  // encoded in 16 bits on the wire

}  // namespace bsp::recovery::tuning
