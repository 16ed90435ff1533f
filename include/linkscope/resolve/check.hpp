// linkscope/resolve/check.hpp — overlinking, overdepending and package
// ownership for every ELF file under a prefix (a conda environment, an
// unpacked package, /usr), as conda-build's post-link check and auditwheel
// ask it. What it is asked and answers (prefix_options, prefix_report) is
// resolve/check_result.hpp.
//
// The check is a pipeline:
//   walk     the dynamically linked ELF files under the prefix (or the files
//            given, or those a conda package lists), each file once however
//            many symlinks name it;
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

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "linkscope/core/config.hpp"
#include "linkscope/core/error.hpp"
#include "linkscope/resolve/check_floors.hpp"
#include "linkscope/resolve/check_result.hpp"
#include "linkscope/resolve/package_findings.hpp"
#include "linkscope/resolve/packages.hpp"
#include "linkscope/resolve/pe_load.hpp"
#include "linkscope/resolve/search_path.hpp"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <system_error>
#include <thread>
#include <unordered_map>
#include <utility>

#include "linkscope/coff/pe.hpp"
#include "linkscope/core/mapped_file.hpp"
#include "linkscope/elf/file.hpp"
#include "linkscope/macho/fat.hpp"
#include "linkscope/macho/file.hpp"
#include "linkscope/macho/linkage.hpp"
#include "linkscope/resolve/dyld.hpp"
#include "linkscope/resolve/dynamic.hpp"
#include "linkscope/resolve/file_format.hpp"

#if !defined(_WIN32)
#include <sys/stat.h>
#endif

