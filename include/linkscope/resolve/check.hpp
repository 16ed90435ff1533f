// linkscope/resolve/check.hpp — overlinking, overdepending and package
// ownership for every ELF file under a prefix (a conda environment, an
// unpacked package, /usr), as conda-build's post-link check and auditwheel
// ask it. What it is asked and answers (prefix_options, prefix_report) is
// resolve/check_result.hpp.
//
// The check is a pipeline, one header per phase: walk is resolve/
// check_walk.hpp, judging one file is resolve/check_verdicts.hpp; the plan,
// the links, ownership and the package findings are here:
//   walk     the dynamically linked ELF files under the prefix (or the files
//            given, or those a conda package lists), each file once however
//            many symlinks name it; a walked file is read once, on `jobs`
//            threads, for what it is and for its plan;
//   plan     each ELF file's closure alone (the load phase on images without
//            mappings), so that the cache knows how many pending roots need
//            each file and lets it go after the last (ld_so/image.hpp):
//            memory follows the roots in flight, not the size of the prefix;
//   link     each file F as the root of resolve/dynamic.hpp's ld.so emulation
//            (ldd F: F, the breadth-first DT_NEEDED closure, PT_INTERP; every
//            relocation of F bound as under LD_BIND_NOW);
//   verdict  per file, from F's bindings:
//              missing     a NEEDED anywhere in the closure that resolves
//                          nowhere (ldd: "not found");
//              unused      a direct NEEDED F never binds to (ldd -u -r,
//                          rtld.c's l_used walk);
//              overlinked  a symbol bound to an object that is not a direct
//                          NEEDED of F (conda-build's overlinking: it breaks as
//                          soon as the intermediate library drops it);
//              system      a direct NEEDED resolved outside the prefix;
//              rpath       an RPATH/RUNPATH entry that, after $ORIGIN/$LIB/
//                          $PLATFORM substitution, points outside the prefix;
//            then per package (resolve/packages.hpp owns each needed DSO):
//              underlinking  used but not declared; overdepending  declared
//              but never bound to, split by resolve/package_findings.hpp into
//              "statically linked" (its code is inside a checked file) and
//              "unused"; duplicates  strong definitions exported by the
//              libraries of two packages, with ld.so's winner; unowned  a
//              needed DSO no package owns.
// Libraries on the allow-list (glibc's parts, the C++ runtime, the vDSO;
// shell globs on the file name) are never findings.
//
// Mach-O and PE files under the prefix are checked too, each on its own
// platform's loader: Mach-O executables, dylibs and bundles on the dyld
// emulator (resolve/dyld.hpp; system libraries, which the shared cache
// supplies, are allowed), PE images on the Windows loader (resolve/
// pe_load.hpp; the conda PATH folders of the prefix that exist — the prefix,
// Library/mingw-w64/bin, Library/usr/bin, Library/bin, Scripts, bin — after
// the application folder; system, API set and runtime DLLs are allowed).
// Their verdicts: missing (a dylib or DLL found nowhere; weak dylibs and
// delay-load DLLs excepted), unused (Mach-O: a dylib command no import
// names), system, undefined (Mach-O: a non-weak import no image exports,
// dyld's "Symbol not found"; PE: an import the DLL does not export, as
// DLL!NAME; findings with undefined_is_finding, as ELF's), rpath (an
// LC_RPATH entry, after @loader_path/@executable_path, outside the prefix; an
// absolute LC_ID_DYLIB outside it), overlinked (Mach-O: a flat-namespace
// lookup, ordinal -2 or an image without MH_TWOLEVEL, that binds to an image
// the file neither links nor gets through a re-export; a PE import always
// names its DLL, and a forwarder is that DLL's own interface, so a PE file
// cannot overlink). The package-level findings (statically linked,
// duplicates) read every platform's files (resolve/definitions.hpp).
#pragma once

#include <string>

#include "linkscope/core/config.hpp"
#include "linkscope/core/error.hpp"
#include "linkscope/resolve/check_result.hpp"

#if LINKSCOPE_DEFINITIONS
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <system_error>
#include <unordered_map>
#include <utility>
#include <vector>

#include "linkscope/resolve/check_floors.hpp"
#include "linkscope/resolve/check_verdicts.hpp"
#include "linkscope/resolve/check_walk.hpp"
#include "linkscope/resolve/dyld.hpp"
#include "linkscope/resolve/dynamic.hpp"
#include "linkscope/resolve/package_findings.hpp"
#include "linkscope/resolve/packages.hpp"
#include "linkscope/resolve/pe_load.hpp"
#include "linkscope/resolve/search_path.hpp"
#endif  // LINKSCOPE_DEFINITIONS

