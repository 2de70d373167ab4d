// Health, props, models, slots, metrics and LoRA routes (other-native-routes.md §1-§7).
#include <chrono>
#include <cstdio>
#include <sstream>

#include "server/api_error.h"
#include "server/fields/field.h"
#include "server/request_body.h"
#include "server/server_state.h"
#include "tokenizer/tokenizer.h"

namespace hearth::server {

http::Response handle_health(ServerState&, const http::Request&) {
  return json_response(Json{{"status", "ok"}});
}

namespace {

// The 42-key params of /props: the server's sampling configuration, other members at
// their built-in defaults (not the server flags).
Json props_params(const ServerState& s) {
  CompletionSettings settings;
  settings.task.sampling = s.config.defaults.sampling;
  settings.task.sampling.logit_bias.clear();
  settings.reasoning_format = "none";
  settings.spec_types = s.config.defaults.spec_types;
  return generation_settings_json(settings, false);
}

std::string token_text(const tokenizer::Tokenizer& tok, int32_t id) {
  return id < 0 ? std::string() : tok.token_to_piece(id, true);
}

}  // namespace

http::Response handle_props(ServerState& s, const http::Request&) {
  const tokenizer::Tokenizer& tok = s.scheduler->tokenizer();
  Json j = Json::object();
  j["default_generation_settings"] = {{"params", props_params(s)},
                                      {"n_ctx", s.scheduler->config().n_ctx_slot}};
  j["total_slots"] = s.scheduler->config().n_slots;
  j["model_alias"] = s.config.model_name();
  j["model_ftype"] = s.model.ftype;
  j["model_path"] = s.config.model_path;
  const scheduler::MediaSupport media = s.scheduler->media_support();
  j["modalities"] = {{"vision", media.vision}, {"video", false}, {"audio", media.audio}};
  j["media_marker"] = s.config.media_marker;
  j["endpoint_slots"] = s.config.endpoint_slots;
  j["endpoint_props"] = s.config.endpoint_props;
  j["endpoint_metrics"] = s.config.endpoint_metrics;
  j["ui"] = s.config.ui.serving();
  j["ui_settings"] = s.config.ui_settings;
  const chat::ChatTemplates& templates = *s.model.chat_templates;
  j["chat_template"] = templates.default_source();
  j["chat_template_caps"] = templates.caps().to_json();
  j["bos_token"] = token_text(tok, tok.bos());
  j["eos_token"] = token_text(tok, tok.eos());
  j["build_info"] = s.config.build_info;
  j["is_sleeping"] = false;
  j["cors_proxy_enabled"] = false;
  // Only the Jinja engine uses a model's separate tool-use template.
  if (s.config.chat.use_jinja && !templates.tool_use_source().empty()) {
    j["chat_template_tool_use"] = templates.tool_use_source();
  }
  return json_response(j);
}

http::Response handle_props_post(ServerState& s, const http::Request& r) {
  if (!s.config.endpoint_props) {
    return handle_not_supported(
        "This server does not support changing global properties. Start it with `--props`");
  }
  // The reference has no property that can be changed and ignores what it is sent; Hearth
  // refuses any member rather than ignore it (differences.json, props-post-members).
  Json body;
  if (auto err = parse_json_object(r.body, body)) return error_response(*err);
  if (!body.empty()) {
    return error_response(
        invalid_request("Field '" + body.begin().key() + "': no global property can be changed"));
  }
  return json_response(Json{{"success", true}});
}

http::Response handle_models(ServerState& s, const http::Request&) {
  const std::string name = s.config.model_name();
  // The reference lists "multimodal" whenever a projector is loaded (vision or audio).
  const scheduler::MediaSupport media = s.scheduler->media_support();
  Json capabilities = media.vision || media.audio ? Json::array({"completion", "multimodal"})
                                                  : Json::array({"completion"});
  Json details = {{"parent_model", ""}, {"format", "gguf"},     {"family", ""},
                  {"families", {""}},   {"parameter_size", ""}, {"quantization_level", ""}};
  Json ollama = {{"name", name},      {"model", name},     {"modified_at", ""},
                 {"size", ""},        {"digest", ""},      {"type", "model"},
                 {"description", ""}, {"tags", {""}},      {"capabilities", capabilities},
                 {"parameters", ""},  {"details", details}};
  const auto now = std::chrono::system_clock::now().time_since_epoch();
  Json meta = {{"vocab_type", s.model.vocab_type},
               {"n_vocab", s.model.n_vocab},
               {"n_ctx", s.scheduler->config().n_ctx_slot},
               {"n_ctx_train", s.model.n_ctx_train},
               {"n_embd", s.model.n_embd},
               {"n_params", s.model.n_params},
               {"size", s.model.size},
               {"ftype", s.model.ftype}};
  Json aliases = s.config.aliases.empty() ? Json::array({name}) : Json(s.config.aliases);
  Json entry = {{"id", name},
                {"aliases", aliases},
                {"tags", s.config.tags},
                {"object", "model"},
                {"created", std::chrono::duration_cast<std::chrono::seconds>(now).count()},
                {"owned_by", "llamacpp"},
                {"meta", meta}};
  Json j = Json::object();
  j["models"] = Json::array({ollama});
  j["object"] = "list";
  j["data"] = Json::array({entry});
  return json_response(j);
}

http::Response handle_slots(ServerState& s, const http::Request& r) {
  if (!s.config.endpoint_slots) {
    return handle_not_supported(
        "This server does not support slots endpoint. Start it with `--slots`");
  }
  if (auto fail = r.query_param("fail_on_no_slot"); fail && !fail->empty()) {
    if (!s.scheduler->has_idle_slot()) {
      return error_response({ErrorType::kUnavailable, "no slot available"});
    }
  }
  Json slots = Json::array();
  for (const scheduler::SlotInfo& info : s.scheduler->slots()) {
    Json j = Json::object();
    j["id"] = info.id;
    j["n_ctx"] = info.n_ctx;
    j["speculative"] = info.speculative;
    j["is_processing"] = info.is_processing;
    if (info.has_task) {
      j["id_task"] = info.id_task;
      j["n_prompt_tokens"] = info.n_prompt_tokens;
      j["n_prompt_tokens_processed"] = info.n_prompt_tokens_processed;
      j["n_prompt_tokens_cache"] = info.n_prompt_tokens_cache;
      const auto* settings = static_cast<const CompletionSettings*>(info.echo.get());
      j["params"] =
          settings != nullptr ? generation_settings_json(*settings, false) : Json::object();
      j["next_token"] = Json::array({{{"has_next_token", info.has_next_token},
                                      {"has_new_line", info.has_new_line},
                                      {"n_remain", info.n_remain},
                                      {"n_decoded", info.n_decoded}}});
    }
    slots.push_back(std::move(j));
  }
  return json_response(slots);
}

http::Response handle_lora_list(ServerState&, const http::Request&) {
  return json_response(Json::array());  // Hearth loads no adapters
}

namespace {

// One entry of a POST /lora-adapters body: {"id": int, "scale": number}.
struct LoraEntry {
  std::optional<int64_t> id;
  float scale = 1.0f;
};

std::optional<ApiError> read_lora_id(const Json& v, const std::string&, LoraEntry& out,
                                     const fields::FieldContext&) {
  if (!v.is_number_integer()) return invalid_request("'id' must be an integer");
  out.id = v.get<int64_t>();
  return std::nullopt;
}

std::optional<ApiError> read_lora_scale(const Json& v, const std::string&, LoraEntry& out,
                                        const fields::FieldContext&) {
  if (!v.is_number()) return invalid_request("'scale' must be a number");
  out.scale = v.get<float>();
  return std::nullopt;
}

const std::vector<fields::Field<LoraEntry>>& lora_entry_fields() {
  static const std::vector<fields::Field<LoraEntry>> table = {
      {.name = "id", .target = read_lora_id, .keeps_null = true},
      {.name = "scale", .target = read_lora_scale, .keeps_null = true},
  };
  return table;
}

}  // namespace

std::vector<fields::FieldInfo> lora_entry_field_info() {
  return fields::field_info(lora_entry_fields());
}

// Hearth loads no adapters, so every id is unknown: the reference ignores unknown ids,
// Hearth refuses them (a recorded difference); an empty list sets nothing and succeeds.
http::Response handle_lora_set(ServerState&, const http::Request& r) {
  Json body;
  if (auto err = parse_json_body(r.body, body)) return error_response(*err);
  if (!body.is_array()) return error_response(invalid_request("Request body must be an array"));
  for (const Json& item : body) {
    if (!item.is_object()) {
      return error_response(
          invalid_request("each entry must be an object {\"id\": int, \"scale\": number}"));
    }
    LoraEntry entry;
    if (auto err = fields::parse_fields(lora_entry_fields(), item, entry, {})) {
      return error_response(*err);
    }
    if (!entry.id) return error_response(invalid_request("'id' must be an integer"));
    return error_response(invalid_request("invalid adapter id " + std::to_string(*entry.id) +
                                          ": no LoRA adapters are loaded"));
  }
  return json_response(Json{{"success", true}});
}

}  // namespace hearth::server
