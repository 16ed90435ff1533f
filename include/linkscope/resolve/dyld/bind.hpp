// linkscope/resolve/dyld/bind.hpp — the bind phase of the dyld emulator:
// where every import of every Mach-O image of the closure binds, as dyld4's
// Loader::resolveSymbol and Loader::hasExportedSymbol decide it.
//
// Each import names a library ordinal (macho/binds.hpp: bind opcodes or
// chained-fixup imports):
//   1..n  the n-th dylib command of the importing image (two-level
//         namespace); the name is looked up in that image's exports, then
//         in the images it re-exports (LC_REEXPORT_DYLIB, a stub's
//         reexported-libraries), depth-first in command order, each image
//         searched once per lookup;
//   0     the importing image itself; -1 the main executable;
//   -2    flat lookup: every image in load order, each in its own exports;
//   -3    weak lookup: weak-definition coalescing over the images that have
//         weak definitions (MH_WEAK_DEFINES), the first in load order, a
//         non-weak definition winning over weak ones.
// An image without MH_TWOLEVEL (flat namespace) looks every import up flat.
// An export-trie entry that re-exports (EXPORT_SYMBOL_FLAGS_REEXPORT) names a
// dependency of its own image by ordinal, and maybe another name (a rename);
// the dependency is asked in the lookup's mode (a flat or coalescing lookup
// stays in that image's own exports), but a renamed lookup follows
// re-exports and starts afresh (its own set of searched images).
// Entries of the weak-bind stream are coalescing, not imports: they bind
// where coalescing finds the name and are never undefined.
//
// A weak import (weak_import) may stay unresolved. Any other import that
// nothing exports is undefined (dyld's "Symbol not found"; a lazy bind
// would abort when called). An import into a system library (not checked)
// binds to it unchecked. An ordinal past the image's dylib count, a
// re-export ordinal out of range, a malformed trie node and a re-export
// chain deeper than dyld_max_reexport_depth are errors naming the image.
//
// Unused dylibs: a dylib command (not a re-export) of a two-level image that
// no import names by ordinal, which ld64 -dead_strip_dylibs would drop.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "linkscope/core/error.hpp"
#include "linkscope/macho/binds.hpp"
#include "linkscope/resolve/dyld/image.hpp"
#include "linkscope/resolve/dyld/load.hpp"
#include "linkscope/resolve/dyld/result.hpp"

