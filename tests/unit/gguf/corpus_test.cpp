// Replays the GGUF fuzz corpus (seeds and saved findings) through the parser, so every input
// that once mattered to the fuzzer keeps being checked in ordinary test runs.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <memory>

#include "fuzz/gguf_exercise.h"
#include "gguf/file.h"
#include "support/test_paths.h"

#ifndef HEARTH_GGUF_CORPUS_DIR
#error "HEARTH_GGUF_CORPUS_DIR must name tests/fuzz/corpus/gguf"
#endif

namespace hearth::gguf {
namespace {

TEST(GgufFuzzCorpus, EveryInputParsesOrFailsCleanly) {
  const std::filesystem::path dir = HEARTH_GGUF_CORPUS_DIR;
  ASSERT_TRUE(std::filesystem::is_directory(dir)) << dir;
  std::vector<std::filesystem::path> paths;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.is_regular_file()) paths.push_back(entry.path());
  }
  std::sort(paths.begin(), paths.end());
  ASSERT_FALSE(paths.empty()) << "the corpus in " << dir << " is empty";
  int n_seeds = 0;
  for (const auto& path : paths) {
    SCOPED_TRACE(path.string());
    const std::string content = test::read_file(path.string());
    // An exactly sized copy, so a sanitizer catches any read past the end.
    auto bytes = std::make_unique<uint8_t[]>(content.size());
    std::copy(content.begin(), content.end(), bytes.get());
    auto f = File::parse(std::span<const uint8_t>(bytes.get(), content.size()), path.string());
    // Seeds are valid files by construction; other inputs (saved findings) may be either.
    if (path.filename().string().rfind("seed-", 0) == 0) {
      ++n_seeds;
      ASSERT_TRUE(f.is_ok()) << f.status().to_string();
    }
    if (!f.is_ok()) {
      EXPECT_EQ(f.status().code(), ErrorCode::kCorruptFile) << f.status().to_string();
      continue;
    }
    uint64_t checksum = 0;
    EXPECT_EQ(fuzz::exercise(*f, checksum), "");
    EXPECT_EQ(fuzz::check_rewrite(*f), "");
  }
  EXPECT_GE(n_seeds, 2);
}

}  // namespace
}  // namespace hearth::gguf
