// Where tests find their inputs. The shared fixtures (models, golden captures) live beside
// the checkout at ../shared and are never copied into the repository.
#pragma once

#include <string>

namespace hearth::test {

// Root of the shared fixtures: $HEARTH_SHARED_DIR, else "<source>/../shared".
std::string shared_dir();
// shared_dir() + "/" + relative.
std::string shared_path(const std::string& relative);
// Directory of Hearth's built executables ($HEARTH_BIN_DIR).
std::string bin_dir();
// Cache for fetched test inputs such as npm packages ($HEARTH_TEST_CACHE_DIR).
std::string cache_dir();
// A fresh empty directory under the system temp dir, removed by the caller if wanted.
std::string make_temp_dir(const std::string& tag);
// Reads a whole file; fails the current test if it cannot.
std::string read_file(const std::string& path);
bool file_exists(const std::string& path);

}  // namespace hearth::test
