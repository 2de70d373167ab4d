// hearth_version() and hearth_commit() are in the generated version_info.cpp (see
// CMakeLists.txt here): only that small file changes from one commit to the next.
#include "version/version.h"

namespace hearth {

std::string build_info() {
  return "b" + std::to_string(kCompatibleLlamaServerBuild) + "-" + std::string(hearth_commit());
}

}  // namespace hearth
