// How a model file is brought into memory, as the reference's --load-mode names the ways.
// Here in base so that the option parser can read -lm, and the file layer can act on it,
// without either knowing the other.
#pragma once

#include <optional>
#include <string_view>

namespace hearth {

enum class LoadMode {
  kAuto,       // mmap (the reference maps unless a device cannot use a mapping; none here can)
  kNone,       // read the file into ordinary memory
  kMmap,       // map the file read-only
  kMlock,      // read the file into memory and lock it there
  kMmapMlock,  // map the file and lock the mapping
  kDirectIo,   // read the file with O_DIRECT, bypassing the page cache
};

// The -lm values: auto, none, mmap, mlock, mmap+mlock, dio; nullopt for anything else.
std::optional<LoadMode> load_mode_from_name(std::string_view name);
std::string_view load_mode_name(LoadMode mode);

// What a mode does with the file: map it (or read it), and lock it in RAM.
inline bool load_mode_maps(LoadMode mode) {
  return mode == LoadMode::kAuto || mode == LoadMode::kMmap || mode == LoadMode::kMmapMlock;
}
inline bool load_mode_locks(LoadMode mode) {
  return mode == LoadMode::kMlock || mode == LoadMode::kMmapMlock;
}

}  // namespace hearth
