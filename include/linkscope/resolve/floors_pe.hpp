// linkscope/resolve/floors_pe.hpp — the oldest Windows a PE image runs on,
// and the C runtime it needs.
//
// The optional header (PE/COFF spec 3.4.2) carries the OS version
// (MajorOperatingSystemVersion.Minor...) and the subsystem version; the
// Windows loader refuses an image whose subsystem version is above the
// running system's, so max(OS, subsystem) is the floor that matters (6.0
// Vista, 6.1 Windows 7, 6.2 Windows 8, 10.0 Windows 10). The machine and the
// subsystem (GUI, console, native, EFI ...) say what can load it at all.
//
// The C runtime is read from the imported DLL names by resolve/windows.hpp's
// classify_crt (ucrt, msvcrt, vcredist, debug, mingw; the Windows loader
// classifies with the same function).
// Everything is read through coff/pe.hpp (namespace pe); this file reads no record itself.
#pragma once

#include <algorithm>
#include <cctype>
#include <optional>
#include <string>
#include <initializer_list>
#include <string_view>
#include <vector>

#include "linkscope/coff/pe.hpp"
#include "linkscope/core/bytes.hpp"
#include "linkscope/core/config.hpp"
#include "linkscope/core/error.hpp"
#include "linkscope/resolve/windows.hpp"

namespace linkscope {
inline namespace v0 {
namespace resolve {

namespace floors_detail {
inline bool all_digits(std::string_view s) noexcept {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}
}  // namespace floors_detail

struct pe_floors {
  u16 machine = 0;
  bool pe32_plus = false;
  bool dll = false;
  u16 subsystem = 0;
  u16 major_os_version = 0, minor_os_version = 0;
  u16 major_subsystem_version = 0, minor_subsystem_version = 0;
  std::vector<std::string> imports;     // DLL names (imports, then delay imports)
  std::vector<crt_dependency> crts;     // the imports that are a C runtime
  // The floor: the higher of the OS and subsystem versions, as (major, minor).
  std::pair<u16, u16> windows_floor() const noexcept {
    const std::pair<u16, u16> os{major_os_version, minor_os_version};
    const std::pair<u16, u16> sub{major_subsystem_version, minor_subsystem_version};
    return std::max(os, sub);
  }
  // The distinct flavours, in enum order.
  std::vector<crt_flavour> flavours() const {
    std::vector<crt_flavour> out;
    for (const auto& c : crts)
      if (std::find(out.begin(), out.end(), c.flavour) == out.end()) out.push_back(c.flavour);
    std::sort(out.begin(), out.end());
    return out;
  }
};

// What objdump -f calls the machine (pei-x86-64's "i386:x86-64" ...), short.
constexpr const char* pe_machine_name(u16 machine) noexcept {
  switch (machine) {
    case 0x14c: return "i386";
    case 0x8664: return "x86-64";
    case 0xaa64: return "arm64";
    case 0x1c0: return "arm";
    case 0x1c4: return "armnt";
    case 0xa641: return "arm64ec";
    default: return "unknown";
  }
}

result<pe_floors> pe_floors_of(byte_view bytes);

// "6.1" for a Windows version pair.
inline std::string windows_version_string(u16 major, u16 minor) {
  return std::to_string(major) + "." + std::to_string(minor);
}

// "6.1" -> (6, 1); nullopt when not MAJOR[.MINOR].
inline std::optional<std::pair<u16, u16>> parse_windows_version(std::string_view s) {
  const std::size_t dot = s.find('.');
  const std::string_view major = s.substr(0, dot);
  const std::string_view minor = dot == std::string_view::npos ? std::string_view("0") : s.substr(dot + 1);
  if (!floors_detail::all_digits(major) || !floors_detail::all_digits(minor) || major.size() > 4 || minor.size() > 4) return std::nullopt;
  auto number = [](std::string_view d) {
    u32 v = 0;
    for (char c : d) v = v * 10 + static_cast<u32>(c - '0');
    return v;
  };
  if (number(major) > 0xffff || number(minor) > 0xffff) return std::nullopt;
  return std::pair<u16, u16>{static_cast<u16>(number(major)), static_cast<u16>(number(minor))};
}

#if LINKSCOPE_DEFINITIONS
LINKSCOPE_FUNC result<pe_floors> pe_floors_of(byte_view bytes) {
  LINKSCOPE_TRY(img, pe::image::parse(bytes));
  pe_floors out;
  const pe::header_info& h = img.header();
  out.machine = h.machine;
  out.pe32_plus = h.pe32_plus;
  out.dll = img.is_dll();
  out.subsystem = h.subsystem;
  out.major_os_version = h.major_os_version;
  out.minor_os_version = h.minor_os_version;
  out.major_subsystem_version = h.major_subsystem_version;
  out.minor_subsystem_version = h.minor_subsystem_version;
  LINKSCOPE_TRY(imports, img.imports());
  LINKSCOPE_TRY(delayed, img.delay_imports());
  for (const auto* list : {&imports, &delayed})
    for (const auto& dll : *list) {
      out.imports.emplace_back(dll.name);
      if (auto crt = classify_crt(dll.name)) out.crts.push_back(std::move(*crt));
    }
  return out;
}
#endif  // LINKSCOPE_DEFINITIONS

}  // namespace resolve
}  // namespace v0
}  // namespace linkscope
