#include "server/media_golden.h"

#include <span>

#include "base/base64.h"
#include "support/process.h"

namespace hearth::test {

namespace {

std::string media_dir() {
  return std::string(HEARTH_SOURCE_DIR) + "/tests/data/media";
}

// The golden's hearth-synth flags, "models/..." read from ../shared.
std::vector<std::string> synth_args(const Json& flags, const std::string& out) {
  std::vector<std::string> args{bin_dir() + "/hearth-synth"};
  for (const Json& flag : flags) {
    const std::string value = flag.get<std::string>();
    args.push_back(value.rfind("models/", 0) == 0 ? shared_path(value) : value);
  }
  args.insert(args.end(), {"-o", out});
  return args;
}

}  // namespace

Json load_media_golden(const std::string& config) {
  const std::string path = media_dir() + "/golden/" + config + ".json";
  if (!file_exists(path)) return nullptr;
  return Json::parse(read_file(path));
}

std::string fill_media_placeholders(const Json& body) {
  std::string text = body.dump();
  const std::string open = "{{b64:";
  for (size_t at = text.find(open); at != std::string::npos; at = text.find(open, at)) {
    const size_t close = text.find("}}", at);
    if (close == std::string::npos) break;
    const std::string bytes =
        read_file(media_dir() + "/" + text.substr(at + open.size(), close - at - open.size()));
    const std::string encoded = base64_encode(std::span<const unsigned char>(
        reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size()));
    text.replace(at, close + 2 - at, encoded);
    at += encoded.size();
  }
  return text;
}

std::string synth_media_pair(const Json& golden, const std::string& dir) {
  if (!file_exists(shared_path("models/stories260K.gguf")))
    return "SKIPPED: " + shared_path("models/stories260K.gguf") + " is missing";
  for (const auto& [key, file] : {std::pair<std::string, std::string>{"synth_model", "model.gguf"},
                                  {"synth_projector", "mmproj.gguf"}}) {
    const ProcessResult r = run_process(synth_args(golden[key], dir + "/" + file), 120);
    if (r.exit_code != 0) return "hearth-synth failed for " + key + ": " + r.err;
  }
  return "";
}

bool start_media_server(ServerProcess& server, const Json& golden, const std::string& dir,
                        const std::vector<std::string>& extra) {
  std::vector<std::string> args{"-m", dir + "/model.gguf", "-mm", dir + "/mmproj.gguf"};
  for (const Json& flag : golden["server_flags"]) args.push_back(flag.get<std::string>());
  args.insert(args.end(), extra.begin(), extra.end());
  std::vector<std::pair<std::string, std::string>> env;
  for (const auto& [name, value] : golden["env"].items())
    env.emplace_back(name, value.get<std::string>());
  return server.start(args, 60, env);
}

}  // namespace hearth::test
