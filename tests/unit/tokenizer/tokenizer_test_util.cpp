#include "tokenizer_test_util.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <mutex>
#include <sstream>

#include "gguf/file.h"
#include "support/test_paths.h"

namespace hearth::tokenizer::test {
namespace {

std::mutex& cache_mutex() {
  static std::mutex m;
  return m;
}

std::map<std::string, std::unique_ptr<Tokenizer>>& cache() {
  static std::map<std::string, std::unique_ptr<Tokenizer>> c;
  return c;
}

const Tokenizer* load_gguf_cached(const std::string& path) {
  std::lock_guard<std::mutex> lock(cache_mutex());
  auto it = cache().find(path);
  if (it != cache().end()) return it->second.get();
  std::unique_ptr<Tokenizer> result;
  if (hearth::test::file_exists(path)) {
    auto file = gguf::File::open(path);
    EXPECT_TRUE(file.is_ok()) << file.status().to_string();
    if (file.is_ok()) {
      auto tok = Tokenizer::from_gguf(*file);
      EXPECT_TRUE(tok.is_ok()) << path << ": " << tok.status().to_string();
      if (tok.is_ok()) result = std::make_unique<Tokenizer>(std::move(tok).value());
    }
  }
  return cache().emplace(path, std::move(result)).first->second.get();
}

}  // namespace

const Tokenizer* vocab_gguf(const std::string& name) {
  return load_gguf_cached(hearth::test::shared_path("models/vocab/ggml-vocab-" + name + ".gguf"));
}

std::string npm_cache_dir() {
  return hearth::test::cache_dir();
}

const Tokenizer* npm_tokenizer(const std::string& package, std::string* missing) {
  const std::string dir = npm_cache_dir() + "/npm/" + package + "/package/models/";
  const std::string json_path = dir + "tokenizer.json";
  const std::string config_path = dir + "tokenizer_config.json";
  if (!hearth::test::file_exists(json_path)) {
    if (missing != nullptr) *missing = json_path;
    return nullptr;
  }
  std::lock_guard<std::mutex> lock(cache_mutex());
  auto it = cache().find(json_path);
  if (it != cache().end()) return it->second.get();
  std::unique_ptr<Tokenizer> result;
  auto tok = Tokenizer::from_tokenizer_json(
      json_path, hearth::test::file_exists(config_path) ? config_path : "");
  EXPECT_TRUE(tok.is_ok()) << json_path << ": " << tok.status().to_string();
  if (tok.is_ok()) result = std::make_unique<Tokenizer>(std::move(tok).value());
  return cache().emplace(json_path, std::move(result)).first->second.get();
}

const Tokenizer& stories260k() {
  const Tokenizer* tok = load_gguf_cached(hearth::test::shared_path("models/stories260K.gguf"));
  if (tok == nullptr) {
    ADD_FAILURE() << "models/stories260K.gguf cannot be loaded";
    std::abort();
  }
  return *tok;
}

std::vector<VocabCase> read_vocab_cases(const std::string& base) {
  return read_vocab_cases(base + ".inp", base + ".out");
}

std::vector<VocabCase> read_vocab_cases(const std::string& inp_path, const std::string& out_path) {
  const std::string raw = hearth::test::read_file(inp_path);
  const std::string out = hearth::test::read_file(out_path);
  const std::string sep = "\n__ggml_vocab_test__\n";
  std::vector<std::string> inputs;
  size_t pos = 0;
  while (pos < raw.size()) {
    const size_t next = raw.find(sep, pos);
    if (next == std::string::npos) {
      inputs.push_back(raw.substr(pos));
      break;
    }
    inputs.push_back(raw.substr(pos, next - pos));
    pos = next + sep.size();
  }
  std::vector<VocabCase> cases;
  std::istringstream lines(out);
  std::string line;
  size_t i = 0;
  while (std::getline(lines, line)) {
    VocabCase c;
    c.input = i < inputs.size() ? inputs[i] : std::string();
    std::istringstream ids(line);
    for (long long id = 0; ids >> id;) c.expected.push_back(static_cast<TokenId>(id));
    cases.push_back(std::move(c));
    ++i;
  }
  EXPECT_EQ(inputs.size(), cases.size())
      << inp_path << " and " << out_path << " disagree on the count of cases";
  return cases;
}

std::string format_ids(const std::vector<TokenId>& ids) {
  std::string s = "[";
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i > 0) s += ", ";
    s += std::to_string(ids[i]);
  }
  return s + "]";
}

std::string escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\r') {
      out += "\\r";
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace hearth::tokenizer::test
