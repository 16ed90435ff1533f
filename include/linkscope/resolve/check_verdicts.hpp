// linkscope/resolve/check_verdicts.hpp — the judge phase of the whole-
// prefix check (resolve/check.hpp): one file's verdicts from its link on its
// platform's loader. judge() reads an ELF root's ld.so link (missing, unused,
// overlinked, system, rpath, undefined), judge_macho() a dyld link, judge_pe()
// a Windows loader link; the allow-lists decide what is never a finding. The
// package-level verdicts (ownership, overdepending, duplicates) are made after
// every file is judged, in check.hpp and resolve/package_findings.hpp.
#pragma once

#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "linkscope/core/config.hpp"
#include "linkscope/resolve/check_result.hpp"
#include "linkscope/resolve/pe_load.hpp"
#include "linkscope/resolve/search_path.hpp"

#if LINKSCOPE_DEFINITIONS
#include <algorithm>
#include <cstdint>
#include <set>
#include <utility>

#include "linkscope/macho/linkage.hpp"
#include "linkscope/resolve/dyld.hpp"
#include "linkscope/resolve/dynamic.hpp"
#endif  // LINKSCOPE_DEFINITIONS

namespace linkscope {
inline namespace v0 {
namespace resolve {

#if LINKSCOPE_DEFINITIONS
namespace detail {
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
    // What the file binds, per target object: its distinct name[@version]
    // labels. Distinct (name, version) pairs are the same labels unless a
    // name holds an '@' itself; only then are labels made to count them.
    using name_version = std::pair<std::string_view, std::string_view>;
    std::vector<std::vector<name_version>> bound(objects.size());
    std::set<std::string> undefined;
    for (const symbol_binding& b : link.bindings) {
      if (b.from != 0 || b.to == 0 || b.to >= objects.size()) continue;
      bound[b.to].emplace_back(b.symbol, b.version);
    }
    auto label_of = [](const name_version& p) {
      std::string label(p.first);
      if (!p.second.empty()) label.append("@").append(p.second);
      return label;
    };
    auto labels_of = [&](const std::vector<name_version>& pairs) {
      std::vector<std::string> labels;
      labels.reserve(pairs.size());
      for (const auto& p : pairs) labels.push_back(label_of(p));
      std::sort(labels.begin(), labels.end());
      labels.erase(std::unique(labels.begin(), labels.end()), labels.end());
      return labels;
    };
    std::vector<std::size_t> bound_count(objects.size(), 0);
    for (std::size_t id = 0; id < bound.size(); ++id) {
      auto& v = bound[id];
      std::sort(v.begin(), v.end());
      v.erase(std::unique(v.begin(), v.end()), v.end());
      const bool at_in_name = std::any_of(v.begin(), v.end(), [](const name_version& p) {
        return p.first.find('@') != std::string_view::npos;
      });
      bound_count[id] = at_in_name ? labels_of(v).size() : v.size();
    }
    for (const undefined_reference& u : link.undefined)
      if (u.from == 0) undefined.insert(label_of({u.symbol, u.version}));
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
        n.symbols = bound_count[dep];
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
      e.symbols = labels_of(bound[id]);
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
          r.expanded = lexically_normal_path(*expanded);
          if (r.expanded.size() > 1 && r.expanded.back() == '/') r.expanded.pop_back();
          r.outside = !path_within(paths_(options_.search.root + r.expanded), prefix_);
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
        r.expanded = lexically_normal_path(expanded);
        if (r.expanded.size() > 1 && r.expanded.back() == '/') r.expanded.pop_back();
        r.outside = !path_within(paths_(options_.dyld.root + r.expanded), prefix_);
      }
      out.rpaths.push_back(std::move(r));
    }
    const std::string_view id = linkage->install_name;
    if (linkage->has_id && !id.empty() && id[0] == '/' && !id.starts_with("/usr/lib/") && !id.starts_with("/System/")) {
      rpath_entry r;
      r.tag = "LC_ID_DYLIB";
      r.entry = std::string(id);
      r.expanded = r.entry;
      r.outside = !path_within(paths_(options_.dyld.root + r.entry), prefix_);
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
    return canonical_.emplace(file, paths_(file)).first->second;
  }

  const prefix_options& options_;
  std::string prefix_;
  std::string cwd_;
  std::unordered_map<std::string, std::string> canonical_;
  canonical_paths paths_;
};

}  // namespace detail
#endif  // LINKSCOPE_DEFINITIONS

}  // namespace resolve
}  // namespace v0
}  // namespace linkscope
