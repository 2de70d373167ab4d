#include "tools/jinja/conversations.h"

#include <fstream>
#include <sstream>

namespace hearth::jinja::tools {

using nlohmann::ordered_json;

ordered_json conversation_context(const ordered_json& conversation, const std::string& bos_token,
                                  const std::string& eos_token) {
  ordered_json context = ordered_json::object();
  context["messages"] = conversation.value("messages", ordered_json::array());
  if (conversation.contains("tools")) context["tools"] = conversation["tools"];
  context["add_generation_prompt"] = conversation.value("add_generation_prompt", false);
  context["bos_token"] = bos_token;
  context["eos_token"] = eos_token;
  // Later keys win, as dict.update does in the oracle.
  if (auto it = conversation.find("variables"); it != conversation.end() && it->is_object()) {
    for (const auto& [key, value] : it->items()) context[key] = value;
  }
  return context;
}

Result<std::vector<Conversation>> parse_conversations(const std::string& json_text) {
  const ordered_json doc = ordered_json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object()) {
    return error(ErrorCode::kInvalidArgument, "conversations: not a JSON object");
  }
  const auto list = doc.find("conversations");
  if (list == doc.end() || !list->is_array()) {
    return error(ErrorCode::kInvalidArgument, "conversations: no \"conversations\" array");
  }
  const std::string bos = doc.value("bos_token", "<s>");
  const std::string eos = doc.value("eos_token", "</s>");
  std::vector<Conversation> conversations;
  for (const auto& entry : *list) {
    if (!entry.is_object() || !entry.contains("name") || !entry["name"].is_string()) {
      return error(ErrorCode::kInvalidArgument, "conversations: an entry has no \"name\"");
    }
    conversations.push_back(
        {entry["name"].get<std::string>(), conversation_context(entry, bos, eos)});
  }
  return conversations;
}

Result<std::string> read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return error(ErrorCode::kNotFound, "cannot open " + path);
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return error(ErrorCode::kIo, "cannot read " + path);
  return text.str();
}

Result<std::vector<NamedTemplate>> tokenizer_config_templates(const std::string& json_text) {
  const ordered_json doc = ordered_json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object()) {
    return error(ErrorCode::kInvalidArgument, "tokenizer_config: not a JSON object");
  }
  const auto chat_template = doc.find("chat_template");
  if (chat_template == doc.end()) {
    return error(ErrorCode::kNotFound, "tokenizer_config: no chat_template");
  }
  std::vector<NamedTemplate> templates;
  if (chat_template->is_string()) {
    templates.push_back({"", chat_template->get<std::string>()});
    return templates;
  }
  if (!chat_template->is_array()) {
    return error(ErrorCode::kInvalidArgument, "tokenizer_config: chat_template has a bad type");
  }
  for (const auto& variant : *chat_template) {
    if (!variant.is_object() || !variant.value("name", ordered_json()).is_string() ||
        !variant.value("template", ordered_json()).is_string()) {
      return error(ErrorCode::kInvalidArgument,
                   "tokenizer_config: a chat_template entry lacks name or template");
    }
    templates.push_back(
        {variant["name"].get<std::string>(), variant["template"].get<std::string>()});
  }
  return templates;
}

}  // namespace hearth::jinja::tools
