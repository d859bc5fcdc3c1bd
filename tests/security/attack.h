// tests/security/attack.h: an attacker outside a BSPlib job, for the security tests.
//
// An Attacker is a forked child process. It finds the job it is aimed at through /proc
// (the processes whose initial environment holds a tag the test put there: their
// BSP_PID, BSP_CONTROL, BSP_JOB_ID, and the udp/tcp ports of their sockets), which it
// may read because it starts as the test's own user. Then it drops privileges: as root
// it becomes `nobody` (keeping, for the nic plans, only an AF_PACKET socket it opened
// before), so what it sends is what any other local user could send. It attacks until
// stop() (SIGTERM), never after a process of the job has exited (its ports might be
// reused by another job), and reports what it did and saw as key=value pairs.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace bsp::security {

// One process of the job, as /proc shows it.
struct VictimProcess {
  pid_t os_pid = -1;
  int pid = -1;  // BSP_PID
  std::vector<std::uint16_t> udp_ports;
  std::vector<std::uint16_t> tcp_listen_ports;
  std::vector<std::string> descriptors;  // readlink of every /proc/<pid>/fd/<n>
  std::vector<int> descriptor_numbers;
};

struct JobView {
  std::string control;  // BSP_CONTROL: the coordinator's host:port
  std::uint32_t job_id = 0;
  std::map<int, VictimProcess> processes;  // by BSP_PID
};

// The job whose processes carry `tag` ("NAME=VALUE") in their initial environment.
JobView scan_job(const std::string& tag);

enum class Plan {
  // Data plane, once every process has passed bsp_begin (--ready-dir files):
  udp_mac_forgery,  // data/ack/nack/probe frames with the job's id and pids, correct CRC, wrong MAC:
                    // random MACs, replays of frames sealed with a random key, sequence numbers
                    // near 10^6, forged acks with absurd reports, impostor sources
  udp_malformed,    // truncated frames, absurd length fields, oversized datagrams, garbage
  udp_corrupt,      // frames whose check (CRC32C, low 16 bits) does not match
  nic_mac_forgery,  // the same three as raw Ethernet frames (the job's data EtherTypes) on lo
  nic_malformed,
  nic_corrupt,
  // Genuine frames of the job captured on lo (an AF_PACKET socket opened as root, kept
  // after dropping to nobody: what a host on the segment sees) and sent again, at once
  // and up to ~1 s later, udp ones from the attacker's own address. Their MACs are
  // right: only sequence numbers (and, on udp, the sender's address) refuse them.
  udp_replay_captured,
  nic_replay_captured,
  // Control plane, once every process has passed bsp_begin: sessions to the coordinator
  // that never answer the challenge, send `abort` unproven, a wrong proof, a short proof,
  // a header announcing 16 MiB, junk, a forged hello; and 16 silent sessions at once.
  control,
  // tcp's data-plane set-up (run the victim with --stagger-ms): a connection to every
  // process's listening data port, made as soon as the port appears (while the process
  // waits for its peers), that sends
  tcp_setup_junk,          // 75 bytes of junk
  tcp_setup_silent,        // nothing
  tcp_setup_forged_hello,  // the hello of the highest pid, which comes last: after the
                           // acceptor's challenge {pid, nonce, made-up MAC}; with no
                           // challenge (unauthenticated set-up) {job id, pid}
  tcp_setup_big_header,    // a 5-byte control header announcing 16 MiB
  tcp_setup_flood,         // nothing, on 256 connections at once and 8 more every 10 ms
  // tcp's data ports during the run (connections are made on first use, so every process
  // listens until it ends): once every process has passed bsp_begin, all five tcp_setup_*
  // attacks at once on every process's listening port.
  tcp_running,
  // Connection churn and floods, from the moment the job's processes exist (before
  // bsp_begin: run the victim with --stagger-ms, so later pids connect while it goes on):
  control_churn,                  // connect to the coordinator and close, as fast as one process can
  control_idle_flood,             // hold as many silent sessions as the attacker's descriptors allow,
                                  // opening a new one whenever the coordinator closes one
  control_idle_flood_other_host,  // the same from source address 127.0.0.2: another
                                  // host, as the coordinator sees it
  tcp_churn,                      // connect and close on every process's listening data port, as fast
                                  // as one process can, until the job ends
  // Not an attack: the job's own user looks at the processes' descriptors before and after
  // bsp_begin (run the victim with --stagger-ms), and reads the secret while it is still
  // in a descriptor, so the test can look for it in files; also the descriptor's mode,
  // and whether bsprun (the processes' parent) still holds it once they have started.
  observe_secret,
};

const char* plan_name(Plan plan);

// The attacks on one listening data port, in the order tcp_running makes them.
inline constexpr Plan kListenerAttacks[] = {Plan::tcp_setup_junk, Plan::tcp_setup_silent, Plan::tcp_setup_forged_hello,
                                            Plan::tcp_setup_big_header, Plan::tcp_setup_flood};

// The nic plans on a switched segment instead of lo (an emulated cluster's bridge,
// tools/cluster.sh): the attacker enters the switch's network namespace (as root, before
// dropping privileges), captures on every port, and sends a frame to pid p out of the
// port toward p's host, addressed to p's interface MAC with the off-lo EtherType: what a
// host on the segment can do.
struct SegmentPort {
  std::string port;  // the switch's interface toward the process's host, e.g. "v1"
  std::string mac;   // the process's interface MAC, "aa:bb:cc:dd:ee:ff"
};

struct AttackOptions {
  Plan plan = Plan::control;
  std::string segment_netns;           // "" : lo
  std::map<int, SegmentPort> segment;  // by BSP_PID
  std::string tag;                     // NAME=VALUE in the job's environment
  std::string ready_dir;               // where the victim writes ready.<pid>
  int processes = 0;                   // the job's size
  double find_seconds = 30;            // give up looking for the job after this
  double hold_seconds = 15;            // tcp_setup_*: how long to hold the connections at most
};

using Report = std::map<std::string, std::string>;

class Attacker {
 public:
  explicit Attacker(const AttackOptions& options);
  ~Attacker();
  Attacker(const Attacker&) = delete;
  Attacker& operator=(const Attacker&) = delete;
  // Stops the attacker and returns its report (empty if it died without one).
  Report stop();

 private:
  pid_t child_ = -1;
  int report_fd_ = -1;
  bool stopped_ = false;
  Report report_;
};

// "key=value" lines, for failure messages.
std::string describe(const Report& report);
// report[key] as a number (-1 when missing).
double number(const Report& report, const std::string& key);

}  // namespace bsp::security
