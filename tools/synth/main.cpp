// hearth-synth: writes GGUF models for tests and benchmarks.
//   hearth-synth --vocab VOCAB.gguf [--arch llama] [--n-embd 2048] ... --type q4_0 -o OUT.gguf
//   hearth-synth --convert IN.gguf --type f16 -o OUT.gguf
//   hearth-synth --projector gemma3 --text-n-embd 64 --n-embd 128 ... --type f16 -o MMPROJ.gguf
#include <CLI/CLI.hpp>

#include <cstdio>

#include "tools/synth/synth.h"

namespace {

// The shape of the model: widths, depths, context, rope, output tying and seed.
void add_shape_options(CLI::App& app, hearth::synth::SynthParams& p,
                       std::string& output_type_name) {
  app.add_option("--n-embd", p.n_embd)->capture_default_str();
  app.add_option("--n-layer", p.n_layer)->capture_default_str();
  app.add_option("--n-head", p.n_head)->capture_default_str();
  app.add_option("--n-head-kv", p.n_head_kv)->capture_default_str();
  app.add_option("--head-dim", p.head_dim, "head size (0 = n_embd / n_head)")
      ->capture_default_str();
  app.add_option("--n-ff", p.n_ff)->capture_default_str();
  app.add_option("--ctx", p.n_ctx, "context_length to record")->capture_default_str();
  app.add_option("--rope-base", p.rope_base)->capture_default_str();
  app.add_option("--output-type", output_type_name, "type of output.weight (default: --type)");
  app.add_flag("--tied", p.tied_output, "tie the output matrix to the embeddings");
  app.add_option("--seed", p.seed, "weights seed")->capture_default_str();
}

// Encoder-only options (BERT family: norms, pooling, classifier head).
void add_encoder_options(CLI::App& app, hearth::synth::SynthParams& p) {
  app.add_option("--norm-eps", p.norm_eps, "encoders: LayerNorm epsilon")->capture_default_str();
  app.add_option("--pooling", p.pooling, "encoders: pooling_type key (-1: none written)")
      ->capture_default_str();
  app.add_option("--cls-out", p.n_cls_out, "classifier head outputs (0: none; not nomic-bert)")
      ->capture_default_str();
  app.add_flag("--qk-norm", p.qk_norm, "jina-bert-v2: q/k LayerNorms");
  app.add_flag("--attn-norm-2", p.attn_norm_2, "jina-bert-v2: second attention LayerNorm");
  app.add_flag("--separate-gate", p.separate_gate, "jina-bert-v2: ffn_gate apart from ffn_up");
}

// Family-specific attention, scaling, experts and rope options.
void add_family_options(CLI::App& app, hearth::synth::SynthParams& p) {
  app.add_option("--swa", p.n_swa, "modern-bert, gemma2/3, gpt-oss: sliding window (0: none)")
      ->capture_default_str();
  app.add_option("--swa-pattern", p.swa_pattern, "modern-bert, gemma2/3: window layer pattern")
      ->capture_default_str();
  app.add_option("--rope-base-swa", p.rope_base_swa, "local layers' rope base")
      ->capture_default_str();
  app.add_option("--attn-softcap", p.attn_softcap, "gemma2: attention logit soft cap")
      ->capture_default_str();
  app.add_option("--final-softcap", p.final_softcap, "gemma2/3: final logit soft cap")
      ->capture_default_str();
  app.add_option("--logit-scale", p.logit_scale, "granite: logit_scale")->capture_default_str();
  app.add_option("--residual-scale", p.residual_scale, "granite: residual_scale")
      ->capture_default_str();
  app.add_option("--embedding-scale", p.embedding_scale, "granite: embedding_scale")
      ->capture_default_str();
  app.add_option("--attention-scale", p.attention_scale, "granite: attention.scale")
      ->capture_default_str();
  app.add_option("--n-expert", p.n_expert, "mixture of experts: experts (0: dense)")
      ->capture_default_str();
  app.add_option("--n-expert-used", p.n_expert_used, "experts per token")->capture_default_str();
  app.add_option("--n-ff-exp", p.n_ff_exp, "experts' FFN width (0: --n-ff)")->capture_default_str();
  app.add_option("--n-ff-shexp", p.n_ff_shexp, "qwen2moe: shared expert width (0: --n-ff)")
      ->capture_default_str();
  app.add_option("--attn-temp-scale", p.attn_temp_scale,
                 "mistral3: attention temperature scale (its floor: --long-rope's length)")
      ->capture_default_str();
  app.add_option("--long-rope", p.n_ctx_orig,
                 "phi3: LongRoPE factors with this original context length (0: none); "
                 "mistral3: the temperature floor")
      ->capture_default_str();
  app.add_option("--hidden-act", p.hidden_act, "modern-bert: hidden_activation key");
  app.add_option("--yarn", p.yarn_factor, "YaRN rope scaling factor (0: none)")
      ->capture_default_str();
  app.add_option("--rope-sections", p.rope_sections,
                 "qwen2vl/qwen3vl: M-RoPE sections t,h,w,e in pairs (default: the real models' "
                 "proportions)")
      ->delimiter(',');
  app.add_option("--n-deepstack", p.n_deepstack, "qwen3vl: deepstack layers")
      ->capture_default_str();
  app.add_option("--attn-layers", p.attention_layers,
                 "lfm2: the attention layers (the others are short convolutions)")
      ->delimiter(',');
  app.add_option("--l-cache", p.l_cache, "lfm2: the short convolution's taps")
      ->capture_default_str();
  app.add_option("--n-dense-lead", p.n_dense_lead, "lfm2moe: leading layers with a dense FFN")
      ->capture_default_str();
}

// Projector files (mmproj): the family and the text width; the ViT's shape comes from the
// shape options (--n-embd, --n-layer, --n-head, --n-ff).
void add_projector_options(CLI::App& app, hearth::synth::SynthParams& p) {
  app.add_option(
      "--projector", p.projector,
      "write a projector file of this family: gemma3, mlp, idefics3, pixtral, internvl, "
      "lfm2, qwen2vl_merger, qwen2.5vl_merger, qwen3vl_merger, ultravox, voxtral, qwen2a");
  app.add_option("--text-n-embd", p.text_n_embd, "projector: the text model's width")
      ->capture_default_str();
  app.add_option("--image-size", p.image_size, "projector: image side")->capture_default_str();
  app.add_option("--patch-size", p.patch_size, "projector: patch side")->capture_default_str();
  app.add_option("--n-merge", p.n_merge,
                 "gemma3: pooling kernel; pixtral: spatial merge; internvl: pixel shuffle")
      ->capture_default_str();
  app.add_option("--preproc-image-size", p.preproc_image_size,
                 "idefics3 projector: longest edge before tiling (0: key not written)")
      ->capture_default_str();
  app.add_flag("--use-gelu", p.use_gelu, "mlp projector: GELU in the ViT instead of quick GELU");
  app.add_option("--n-mel", p.n_mel, "audio projector: mel bins")->capture_default_str();
  app.add_option("--stack-factor", p.stack_factor,
                 "ultravox/voxtral projector: frames stacked (0: the family's default)")
      ->capture_default_str();
  app.add_option("--grid-pinpoints", p.grid_pinpoints,
                 "mlp projector: LLaVA-1.6 tile grids w0,h0,w1,h1... in pixels")
      ->delimiter(',');
  app.add_option("--feature-layers", p.feature_layers,
                 "mlp projector: layers whose inputs the projector reads, side by side")
      ->delimiter(',');
  app.add_option("--n-wa-pattern", p.n_wa_pattern,
                 "qwen2.5vl_merger: every n-th block attends over the whole image (0: no windows)")
      ->capture_default_str();
  app.add_option("--deepstack-layers", p.deepstack_layers,
                 "qwen3vl_merger: blocks whose outputs feed a deepstack merger")
      ->delimiter(',');
}

// Writes the model (or the conversion) the options ask for; the exit code.
int run(hearth::synth::SynthParams p, const std::string& type_name,
        const std::string& output_type_name, const std::string& out_path,
        const std::string& convert_from) {
  auto type = hearth::tensor_type_from_name(type_name);
  if (!type) {
    std::fprintf(stderr, "error: unknown type '%s'\n", type_name.c_str());
    return 2;
  }
  hearth::Status status;
  if (!convert_from.empty()) {
    status = hearth::synth::convert(convert_from, *type, out_path);
  } else {
    p.type = *type;
    if (!output_type_name.empty()) {
      auto ot = hearth::tensor_type_from_name(output_type_name);
      if (!ot) {
        std::fprintf(stderr, "error: unknown type '%s'\n", output_type_name.c_str());
        return 2;
      }
      p.output_type = *ot;
    }
    status = hearth::synth::synthesize(p, out_path);
  }
  if (!status.is_ok()) {
    std::fprintf(stderr, "error: %s\n", status.to_string().c_str());
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"hearth-synth: write a random-weight model, or convert a model's weight type"};
  hearth::synth::SynthParams p;
  std::string type_name = "q4_0", output_type_name, out_path, convert_from;
  app.add_option("-o,--output", out_path, "output GGUF path")->required();
  app.add_option(
         "--type", type_name,
         "2-D weight type: f32, f16, bf16, q8_0, q4_0, q4_1, q5_0, q5_1, q2_k ... q6_k, iq4_nl, "
         "mxfp4 (experts; other weights q8_0)")
      ->capture_default_str();
  app.add_option("--convert", convert_from, "convert this GGUF instead of synthesizing");
  app.add_option("--vocab", p.vocab_path, "GGUF whose tokenizer to borrow");
  app.add_option("--add-tokens", p.add_tokens,
                 "CONTROL tokens appended to the borrowed vocabulary (comma-separated)")
      ->delimiter(',');
  app.add_option(
         "--arch", p.arch,
         "llama, qwen2, qwen3, smollm3, gemma, gemma2, gemma3, granite, phi3, olmo2, qwen2moe, "
         "qwen3moe, olmoe, gpt-oss, qwen2vl, qwen3vl, qwen3vlmoe, lfm2, lfm2moe, bert, "
         "nomic-bert, "
         "jina-bert-v2 or modern-bert")
      ->capture_default_str();
  add_shape_options(app, p, output_type_name);
  add_encoder_options(app, p);
  add_family_options(app, p);
  add_projector_options(app, p);
  CLI11_PARSE(app, argc, argv);
  return run(p, type_name, output_type_name, out_path, convert_from);
}
