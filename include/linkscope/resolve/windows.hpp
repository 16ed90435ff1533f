// linkscope/resolve/windows.hpp — what a Windows link needs from import
// libraries, and whether an image's imports are covered by them.
//
// The model follows the PE linkers (link.exe, lld-link, GNU ld for PE):
//   - a consumer (COFF objects, or the members of a .lib/.a of objects)
//     leaves some external symbols undefined: X (a call through the import
//     thunk) or __imp_X (a dllimport reference through the IAT slot);
//   - import libraries are searched in command-line order and the first one
//     that defines the name wins. A CODE (or CONST) import defines both X and
//     __imp_X, a DATA import only __imp_X. An import library may also carry
//     ordinary object members (mingw's libmsvcrt.a does); those satisfy a
//     symbol statically, with no DLL;
//   - the libraries a link needs are exactly those that satisfied at least
//     one undefined symbol: only the DLLs the consumer imports directly, never
//     the DLLs those DLLs depend on (the loader resolves those at run time).
// For a PE image, each imported DLL (normal and delay-load) is matched
// case-insensitively against the DLLs the import libraries describe, and each
// imported function against their records (by name, or by ordinal).
// Also the one classifier of C runtime DLL names (classify_crt, at the end).
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "linkscope/coff/import.hpp"
#include "linkscope/coff/pe.hpp"
#include "linkscope/core/config.hpp"
#include "linkscope/symbols/symbol.hpp"

