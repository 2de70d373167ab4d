#include "server/hub/mock_hub.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "support/test_paths.h"

namespace hearth::test {

MockHub::MockHub(std::string root, MockHubOptions options) : dir_(make_temp_dir("mock_hub")) {
  const std::string port_file = dir_ + "/port";
  std::vector<std::string> argv = {"python3",
                                   std::string(HEARTH_SOURCE_DIR) + "/tests/server/hub/mock_hub.py",
                                   "--root",
                                   root,
                                   "--port-file",
                                   port_file,
                                   "--log",
                                   dir_ + "/requests.jsonl",
                                   "--throttle",
                                   std::to_string(options.throttle_bytes_per_s),
                                   "--disconnect-after",
                                   std::to_string(options.disconnect_after),
                                   "--corrupt",
                                   options.corrupt,
                                   "--token",
                                   options.token};
  if (options.ignore_range) argv.push_back("--ignore-range");
  if (options.hostile) argv.push_back("--hostile");
  pid_ = ::fork();
  if (pid_ == 0) {
    std::vector<char*> cargv;
    for (std::string& a : argv) cargv.push_back(a.data());
    cargv.push_back(nullptr);
    ::execvp("python3", cargv.data());
    _exit(127);
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (std::chrono::steady_clock::now() < deadline && pid_ > 0) {
    std::ifstream in(port_file);
    if (in >> port_ && port_ > 0) return;
    port_ = 0;
    if (::waitpid(pid_, nullptr, WNOHANG) == pid_) pid_ = -1;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

MockHub::~MockHub() {
  if (pid_ > 0) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  std::filesystem::remove_all(dir_);
}

std::string MockHub::endpoint() const {
  return "http://127.0.0.1:" + std::to_string(port_) + "/";
}

std::vector<nlohmann::json> MockHub::requests() const {
  std::vector<nlohmann::json> out;
  std::ifstream in(dir_ + "/requests.jsonl");
  std::string line;
  while (std::getline(in, line)) {
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (!j.is_discarded()) out.push_back(std::move(j));
  }
  return out;
}

std::vector<nlohmann::json> MockHub::requests_for(const std::string& needle) const {
  std::vector<nlohmann::json> out;
  for (auto& r : requests())
    if (r.value("path", "").find(needle) != std::string::npos) out.push_back(r);
  return out;
}

}  // namespace hearth::test
