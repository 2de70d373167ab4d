// The image goldens under tests/data/media/golden (captured from llama-server b10573 with
// the models hearth-synth writes): load a configuration, write its text model and projector
// with the same flags and seeds, start hearth-server on them the way the reference was
// started, and fill a request body's image placeholders in.
#pragma once

#include <string>
#include <vector>

#include "server/server_fixture.h"

namespace hearth::test {

// tests/data/media/golden/<config>.json, parsed; null when missing.
Json load_media_golden(const std::string& config);

// A body's "{{b64:FILE}}" placeholders replaced by the base64 of tests/data/media/FILE.
std::string fill_media_placeholders(const Json& body);

// Writes model.gguf and mmproj.gguf into `dir` with hearth-synth and the golden's flags;
// an empty string on success, else what went wrong.
std::string synth_media_pair(const Json& golden, const std::string& dir);

// hearth-server on the pair with the golden's server flags (plus `extra`) and environment.
bool start_media_server(ServerProcess& server, const Json& golden, const std::string& dir,
                        const std::vector<std::string>& extra = {});

}  // namespace hearth::test
