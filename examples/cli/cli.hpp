// Shared helpers of the linkscope-* CLIs: diagnostics, exit codes, --help /
// --version, and output buffering. Everything an embedder would need lives in
// the library, not here.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include <linkscope/core/error.hpp>
#include <linkscope/report/diagnostic.hpp>

#ifndef LINKSCOPE_VERSION_STRING
#define LINKSCOPE_VERSION_STRING "0.1.0"
#endif

namespace linkscope::cli {

// Exit codes shared by every CLI (DESIGN.md "CLI contracts").
inline constexpr int exit_ok = 0;
inline constexpr int exit_finding = 1;  // the answer is a finding (missing symbols, archive needed ...)
inline constexpr int exit_error = 2;    // usage or input error

// Diagnostics on stderr, `linkscope-X: FILE: error: MESSAGE (offset 0x...)`,
// all through the library's one formatter (report/diagnostic.hpp).
inline void report(std::string_view tool, const linkscope::diagnostic& d) { linkscope::print_diagnostic(tool, d); }

// An error of the format layer about `file` (which may be "lib.a(member.o)"
// when the caller has already joined the names).
inline void report(std::string_view tool, std::string_view file, const linkscope::error& err) {
  linkscope::print_diagnostic(tool, linkscope::diagnostic(err, std::string(file)));
}

// A problem found by the CLI itself; `message` must be static text.
inline void report(std::string_view tool, std::string_view file, const char* message) {
  linkscope::print_diagnostic(tool, linkscope::diagnostic(linkscope::error{linkscope::errc::ok, linkscope::no_offset, message},
                                                          std::string(file)));
}

inline void warn(std::string_view tool, const linkscope::diagnostic& d) {
  linkscope::diagnostic w = d;
  w.level = linkscope::severity::warning;
  linkscope::print_diagnostic(tool, w);
}

// A warning with run-time text (a library name, a reason) that no static
// message holds.
inline void warn(std::string_view tool, std::string_view file, std::string_view message) {
  std::string line;
  line.append(tool).append(": ");
  if (!file.empty()) line.append(file).append(": ");
  line.append("warning: ").append(message).push_back('\n');
  std::fwrite(line.data(), 1, line.size(), stderr);
}

inline int usage_error(std::string_view tool, std::string_view message) {
  std::string line;
  line.append(tool).append(": ").append(message).append("\nTry '").append(tool).append(" --help' for more information.\n");
  std::fwrite(line.data(), 1, line.size(), stderr);
  return exit_error;
}

inline int print_version(std::string_view tool) {
  std::printf("%.*s (linkscope) %s\n", static_cast<int>(tool.size()), tool.data(), LINKSCOPE_VERSION_STRING);
  return exit_ok;
}

// A large stdout buffer: CLIs print hundreds of thousands of lines.
inline void fast_stdout() {
  static char buffer[1 << 16];
  std::setvbuf(stdout, buffer, _IOFBF, sizeof(buffer));
}

// Split "--opt=value" into its value, or take the next argument.
// Returns nullptr when the option has no value.
inline const char* option_value(int argc, char** argv, int& i, std::string_view opt) {
  std::string_view arg = argv[i];
  if (arg.size() > opt.size() && arg.substr(0, opt.size()) == opt && arg[opt.size()] == '=')
    return argv[i] + opt.size() + 1;
  if (arg == opt && i + 1 < argc) return argv[++i];
  return nullptr;
}

}  // namespace linkscope::cli
