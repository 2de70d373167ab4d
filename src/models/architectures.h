// The loaders of each architecture file, collected by the registry's table.
#pragma once

#include <memory>

#include "engine/hparams.h"
#include "models/registry.h"

namespace hearth::models {

using ArchLoader = Result<ModelPtr> (*)(std::shared_ptr<const gguf::Archive>, engine::ModelHparams,
                                        const engine::LoadOptions&);

Result<ModelPtr> load_llama(std::shared_ptr<const gguf::Archive> archive,
                            engine::ModelHparams hparams, const engine::LoadOptions& options);
Result<ModelPtr> load_qwen2(std::shared_ptr<const gguf::Archive> archive,
                            engine::ModelHparams hparams, const engine::LoadOptions& options);
Result<ModelPtr> load_qwen3(std::shared_ptr<const gguf::Archive> archive,
                            engine::ModelHparams hparams, const engine::LoadOptions& options);
Result<ModelPtr> load_qwen2vl(std::shared_ptr<const gguf::Archive> archive,
                              engine::ModelHparams hparams, const engine::LoadOptions& options);
Result<ModelPtr> load_qwen3vl(std::shared_ptr<const gguf::Archive> archive,
                              engine::ModelHparams hparams, const engine::LoadOptions& options);
Result<ModelPtr> load_qwen3vlmoe(std::shared_ptr<const gguf::Archive> archive,
                                 engine::ModelHparams hparams, const engine::LoadOptions& options);
Result<ModelPtr> load_smollm3(std::shared_ptr<const gguf::Archive> archive,
                              engine::ModelHparams hparams, const engine::LoadOptions& options);

Result<ModelPtr> load_gemma(std::shared_ptr<const gguf::Archive> archive,
                            engine::ModelHparams hparams, const engine::LoadOptions& options);
Result<ModelPtr> load_gemma2(std::shared_ptr<const gguf::Archive> archive,
                             engine::ModelHparams hparams, const engine::LoadOptions& options);
Result<ModelPtr> load_gemma3(std::shared_ptr<const gguf::Archive> archive,
                             engine::ModelHparams hparams, const engine::LoadOptions& options);

Result<ModelPtr> load_granite(std::shared_ptr<const gguf::Archive> archive,
                              engine::ModelHparams hparams, const engine::LoadOptions& options);
Result<ModelPtr> load_phi3(std::shared_ptr<const gguf::Archive> archive,
                           engine::ModelHparams hparams, const engine::LoadOptions& options);
Result<ModelPtr> load_olmo2(std::shared_ptr<const gguf::Archive> archive,
                            engine::ModelHparams hparams, const engine::LoadOptions& options);

Result<ModelPtr> load_mistral3(std::shared_ptr<const gguf::Archive> archive,
                               engine::ModelHparams hparams, const engine::LoadOptions& options);
Result<ModelPtr> load_qwen2moe(std::shared_ptr<const gguf::Archive> archive,
                               engine::ModelHparams hparams, const engine::LoadOptions& options);
Result<ModelPtr> load_qwen3moe(std::shared_ptr<const gguf::Archive> archive,
                               engine::ModelHparams hparams, const engine::LoadOptions& options);
Result<ModelPtr> load_lfm2(std::shared_ptr<const gguf::Archive> archive,
                           engine::ModelHparams hparams, const engine::LoadOptions& options);
Result<ModelPtr> load_lfm2moe(std::shared_ptr<const gguf::Archive> archive,
                              engine::ModelHparams hparams, const engine::LoadOptions& options);
Result<ModelPtr> load_olmoe(std::shared_ptr<const gguf::Archive> archive,
                            engine::ModelHparams hparams, const engine::LoadOptions& options);
Result<ModelPtr> load_gpt_oss(std::shared_ptr<const gguf::Archive> archive,
                              engine::ModelHparams hparams, const engine::LoadOptions& options);

Result<ModelPtr> load_bert(std::shared_ptr<const gguf::Archive> archive,
                           engine::ModelHparams hparams, const engine::LoadOptions& options);
Result<ModelPtr> load_nomic_bert(std::shared_ptr<const gguf::Archive> archive,
                                 engine::ModelHparams hparams, const engine::LoadOptions& options);
Result<ModelPtr> load_jina_bert_v2(std::shared_ptr<const gguf::Archive> archive,
                                   engine::ModelHparams hparams,
                                   const engine::LoadOptions& options);
Result<ModelPtr> load_modern_bert(std::shared_ptr<const gguf::Archive> archive,
                                  engine::ModelHparams hparams, const engine::LoadOptions& options);

}  // namespace hearth::models
