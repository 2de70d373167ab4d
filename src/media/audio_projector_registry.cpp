// The audio projector families by type, and what they share: the width check against the
// text model and the mel checks.
#include <fmt/format.h>

#include <array>
#include <string_view>

#include "media/audio_projector.h"

namespace hearth::media {
namespace {

struct AudioFamily {
  std::string_view type;  // the file's audio projector type
  Result<std::unique_ptr<AudioProjector>> (*load)(std::unique_ptr<ClipFile>,
                                                  const engine::LoadOptions&);
};

constexpr std::array<AudioFamily, 3> kAudioFamilies = {{
    {.type = "ultravox", .load = detail::load_ultravox},
    {.type = "voxtral", .load = detail::load_voxtral},
    {.type = "qwen2a", .load = detail::load_qwen2a},
}};

}  // namespace

std::string AudioProjector::supported_types() {
  std::string out;
  for (const AudioFamily& f : kAudioFamilies) {
    if (!out.empty()) out += ", ";
    out += f.type;
  }
  return out;
}

Result<std::unique_ptr<AudioProjector>> AudioProjector::load(const std::string& path,
                                                             int32_t n_embd_text,
                                                             engine::LoadOptions options) {
  HEARTH_ASSIGN_OR_RETURN(ClipFile opened, open_clip_file(path));
  if (!opened.has_audio)
    return error(ErrorCode::kUnsupported,
                 fmt::format("{}: the projector file has no audio encoder", path));
  auto file = std::make_unique<ClipFile>(std::move(opened));
  const std::string type = file->audio_projector_type;
  const AudioFamily* family = nullptr;
  for (const AudioFamily& f : kAudioFamilies)
    if (f.type == type) family = &f;
  if (family == nullptr)
    return error(ErrorCode::kUnsupported,
                 fmt::format("{}: {} audio projector type '{}' (supported: {})", path,
                             is_reference_projector_type(type) ? "unsupported" : "unknown", type,
                             supported_types()));
  HEARTH_ASSIGN_OR_RETURN(std::unique_ptr<AudioProjector> projector,
                          family->load(std::move(file), options));
  if (n_embd_text > 0 && projector->n_embd_out() != n_embd_text)
    return error(
        ErrorCode::kInvalidArgument,
        fmt::format("{}: mismatch between the text model (n_embd = {}) and the audio "
                    "projector (n_embd = {}): is this the projector file of another model?",
                    path, n_embd_text, projector->n_embd_out()));
  return projector;
}

Status AudioProjector::check_mel(const float* mel, int32_t n_mel, int32_t n_frames) const {
  if (mel == nullptr || n_mel != this->n_mel())
    return error(ErrorCode::kInvalidArgument,
                 fmt::format("audio projector {}: the mel must have {} bins, got {}",
                             projector_type(), this->n_mel(), n_mel));
  if (n_frames < 2 || n_frames % 2 != 0 || n_frames > max_frames())
    return error(ErrorCode::kInvalidArgument,
                 fmt::format("audio projector {}: a window must be an even number of mel frames "
                             "in 2..{}, got {}",
                             projector_type(), max_frames(), n_frames));
  if (n_output_tokens(n_frames) < 1)
    return error(ErrorCode::kInvalidArgument,
                 fmt::format("audio projector {}: {} mel frames are too few for one embedding",
                             projector_type(), n_frames));
  return Status::ok();
}

namespace detail {

Result<engine::WeightMatrix> load_projection(engine::TensorLoader& loader, const std::string& name,
                                             int64_t n_cols) {
  const gguf::TensorInfo* t = loader.find_info(name);
  if (t == nullptr)
    return error(ErrorCode::kCorruptFile,
                 fmt::format("required projector tensor '{}' is missing", name));
  if (t->ne[0] != n_cols || t->ne[1] <= 0 || t->ne[2] != 1 || t->ne[3] != 1)
    return error(ErrorCode::kCorruptFile,
                 fmt::format("projector tensor '{}' has shape {}, expected [{}, n_out]", name,
                             t->shape_string(), n_cols));
  return loader.matrix(name, n_cols, t->ne[1]);
}

}  // namespace detail
}  // namespace hearth::media
