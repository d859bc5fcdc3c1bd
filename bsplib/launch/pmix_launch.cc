// bsplib/launch/pmix_launch.cc: the PMIx client calls a job started by srun or mpirun
// needs, through libpmix.so.2 loaded at run time (dlopen; see pmix_launch.h).
#include "bsplib/launch/pmix_launch.h"

#include <dlfcn.h>
#include <fmt/format.h>
#include <pmix.h>

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

#include "bsplib/launch/host_addresses.h"

namespace bsp::launch::pmix {
namespace {

constexpr const char* kLibrary = "libpmix.so.2";
constexpr const char* kContactKey = "bsplib.contact";  // rank 0's coordinator, job id, secret
constexpr int kFenceTimeoutSeconds = 120;              // as the control handshake's wait
constexpr auto kAbortWait = std::chrono::seconds(2);

// The functions we call, typed by the real header.
struct Library {
  decltype(&PMIx_Init) init = nullptr;
  decltype(&PMIx_Finalize) finalize = nullptr;
  decltype(&PMIx_Abort) abort = nullptr;
  decltype(&PMIx_Put) put = nullptr;
  decltype(&PMIx_Commit) commit = nullptr;
  decltype(&PMIx_Fence) fence = nullptr;
  decltype(&PMIx_Get) get = nullptr;
  decltype(&PMIx_Value_destruct) value_destruct = nullptr;
  decltype(&PMIx_Error_string) error_string = nullptr;
};

struct Session {
  std::mutex mutex;
  Library pmix;
  bool loaded = false;
  bool initialized = false;
  pmix_proc_t self{};
  int job_size = 0;
};

Session& session() {
  static Session* state = new Session();  // never destroyed: usable from exit paths
  return *state;
}

template <typename Function>
void resolve(void* handle, Function& function, const char* name) {
  function = reinterpret_cast<Function>(::dlsym(handle, name));
  if (!function) throw std::runtime_error(fmt::format("{} has no {}", kLibrary, name));
}

std::string describe(const Library& pmix, pmix_status_t status) {
  return pmix.error_string ? fmt::format("{} ({})", pmix.error_string(status), status) : std::to_string(status);
}

// Loads the library and connects to the launcher's PMIx server, once. Caller holds mutex.
Session& connected() {
  Session& state = session();
  if (state.initialized) return state;
  if (!state.loaded) {
    // Global: libpmix's own plugins resolve its symbols.
    void* handle = ::dlopen(kLibrary, RTLD_NOW | RTLD_GLOBAL);
    if (!handle) {
      throw std::runtime_error(
          fmt::format("started by a PMIx launcher (PMIX_RANK is set) but cannot load {}: {}", kLibrary, ::dlerror()));
    }
    Library& pmix = state.pmix;
    resolve(handle, pmix.init, "PMIx_Init");
    resolve(handle, pmix.finalize, "PMIx_Finalize");
    resolve(handle, pmix.abort, "PMIx_Abort");
    resolve(handle, pmix.put, "PMIx_Put");
    resolve(handle, pmix.commit, "PMIx_Commit");
    resolve(handle, pmix.fence, "PMIx_Fence");
    resolve(handle, pmix.get, "PMIx_Get");
    resolve(handle, pmix.value_destruct, "PMIx_Value_destruct");
    resolve(handle, pmix.error_string, "PMIx_Error_string");
    state.loaded = true;
  }
  if (pmix_status_t status = state.pmix.init(&state.self, nullptr, 0); status != PMIX_SUCCESS) {
    throw std::runtime_error(fmt::format("PMIx_Init: {}", describe(state.pmix, status)));
  }
  state.initialized = true;
  return state;
}

pmix_proc_t process(const Session& state, pmix_rank_t rank) {
  pmix_proc_t proc{};
  std::memcpy(proc.nspace, state.self.nspace, sizeof proc.nspace);
  proc.rank = rank;
  return proc;
}

// A value returned by PMIx_Get, released with the library's own destructor.
struct Value {
  Value(const Library& library, pmix_value_t* value) : pmix(library), value(value) {}
  ~Value() {
    if (value) {
      pmix.value_destruct(value);
      std::free(value);
    }
  }
  Value(const Value&) = delete;
  Value& operator=(const Value&) = delete;
  const Library& pmix;
  pmix_value_t* value;
};

// Gets key of proc (nullptr when the server does not have it).
std::unique_ptr<Value> get(Session& state, const pmix_proc_t& proc, const char* key) {
  pmix_value_t* value = nullptr;
  pmix_status_t status = state.pmix.get(&proc, key, nullptr, 0, &value);
  if (status != PMIX_SUCCESS) {
    if (value) std::free(value);
    return nullptr;
  }
  return std::make_unique<Value>(state.pmix, value);
}

// A job-level unsigned number (PMIX_JOB_SIZE, PMIX_NUM_NODES); -1 when absent.
long job_number(Session& state, const char* key) {
  std::unique_ptr<Value> found = get(state, process(state, PMIX_RANK_WILDCARD), key);
  if (!found) return -1;
  const pmix_value_t& value = *found->value;
  switch (value.type) {
    case PMIX_UINT32:
      return value.data.uint32;
    case PMIX_UINT64:
      return static_cast<long>(value.data.uint64);
    case PMIX_INT:
      return value.data.integer;
    case PMIX_UINT:
      return value.data.uint;
    case PMIX_SIZE:
      return static_cast<long>(value.data.size);
    case PMIX_UINT16:
      return value.data.uint16;
    case PMIX_INT32:
      return value.data.int32;
    default:
      return -1;
  }
}

void set_info(pmix_info_t& info, const char* key) {
  std::memset(&info, 0, sizeof info);
  std::strncpy(info.key, key, PMIX_MAX_KEYLEN);
}

std::string hex(const auth::Key& key) {
  std::string text;
  for (std::uint8_t byte : key) text += fmt::format("{:02x}", byte);
  return text;
}

// "port;hosts;job id;secret in hex" (hosts are separated by commas).
std::string encode(const Contact& contact) {
  return fmt::format("{};{};{};{}", contact.port, contact.hosts, contact.job_id, hex(contact.secret));
}

Contact decode(const std::string& text) {
  std::vector<std::string> fields;
  for (std::size_t begin = 0;;) {
    std::size_t end = text.find(';', begin);
    fields.push_back(text.substr(begin, end - begin));
    if (end == std::string::npos) break;
    begin = end + 1;
  }
  if (fields.size() != 4 || fields[3].size() != 2 * auth::kKeySize) {
    throw std::runtime_error("rank 0's published contact is malformed");
  }
  Contact contact;
  contact.port = static_cast<unsigned short>(std::strtoul(fields[0].c_str(), nullptr, 10));
  contact.hosts = fields[1];
  contact.job_id = static_cast<std::uint32_t>(std::strtoul(fields[2].c_str(), nullptr, 10));
  for (std::size_t i = 0; i < auth::kKeySize; ++i) {
    contact.secret[i] = static_cast<std::uint8_t>(std::strtoul(fields[3].substr(2 * i, 2).c_str(), nullptr, 16));
  }
  return contact;
}

}  // namespace

bool started_by_pmix() {
  return std::getenv("PMIX_RANK") && std::getenv("PMIX_NAMESPACE") && !std::getenv("BSP_CONTROL");
}

std::string srun_without_pmix() {
  const char* tasks = std::getenv("SLURM_STEP_NUM_TASKS");
  if (std::getenv("PMIX_RANK") || std::getenv("BSP_CONTROL") || !std::getenv("SLURM_PROCID") || !tasks ||
      std::atoi(tasks) < 2) {
    return {};
  }
  return fmt::format("srun started {} tasks without PMIx, so each would be a job of its own: run srun --mpi=pmix",
                     tasks);
}

int environment_rank() {
  const char* rank = std::getenv("PMIX_RANK");
  return rank && *rank ? std::atoi(rank) : 0;
}

int job_size() {
  Session& state = session();
  std::lock_guard lock(state.mutex);
  if (state.job_size > 0) return state.job_size;  // also after finalize (bsp_nprocs after bsp_end)
  connected();
  long size = job_number(state, PMIX_JOB_SIZE);
  if (size < 1)
    throw std::runtime_error("the PMIx launcher does not say how many processes it started (PMIX_JOB_SIZE)");
  state.job_size = static_cast<int>(size);
  return state.job_size;
}

Contact exchange(const std::optional<Contact>& mine) {
  Session& state = session();
  std::lock_guard lock(state.mutex);
  connected();
  Library& pmix = state.pmix;
  if (mine) {
    Contact published = *mine;
    if (job_number(state, PMIX_NUM_NODES) == 1) {
      published.hosts = "127.0.0.1";  // one node: as a job started without a launcher
    } else {
      std::string hosts;
      for (const std::string& address : local_addresses()) hosts += (hosts.empty() ? "" : ",") + address;
      published.hosts = hosts;
    }
    std::string text = encode(published);
    pmix_value_t value{};
    value.type = PMIX_STRING;
    value.data.string = text.data();
    if (pmix_status_t status = pmix.put(PMIX_GLOBAL, kContactKey, &value); status != PMIX_SUCCESS) {
      throw std::runtime_error(fmt::format("PMIx_Put: {}", describe(pmix, status)));
    }
    std::fill(text.begin(), text.end(), '\0');
  }
  if (pmix_status_t status = pmix.commit(); status != PMIX_SUCCESS) {
    throw std::runtime_error(fmt::format("PMIx_Commit: {}", describe(pmix, status)));
  }
  pmix_info_t info[2];
  set_info(info[0], PMIX_COLLECT_DATA);
  info[0].value.type = PMIX_BOOL;
  info[0].value.data.flag = true;
  set_info(info[1], PMIX_TIMEOUT);
  info[1].value.type = PMIX_INT;
  info[1].value.data.integer = kFenceTimeoutSeconds;
  pmix_proc_t everyone = process(state, PMIX_RANK_WILDCARD);
  if (pmix_status_t status = pmix.fence(&everyone, 1, info, 2); status != PMIX_SUCCESS) {
    throw std::runtime_error(
        fmt::format("PMIx_Fence (waiting for every process of the job to start): {}", describe(pmix, status)));
  }
  std::unique_ptr<Value> contact = get(state, process(state, 0), kContactKey);
  if (!contact || contact->value->type != PMIX_STRING || !contact->value->data.string) {
    throw std::runtime_error("rank 0 published no coordinator through PMIx");
  }
  Contact result = decode(contact->value->data.string);
  return result;
}

void finalize() {
  Session& state = session();
  std::lock_guard lock(state.mutex);
  if (!state.initialized) return;
  state.initialized = false;
  state.pmix.finalize(nullptr, 0);
}

void abort_job(int status, const std::string& message) {
  Session& state = session();
  {
    std::lock_guard lock(state.mutex);
    if (!state.initialized) return;
  }
  // PMIx_Abort returns only once the launcher has acted (and kills this process too):
  // wait for it a bounded time in another thread.
  struct Waiter {
    std::mutex mutex;
    std::condition_variable returned;
    bool done = false;
  };
  auto waiter = std::make_shared<Waiter>();
  std::thread([waiter, status, message, abort = state.pmix.abort] {
    abort(status, message.c_str(), nullptr, 0);
    std::lock_guard lock(waiter->mutex);
    waiter->done = true;
    waiter->returned.notify_all();
  }).detach();
  std::unique_lock lock(waiter->mutex);
  waiter->returned.wait_for(lock, kAbortWait, [&] { return waiter->done; });
}

}  // namespace bsp::launch::pmix
