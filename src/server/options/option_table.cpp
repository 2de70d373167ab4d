#include "server/options/option_table.h"

#include <algorithm>
#include <unordered_map>

#include "server/options/option_table_parts.h"

namespace hearth::server::options {

namespace {

std::vector<OptionSpec> build_table() {
  std::vector<OptionSpec> table;
  const std::pair<OptionSection, std::span<const OptionSpec>> parts[] = {
      {OptionSection::kCommon, common_option_entries()},
      {OptionSection::kSampling, sampling_option_entries()},
      {OptionSection::kSpeculative, speculative_option_entries()},
      {OptionSection::kExample, example_option_entries()},
  };
  for (const auto& [section, entries] : parts) {
    for (OptionSpec spec : entries) {
      spec.section = section;
      table.push_back(spec);
    }
  }
  return table;
}

const std::vector<OptionSpec>& table_storage() {
  static const std::vector<OptionSpec> table = build_table();
  return table;
}

const std::unordered_map<std::string_view, const OptionSpec*>& spelling_index() {
  static const auto index = [] {
    std::unordered_map<std::string_view, const OptionSpec*> map;
    for (const OptionSpec& spec : table_storage()) {
      for (std::string_view s : all_spellings(spec)) map.emplace(s, &spec);
    }
    return map;
  }();
  return index;
}

}  // namespace

std::span<const OptionSpec> option_table() {
  return table_storage();
}

const OptionSpec* find_option(std::string_view spelling) {
  const auto& index = spelling_index();
  auto it = index.find(spelling);
  return it == index.end() ? nullptr : it->second;
}

const OptionSpec* find_option(std::span<const OptionSpec> table, std::string_view spelling) {
  if (table.data() == option_table().data()) return find_option(spelling);
  for (const OptionSpec& spec : table) {
    for (std::string_view s : all_spellings(spec)) {
      if (s == spelling) return &spec;
    }
  }
  return nullptr;
}

std::vector<std::string_view> split_spellings(std::string_view list) {
  std::vector<std::string_view> out;
  while (!list.empty()) {
    size_t comma = list.find(',');
    std::string_view item = list.substr(0, comma);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    if (!item.empty()) out.push_back(item);
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  return out;
}

std::string_view option_name(const OptionSpec& spec) {
  std::vector<std::string_view> spellings = all_spellings(spec);
  auto it = std::find_if(spellings.begin(), spellings.end(),
                         [](std::string_view s) { return s.starts_with("--"); });
  return it != spellings.end() ? *it : spellings.front();
}

std::vector<std::string_view> all_spellings(const OptionSpec& spec) {
  std::vector<std::string_view> out = split_spellings(spec.spellings);
  for (std::string_view s : split_spellings(spec.neg_spellings)) out.push_back(s);
  return out;
}

bool is_negative_spelling(const OptionSpec& spec, std::string_view spelling) {
  for (std::string_view s : split_spellings(spec.neg_spellings)) {
    if (s == spelling) return true;
  }
  return false;
}

std::string_view section_name(OptionSection section) {
  switch (section) {
    case OptionSection::kCommon:
      return "common params";
    case OptionSection::kSampling:
      return "sampling params";
    case OptionSection::kSpeculative:
      return "speculative params";
    case OptionSection::kExample:
      return "example-specific params";
  }
  return "";
}

std::string_view state_name(OptionState state) {
  switch (state) {
    case OptionState::kSupported:
      return "supported";
    case OptionState::kAcceptedNoEffect:
      return "accepted_no_effect";
    case OptionState::kDeferred:
      return "deferred";
    case OptionState::kNotApplicable:
      return "not_applicable";
    case OptionState::kRemoved:
      return "removed";
  }
  return "";
}

bool is_refused_state(OptionState state) {
  return state == OptionState::kDeferred || state == OptionState::kNotApplicable;
}

}  // namespace hearth::server::options
