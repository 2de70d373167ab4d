// Which addresses a media URL may not reach (address_policy.h), judged on literals without any
// network: each special-purpose block at its edges, and the IPv6 forms that carry IPv4.
#include <gtest/gtest.h>

#include <netinet/in.h>

#include <cstring>

#include "hub/address_policy.h"

namespace hearth::hub {
namespace {

std::string kind_of(const std::string& literal) {
  const auto address = IpAddress::parse(literal);
  if (!address) return "unparsed";
  return non_public_address_kind(*address);
}

TEST(AddressPolicy, RefusesIpv4SpecialBlocksAtTheirEdges) {
  const std::pair<const char*, const char*> cases[] = {
      {"127.0.0.1", "loopback"},        {"127.255.255.255", "loopback"},
      {"0.0.0.0", "unspecified"},       {"0.1.2.3", "unspecified"},
      {"10.0.0.1", "private"},          {"10.255.255.255", "private"},
      {"172.16.0.0", "private"},        {"172.31.255.255", "private"},
      {"192.168.1.1", "private"},       {"169.254.169.254", "link-local"},
      {"100.64.0.0", "shared (CGNAT)"}, {"100.127.255.255", "shared (CGNAT)"},
      {"224.0.0.1", "multicast"},       {"239.255.255.250", "multicast"},
      {"255.255.255.255", "reserved"},  {"240.0.0.1", "reserved"},
      {"192.0.0.170", "reserved"},      {"198.18.0.1", "reserved"},
  };
  for (const auto& [literal, kind] : cases) EXPECT_EQ(kind_of(literal), kind) << literal;
}

TEST(AddressPolicy, AllowsPublicIpv4JustOutsideTheBlocks) {
  for (const char* literal : {"8.8.8.8", "1.1.1.1", "11.0.0.0", "9.255.255.255", "172.15.255.255",
                              "172.32.0.0", "100.63.255.255", "100.128.0.0", "169.253.255.255",
                              "169.255.0.0", "192.167.255.255", "192.169.0.0", "223.255.255.255",
                              "126.255.255.255", "128.0.0.0", "198.20.0.0", "1.0.0.0"}) {
    EXPECT_EQ(kind_of(literal), "") << literal;
  }
}

TEST(AddressPolicy, RefusesIpv6SpecialBlocks) {
  const std::pair<const char*, const char*> cases[] = {
      {"::1", "loopback"},         {"::", "unspecified"},
      {"fc00::1", "unique local"}, {"fdff:ffff::1", "unique local"},
      {"fe80::1", "link-local"},   {"febf::1", "link-local"},
      {"fec0::1", "site-local"},   {"ff02::1", "multicast"},
      {"2001:db8::1", "reserved"}, {"::127.0.0.1", "reserved"},  // IPv4-compatible, deprecated
      {"64:ff9b:1::1", "private"},
  };
  for (const auto& [literal, kind] : cases) EXPECT_EQ(kind_of(literal), kind) << literal;
}

TEST(AddressPolicy, JudgesIpv6FormsByTheIpv4AddressTheyCarry) {
  EXPECT_EQ(kind_of("::ffff:127.0.0.1"), "IPv4-mapped loopback");
  EXPECT_EQ(kind_of("::ffff:7f00:1"), "IPv4-mapped loopback");
  EXPECT_EQ(kind_of("::ffff:169.254.169.254"), "IPv4-mapped link-local");
  EXPECT_EQ(kind_of("::ffff:10.1.2.3"), "IPv4-mapped private");
  EXPECT_EQ(kind_of("::ffff:0.0.0.0"), "IPv4-mapped unspecified");
  EXPECT_EQ(kind_of("::ffff:0:192.168.0.1"), "IPv4-translated private");
  EXPECT_EQ(kind_of("64:ff9b::10.0.0.1"), "NAT64 private");
  EXPECT_EQ(kind_of("2002:7f00:1::"), "6to4 loopback");
  EXPECT_EQ(kind_of("2002:a9fe:a9fe::1"), "6to4 link-local");
  // The same forms around a public address are public.
  EXPECT_EQ(kind_of("::ffff:8.8.8.8"), "");
  EXPECT_EQ(kind_of("64:ff9b::8.8.8.8"), "");
  EXPECT_EQ(kind_of("2002:808:808::1"), "");
  EXPECT_EQ(kind_of("2606:4700::1111"), "");
  EXPECT_EQ(kind_of("2a00:1450:4001::200e"), "");
}

TEST(AddressPolicy, ParsesOnlyNumericAddresses) {
  EXPECT_FALSE(IpAddress::parse("localhost"));
  EXPECT_FALSE(IpAddress::parse("[::1]"));
  EXPECT_FALSE(IpAddress::parse("2130706433"));  // inet_pton takes dotted quads only
  EXPECT_FALSE(IpAddress::parse(""));
  EXPECT_FALSE(IpAddress::parse(std::string(100, '1')));
  const auto v6 = IpAddress::parse("::ffff:127.0.0.1");
  ASSERT_TRUE(v6);
  EXPECT_TRUE(v6->v6);
  EXPECT_EQ(v6->to_string(), "::ffff:127.0.0.1");
}

TEST(AddressPolicy, ReadsSocketAddresses) {
  sockaddr_in in{};
  in.sin_family = AF_INET;
  const uint8_t metadata[4] = {169, 254, 169, 254};
  std::memcpy(&in.sin_addr, metadata, 4);
  const auto a = IpAddress::from_sockaddr(&in, sizeof(in));
  ASSERT_TRUE(a);
  EXPECT_EQ(a->to_string(), "169.254.169.254");
  EXPECT_EQ(non_public_address_kind(*a), "link-local");

  sockaddr_in6 in6{};
  in6.sin6_family = AF_INET6;
  in6.sin6_addr = in6addr_loopback;
  const auto b = IpAddress::from_sockaddr(&in6, sizeof(in6));
  ASSERT_TRUE(b);
  EXPECT_EQ(non_public_address_kind(*b), "loopback");
  // A length too short for its family is no address.
  EXPECT_FALSE(IpAddress::from_sockaddr(&in6, sizeof(in)));
  sockaddr unknown{};
  unknown.sa_family = AF_UNIX;
  EXPECT_FALSE(IpAddress::from_sockaddr(&unknown, sizeof(unknown)));
}

}  // namespace
}  // namespace hearth::hub
