// The embedding and rerank routes end to end. Replays what llama-server b10573 answered
// (tests/data/embeddings/server/<set>: cases in order, captured with the flags cases.json
// names) against the real hearth-server started with the same flags: same status, content
// type, keys and value types; equal indices, usage, model names and messages; vectors
// (each input's answer alone where the reference mixes the inputs of one batch)
// pointing the same way (cosine >= 0.9999, F32/F16 bound of issue 15) with the same length
// to 1e-3, base64 vectors decoded first; rerank scores within 1e-3. Then what the captures
// cannot show: inputs of concurrent requests packed into shared steps give the vectors they
// give alone, and rank scores do not depend on the other documents of a request.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <future>
#include <string>
#include <vector>

#include "server/golden_compare.h"
#include "server/harness.h"
#include "support/process.h"
#include "support/test_paths.h"

namespace hearth::test {
namespace {

std::string data_dir() {
  return std::string(HEARTH_SOURCE_DIR) + "/tests/data/embeddings/server";
}

std::vector<float> decode_base64_floats(const std::string& text) {
  auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    return c == '+' ? 62 : c == '/' ? 63 : -1;
  };
  std::string bytes;
  uint32_t acc = 0;
  int bits = 0;
  for (char c : text) {
    const int v = value(c);
    if (v < 0) break;  // '=' padding ends the data
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      bytes.push_back(static_cast<char>((acc >> bits) & 0xff));
    }
  }
  std::vector<float> out(bytes.size() / sizeof(float));
  std::memcpy(out.data(), bytes.data(), out.size() * sizeof(float));
  return out;
}

std::vector<float> floats_of(const OJson& v) {
  if (v.is_string()) return decode_base64_floats(v.get<std::string>());
  std::vector<float> out;
  for (const OJson& x : v) out.push_back(x.is_null() ? NAN : x.get<float>());
  return out;
}

bool is_number_array(const OJson& v) {
  if (!v.is_array() || v.empty()) return false;
  for (const OJson& x : v)
    if (!x.is_number()) return false;
  return true;
}

// Same direction (issue 15's bounds: 0.9999 for F32/F16 models, 0.999 for Q8_0) and length.
void compare_vectors(const OJson& e, const OJson& a, const std::string& path, double min_cosine,
                     std::vector<std::string>& diffs) {
  const std::vector<float> want = floats_of(e), got = floats_of(a);
  if (want.size() != got.size()) {
    diffs.push_back(path + ": " + std::to_string(want.size()) + " values expected, got " +
                    std::to_string(got.size()));
    return;
  }
  double ab = 0, aa = 0, bb = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    ab += static_cast<double>(want[i]) * got[i];
    aa += static_cast<double>(want[i]) * want[i];
    bb += static_cast<double>(got[i]) * got[i];
  }
  if (aa == 0.0 && bb == 0.0) return;
  const double cosine = ab / std::sqrt(aa * bb);
  const double len_w = std::sqrt(aa), len_g = std::sqrt(bb);
  const double length_tolerance = min_cosine >= 0.9999 ? 1e-3 : 1e-2;
  if (!(cosine >= min_cosine) || std::fabs(len_w - len_g) > length_tolerance * len_w)
    diffs.push_back(path + ": cosine " + std::to_string(cosine) + ", length " +
                    std::to_string(len_g) + " for " + std::to_string(len_w));
}

struct Walker {
  bool values = true;
  double min_cosine = 0.9999;
  std::vector<std::string> diffs;

