// linkscope/resolve/check_floors.hpp — the floor verdicts of one file of the
// whole-prefix check (resolve/check.hpp): an ELF file's symbol versions
// against prefix_options::floor_limits (resolve/floors.hpp), a Mach-O file's
// macOS minimum against macos_target and a PE image's Windows floor against
// windows_target (floors_macho.hpp, floors_pe.hpp). A file that cannot be
// read again leaves a warning in its report, not a finding. Only
// check_prefix calls these: compiled mode builds them once, in its TU.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "linkscope/core/config.hpp"
#include "linkscope/core/error.hpp"
#include "linkscope/core/mapped_file.hpp"
#include "linkscope/resolve/check_result.hpp"
#include "linkscope/resolve/floors.hpp"
#include "linkscope/resolve/floors_macho.hpp"
#include "linkscope/resolve/floors_pe.hpp"

namespace linkscope {
inline namespace v0 {
namespace resolve {
#if LINKSCOPE_DEFINITIONS
namespace detail {

// The macOS or Windows floor of an analysed Mach-O or PE file against its
// target, as one limit_violation: family "macOS" (one entry per slice above,
// from its LC_BUILD_VERSION or LC_VERSION_MIN_MACOSX) or "Windows" (from the
// optional header's OS and subsystem versions).
inline void judge_platform_floor(const std::string& path, const prefix_options& options, file_report& fr) {
  const bool macho_file = fr.format == "macho";
  if (macho_file ? !options.macos_target : !options.windows_target) return;
  auto mapped = mapped_file::open(path);
  if (!mapped) {
    fr.warnings.push_back("floors: " + describe(mapped.error()));
    return;
  }
  limit_violation v;
  if (macho_file) {
    auto floors = macho_floors_of(mapped->bytes());
    if (!floors) {
      fr.warnings.push_back("floors: " + describe(floors.error()));
      return;
    }
    v.family = "macOS";
    v.max = macos_version_string(*options.macos_target);
    u32 highest = 0;
    for (const auto& slice : floors->slices)
      for (const auto& p : slice.platforms) {
        if (p.platform != "macos" || p.minos.raw <= options.macos_target->raw) continue;
        if (p.minos.raw > highest) v.highest = macos_version_string(p.minos);
        highest = std::max(highest, p.minos.raw);
        v.above.push_back({"macOS " + macos_version_string(p.minos) + " (" + slice.arch + ")", version_scheme::unknown, false, {}});
        v.libraries.push_back(p.command);
        break;
      }
  } else {
    auto floors = pe_floors_of(mapped->bytes());
    if (!floors) {
      fr.warnings.push_back("floors: " + describe(floors.error()));
      return;
    }
    const auto floor = floors->windows_floor();
    if (floor <= *options.windows_target) return;
    v.family = "Windows";
    v.max = windows_version_string(options.windows_target->first, options.windows_target->second);
    v.highest = windows_version_string(floor.first, floor.second);
    v.above.push_back({"Windows " + v.highest, version_scheme::unknown, false, {}});
    v.libraries.push_back("the optional header (OS version " +
                          windows_version_string(floors->major_os_version, floors->minor_os_version) +
                          ", subsystem version " +
                          windows_version_string(floors->major_subsystem_version, floors->minor_subsystem_version) + ")");
  }
  if (!v.above.empty()) fr.floors.push_back(std::move(v));
}

// The floors of one analysed file against the limits (the file is mapped
// again: it is in the page cache, and the loader cache holds no raw view).
inline void judge_floors(const std::string& path, const std::vector<version_limit>& limits, file_report& fr) {
  auto mapped = mapped_file::open(path);
  if (!mapped) {
    fr.warnings.push_back("floors: " + describe(mapped.error()));
    return;
  }
  auto floors = elf_floors_of(mapped->bytes());
  if (!floors) {
    fr.warnings.push_back("floors: " + describe(floors.error()));
    return;
  }
  fr.floors = check_limits(*floors, limits);
}
}  // namespace detail
#endif  // LINKSCOPE_DEFINITIONS
}  // namespace resolve
}  // namespace v0
}  // namespace linkscope
