// Internal to hearth_media: each projector family's loader, which the registry
// (projector_registry.cpp) picks by clip.projector_type.
#pragma once

#include <memory>

#include "engine/weights.h"
#include "media/projector.h"

namespace hearth::media::detail {

// gemma3: SigLIP, average pooling, RMSNorm, input projection (gemma3_projector.cpp).
Result<std::unique_ptr<Projector>> load_gemma3(std::unique_ptr<ClipFile> file,
                                               const engine::LoadOptions& options);
// mlp (and mlp_norm when mm.3 is present): LLaVA's CLIP and MLP (llava_projector.cpp).
Result<std::unique_ptr<Projector>> load_llava(std::unique_ptr<ClipFile> file,
                                              const engine::LoadOptions& options);

// pixtral: RMSNorm ViT with 2-D RoPE, optional patch merger, GELU MLP, [IMG_BREAK] rows
// (pixtral_projector.cpp).
Result<std::unique_ptr<Projector>> load_pixtral(std::unique_ptr<ClipFile> file,
                                                const engine::LoadOptions& options);
// internvl: InternViT, pixel shuffle, LayerNorm + MLP (internvl_projector.cpp).
Result<std::unique_ptr<Projector>> load_internvl(std::unique_ptr<ClipFile> file,
                                                 const engine::LoadOptions& options);
// idefics3: SigLIP, pixel shuffle, one linear layer; tiles with text between them
// (idefics3_projector.cpp).
Result<std::unique_ptr<Projector>> load_idefics3(std::unique_ptr<ClipFile> file,
                                                 const engine::LoadOptions& options);
// lfm2: SigLIP2-NaFlex with resized positions, pixel unshuffle, LayerNorm + GELU MLP; 512-px
// tiles with text between them (lfm2_projector.cpp).
Result<std::unique_ptr<Projector>> load_lfm2(std::unique_ptr<ClipFile> file,
                                             const engine::LoadOptions& options);

// qwen2vl_merger / qwen2.5vl_merger (and qwen2.5o's vision half): temporal patch pair, vision
// M-RoPE ViT (windowed for 2.5), 2 x 2 merger MLP (qwen2vl_projector.cpp).
Result<std::unique_ptr<Projector>> load_qwen2vl(std::unique_ptr<ClipFile> file,
                                                const engine::LoadOptions& options);
Result<std::unique_ptr<Projector>> load_qwen25vl(std::unique_ptr<ClipFile> file,
                                                 const engine::LoadOptions& options);
// qwen3vl_merger: Qwen2-VL's layout with a patch bias, resized learned positions, fused
// q/k/v and deepstack mergers (qwen3vl_projector.cpp).
Result<std::unique_ptr<Projector>> load_qwen3vl(std::unique_ptr<ClipFile> file,
                                                const engine::LoadOptions& options);

}  // namespace hearth::media::detail
