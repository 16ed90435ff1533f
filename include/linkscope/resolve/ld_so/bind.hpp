// linkscope/resolve/ld_so/bind.hpp — the bind phase of the ld.so emulator:
// where every symbol reference of the closure binds (glibc 2.36
// elf/dl-reloc.c RESOLVE_MAP, elf/dl-lookup.c _dl_lookup_symbol_x,
// do_lookup_x, check_match), for every relocation with a symbol, in every
// object but the interpreter, as under LD_BIND_NOW:
//   - the relocation's lookup class is ld.so's elf_machine_type_class for the
//     object's machine (elf::reloc_classifier); NONE/RELATIVE/IRELATIVE look
//     nothing up;
//   - a reference to a STB_LOCAL or hidden/internal symbol binds locally, unseen;
//   - the scope is the global search list (the BFS order), preceded by the object
//     itself when it has DT_SYMBOLIC / DF_SYMBOLIC;
//   - a definition matches when st_value != 0 (or SHN_ABS, or STT_TLS), its type is
//     NOTYPE/OBJECT/FUNC/COMMON/TLS/GNU_IFUNC, and — for PLT-class lookups — it is
//     not SHN_UNDEF (an executable's undefined symbol with a PLT address does
//     satisfy GLOB_DAT references);
//   - versions: a versioned reference (verneed index) matches the same name+hash,
//     or an unversioned definition unless the reference is hidden or the definition
//     has the hidden bit; an unversioned reference takes versym index 1/2, or the
//     single non-hidden versioned definition of that object;
//   - STB_WEAK binds like STB_GLOBAL; hidden definitions are skipped; STB_GNU_UNIQUE
//     binds to the first definition that was bound;
//   - a COPY-class lookup skips the executable;
//   - a reference whose own symbol is STV_PROTECTED binds to itself when the lookup
//     found another object ("protected symbol" in LD_DEBUG output);
//   - an unresolved non-weak reference is "undefined" (ldd -r); weak ones vanish.
// The lookup goes through one index of all definitions of all loaded objects,
// grouped by name in scope order (built in one pass; no per-object hash walks).
// Then ldd -u's unused direct dependencies, and the interposed names.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string_view>
#include <unordered_map>
#include <vector>
#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "linkscope/core/bytes.hpp"
#include "linkscope/core/config.hpp"
#include "linkscope/core/hash.hpp"
#include "linkscope/elf/dynamic.hpp"
#include "linkscope/elf/types.hpp"
#include "linkscope/resolve/ld_so/image.hpp"
#include "linkscope/resolve/ld_so/load.hpp"
#include "linkscope/resolve/ld_so/result.hpp"

