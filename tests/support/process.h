// Running Hearth's executables from tests: arguments passed verbatim (no shell), stdout
// and stderr captured, exit status returned.
#pragma once

#include <string>
#include <vector>

namespace hearth::test {

struct ProcessResult {
  int exit_code = -1;  // the exit status, or 128 + signal number when killed by a signal
  std::string out;
  std::string err;
};

// Runs `argv[0]` with `argv` and waits for it (at most `timeout_s` seconds, then kills it).
ProcessResult run_process(const std::vector<std::string>& argv, int timeout_s = 120);

}  // namespace hearth::test
