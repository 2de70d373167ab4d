#include "support/test_paths.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

namespace hearth::test {
namespace {

std::string env_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return (v != nullptr && *v != '\0') ? std::string(v) : fallback;
}

}  // namespace

std::string shared_dir() {
  return env_or("HEARTH_SHARED_DIR", HEARTH_DEFAULT_SHARED_DIR);
}
std::string shared_path(const std::string& relative) {
  return shared_dir() + "/" + relative;
}
std::string bin_dir() {
  return env_or("HEARTH_BIN_DIR", HEARTH_DEFAULT_BIN_DIR);
}
std::string cache_dir() {
  return env_or("HEARTH_TEST_CACHE_DIR", HEARTH_DEFAULT_CACHE_DIR);
}

std::string make_temp_dir(const std::string& tag) {
  std::random_device rd;
  const auto base = std::filesystem::temp_directory_path();
  for (int attempt = 0; attempt < 100; ++attempt) {
    auto dir = base / ("hearth-" + tag + "-" + std::to_string(rd()));
    if (std::filesystem::create_directory(dir)) return dir.string();
  }
  ADD_FAILURE() << "cannot create a temp dir";
  return base.string();
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    ADD_FAILURE() << "cannot read " << path;
    return {};
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool file_exists(const std::string& path) {
  return std::filesystem::exists(path);
}

}  // namespace hearth::test
