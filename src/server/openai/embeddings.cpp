// POST /v1/embeddings (openai-compat.md §13): the OpenAI list shape with usage, vectors as
// floats or as base64 of their little-endian float32 bytes. A body using the legacy
// `content` member is answered in the native shape, as the reference does.
#include <cstring>
#include <string>

#include "base/base64.h"
#include "server/embeddings/embedding_routes.h"
#include "server/openai/openai_routes.h"
#include "server/server_state.h"

namespace hearth::server::openai {

namespace {

Json base64_vector(const std::vector<float>& v) {
  static_assert(sizeof(float) == 4, "float32 expected");
  std::vector<unsigned char> bytes(v.size() * sizeof(float));
  if (!v.empty()) std::memcpy(bytes.data(), v.data(), bytes.size());  // x86: little-endian
  return base64_encode(bytes);
}

}  // namespace

http::Response handle_embeddings(ServerState& s, const http::Request& r) {
  if (auto err = check_embeddings_enabled(s, true)) return error_response(*err);
  EmbeddingRequest request;
  if (auto err = parse_embedding_request(s, r, true, request)) return error_response(*err);
  if (!request.openai_shape) {
    return submit_embeddings(s, std::move(request.prompts), scheduler::TaskKind::kEmbedding,
                             request.embd_normalize, native_embedding_list,
                             std::move(request.media));
  }
  const std::string model = request.model.value_or(s.config.model_name());
  const bool base64 = request.base64;
  auto render = [model, base64](const std::vector<scheduler::EmbeddingResult>& results) {
    Json data = Json::array();
    int32_t n_tokens = 0;
    for (size_t i = 0; i < results.size(); ++i) {
      const std::vector<float>& v = results[i].vectors.front();
      Json item{{"embedding", base64 ? base64_vector(v) : float_vector_json(v)},
                {"index", static_cast<int32_t>(i)},
                {"object", "embedding"}};
      if (base64) item["encoding_format"] = "base64";
      data.push_back(std::move(item));
      n_tokens += results[i].n_tokens;
    }
    return Json{{"model", model},
                {"object", "list"},
                {"usage", Json{{"prompt_tokens", n_tokens}, {"total_tokens", n_tokens}}},
                {"data", std::move(data)}};
  };
  return submit_embeddings(s, std::move(request.prompts), scheduler::TaskKind::kEmbedding,
                           request.embd_normalize, std::move(render), std::move(request.media));
}

}  // namespace hearth::server::openai
