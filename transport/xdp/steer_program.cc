// transport/xdp/steer_program.cc: load, attach, configure and detach the XDP program.
#include "transport/xdp/steer_program.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <xdp/libxdp.h>

#include <dirent.h>

#include <algorithm>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>

#include "transport/xdp/xdp_steer_object.h"

namespace bsp::transport::xdp {
namespace {

constexpr const char* kReaperVariable = "BSP_XDP_REAPER";
constexpr int kReaperFd = 3;
constexpr const char* kReaperName = "bsp-xdp-reaper";
constexpr unsigned kRunPriority = 40;
constexpr unsigned long long kExiting = 0x4;  // PF_EXITING, in /proc/PID/stat's flags

// Same layout as struct steer_config in xdp_steer.bpf.c.
struct SteerMatch {
  std::uint32_t offset, size, value;
};
struct SteerConfig {
  std::uint32_t active = 0;
  std::uint32_t ether_type = 0;
  std::uint8_t mac[8]{};
  std::uint32_t match_count = 0;
  SteerMatch match[4]{};
  std::uint32_t owner_pid = 0;
  std::uint32_t owner_start = 0;
};

// libxdp's and libbpf's messages: kept (the last ones name why an attach failed) and
// printed only with BSP_XDP_DEBUG set.
thread_local std::string library_messages;
void keep_message(const char* format, va_list arguments) {
  char line[512];
  std::vsnprintf(line, sizeof line, format, arguments);
  if (std::getenv("BSP_XDP_DEBUG")) std::fputs(line, stderr);
  library_messages += line;
  if (library_messages.size() > 4096) library_messages.erase(0, library_messages.size() - 4096);
}
int xdp_print(enum libxdp_print_level level, const char* format, va_list arguments) {
  if (level != LIBXDP_DEBUG || std::getenv("BSP_XDP_DEBUG")) keep_message(format, arguments);
  return 0;
}
int bpf_print(enum libbpf_print_level level, const char* format, va_list arguments) {
  if (level != LIBBPF_DEBUG || std::getenv("BSP_XDP_DEBUG")) keep_message(format, arguments);
  return 0;
}
void quiet_libraries() {
  static bool done = [] {
    // libxdp's dispatcher (several programs on one interface) keeps its state in bpffs;
    // where /sys/fs/bpf is not mounted (a bare VM, a container), libxdp mounts it rather
    // than falling back to one program per interface.
    ::setenv("LIBXDP_BPFFS_AUTOMOUNT", "1", 0);
    libxdp_set_print(xdp_print);
    libbpf_set_print(bpf_print);
    return true;
  }();
  (void)done;
}

std::string last_messages() {
  std::string text = library_messages;
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  if (text.size() > 600) text = "..." + text.substr(text.size() - 600);
  return text;
}

std::string xdp_error(int error) {
  char text[256];
  libxdp_strerror(error, text, sizeof text);
  return text;
}

// Field 22 of /proc/PID/stat: the process's start time, so a reused pid is not mistaken
// for the owner. 0 when the process does not exist or is ending: a zombie not yet reaped,
// or a process still exiting (PF_EXITING in field 9: a SIGKILLed one unpinning its UMEM),
// whose program is as good as orphaned.
std::uint32_t process_start(int pid) {
  std::ifstream stat(fmt::format("/proc/{}/stat", pid));
  std::string text;
  if (!std::getline(stat, text)) return 0;
  std::size_t close = text.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream fields(text.substr(close + 2));
  std::string field;
  for (int index = 3; index <= 22 && fields >> field; ++index) {
    if (index == 3 && (field == "Z" || field == "X")) return 0;
    if (index == 9 && (std::stoull(field) & kExiting) != 0) return 0;
    if (index == 22) return static_cast<std::uint32_t>(std::stoull(field));
  }
  return 0;
}

// The config map of a loaded instance of our program, by its id; -1 if none.
int config_map_of(int program_fd) {
  bpf_prog_info info{};
  std::uint32_t ids[8]{};
  info.nr_map_ids = 8;
  info.map_ids = reinterpret_cast<std::uint64_t>(ids);
  std::uint32_t length = sizeof info;
  if (bpf_obj_get_info_by_fd(program_fd, &info, &length) != 0) return -1;
  for (std::uint32_t i = 0; i < std::min<std::uint32_t>(info.nr_map_ids, 8); ++i) {
    int fd = bpf_map_get_fd_by_id(ids[i]);
    if (fd < 0) continue;
    bpf_map_info map{};
    std::uint32_t map_length = sizeof map;
    if (bpf_obj_get_info_by_fd(fd, &map, &map_length) == 0 && std::strcmp(map.name, "bsp_config") == 0) return fd;
    ::close(fd);
  }
  return -1;
}

// Whether the process that attached this instance is gone.
bool owner_gone(const struct xdp_program* program) {
  int map = config_map_of(xdp_program__fd(program));
  if (map < 0) return false;
  SteerConfig config;
  std::uint32_t key = 0;
  bool found = bpf_map_lookup_elem(map, &key, &config) == 0;
  ::close(map);
  if (!found || config.owner_pid == 0) return false;  // attached a moment ago: owner not yet written
  return process_start(static_cast<int>(config.owner_pid)) != config.owner_start;
}

// The BPF program behind each descriptor of this process (0: not a program), leaving
// out the one reading the list.
std::map<int, std::uint32_t> program_descriptors() {
  std::map<int, std::uint32_t> fds;
  DIR* dir = ::opendir("/proc/self/fd");
  if (!dir) return fds;
  while (const dirent* entry = ::readdir(dir)) {
    int fd = std::atoi(entry->d_name);
    if (entry->d_name[0] == '.' || fd == ::dirfd(dir)) continue;
    std::uint32_t id = 0;
    char target[64] = {};
    std::string link = fmt::format("/proc/self/fd/{}", fd);
    if (::readlink(link.c_str(), target, sizeof target - 1) > 0 && std::strcmp(target, "anon_inode:bpf-prog") == 0) {
      bpf_prog_info info{};
      std::uint32_t length = sizeof info;
      if (bpf_obj_get_info_by_fd(fd, &info, &length) == 0) id = info.id;
    }
    fds[fd] = id;
  }
  ::closedir(dir);
  return fds;
}

// libxdp up to 1.3 leaks a descriptor each time it looks an attached program up by its
// id (xdp_program__detach and xdp_multiprog__get_from_ifindex do): one per job, which a
// process that makes its transport again (or holds several, as tests do) piles up.
// Around such a call: closes the descriptors that now hold one of the programs named
// (ours, or those looked at) and did not hold it before (other threads may have reused
// numbers meanwhile); with a libxdp that closes them itself, there are none.
class LookupLeak {
 public:
  LookupLeak() : before_(program_descriptors()) {}
  void close_new(const std::vector<std::uint32_t>& ids) const {
    for (auto [fd, id] : program_descriptors()) {
      if (id == 0 || std::find(ids.begin(), ids.end(), id) == ids.end()) continue;
      auto was = before_.find(fd);
      if (was == before_.end() || was->second != id) ::close(fd);
    }
  }

