// linkscope/resolve/dyld/load.hpp — the load phase of the dyld emulator:
// the closure of a root image, as dyld4 builds it (dyld/Loader.cpp,
// JustInTimeLoader.cpp, DyldProcessConfig.cpp of dyld-1378).
//
// Order. loadDependents(X) first resolves every dylib command of X, in
// command order (each found image is appended to the load order), and only
// then recurses into each dependency in the same order; an image's
// dependencies are resolved once. The chain through which an image was
// first reached (its "rpath stack") is kept as a parent link.
//
// Where an install name is looked for, in order (forEachPath):
//   1. DYLD_FRAMEWORK_PATH dirs + the framework partial path
//      (Foo.framework/Versions/A/Foo) when the name is a framework's, else
//      DYLD_LIBRARY_PATH dirs + the leaf name;
//   2. the name itself, with its @ prefix expanded:
//      @loader_path  the folder of the image holding the load command;
//      @executable_path  the main executable's folder (a leading /.. is
//                    applied to that folder);
//      @rpath        each LC_RPATH of the needing image, then of the image
//                    that loaded it, and so on up to the root, in command
//                    order; an rpath that starts with @loader_path is
//                    expanded with the folder of the image that holds it,
//                    @executable_path with the main executable's;
//   3. the fallbacks: DYLD_FALLBACK_FRAMEWORK_PATH / _LIBRARY_PATH, or, for an
//      image built with an SDK before macOS 13 ("pre-2022"), /Library/Frameworks,
//      /System/Library/Frameworks, resp. /usr/local/lib, /usr/lib.
// An absolute or @rpath name already loaded under that name (its install
// name, or the path it was found at) is not searched again.
// A candidate is the file root + path; X.dylib may be X.tbd, and
// Foo.framework/Versions/A/Foo may be Foo.framework/Foo.tbd (an SDK's
// stubs). It is accepted when it is a dylib (or a stub) of the run's
// architecture, and — with dyld_version_check — when its compatibility
// version is at least the one the load command asks for; otherwise it is
// recorded as rejected and the search goes on (dyld's "tried: ..."). A
// file already loaded (same device and inode) is the same image. A
// candidate under /usr/lib/ or /System/ that is not under the root is a
// system library, found and not checked (the dyld shared cache has it).
// A path found under an image that is outside the root (a root image given
// by its host path) stays outside the root: @loader_path of such an image
// names host folders.
//
// Bad input is an error naming the image (dyld_link::errors): a dependency
// cycle through re-export commands, a closure over dyld_options::max_images
// images. A cycle of load commands is a warning (dyld_link::warnings): dyld
// loads each image once and launches it; none when a link of the cycle is
// upward. LC_LAZY_LOAD_DYLIB is neither loaded nor counted in the library
// ordinals (dyld ignores it; image.hpp). A missing library's warning names
// the image that holds its load command; a candidate that cannot be opened
// for another reason than its absence (a symlink loop) is a rejected
// candidate of that image, with the reason.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <map>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "linkscope/core/error.hpp"
#include "linkscope/macho/fat.hpp"
#include "linkscope/macho/types.hpp"
#include "linkscope/resolve/dyld/image.hpp"
#include "linkscope/resolve/dyld/result.hpp"

#if !defined(_WIN32)
#include <unistd.h>
#endif

