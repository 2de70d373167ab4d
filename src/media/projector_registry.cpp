// The projector families by clip.projector_type, and what every family shares: the width
// check against the text model and the image size check.
#include <fmt/format.h>

#include <array>
#include <string_view>

#include "media/projector.h"
#include "media/projector_families.h"

namespace hearth::media {
namespace {

struct Family {
  std::string_view type;  // clip.projector_type
  Result<std::unique_ptr<Projector>> (*load)(std::unique_ptr<ClipFile>, const engine::LoadOptions&);
};

constexpr std::array<Family, 10> kFamilies = {{
    {.type = "gemma3", .load = detail::load_gemma3},
    {.type = "mlp", .load = detail::load_llava},
    {.type = "pixtral", .load = detail::load_pixtral},
    {.type = "internvl", .load = detail::load_internvl},
    {.type = "idefics3", .load = detail::load_idefics3},
    {.type = "lfm2", .load = detail::load_lfm2},
    {.type = "qwen2vl_merger", .load = detail::load_qwen2vl},
    {.type = "qwen2.5vl_merger", .load = detail::load_qwen25vl},
    {.type = "qwen2.5o", .load = detail::load_qwen25vl},
    {.type = "qwen3vl_merger", .load = detail::load_qwen3vl},
}};

}  // namespace

std::string Projector::supported_types() {
  std::string out;
  for (const Family& f : kFamilies) {
    if (!out.empty()) out += ", ";
    out += f.type;
  }
  return out;
}

Result<std::unique_ptr<Projector>> Projector::load(const std::string& path, int32_t n_embd_text,
                                                   engine::LoadOptions options) {
  HEARTH_ASSIGN_OR_RETURN(ClipFile opened, open_clip_file(path));
  if (!opened.has_vision)
    return error(
        ErrorCode::kUnsupported,
        fmt::format("{}: the projector file has no vision encoder{}", path,
                    opened.has_audio ? " (it encodes audio: load it as an audio projector)" : ""));
  auto file = std::make_unique<ClipFile>(std::move(opened));
  const std::string type = file->projector_type;
  const Family* family = nullptr;
  for (const Family& f : kFamilies)
    if (f.type == type) family = &f;
  if (family == nullptr)
    return error(ErrorCode::kUnsupported,
                 fmt::format("{}: {} projector type '{}' (supported: {})", path,
                             is_reference_projector_type(type) ? "unsupported" : "unknown", type,
                             supported_types()));
  HEARTH_ASSIGN_OR_RETURN(std::unique_ptr<Projector> projector,
                          family->load(std::move(file), options));
  if (n_embd_text > 0 && projector->n_embd_out() != n_embd_text)
    return error(ErrorCode::kInvalidArgument,
                 fmt::format("{}: mismatch between the text model (n_embd = {}) and the projector "
                             "(n_embd = {}): is this the projector file of another model?",
                             path, n_embd_text, projector->n_embd_out()));
  return projector;
}

Status Projector::check_image(const float* pixels, int32_t nx, int32_t ny) const {
  const int32_t side = hparams().image_size;
  if (pixels == nullptr || nx != side || ny != side)
    return error(ErrorCode::kInvalidArgument,
                 fmt::format("projector {}: the image must be {}x{} pixels after preprocessing, "
                             "got {}x{}",
                             projector_type(), side, side, nx, ny));
  return Status::ok();
}

}  // namespace hearth::media
