// POST /embedding, /embeddings (native shape) and the request side of /v1/embeddings
// (other-native-routes.md §11, openai-compat.md §13): one embedding task per input, the
// inputs of a request (and of concurrent requests) evaluated together in the scheduler's
// steps.
#include "server/embeddings/embedding_routes.h"

#include <cmath>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "server/completion_run.h"
#include "server/embeddings/embedding_sink.h"
#include "server/fields/store.h"
#include "server/media/media_input.h"
#include "server/request_body.h"
#include "server/server_state.h"

namespace hearth::server {

namespace {

constexpr const char* kBadEncoding =
    "The format to return the embeddings in. Can be either float or base64";

bool pooling_none(const ServerState& s) {
  return s.scheduler->config().pooling == scheduler::PoolingType::kNone;
}

// `embedding`: one pooled vector, or one vector per token with pooling none.
Json native_item(const scheduler::EmbeddingResult& r) {
  Json vectors = Json::array();
  for (const std::vector<float>& v : r.vectors) vectors.push_back(float_vector_json(v));
  return Json{{"index", r.index}, {"embedding", std::move(vectors)}};
}

using EmbeddingField = fields::Field<EmbeddingRequest>;
using Check = std::optional<ApiError>;

template <std::optional<Json> EmbeddingRequest::*member>
Check store_input(const Json& v, const std::string&, EmbeddingRequest& out,
                  const fields::FieldContext&) {
  out.*member = v;  // read by parse_prompts, which names what is wrong with it
  return std::nullopt;
}

// A number is truncated as the reference's JSON library converts it; one outside the int
// range (or null, or another type) is refused rather than converted.
Check read_normalize(const Json& v, const std::string&, EmbeddingRequest& out,
                     const fields::FieldContext&) {
  const double d = v.is_boolean()  ? static_cast<double>(v.get<bool>())
                   : v.is_number() ? v.get<double>()
                                   : std::nan("");
  if (!(d > -1e9 && d < 1e9)) return invalid_request("\"embd_normalize\" must be an integer");
  out.embd_normalize = static_cast<int>(d);
  return std::nullopt;
}

Check read_dimensions(const Json& v, const std::string&, EmbeddingRequest& out,
                      const fields::FieldContext&) {
  out.dimensions = v.is_number_integer() ? v.get<int64_t>() : -1;  // -1: never the width
  return std::nullopt;
}

Check read_encoding(const Json& v, const std::string&, EmbeddingRequest& out,
                    const fields::FieldContext&) {
  if (!v.is_string()) return invalid_request(kBadEncoding);
  if (v.get_ref<const std::string&>() == "base64") {
    out.base64 = true;
  } else if (v.get_ref<const std::string&>() != "float") {
    return invalid_request(kBadEncoding);
  }
  return std::nullopt;
}

// OpenAI's `dimensions` asks for shortened vectors, which the reference ignores; Hearth
// accepts only the width it returns.
Check check_dimensions(const ServerState& s, const EmbeddingRequest& request) {
  if (!request.dimensions || *request.dimensions == s.model.n_embd) return std::nullopt;
  return invalid_request("\"dimensions\" must be " + std::to_string(s.model.n_embd) +
                         ", the model's embedding width (shortened embeddings are not "
                         "supported)");
}

// The inputs with multimodal_data: tokenized around their media, which are encoded (out.media
// gets one entry per prompt, empty for text).
std::optional<ApiError> place_embedding_media(
    const ServerState& s, const std::vector<CompletionSettings::MediaPromptText>& entries,
    EmbeddingRequest& out) {
  if (entries.empty()) return std::nullopt;
  out.media.resize(out.prompts.size());
  for (const CompletionSettings::MediaPromptText& entry : entries) {
    MediaPrompt placed;
    if (auto err = build_media_prompt(*s.scheduler, entry.text, s.config.media_marker, entry.files,
                                      nullptr, placed)) {
      return err;
    }
    out.prompts[entry.index] = std::move(placed.tokens);
    out.media[entry.index] = std::move(placed.media);
  }
  return std::nullopt;
}

}  // namespace

// A wrong type is the client's mistake (400), where the reference answers 500; members the
// reference tests with `contains` keep a null as a value.
const std::vector<EmbeddingField>& embedding_fields() {
  static const std::vector<EmbeddingField> table = {
      {.name = "input", .target = store_input<&EmbeddingRequest::input>, .keeps_null = true},
      {.name = "content", .target = store_input<&EmbeddingRequest::content>, .keeps_null = true},
      {.name = "embd_normalize", .target = read_normalize, .keeps_null = true},
      {.name = "dimensions", .target = read_dimensions},
      {.name = "encoding_format", .target = read_encoding, .keeps_null = true},
      {.name = "model",
       .target = fields::store_optional_string<EmbeddingRequest, &EmbeddingRequest::model>},
  };
  return table;
}

Json float_vector_json(const std::vector<float>& v) {
  Json out = Json::array();
  for (float x : v) out.push_back(float_json(x));
  return out;
}

std::optional<ApiError> parse_embedding_request(const ServerState& s, const http::Request& r,
                                                bool openai_route, EmbeddingRequest& out) {
  Json body;
  if (auto err = parse_json_object(r.body, body)) return err;
  out.embd_normalize = s.config.embd_normalize;
  if (auto err = fields::parse_fields(embedding_fields(), body, out, {})) return err;
  out.openai_shape = openai_route && out.input.has_value();
  const Json* input = out.input ? &*out.input : out.content ? &*out.content : nullptr;
  if (input == nullptr) return invalid_request("\"input\" or \"content\" must be provided");
  if (auto err = check_dimensions(s, out)) return err;
  const tokenizer::Tokenizer& tok = s.scheduler->tokenizer();
  // {"prompt_string", "multimodal_data"} inputs as /completion takes them, with a projector.
  const scheduler::MediaSupport support = s.scheduler->media_support();
  std::vector<CompletionSettings::MediaPromptText> media_prompts;
  if (auto err = parse_prompts(tok, *input, out.prompts,
                               support.vision || support.audio ? &media_prompts : nullptr)) {
    return err;
  }
  const auto max_inputs = static_cast<size_t>(s.scheduler->config().max_queued);
  if (out.prompts.size() > max_inputs)
    return invalid_request("at most " + std::to_string(max_inputs) + " inputs in one request");
  if (auto err = place_embedding_media(s, media_prompts, out)) return err;
  for (const std::vector<int32_t>& prompt : out.prompts) {
    if (prompt.empty()) return invalid_request("Input content cannot be empty");
  }
  return check_tokens(tok, out.prompts, out.media);
}

http::Response submit_embeddings(ServerState& s, std::vector<std::vector<int32_t>> prompts,
                                 scheduler::TaskKind kind, int embd_normalize,
                                 EmbeddingSink::Render render,
                                 std::vector<std::vector<scheduler::MediaChunk>> media) {
  auto sink =
      std::make_shared<EmbeddingSink>(static_cast<int32_t>(prompts.size()), std::move(render));
  std::vector<scheduler::TaskRequest> tasks(prompts.size());
  for (size_t i = 0; i < prompts.size(); ++i) {
    scheduler::TaskRequest& task = tasks[i];
    task.prompt = std::move(prompts[i]);
    if (i < media.size()) task.media = std::move(media[i]);
    task.kind = kind;
    task.embd_normalize = embd_normalize;
    task.index = static_cast<int32_t>(i);
    task.sink = sink;
  }
  http::Response response = sink->response();
  if (tasks.empty()) return response;
  if (Status st = s.scheduler->submit_all(std::move(tasks)); !st.is_ok()) {
    sink->cancel();
    return error_response(from_status(st));
  }
  return response;
}

std::optional<ApiError> check_embeddings_enabled(const ServerState& s, bool openai_route) {
  if (!s.config.embeddings) {
    return ApiError{ErrorType::kNotSupported,
                    "This server does not support embeddings. Start it with `--embeddings`"};
  }
  if (openai_route && pooling_none(s)) {
    return invalid_request(
        "Pooling type 'none' is not OAI compatible. Please use a different pooling type");
  }
  return std::nullopt;
}

http::Response handle_embeddings(ServerState& s, const http::Request& r) {
  if (auto err = check_embeddings_enabled(s, false)) return error_response(*err);
  EmbeddingRequest request;
  if (auto err = parse_embedding_request(s, r, false, request)) return error_response(*err);
  return submit_embeddings(s, std::move(request.prompts), scheduler::TaskKind::kEmbedding,
                           request.embd_normalize, native_embedding_list, std::move(request.media));
}

Json native_embedding_list(const std::vector<scheduler::EmbeddingResult>& results) {
  Json out = Json::array();
  for (const auto& result : results) out.push_back(native_item(result));
  return out;
}

}  // namespace hearth::server
