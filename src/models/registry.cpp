#include "models/registry.h"

#include <fmt/format.h>

#include <array>

#include "base/log.h"
#include "engine/tensor_check.h"
#include "models/architectures.h"

namespace hearth::models {
namespace {

struct ArchEntry {
  std::string_view name;  // general.architecture
  ArchLoader load;
  // Hybrid models may have layers without attention (zeros in a per-layer head_count_kv).
  bool hybrid = false;
};

// Every architecture Hearth runs, one file each.
constexpr std::array<ArchEntry, 24> kArchitectures = {{
    {"llama", &load_llama, false},
    {"qwen2", &load_qwen2, false},
    {"qwen3", &load_qwen3, false},
    {"qwen2vl", &load_qwen2vl, false},
    {"qwen3vl", &load_qwen3vl, false},
    {"qwen3vlmoe", &load_qwen3vlmoe, false},
    {"smollm3", &load_smollm3, false},
    {"gemma", &load_gemma, false},
    {"gemma2", &load_gemma2, false},
    {"gemma3", &load_gemma3, false},
    {"granite", &load_granite, false},
    {"phi3", &load_phi3, false},
    {"olmo2", &load_olmo2, false},
    {"mistral3", &load_mistral3, false},
    {"qwen2moe", &load_qwen2moe, false},
    {"qwen3moe", &load_qwen3moe, false},
    {"olmoe", &load_olmoe, false},
    {"gpt-oss", &load_gpt_oss, false},
    {"lfm2", &load_lfm2, true},
    {"lfm2moe", &load_lfm2moe, true},
    {"bert", &load_bert, false},
    {"nomic-bert", &load_nomic_bert, false},
    {"jina-bert-v2", &load_jina_bert_v2, false},
    {"modern-bert", &load_modern_bert, false},
}};

}  // namespace

std::vector<std::string_view> supported_architectures() {
  std::vector<std::string_view> names;
  for (const auto& a : kArchitectures) names.push_back(a.name);
  return names;
}

Result<ModelPtr> load_model(std::shared_ptr<const gguf::Archive> archive,
                            const engine::LoadOptions& options) {
  HEARTH_ASSIGN_OR_RETURN(engine::ModelHparams hp, engine::read_hparams(archive->primary()));
  for (const auto& a : kArchitectures) {
    if (a.name != hp.arch) continue;
    if (!a.hybrid && !hp.layer_attends.empty())
      return error(ErrorCode::kUnsupported,
                   fmt::format("{}: {} layers without attention heads (head_count_kv 0) are not "
                               "supported",
                               archive->primary().name(), hp.arch));
    // Before any weight is converted or repacked, so the file's own bytes are what is checked.
    if (options.check_tensors) HEARTH_RETURN_IF_ERROR(engine::check_tensor_data(*archive));
    return a.load(std::move(archive), std::move(hp), options);
  }
  std::string known;
  for (const auto& a : kArchitectures) known += (known.empty() ? "" : ", ") + std::string(a.name);
  return error(ErrorCode::kUnsupported,
               fmt::format("{}: architecture '{}' is not supported (supported: {})",
                           archive->primary().name(), hp.arch, known));
}

Result<ModelPtr> load_model(const std::string& path, const engine::LoadOptions& options) {
  // The reference names the mode it uses, auto resolved (to mmap: no device here refuses it).
  const LoadMode mode = options.load_mode == LoadMode::kAuto ? LoadMode::kMmap : options.load_mode;
  log_info("loading model tensors, this can take a while... (load_mode = {})",
           load_mode_name(mode));
  HEARTH_ASSIGN_OR_RETURN(gguf::Archive archive, gguf::Archive::open(path, options.load_mode));
  return load_model(std::make_shared<const gguf::Archive>(std::move(archive)), options);
}

}  // namespace hearth::models
