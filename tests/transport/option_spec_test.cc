// tests/transport/option_spec_test.cc: transport options as declared specs (option_spec.h):
// an empty value is unset, a value out of range is refused naming the option and the range,
// an option a transport did not declare cannot be read, and the registry holds each option
// once with every transport that reads it.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "transport/option_spec.h"
#include "transport/registry.h"
#include "transport/shared_options.h"

namespace bsp::transport {
namespace {

std::string error_of(const TransportOption& spec, const std::string& variable, const std::string& value) {
  try {
    spec.check(variable, value);
  } catch (const std::runtime_error& error) {
    return error.what();
  }
  return "";
}

const std::vector<TransportOption>& specs() {
  static const std::vector<TransportOption> list = {shared_options::mtu(), shared_options::iface(),
                                                    shared_options::connect_timeout_ms(),
                                                    one_of_option("mode", "a", "a or b", {"a", "b"})};
  return list;
}

TEST(OptionSpecTest, EmptyMeansUnset) {
  std::map<std::string, std::string> values = {{"mtu", ""}, {"iface", ""}, {"connect_timeout_ms", ""}};
  TransportOptions options("test", values, specs());
  EXPECT_EQ(options.number("mtu"), std::nullopt);
  EXPECT_EQ(options.number("mtu", 1500), 1500);
  EXPECT_EQ(options.text("iface"), std::nullopt);
  EXPECT_EQ(options.text("iface", "lo"), "lo");
  EXPECT_EQ(options.number("connect-timeout-ms", 60000), 60000);
}

TEST(OptionSpecTest, AbsentMeansUnsetAndValuesAreReadByTheirKey) {
  std::map<std::string, std::string> values = {{"connect_timeout_ms", "5000"}, {"iface", "eth1"}};
  TransportOptions options("test", values, specs());
  EXPECT_EQ(options.number("connect-timeout-ms"), 5000);  // the key is the name with '_' for '-'
  EXPECT_EQ(options.text("iface"), "eth1");
  EXPECT_EQ(options.number("mtu", 9000), 9000);
  EXPECT_EQ(shared_options::connect_timeout_ms().key(), "connect_timeout_ms");
}

TEST(OptionSpecTest, OutOfRangeNamesTheOptionAndTheRange) {
  const TransportOption& mtu = shared_options::mtu();
  EXPECT_EQ(error_of(mtu, "BSP_MTU", "70000"), "BSP_MTU=70000 is out of range: from 64 to 65535");
  EXPECT_EQ(error_of(mtu, "BSP_MTU", "63"), "BSP_MTU=63 is out of range: from 64 to 65535");
  EXPECT_EQ(error_of(mtu, "BSP_MTU", "1500x"), "BSP_MTU=1500x is not a whole number");
  EXPECT_EQ(error_of(mtu, "BSP_MTU", "64"), "");
  EXPECT_EQ(error_of(mtu, "BSP_MTU", "65535"), "");
  EXPECT_EQ(error_of(specs()[3], "BSP_MODE", "c"), "BSP_MODE=c must be one of a, b");
  EXPECT_EQ(error_of(specs()[3], "BSP_MODE", "b"), "");
  EXPECT_EQ(error_of(shared_options::iface(), "BSP_IFACE", "anything"), "");
}

TEST(OptionSpecTest, UndeclaredOptionsCannotBeRead) {
  std::map<std::string, std::string> values = {{"rcvbuf", "65536"}};
  TransportOptions options("test", values, specs());
  try {
    (void)options.number("rcvbuf");
    FAIL() << "an undeclared option was read";
  } catch (const std::logic_error& error) {
    EXPECT_NE(std::string(error.what()).find("test transport: reads option 'rcvbuf'"), std::string::npos)
        << error.what();
  }
  EXPECT_THROW((void)options.text("no-such-option"), std::logic_error);
}

TEST(OptionSpecTest, ANonNumberSetDirectlyNamesTheTransportAndOption) {
  std::map<std::string, std::string> values = {{"mtu", "big"}};
  TransportOptions options("udp", values, specs());
  try {
    (void)options.number("mtu");
    FAIL() << "mtu=big was read as a number";
  } catch (const std::runtime_error& error) {
    EXPECT_STREQ(error.what(), "udp transport: mtu=big is not a whole number");
  }
}

TEST(OptionSpecTest, TheRegistryHoldsEachOptionOnceWithItsReaders) {
  std::vector<RegisteredOption> all = transport_options();
  ASSERT_FALSE(all.empty());
  EXPECT_TRUE(std::is_sorted(all.begin(), all.end(), [](const RegisteredOption& a, const RegisteredOption& b) {
    return a.option.name < b.option.name;
  }));
  auto find = [&](const std::string& name) -> const RegisteredOption* {
    for (const RegisteredOption& entry : all) {
      if (entry.option.name == name) return &entry;
    }
    return nullptr;
  };
  for (std::size_t i = 1; i < all.size(); ++i) EXPECT_NE(all[i - 1].option.name, all[i].option.name);
  // Linked here: tcp, udp and shm. host is shared by tcp and udp, defined once.
  const RegisteredOption* host = find("host");
  ASSERT_NE(host, nullptr);
  EXPECT_EQ(host->read_by, (std::vector<std::string>{"tcp", "udp"}));
  EXPECT_EQ(host->option.help, shared_options::host().help);
  const RegisteredOption* ring = find("shm-ring");
  ASSERT_NE(ring, nullptr);
  EXPECT_EQ(ring->read_by, (std::vector<std::string>{"shm"}));
  EXPECT_EQ(ring->option.kind, TransportOption::Kind::number);
  const RegisteredOption* connections = find("tcp-connections");
  ASSERT_NE(connections, nullptr);
  EXPECT_EQ(connections->option.low, 1);
  // udp's test knobs are declared too, kept out of bsprun's table.
  const RegisteredOption* gso = find("gso");
  ASSERT_NE(gso, nullptr);
  EXPECT_TRUE(gso->option.internal);
}

}  // namespace
}  // namespace bsp::transport
