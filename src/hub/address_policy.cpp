#include "hub/address_policy.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cstring>

namespace hearth::hub {

namespace {

// An IPv4 prefix `bits` long that is not public, and what it is (RFC 6890's special-purpose
// registry, the entries no public host can have).
struct V4Block {
  uint32_t prefix;
  int bits;
  const char* kind;
};

constexpr uint32_t v4(uint32_t a, uint32_t b, uint32_t c, uint32_t d) {
  return (a << 24) | (b << 16) | (c << 8) | d;
}

constexpr V4Block kV4Blocks[] = {
    {v4(0, 0, 0, 0), 8, "unspecified"},  // "this network"; 0.0.0.0 reaches the local host
    {v4(10, 0, 0, 0), 8, "private"},
    {v4(100, 64, 0, 0), 10, "shared (CGNAT)"},
    {v4(127, 0, 0, 0), 8, "loopback"},
    {v4(169, 254, 0, 0), 16, "link-local"},  // 169.254.169.254: cloud metadata services
    {v4(172, 16, 0, 0), 12, "private"},
    {v4(192, 0, 0, 0), 24, "reserved"},  // IETF protocol assignments
    {v4(192, 0, 2, 0), 24, "reserved"},  // documentation
    {v4(192, 168, 0, 0), 16, "private"},
    {v4(198, 18, 0, 0), 15, "reserved"},  // benchmarking
    {v4(198, 51, 100, 0), 24, "reserved"},
    {v4(203, 0, 113, 0), 24, "reserved"},
    {v4(224, 0, 0, 0), 4, "multicast"},
    {v4(240, 0, 0, 0), 4, "reserved"},  // and the broadcast 255.255.255.255
};

std::string v4_kind(const uint8_t* b) {
  const uint32_t value = v4(b[0], b[1], b[2], b[3]);
  for (const V4Block& block : kV4Blocks) {
    const uint32_t mask = ~uint32_t{0} << (32 - block.bits);
    if ((value & mask) == block.prefix) return block.kind;
  }
  return {};
}

bool starts_with(const std::array<uint8_t, 16>& bytes, std::initializer_list<uint8_t> prefix) {
  return std::memcmp(bytes.data(), prefix.begin(), prefix.size()) == 0;
}

// An IPv6 form that carries an IPv4 address in bytes [offset, offset + 4): judged by it.
std::string embedded_kind(const std::array<uint8_t, 16>& b, size_t offset, const char* form) {
  const std::string kind = v4_kind(b.data() + offset);
  return kind.empty() ? kind : std::string(form) + " " + kind;
}

std::string v6_kind(const std::array<uint8_t, 16>& b) {
  constexpr uint8_t z = 0;
  const bool first_80_zero = starts_with(b, {z, z, z, z, z, z, z, z, z, z});
  if (first_80_zero && b[10] == 0xff && b[11] == 0xff) return embedded_kind(b, 12, "IPv4-mapped");
  if (starts_with(b, {z, z, z, z, z, z, z, z, 0xff, 0xff, z, z}))
    return embedded_kind(b, 12, "IPv4-translated");
  if (first_80_zero && b[10] == 0 && b[11] == 0) {
    const bool high_zero = b[12] == 0 && b[13] == 0 && b[14] == 0;
    if (high_zero && b[15] == 0) return "unspecified";
    if (high_zero && b[15] == 1) return "loopback";
    return "reserved";  // IPv4-compatible ::a.b.c.d, deprecated and never routed
  }
  if (starts_with(b, {0x00, 0x64, 0xff, 0x9b, z, z, z, z, z, z, z, z}))
    return embedded_kind(b, 12, "NAT64");
  if (starts_with(b, {0x00, 0x64, 0xff, 0x9b, 0x00, 0x01})) return "private";  // local NAT64
  if (starts_with(b, {0x20, 0x02})) return embedded_kind(b, 2, "6to4");
  if (starts_with(b, {0x01, z, z, z, z, z, z, z})) return "reserved";  // discard-only 100::/64
  if (starts_with(b, {0x20, 0x01, 0x0d, 0xb8})) return "reserved";     // documentation
  if ((b[0] & 0xfe) == 0xfc) return "unique local";                    // fc00::/7
  if (b[0] == 0xfe && (b[1] & 0xc0) == 0x80) return "link-local";      // fe80::/10
  if (b[0] == 0xfe && (b[1] & 0xc0) == 0xc0) return "site-local";      // fec0::/10
  if (b[0] == 0xff) return "multicast";
  return {};
}

}  // namespace

std::optional<IpAddress> IpAddress::parse(std::string_view text) {
  if (text.size() >= INET6_ADDRSTRLEN) return std::nullopt;
  const std::string copy(text);
  IpAddress address;
  if (inet_pton(AF_INET, copy.c_str(), address.bytes.data()) == 1) return address;
  address.v6 = true;
  if (inet_pton(AF_INET6, copy.c_str(), address.bytes.data()) == 1) return address;
  return std::nullopt;
}

std::optional<IpAddress> IpAddress::from_sockaddr(const void* sockaddr, size_t length) {
  sa_family_t family = AF_UNSPEC;
  if (length < sizeof(family)) return std::nullopt;
  std::memcpy(&family, static_cast<const char*>(sockaddr) + offsetof(struct sockaddr, sa_family),
              sizeof(family));
  IpAddress address;
  if (family == AF_INET && length >= sizeof(sockaddr_in)) {
    sockaddr_in in{};
    std::memcpy(&in, sockaddr, sizeof(in));
    std::memcpy(address.bytes.data(), &in.sin_addr, 4);
    return address;
  }
  if (family == AF_INET6 && length >= sizeof(sockaddr_in6)) {
    sockaddr_in6 in6{};
    std::memcpy(&in6, sockaddr, sizeof(in6));
    address.v6 = true;
    std::memcpy(address.bytes.data(), &in6.sin6_addr, 16);
    return address;
  }
  return std::nullopt;
}

std::string IpAddress::to_string() const {
  char text[INET6_ADDRSTRLEN] = {};
  if (inet_ntop(v6 ? AF_INET6 : AF_INET, bytes.data(), text, sizeof(text)) == nullptr) return "?";
  return text;
}

std::string non_public_address_kind(const IpAddress& address) {
  return address.v6 ? v6_kind(address.bytes) : v4_kind(address.bytes.data());
}

}  // namespace hearth::hub
