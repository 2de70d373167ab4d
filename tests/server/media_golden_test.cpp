// Images end to end against the reference: hearth-server on the text model and projector
// hearth-synth writes with the flags and seeds of each golden under tests/data/media/golden
// (captured from llama-server b10573, CPU, see the README there) gets the same requests in the
// same order on a fresh server and must answer the same prompt token counts, the same greedy
// path (up to a near tie), top-10 log-probabilities within the golden tolerance, the same
// prompt-cache reuse after the same history (the image's KV on a follow-up turn included), and
// the same template and token counts.
#include <filesystem>
#include <map>

#include "server/media_golden.h"

namespace hearth::test {
namespace {

// ../shared/golden/logits/README.md: 0.02 for F32, F16 and Q8_0 weights (the engines sum in
// different orders, and the reference rounds activations for F16 and Q8_0 products).
constexpr double kLogprobTolerance = 0.02;

struct Step {
  int id = -1;
  double logprob = 0;
  std::map<int, double> top;  // id -> log-probability, the top 10
  double lowest_top = 0;
};

// The per-token probabilities of a stream: native frames carry completion_probabilities,
// chat chunks choices[0].logprobs.content.
std::vector<Step> steps_of(const std::vector<Json>& frames) {
  std::vector<Step> steps;
  for (const Json& frame : frames) {
    const Json* entries = nullptr;
    if (frame.contains("completion_probabilities")) {
      entries = &frame["completion_probabilities"];
    } else if (frame.contains("choices") && !frame["choices"].empty() &&
               frame["choices"][0].contains("logprobs") &&
               frame["choices"][0]["logprobs"].is_object()) {
      entries = &frame["choices"][0]["logprobs"]["content"];
    }
    if (entries == nullptr) continue;
    for (const Json& e : *entries) {
      Step step{.id = e["id"].get<int>(),
                .logprob = e["logprob"].get<double>(),
                .top = {},
                .lowest_top = 0};
      for (const Json& t : e["top_logprobs"]) {
        step.top[t["id"].get<int>()] = t["logprob"].get<double>();
        step.lowest_top = std::min(step.lowest_top, t["logprob"].get<double>());
      }
      steps.push_back(step);
    }
  }
  return steps;
}

// The reference's frames, event markers dropped (Hearth's payloads are read without them).
std::vector<Json> reference_frames(const Json& recorded) {
  std::vector<Json> frames;
  for (const Json& f : recorded)
    if (!f.is_object() || !f.contains("__event__")) frames.push_back(f);
  return frames;
}

// The `data:` payloads of an SSE body, parsed where they are JSON; a frame may start with an
// `event:` line (Anthropic, Responses).
std::vector<Json> hearth_frames(const std::string& body) {
  std::vector<Json> frames;
  size_t pos = 0;
  while (pos < body.size()) {
    size_t end = body.find('\n', pos);
    if (end == std::string::npos) end = body.size();
    const std::string line = body.substr(pos, end - pos);
    if (line.rfind("data: ", 0) == 0) {
      Json parsed = parse_or_null(line.substr(6));
      frames.push_back(parsed.is_null() ? Json(line.substr(6)) : parsed);
    }
    pos = end + 1;
  }
  return frames;
}

// The greedy path and the top-10 of each step. Where the two paths part, the reference must
// have had a near tie there (both tokens' log-probabilities within the tolerance); the steps
// after it are not compared. Returns how many steps were compared.
size_t expect_same_steps(const std::vector<Step>& expected, const std::vector<Step>& actual,
                         const std::string& where) {
  EXPECT_EQ(actual.size(), expected.size()) << where;
  size_t k = 0;
  for (; k < expected.size() && k < actual.size(); ++k) {
    const Step& e = expected[k];
    const Step& a = actual[k];
    for (const auto& [id, logprob] : e.top) {
      const auto found = a.top.find(id);
      if (found != a.top.end())
        EXPECT_NEAR(found->second, logprob, kLogprobTolerance)
            << where << " step " << k << " id " << id;
      else  // at the edge of the top 10: Hearth's 10th must be as likely, within the tolerance
        EXPECT_LE(logprob, a.lowest_top + kLogprobTolerance)
            << where << " step " << k << " id " << id;
    }
    if (a.id != e.id) {
      const auto other = e.top.find(a.id);
      EXPECT_TRUE(other != e.top.end() && e.logprob - other->second < kLogprobTolerance)
          << where << " step " << k << ": Hearth chose " << a.id << ", the reference " << e.id;
      break;
    }
    EXPECT_NEAR(a.logprob, e.logprob, kLogprobTolerance) << where << " step " << k;
  }
  return k;
}

// The last frame holding `key`.
Json last_with(const std::vector<Json>& frames, const std::string& key) {
  for (auto it = frames.rbegin(); it != frames.rend(); ++it)
    if (it->is_object() && it->contains(key)) return *it;
  return nullptr;
}

std::string anthropic_text(const std::vector<Json>& frames) {
  std::string text;
  for (const Json& f : frames)
    if (f.is_object() && f.value("type", "") == "content_block_delta")
      text += f["delta"].value("text", "");
  return text;
}

Json anthropic_start_usage(const std::vector<Json>& frames) {
  for (const Json& f : frames)
    if (f.is_object() && f.value("type", "") == "message_start") return f["message"]["usage"];
  return nullptr;
}

Json responses_completed(const std::vector<Json>& frames) {
  for (const Json& f : frames)
    if (f.is_object() && f.value("type", "") == "response.completed") return f["response"];
  return nullptr;
}

// The vectors of an embeddings answer, flattened per input: native [{index, embedding}] or
// OpenAI {data: [{embedding}]}.
std::vector<std::vector<double>> embedding_vectors(const Json& answer) {
  std::vector<std::vector<double>> out;
  const Json& items = answer.is_object() ? answer["data"] : answer;
  for (const Json& item : items) {
    std::vector<double>& v = out.emplace_back();
    for (const Json& row : item["embedding"]) {
      if (row.is_array()) {
        for (const Json& x : row) v.push_back(x.get<double>());
      } else {
        v.push_back(row.get<double>());
      }
    }
  }
  return out;
}

// Normalized vectors (last pooling): measured within 3e-4 of the reference's.
void expect_same_embeddings(const Json& expected, const Json& actual, const std::string& where) {
  const auto e = embedding_vectors(expected);
  const auto a = embedding_vectors(actual);
  ASSERT_EQ(a.size(), e.size()) << where << ": " << actual.dump();
  for (size_t i = 0; i < e.size(); ++i) {
    ASSERT_EQ(a[i].size(), e[i].size()) << where << " input " << i;
    for (size_t k = 0; k < e[i].size(); ++k) {
      EXPECT_NEAR(a[i][k], e[i][k], 2e-3) << where << " input " << i << " value " << k;
    }
  }
  if (expected.is_object()) {
    EXPECT_EQ(actual["usage"]["prompt_tokens"], expected["usage"]["prompt_tokens"]) << where;
  }
}

class MediaGolden : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    golden_ = load_media_golden(GetParam());
    ASSERT_FALSE(golden_.is_null()) << "tests/data/media/golden/" << GetParam() << ".json";
    dir_ = make_temp_dir("media-golden");
    const std::string failure = synth_media_pair(golden_, dir_);
    if (failure.rfind("SKIPPED", 0) == 0) GTEST_SKIP() << failure;
    ASSERT_EQ(failure, "");
    ASSERT_TRUE(start_media_server(server_, golden_, dir_)) << server_.log();
  }
  void TearDown() override {
    server_.stop();
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }

