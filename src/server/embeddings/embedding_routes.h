// The embedding and rerank routes' shared parts: the request of /embedding and
// /v1/embeddings, the tasks they submit, and the native result shape.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "scheduler/task.h"
#include "server/api_error.h"
#include "server/embeddings/embedding_sink.h"
#include "server/fields/field.h"
#include "server/http/http.h"
#include "server/json_util.h"

namespace hearth::server {

struct ServerState;

// An embeddings body as embedding_fields() reads it, then its prompts.
struct EmbeddingRequest {
  std::optional<Json> input;    // any prompt form; null is a value (refused as a prompt)
  std::optional<Json> content;  // the legacy spelling: answered in the native shape
  std::optional<int64_t> dimensions;
  std::optional<std::string> model;           // echoed by the OpenAI shape
  std::vector<std::vector<int32_t>> prompts;  // tokenized with special tokens, never empty
  // Per prompt, the media chunks of a multimodal_data input; empty when no input has media.
  std::vector<std::vector<scheduler::MediaChunk>> media;
  int embd_normalize = 2;
  bool base64 = false;        // encoding_format "base64" (OpenAI shape only)
  bool openai_shape = false;  // /v1/embeddings with `input` (not the legacy `content`)
};

// The embeddings body's rows (fields.json records them).
const std::vector<fields::Field<EmbeddingRequest>>& embedding_fields();

// The rerank body's rows as fields.json records them: name, aliases, state.
std::vector<fields::FieldInfo> rerank_field_info();

// 501 without --embedding; 400 for the OpenAI route when pooling is none.
std::optional<ApiError> check_embeddings_enabled(const ServerState& s, bool openai_route);

// `input` (or `content`) in any prompt form, embd_normalize and encoding_format, checked as
// the reference checks them.
std::optional<ApiError> parse_embedding_request(const ServerState& s, const http::Request& r,
                                                bool openai_route, EmbeddingRequest& out);

// One task of `kind` per prompt (result index = prompt index); `render` builds the body.
http::Response submit_embeddings(ServerState& s, std::vector<std::vector<int32_t>> prompts,
                                 scheduler::TaskKind kind, int embd_normalize,
                                 EmbeddingSink::Render render,
                                 std::vector<std::vector<scheduler::MediaChunk>> media = {});

// A model's rerank template with {query} and {document} filled in, in one pass over the
// template: text from the request is never searched again (differences.json,
// rerank-template-one-pass).
std::string fill_rerank_template(std::string_view tmpl, const std::string& query,
                                 const std::string& document);

// The native shape: [{"index", "embedding": [[...], ...]}, ...].
Json native_embedding_list(const std::vector<scheduler::EmbeddingResult>& results);
Json float_vector_json(const std::vector<float>& v);

}  // namespace hearth::server
