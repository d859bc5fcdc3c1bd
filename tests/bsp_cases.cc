// tests/bsp_cases.cc: BSPlib programs that check the standard's semantics, one per case,
// chosen with --case=NAME; run under bsprun by tests/semantics_test.cc on every transport
// and several process counts. A failed check stops the job through bsp_abort with the
// file and line, so the driver sees a non-zero exit and the message.
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "bsplib/bsp.h"
#include "bsplib/bsp_stats.h"

#define CHECK(condition)                                                                                          \
  do {                                                                                                            \
    if (!(condition)) bsp_abort("CHECK failed on pid %d: %s (%s:%d)", bsp_pid(), #condition, __FILE__, __LINE__); \
  } while (0)

namespace {

int available_before_begin = 0;  // bsp_nprocs() before bsp_begin

int p() { return bsp_nprocs(); }
int me() { return bsp_pid(); }

// Every process puts its pid into slot [pid] of everyone's array.
void put_all_to_all() {
  std::vector<int> slots(p(), -1);
  bsp_push_reg(slots.data(), p() * sizeof(int));
  bsp_sync();
  int mine = me() * 10 + 1;
  for (int dst = 0; dst < p(); ++dst) bsp_put(dst, &mine, slots.data(), me() * sizeof(int), sizeof(int));
  CHECK(slots[me()] == -1);  // nothing lands before the sync
  bsp_sync();
  for (int src = 0; src < p(); ++src) CHECK(slots[src] == src * 10 + 1);
  bsp_pop_reg(slots.data());
  bsp_sync();
}

// A get in the same superstep as a put to the same place reads the old value.
void get_before_put() {
  int value = 100 + me();
  bsp_push_reg(&value, sizeof value);
  bsp_sync();
  int right = (me() + 1) % p();
  int got = -1;
  int fresh = 500 + me();
  bsp_get(right, &value, 0, &got, sizeof got);
  bsp_put(right, &fresh, &value, 0, sizeof fresh);
  bsp_sync();
  CHECK(got == 100 + right);
  int left = (me() + p() - 1) % p();
  CHECK(value == 500 + left);
  bsp_pop_reg(&value);
  bsp_sync();
}

// Several puts to one place land in some sequential order: from one process, the last
// call wins; from many, the result is one of the values written.
void overlapping_puts() {
  int target = -1;
  int pair[2] = {-1, -1};
  bsp_push_reg(&target, sizeof target);
  bsp_push_reg(pair, sizeof pair);
  bsp_sync();
  for (int k = 0; k < 5; ++k) {
    int v = me() * 100 + k;
    bsp_put(0, &v, &target, 0, sizeof v);
  }
  // Overlapping ranges from one process: [a b] then [c] at offset 4.
  int ab[2] = {1, 2};
  int c = 3;
  bsp_put((me() + 1) % p(), ab, pair, 0, sizeof ab);
  bsp_put((me() + 1) % p(), &c, pair, sizeof(int), sizeof c);
  bsp_sync();
  if (me() == 0) {
    bool one_of_them = false;
    for (int src = 0; src < p(); ++src) one_of_them |= target == src * 100 + 4;
    CHECK(one_of_them);
  }
  CHECK(pair[0] == 1 && pair[1] == 3);
  bsp_pop_reg(pair);
  bsp_pop_reg(&target);
  bsp_sync();
}

// bsp_put copies its source at the call: changing it afterwards changes nothing.
void put_copies_source() {
  std::vector<char> area(64, 0);
  bsp_push_reg(area.data(), area.size());
  bsp_sync();
  char buffer[64];
  std::memset(buffer, 'a' + me() % 26, sizeof buffer);
  bsp_put((me() + 1) % p(), buffer, area.data(), 0, sizeof buffer);
  std::memset(buffer, '!', sizeof buffer);
  bsp_sync();
  int left = (me() + p() - 1) % p();
  for (char ch : area) CHECK(ch == 'a' + left % 26);
  bsp_pop_reg(area.data());
  bsp_sync();
}

// Unbuffered variants: hpput's source and hpget's destination are used up to the sync.
void hp_variants() {
  std::vector<double> field(8, -1.0);
  bsp_push_reg(field.data(), field.size() * sizeof(double));
  bsp_sync();
  std::vector<double> source(8);
  for (int i = 0; i < 8; ++i) source[i] = me() * 1000 + i;
  bsp_hpput((me() + 1) % p(), source.data(), field.data(), 0, 8 * sizeof(double));
  bsp_sync();
  int left = (me() + p() - 1) % p();
  for (int i = 0; i < 8; ++i) CHECK(field[i] == left * 1000 + i);
  double fetched[4] = {0, 0, 0, 0};
  bsp_hpget(left, field.data(), 2 * sizeof(double), fetched, 4 * sizeof(double));
  bsp_sync();
  int left2 = (me() + 2 * p() - 2) % p();
  for (int i = 0; i < 4; ++i) CHECK(fetched[i] == left2 * 1000 + 2 + i);
  bsp_pop_reg(field.data());
  bsp_sync();
}

// Registration: matched by order, effective at the next sync, pop removes the most
// recent registration of an address, NULL / size-0 registrations allowed, sizes may differ.
void registration_order_and_pop() {
  int a[4] = {0, 0, 0, 0};
  int b[4] = {0, 0, 0, 0};
  // With 3 or more processes the last one contributes nothing to the first registration
  // (NULL, 0): it cannot be a target, and it never names `a` itself.
  const bool contributes_a = !(p() >= 3 && me() == p() - 1);
  const void* a_ident = contributes_a ? a : nullptr;
  bsp_push_reg(a_ident, contributes_a ? sizeof a : 0);
  bsp_push_reg(b, sizeof b);
  bsp_push_reg(b, 2 * sizeof(int));  // b again: the most recent registration is this one
  bsp_sync();
  int v = 7;
  if (p() > 1 && me() == 0) bsp_put(1, &v, a, 3 * sizeof(int), sizeof v);
  bsp_put((me() + 1) % p(), &v, b, sizeof(int), sizeof v);
  bsp_sync();
  if (p() > 1 && me() == 1) CHECK(a[3] == 7);
  CHECK(b[1] == 7);
  bsp_pop_reg(b);  // removes the 2-int registration; the 4-int one is in effect again
  bsp_sync();
  int w = 9;
  bsp_put((me() + 1) % p(), &w, b, 3 * sizeof(int), sizeof w);
  bsp_sync();
  CHECK(b[3] == 9);
  bsp_pop_reg(b);
  bsp_pop_reg(a_ident);
  bsp_sync();
}

// Tag size: set now, in effect from the next sync; the call returns the previous size.
void tagsize_states() {
  int size = 8;
  bsp_set_tagsize(&size);
  CHECK(size == 0);
  std::int64_t tag = 0x1122334455667788LL + me();
  int payload = me();
  // Still tag size 0 in this superstep.
  bsp_send((me() + 1) % p(), &tag, &payload, sizeof payload);
  bsp_sync();
  int left = (me() + p() - 1) % p();
  int status = -2;
  std::int64_t got_tag = 0;
  bsp_get_tag(&status, &got_tag);
  CHECK(status == sizeof(int));
  CHECK(got_tag == 0);  // zero-byte tag: nothing copied
  int got = -1;
  bsp_move(&got, sizeof got);
  CHECK(got == left);
  // Now the tag size is 8.
  bsp_send((me() + 1) % p(), &tag, &payload, sizeof payload);
  int again = 4;
  bsp_set_tagsize(&again);
  CHECK(again == 8);
  bsp_sync();
  bsp_get_tag(&status, &got_tag);
  CHECK(status == sizeof(int));
  CHECK(got_tag == 0x1122334455667788LL + left);
  bsp_move(&got, sizeof got);
  // Tag size 4 now.
  std::int32_t small_tag = 40 + me();
  bsp_send((me() + 1) % p(), &small_tag, nullptr, 0);
  bsp_sync();
  std::int32_t got_small = 0;
  bsp_get_tag(&status, &got_small);
  CHECK(status == 0);
  CHECK(got_small == 40 + left);
  bsp_move(nullptr, 0);
  bsp_get_tag(&status, &got_small);
  CHECK(status == -1);
  int zero = 0;
  bsp_set_tagsize(&zero);
  bsp_sync();
}

// BSMP: messages arrive next superstep, in any order; qsize, get_tag, move, hpmove;
// empty and zero-length messages; unmoved messages are gone after the following sync.
void bsmp_all_to_all() {
  int tag_size = sizeof(int);
  bsp_set_tagsize(&tag_size);
  bsp_sync();
  for (int dst = 0; dst < p(); ++dst) {
    for (int k = 0; k <= dst % 3; ++k) {
      int tag = me();
      std::vector<int> payload(k + me(), dst);
      bsp_send(dst, &tag, payload.data(), payload.size() * sizeof(int));
    }
  }
  int n = -1, bytes = -1;
  bsp_qsize(&n, &bytes);
  CHECK(n == 0 && bytes == 0);
  bsp_sync();
  int expected_n = 0, expected_bytes = 0;
  for (int src = 0; src < p(); ++src) {
    for (int k = 0; k <= me() % 3; ++k) {
      ++expected_n;
      expected_bytes += (k + src) * sizeof(int);
    }
  }
  bsp_qsize(&n, &bytes);
  CHECK(n == expected_n && bytes == expected_bytes);
  std::vector<int> seen(p(), 0);
  for (int i = 0; i < expected_n; ++i) {
    int status = -2, tag = -1;
    bsp_get_tag(&status, &tag);
    CHECK(status >= 0 && tag >= 0 && tag < p());
    if (i % 2 == 0) {
      std::vector<int> payload(status / sizeof(int) + 1, -1);
      bsp_move(payload.data(), status);
      for (int j = 0; j < status / (int)sizeof(int); ++j) CHECK(payload[j] == me());
    } else {
      void* tag_ptr = nullptr;
      void* payload_ptr = nullptr;
      int size = bsp_hpmove(&tag_ptr, &payload_ptr);
      CHECK(size == status);
      CHECK(*static_cast<int*>(tag_ptr) == tag);
      for (int j = 0; j < size / (int)sizeof(int); ++j) CHECK(static_cast<int*>(payload_ptr)[j] == me());
    }
    ++seen[tag];
  }
  for (int src = 0; src < p(); ++src) CHECK(seen[src] == me() % 3 + 1);
  int status = 0;
  bsp_get_tag(&status, nullptr);
  CHECK(status == -1);
  void *t, *q;
  CHECK(bsp_hpmove(&t, &q) == -1);
  // Unmoved messages do not survive the next sync.
  int tag = 1;
  bsp_send(me(), &tag, nullptr, 0);
  bsp_sync();
  bsp_qsize(&n, &bytes);
  CHECK(n == 1 && bytes == 0);
  bsp_sync();
  bsp_qsize(&n, &bytes);
  CHECK(n == 0);
}

// Many supersteps in a row: a token ring with a put and a message each step.
void many_supersteps() {
  long token = 0;
  bsp_push_reg(&token, sizeof token);
  bsp_sync();
  const int steps = 2000;
  for (int step = 1; step <= steps; ++step) {
    long next = token + 1;
    bsp_put((me() + 1) % p(), &next, &token, 0, sizeof next);
    bsp_sync();
    CHECK(token == step);
  }
  bsp_pop_reg(&token);
  bsp_sync();
}

// Supersteps that fit a shared cache line (nothing, a small put, a small message, a
// staged put's token) mixed with ones that take frames (a larger put, a get, a tag size
// change, registrations), in an order that differs between processes, so one process's
// frames of the next superstep often arrive while its peer still reads this one's line.
void lines_and_frames() {
  constexpr int kWords = 256;
  std::vector<int> area(kWords, 0), got(kWords, 0);
  int small = -1;
  bsp_push_reg(area.data(), kWords * sizeof(int));
  bsp_push_reg(&small, sizeof small);
  bsp_sync();
  const int right = (me() + 1) % p(), left = (me() + p() - 1) % p();
  std::vector<int> source(kWords);
  // The left neighbour's area[0] as its own left neighbour's puts left it (what a get reads).
  const int left2 = (me() + 2 * p() - 2) % p();
  int left_area0 = 0;
  for (int step = 0; step < 600; ++step) {
    const int kind = (step + (step / 7) * me()) % 6;  // each process its own order of kinds
    const int stamp = step * 1000 + me();
    switch (kind) {
      case 0:  // nothing
        break;
      case 1:  // 4 bytes
        bsp_put(right, &stamp, &small, 0, sizeof stamp);
        break;
      case 2:  // a message (tag size 0)
        bsp_send(right, nullptr, &stamp, sizeof stamp);
        break;
      case 3:  // 1 KiB: staged (a token in the line) or pushed, by --pull-threshold
        for (int i = 0; i < kWords; ++i) source[i] = stamp + i;
        bsp_put(right, source.data(), area.data(), 0, kWords * sizeof(int));
        break;
      case 4:  // a get: frames (its reply follows the end)
        bsp_get(left, area.data(), 0, got.data(), 8 * sizeof(int));
        break;
      case 5:  // 100 bytes: a record too large for a line
        for (int i = 0; i < 25; ++i) source[i] = -stamp - i;
        bsp_put(right, source.data(), area.data(), 0, 25 * sizeof(int));
        break;
    }
    // What the left neighbour did in this step, as its kind says.
    const int left_kind = (step + (step / 7) * left) % 6, left_stamp = step * 1000 + left;
    bsp_sync();
    if (left_kind == 1) CHECK(small == left_stamp);
    int messages = -1;
    bsp_qsize(&messages, nullptr);
    CHECK(messages == (left_kind == 2 ? 1 : 0));
    if (left_kind == 2) {
      int value = -1;
      bsp_move(&value, sizeof value);
      CHECK(value == left_stamp);
    }
    if (left_kind == 3) CHECK(area[0] == left_stamp && area[kWords - 1] == left_stamp + kWords - 1);
    if (left_kind == 5) CHECK(area[0] == -left_stamp && area[24] == -left_stamp - 24);
    if (kind == 4) CHECK(got[0] == left_area0);  // before this step's puts landed
    const int left2_kind = (step + (step / 7) * left2) % 6, left2_stamp = step * 1000 + left2;
    if (left2_kind == 3) left_area0 = left2_stamp;
    if (left2_kind == 5) left_area0 = -left2_stamp;
  }
  bsp_pop_reg(&small);
  bsp_pop_reg(area.data());
  bsp_sync();
}

// Syncs with no communication at all.
// Small supersteps to every peer at once, each pair its own kind each step: nothing, a
// 4-byte put, a 4-byte message (each fits a superstep line), a 48-byte put (a record
// too large for a line), or a 4-byte put, a message and a 24-byte put together (each
// fits, together they overflow the line). In a hybrid job a process so writes lines to
// some peers and frames to others in the same superstep.
void small_supersteps_to_every_peer() {
  constexpr int kWords = 16;  // per source: [0] the small put, [4..15] the 48-byte one, [8..13] the 24-byte one
  std::vector<int> slots(static_cast<std::size_t>(kWords * p()), -1);
  bsp_push_reg(slots.data(), static_cast<int>(slots.size() * sizeof(int)));
  bsp_sync();
  auto kind_of = [](int step, int src, int dst) { return (step + 3 * src + 5 * dst + (step / 5) * src) % 5; };
  std::vector<int> words(12);
  for (int step = 0; step < 300; ++step) {
    const int stamp = step * 1000 + me();
    for (int dst = 0; dst < p(); ++dst) {
      if (dst == me()) continue;
      const long mine = static_cast<long>(kWords * me()) * static_cast<long>(sizeof(int));
      const int kind = kind_of(step, me(), dst);
      if (kind == 1 || kind == 4) bsp_put(dst, &stamp, slots.data(), mine, sizeof stamp);
      if (kind == 2 || kind == 4) bsp_send(dst, nullptr, &stamp, sizeof stamp);
      if (kind == 3) {
        for (int i = 0; i < 12; ++i) words[static_cast<std::size_t>(i)] = stamp + i;
        bsp_put(dst, words.data(), slots.data(), mine + 4 * sizeof(int), 12 * sizeof(int));
      }
      if (kind == 4) {
        for (int i = 0; i < 6; ++i) words[static_cast<std::size_t>(i)] = -stamp - i;
        bsp_put(dst, words.data(), slots.data(), mine + 8 * sizeof(int), 6 * sizeof(int));
      }
    }
    bsp_sync();
    int expected = 0;
    std::vector<int> messages_from(static_cast<std::size_t>(p()), 0);
    for (int src = 0; src < p(); ++src) {
      if (src == me()) continue;
      const int kind = kind_of(step, src, me()), sent = step * 1000 + src;
      const int* from = &slots[static_cast<std::size_t>(kWords * src)];
      if (kind == 1 || kind == 4) CHECK(from[0] == sent);
      if (kind == 3) CHECK(from[4] == sent && from[15] == sent + 11);
      if (kind == 4) CHECK(from[8] == -sent && from[13] == -sent - 5);
      if (kind == 2 || kind == 4) ++expected;
    }
    int count = -1;
    bsp_qsize(&count, nullptr);
    CHECK(count == expected);
    for (int i = 0; i < count; ++i) {
      int status = -1, value = -1, no_tag = 0;
      bsp_get_tag(&status, &no_tag);
      CHECK(status == sizeof value);
      bsp_move(&value, sizeof value);
      const int src = value % 1000;
      CHECK(value / 1000 == step && src >= 0 && src < p() && src != me());
      const int kind = kind_of(step, src, me());
      CHECK(kind == 2 || kind == 4);
      CHECK(++messages_from[static_cast<std::size_t>(src)] == 1);
    }
  }
  bsp_pop_reg(slots.data());
  bsp_sync();
}

void empty_supersteps() {
  for (int i = 0; i < 500; ++i) bsp_sync();
  int n = -1;
  bsp_qsize(&n, nullptr);
  CHECK(n == 0);
}

// Runs of supersteps in which nobody sends anything (quiet: each process waits only for
// its peers' empty lines), broken by a process that sends alone (a small put in its
// line, a large put in frames or pulled, a message), by one that computes while the
// others wait (their looks run out), and by collective changes (tag size, registrations)
// in otherwise empty supersteps; messages left unmoved are gone after a quiet superstep.
void quiet_and_busy_supersteps() {
  constexpr int kWords = 16384;  // 64 KiB: frames, or staged and pulled
  std::vector<int> area(kWords, 0), source(kWords);
  int small = -1;
  bsp_push_reg(area.data(), kWords * sizeof(int));
  bsp_push_reg(&small, sizeof small);
  bsp_sync();
  int tag_in_force = 0, extra = 0;
  bool extra_registered = false;
  for (int step = 0; step < 1500; ++step) {
    const int actor = static_cast<int>((static_cast<unsigned>(step) * 2654435761u >> 7) % static_cast<unsigned>(p()));
    const int right = (actor + 1) % p();
    const int action = step % 10 < 6 ? 0 : step % 10 - 5;  // six quiet steps, then four kinds
    const int stamp = step * 1000 + actor;
    if (me() == actor) {
      switch (action) {
        case 1:  // 4 bytes: records in the actor's line
          bsp_put(right, &stamp, &small, 0, sizeof stamp);
          break;
        case 2:  // 64 KiB
          for (int i = 0; i < kWords; i += 1024) source[i] = stamp + i;
          source[kWords - 1] = -stamp;
          bsp_put(right, source.data(), area.data(), 0, kWords * sizeof(int));
          break;
        case 3:  // a message, with the tag size in force
          bsp_send(right, &stamp, &stamp, sizeof stamp);
          break;
        case 4: {  // computes while the others wait for its line
          const double until = bsp_time() + 50e-6;
          while (bsp_time() < until) {
          }
          break;
        }
      }
    }
    const int sent_with = tag_in_force;
    const bool new_tag = step % 97 == 41;  // a collective change in an otherwise quiet superstep
    if (new_tag) {
      bsp_size_t asked = tag_in_force == 0 ? static_cast<bsp_size_t>(sizeof(int)) : 0;
      bsp_set_tagsize(&asked);
      CHECK(asked == tag_in_force);  // the size in force until this sync
    }
    if (step % 89 == 13) {
      if (extra_registered) {
        bsp_pop_reg(&extra);
      } else {
        bsp_push_reg(&extra, sizeof extra);
      }
      extra_registered = !extra_registered;
    }
    bsp_sync();
    if (new_tag) tag_in_force = tag_in_force == 0 ? static_cast<int>(sizeof(int)) : 0;
    int messages = -1;
    bsp_qsize(&messages, nullptr);
    const bool mine = me() == right && action != 0;
    CHECK(messages == (mine && action == 3 ? 1 : 0));  // last superstep's unmoved one is gone
    if (mine && action == 1) CHECK(small == stamp);
    if (mine && action == 2) {
      for (int i = 0; i < kWords; i += 1024) CHECK(area[i] == stamp + i);
      CHECK(area[kWords - 1] == -stamp);
    }
    if (mine && action == 3) {
      int status = -1, tag = -1;
      bsp_get_tag(&status, &tag);
      CHECK(status == static_cast<int>(sizeof(int)));
      if (sent_with == static_cast<int>(sizeof(int))) CHECK(tag == stamp);
    }  // (left in the queue: the next superstep discards it)
  }
  if (extra_registered) bsp_pop_reg(&extra);
  bsp_pop_reg(&small);
  bsp_pop_reg(area.data());
  bsp_sync();
}

// Large puts and gets (several MB, many frames) in both directions at once.
void large_transfers() {
  const int count = 1 << 20;  // 4 MB of ints
  std::vector<int> area(count, -1);
  std::vector<int> fetched(count, -1);
  bsp_push_reg(area.data(), count * sizeof(int));
  bsp_sync();
  std::vector<int> data(count);
  for (int i = 0; i < count; ++i) data[i] = me() * 7 + i;
  int right = (me() + 1) % p();
  int left = (me() + p() - 1) % p();
  bsp_put(right, data.data(), area.data(), 0, count * sizeof(int));
  bsp_sync();
  for (int i = 0; i < count; i += 997) CHECK(area[i] == left * 7 + i);
  CHECK(area[count - 1] == left * 7 + count - 1);
  bsp_get(left, area.data(), 0, fetched.data(), count * sizeof(int));
  bsp_sync();
  int left2 = (me() + 2 * p() - 2) % p();
  for (int i = 0; i < count; i += 991) CHECK(fetched[i] == left2 * 7 + i);
  CHECK(fetched[count - 1] == left2 * 7 + count - 1);
  bsp_pop_reg(area.data());
  bsp_sync();
}

// Large data sent from where it lies (bsplib/engine.cc: a large bsp_put goes to the
// channel straight from its source while the channel takes it, a large bsp_hpput's source
// and a large get reply's data are sent from user memory during the sync) keeps the
// standard's rules: bsp_put copies at the call (its source is overwritten right after),
// hpput reads its source during the sync, a get reads the memory before the superstep's
// puts land there, and small records around the large data keep their order.
void large_gathered() {
  const int count = 3 << 18;  // 3 MB of ints: many frames on every transport
  const int bytes = count * static_cast<int>(sizeof(int));
  std::vector<int> area(count, -1), second(count, -1), fetched(count, -1), source(count), hp_source(count);
  int small[2] = {-1, -1};
  bsp_push_reg(area.data(), bytes);
  bsp_push_reg(second.data(), bytes);
  bsp_push_reg(small, sizeof small);
  int tag_size = sizeof(int);
  bsp_set_tagsize(&tag_size);
  bsp_sync();
  const int right = (me() + 1) % p(), left = (me() + p() - 1) % p(), left2 = (me() + 2 * p() - 2) % p();
  auto put_value = [](int pid, int step, int i) { return pid * 1000003 + step * 7919 + i; };
  auto hp_value = [](int pid, int step, int i) { return -(pid * 1000003 + step * 7919 + i) - 2; };
  for (int step = 0; step < 3; ++step) {
    for (int i = 0; i < count; ++i) {
      source[i] = put_value(me(), step, i);
      hp_source[i] = hp_value(me(), step, i);
    }
    int first = 100 + step;
    bsp_put(right, &first, small, 0, sizeof first);  // a small record before the large ones
    bsp_put(right, source.data(), area.data(), 0, bytes);
    std::fill(source.begin(), source.end(), -7);  // bsp_put copied it at the call
    bsp_hpput(right, hp_source.data(), second.data(), 0, bytes);
    int after = 200 + step;
    bsp_hpput(right, &after, small, sizeof(int), sizeof after);  // a small record after the large one
    int tag = step;
    bsp_send(right, &tag, &after, sizeof after);
    // The left neighbour's area is being overwritten by its own left neighbour this
    // superstep: the get sees it as the superstep began.
    bsp_get(left, area.data(), 0, fetched.data(), bytes);
    bsp_sync();
    for (int i = 0; i < count; ++i) {
      if (area[i] != put_value(left, step, i)) bsp_abort("large_gathered: pid %d area[%d] = %d\n", me(), i, area[i]);
      if (second[i] != hp_value(left, step, i))
        bsp_abort("large_gathered: pid %d second[%d] = %d\n", me(), i, second[i]);
      int before = step == 0 ? -1 : put_value(left2, step - 1, i);
      if (p() == 1) before = step == 0 ? -1 : put_value(me(), step - 1, i);
      if (fetched[i] != before) bsp_abort("large_gathered: pid %d fetched[%d] = %d\n", me(), i, fetched[i]);
    }
    CHECK(small[0] == 100 + step && small[1] == 200 + step);
    int messages = 0;
    bsp_qsize(&messages, nullptr);
    CHECK(messages == 1);
    int status = 0, got_tag = -1, got = 0;
    bsp_get_tag(&status, &got_tag);
    bsp_move(&got, sizeof got);
    CHECK(status == sizeof(int) && got_tag == step && got == 200 + step);
  }
  bsp_pop_reg(small);
  bsp_pop_reg(second.data());
  bsp_pop_reg(area.data());
  bsp_sync();
}

// Large transfers at odd offsets and sizes, overlapping, in memory on huge pages (where
// shm's receiver reads straight from the sender's memory: one copy): each lands whole and
// only where aimed, the later hp-put wins where two overlap, an hp-put's source is
// overwritten right after the sync (its reader had taken it before the writer left), a
// bsp_put's source right after the call, and a get sees the owner's memory as the
// superstep began (the owner's own writes of the superstep, none of the puts landing there).
void single_copy_regions() {
  const std::size_t bytes = 6u << 20, align = 2u << 20;
  auto huge_buffer = [&]() {
    void* base = ::mmap(nullptr, bytes + align, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(base != MAP_FAILED);
    auto* start = reinterpret_cast<unsigned char*>((reinterpret_cast<std::uintptr_t>(base) + align - 1) & ~(align - 1));
    ::madvise(start, bytes, MADV_HUGEPAGE);
    std::memset(start, 0, bytes);
    return start;
  };
  unsigned char* area = huge_buffer();
  unsigned char* fetched = huge_buffer();
  unsigned char* source = huge_buffer();
  unsigned char* chain = huge_buffer();  // each gets its left's into its own, which its right gets
  std::vector<unsigned char> put_source(1u << 20);
  bsp_push_reg(area, static_cast<long>(bytes));
  bsp_push_reg(chain, static_cast<long>(bytes));
  bsp_sync();
  auto base = [](int pid, int step, std::size_t k) {
    return static_cast<unsigned char>(pid * 37 + step * 101 + k * 13 + (k >> 12));
  };
  auto data = [](int pid, int step, std::size_t k) {
    return static_cast<unsigned char>(pid * 53 + step * 29 + k * 7 + (k >> 13) + 1);
  };
  const int right = (me() + 1) % p(), left = (me() + p() - 1) % p();
  for (int step = 0; step < 4; ++step) {
    for (std::size_t k = 0; k < bytes; ++k) {
      area[k] = base(me(), step, k);
      source[k] = data(me(), step, k);
    }
    for (std::size_t k = 0; k < put_source.size(); ++k) put_source[k] = data(me(), step + 50, k);
    const std::size_t off1 = 4093 + 11 * step, len1 = (3u << 20) | 5, from1 = 7;
    const std::size_t off2 = off1 + len1 - 100000, len2 = 600001, from2 = 1000003;
    const std::size_t off3 = (5u << 20) | 3, len3 = (1u << 20) - 9;
    const std::size_t get_at = 12345 + step, get_len = (2u << 20) | 77, get_into = 3;
    bsp_hpput(right, source + from1, area, static_cast<long>(off1), static_cast<long>(len1));
    bsp_hpput(right, source + from2, area, static_cast<long>(off2), static_cast<long>(len2));
    bsp_put(right, put_source.data() + 1, area, static_cast<long>(off3), static_cast<long>(len3));
    std::fill(put_source.begin(), put_source.end(), 0xee);  // bsp_put copied it at the call
    bsp_get(left, area, static_cast<long>(get_at), fetched + get_into, static_cast<long>(get_len));
    const std::size_t chain_len = (1u << 20) + 3;
    for (std::size_t k = 0; k < chain_len; ++k) chain[k] = base(me(), step + 9, k);
    bsp_get(left, chain, 0, chain, static_cast<long>(chain_len));  // reads the left's as it was, before its get lands
    bsp_sync();
    for (std::size_t k = 0; k < chain_len; ++k) {
      if (chain[k] != base(left, step + 9, k)) {
        bsp_abort("single_copy_regions: pid %d step %d chain[%zu] = %d, expected %d\n", me(), step, k, chain[k],
                  base(left, step + 9, k));
      }
    }
    std::memset(source, 0xee, bytes);  // an hp-put's source is the caller's again
    auto expect = [&](std::size_t k) -> unsigned char {
      if (k >= off2 && k < off2 + len2) return data(left, step, from2 + (k - off2));
      if (k >= off1 && k < off1 + len1) return data(left, step, from1 + (k - off1));
      if (k >= off3 && k < off3 + len3) return data(left, step + 50, 1 + (k - off3));
      return base(me(), step, k);
    };
    for (std::size_t k = 0; k < bytes; ++k) {
      if (area[k] != expect(k)) {
        bsp_abort("single_copy_regions: pid %d step %d area[%zu] = %d, expected %d\n", me(), step, k, area[k],
                  expect(k));
      }
    }
    for (std::size_t j = 0; j < get_len; ++j) {
      if (fetched[get_into + j] != base(left, step, get_at + j)) {
        bsp_abort("single_copy_regions: pid %d step %d fetched[%zu] = %d, expected %d\n", me(), step, get_into + j,
                  fetched[get_into + j], base(left, step, get_at + j));
      }
    }
    CHECK(fetched[get_into - 1] == 0 && fetched[get_into + get_len] == 0);  // nothing around the get
    bsp_sync();  // everyone checked before the next step rewrites its area
  }
  bsp_pop_reg(chain);
  bsp_pop_reg(area);
  bsp_sync();
}

// Many small puts to every destination in one superstep (packing).
void many_small_puts() {
  const int per_peer = 5000;
  std::vector<std::int16_t> grid(p() * per_peer, -1);
  bsp_push_reg(grid.data(), grid.size() * sizeof(std::int16_t));
  bsp_sync();
  for (int dst = 0; dst < p(); ++dst) {
    for (int i = 0; i < per_peer; ++i) {
      std::int16_t v = static_cast<std::int16_t>(me() * 3 + i % 100);
      bsp_put(dst, &v, grid.data(), (me() * per_peer + i) * sizeof v, sizeof v);
    }
  }
  bsp_sync();
  for (int src = 0; src < p(); ++src) {
    for (int i = 0; i < per_peer; ++i) CHECK(grid[src * per_peer + i] == src * 3 + i % 100);
  }
  bsp_pop_reg(grid.data());
  bsp_sync();
}

// Adjacent puts into one registration travel as one record (Oxford's -fcombine-puts, on
// unless BSP_COMBINE_PUTS=0), and nothing else merges or reorders: a put into another
// registration between two runs, a put back over an earlier offset (the later call
// wins), a get between two adjacent puts (it reads the value before the superstep),
// sources changed after the call (buffered), and an hp-put (read at the sync). The bytes
// sent show whether the runs were combined.
void combined_puts() {
  const int n = 4000;
  std::vector<std::int32_t> a(n + 8, -1), b(4, -1);
  bsp_push_reg(a.data(), static_cast<int>(a.size() * sizeof(std::int32_t)));
  bsp_push_reg(b.data(), static_cast<int>(b.size() * sizeof(std::int32_t)));
  bsp_sync();
  const int right = (me() + 1) % p(), left = (me() + p() - 1) % p();
  const int word = sizeof(std::int32_t);
  std::uint64_t bytes_before = bsp::stats::packets().bytes_sent;
  for (int i = 0; i < n / 2; ++i) {
    std::int32_t v = me() * 100000 + i;
    bsp_put(right, &v, a.data(), i * word, word);
  }
  std::int32_t in_b = 7 + me();
  bsp_put(right, &in_b, b.data(), (n / 2 % 4) * word, word);  // another registration, same offset as a's run reaches
  for (int i = n / 2; i < n; ++i) {
    std::int32_t v = me() * 100000 + i;
    bsp_put(right, &v, a.data(), i * word, word);
  }
  std::int32_t over[2] = {-5, -6};
  bsp_put(right, &over[0], a.data(), 0, word);     // back over the run's start
  bsp_put(right, &over[1], a.data(), word, word);  // adjacent to that one
  std::int32_t before_get = 30, after_get = 31, got = 0;
  bsp_put(right, &before_get, a.data(), n * word, word);
  bsp_get(right, a.data(), (n + 1) * word, &got, word);
  bsp_put(right, &after_get, a.data(), (n + 1) * word, word);
  std::int32_t source = 11;
  bsp_put(right, &source, a.data(), (n + 2) * word, word);
  source = 12;
  bsp_put(right, &source, a.data(), (n + 3) * word, word);
  std::int32_t hp = 0;
  bsp_hpput(right, &hp, a.data(), (n + 4) * word, word);
  hp = 44;
  bsp_sync();
  std::uint64_t bytes = bsp::stats::packets().bytes_sent - bytes_before;
  CHECK(a[0] == -5 && a[1] == -6);
  for (int i = 2; i < n; ++i) CHECK(a[i] == left * 100000 + i);
  CHECK(b[n / 2 % 4] == 7 + left);
  CHECK(got == -1);  // a[n + 1] before this superstep's puts
  CHECK(a[n] == 30 && a[n + 1] == 31 && a[n + 2] == 11 && a[n + 3] == 12 && a[n + 4] == 44);
  if (right != me() && bsp::stats::packets().data_sent > 0) {
    const char* combine = std::getenv("BSP_COMBINE_PUTS");
    bool combining = !(combine && std::string(combine) == "0");
    // Combined: the data plus a few record headers. Not: a 13-byte header per word.
    if (combining) CHECK(bytes < static_cast<std::uint64_t>(n * word + 1000));
    if (!combining) CHECK(bytes > static_cast<std::uint64_t>(n * (word + 13)));
  }
  // A put never extends a record of an earlier superstep: the next superstep's first
  // record, a get request exactly as long as the put record before the sync (13 + 4
  // bytes), ends where "the last put" did, and the put after it starts where that put
  // reached.
  std::int32_t first = 71, second = 72, fetched = 0;
  bsp_put(right, &first, a.data(), 0, word);
  bsp_sync();
  bsp_get(right, a.data(), 0, &fetched, word);
  bsp_put(right, &second, a.data(), word, word);
  bsp_sync();
  CHECK(fetched == 71 && a[0] == 71 && a[1] == 72);
  bsp_pop_reg(b.data());
  bsp_pop_reg(a.data());
  bsp_sync();
}

// Puts of one size at equal steps into one registration travel as one strided record
// (with combining on): bspbench's h-relation (8-byte words, every p-th slot), a run
// broken by a put into another registration and resumed, a run whose step is smaller
// than its puts (overlapping: the later put wins), a put off the step (a new record),
// runs of odd sizes, and a run to this process itself. The bytes sent show whether the
// runs were combined.
void strided_puts() {
  const int h = 3000;
  std::vector<double> a(2 * h + 64, -1.0);
  std::vector<std::int32_t> b(64, -1);
  std::vector<char> c(4608, 0);
  bsp_push_reg(a.data(), static_cast<int>(a.size() * sizeof(double)));
  bsp_push_reg(b.data(), static_cast<int>(b.size() * sizeof(std::int32_t)));
  bsp_push_reg(c.data(), static_cast<int>(c.size()));
  bsp_sync();
  const int right = (me() + 1) % p(), left = (me() + p() - 1) % p();
  const int slot = me() % 2;  // two interleaved runs, as bspbench's p = 2 h-relation
  std::uint64_t bytes_before = bsp::stats::packets().bytes_sent;
  for (int i = 0; i < h; ++i) {
    double v = me() * 1e6 + i;
    bsp_put(right, &v, a.data(), static_cast<int>((slot + 2 * i) * sizeof(double)), sizeof(double));
    if (i == h / 2) {  // another registration in the middle of the run
      std::int32_t w = 900 + me();
      bsp_put(right, &w, b.data(), 0, sizeof w);
    }
  }
  // Overlapping: 8-byte puts 4 bytes apart into b[8..]; each later put overwrites half
  // of the one before.
  for (int i = 0; i < 6; ++i) {
    std::int32_t pair[2] = {100 * me() + i, -(100 * me() + i)};
    bsp_put(right, pair, b.data(), static_cast<int>((8 + i) * sizeof(std::int32_t)), sizeof pair);
  }
  // Off the step: 4, 4, then 5 words further (a new record), then back on that new step.
  const int offs[] = {20, 24, 28, 33, 38, 43};
  for (int i = 0; i < 6; ++i) {
    std::int32_t w = 1000 * me() + i;
    bsp_put(right, &w, b.data(), static_cast<int>(offs[i] * sizeof(std::int32_t)), sizeof w);
  }
  // Odd sizes: 3-byte puts every 7 bytes, 100-byte puts every 130, 1500-byte puts (not strided).
  for (int i = 0; i < 40; ++i) {
    char bytes[3] = {static_cast<char>(me()), static_cast<char>(i), 'x'};
    bsp_put(right, bytes, c.data(), 7 * i, 3);
  }
  std::vector<char> block(1500);
  for (int i = 0; i < 8; ++i) {
    std::fill(block.begin(), block.end(), static_cast<char>('a' + i + me()));
    bsp_put(right, block.data(), c.data(), 300 + 130 * i, 100);
  }
  for (int i = 0; i < 2; ++i) {
    std::fill(block.begin(), block.end(), static_cast<char>('A' + i + me()));
    bsp_put(right, block.data(), c.data(), 1400 + 1600 * i, 1500);
  }
  // To itself: a run into its own a, beyond what the others write.
  for (int i = 0; i < 16; ++i) {
    double v = -me() - i;
    bsp_put(me(), &v, a.data(), static_cast<int>((2 * h + 3 * i) * sizeof(double)), sizeof(double));
  }
  bsp_sync();
  std::uint64_t bytes = bsp::stats::packets().bytes_sent - bytes_before;
  const int left_slot = left % 2;
  for (int i = 0; i < h; ++i) CHECK(a[left_slot + 2 * i] == left * 1e6 + i);
  for (int i = 0; i < h; ++i) CHECK(a[1 - left_slot + 2 * i] == -1.0);  // one source, one slot
  CHECK(b[0] == 900 + left);
  for (int i = 0; i < 6; ++i) CHECK(b[8 + i] == 100 * left + i);
  CHECK(b[14] == -(100 * left + 5));
  for (int i = 0; i < 6; ++i) CHECK(b[offs[i]] == 1000 * left + i);
  for (int i = 0; i < 40; ++i) {
    CHECK(c[7 * i] == static_cast<char>(left) && c[7 * i + 1] == static_cast<char>(i) && c[7 * i + 2] == 'x');
  }
  for (int i = 0; i < 8; ++i) {
    for (int k = 0; k < 100; ++k) CHECK(c[300 + 130 * i + k] == static_cast<char>('a' + i + left));
  }
  for (int i = 0; i < 2; ++i) {
    for (int k = 0; k < 1500; ++k) CHECK(c[1400 + 1600 * i + k] == static_cast<char>('A' + i + left));
  }
  for (int i = 0; i < 16; ++i) CHECK(a[2 * h + 3 * i] == -me() - i);
  if (right != me() && bsp::stats::packets().data_sent > 0) {
    const char* combine = std::getenv("BSP_COMBINE_PUTS");
    bool combining = !(combine && std::string(combine) == "0");
    std::uint64_t small = h * 8 + 4 + 6 * 8 + 6 * 4 + 40 * 3 + 8 * 100;  // the 1500-byte puts may be pulled (shm)
    // Combined: the data plus a few record headers. Not: a 13-byte header per put.
    if (combining) CHECK(bytes < small + 2 * 1500 + 1000);
    if (!combining) CHECK(bytes > small + h * 13);
  }
  bsp_pop_reg(c.data());
  bsp_pop_reg(b.data());
  bsp_pop_reg(a.data());
  bsp_sync();
}

// A strided run of 4-byte puts whose last put lies outside the registration (16 bytes on
// pid 0): at library level 2 the destination refuses the whole run by its header; at
// levels 0 and 1 the third put's call is refused.
void strided_put_outside_registration() {
  std::int32_t x[4] = {0, 0, 0, 0};
  bsp_push_reg(x, sizeof x);
  bsp_sync();
  std::int32_t y = 5;
  if (me() == p() - 1) {
    for (int i = 0; i < 3; ++i) bsp_put(0, &y, x, 8 * i, sizeof y);
  }
  bsp_sync();
  bsp_sync();
}

// Zero-length puts, gets and messages are legal and do nothing.
void zero_length() {
  int x = 5;
  bsp_push_reg(&x, sizeof x);
  bsp_sync();
  int y = 9;
  bsp_put((me() + 1) % p(), &y, &x, 0, 0);
  bsp_get((me() + 1) % p(), &x, 0, &y, 0);
  bsp_send((me() + 1) % p(), nullptr, nullptr, 0);
  bsp_sync();
  CHECK(x == 5 && y == 9);
  int n = 0, bytes = -1;
  bsp_qsize(&n, &bytes);
  CHECK(n == 1 && bytes == 0);
  bsp_pop_reg(&x);
  bsp_sync();
}

// bsp_time runs forwards; bsp_nprocs and bsp_pid agree with the launcher.
void enquiry() {
  double t0 = bsp_time();
  bsp_sync();
  double t1 = bsp_time();
  CHECK(t1 >= t0 && t0 >= 0);
  const char* launched = std::getenv("BSP_PROCESSES");
  if (launched) CHECK(p() <= std::atoi(launched));
  if (launched) CHECK(available_before_begin == std::atoi(launched));
  CHECK(me() >= 0 && me() < p());
}

// bsp::stats::communication_seconds() counts the time inside bsp_sync and nothing else:
// across one sync it grows by that sync's length (bracketed by bsp_time), across user
// code not at all, and it never exceeds bsp_time(). The last process sleeps 50 ms in a
// superstep, so the others' sync of it is long enough that a mis-scaled clock shows. The
// bracket also holds whatever ran between bsp_time and the sync's own clock reads, and a
// process preempted there (a busy machine) sees a bracket longer than the sync: the
// growth may fall short of it in some of kAttempts such syncs, never in all of them, and
// never exceed it.
void communication_time() {
  constexpr int kAttempts = 3;
  bsp_sync();
  const double before_computing = bsp::stats::communication_seconds();
  if (me() == p() - 1) usleep(50'000);
  // (equal but for the rounding of turning clock ticks into seconds at each call)
  CHECK(std::abs(bsp::stats::communication_seconds() - before_computing) <= 1e-6 + 1e-4 * before_computing);
  bool agreed = false;
  double bracket = 0, counted = 0;
  for (int attempt = 0; attempt < kAttempts; ++attempt) {  // every process syncs kAttempts times
    if (attempt > 0 && me() == p() - 1) usleep(50'000);
    const double counted_before = bsp::stats::communication_seconds();
    const double entered = bsp_time();
    bsp_sync();
    const double left = bsp_time();
    bracket = left - entered;
    counted = bsp::stats::communication_seconds() - counted_before;
    const double slack = 0.02 * bracket + 50e-6;
    if (counted > bracket + slack) {
      bsp_abort("communication_time on pid %d: the sync took %.6f s by bsp_time, communication_seconds grew %.6f s\n",
                me(), bracket, counted);
    }
    agreed = agreed || counted >= bracket - slack;
  }
  if (!agreed) {
    bsp_abort(
        "communication_time on pid %d: in each of %d syncs communication_seconds grew less than bsp_time "
        "measured (the last: %.6f s against %.6f s)\n",
        me(), kAttempts, counted, bracket);
  }
  CHECK(bsp::stats::communication_seconds() <= bsp_time() + 50e-6);
}

// bsprun's standard input reaches pid 0, which shares what it read.
void stdin_to_pid0() {
  long value = -1;
  bsp_push_reg(&value, sizeof value);
  bsp_sync();
  if (me() == 0) {
    CHECK(std::scanf("%ld", &value) == 1);
    for (int dst = 1; dst < p(); ++dst) bsp_put(dst, &value, &value, 0, sizeof value);
  }
  bsp_sync();
  CHECK(value == 12345);
  bsp_pop_reg(&value);
  bsp_sync();
}

// Many-to-one: every other process puts `megabytes` MB into pid 0 in one superstep (the
// pattern that overflows a switch port); pid 0 checks every byte.
int megabytes = 8;  // --mb=N

std::uint32_t pattern(int src, std::size_t word) {
  std::uint64_t x = (static_cast<std::uint64_t>(src) << 40) ^ (word * 0x9E3779B97F4A7C15ull);
  x ^= x >> 29;
  return static_cast<std::uint32_t>(x * 0xBF58476D1CE4E5B9ull >> 32);
}

// This process's `words` pattern words, as it sends them.
std::vector<std::uint32_t> pattern_words(std::size_t words) {
  std::vector<std::uint32_t> data(words);
  for (std::size_t i = 0; i < words; ++i) data[i] = pattern(me(), i);
  return data;
}

// Puts data into dst's inbox at this process's slot, in puts of at most 64 MB (int sizes).
void put_into_slot(int dst, const std::vector<std::uint32_t>& data, std::uint32_t* inbox) {
  const std::size_t bytes = data.size() * 4;
  const std::size_t chunk = std::size_t{1} << 26;
  for (std::size_t at = 0; at < bytes; at += chunk) {
    bsp_put(dst, reinterpret_cast<const char*>(data.data()) + at, inbox, static_cast<int>(me() * bytes + at),
            static_cast<int>(std::min(chunk, bytes - at)));
  }
}

// Checks the slot src filled in inbox, word by word; stops the job at the first wrong one.
void check_slot(const char* name, const std::vector<std::uint32_t>& inbox, int src, std::size_t words) {
  for (std::size_t i = 0; i < words; ++i) {
    if (inbox[src * words + i] != pattern(src, i)) {
      bsp_abort("%s: pid %d: word %zu from pid %d is wrong", name, me(), i, src);
    }
  }
}

void register_inbox(std::vector<std::uint32_t>& inbox) {
  bsp_push_reg(inbox.data(), static_cast<int>(std::min<std::size_t>(inbox.size() * 4, 0x7FFFFFFF)));
  bsp_sync();
}

void many_to_one() {
  const std::size_t words = static_cast<std::size_t>(megabytes) << 18;  // 4-byte words per sender
  std::vector<std::uint32_t> inbox(me() == 0 ? words * p() : 1, 0);
  register_inbox(inbox);
  if (me() != 0) put_into_slot(0, pattern_words(words), inbox.data());
  bsp_sync();
  if (me() == 0) {
    for (int src = 1; src < p(); ++src) check_slot("many_to_one", inbox, src, words);
  }
  bsp_pop_reg(inbox.data());
  bsp_sync();
}

// All-to-all bulk: every process puts `megabytes` MB into every other one in one
// superstep (p(p-1) * megabytes MB in all); every receiver checks every byte.
void all_to_all_bulk() {
  const std::size_t words = static_cast<std::size_t>(megabytes) << 18;  // 4-byte words per pair
  std::vector<std::uint32_t> inbox(words * p(), 0);
  register_inbox(inbox);
  const std::vector<std::uint32_t> data = pattern_words(words);
  for (int step = 1; step < p(); ++step) put_into_slot((me() + step) % p(), data, inbox.data());
  bsp_sync();
  for (int src = 0; src < p(); ++src) {
    if (src != me()) check_slot("all_to_all_bulk", inbox, src, words);
  }
  bsp_pop_reg(inbox.data());
  bsp_sync();
}

// ---- large puts that land while their receiver waits in bsp_sync ----
// A put of 1 MiB or more takes many frames on tcp, udp and nic, so its data arrives while
// the receiver (pid 0, which calls bsp_sync at once) already waits in the sync, and an
// engine may write it early. Whatever it does, the result must be the standard's: gets
// read the memory as it was before the superstep's puts, get replies are written before
// puts, puts land source by source in pid order and within a source in call order, an
// hp-put's source is read before anything lands, and nothing lands before the sync. Every
// scenario runs 3 supersteps on the same areas with new data, and every word is checked.
namespace hazards {

constexpr std::size_t kWords = std::size_t{1} << 17;  // 1 MiB of 64-bit words
constexpr std::size_t kGet = 4096;                    // words of most gets
constexpr std::size_t kInbox = kWords / 2;            // words of the hp-put's landing place
constexpr int kSteps = 3;
constexpr int kReceiver = 0;
constexpr int kInitial = 0xff;  // the buffer number of the words an area starts with

using Words = std::vector<std::uint64_t>;

// Every word names where it was made: scenario, pid, superstep, which of that pid's
// buffers, and its index there; so a stale or misplaced word says what it is.
std::uint64_t word(int scenario, int pid, int step, int buffer, std::size_t index) {
  return std::uint64_t(scenario & 0xff) << 56 | std::uint64_t(pid & 0xff) << 48 | std::uint64_t(step & 0xff) << 40 |
         std::uint64_t(buffer & 0xff) << 32 | (index & 0xffffffffu);
}

std::string origin(std::uint64_t w) {
  char text[128];
  std::snprintf(text, sizeof text, "scenario %d, pid %d, superstep %d, buffer %d, word %u", int(w >> 56),
                int(w >> 48 & 0xff), int(w >> 40 & 0xff), int(w >> 32 & 0xff), unsigned(w & 0xffffffffu));
  return text;
}

void fill(std::uint64_t* into, std::size_t words, int scenario, int pid, int step, int buffer) {
  for (std::size_t j = 0; j < words; ++j) into[j] = word(scenario, pid, step, buffer, j);
}

const char* const kScenarioNames[] = {"",           "gets_read_before_puts", "get_reply_then_put",        "pid_order",
                                      "call_order", "hpput_reads_old",       "registrations_and_messages"};

// One scenario's state on every process. Each keeps `model`, what pid 0's area must hold,
// so getters can check what they read (`before`: the model as the superstep began).
struct State {
  int scenario = 0;
  int step = 0;
  Words area = Words(kWords);
  Words inbox = Words(kInbox);
  Words model = Words(kWords);
  Words before;
  Words source;     // a put's source: scribbled over once the put returns
  Words hp_source;  // an hp-put's source: left alone up to the sync
};

// Stops the job at the first of `words` words that differs from `want`, naming both.
void check(const State& s, const char* what, const std::uint64_t* got, const std::uint64_t* want, std::size_t words) {
  if (std::memcmp(got, want, words * sizeof(std::uint64_t)) == 0) return;
  std::size_t j = 0;
  while (got[j] == want[j]) ++j;
  bsp_abort("large_put_hazards, scenario %s, superstep %d: on pid %d, %s: word %zu of %zu is (%s), want (%s)",
            kScenarioNames[s.scenario], s.step, me(), what, j, words, origin(got[j]).c_str(), origin(want[j]).c_str());
}

// What pid src's put of buffer `buffer` writes into pid 0's area at word `at`.
void model_put(State& s, int src, int buffer, std::size_t at, std::size_t words) {
  fill(s.model.data() + at, words, s.scenario, src, s.step, buffer);
}

// Puts `words` words of this process's buffer `buffer` into pid 0's area at word `at`,
// then scribbles over the source: bsp_put copied it at the call.
void put_words(State& s, int buffer, std::size_t at, std::size_t words) {
  s.source.resize(words);
  fill(s.source.data(), words, s.scenario, me(), s.step, buffer);
  bsp_put(kReceiver, s.source.data(), s.area.data(), static_cast<int>(at * 8), static_cast<int>(words * 8));
  std::fill(s.source.begin(), s.source.end(), ~std::uint64_t{0});
}

void get_words(int pid, const Words& area, std::size_t at, std::uint64_t* into, std::size_t words) {
  bsp_get(pid, area.data(), static_cast<int>(at * 8), into, static_cast<int>(words * 8));
}

// Keeps this process busy a little while, so that its puts leave after a higher pid's.
void busy_while(std::chrono::microseconds span) {
  const auto until = std::chrono::steady_clock::now() + span;
  volatile std::uint64_t sum = 0;
  while (std::chrono::steady_clock::now() < until) sum = sum + 1;
}

// 1. Gets read pid 0's area as it was before the superstep's puts: the large put's sender
// after its put (in call order), a third process (the end of its get overlaps the put's
// last 8 words only), pid 0 from itself. Pid 0 sees nothing land before the sync.
void gets_read_before_puts(State& s) {
  const int sender = 1 % p(), third = p() >= 3 ? 2 : sender;
  const std::size_t end = kWords - 64;
  Words by_sender(kGet), middle(kGet), tail(64), own(2048);
  if (me() == sender) {
    put_words(s, 0, 0, end);
    get_words(kReceiver, s.area, end / 2, by_sender.data(), kGet);
  }
  if (me() == third) {
    get_words(kReceiver, s.area, end - 8, tail.data(), 64);
    get_words(kReceiver, s.area, end / 3, middle.data(), kGet);
  }
  if (me() == kReceiver) {
    get_words(kReceiver, s.area, 1000, own.data(), own.size());
    if (s.step == 1) check(s, "pid 0's area before its bsp_sync", s.area.data(), s.before.data(), kWords);
  }
  bsp_sync();
  model_put(s, sender, 0, 0, end);
  if (me() == sender) check(s, "the sender's get after its put", by_sender.data(), &s.before[end / 2], kGet);
  if (me() == third) {
    check(s, "a get over the put's last 8 words", tail.data(), &s.before[end - 8], 64);
    check(s, "a get in the middle of the put", middle.data(), &s.before[end / 3], kGet);
  }
  if (me() == kReceiver) check(s, "pid 0's get from itself", own.data(), &s.before[1000], own.size());
}

// 2. Pid 0 gets 4096 words (kGet) into its own area at 0 while a large put covers it from word
// 1024 on: the get's reply is written first, so the put's words win where both write.
void get_reply_then_put(State& s) {
  const int holder = p() >= 3 ? 2 : 1 % p(), sender = 1 % p();
  const std::size_t from = 5000, start = 1024;
  Words expected(kGet);
  if (holder == kReceiver) {
    std::copy_n(&s.before[from], kGet, expected.begin());
  } else {
    fill(expected.data(), kGet, s.scenario, holder, s.step, 7);
  }
  if (me() == holder && me() != kReceiver) std::copy(expected.begin(), expected.end(), &s.area[from]);
  if (me() == kReceiver) get_words(holder, s.area, from, s.area.data(), kGet);
  if (me() == sender) put_words(s, 0, start, kWords - start);
  bsp_sync();
  std::copy(expected.begin(), expected.end(), s.model.begin());
  model_put(s, sender, 0, start, kWords - start);
}

// 3. Two senders put large overlapping ranges, the lower pid later (after a busy while):
// the higher pid's words win where they overlap; a small put from the higher pid into
// the lower's range wins, a small put from the lower pid into the higher's range loses.
void pid_order(State& s) {
  if (p() < 2) return;
  const int lower = p() >= 3 ? 1 : 0, higher = lower + 1;
  const std::size_t quarter = kWords / 4;
  if (me() == higher) {
    put_words(s, 0, quarter, 3 * quarter);
    put_words(s, 1, quarter / 2, 64);
  }
  if (me() == lower) {
    busy_while(std::chrono::microseconds(2000));
    put_words(s, 0, 0, 3 * quarter);
    put_words(s, 1, 3 * quarter + quarter / 2, 64);
  }
  bsp_sync();
  model_put(s, lower, 0, 0, 3 * quarter);
  model_put(s, lower, 1, 3 * quarter + quarter / 2, 64);
  model_put(s, higher, 0, quarter, 3 * quarter);
  model_put(s, higher, 1, quarter / 2, 64);
}

// 4. One sender: a small put into the middle, then a large put over it (large wins), a
// second large put overlapping the first (the second wins), a small put into it (small wins).
void call_order(State& s) {
  const int sender = 1 % p();
  const std::size_t quarter = kWords / 4;
  if (me() == sender) {
    put_words(s, 1, 2 * quarter, 64);
    put_words(s, 0, 0, 3 * quarter);
    put_words(s, 2, quarter, 3 * quarter);
    put_words(s, 3, 3 * quarter + quarter / 2, 64);
  }
  bsp_sync();
  model_put(s, sender, 1, 2 * quarter, 64);
  model_put(s, sender, 0, 0, 3 * quarter);
  model_put(s, sender, 2, quarter, 3 * quarter);
  model_put(s, sender, 3, 3 * quarter + quarter / 2, 64);
}

// 5. Pid 0 hp-puts half its area (where a large put lands this superstep) to another
// process: the old words go, as hp-put sources are read at the sync before anything
// lands, however long sending them takes. So that pid 0 may still be sending them when
// the large data it receives, an hp-put (half its area) and a put (the other half), is
// all there: in superstep 0 the landing process is busy a while before its sync (with 3
// or more processes), in superstep 1 pid 0 is (its sender's data waits for it).
void hpput_reads_old(State& s) {
  const int landing = 1 % p(), sender = p() >= 3 ? 2 : 1 % p();
  const std::size_t from = kWords / 4, half = kWords / 2;
  if (me() == kReceiver) bsp_hpput(landing, &s.area[from], s.inbox.data(), 0, static_cast<int>(kInbox * 8));
  if (me() == sender) {
    s.hp_source.resize(half);
    fill(s.hp_source.data(), half, s.scenario, me(), s.step, 0);
    bsp_hpput(kReceiver, s.hp_source.data(), s.area.data(), 0, static_cast<int>(half * 8));
    put_words(s, 1, half, half);
  }
  if (s.step == 0 && me() == landing && landing != sender) busy_while(std::chrono::microseconds(3000));
  if (s.step == 1 && me() == kReceiver) busy_while(std::chrono::microseconds(3000));
  bsp_sync();
  model_put(s, sender, 0, 0, half);
  model_put(s, sender, 1, half, half);
  if (me() == landing) check(s, "the inbox pid 0's hp-put filled", s.inbox.data(), &s.before[from], kInbox);
}

// 6. Large puts in supersteps that also pop and push a registration (a large put goes
// into the registration popped in that superstep) and carry messages, one of them large.
Words spare;  // pid 0's: a whole area; the others': a few words
void registrations_and_messages(State& s) {
  const int sender = 1 % p(), spare_sender = p() - 1;
  if (s.step == 0) spare.assign(me() == kReceiver ? kWords : 16, 0);
  if (s.step > 0) bsp_pop_reg(spare.data());  // in effect at the sync: this superstep's put may use it
  if (s.step < kSteps - 1) bsp_push_reg(spare.data(), static_cast<int>(spare.size() * 8));
  Words small(8);
  fill(small.data(), small.size(), s.scenario, me(), s.step, 5);
  bsp_send(kReceiver, nullptr, small.data(), static_cast<int>(small.size() * 8));
  if (me() == spare_sender && s.step > 0) {
    Words data(kWords);
    fill(data.data(), kWords, s.scenario, me(), s.step, 4);
    bsp_put(kReceiver, data.data(), spare.data(), 0, static_cast<int>(kWords * 8));
  }
  if (me() == sender) {
    put_words(s, 0, 0, kWords);
    Words large(16384);
    fill(large.data(), large.size(), s.scenario, me(), s.step, 6);
    bsp_send(kReceiver, nullptr, large.data(), static_cast<int>(large.size() * 8));
  }
  bsp_sync();
  model_put(s, sender, 0, 0, kWords);
  if (me() != kReceiver) return;
  if (s.step > 0) {
    Words want(kWords);
    fill(want.data(), kWords, s.scenario, spare_sender, s.step, 4);
    check(s, "the area whose registration was popped", spare.data(), want.data(), kWords);
  }
  int messages = 0, bytes = 0;
  bsp_qsize(&messages, &bytes);
  if (messages != p() + 1) bsp_abort("large_put_hazards: pid 0 has %d messages, want %d", messages, p() + 1);
  std::vector<int> smalls(p(), 0);
  int larges = 0;
  for (int k = 0; k < messages; ++k) {
    int status = -1;
    bsp_get_tag(&status, nullptr);
    if (status < 8 || status % 8 != 0) bsp_abort("large_put_hazards: pid 0 has a message of %d bytes", status);
    Words got(static_cast<std::size_t>(status) / 8);
    bsp_move(got.data(), status);
    const int pid = int(got[0] >> 48 & 0xff), buffer = int(got[0] >> 32 & 0xff);
    if (pid >= p() || (buffer != 5 && buffer != 6)) {
      bsp_abort("large_put_hazards: a message of %d bytes starts with (%s)", status, origin(got[0]).c_str());
    }
    Words want(got.size());
    fill(want.data(), want.size(), s.scenario, pid, s.step, buffer);
    check(s, "a message", got.data(), want.data(), got.size());
    if (buffer == 5 && status == 64) ++smalls[pid];
    if (buffer == 6 && status == 16384 * 8) ++larges;
  }
  for (int pid = 0; pid < p(); ++pid) {
    if (smalls[pid] != 1) bsp_abort("large_put_hazards: %d small messages from pid %d, want 1", smalls[pid], pid);
  }
  if (larges != 1) bsp_abort("large_put_hazards: %d large messages, want 1", larges);
}

void run(int scenario, void (*superstep)(State&)) {
  State s;
  s.scenario = scenario;
  fill(s.area.data(), kWords, scenario, me(), kInitial, kInitial);
  fill(s.model.data(), kWords, scenario, kReceiver, kInitial, kInitial);
  bsp_push_reg(s.area.data(), static_cast<int>(kWords * 8));
  bsp_push_reg(s.inbox.data(), static_cast<int>(kInbox * 8));
  bsp_sync();
  for (s.step = 0; s.step < kSteps; ++s.step) {
    s.before = s.model;
    superstep(s);
    if (me() == kReceiver) check(s, "pid 0's area after the sync", s.area.data(), s.model.data(), kWords);
  }
  bsp_pop_reg(s.inbox.data());
  bsp_pop_reg(s.area.data());
  bsp_sync();
}

}  // namespace hazards

void large_put_hazards() {
  hazards::run(1, hazards::gets_read_before_puts);
  hazards::run(2, hazards::get_reply_then_put);
  hazards::run(3, hazards::pid_order);
  hazards::run(4, hazards::call_order);
  hazards::run(5, hazards::hpput_reads_old);
  hazards::run(6, hazards::registrations_and_messages);
}

// bsp_put's source is the caller's again right after the call: it may be read, written,
// passed to a system call, freed or reallocated before the sync, and the put still
// carries it as it was (shm moves large sources aside instead of copying them:
// transport/shm/moved_sources.h, whose bytes a source put again unchanged reuses). Each
// process puts 2 MiB (plus 12 bytes: both ends inside a page) to the next every
// superstep; model() is what was put. Steps 0-4 put one source again and again, changing
// only a word in a partial end page; steps 5-8 put a new source each and touch it right
// after the call; step 9 puts the last one to two processes.
namespace moved_sources {
constexpr std::size_t kWords = (2u << 20) / 4 + 3;
constexpr std::size_t kSecond = kWords + 16;  // where a second put lands in the window
using Source = std::vector<std::uint32_t>;
std::uint32_t value(int version, int pid, std::size_t i) {
  return (static_cast<std::uint32_t>(version) << 25) ^ (static_cast<std::uint32_t>(pid) << 22) ^
         static_cast<std::uint32_t>(i);
}
std::uint32_t model(int step, int pid, std::size_t i) {
  if (step >= 2 && step <= 4 && i == 0) return 0xAAAA0000u | static_cast<std::uint32_t>(pid);
  if (step >= 3 && step <= 4 && i == kWords - 1) return 0xBBBB0000u | static_cast<std::uint32_t>(pid);
  return value(step < 5 ? 0 : step == 5 ? 5 : step < 8 ? 55 : 8, pid, i);
}
Source* filled(int version) {
  auto* source = new Source(kWords);
  for (std::size_t i = 0; i < kWords; ++i) (*source)[i] = value(version, me(), i);
  return source;
}
void expect(const Source& words, std::size_t at, int step, int pid, std::size_t first, std::size_t count,
            const char* what) {
  for (std::size_t j = 0; j < count; ++j) {
    if (words[at + j] != model(step, pid, first + j)) {
      bsp_abort("put_sources_reused, step %d: on pid %d, %s word %zu from pid %d is %#x, want %#x", step, me(), what,
                first + j, pid, words[at + j], model(step, pid, first + j));
    }
  }
}
}  // namespace moved_sources

void put_sources_reused() {
  using namespace moved_sources;
  const int to = (me() + 1) % p(), from = (me() + p() - 1) % p();
  Source window(kSecond + kWords);
  bsp_push_reg(window.data(), static_cast<long>(window.size() * 4));
  bsp_sync();
  std::vector<std::unique_ptr<Source>> sources;  // each step's, alive to the end (but step 7's)
  sources.emplace_back(filled(0));
  auto put = [&](const Source& source, int pid, std::size_t at, std::size_t first, std::size_t count) {
    bsp_put(pid, source.data() + first, window.data(), static_cast<long>(at * 4), static_cast<long>(count * 4));
  };
  for (int step = 0; step < 10; ++step) {
    Source& first = *sources.front();
    if (step == 2) first[0] = model(2, me(), 0);
    if (step == 3) first[kWords - 1] = model(3, me(), kWords - 1);
    if (step == 5) expect(first, 0, 4, me(), 0, kWords, "its own (kept aside, read)");
    if (step >= 5 && step <= 8) sources.emplace_back(filled(step == 5 ? 5 : step == 8 ? 8 : 55));
    Source& source = *sources.back();
    put(source, to, 0, 0, kWords);
    switch (step) {
      case 5:  // written at once
        for (std::size_t i = 0; i < kWords; ++i) source[i] = value(55, me(), i);
        break;
      case 6: {  // read by the kernel, and a part put again
        int file = memfd_create("put_sources_reused", MFD_CLOEXEC);
        CHECK(file >= 0);
        CHECK(write(file, source.data(), kWords * 4) == static_cast<ssize_t>(kWords * 4));
        Source written(kWords);
        CHECK(pread(file, written.data(), kWords * 4, 0) == static_cast<ssize_t>(kWords * 4));
        close(file);
        expect(written, 0, 6, me(), 0, kWords, "its own (written to a file)");
        put(source, to, kSecond, 1000, kWords - 2000);
        break;
      }
      case 7:  // read at once, then freed
        expect(source, 0, 7, me(), 0, kWords, "its own (read)");
        sources.pop_back();
        break;
      case 8:  // reallocated (moved to a larger block) and shrunk back
        source.resize(2 * kWords, 0);
        source.resize(kWords);
        break;
      case 9:  // put again, to the previous pid
        put(source, from, kSecond, 0, kWords);
        break;
      default:
        break;
    }
    bsp_sync();
    expect(window, 0, step, from, 0, kWords, "the window's");
    if (step == 6) expect(window, kSecond, 6, from, 1000, kWords - 2000, "the window's second");
    if (step == 9) expect(window, kSecond, 9, to, 0, kWords, "the window's second");
  }
  bsp_pop_reg(window.data());
  bsp_sync();
}

// put_sources_reused's rules at random: each process keeps four sources of its own (fresh
// mappings) and a shadow of what they hold; every superstep it puts two random ranges of
// them (64 KiB to 2 MiB, any alignment, often the same bytes as before) to the next
// process, then does one random thing to a random source before the sync: nothing,
// write a range, read a range, write a range to a file, discard pages (MADV_DONTNEED),
// unmap it for a new mapping, move it elsewhere (mremap, or realloc's copy where that is
// refused), or fork a child that reads it. The receiver checks each put against the
// sender's hash of its shadow, sent with it; the sender checks what it reads.
namespace shuffled {
constexpr std::size_t kSource = 3u << 20, kLargest = 2u << 20, kLeast = 64u << 10;
std::uint64_t next(std::uint64_t& state) {  // splitmix64
  std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
std::uint64_t hash(const unsigned char* bytes, std::size_t size) {  // FNV-1a
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (std::size_t i = 0; i < size; ++i) h = (h ^ bytes[i]) * 0x100000001b3ull;
  return h;
}
unsigned char* fresh_mapping() {
  void* at = mmap(nullptr, kSource, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  CHECK(at != MAP_FAILED);
  return static_cast<unsigned char*>(at);
}
struct Put {
  std::uint64_t size = 0, hash = 0;
};
}  // namespace shuffled

void put_sources_shuffled() {
  using namespace shuffled;
  const int to = (me() + 1) % p(), from = (me() + p() - 1) % p();
  std::vector<unsigned char> window(2 * kLargest);
  Put told[2];
  bsp_push_reg(window.data(), static_cast<long>(window.size()));
  bsp_push_reg(told, sizeof told);
  bsp_sync();
  std::uint64_t rng = 0x1234567ull + static_cast<std::uint64_t>(me()) * 7919;
  std::vector<unsigned char*> sources(4);
  std::vector<std::vector<unsigned char>> shadows(4, std::vector<unsigned char>(kSource));
  auto scribble = [&](int b, std::size_t at, std::size_t size) {  // the source and its shadow alike
    for (std::size_t i = 0; i < size; ++i) {
      const auto byte = static_cast<unsigned char>(next(rng));
      sources[b][at + i] = byte;
      shadows[b][at + i] = byte;
    }
  };
  for (int b = 0; b < 4; ++b) {
    sources[b] = fresh_mapping();
    scribble(b, 0, kSource);
  }
  auto agrees = [&](int b, std::size_t at, std::size_t size, const char* what) {
    if (std::memcmp(sources[b] + at, shadows[b].data() + at, size) != 0) {
      bsp_abort("put_sources_shuffled: on pid %d, source %d bytes %zu..%zu differ after %s", me(), b, at, at + size,
                what);
    }
  };
  std::uint64_t last_at[2] = {0, 0}, last_size[2] = {0, 0};
  int last_b[2] = {0, 0};
  for (int step = 0; step < 60; ++step) {
    Put puts[2];
    for (int k = 0; k < 2; ++k) {
      // Half the time the same bytes as this slot's last put (found aside, or touched).
      if (step == 0 || next(rng) % 2 == 0) {
        last_b[k] = static_cast<int>(next(rng) % 4);
        last_size[k] = kLeast + next(rng) % (kLargest - kLeast + 1);
        last_at[k] = next(rng) % (kSource - last_size[k] + 1);
      }
      const int b = last_b[k];
      puts[k] = {last_size[k], hash(shadows[b].data() + last_at[k], last_size[k])};
      bsp_put(to, sources[b] + last_at[k], window.data(), static_cast<long>(k * kLargest),
              static_cast<long>(last_size[k]));
    }
    bsp_put(to, puts, told, 0, sizeof puts);
    const int b = static_cast<int>(next(rng) % 4);
    const std::size_t at = next(rng) % kSource, size = std::min<std::size_t>(kSource - at, 1 + next(rng) % kLargest);
    const std::size_t page_at = (at + 4095) & ~std::size_t{4095};
    switch (next(rng) % 8) {
      case 1:
        scribble(b, at, size);
        break;
      case 2:
        agrees(b, at, size, "a read");
        break;
      case 3: {
        int file = memfd_create("put_sources_shuffled", MFD_CLOEXEC);
        CHECK(file >= 0);
        CHECK(write(file, sources[b] + at, size) == static_cast<ssize_t>(size));
        std::vector<unsigned char> written(size);
        CHECK(pread(file, written.data(), size, 0) == static_cast<ssize_t>(size));
        close(file);
        CHECK(std::memcmp(written.data(), shadows[b].data() + at, size) == 0);
        break;
      }
      case 4:
        if (page_at + 4096 <= kSource) {
          const std::size_t pages = std::min<std::size_t>((kSource - page_at) / 4096, 1 + size / 4096);
          CHECK(madvise(sources[b] + page_at, pages * 4096, MADV_DONTNEED) == 0);
          std::fill_n(shadows[b].data() + page_at, pages * 4096, 0);
          agrees(b, page_at, pages * 4096, "MADV_DONTNEED");
        }
        break;
      case 5:
        CHECK(munmap(sources[b], kSource) == 0);
        sources[b] = fresh_mapping();
        std::fill(shadows[b].begin(), shadows[b].end(), 0);
        scribble(b, at, size);
        break;
      case 6: {
        // Moved elsewhere; a mapping split around pages aside refuses mremap (EFAULT),
        // so then as realloc does: a new mapping, a copy, the old one unmapped.
        void* grown = mremap(sources[b], kSource, 2 * kSource, MREMAP_MAYMOVE);
        if (grown != MAP_FAILED) {
          void* shrunk = mremap(grown, 2 * kSource, kSource, 0);
          CHECK(shrunk == grown);
          sources[b] = static_cast<unsigned char*>(grown);
        } else {
          unsigned char* copy = fresh_mapping();
          std::memcpy(copy, sources[b], kSource);
          CHECK(munmap(sources[b], kSource) == 0);
          sources[b] = copy;
        }
        agrees(b, 0, kSource, "a move");
        break;
      }
      case 7: {
        pid_t child = fork();
        CHECK(child >= 0);
        if (child == 0) _exit(std::memcmp(sources[b] + at, shadows[b].data() + at, size) == 0 ? 0 : 1);
        int status = 0;
        CHECK(waitpid(child, &status, 0) == child);
        CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        break;
      }
      default:
        break;
    }
    bsp_sync();
    for (int k = 0; k < 2; ++k) {
      if (told[k].size > kLargest || hash(window.data() + k * kLargest, told[k].size) != told[k].hash) {
        bsp_abort("put_sources_shuffled, step %d: on pid %d, put %d from pid %d (%llu bytes) is not what was put", step,
                  me(), k, from, static_cast<unsigned long long>(told[k].size));
      }
    }
  }
  for (int b = 0; b < 4; ++b) agrees(b, 0, kSource, "the last superstep");
  for (unsigned char* source : sources) munmap(source, kSource);
  bsp_pop_reg(told);
  bsp_pop_reg(window.data());
  bsp_sync();
}

// ---- cases that must fail, with a clear message ----
void abort_with_message() {
  bsp_sync();
  if (me() == p() - 1) bsp_abort("custom abort message %d from the test", 42);
  for (;;) bsp_sync();  // the others wait in sync until stopped
}

void killed_process() {
  bsp_sync();
  if (me() == p() - 1) raise(SIGKILL);
  for (;;) bsp_sync();
}

// The last pid is killed by a timer 50 ms in, inside a superstep that moves 256 KiB to
// the next process (the others are sending, receiving or waiting for it).
void killed_mid_superstep() {
  static std::vector<char> block(256 * 1024, 1);
  bsp_push_reg(block.data(), static_cast<int>(block.size()));
  bsp_sync();
  if (me() == p() - 1) {
    std::signal(SIGALRM, [](int) { raise(SIGKILL); });
    itimerval in_50ms{};
    in_50ms.it_value.tv_usec = 50000;
    setitimer(ITIMER_REAL, &in_50ms, nullptr);
  }
  for (int step = 0; step < 100000; ++step) {
    bsp_put((me() + 1) % p(), block.data(), block.data(), 0, static_cast<int>(block.size()));
    bsp_sync();
  }
}

// A sender stuck while it stages a large get reply inside its bsp_sync: pid 1 gets 4 MiB
// of pid 0's memory, staged after the exchange in pieces the reader copies behind pid
// 0's staged mark; the second half of that memory is unreadable, and pid 0 faults on it
// in the middle of the copy, where on_fault takes over. The job must say what pid 1
// waits for and end (the tests run it with --shm-single-copy=off, so the reply is
// staged, never read from pid 0's memory by pid 1).
void staging_writer_faults(void (*on_fault)(int)) {
  constexpr std::size_t kBytes = 4u << 20;
  void* mapped = mmap(nullptr, kBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  CHECK(mapped != MAP_FAILED);
  auto* area = static_cast<char*>(mapped);
  std::memset(area, 7, kBytes);
  std::vector<char> fetched(kBytes, 0);
  bsp_push_reg(area, static_cast<int>(kBytes));
  bsp_sync();
  if (me() == 0) {
    std::signal(SIGSEGV, on_fault);
    CHECK(mprotect(area + kBytes / 2, kBytes / 2, PROT_NONE) == 0);
  }
  if (me() == 1) bsp_get(0, area, 0, fetched.data(), static_cast<int>(kBytes));
  bsp_sync();
  bsp_abort("staging_writer_faults: the sync with a faulting sender returned");
}

// pid 0 stops there for good (says so, then pauses: a process stopped or stuck).
void staging_writer_stuck() {
  staging_writer_faults([](int) {
    static const char said[] = "staging_writer_stuck: pid 0 stuck staging its get reply\n";
    [[maybe_unused]] auto written = write(STDERR_FILENO, said, sizeof said - 1);
    for (;;) pause();
  });
}

// pid 0 dies there.
void staging_writer_dies() {
  staging_writer_faults([](int) { raise(SIGKILL); });
}

// A reader stuck inside its bsp_sync before it says it has read another process's
// memory: pid 1 hp-puts 4 MiB to pid 0, which pid 0 reads straight from pid 1's memory
// (the tests run it with --shm-single-copy=any), and puts 64 KiB (staged) after it into
// memory pid 0 has made unwritable; pid 0 faults copying that put, after the hp-put's
// read and before its read mark says so, and pauses. pid 1, whose hp-put source is its
// own again only once read, waits for that mark: the job must say so and end.
void single_copy_reader_stuck() {
  constexpr std::size_t kBytes = 4u << 20, kPut = 64u << 10;
  std::vector<char> source(kBytes, 5);
  void* mapped = mmap(nullptr, kBytes + kPut, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  CHECK(mapped != MAP_FAILED);
  auto* area = static_cast<char*>(mapped);
  std::memset(area, 0, kBytes + kPut);
  bsp_push_reg(area, static_cast<int>(kBytes + kPut));
  bsp_sync();
  if (me() == 0) {
    std::signal(SIGSEGV, [](int) {
      static const char said[] = "single_copy_reader_stuck: pid 0 stuck applying a put\n";
      [[maybe_unused]] auto written = write(STDERR_FILENO, said, sizeof said - 1);
      for (;;) pause();
    });
    CHECK(mprotect(area + kBytes, kPut, PROT_NONE) == 0);
  }
  if (me() == 1) {
    bsp_hpput(0, source.data(), area, 0, static_cast<int>(kBytes));
    bsp_put(0, source.data(), area, static_cast<int>(kBytes), static_cast<int>(kPut));
  }
  bsp_sync();
  bsp_abort("single_copy_reader_stuck: the sync with a stuck reader returned");
}

// Supersteps until the job is stopped from outside (a cut link, a killed remote shell,
// Ctrl-C); gives up after 60 s so a test can never leave it running.
void sync_until_stopped() {
  for (int step = 0; step < 6000; ++step) {
    bsp_sync();
    usleep(10000);
  }
  bsp_abort("sync_until_stopped: nobody stopped the job within 60 s");
}

// The last process computes for 3 s in the second superstep while the others wait.
void slow_process() {
  bsp_sync();
  if (me() == p() - 1) sleep(3);
  bsp_sync();
}

void put_unregistered() {
  int x = 0, y = 1;
  bsp_sync();
  bsp_put(0, &y, &x, 0, sizeof y);
  bsp_sync();
}

void put_outside_registration() {
  int x[2] = {0, 0};
  bsp_push_reg(x, sizeof x);
  bsp_sync();
  int y[3] = {1, 2, 3};
  if (me() == p() - 1) bsp_put(0, y, x, 4, sizeof y);
  bsp_sync();
  bsp_sync();
}

void get_outside_registration() {
  int x[2] = {0, 0};
  bsp_push_reg(x, sizeof x);
  bsp_sync();
  int y[3];
  if (me() == p() - 1) bsp_get(0, x, 0, y, sizeof y);
  bsp_sync();
  bsp_sync();
}

// Gets and puts racing on one word in each superstep, from every process: every get
// reads the word as the previous superstep left it (its own process's included), the put
// from the left lands; a get and a put into the same registered word: the put wins.
void racing_puts_and_gets() {
  int word = 1000 + me();
  int landing = -1;
  bsp_push_reg(&word, sizeof word);
  bsp_push_reg(&landing, sizeof landing);
  bsp_sync();
  const int right = (me() + 1) % p(), left = (me() + p() - 1) % p();
  std::vector<int> seen(p(), -1);
  for (int round = 0; round < 4; ++round) {
    for (int j = 0; j < p(); ++j) bsp_get(j, &word, 0, &seen[j], sizeof(int));
    int mine = 2000 + round * 100 + me();
    bsp_put(right, &mine, &word, 0, sizeof mine);
    bsp_get(right, &word, 0, &landing, sizeof landing);
    bsp_put(right, &mine, &landing, 0, sizeof mine);
    bsp_get(left, &word, 0, &landing, sizeof landing);  // a second get into it: the put still wins
    CHECK(word == (round == 0 ? 1000 + me() : 2000 + (round - 1) * 100 + left));  // nothing lands before the sync
    bsp_sync();
    for (int j = 0; j < p(); ++j) {
      int jleft = (j + p() - 1) % p();
      CHECK(seen[j] == (round == 0 ? 1000 + j : 2000 + (round - 1) * 100 + jleft));
    }
    CHECK(word == 2000 + round * 100 + left);
    CHECK(landing == 2000 + round * 100 + left);
  }
  bsp_pop_reg(&landing);
  bsp_pop_reg(&word);
  bsp_sync();
}

// pid 0 ends while the others synchronise: the job stops naming both sides.
void mismatched_end() {
  bsp_sync();
  if (me() == 0) bsp_end();
  bsp_sync();
}

// The processes ask for different tag sizes: the job stops at the sync.
void tagsize_mismatch() {
  int size = me() == 0 ? 4 : 8;
  bsp_set_tagsize(&size);
  bsp_sync();
}

void registration_mismatch() {
  int a = 0, b = 0;
  bsp_push_reg(&a, sizeof a);
  if (me() == p() - 1) bsp_push_reg(&b, sizeof b);
  bsp_sync();
  bsp_sync();
}

// Sources on 4 KiB pages sent again and again (shm moves such a range onto huge pages on
// its second sending, then its reader copies it straight: --shm-collapse): every process
// hp-puts 6 MiB from a buffer on ordinary pages to its right and gets 6 MiB of its left's
// registered area, for six supersteps, the contents new in each; what lands is exactly
// the superstep's. With `refused`, both buffers are advised MADV_NOHUGEPAGE, which the
// kernel must respect: the transfers stay two copies and still land whole.
void collapsed_sources(bool refused) {
  const std::size_t bytes = 6u << 20, align = 2u << 20, skew = 64;  // mostly whole huge pages, not all
  auto buffer = [&]() {
    void* base = ::mmap(nullptr, bytes + 2 * align, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(base != MAP_FAILED);
    const std::uintptr_t aligned = (reinterpret_cast<std::uintptr_t>(base) + align - 1) & ~(align - 1);
    auto* start = reinterpret_cast<unsigned char*>(aligned + skew);
    if (refused) ::madvise(base, bytes + 2 * align, MADV_NOHUGEPAGE);
    std::memset(start, 0, bytes);
    return start;
  };
  unsigned char* source = buffer();
  unsigned char* area = buffer();     // registered: the right hp-puts into it, the right gets from it
  unsigned char* fetched = buffer();  // this process's gets land here
  bsp_push_reg(area, static_cast<long>(bytes));
  bsp_sync();
  auto data = [](int pid, int step, std::size_t k) {
    return static_cast<unsigned char>(pid * 71 + step * 13 + k * 5 + (k >> 12) + 1);
  };
  const int right = (me() + 1) % p(), left = (me() + p() - 1) % p();
  for (int step = 0; step < 6; ++step) {
    for (std::size_t k = 0; k < bytes; ++k) source[k] = data(me(), step, k);
    bsp_hpput(right, source, area, 0, static_cast<long>(bytes));
    bsp_get(left, area, 0, fetched, static_cast<long>(bytes));
    bsp_sync();
    for (std::size_t k = 0; k < bytes; ++k) {
      // The get read the left's area before this superstep's hp-put landed there: the last one's.
      const unsigned char got = step == 0 ? 0 : data((left + p() - 1) % p(), step - 1, k);
      if (area[k] != data(left, step, k) || fetched[k] != got) {
        bsp_abort("collapsed_sources: pid %d step %d byte %zu: area %d (expected %d), fetched %d (expected %d)\n", me(),
                  step, k, area[k], data(left, step, k), fetched[k], got);
      }
    }
    bsp_sync();  // everyone checked before the next step's transfers
  }
  bsp_pop_reg(area);
  bsp_sync();
}

// Staging memory taken again (shm): a sender that left the sync stages its next
// superstep's data at once, while a reader may still be copying the last one out of the
// same memory. Here pid 1 reads 24 MiB from pid 0 before pid 2's (sources go in pid
// order), while pid 2 stages its next 24 MiB straight away: if pid 2 wrote where pid 1
// has yet to read (staging reused before its read mark said so), pid 1 sees the next
// superstep's bytes. bsp_put, bsp_hpput and bsp_get (the reply staged by its owner) in turn.
void staging_reuse() {
  CHECK(p() >= 3);
  const std::size_t words = (24u << 20) / sizeof(std::uint32_t);
  const long bytes = static_cast<long>(words * sizeof(std::uint32_t));
  // Two sources in turn: the next one is filled before the sync, so a sender's next
  // transfer follows its sync at once.
  std::vector<std::uint32_t> from_0(words, 0), from_2(words, 0),
      sources[2] = {std::vector<std::uint32_t>(words, 0), std::vector<std::uint32_t>(words, 0)};
  for (void* area : {(void*)from_0.data(), (void*)from_2.data(), (void*)sources[0].data(), (void*)sources[1].data()})
    bsp_push_reg(area, bytes);
  bsp_sync();
  auto value = [](int pid, int step, std::size_t k) { return static_cast<std::uint32_t>(pid << 28 ^ step << 20 ^ k); };
  auto fill = [&](int step) {
    std::vector<std::uint32_t>& source = sources[step % 2];
    for (std::size_t k = 0; k < words; ++k) source[k] = value(me(), step, k);
  };
  fill(0);
  for (int step = 0; step < 24; ++step) {
    const int how = step % 3;  // 0 put, 1 hp-put, 2 get
    std::uint32_t* source = sources[step % 2].data();
    if (me() == 0 || me() == 2) {
      void* into = me() == 0 ? from_0.data() : from_2.data();
      if (how == 0) bsp_put(1, source, into, 0, bytes);
      if (how == 1) bsp_hpput(1, source, into, 0, bytes);
      fill(step + 1);
    }
    if (me() == 1 && how == 2) {
      bsp_get(0, source, 0, from_0.data(), bytes);
      bsp_get(2, source, 0, from_2.data(), bytes);
    }
    bsp_sync();
    if (me() != 1) continue;
    for (std::size_t k = 0; k < words; ++k) {
      if (from_0[k] != value(0, step, k) || from_2[k] != value(2, step, k)) {
        const char* call = how == 0 ? "bsp_put" : how == 1 ? "bsp_hpput" : "bsp_get";
        bsp_abort(
            "staging_reuse: pid 1 step %d (%s) word %zu: %#x from pid 0 (expected %#x), %#x from pid 2 "
            "(expected %#x)\n",
            step, call, k, from_0[k], value(0, step, k), from_2[k], value(2, step, k));
      }
    }
  }
  for (void* area : {(void*)sources[1].data(), (void*)sources[0].data(), (void*)from_2.data(), (void*)from_0.data()})
    bsp_pop_reg(area);
  bsp_sync();
}

void bad_pid() {
  int x = 0;
  bsp_push_reg(&x, sizeof x);
  bsp_sync();
  bsp_put(p(), &x, &x, 0, sizeof x);
  bsp_sync();
}

const std::map<std::string, std::function<void()>>& cases() {
  static const std::map<std::string, std::function<void()>> table = {
      {"put_all_to_all", put_all_to_all},
      {"get_before_put", get_before_put},
      {"overlapping_puts", overlapping_puts},
      {"put_copies_source", put_copies_source},
      {"hp_variants", hp_variants},
      {"registration_order_and_pop", registration_order_and_pop},
      {"tagsize_states", tagsize_states},
      {"bsmp_all_to_all", bsmp_all_to_all},
      {"many_supersteps", many_supersteps},
      {"empty_supersteps", empty_supersteps},
      {"quiet_and_busy_supersteps", quiet_and_busy_supersteps},
      {"lines_and_frames", lines_and_frames},
      {"small_supersteps_to_every_peer", small_supersteps_to_every_peer},
      {"large_transfers", large_transfers},
      {"large_gathered", large_gathered},
      {"single_copy_regions", single_copy_regions},
      {"staging_reuse", staging_reuse},
      {"collapsed_sources", [] { collapsed_sources(false); }},
      {"collapsed_sources_refused", [] { collapsed_sources(true); }},
      {"all_to_all_bulk", all_to_all_bulk},
      {"many_small_puts", many_small_puts},
      {"combined_puts", combined_puts},
      {"strided_puts", strided_puts},
      {"strided_put_outside_registration", strided_put_outside_registration},
      {"zero_length", zero_length},
      {"enquiry", enquiry},
      {"communication_time", communication_time},
      {"stdin_to_pid0", stdin_to_pid0},
      {"many_to_one", many_to_one},
      {"large_put_hazards", large_put_hazards},
      {"put_sources_reused", put_sources_reused},
      {"put_sources_shuffled", put_sources_shuffled},
      {"abort_with_message", abort_with_message},
      {"killed_process", killed_process},
      {"killed_mid_superstep", killed_mid_superstep},
      {"slow_process", slow_process},
      {"sync_until_stopped", sync_until_stopped},
      {"staging_writer_stuck", staging_writer_stuck},
      {"staging_writer_dies", staging_writer_dies},
      {"single_copy_reader_stuck", single_copy_reader_stuck},
      {"put_unregistered", put_unregistered},
      {"put_outside_registration", put_outside_registration},
      {"get_outside_registration", get_outside_registration},
      {"registration_mismatch", registration_mismatch},
      {"racing_puts_and_gets", racing_puts_and_gets},
      {"mismatched_end", mismatched_end},
      {"tagsize_mismatch", tagsize_mismatch},
      {"bad_pid", bad_pid},
  };
  return table;
}

}  // namespace

int main(int argc, char** argv) {
  std::string name;
  int procs = 0;  // --procs=P: ask bsp_begin for P (default: what bsp_nprocs offers)
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.rfind("--case=", 0) == 0) name = arg.substr(7);
    if (arg.rfind("--procs=", 0) == 0) procs = std::atoi(arg.c_str() + 8);
    if (arg.rfind("--mb=", 0) == 0) megabytes = std::atoi(arg.c_str() + 5);
  }
  if (name == "call_outside_begin") {
    bsp_sync();  // must be reported, not crash
    return 0;
  }
  auto found = cases().find(name);
  if (found == cases().end()) {
    std::fprintf(stderr, "unknown case '%s'\n", name.c_str());
    return 2;
  }
  available_before_begin = bsp_nprocs();
  bsp_begin(procs > 0 ? procs : available_before_begin);
  found->second();
  bsp_end();
  if (bsp_nprocs() > 0) std::printf("case %s passed\n", name.c_str());
  return 0;
}
