// cli/floor_limits.hpp — --max-glibc VER, --max-glibcxx VER and
// --max-version FAMILY=VER (repeatable) read into resolve::version_limit,
// --macos-target and --windows-target into versions, as
// linkscope-floors and linkscope-check take them (each tool's option table
// names them, with its own meaning of "exceeded"), and a limit exceeded as
// JSON, the same in both tools.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <linkscope/report/check.hpp>
#include <linkscope/report/json.hpp>
#include <linkscope/resolve/floors.hpp>
#include <linkscope/resolve/floors_macho.hpp>
#include <linkscope/resolve/floors_pe.hpp>

#include "options.hpp"

namespace linkscope::cli {

// -1 when every limit given is a numbered version; otherwise the usage
// error's exit status (2), after the message and the Try line.
inline int read_floor_limits(const tool_spec& t, const parsed& p, std::vector<resolve::version_limit>& out) {
  auto add = [&](std::string_view family, std::string_view value) {
    auto limit = resolve::make_limit(family, value);
    if (limit) out.push_back(std::move(*limit));
    return limit.has_value();
  };
  if (p.has("max-glibc") && !add("GLIBC", p.value("max-glibc")))
    return usage_error(t, "--max-glibc: not a version number (e.g. 2.17)");
  if (p.has("max-glibcxx") && !add("GLIBCXX", p.value("max-glibcxx")))
    return usage_error(t, "--max-glibcxx: not a version number (e.g. 3.4.19)");
  for (const auto& v : p.values("max-version")) {
    const auto eq = v.find('=');
    if (eq == std::string::npos || eq == 0 || !add(std::string_view(v).substr(0, eq), std::string_view(v).substr(eq + 1)))
      return usage_error(t, "--max-version: expected FAMILY=VERSION (e.g. CXXABI=1.3.7)");
  }
  return -1;
}

// --macos-target VER and --windows-target VER (linkscope-floors and
// linkscope-check): -1 when each given is a version, else the usage error's
// exit status (2).
inline int read_platform_targets(const tool_spec& t, const parsed& p, std::optional<macho::packed_version>& macos,
                                 std::optional<std::pair<std::uint16_t, std::uint16_t>>& windows) {
  if (p.has("macos-target")) {
    macos = resolve::parse_macos_version(p.value("macos-target"));
    if (!macos) return usage_error(t, "--macos-target: not a macOS version (e.g. 11.0)");
  }
  if (p.has("windows-target")) {
    windows = resolve::parse_windows_version(p.value("windows-target"));
    if (!windows) return usage_error(t, "--windows-target: not a Windows version (e.g. 6.1)");
  }
  return -1;
}

// One family over its limit as JSON, in linkscope-floors' "exceeded" and
// linkscope-check's "floors" (the writer is report/check.hpp's).
using report::write_violation;

}  // namespace linkscope::cli
