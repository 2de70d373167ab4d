// --log-prompts-dir: every generation's prompt in a file of its own, as llama-server writes
// them (a debugging aid).
#pragma once

#include <string>

#include "server/json_util.h"

namespace hearth::server {

// Writes `prompt` into `dir` (nothing when `dir` is empty): a text prompt as it is, any
// other form (token ids, a list of prompts) as JSON indented by two. The file is named by
// the milliseconds since the server started, twelve digits and ".txt"; where two prompts
// share a millisecond the later one takes the next free number (the reference overwrites
// the first). A file that cannot be written is logged as an error; the request goes on.
void write_prompt_log(const std::string& dir, const Json& prompt);

}  // namespace hearth::server
