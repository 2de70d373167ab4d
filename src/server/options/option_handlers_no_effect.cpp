// Validators of the options Hearth accepts without effect (accelerator placement, GGML
// tuning, thread affinity, weight loading, log format, HTTP threads): the value is checked
// as the reference checks it, then ignored (the parser adds the "no effect" warning).
// Flags and bool pairs have nothing to check and need no validator.
#include <climits>
#include <initializer_list>
#include <string>
#include <vector>

#include "server/options/option_handlers.h"
#include "server/options/value_parse.h"

namespace hearth::server::options {

namespace {

using St = ParseState;
using In = OptionInput;

Status check_int(const In& in) {
  return parse_int(in.value).status();
}
Status check_float(const In& in) {
  return parse_float(in.value).status();
}
Status check_ulong(const In& in) {
  return parse_ulong(in.value).status();
}

Status check_int_range(const In& in, int32_t lo, int32_t hi) {
  HEARTH_ASSIGN_OR_RETURN(int32_t value, parse_int(in.value));
  if (value < lo || value > hi) {
    return invalid_value("value out of range [" + std::to_string(lo) + ", " + std::to_string(hi) +
                         "]: " + std::string(in.value));
  }
  return Status::ok();
}

Status check_one_of(const In& in, std::initializer_list<std::string_view> values) {
  for (std::string_view v : values) {
    if (in.value == v) return Status::ok();
  }
  return invalid_value("invalid value: " + std::string(in.value));
}

// Arbitrary-length hex mask, optional 0x prefix.
Status check_cpu_mask(const In& in) {
  std::string_view mask = in.value;
  if (mask.starts_with("0x") || mask.starts_with("0X")) mask.remove_prefix(2);
  if (mask.empty() || mask.find_first_not_of("0123456789abcdefABCDEF") != std::string_view::npos) {
    return invalid_value("invalid cpumask: " + std::string(in.value));
  }
  return Status::ok();
}

// "lo-hi", either side may be omitted; lo <= hi.
Status check_cpu_range(const In& in) {
  size_t dash = in.value.find('-');
  if (dash == std::string_view::npos) return invalid_value("format of CPU range is invalid");
  std::string_view lo_text = in.value.substr(0, dash);
  std::string_view hi_text = in.value.substr(dash + 1);
  int32_t lo = 0;
  int32_t hi = 0;
  if (!lo_text.empty()) {
    HEARTH_ASSIGN_OR_RETURN(lo, parse_int(lo_text));
  }
  if (!hi_text.empty()) {
    HEARTH_ASSIGN_OR_RETURN(hi, parse_int(hi_text));
  }
  if (lo < 0 || (!hi_text.empty() && hi < lo)) return invalid_value("invalid CPU range");
  return Status::ok();
}

// A CPU-only build has no devices: only "none" is a valid device list.
Status check_devices(const In& in) {
  for (const std::string& device : split_any(in.value, ",")) {
    if (device != "none") return invalid_value("invalid device: " + device);
  }
  return Status::ok();
}

// pattern=buffer-type,...; CPU is the only buffer type of a CPU-only build.
Status check_tensor_overrides(const In& in) {
  for (const std::string& item : split_any(in.value, ",")) {
    size_t eq = item.find('=');
    if (eq == std::string::npos) return invalid_value("invalid value");
    std::string buft = item.substr(eq + 1);
    if (buft != "CPU") {
      return invalid_value("unknown buffer type: " + buft + " (available buffer types: CPU)");
    }
  }
  return Status::ok();
}

Status check_gpu_layers(const In& in) {
  if (in.value == "auto" || in.value == "all") return Status::ok();
  return check_int(in);
}

// At most 15 proportions, separated by ',' or '/'.
Status check_tensor_split(const In& in) {
  std::vector<std::string> items = split_any(in.value, ",/");
  if (items.size() >= 16) return invalid_value("too many tensor split values");
  for (const std::string& item : items) HEARTH_RETURN_IF_ERROR(parse_float(item).status());
  return Status::ok();
}

Status check_int_list(const In& in) {
  for (const std::string& item : split_any(in.value, ",/")) {
    HEARTH_RETURN_IF_ERROR(parse_int(item).status());
  }
  return Status::ok();
}

constexpr HandlerEntry kNoEffect[] = {
    {"--cpu-mask", [](const In& in, St&) { return check_cpu_mask(in); }},
    {"--cpu-range", [](const In& in, St&) { return check_cpu_range(in); }},
    {"--cpu-strict", [](const In& in, St&) { return check_ulong(in); }},
    {"--prio", [](const In& in, St&) { return check_int_range(in, -1, 3); }},
    {"--poll", [](const In& in, St&) { return check_ulong(in); }},
    {"--cpu-mask-batch", [](const In& in, St&) { return check_cpu_mask(in); }},
    {"--cpu-range-batch", [](const In& in, St&) { return check_cpu_range(in); }},
    {"--cpu-strict-batch", [](const In& in, St&) { return check_ulong(in); }},
    {"--prio-batch", [](const In& in, St&) { return check_int_range(in, 0, 3); }},
    {"--poll-batch", [](const In& in, St&) { return check_ulong(in); }},
    {"--flash-attn",
     [](const In& in, St& st) {
       HEARTH_ASSIGN_OR_RETURN(st.args.flash_attn, parse_tristate(in.value));
       return Status::ok();
     }},
    {"--defrag-thold", [](const In& in, St&) { return check_float(in); }},
    {"--rpc",
     [](const In& in, St&) {
       return in.value.empty() ? invalid_value("empty RPC server list") : Status::ok();
     }},
    {"--numa",
     [](const In& in, St&) {
       return check_one_of(in, {"", "distribute", "isolate", "numactl"});
     }},
    {"--device", [](const In& in, St&) { return check_devices(in); }},
    {"--list-devices",
     [](const In&, St& st) {
       st.print_now = "Available devices:\n  (none)\n";
       return Status::ok();
     }},
    {"--override-tensor", [](const In& in, St&) { return check_tensor_overrides(in); }},
    {"--n-cpu-moe", [](const In& in, St&) { return check_int_range(in, 0, INT32_MAX); }},
    {"--gpu-layers", [](const In& in, St&) { return check_gpu_layers(in); }},
    {"--split-mode",
     [](const In& in, St&) {
       return check_one_of(in, {"none", "layer", "row", "tensor"});
     }},
    {"--tensor-split", [](const In& in, St&) { return check_tensor_split(in); }},
    {"--main-gpu", [](const In& in, St&) { return check_int(in); }},
    {"--fit",
     [](const In& in, St&) {
       return is_truthy(in.value) || is_falsey(in.value)
                  ? Status::ok()
                  : invalid_value("invalid value: " + std::string(in.value));
     }},
    {"--fit-target", [](const In& in, St&) { return check_int_list(in); }},
    {"--fit-ctx", [](const In& in, St&) { return check_int(in); }},
    {"--hf-token", [](const In&, St&) { return Status::ok(); }},
    {"--load-mode",
     [](const In& in, St&) {
       return check_one_of(in, {"auto", "none", "mmap", "mlock", "mmap+mlock", "dio"}).is_ok()
                  ? Status::ok()
                  : invalid_value("unknown load mode '" + std::string(in.value) +
                                  "' (expected auto, none, mmap, mlock, mmap+mlock or dio)");
     }},
    {"--log-colors", [](const In& in, St&) { return parse_tristate(in.value).status(); }},
    {"--threads-http", [](const In& in, St&) { return check_int(in); }},
    {"--ctx-checkpoints",
     [](const In& in, St& st) {
       HEARTH_ASSIGN_OR_RETURN(st.args.n_ctx_checkpoints, parse_int(in.value));
       return Status::ok();
     }},
    {"--checkpoint-min-step",
     [](const In& in, St& st) {
       HEARTH_ASSIGN_OR_RETURN(int32_t step, parse_int(in.value));
       if (step < 0) return invalid_value("value must be >= 0");
       st.args.checkpoint_min_step = step;
       return Status::ok();
     }},
};

}  // namespace

std::span<const HandlerEntry> no_effect_handlers() {
  return kNoEffect;
}

}  // namespace hearth::server::options
