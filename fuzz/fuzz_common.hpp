// fuzz/fuzz_common.hpp — shared helpers of the fuzz targets.
//
// Each fuzz_NAME.cpp defines LLVMFuzzerTestOneInput and drives one parser
// through its whole public surface: open, iterate everything, look things
// up, and push every name it hands out into a sink. The sink reads every
// byte of every string_view, so a view that points outside the input is
// caught by ASan even when the parser itself never touched those bytes.
//
// The same sources build two ways (fuzz/CMakeLists.txt): with clang
// -fsanitize=fuzzer,address,undefined as libFuzzer targets, and with any
// compiler as plain programs (replay_main.cpp) that run a corpus.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "linkscope/core/bytes.hpp"
#include "linkscope/core/error.hpp"

namespace linkscope_fuzz {

// Where the hashes go; volatile so that nothing is optimised away.
inline volatile std::uint64_t sink_value = 0;

inline void sink(std::uint64_t v) noexcept { sink_value = sink_value * 1099511628211ull + v; }
inline void sink(std::string_view s) noexcept {
  std::uint64_t h = 14695981039346656037ull ^ s.size();
  for (char c : s) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  sink(h);
}
inline void sink(const std::string& s) noexcept { sink(std::string_view(s)); }
inline void sink(const char* s) noexcept { sink(std::string_view(s)); }
inline void sink(linkscope::byte_view b) noexcept { sink(b.chars()); }
inline void sink(const linkscope::error& e) noexcept {
  sink(static_cast<std::uint64_t>(e.code));
  sink(e.offset);
  sink(e.message);  // every error carries a static, NUL-terminated message
}

// Sink a result: its error, or its value through `f`.
template <class T, class F>
void sink_result(const linkscope::result<T>& r, F&& f) {
  if (r)
    f(*r);
  else
    sink(r.error());
}
template <class T>
void sink_result(const linkscope::result<T>& r) {
  if (r) {
    if constexpr (std::is_same_v<T, std::string_view> || std::is_same_v<T, std::string> ||
                  std::is_integral_v<T>)
      sink(*r);
    else
      sink(std::uint64_t{1});
  } else {
    sink(r.error());
  }
}
inline void sink_result(const linkscope::result<void>& r) {
  if (r)
    sink(std::uint64_t{1});
  else
    sink(r.error());
}

inline linkscope::byte_view as_bytes(const std::uint8_t* data, std::size_t size) noexcept {
  return linkscope::byte_view(data, size);
}

}  // namespace linkscope_fuzz
