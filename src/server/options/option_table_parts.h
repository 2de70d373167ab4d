// Internal: the four section parts of the option table, one per source file.
#pragma once

#include <span>

#include "server/options/option_handlers.h"
#include "server/options/option_reasons.h"
#include "server/options/option_table.h"

namespace hearth::server::options {

// Rows name members of the scheduler's settings too.
using scheduler::SchedulerSettings;

std::span<const OptionSpec> common_option_entries();
std::span<const OptionSpec> sampling_option_entries();
std::span<const OptionSpec> speculative_option_entries();
std::span<const OptionSpec> example_option_entries();

}  // namespace hearth::server::options
