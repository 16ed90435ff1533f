// linkscope/resolve/floors_macho.hpp — the oldest macOS a Mach-O file runs on.
//
// dyld refuses an image whose minimum OS version is above the running
// system's: the minos of LC_BUILD_VERSION (PLATFORM_MACOS) or the version of
// LC_VERSION_MIN_MACOSX (what older linkers and targets below 10.14 write).
// That is the file's macOS floor, and what MACOSX_DEPLOYMENT_TARGET (delocate's
// --require-target-macos-version) bounds. The sdk field is the SDK the file
// was linked against. A universal file has one floor per architecture; a
// universal2 package needs both x86_64 and arm64 in every file.
//
// Versions are the packed xxxx.yy.zz of Mach-O (macho/types.hpp
// packed_version), printed as llvm-otool -l prints them: "11.0", "10.13.4"
// (the patch only when it is not 0). Everything is read through macho/
// (file.hpp platforms(), fat.hpp); this file reads no record itself.
#pragma once

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "linkscope/core/bytes.hpp"
#include "linkscope/core/config.hpp"
#include "linkscope/core/error.hpp"
#include "linkscope/macho/fat.hpp"
#include "linkscope/macho/file.hpp"
#include "linkscope/macho/types.hpp"

namespace linkscope {
inline namespace v0 {
namespace resolve {

// "11.0", "10.13.4", as llvm-otool -l prints a packed version.
inline std::string macos_version_string(macho::packed_version v) {
  std::string out = std::to_string(v.major()) + "." + std::to_string(v.minor());
  if (v.patch() != 0) out += "." + std::to_string(v.patch());
  return out;
}

// "10.13", "11", "12.3.1" -> packed; nullopt when it is not such a version.
inline std::optional<macho::packed_version> parse_macos_version(std::string_view s) {
  u32 parts[3] = {0, 0, 0};
  std::size_t count = 0, i = 0;
  while (i < s.size()) {
    if (count == 3 || s[i] < '0' || s[i] > '9') return std::nullopt;
    u32 value = 0;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
      value = value * 10 + static_cast<u32>(s[i] - '0');
      if (value > 0xffff) return std::nullopt;
      ++i;
    }
    parts[count++] = value;
    if (i < s.size()) {
      if (s[i] != '.' || i + 1 == s.size()) return std::nullopt;
      ++i;
    }
  }
  if (count == 0 || parts[1] > 0xff || parts[2] > 0xff) return std::nullopt;
  return macho::packed_version{(parts[0] << 16) | (parts[1] << 8) | parts[2]};
}

constexpr const char* macho_platform_name(u32 platform) noexcept {
  switch (platform) {
    case macho::PLATFORM_MACOS: return "macos";
    case macho::PLATFORM_IOS: return "ios";
    case macho::PLATFORM_TVOS: return "tvos";
    case macho::PLATFORM_WATCHOS: return "watchos";
    case macho::PLATFORM_BRIDGEOS: return "bridgeos";
    case macho::PLATFORM_MACCATALYST: return "maccatalyst";
    case macho::PLATFORM_IOSSIMULATOR: return "iossimulator";
    case macho::PLATFORM_TVOSSIMULATOR: return "tvossimulator";
    case macho::PLATFORM_WATCHOSSIMULATOR: return "watchossimulator";
    case macho::PLATFORM_DRIVERKIT: return "driverkit";
    default: return "unknown";
  }
}

struct macho_platform_floor {
  std::string platform;          // "macos"
  std::string command;           // "LC_BUILD_VERSION" or "LC_VERSION_MIN_MACOSX" ...
  macho::packed_version minos;
  macho::packed_version sdk;
};

struct macho_slice_floor {
  std::string arch;  // "x86_64", "arm64" (llvm-lipo's names)
  u32 cputype = 0;
  u32 cpusubtype = 0;
  std::vector<macho_platform_floor> platforms;  // in load-command order
  // The macOS minimum of this slice, when it states one.
  std::optional<macho::packed_version> macos_minos() const noexcept {
    for (const auto& p : platforms)
      if (p.platform == "macos") return p.minos;
    return std::nullopt;
  }
};

struct macho_floors {
  bool universal = false;
  std::vector<macho_slice_floor> slices;  // one for a thin file
  // The highest macOS minimum over the slices (nullopt when none states one).
  std::optional<macho::packed_version> macos_minos() const noexcept {
    std::optional<macho::packed_version> out;
    for (const auto& s : slices)
      if (auto m = s.macos_minos(); m && (!out || m->raw > out->raw)) out = m;
    return out;
  }
  bool has_arch(std::string_view arch) const noexcept {
    return std::any_of(slices.begin(), slices.end(), [&](const macho_slice_floor& s) { return s.arch == arch; });
  }
};

namespace floors_detail {
inline const char* platform_command_name(u32 cmd) noexcept {
  switch (cmd) {
    case macho::LC_BUILD_VERSION: return "LC_BUILD_VERSION";
    case macho::LC_VERSION_MIN_MACOSX: return "LC_VERSION_MIN_MACOSX";
    case macho::LC_VERSION_MIN_IPHONEOS: return "LC_VERSION_MIN_IPHONEOS";
    case macho::LC_VERSION_MIN_TVOS: return "LC_VERSION_MIN_TVOS";
    case macho::LC_VERSION_MIN_WATCHOS: return "LC_VERSION_MIN_WATCHOS";
    default: return "";
  }
}

}  // namespace floors_detail

// The Mach-O floors of a thin or universal file (compiled once in src/ in
// compiled mode: the Mach-O variants behind it are instantiated there only).
result<macho_floors> macho_floors_of(byte_view bytes);
#if LINKSCOPE_DEFINITIONS
namespace floors_detail {
LINKSCOPE_FUNC result<macho_slice_floor> macho_slice_of(byte_view image) {
  return macho::visit_macho(image, [](const auto& f) -> result<macho_slice_floor> {
    macho_slice_floor out;
    out.cputype = f.cputype();
    out.cpusubtype = f.cpusubtype();
    out.arch = macho::arch_name(out.cputype, out.cpusubtype);
    LINKSCOPE_TRY(platforms, f.platforms());
    for (const auto& p : platforms)
      out.platforms.push_back({macho_platform_name(p.platform), platform_command_name(p.cmd), p.minos, p.sdk});
    return out;
  });
}
}  // namespace floors_detail

LINKSCOPE_FUNC result<macho_floors> macho_floors_of(byte_view bytes) {
  macho_floors out;
  if (macho::is_fat(bytes)) {
    out.universal = true;
    LINKSCOPE_TRY(fat, macho::fat_file::open(bytes));
    for (const auto& slice : fat.slices()) {
      LINKSCOPE_TRY(one, floors_detail::macho_slice_of(slice.bytes));
      out.slices.push_back(std::move(one));
    }
    return out;
  }
  LINKSCOPE_TRY(one, floors_detail::macho_slice_of(bytes));
  out.slices.push_back(std::move(one));
  return out;
}
#endif  // LINKSCOPE_DEFINITIONS

// What a Mach-O file breaks: slices whose macOS minimum is above `target`,
// and required architectures it lacks.
struct macho_violations {
  std::vector<std::string> above_target;   // arch of each slice above the target
  std::vector<std::string> missing_archs;  // required archs not in the file
  bool any() const noexcept { return !above_target.empty() || !missing_archs.empty(); }
};

macho_violations check_macho(const macho_floors& f, std::optional<macho::packed_version> target,
                                    const std::vector<std::string>& required_archs);

#if LINKSCOPE_DEFINITIONS
LINKSCOPE_FUNC macho_violations check_macho(const macho_floors& f, std::optional<macho::packed_version> target,
                                    const std::vector<std::string>& required_archs) {
  macho_violations out;
  if (target)
    for (const auto& s : f.slices)
      if (auto m = s.macos_minos(); m && m->raw > target->raw) out.above_target.push_back(s.arch);
  for (const auto& arch : required_archs)
    if (!f.has_arch(arch)) out.missing_archs.push_back(arch);
  return out;
}
#endif  // LINKSCOPE_DEFINITIONS

}  // namespace resolve
}  // namespace v0
}  // namespace linkscope
