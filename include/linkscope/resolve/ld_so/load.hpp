// linkscope/resolve/ld_so/load.hpp — the load phase of the ld.so emulator:
// which objects a program brings in, in which order, found how
// (glibc 2.36 elf/dl-deps.c _dl_map_object_deps, elf/dl-load.c _dl_map_object,
// elf/rtld.c), then the version check (elf/dl-version.c).
//
//   the main program, then --preload objects, then breadth-first over DT_NEEDED.
//   A name is first matched against what is loaded (every name an object was
//   requested by, its path, its DT_SONAME); a newly found file is matched by
//   device/inode. The PT_INTERP object is known from the start (matched by its
//   path and SONAME) and joins the list where the BFS first needs it. A name that
//   is not found becomes a placeholder, as ld.so's trace mode fakes one.
//   Candidates of the wrong class or machine are skipped (search_path.hpp).
// The search list is the BFS without placeholders; the load order (l_next) is
// the BFS with the interpreter moved right after its predecessor in the search
// list. Objects are numbered in BFS order here; report() renumbers them in
// load order for the result.
//
// Every object comes from the object_cache (ld_so/image.hpp), so a file is
// read once per run however many roots load it.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "linkscope/core/config.hpp"
#include "linkscope/core/mapped_file.hpp"
#include "linkscope/elf/types.hpp"
#include "linkscope/resolve/ld_so/image.hpp"
#include "linkscope/resolve/ld_so/result.hpp"
#include "linkscope/resolve/search_path.hpp"
#include "linkscope/symbols/index.hpp"