namespace linkscope {
inline namespace v0 {
namespace resolve {

inline constexpr std::size_t dyld_max_reexport_depth = 256;

namespace detail {

class dyld_binder {
 public:
  explicit dyld_binder(dyld_state& state) : st_(state), out_(state.out()) {}

  void bind_all() {
    const auto count = static_cast<std::uint32_t>(out_.objects.size());
    marks_.assign(count, 0);
    for (std::uint32_t id = 0; id < count; ++id) {
      const dyld_image* img = st_.image(id);
      if (img == nullptr || img->kind != dyld_image_kind::macho) continue;
      bind_image(id, *img);
    }
  }

 private:
  enum class outcome : std::uint8_t { not_found, found, unchecked };
  struct answer {
    outcome what = outcome::not_found;
    std::uint32_t to = no_object;
    bool weak = false;
  };

  struct binding_key {
    std::uint32_t from, to;
    std::string_view symbol;
    bool operator==(const binding_key& o) const noexcept { return from == o.from && to == o.to && symbol == o.symbol; }
  };
  struct binding_hash {
    std::size_t operator()(const binding_key& k) const noexcept {
      return std::hash<std::string_view>()(k.symbol) ^ (std::size_t{k.from} * 0x9e3779b97f4a7c15ull) ^ (std::size_t{k.to} << 20);
    }
  };

  void bind(std::uint32_t from, const answer& a, std::string_view symbol, bool flat = false) {
    if (a.to == no_object) return;
    if (seen_.insert(binding_key{from, a.to, symbol}).second) out_.bindings.push_back({from, a.to, symbol, {}, false, flat});
  }

  // Is `name` in image `id` (and, when `deep`, the images it re-exports)?
  answer lookup(std::uint32_t id, std::string_view name, bool deep, std::size_t depth) {
    if (id >= marks_.size()) return {};
    if (marks_[id] == generation_) return {};  // searched already in this lookup (dyld's alreadySearched)
    marks_[id] = generation_;
    const dyld_object& obj = out_.objects[id];
    if (obj.kind == dyld_image_kind::system) return {outcome::unchecked, id, false};
    const dyld_image* img = st_.image(id);
    if (img == nullptr) return {};
    if (depth > dyld_max_reexport_depth) {
      st_.error(id, "re-export chain deeper than " + std::to_string(dyld_max_reexport_depth) + " looking up " + std::string(name));
      return {};
    }
    ++out_.lookups;
    auto hit = img->find(name);
    if (!hit) {
      report_once(id, describe(hit.error()));
      return {};
    }
    if (*hit) {
      const dyld_export_hit& h = **hit;
      if (!h.reexport) return {outcome::found, id, h.weak};
      const auto& deps = obj.dependencies;
      if (h.ordinal == 0 || h.ordinal > deps.size()) {
        report_once(id, "re-export ordinal " + std::to_string(h.ordinal) + " out of range (" + std::to_string(deps.size()) +
                            " dylibs) for " + std::string(name));
        return {};
      }
      const std::uint32_t dep = deps[h.ordinal - 1].object;
      if (dep == no_object || !out_.objects[dep].found()) return {};  // re-exported from a missing weak dylib
      const std::string_view target = h.import_name.empty() ? name : h.import_name;
      // The dependency is asked in the same mode, except that a rename
      // promotes a shallow lookup (flat, coalescing) to the two-level one
      // that follows re-exports, and searches afresh (dyld-1378
      // dyld/Loader.cpp, Loader::hasExportedSymbol, nameChanged).
      const bool renamed = target != name;
      if (renamed) ++generation_;
      return lookup(dep, target, deep || renamed, depth + 1);
    }
    if (!deep) return {};
    answer unchecked;
    for (const auto& d : obj.dependencies) {
      if (d.kind != macho::dylib_kind::reexport || d.object == no_object) continue;
      answer a = lookup(d.object, name, true, depth + 1);
      if (a.what == outcome::found) return a;
      if (a.what == outcome::unchecked && unchecked.what != outcome::unchecked) unchecked = a;
    }
    return unchecked;
  }

  answer start(std::uint32_t id, std::string_view name, bool deep) {
    ++generation_;
    return lookup(id, name, deep, 0);
  }

  // Flat lookup: every image in load order, each in its own exports.
  answer flat(std::string_view name) {
    answer unchecked;
    for (std::uint32_t id = 0; id < out_.objects.size(); ++id) {
      if (!out_.objects[id].found()) continue;
      answer a = start(id, name, false);
      if (a.what == outcome::found) return a;
      if (a.what == outcome::unchecked && unchecked.what != outcome::unchecked) unchecked = a;
    }
    return unchecked;
  }

  // Weak coalescing: the first definition in load order among images with
  // weak definitions, a non-weak one winning over weak ones.
  answer coalesce(std::string_view name) {
    answer best;
    for (std::uint32_t id = 0; id < out_.objects.size(); ++id) {
      const dyld_image* img = st_.image(id);
      if (img == nullptr || !img->weak_defines) continue;
      answer a = start(id, name, false);
      if (a.what != outcome::found) continue;
      if (best.what != outcome::found || (best.weak && !a.weak)) best = a;
      if (!best.weak) break;
    }
    return best;
  }

  void report_once(std::uint32_t id, std::string message) {
    if (reported_.insert(id).second) st_.error(id, std::move(message));
  }

  void bind_image(std::uint32_t id, const dyld_image& img) {
    const std::size_t ndeps = out_.objects[id].dependencies.size();
    std::vector<char> used(ndeps + 1, 0);
    const bool main_is_executable = out_.objects[0].filetype == macho::MH_EXECUTE;
    for (const macho::import_entry& e : img.imports) {
      ++out_.imports;
      if (e.kind == macho::import_source::weak_bind) {
        if (e.non_weak_definition) continue;  // announces a strong definition; binds nothing
        bind(id, coalesce(e.symbol), e.symbol);
        continue;
      }
      answer a;
      std::int64_t ordinal = e.library_ordinal;
      if (ordinal > 0 && static_cast<std::uint64_t>(ordinal) > ndeps) {
        report_once(id, "library ordinal " + std::to_string(ordinal) + " past its " + std::to_string(ndeps) +
                            " dylibs (importing " + std::string(e.symbol) + ")");
        continue;
      }
      if (ordinal > 0) used[static_cast<std::size_t>(ordinal)] = 1;
      if (ordinal > 0 && !img.two_level) ordinal = -2;
      if (ordinal > 0) {
        const std::uint32_t target = out_.objects[id].dependencies[static_cast<std::size_t>(ordinal - 1)].object;
        if (target != no_object && out_.objects[target].found()) a = start(target, e.symbol, true);
      } else if (ordinal == 0) {
        a = start(id, e.symbol, true);
      } else if (ordinal == -1) {
        if (main_is_executable) a = start(0, e.symbol, true);
        else a.what = outcome::unchecked;  // the host executable is not part of the closure
      } else if (ordinal == -2) {
        a = flat(e.symbol);
      } else if (ordinal == -3) {
        a = coalesce(e.symbol);
      } else {
        report_once(id, "unknown special library ordinal " + std::to_string(ordinal) + " (importing " +
                            std::string(e.symbol) + ")");
        continue;
      }
      switch (a.what) {
        case outcome::found: bind(id, a, e.symbol, ordinal == -2); break;
        case outcome::unchecked:
          // An import into a system image that is not read. Two-level, its
          // ordinal names the image and the static link checked it there: a
          // binding. Flat, the first unread image is only where the search
          // stopped knowing: no binding is claimed (a Node addon's napi_*
          // come from the node executable, not from libc++).
          ++out_.unchecked;
          if (ordinal != -2) bind(id, a, e.symbol);
          break;
        case outcome::not_found:
          if (!e.weak_import && undefined_.insert(binding_key{id, 0, e.symbol}).second)
            out_.undefined.push_back({id, e.symbol, {}});
          break;
      }
    }
    // Unused dylibs: ordinals no import names (re-exports are part of the interface).
    if (!img.two_level) return;
    const auto& deps = out_.objects[id].dependencies;
    for (std::size_t i = 0; i < deps.size(); ++i) {
      if (used[i + 1] || deps[i].kind == macho::dylib_kind::reexport) continue;
      // ld64.lld writes LC_LOAD_DYLIB and LC_REEXPORT_DYLIB for one -reexport_library: the load is part of the re-export.
      bool reexported = false;
      for (const auto& other : deps)
        reexported = reexported || (other.kind == macho::dylib_kind::reexport && other.install_name == deps[i].install_name);
      if (!reexported) out_.unused.push_back({id, static_cast<std::uint32_t>(i + 1), deps[i].object, deps[i].install_name});
    }
  }

  dyld_state& st_;
  dyld_link& out_;
  std::vector<std::uint32_t> marks_;
  std::uint32_t generation_ = 0;
  std::unordered_set<binding_key, binding_hash> seen_, undefined_;
  std::unordered_set<std::uint32_t> reported_;
};

}  // namespace detail
}  // namespace resolve
}  // namespace v0
}  // namespace linkscope