namespace linkscope {
inline namespace v0 {
namespace resolve {

// Check every dynamically linked ELF file under `prefix` (or options.files,
// or the files of options.package). Errors are for an unusable prefix or an
// empty package only; a file that cannot be read is a warning on its report.
result<prefix_report> check_prefix(const std::string& prefix, const prefix_options& options = {});

#if LINKSCOPE_DEFINITIONS
LINKSCOPE_FUNC result<prefix_report> check_prefix(const std::string& prefix_arg, const prefix_options& options) {
  namespace fs = std::filesystem;
  prefix_report report;
  std::error_code ec;
  fs::path absolute = fs::absolute(prefix_arg, ec);
  if (ec) return make_error(errc::not_found, no_offset, "cannot make the prefix absolute");
  std::string prefix = absolute.lexically_normal().string();
  while (prefix.size() > 1 && prefix.back() == '/') prefix.pop_back();
  if (!fs::is_directory(prefix, ec)) return make_error(errc::not_found, no_offset, "prefix is not a directory");
  report.prefix = prefix;
  const std::string prefix_canonical = detail::canonical_or_normal(prefix);

  // Walk.
  std::vector<std::string> files;
  std::vector<std::string> explicit_files = options.files;
  if (!options.package.empty()) {
    auto owners = conda_owners(prefix, &report.warnings);
    if (!owners) return owners.error();
    for (const auto& [rel, name] : *owners) {
      if (name != options.package) continue;
      std::error_code e2;
      if (!fs::is_regular_file(prefix + "/" + rel, e2)) continue;  // follows symlinks
      const detail::walk_kind kind = detail::sniff_elf_file(prefix + "/" + rel, nullptr);
      if (kind == detail::walk_kind::dynamic || kind == detail::walk_kind::macho || kind == detail::walk_kind::pe)
        explicit_files.push_back(prefix + "/" + rel);
    }
    if (explicit_files.empty()) return make_error(errc::not_found, no_offset, "conda-meta lists no ELF, Mach-O or PE file of that package");
    std::sort(explicit_files.begin(), explicit_files.end());
  }
  const unsigned threads = options.jobs != 0 ? options.jobs : std::max(1u, std::thread::hardware_concurrency());
  if (!explicit_files.empty()) {
    // Each file once, by device and inode (stat on every thread; the first name wins).
    std::vector<std::string> absolute_paths(explicit_files.size());
    std::vector<std::optional<std::pair<std::uint64_t, std::uint64_t>>> ids(explicit_files.size());
    detail::run_parallel(std::min<unsigned>(threads, 64), explicit_files.size(), [&](std::size_t i) {
      std::error_code e2;
      const std::string& f = explicit_files[i];
      absolute_paths[i] = !f.empty() && f[0] == '/' ? detail::lexically_normal_path(f)
                                                     : fs::absolute(f, e2).lexically_normal().string();
      ids[i] = detail::file_identity(absolute_paths[i]);
    });
    std::set<std::pair<std::uint64_t, std::uint64_t>> seen;
    for (std::size_t i = 0; i < explicit_files.size(); ++i) {
      if (ids[i] && !seen.insert(*ids[i]).second) {
        ++report.skipped_symlinks;
        continue;
      }
      files.push_back(std::move(absolute_paths[i]));
    }
  }
  // A walked prefix is listed here, and its files are read, judged and
  // planned in one pass below (detail::walk_decide).
  const bool walking = explicit_files.empty();
  detail::walk_list listed;
  if (walking) listed = detail::list_prefix(prefix, report);

  // Link each file and judge it, on `jobs` threads: each takes the next file
  // not yet taken and fills that file's slot, so the order is the walk's.
  dynamic_options link_options;
  link_options.search = options.search;
  // The verdicts read only the root's own bindings and undefined symbols
  // (and ldd -u, which relocates the root alone too): the dependencies'
  // relocations and the interposition list change none of them. ld.so
  // relocates the root first in this emulator's order, so no STB_GNU_UNIQUE
  // choice of a dependency can change what the root binds to.
  link_options.bind_dependencies = false;
  link_options.interposition = false;
  // Nor do they read the version check's rows (ld.so's "version ... not
  // found" errors): only the bindings' own version matching counts.
  link_options.versions = false;
  const std::string cwd = options.search.cwd.empty() ? detail::getcwd_string() : options.search.cwd;
  link_options.search.cwd = cwd;  // what every root's search would ask getcwd for
  // One cache for every root: each DSO is mapped, parsed and indexed once per
  // run, however many roots load it (ld_so/image.hpp, "Loader cache API").
  object_cache cache;
  cache.set_limit(options.cache_limit);
  cache.set_roots_only(true);
  dyld_cache dyld_files;        // the same for Mach-O files
  winload_cache windows_files;  // and for PE files
  // PE: the folders a conda environment puts on PATH, when the caller gave none.
  winload_options windows_options = options.windows;
  std::vector<std::string> conda_dirs;
  for (const char* sub : {"", "/Library/mingw-w64/bin", "/Library/usr/bin", "/Library/bin", "/Scripts", "/bin"}) {
    std::error_code e2;
    if (fs::is_directory(prefix + sub, e2)) conda_dirs.push_back(prefix + sub);
  }
  if (windows_options.path.empty()) windows_options.path = conda_dirs;
  // A .pyd is loaded by Python 3.8+ (Python/dynload_win.c): LoadLibraryExW
  // with LOAD_LIBRARY_SEARCH_DEFAULT_DIRS | LOAD_LIBRARY_SEARCH_DLL_LOAD_DIR,
  // so its own folder, python.exe's folder, the os.add_dll_directory folders
  // and System32 are searched, never PATH. conda's python adds the
  // environment's DLL folders with AddDllDirectory at start-up
  // (CondaEcosystemModifyDllSearchPath): the same folders as its PATH above,
  // unless the caller gave dll_dirs.
  winload_options pyd_options = windows_options;
  pyd_options.mode = load_mode::python;
  if (pyd_options.dll_dirs.empty()) pyd_options.dll_dirs = conda_dirs;
  if (pyd_options.executable.empty()) {
    std::error_code e2;
    if (fs::is_regular_file(prefix + "/python.exe", e2)) pyd_options.executable = prefix + "/python.exe";
  }
  // Plan: which files each ELF root loads, from closure-only links (the load
  // phase on images that keep only the dynamic section's strings, without
  // their mappings; the search's file system answers are kept for the links
  // below). Each file's use count is the number of roots that load it; a
  // root's link below ends its uses, and a file no pending root needs is let
  // go, so memory follows the roots in flight, not the prefix.
  std::vector<detail::walk_kind> kinds;
  std::vector<std::vector<object_cache::file_id>> uses;
  {
    object_cache plan;
    plan.set_closure_only(true);
    plan.share_lookups_with(cache);
    // The plan's images only spare re-reading a file for the next root that
    // loads it: about 4096 of them at a time are plenty (each counts 4 KiB).
    plan.set_limit(std::size_t{16} << 20);
    dynamic_options plan_options = link_options;
    plan_options.bindings = false;
    // A file read here is handed to the plan's cache, unless the search has a
    // root (then link_dynamic reads root + path itself).
    auto open_for_plan = [&](const std::string& path) {
      return link_options.search.root.empty() ? mapped_file::open(path)
                                              : result<mapped_file>(make_error(errc::not_found, no_offset, ""));
    };
    auto plan_link = [&](const std::string& path, mapped_file* opened, std::vector<object_cache::file_id>& ids) {
      auto link = link_dynamic(path, plan_options, plan, opened);
      if (!link) return;
      ids = std::move(link->file_ids);
      std::sort(ids.begin(), ids.end());
      ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    };
    if (walking) {
      // Each listed file is read once here: what it is (the walk's question),
      // its identity, and, for an ELF root, its planned link from those bytes.
      std::vector<detail::walk_fact> facts;
      const auto kept = detail::walk_decide(listed, report, std::min<unsigned>(threads, 64), facts,
                                            [&](const std::string& path, detail::walk_fact& fact) {
        auto mapped = open_for_plan(path);
        if (mapped) {
          fact.id = std::make_pair(mapped->device(), mapped->inode());
          fact.kind = detail::walk_kind_of(mapped->bytes());
        } else {
          fact.kind = detail::sniff_elf_file(path, &fact.problem);
          if (fact.kind != detail::walk_kind::not_elf) fact.id = detail::file_identity(path);
        }
        if (fact.kind == detail::walk_kind::dynamic) plan_link(path, mapped ? &*mapped : nullptr, fact.uses);
      });
      const std::size_t regulars = listed.regular.size();
      for (std::size_t i : kept) {
        files.push_back(std::move(i < regulars ? listed.regular[i] : listed.links[i - regulars]));
        kinds.push_back(facts[i].kind);
        uses.push_back(std::move(facts[i].uses));
      }
    } else {
      kinds.assign(files.size(), detail::walk_kind::not_elf);
      uses.resize(files.size());
      detail::run_parallel(std::min<unsigned>(threads, 64), files.size(), [&](std::size_t i) {
        // An ELF file (the plan's cache holds it, or its magic says so) is
        // linked from the bytes read here; anything else is sniffed.
        if (plan.parsed_class_of(files[i]) >= 0) {
          kinds[i] = detail::walk_kind::dynamic;
          plan_link(files[i], nullptr, uses[i]);
        } else if (auto mapped = open_for_plan(files[i]); mapped && mapped->size() >= 4 && std::memcmp(mapped->data(), "\x7f" "ELF", 4) == 0) {
          kinds[i] = detail::walk_kind::dynamic;
          plan_link(files[i], &*mapped, uses[i]);
        } else {
          kinds[i] = detail::sniff_elf_file(files[i], nullptr);
          if (kinds[i] == detail::walk_kind::macho || kinds[i] == detail::walk_kind::pe) return;
          plan_link(files[i], nullptr, uses[i]);
        }
      });
    }
  }
  report.files.resize(files.size());
  std::vector<std::size_t> lookups(files.size(), 0);
  unsigned jobs = threads;
  if (jobs > files.size()) jobs = static_cast<unsigned>(std::max<std::size_t>(files.size(), 1));
  for (const auto& ids : uses) cache.expect_use(ids);
  // Consecutive files in chunks (detail::parallel_chunk): neighbours share libraries.
  const std::size_t chunk = detail::parallel_chunk(jobs, files.size());
  std::atomic<std::size_t> next{0};
  std::mutex progress_lock;
  std::size_t done = 0;
  auto work = [&] {
    // file_verdicts caches canonical paths: one per thread.
    detail::file_verdicts verdicts(options, prefix_canonical, cwd);
    detail::take_chunks(next, files.size(), chunk, [&](std::size_t i) {
      const std::string& f = files[i];
      file_report& fr = report.files[i];
      fr.path = f;
      const detail::walk_kind kind = kinds[i];
      if (kind == detail::walk_kind::macho) {
        auto link = link_dyld(f, options.dyld, dyld_files);
        if (!link) fr.failure = link.error();
        else {
          verdicts.judge_macho(f, *link, fr);
          lookups[i] = link->lookups;
          detail::judge_platform_floor(f, options, fr);
        }
      } else if (kind == detail::walk_kind::pe) {
        auto link = load_windows(f, detail::is_pyd(f) ? pyd_options : windows_options, windows_files);
        if (!link) fr.failure = link.error().err;
        else {
          verdicts.judge_pe(*link, fr);
          detail::judge_platform_floor(f, options, fr);
        }
      } else {
        {
          auto link = link_dynamic(f, link_options, cache);
          if (!link) {
            fr.failure = link.error();  // the file itself is unreadable or no ELF file ld.so would map
          } else {
            verdicts.judge(f, *link, fr);
            lookups[i] = link->lookups;
          }
        }
        // No pending root needs what only this one loaded.
        cache.end_use(uses[i]);
        std::vector<object_cache::file_id>().swap(uses[i]);
        if (!fr.failed() && !options.floor_limits.empty()) detail::judge_floors(f, options.floor_limits, fr);
      }
      fr.relative = detail::path_within(f, prefix) ? f.substr(prefix.size() == 1 ? 1 : prefix.size() + 1) : f;
      if (options.progress) {
        std::lock_guard<std::mutex> hold(progress_lock);
        options.progress(++done, files.size());
      }
    });
  };
  if (jobs <= 1) {
    work();
  } else {
    std::vector<std::thread> threads;
    threads.reserve(jobs - 1);
    for (unsigned t = 1; t < jobs; ++t) threads.emplace_back(work);
    work();
    for (auto& t : threads) t.join();
  }
  for (std::size_t i = 0; i < files.size(); ++i) {
    report.lookups += lookups[i];
    if (report.files[i].failed()) ++report.failed;
  }
  report.objects_parsed = cache.files() + dyld_files.files() + windows_files.files();
  report.cache_flushes = cache.flushes();
  report.images_released = cache.released();
  report.images_peak = cache.peak_images();
  const detail::file_verdicts allow_list(options, prefix_canonical, cwd);

  // Ownership of every needed DSO and of the analysed files.
  std::unordered_map<std::string, std::string> conda;
  if (options.use_conda) {
    std::error_code e2;
    if (fs::is_directory(prefix + "/conda-meta", e2)) {
      report.have_conda = true;
      auto owners = conda_owners(prefix, &report.warnings);
      if (owners) conda = std::move(*owners);
    }
  }
  std::vector<std::string> dpkg_paths;
  detail::canonical_paths canonical;  // this phase runs on one thread
  auto display = [&](const std::string& path) {
    const std::string normal = detail::lexically_normal_path(path);
    if (detail::path_within(normal, prefix)) return normal.substr(prefix.size() == 1 ? 1 : prefix.size() + 1);
    return normal;
  };
  auto conda_lookup = [&](const std::string& path) -> std::optional<package_owner> {
    if (conda.empty()) return std::nullopt;
    for (const std::string& candidate : {detail::lexically_normal_path(path), canonical(path)}) {
      if (!detail::path_within(candidate, prefix) && !detail::path_within(candidate, prefix_canonical)) continue;
      const std::string& base = detail::path_within(candidate, prefix) ? prefix : prefix_canonical;
      const std::string rel = candidate.substr(base.size() == 1 ? 1 : base.size() + 1);
      auto it = conda.find(rel);
      if (it != conda.end()) return package_owner{it->second, "conda", rel};
    }
    return std::nullopt;
  };
  if (options.use_dpkg) {
    std::error_code e2;
    if (fs::is_directory(options.dpkg_info_dir, e2)) {
      report.have_dpkg = true;
      for (const auto& fr : report.files) {
        dpkg_paths.push_back(fr.path);
        for (const auto& n : fr.needed)
          if (!n.path.empty()) dpkg_paths.push_back(n.file);
      }
    }
  }
  std::unordered_map<std::string, package_owner> dpkg;
  if (report.have_dpkg) dpkg = dpkg_owners(dpkg_paths, options.dpkg_info_dir);
  // --package-dir: each DIR as its canonical path, the longest first (a
  // package unpacked inside another's folder owns its own files).
  std::vector<std::pair<std::string, std::string>> package_dirs;  // {canonical DIR, NAME}
  for (const auto& [name, dir] : options.package_dirs)
    package_dirs.emplace_back(detail::canonical_or_normal(fs::absolute(dir, ec).lexically_normal().string()), name);
  std::stable_sort(package_dirs.begin(), package_dirs.end(),
                   [](const auto& a, const auto& b) { return a.first.size() > b.first.size(); });
  auto dir_lookup = [&](const std::string& file) -> std::optional<package_owner> {
    if (package_dirs.empty() || file.empty()) return std::nullopt;
    const std::string c = canonical(file);
    for (const auto& [dir, name] : package_dirs)
      if (detail::path_within(c, dir)) return package_owner{name, "package-dir", c.substr(dir.size() == 1 ? 1 : dir.size() + 1)};
    return std::nullopt;
  };
  auto owner_of = [&](const std::string& file, bool in_prefix) -> package_owner {
    if (auto p = dir_lookup(file)) return *p;
    if (in_prefix) {
      if (auto c = conda_lookup(file)) return *c;
    }
    auto d = dpkg.find(file);
    if (d != dpkg.end()) return d->second;
    const bool have_in_prefix = report.have_conda || !package_dirs.empty();
    if (in_prefix && !have_in_prefix) return package_owner{"", "prefix", display(file)};
    // Nobody owns it only when a database that could have listed it was read.
    if (in_prefix ? have_in_prefix : report.have_dpkg) return {};
    return package_owner{"", "unknown", ""};
  };
  std::set<std::string> self;
  for (const auto& fr : report.files) {
    const package_owner o = owner_of(fr.path, true);
    if (!o.package.empty()) self.insert(o.package);
  }
  std::map<std::string, package_usage> used;
  std::set<std::string> unowned;
  for (auto& fr : report.files) {
    for (auto& n : fr.needed) {
      if (n.path.empty()) continue;
      n.owner = owner_of(n.file, n.in_prefix);
      const std::string shown = display(n.file);
      if (n.owner.package.empty()) {
        if (n.owner.source.empty() && !n.allowed) unowned.insert(shown);
        continue;
      }
      auto [it, fresh] = used.emplace(n.owner.package, package_usage{});
      package_usage& u = it->second;
      if (fresh) {
        u.name = n.owner.package;
        u.source = n.owner.source;
        u.self = self.count(n.owner.package) != 0;
        u.allowed_only = true;
      }
      if (std::find(u.dsos.begin(), u.dsos.end(), shown) == u.dsos.end()) u.dsos.push_back(shown);
      u.allowed_only = u.allowed_only && n.allowed;
    }
  }
  std::set<std::string> declared_base;
  for (const auto& d : options.declared) declared_base.insert(std::string(package_base_name(d)));
  for (auto& [name, u] : used) {
    u.declared = declared_base.count(std::string(package_base_name(name))) != 0;
    std::sort(u.dsos.begin(), u.dsos.end());
    if (options.check_declared && !u.declared && !u.self && !u.allowed_only) report.undeclared.push_back(name);
    report.packages.push_back(u);
  }
  // The files as package_findings.hpp takes them (a copy of every closure:
  // made only when a question needs it).
  std::vector<checked_file> checked_storage;
  bool checked_made = false;
  auto checked_files = [&]() -> const std::vector<checked_file>& {
    if (!checked_made) {
      checked_made = true;
      for (const auto& fr : report.files)
        if (!fr.failed()) checked_storage.push_back({fr.path, fr.relative, fr.closure, fr.format == "elf"});
    }
    return checked_storage;
  };
  if (options.check_declared) {
    for (const auto& d : options.declared) {
      bool hit = false;
      for (const auto& [name, u] : used) hit = hit || package_base_name(name) == package_base_name(d);
      if (hit) continue;
      // Overdepending, or statically linked? The dependency's own libraries answer.
      std::vector<owned_library> libraries;
      std::vector<std::string> files_of_d;
      for (const auto& [dir, name] : package_dirs)
        if (package_base_name(name) == package_base_name(d))
          for (auto it = fs::recursive_directory_iterator(dir, fs::directory_options::skip_permission_denied, ec);
               !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
            if (std::error_code e3; it->is_regular_file(e3)) files_of_d.push_back(it->path().string());
      std::sort(files_of_d.begin(), files_of_d.end());
      if (files_of_d.empty())
        files_of_d = package_files(d, prefix, conda, report.have_dpkg ? options.dpkg_info_dir : std::string());
      for (auto& f : files_of_d) libraries.push_back({f, display(f), d});
      declared_unused verdict{d, find_static_copies(checked_files(), libraries)};
      if (verdict.statically_linked())
        report.statically_linked.push_back(std::move(verdict));
      else
        report.unused_declared.push_back(d);
    }
  }
  report.unowned.assign(unowned.begin(), unowned.end());

  // Duplicates across packages: the owned, non-allow-listed libraries in the
  // prefix that the check met (checked files named like libraries, NEEDED entries).
  {
    // Each library once, however it is spelled (a symlink, the /usr-merge alias).
    std::vector<owned_library> libraries;
    std::set<std::string> seen;
    auto add = [&](const std::string& file, const package_owner& owner) {
      const std::string_view base = detail::base_name(file);
      if (owner.package.empty() || !detail::is_library_name(file) || allow_list.allowed(base) ||
          allow_list.macos_allowed(file) || allow_list.windows_allowed(base))
        return;
      if (seen.insert(canonical(file)).second) libraries.push_back({file, display(file), owner.package});
    };
    for (const auto& fr : report.files) {
      if (fr.failed()) continue;
      add(fr.path, owner_of(fr.path, true));
      for (const auto& n : fr.needed)
        if (!n.path.empty() && n.in_prefix) add(n.file, n.owner);
    }
    // A duplicate needs two libraries.
    if (libraries.size() >= 2) report.duplicates = find_package_duplicates(libraries, checked_files());
  }

  // Findings.
  for (auto& fr : report.files) {
    std::size_t n = fr.missing.size();
    for (const auto& e : fr.needed) {
      if (e.path.empty()) continue;
      if (!e.used && !e.allowed) ++n;
      if (!e.in_prefix && !e.allowed) ++n;
    }
    for (const auto& o : fr.overlinked)
      if (!o.allowed) ++n;
    for (const auto& r : fr.rpaths)
      if (r.outside) ++n;
    if (options.undefined_is_finding) n += fr.undefined.size();
    n += fr.floors.size();
    fr.findings = n;
    report.findings += n;
  }
  report.findings += report.undeclared.size() + report.unused_declared.size() + report.statically_linked.size() +
                     report.unowned.size();
  for (const auto& d : report.duplicates) report.findings += d.winner.empty() ? 0 : 1;  // loaded together
  return report;
}
#endif  // LINKSCOPE_DEFINITIONS

}  // namespace resolve
}  // namespace v0
}  // namespace linkscope
