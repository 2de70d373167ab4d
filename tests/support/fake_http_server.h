// hearth-server without a model, in this process: the command line parsed as hearth-server
// parses it, the real HTTP front listening on 127.0.0.1 (port 0), and the FakeScheduler
// with the synthetic vocabulary behind it. Route, field and error tests talk to it over
// sockets as they would to the real server, with no file under ../shared and no
// subprocess.
#pragma once

#include <string>
#include <thread>
#include <vector>

#include "support/fake_server.h"

namespace hearth::test {

class InProcessServer {
 public:
  InProcessServer() = default;
  ~InProcessServer();
  InProcessServer(const InProcessServer&) = delete;
  InProcessServer& operator=(const InProcessServer&) = delete;

  // `args` as hearth-server takes them, without -m (a -m is accepted and only names the
  // model). `model.tok` null: the synthetic vocabulary with FIM tokens. The slot context is
  // derived from -c and -np as hearth-server derives it (capped by model.n_ctx_train);
  // the pooling is --pooling's, else model.pooling. False with the reason in error().
  bool start(const std::vector<std::string>& args, FakeModel model = {});
  void stop();
  int port() const { return port_; }
  const std::string& error() const { return error_; }
  FakeScheduler& scheduler() { return *fake_.scheduler; }

 private:
  FakeServer fake_;
  std::thread thread_;
  int port_ = 0;
  std::string error_;
};

}  // namespace hearth::test