  void walk(const OJson& e, const OJson& a, const std::string& path, const std::string& key) {
    if (key == "embedding" && values) {
      if (e.is_string() && a.is_string()) return compare_vectors(e, a, path, min_cosine, diffs);
      if (is_number_array(e) && is_number_array(a))
        return compare_vectors(e, a, path, min_cosine, diffs);
    }
    if (e.type() != a.type() && !(e.is_number() && a.is_number())) {
      diffs.push_back(path + ": type " + e.type_name() + " expected, got " + a.type_name());
      return;
    }
    if (e.is_object()) {
      std::vector<std::string> ek, ak;
      for (auto it = e.begin(); it != e.end(); ++it) ek.push_back(it.key());
      for (auto it = a.begin(); it != a.end(); ++it) ak.push_back(it.key());
      if (ek != ak) {
        diffs.push_back(path + ": keys differ: " + e.dump().substr(0, 200) + " vs " +
                        a.dump().substr(0, 200));
        return;
      }
      for (const std::string& k : ek) walk(e[k], a[k], path + "/" + k, k);
      return;
    }
    if (e.is_array()) {
      if (e.size() != a.size()) {
        diffs.push_back(path + ": " + std::to_string(e.size()) + " elements expected, got " +
                        std::to_string(a.size()));
        return;
      }
      for (size_t i = 0; i < e.size(); ++i) walk(e[i], a[i], path + "/" + std::to_string(i), key);
      return;
    }
    if (!values) return;
    if (key == "score" || key == "relevance_score") {
      if (std::fabs(e.get<double>() - a.get<double>()) > 1e-3)
        diffs.push_back(path + ": " + e.dump() + " expected, got " + a.dump());
      return;
    }
    if (e != a) diffs.push_back(path + ": " + e.dump() + " expected, got " + a.dump());
  }
};

// Rerank requests of several documents on models without a classifier head: the reference
// reads seq k's score at offset k of the first sequence's pooled row (differences.json,
// rank-score-own-sequence), so only the shape and the indices can be compared.
bool scores_from_other_sequences(const std::string& name, const OJson& request,
                                 bool has_classifier) {
  if (has_classifier || name.rfind("rerank", 0) != 0) return false;
  const OJson& body = request["body"];
  const char* key = body.contains("documents") ? "documents" : "texts";
  return body.contains(key) && body[key].is_array() && body[key].size() > 1;
}

// Several inputs pooled in one batch (mean, cls) on a decoder: the reference sums rows of
// the wrong sequences (differences.json, pooled-rows-own-sequence). The captures also hold
// each input's answer when sent alone; those are the vectors expected.
void use_lone_answers(const OJson& capture, OJson& want) {
  if (!capture.contains("alone")) return;
  const OJson& alone = capture["alone"];
  for (size_t i = 0; i < alone.size(); ++i) {
    if (want.is_array()) {
      want[i]["embedding"] = alone[i][0]["embedding"];
    } else {
      want["data"][i]["embedding"] = alone[i]["data"][0]["embedding"];
    }
  }
}

void replace_strings(OJson& v, const std::string& from, const std::string& to) {
  if (v.is_string() && v.get<std::string>() == from) v = to;
  if (v.is_structured()) {
    for (auto& child : v) replace_strings(child, from, to);
  }
}

class EmbeddingReplay : public ::testing::TestWithParam<std::string> {};

// A set's model: a shared file, or one hearth-synth writes from the recorded arguments (the
// encoders, random weights with a shared vocabulary) into `tmp`; "" when it cannot, with
// `missing` set when a shared input is absent (the test then skips) rather than broken.
std::string set_model(const OJson& cases, const std::string& capture_model, const std::string& tmp,
                      std::string& why, bool& missing) {
  missing = false;
  if (!cases.contains("synth")) {
    const std::string path = shared_path(capture_model);
    missing = !file_exists(path);
    if (missing) why = path + " is missing";
    return missing ? "" : path;
  }
  std::vector<std::string> args{bin_dir() + "/hearth-synth"};
  for (const OJson& a : cases["synth"]) {
    const std::string arg = a;
    args.push_back(arg.rfind("models/", 0) == 0 ? shared_path(arg) : arg);
    if (arg.rfind("models/", 0) == 0 && !file_exists(args.back())) {
      why = args.back() + " is missing";
      missing = true;
      return "";
    }
  }
  const std::string out = tmp + "/model.gguf";
  args.insert(args.end(), {"-o", out});
  const ProcessResult r = run_process(args, 120);
  if (r.exit_code != 0) why = "hearth-synth failed: " + r.err;
  return r.exit_code == 0 ? out : "";
}

