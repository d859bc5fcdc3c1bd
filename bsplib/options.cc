// bsplib/options.cc: the tables of run-time and launcher options, their Markdown and troff (man)
// renderings, and BSP_* environment -> RunOptions.
#include "bsplib/options.h"

#include <fmt/format.h>

#include <cctype>
#include <cstdlib>
#include <stdexcept>

#include "transport/registry.h"

namespace bsp {
namespace {

using Setter = std::function<void(RunOptions&, const std::string&, const std::string&)>;

long number(const std::string& variable, const std::string& text) {
  char* end = nullptr;
  long value = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end) throw std::runtime_error(fmt::format("{}={} is not a whole number", variable, text));
  return value;
}

// A whole number from low to high (or exactly `also`), or a clear error.
long bounded(const std::string& variable, const std::string& text, long low, long high, long also = -1) {
  long value = number(variable, text);
  if ((value < low || value > high) && value != also) {
    throw std::runtime_error(fmt::format("{}={} is out of range: from {} to {}{}", variable, text, low, high,
                                         also >= 0 ? fmt::format(", or {}", also) : ""));
  }
  return value;
}

// Seconds, a decimal number from 0.1 to a day (an optional trailing "s" is allowed).
double seconds(const std::string& variable, const std::string& text) {
  char* end = nullptr;
  double value = std::strtod(text.c_str(), &end);
  if (end && *end == 's') ++end;
  if (text.empty() || !end || *end || !(value >= 0.1 && value <= 86400)) {
    throw std::runtime_error(fmt::format("{}={} must be a time in seconds from 0.1 to 86400", variable, text));
  }
  return value;
}

std::string one_of(const std::string& variable, const std::string& text, std::initializer_list<const char*> choices) {
  for (const char* choice : choices) {
    if (text == choice) return text;
  }
  throw std::runtime_error(fmt::format("{}={} must be one of {}", variable, text, fmt::join(choices, ", ")));
}

// The options the registered transports (and decorators) read, each once, checked
// against its spec here and stored under its key; they follow the table's own rows.
std::vector<OptionSpec> with_transport_options(std::vector<OptionSpec> table) {
  // Kept for the life of the program: the table points into the specs' strings.
  static const std::vector<transport::RegisteredOption> registered = transport::transport_options();
  for (const transport::RegisteredOption& entry : registered) {
    const transport::TransportOption& spec = entry.option;
    if (spec.internal) continue;
    table.push_back({spec.name.c_str(), "transport", spec.default_text.c_str(), spec.help.c_str(),
                     [&spec](RunOptions& o, const std::string& variable, const std::string& v) {
                       spec.check(variable, v);
                       o.transport_options[spec.key()] = v;
                     }});
  }
  return table;
}

}  // namespace

