// The thread pools' CPU options, stored into the scheduler's settings as the reference parses
// them (common/common.cpp's parse_cpu_mask and parse_cpu_range): a mask and a range both add
// CPUs to the pool's set, so -C and -Cr combine.
#include <algorithm>
#include <climits>
#include <string>

#include "server/options/option_handlers.h"
#include "server/options/value_parse.h"

namespace hearth::server::options {

namespace {

void add_cpu(int32_t cpu, std::vector<int32_t>& cpus) {
  auto at = std::lower_bound(cpus.begin(), cpus.end(), cpu);
  if (at == cpus.end() || *at != cpu) cpus.insert(at, cpu);
}

Result<int32_t> parse_cpu_index(std::string_view text, const char* which) {
  HEARTH_ASSIGN_OR_RETURN(int32_t cpu, parse_int(text));
  if (cpu < 0 || cpu > kMaxCpuIndex)
    return invalid_value(std::string(which) + " index out of bounds (0.." +
                         std::to_string(kMaxCpuIndex) + "): " + std::string(text));
  return cpu;
}

}  // namespace

Status add_cpu_mask(std::string_view mask, std::vector<int32_t>& cpus) {
  std::string_view digits = mask;
  if (digits.starts_with("0x") || digits.starts_with("0X")) digits.remove_prefix(2);
  if (digits.empty()) return invalid_value("invalid cpumask: " + std::string(mask));
  std::vector<int32_t> named;
  for (size_t i = 0; i < digits.size(); ++i) {
    const char c = digits[digits.size() - 1 - i];  // the last digit holds CPUs 0-3
    int value = 0;
    if (c >= '0' && c <= '9') {
      value = c - '0';
    } else if (c >= 'a' && c <= 'f') {
      value = c - 'a' + 10;
    } else if (c >= 'A' && c <= 'F') {
      value = c - 'A' + 10;
    } else {
      return invalid_value("invalid cpumask: invalid hex character '" + std::string(1, c) +
                           "' in " + std::string(mask));
    }
    for (int bit = 0; bit < 4; ++bit) {
      if ((value & (1 << bit)) == 0) continue;
      const auto cpu = static_cast<int64_t>(i) * 4 + bit;
      if (cpu > kMaxCpuIndex)
        return invalid_value("invalid cpumask: CPU " + std::to_string(cpu) +
                             " is beyond the last supported CPU (" + std::to_string(kMaxCpuIndex) +
                             ")");
      named.push_back(static_cast<int32_t>(cpu));
    }
  }
  for (int32_t cpu : named) add_cpu(cpu, cpus);
  return Status::ok();
}

Status add_cpu_range(std::string_view range, std::vector<int32_t>& cpus) {
  const size_t dash = range.find('-');
  if (dash == std::string_view::npos)
    return invalid_value("format of CPU range is invalid: expected [<start>]-[<end>], got '" +
                         std::string(range) + "'");
  const std::string_view lo_text = range.substr(0, dash);
  const std::string_view hi_text = range.substr(dash + 1);
  int32_t lo = 0;
  int32_t hi = kMaxCpuIndex;
  if (!lo_text.empty()) {
    HEARTH_ASSIGN_OR_RETURN(lo, parse_cpu_index(lo_text, "start"));
  }
  if (!hi_text.empty()) {
    HEARTH_ASSIGN_OR_RETURN(hi, parse_cpu_index(hi_text, "end"));
  }
  if (hi < lo) return invalid_value("invalid CPU range: " + std::string(range) + " (end < start)");
  for (int32_t cpu = lo; cpu <= hi; ++cpu) add_cpu(cpu, cpus);
  return Status::ok();
}

Status set_pool_mask(const OptionInput& in, scheduler::PoolCpuSettings& pool) {
  HEARTH_RETURN_IF_ERROR(add_cpu_mask(in.value, pool.cpus));
  pool.mask_given = true;
  return Status::ok();
}

Status set_pool_range(const OptionInput& in, scheduler::PoolCpuSettings& pool) {
  HEARTH_RETURN_IF_ERROR(add_cpu_range(in.value, pool.cpus));
  pool.mask_given = true;
  return Status::ok();
}

Status set_pool_strict(const OptionInput& in, scheduler::PoolCpuSettings& pool) {
  HEARTH_ASSIGN_OR_RETURN(unsigned long value, parse_ulong(in.value));
  pool.strict = value != 0;
  return Status::ok();
}

Status set_pool_priority(const OptionInput& in, scheduler::PoolCpuSettings& pool, int32_t lowest) {
  HEARTH_ASSIGN_OR_RETURN(int32_t value, parse_int(in.value));
  if (value < lowest || value > 3)
    return invalid_value("value out of range [" + std::to_string(lowest) +
                         ", 3]: " + std::string(in.value));
  pool.priority = value;
  return Status::ok();
}

// The reference takes any unsigned value; levels above 100 poll as long as 100.
Status set_pool_poll(const OptionInput& in, scheduler::PoolCpuSettings& pool) {
  HEARTH_ASSIGN_OR_RETURN(unsigned long value, parse_ulong(in.value));
  pool.poll = static_cast<int32_t>(std::min<unsigned long>(value, INT32_MAX));
  return Status::ok();
}

Status handle_numa(const OptionInput& in, ParseState& st) {
  if (in.value == "distribute" || in.value.empty()) {
    st.args.numa = NumaStrategy::kDistribute;
  } else if (in.value == "isolate") {
    st.args.numa = NumaStrategy::kIsolate;
  } else if (in.value == "numactl") {
    st.args.numa = NumaStrategy::kNumactl;
  } else {
    return invalid_value("invalid value: " + std::string(in.value));
  }
  return Status::ok();
}

}  // namespace hearth::server::options
