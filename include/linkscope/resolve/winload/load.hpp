// linkscope/resolve/winload/load.hpp — the Windows loader's implementation
// (declared in resolve/pe_load.hpp): the search, the closure, API sets, the
// import check with forwarders, the classification.
//
// Rules learned from the Windows documentation ("Dynamic-link library search
// order", "API sets", "KnownDLLs") and from Wine's loader behaviour
// (dlls/ntdll/loader.c: forwarders are split at the last '.', a module name
// without a dot gets ".dll"; imports by name are looked up by hint, then by
// a binary search of the sorted name table, case-sensitively; an ordinal
// outside the table, or a zero slot, is no export). Only coff/ reads PE
// records: this file works on pe::image's accessors.
#pragma once

#include <algorithm>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "linkscope/core/config.hpp"
#include "linkscope/resolve/pe_load.hpp"

namespace linkscope {
inline namespace v0 {
namespace resolve {
namespace winload_detail {

inline std::string lower(std::string_view s) { return pe::apiset_schema::lower(s); }

inline bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

// The KnownDLLs of Windows 10/11 (HKLM\...\Session Manager\KnownDLLs), plus
// ntdll and kernelbase, which every process has.
inline constexpr std::string_view known_dlls[] = {
    "advapi32.dll", "clbcatq.dll",  "combase.dll",  "comdlg32.dll", "coml2.dll",    "difxapi.dll",
    "gdi32.dll",    "gdiplus.dll",  "imagehlp.dll", "imm32.dll",    "kernel32.dll", "msctf.dll",
    "msvcrt.dll",   "normaliz.dll", "nsi.dll",      "ole32.dll",    "oleaut32.dll", "psapi.dll",
    "rpcrt4.dll",   "sechost.dll",  "setupapi.dll", "shcore.dll",   "shell32.dll",  "shlwapi.dll",
    "user32.dll",   "wldap32.dll",  "wow64.dll",    "wow64win.dll", "ws2_32.dll",   "ntdll.dll",
    "kernelbase.dll"};

// Other DLLs in System32 of every Windows 10/11 (used when no Windows tree
// is given: they are assumed present, their exports unchecked).
inline constexpr std::string_view system_dlls[] = {
    "ucrtbase.dll", "bcrypt.dll",   "crypt32.dll",  "dbghelp.dll",  "version.dll",  "winmm.dll",
    "iphlpapi.dll", "userenv.dll",  "comctl32.dll", "opengl32.dll", "dwmapi.dll",   "uxtheme.dll",
    "secur32.dll",  "ncrypt.dll",   "winhttp.dll",  "wininet.dll",  "cfgmgr32.dll", "powrprof.dll",
    "dnsapi.dll",   "mswsock.dll",  "netapi32.dll", "dxgi.dll",     "d3d11.dll",    "d3d12.dll",
    "d3d9.dll",     "dwrite.dll",   "d2d1.dll",     "winspool.drv", "mpr.dll",      "mscoree.dll",
    "oleacc.dll",   "propsys.dll",  "wintrust.dll", "wtsapi32.dll", "hid.dll",      "msimg32.dll",
    "glu32.dll",    "credui.dll",   "dbgeng.dll",   "bcryptprimitives.dll", "msvcp_win.dll",
    "win32u.dll",   "gdi32full.dll", "usp10.dll",   "avrt.dll",     "mfplat.dll",   "ntmarta.dll",
    "rstrtmgr.dll", "setupapi.dll", "urlmon.dll",   "wevtapi.dll",  "xinput1_4.dll", "api-ms-win-core-path-l1-1-0.dll"};

inline bool in_list(std::string_view lname, const std::string_view* begin, const std::string_view* end) {
  return std::find(begin, end, lname) != end;
}

}  // namespace winload_detail

LINKSCOPE_FUNC bool builtin_known_dll(std::string_view name) {
  const std::string l = winload_detail::lower(name);
  return winload_detail::in_list(l, std::begin(winload_detail::known_dlls), std::end(winload_detail::known_dlls));
}

LINKSCOPE_FUNC std::string builtin_apiset_host(std::string_view contract) {
  using winload_detail::starts_with;
  const std::string l = winload_detail::lower(contract);
  if (starts_with(l, "api-ms-win-crt-")) return "ucrtbase.dll";
  if (starts_with(l, "api-ms-win-core-rtlsupport-") || starts_with(l, "api-ms-win-core-apiquery-"))
    return "ntdll.dll";
  if (starts_with(l, "api-ms-win-core-") || starts_with(l, "api-ms-win-eventing-") ||
      starts_with(l, "api-ms-win-security-base-") || starts_with(l, "api-ms-win-base-"))
    return "kernelbase.dll";
  if (starts_with(l, "api-ms-win-security-") || starts_with(l, "api-ms-win-service-")) return "advapi32.dll";
  if (starts_with(l, "api-ms-win-shcore-")) return "shcore.dll";
  if (starts_with(l, "api-ms-win-downlevel-kernel32-")) return "kernel32.dll";
  return "";
}

LINKSCOPE_FUNC dll_class classify_dll(std::string_view name, dll_rule rule) {
  const std::string l = winload_detail::lower(name);
  if (rule == dll_rule::main) return dll_class::main;
  // The C runtimes as windows.hpp's classify_crt names them (the floors use
  // it too); MinGW's runtime DLLs are classed by where they were found.
  if (const auto crt = classify_crt(l)) {
    switch (crt->flavour) {
      case crt_flavour::ucrt: return dll_class::ucrt;
      case crt_flavour::vcredist: return dll_class::vc_redist;
      case crt_flavour::debug: return dll_class::debug_crt;
      case crt_flavour::msvcrt: return dll_class::msvcrt;
      case crt_flavour::mingw: break;
    }
  }
  if (pe::is_apiset_name(l)) return dll_class::api_set;
  if (rule == dll_rule::known_dlls || rule == dll_rule::system32 || rule == dll_rule::windows_dir ||
      rule == dll_rule::system_list)
    return dll_class::system;
  return dll_class::application;
}

namespace winload_detail {

// One PE file as the loader reads it (winload_cache holds it; it never
// changes once made, except that the export index is built on first use).
struct pe_file {
  error failure{};  // cannot be read, or no PE image
  std::shared_ptr<const mapped_file> mapped;
  pe::image image;
  std::vector<pe::imported_dll> dlls[2];  // the imports, then the delay-load imports
  error dlls_failure[2]{};
  std::vector<std::string> assemblies;    // "NAME VERSION" per manifest dependentAssembly
  error manifest_failure{};
  bool il_only = false;                   // a CLR header flagged ILONLY: the loader binds mscoree.dll only
  error clr_failure{};                    // a CLR header that cannot be read (then: not IL-only)

  struct export_index {
    std::vector<pe::export_entry> exports;
    std::unordered_map<std::string_view, std::size_t> by_name;
    std::unordered_map<u32, std::size_t> by_ordinal;
    error failure{};
  };
  // name -> export, ordinal -> export; built once, by whichever thread asks first.
  const export_index& index() const {
    std::call_once(index_once_, [this] {
      auto exps = image.exports();
      if (!exps) {
        index_.failure = exps.error();
        return;
      }
      index_.exports = std::move(*exps);
      for (std::size_t i = 0; i < index_.exports.size(); ++i) {
        if (!index_.exports[i].name.empty()) index_.by_name.emplace(index_.exports[i].name, i);
        index_.by_ordinal.emplace(index_.exports[i].ordinal, i);
      }
    });
    return index_;
  }

 private:
  mutable std::once_flag index_once_;
  mutable export_index index_;
};

// A System32 folder's API set schema (apisetschema.dll), when it has one.
struct system_tree {
  bool have_schema = false;
  pe::apiset_schema schema;
  std::string warning;  // the schema could not be read
};

inline const error* failed(const error& e) { return e.code == errc::ok ? nullptr : &e; }

}  // namespace winload_detail

LINKSCOPE_FUNC std::shared_ptr<const winload_detail::pe_file> winload_cache::open(const std::string& path) {
  using file_ptr = std::shared_ptr<const winload_detail::pe_file>;
  {
    std::lock_guard<std::mutex> hold(lock_);
    if (auto it = by_path_.find(path); it != by_path_.end()) {
      ++hits_;
      return it->second;
    }
  }
  auto f = std::make_shared<winload_detail::pe_file>();
  auto mapped = mapped_file::open(path);
  if (!mapped) {
    f->failure = mapped.error();
    std::lock_guard<std::mutex> hold(lock_);
    return by_path_.emplace(path, file_ptr(std::move(f))).first->second;
  }
  const std::pair<std::uint64_t, std::uint64_t> id{mapped->device(), mapped->inode()};
  {
    // The same file under another path (a link, or "dir/./x.dll").
    std::lock_guard<std::mutex> hold(lock_);
    if (auto same = by_file_.find(id); same != by_file_.end()) {
      ++hits_;
      return by_path_.emplace(path, same->second).first->second;
    }
  }
  f->mapped = std::make_shared<const mapped_file>(std::move(*mapped));
  if (auto img = pe::image::parse(f->mapped->bytes())) {
    f->image = *img;
    for (int pass = 0; pass < 2; ++pass) {
      auto dlls = pass == 0 ? f->image.imports() : f->image.delay_imports();
      if (dlls) f->dlls[pass] = std::move(*dlls);
      else f->dlls_failure[pass] = dlls.error();
    }
    if (auto manifests = f->image.manifests()) {
      for (const byte_view m : *manifests)
        for (const auto& a : pe::manifest_dependencies(
                 std::string_view(reinterpret_cast<const char*>(m.data()), m.size())))
          f->assemblies.push_back(std::string(a.name).append(" ").append(a.version));
    } else {
      f->manifest_failure = manifests.error();
    }
    if (f->image.is_managed()) {
      if (auto clr = f->image.clr()) f->il_only = clr->il_only();
      else f->clr_failure = clr.error();
    }
  } else {
    f->failure = img.error();
  }
  std::lock_guard<std::mutex> hold(lock_);
  auto [same, fresh] = by_file_.emplace(id, file_ptr(std::move(f)));
  if (fresh) ++files_;
  else ++hits_;  // another thread read it meanwhile: keep the first
  return by_path_.emplace(path, same->second).first->second;
}

LINKSCOPE_FUNC std::shared_ptr<const winload_detail::dir_listing> winload_cache::listing(const std::string& dir) {
  {
    std::lock_guard<std::mutex> hold(lock_);
    if (auto it = dirs_.find(dir); it != dirs_.end()) return it->second;
  }
  auto entries = std::make_shared<winload_detail::dir_listing>();
  std::error_code ec;
  for (std::filesystem::directory_iterator d(dir.empty() ? "." : dir, ec), end; !ec && d != end; d.increment(ec))
    entries->emplace(winload_detail::lower(d->path().filename().string()), d->path().filename().string());
  std::lock_guard<std::mutex> hold(lock_);
  return dirs_.emplace(dir, std::move(entries)).first->second;
}

LINKSCOPE_FUNC std::shared_ptr<const winload_detail::system_tree> winload_cache::tree(const std::string& system32) {
  {
    std::lock_guard<std::mutex> hold(lock_);
    if (auto it = trees_.find(system32); it != trees_.end()) return it->second;
  }
  auto t = std::make_shared<winload_detail::system_tree>();
  const auto entries = listing(system32);
  if (auto e = entries->find("apisetschema.dll"); e != entries->end()) {
    const std::string path = (std::filesystem::path(system32) / e->second).string();
    const auto f = open(path);
    if (!winload_detail::failed(f->failure)) {
      if (auto schema = pe::apiset_schema::read(f->image)) {
        t->schema = std::move(*schema);
        t->have_schema = true;
      } else {
        t->warning = path + ": API set schema: " + std::string(schema.error().message);
      }
    }
  }
  std::lock_guard<std::mutex> hold(lock_);
  return trees_.emplace(system32, std::move(t)).first->second;
}

namespace winload_detail {

// One object of this root's closure: the file it is (none for an object
// not found, an assumed system DLL or an API set), and whether this root
// has used its export index yet (its warning is the object's own).
struct module {
  std::shared_ptr<const pe_file> file;
  bool indexed = false;
};

class loader {
 public:
  loader(const winload_options& options, windows_link& out, winload_cache& cache)
      : options_(options), out_(out), cache_(cache) {
    if (!options.windows_root.empty()) {
      system32_ = options.windows_root;
      windows_ = options.windows_dir.empty() ? std::filesystem::path(system32_).parent_path().string()
                                             : options.windows_dir;
      // The API set schema of this Windows tree.
      tree_ = cache_.tree(system32_);
      if (!tree_->warning.empty()) out_.link.warnings.push_back(tree_->warning);
    }
    for (const std::string& k : options.known_dlls) extra_known_.insert(lower(k));
  }

  result<void> load_root(const std::string& file) {
    auto f = cache_.open(file);
    if (const error* e = failed(f->failure)) return *e;
    const pe::image* img = &f->image;
    loaded_object main;
    main.name = std::filesystem::path(file).filename().string();
    main.path = main.file = file;
    main.via = found_via::main_program;
    main.is_main = true;
    winload_object info;
    info.rule = dll_rule::main;
    info.kind = dll_class::main;
    info.machine = img->machine();
    info.managed = img->is_managed();
    out_.root_managed = info.managed;
    out_.root_il_only = f->il_only;
    machine_ = img->machine();
    module_dir_ = std::filesystem::path(file).parent_path().string();
    if (module_dir_.empty()) module_dir_ = ".";
    app_dir_ = options_.executable.empty() ? module_dir_
                                           : std::filesystem::path(options_.executable).parent_path().string();
    if (app_dir_.empty()) app_dir_ = ".";
    add(std::move(main), std::move(info), module{std::move(f), false});
    return ok();
  }

  // The root's import and delay-import directories, or the error that makes
  // them unreadable (an RVA outside every section, a table past the end).
  result<void> root_tables() const {
    const std::shared_ptr<const pe_file>& f = modules_.front().file;
    if (f->il_only) return ok();  // never read: the loader stops at mscoree.dll
    for (int pass = 0; pass < 2; ++pass)
      if (const error* e = failed(f->dlls_failure[pass])) return *e;
    return ok();
  }

  // Breadth-first over every object's imports (normal, then delay-load),
  // checking each object's imports once its own DLLs are known. Forwarders
  // may load more DLLs, which join the queue.
  void run() {
    for (std::size_t i = 0; i < out_.link.objects.size(); ++i) expand(static_cast<std::uint32_t>(i));
    for (std::size_t i = 0; i < out_.link.objects.size(); ++i) {
      expand(static_cast<std::uint32_t>(i));
      if (options_.check_imports) check(static_cast<std::uint32_t>(i));
    }
    // An object reached only through delay-load imports.
    std::vector<char> hard(out_.link.objects.size(), 0);
    std::vector<std::uint32_t> work{0};
    hard[0] = 1;
    while (!work.empty()) {
      const std::uint32_t o = work.back();
      work.pop_back();
      const auto& obj = out_.link.objects[o];
      for (std::size_t k = 0; k < obj.needed_objects.size(); ++k) {
        const std::uint32_t d = obj.needed_objects[k];
        const bool delay = k < out_.info[o].needed_delay.size() && out_.info[o].needed_delay[k];
        if (d == no_object || delay || hard[d]) continue;
        hard[d] = 1;
        work.push_back(d);
      }
      std::vector<std::uint32_t> also = out_.info[o].forwards_to;
      if (out_.info[o].host != no_object) also.push_back(out_.info[o].host);
      for (const std::uint32_t d : also)
        if (d != no_object && !hard[d]) {
          hard[d] = 1;
          work.push_back(d);
        }
    }
    for (std::size_t i = 0; i < hard.size(); ++i) out_.info[i].delay_only = !hard[i];
    for (auto& m : modules_)
      if (m.file) out_.link.files.push_back(m.file->mapped);
  }

 private:
  std::uint32_t add(loaded_object obj, winload_object info, module mod) {
    const auto id = static_cast<std::uint32_t>(out_.link.objects.size());
    // Side-by-side assemblies its manifest names (reported, not searched:
    // WinSxS is not part of a root given here).
    if (mod.file) {
      info.assemblies = mod.file->assemblies;
      info.il_only = mod.file->il_only;
      if (const error* e = failed(mod.file->manifest_failure))
        obj.warnings.push_back(std::string("manifest: ") + e->message);
      if (const error* e = failed(mod.file->clr_failure)) obj.warnings.push_back(std::string("CLR header: ") + describe(*e));
    }
    by_name_.emplace(key_of(obj.name), id);
    out_.link.objects.push_back(std::move(obj));
    out_.info.push_back(std::move(info));
    modules_.push_back(std::move(mod));
    expanded_.push_back(0);
    checked_.push_back(0);
    return id;
  }

  // How the loader names a module: lower case, ".dll" added when there is no dot.
  static std::string key_of(std::string_view name) {
    std::string k = lower(name);
    if (k.find('.') == std::string::npos) k += ".dll";
    return k;
  }

  // A file named `name` (any case) in `dir`.
  std::optional<std::string> find_in(const std::string& dir, std::string_view name) {
    const auto entries = cache_.listing(dir);
    auto e = entries->find(lower(name));
    if (e == entries->end()) return std::nullopt;
    return (std::filesystem::path(dir) / e->second).string();
  }

  bool known(const std::string& lname) const {
    return builtin_known_dll(lname) || extra_known_.count(lname) != 0;
  }

  // The folders to search, in order, with their rules.
  std::vector<std::pair<std::string, dll_rule>> search_order() const {
    std::vector<std::pair<std::string, dll_rule>> dirs;
    switch (options_.mode) {
      case load_mode::program:
        dirs.emplace_back(app_dir_, dll_rule::app_dir);
        break;
      case load_mode::altered:
        dirs.emplace_back(module_dir_, dll_rule::module_dir);
        break;
      case load_mode::python:
        dirs.emplace_back(module_dir_, dll_rule::module_dir);
        if (!options_.executable.empty()) dirs.emplace_back(app_dir_, dll_rule::app_dir);
        for (const auto& d : options_.dll_dirs) dirs.emplace_back(d, dll_rule::dll_dir);
        if (!system32_.empty()) dirs.emplace_back(system32_, dll_rule::system32);
        return dirs;
    }
    if (!system32_.empty()) dirs.emplace_back(system32_, dll_rule::system32);
    if (!windows_.empty()) dirs.emplace_back(windows_, dll_rule::windows_dir);
    if (!options_.current_dir.empty()) dirs.emplace_back(options_.current_dir, dll_rule::current_dir);
    for (const auto& d : options_.path) dirs.emplace_back(d, dll_rule::path);
    return dirs;
  }

  // The object for DLL `name` imported by object `from`: loaded already,
  // an API set, or searched for. Never fails: not found is an object too.
  std::uint32_t resolve_dll(std::string_view name, std::uint32_t from) {
    const std::string lname = key_of(name);
    if (auto it = by_name_.find(lname); it != by_name_.end()) return it->second;
    loaded_object obj;
    obj.name = std::string(name);
    if (obj.name.find('.') == std::string::npos) obj.name += ".dll";  // a forwarder's module
    obj.loader = from;
    winload_object info;
    module mod;
    if (pe::is_apiset_name(lname)) {
      info.rule = dll_rule::api_set;
      info.kind = classify_dll(lname, dll_rule::api_set);
      std::optional<std::string> host;
      if (tree_ && tree_->have_schema) host = tree_->schema.host(lname, out_.link.objects[from].name);
      if (!host) {
        std::string b = builtin_apiset_host(lname);
        if (!b.empty()) host = b;
      }
      if (!host || host->empty()) {
        // A set with no host is not there. Windows and wine then fail a
        // static import of it, ext- sets included (Microsoft's advice is to
        // delay-load an extension set and ask IsApiSetImplemented); wine 8
        // prints "Library ext-ms-... not found". Only an ext- set without a
        // schema to look it up in cannot be told: it may be hosted on the
        // real system, so it is "not present (optional)", not a finding.
        const bool unknowable = starts_with(lname, "ext-") && !(tree_ && tree_->have_schema);
        info.optional_absent = unknowable;
        if (unknowable) obj.via = found_via::path;
        return add(std::move(obj), std::move(info), std::move(mod));
      }
      obj.via = found_via::path;
      const std::uint32_t id = add(std::move(obj), std::move(info), std::move(mod));
      const std::uint32_t host_id = resolve_dll(*host, from);
      out_.info[id].host = host_id;
      out_.link.objects[id].path = out_.link.objects[host_id].path;
      out_.link.objects[id].file = out_.link.objects[host_id].file;
      if (!out_.link.objects[host_id].found()) out_.link.objects[id].via = found_via::not_found;
      return id;
    }
    std::vector<std::pair<std::string, dll_rule>> dirs;
    // The host program is a loaded module under its base name: a .node that
    // imports node.exe binds to the executable that loaded it.
    if (!options_.executable.empty() && key_of(std::filesystem::path(options_.executable).filename().string()) == lname)
      dirs.emplace_back(app_dir_, dll_rule::executable);
    if (known(lname) && !system32_.empty()) dirs.emplace_back(system32_, dll_rule::known_dlls);
    // A KnownDLL is never searched for: without a Windows tree it is the
    // system's copy, whatever the application folder holds.
    const bool known_assumed = known(lname) && system32_.empty();
    if (!known_assumed)
      for (auto& d : search_order()) dirs.push_back(std::move(d));
    for (const auto& [dir, rule] : dirs) {
      auto path = find_in(dir, lname);
      if (!path) continue;
      auto f = cache_.open(*path);
      if (const error* e = failed(f->failure)) {
        obj.rejected.push_back({*path, e->message});
        continue;
      }
      const pe::image* img = &f->image;
      if (img->machine() != machine_) {
        obj.rejected.push_back({*path, "a PE image for another machine"});
        continue;
      }
      obj.path = obj.file = *path;
      obj.via = found_via::path;
      info.rule = rule;
      info.kind = classify_dll(lname, rule);
      info.machine = img->machine();
      info.managed = img->is_managed();
      mod.file = std::move(f);
      return add(std::move(obj), std::move(info), std::move(mod));
    }
    // No Windows tree: a known or listed system DLL is assumed present.
    if (system32_.empty() && (known(lname) || in_list(lname, std::begin(system_dlls), std::end(system_dlls)))) {
      obj.via = found_via::default_dirs;
      obj.path = obj.name;
      info.rule = known(lname) ? dll_rule::known_dlls : dll_rule::system_list;
      info.kind = classify_dll(lname, info.rule);
      info.assumed = true;
    }
    return add(std::move(obj), std::move(info), std::move(mod));
  }

  void expand(std::uint32_t id) {
    if (expanded_[id]) return;
    expanded_[id] = 1;
    const std::shared_ptr<const pe_file> file = modules_[id].file;
    if (!file) return;
    if (file->il_only) {
      // IL-only: the CLR, not the loader, binds what it needs; the loader
      // loads mscoree.dll for its entry point and stops.
      const std::uint32_t target = resolve_dll(mscoree, id);
      out_.link.objects[id].needed.push_back(mscoree);
      out_.link.objects[id].needed_objects.push_back(target);
      out_.info[id].needed_delay.push_back(false);
      return;
    }
    for (int pass = 0; pass < 2; ++pass) {
      if (const error* e = failed(file->dlls_failure[pass])) {
        out_.link.objects[id].warnings.push_back(std::string(pass == 0 ? "imports: " : "delay imports: ") +
                                                 describe(*e));
        continue;
      }
      for (const pe::imported_dll& dll : file->dlls[pass]) {
        const std::uint32_t target = resolve_dll(dll.name, id);
        out_.link.objects[id].needed.push_back(dll.name);
        out_.link.objects[id].needed_objects.push_back(target);
        out_.info[id].needed_delay.push_back(pass == 1);
      }
    }
  }

  // Object `id`'s export index (its file's, shared through the cache); the
  // first use in this root reports a broken export table on the object.
  const pe_file::export_index& indexed(std::uint32_t id) {
    module& m = modules_[id];
    const pe_file::export_index& index = m.file->index();
    if (!m.indexed) {
      m.indexed = true;
      if (const error* e = failed(index.failure))
        out_.link.objects[id].warnings.push_back(std::string("exports: ") + describe(*e) +
                                                 "; imports from it are not checked");
    }
    return index;
  }

  struct lookup {
    import_problem problem = import_problem::missing_export;
    bool found = false;
    bool unchecked = false;        // an assumed system DLL
    std::uint32_t object = no_object;
    std::string chain;             // forwarders followed
    std::uint32_t cycle_object = no_object;  // forwarder-cycle: the object whose export starts the cycle
    u64 cycle_offset = 0;                    // ... the file offset of its export address table entry
  };

  // Find `name` (or `ordinal`) in object `id`, following API sets and forwarders.
  lookup find_export(std::uint32_t id, std::string_view name, std::optional<u16> ordinal, std::uint32_t from,
                     int depth) {
    lookup r;
    for (int hops = 0; id != no_object && out_.info[id].host != no_object && hops < 8; ++hops) id = out_.info[id].host;
    r.object = id;
    if (id == no_object || !out_.link.objects[id].found()) {
      r.problem = depth == 0 ? import_problem::missing_dll : import_problem::forwarder_missing;
      return r;
    }
    if (out_.info[id].assumed || out_.info[id].optional_absent) {
      r.found = true;
      r.unchecked = true;
      return r;
    }
    const pe_file::export_index& m = indexed(id);
    if (failed(m.failure)) {  // an unreadable export table (a warning with its offset): nothing to check against
      r.found = true;
      r.unchecked = true;
      return r;
    }
    std::size_t index = 0;
    if (ordinal) {
      auto it = m.by_ordinal.find(*ordinal);
      if (it == m.by_ordinal.end()) {
        r.problem = depth == 0 ? import_problem::missing_export : import_problem::forwarder_missing;
        return r;
      }
      index = it->second;
    } else {
      auto it = m.by_name.find(name);
      if (it == m.by_name.end()) {
        r.problem = depth == 0 ? import_problem::missing_export : import_problem::forwarder_missing;
        return r;
      }
      index = it->second;
    }
    const pe::export_entry& e = m.exports[index];
    if (e.forwarder.empty()) {
      r.found = true;
      return r;
    }
    // An export already on this lookup's path starts a cycle (the chain then
    // shows its forwarder once more; first_loop trims it); a path too long
    // to follow is blamed on the export where it stops.
    if (depth == 0) visiting_.clear();
    const bool again = std::find(visiting_.begin(), visiting_.end(), std::pair<std::uint32_t, std::size_t>(id, index)) !=
                       visiting_.end();
    if (again || depth >= 64) {
      r.problem = import_problem::forwarder_cycle;
      r.chain = std::string(e.forwarder);
      r.cycle_object = id;
      r.cycle_offset = e.address_offset;
      return r;
    }
    visiting_.emplace_back(id, index);
    auto target = pe::split_forwarder(e.forwarder);
    if (!target) {
      r.problem = import_problem::forwarder_missing;
      r.chain = std::string(e.forwarder);
      visiting_.pop_back();
      return r;
    }
    const std::uint32_t next = resolve_dll(target->module, id);
    auto& forwards = out_.info[id].forwards_to;
    if (std::find(forwards.begin(), forwards.end(), next) == forwards.end()) forwards.push_back(next);
    expand(next);
    lookup inner = find_export(next, target->name, target->ordinal, from, depth + 1);
    inner.chain = std::string(e.forwarder) + (inner.chain.empty() ? "" : " -> " + inner.chain);
    if (!inner.found && inner.problem == import_problem::missing_dll) inner.problem = import_problem::forwarder_missing;
    if (!visiting_.empty()) visiting_.pop_back();
    return inner;
  }

  // "a -> b -> a -> b ..." up to the first repeated hop: "a -> b -> a".
  static std::string first_loop(const std::string& chain) {
    std::vector<std::string_view> hops;
    std::string_view rest(chain);
    while (!rest.empty()) {
      const std::size_t arrow = rest.find(" -> ");
      const std::string_view hop = rest.substr(0, arrow);
      const bool repeat = std::find(hops.begin(), hops.end(), hop) != hops.end();
      hops.push_back(hop);
      if (repeat || arrow == std::string_view::npos) break;
      rest.remove_prefix(arrow + 4);
    }
    std::string out;
    for (std::size_t i = 0; i < hops.size(); ++i) out.append(i ? " -> " : "").append(hops[i]);
    return out;
  }

  // A forwarder cycle: its chain up to the first repeated hop, and the file
  // and export address table entry of the export that starts it.
  void blame_cycle(import_finding& f, const lookup& r) const {
    if (f.problem != import_problem::forwarder_cycle) return;
    f.detail = first_loop(f.detail);
    if (r.cycle_object == no_object) return;
    f.cycle_at = r.cycle_object;
    f.cycle = diagnostic(error{errc::malformed, r.cycle_offset, "export address table entry starts a forwarder cycle"},
                         out_.link.objects[r.cycle_object].path);
  }

  // An IL-only image's one import: mscoree.dll's _CorExeMain (a program)
  // or _CorDllMain (a DLL).
  void check_il_only(std::uint32_t id, const pe_file& file) {
    const std::uint32_t target =
        out_.link.objects[id].needed_objects.empty() ? no_object : out_.link.objects[id].needed_objects[0];
    const std::string_view entry = file.image.is_dll() ? std::string_view("_CorDllMain") : std::string_view("_CorExeMain");
    import_finding f;
    f.from = id;
    f.dll = target;
    f.dll_name = std::string(mscoree);
    if (target == no_object || !out_.link.objects[target].found()) {
      f.problem = import_problem::missing_dll;
      out_.findings.push_back(std::move(f));
      return;
    }
    lookup r = find_export(target, entry, std::nullopt, id, 0);
    if (r.found) {
      if (!r.unchecked && r.object != no_object) {
        symbol_binding b;
        b.from = id;
        b.to = r.object;
        b.symbol = entry;
        out_.link.bindings.push_back(b);
      }
      return;
    }
    f.problem = r.problem;
    f.symbol = std::string(entry);
    f.detail = std::move(r.chain);
    blame_cycle(f, r);
    out_.findings.push_back(std::move(f));
  }

  void check(std::uint32_t id) {
    const std::shared_ptr<const pe_file> file = modules_[id].file;
    if (checked_[id] || !file) return;
    checked_[id] = 1;
    if (file->il_only) {
      check_il_only(id, *file);
      return;
    }
    std::size_t k = 0;
    for (int pass = 0; pass < 2; ++pass) {
      if (failed(file->dlls_failure[pass])) continue;
      for (const pe::imported_dll& dll : file->dlls[pass]) {
        const std::uint32_t target = k < out_.link.objects[id].needed_objects.size()
                                         ? out_.link.objects[id].needed_objects[k]
                                         : no_object;
        ++k;
        bool dll_reported = false;
        for (const pe::imported_function& fn : dll.functions) {
          std::string symbol(fn.name);
          if (fn.ordinal) symbol = std::string("#").append(std::to_string(*fn.ordinal));
          if (target == no_object || (!out_.link.objects[target].found() && !out_.info[target].optional_absent)) {
            if (!dll_reported) {
              import_finding f;
              f.problem = import_problem::missing_dll;
              f.from = id;
              f.dll = target;
              f.dll_name = std::string(dll.name);
              f.delay = dll.delay_load;
              out_.findings.push_back(std::move(f));
              dll_reported = true;
            }
            continue;
          }
          lookup r = find_export(target, fn.name, fn.ordinal, id, 0);
          if (r.found) {
            if (!r.unchecked && r.object != no_object) {
              symbol_binding b;
              b.from = id;
              b.to = r.object;
              if (fn.ordinal) {
                out_.strings.push_back(symbol);
                b.symbol = out_.strings.back();
              } else {
                b.symbol = fn.name;
              }
              out_.link.bindings.push_back(b);
            }
            continue;
          }
          import_finding f;
          f.problem = r.problem;
          f.from = id;
          f.dll = target;
          f.dll_name = std::string(dll.name);
          f.symbol = std::move(symbol);
          f.delay = dll.delay_load;
          f.detail = std::move(r.chain);
          blame_cycle(f, r);
          out_.findings.push_back(std::move(f));
        }
      }
    }
  }

  static constexpr std::string_view mscoree = "mscoree.dll";

  const winload_options& options_;
  windows_link& out_;
  winload_cache& cache_;
  std::string system32_, windows_, module_dir_, app_dir_;
  std::shared_ptr<const system_tree> tree_;  // the API set schema of system32_
  u16 machine_ = 0;
  std::unordered_set<std::string> extra_known_;
  std::unordered_map<std::string, std::uint32_t> by_name_;
  std::deque<module> modules_;
  std::vector<char> expanded_, checked_;
  std::vector<std::pair<std::uint32_t, std::size_t>> visiting_;  // (object, export) on find_export's path
};

}  // namespace winload_detail

LINKSCOPE_FUNC result<windows_link, diagnostic> load_windows(const std::string& file, const winload_options& options,
                                                             winload_cache& cache) {
  windows_link out;
  winload_detail::loader l(options, out, cache);
  // The root: a PE image, or an error naming it. Its own import tables must
  // be readable: without them there is no answer, only a wrong empty one.
  if (auto r = l.load_root(file); !r) return diagnostic(r.error(), file);
  if (auto r = l.root_tables(); !r) return diagnostic(r.error(), file);
  // The closure, breadth-first; every import against the exports it binds to.
  l.run();
  return out;
}

LINKSCOPE_FUNC result<windows_link, diagnostic> load_windows(const std::string& file, const winload_options& options) {
  winload_cache cache;
  return load_windows(file, options, cache);
}

}  // namespace resolve
}  // namespace v0
}  // namespace linkscope