const std::vector<OptionSpec>& option_table() {
  static const std::vector<OptionSpec> table = with_transport_options({
      {"transport", "job", "shm+tcp",
       "messaging layer: shm (shared memory; one host), tcp (kernel TCP streams), udp (datagrams with our "
       "recovery), nic (raw Ethernet frames through AF_PACKET rings; needs CAP_NET_RAW), xdp (nic's frames through "
       "an AF_XDP socket and an XDP program of ours; root; one process per interface queue), or a hybrid shm+tcp, "
       "shm+udp, shm+nic, shm+xdp (shared memory between the processes of one host, the network between hosts). The "
       "default, shm+tcp, is the fastest correct choice for any placement: shm alone on one host; tcp, udp and "
       "nic alone mean exactly that, for comparisons. `bsprun --help` lists what is built in",
       [](RunOptions& o, const std::string&, const std::string& v) { o.transport = v; }},
      {"stats", "job", "0", "1: print each process's packet counters and communication time at the end",
       [](RunOptions& o, const std::string&, const std::string& v) { o.stats = v != "0"; }},
      {"profile", "job", "",
       "record every superstep of every process (computation and sync time, h in bytes and messages, puts, gets, "
       "sends, packets, retransmissions, acks, the call site of bsp_sync) to FILE (a new file, mode 0600; see "
       "--overwrite; %e: the program's name, %t: the transport); `bspprof FILE` draws it",
       [](RunOptions& o, const std::string&, const std::string& v) { o.profile = v; }},
      {"overwrite", "job", "0",
       "1: --profile and --trace replace files already there (each name is unlinked, a symbolic link itself and "
       "never its target, and made anew, mode 0600); 0: an existing file is refused with a message, so a file "
       "or link another user left in a shared directory is never written through",
       [](RunOptions& o, const std::string&, const std::string& v) { o.overwrite = v != "0"; }},
      {"library-level", "engine", "1",
       "Oxford's -flibrary-level: 0 and 1 check puts and gets against the remote registration at the call, 2 only "
       "where they land; argument checks stay on at every level",
       [](RunOptions& o, const std::string& var, const std::string& v) {
         o.library_level = static_cast<int>(bounded(var, v, 0, 2));
       }},
      {"stall-warn", "engine", "10",
       "seconds a process may wait in bsp_sync before the job says whom it waits for (0.1 to 86400)",
       [](RunOptions& o, const std::string& var, const std::string& v) { o.stall_warn_seconds = seconds(var, v); }},
      {"pull-threshold", "engine", "256",
       "bytes from which a put, hp-put or get reply to a peer reached through shm is staged and pulled by the "
       "receiver (two copies) instead of pushed through the ring (four); 0: never pull (0 to 2147483647)",
       [](RunOptions& o, const std::string& var, const std::string& v) {
         o.pull_threshold = bounded(var, v, 0, 2147483647L);
       }},
      {"combine-puts", "engine", "1",
       "1: consecutive bsp_puts into adjacent bytes of one registration on one process travel as one record "
       "(Oxford's -fcombine-puts); 0: one record per put",
       [](RunOptions& o, const std::string&, const std::string& v) { o.combine_puts = v != "0"; }},
      {"pin", "job", "0",
       "1: each process is pinned to a core of its own while its host runs 2 to (usable cores) of the job's "
       "processes (the scheduler then cannot stack two on one core: short supersteps on a loaded machine, but "
       "a pinned process cannot flee a busy core either: slower NAS and bulk copies there); 0: the scheduler "
       "places them (--stats: pin:)",
       [](RunOptions& o, const std::string&, const std::string& v) { o.pin = v != "0"; }},
      {"superstep-lines", "engine", "1",
       "1: a superstep whose traffic to a process reached through shm is at most 52 bytes of records (an empty "
       "one, a small put) travels whole in one shared cache line instead of a frame in its ring; 0: always frames",
       [](RunOptions& o, const std::string&, const std::string& v) { o.superstep_lines = v != "0"; }},
      {"quiet-supersteps", "engine", "auto",
       "a superstep in which no process sends anything, over superstep lines to every peer, waits for the "
       "peers' empty lines alone, without the general driver: 1 always tried; 0 never; auto while every "
       "process on this host has a core of its own (a look for a peer that needs this core only delays it)",
       [](RunOptions& o, const std::string& var, const std::string& v) {
         o.quiet_supersteps = one_of(var, v, {"auto", "0", "1"});
       }},
      {"sync", "engine", "auto",
       "the superstep protocol: dense (an `end` record to every process: one round, p - 1 frames each), sparse "
       "(data only where it goes, acknowledged, then a dissemination barrier: about 2 log2 p frames each), or auto "
       "(sparse from --sync-threshold processes on)",
       [](RunOptions& o, const std::string& var, const std::string& v) {
         o.sync = one_of(var, v, {"dense", "sparse", "auto"});
       }},
      {"sync-threshold", "engine", "16",
       "with --sync=auto, the number of processes from which the sparse protocol runs (1 to 1000000)",
       [](RunOptions& o, const std::string& var, const std::string& v) {
         o.sync_threshold = static_cast<int>(bounded(var, v, 1, 1000000));
       }},
      {"sync-radix", "engine", "2",
       "the radix k of the sparse protocol's dissemination barrier: ceil(log_k p) rounds of k - 1 messages each "
       "(2 to 64; every process of a job must use the same)",
       [](RunOptions& o, const std::string& var, const std::string& v) {
         o.sync_radix = static_cast<int>(bounded(var, v, 2, 64));
       }},
      {"link-timeout", "job", "30",
       "seconds two processes may wait for each other's data before the job stops: their link is cut; also a "
       "receiver's wait for a sender's staged data that does not move (0.1 to 86400)",
       [](RunOptions& o, const std::string& var, const std::string& v) { o.link_timeout_seconds = seconds(var, v); }},
      {"start-timeout", "job", "auto",
       "seconds the job's start may go without a process joining before it stops naming the pids not joined "
       "(0.1 to 86400); auto: 120 + 0.5 per process + 10 per other host, each join restarting the wait",
       [](RunOptions& o, const std::string& var, const std::string& v) {
         o.start_timeout_seconds = v == "auto" ? 0 : seconds(var, v);
       }},
      {"spin-us", "engine", "100, 1000 or 0",
       "microseconds to poll (yielding the core) before blocking when waiting (0 to 1000000); by default 100 while "
       "each of the job's processes on this host has a core, 1000 while up to 4 share one (going on to 5000 while "
       "nothing but the job runs here), 0 beyond",
       [](RunOptions& o, const std::string& var, const std::string& v) {
         o.spin_us = static_cast<int>(bounded(var, v, 0, 1000000));
       }},
      {"slice-us", "engine", "0",
       "scheduler time slice each process asks for (Linux 6.12+; 100 to 100000 microseconds): a process woken "
       "from a wait runs sooner where other tasks share its core; 0 keeps the kernel's",
       [](RunOptions& o, const std::string& var, const std::string& v) {
         o.slice_us = static_cast<int>(bounded(var, v, 100, 100000, 0));
       }},
      {"buffers", "reliable layer", "0",
       "frame buffers in the shared pool of udp and nic: 8 to 65536, or 0 for 8 MiB worth (1024 to 4096)",
       [](RunOptions& o, const std::string& var, const std::string& v) {
         o.buffers = static_cast<std::size_t>(bounded(var, v, 8, 65536, 0));
       }},
      {"ack-policy", "reliable layer", "buffer", "acknowledgements of udp and nic: buffer (paper 001's), every, pupa",
       [](RunOptions& o, const std::string& var, const std::string& v) {
         o.ack_policy = one_of(var, v, {"buffer", "every", "pupa"});
       }},
      {"fault", "reliable layer", "",
       "seeded, repeatable faults on the sending side of udp or nic, e.g. "
       "drop=0.05,dup=0.01,reorder=0.02,corrupt=0.001,seed=7 (tcp refuses)",
       [](RunOptions& o, const std::string&, const std::string& v) { o.fault = v; }},
  });
  return table;
}

