// The web UI routes (other-native-routes.md section 19): the embedded page at / with gzip,
// ETag/304 and cache headers, public under --api-key; --no-ui; --path; --ui-config.
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "server/server_fixture.h"
#include "support/process.h"

namespace hearth::test {
namespace {

namespace fs = std::filesystem;

// A build configured with -DHEARTH_WEBUI=OFF has no page to serve; in any other build a
// missing page is a failure of the test, never a skip.
constexpr bool kUiEmbedded = HEARTH_WEBUI_EMBEDDED;
constexpr const char* kNoUiReason = "this build embeds no web UI (-DHEARTH_WEBUI=OFF)";

const std::vector<std::pair<std::string, std::string>> kGzip = {{"Accept-Encoding", "gzip"}};

class WebUiRoutes : public StoriesServer {};

TEST_F(WebUiRoutes, EmbeddedPageIsServedGzipWithEtag) {
  start({"--api-key", "k1"});
  // Public: no key needed for the page, while /props asks for one.
  EXPECT_EQ(http_request(port(), "GET", "/props").status, 401);
  if (!kUiEmbedded) GTEST_SKIP() << kNoUiReason;
  const HttpReply plain = http_request(port(), "GET", "/");
  EXPECT_EQ(plain.status, 415);
  EXPECT_EQ(plain.body, "Error: gzip is not supported by this browser");
  const HttpReply page = http_request(port(), "GET", "/", "", kGzip);
  ASSERT_EQ(page.status, 200);
  EXPECT_EQ(page.header("content-encoding"), "gzip");
  EXPECT_EQ(page.header("content-type"), "text/html; charset=utf-8");
  EXPECT_EQ(page.header("cache-control"), "no-cache");
  EXPECT_EQ(page.header("cross-origin-opener-policy"), "same-origin");
  EXPECT_EQ(page.header("cross-origin-embedder-policy"), "require-corp");
  ASSERT_GE(page.body.size(), 2u);
  EXPECT_EQ(static_cast<unsigned char>(page.body[0]), 0x1f);  // gzip magic
  EXPECT_EQ(static_cast<unsigned char>(page.body[1]), 0x8b);
  const std::string etag = page.header("etag");
  ASSERT_FALSE(etag.empty());
  EXPECT_EQ(http_request(port(), "GET", "/index.html", "", kGzip).header("etag"), etag);
  auto revalidate = kGzip;
  revalidate.emplace_back("If-None-Match", etag);
  const HttpReply unchanged = http_request(port(), "GET", "/", "", revalidate);
  EXPECT_EQ(unchanged.status, 304);
  EXPECT_TRUE(unchanged.body.empty());
  revalidate.back().second = "\"other\"";
  EXPECT_EQ(http_request(port(), "GET", "/", "", revalidate).status, 200);
  // The page's script: a hashed asset, cached for good. Its name comes from the index.
  const ProcessResult html = run_process(
      {"/bin/sh", "-c",
       "curl -s --compressed http://127.0.0.1:" + std::to_string(port()) + "/index.html"},
      30);
  const size_t at = html.out.find("src=\"./assets/");
  ASSERT_NE(at, std::string::npos) << html.out;
  const size_t start = at + 7, end = html.out.find('"', start);
  const HttpReply script =
      http_request(port(), "GET", "/" + html.out.substr(start, end - start), "", kGzip);
  EXPECT_EQ(script.status, 200);
  EXPECT_EQ(script.header("cache-control"), "public, max-age=31536000, immutable");
  EXPECT_EQ(script.header("content-type"), "application/javascript; charset=utf-8");
  EXPECT_TRUE(script.header("cross-origin-opener-policy").empty());
  EXPECT_EQ(http_request(port(), "GET", "/assets/none.js", "", kGzip).status, 401)
      << "an unknown asset is an API path, behind the key";
}

TEST_F(WebUiRoutes, NoUiAnswers404AndPropsSaysSo) {
  start({"--no-ui"});
  EXPECT_EQ(parse_or_null(http_request(port(), "GET", "/props").body)["ui"], false);
  for (const char* path : {"/", "/index.html"}) {
    const HttpReply r = http_request(port(), "GET", path, "", kGzip);
    EXPECT_EQ(r.status, 404) << path;
    EXPECT_EQ(parse_or_null(r.body)["error"]["message"], "File Not Found");
  }
}

TEST_F(WebUiRoutes, PageIsServedUnderTheApiPrefix) {
  // The harness waits for /health, which the prefix moves: wait for /llm/health instead.
  EXPECT_FALSE(server_.start(stories_args({"--api-prefix", "/llm"}), 1));
  ASSERT_GT(server_.port(), 0) << server_.log();
  for (int i = 0; i < 200 && http_request(port(), "GET", "/llm/health").status != 200; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  if (!kUiEmbedded) GTEST_SKIP() << kNoUiReason;
  EXPECT_EQ(parse_or_null(http_request(port(), "GET", "/llm/props").body)["ui"], true);
  EXPECT_EQ(http_request(port(), "GET", "/llm/", "", kGzip).status, 200);
  EXPECT_EQ(http_request(port(), "GET", "/llm/index.html", "", kGzip).status, 200);
  EXPECT_EQ(http_request(port(), "GET", "/", "", kGzip).status, 404);
}

TEST_F(WebUiRoutes, PathServesADirectoryInsteadAndFallsThroughToTheApi) {
  const std::string dir = make_temp_dir("static_path");
  fs::create_directories(dir + "/docs");
  std::ofstream(dir + "/index.html") << "<p>mine</p>";
  std::ofstream(dir + "/docs/index.html") << "<p>docs</p>";
  std::ofstream(dir + "/style.css") << "p{}";
  const std::string outside = make_temp_dir("static_outside");
  std::ofstream(outside + "/secret.txt") << "secret";
  start({"--path", dir});
  const HttpReply index = http_request(port(), "GET", "/");
  EXPECT_EQ(index.status, 200);
  EXPECT_EQ(index.body, "<p>mine</p>");
  EXPECT_EQ(index.header("content-type"), "text/html; charset=utf-8");
  EXPECT_EQ(http_request(port(), "GET", "/docs").body, "<p>docs</p>");
  EXPECT_EQ(http_request(port(), "GET", "/style.css").header("content-type"),
            "text/css; charset=utf-8");
  EXPECT_EQ(http_request(port(), "GET", "/health").status, 200);
  EXPECT_EQ(parse_or_null(http_request(port(), "GET", "/props").body)["ui"], true);
  const std::string escape = "/../" + fs::path(outside).filename().string() + "/secret.txt";
  for (const std::string& path : {escape, std::string("/%2e%2e/secret.txt")}) {
    const HttpReply r = http_request(port(), "GET", path);
    EXPECT_EQ(r.status, 404) << path;
    EXPECT_EQ(r.body.find("secret"), std::string::npos) << path;
  }
  server_.stop();
  const ProcessResult missing =
      run_process({bin_dir() + "/hearth-server", "-m", stories_model(), "--path", dir + "/none"});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.err.find("static assets path not found"), std::string::npos) << missing.err;
  fs::remove_all(dir);
  fs::remove_all(outside);
}

TEST_F(WebUiRoutes, PathFilesBeyondTheIndexNeedTheKey) {
  const std::string dir = make_temp_dir("static_path_key");
  std::ofstream(dir + "/index.html") << "<p>page</p>";
  std::ofstream(dir + "/private.txt") << "private";
  start({"--path", dir, "--api-key", "k1"});
  // The index is public, as the reference exempts it; the directory's other files are not.
  EXPECT_EQ(http_request(port(), "GET", "/").body, "<p>page</p>");
  EXPECT_EQ(http_request(port(), "GET", "/index.html").status, 200);
  const HttpReply denied = http_request(port(), "GET", "/private.txt");
  EXPECT_EQ(denied.status, 401);
  EXPECT_EQ(denied.body.find("private"), std::string::npos);
  EXPECT_EQ(http_request(port(), "GET", "/private.txt", "", {{"Authorization", "Bearer k1"}}).body,
            "private");
  fs::remove_all(dir);
}

TEST_F(WebUiRoutes, UiConfigIsShownInProps) {
  const std::string dir = make_temp_dir("ui_config");
  std::ofstream(dir + "/ui.json") << R"({"systemMessage": "Be brief.", "temperature": 0.2})";
  start({"--ui-config-file", dir + "/ui.json"});
  EXPECT_EQ(parse_or_null(http_request(port(), "GET", "/props").body)["ui_settings"],
            Json::parse(R"({"systemMessage": "Be brief.", "temperature": 0.2})"));
  server_.stop();
  ServerProcess inline_config;
  ASSERT_TRUE(inline_config.start(stories_args({"--ui-config", R"({"theme":"dark"})"})));
  EXPECT_EQ(parse_or_null(http_request(inline_config.port(), "GET", "/props").body)["ui_settings"],
            Json::parse(R"({"theme":"dark"})"));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace hearth::test