// The ld.so emulator's phases are its implementation: they exist where the
// definitions are compiled (core/config.hpp), and a compiled-mode
// translation unit that includes this header gets nothing from it.
#if LINKSCOPE_DEFINITIONS
namespace linkscope {
inline namespace v0 {
namespace resolve {
namespace detail {

inline void prefetch([[maybe_unused]] const void* p) noexcept {
#if defined(__GNUC__) || defined(__clang__)
  __builtin_prefetch(p);
#endif
}

// Reserve `n` elements and pre-fault them for writing (MADV_POPULATE_WRITE): the
// big arrays of the index are written once, and one call is far cheaper than
// a page fault per 4 KiB.
template <class T>
void reserve_populated(std::vector<T>& v, std::size_t n) {
  v.reserve(n);
#if defined(__linux__)
  const std::size_t bytes = n * sizeof(T);
  if (bytes < (std::size_t{1} << 20)) return;
  const auto page = static_cast<std::uintptr_t>(4096);
  const auto begin = (reinterpret_cast<std::uintptr_t>(v.data()) + page - 1) & ~(page - 1);
  const auto end = (reinterpret_cast<std::uintptr_t>(v.data()) + bytes) & ~(page - 1);
  if (end > begin) ::madvise(reinterpret_cast<void*>(begin), end - begin, 23 /* MADV_POPULATE_WRITE */);
#endif
}

// All definitions of the closure, grouped by name, each group in scope order.
struct definition_index {
  struct slot {
    std::uint32_t hash;
    std::uint32_t group;  // no_object = empty
  };
  struct entry {
    std::uint32_t object;  // position in the scope
    std::uint32_t symidx;
  };
  std::vector<slot> slots;
  std::vector<std::uint32_t> group_start;  // size groups + 1
  std::vector<entry> entries;
  std::vector<std::string_view> group_name;
  std::uint64_t mask = 0;

  std::size_t memory_bytes() const noexcept {
    return slots.capacity() * sizeof(slot) + group_start.capacity() * 4 + entries.capacity() * sizeof(entry) +
           group_name.capacity() * sizeof(std::string_view);
  }
  std::size_t home(std::uint32_t h) const noexcept {
    return static_cast<std::size_t>((static_cast<std::uint64_t>(h) * 0x9E3779B97F4A7C15ull) >> (64 - bits));
  }
  std::uint32_t find(std::string_view name, std::uint32_t h) const noexcept {
    if (slots.empty()) return no_object;
    std::size_t i = home(h);
    for (;;) {
      const slot& s = slots[i];
      if (s.group == no_object) return no_object;
      if (s.hash == h && group_name[s.group] == name) return s.group;
      i = (i + 1) & mask;
    }
  }
  void prefetch(std::uint32_t h) const noexcept {
    if (!slots.empty()) resolve::detail::prefetch(&slots[home(h)]);
  }
  std::uint32_t insert(std::string_view name, std::uint32_t h) {
    std::size_t i = home(h);
    for (;;) {
      slot& s = slots[i];
      if (s.group == no_object) {
        s.hash = h;
        s.group = static_cast<std::uint32_t>(group_name.size());
        group_name.push_back(name);
        return s.group;
      }
      if (s.hash == h && group_name[s.group] == name) return s.group;
      i = (i + 1) & mask;
    }
  }
  void reserve(std::size_t n) {
    bits = 3;
    while ((std::size_t{1} << bits) < n + n / 2 + 8) ++bits;
    reserve_populated(slots, std::size_t{1} << bits);
    slots.assign(std::size_t{1} << bits, slot{0, no_object});
    mask = (std::uint64_t{1} << bits) - 1;
    reserve_populated(group_name, n);
  }
  unsigned bits = 3;
};

template <class ET>
class binder : public loader<ET> {
  using base = loader<ET>;
  using base::images_;
  using base::objects_;
  using base::options_;
  using base::out_;
  using base::load_order_;

 public:
  using Sym = typename ET::Sym;
  using base::base;

  // Every relocation of the closure (or of the main program only, when
  // options.bind_dependencies is false), then ldd -u and the interposed names.
  void bind() {
    // The scope position of every object (for DT_SYMBOLIC lookups).
    scope_pos_.assign(objects_.size(), no_object);
    for (std::uint32_t pos = 0; pos < out_.search_list.size(); ++pos) scope_pos_[out_.search_list[pos]] = pos;
    // One index of every definition of the closure pays off when every
    // object is relocated (or interposition is asked); for the root's
    // relocations alone, probing each object's own definitions (cached with
    // its image across roots) is far cheaper than indexing the closure per
    // root. Both give the same candidates in the same order.
    probe_scope_ = !options_.bind_dependencies && !options_.interposition;
    if (probe_scope_) {
      scope_defs_.clear();
      for (const std::uint32_t id : out_.search_list) scope_defs_.push_back(&images_[id]->own_definitions());
    } else {
      build_index();
    }
    // Bindings: at most one per relocation with a symbol, and in practice about
    // one per .dynsym entry (each (symbol, class) pair binds once per object).
    // Most relocations of a big DSO are R_*_RELATIVE (2.3M of the 2.5M of
    // op_registration_test's closure), so relocs / 2 pre-faulted 60 MB for
    // 7 MB of bindings.
    std::size_t relocs = 0, symbols = 0;
    for (std::uint32_t id : out_.search_list) {
      if (!options_.bind_dependencies && id != 0) continue;
      const auto& d = images_[id]->dyn;
      symbols += images_[id]->dynsym.size();
      for (auto table : {d.rela_table(), d.rel_table()})
        if (table && table->present) relocs += table->size / table->entsize;
    }
    reserve_populated(out_.bindings, std::min(relocs, symbols) / 2);
    // Relocate every object but the interpreter and placeholders.
    for (std::uint32_t pos = 0; pos < out_.search_list.size(); ++pos) {
      const std::uint32_t id = out_.search_list[pos];
      if (objects_[id].is_interpreter || !images_[id]->ok) continue;
      if (!options_.bind_dependencies && id != 0) continue;
      relocate(id);
    }
    // Unused direct dependencies (ldd -u): relocate main only, walk NEEDED against the
    // load order as rtld.c does.
    std::vector<char> used(objects_.size(), 0);
    for (const symbol_binding& b : main_bindings_) used[b.to] = 1;
    std::size_t next = 1;
    for (std::size_t k = 0; k < objects_[0].needed.size(); ++k) {
      if (next >= load_order_.size()) break;
      const std::uint32_t id = load_order_[next++];
      if (!used[id] && objects_[id].found()) out_.unused.push_back(id);
    }
    if (options_.interposition) find_interposed();
    out_.index_bytes = index_.memory_bytes();
    out_.index_entries = index_.entries.size();
  }

 private:
  void build_index() {
    const auto& list = out_.search_list;
    // Size everything on the definitions that can match (undefined symbols are
    // most of many .dynsym tables).
    std::size_t total = 0;
    for (std::uint32_t pos = 0; pos < list.size(); ++pos) {
      const auto& img = *images_[list[pos]];
      for (std::size_t i = 1; i < img.dynsym.size(); ++i) total += ld_so_can_match(img.dynsym[i]);
    }
    index_.reserve(total);
    struct pending {
      std::uint32_t group, object, symidx, hash;
      std::string_view name;
    };
    std::vector<pending> all;
    reserve_populated(all, total);
    // Pass 1: names and hashes. Names are scattered over each .dynstr (string
    // table order is not symbol order): fetch the name a few symbols ahead.
    constexpr std::size_t ahead = 8;
    for (std::uint32_t pos = 0; pos < list.size(); ++pos) {
      const auto& img = *images_[list[pos]];
      const std::size_t n = img.dynsym.size();
      for (std::size_t i = 1; i < n; ++i) {
        if (i + ahead < n) {
          const u32 at = img.dynsym[i + ahead].st_name;
          if (at < img.dynstr.size()) prefetch(img.dynstr.data() + at);
        }
        const Sym s = img.dynsym[i];
        if (!ld_so_can_match(s)) continue;
        const std::string_view name = img.name_of(s);
        if (name.empty()) continue;
        all.push_back({0, pos, static_cast<std::uint32_t>(i), index_hash(name), name});
      }
    }
    // Pass 2: insert in scope order, fetching the home slot a few entries ahead.
    for (std::size_t k = 0; k < all.size(); ++k) {
      if (k + ahead < all.size()) prefetch(&index_.slots[index_.home(all[k + ahead].hash)]);
      all[k].group = index_.insert(all[k].name, all[k].hash);
    }
    const std::size_t groups = index_.group_name.size();
    index_.group_start.assign(groups + 1, 0);
    for (const auto& p : all) ++index_.group_start[p.group + 1];
    for (std::size_t g = 0; g < groups; ++g) index_.group_start[g + 1] += index_.group_start[g];
    std::vector<std::uint32_t> fill(index_.group_start.begin(), index_.group_start.end() - 1);
    reserve_populated(index_.entries, all.size());
    index_.entries.resize(all.size());
    for (const auto& p : all) index_.entries[fill[p.group]++] = {p.object, p.symidx};
  }

  struct found_def {
    std::uint32_t object = no_object;  // object id
    std::uint32_t symidx = 0;
  };

  // check_match for one candidate; returns 1 match, 0 no, and counts versioned.
  int check_match(const object_image<ET>& def, std::uint32_t symidx, const version_entry* want, int type_class,
                  std::uint32_t& num_versions, std::uint32_t& versioned) const {
    const Sym s = def.dynsym[symidx];
    if ((type_class & elf::rtype_class_plt) && s.is_undefined()) return 0;
    if (!def.has_versym()) return 1;
    const std::uint16_t raw = def.versym_at(symidx);
    const std::uint16_t ndx = elf::versym_index(raw);
    if (want != nullptr) {
      const version_entry* have = ndx < def.versions.size() ? &def.versions[ndx] : nullptr;
      const bool same = have != nullptr && have->hash == want->hash && have->name == want->name;
      const std::uint32_t have_hash = have != nullptr ? have->hash : 0;
      if (!same && (want->hidden || have_hash != 0 || elf::versym_hidden(raw))) return 0;
      return 1;
    }
    if (ndx >= 3) {
      if (!elf::versym_hidden(raw) && num_versions++ == 0) versioned = symidx;
      return 0;
    }
    return 1;
  }

  // Search the definitions of object `obj` (candidates [b, e) of the group) like
  // do_lookup_x does for one map. Returns the symidx or 0.
  std::uint32_t match_in_object(const definition_index::entry* b, const definition_index::entry* e,
                                const version_entry* want, int type_class) const {
    const auto& img = *images_[out_.search_list[b->object]];
    std::uint32_t num_versions = 0, versioned = 0;
    for (const auto* c = b; c != e; ++c)
      if (check_match(img, c->symidx, want, type_class, num_versions, versioned)) return c->symidx;
    return num_versions == 1 ? versioned : 0;
  }

  // _dl_lookup_symbol_x over [self (if symbolic)] + global scope.
  // Returns the defining object id, or no_object.
  found_def lookup(std::string_view name, std::uint32_t hash, const version_entry* want, int type_class,
                   std::uint32_t self, bool symbolic) {
    ++out_.lookups;
    // One object's candidates [c, end) as do_lookup_x takes them: true when
    // the lookup ends there (a global, weak or unique definition).
    auto try_object = [&](const definition_index::entry* c, const definition_index::entry* end,
                          found_def& result) -> bool {
      const std::uint32_t id = out_.search_list[c->object];
      if ((type_class & elf::rtype_class_copy) && objects_[id].is_main) return false;
      const std::uint32_t symidx = match_in_object(c, end, want, type_class);
      if (symidx == 0) return false;
      const Sym s = images_[id]->dynsym[symidx];
      const unsigned bind = s.st_bind();
      if (s.binds_locally()) return false;
      if (bind == elf::STB_GLOBAL || bind == elf::STB_WEAK) {
        result = {id, symidx};
        return true;
      }
      if (bind == elf::STB_GNU_UNIQUE) {
        auto [it, fresh] = unique_.emplace(name, found_def{id, symidx});
        result = (type_class & elf::rtype_class_copy) ? found_def{id, symidx} : it->second;
        (void)fresh;
        return true;
      }
      return false;
    };
    found_def result;
    if (probe_scope_) {
      // Object by object in scope order, each through its own definitions,
      // stopping at the first that defines the name: the group the index
      // would hold, taken lazily (most names are found in the first few).
      auto probe = [&](std::uint32_t pos) -> bool {
        const auto& own = *scope_defs_[pos];
        const std::uint32_t mixed = object_image<ET>::definitions::mix(hash);
        const auto [begin, end] = own.bucket_of(mixed);
        if (begin == end) return false;
        const auto& img = *images_[out_.search_list[pos]];
        candidates_.clear();
        for (auto it = begin; it != end; ++it)
          if (it->first == mixed && !name.empty()) {
            const Sym def = img.dynsym[it->second];
            if (ld_so_can_match(def) && img.name_of(def) == name) candidates_.push_back({pos, it->second});
          }
        return !candidates_.empty() && try_object(candidates_.data(), candidates_.data() + candidates_.size(), result);
      };
      if (symbolic && scope_pos_[self] != no_object && probe(scope_pos_[self])) return result;
      for (std::uint32_t pos = 0; pos < scope_defs_.size(); ++pos)
        if (probe(pos)) return result;
      return {};
    }
    const std::uint32_t g = index_.find(name, hash);
    if (g == no_object) return {};
    const definition_index::entry* first = index_.entries.data() + index_.group_start[g];
    const definition_index::entry* last = index_.entries.data() + index_.group_start[g + 1];
    auto scan = [&](std::uint32_t only_pos) -> bool {
      for (const auto* c = first; c != last;) {
        const auto* end = c;
        while (end != last && end->object == c->object) ++end;
        if ((only_pos == no_object || c->object == only_pos) && try_object(c, end, result)) return true;
        c = end;
      }
      return false;
    };
    if (symbolic && scope_pos_[self] != no_object && scan(scope_pos_[self])) return result;
    if (scan(no_object)) return result;
    return {};
  }

  struct reference {
    std::uint32_t symidx, type_class, hash;
    std::string_view name;
  };

  void relocate(std::uint32_t id) {
    const auto& img = *images_[id];
    if (!options_.bind_dependencies) prefault_relocated(img);  // not done when it was parsed (set_roots_only)
    const auto& d = img.dyn;
    const bool symbolic = objects_[id].symbolic;
    elf::reloc_class_cache classes(img.classes);
    // Which (symidx, class) pairs were already looked up: the result is the same.
    std::vector<std::uint8_t> done(img.dynsym.size(), 0);
    // Three passes so that the cache misses overlap: collect the (symbol,
    // class) pairs to look up in relocation order; then their names and
    // hashes (names are scattered over .dynstr); then the lookups, fetching
    // the index slot a few references ahead.
    refs_.clear();
    auto handle = [&](u32 symidx, u32 type) {
      const int type_class = classes.lookup_class(type);
      if (type_class < 0) return;
      ++out_.relocations;
      if (symidx >= img.dynsym.size()) {
        objects_[id].warnings.push_back("relocation names a symbol past the end of .dynsym");
        return;
      }
      const std::uint8_t bit = static_cast<std::uint8_t>(1u << type_class);
      if (done[symidx] & bit) return;
      done[symidx] |= bit;
      const Sym ref = img.dynsym[symidx];
      if (ref.st_bind() == elf::STB_LOCAL || ref.binds_locally()) return;
      refs_.push_back({symidx, static_cast<std::uint32_t>(type_class), 0, {}});
    };
    auto bind_all = [&] {
      constexpr std::size_t ahead = 8;
      const std::size_t n = refs_.size();
      for (std::size_t k = 0; k < n; ++k) {
        if (k + ahead < n) {
          const u32 at = img.dynsym[refs_[k + ahead].symidx].st_name;
          if (at < img.dynstr.size()) prefetch(img.dynstr.data() + at);
        }
        reference& r = refs_[k];
        r.name = img.name_of(img.dynsym[r.symidx]);
        // Probing each object's own definitions takes their key; the index its hash.
        r.hash = probe_scope_ ? object_image<ET>::definitions::key(r.name) : index_hash(r.name);
      }
      for (std::size_t k = 0; k < n; ++k) {
        if (!probe_scope_ && k + ahead < n) index_.prefetch(refs_[k + ahead].hash);
        const reference& r = refs_[k];
        const u32 symidx = r.symidx;
        const int type_class = static_cast<int>(r.type_class);
        const Sym ref = img.dynsym[symidx];
        const std::string_view name = r.name;
        const version_entry* want = nullptr;
        if (img.has_versym()) {
          const std::uint16_t ndx = elf::versym_index(img.versym_at(symidx));
          if (ndx < img.versions.size() && img.versions[ndx].hash != 0) want = &img.versions[ndx];
        }
        found_def def = lookup(name, r.hash, want, type_class, id, symbolic);
        if (def.object == no_object) {
          if (ref.st_bind() != elf::STB_WEAK)
            out_.undefined.push_back({id, name, want ? want->name : std::string_view{}});
          continue;
        }
        bool is_protected = false;
        if (ref.st_visibility() == elf::STV_PROTECTED) {
          is_protected = true;
          if (type_class == elf::rtype_class_plt) {
            if (def.object != id) def = {id, symidx};
          } else {
            found_def plt = lookup(name, r.hash, want, elf::rtype_class_plt, id, symbolic);
            if (plt.object != no_object && plt.object != id) def = {id, symidx};
          }
        }
        symbol_binding b{id, def.object, name, want ? want->name : std::string_view{}, is_protected, false};
        out_.bindings.push_back(b);
        if (objects_[id].is_main) main_bindings_.push_back(b);
      }
    };
    auto run = [&](const result<elf::dynamic_table>& table, bool rela) {
      if (!table) {
        objects_[id].warnings.push_back(std::string("relocations: ") + table.error().message);
        return;
      }
      elf::for_each_symbolic_entry(img.elf, *table, rela, handle);
    };
    run(d.rela_table(), true);
    run(d.rel_table(), false);
    bool jmprel_rela = true;
    auto jmprel = d.jmprel_table(jmprel_rela);
    run(jmprel, jmprel_rela);
    bind_all();
  }

  void find_interposed() {
    const std::size_t groups = index_.group_name.size();
    for (std::size_t g = 0; g < groups; ++g) {
      const auto* first = index_.entries.data() + index_.group_start[g];
      const auto* last = index_.entries.data() + index_.group_start[g + 1];
      if (last - first < 2) continue;
      interposition ip;
      ip.symbol = index_.group_name[g];
      for (const auto* c = first; c != last; ++c) {
        const std::uint32_t id = out_.search_list[c->object];
        const auto& img = *images_[id];
        const Sym s = img.dynsym[c->symidx];
        const unsigned bind = s.st_bind();
        if (s.is_undefined()) continue;
        if (bind != elf::STB_GLOBAL && bind != elf::STB_WEAK && bind != elf::STB_GNU_UNIQUE) continue;
        if (s.binds_locally()) continue;
        if (img.has_versym() && elf::versym_hidden(img.versym_at(c->symidx))) continue;
        if (ip.definers.empty() || ip.definers.back() != id) ip.definers.push_back(id);
      }
      if (ip.definers.size() > 1) out_.interposed.push_back(std::move(ip));
    }
  }

  definition_index index_;
  bool probe_scope_ = false;                              // no index_: probe each object's own definitions
  std::vector<definition_index::entry> candidates_;       // probe_scope_: the group of the current lookup
  std::vector<const typename object_image<ET>::definitions*> scope_defs_;  // probe_scope_: per scope position
  std::vector<std::uint32_t> scope_pos_;
  std::unordered_map<std::string_view, found_def> unique_;
  std::vector<symbol_binding> main_bindings_;
  std::vector<reference> refs_;
};

}  // namespace detail
}  // namespace resolve
}  // namespace v0
}  // namespace linkscope
#endif  // LINKSCOPE_DEFINITIONS