TEST_P(EmbeddingReplay, AnswersAsTheReference) {
  const std::string dir = data_dir() + "/" + GetParam();
  const OJson cases = OJson::parse(read_file(dir + "/cases.json"));
  std::string capture_model;
  for (size_t i = 1; i < cases["flags"].size(); ++i)
    if (cases["flags"][i - 1] == "-m") capture_model = cases["flags"][i];
  const std::string tmp = make_temp_dir("embd-replay");
  std::string why;
  bool missing = false;
  const std::string model = set_model(cases, capture_model, tmp, why, missing);
  if (missing) GTEST_SKIP() << "SKIPPED: " << why;
  ASSERT_FALSE(model.empty()) << why;
  std::vector<std::string> args;
  for (size_t i = 0; i < cases["flags"].size(); ++i)
    args.push_back(i > 0 && cases["flags"][i - 1] == "-m" ? model
                                                          : cases["flags"][i].get<std::string>());
  ServerProcess server;
  ASSERT_TRUE(server.start(args)) << server.log();
  for (const OJson& c : cases["cases"]) {
    const std::string name = c["name"];
    SCOPED_TRACE(name);
    OJson capture = OJson::parse(read_file(dir + "/" + name + ".json"));
    const OJson& request = capture["request"];
    const HttpReply reply =
        http_request(server.port(), "POST", request["path"], request["body"].dump());
    int want_status = capture["status"];
    OJson want = capture["response"];
    replace_strings(want, capture_model, model);
    // An empty input list and an input past the physical batch are the client's
    // (differences.json, embedding-request-mistakes-400).
    if (name == "embedding_empty_list" || name == "v1_too_large" || name == "v1_cls_too_large") {
      want_status = 400;
      want["error"]["code"] = 400;
      want["error"]["type"] = "invalid_request_error";
    }
    use_lone_answers(capture, want);
    ASSERT_EQ(reply.status, want_status) << reply.body.substr(0, 400);
    EXPECT_EQ(reply.header("content-type"), capture["content_type"].get<std::string>());
    const OJson got = OJson::parse(reply.body);
    Walker w;
    w.values = !scores_from_other_sequences(name, request, cases.contains("synth"));
    w.min_cosine = cases.value("cosine", 0.9999);
    w.walk(want, got, "", "");
    for (const std::string& d : w.diffs) ADD_FAILURE() << d;
  }
}

std::vector<std::string> capture_sets() {
  std::vector<std::string> sets;
  for (const auto& entry : std::filesystem::directory_iterator(data_dir()))
    if (entry.is_directory()) sets.push_back(entry.path().filename().string());
  std::sort(sets.begin(), sets.end());
  return sets;
}

INSTANTIATE_TEST_SUITE_P(Captures, EmbeddingReplay, ::testing::ValuesIn(capture_sets()),
                         [](const auto& param_info) {
                           std::string n = param_info.param;
                           for (char& ch : n)
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return n;
                         });

class EmbeddingServer : public ::testing::Test {
 protected:
  void start(const std::vector<std::string>& extra) {
    const std::string model = shared_path("models/stories260K.gguf");
    if (!file_exists(model)) GTEST_SKIP() << "SKIPPED: " << model << " is missing";
    std::vector<std::string> args = {"-m", model};
    args.insert(args.end(), extra.begin(), extra.end());
    ASSERT_TRUE(server_.start(args)) << server_.log();
  }
  OJson post(const std::string& path, const OJson& body, int want_status = 200) {
    const HttpReply reply = http_request(server_.port(), "POST", path, body.dump());
    EXPECT_EQ(reply.status, want_status) << reply.body.substr(0, 400);
    return OJson::parse(reply.body, nullptr, false);
  }
  ServerProcess server_;
};

// 8 clients at once, each with several inputs of different lengths: the scheduler packs
// them into shared steps, and every vector equals, bit for bit, the one the input gets alone.
TEST_F(EmbeddingServer, ConcurrentInputsGetTheVectorsTheyGetAlone) {
  start({"--embedding", "--pooling", "mean", "-np", "4", "-c", "2048"});
  std::vector<std::string> texts;
  for (int i = 0; i < 16; ++i)
    texts.push_back(std::string(static_cast<size_t>(1 + (i * 7) % 23), 'a' + static_cast<char>(i)) +
                    " once upon a time");
  std::vector<OJson> alone;
  for (const std::string& t : texts)
    alone.push_back(post("/embedding", OJson{{"input", t}})[0]["embedding"][0]);
  std::vector<std::future<OJson>> clients;
  for (int c = 0; c < 8; ++c) {
    clients.push_back(std::async(std::launch::async, [&, c] {
      const OJson input = {texts[static_cast<size_t>(c)], texts[static_cast<size_t>(c + 8)]};
      return post("/v1/embeddings", OJson{{"input", input}});
    }));
  }
  for (int c = 0; c < 8; ++c) {
    const OJson got = clients[static_cast<size_t>(c)].get();
    ASSERT_TRUE(got.contains("data")) << got.dump().substr(0, 300);
    EXPECT_EQ(got["data"][0]["embedding"], alone[static_cast<size_t>(c)]) << c;
    EXPECT_EQ(got["data"][1]["embedding"], alone[static_cast<size_t>(c + 8)]) << c;
  }
}

