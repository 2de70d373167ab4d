// http(s) media URLs (media_fetch.h) against a server in this process on 127.0.0.1: what
// llama-server does with them (2xx bodies, "Failed to download image", the 10 MiB limit,
// redirects), and what Hearth adds: no connection to a non-public address, checked for the
// first host and every redirect, with the local server asserting it was never reached.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <optional>

#include "hub/media_fetch.h"
#include "unit/hub/local_http_server.h"

namespace hearth::hub {
namespace {

using test::http_response;
using test::LocalHttpServer;
using test::LocalRequest;
using test::LocalResponder;
using namespace std::chrono_literals;

// Short, so that a test that went wrong fails fast; no test waits for it to pass.
constexpr auto kTestTimeout = 3000ms;

MediaFetchSettings allowing_private() {
  MediaFetchSettings settings;
  settings.allow_private_urls = true;
  settings.timeout = kTestTimeout;
  return settings;
}

MediaFetchSettings public_only() {
  MediaFetchSettings settings;
  settings.timeout = kTestTimeout;
  return settings;
}

std::string as_text(const std::vector<uint8_t>& bytes) {
  return {bytes.begin(), bytes.end()};
}

std::string header_of(const LocalRequest& request, const std::string& name) {
  const size_t at = request.head.find("\r\n" + name + ": ");
  if (at == std::string::npos) return {};
  const size_t start = at + name.size() + 4;
  return request.head.substr(start, request.head.find("\r\n", start) - start);
}

// Serves "/img" (a small body), "/to-img" (a redirect to it), "/missing" (404), "/error"
// (500), "/moved" (302 without Location), "/loop" (redirects to itself).
void basic_routes(const LocalRequest& request, LocalResponder& out) {
  if (request.target == "/img") {
    out.send(http_response(200, "PNG-BYTES", "Content-Type: image/png\r\n"));
  } else if (request.target == "/to-img") {
    out.send(http_response(302, "", "Location: /img\r\n"));
  } else if (request.target == "/loop") {
    out.send(http_response(301, "", "Location: /loop\r\n"));
  } else if (request.target == "/moved") {
    out.send(http_response(302, "no location"));
  } else if (request.target == "/error") {
    out.send(http_response(500, "boom"));
  } else if (request.target == "/created") {
    out.send(http_response(201, "made"));
  } else {
    out.send(http_response(404, "not found"));
  }
}

TEST(MediaFetchHttp, DownloadsABodyWhenPrivateUrlsAreAllowed) {
  LocalHttpServer server(basic_routes);
  ASSERT_TRUE(server.ok());
  auto bytes = fetch_media_url(server.url("127.0.0.1", "/img"), allowing_private());
  ASSERT_TRUE(bytes.is_ok()) << bytes.status().to_string();
  EXPECT_EQ(as_text(*bytes), "PNG-BYTES");
  ASSERT_EQ(server.requests().size(), 1u);
  const LocalRequest request = server.requests()[0];
  EXPECT_EQ(request.method, "GET");
  EXPECT_EQ(header_of(request, "User-Agent"), "hearth-server");
  // No compressed body is asked for: the bytes counted against the limit are those kept.
  EXPECT_EQ(header_of(request, "Accept-Encoding"), "");
  // Any 2xx is a success, as in llama-server.
  auto created = fetch_media_url(server.url("localhost", "/created"), allowing_private());
  ASSERT_TRUE(created.is_ok()) << created.status().to_string();
  EXPECT_EQ(as_text(*created), "made");
}

TEST(MediaFetchHttp, AnyOtherStatusIsFailedToDownloadImage) {
  LocalHttpServer server(basic_routes);
  ASSERT_TRUE(server.ok());
  for (const char* path : {"/missing", "/error", "/moved"}) {
    auto bytes = fetch_media_url(server.url("127.0.0.1", path), allowing_private());
    ASSERT_FALSE(bytes.is_ok()) << path;
    EXPECT_EQ(bytes.status().message(), "Failed to download image") << path;
    EXPECT_EQ(bytes.status().code(), ErrorCode::kIo) << path;
  }
}

TEST(MediaFetchHttp, FollowsRedirectsLikeLlamaServerAndStopsLoops) {
  LocalHttpServer server(basic_routes);
  ASSERT_TRUE(server.ok());
  auto bytes = fetch_media_url(server.url("127.0.0.1", "/to-img"), allowing_private());
  ASSERT_TRUE(bytes.is_ok()) << bytes.status().to_string();
  EXPECT_EQ(as_text(*bytes), "PNG-BYTES");
  EXPECT_EQ(server.requests().size(), 2u);

  auto looped = fetch_media_url(server.url("127.0.0.1", "/loop"), allowing_private());
  ASSERT_FALSE(looped.is_ok());
  EXPECT_EQ(looped.status().message(), "error: cannot make GET request");
  // The first request and 20 redirects, as cpp-httplib allows.
  EXPECT_EQ(server.requests().size(), 2u + 21u);
}

TEST(MediaFetchHttp, RefusesARedirectToAnotherProtocol) {
  LocalHttpServer server([](const LocalRequest&, LocalResponder& out) {
    out.send(http_response(302, "", "Location: file:///etc/passwd\r\n"));
  });
  ASSERT_TRUE(server.ok());
  auto bytes = fetch_media_url(server.url("127.0.0.1", "/"), allowing_private());
  ASSERT_FALSE(bytes.is_ok());
  EXPECT_EQ(bytes.status().message(), "error: cannot make GET request");
}

// Each URL names the local server by a form of a loopback or other non-public address; with
// private URLs refused, none may reach it (or anything else).
TEST(MediaFetchHttp, RefusesNonPublicHostsBeforeConnecting) {
  LocalHttpServer server(basic_routes);
  ASSERT_TRUE(server.ok());
  const std::pair<std::string, std::string> cases[] = {
      {"127.0.0.1", "127.0.0.1 (loopback)"},
      {"localhost", "(loopback)"},
      {"[::1]", "::1 (loopback)"},
      {"[::ffff:127.0.0.1]", "::ffff:127.0.0.1 (IPv4-mapped loopback)"},
      {"2130706433", "127.0.0.1 (loopback)"},  // decimal 127.0.0.1
      {"0x7f000001", "127.0.0.1 (loopback)"},  // hexadecimal
      {"0177.0.0.1", "127.0.0.1 (loopback)"},  // octal first part
      {"0.0.0.0", "0.0.0.0 (unspecified)"},
      {"10.1.2.3", "10.1.2.3 (private)"},
      {"192.168.0.1", "192.168.0.1 (private)"},
      {"172.20.0.1", "172.20.0.1 (private)"},
      {"169.254.169.254", "169.254.169.254 (link-local)"},
      {"100.64.0.1", "100.64.0.1 (shared (CGNAT))"},
      {"[fe80::1]", "fe80::1 (link-local)"},
      {"[fd00::1]", "fd00::1 (unique local)"},
  };
  for (const auto& [host, expected] : cases) {
    const auto start = std::chrono::steady_clock::now();
    auto bytes = fetch_media_url(server.url(host, "/img"), public_only());
    ASSERT_FALSE(bytes.is_ok()) << host;
    EXPECT_EQ(bytes.status().code(), ErrorCode::kInvalidArgument) << host;
    EXPECT_NE(bytes.status().message().find(expected), std::string::npos)
        << host << ": " << bytes.status().message();
    EXPECT_NE(bytes.status().message().find("the server does not fetch from its own network"),
              std::string::npos);
    // Refused at once, not after a connection attempt timed out.
    EXPECT_LT(std::chrono::steady_clock::now() - start, kTestTimeout) << host;
  }
  EXPECT_EQ(server.connections(), 0);
  EXPECT_TRUE(server.requests().empty());
}

TEST(MediaFetchHttp, TheRefusalNamesTheHost) {
  auto bytes = fetch_media_url("http://localhost:9/x.png", public_only());
  ASSERT_FALSE(bytes.is_ok());
  EXPECT_NE(bytes.status().message().find("media URL host 'localhost' resolves to"),
            std::string::npos)
      << bytes.status().message();
}

// Every redirect's address is checked too: a policy that lets 127.0.0.1 through but not
// 127.0.0.2 sees the first request answered and the redirect to a server on 127.0.0.2 refused
// before it connects; a policy that allows both follows it.
TEST(MediaFetchHttp, ChecksTheAddressOfEveryRedirect) {
  LocalHttpServer target(basic_routes, "127.0.0.2");
  if (!target.ok()) GTEST_SKIP() << "cannot listen on 127.0.0.2";
  const std::string location = target.url("127.0.0.2", "/img");
  LocalHttpServer first([&](const LocalRequest&, LocalResponder& out) {
    out.send(http_response(302, "", "Location: " + location + "\r\n"));
  });
  ASSERT_TRUE(first.ok());
  const AddressPolicy only_127_0_0_1 = [](const IpAddress& address) {
    return address.to_string() == "127.0.0.1" ? std::string() : std::string("test-refused");
  };
  auto bytes = fetch_media_url(first.url("127.0.0.1", "/start"), public_only(), only_127_0_0_1);
  ASSERT_FALSE(bytes.is_ok());
  EXPECT_EQ(bytes.status().message(),
            "media URL host '127.0.0.2' resolves to a non-public address, 127.0.0.2 "
            "(test-refused); the server does not fetch from its own network");
  EXPECT_EQ(first.requests().size(), 1u);
  EXPECT_EQ(target.connections(), 0);

  const AddressPolicy any_address = [](const IpAddress&) { return std::string(); };
  auto followed = fetch_media_url(first.url("127.0.0.1", "/start"), public_only(), any_address);
  ASSERT_TRUE(followed.is_ok()) << followed.status().to_string();
  EXPECT_EQ(as_text(*followed), "PNG-BYTES");
  EXPECT_EQ(target.requests().size(), 1u);
}

// A body of exactly the limit is accepted; one byte more is refused, whether the length is
// announced (refused before the body) or not (refused while receiving).
TEST(MediaFetchHttp, CapsTheBodyAtTenMebibytes) {
  const std::string limit_body(kMediaMaxDownloadBytes, 'x');
  LocalHttpServer server([&](const LocalRequest& request, LocalResponder& out) {
    if (request.target == "/exact") {
      out.send(http_response(200, limit_body));
    } else if (request.target == "/announced") {
      out.send(http_response(200, limit_body + "y"));
    } else {
      // 11 MB in chunks of 64 KiB, with no length announced.
      out.send("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n");
      const std::string chunk = "10000\r\n" + std::string(0x10000, 'z') + "\r\n";
      for (int i = 0; i < 11 * 16 + 1; ++i)
        if (!out.send(chunk)) return;
      out.send("0\r\n\r\n");
    }
  });
  ASSERT_TRUE(server.ok());
  auto exact = fetch_media_url(server.url("127.0.0.1", "/exact"), allowing_private());
  ASSERT_TRUE(exact.is_ok()) << exact.status().to_string();
  EXPECT_EQ(exact->size(), kMediaMaxDownloadBytes);
  for (const char* path : {"/announced", "/chunked"}) {
    auto bytes = fetch_media_url(server.url("127.0.0.1", path), allowing_private());
    ASSERT_FALSE(bytes.is_ok()) << path;
    EXPECT_EQ(bytes.status().message(), "error: cannot make GET request") << path;
  }
}

// The limit stops the transfer while it runs: with a 64 KiB limit, a server offering 64 MiB
// gets only what the socket buffers hold before the connection closes.
TEST(MediaFetchHttp, StopsReceivingAtTheLimit) {
  constexpr size_t kOffered = size_t{64} << 20;
  LocalHttpServer server([&](const LocalRequest&, LocalResponder& out) {
    out.send("HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n");  // length unknown: until close
    const std::string block(1 << 16, 'z');
    for (size_t sent = 0; sent < kOffered; sent += block.size())
      if (!out.send(block)) return;
  });
  ASSERT_TRUE(server.ok());
  MediaFetchSettings settings = allowing_private();
  settings.max_bytes = size_t{64} << 10;
  auto bytes = fetch_media_url(server.url("127.0.0.1", "/big"), settings);
  ASSERT_FALSE(bytes.is_ok());
  EXPECT_EQ(bytes.status().message(), "error: cannot make GET request");
  server.stop();
  EXPECT_LT(server.bytes_sent(), kOffered / 2);
}

// The timeout covers the whole transfer: a server that answers nothing, and one that sends a
// byte every 50 ms (each read succeeds, the whole never ends), both fail after it.
TEST(MediaFetchHttp, TimesOutOnAStalledOrDrippingServer) {
  LocalHttpServer server([](const LocalRequest& request, LocalResponder& out) {
    if (request.target == "/stall") {
      out.wait_for_stop(60s);
      return;
    }
    out.send("HTTP/1.1 200 OK\r\nContent-Length: 1000000\r\nConnection: close\r\n\r\n");
    while (!out.wait_for_stop(50ms))
      if (!out.send("z")) return;
  });
  ASSERT_TRUE(server.ok());
  MediaFetchSettings settings = allowing_private();
  settings.timeout = 400ms;
  for (const char* path : {"/stall", "/drip"}) {
    const auto start = std::chrono::steady_clock::now();
    auto bytes = fetch_media_url(server.url("127.0.0.1", path), settings);
    const auto elapsed = std::chrono::steady_clock::now() - start;
    ASSERT_FALSE(bytes.is_ok()) << path;
    EXPECT_EQ(bytes.status().message(), "error: cannot make GET request") << path;
    EXPECT_GE(elapsed, 300ms) << path;  // libcurl counts from just before the call
    EXPECT_LT(elapsed, 30s) << path;    // far below the stalling server's 60 s
  }
}

// http_proxy and friends are not used: the address checked is the address connected to.
TEST(MediaFetchHttp, IgnoresProxyEnvironmentVariables) {
  LocalHttpServer proxy(
      [](const LocalRequest&, LocalResponder& out) { out.send(http_response(200, "FROM-PROXY")); });
  LocalHttpServer origin(basic_routes);
  ASSERT_TRUE(proxy.ok() && origin.ok());
  const std::string proxy_url = proxy.url("127.0.0.1", "");
  const char* names[] = {"http_proxy", "HTTPS_PROXY", "ALL_PROXY"};
  std::vector<std::optional<std::string>> saved;
  for (const char* name : names) {
    const char* old = std::getenv(name);
    saved.push_back(old ? std::optional<std::string>(old) : std::nullopt);
    setenv(name, proxy_url.c_str(), 1);
  }
  auto bytes = fetch_media_url(origin.url("127.0.0.1", "/img"), allowing_private());
  for (size_t i = 0; i < saved.size(); ++i) {
    if (saved[i]) {
      setenv(names[i], saved[i]->c_str(), 1);
    } else {
      unsetenv(names[i]);
    }
  }
  ASSERT_TRUE(bytes.is_ok()) << bytes.status().to_string();
  EXPECT_EQ(as_text(*bytes), "PNG-BYTES");
  EXPECT_EQ(proxy.connections(), 0);
}

TEST(MediaFetchHttp, MalformedUrlsGetLlamaServersMessages) {
  const std::pair<const char*, const char*> cases[] = {
      {"http:/x.png", "invalid URL: no scheme"},
      {"httpx://example.com/a.png", "unsupported URL scheme: httpx"},
      {"http://", "error: invalid URL format"},
      {"http:///a.png", "error: invalid URL format"},
      {"https://user@:443/a.png", "error: invalid URL format"},
      {"http://[]/a.png", "error: invalid URL format"},
      {"http://[::1/a.png", "invalid IPv6 URL authority: [::1"},
  };
  for (const auto& [url, message] : cases) {
    auto bytes = fetch_media_url(url, public_only());
    ASSERT_FALSE(bytes.is_ok()) << url;
    EXPECT_EQ(bytes.status().message(), message) << url;
  }
  EXPECT_TRUE(is_fetched_media_url("http://a/b"));
  EXPECT_TRUE(is_fetched_media_url("https://a/b"));
  EXPECT_TRUE(is_fetched_media_url("httpx"));  // llama-server's prefix test, kept
  EXPECT_TRUE(is_fetched_media_url("file://a.png"));
  EXPECT_FALSE(is_fetched_media_url("data:image/png;base64,AAAA"));
  EXPECT_FALSE(is_fetched_media_url("iVBORw0KGgo="));
  EXPECT_FALSE(is_fetched_media_url("HTTP://A/B"));
}

}  // namespace
}  // namespace hearth::hub
