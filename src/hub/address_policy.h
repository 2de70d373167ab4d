// Which IP addresses count as the server's own network. A client that names a media URL must
// not make the server connect to its loopback, its LAN, a cloud metadata service or anything
// else that is not on the public internet (server-side request forgery), so media fetches ask
// this before every connection they open.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace hearth::hub {

struct IpAddress {
  bool v6 = false;
  // IPv4 in bytes[0..3], IPv6 in all 16 (network order).
  std::array<uint8_t, 16> bytes{};

  // A numeric address as inet_pton reads it (dotted quad or IPv6 text, no brackets).
  static std::optional<IpAddress> parse(std::string_view text);
  // From a struct sockaddr of family AF_INET or AF_INET6 (`length` its size in bytes).
  static std::optional<IpAddress> from_sockaddr(const void* sockaddr, size_t length);
  std::string to_string() const;
};

// "" when `address` is a public unicast address; otherwise what it is: "loopback", "private",
// "link-local", "unspecified", "multicast", "shared (CGNAT)", "reserved", "site-local",
// "unique local". IPv6 forms that carry an IPv4 address (mapped ::ffff:0:0/96, compatible
// ::/96, SIIT ::ffff:0:0:0/96, NAT64 64:ff9b::/96, 6to4 2002::/16) are judged by that IPv4
// address, its kind preceded by the form ("IPv4-mapped loopback").
std::string non_public_address_kind(const IpAddress& address);

}  // namespace hearth::hub