namespace linkscope {
inline namespace v0 {
namespace resolve {

// Check every dynamically linked ELF file under `prefix` (or options.files,
// or the files of options.package). Errors are for an unusable prefix or an
// empty package only; a file that cannot be read is a warning on its report.
result<prefix_report> check_prefix(const std::string& prefix, const prefix_options& options = {});

#if LINKSCOPE_DEFINITIONS
namespace detail {
// A Python extension module on Windows: FILE.pyd, in any case.
inline bool is_pyd(std::string_view path) noexcept {
  if (path.size() < 4) return false;
  const std::string_view ext = path.substr(path.size() - 4);
  return ext[0] == '.' && (ext[1] | 0x20) == 'p' && (ext[2] | 0x20) == 'y' && (ext[3] | 0x20) == 'd';
}


// What a walk needs to know of a file before linking it. `dynamic`, `macho`
// and `pe` are checked; `other_elf` and `other_macho` (objects, static
// programs, dSYM companions...) are counted as skipped_static.
enum class walk_kind { not_elf, dynamic, other_elf, macho, other_macho, pe };

// A Mach-O image a loader maps: an executable, a dylib or a bundle (a
// universal file: by its first slice).
inline walk_kind sniff_macho(byte_view header) {
  byte_view thin = header;
  if (macho::is_fat(header)) {
    // The first fat_arch: cputype, cpusubtype, offset (fat_arch_64: a 64-bit offset).
    const bool wide = load<u32, std::endian::big>(header.data()) == macho::FAT_MAGIC_64;
    if (header.size() < 8 + 16) return walk_kind::other_macho;
    const u64 offset = wide ? load<u64, std::endian::big>(header.data() + 16) : load<u32, std::endian::big>(header.data() + 16);
    if (offset + 16 > header.size()) return walk_kind::macho;  // beyond the head: let the loader judge it
    thin = byte_view(header.data() + offset, header.size() - offset);
  }
  if (!macho::is_macho(thin) || thin.size() < 16) return walk_kind::other_macho;
  // raw_magic reads the magic big-endian: MH_MAGIC* means a big-endian image.
  const bool big = macho::raw_magic(thin) == macho::MH_MAGIC || macho::raw_magic(thin) == macho::MH_MAGIC_64;
  const u32 filetype = big ? load<u32, std::endian::big>(thin.data() + 12) : load<u32, std::endian::little>(thin.data() + 12);
  return filetype == macho::MH_EXECUTE || filetype == macho::MH_DYLIB || filetype == macho::MH_BUNDLE
             ? walk_kind::macho
             : walk_kind::other_macho;
}

// The kind of the file at `path` from its first bytes; an ELF file is mapped
// whole only when its program headers lie beyond them.
inline walk_kind sniff_elf_file(const std::string& path, std::string* error_message) {
  std::string head;
  const file_format format = sniff_file(path, &head);
  const byte_view header(reinterpret_cast<const unsigned char*>(head.data()), head.size());
  if (format == file_format::macho || format == file_format::macho_universal) return sniff_macho(header);
  if (format == file_format::pe) return walk_kind::pe;
  if (format != file_format::elf) return walk_kind::not_elf;
  auto kind = [](const result<elf::identity>& id) {
    return id && id->dynamically_linked() ? walk_kind::dynamic : walk_kind::other_elf;
  };
  auto id = elf::identify(header);
  if (id && id->segments_read) return kind(id);
  auto mapped = mapped_file::open(path);
  if (!mapped) {
    if (error_message) *error_message = mapped.error().message;
    return walk_kind::not_elf;
  }
  return kind(elf::identify(mapped->bytes()));
}

// fn(i) for every i < n, on `jobs` threads (this one included), each taking
// the next i not yet taken.
template <class F>
void run_parallel(unsigned jobs, std::size_t n, F fn) {
  std::atomic<std::size_t> next{0};
  auto work = [&] {
    for (std::size_t i = next++; i < n; i = next++) fn(i);
  };
  if (jobs <= 1 || n <= 1) {
    work();
    return;
  }
  std::vector<std::thread> threads;
  threads.reserve(jobs - 1);
  for (unsigned t = 1; t < jobs; ++t) threads.emplace_back(work);
  work();
  for (auto& t : threads) t.join();
}

// The device and inode of a file (its identity, as ld.so sees it).
inline std::optional<std::pair<std::uint64_t, std::uint64_t>> file_identity(const std::string& path) {
#if !defined(_WIN32)
  struct ::stat st;
  if (::stat(path.c_str(), &st) != 0) return std::nullopt;
  return std::make_pair(static_cast<std::uint64_t>(st.st_dev), static_cast<std::uint64_t>(st.st_ino));
#else
  auto mapped = mapped_file::open(path);
  if (!mapped) return std::nullopt;
  return std::make_pair(mapped->device(), mapped->inode());
#endif
}

// The ELF files to analyse under `prefix`: regular files first, then symlinks
// whose target is not one of them (nor another symlink's); directory symlinks
// are not followed, so loops cannot happen.
inline std::vector<std::string> walk_prefix(const std::string& prefix, prefix_report& report) {
  namespace fs = std::filesystem;
  std::vector<std::string> regular, links;
  std::error_code ec;
  fs::recursive_directory_iterator it(prefix, fs::directory_options::skip_permission_denied, ec), end;
  if (ec) {
    report.warnings.push_back(prefix + ": " + ec.message());
    return {};
  }
  for (; it != end; it.increment(ec)) {
    if (ec) {
      report.warnings.push_back(ec.message());
      ec.clear();
      continue;
    }
    const fs::directory_entry& entry = *it;
    std::error_code e2;
    if (entry.is_symlink(e2)) {
      if (entry.is_regular_file(e2)) links.push_back(entry.path().string());
      else if (e2) report.warnings.push_back(entry.path().string() + ": " + e2.message());
      continue;
    }
    if (entry.is_regular_file(e2)) regular.push_back(entry.path().string());
  }
  std::sort(regular.begin(), regular.end());
  std::sort(links.begin(), links.end());
  std::vector<std::string> out;
  std::set<std::pair<std::uint64_t, std::uint64_t>> seen;
  auto consider = [&](const std::string& path, bool link) {
    std::string problem;
    const walk_kind kind = sniff_elf_file(path, &problem);
    if (!problem.empty()) report.warnings.push_back(path + ": " + problem);
    if (kind == walk_kind::not_elf) {
      if (problem.empty()) ++report.skipped_non_elf;
      return;
    }
    const auto id = file_identity(path);
    if (id && !seen.insert(*id).second) {
      if (link) ++report.skipped_symlinks;
      return;
    }
    if (kind == walk_kind::other_elf || kind == walk_kind::other_macho) {
      ++report.skipped_static;
      return;
    }
    out.push_back(path);
  };
  for (const auto& p : regular) consider(p, false);
  for (const auto& p : links) consider(p, true);
  return out;
}

// One file's verdicts from its link (objects in load order, [0] = the file).
class file_verdicts {
 public:
  file_verdicts(const prefix_options& options, const std::string& prefix_canonical, const std::string& cwd)
      : options_(options), prefix_(prefix_canonical), cwd_(cwd) {}

  // An ELF name against the ELF allow-list; macos_allowed and windows_allowed
  // (which compares as Windows does, without case) for the other platforms.
  bool allowed(std::string_view name) const { return allow_list_matches(options_.allow, name); }
  bool macos_allowed(std::string_view name) const { return allow_list_matches(options_.macos_allow, name); }
  bool windows_allowed(std::string_view name) const { return allow_list_matches(options_.windows_allow, name, true); }
  // A loaded Mach-O image: its path on the list, or (unless the loaders'
  // system classes are off) dyld's shared cache, on every Mac.
  bool image_allowed(const dyld_object& o) const {
    return macos_allowed(o.path) || (options_.allow_system_images && o.kind == dyld_image_kind::system);
  }

  void judge(const std::string& path, const dynamic_link& link, file_report& out) {
    const auto& objects = link.objects;
    if (objects.empty()) return;
    const loaded_object& main = objects[0];
    for (const auto& w : main.warnings) out.warnings.push_back(w);
    for (const auto& o : objects)
      if (o.found()) out.closure.push_back(o.file);
    out.relocations = link.relocations;
    // Missing: every NEEDED that resolved nowhere, once, under its first requester.
    std::vector<char> reported(objects.size(), 0);
    for (std::size_t id = 0; id < objects.size(); ++id) {
      const auto& o = objects[id];
      for (std::uint32_t dep : o.needed_objects) {
        if (dep == no_object || dep >= objects.size() || objects[dep].found() || reported[dep]) continue;
        reported[dep] = 1;
        out.missing.push_back({objects[dep].name, o.path, id == 0});
      }
    }
    // What the file binds, per target object (distinct name[@version] labels).
    std::vector<std::vector<std::string>> bound(objects.size());
    std::set<std::string> undefined;
    for (const symbol_binding& b : link.bindings) {
      if (b.from != 0 || b.to == 0 || b.to >= objects.size()) continue;
      std::string label(b.symbol);
      if (!b.version.empty()) label.append("@").append(b.version);
      auto& v = bound[b.to];
      if (std::find(v.begin(), v.end(), label) == v.end()) v.push_back(std::move(label));
    }
    for (const undefined_reference& u : link.undefined) {
      if (u.from != 0) continue;
      std::string label(u.symbol);
      if (!u.version.empty()) label.append("@").append(u.version);
      undefined.insert(std::move(label));
    }
    out.undefined.assign(undefined.begin(), undefined.end());
    // NEEDED entries.
    std::vector<char> direct(objects.size(), 0);
    direct[0] = 1;
    for (std::size_t k = 0; k < main.needed.size(); ++k) {
      needed_entry n;
      n.name = std::string(main.needed[k]);
      const std::uint32_t dep = k < main.needed_objects.size() ? main.needed_objects[k] : no_object;
      if (dep != no_object && dep < objects.size() && objects[dep].found()) {
        const loaded_object& o = objects[dep];
        direct[dep] = 1;
        n.path = o.path;
        n.file = o.file;
        n.via = o.via;
        n.in_prefix = path_within(canonical(o.file), prefix_);
        n.symbols = bound[dep].size();
        n.used = n.symbols != 0;
        n.allowed = allowed(n.name) || allowed(n.path) || allowed(o.soname);
      } else {
        n.allowed = allowed(n.name);
      }
      out.needed.push_back(std::move(n));
    }
    // Overlinking: bindings to objects that are not direct dependencies.
    for (std::size_t id = 0; id < objects.size(); ++id) {
      if (direct[id] || bound[id].empty() || !objects[id].found()) continue;
      const loaded_object& o = objects[id];
      overlink_entry e;
      e.path = o.path;
      e.soname = std::string(o.soname);
      e.via = requester(objects, static_cast<std::uint32_t>(id));
      e.allowed = allowed(e.path) || allowed(e.soname);
      e.symbols = std::move(bound[id]);
      std::sort(e.symbols.begin(), e.symbols.end());
      out.overlinked.push_back(std::move(e));
    }
    // RPATH / RUNPATH entries.
    const std::string origin = origin_of(path, cwd_);
    auto check_paths = [&](std::string_view list, const char* tag) {
      std::size_t start = 0;
      for (;;) {
        const std::size_t colon = list.find(':', start);
        const std::string_view item =
            list.substr(start, colon == std::string_view::npos ? std::string_view::npos : colon - start);
        rpath_entry r;
        r.tag = tag;
        r.entry = std::string(item);
        if (item.empty()) {
          r.outside = true;  // ld.so reads an empty entry as the current directory
        } else if (auto expanded = substitute_dst(item, origin, options_.search.lib, options_.search.platform)) {
          r.expanded = std::filesystem::path(*expanded).lexically_normal().string();
          if (r.expanded.size() > 1 && r.expanded.back() == '/') r.expanded.pop_back();
          r.outside = !path_within(canonical_or_normal(options_.search.root + r.expanded), prefix_);
        } else {
          r.outside = true;
        }
        out.rpaths.push_back(std::move(r));
        if (colon == std::string_view::npos) break;
        start = colon + 1;
      }
    };
    if (main.has_rpath) check_paths(main.rpath, "RPATH");
    if (main.has_runpath) check_paths(main.runpath, "RUNPATH");
  }

  // A Mach-O file's verdicts from the dyld emulator.
  void judge_macho(const std::string& path, const dyld_link& link, file_report& out) {
    out.format = "macho";
    const auto& objects = link.objects;
    if (objects.empty()) return;
    for (const auto& e : link.errors) out.warnings.push_back(e);
    for (const auto& w : link.warnings) out.warnings.push_back(w);
    for (const auto& w : objects[0].warnings) out.warnings.push_back(w);
    for (const auto& o : objects)
      if (o.checked() && !o.file.empty()) out.closure.push_back(o.file);
    const auto missing_object = [&](std::uint32_t id) { return id == no_object || id >= objects.size() || !objects[id].found(); };
    // Missing: a dylib command resolved nowhere (not a weak one: dyld goes on without it).
    std::set<std::string_view> reported;
    for (std::size_t id = 0; id < objects.size(); ++id)
      for (const auto& dep : objects[id].dependencies) {
        if (!missing_object(dep.object) || dep.kind == macho::dylib_kind::weak) continue;
        if (dep.object != no_object && dep.object < objects.size() && objects[dep.object].weak) continue;
        if (reported.insert(dep.install_name).second)
          out.missing.push_back({std::string(dep.install_name), objects[id].path, id == 0});
      }
    // What the file binds, per image; what it imports that nothing exports.
    std::vector<std::set<std::string_view>> bound(objects.size());
    for (const symbol_binding& b : link.bindings)
      if (b.from == 0 && b.to < objects.size()) bound[b.to].insert(b.symbol);
    std::set<std::string> undefined;
    for (const undefined_reference& u : link.undefined)
      if (u.from == 0) undefined.emplace(u.symbol);
    out.undefined.assign(undefined.begin(), undefined.end());
    // The dylib commands of the file (ordinal k + 1 is dependencies[k]).
    const auto& deps = objects[0].dependencies;
    for (std::size_t k = 0; k < deps.size(); ++k) {
      needed_entry n;
      n.name = std::string(deps[k].install_name);
      n.allowed = macos_allowed(n.name);
      if (!missing_object(deps[k].object)) {
        const dyld_object& o = objects[deps[k].object];
        n.path = o.path;
        n.file = o.file;
        n.rule = to_string(o.via);
        n.allowed = n.allowed || image_allowed(o);
        n.in_prefix = o.checked() && !o.file.empty() && path_within(canonical(o.file), prefix_);
        n.symbols = bound[deps[k].object].size();
        n.used = true;
        for (const unused_dylib& u : link.unused)
          if (u.from == 0 && u.ordinal == k + 1) n.used = false;
      }
      out.needed.push_back(std::move(n));
    }
    // Overlinked: a flat-namespace lookup that found its name in an image the
    // file does not link, neither one of its dylib commands nor an image they
    // re-export. A two-level import names its library (a re-export is that
    // library's interface), and weak coalescing stands in for the file's own
    // weak definition: neither is overlinking.
    std::vector<char> linked(objects.size(), 0);
    linked[0] = 1;
    std::vector<std::uint32_t> stack;
    for (const auto& d : deps)
      if (!missing_object(d.object)) stack.push_back(d.object);
    while (!stack.empty()) {
      const std::uint32_t id = stack.back();
      stack.pop_back();
      if (linked[id]) continue;
      linked[id] = 1;
      for (const auto& d : objects[id].dependencies)
        if (d.kind == macho::dylib_kind::reexport && !missing_object(d.object)) stack.push_back(d.object);
    }
    std::vector<std::vector<std::string>> flat(objects.size());
    for (const symbol_binding& b : link.bindings)
      if (b.from == 0 && b.flat && b.to < objects.size() && !linked[b.to]) flat[b.to].emplace_back(b.symbol);
    for (std::size_t id = 0; id < objects.size(); ++id) {
      if (flat[id].empty()) continue;
      const dyld_object& o = objects[id];
      overlink_entry e;
      e.path = o.path;
      e.soname = std::string(o.install_name);
      e.via = o.loader != no_object && o.loader < objects.size() ? objects[o.loader].path : std::string();
      e.allowed = image_allowed(o) || macos_allowed(e.soname);
      e.symbols = std::move(flat[id]);
      std::sort(e.symbols.begin(), e.symbols.end());
      e.symbols.erase(std::unique(e.symbols.begin(), e.symbols.end()), e.symbols.end());
      out.overlinked.push_back(std::move(e));
    }
    // LC_RPATH entries and the install name: relocatable only inside the prefix.
    auto mapped = mapped_file::open(path);
    if (!mapped) return;
    auto linkage = macho::read_linkage_slice(mapped->bytes(), 0);
    if (!linkage) return;
    const std::string folder = std::filesystem::path(path).parent_path().string();
    const std::string executable_folder =
        options_.dyld.executable.empty() ? folder : std::filesystem::path(options_.dyld.executable).parent_path().string();
    for (std::string_view entry : linkage->rpaths) {
      rpath_entry r;
      r.tag = "LC_RPATH";
      r.entry = std::string(entry);
      std::string expanded;
      if (entry.substr(0, 13) == "@loader_path/" || entry == "@loader_path")
        expanded = folder + std::string(entry.substr(12));
      else if (entry.substr(0, 17) == "@executable_path/" || entry == "@executable_path")
        expanded = executable_folder + std::string(entry.substr(16));
      else if (!entry.empty() && entry[0] == '/')
        expanded = std::string(entry);
      if (expanded.empty()) {
        r.outside = true;  // relative to the current folder, or @rpath inside an rpath: nowhere fixed
      } else {
        r.expanded = std::filesystem::path(expanded).lexically_normal().string();
        if (r.expanded.size() > 1 && r.expanded.back() == '/') r.expanded.pop_back();
        r.outside = !path_within(canonical_or_normal(options_.dyld.root + r.expanded), prefix_);
      }
      out.rpaths.push_back(std::move(r));
    }
    const std::string_view id = linkage->install_name;
    if (linkage->has_id && !id.empty() && id[0] == '/' && !id.starts_with("/usr/lib/") && !id.starts_with("/System/")) {
      rpath_entry r;
      r.tag = "LC_ID_DYLIB";
      r.entry = std::string(id);
      r.expanded = r.entry;
      r.outside = !path_within(canonical_or_normal(options_.dyld.root + r.entry), prefix_);
      if (r.outside) out.rpaths.push_back(std::move(r));
    }
  }

  // A PE image's verdicts from the Windows loader.
  void judge_pe(const windows_link& wl, file_report& out) {
    out.format = "pe";
    const auto& objects = wl.link.objects;
    if (objects.empty()) return;
    for (const auto& w : objects[0].warnings) out.warnings.push_back(w);
    for (const auto& o : objects)
      if (o.found() && !o.file.empty()) out.closure.push_back(o.file);
    std::set<std::string> undefined;
    std::set<std::string> reported;
    for (const import_finding& f : wl.findings) {
      if (f.delay) continue;  // a delay-load import fails only when called
      if (f.problem == import_problem::missing_dll) {
        std::string key = f.dll_name;
        for (char& c : key) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
        if (reported.insert(key).second) out.missing.push_back({f.dll_name, objects[f.from].path, f.from == 0});
      } else if (f.from == 0) {
        undefined.insert(f.dll_name + "!" + f.symbol);
      }
    }
    out.undefined.assign(undefined.begin(), undefined.end());
    const loaded_object& main = objects[0];
    std::vector<std::size_t> bound(objects.size(), 0);
    for (const symbol_binding& b : wl.link.bindings)
      if (b.from == 0 && b.to < objects.size()) ++bound[b.to];
    for (std::size_t k = 0; k < main.needed.size(); ++k) {
      const std::uint32_t dep = k < main.needed_objects.size() ? main.needed_objects[k] : no_object;
      if (k < wl.info[0].needed_delay.size() && wl.info[0].needed_delay[k] &&
          (dep == no_object || dep >= objects.size() || !objects[dep].found()))
        continue;  // an absent delay-load DLL: optional by design
      needed_entry n;
      n.name = std::string(main.needed[k]);
      n.allowed = windows_allowed(n.name);
      if (dep != no_object && dep < objects.size() && objects[dep].found()) {
        const loaded_object& o = objects[dep];
        const winload_object& info = wl.info[dep];
        n.path = o.path;
        n.file = o.file;
        n.rule = to_string(info.rule);
        // Windows' own DLLs, API sets and the C runtimes are the system's;
        // an application DLL (or a debug CRT, which no user has) is not.
        n.allowed = n.allowed || (options_.allow_system_images &&
                                  (info.assumed || (info.kind != dll_class::application &&
                                                    info.kind != dll_class::debug_crt && info.kind != dll_class::main)));
        n.in_prefix = !info.assumed && !o.file.empty() && path_within(canonical(o.file), prefix_);
        n.symbols = bound[dep];
        n.used = true;  // an import table names only DLLs whose functions it imports
      }
      out.needed.push_back(std::move(n));
    }
  }

 private:
  // The object that caused `id` to load. ld.so maps the interpreter itself,
  // so for it this is the first object whose DT_NEEDED names it.
  static std::string requester(const std::vector<loaded_object>& objects, std::uint32_t id) {
    const std::uint32_t loader = objects[id].loader;
    if (loader != no_object && loader < objects.size()) return objects[loader].path;
    for (const auto& o : objects)
      for (std::uint32_t dep : o.needed_objects)
        if (dep == id) return o.path;
    return {};
  }

  const std::string& canonical(const std::string& file) {
    auto it = canonical_.find(file);
    if (it != canonical_.end()) return it->second;
    return canonical_.emplace(file, canonical_or_normal(file)).first->second;
  }

  const prefix_options& options_;
  std::string prefix_;
  std::string cwd_;
  std::unordered_map<std::string, std::string> canonical_;
};

}  // namespace detail

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
      absolute_paths[i] = (!f.empty() && f[0] == '/' ? fs::path(f) : fs::absolute(f, e2)).lexically_normal().string();
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
  } else {
    files = detail::walk_prefix(prefix, report);
  }

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
  report.files.resize(files.size());
  std::vector<std::size_t> lookups(files.size(), 0);
  unsigned jobs = threads;
  if (jobs > files.size()) jobs = static_cast<unsigned>(std::max<std::size_t>(files.size(), 1));
  // Plan: which files each ELF root loads, from closure-only links (the load
  // phase on images that keep only the dynamic section's strings, without
  // their mappings; the search's file system answers are kept for the links
  // below). Each file's use count is the number of roots that load it; a
  // root's link below ends its uses, and a file no pending root needs is let
  // go, so memory follows the roots in flight, not the prefix.
  std::vector<detail::walk_kind> kinds(files.size(), detail::walk_kind::not_elf);
  std::vector<std::vector<object_cache::file_id>> uses(files.size());
  {
    object_cache plan;
    plan.set_closure_only(true);
    plan.share_lookups_with(cache);
    // The plan's images only spare re-reading a file for the next root that
    // loads it: about 4096 of them at a time are plenty (each counts 4 KiB).
    plan.set_limit(std::size_t{16} << 20);
    dynamic_options plan_options = link_options;
    plan_options.bindings = false;
    detail::run_parallel(jobs, files.size(), [&](std::size_t i) {
      // An ELF file (the plan's cache holds it, or its magic says so) is
      // linked from the bytes read here; anything else is sniffed.
      result<dynamic_link> link = make_error(errc::not_found, no_offset, "");
      if (plan.parsed_class_of(files[i]) >= 0) {
        kinds[i] = detail::walk_kind::dynamic;
        link = link_dynamic(files[i], plan_options, plan);
      } else if (auto mapped = link_options.search.root.empty() ? mapped_file::open(files[i])
                                                                : result<mapped_file>(make_error(errc::not_found, no_offset, ""));
                 mapped && mapped->size() >= 4 && std::memcmp(mapped->data(), "\x7f" "ELF", 4) == 0) {
        kinds[i] = detail::walk_kind::dynamic;
        link = link_dynamic(files[i], plan_options, plan, &*mapped);
      } else {
        kinds[i] = detail::sniff_elf_file(files[i], nullptr);
        if (kinds[i] == detail::walk_kind::macho || kinds[i] == detail::walk_kind::pe) return;
        link = link_dynamic(files[i], plan_options, plan);
      }
      if (!link) return;
      auto& ids = uses[i];
      ids = std::move(link->file_ids);
      std::sort(ids.begin(), ids.end());
      ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    });
  }
  for (const auto& ids : uses) cache.expect_use(ids);
  std::atomic<std::size_t> next{0};
  std::mutex progress_lock;
  std::size_t done = 0;
  auto work = [&] {
    // file_verdicts caches canonical paths: one per thread.
    detail::file_verdicts verdicts(options, prefix_canonical, cwd);
    for (std::size_t i = next++; i < files.size(); i = next++) {
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
    }
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
  auto display = [&](const std::string& path) {
    const std::string normal = fs::path(path).lexically_normal().string();
    if (detail::path_within(normal, prefix)) return normal.substr(prefix.size() == 1 ? 1 : prefix.size() + 1);
    return normal;
  };
  auto conda_lookup = [&](const std::string& path) -> std::optional<package_owner> {
    if (conda.empty()) return std::nullopt;
    for (const std::string& candidate : {fs::path(path).lexically_normal().string(), detail::canonical_or_normal(path)}) {
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
    const std::string c = detail::canonical_or_normal(file);
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
      if (seen.insert(detail::canonical_or_normal(file)).second) libraries.push_back({file, display(file), owner.package});
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
