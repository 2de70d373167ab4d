#include "server/media/media_input.h"

#include <map>
#include <utility>

#include "base/base64.h"
#include "tokenizer/tokenizer.h"

namespace hearth::server {

namespace {

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// data:image/<type>;base64,<data>: exactly one comma, an image type, base64 encoding.
std::optional<ApiError> decode_data_uri(std::string_view url, std::vector<MediaBytes>& files) {
  const size_t comma = url.find(',');
  if (comma == std::string_view::npos || url.find(',', comma + 1) != std::string_view::npos) {
    return invalid_request("Invalid uri-encoded base64 value");
  }
  const std::string_view header = url.substr(0, comma);
  if (!starts_with(header, "data:image/")) {
    return invalid_request("Invalid uri format: " + std::string(header));
  }
  if (!ends_with(header, "base64")) return invalid_request("uri must be base64 encoded");
  files.push_back(base64_decode_prefix(url.substr(comma + 1)));
  return std::nullopt;
}

}  // namespace

std::optional<ApiError> load_media(std::string_view url, bool accept_data_uri,
                                   const MediaUrlFetcher& fetch, std::vector<MediaBytes>& files) {
  if (files.size() >= kMaxMediaPerRequest) {
    return invalid_request("too many images or audio clips in one request (at most " +
                           std::to_string(kMaxMediaPerRequest) + ")");
  }
  // As the reference: anything starting with "http" is a URL to download.
  if (starts_with(url, "http") || starts_with(url, "file://")) {
    if (!fetch) {
      return invalid_request(starts_with(url, "file://")
                                 ? "file:// URLs are not allowed unless --media-path is specified"
                                 : "Failed to download image");
    }
    Result<MediaBytes> bytes = fetch(url);
    // A URL the client named that cannot be read (refused, missing, unreachable, too large)
    // is the client's mistake: 400 with the fetcher's message (the reference answers 500 for
    // a failed download).
    if (!bytes.is_ok()) return invalid_request(bytes.status().message());
    files.push_back(std::move(*bytes));
    return std::nullopt;
  }
  if (accept_data_uri && starts_with(url, "data:")) return decode_data_uri(url, files);
  MediaBytes bytes = base64_decode_prefix(url);
  if (bytes.empty()) return invalid_request("Invalid base64 value");
  files.push_back(std::move(bytes));
  return std::nullopt;
}

namespace {

void append_text(const tokenizer::Tokenizer& tok, std::string_view text, MediaPrompt& out) {
  if (text.empty()) return;
  std::vector<int32_t> ids = tok.tokenize(text, /*add_special=*/false, /*parse_special=*/true);
  out.tokens.insert(out.tokens.end(), ids.begin(), ids.end());
}

// Pieces already looked up for this prompt (each lookup scans the vocabulary).
using LookedUp = std::map<std::string, std::optional<int32_t>, std::less<>>;

// mtmd's lookup_token: the first id whose piece (special tokens rendered) is exactly `piece`.
std::optional<int32_t> lookup_token(const tokenizer::Tokenizer& tok, std::string_view piece,
                                    LookedUp& seen) {
  if (auto it = seen.find(piece); it != seen.end()) return it->second;
  std::optional<int32_t> found;
  for (int32_t id = 0; id < tok.n_vocab() && !found; ++id)
    if (tok.token_to_piece(id, /*special=*/true) == piece) found = id;
  seen.emplace(std::string(piece), found);
  return found;
}

// A piece for an error message, its newlines shown as \n.
std::string escape_piece(std::string_view piece) {
  std::string out;
  for (char c : piece) out += c == '\n' ? std::string("\\n") : std::string(1, c);
  return out;
}

std::optional<ApiError> append_media(scheduler::Scheduler& scheduler, const MediaBytes& file,
                                     size_t index, const std::atomic<bool>* cancel,
                                     LookedUp& looked_up, MediaPrompt& out) {
  Result<scheduler::EncodedMedia> encoded = scheduler.encode_media(file, cancel);
  if (!encoded.is_ok()) {
    const Status& st = encoded.status();
    const std::string what =
        "Failed to load image or audio file " + std::to_string(index + 1) + ": " + st.message();
    if (st.code() == ErrorCode::kInvalidArgument || st.code() == ErrorCode::kUnsupported) {
      return invalid_request(what);
    }
    return server_error(what);
  }
  const tokenizer::Tokenizer& tok = scheduler.tokenizer();
  for (scheduler::MediaPiece& piece : encoded->pieces) {
    switch (piece.kind) {
      case scheduler::MediaPiece::Kind::kText:
        append_text(tok, piece.text, out);
        break;
      case scheduler::MediaPiece::Kind::kToken: {
        const std::optional<int32_t> id = lookup_token(tok, piece.text, looked_up);
        // The reference would put an invalid id (-1) in the prompt and fail at decoding.
        if (!id) {
          return invalid_request("Failed to load image or audio file " + std::to_string(index + 1) +
                                 ": the vocabulary has no token '" + escape_piece(piece.text) +
                                 "', which the projector needs");
        }
        out.tokens.push_back(*id);
        break;
      }
      case scheduler::MediaPiece::Kind::kChunk: {
        scheduler::MediaChunk chunk = std::move(piece.chunk);
        chunk.begin = static_cast<int32_t>(out.tokens.size());
        out.tokens.insert(out.tokens.end(), static_cast<size_t>(chunk.n_tokens), chunk.placeholder);
        out.media.push_back(std::move(chunk));
        break;
      }
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<ApiError> build_media_prompt(scheduler::Scheduler& scheduler, std::string_view text,
                                           std::string_view marker,
                                           const std::vector<MediaBytes>& files,
                                           const std::atomic<bool>* cancel, MediaPrompt& out) {
  out = {};
  const tokenizer::Tokenizer& tok = scheduler.tokenizer();
  if (tok.add_bos()) out.tokens.push_back(tok.bos());
  size_t n_markers = 0;
  size_t at = 0;
  LookedUp looked_up;
  while (!marker.empty()) {
    const size_t found = text.find(marker, at);
    if (found == std::string_view::npos) break;
    append_text(tok, text.substr(at, found - at), out);
    if (n_markers >= files.size()) {
      return invalid_request("number of media markers in text (" + std::to_string(n_markers + 1) +
                             ") exceeds number of bitmaps (" + std::to_string(files.size()) + ")");
    }
    if (auto err = append_media(scheduler, files[n_markers], n_markers, cancel, looked_up, out))
      return err;
    ++n_markers;
    at = found + marker.size();
  }
  append_text(tok, text.substr(at), out);
  if (n_markers != files.size()) {
    return invalid_request("number of media markers in text (" + std::to_string(n_markers) +
                           ") does not match number of bitmaps (" + std::to_string(files.size()) +
                           ")");
  }
  if (tok.add_eos()) out.tokens.push_back(tok.eos());
  return std::nullopt;
}

}  // namespace hearth::server
