// linkscope/resolve/floors.hpp — the oldest system a file runs on, and why.
//
// ELF. Every versioned reference a DSO or executable makes names a version of
// a needed library (the verneed table): GLIBC_2.34 of libc.so.6,
// GLIBCXX_3.4.30 and CXXABI_1.3.13 of libstdc++.so.6, GCC_3.0 of
// libgcc_s.so.1, OPENSSL_3.0.0 of libcrypto.so.3. ld.so refuses to load the
// file on a system whose library lacks one of those versions, so the highest
// version needed of each family is the file's floor for that library, and the
// symbols bound to that version are the reason for it.
//
// Version names are ordered as glibc and libstdc++ number them: FAMILY_N[.N]*
// compared component by component as integers (2.10 > 2.9, 2.2.5 > 2.2). The
// family is what precedes the first '_' that starts the number, so
// GLIBCXX_LDBL_3.4 and CXXABI_TM_1 are families of their own. OpenSSL's
// OPENSSL_1_1_0 (components joined by '_') and its letter releases
// (OPENSSL_1_1_0d, a trailing lowercase letter) order as OpenSSL releases do.
// FAMILY_PRIVATE (GLIBC_PRIVATE) is glibc's internal interface: it belongs
// to one build of the library and is never portable, so it is flagged and
// never ordered. Any other name (CXXABI_FLOAT128, Base, libfoo.so.1) has no
// known scheme: it is reported as unordered, never guessed into an order.
//
// x86-64: the GNU property note's ISA_1_NEEDED mask (elf/notes.hpp) gives the
// micro-architecture level the file requires: baseline, v2, v3 or v4 (the
// highest bit set); a CPU below that level cannot run it.
//
// Everything here is read through elf/ (versions.hpp, symbols.hpp, notes.hpp);
// this file reads no record itself.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "linkscope/core/bytes.hpp"
#include "linkscope/core/config.hpp"
#include "linkscope/core/error.hpp"
#include "linkscope/elf/dynamic.hpp"
#include "linkscope/elf/file.hpp"
#include "linkscope/elf/notes.hpp"
#include "linkscope/elf/symbols.hpp"
#include "linkscope/elf/types.hpp"
#include "linkscope/elf/versions.hpp"

