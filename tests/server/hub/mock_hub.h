// The local mock of the Hugging Face hub (mock_hub.py) for the download tests: a fake
// repository tree on disk, the Python server over it on 127.0.0.1, and its request log.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace hearth::test {

struct MockHubOptions {
  int throttle_bytes_per_s = 0;
  int disconnect_after = 0;
  std::string corrupt;        // a file name whose bytes are damaged on the wire
  std::string token;          // required for repositories of the user "private"
  bool ignore_range = false;  // answer Range requests with the whole file
  bool hostile = false;       // list names that try to leave the cache folder
};

class MockHub {
 public:
  // `root` holds <user>/<model>/<files>.
  MockHub(std::string root, MockHubOptions options = {});
  ~MockHub();
  MockHub(const MockHub&) = delete;
  MockHub& operator=(const MockHub&) = delete;

  bool running() const { return port_ > 0; }
  int port() const { return port_; }
  std::string endpoint() const;
  // The requests so far: {"method", "path", "range", "auth"}.
  std::vector<nlohmann::json> requests() const;
  // The requests whose path contains `needle`.
  std::vector<nlohmann::json> requests_for(const std::string& needle) const;

 private:
  std::string dir_;
  pid_t pid_ = -1;
  int port_ = 0;
};

// The commit every mock repository's "main" points at.
inline constexpr const char* kMockCommit = "0123456789abcdef0123456789abcdef01234567";

}  // namespace hearth::test
