// linkscope/resolve/check_result.hpp — what the whole-prefix check is asked
// (prefix_options: the allow-list, declared dependencies, package databases,
// limits, threads, the loaders' options) and what it answers (prefix_report:
// per file its NEEDED entries, missing libraries, overlinked symbols, rpaths,
// undefined references and floors; per package underlinking, overdepending,
// static copies, duplicates and unowned DSOs). resolve/check.hpp computes it;
// report/check.hpp writes it as linkscope-check's JSON document.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "linkscope/core/error.hpp"
#include "linkscope/resolve/allow_list.hpp"
#include "linkscope/resolve/dyld/result.hpp"
#include "linkscope/resolve/floors.hpp"
#include "linkscope/resolve/floors_macho.hpp"
#include "linkscope/resolve/floors_pe.hpp"
#include "linkscope/resolve/package_findings.hpp"
#include "linkscope/resolve/packages.hpp"
#include "linkscope/resolve/pe_load.hpp"
#include "linkscope/resolve/search_path.hpp"

namespace linkscope {
inline namespace v0 {
namespace resolve {


struct prefix_options {
  search_options search = [] {
    search_options s;
    s.use_env = false;  // a package check must not depend on the caller's LD_LIBRARY_PATH
    return s;
  }();
  // Globs of the libraries that are never findings, per platform
  // (resolve/allow_list.hpp; by default data/allow/linux.txt, macos.txt and
  // windows.txt). add_allow and clear_allow change all three.
  std::vector<std::string> allow = default_allow_list();                  // ELF files
  std::vector<std::string> macos_allow = default_macos_allow_list();      // Mach-O files
  std::vector<std::string> windows_allow = default_windows_allow_list();  // PE files (case folded)
  // The loaders' own system classes count as allowed too: dyld's shared-cache
  // images and the Windows loader's KnownDLLs, System32, API-set and C
  // runtime DLLs. clear_allow (--no-default-allow) clears it.
  bool allow_system_images = true;

  void add_allow(const std::string& glob) {
    for (auto* list : {&allow, &macos_allow, &windows_allow}) list->push_back(glob);
  }
  void clear_allow() {
    for (auto* list : {&allow, &macos_allow, &windows_allow}) list->clear();
    allow_system_images = false;
  }
  std::vector<std::string> declared;  // declared run dependencies (package names)
  bool check_declared = false;        // compare used packages with `declared`
  bool use_conda = true;              // read PREFIX/conda-meta/*.json
  bool use_dpkg = true;               // read dpkg_info_dir/*.list
  std::string dpkg_info_dir = "/var/lib/dpkg/info";
  bool undefined_is_finding = false;  // count unresolved non-weak symbols as findings
  std::vector<std::string> files;     // analyse only these (else walk the prefix)
  std::string package;                // analyse the files conda-meta gives this package
  // Unpacked packages: every file under DIR belongs to package NAME (before
  // conda-meta and dpkg are asked). A DIR may lie outside the prefix.
  std::vector<std::pair<std::string, std::string>> package_dirs;  // {NAME, DIR}
  // Platform floors (resolve/floors.hpp): a file that needs a version above
  // one of these limits (--max-glibc 2.17 gives GLIBC_2.17) is a finding.
  std::vector<version_limit> floor_limits;
  // Mach-O: a slice whose macOS minimum (LC_BUILD_VERSION minos) is above
  // this is a finding; PE: an image whose Windows floor (the higher of its
  // OS and subsystem versions) is above this (resolve/floors_macho.hpp, _pe.hpp).
  std::optional<macho::packed_version> macos_target;
  std::optional<std::pair<u16, u16>> windows_target;
  // Threads that link the files (each file's link and verdicts are
  // independent; the object cache is shared). 0: one per core. The report is
  // the same for every value: files keep the walk's order.
  unsigned jobs = 1;
  // Called after each file is linked and judged, with how many are done of
  // how many (a progress line). Called from one thread at a time, in order
  // of `done`; never when the prefix holds no file to check.
  std::function<void(std::size_t done, std::size_t total)> progress;
  // The most bytes of mapped files the loader cache keeps across roots (0: no
  // limit): past it the cache lets them go and fills again (ld_so/image.hpp),
  // so memory stays bounded on any prefix. The report does not depend on it.
  std::size_t cache_limit = sizeof(std::size_t) >= 8 ? std::size_t{4} << 30 : std::size_t{1} << 30;
  // The loaders of Mach-O and PE files (see the top of this file). Empty
  // windows.path: the prefix's conda PATH folders.
  dyld_options dyld;
  winload_options windows;
};

struct needed_entry {
  std::string name;       // the DT_NEEDED string
  std::string path;       // as ld.so spells it; empty when not found
  std::string file;       // the file read on this host
  found_via via = found_via::not_found;
  std::string rule;       // Mach-O, PE: how that platform's loader found it (dyld_found_via, dll_rule)
  bool in_prefix = false;
  bool allowed = false;   // matches the allow-list
  bool used = false;      // F binds at least one symbol to it
  std::size_t symbols = 0;  // distinct references of F bound to it
  package_owner owner;
};

struct missing_entry {
  std::string name;       // the NEEDED string that resolved nowhere
  std::string needed_by;  // the object whose DT_NEEDED it is
  bool direct = false;    // a NEEDED of the file itself
};

struct overlink_entry {
  std::string path;       // the transitive dependency bound to
  std::string soname;
  std::string via;        // the object that loaded it
  bool allowed = false;
  std::vector<std::string> symbols;  // name or name@VERSION
};

struct rpath_entry {
  std::string tag;       // "RPATH" or "RUNPATH"
  std::string entry;     // as written
  std::string expanded;  // after $ORIGIN/$LIB/$PLATFORM; empty when not expandable
  bool outside = false;
};

struct file_report {
  std::string format = "elf";  // "elf", "macho" or "pe": whose loader linked it
  std::string path;      // as walked (PREFIX/...)
  std::string relative;  // relative to the prefix
  std::vector<needed_entry> needed;
  std::vector<missing_entry> missing;
  std::vector<overlink_entry> overlinked;
  std::vector<rpath_entry> rpaths;
  std::vector<std::string> undefined;  // unresolved non-weak references (ldd -r); PE: DLL!NAME
  std::vector<limit_violation> floors;  // families above prefix_options::floor_limits
  std::vector<std::string> warnings;
  std::vector<std::string> closure;    // the files ld.so maps for it, in load order (itself first)
  // Why the file itself could not be analysed (unreadable, or no ELF file
  // ld.so would map); errc::ok when it was. Not a finding: an error of the run.
  error failure{};
  std::size_t relocations = 0;
  std::size_t findings = 0;
  bool failed() const noexcept { return failure.code != errc::ok; }
};

struct package_usage {
  std::string name;
  std::string source;               // conda / dpkg / prefix
  std::vector<std::string> dsos;    // needed DSOs it owns (as displayed)
  bool declared = false;
  bool self = false;                // owns one of the analysed files
  bool allowed_only = false;        // every DSO used from it is allow-listed
};

struct prefix_report {
  std::string prefix;
  std::vector<file_report> files;
  std::vector<package_usage> packages;        // every package a needed DSO came from
  std::vector<std::string> undeclared;        // used, not declared (underlinking)
  std::vector<std::string> unused_declared;   // declared, never used, no copy inside (overdepending)
  std::vector<declared_unused> statically_linked;  // declared, never bound to, but its code is inside a file
  std::vector<package_duplicate> duplicates;  // strong definitions exported by two packages' libraries
                                              // (a finding when a checked file loads both: winner set)
  std::vector<std::string> unowned;           // needed DSOs no package owns
  bool have_conda = false, have_dpkg = false;
  std::size_t skipped_non_elf = 0, skipped_symlinks = 0, skipped_static = 0;
  std::vector<std::string> warnings;
  std::size_t failed = 0;                     // files that could not be analysed (file_report::failure)
  // Distinct files parsed (the caches), each once, however many roots load
  // it: the ELF cache lets a file go after the last root that loads it, so
  // it is never parsed twice (unless cache_limit flushed it; it still counts
  // once). The check's first pass, which reads only each file's dynamic
  // section, does not count.
  std::size_t objects_parsed = 0;
  // The ELF cache's images: how many it let go once no pending root needed
  // them, and the most it held at once (neither is in the JSON).
  std::size_t images_released = 0, images_peak = 0;
  std::size_t cache_flushes = 0;              // times the cache reached prefix_options::cache_limit (not in the JSON)
  std::size_t lookups = 0;
  std::size_t findings = 0;
};

}  // namespace resolve
}  // namespace v0
}  // namespace linkscope