namespace linkscope {
inline namespace v0 {
namespace resolve {

// ---------------------------------------------------------------------------
// Version names

enum class version_scheme : u8 {
  numbered,  // FAMILY_N[.N]* (or N_N_N, with an optional trailing letter)
  private_,  // FAMILY_PRIVATE: never portable
  unknown,   // no ordering known: reported, never ordered
};

constexpr const char* to_string(version_scheme s) noexcept {
  switch (s) {
    case version_scheme::numbered: return "numbered";
    case version_scheme::private_: return "private";
    case version_scheme::unknown: return "unknown";
  }
  return "?";
}

struct version_name {
  std::string_view text;    // "GLIBC_2.34"
  std::string_view family;  // "GLIBC" (the whole name for an unknown scheme)
  std::string_view number;  // "2.34" ("" unless numbered)
  version_scheme scheme = version_scheme::unknown;
  static constexpr std::size_t max_parts = 8;
  std::array<u32, max_parts> parts{};
  std::size_t count = 0;  // components in parts
  char letter = 0;        // OpenSSL's release letter, 0 when none
};

namespace floors_detail {
// "N([._]N)*[a-z]?" into parts; false when `s` is not such a number.
inline bool parse_version_number(std::string_view s, version_name& out) noexcept {
  if (s.empty()) return false;
  std::size_t i = 0;
  out.count = 0;
  out.letter = 0;
  for (;;) {
    if (i >= s.size() || s[i] < '0' || s[i] > '9') return false;
    u64 value = 0;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
      value = value * 10 + static_cast<u64>(s[i] - '0');
      if (value > 0xffffffffu) return false;
      ++i;
    }
    if (out.count == version_name::max_parts) return false;
    out.parts[out.count++] = static_cast<u32>(value);
    if (i == s.size()) return true;
    if (s[i] == '.' || s[i] == '_') {
      ++i;
      continue;
    }
    if (s[i] >= 'a' && s[i] <= 'z' && i + 1 == s.size()) {
      out.letter = s[i];
      return true;
    }
    return false;
  }
}
}  // namespace floors_detail

// Split a version name into its family and number (see the header comment).
inline version_name parse_version_name(std::string_view text) noexcept {
  version_name v;
  v.text = text;
  v.family = text;
  for (std::size_t us = text.find('_'); us != std::string_view::npos; us = text.find('_', us + 1)) {
    if (us == 0) continue;
    const std::string_view rest = text.substr(us + 1);
    if (rest == "PRIVATE") {
      v.family = text.substr(0, us);
      v.scheme = version_scheme::private_;
      return v;
    }
    version_name probe;
    if (floors_detail::parse_version_number(rest, probe)) {
      probe.text = text;
      probe.family = text.substr(0, us);
      probe.number = rest;
      probe.scheme = version_scheme::numbered;
      return probe;
    }
  }
  return v;
}

// <0, 0, >0 as a is older, equal or newer than b. Both must be numbered; the
// family is not compared (the caller groups by family).
inline int compare_version_numbers(const version_name& a, const version_name& b) noexcept {
  const std::size_t n = std::min(a.count, b.count);
  for (std::size_t i = 0; i < n; ++i)
    if (a.parts[i] != b.parts[i]) return a.parts[i] < b.parts[i] ? -1 : 1;
  if (a.count != b.count) return a.count < b.count ? -1 : 1;
  if (a.letter != b.letter) return a.letter < b.letter ? -1 : 1;
  return 0;
}

// Order of two names of the same family: numbered by number; otherwise by text
// (a stable listing order only, not a claim about age).
inline bool version_less(std::string_view a, std::string_view b) noexcept {
  const version_name va = parse_version_name(a), vb = parse_version_name(b);
  if (va.scheme == version_scheme::numbered && vb.scheme == version_scheme::numbered && va.family == vb.family)
    return compare_version_numbers(va, vb) < 0;
  if (va.scheme != vb.scheme) return va.scheme < vb.scheme;
  return a < b;
}

// ---------------------------------------------------------------------------
// x86-64 ISA levels

// 0 when the file states none; 1 baseline, 2..4 x86-64-v2..v4 (highest bit).
constexpr int x86_isa_level(u32 mask) noexcept {
  if (mask & elf::GNU_PROPERTY_X86_ISA_1_V4) return 4;
  if (mask & elf::GNU_PROPERTY_X86_ISA_1_V3) return 3;
  if (mask & elf::GNU_PROPERTY_X86_ISA_1_V2) return 2;
  if (mask & elf::GNU_PROPERTY_X86_ISA_1_BASELINE) return 1;
  return 0;
}
constexpr const char* x86_isa_level_name(int level) noexcept {
  switch (level) {
    case 1: return "x86-64-baseline";
    case 2: return "x86-64-v2";
    case 3: return "x86-64-v3";
    case 4: return "x86-64-v4";
    default: return "";
  }
}
// "v3" / "x86-64-v3" / "3" / "baseline" -> level; -1 when not a level.
inline int parse_x86_isa_level(std::string_view s) noexcept {
  if (s.substr(0, 7) == "x86-64-") s.remove_prefix(7);
  if (s == "baseline" || s == "v1" || s == "1") return 1;
  if (s == "v2" || s == "2") return 2;
  if (s == "v3" || s == "3") return 3;
  if (s == "v4" || s == "4") return 4;
  return -1;
}

// ---------------------------------------------------------------------------
// ELF floors of one file

// One version needed from one library, with the symbols that reference it.
struct version_need {
  std::string name;                  // "GLIBC_2.34"
  version_scheme scheme = version_scheme::unknown;
  bool weak = false;                 // the verneed entry is weak (VER_FLG_WEAK): a missing version only warns
  std::vector<std::string> symbols;  // sorted, unique; may be empty
};

// The highest numbered version of one family.
struct family_floor {
  std::string family;                // "GLIBC"
  std::string highest;               // "GLIBC_2.34"
  std::vector<std::string> symbols;  // the symbols bound to `highest` (sorted, unique)
};

struct library_floor {
  std::string library;                  // the needed file's name ("libc.so.6")
  std::vector<version_need> versions;   // every version needed: families in name order, each oldest first
  std::vector<family_floor> highest;    // per numbered family, its highest version
  std::vector<std::string> unordered;   // versions of no known scheme (names)
  std::vector<std::string> private_;    // FAMILY_PRIVATE versions needed (names)
};

struct elf_floors {
  u16 machine = 0;
  bool is64 = false;
  bool big_endian = false;
  std::vector<std::string> needed;       // DT_NEEDED, in order
  std::vector<std::string> undefined;    // undefined non-local dynamic symbols (sorted, unique), versioned or not
  std::vector<library_floor> libraries;  // in verneed order
  std::vector<family_floor> families;    // across libraries: highest per family, symbols of every library at it
  std::optional<u32> x86_isa_needed;     // the ISA_1_NEEDED mask, when the note has one
  int x86_isa_level() const noexcept { return x86_isa_needed ? resolve::x86_isa_level(*x86_isa_needed) : 0; }
  bool uses_private() const noexcept {
    for (const auto& l : libraries)
      if (!l.private_.empty()) return true;
    return false;
  }
  // The highest version of `family` needed from any library ("" when none).
  std::string_view highest(std::string_view family) const noexcept {
    for (const auto& f : families)
      if (f.family == family) return f.highest;
    return {};
  }
};

namespace floors_detail {
void sort_unique(std::vector<std::string>& v);

// Fill highest/unordered/private_ of one library and order its versions.
void summarise_library(library_floor& lib);

// The per-family maximum over the libraries.
std::vector<family_floor> merge_families(const std::vector<library_floor>& libraries);

}  // namespace floors_detail

// The ELF floors of one file (any class and byte order). Errors of the
// version tables, the dynamic symbols or the notes carry their file offset.
// Compiled once in src/ in compiled mode (core/config.hpp): the four ELF
// variants behind it are instantiated there only.
result<elf_floors> elf_floors_of(byte_view bytes);
#if LINKSCOPE_DEFINITIONS
namespace floors_detail {
template <class ET>
result<elf_floors> elf_floors_of(const elf::file<ET>& f) {
  elf_floors out;
  out.machine = f.machine();
  out.is64 = ET::is64;
  out.big_endian = ET::endianness == std::endian::big;
  LINKSCOPE_TRY(dyn, elf::dynamic_info<ET>::read(f));
  if (dyn.present()) {
    LINKSCOPE_TRY(needed, dyn.needed());
    for (auto n : needed) out.needed.emplace_back(n);
  }
  LINKSCOPE_TRY(dynsym, elf::read_dynsym(f, dyn));
  LINKSCOPE_TRY(versions, elf::version_tables<ET>::read(f, dyn, dynsym.size()));
  // One slot per version index that names a needed version.
  std::vector<int> slot_of_index(versions.entries().size(), -1);
  std::vector<std::pair<std::size_t, std::size_t>> where;  // slot -> (library, version)
  for (std::size_t n = 0; n < versions.entries().size(); ++n) {
    const elf::version_entry& e = versions.entries()[n];
    if (!e.needed) continue;
    auto lib = std::find_if(out.libraries.begin(), out.libraries.end(),
                            [&](const library_floor& l) { return l.library == e.file; });
    if (lib == out.libraries.end()) {
      out.libraries.push_back(library_floor{std::string(e.file), {}, {}, {}, {}});
      lib = out.libraries.end() - 1;
    }
    version_need need;
    need.name = std::string(e.name);
    need.scheme = parse_version_name(e.name).scheme;
    need.weak = e.weak();
    lib->versions.push_back(std::move(need));
    slot_of_index[n] = static_cast<int>(where.size());
    where.emplace_back(static_cast<std::size_t>(lib - out.libraries.begin()), lib->versions.size() - 1);
  }
  for (std::size_t i = 1; i < dynsym.size(); ++i) {
    LINKSCOPE_TRY(shndx, dynsym.section_index(i));
    if (shndx != elf::SHN_UNDEF && where.empty()) continue;
    LINKSCOPE_TRY(name, dynsym.name(i));
    if (shndx == elf::SHN_UNDEF && dynsym[i].st_bind() != elf::STB_LOCAL && !name.empty()) out.undefined.emplace_back(name);
    if (where.empty()) continue;
    LINKSCOPE_TRY(ver, versions.of(i, name, shndx != elf::SHN_UNDEF));
    if (!ver.needed || ver.index >= slot_of_index.size() || slot_of_index[ver.index] < 0) continue;
    const auto [l, v] = where[static_cast<std::size_t>(slot_of_index[ver.index])];
    out.libraries[l].versions[v].symbols.emplace_back(name);
  }
  sort_unique(out.undefined);
  for (auto& lib : out.libraries) summarise_library(lib);
  out.families = merge_families(out.libraries);
  if (f.machine() == elf::EM_X86_64 || f.machine() == elf::EM_386) {
    LINKSCOPE_TRY(isa, elf::x86_isa_needed(f));
    out.x86_isa_needed = isa;
  }
  return out;
}
}  // namespace floors_detail

LINKSCOPE_FUNC result<elf_floors> elf_floors_of(byte_view bytes) {
  return elf::visit_elf(bytes, [](const auto& f) -> result<elf_floors> { return floors_detail::elf_floors_of(f); });
}
#endif  // LINKSCOPE_DEFINITIONS

// ---------------------------------------------------------------------------
// Limits: --max-glibc 2.17, --max-glibcxx 3.4.19, --max-isa v2

struct version_limit {
  std::string family;  // "GLIBC"
  std::string max;     // "GLIBC_2.17" (a full version name)
};

// One family over its limit in one file: every version above it, each with
// its symbols.
struct limit_violation {
  std::string family;
  std::string max;                    // the limit
  std::string highest;                // what the file needs
  std::vector<version_need> above;    // every version above the limit, oldest first (library-qualified below)
  std::vector<std::string> libraries; // parallel to `above`: the library each comes from
};

// A limit as given on the command line: "2.17" for family GLIBC becomes
// GLIBC_2.17; a full name is kept. Fails (nullopt) when it is not numbered.
std::optional<version_limit> make_limit(std::string_view family, std::string_view value);

// The families of `floors` above their limits. A FAMILY_PRIVATE version of a
// limited family is always a violation (no release provides it portably).
std::vector<limit_violation> check_limits(const elf_floors& floors, const std::vector<version_limit>& limits);

// ---------------------------------------------------------------------------
// A set of files (a package): the highest version of each family over all
// files, and which files need it.

struct set_family_floor {
  std::string family;
  std::string highest;
  std::vector<std::size_t> files;  // indexes into the caller's list, of the files that need `highest`
};

struct set_floors {
  std::vector<set_family_floor> families;  // by family name
  int x86_isa_level = 0;                   // the highest level over the files
  std::vector<std::size_t> isa_files;      // the files at that level
  std::vector<std::size_t> private_files;  // files that need a FAMILY_PRIVATE version
};

// `files[i]` may be null (a file that is not ELF, or that failed).
set_floors merge_set(const std::vector<const elf_floors*>& files);

#if LINKSCOPE_DEFINITIONS
namespace floors_detail {
LINKSCOPE_FUNC void sort_unique(std::vector<std::string>& v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
}

LINKSCOPE_FUNC void summarise_library(library_floor& lib) {
  for (auto& v : lib.versions) sort_unique(v.symbols);
  std::stable_sort(lib.versions.begin(), lib.versions.end(), [](const version_need& a, const version_need& b) {
    const version_name va = parse_version_name(a.name), vb = parse_version_name(b.name);
    if (va.family != vb.family) return va.family < vb.family;
    return version_less(a.name, b.name);
  });
  for (const auto& v : lib.versions) {
    const version_name name = parse_version_name(v.name);
    if (name.scheme == version_scheme::unknown) {
      lib.unordered.push_back(v.name);
      continue;
    }
    if (name.scheme == version_scheme::private_) {
      lib.private_.push_back(v.name);
      continue;
    }
    auto it = std::find_if(lib.highest.begin(), lib.highest.end(),
                           [&](const family_floor& f) { return f.family == name.family; });
    if (it == lib.highest.end()) {
      lib.highest.push_back(family_floor{std::string(name.family), v.name, v.symbols});
    } else if (compare_version_numbers(parse_version_name(it->highest), name) < 0) {
      it->highest = v.name;
      it->symbols = v.symbols;
    }
  }
}

LINKSCOPE_FUNC std::vector<family_floor> merge_families(const std::vector<library_floor>& libraries) {
  std::vector<family_floor> out;
  for (const auto& lib : libraries) {
    for (const auto& f : lib.highest) {
      auto it = std::find_if(out.begin(), out.end(), [&](const family_floor& g) { return g.family == f.family; });
      if (it == out.end()) {
        out.push_back(f);
        continue;
      }
      const int c = compare_version_numbers(parse_version_name(it->highest), parse_version_name(f.highest));
      if (c < 0) {
        *it = f;
      } else if (c == 0) {
        it->symbols.insert(it->symbols.end(), f.symbols.begin(), f.symbols.end());
        sort_unique(it->symbols);
      }
    }
  }
  std::sort(out.begin(), out.end(), [](const family_floor& a, const family_floor& b) { return a.family < b.family; });
  return out;
}
}  // namespace floors_detail

LINKSCOPE_FUNC std::optional<version_limit> make_limit(std::string_view family, std::string_view value) {
  std::string name;
  if (value.substr(0, family.size()) == family && value.size() > family.size() && value[family.size()] == '_')
    name = std::string(value);
  else
    name = std::string(family) + "_" + std::string(value);
  const version_name parsed = parse_version_name(name);
  if (parsed.scheme != version_scheme::numbered || parsed.family != family) return std::nullopt;
  return version_limit{std::string(family), name};
}

LINKSCOPE_FUNC std::vector<limit_violation> check_limits(const elf_floors& floors, const std::vector<version_limit>& limits) {
  std::vector<limit_violation> out;
  for (const auto& limit : limits) {
    const version_name max = parse_version_name(limit.max);
    limit_violation v;
    v.family = limit.family;
    v.max = limit.max;
    for (const auto& lib : floors.libraries) {
      for (const auto& need : lib.versions) {
        const version_name name = parse_version_name(need.name);
        if (name.family != limit.family) continue;
        const bool above = name.scheme == version_scheme::private_ ||
                           (name.scheme == version_scheme::numbered && compare_version_numbers(name, max) > 0);
        if (!above) continue;
        v.above.push_back(need);
        v.libraries.push_back(lib.library);
      }
    }
    if (v.above.empty()) continue;
    v.highest = std::string(floors.highest(limit.family));
    if (v.highest.empty()) v.highest = v.above.back().name;
    out.push_back(std::move(v));
  }
  return out;
}

LINKSCOPE_FUNC set_floors merge_set(const std::vector<const elf_floors*>& files) {
  set_floors out;
  for (std::size_t i = 0; i < files.size(); ++i) {
    const elf_floors* f = files[i];
    if (f == nullptr) continue;
    if (f->uses_private()) out.private_files.push_back(i);
    const int level = f->x86_isa_level();
    if (level > out.x86_isa_level) {
      out.x86_isa_level = level;
      out.isa_files.clear();
    }
    if (level > 0 && level == out.x86_isa_level) out.isa_files.push_back(i);
    for (const auto& fam : f->families) {
      auto it = std::find_if(out.families.begin(), out.families.end(),
                             [&](const set_family_floor& g) { return g.family == fam.family; });
      if (it == out.families.end()) {
        out.families.push_back(set_family_floor{fam.family, fam.highest, {i}});
        continue;
      }
      const int c = compare_version_numbers(parse_version_name(it->highest), parse_version_name(fam.highest));
      if (c < 0) {
        it->highest = fam.highest;
        it->files = {i};
      } else if (c == 0) {
        it->files.push_back(i);
      }
    }
  }
  std::sort(out.families.begin(), out.families.end(),
            [](const set_family_floor& a, const set_family_floor& b) { return a.family < b.family; });
  return out;
}
#endif  // LINKSCOPE_DEFINITIONS

}  // namespace resolve
}  // namespace v0
}  // namespace linkscope
