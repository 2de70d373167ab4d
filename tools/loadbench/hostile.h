// The hostile probe (--hostile N): the worst requests issue 32 found, sent in a loop by N
// attacker clients while the measured clients run; a poller checks /health all along.
// The bodies are written as text (building a 100,000-key object as a JSON value would be
// the quadratic step the probe is about).
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "tools/loadbench/loadbench.h"

namespace hearth::loadbench {

struct HostileRequest {
  std::string name;
  RequestSpec spec;  // raw: method, path, body
};

// Deeply nested tool-call arguments (chat and Responses), a 100,000-key object, 64 trigger
// patterns with nested quantifiers, 64 backtracking ones, a 2,000-alternative schema, a
// reasoning budget with a forced call, ignore_eos with a complete grammar, and a 1.3 MB
// /tokenize with pieces. The chat cases need the server started with --jinja.
std::vector<HostileRequest> hostile_requests();

struct HostileReport {
  std::map<std::string, std::map<int, int64_t>> statuses;  // request name -> status -> count
  int64_t sent = 0;
  int64_t transport_failures = 0;  // no answer at all
  int64_t health_checks = 0;
  int64_t health_failures = 0;  // not a 200, or no answer within 5 s
  double health_max_ms = 0;
};

// Each hostile request once, in turn: the warm-up before the probe, so what the server
// allocates once for good (thread arenas and stacks, the vocabulary's token table, ICU's
// data) is not counted as the attack's growth.
void warm_up(const ClientConfig& config);

// Runs `attackers` clients over hostile_requests() and one /health poller until `stop`.
void run_attackers(const ClientConfig& config, int attackers, const std::atomic<bool>& stop,
                   HostileReport& report);

}  // namespace hearth::loadbench