namespace linkscope {
inline namespace v0 {
namespace resolve {

inline constexpr std::size_t no_library = ~std::size_t{0};

// The consumer's side of the link: its external references and definitions.
struct windows_consumer {
  std::vector<std::string_view> undefined;       // strong undefined externals
  std::vector<std::string_view> weak_undefined;  // weak externals (never "unresolved")
  std::vector<std::string_view> defined;         // external definitions

  // Collect from any symbol_source (a coff::object, an archive's objects ...).
  template <class Source>
  result<void> add(const Source& source) {
    return source.for_each_symbol([&](const symbol& s) {
      if (s.bind == binding::local) return;
      if (s.defined) defined.push_back(s.name);
      else if (s.bind == binding::weak) weak_undefined.push_back(s.name);
      else undefined.push_back(s.name);
    });
  }
};

struct symbol_resolution {
  std::string_view symbol;
  std::size_t library = no_library;               // index into the libraries given
  const coff::import_record* record = nullptr;    // null for a static definition
  std::string_view dll;                           // empty for a static definition
  std::string_view member_name;                   // the member that satisfies it
};

struct windows_needs {
  std::vector<symbol_resolution> resolved;  // in the consumer's reference order
  std::vector<std::string_view> unresolved;
  std::vector<std::size_t> needed_libraries;  // ascending library indices
  std::vector<std::string_view> dlls;         // directly imported DLLs, first-use order
  bool ok() const noexcept { return unresolved.empty(); }
};

// Resolve the consumer's undefined symbols against `libraries` (in order).
// (Declared here, defined below: compiled once in src/ in compiled mode.)
windows_needs resolve_windows_link(const windows_consumer& consumer,
                                   const std::vector<const coff::import_library*>& libraries);
#if LINKSCOPE_DEFINITIONS
LINKSCOPE_FUNC windows_needs resolve_windows_link(const windows_consumer& consumer,
                                                  const std::vector<const coff::import_library*>& libraries) {
  struct provider {
    std::size_t library;
    const coff::import_record* record;
    std::string_view member_name;
  };
  std::unordered_map<std::string_view, provider> providers;
  for (std::size_t l = 0; l < libraries.size(); ++l) {
    const coff::import_library& lib = *libraries[l];
    for (const coff::import_record& r : lib.records()) {
      providers.try_emplace(r.imp_symbol, provider{l, &r, r.member_name});
      if (r.defines_thunk()) providers.try_emplace(r.symbol, provider{l, &r, r.member_name});
    }
    for (const auto& s : lib.static_symbols()) providers.try_emplace(s.name, provider{l, nullptr, s.member_name});
  }
  std::unordered_set<std::string_view> defined(consumer.defined.begin(), consumer.defined.end());
  std::unordered_set<std::string_view> seen;
  std::vector<bool> needed(libraries.size(), false);
  windows_needs out;
  for (std::string_view name : consumer.undefined) {
    if (defined.count(name) != 0 || !seen.insert(name).second) continue;
    auto it = providers.find(name);
    if (it == providers.end()) {
      out.unresolved.push_back(name);
      continue;
    }
    symbol_resolution res;
    res.symbol = name;
    res.library = it->second.library;
    res.record = it->second.record;
    res.member_name = it->second.member_name;
    if (res.record != nullptr) res.dll = res.record->dll;
    needed[res.library] = true;
    if (!res.dll.empty()) {
      bool known = false;
      for (std::string_view d : out.dlls) known = known || d == res.dll;
      if (!known) out.dlls.push_back(res.dll);
    }
    out.resolved.push_back(res);
  }
  for (std::size_t l = 0; l < needed.size(); ++l)
    if (needed[l]) out.needed_libraries.push_back(l);
  return out;
}
#endif

struct image_dll_check {
  std::string_view dll;
  bool delay_load = false;
  std::vector<std::size_t> libraries;           // import libraries that describe this DLL
  std::vector<std::string> missing_functions;   // imported but in no record ("name" or "#ordinal")
  std::size_t function_count = 0;
  bool covered() const noexcept { return !libraries.empty() && missing_functions.empty(); }
};

// For each DLL a PE image imports, which of `libraries` describe it and which
// imported functions none of their records provide.
result<std::vector<image_dll_check>> check_image_imports(const pe::image& image,
                                                         const std::vector<const coff::import_library*>& libraries);
#if LINKSCOPE_DEFINITIONS
namespace detail {
LINKSCOPE_FUNC bool dll_name_equals(std::string_view a, std::string_view b) noexcept {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    char x = a[i], y = b[i];
    if (x >= 'A' && x <= 'Z') x = static_cast<char>(x - 'A' + 'a');
    if (y >= 'A' && y <= 'Z') y = static_cast<char>(y - 'A' + 'a');
    if (x != y) return false;
  }
  return true;
}
}  // namespace detail

LINKSCOPE_FUNC result<std::vector<image_dll_check>> check_image_imports(
    const pe::image& image, const std::vector<const coff::import_library*>& libraries) {
  std::vector<image_dll_check> out;
  for (int pass = 0; pass < 2; ++pass) {
    LINKSCOPE_TRY(dlls, pass == 0 ? image.imports() : image.delay_imports());
    for (const pe::imported_dll& dll : dlls) {
      image_dll_check check;
      check.dll = dll.name;
      check.delay_load = dll.delay_load;
      check.function_count = dll.functions.size();
      std::vector<const coff::import_record*> records;
      for (std::size_t l = 0; l < libraries.size(); ++l) {
        bool uses = false;
        for (const coff::import_record& r : libraries[l]->records()) {
          if (!detail::dll_name_equals(r.dll, dll.name)) continue;
          uses = true;
          records.push_back(&r);
        }
        if (uses) check.libraries.push_back(l);
      }
      for (const pe::imported_function& fn : dll.functions) {
        bool found = false;
        for (const coff::import_record* r : records) {
          if (fn.ordinal ? (r->ordinal && *r->ordinal == *fn.ordinal) : r->import_name == fn.name) {
            found = true;
            break;
          }
        }
        if (!found) {
          // (built with append: g++ 12 -O3 warns falsely on "#" + to_string)
          std::string missing(fn.ordinal ? std::string_view("#") : fn.name);
          if (fn.ordinal) missing.append(std::to_string(*fn.ordinal));
          check.missing_functions.push_back(std::move(missing));
        }
      }
      out.push_back(std::move(check));
    }
  }
  return out;
}
#endif

// ---------------------------------------------------------------------------
// The C runtime a DLL name stands for: the one classifier of CRT DLLs, used
// by the Windows loader's classes (pe_load.hpp: ucrt, vc-redist, debug-crt,
// msvcrt) and by the floors (floors_pe.hpp: --forbid-crt). Case-insensitive.
//   ucrt       ucrtbase.dll and the api-ms-win-crt-*.dll API sets (the
//              Universal CRT, part of Windows 10, an update on 7/8.1)
//   msvcrt     msvcrt.dll only: a Windows component (a KnownDLL), "intended
//              for use only by system-level components", which MinGW links
//              by default
//   vcredist   the Visual C++ redistributable of its Visual Studio:
//              vcruntime140*.dll, msvcp140*.dll, concrt140.dll, vcomp140.dll
//              (2015-2022, version 14), and the versioned CRTs of older ones,
//              msvcrNN.dll / msvcpNN.dll / vcompNN.dll (msvcr100 = VS 2010,
//              msvcr120 = VS 2013), which the "Visual C++ Redistributable
//              Packages" install and which are not part of Windows ("the
//              Visual C/C++ Run-Time libraries go by names like MSVCR71.DLL
//              ... MSVCR100.DLL", R. Chen, Microsoft, The Old New Thing
//              2014-04-11; Microsoft Learn, "Deployment in Visual C++": "version
//              11 of the CRT DLL is msvcr110.dll", deployed by VCRedist). A
//              mingw program built for msvcr120 (-mcrtdll) needs that same
//              redistributable; `version` is the NN ("14" for 140)
//   debug      the debug builds (ucrtbased.dll, vcruntime140d.dll,
//              vcruntime140_1d.dll, msvcp140d.dll, msvcp140d_atomic_wait.dll,
//              msvcrNNd.dll ...): never redistributable
//   mingw      MinGW's runtime DLLs: libgcc_s_*.dll, libstdc++-6.dll,
//              libwinpthread-1.dll
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

// The C runtime a DLL name stands for; nullopt for any other DLL.
std::optional<crt_dependency> classify_crt(std::string_view dll);

#if LINKSCOPE_DEFINITIONS
namespace crt_detail {
LINKSCOPE_FUNC bool starts_with(std::string_view s, std::string_view p) noexcept { return s.substr(0, p.size()) == p; }
LINKSCOPE_FUNC bool all_digits(std::string_view s) noexcept {
  if (s.empty()) return false;
  for (char c : s)
    if (c < '0' || c > '9') return false;
  return true;
}
}  // namespace crt_detail

LINKSCOPE_FUNC std::optional<crt_dependency> classify_crt(std::string_view dll) {
  std::string name(dll);
  for (char& c : name)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  if (name.size() < 5 || name.substr(name.size() - 4) != ".dll") return std::nullopt;
  const std::string_view stem = std::string_view(name).substr(0, name.size() - 4);
  crt_dependency out{std::string(dll), crt_flavour::msvcrt, {}};
  if (stem == "ucrtbase" || crt_detail::starts_with(stem, "api-ms-win-crt-")) {
    out.flavour = crt_flavour::ucrt;
    return out;
  }
  if (stem == "ucrtbased") {
    out.flavour = crt_flavour::debug;
    return out;
  }
  if (stem == "msvcrt") return out;
  if (crt_detail::starts_with(stem, "libgcc_s_") || stem == "libstdc++-6" || stem == "libwinpthread-1") {
    out.flavour = crt_flavour::mingw;
    return out;
  }
  // PREFIX NN [d] [_SUFFIX [d]]: vcruntime140, vcruntime140_1(d),
  // vcruntime140_threads(d), msvcp140(d), msvcp140_1, msvcp140(d)_atomic_wait,
  // msvcp140(d)_codecvt_ids, concrt140(d), vcomp140(d); msvcrNN(d), msvcpNN(d),
  // vcompNN(d).
  for (std::string_view prefix : {"vcruntime", "msvcp", "msvcr", "concrt", "vcomp"}) {
    if (!crt_detail::starts_with(stem, prefix)) continue;
    std::string_view rest = stem.substr(prefix.size());
    std::size_t digits = 0;
    while (digits < rest.size() && rest[digits] >= '0' && rest[digits] <= '9') ++digits;
    if (digits < 2) continue;
    const std::string_view number = rest.substr(0, digits);
    std::string_view tail = rest.substr(digits);
    bool debug = !tail.empty() && tail[0] == 'd';
    if (debug) tail.remove_prefix(1);
    if (!tail.empty()) {
      if (tail[0] != '_') continue;
      std::string_view suffix = tail.substr(1);
      if (!debug && !suffix.empty() && suffix.back() == 'd') {
        debug = true;
        suffix.remove_suffix(1);
      }
      if (!crt_detail::all_digits(suffix) && suffix != "atomic_wait" && suffix != "codecvt_ids" && suffix != "threads")
        continue;
    }
    out.flavour = debug ? crt_flavour::debug : crt_flavour::vcredist;
    out.version = number == "140" ? "14" : std::string(number);
    return out;
  }
  return std::nullopt;
}
#endif  // LINKSCOPE_DEFINITIONS

}  // namespace resolve
}  // namespace v0
}  // namespace linkscope
