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
// The C runtime is read from the imported DLL names (case-insensitive):
//   ucrt       ucrtbase.dll and the api-ms-win-crt-*.dll API sets (the
//              Universal CRT, part of Windows 10, an update on 7/8.1)
//   msvcrt     msvcrt.dll (the system's own CRT; what MinGW links by default)
//   vcredist   the Visual C++ redistributable: vcruntime140*.dll, msvcp140*.dll,
//              concrt140.dll, vcomp140.dll (2015-2022, version 14), and the
//              versioned CRTs of older Visual Studios msvcrNN.dll / msvcpNN.dll
//              (msvcr120 = VS 2013 ...); `version` is the NN
//   debug      the debug CRTs (ucrtbased.dll, vcruntime140d.dll, msvcp140d.dll,
//              msvcrNNd.dll ...): not redistributable, a build mistake in a
//              package
//   mingw      MinGW's runtime DLLs: libgcc_s_*.dll, libstdc++-6.dll,
//              libwinpthread-1.dll
// Everything is read through coff/pe.hpp (namespace pe); this file reads no record itself.
#pragma once

#include <algorithm>
#include <cctype>
#include <optional>
#include <string>
#include <initializer_list>
#include <string_view>
#include <vector>

#include "linkscope/core/bytes.hpp"
#include "linkscope/core/error.hpp"
#include "linkscope/coff/pe.hpp"

namespace linkscope {
inline namespace v0 {
namespace resolve {

enum class crt_flavour : u8 { ucrt, msvcrt, vcredist, debug, mingw };

constexpr const char* to_string(crt_flavour f) noexcept {
  switch (f) {
    case crt_flavour::ucrt: return "ucrt";
    case crt_flavour::msvcrt: return "msvcrt";
    case crt_flavour::vcredist: return "vcredist";
    case crt_flavour::debug: return "debug";
    case crt_flavour::mingw: return "mingw";
  }
  return "?";
}

// A flavour's name as to_string spells it (--forbid-crt's values).
constexpr bool is_crt_flavour_name(std::string_view name) noexcept {
  for (auto f : {crt_flavour::ucrt, crt_flavour::msvcrt, crt_flavour::vcredist, crt_flavour::debug, crt_flavour::mingw})
    if (name == to_string(f)) return true;
  return false;
}

struct crt_dependency {
  std::string dll;  // as imported
  crt_flavour flavour = crt_flavour::msvcrt;
  std::string version;  // "14" for vcruntime140, "120" for msvcr120; "" when none
};

namespace floors_detail {
inline std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}
inline bool starts_with(std::string_view s, std::string_view p) noexcept { return s.substr(0, p.size()) == p; }
inline bool all_digits(std::string_view s) noexcept {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}
}  // namespace floors_detail

// The C runtime a DLL name stands for; nullopt for any other DLL.
inline std::optional<crt_dependency> classify_crt(std::string_view dll) {
  const std::string name = floors_detail::lower(dll);
  if (name.size() < 5 || name.substr(name.size() - 4) != ".dll") return std::nullopt;
  const std::string_view stem = std::string_view(name).substr(0, name.size() - 4);
  crt_dependency out{std::string(dll), crt_flavour::msvcrt, {}};
  if (stem == "ucrtbase" || floors_detail::starts_with(stem, "api-ms-win-crt-")) {
    out.flavour = crt_flavour::ucrt;
    return out;
  }
  if (stem == "ucrtbased") {
    out.flavour = crt_flavour::debug;
    return out;
  }
  if (stem == "msvcrt") return out;
  if (floors_detail::starts_with(stem, "libgcc_s_") || stem == "libstdc++-6" || stem == "libwinpthread-1") {
    out.flavour = crt_flavour::mingw;
    return out;
  }
  // vcruntime140, vcruntime140_1, msvcp140, msvcp140_1, msvcp140_atomic_wait,
  // concrt140, vcomp140 (and their d-suffixed debug builds); msvcrNN / msvcpNN.
  for (std::string_view prefix : {"vcruntime", "msvcp", "msvcr", "concrt", "vcomp"}) {
    if (!floors_detail::starts_with(stem, prefix)) continue;
    std::string_view rest = stem.substr(prefix.size());
    std::size_t digits = 0;
    while (digits < rest.size() && rest[digits] >= '0' && rest[digits] <= '9') ++digits;
    if (digits < 2) continue;
    const std::string_view number = rest.substr(0, digits);
    std::string_view tail = rest.substr(digits);
    const bool debug = !tail.empty() && tail[0] == 'd';
    if (debug) tail.remove_prefix(1);
    if (!tail.empty() && tail[0] != '_') continue;
    if (!tail.empty() && !floors_detail::all_digits(tail.substr(1)) && tail != "_atomic_wait" && tail != "_codecvt_ids") continue;
    out.flavour = debug ? crt_flavour::debug : crt_flavour::vcredist;
    out.version = number == "140" ? "14" : std::string(number);
    return out;
  }
  return std::nullopt;
}

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

inline result<pe_floors> pe_floors_of(byte_view bytes) {
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

}  // namespace resolve
}  // namespace v0
}  // namespace linkscope
