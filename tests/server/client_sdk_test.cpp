// Real clients: the official OpenAI Node SDK and Anthropic TypeScript SDK (tests/clients,
// installed from their lockfile by scripts/fetch-test-data.sh) drive a hearth-server with a
// tool-capable template. The scripts print one line per check; any failure fails the test.
// Without Node.js or the installed SDKs the tests skip, saying why.
#include <unistd.h>

#include "server/server_fixture.h"
#include "support/process.h"

namespace hearth::test {
namespace {

std::string find_node() {
  for (const char* path : {"/usr/bin/node", "/usr/local/bin/node", "/usr/bin/nodejs"}) {
    if (access(path, X_OK) == 0) return path;
  }
  return "";
}

class ClientSdks : public StoriesServer {
 protected:
  void SetUp() override {
    node_ = find_node();
    if (node_.empty()) GTEST_SKIP() << "Node.js is not installed";
    modules_ = cache_dir() + "/clients/node_modules";
    if (!file_exists(modules_ + "/openai/package.json") ||
        !file_exists(modules_ + "/@anthropic-ai/sdk/package.json")) {
      GTEST_SKIP() << "the client SDKs are not installed in " << modules_
                   << " (scripts/fetch-test-data.sh; the npm registry may be unreachable)";
    }
    start({"-c", "8192", "--jinja", "--chat-template-file",
           shared_path("templates/Qwen-Qwen3-0.6B.jinja")});
  }

  void run_script(const std::string& script) {
    ProcessResult r = run_process({"/usr/bin/env", "NODE_PATH=" + modules_, node_,
                                   std::string(HEARTH_SOURCE_DIR) + "/tests/clients/" + script,
                                   "http://127.0.0.1:" + std::to_string(port())},
                                  240);
    std::printf("%s", r.out.c_str());
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    EXPECT_EQ(r.out.find("FAIL"), std::string::npos);
    EXPECT_NE(r.out.find("ok "), std::string::npos) << "no check ran";
  }

  std::string node_;
  std::string modules_;
};

TEST_F(ClientSdks, OpenAINodeSdk) {
  run_script("openai_sdk.cjs");
}

TEST_F(ClientSdks, AnthropicSdk) {
  run_script("anthropic_sdk.cjs");
}

// embeddings.create, float and base64, on a server started for embeddings.
class EmbeddingClientSdk : public ClientSdks {
 protected:
  void SetUp() override {}
};

TEST_F(EmbeddingClientSdk, OpenAiEmbeddings) {
  node_ = find_node();
  if (node_.empty()) GTEST_SKIP() << "Node.js is not installed";
  modules_ = cache_dir() + "/clients/node_modules";
  if (!file_exists(modules_ + "/openai/package.json"))
    GTEST_SKIP() << "the OpenAI SDK is not installed in " << modules_
                 << " (scripts/fetch-test-data.sh; the npm registry may be unreachable)";
  start({"--embedding", "--pooling", "mean"});
  run_script("openai_embeddings.cjs");
}

}  // namespace
}  // namespace hearth::test