 private:
  std::map<int, std::uint32_t> before_;
};

template <typename Visit>
void for_each_of_ours(int ifindex, Visit visit) {
  LookupLeak leak;
  struct xdp_multiprog* multiprog = xdp_multiprog__get_from_ifindex(ifindex);
  if (libxdp_get_error(multiprog) || !multiprog) return;
  std::vector<struct xdp_program*> ours;
  if (xdp_multiprog__is_legacy(multiprog)) {
    struct xdp_program* main = xdp_multiprog__main_prog(multiprog);
    if (main && std::strcmp(xdp_program__name(main), kProgramName) == 0) ours.push_back(main);
  } else {
    for (struct xdp_program* program = xdp_multiprog__next_prog(nullptr, multiprog); program;
         program = xdp_multiprog__next_prog(program, multiprog)) {
      if (std::strcmp(xdp_program__name(program), kProgramName) == 0) ours.push_back(program);
    }
  }
  enum xdp_attach_mode mode = xdp_multiprog__attach_mode(multiprog);
  std::vector<std::uint32_t> ids;
  for (struct xdp_program* program = xdp_multiprog__next_prog(nullptr, multiprog); program;
       program = xdp_multiprog__next_prog(program, multiprog)) {
    ids.push_back(xdp_program__id(program));
  }
  if (struct xdp_program* main = xdp_multiprog__main_prog(multiprog)) ids.push_back(xdp_program__id(main));
  for (struct xdp_program* program : ours) visit(program, mode);
  xdp_multiprog__close(multiprog);
  leak.close_new(ids);
}

// Detaches the program with this id from the interface (the reaper's job).
void detach_by_id(int ifindex, std::uint32_t id, int mode) {
  struct xdp_program* program = xdp_program__from_id(id);
  if (libxdp_get_error(program) || !program) return;
  xdp_program__detach(program, ifindex, static_cast<enum xdp_attach_mode>(mode), 0);
  xdp_program__close(program);
}

}  // namespace

int sweep_stale_programs(int ifindex) {
  quiet_libraries();
  std::vector<std::uint32_t> stale;
  int mode = 0;
  for_each_of_ours(ifindex, [&](struct xdp_program* program, enum xdp_attach_mode attached) {
    if (owner_gone(program)) stale.push_back(xdp_program__id(program));
    mode = attached;
  });
  for (std::uint32_t id : stale) detach_by_id(ifindex, id, mode);
  return static_cast<int>(stale.size());
}

int count_programs(int ifindex) {
  quiet_libraries();
  int count = 0;
  for_each_of_ours(ifindex, [&](struct xdp_program*, enum xdp_attach_mode) { ++count; });
  return count;
}

SteerProgram::SteerProgram(const nic::Interface& interface, const std::string& mode) : interface_(interface) {
  quiet_libraries();
  if (mode != "auto" && mode != "native" && mode != "skb") {
    throw std::runtime_error(fmt::format("xdp transport: xdp-mode={}: want auto, native or skb", mode));
  }
  sweep_stale_programs(interface.index);
  library_messages.clear();
  LIBBPF_OPTS(bpf_object_open_opts, open_options, .object_name = "xdp_steer");
  object_ = bpf_object__open_mem(kSteerObject, kSteerObjectSize, &open_options);
  if (!object_ || libbpf_get_error(object_)) {
    object_ = nullptr;
    throw std::runtime_error(fmt::format("xdp transport: cannot open the embedded XDP program: {}", last_messages()));
  }
  DECLARE_LIBXDP_OPTS(xdp_program_opts, program_options, .obj = object_, .prog_name = kProgramName);
  program_ = xdp_program__create(&program_options);
  if (long error = libxdp_get_error(program_); error || !program_) {
    program_ = nullptr;
    close_program();
    throw std::runtime_error(
        fmt::format("xdp transport: cannot prepare the XDP program: {}", xdp_error(static_cast<int>(error))));
  }
  // Before other programs of the default priority (50), so our frames skip their work;
  // frames we pass go on down the chain (libxdp's default chain action is XDP_PASS).
  xdp_program__set_run_prio(program_, kRunPriority);
  std::vector<std::pair<enum xdp_attach_mode, const char*>> modes;
  if (mode != "skb") modes.push_back({XDP_MODE_NATIVE, "native"});
  if (mode != "native") modes.push_back({XDP_MODE_SKB, "skb"});
  std::string failures;
  bool taken = false;        // the interface carries a program that cannot be chained
  bool no_chaining = false;  // libxdp could not load its dispatcher here
  bool ext_refused = false;  // ... because the kernel refused its freplace (extension) programs
  bool denied = false;       // no privilege
  bool unsupported = false;  // the driver has no such mode
  for (auto [attach_mode, name] : modes) {
    library_messages.clear();
    int error = xdp_program__attach(program_, interface.index, attach_mode, 0);
    if (error == 0) {
      mode_ = name;
      attach_mode_ = attach_mode;
      break;
    }
    std::string messages = library_messages;
    taken = taken || error == -EEXIST || error == -EBUSY || messages.find("already loaded") != std::string::npos ||
            messages.find("not using a dispatcher") != std::string::npos;
    no_chaining = no_chaining || messages.find("Falling back to loading single prog") != std::string::npos ||
                  messages.find("not using a dispatcher") != std::string::npos;
    ext_refused = ext_refused ||
                  messages.find("Compatibility check for dispatcher program failed: Operation not permitted") !=
                      std::string::npos;
    failures += fmt::format("{}{} mode: {}", failures.empty() ? "" : "; ", name, xdp_error(error));
    unsupported = unsupported || error == -EOPNOTSUPP;
    if (error == -EPERM || error == -EACCES) {
      denied = true;
      break;
    }
  }
  if (mode_.empty()) {
    close_program();
    std::string why;
    if (taken) {
      why = fmt::format(
          "{} already carries an XDP program (another xdp process on this host and interface, of this job or "
          "another){}. The xdp transport runs one process per interface here: use --transport=nic or shm+nic, "
          "or xdp with one process per host",
          interface.name,
          !no_chaining ? ""
          : ext_refused
              ? ", and programs cannot share it: libxdp's dispatcher, which chains them, could not be loaded (the "
                "kernel refused its freplace programs with EPERM, as a kernel in lockdown does: see "
                "/sys/kernel/security/lockdown; BSP_XDP_DEBUG=1 shows libxdp's words)"
              : ", and programs cannot share it: libxdp's dispatcher, which chains them, could not be loaded (it "
                "needs freplace programs and a mounted bpffs; BSP_XDP_DEBUG=1 shows libxdp's words)");
    } else if (denied) {
      why =
          "Attaching XDP programs needs root (CAP_NET_ADMIN, and CAP_BPF or CAP_SYS_ADMIN): use --transport=udp, "
          "which needs no privileges, or --transport=nic (raw frames through AF_PACKET) with CAP_NET_RAW";
    } else if (mode == "native" && unsupported) {
      why = fmt::format("The driver of {} cannot run XDP programs itself: use --xdp-mode=auto (or skb, generic XDP)",
                        interface.name);
    } else {
      why =
          "The driver or the kernel refused the program (BSP_XDP_DEBUG=1 shows libxdp's words): use "
          "--transport=nic (raw frames through AF_PACKET) instead";
    }
    throw std::runtime_error(
        fmt::format("xdp transport: cannot attach the XDP program to {}: {}. {}", interface.name, failures, why));
  }
  id_ = xdp_program__id(program_);
  struct bpf_object* loaded = xdp_program__bpf_obj(program_);
  socket_map_fd_ = bpf_object__find_map_fd_by_name(loaded, "bsp_xsks");
  config_map_fd_ = bpf_object__find_map_fd_by_name(loaded, "bsp_config");
  if (socket_map_fd_ < 0 || config_map_fd_ < 0) {
    xdp_program__detach(program_, interface.index, static_cast<enum xdp_attach_mode>(attach_mode_), 0);
    close_program();
    throw std::runtime_error("xdp transport: the XDP program's maps are missing");
  }
  // The owner at once (steering still off), so a sweep can judge this instance even if
  // this process dies before steer().
  SteerConfig owner;
  owner.owner_pid = static_cast<std::uint32_t>(::getpid());
  owner.owner_start = process_start(::getpid());
  std::uint32_t key = 0;
  bpf_map_update_elem(config_map_fd_, &key, &owner, BPF_ANY);
  start_reaper();
}

// libxdp leaves an object it was handed (rather than opened) to its owner: its maps,
// program and BTF stay open until bpf_object__close.
void SteerProgram::close_program() {
  if (program_) xdp_program__close(program_);
  program_ = nullptr;
  if (object_) bpf_object__close(object_);
  object_ = nullptr;
}

SteerProgram::~SteerProgram() {
  if (!program_) return;
  LookupLeak leak;
  xdp_program__detach(program_, interface_.index, static_cast<enum xdp_attach_mode>(attach_mode_), 0);
  leak.close_new({id_});
  close_program();
  if (reaper_pipe_ >= 0) {
    char done = 'd';  // detached: the reaper has nothing to do
    (void)!::write(reaper_pipe_, &done, 1);
    ::close(reaper_pipe_);
  }
}

void SteerProgram::steer(const Steering& steering) {
  if (steering.fields.size() > 4) throw std::runtime_error("xdp transport: more than 4 frame fields to match");
  SteerConfig config;
  config.active = 1;
  config.ether_type = steering.ether_type;
  std::memcpy(config.mac, steering.mac.data(), 6);
  config.match_count = static_cast<std::uint32_t>(steering.fields.size());
  for (std::size_t i = 0; i < steering.fields.size(); ++i) {
    const FrameMatch& field = steering.fields[i];
    if (field.size != 1 && field.size != 2 && field.size != 4) {
      throw std::runtime_error(fmt::format("xdp transport: a frame filter field of {} bytes", field.size));
    }
    std::uint32_t mask = field.size >= 4 ? 0xffffffffu : ((1u << (field.size * 8)) - 1);
    config.match[i] = {static_cast<std::uint32_t>(field.offset), static_cast<std::uint32_t>(field.size),
                       field.value & mask};
  }
  config.owner_pid = static_cast<std::uint32_t>(::getpid());
  config.owner_start = process_start(::getpid());
  std::uint32_t key = 0;
  if (bpf_map_update_elem(config_map_fd_, &key, &config, BPF_ANY) != 0) {
    throw std::runtime_error(
        fmt::format("xdp transport: configuring the XDP program on {}: {}", interface_.name, std::strerror(errno)));
  }
}

// A process of its own (double fork: not our child, in a session of its own, so a
// SIGKILL to the job's process group does not reach it) that holds the read end of a
// pipe; when this process ends without saying it detached (a crash, SIGKILL), the pipe
// reads EOF and the reaper detaches the program by id. It is this binary executed anew
// (kReaper below takes over before main) with every descriptor but the pipe closed, so
// it holds no socket or mapping of ours: peers and launchers see this process's sockets
// close when it dies, and an AF_XDP socket of another thread (several transports in one
// process) leaves its interface queue free when closed.
void SteerProgram::start_reaper() {
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) return;  // the sweep at the next attach remains
  // Closed in the reaper with everything else it inherited: EOF on it tells this process
  // that no copy of its descriptors is left there (other threads' sockets included).
  int inherited[2];
  if (::pipe2(inherited, O_CLOEXEC) != 0) {
    ::close(pipe_fds[0]);
    ::close(pipe_fds[1]);
    return;
  }
  std::string spec = fmt::format("{}={},{},{}", kReaperVariable, interface_.index, id_, attach_mode_);
  char name[] = "bsp-xdp-reaper";  // kReaperName
  char* argv[] = {name, nullptr};
  char* envp[] = {spec.data(), nullptr};
  pid_t child = ::fork();
  if (child < 0) {
    for (int fd : {pipe_fds[0], pipe_fds[1], inherited[0], inherited[1]}) ::close(fd);
    return;
  }
  if (child == 0) {  // only async-signal-safe calls until execve
    ::setsid();
    if (::fork() != 0) ::_exit(0);
    int null = ::open("/dev/null", O_RDWR);
    ::dup2(null, 0);
    ::dup2(null, 1);
    ::dup2(null, 2);
    if (pipe_fds[0] == kReaperFd) {
      ::fcntl(kReaperFd, F_SETFD, 0);  // dup2 onto itself would keep close-on-exec
    } else {
      ::dup2(pipe_fds[0], kReaperFd);  // dup2 clears close-on-exec
    }
    // Descriptors opened without close-on-exec (by libraries, by the program) stay ours.
    if (::syscall(SYS_close_range, kReaperFd + 1, ~0u, 0) != 0) {
      for (int fd = kReaperFd + 1; fd < 65536; ++fd) ::close(fd);
    }
    ::execve("/proc/self/exe", argv, envp);
    ::_exit(127);
  }
  ::close(pipe_fds[0]);
  ::close(inherited[1]);
  reaper_pipe_ = pipe_fds[1];
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  char byte;
  while (::read(inherited[0], &byte, 1) < 0 && errno == EINTR) {
  }
  ::close(inherited[0]);
}

namespace {

// The reaper's life: wait for the pipe, then detach unless told it was done.
[[noreturn]] void run_reaper(const char* spec) {
  int ifindex = 0, mode = 0;
  unsigned id = 0;
  if (std::sscanf(spec, "%d,%u,%d", &ifindex, &id, &mode) != 3) ::_exit(2);
  ::prctl(PR_SET_NAME, kReaperName);  // for ps and tests (executed as /proc/self/exe: "exe")
  ::signal(SIGINT, SIG_IGN);
  ::signal(SIGTERM, SIG_IGN);
  ::signal(SIGHUP, SIG_IGN);
  char said = 0;
  ssize_t got;
  do {
    got = ::read(kReaperFd, &said, 1);
  } while (got < 0 && errno == EINTR);
  if (got <= 0) {
    quiet_libraries();
    detach_by_id(ifindex, id, mode);
  }
  ::_exit(0);
}

const bool kReaper = [] {
  if (const char* spec = std::getenv(kReaperVariable)) run_reaper(spec);
  return false;
}();

}  // namespace

}  // namespace bsp::transport::xdp
