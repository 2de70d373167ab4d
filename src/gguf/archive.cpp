#include <fmt/format.h>

#include "gguf/file.h"
#include "gguf/parser.h"

namespace hearth::gguf {

std::string split_path(const std::string& prefix, int index, int count) {
  return fmt::format("{}-{:05d}-of-{:05d}.gguf", prefix, index + 1, count);
}

namespace {

// Five ASCII digits starting at `s[at]`, or -1.
int parse_five_digits(std::string_view s, size_t at) {
  int n = 0;
  for (size_t i = at; i < at + 5; ++i) {
    if (s[i] < '0' || s[i] > '9') return -1;
    n = n * 10 + (s[i] - '0');
  }
  return n;
}

}  // namespace

std::optional<SplitPath> parse_split_path(std::string_view path) {
  constexpr std::string_view kSuffix = ".gguf";
  // "-NNNNN-of-MMMMM.gguf"
  constexpr size_t kTail = 1 + 5 + 4 + 5 + kSuffix.size();
  if (path.size() < kTail) return std::nullopt;
  const size_t at = path.size() - kTail;
  const std::string_view tail = path.substr(at);
  if (tail[0] != '-' || tail.substr(6, 4) != "-of-" || tail.substr(15) != kSuffix)
    return std::nullopt;
  const int number = parse_five_digits(tail, 1);
  const int count = parse_five_digits(tail, 10);
  if (number < 1 || count < 1 || number > count) return std::nullopt;
  return SplitPath{std::string(path.substr(0, at)), number - 1, count};
}

namespace {

struct SplitKeys {
  uint32_t no = 0;
  uint32_t count = 1;
};

// Reads split.no / split.count (both u16); a file without them is shard 0 of 1.
Result<SplitKeys> read_split_keys(const File& f) {
  SplitKeys keys;
  const Value* vno = f.find("split.no");
  const Value* vcount = f.find("split.count");
  for (const auto& [key, v] : {std::pair{"split.no", vno}, std::pair{"split.count", vcount}}) {
    if (v != nullptr && v->type() != ValueType::kU16) {
      return error(ErrorCode::kCorruptFile,
                   fmt::format("{}: key '{}' is stored as {}, expected u16", f.name(), key,
                               value_type_name(v->type())));
    }
  }
  if (vcount != nullptr) keys.count = static_cast<uint32_t>(*vcount->as_uint());
  if (vno != nullptr) keys.no = static_cast<uint32_t>(*vno->as_uint());
  if (keys.count == 0 || keys.no >= keys.count) {
    return error(ErrorCode::kCorruptFile,
                 fmt::format("{}: split.no {} with split.count {} is invalid", f.name(), keys.no,
                             keys.count));
  }
  return keys;
}

// Checks that the first shard's name encodes shard 1 of `count`, and returns the prefix.
Result<std::string> shard_prefix(const std::string& path, uint32_t count) {
  const auto split = parse_split_path(path);
  if (!split || split->index != 0 || static_cast<uint32_t>(split->count) != count) {
    return error(ErrorCode::kInvalidArgument,
                 fmt::format("{} declares {} shards, so its name must end in -00001-of-{:05d}.gguf",
                             path, count, count));
  }
  return split->prefix;
}

Result<File> open_shard(const std::string& prefix, uint32_t index, uint32_t count, LoadMode mode) {
  const std::string path = split_path(prefix, static_cast<int>(index), static_cast<int>(count));
  auto shard = File::open(path, mode);
  if (!shard.is_ok()) {
    const Status& s = shard.status();
    return error(s.code(), fmt::format("shard {} of {}: {}", index + 1, count, s.message()));
  }
  HEARTH_ASSIGN_OR_RETURN(const SplitKeys keys, read_split_keys(*shard));
  if (keys.no != index || keys.count != count) {
    return error(ErrorCode::kCorruptFile,
                 fmt::format("{}: split keys say shard {} of {}, expected shard {} of {}", path,
                             keys.no + 1, keys.count, index + 1, count));
  }
  return shard;
}

}  // namespace

Result<Archive> Archive::open(const std::string& path, LoadMode mode) {
  Archive archive;
  HEARTH_ASSIGN_OR_RETURN(File first, File::open(path, mode));
  HEARTH_ASSIGN_OR_RETURN(const SplitKeys keys, read_split_keys(first));
  if (keys.no != 0) {
    return error(ErrorCode::kInvalidArgument,
                 fmt::format("{} is shard {} of {}; open the first shard (-00001-of-{:05d}.gguf)",
                             path, keys.no + 1, keys.count, keys.count));
  }
  archive.files_.push_back(std::move(first));
  if (keys.count > 1) {
    HEARTH_ASSIGN_OR_RETURN(const std::string prefix, shard_prefix(path, keys.count));
    for (uint32_t i = 1; i < keys.count; ++i) {
      HEARTH_ASSIGN_OR_RETURN(File shard, open_shard(prefix, i, keys.count, mode));
      archive.files_.push_back(std::move(shard));
    }
  }
  // Pointers into each File's tensor table stay valid from here on: each table is a vector
  // that no longer changes, and moving a File or the Archive moves vector storage, not
  // elements. (files_ is not reserved up front: split.count comes from the file.)
  for (size_t s = 0; s < archive.files_.size(); ++s) {
    for (TensorInfo& t : archive.files_[s].tensors_) {
      t.shard = static_cast<int>(s);
      const auto [it, inserted] = archive.index_.emplace(t.name, &t);
      if (!inserted) {
        return error(ErrorCode::kCorruptFile,
                     fmt::format("{}: tensor '{}' is in shard {} and again in shard {}", path,
                                 printable(t.name), it->second->shard + 1, s + 1));
      }
      archive.all_tensors_.push_back(&t);
    }
  }
  if (const Value* total = archive.primary().find("split.tensors.count")) {
    const auto n = total->as_int();
    if (!n || *n != static_cast<int64_t>(archive.all_tensors_.size())) {
      return error(ErrorCode::kCorruptFile,
                   fmt::format("{}: split.tensors.count is {}, but the shards hold {} tensors",
                               path, total->to_display_string(), archive.all_tensors_.size()));
    }
  }
  return archive;
}

const TensorInfo* Archive::find_tensor(std::string_view name) const {
  auto it = index_.find(name);
  return it == index_.end() ? nullptr : it->second;
}

uint64_t Archive::total_tensor_bytes() const {
  uint64_t total = 0;
  for (const TensorInfo* t : all_tensors_) total += t->n_bytes;
  return total;
}

void Archive::release_pages(const void* p, size_t n) const {
  for (const File& f : files_) {
    if (f.mapping_ != nullptr) f.mapping_->release(p, n);  // a no-op outside its mapping
  }
}

}  // namespace hearth::gguf
