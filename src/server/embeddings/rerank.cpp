// POST /rerank, /reranking, /v1/rerank, /v1/reranking (other-native-routes.md §12): one rank
// task per document over the query and the document, answered in the Jina shape (or the
// TEI shape when the request names its documents `texts`), best score first.
#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "server/embeddings/embedding_routes.h"
#include "server/fields/field.h"
#include "server/fields/store.h"
#include "server/request_body.h"
#include "server/server_state.h"

namespace hearth::server {

namespace {

struct RerankRequest {
  std::optional<std::string> query;
  std::vector<std::string> documents;
  bool documents_read = false;  // a string array was found (it may be empty)
  bool tei = false;             // the request has `texts`: TEI's bare array with `score`
  std::optional<bool> return_text;
  std::optional<int64_t> top_n;  // unset: every document
  std::string model;
};

using RerankField = fields::Field<RerankRequest>;
using Check = std::optional<ApiError>;

Check read_query(const Json& v, const std::string&, RerankRequest& out,
                 const fields::FieldContext&) {
  if (!v.is_string()) return invalid_request("\"query\" must be a string");
  out.query = v.get<std::string>();
  return std::nullopt;
}

// `documents`, else `texts` (TEI's name, which also picks TEI's answer shape). A member
// that is not an array of strings is read as absent, as the reference's json_value() reads
// it: the check after the table then asks for a non-empty string array.
template <bool is_texts>
Check read_documents(const Json& v, const std::string&, RerankRequest& out,
                     const fields::FieldContext&) {
  if (is_texts) out.tei = true;
  if (!v.is_array() || out.documents_read) return std::nullopt;
  std::vector<std::string> list;
  for (const Json& item : v) {
    if (!item.is_string()) return std::nullopt;
    list.push_back(item.get<std::string>());
  }
  out.documents = std::move(list);
  out.documents_read = true;
  return std::nullopt;
}

// A wrong type is refused, where the reference falls back to its default; a negative
// count fails with a 500 from the reference's vector library.
Check read_top_n(const Json& v, const std::string&, RerankRequest& out,
                 const fields::FieldContext&) {
  if (!v.is_number_integer()) return invalid_request("\"top_n\" must be an integer");
  if (v.get<int64_t>() < 0) return invalid_request("\"top_n\" must not be negative");
  out.top_n = v.get<int64_t>();
  return std::nullopt;
}

Check read_return_text(const Json& v, const std::string&, RerankRequest& out,
                       const fields::FieldContext&) {
  if (!v.is_boolean()) return invalid_request("\"return_text\" must be a boolean");
  out.return_text = v.get<bool>();
  return std::nullopt;
}

const std::vector<RerankField>& rerank_fields() {
  static const std::vector<RerankField> table = {
      {.name = "query", .target = read_query},
      {.name = "documents", .target = read_documents<false>},
      {.name = "texts", .target = read_documents<true>, .keeps_null = true},
      {.name = "top_n", .target = read_top_n},
      {.name = "return_text", .target = read_return_text},
      {.name = "model", .target = fields::store_string<RerankRequest, &RerankRequest::model>},
  };
  return table;
}

std::optional<ApiError> parse_rerank(const ServerState& s, const Json& body, RerankRequest& out) {
  out.model = s.config.model_name();
  if (auto err = fields::parse_fields(rerank_fields(), body, out, {})) return err;
  if (!out.query) return invalid_request("\"query\" must be provided");
  if (out.documents.empty())
    return invalid_request("\"documents\" must be a non-empty string array");
  const auto max_docs = static_cast<size_t>(s.scheduler->config().max_queued);
  if (out.documents.size() > max_docs)
    return invalid_request("at most " + std::to_string(max_docs) + " documents in one request");
  return std::nullopt;
}

}  // namespace

std::vector<fields::FieldInfo> rerank_field_info() {
  return fields::field_info(rerank_fields());
}

std::string fill_rerank_template(std::string_view tmpl, const std::string& query,
                                 const std::string& document) {
  std::string out;
  for (size_t at = 0; at < tmpl.size();) {
    if (tmpl.substr(at).starts_with("{query}")) {
      out += query;
      at += 7;
    } else if (tmpl.substr(at).starts_with("{document}")) {
      out += document;
      at += 10;
    } else {
      out += tmpl[at++];
    }
  }
  return out;
}

namespace {

// The model's rerank template with {query} and {document} filled in; without one,
// [BOS] query [EOS] [SEP] document [EOS], each special token as the vocabulary asks.
std::vector<int32_t> rerank_prompt(const ServerState& s, const std::string& query,
                                   const std::string& document) {
  const tokenizer::Tokenizer& tok = s.scheduler->tokenizer();
  if (!s.model.rerank_template.empty()) {
    return tok.tokenize(fill_rerank_template(s.model.rerank_template, query, document), false,
                        true);
  }
  const int32_t eos = tok.eos() >= 0 ? tok.eos() : tok.sep();
  std::vector<int32_t> out;
  if (tok.add_bos()) out.push_back(tok.bos());
  const std::vector<int32_t> q = tok.tokenize(query, false, false);
  out.insert(out.end(), q.begin(), q.end());
  if (tok.add_eos()) out.push_back(eos);
  if (tok.add_sep()) out.push_back(tok.sep());
  const std::vector<int32_t> d = tok.tokenize(document, false, false);
  out.insert(out.end(), d.begin(), d.end());
  if (tok.add_eos()) out.push_back(eos);
  return out;
}

Json render_ranking(const RerankRequest& req,
                    const std::vector<scheduler::EmbeddingResult>& results) {
  const char* label = req.tei ? "score" : "relevance_score";
  std::vector<const scheduler::EmbeddingResult*> order;
  int32_t n_tokens = 0;
  for (const auto& r : results) {
    order.push_back(&r);
    n_tokens += r.n_tokens;
  }
  std::stable_sort(order.begin(), order.end(),
                   [](const auto* a, const auto* b) { return a->score > b->score; });
  const int64_t top_n = req.top_n.value_or(static_cast<int64_t>(order.size()));
  if (static_cast<int64_t>(order.size()) > top_n) order.resize(static_cast<size_t>(top_n));
  Json list = Json::array();
  for (const auto* r : order) {
    Json item{{"index", r->index}, {label, float_json(r->score)}};
    if (req.tei && req.return_text.value_or(false))
      item["text"] = req.documents[static_cast<size_t>(r->index)];
    list.push_back(std::move(item));
  }
  if (req.tei) return list;
  return Json{{"model", req.model},
              {"object", "list"},
              {"usage", Json{{"prompt_tokens", n_tokens}, {"total_tokens", n_tokens}}},
              {"results", std::move(list)}};
}

}  // namespace

http::Response handle_rerank(ServerState& s, const http::Request& r) {
  if (!s.config.reranking) {
    return handle_not_supported(
        "This server does not support reranking. Start it with `--reranking`");
  }
  Json body;
  if (auto err = parse_json_object(r.body, body)) return error_response(*err);
  auto req = std::make_shared<RerankRequest>();
  if (auto err = parse_rerank(s, body, *req)) return error_response(*err);
  std::vector<std::vector<int32_t>> prompts;
  for (const std::string& doc : req->documents)
    prompts.push_back(rerank_prompt(s, *req->query, doc));
  for (const auto& prompt : prompts) {
    if (prompt.empty()) return error_response(invalid_request("Input content cannot be empty"));
  }
  return submit_embeddings(s, std::move(prompts), scheduler::TaskKind::kRerank,
                           s.config.embd_normalize,
                           [req](const std::vector<scheduler::EmbeddingResult>& results) {
                             return render_ranking(*req, results);
                           });
}

}  // namespace hearth::server
