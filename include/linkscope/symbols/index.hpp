// linkscope/symbols/index.hpp — hash_index: find every symbol with a name.
//
// Layout: one open-addressing array of (hash32, id32) slots, 8 bytes each,
// with linear probing. The capacity is 1.625 x the symbol count (load factor
// ~0.62), so the index costs 13 bytes per symbol; names are not copied, they
// are compared (through the symbol_table) only when the stored hash matches.
// Slots are addressed with a multiply-shift ("fastrange") rather than a mask,
// which lets the capacity be any size instead of a power of two: a power of
// two would cost up to 2x memory (up to 32 B/symbol) for the same load.
//
// Duplicates are kept: a name defined in several places occupies several
// slots, and lookup returns all of them in insertion order. A lookup by
// (name, version) filters on the version string.
//
// The hash is index_hash() (8 bytes per step). The build hashes every name in
// one sequential pass, then inserts with the home slot of a later entry
// prefetched, so that a table bigger than the caches costs memory-level
// parallelism rather than one cache miss per symbol.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <type_traits>
#include <string_view>
#include <vector>

#include "linkscope/core/hash.hpp"
#include "linkscope/symbols/table.hpp"

namespace linkscope {
inline namespace v0 {

class hash_index {
 public:
  hash_index() = default;

  // Index every symbol of `table` (or only those `keep(sym)` accepts).
  static hash_index build(const symbol_table& table) {
    return build(table, [](const symbol&) { return true; });
  }
  template <class Keep>
  static hash_index build(const symbol_table& table, Keep&& keep) {
    hash_index index;
    index.table_ = &table;
    // Pass 1 (sequential): hash the kept names.
    std::vector<slot> pending;
    pending.reserve(table.size());
    for (symbol_id id = 0; id < table.size(); ++id) {
      const symbol& sym = table[id];
      if (keep(sym)) pending.push_back(slot{index_hash(sym.name), id});
    }
    // Pass 2: insert, prefetching the home slot a few entries ahead.
    index.allocate(pending.size());
    constexpr std::size_t ahead = 16;
    for (std::size_t i = 0; i < pending.size(); ++i) {
      if (i + ahead < pending.size()) detail_prefetch(&index.slots_[index.home(pending[i + ahead].hash)]);
      index.insert(pending[i].hash, pending[i].id);
    }
    return index;
  }
  static hash_index build(symbol_table&&) = delete;  // the index would dangle

  std::size_t size() const noexcept { return count_; }
  std::size_t capacity() const noexcept { return slots_.size(); }
  std::size_t memory_bytes() const noexcept { return slots_.capacity() * sizeof(slot); }
  const symbol_table* table() const noexcept { return table_; }

  // Visit the id of every symbol named `name`, in insertion order. f(id) may
  // return bool (false stops).
  template <class F>
  void for_each(std::string_view name, F&& f) const {
    if (count_ == 0) return;
    const std::uint32_t h = index_hash(name);
    std::size_t i = home(h);
    for (;;) {
      const slot s = slots_[i];
      if (s.id == empty) return;
      if (s.hash == h && table_->name(s.id) == name) {
        if constexpr (std::is_same_v<std::invoke_result_t<F&, symbol_id>, bool>) {
          if (!f(s.id)) return;
        } else {
          f(s.id);
        }
      }
      if (++i == slots_.size()) i = 0;
    }
  }

  std::vector<symbol_id> find(std::string_view name) const {
    std::vector<symbol_id> ids;
    for_each(name, [&](symbol_id id) { ids.push_back(id); });
    return ids;
  }
  std::vector<symbol_id> find(std::string_view name, std::string_view version) const {
    std::vector<symbol_id> ids;
    for_each(name, [&](symbol_id id) {
      if (table_->version(id) == version) ids.push_back(id);
    });
    return ids;
  }
  symbol_id find_first(std::string_view name) const {
    symbol_id found = no_symbol;
    for_each(name, [&](symbol_id id) {
      found = id;
      return false;
    });
    return found;
  }
  bool contains(std::string_view name) const { return find_first(name) != no_symbol; }

  // Probe statistics, for benchmarks and tests of the layout.
  std::size_t probes_for(std::string_view name) const {
    if (count_ == 0) return 0;
    std::size_t i = home(index_hash(name));
    std::size_t probes = 1;
    while (slots_[i].id != empty) {
      ++probes;
      if (++i == slots_.size()) i = 0;
    }
    return probes;
  }

 private:
  struct slot {
    std::uint32_t hash;
    symbol_id id;
  };
  static_assert(sizeof(slot) == 8);
  static constexpr symbol_id empty = no_symbol;

  // index_hash is fully mixed: map it onto [0, capacity) with a multiply-shift.
  std::size_t home(std::uint32_t h) const noexcept {
    return static_cast<std::size_t>((static_cast<std::uint64_t>(h) * slots_.size()) >> 32);
  }
  static void detail_prefetch(const void* p) noexcept {
#if defined(__GNUC__) || defined(__clang__)
    __builtin_prefetch(p, 1, 1);
#else
    (void)p;
#endif
  }
  void allocate(std::size_t count) {
    std::size_t cap = count + count / 2 + count / 8 + 1;
    if (cap < 8) cap = 8;
    slots_.assign(cap, slot{0, empty});
  }
  void insert(std::uint32_t h, symbol_id id) {
    std::size_t i = home(h);
    while (slots_[i].id != empty)
      if (++i == slots_.size()) i = 0;
    slots_[i] = slot{h, id};
    ++count_;
  }

  const symbol_table* table_ = nullptr;
  std::vector<slot> slots_;
  std::size_t count_ = 0;
};

}  // namespace v0
}  // namespace linkscope
