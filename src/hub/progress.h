// Download progress: counters the downloads add to (read by /health while the server loads),
// and a reporter that draws them on stderr: a redrawn bar with percent, MiB/s and ETA when
// stderr is a terminal, a plain log line every 10% (or 10 s) otherwise.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

namespace hearth::hub {

class DownloadProgress {
 public:
  void add_total(uint64_t bytes) { total_.fetch_add(bytes, std::memory_order_relaxed); }
  void add_done(uint64_t bytes) { done_.fetch_add(bytes, std::memory_order_relaxed); }
  // Bytes of a failed attempt: the next attempt counts the partial file again.
  void remove_done(uint64_t bytes) { done_.fetch_sub(bytes, std::memory_order_relaxed); }
  // Bytes that came over the network in this run (not those of a resumed partial file):
  // what the transfer rate is measured on.
  void add_received(uint64_t bytes) { received_.fetch_add(bytes, std::memory_order_relaxed); }
  uint64_t received_bytes() const { return received_.load(std::memory_order_relaxed); }
  void add_file() { files_.fetch_add(1, std::memory_order_relaxed); }
  void file_finished() { files_done_.fetch_add(1, std::memory_order_relaxed); }

  uint64_t total_bytes() const { return total_.load(std::memory_order_relaxed); }
  uint64_t done_bytes() const { return done_.load(std::memory_order_relaxed); }
  int files() const { return files_.load(std::memory_order_relaxed); }
  int files_done() const { return files_done_.load(std::memory_order_relaxed); }

 private:
  std::atomic<uint64_t> total_{0};
  std::atomic<uint64_t> done_{0};
  std::atomic<uint64_t> received_{0};
  std::atomic<int> files_{0};
  std::atomic<int> files_done_{0};
};

// One line of progress: "Downloading <label>  42%  12.3 MiB/s  ETA 0:05" with a bar when
// `bar_width` > 0. The rate is `moved` (bytes received in this run) over `elapsed_seconds`.
std::string progress_line(const std::string& label, uint64_t done, uint64_t total, uint64_t moved,
                          double elapsed_seconds, int bar_width);

// Draws `progress` until stop(); the destructor stops it.
class ProgressReporter {
 public:
  ProgressReporter(const DownloadProgress& progress, std::string label, bool terminal);
  ~ProgressReporter();
  void stop();

 private:
  void run();
  void draw(bool final_line);

  const DownloadProgress& progress_;
  std::string label_;
  bool terminal_;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_line_;
  int last_decile_ = -1;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace hearth::hub
