// examples/cli/progress.hpp — the one-line progress indicator of long runs
// (linkscope-check over a prefix, linkscope-why over a link): `TOOL: DONE/TOTAL
// files` (or `inputs`) rewritten in place on stderr at most ten times a
// second, and erased when the run ends. It is on only when stderr is a
// terminal and the user did not ask for --quiet, so logs, pipes and CI see
// nothing.
//
// Also here: parse_jobs, the `-j N` value (a positive thread count), and
// parse_whole_number, which it and linkscope-check's --cache-mb share.
#pragma once

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#if defined(_WIN32)
#include <io.h>
#else
#include <unistd.h>
#endif

namespace linkscope::cli {

inline bool stderr_is_terminal() {
#if defined(_WIN32)
  return _isatty(_fileno(stderr)) != 0;
#else
  return ::isatty(2) == 1;
#endif
}

class progress_line {
 public:
  progress_line(std::string_view tool, bool quiet) : tool_(tool), on_(!quiet && stderr_is_terminal()) {}
  progress_line(const progress_line&) = delete;
  progress_line& operator=(const progress_line&) = delete;
  ~progress_line() { finish(); }

  bool on() const noexcept { return on_; }

  // `done` of `total` items are finished (called in order of `done`).
  void update(std::size_t done, std::size_t total, const char* unit = "files") {
    if (!on_) return;
    const auto now = std::chrono::steady_clock::now();
    if (done != total && shown_ && now - last_ < std::chrono::milliseconds(100)) return;
    last_ = now;
    shown_ = true;
    std::fprintf(stderr, "\r%.*s: %zu/%zu %s", static_cast<int>(tool_.size()), tool_.data(), done, total, unit);
    std::fflush(stderr);
  }

  // Erase the line (before the report or a diagnostic is written).
  void finish() {
    if (!shown_) return;
    shown_ = false;
    std::fputs("\r\033[K", stderr);
    std::fflush(stderr);
  }

 private:
  std::string_view tool_;
  bool on_;
  bool shown_ = false;
  std::chrono::steady_clock::time_point last_{};
};

// A whole number of at most `digits` decimal digits (no sign, no fraction,
// nothing after it). False, and `out` unchanged, for anything else.
inline bool parse_whole_number(std::string_view text, std::size_t digits, std::size_t& out) {
  if (text.empty() || text.size() > digits) return false;
  std::size_t n = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    n = n * 10 + static_cast<std::size_t>(c - '0');
  }
  out = n;
  return true;
}

// The value of -j/--jobs: a whole number from 1 to 1024. False (and `out`
// unchanged) for anything else: 0, a sign, a fraction, trailing text.
inline bool parse_jobs(std::string_view text, unsigned& out) {
  std::size_t n = 0;
  if (!parse_whole_number(text, 4, n) || n == 0 || n > 1024) return false;
  out = static_cast<unsigned>(n);
  return true;
}

}  // namespace linkscope::cli
