// Socket and process helpers for the hardening tests: many raw connections at once, slow
// and stalled clients, reading what a server sends until it closes, and the battery of
// malformed requests.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <string>
#include <vector>

namespace hearth::test {

// Raises this process's open-file limit to at least `needed`; false when the hard limit is
// lower.
bool raise_descriptor_limit(int needed);
int thread_count(pid_t pid);
int open_descriptors(pid_t pid);

// `n` connections to 127.0.0.1:port that send nothing (blocking sockets once connected).
std::vector<int> open_idle_connections(int port, int n);
// How many of `fds` the peer has closed (EOF or reset).
int count_closed(const std::vector<int>& fds);
void close_all(std::vector<int>& fds);
// Reads each socket until its peer closes it or `timeout` passes; what each received.
std::vector<std::string> read_until_closed(const std::vector<int>& fds,
                                           std::chrono::milliseconds timeout);
std::string drain_until_closed(int fd, std::chrono::milliseconds timeout);
// A connection whose receive buffer is as small as the kernel allows.
int connect_with_small_buffer(int port);

bool wait_for(const std::function<bool()>& condition, std::chrono::milliseconds timeout);
// GET /slots: whether slot `id` is processing.
bool slot_busy(int port, int id);

// Sends `raw` on a fresh connection and reads one response (to its Content-Length, or until
// the server closes the connection).
std::string send_and_read(int port, const std::string& raw, std::chrono::milliseconds timeout);
int status_of(const std::string& raw_response);
std::string body_of(const std::string& raw_response);

struct MalformedCase {
  std::string name;
  std::string raw;                // the bytes sent
  int expected_status = 0;        // 0: any 4xx the battery allows
  std::string message_part = {};  // when set, the error message must contain it
};
// At least 60 malformed requests: broken HTTP, limits, hostile JSON, wrong types on every
// route.
std::vector<MalformedCase> malformed_cases();

}  // namespace hearth::test
