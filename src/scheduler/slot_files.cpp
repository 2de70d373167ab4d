#include "scheduler/slot_files.h"

#include <fmt/format.h>

#include <algorithm>

#include "base/timer.h"

namespace hearth::scheduler::detail {
namespace {

SlotFileShape shape_of(const engine::Model& model, const engine::Context& ctx) {
  SlotFileShape s;
  s.kv = ctx.kv_cache().config().shape;
  s.type_k = static_cast<uint32_t>(ctx.params().type_k);
  s.type_v = static_cast<uint32_t>(ctx.params().type_v);
  s.n_vocab = model.hparams().n_vocab;
  return s;
}

}  // namespace

SlotFiles::SlotFiles(const engine::Model& model, engine::Context& ctx, int32_t n_ctx_slot)
    : shape_(shape_of(model, ctx)), n_ctx_slot_(n_ctx_slot), kv_(ctx.kv_cache()) {}

Result<SlotFileResult> SlotFiles::run(const SlotAction& action, Slot& slot) {
  switch (action.kind) {
    case SlotActionKind::kSave:
      return save(slot, action.path);
    case SlotActionKind::kRestore:
      return restore(slot, action.path);
    case SlotActionKind::kErase: {
      SlotFileResult r;
      r.n_tokens = static_cast<int32_t>(slot.cached.size());
      forget(slot, kv_);
      return r;
    }
  }
  return error(ErrorCode::kInternal, "unknown slot action");
}

Result<SlotFileResult> SlotFiles::save(const Slot& slot, const std::string& path) {
  const int64_t t0 = now_us();
  // Placeholders name media only within this process: a file could not be restored into
  // another one, so a slot holding media is not saved (the reference's not_supported error).
  if (std::any_of(slot.cached.begin(), slot.cached.end(), is_media_placeholder))
    return error(ErrorCode::kUnsupported,
                 "saving a slot that holds images or audio is not supported");
  const auto n = static_cast<int32_t>(slot.cached.size());
  const engine::KvSnapshot kv = kv_.save(slot.id, n);
  if (kv.n_tokens != n)
    return error(ErrorCode::kInternal,
                 fmt::format("slot {} holds {} tokens but {} KV rows", slot.id, n, kv.n_tokens));
  const std::vector<uint8_t> bytes = encode_slot_file(shape_, slot.cached, kv);
  HEARTH_RETURN_IF_ERROR(write_file(path, bytes));
  SlotFileResult r;
  r.n_tokens = n;
  r.n_bytes = bytes.size();
  r.ms = static_cast<double>(now_us() - t0) / 1000.0;
  return r;
}

// On any failure the slot ends up empty, as the reference clears it.
Result<SlotFileResult> SlotFiles::restore(Slot& slot, const std::string& path) {
  const int64_t t0 = now_us();
  Result<std::vector<uint8_t>> bytes =
      read_file_bounded(path, max_slot_file_bytes(shape_, n_ctx_slot_) + 1);
  if (!bytes.is_ok()) {
    forget(slot, kv_);
    // An unreadable file fails like a malformed one in the reference.
    return error(bytes.status().code(), kRestoreInvalidFile);
  }
  Result<SlotState> state = decode_slot_file(*bytes, shape_, n_ctx_slot_);
  if (!state.is_ok()) {
    forget(slot, kv_);
    return state.status();
  }
  if (!kv_.restore(slot.id, state->kv).is_ok()) {
    forget(slot, kv_);
    return error(ErrorCode::kInvalidArgument, kRestoreInvalidFile);
  }
  slot.cached = std::move(state->tokens);
  SlotFileResult r;
  r.n_tokens = static_cast<int32_t>(slot.cached.size());
  r.n_bytes = bytes->size();
  r.ms = static_cast<double>(now_us() - t0) / 1000.0;
  return r;
}

}  // namespace hearth::scheduler::detail
