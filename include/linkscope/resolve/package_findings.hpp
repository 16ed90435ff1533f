// linkscope/resolve/package_findings.hpp — the package-level findings of
// linkscope-check that need more than one file's link: "overdepending, or
// statically linked?" and duplicate definitions across packages, on ELF,
// Mach-O and PE alike (the names come from resolve/definitions.hpp).
//
// Statically linked. conda-build says of a declared run dependency that no
// file links against: "overdepending ... or perhaps statically linked?". The
// files answer it. For each declared dependency D that no checked file binds
// to, and each checked file F:
//   - each static archive D ships (lib*.a, a COFF .lib) is put to the
//     question "is this archive's code inside F?". For an ELF file,
//     resolve/absorb.hpp answers it: a member whose global definitions F
//     holds (exported, hidden or absorbed) is evidence. For a Mach-O or PE
//     file, a member's global definitions that F defines (any binding: its
//     nlist or COFF symbol table, its exports) are evidence;
//   - each shared library D ships (.so, .dylib, .dll) is compared by name: F
//     defining strong symbols that D's library exports is evidence that D's
//     code was linked in (a vendored or static copy).
// With evidence, D is "statically linked" into F; without, D is "unused".
// A stripped Mach-O or PE file keeps only its exports: a copy linked in and
// not exported leaves no name to find, and D comes out "unused".
// D's files come from the same databases as ownership: the prefix's
// conda-meta records, else dpkg's D.list / D:ARCH.list.
//
// Duplicates across packages. Every shared library in the prefix that the
// check met (a checked file or a NEEDED of one) is grouped by its owning
// package; a strong definition (definitions.hpp's exported_strong) exported
// by libraries of two different packages is a duplicate: fmt inside
// libtorch_cpu.so beside libfmt.so.9. `winner` is the copy loaded first in
// the first checked file whose closure loads both. On ELF that is ld.so's
// choice for every reference (the global scope); the other copy is then dead
// code, or an ODR break if the two differ. On Mach-O (two-level namespace)
// and PE each import binds to the library it names, so both copies run in
// one process, each with its own state; the first loaded is what a flat
// lookup or dlsym(RTLD_DEFAULT) finds. Only such a pair, loaded together, is
// a finding of the check; the others (plugins of one interface, alternatives
// such as libcurl and libcurl-gnutls) are listed without a winner.
#pragma once

#include <algorithm>
#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "linkscope/core/config.hpp"
#include "linkscope/core/error.hpp"

#include <filesystem>
#include <set>
#include <system_error>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "linkscope/resolve/absorb.hpp"
#include "linkscope/resolve/definitions.hpp"
#include "linkscope/resolve/duplicates.hpp"
#include "linkscope/resolve/objects.hpp"
#include "linkscope/resolve/packages.hpp"

