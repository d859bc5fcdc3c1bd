// tests/launch/host_list_test.cc: --hosts lists, Open MPI hostfiles and placement by slots
// (bsplib/launch/host_list.h), including what a careless or hostile file contains.
#include "bsplib/launch/host_list.h"

#include <gtest/gtest.h>

#include <stdexcept>

namespace {

using bsp::launch::Host;
using bsp::launch::parse_host_list;
using bsp::launch::parse_hostfile_text;
using bsp::launch::place;

TEST(HostList, NamesWithSlots) {
  std::vector<Host> hosts = parse_host_list("nodeA:4,nodeB:2,10.0.0.3");
  ASSERT_EQ(hosts.size(), 3u);
  EXPECT_EQ(hosts[0].name, "nodeA");
  EXPECT_EQ(hosts[0].slots, 4);
  EXPECT_EQ(hosts[1].slots, 2);
  EXPECT_EQ(hosts[2].name, "10.0.0.3");
  EXPECT_EQ(hosts[2].slots, 1);
}

TEST(HostList, RepeatedHostAddsSlots) {
  std::vector<Host> hosts = parse_host_list("a,b,a");  // Open MPI's --host a,a: two slots
  ASSERT_EQ(hosts.size(), 2u);
  EXPECT_EQ(hosts[0].slots, 2);
}

TEST(HostList, RefusesBadSlotsAndNames) {
  EXPECT_THROW(parse_host_list("a:0"), std::invalid_argument);
  EXPECT_THROW(parse_host_list("a:x"), std::invalid_argument);
  EXPECT_THROW(parse_host_list("a:99999999"), std::invalid_argument);
  EXPECT_THROW(parse_host_list(""), std::invalid_argument);
  EXPECT_THROW(parse_host_list("a;rm -rf /:2"), std::invalid_argument);  // goes to the remote shell
  EXPECT_THROW(parse_host_list("-oProxyCommand=x"), std::invalid_argument);
  EXPECT_THROW(parse_host_list("-v"), std::invalid_argument);  // an option to ssh, not a host
}

TEST(Hostfile, OpenMpiFormat) {
  std::vector<Host> hosts = parse_hostfile_text(
      "# the cluster\n\nnodeA slots=4\n  nodeB slots=2 max_slots=8   # a comment\nnodeC\nnodeD slots=1 iface=eth1\n",
      "hosts");
  ASSERT_EQ(hosts.size(), 4u);
  EXPECT_EQ(hosts[0].slots, 4);
  EXPECT_EQ(hosts[1].name, "nodeB");
  EXPECT_EQ(hosts[1].slots, 2);
  EXPECT_EQ(hosts[2].slots, 1);
  EXPECT_EQ(hosts[3].iface, "eth1");
}

TEST(Hostfile, ErrorsNameFileAndLine) {
  try {
    parse_hostfile_text("nodeA slots=4\nnodeB slots=many\n", "my.hosts");
    FAIL() << "accepted slots=many";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("my.hosts:2"), std::string::npos) << error.what();
  }
  EXPECT_THROW(parse_hostfile_text("nodeA colour=blue\n", "f"), std::invalid_argument);
  EXPECT_THROW(parse_hostfile_text("# nothing\n\n", "f"), std::invalid_argument);
}

TEST(Placement, FillsSlotsInOrder) {
  auto placements = place(6, parse_host_list("a:4,b:4"));
  ASSERT_EQ(placements.size(), 2u);
  EXPECT_EQ(placements[0].pids, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(placements[1].pids, (std::vector<int>{4, 5}));
  EXPECT_EQ(place(2, parse_host_list("a:4,b:4")).size(), 1u);  // unused hosts get nothing
}

TEST(Placement, MoreProcessesThanSlotsIsAnError) {
  try {
    place(9, parse_host_list("a:4,b:4"));
    FAIL() << "placed 9 processes on 8 slots";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("8 slots"), std::string::npos) << error.what();
  }
}

}  // namespace
