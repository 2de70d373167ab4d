// Validators of the options Hearth accepts without effect (accelerator placement, GGML
// tuning, log format, HTTP threads): the value is checked
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

Status check_int_range(const OptionInput& in, int32_t lo, int32_t hi) {
  HEARTH_ASSIGN_OR_RETURN(int32_t value, parse_int(in.value));
  if (value < lo || value > hi) {
    return invalid_value("value out of range [" + std::to_string(lo) + ", " + std::to_string(hi) +
                         "]: " + std::string(in.value));
  }
  return Status::ok();
}

Status check_one_of(const OptionInput& in, std::initializer_list<std::string_view> values) {
  for (std::string_view v : values) {
    if (in.value == v) return Status::ok();
  }
  return invalid_value("invalid value: " + std::string(in.value));
}

}  // namespace

Status check_int(const OptionInput& in, ParseState&) {
  return parse_int(in.value).status();
}
Status check_float(const OptionInput& in, ParseState&) {
  return parse_float(in.value).status();
}
Status check_ulong(const OptionInput& in, ParseState&) {
  return parse_ulong(in.value).status();
}
Status check_non_negative(const OptionInput& in, ParseState&) {
  return check_int_range(in, 0, INT32_MAX);
}

Status check_flash_attn(const OptionInput& in, ParseState&) {
  return parse_tristate(in.value).status();
}

Status check_rpc(const OptionInput& in, ParseState&) {
  return in.value.empty() ? invalid_value("empty RPC server list") : Status::ok();
}

// A CPU-only build has no devices: only "none" is a valid device list.
Status check_devices(const OptionInput& in, ParseState&) {
  for (const std::string& device : split_any(in.value, ",")) {
    if (device != "none") return invalid_value("invalid device: " + device);
  }
  return Status::ok();
}

// -mmdev: one device for the projector; a CPU-only build has none, so only "none" (keep it on
// the CPU) and the default "auto" name something that exists.
Status check_mmproj_device(const OptionInput& in, ParseState&) {
  if (in.value != "none" && in.value != "auto") {
    return invalid_value("invalid device: " + std::string(in.value));
  }
  return Status::ok();
}

Status handle_list_devices(const OptionInput&, ParseState& st) {
  st.print_now = "Available devices:\n  (none)\n";
  return Status::ok();
}

// pattern=buffer-type,...; CPU is the only buffer type of a CPU-only build.
Status check_tensor_overrides(const OptionInput& in, ParseState&) {
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

Status check_gpu_layers(const OptionInput& in, ParseState& st) {
  if (in.value == "auto" || in.value == "all") return Status::ok();
  return check_int(in, st);
}

Status check_split_mode(const OptionInput& in, ParseState&) {
  return check_one_of(in, {"none", "layer", "row", "tensor"});
}

// At most 15 proportions, separated by ',' or '/'.
Status check_tensor_split(const OptionInput& in, ParseState&) {
  std::vector<std::string> items = split_any(in.value, ",/");
  if (items.size() >= 16) return invalid_value("too many tensor split values");
  for (const std::string& item : items) HEARTH_RETURN_IF_ERROR(parse_float(item).status());
  return Status::ok();
}

Status check_fit(const OptionInput& in, ParseState&) {
  return is_truthy(in.value) || is_falsey(in.value)
             ? Status::ok()
             : invalid_value("invalid value: " + std::string(in.value));
}

Status check_int_list(const OptionInput& in, ParseState&) {
  for (const std::string& item : split_any(in.value, ",/")) {
    HEARTH_RETURN_IF_ERROR(parse_int(item).status());
  }
  return Status::ok();
}

Status check_tristate(const OptionInput& in, ParseState&) {
  return parse_tristate(in.value).status();
}

Status accept_any_text(const OptionInput&, ParseState&) {
  return Status::ok();
}

Status check_checkpoint_min_step(const OptionInput& in, ParseState&) {
  HEARTH_ASSIGN_OR_RETURN(int32_t step, parse_int(in.value));
  if (step < 0) return invalid_value("value must be >= 0");
  return Status::ok();
}

}  // namespace hearth::server::options