  void check_case(const Json& c);
  void check_stream(const Json& c, const std::vector<Json>& expected,
                    const std::vector<Json>& actual);

  Json golden_;
  std::string dir_;
  ServerProcess server_;
};

// The prompt cache on both servers after the same history: how much of the prompt (image
// included) was reused and how much evaluated, wherever the reference reports it.
void expect_same_cache_use(const std::vector<Json>& expected, const std::vector<Json>& actual,
                           const std::string& name) {
  const Json e = last_with(expected, "timings");
  if (e.is_object()) {
    const Json a = last_with(actual, "timings");
    ASSERT_TRUE(a.is_object()) << name << ": no timings";
    EXPECT_EQ(a["timings"]["cache_n"], e["timings"]["cache_n"]) << name;
    EXPECT_EQ(a["timings"]["prompt_n"], e["timings"]["prompt_n"]) << name;
  }
  const Json e_cached = last_with(expected, "tokens_cached");
  if (e_cached.is_object()) {
    EXPECT_EQ(last_with(actual, "tokens_cached")["tokens_cached"], e_cached["tokens_cached"])
        << name;
  }
}

void MediaGolden::check_stream(const Json& c, const std::vector<Json>& expected,
                               const std::vector<Json>& actual) {
  const std::string name = c["name"];
  const std::string path = c["request"]["path"];
  expect_same_cache_use(expected, actual, name);
  if (path == "/completion") {
    EXPECT_GE(expect_same_steps(steps_of(expected), steps_of(actual), name), 2u) << name;
    EXPECT_EQ(last_with(actual, "tokens_evaluated")["tokens_evaluated"],
              last_with(expected, "tokens_evaluated")["tokens_evaluated"])
        << name;
  } else if (path == "/v1/chat/completions") {
    EXPECT_GE(expect_same_steps(steps_of(expected), steps_of(actual), name), 2u) << name;
    const Json e = last_with(expected, "usage");
    const Json a = last_with(actual, "usage");
    ASSERT_TRUE(a.is_object()) << name << ": no usage chunk";
    EXPECT_EQ(a["usage"]["prompt_tokens"], e["usage"]["prompt_tokens"]) << name;
    // On chat_follow_up: the first turn's image KV reused as the reference reuses it.
    EXPECT_EQ(a["usage"]["prompt_tokens_details"]["cached_tokens"],
              e["usage"]["prompt_tokens_details"]["cached_tokens"])
        << a.dump();
  } else if (path == "/v1/messages") {
    if (name == "messages_stream_until_error") {
      // The reference failed the stream at the first invalid UTF-8 piece (its output parser);
      // Hearth goes on with U+FFFD. The text up to there must be the same.
      EXPECT_EQ(anthropic_text(actual).rfind(anthropic_text(expected), 0), 0u)
          << anthropic_text(actual) << " vs " << anthropic_text(expected);
    } else {
      EXPECT_EQ(anthropic_text(actual), anthropic_text(expected)) << name;
    }
    const Json e = anthropic_start_usage(expected);
    const Json a = anthropic_start_usage(actual);
    ASSERT_TRUE(a.is_object()) << name << ": no message_start";
    // The split between fresh and cached input follows the same history on both servers.
    EXPECT_EQ(a.value("input_tokens", -1), e.value("input_tokens", -1)) << a.dump();
    EXPECT_EQ(a.value("cache_read_input_tokens", -1), e.value("cache_read_input_tokens", -1))
        << a.dump();
  } else if (path == "/v1/responses") {
    const Json e = responses_completed(expected);
    const Json a = responses_completed(actual);
    ASSERT_TRUE(a.is_object()) << name << ": no response.completed";
    EXPECT_EQ(a["output"][0]["content"][0]["text"], e["output"][0]["content"][0]["text"]) << name;
    EXPECT_EQ(a["usage"]["input_tokens"], e["usage"]["input_tokens"]) << name;
    EXPECT_EQ(a["usage"]["input_tokens_details"], e["usage"]["input_tokens_details"]) << name;
  } else {
    ADD_FAILURE() << "no comparison for stream " << path;
  }
}

