// The route, field and error tests' server: hearth-server's front in this process over the
// fake scheduler and the synthetic vocabulary (support/fake_http_server.h), spoken to over
// HTTP like the real one. Nothing is read from ../shared.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "server/harness.h"
#include "server/json_client.h"
#include "support/fake_http_server.h"
#include "support/synthetic_vocab.h"
#include "support/test_paths.h"

namespace hearth::test {

using Json = nlohmann::ordered_json;

class FakeServerTest : public ::testing::Test {
 protected:
  // As StoriesServer starts stories260K: -c 2048 -np 4 (slots of 512 tokens), then `extra`.
  // `fim`: whether the vocabulary has fill-in-the-middle tokens (stories260K has none).
  void start(const std::vector<std::string>& extra = {}, bool fim = false) {
    std::vector<std::string> args = {"-c", "2048", "-np", "4"};
    args.insert(args.end(), extra.begin(), extra.end());
    start_exactly(args, fim);
  }
  // `args` alone (no -c or -np added).
  void start_exactly(const std::vector<std::string>& args, bool fim = false) {
    FakeModel model;
    model.tok = synthetic_tokenizer(SyntheticVocabOptions{.fim = fim});
    ASSERT_TRUE(server_.start(args, std::move(model))) << server_.error();
  }
  int port() const { return server_.port(); }
  InProcessServer server_;
};

}  // namespace hearth::test
