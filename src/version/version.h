// Which Hearth this is: the project version CMake sets, the git commit the build was made
// from, and the llama-server release whose API and command line Hearth follows.
#pragma once

#include <string>
#include <string_view>

namespace hearth {

inline constexpr int kCompatibleLlamaServerBuild = 10621;

// CMake's project version, e.g. "0.1.0".
std::string_view hearth_version();
// The short hash (8 hex digits) of the commit the build was made from, read when the build
// runs; "unknown" for a build outside a git checkout (a source tarball).
std::string_view hearth_commit();
// llama-server's "b<build number>-<commit>" (/props build_info, system_fingerprint): the
// number is the compatible release's, the commit Hearth's own.
std::string build_info();

}  // namespace hearth