// The reference reads the scores of a request's later documents from the first one's row;
// Hearth gives each document its own score, the one it gets when ranked alone.
TEST_F(EmbeddingServer, RankScoresDoNotDependOnTheOtherDocuments) {
  start({"--reranking", "-np", "4", "-c", "2048"});
  const std::vector<std::string> docs = {"Lily went to the park.", "The dog barked.",
                                         "A little girl named Lily played.", "Once upon a time"};
  const OJson all = post("/rerank", OJson{{"query", "Who is Lily?"}, {"documents", docs}});
  ASSERT_EQ(all["results"].size(), docs.size());
  double previous = INFINITY;
  for (const OJson& r : all["results"]) {
    const double score = r["relevance_score"];
    EXPECT_LE(score, previous) << "results are sorted best first";
    previous = score;
    const std::string doc = docs[r["index"].get<size_t>()];
    const OJson one = post("/rerank", OJson{{"query", "Who is Lily?"}, {"documents", {doc}}});
    EXPECT_EQ(one["results"][0]["relevance_score"].get<double>(), score) << doc;
  }
  // With rank pooling an embedding is the rank head's output: one value, the score
  // (differences.json, embedding-with-rank-pooling).
  const OJson e = post("/v1/embeddings", OJson{{"input", "Lily"}});
  ASSERT_EQ(e["data"][0]["embedding"].size(), 1u) << e.dump().substr(0, 200);
}

// An encoder computes embeddings only: a completion request is the client's mistake (400;
// the reference answers 500), the embedding routes answer.
TEST_F(EmbeddingServer, EncoderRefusesCompletions) {
  const std::string vocab = shared_path("models/vocab/ggml-vocab-bert-bge.gguf");
  if (!file_exists(vocab)) GTEST_SKIP() << "SKIPPED: " << vocab << " is missing";
  const std::string dir = make_temp_dir("encoder-server");
  const ProcessResult synth = run_process({bin_dir() + "/hearth-synth",
                                           "--vocab",
                                           vocab,
                                           "--arch",
                                           "bert",
                                           "--n-embd",
                                           "32",
                                           "--n-layer",
                                           "1",
                                           "--n-head",
                                           "2",
                                           "--n-head-kv",
                                           "2",
                                           "--n-ff",
                                           "64",
                                           "--ctx",
                                           "128",
                                           "--type",
                                           "f16",
                                           "--pooling",
                                           "1",
                                           "-o",
                                           dir + "/bert.gguf"});
  ASSERT_EQ(synth.exit_code, 0) << synth.err;
  ASSERT_TRUE(server_.start({"-m", dir + "/bert.gguf", "--embedding", "-np", "1"}))
      << server_.log();
  const OJson e = post("/completion", OJson{{"prompt", "hello"}, {"n_predict", 2}}, 400);
  EXPECT_EQ(e["error"]["type"], "invalid_request_error");
  EXPECT_EQ(post("/embedding", OJson{{"input", "hello"}})[0]["embedding"][0].size(), 32u);
  std::filesystem::remove_all(dir);
}

// hearth-loadbench's embedding mode (the benchmark of issue 15) against the real server.
TEST_F(EmbeddingServer, LoadbenchCountsEmbeddings) {
  start({"--embedding", "--pooling", "mean", "-np", "2"});
  const ProcessResult r = run_process({bin_dir() + "/hearth-loadbench", "--url",
                                       "http://127.0.0.1:" + std::to_string(server_.port()),
                                       "--embeddings", "4", "-c", "2", "-n", "4", "--json"},
                                      120);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const OJson summary = OJson::parse(r.out);
  EXPECT_EQ(summary["requests_failed"], 0);
  EXPECT_EQ(summary["embeddings"], 16);
  EXPECT_GT(summary["tokens_evaluated"].get<int>(), 16);
  EXPECT_GT(summary["embeddings_per_s"].get<double>(), 0.0);
}

}  // namespace
}  // namespace hearth::test
