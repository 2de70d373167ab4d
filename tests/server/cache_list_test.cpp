// hearth-server -cl / --cache-list prints the models of the Hugging Face cache the
// environment names, as llama-server prints them, and exits 0 without loading anything.
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "server/server_fixture.h"
#include "support/process.h"

namespace hearth::test {
namespace {

namespace fs = std::filesystem;

TEST(CacheList, PrintsTheCachedModelsAndExits) {
  const std::string dir = make_temp_dir("cache_list");
  const std::string commit(40, 'c');
  const fs::path snapshot = fs::path(dir) / "models--ggml-org--stories-GGUF/snapshots" / commit;
  fs::create_directories(snapshot);
  fs::create_directories(fs::path(dir) / "models--ggml-org--stories-GGUF/refs");
  std::ofstream(fs::path(dir) / "models--ggml-org--stories-GGUF/refs/main") << commit;
  std::ofstream(snapshot / "stories-Q8_0.gguf") << "GGUF";
  std::ofstream(snapshot / "stories-F32.gguf") << "GGUF";
  const char* saved = std::getenv("LLAMA_CACHE");
  const std::string previous = saved ? saved : "";
  setenv("LLAMA_CACHE", dir.c_str(), 1);
  for (const char* spelling : {"-cl", "--cache-list"}) {
    const ProcessResult r = run_process({bin_dir() + "/hearth-server", spelling}, 60);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out,
              "number of models in cache: 2\n"
              "   1. ggml-org/stories-GGUF:F32\n"
              "   2. ggml-org/stories-GGUF:Q8_0\n");
  }
  if (saved) {
    setenv("LLAMA_CACHE", previous.c_str(), 1);
  } else {
    unsetenv("LLAMA_CACHE");
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace hearth::test
