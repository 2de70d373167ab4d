// Images and audio on the routes, over the fake server with a fake projector (-mm): where a
// part's bytes come from, the prompt placed around the media marker, the counts of
// usage.prompt_tokens, /props modalities, native multimodal_data, and the 400s the reference
// gives for bad parts. The real projector's encoders are tested in tests/unit/media.
#include <cstdlib>
#include <string>
#include <vector>

#include "base/base64.h"
#include "server/fake_fixture.h"

namespace hearth::test {
namespace {

// A file the fake projector takes: a PNG signature, padded to `size` bytes.
std::string fake_png(size_t size, char fill = 'x') {
  std::string bytes = "\x89PNG\r\n\x1a\n";
  bytes.resize(size, fill);
  return bytes;
}

std::string base64(const std::string& bytes) {
  return base64_encode(std::span<const unsigned char>(
      reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size()));
}

Json image_part(const std::string& url) {
  return {{"type", "image_url"}, {"image_url", {{"url", url}}}};
}

Json user_with(const Json& part, const std::string& text = "What is in the picture?") {
  return {{"role", "user"}, {"content", {{{"type", "text"}, {"text", text}}, part}}};
}

class MediaRoutes : public FakeServerTest {
 protected:
  Json chat(const Json& messages) {
    return post_json(port(), "/v1/chat/completions", {{"messages", messages}, {"max_tokens", 2}},
                     &status_);
  }
  int64_t prompt_tokens(const Json& part) {
    Json r = chat(Json::array({user_with(part)}));
    EXPECT_EQ(status_, 200) << r.dump();
    return r["usage"].value("prompt_tokens", int64_t{-1});
  }
  void expect_chat_error(const Json& part, const std::string& message) {
    Json r = chat(Json::array({user_with(part)}));
    EXPECT_EQ(status_, 400) << r.dump();
    EXPECT_EQ(r["error"]["type"], "invalid_request_error") << r.dump();
    EXPECT_EQ(r["error"]["message"], message) << r.dump();
  }
  int status_ = 0;
};

TEST_F(MediaRoutes, PropsShowTheProjectorsModalities) {
  start({"-mm", "fake-mmproj.gguf"});
  Json props = parse_or_null(http_request(port(), "GET", "/props").body);
  EXPECT_EQ(props["modalities"]["vision"], true);
  EXPECT_EQ(props["modalities"]["audio"], true);
  EXPECT_EQ(props["media_marker"], "<__media_fake__>");
  // Ollama-style /models entry, as the reference's peer test test_vision_api.py reads it.
  Json models = parse_or_null(http_request(port(), "GET", "/models").body);
  EXPECT_EQ(models["models"][0]["capabilities"], Json::array({"completion", "multimodal"}))
      << models.dump();
}

TEST_F(MediaRoutes, NoMmprojLeavesTheProjectorOut) {
  start({"-mm", "fake-mmproj.gguf", "--no-mmproj"});
  EXPECT_EQ(parse_or_null(http_request(port(), "GET", "/props").body)["modalities"]["vision"],
            false);
  EXPECT_EQ(
      parse_or_null(http_request(port(), "GET", "/v1/models").body)["models"][0]["capabilities"],
      Json::array({"completion"}));
  expect_chat_error(image_part("data:image/png;base64," + base64(fake_png(40))),
                    "image input is not supported - hint: if this is unexpected, you may need to "
                    "provide the mmproj");
}

// The image's positions count in prompt_tokens: two images whose chunks differ by one
// position (the fake's 3 + size % 4) differ by one prompt token, the text being the same.
TEST_F(MediaRoutes, ImagePositionsCountInPromptTokens) {
  start({"-mm", "fake-mmproj.gguf"});
  const int64_t small = prompt_tokens(image_part("data:image/png;base64," + base64(fake_png(40))));
  const int64_t larger = prompt_tokens(image_part("data:image/png;base64," + base64(fake_png(41))));
  const int64_t raw = prompt_tokens(image_part(base64(fake_png(41))));  // raw base64 too
  Json text_only = chat(Json::array({{{"role", "user"}, {"content", "What is in the picture?"}}}));
  ASSERT_EQ(status_, 200);
  EXPECT_EQ(larger, small + 1);
  EXPECT_EQ(raw, larger);
  EXPECT_GT(small, text_only["usage"]["prompt_tokens"].get<int64_t>() + 3);
}

TEST_F(MediaRoutes, ApplyTemplateShowsTheMarker) {
  start({"-mm", "fake-mmproj.gguf"});
  Json r = post_json(port(), "/apply-template",
                     {{"messages", {user_with(image_part(base64(fake_png(40))))}}}, &status_);
  ASSERT_EQ(status_, 200) << r.dump();
  EXPECT_NE(r["prompt"].get<std::string>().find("<__media_fake__>"), std::string::npos) << r.dump();
}

TEST_F(MediaRoutes, AudioPartsAreTaken) {
  start({"-mm", "fake-mmproj.gguf"});
  std::string wav = "RIFF";
  wav.resize(64, '\0');
  Json part = {{"type", "input_audio"},
               {"input_audio", {{"data", base64(wav)}, {"format", "wav"}}}};
  EXPECT_GT(prompt_tokens(part), 0);
}

TEST_F(MediaRoutes, BadPartsAreRefusedWithTheReferencesMessages) {
  start({"-mm", "fake-mmproj.gguf"});
  expect_chat_error(image_part("data:text/plain;base64,aGk="),
                    "Invalid uri format: data:text/plain;base64");
  expect_chat_error(image_part("data:image/png,aGk="), "uri must be base64 encoded");
  expect_chat_error(image_part("data:image/png;base64,a,b"), "Invalid uri-encoded base64 value");
  expect_chat_error(image_part("!!!"), "Invalid base64 value");
  expect_chat_error(image_part("file://a.png"),
                    "file:// URLs are not allowed unless --media-path is specified");
  // Bytes that are no image: the file is named and the decoder's reason given.
  Json r = chat(Json::array({user_with(image_part(base64("plain text, not an image")))}));
  EXPECT_EQ(status_, 400) << r.dump();
  EXPECT_EQ(r["error"]["message"].get<std::string>().rfind(
                "Failed to load image or audio file 1: not an image or audio file", 0),
            0u)
      << r.dump();
}

// A URL that cannot be downloaded is the client's mistake: 400 with the fetcher's message.
TEST_F(MediaRoutes, UnreadableImageUrlIs400) {
  ::setenv("HEARTH_MEDIA_ALLOW_PRIVATE_URLS", "1", 1);  // read when the server is configured
  start({"-mm", "fake-mmproj.gguf"});
  ::unsetenv("HEARTH_MEDIA_ALLOW_PRIVATE_URLS");
  expect_chat_error(image_part("http://127.0.0.1:1/missing.png"), "error: cannot make GET request");
}

TEST_F(MediaRoutes, NativeMultimodalData) {
  start({"-mm", "fake-mmproj.gguf"});
  const std::string marker = "<__media_fake__>";
  Json ok = post_json(port(), "/completion",
                      {{"prompt",
                        {{"prompt_string", "Look: " + marker + " and say"},
                         {"multimodal_data", {base64(fake_png(40))}}}},
                       {"n_predict", 2}},
                      &status_);
  ASSERT_EQ(status_, 200) << ok.dump();
  Json plain =
      post_json(port(), "/completion", {{"prompt", "Look:  and say"}, {"n_predict", 2}}, &status_);
  ASSERT_EQ(status_, 200);
  EXPECT_GT(ok["tokens_evaluated"].get<int64_t>(), plain["tokens_evaluated"].get<int64_t>() + 3);
  Json mismatch = post_json(
      port(), "/completion",
      {{"prompt",
        {{"prompt_string", "No marker here"}, {"multimodal_data", {base64(fake_png(40))}}}}},
      &status_);
  EXPECT_EQ(status_, 400) << mismatch.dump();
  EXPECT_EQ(mismatch["error"]["message"],
            "number of media markers in text (0) does not match number of bitmaps (1)");
}

TEST_F(MediaRoutes, NativeMultimodalDataWithoutAProjector) {
  start();
  Json r =
      post_json(port(), "/completion",
                {{"prompt", {{"prompt_string", "x"}, {"multimodal_data", {base64(fake_png(40))}}}}},
                &status_);
  EXPECT_EQ(status_, 400) << r.dump();
  EXPECT_EQ(r["error"]["message"],
            "Multimodal data provided, but model does not support multimodal requests.");
}

}  // namespace
}  // namespace hearth::test