namespace linkscope {
inline namespace v0 {
namespace resolve {

// A declared dependency's code found inside a checked file.
struct static_link_evidence {
  std::string file;                  // the checked file (as displayed: relative to the prefix)
  std::string copy_of;               // the dependency's archive or shared library (displayed)
  std::vector<std::string> symbols;  // the first few definitions that decided it
  std::size_t count = 0;             // every such definition
};

// A declared run dependency that no checked file binds to.
struct declared_unused {
  std::string package;
  std::vector<static_link_evidence> evidence;  // empty: unused; else statically linked
  bool statically_linked() const noexcept { return !evidence.empty(); }
};

// Strong definitions that libraries of two packages both export.
struct package_duplicate {
  std::string package_a, file_a;     // package_a < package_b
  std::string package_b, file_b;
  std::vector<std::string> symbols;  // the first few, sorted
  std::size_t count = 0;
  std::string winner;                // file_a or file_b: ld.so's choice in `consumer`; empty when no file loads both
  std::string consumer;              // the first checked file whose closure loads both
};

// A package's files, as absolute paths: the conda records (`conda`: path
// relative to the prefix -> package) for a prefix that has them, else dpkg's
// list of the package (any architecture). A name matches with or without a
// ":arch" qualifier.
std::vector<std::string> package_files(std::string_view package, const std::string& prefix,
                                       const std::unordered_map<std::string, std::string>& conda,
                                       const std::string& dpkg_info_dir);

// One library of the prefix: its path (absolute), display name and owner.
struct owned_library {
  std::string path, display, package;
};
// One checked file for these judgments: its path, display name, and its
// closure in load order (absolute paths of the objects ld.so mapped).
struct checked_file {
  std::string path, display;
  std::vector<std::string> closure;
  bool elf = true;  // linked by ld.so (file_report::format "elf"), else dyld or the Windows loader
};

std::vector<static_link_evidence> find_static_copies(const std::vector<checked_file>& files,
                                                     const std::vector<owned_library>& dependency_files,
                                                     std::size_t max_symbols = 8);

std::vector<package_duplicate> find_package_duplicates(const std::vector<owned_library>& libraries,
                                                       const std::vector<checked_file>& files,
                                                       std::size_t max_symbols = 8);

#if LINKSCOPE_DEFINITIONS
namespace detail {

// A static archive (lib*.a, a COFF .lib) or a shared library (.so, .so.N,
// .dylib, .dll) by its name.
inline bool is_archive_name(std::string_view base) {
  return (base.size() > 2 && base.ends_with(".a")) || (base.size() > 4 && (base.ends_with(".lib") || base.ends_with(".LIB")));
}
inline bool is_library_name(std::string_view path) {
  const std::string_view base = base_name(path);
  if (is_archive_name(base)) return true;
  return base.size() > 3 && (base.find(".so") != std::string_view::npos || base.ends_with(".dylib") ||
                             base.ends_with(".dll") || base.ends_with(".DLL"));
}

}  // namespace detail

LINKSCOPE_FUNC std::vector<std::string> package_files(std::string_view package, const std::string& prefix,
                                                      const std::unordered_map<std::string, std::string>& conda,
                                                      const std::string& dpkg_info_dir) {
  const std::string_view wanted = package_base_name(package);
  std::vector<std::string> out;
  if (!conda.empty()) {
    for (const auto& [rel, owner] : conda)
      if (package_base_name(owner) == wanted) out.push_back(prefix + "/" + rel);
  } else if (!dpkg_info_dir.empty()) {
    std::error_code ec;
    for (std::filesystem::directory_iterator it(dpkg_info_dir, ec), end; !ec && it != end; it.increment(ec)) {
      const std::filesystem::path& list = it->path();
      if (list.extension() != ".list" || package_base_name(list.stem().string()) != wanted) continue;
      auto file = mapped_file::open(list.string());
      if (!file) continue;
      const std::string_view text = file->bytes().chars();
      for (std::size_t start = 0; start < text.size();) {
        std::size_t nl = text.find('\n', start);
        if (nl == std::string_view::npos) nl = text.size();
        if (nl > start) out.emplace_back(text.substr(start, nl - start));
        start = nl + 1;
      }
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

LINKSCOPE_FUNC std::vector<static_link_evidence> find_static_copies(const std::vector<checked_file>& files,
                                                                    const std::vector<owned_library>& dependency_files,
                                                                    std::size_t max_symbols) {
  std::vector<static_link_evidence> out;
  std::vector<const owned_library*> archives, shared;
  for (const owned_library& lib : dependency_files) {
    if (!detail::is_library_name(lib.path)) continue;
    std::error_code ec;
    if (!std::filesystem::is_regular_file(lib.path, ec)) continue;
    (detail::is_archive_name(detail::base_name(lib.path)) ? archives : shared).push_back(&lib);
  }
  // The exports of the dependency's shared libraries, read once; the members
  // of its Mach-O and COFF archives, read when a file of that platform asks.
  std::vector<std::vector<std::string>> exports;
  for (const owned_library* lib : shared) exports.push_back(exported_strong(lib->path));
  std::vector<std::vector<member_definitions>> members(archives.size());
  std::vector<char> members_read(archives.size(), 0);
  for (const checked_file& f : files) {
    std::unordered_set<std::string> defined;
    bool defined_read = false;
    // A name of the dependency's that f defines is evidence (f's names are read once, when first asked).
    auto note_if_defined = [&](const std::string& name, static_link_evidence& e) {
      if (!defined_read) defined = defined_names(f.path);
      defined_read = true;
      if (defined.count(name) == 0) return;
      ++e.count;
      if (e.symbols.size() < max_symbols) e.symbols.push_back(name);
    };
    auto keep = [&](static_link_evidence&& e, const owned_library& copy_of) {
      if (e.count == 0) return;
      e.file = f.display;
      e.copy_of = copy_of.display;
      out.push_back(std::move(e));
    };
    // Archives: an ELF file gets the absorbed analysis, member by member; a
    // Mach-O or PE file the members' global definitions it holds.
    for (std::size_t a = 0; a < archives.size(); ++a) {
      const owned_library* lib = archives[a];
      if (!f.elf) {
        if (!members_read[a]) members[a] = archive_definitions(lib->path);
        members_read[a] = 1;
        static_link_evidence e;
        for (const member_definitions& m : members[a])
          for (const std::string& name : m.names) note_if_defined(name, e);
        keep(std::move(e), *lib);
        continue;
      }
      absorb_options options;
      options.use_closure = false;  // evidence of a copy, not whether consumers still need it
      options.max_evidence = max_symbols;
      auto report = analyze_absorption(f.path, {lib->path}, options);
      if (!report || report->archives.empty()) continue;
      static_link_evidence e;
      for (const member_report& m : report->archives[0].members) {
        if (m.status != member_status::absorbed && m.status != member_status::hidden &&
            m.status != member_status::re_exported)
          continue;
        e.count += m.symbols.size();
        for (const std::string& s : m.symbols)
          if (e.symbols.size() < max_symbols) e.symbols.push_back(s);
      }
      keep(std::move(e), *lib);
    }
    if (shared.empty()) continue;
    // Shared libraries: the file defines what the dependency exports.
    for (std::size_t i = 0; i < shared.size(); ++i) {
      if (shared[i]->path == f.path) continue;
      static_link_evidence e;
      for (const std::string& name : exports[i]) note_if_defined(name, e);
      keep(std::move(e), *shared[i]);
    }
  }
  return out;
}

LINKSCOPE_FUNC std::vector<package_duplicate> find_package_duplicates(const std::vector<owned_library>& libraries,
                                                                      const std::vector<checked_file>& files,
                                                                      std::size_t max_symbols) {
  // name -> the libraries (indices) that export it.
  std::unordered_map<std::string, std::vector<std::size_t>> exporters;
  for (std::size_t i = 0; i < libraries.size(); ++i)
    for (std::string& name : exported_strong(libraries[i].path)) exporters[std::move(name)].push_back(i);
  // (library a, library b) of different packages, a's package first -> the names.
  std::map<std::pair<std::size_t, std::size_t>, std::vector<std::string>> pairs;
  for (auto& [name, libs] : exporters) {
    for (std::size_t x = 0; x < libs.size(); ++x)
      for (std::size_t y = x + 1; y < libs.size(); ++y) {
        std::size_t a = libs[x], b = libs[y];
        if (libraries[a].package == libraries[b].package) continue;
        if (std::tie(libraries[b].package, libraries[b].display) < std::tie(libraries[a].package, libraries[a].display))
          std::swap(a, b);
        pairs[{a, b}].push_back(name);
      }
  }
  // Paths compared as canonical paths: ld.so's spelling and the walk's differ.
  detail::canonical_paths real;  // each folder resolved once
  std::vector<std::string> canonical;
  for (const owned_library& lib : libraries) canonical.push_back(real(lib.path));
  std::vector<std::vector<std::string>> closures(files.size());
  std::vector<char> made(files.size(), 0);
  auto canonical_closure = [&](std::size_t i) -> const std::vector<std::string>& {
    if (!made[i]) {
      for (const std::string& p : files[i].closure) closures[i].push_back(real(p));
      made[i] = 1;
    }
    return closures[i];
  };
  std::vector<package_duplicate> out;
  for (auto& [key, names] : pairs) {
    const owned_library& a = libraries[key.first];
    const owned_library& b = libraries[key.second];
    std::sort(names.begin(), names.end());
    package_duplicate d;
    d.package_a = a.package, d.file_a = a.display;
    d.package_b = b.package, d.file_b = b.display;
    d.count = names.size();
    d.symbols.assign(names.begin(), names.begin() + static_cast<std::ptrdiff_t>(std::min(max_symbols, names.size())));
    for (std::size_t i = 0; i < files.size(); ++i) {
      const std::vector<std::string>& closure = canonical_closure(i);
      auto ia = std::find(closure.begin(), closure.end(), canonical[key.first]);
      auto ib = std::find(closure.begin(), closure.end(), canonical[key.second]);
      if (ia == closure.end() || ib == closure.end()) continue;
      d.winner = ia < ib ? a.display : b.display;
      d.consumer = files[i].display;
      break;
    }
    out.push_back(std::move(d));
  }
  std::sort(out.begin(), out.end(), [](const package_duplicate& x, const package_duplicate& y) {
    return std::tie(x.package_a, x.file_a, x.package_b, x.file_b) < std::tie(y.package_a, y.file_a, y.package_b, y.file_b);
  });
  return out;
}

#endif  // LINKSCOPE_DEFINITIONS

}  // namespace resolve
}  // namespace v0
}  // namespace linkscope