namespace linkscope {
inline namespace v0 {
namespace resolve {
namespace detail {

// --- paths, as dyld spells them -------------------------------------------

inline std::string_view dyld_dirname(std::string_view path) noexcept {
  const auto slash = path.rfind('/');
  return slash == std::string_view::npos ? std::string_view() : path.substr(0, slash);
}
inline std::string_view dyld_leaf(std::string_view path) noexcept {
  const auto slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}
inline bool starts_with(std::string_view s, std::string_view prefix) noexcept {
  return s.substr(0, prefix.size()) == prefix;
}
inline bool ends_with(std::string_view s, std::string_view suffix) noexcept {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}
// dyld's concatenatePaths: dir + tail (tail starts with '/'), one slash between.
inline std::string dyld_concat(std::string_view dir, std::string_view tail) {
  std::string out(dir);
  if (!out.empty() && out.back() == '/' && !tail.empty() && tail.front() == '/') out.pop_back();
  out.append(tail);
  return out;
}
// "@loader_path..." (or "@executable_path...") when followed by '/' or the end.
inline bool at_prefix(std::string_view s, std::string_view prefix) noexcept {
  return starts_with(s, prefix) && (s.size() == prefix.size() || s[prefix.size()] == '/');
}
// The framework partial path (getFrameworkPartialPath): /p/Foo.framework/Foo
// -> Foo.framework/Foo, /p/Foo.framework/Versions/A/Foo -> Foo.framework/Versions/A/Foo;
// empty when the path is not a framework's binary.
inline std::string_view framework_partial_path(std::string_view path) noexcept {
  const std::string_view leaf = dyld_leaf(path);
  if (leaf.empty()) return {};
  const std::string direct = "/" + std::string(leaf) + ".framework/" + std::string(leaf);
  if (ends_with(path, direct)) return path.substr(path.size() - direct.size() + 1);
  const std::string marker = "/" + std::string(leaf) + ".framework/Versions/";
  const auto at = path.rfind(marker);
  if (at != std::string_view::npos) {
    const std::string_view rest = path.substr(at + marker.size());  // "A/Foo"
    const auto slash = rest.find('/');
    if (slash != std::string_view::npos && slash > 0 && rest.substr(slash + 1) == leaf) return path.substr(at + 1);
  }
  return {};
}
// Lexically normalised (for display only; files are opened as dyld would open them).
inline std::string normalize_path(std::string_view path) {
  std::vector<std::string_view> parts;
  const bool absolute = !path.empty() && path.front() == '/';
  std::size_t start = 0;
  while (start <= path.size()) {
    auto end = path.find('/', start);
    if (end == std::string_view::npos) end = path.size();
    const std::string_view part = path.substr(start, end - start);
    if (part == "..") {
      if (!parts.empty() && parts.back() != "..") parts.pop_back();
      else if (!absolute) parts.push_back(part);
    } else if (!part.empty() && part != ".") {
      parts.push_back(part);
    }
    start = end + 1;
  }
  std::string out = absolute ? "/" : "";
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i) out.push_back('/');
    out.append(parts[i]);
  }
  return out.empty() ? std::string(".") : out;
}
// Paths the dyld shared cache may hold (dyld's mightBeInSharedCache).
inline bool system_library_path(std::string_view path) noexcept {
  return starts_with(path, "/usr/lib/") || starts_with(path, "/System/Library/") ||
         starts_with(path, "/System/iOSSupport/") || starts_with(path, "/System/DriverKit/");
}
// The .tbd stub names an SDK gives a dylib path.
inline std::vector<std::string> stub_names(std::string_view path) {
  std::vector<std::string> out;
  if (ends_with(path, ".dylib")) out.push_back(std::string(path.substr(0, path.size() - 6)) + ".tbd");
  const std::string_view partial = framework_partial_path(path);
  if (!partial.empty()) {
    out.push_back(std::string(path) + ".tbd");
    const std::string_view leaf = dyld_leaf(path);
    const auto framework = path.size() - partial.size();  // start of Foo.framework/...
    out.push_back(std::string(path.substr(0, framework)) + std::string(leaf) + ".framework/" + std::string(leaf) + ".tbd");
  }
  return out;
}

// --- the loader's state ----------------------------------------------------

struct dyld_slot {
  std::shared_ptr<const dyld_file> file;
  std::size_t index = 0;           // image of the file
  bool under_root = true;          // its path is in the root's view
  bool deps_set = false;
  bool on_stack = false;
  bool upward_edge = false;        // reached on the stack through an LC_LOAD_UPWARD_DYLIB
  std::uint32_t chain_parent = no_object;  // the image that loaded its dependencies' chain
  const dyld_image* image() const noexcept { return file && index < file->images.size() ? &file->images[index] : nullptr; }
};

struct dyld_candidate {
  std::string path;  // in dyld's view
  bool under_root = true;
  dyld_found_via via = dyld_found_via::path;
  std::uint32_t where = no_object;
  std::string_view rpath;
};

inline dyld_candidate candidate_of(std::string path, bool under_root, dyld_found_via via) {
  dyld_candidate c;
  c.path = std::move(path);
  c.under_root = under_root;
  c.via = via;
  return c;
}

class dyld_state {
 public:
  dyld_state(const dyld_options& options, dyld_link& out, dyld_cache& cache) : opts_(options), out_(out), cache_(cache) {
    while (!opts_.root.empty() && opts_.root.back() == '/') opts_.root.pop_back();
#if !defined(_WIN32)
    if (!opts_.root.empty() && opts_.root.front() != '/') {
      char buffer[4096];
      if (::getcwd(buffer, sizeof buffer) != nullptr) opts_.root = std::string(buffer) + "/" + opts_.root;
    }
#endif
  }

  const dyld_options& options() const noexcept { return opts_; }
  dyld_link& out() noexcept { return out_; }
  const std::vector<dyld_slot>& slots() const noexcept { return slots_; }
  const dyld_image* image(std::uint32_t id) const noexcept { return id < slots_.size() ? slots_[id].image() : nullptr; }
  std::string_view arch() const noexcept { return arch_; }

  // The root image: its host path. Errors are for a root that cannot be read.
  result<void> load_root(const std::string& file);
  // The closure: every dependency resolved, depth-first as dyld4 recurses.
  void load_all();
  // Keep the mappings alive in the result.
  void keep_files();

  void error(std::uint32_t id, std::string message) {
    out_.errors.push_back(display(id) + ": " + std::move(message));
  }
  std::string display(std::uint32_t id) const {
    if (id >= out_.objects.size()) return "?";
    const auto& o = out_.objects[id];
    return o.path.empty() ? o.name : o.path;
  }

 private:
  // Host path of a path in dyld's view.
  std::string host(const std::string& path, bool under_root) const {
    return under_root && !opts_.root.empty() ? opts_.root + path : path;
  }
  // A host path as dyld's view: the root stripped when it is under the root.
  std::pair<std::string, bool> view_of(std::string file) const;
  void resolve_dependencies(std::uint32_t id);
  std::uint32_t resolve(std::uint32_t requester, const dyld_dependency_decl& dep, bool& looked);
  template <class F>
  bool for_each_candidate(std::uint32_t requester, std::string_view name, F&& visit);
  std::uint32_t try_candidate(std::uint32_t requester, const dyld_dependency_decl& dep, const dyld_candidate& c);
  std::uint32_t add_object(std::shared_ptr<const dyld_file> file, std::size_t index, bool under_root, dyld_object o);
  void remember(const std::string& name, std::uint32_t id) { by_name_.emplace(name, id); }

  dyld_options opts_;
  dyld_link& out_;
  dyld_cache& cache_;
  std::vector<dyld_slot> slots_;
  std::unordered_map<std::string, std::uint32_t> by_name_;  // install names and paths already resolved
  std::map<std::tuple<std::uint64_t, std::uint64_t, std::size_t>, std::uint32_t> by_file_;
  std::unordered_map<std::string_view, std::pair<std::shared_ptr<const dyld_file>, std::size_t>> inlined_;
  std::uint32_t cputype_ = 0;
  std::string arch_;
  std::string executable_;           // the main executable's path in dyld's view; "" = unknown
  bool executable_under_root_ = true;
  bool too_many_ = false;
};

inline std::pair<std::string, bool> dyld_state::view_of(std::string file) const {
  if (file.empty()) return {file, false};
  if (file.front() != '/') {
#if !defined(_WIN32)
    char buffer[4096];
    if (::getcwd(buffer, sizeof buffer) != nullptr) file = std::string(buffer) + "/" + file;
#endif
  }
  if (!opts_.root.empty() && starts_with(file, opts_.root + "/")) return {file.substr(opts_.root.size()), true};
  return {file, false};
}

inline std::uint32_t dyld_state::add_object(std::shared_ptr<const dyld_file> file, std::size_t index, bool under_root,
                                            dyld_object o) {
  const auto id = static_cast<std::uint32_t>(out_.objects.size());
  dyld_slot slot;
  slot.file = std::move(file);
  slot.index = index;
  slot.under_root = under_root;
  if (const dyld_image* img = slot.image()) {
    o.kind = img->kind;
    o.install_name = img->install_name;
    o.current_version = img->current_version;
    o.compatibility_version = img->compatibility_version;
    o.filetype = img->kind == dyld_image_kind::macho ? img->filetype : 0;
    for (const auto& d : img->dependencies) o.dependencies.push_back({d.install_name, d.kind, no_object});
    for (std::string_view lazy : img->lazy_dylibs)
      o.warnings.push_back("LC_LAZY_LOAD_DYLIB " + std::string(lazy) +
                           ": not loaded at launch and not counted in library ordinals, as dyld does");
    if (!img->install_name.empty()) by_name_.emplace(std::string(img->install_name), id);
    if (slot.file->mapped) by_file_.emplace(std::make_tuple(slot.file->device, slot.file->inode, index), id);
    // The other documents of a stub are libraries it re-exports (inlined).
    if (img->kind == dyld_image_kind::tbd && index == 0)
      for (std::size_t k = 1; k < slot.file->images.size(); ++k)
        inlined_.emplace(slot.file->images[k].install_name, std::make_pair(slot.file, k));
  }
  if (!o.path.empty()) by_name_.emplace(o.path, id);
  out_.objects.push_back(std::move(o));
  slots_.push_back(std::move(slot));
  return id;
}

inline result<void> dyld_state::load_root(const std::string& file) {
  if (!opts_.arch.empty()) {
    if (opts_.arch == "x86_64") cputype_ = macho::CPU_TYPE_X86_64;
    else if (opts_.arch == "arm64" || opts_.arch == "arm64e") cputype_ = macho::CPU_TYPE_ARM64;
    else if (opts_.arch == "i386") cputype_ = macho::CPU_TYPE_X86;
    else return make_error(errc::usage, no_offset, "unknown architecture (x86_64, arm64, arm64e, i386)");
  }
  auto mapped = mapped_file::open(file);
  if (!mapped) return mapped.error();
  const byte_view bytes = mapped->bytes();
  if (!macho::is_macho(bytes) && !macho::is_fat(bytes)) {
    if (bytes.size() < 4) return bytes.fail(errc::truncated, 0, "Mach-O magic truncated");
    return bytes.fail(errc::bad_magic, 0, "not a Mach-O file");
  }
  // The root's own errors are the answer's error, with their offset.
  if (auto l = macho::read_linkage_slice(bytes, cputype_); !l) return l.error();
  auto f = cache_.open(file, cputype_, opts_.arch);
  if (!f->ok() || f->images.empty()) return make_error(errc::malformed, no_offset, "cannot read the root image");
  if (cputype_ == 0) {
    // The architecture of the root (the first slice of a universal file).
    auto l = macho::read_linkage_slice(bytes, 0);
    cputype_ = l->cputype;
    arch_ = macho::arch_name(l->cputype, l->cpusubtype);
  } else {
    arch_ = opts_.arch;
  }
  auto [path, under_root] = view_of(file);
  dyld_object o;
  o.name = file;
  o.path = path;
  o.file = file;
  o.via = dyld_found_via::main;
  add_object(f, 0, under_root, std::move(o));
  if (!opts_.executable.empty()) {
    auto [exe, exe_under_root] = view_of(opts_.executable);
    executable_ = exe;
    executable_under_root_ = exe_under_root;
  } else if (f->images[0].filetype == macho::MH_EXECUTE) {
    executable_ = path;
    executable_under_root_ = under_root;
  }
  return ok();
}

template <class F>
bool dyld_state::for_each_candidate(std::uint32_t requester, std::string_view name, F&& visit) {
  const dyld_slot& req = slots_[requester];
  const std::string_view partial = framework_partial_path(name);
  const std::string_view leaf = dyld_leaf(name);
  // 1. DYLD_FRAMEWORK_PATH / DYLD_LIBRARY_PATH.
  if (!partial.empty()) {
    for (const auto& dir : opts_.framework_path)
      if (visit(candidate_of(dyld_concat(dir, "/" + std::string(partial)), true, dyld_found_via::framework_path)))
        return true;
  } else {
    for (const auto& dir : opts_.library_path)
      if (visit(candidate_of(dyld_concat(dir, "/" + std::string(leaf)), true, dyld_found_via::library_path)))
        return true;
  }
  // 2. The name, its @ prefix expanded.
  auto loader_dir = [&](std::uint32_t id) { return std::string(dyld_dirname(out_.objects[id].path)); };
  auto executable_expanded = [&](std::string_view rest, std::string& path) -> bool {
    if (executable_.empty()) return false;
    std::string dir(dyld_dirname(executable_));
    // Leading "/.." components go up from the executable's folder (expandAndNormalizeAtExecutablePath).
    while (starts_with(rest, "/..") && (rest.size() == 3 || rest[3] == '/')) {
      const auto up = dir.rfind('/');
      if (up == std::string::npos || up == 0) break;
      dir.resize(up);
      rest.remove_prefix(3);
    }
    path = dyld_concat(dir, rest);
    return true;
  };
  if (at_prefix(name, "@loader_path")) {
    if (visit(candidate_of(dyld_concat(loader_dir(requester), name.substr(12)), req.under_root,
                             dyld_found_via::loader_path)))
      return true;
  } else if (at_prefix(name, "@executable_path")) {
    std::string path;
    if (executable_expanded(name.substr(16), path) &&
        visit(candidate_of(path, executable_under_root_, dyld_found_via::executable_path)))
      return true;
  } else if (starts_with(name, "@rpath/")) {
    const std::string_view tail = name.substr(6);
    std::size_t depth = 0;
    for (std::uint32_t link = requester; link != no_object && depth <= slots_.size();
         link = slots_[link].chain_parent, ++depth) {
      const dyld_image* img = slots_[link].image();
      if (img == nullptr) continue;
      for (std::string_view r : img->rpaths) {
        dyld_candidate c;
        c.via = dyld_found_via::rpath;
        c.where = link;
        c.rpath = r;
        if (at_prefix(r, "@loader_path")) {
          c.path = dyld_concat(dyld_concat(loader_dir(link), r.substr(12)), tail);
          c.under_root = slots_[link].under_root;
        } else if (at_prefix(r, "@executable_path")) {
          std::string path;
          if (!executable_expanded(r.substr(16), path)) continue;
          c.path = dyld_concat(path, tail);
          c.under_root = executable_under_root_;
        } else if (!r.empty() && r.front() == '/') {
          c.path = dyld_concat(r, tail);
        } else {
          continue;  // a relative or unknown @ rpath: not used
        }
        if (visit(c)) return true;
      }
    }
  } else if (!name.empty() && name.front() == '/') {
    if (visit(candidate_of(std::string(name), true, dyld_found_via::path))) return true;
  }
  // 3. Fallbacks.
  const dyld_image* img = req.image();
  const bool pre2022 = img != nullptr && img->sdk < 0x000d0000u;
  const bool defaults = opts_.default_fallbacks && pre2022;
  if (!partial.empty()) {
    std::vector<std::string> dirs = opts_.fallback_framework_path;
    if (dirs.empty() && defaults) dirs = {"/Library/Frameworks", "/System/Library/Frameworks"};
    for (const auto& dir : dirs) {
      std::string path = dyld_concat(dir, "/" + std::string(partial));
      if (path != name && visit(candidate_of(path, true, dyld_found_via::fallback))) return true;
    }
  } else {
    std::vector<std::string> dirs = opts_.fallback_library_path;
    if (dirs.empty() && defaults) dirs = {"/usr/local/lib", "/usr/lib"};
    for (const auto& dir : dirs) {
      std::string path = dyld_concat(dir, "/" + std::string(leaf));
      if (path != name && visit(candidate_of(path, true, dyld_found_via::fallback))) return true;
    }
  }
  return false;
}

inline std::uint32_t dyld_state::try_candidate(std::uint32_t requester, const dyld_dependency_decl& dep,
                                               const dyld_candidate& c) {
  const std::string shown = normalize_path(c.path);
  if (auto it = by_name_.find(shown); it != by_name_.end()) return it->second;
  std::vector<std::string> files{host(c.path, c.under_root)};
  for (auto& stub : stub_names(c.path)) files.push_back(host(stub, c.under_root));
  for (const std::string& file : files) {
    auto f = cache_.open(file, cputype_, arch_);
    if (!f->mapped) {
      if (!f->absent) out_.objects[requester].rejected.push_back({file, f->reason});  // e.g. a symlink loop
      continue;
    }
    if (!f->ok() || f->images.empty()) {
      out_.objects[requester].rejected.push_back({file, f->reason});
      continue;
    }
    const dyld_image& img = f->images[0];
    if (!img.is_dylib) {
      out_.objects[requester].rejected.push_back({file, "not a dylib"});
      continue;
    }
    if (!img.applies) {
      out_.objects[requester].rejected.push_back({file, "stub without the architecture"});
      continue;
    }
    if (auto same = by_file_.find(std::make_tuple(f->device, f->inode, std::size_t{0})); same != by_file_.end()) {
      by_name_.emplace(shown, same->second);
      return same->second;
    }
    if (opts_.version_check != dyld_version_check::none && dep.compatibility != 0xffffffffu &&
        img.compatibility_version < dep.compatibility &&
        (opts_.version_check == dyld_version_check::strict || img.kind != dyld_image_kind::macho ||
         img.minos < 0x000a0e00u)) {
      out_.objects[requester].rejected.push_back({file, "incompatible library version"});
      continue;
    }
    dyld_object o;
    o.name = std::string(dep.install_name);
    o.path = shown;
    o.file = file;
    o.via = c.via;
    if (c.where != no_object) {
      o.where = display(c.where);
      o.rpath = std::string(c.rpath);
    }
    o.loader = requester;
    return add_object(f, 0, c.under_root, std::move(o));
  }
  // Only a name that is itself a system path (or an absolute rpath's) stands
  // for a shared-cache library: a fallback made of a leaf name does not.
  if (c.under_root && opts_.system_not_checked && system_library_path(c.path) &&
      (c.via == dyld_found_via::path || c.via == dyld_found_via::rpath)) {
    dyld_object o;
    o.name = std::string(dep.install_name);
    o.path = shown;
    o.via = dyld_found_via::system;
    o.kind = dyld_image_kind::system;
    o.loader = requester;
    return add_object(nullptr, 0, true, std::move(o));
  }
  return no_object;
}

inline std::uint32_t dyld_state::resolve(std::uint32_t requester, const dyld_dependency_decl& dep, bool& looked) {
  looked = false;
  const std::string name(dep.install_name);
  // An absolute or @rpath name already loaded under that name.
  if (!name.empty() && (name.front() == '/' || starts_with(name, "@rpath/"))) {
    if (auto it = by_name_.find(name); it != by_name_.end()) return it->second;
  }
  // A document inlined in a stub that re-exports it.
  if (auto in = inlined_.find(dep.install_name); in != inlined_.end()) {
    dyld_object o;
    o.name = name;
    o.path = name;
    o.file = out_.objects[requester].file;
    o.via = dyld_found_via::inlined;
    o.loader = requester;
    return add_object(in->second.first, in->second.second, slots_[requester].under_root, std::move(o));
  }
  looked = true;
  std::uint32_t found = no_object;
  for_each_candidate(requester, dep.install_name, [&](const dyld_candidate& c) {
    if (out_.objects.size() >= opts_.max_images) return true;
    found = try_candidate(requester, dep, c);
    return found != no_object;
  });
  if (found != no_object) by_name_.emplace(name, found);
  return found;
}

inline void dyld_state::resolve_dependencies(std::uint32_t id) {
  slots_[id].deps_set = true;
  const dyld_image* img = slots_[id].image();
  if (img == nullptr) return;
  for (std::size_t i = 0; i < img->dependencies.size(); ++i) {
    if (out_.objects.size() >= opts_.max_images) {
      if (!too_many_) error(id, "closure larger than " + std::to_string(opts_.max_images) + " images");
      too_many_ = true;
      return;
    }
    const dyld_dependency_decl& dep = img->dependencies[i];
    const bool weak = dep.kind == macho::dylib_kind::weak;
    bool looked = false;
    std::uint32_t target = resolve(id, dep, looked);
    if (target == no_object) {
      // A missing library: one not-found object per install name.
      dyld_object o;
      o.name = std::string(dep.install_name);
      o.loader = id;
      o.weak = weak;
      // The message names the image that holds the load command, as dyld's
      // "Library not loaded: NAME / Referenced from: IMAGE" does.
      const std::string from = " (load command of " + display(id) + ")";
      if (starts_with(dep.install_name, "@rpath/")) {
        bool any = false;
        for (std::uint32_t link = id; link != no_object && !any; link = slots_[link].chain_parent)
          if (const dyld_image* li = slots_[link].image()) any = !li->rpaths.empty();
        o.warnings.push_back((any ? "@rpath never resolves: no LC_RPATH of the load chain finds it"
                                  : "@rpath never resolves: no LC_RPATH in the load chain") + from);
      } else if (starts_with(dep.install_name, "@executable_path") && executable_.empty()) {
        o.warnings.push_back("@executable_path without a main executable (give --executable)" + from);
      } else {
        o.warnings.push_back("not found" + from);
      }
      target = add_object(nullptr, 0, true, std::move(o));
      by_name_.emplace(std::string(dep.install_name), target);
    } else if (!weak) {
      out_.objects[target].weak = false;
    }
    out_.objects[id].dependencies[i].object = target;
    // A dependency on an image whose dependencies are being resolved up the
    // chain (or on itself) is a cycle, unless a link of it is upward. dyld
    // loads each image once (dyld-1378 dyld/JustInTimeLoader.cpp,
    // JustInTimeLoader::loadDependents returns when dependentsSet), so a
    // cycle of load commands launches: a warning. A cycle through re-exports
    // is an error (ld64 refuses to link against one).
    if (slots_[target].on_stack && dep.kind != macho::dylib_kind::upward) {
      bool upward = false;
      for (std::uint32_t link = id; link != target && link != no_object && !upward; link = slots_[link].chain_parent)
        upward = slots_[link].upward_edge;
      const bool reexport = dep.kind == macho::dylib_kind::reexport;
      std::string message = target == id ? std::string(reexport ? "re-exports itself (" : "loads itself (") +
                                               std::string(dep.install_name) + ")"
                                         : std::string("dependency cycle: ") + (reexport ? "re-exports " : "loads ") +
                                               display(target) + ", which is loading it";
      if (reexport)
        error(id, std::move(message));
      else if (!upward)
        out_.warnings.push_back(display(id) + ": " + message);
    }
  }
}

inline void dyld_state::load_all() {
  struct frame {
    std::uint32_t id;
    std::size_t next;
  };
  std::vector<frame> stack;
  stack.push_back({0, 0});
  slots_[0].on_stack = true;
  resolve_dependencies(0);
  while (!stack.empty()) {
    frame& top = stack.back();
    const auto& deps = out_.objects[top.id].dependencies;
    if (top.next >= deps.size()) {
      slots_[top.id].on_stack = false;
      stack.pop_back();
      continue;
    }
    const bool upward = deps[top.next].kind == macho::dylib_kind::upward;
    const std::uint32_t dep = deps[top.next++].object;
    if (dep == no_object || slots_[dep].deps_set || !out_.objects[dep].checked()) continue;
    slots_[dep].chain_parent = top.id;
    slots_[dep].upward_edge = upward;
    slots_[dep].on_stack = true;
    stack.push_back({dep, 0});  // `top` is invalid from here
    resolve_dependencies(dep);
  }
}

inline void dyld_state::keep_files() {
  std::unordered_set<const mapped_file*> seen;
  for (const auto& s : slots_)
    if (s.file && s.file->mapped && seen.insert(s.file->mapped.get()).second) out_.files.push_back(s.file->mapped);
}

}  // namespace detail
}  // namespace resolve
}  // namespace v0
}  // namespace linkscope
