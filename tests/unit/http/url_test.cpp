#include <gtest/gtest.h>

#include "server/http/url.h"

namespace hearth::server::http {
namespace {

TEST(UrlTest, PercentDecoding) {
  EXPECT_EQ(percent_decode("a%20b%2fc", false), "a b/c");
  EXPECT_EQ(percent_decode("a+b", false), "a+b");
  EXPECT_EQ(percent_decode("a+b", true), "a b");
  EXPECT_EQ(percent_decode("%e2%82%AC", false), "\xe2\x82\xac");
  // Malformed escapes stay as they are.
  EXPECT_EQ(percent_decode("100%", false), "100%");
  EXPECT_EQ(percent_decode("%4", false), "%4");
  EXPECT_EQ(percent_decode("%g0x", false), "%g0x");
}

TEST(UrlTest, TargetSplitsPathQueryAndFragment) {
  Target t = parse_target("/v1/models?a=1&b=two+words&&c#frag");
  EXPECT_EQ(t.path, "/v1/models");
  std::vector<std::pair<std::string, std::string>> expected = {
      {"a", "1"}, {"b", "two words"}, {"c", ""}};
  EXPECT_EQ(t.query, expected);
  EXPECT_EQ(parse_target("http://host:8080/health?x=%3D").path, "/health");
  EXPECT_EQ(parse_target("http://host:8080/health?x=%3D").query[0].second, "=");
  EXPECT_EQ(parse_target("http://host").path, "/");
  EXPECT_EQ(parse_target("/a=b?k=v=w").query[0].second, "v=w");
}

}  // namespace
}  // namespace hearth::server::http
