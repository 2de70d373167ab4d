// What the reference cannot show about images on hearth-server (the gemma3 F32 pair of the
// goldens, two slots): an image's answer does not depend on what else is in the batch (the
// same image from two clients at once, or two images at once, give bit-identical
// log-probabilities to each alone), and a corrupt image is refused with a 400 without
// disturbing a request that is generating meanwhile.
#include <filesystem>
#include <future>

#include <span>

#include "base/base64.h"
#include "server/media_golden.h"

namespace hearth::test {
namespace {

constexpr int kPromptCases = 2;  // images used below

Json native_request(const std::string& image, int n_predict, bool stream) {
  return {{"prompt",
           {{"prompt_string", "Look at <__media__> and tell"},
            {"multimodal_data", {"{{b64:" + image + "}}"}}}},
          {"n_predict", n_predict},
          {"temperature", 0},
          {"n_probs", 10},
          {"cache_prompt", false},
          {"stream", stream},
          {"grammar", "root ::= [a-z ]+"}};
}

class MediaInvariance : public ::testing::Test {
 protected:
  void SetUp() override {
    golden_ = load_media_golden("gemma3-f32");
    ASSERT_FALSE(golden_.is_null());
    dir_ = make_temp_dir("media-invariance");
    const std::string failure = synth_media_pair(golden_, dir_);
    if (failure.rfind("SKIPPED", 0) == 0) GTEST_SKIP() << failure;
    ASSERT_EQ(failure, "");
    // The goldens' flags with two slots, so that two requests share a batch.
    golden_["server_flags"] = Json::array({"-np", "2", "-c", "2048"});
    ASSERT_TRUE(start_media_server(server_, golden_, dir_)) << server_.log();
  }
  void TearDown() override {
    server_.stop();
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }
  // The completion_probabilities of a non-streamed native completion of `image`.
  Json probabilities(const std::string& image) {
    const HttpReply r = http_request(server_.port(), "POST", "/completion",
                                     fill_media_placeholders(native_request(image, 8, false)));
    EXPECT_EQ(r.status, 200) << r.body;
    return parse_or_null(r.body)["completion_probabilities"];
  }
  // `a` and `b` sent at once from two clients.
  std::pair<Json, Json> together(const std::string& a, const std::string& b) {
    auto first = std::async(std::launch::async, [&] { return probabilities(a); });
    auto second = std::async(std::launch::async, [&] { return probabilities(b); });
    return {first.get(), second.get()};
  }

