// linkscope/report/diagnostic.hpp — the one formatter of diagnostics.
//
// Every CLI prints a problem the same way, on stderr, as compilers and
// binutils do:
//
//   linkscope-X: FILE: error: MESSAGE (offset 0x1a4)
//   linkscope-X: lib.a(member.o): warning: MESSAGE
//   linkscope-X: note: CONTEXT              (only when the diagnostic has context)
//
// FILE is the path as the user gave it; an archive member is named
// `lib.a(member.o)`. The offset is printed in hex, only when there is one, and
// is an offset in the file a user can open (core/error.hpp says which).
// MESSAGE is the static message, or the errc's name when it is empty.
// The message and offset are core/error.hpp's describe(), the one function
// that formats "(offset 0x...)".
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

#include "linkscope/core/error.hpp"

namespace linkscope {
inline namespace v0 {
// The text of `d`, one line per line above, each ending in '\n'.
inline std::string format_diagnostic(std::string_view tool, const diagnostic& d) {
  std::string line;
  line.reserve(tool.size() + d.file.size() + d.member.size() + 64);
  line.append(tool).append(": ");
  if (!d.file.empty()) {
    line.append(d.file);
    if (!d.member.empty()) line.append("(").append(d.member).append(")");
    line.append(": ");
  }
  line.append(d.level == severity::warning ? "warning: " : "error: ").append(describe(d.err));
  line.push_back('\n');
  if (!d.context.empty()) line.append(tool).append(": note: ").append(d.context).push_back('\n');
  return line;
}

// Write `d` to `out` (stderr by default) in one call.
inline void print_diagnostic(std::string_view tool, const diagnostic& d, std::FILE* out = stderr) {
  const std::string text = format_diagnostic(tool, d);
  std::fwrite(text.data(), 1, text.size(), out);
}

}  // namespace v0
}  // namespace linkscope