// The ld.so emulator's phases are its implementation: they exist where the
// definitions are compiled (core/config.hpp), and a compiled-mode
// translation unit that includes this header gets nothing from it.
#if LINKSCOPE_DEFINITIONS
namespace linkscope {
inline namespace v0 {
namespace resolve {
namespace detail {

// What the loader copies from an image into the object it describes.
template <class ET>
void describe(const object_image<ET>& img, loaded_object& obj) {
  obj.soname = img.soname;
  obj.rpath = img.rpath;
  obj.runpath = img.runpath;
  obj.has_rpath = img.has_rpath;
  obj.has_runpath = img.has_runpath;
  obj.symbolic = img.symbolic;
  obj.nodeflib = img.nodeflib;
  obj.needed = img.needed;
  obj.warnings.insert(obj.warnings.end(), img.warnings.begin(), img.warnings.end());
}

template <class ET>
class loader {
 public:
  using image_ptr = std::shared_ptr<const object_image<ET>>;

  // `target`: the class, data and machine of the objects searched for (the
  // main program's), instead of options.search.target.
  loader(const dynamic_options& options, dynamic_link& out, object_cache& cache, const loader_target& target)
      : options_(options), out_(out), cache_(cache), search_(options.search, target, library_search::borrow_options{}) {
    if (options.search.use_cache) search_.share_cache(cache_.ld_so_cache_for(search_.cache_path()));
    search_.share_probes(&cache_.probes());
    // Room for a typical closure, so that most roots grow no table.
    constexpr std::size_t typical = 16;
    objects_.reserve(typical);
    images_.reserve(typical);
    search_objects_.reserve(typical);
    in_list_.reserve(typical);
    bfs_.reserve(typical);
    by_name_.reserve(3 * typical);
    by_file_.reserve(typical);
  }

  // The closure of `program` (whose image is `main_image`), as _dl_map_object_deps builds it.
  void load(const std::string& program, image_ptr main_image, loaded_object main) {
    const std::string& cwd = search_.options().cwd;
    main.is_main = true;
    main.via = found_via::main_program;
    describe(*main_image, main);
    add_object(std::move(main), std::move(main_image), program, cwd);
    // The interpreter: known from the start, in the list only once needed.
    interp_path_ = images_[0]->interpreter.empty() ? options_.default_interpreter : images_[0]->interpreter;
    const std::string& interp = interp_path_;
    {
      loaded_object rtld;
      rtld.name = interp;
      rtld.path = interp;
      rtld.file = search_.options().root + interp;
      rtld.via = found_via::interpreter;
      rtld.is_interpreter = true;
      image_ptr img = cache_.template open<ET>(rtld.file);
      describe(*img, rtld);
      interpreter_ = std::move(rtld);
      interpreter_image_ = std::move(img);
      if (interpreter_image_->ok) {
        name_loaded(interp_path_, interp_marker);
        if (!interpreter_->soname.empty()) name_loaded(interpreter_->soname, interp_marker);
        by_file_.emplace(file_key(*interpreter_image_), interp_marker);
      }
    }
    // Preloads, then BFS.
    for (const auto& p : options_.preload) {
      const std::uint32_t id = map_object(std::string_view(p), 0);
      if (id != no_object && !in_list_[id]) {
        objects_[id].preloaded = true;
        append_to_list(id);
      }
    }
    for (std::size_t i = 0; i < bfs_.size(); ++i) {
      const std::uint32_t id = bfs_[i];
      const std::size_t n = objects_[id].needed.size();
      objects_[id].needed_objects.reserve(n);
      for (std::size_t k = 0; k < n; ++k) {
        // A view into the image, which images_ keeps: stable as a key.
        const std::string_view name = objects_[id].needed[k];
        const std::uint32_t dep = map_object(name, id);
        objects_[id].needed_objects.push_back(dep);
        if (dep != no_object && !in_list_[dep]) append_to_list(dep);
      }
    }
    if (auto e = search_.cache_error())
      out_.warnings.push_back(std::string(search_.options().cache_file) + ": ignored: " + e->message);
    // The search list is the BFS without placeholders (dl-deps.c drops faked maps);
    // the load order (l_next) is the BFS with the interpreter moved right after its
    // predecessor in the search list (rtld.c).
    for (std::uint32_t id : bfs_)
      if (objects_[id].found()) out_.search_list.push_back(id);
    load_order_ = bfs_;
    if (interp_id_ != no_object) {
      load_order_.erase(std::find(load_order_.begin(), load_order_.end(), interp_id_));
      auto at = std::find(out_.search_list.begin(), out_.search_list.end(), interp_id_);
      if (at != out_.search_list.begin() && at != out_.search_list.end()) {
        auto prev = std::find(load_order_.begin(), load_order_.end(), *(at - 1));
        load_order_.insert(prev + 1, interp_id_);
      } else {
        load_order_.push_back(interp_id_);
      }
    }
  }

  // dl-version.c: every verneed entry must be defined by the object it names.
  void check_versions() {
    for (std::uint32_t id : out_.search_list) {
      const auto& img = *images_[id];
      // In verneed chain order, as dl-version.c walks it (and ldd -v lists it).
      for (const u16 n : img.needed_order) {
        if (n >= img.versions.size()) continue;
        const auto& v = img.versions[n];
        if (v.filename.empty() || v.hash == 0) continue;
        const std::uint32_t target = lookup_loaded(v.filename);
        const bool loaded = target != no_object && objects_[target].found();
        bool have = false;
        if (loaded)
          for (const auto& dv : images_[target]->defined_versions)
            have = have || (dv.hash == v.hash && dv.name == v.name);
        out_.version_needs.push_back({id, loaded ? target : no_object, v.filename, v.name, v.weak, have});
        if (!loaded) continue;  // missing lib reported already
        if (!have && images_[target]->ok) out_.missing_versions.push_back({id, target, v.filename, v.name, v.weak});
      }
    }
  }

  // The result in load order: renumber so that out_.objects is the l_next chain,
  // and keep the mappings the result points into.
  void report() {
    std::vector<std::uint32_t> renum(objects_.size(), no_object);
    for (std::size_t k = 0; k < load_order_.size(); ++k) renum[load_order_[k]] = static_cast<std::uint32_t>(k);
    if (load_order_.size() == objects_.size()) {
      // Every object is in the load order: permute in place, cycle by cycle
      // (no second array of objects).
      std::vector<char> placed(objects_.size(), 0);
      for (std::size_t start = 0; start < objects_.size(); ++start) {
        if (placed[start]) continue;
        loaded_object first = std::move(objects_[start]);
        std::size_t at = start;
        for (;;) {
          placed[at] = 1;
          const std::size_t from = load_order_[at];
          if (from == start) {
            objects_[at] = std::move(first);
            break;
          }
          objects_[at] = std::move(objects_[from]);
          at = from;
        }
      }
    } else {
      std::vector<loaded_object> ordered;
      ordered.reserve(load_order_.size());
      for (std::uint32_t id : load_order_) ordered.push_back(std::move(objects_[id]));
      objects_ = std::move(ordered);
    }
    std::vector<loaded_object>& ordered = objects_;
    auto fix = [&](std::uint32_t& v) {
      if (v != no_object) v = renum[v];
    };
    for (auto& o : ordered) {
      fix(o.loader);
      for (auto& n : o.needed_objects) fix(n);
    }
    for (auto& v : out_.search_list) fix(v);
    for (auto& b : out_.bindings) {
      fix(b.from);
      fix(b.to);
    }
    for (auto& u : out_.undefined) fix(u.from);
    for (auto& u : out_.unused) fix(u);
    for (auto& m : out_.missing_versions) {
      fix(m.from);
      fix(m.target);
    }
    for (auto& m : out_.version_needs) {
      fix(m.from);
      fix(m.target);
    }
    for (auto& ip : out_.interposed)
      for (auto& d : ip.definers) fix(d);
    out_.objects = std::move(ordered);
    for (const auto& img : images_) {
      if (img && img->mapped) out_.files.push_back(img->mapped);
      if (img && img->readable) out_.file_ids.emplace_back(img->device, img->inode);
    }
    if (interpreter_image_ && interpreter_image_->mapped) out_.files.push_back(interpreter_image_->mapped);
    if (interpreter_image_ && interpreter_image_->readable)
      out_.file_ids.emplace_back(interpreter_image_->device, interpreter_image_->inode);
  }

 protected:
  static constexpr std::uint32_t interp_marker = no_object - 1;

  static object_cache::file_id file_key(const object_image<ET>& img) { return {img.device, img.inode}; }

  // `name` is what the object was asked for by, as a view that outlives the
  // loader's names (an image's string, an option, interp_path_); empty when
  // it is the path.
  std::uint32_t add_object(loaded_object obj, image_ptr img, const std::string& path, const std::string& cwd,
                           std::string_view name = {}) {
    const std::uint32_t id = static_cast<std::uint32_t>(objects_.size());
    obj.path = path;
    search_objects_.push_back(std::make_unique<search_object>());
    search_object& so = *search_objects_.back();
    so.name = path;  // heap-held and never moved: the key for the path
    so.origin_cwd = cwd;  // search_.options().cwd: lives as long as the search
    so.origin_pending = true;
    so.has_rpath = obj.has_rpath;
    so.has_runpath = obj.has_runpath;
    so.rpath = obj.rpath;
    so.runpath = obj.runpath;
    so.nodeflib = obj.nodeflib;
    so.is_main = obj.is_main;
    so.loader = obj.loader != no_object ? search_objects_[obj.loader].get() : nullptr;
    if (!so.name.empty()) name_loaded(so.name, id);
    if (!name.empty()) name_loaded(name, id);
    if (!obj.soname.empty()) name_loaded(obj.soname, id);  // a view into the image
    if (img->readable) by_file_.emplace(file_key(*img), id);
    objects_.push_back(std::move(obj));
    images_.push_back(std::move(img));
    in_list_.push_back(0);
    if (objects_.size() == 1) append_to_list(0);
    return id;
  }

  void append_to_list(std::uint32_t id) {
    in_list_[id] = 1;
    bfs_.push_back(id);
  }

  std::uint32_t bring_in_interpreter() {
    // The interpreter becomes a real object the first time something needs it.
    if (interp_id_ != no_object) return interp_id_;
    loaded_object rtld = std::move(*interpreter_);
    image_ptr img = interpreter_image_;
    interpreter_image_.reset();
    const std::string path = rtld.path;
    interp_id_ = add_object(std::move(rtld), std::move(img), path, search_.options().cwd, interp_path_);
    for (std::uint32_t k = 0; k < by_name_.size(); ++k)
      if (by_name_[k] == interp_marker) by_name_[k] = interp_id_;
    for (auto& [k, v] : by_file_)
      if (v == interp_marker) v = interp_id_;
    return interp_id_;
  }

  // The first object a name was given to keeps it.
  void name_loaded(std::string_view name, std::uint32_t id) {
    const auto [at, fresh] = by_name_.insert(name);
    if (fresh) by_name_[at] = id;
  }

  std::uint32_t lookup_loaded(std::string_view name) {
    const auto at = by_name_.find(name);
    if (at == names::npos) return no_object;
    return by_name_[at] == interp_marker ? bring_in_interpreter() : by_name_[at];
  }

  // _dl_map_object for `name` needed by `loader` (an object id); `name` is
  // stable (add_object).
  std::uint32_t map_object(std::string_view name, std::uint32_t loader) {
    if (std::uint32_t id = lookup_loaded(name); id != no_object) return id;
    found_library found = search_.find(name, search_objects_[loader].get(), *search_objects_[0]);
    loaded_object obj;
    obj.name = name;
    obj.loader = loader;
    obj.rejected = std::move(found.rejected);
    if (!found.found()) {
      // Trace mode: a placeholder that later requests of the same name find.
      obj.via = found_via::not_found;
      const std::uint32_t id = static_cast<std::uint32_t>(objects_.size());
      objects_.push_back(std::move(obj));
      if (!placeholder_) placeholder_ = std::make_shared<const object_image<ET>>();
      images_.push_back(placeholder_);
      search_objects_.push_back(std::make_unique<search_object>());
      in_list_.push_back(0);
      name_loaded(name, id);
      return id;
    }
    obj.via = found.via;
    obj.subdir = std::move(found.subdir);
    obj.where = std::move(found.where);
    obj.file = found.file;
    image_ptr img = cache_.template open<ET>(found.file);
    if (img->readable) {
      auto same = by_file_.find(file_key(*img));
      if (same != by_file_.end()) {
        const std::uint32_t id = same->second == interp_marker ? bring_in_interpreter() : same->second;
        name_loaded(name, id);
        return id;
      }
    }
    describe(*img, obj);
    return add_object(std::move(obj), std::move(img), found.path, search_.options().cwd, name);
  }

  const dynamic_options& options_;
  dynamic_link& out_;
  object_cache& cache_;
  library_search search_;
  std::vector<loaded_object> objects_;
  std::vector<image_ptr> images_;
  std::vector<std::unique_ptr<search_object>> search_objects_;
  std::vector<char> in_list_;
  std::vector<std::uint32_t> bfs_;
  std::vector<std::uint32_t> load_order_;
  // Every name an object is known by (requested names, paths, SONAMEs), to
  // its id. The keys are views: see add_object.
  using names = keyed_index<std::string_view, std::uint32_t>;
  names by_name_;
  std::string interp_path_;
  std::unordered_map<object_cache::file_id, std::uint32_t, object_cache::file_id_hash> by_file_;
  std::optional<loaded_object> interpreter_;
  image_ptr interpreter_image_;
  image_ptr placeholder_;
  std::uint32_t interp_id_ = no_object;
};

}  // namespace detail
}  // namespace resolve
}  // namespace v0
}  // namespace linkscope
#endif  // LINKSCOPE_DEFINITIONS