std::string environment_variable(const OptionSpec& option) {
  std::string name = "BSP_";
  for (const char* c = option.name; *c; ++c) {
    name += *c == '-' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(*c)));
  }
  return name;
}

std::string options_markdown() {
  std::string table = "| option | environment | layer | default | meaning |\n|---|---|---|---|---|\n";
  for (const OptionSpec& option : option_table()) {
    table += fmt::format("| `--{}=` | `{}` | {} | {} | {} |\n", option.name, environment_variable(option), option.scope,
                         *option.default_value ? option.default_value : "—", option.help);
  }
  return table;
}

const std::vector<LauncherOption>& launcher_option_table() {
  static const std::vector<LauncherOption> table = {
      {"-n P, --nprocs=P",
       "number of processes (also -np, -npes, -nprocs); default, as mpirun's: the cores this "
       "process may run on, or with --hosts/--hostfile the sum of the hosts' slots"},
      {"--hosts=A:4,B:4", "run across hosts: slots per host, filled in order (pids 0-3 on A)"},
      {"--hostfile=FILE", "the hosts as Open MPI's hostfile: lines 'nodeA slots=4 [iface=eth1]', # comments"},
      {"--rsh=CMD", "remote shell that starts bsprun's agent on each host (default 'ssh -x -o BatchMode=yes')"},
      {"--tag-output", "prefix every line a process writes with [pid]"},
      {"--netns=PREFIX", "run process i in network namespace PREFIX<i> (tools/cluster.sh)"},
      {"-h, --help", "print these options and the transports built in (on standard error)"},
      {"--help=markdown", "print the options as the README's table"},
      {"--help=man", "print the options as bsprun(1)'s OPTIONS section (troff)"},
  };
  return table;
}

namespace {

// Text for troff: no request can start a line, backslashes and dashes print as typed, and
// Markdown's `code` is bold.
std::string troff_text(const std::string& text) {
  std::string out;
  bool code = false;
  for (char c : text) {
    if (c == '\\') {
      out += "\\e";
    } else if (c == '-') {
      out += "\\-";
    } else if (c == '`') {
      out += code ? "\\fR" : "\\fB";
      code = !code;
    } else {
      out += c;
    }
  }
  if (code) out += "\\fR";
  if (!out.empty() && (out[0] == '.' || out[0] == '\'')) out.insert(0, "\\&");
  return out;
}

}  // namespace

std::string options_man() {
  std::string man = ".SS \"Launching\"\n";
  for (const LauncherOption& option : launcher_option_table()) {
    man += fmt::format(".TP\n\\fB{}\\fR\n{}\n", troff_text(option.spelling), troff_text(option.help));
  }
  man +=
      ".SS \"Run-time settings\"\n"
      "Each is also read from its environment variable, so a program started without\n"
      ".B bsprun\n"
      "takes the same settings; an option given to\n"
      ".B bsprun\n"
      "overrides the variable.\n";
  for (const OptionSpec& option : option_table()) {
    man += fmt::format(".TP\n\\fB\\-\\-{}=\\fIVALUE\\fR, \\fB{}\\fR\n{}\n[{}{}]\n", troff_text(option.name),
                       environment_variable(option), troff_text(option.help), troff_text(option.scope),
                       *option.default_value ? "; default " + troff_text(option.default_value) : "");
  }
  return man;
}

RunOptions options_from_environment() {
  RunOptions options;
  for (const OptionSpec& option : option_table()) {
    std::string variable = environment_variable(option);
    if (const char* value = std::getenv(variable.c_str()); value && *value) option.set(options, variable, value);
  }
  return options;
}

}  // namespace bsp
