#include "base/load_mode.h"

#include <array>
#include <utility>

namespace hearth {
namespace {

constexpr std::array<std::pair<std::string_view, LoadMode>, 6> kNames = {{
    {"auto", LoadMode::kAuto},
    {"none", LoadMode::kNone},
    {"mmap", LoadMode::kMmap},
    {"mlock", LoadMode::kMlock},
    {"mmap+mlock", LoadMode::kMmapMlock},
    {"dio", LoadMode::kDirectIo},
}};

}  // namespace

std::optional<LoadMode> load_mode_from_name(std::string_view name) {
  for (const auto& [text, mode] : kNames)
    if (text == name) return mode;
  return std::nullopt;
}

std::string_view load_mode_name(LoadMode mode) {
  for (const auto& [text, m] : kNames)
    if (m == mode) return text;
  return "auto";
}

}  // namespace hearth