  Json golden_;
  std::string dir_;
  ServerProcess server_;
};

TEST_F(MediaInvariance, AnImagesAnswerDoesNotDependOnTheBatch) {
  const std::string images[kPromptCases] = {"grad_37x23.png", "anim_45x31.gif"};
  const Json alone_png = probabilities(images[0]);
  const Json alone_gif = probabilities(images[1]);
  ASSERT_EQ(alone_png.size(), 8u) << alone_png.dump();
  ASSERT_NE(alone_png, alone_gif);  // the images make a difference
  // JSON equality of the doubles: bit for bit (they are printed round-trip exact).
  const auto [png_a, png_b] = together(images[0], images[0]);
  EXPECT_EQ(png_a, alone_png);
  EXPECT_EQ(png_b, alone_png);
  const auto [png, gif] = together(images[0], images[1]);
  EXPECT_EQ(png, alone_png);
  EXPECT_EQ(gif, alone_gif);
}

// The frames of a native stream: the token ids and their log-probabilities, in order.
Json streamed_steps(const std::string& body) {
  Json steps = Json::array();
  for (const std::string& payload : sse_payloads(body)) {
    const Json frame = parse_or_null(payload);
    if (frame.is_object() && frame.contains("completion_probabilities"))
      for (const Json& p : frame["completion_probabilities"]) steps.push_back(p);
  }
  return steps;
}

TEST_F(MediaInvariance, ACorruptImageLeavesAGeneratingRequestAlone) {
  const int n_predict = 256;  // long enough to be generating while the others are refused
  const std::string request =
      fill_media_placeholders(native_request("grad_37x23.jpg", n_predict, true));
  const HttpReply alone = http_request(server_.port(), "POST", "/completion", request);
  ASSERT_EQ(alone.status, 200) << alone.body;
  const Json expected = streamed_steps(alone.body);
  ASSERT_EQ(expected.size(), static_cast<size_t>(n_predict));

  // A PNG cut in its image data: the signature and header are right, the pixels missing.
  std::string png = read_file(std::string(HEARTH_SOURCE_DIR) + "/tests/data/media/grad_37x23.png");
  png.resize(120);
  const std::string encoded = base64_encode(std::span<const unsigned char>(
      reinterpret_cast<const unsigned char*>(png.data()), png.size()));
  Json native = native_request("unused", 4, false);
  native["prompt"]["multimodal_data"] = Json::array({encoded});
  const Json chat = {{"messages",
                      {{{"role", "user"},
                        {"content",
                         {{{"type", "text"}, {"text", "What is this?"}},
                          {{"type", "image_url"},
                           {"image_url", {{"url", "data:image/png;base64," + encoded}}}}}}}}},
                     {"max_tokens", 4}};

  RawConnection generating(server_.port());
  ASSERT_TRUE(generating.send_request("POST", "/completion", request));
  generating.read_until("completion_probabilities", 30000);  // it is generating
  for (const auto& [route, body] :
       {std::pair<std::string, Json>{"/completion", native}, {"/v1/chat/completions", chat}}) {
    const HttpReply refused = http_request(server_.port(), "POST", route, body.dump());
    EXPECT_EQ(refused.status, 400) << route << ": " << refused.body;
    const Json error = parse_or_null(refused.body);
    EXPECT_FALSE(error["error"].value("message", "").empty()) << refused.body;
  }
  const HttpReply rest = generating.read_reply(60000);
  ASSERT_EQ(rest.status, 200);
  EXPECT_EQ(streamed_steps(rest.body), expected);
}

// Embeddings of an input with an image cover every position (differences.json,
// media-embeddings-pool-whole-input): with pooling none, one row per prompt position, the
// image's included; the rows of the image differ from those of the text around it.
TEST(MediaEmbeddings, PoolingNoneReturnsEveryPositionOfTheInput) {
  Json golden = load_media_golden("gemma3-f32");
  ASSERT_FALSE(golden.is_null());
  const std::string dir = make_temp_dir("media-embd-none");
  const std::string failure = synth_media_pair(golden, dir);
  if (failure.rfind("SKIPPED", 0) == 0) GTEST_SKIP() << failure;
  ASSERT_EQ(failure, "");
  golden["server_flags"] =
      Json::array({"-np", "1", "-c", "2048", "--embedding", "--pooling", "none"});
  ServerProcess server;
  ASSERT_TRUE(start_media_server(server, golden, dir)) << server.log();
  const Json body = {{"content",
                      {{"prompt_string", "Look at <__media__> and tell"},
                       {"multimodal_data", {"{{b64:grad_37x23.png}}"}}}}};
  const HttpReply r =
      http_request(server.port(), "POST", "/embeddings", fill_media_placeholders(body));
  ASSERT_EQ(r.status, 200) << r.body;
  const Json rows = parse_or_null(r.body)[0]["embedding"];
  // The same text alone, to count its positions: the image adds its 16 rows and the texts
  // the projector puts around them.
  const HttpReply text = http_request(server.port(), "POST", "/tokenize",
                                      Json{{"content", "Look at  and tell"}}.dump());
  ASSERT_EQ(text.status, 200);
  const size_t n_text = parse_or_null(text.body)["tokens"].size();
  EXPECT_GT(rows.size(), n_text + 16) << rows.size();
  server.stop();
  std::filesystem::remove_all(dir);
}

// idefics3's layout names "\n\n", "<fake_token_around_image>" and "<global-img>" by their
// pieces (mtmd's lookup_token). Over a vocabulary without them the reference puts an invalid id
// in the prompt and answers 400 "Invalid token"; Hearth answers 400 naming the missing token.
TEST(MediaVocabulary, ATokenTheLayoutNamesMissingFromTheVocabularyIsA400) {
  Json golden = load_media_golden("idefics3-f32");
  ASSERT_FALSE(golden.is_null());
  Json model = Json::array();
  for (size_t i = 0; i < golden["synth_model"].size(); ++i) {
    if (golden["synth_model"][i] == "--add-tokens") {
      ++i;  // and its value
      continue;
    }
    model.push_back(golden["synth_model"][i]);
  }
  golden["synth_model"] = model;
  const std::string dir = make_temp_dir("media-vocab");
  const std::string failure = synth_media_pair(golden, dir);
  if (failure.rfind("SKIPPED", 0) == 0) GTEST_SKIP() << failure;
  ASSERT_EQ(failure, "");
  ServerProcess server;
  ASSERT_TRUE(start_media_server(server, golden, dir)) << server.log();
  const HttpReply r =
      http_request(server.port(), "POST", "/completion",
                   fill_media_placeholders(native_request("grad_37x23.png", 2, false)));
  EXPECT_EQ(r.status, 400) << r.body;
  const std::string message = parse_or_null(r.body)["error"]["message"];
  EXPECT_NE(message.find("no token '\\n\\n'"), std::string::npos) << message;
  server.stop();
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace hearth::test
