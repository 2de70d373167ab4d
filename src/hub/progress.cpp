#include "hub/progress.h"

#include <cstdio>

#include <fmt/format.h>

#include "base/log.h"

namespace hearth::hub {

namespace {

constexpr double kMiB = 1024.0 * 1024.0;

std::string clock_text(double seconds) {
  const auto s = static_cast<long long>(seconds + 0.5);
  if (s >= 3600) return fmt::format("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60);
  return fmt::format("{}:{:02}", s / 60, s % 60);
}

}  // namespace

std::string progress_line(const std::string& label, uint64_t done, uint64_t total, uint64_t moved,
                          double elapsed_seconds, int bar_width) {
  const double fraction = total > 0 ? std::min(1.0, static_cast<double>(done) / total) : 0.0;
  std::string line = "Downloading " + label + " ";
  if (bar_width > 0) {
    const int filled = static_cast<int>(fraction * bar_width);
    line += "[" + std::string(filled, '#') + std::string(bar_width - filled, '-') + "] ";
  }
  line += fmt::format("{:3}%  {:.1f}/{:.1f} MiB", static_cast<int>(fraction * 100), done / kMiB,
                      total / kMiB);
  const double rate = elapsed_seconds > 0 ? moved / elapsed_seconds : 0.0;
  line += fmt::format("  {:.1f} MiB/s", rate / kMiB);
  if (rate > 0 && total > done) line += "  ETA " + clock_text((total - done) / rate);
  return line;
}

ProgressReporter::ProgressReporter(const DownloadProgress& progress, std::string label,
                                   bool terminal)
    : progress_(progress),
      label_(std::move(label)),
      terminal_(terminal),
      start_(std::chrono::steady_clock::now()),
      last_line_(start_),
      thread_([this] { run(); }) {}

ProgressReporter::~ProgressReporter() {
  stop();
}

void ProgressReporter::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopping_) return;
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  draw(true);
}

void ProgressReporter::run() {
  std::unique_lock<std::mutex> lock(mutex_);
  const auto period = std::chrono::milliseconds(terminal_ ? 200 : 500);
  while (!wake_.wait_for(lock, period, [this] { return stopping_; })) draw(false);
}

void ProgressReporter::draw(bool final_line) {
  if (progress_.files() == 0) return;  // nothing to download (yet)
  const auto now = std::chrono::steady_clock::now();
  const uint64_t done = progress_.done_bytes(), total = progress_.total_bytes();
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  const std::string label =
      progress_.files() > 1
          ? fmt::format("{} ({}/{} files)", label_, progress_.files_done(), progress_.files())
          : label_;
  if (terminal_) {
    // \r and erase-to-end redraw the same line; the final draw ends it.
    const std::string line =
        progress_line(label, done, total, progress_.received_bytes(), elapsed, 30);
    std::fprintf(stderr, "\r%s\033[K%s", line.c_str(), final_line ? "\n" : "");
    std::fflush(stderr);
    return;
  }
  const int decile = total > 0 ? static_cast<int>(10 * done / total) : 0;
  if (!final_line && decile == last_decile_ && now - last_line_ < std::chrono::seconds(10)) return;
  if (final_line && decile == last_decile_) return;
  last_decile_ = decile;
  last_line_ = now;
  log_info("{}", progress_line(label, done, total, progress_.received_bytes(), elapsed, 0));
}

}  // namespace hearth::hub
