// Hearth's slot save file (POST /slots/:id?action=save|restore): the tokens a slot holds and
// the KV rows of those tokens, behind a header that names the model shape they belong to.
// The reference writes its engine's opaque state format; files are not interchangeable.
//
// Layout (little-endian):
//   "HEARTHSL" | u32 version | u32 n_layer, k_row_bytes, v_row_bytes, type_k, type_v, n_vocab
//   | u32 n_tokens | n_tokens x u32 token id | u64 n_kv_bytes | KV rows (KvSnapshot::data)
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "base/status.h"
#include "engine/kv_cache.h"

namespace hearth::scheduler {

// The reference's reasons for a failed restore (the HTTP layer prefixes "Unable to restore
// slot: ").
inline constexpr const char* kRestoreInvalidFile =
    "No available space in KV cache or invalid slot save file";
inline constexpr const char* kRestoreTooLong = "Restored prompt does not fit in the slot context";
inline constexpr const char* kRestoreBadTokens = "Invalid tokens in slot save file";

// What a file must match to be restored into a context.
struct SlotFileShape {
  engine::KvCacheShape kv;
  uint32_t type_k = 0;  // TensorType ids: f16 and bf16 rows have the same size
  uint32_t type_v = 0;
  int32_t n_vocab = 0;
};

struct SlotState {
  std::vector<int32_t> tokens;
  engine::KvSnapshot kv;  // kv.n_tokens == tokens.size()
};

// Bytes of a file holding `tokens` and their rows; `kv` must cover exactly those tokens.
std::vector<uint8_t> encode_slot_file(const SlotFileShape& shape, std::span<const int32_t> tokens,
                                      const engine::KvSnapshot& kv);

// Largest file a slot of `n_ctx_slot` tokens can restore (larger files are refused unread).
uint64_t max_slot_file_bytes(const SlotFileShape& shape, int32_t n_ctx_slot);

// Parses and validates a file. Errors are kInvalidArgument with one of the reasons above:
// kRestoreTooLong for more than n_ctx_slot tokens, kRestoreBadTokens for ids outside the
// vocabulary, kRestoreInvalidFile for anything else (magic, version, shape, sizes).
Result<SlotState> decode_slot_file(std::span<const uint8_t> bytes, const SlotFileShape& shape,
                                   int32_t n_ctx_slot);

// Whole-file helpers; kIo naming the path and the system's reason.
Status write_file(const std::string& path, std::span<const uint8_t> bytes);
// The first `max_bytes` bytes of a file (all of a shorter one); kIo when it cannot be read.
// Reading one byte more than a valid file can hold lets decode_slot_file() refuse a longer
// file by its header (too many tokens) or its size, without reading it all.
Result<std::vector<uint8_t>> read_file_bounded(const std::string& path, uint64_t max_bytes);

}  // namespace hearth::scheduler
