// Handlers of the speculative-decoding options: the draft sources of --spec-type and the
// sizes of ngram-simple, with the reference's validation and its error texts.
#include <algorithm>
#include <array>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "server/options/option_handlers.h"

namespace hearth::server::options {
namespace {

// Types Hearth runs, and those that need a model sidecar its engine lacks.
constexpr std::array<std::string_view, 7> kRunnable = {
    "none",      "ngram-simple", "ngram-map-k", "ngram-map-k4v",
    "ngram-mod", "ngram-cache",  "draft-simple"};
struct Sidecar {
  std::string_view type;
  std::string_view what;
};
constexpr std::array<Sidecar, 4> kSidecars = {{{"draft-eagle3", "an EAGLE-3 draft head"},
                                               {"draft-mtp", "multi-token-prediction layers"},
                                               {"draft-dflash", "a DFlash draft model"},
                                               {"draft-dspark", "a DSpark draft model"}}};

Status check_type(std::string_view name) {
  if (std::find(kRunnable.begin(), kRunnable.end(), name) != kRunnable.end()) return Status::ok();
  for (const Sidecar& s : kSidecars) {
    if (name == s.type)
      return invalid_value(fmt::format(
          "speculative type '{}' needs {}, which Hearth's engine does not run", name, s.what));
  }
  return invalid_value(fmt::format("unknown speculative type: {}", name));
}

Status set_ngram_size(const OptionInput& in, int32_t& out, char which) {
  HEARTH_ASSIGN_OR_RETURN(const int32_t n, parse_int(in.value));
  if (n < 1 || n > 1024)
    return invalid_value(fmt::format("ngram size {} must be between 1 and 1024 inclusive", which));
  out = n;
  return Status::ok();
}

Result<int32_t> parse_min_hits(std::string_view value) {
  HEARTH_ASSIGN_OR_RETURN(const int32_t n, parse_int(value));
  if (n < 1) return invalid_value("ngram min hits must be at least 1");
  return n;
}

}  // namespace

// Comma-separated; each occurrence adds its types. A list naming `none` adds nothing.
Status handle_spec_type(const OptionInput& in, ParseState& st) {
  bool none = false;
  std::vector<std::string> names;
  size_t at = 0;
  const std::string_view value = in.value;
  while (at <= value.size()) {
    const size_t comma = std::min(value.find(',', at), value.size());
    const std::string_view name = value.substr(at, comma - at);
    HEARTH_RETURN_IF_ERROR(check_type(name));
    none = none || name == "none";
    names.emplace_back(name);
    at = comma + 1;
  }
  if (none) {
    st.args.spec_types.emplace_back("none");
    return Status::ok();
  }
  st.args.spec_types.insert(st.args.spec_types.end(), names.begin(), names.end());
  return Status::ok();
}

Status handle_ngram_simple_n(const OptionInput& in, ParseState& st) {
  return set_ngram_size(in, st.args.spec_ngram_simple_n, 'N');
}

Status handle_ngram_simple_m(const OptionInput& in, ParseState& st) {
  return set_ngram_size(in, st.args.spec_ngram_simple_m, 'M');
}

Status handle_ngram_mod_n_min(const OptionInput& in, ParseState& st) {
  HEARTH_ASSIGN_OR_RETURN(const int32_t n, parse_int(in.value));
  if (n < 0 || n > 1024) return invalid_value("ngram n-min must be between 0 and 1024 inclusive");
  st.args.spec_ngram_mod_n_min = n;
  return Status::ok();
}

Status handle_ngram_mod_n_max(const OptionInput& in, ParseState& st) {
  HEARTH_ASSIGN_OR_RETURN(const int32_t n, parse_int(in.value));
  if (n < 0 || n > 1024) return invalid_value("ngram n-max must be between 0 and 1024 inclusive");
  st.args.spec_ngram_mod_n_max = n;
  return Status::ok();
}

Status handle_ngram_mod_n_match(const OptionInput& in, ParseState& st) {
  return set_ngram_size(in, st.args.spec_ngram_mod_n_match, 'N');
}

// The reference's default speculative configuration: ngram-mod, n-match 24, n-min 48,
// n-max 64.
Status handle_spec_default(const OptionInput&, ParseState& st) {
  st.args.spec_types.emplace_back("ngram-mod");
  st.args.spec_ngram_mod_n_match = 24;
  st.args.spec_ngram_mod_n_min = 48;
  st.args.spec_ngram_mod_n_max = 64;
  return Status::ok();
}

// --vision-gemma-4b/12b-default: the reference's presets, a Gemma 3 QAT repository (whose
// projector -hf fetches too), port 8014, the model's training context, Jinja.
Status apply_vision_gemma_preset(ParseState& st, const char* repo) {
  st.args.hf_repo = repo;
  st.args.http.port = 8014;
  st.args.n_ctx = 0;
  st.args.chat.use_jinja = true;
  return Status::ok();
}

Status handle_vision_gemma_4b(const OptionInput&, ParseState& st) {
  return apply_vision_gemma_preset(st, "ggml-org/gemma-3-4b-it-qat-GGUF");
}

Status handle_vision_gemma_12b(const OptionInput&, ParseState& st) {
  return apply_vision_gemma_preset(st, "ggml-org/gemma-3-12b-it-qat-GGUF");
}

Status handle_draft_n_max(const OptionInput& in, ParseState& st) {
  HEARTH_ASSIGN_OR_RETURN(const int32_t n, parse_int(in.value));
  if (n < 0) return invalid_value("invalid value");
  st.args.spec_draft_n_max = n;
  return Status::ok();
}

// <= 0: all logical CPUs, as the reference resolves it.
Status handle_draft_threads(const OptionInput& in, ParseState& st) {
  HEARTH_ASSIGN_OR_RETURN(int32_t n, parse_int(in.value));
  if (n <= 0) n = static_cast<int32_t>(std::max(1u, std::thread::hardware_concurrency()));
  (option_name(*in.spec) == "--spec-draft-threads" ? st.args.spec_draft_threads
                                                   : st.args.spec_draft_threads_batch) = n;
  return Status::ok();
}

Status check_ngram_min_hits(const OptionInput& in, ParseState&) {
  return parse_min_hits(in.value).status();
}

// --spec-ngram-map-k[4v]-size-n / -size-m / -min-hits, told apart by the option's name.
Status handle_ngram_map_option(const OptionInput& in, ParseState& st) {
  const std::string_view name = option_name(*in.spec);
  ServerArgs::NgramMapArgs& map = name.find("k4v") != std::string_view::npos
                                      ? st.args.spec_ngram_map_k4v
                                      : st.args.spec_ngram_map_k;
  if (name.ends_with("size-n")) return set_ngram_size(in, map.size_n, 'N');
  if (name.ends_with("size-m")) return set_ngram_size(in, map.size_m, 'M');
  HEARTH_ASSIGN_OR_RETURN(map.min_hits, parse_min_hits(in.value));
  return Status::ok();
}

}  // namespace hearth::server::options
