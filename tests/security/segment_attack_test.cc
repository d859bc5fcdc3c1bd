// tests/security/segment_attack_test.cc: the raw-frame transports (xdp, and nic beside it)
// attacked from the segment of an emulated cluster (tools/cluster.sh): 3 processes on 3
// hosts, an attacker in the switch's namespace sending, out of the port toward each
// host, forged frames addressed to the process's MAC with the job's id and pids (so they
// pass xdp's XDP program and nic's filter and reach the reliable layer, whose MAC refuses
// them), malformed and corrupt ones, and replays of genuine frames it captured on the
// switch (refused as duplicates by sequence number). The job must finish unharmed and
// count what it refused. Needs root: skipped otherwise. Outside Bazel's sandbox.
#include <gtest/gtest.h>
#include <unistd.h>

#include <iostream>
#include <string>

#include "tests/run_program.h"
#include "tests/security/harness.h"

namespace bsp::security {
namespace {

using bsp::security::describe;
using bsp::testing::ProgramResult;
using bsp::testing::run_program;
using bsp::testing::stats_total;
using namespace std::chrono_literals;

constexpr double kBoundSeconds = 20;  // a 3-s job under attack, on 2 busy cores
constexpr int kHosts = 3;
const std::string kPrefix = "bq" + std::to_string(::getpid() % 100000);

// eth0's MAC on host `host` ("" if unreadable).
std::string host_mac(int host) {
  ProgramResult link = run_program({"ip", "-n", kPrefix + std::to_string(host), "link", "show", "eth0"}, 10s);
  std::size_t at = link.out.find("link/ether ");
  return at == std::string::npos ? "" : link.out.substr(at + 11, 17);
}

class SegmentAttack : public ::testing::TestWithParam<std::tuple<std::string, Plan, std::string>> {
 protected:
  static void SetUpTestSuite() {
    if (::geteuid() != 0) return;
    ProgramResult up = run_program({"tools/cluster.sh", "up", std::to_string(kHosts), "--prefix", kPrefix}, 60s);
    ready_ = up.exit_code == 0;
    setup_error_ = bsp::testing::describe(up);
  }
  static void TearDownTestSuite() {
    if (::geteuid() == 0) run_program({"tools/cluster.sh", "down", "--prefix", kPrefix}, 60s);
  }
  static bool ready_;
  static std::string setup_error_;
};

bool SegmentAttack::ready_ = false;
std::string SegmentAttack::setup_error_;

TEST_P(SegmentAttack, ChangesNothingAndIsCounted) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root: namespaces, XDP programs, raw sockets";
  if (!ready_) GTEST_SKIP() << "could not build the namespace cluster: " << setup_error_;
  const auto& [transport, plan, counter] = GetParam();
  JobSpec spec;
  spec.transport = transport;
  spec.processes = kHosts;
  spec.plans = {plan};
  spec.bsprun_options = {"--netns=" + kPrefix};
  spec.segment_netns = kPrefix + "sw";
  for (int host = 0; host < kHosts; ++host) {
    spec.segment[host] = {"v" + std::to_string(host), host_mac(host)};
    ASSERT_EQ(spec.segment[host].mac.size(), 17u) << "no MAC for host " << host;
  }
  AttackedRun run = run_attacked(spec);
  std::cout << "[" << transport << " " << plan_name(plan) << "] exit " << run.result.exit_code << " in "
            << run.result.seconds << " s; " << counter << "=" << stats_total(run.result, counter) << "\n"
            << describe(run.reports[0]);
  EXPECT_EQ(harm(run, kBoundSeconds), "") << explain(run);
  const Report& report = run.reports[0];
  EXPECT_EQ(report.count("found") ? report.at("found") : "", "yes") << describe(report);
  EXPECT_GT(number(report, "sent.total"), 0) << "the attacker sent nothing: the case proves nothing\n" << explain(run);
  EXPECT_NE(report.count("uid") ? report.at("uid").find("nobody") : std::string::npos, std::string::npos)
      << "the attacker did not run as nobody\n"
      << describe(report);
  EXPECT_GT(stats_total(run.result, counter), 0)
      << "the attacker's frames do not show as " << counter << " in --stats\n"
      << explain(run);
}

INSTANTIATE_TEST_SUITE_P(XdpAndNic, SegmentAttack,
                         ::testing::Values(std::make_tuple("xdp", Plan::nic_mac_forgery, "foreign"),
                                           std::make_tuple("xdp", Plan::nic_malformed, "malformed"),
                                           std::make_tuple("xdp", Plan::nic_corrupt, "corrupt"),
                                           std::make_tuple("xdp", Plan::nic_replay_captured, "duplicates"),
                                           std::make_tuple("nic", Plan::nic_mac_forgery, "foreign"),
                                           std::make_tuple("nic", Plan::nic_replay_captured, "duplicates")),
                         [](const auto& info) {
                           return std::get<0>(info.param) + "_" + plan_name(std::get<1>(info.param));
                         });

}  // namespace
}  // namespace bsp::security
