#include <fmt/format.h>

#include <regex>

#include "gguf/file.h"

namespace hearth::gguf {

std::string split_path(const std::string& prefix, int index, int count) {
  return fmt::format("{}-{:05d}-of-{:05d}.gguf", prefix, index + 1, count);
}

namespace {

// Reads split.no / split.count of one file; a file without them is shard 0 of 1.
Status read_split_keys(const File& f, uint32_t& no, uint32_t& count) {
  no = 0;
  count = 1;
  const Value* vno = f.find("split.no");
  const Value* vcount = f.find("split.count");
  if (vcount == nullptr) return Status::ok();
  if (vcount->type() != ValueType::kU16 || (vno && vno->type() != ValueType::kU16))
    return error(ErrorCode::kCorruptFile, f.name() + ": split.no / split.count must be u16");
  count = static_cast<uint32_t>(*vcount->as_uint());
  no = vno ? static_cast<uint32_t>(*vno->as_uint()) : 0;
  if (count == 0 || no >= count)
    return error(ErrorCode::kCorruptFile, fmt::format("{}: split {} of {} is invalid", f.name(), no, count));
  return Status::ok();
}

}  // namespace

Result<Archive> Archive::open(const std::string& path) {
  Archive archive;
  HEARTH_ASSIGN_OR_RETURN(File first, File::open(path));
  uint32_t no = 0, count = 1;
  HEARTH_RETURN_IF_ERROR(read_split_keys(first, no, count));
  if (no != 0)
    return error(ErrorCode::kInvalidArgument, fmt::format("{} is shard {} of {}; pass the first shard", path, no + 1, count));
  archive.files_.reserve(count);
  archive.files_.push_back(std::move(first));
  if (count > 1) {
    static const std::regex kPattern(R"((.*)-(\d{5})-of-(\d{5})\.gguf$)");
    std::smatch m;
    if (!std::regex_match(path, m, kPattern))
      return error(ErrorCode::kInvalidArgument,
                   fmt::format("{} declares {} shards but its name is not <prefix>-00001-of-{:05d}.gguf", path, count, count));
    const std::string prefix = m[1].str();
    for (uint32_t i = 1; i < count; ++i) {
      const std::string shard_path = split_path(prefix, static_cast<int>(i), static_cast<int>(count));
      HEARTH_ASSIGN_OR_RETURN(File shard, File::open(shard_path));
      uint32_t sno = 0, scount = 1;
      HEARTH_RETURN_IF_ERROR(read_split_keys(shard, sno, scount));
      if (sno != i || scount != count)
        return error(ErrorCode::kCorruptFile,
                     fmt::format("{} says it is shard {} of {}, expected {} of {}", shard_path, sno + 1, scount, i + 1, count));
      archive.files_.push_back(std::move(shard));
    }
  }
  for (size_t s = 0; s < archive.files_.size(); ++s) {
    for (const TensorInfo& t : archive.files_[s].tensors()) {
      const_cast<TensorInfo&>(t).shard = static_cast<int>(s);
      if (!archive.index_.emplace(t.name, &t).second)
        return error(ErrorCode::kCorruptFile, fmt::format("tensor '{}' appears in more than one shard", t.name));
      archive.all_tensors_.push_back(&t);
    }
  }
  if (const Value* total = archive.primary().find("split.tensors.count")) {
    auto n = total->as_int();
    if (!n || *n != static_cast<int64_t>(archive.all_tensors_.size()))
      return error(ErrorCode::kCorruptFile, fmt::format("{}: split.tensors.count says {} tensors, the shards hold {}",
                                                        path, total->to_display_string(), archive.all_tensors_.size()));
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

}  // namespace hearth::gguf
