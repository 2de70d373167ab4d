// Shared texts of the option table: why an option is refused, what a no-effect option
// ignores, and the messages of the options removed upstream.
#pragma once

#include <string_view>

namespace hearth::server::options::reasons {

// Not applicable: the reason printed in the refusal.
inline constexpr std::string_view kReasonWebUi = "it has no server-side agent tools or MCP proxy";
inline constexpr std::string_view kReasonRouter = "router (multi-model) mode is not implemented";
inline constexpr std::string_view kReasonDockerHub =
    "Docker Hub downloads are not implemented; use -hf, -mu or a local GGUF file with -m";
inline constexpr std::string_view kReasonOverrideKv = "GGUF metadata overrides are not implemented";
inline constexpr std::string_view kReasonLora = "LoRA adapters are not implemented";
inline constexpr std::string_view kReasonControlVector = "control vectors are not implemented";
inline constexpr std::string_view kReasonContextShift =
    "context shifting is not implemented yet (generation stops when the slot context is full)";
inline constexpr std::string_view kReasonSleep = "unloading the model when idle is not implemented";
inline constexpr std::string_view kReasonPreset =
    "the preset shortcuts are not implemented; pass -hf with the model's repository and its "
    "options yourself";
inline constexpr std::string_view kReasonRope =
    "RoPE and YaRN overrides are not implemented; the model's own values are used";
inline constexpr std::string_view kReasonCacheReuse =
    "reusing KV chunks by shifting their positions is not implemented (only 0 is accepted)";

// Accepted with no effect: the note in the warning.
inline constexpr std::string_view kNoteCpuOnly =
    "hearth-server is a CPU-only build without accelerator devices";
inline constexpr std::string_view kNoteMediaBatch =
    "Hearth encodes each image on its own, as soon as its request arrives, so there is no "
    "encoding batch to bound (the embeddings are the same either way)";
inline constexpr std::string_view kNoteGgml = "it tunes GGML internals that Hearth does not have";
inline constexpr std::string_view kNoteTimings = "Hearth always collects timings";
inline constexpr std::string_view kNoteCheckpoints =
    "Hearth keeps no context checkpoints: a prompt that diverges before the rows a "
    "sliding-window layer still holds is evaluated again from its start (--swa-full keeps "
    "every row), and Hearth runs no recurrent layers";
inline constexpr std::string_view kNoteNgramSimpleMinHits =
    "the reference's ngram-simple drafting does not read it either (the first earlier match is "
    "used)";
inline constexpr std::string_view kNoteDraftPSplit =
    "the reference's draft-simple does not read it either (drafts are single sequences, not "
    "trees)";
inline constexpr std::string_view kNoteDeprecated = "the option is deprecated and has no effect";
inline constexpr std::string_view kNoteFlashAttn =
    "Hearth has a single attention path; the value is only validated";

// Removed upstream: the error text (the reference's wording).
inline constexpr std::string_view kRemovedDraftMax =
    "the argument has been removed. use --spec-draft-n-max or --spec-ngram-mod-n-max";
inline constexpr std::string_view kRemovedDraftMin =
    "the argument has been removed. use --spec-draft-n-min or --spec-ngram-mod-n-min";
inline constexpr std::string_view kRemovedNgramN =
    "the argument has been removed. use --spec-ngram-*-size-n";
inline constexpr std::string_view kRemovedNgramM =
    "the argument has been removed. use --spec-ngram-*-size-m";
inline constexpr std::string_view kRemovedNgramHits =
    "the argument has been removed. use --spec-ngram-*-min-hits";

}  // namespace hearth::server::options::reasons
