// Images and audio in requests, as llama-server takes them: where a part's bytes come from
// (data: URIs, raw base64, http(s) and file:// URLs), and the prompt that places the
// encoded media between the text pieces around the media marker.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "scheduler/scheduler.h"
#include "server/api_error.h"

namespace hearth::server {

using MediaBytes = std::vector<uint8_t>;

// Reads an http(s):// or file:// URL (hearth-server sets it over the hub's fetcher, which
// applies --media-path and refuses private addresses). Null: such URLs are refused.
using MediaUrlFetcher = std::function<Result<MediaBytes>(std::string_view url)>;

// The most media parts one request may carry (each is decoded and encoded).
inline constexpr size_t kMaxMediaPerRequest = 64;

// One part's bytes: `url` is an http(s):// or file:// URL, a data: URI (only where
// `accept_data_uri`, as the reference takes them for images but not audio) or raw base64.
// Errors carry the reference's messages.
std::optional<ApiError> load_media(std::string_view url, bool accept_data_uri,
                                   const MediaUrlFetcher& fetch, std::vector<MediaBytes>& files);

// A prompt with media: the token ids (media positions hold their placeholders) and the
// media chunks placed in them.
struct MediaPrompt {
  std::vector<int32_t> tokens;
  std::vector<scheduler::MediaChunk> media;
};

// As the reference's mtmd tokenizer: `text` is split at each `marker`; every text piece is
// tokenized on its own with special tokens parsed (none added), each marker becomes the
// next file's pieces (the projector's texts, each tokenized the same way, its looked-up
// tokens, and its chunks; a looked-up token the vocabulary lacks is a 400); BOS goes first
// (and EOS last) where the vocabulary adds them. The number of markers must equal the number of
// files. Encoding errors become 400s naming the file.
std::optional<ApiError> build_media_prompt(scheduler::Scheduler& scheduler, std::string_view text,
                                           std::string_view marker,
                                           const std::vector<MediaBytes>& files,
                                           const std::atomic<bool>* cancel, MediaPrompt& out);

}  // namespace hearth::server