void MediaGolden::check_case(const Json& c) {
  const std::string name = c["name"];
  const HttpReply reply = http_request(server_.port(), "POST", c["request"]["path"],
                                       fill_media_placeholders(c["request"]["body"]));
  ASSERT_EQ(reply.status, c["status"].get<int>()) << name << ": " << reply.body;
  if (c.contains("frames")) {
    check_stream(c, reference_frames(c["frames"]), hearth_frames(reply.body));
    return;
  }
  const Json actual = parse_or_null(reply.body);
  const Json& expected = c["response"];
  if (name == "apply_template")
    EXPECT_EQ(actual["prompt"], expected["prompt"]);
  else if (name == "embeddings" || name == "v1_embeddings")
    expect_same_embeddings(expected, actual, name);
  else if (name == "messages_count_tokens")
    EXPECT_EQ(actual["input_tokens"], expected["input_tokens"]);
  else
    ADD_FAILURE() << "no comparison for " << name;
}

TEST_P(MediaGolden, AnswersAsTheReference) {
  for (const Json& c : golden_["cases"]) {
    SCOPED_TRACE(c["name"].get<std::string>());
    check_case(c);
  }
}

INSTANTIATE_TEST_SUITE_P(Projectors, MediaGolden,
                         ::testing::Values("gemma3-f32", "gemma3-f16", "gemma3-q8_0", "mlp-f32",
                                           "gemma3-f32-embd-last", "ultravox-f32", "pixtral-f32",
                                           "internvl-f32", "idefics3-f32", "llava16-f32",
                                           "lfm2-f32", "lfm2-lfm2-f32", "qwen2vl-f32",
                                           "qwen25vl-f32", "qwen3vl-f32"),
                         [](const ::testing::TestParamInfo<std::string>& config) {
                           std::string name = config.param;
                           for (char& ch : name)
                             if (ch == '-') ch = '_';
                           return name;
                         });

}  // namespace
}  // namespace hearth::test
