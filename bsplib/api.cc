// bsplib/api.cc: the C functions of bsp.h, forwarding to the runtime and its engine.
// Every call made outside bsp_begin ... bsp_end is reported by name and stops the job.
// With --profile, the superstep profiler's recorder (profile/profile_recorder.h) is told
// of every put, get and send, and of every sync: its start, end and call site.
#include <fmt/format.h>

#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <string>

#include "bsplib/bsp.h"
#include "bsplib/profile/profile_recorder.h"
#include "bsplib/runtime.h"

using bsp::Runtime;

namespace {
bsp::Engine& engine(const char* call) { return Runtime::instance().engine(call); }
}  // namespace

extern "C" {

void bsp_begin(bsp_pid_t maxprocs) { Runtime::instance().begin(maxprocs); }
void bsp_end(void) {
  // The runtime ends the superstep (and closes the profile) after the engine's last sync.
  if (auto* recorder = bsp::profile::active()) recorder->sync_started(__builtin_return_address(0), true);
  Runtime::instance().end();
}
void bsp_init(void (*spmd)(void), int argc, char** argv) { Runtime::instance().init(spmd, argc, argv); }

bsp_pid_t bsp_pid(void) { return engine("bsp_pid").pid(); }

bsp_pid_t bsp_nprocs(void) {
  Runtime& runtime = Runtime::instance();
  return runtime.running() ? runtime.engine("bsp_nprocs").nprocs() : runtime.nprocs_available();
}

double bsp_time(void) {
  engine("bsp_time");
  return Runtime::instance().seconds_since_begin();
}

double bsp_dtime(void) {
  static double previous = 0;
  double now = bsp_time();
  double gap = now - previous;
  previous = now;
  return gap;
}

void bsp_abort(const char* format, ...) {
  char text[4096];
  va_list args;
  va_start(args, format);
  std::vsnprintf(text, sizeof text, format, args);
  va_end(args);
  Runtime& runtime = Runtime::instance();
  if (!runtime.running()) {
    std::fprintf(stderr, "%s\n", text);
    std::fflush(stdout);
    std::exit(1);
  }
  runtime.abort_job(text);
}

void bsp_sync(void) {
  bsp::Engine& e = engine("bsp_sync");
  auto* recorder = bsp::profile::active();
  if (!recorder) {
    e.sync();
    return;
  }
  recorder->sync_started(__builtin_return_address(0), false);
  e.sync();
  recorder->sync_ended();
}

void bsp_push_reg(const void* ident, bsp_size_t size) { engine("bsp_push_reg").push_reg(ident, size); }
void bsp_pop_reg(const void* ident) { engine("bsp_pop_reg").pop_reg(ident); }

void bsp_put(bsp_pid_t pid, const void* src, void* dst, bsp_size_t offset, bsp_size_t nbytes) {
  engine("bsp_put").put(pid, src, dst, offset, nbytes, true);
  if (auto* recorder = bsp::profile::active()) [[unlikely]]
    recorder->count_put(pid, nbytes);
}
void bsp_hpput(bsp_pid_t pid, const void* src, void* dst, bsp_size_t offset, bsp_size_t nbytes) {
  engine("bsp_hpput").put(pid, src, dst, offset, nbytes, false);
  if (auto* recorder = bsp::profile::active()) [[unlikely]]
    recorder->count_put(pid, nbytes);
}
void bsp_get(bsp_pid_t pid, const void* src, bsp_size_t offset, void* dst, bsp_size_t nbytes) {
  engine("bsp_get").get(pid, src, offset, dst, nbytes);
  if (auto* recorder = bsp::profile::active()) [[unlikely]]
    recorder->count_get(pid, nbytes);
}
void bsp_hpget(bsp_pid_t pid, const void* src, bsp_size_t offset, void* dst, bsp_size_t nbytes) {
  engine("bsp_hpget").get(pid, src, offset, dst, nbytes);
  if (auto* recorder = bsp::profile::active()) [[unlikely]]
    recorder->count_get(pid, nbytes);
}

void bsp_set_tagsize(bsp_size_t* tag_nbytes) {
  bsp::Engine& e = engine("bsp_set_tagsize");
  int requested = tag_nbytes ? *tag_nbytes : 0;
  e.set_tagsize(tag_nbytes);
  if (auto* recorder = bsp::profile::active()) [[unlikely]]
    recorder->set_tagsize(requested);
}
void bsp_send(bsp_pid_t pid, const void* tag, const void* payload, bsp_size_t payload_nbytes) {
  engine("bsp_send").send(pid, tag, payload, payload_nbytes);
  if (auto* recorder = bsp::profile::active()) [[unlikely]]
    recorder->count_send(pid, payload_nbytes);
}
void bsp_qsize(bsp_nprocs_t* nmessages, bsp_size_t* accum_nbytes) {
  engine("bsp_qsize").qsize(nmessages, accum_nbytes);
}
void bsp_get_tag(bsp_size_t* status, void* tag) { engine("bsp_get_tag").get_tag(status, tag); }
void bsp_move(void* payload, bsp_size_t reception_nbytes) { engine("bsp_move").move(payload, reception_nbytes); }
bsp_size_t bsp_hpmove(void** tag_ptr, void** payload_ptr) { return engine("bsp_hpmove").hpmove(tag_ptr, payload_ptr); }

void bsp_pushregister(const void* ident, bsp_size_t size) { bsp_push_reg(ident, size); }
void bsp_popregister(const void* ident) { bsp_pop_reg(ident); }
void bsp_set_tag_size(bsp_size_t* tag_nbytes) { bsp_set_tagsize(tag_nbytes); }
void bsp_bsmp_info(bsp_nprocs_t* nmessages, bsp_size_t* accum_nbytes) { bsp_qsize(nmessages, accum_nbytes); }

}  // extern "C"
