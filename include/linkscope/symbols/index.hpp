// linkscope/symbols/index.hpp — the one hash index, and hash_index: find
// every symbol with a name.
//
// Layout (basic_hash_index): one open-addressing array of (hash32, id32)
// slots, 8 bytes each, with linear probing. The id names an entry that the
// caller (or keyed_index) stores; keys are not copied into the slots, they are
// compared through a key_of(id) callable only when the stored hash matches.
// Each key is hashed once: every operation has an overload that takes the
// hash, so a caller that hashes in a pass of its own (to overlap cache misses)
// never hashes again. Slots are addressed with a multiply-shift ("fastrange")
// rather than a mask, which lets the capacity be any size instead of a power
// of two: a power of two would cost up to 2x memory for the same load. The
// capacity is 1.625 x the entry count (load factor ~0.62), 13 bytes per entry.
// Growth rehashes from the slots alone (they carry the hash), starting at an
// empty slot so that every probe run is re-inserted in probe order: entries
// with equal keys keep their insertion order.
//
// Three views of it:
// - basic_hash_index<Key>: the slots; the caller owns keys and payloads and
//   passes key_of. Duplicates may be kept (insert) or refused (insert_unique).
// - keyed_index<Key, Payload>: a map with its entries (key, payload) stored
//   densely in insertion order; the id is the position. Payload may be void.
//   The static linker's symbol map and the ld.so emulator's name groups.
// - hash_index: every symbol of a symbol_table by name, duplicates kept
//   (lookup returns all of them in insertion order), optionally filtered on
//   the version string.
//
// The hash is index_hash() (core/hash.hpp, 8 bytes per step). hash_index's
// build hashes every name in one sequential pass, then inserts with the home
// slot of a later entry prefetched, so that a table bigger than the caches
// costs memory-level parallelism rather than one cache miss per symbol;
// keyed_index and basic_hash_index offer prefetch(hash) for callers that do
// the same.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "linkscope/core/hash.hpp"
#include "linkscope/symbols/table.hpp"

namespace linkscope {
inline namespace v0 {

// The hash of a key for the index. Specialise for other key types; the result
// must be fully mixed (its high bits address the slots).
template <class Key>
struct index_hasher;

template <>
struct index_hasher<std::string_view> {
  std::uint32_t operator()(std::string_view key) const noexcept { return index_hash(key); }
};

namespace detail {
inline void index_prefetch([[maybe_unused]] const void* p) noexcept {
#if defined(__GNUC__) || defined(__clang__)
  __builtin_prefetch(p, 1, 1);
#endif
}
// Calls f(id); true unless f returns bool false.
template <class F>
bool index_visit(F& f, std::uint32_t id) {
  if constexpr (std::is_same_v<std::invoke_result_t<F&, std::uint32_t>, bool>) {
    return f(id);
  } else {
    f(id);
    return true;
  }
}
}  // namespace detail

template <class Key, class Hasher = index_hasher<Key>>
class basic_hash_index {
 public:
  using id_type = std::uint32_t;
  static constexpr id_type npos = ~id_type{0};

  static std::uint32_t hash(const Key& key) noexcept(noexcept(Hasher{}(key))) { return Hasher{}(key); }

  std::size_t size() const noexcept { return count_; }
  bool empty() const noexcept { return count_ == 0; }
  std::size_t capacity() const noexcept { return slots_.size(); }
  std::size_t memory_bytes() const noexcept { return slots_.capacity() * sizeof(slot); }

  // Room for `count` entries without growth. Existing entries are kept.
  void reserve(std::size_t count) {
    if (count > limit_) rehash(count);
  }

  // Fetch the home slot of hash `h` into the cache ahead of its use.
  void prefetch(std::uint32_t h) const noexcept {
    if (!slots_.empty()) detail::index_prefetch(&slots_[home(h)]);
  }

  // The first id (in insertion order) whose key_of(id) == key, or npos.
  template <class KeyOf>
  id_type find(const Key& key, std::uint32_t h, KeyOf&& key_of) const {
    if (count_ == 0) return npos;
    for (std::size_t i = home(h);;) {
      const slot s = slots_[i];
      if (s.id == npos) return npos;
      if (s.hash == h && key_of(s.id) == key) return s.id;
      if (++i == slots_.size()) i = 0;
    }
  }
  template <class KeyOf>
  id_type find(const Key& key, KeyOf&& key_of) const {
    return find(key, hash(key), key_of);
  }

  // Visit every id whose key_of(id) == key, in insertion order. f(id) may
  // return bool (false stops).
  template <class KeyOf, class F>
  void for_each(const Key& key, std::uint32_t h, KeyOf&& key_of, F&& f) const {
    if (count_ == 0) return;
    for (std::size_t i = home(h);;) {
      const slot s = slots_[i];
      if (s.id == npos) return;
      if (s.hash == h && key_of(s.id) == key && !detail::index_visit(f, s.id)) return;
      if (++i == slots_.size()) i = 0;
    }
  }

  // Add `id` under hash `h`, after any entry with an equal key (duplicates
  // are kept). Grows as needed.
  void insert(std::uint32_t h, id_type id) {
    if (count_ + 1 > limit_) grow();
    place(h, id);
    ++count_;
  }

  // Insert n entries (hash_at(k), id_at(k)), k in [0, n), duplicates kept,
  // with the home slot of entry k + 16 prefetched: a table bigger than the
  // caches then costs memory-level parallelism, not a miss per entry.
  template <class HashAt, class IdAt>
  void insert_many(std::size_t n, HashAt&& hash_at, IdAt&& id_at) {
    reserve(count_ + n);
    constexpr std::size_t ahead = 16;
    for (std::size_t k = 0; k < n; ++k) {
      if (k + ahead < n) detail::index_prefetch(&slots_[home(hash_at(k + ahead))]);
      place(hash_at(k), id_at(k));
    }
    count_ += n;
  }

  // The id already stored for `key` (and false), or `id` stored for it (and
  // true).
  template <class KeyOf>
  std::pair<id_type, bool> insert_unique(const Key& key, std::uint32_t h, id_type id, KeyOf&& key_of) {
    if (count_ + 1 > limit_) grow();
    std::size_t i = home(h);
    for (;;) {
      const slot s = slots_[i];
      if (s.id == npos) break;
      if (s.hash == h && key_of(s.id) == key) return {s.id, false};
      if (++i == slots_.size()) i = 0;
    }
    slots_[i] = slot{h, id};
    ++count_;
    return {id, true};
  }

  // Slots read by an unsuccessful lookup of hash h (layout statistics).
  std::size_t probes_for(std::uint32_t h) const noexcept {
    if (count_ == 0) return 0;
    std::size_t i = home(h);
    std::size_t probes = 1;
    while (slots_[i].id != npos) {
      ++probes;
      if (++i == slots_.size()) i = 0;
    }
    return probes;
  }

  void clear() noexcept {
    slots_.clear();
    count_ = 0;
    limit_ = 0;
  }

 private:
  struct slot {
    std::uint32_t hash;
    id_type id;
  };
  static_assert(sizeof(slot) == 8);

  static std::size_t capacity_for(std::size_t count) noexcept {
    std::size_t cap = count + count / 2 + count / 8 + 1;
    return cap < 8 ? 8 : cap;
  }
  // The hash is fully mixed: map it onto [0, capacity) with a multiply-shift.
  std::size_t home(std::uint32_t h) const noexcept {
    return static_cast<std::size_t>((static_cast<std::uint64_t>(h) * slots_.size()) >> 32);
  }
  void place(std::uint32_t h, id_type id) noexcept {
    std::size_t i = home(h);
    while (slots_[i].id != npos)
      if (++i == slots_.size()) i = 0;
    slots_[i] = slot{h, id};
  }
  void grow() { rehash(count_ < 512 ? 1024 : 2 * count_); }
  // Room for `room` entries: capacity_for(room) slots, so at least one slot
  // stays empty and every probe ends.
  void rehash(std::size_t room) {
    std::vector<slot> old(capacity_for(room), slot{0, npos});
    old.swap(slots_);
    limit_ = room;
    if (count_ == 0) return;
    // Start after an empty slot: each probe run is then visited from its
    // start, in probe order, and equal keys keep their relative order.
    std::size_t start = 0;
    while (old[start].id != npos) ++start;
    for (std::size_t k = 1; k <= old.size(); ++k) {
      std::size_t at = start + k;
      if (at >= old.size()) at -= old.size();
      const slot s = old[at];
      if (s.id == npos) continue;
      place(s.hash, s.id);
    }
  }

  std::vector<slot> slots_;
  std::size_t count_ = 0;
  std::size_t limit_ = 0;  // grow before count_ exceeds this
};

namespace detail {
template <class Payload>
struct index_payloads {
  std::vector<Payload> values;
  void emplace() { values.emplace_back(); }
  void reserve(std::size_t n) { values.reserve(n); }
  std::size_t memory_bytes() const noexcept { return values.capacity() * sizeof(Payload); }
};
template <>
struct index_payloads<void> {
  void emplace() noexcept {}
  void reserve(std::size_t) noexcept {}
  std::size_t memory_bytes() const noexcept { return 0; }
};
}  // namespace detail

// A map from Key to a default-constructed Payload per distinct key; entries
// are numbered in insertion order. Keys are stored apart from payloads so that
// a lookup reads only slots and keys.
template <class Key, class Payload = void, class Hasher = index_hasher<Key>>
class keyed_index {
 public:
  using id_type = std::uint32_t;
  static constexpr id_type npos = ~id_type{0};

  static std::uint32_t hash(const Key& key) noexcept(noexcept(Hasher{}(key))) { return Hasher{}(key); }

  std::size_t size() const noexcept { return keys_.size(); }
  bool empty() const noexcept { return keys_.empty(); }
  std::size_t memory_bytes() const noexcept {
    return slots_.memory_bytes() + keys_.capacity() * sizeof(Key) + payloads_.memory_bytes();
  }
  void reserve(std::size_t count) {
    slots_.reserve(count);
    keys_.reserve(count);
    payloads_.reserve(count);
  }
  void prefetch(std::uint32_t h) const noexcept { slots_.prefetch(h); }

  const Key& key(id_type id) const noexcept { return keys_[id]; }
  std::span<const Key> keys() const noexcept { return keys_; }

  template <class P = Payload, class = std::enable_if_t<!std::is_void_v<P>>>
  P& operator[](id_type id) noexcept {
    return payloads_.values[id];
  }
  template <class P = Payload, class = std::enable_if_t<!std::is_void_v<P>>>
  const P& operator[](id_type id) const noexcept {
    return payloads_.values[id];
  }

  // The id of `key`, or npos.
  id_type find(const Key& key, std::uint32_t h) const {
    return slots_.find(key, h, [this](id_type id) -> const Key& { return keys_[id]; });
  }
  id_type find(const Key& key) const { return find(key, hash(key)); }

  // The id of `key`, and whether it was added now (with a default payload).
  std::pair<id_type, bool> insert(const Key& key, std::uint32_t h) {
    const auto next = static_cast<id_type>(keys_.size());
    const auto found = slots_.insert_unique(key, h, next, [this](id_type id) -> const Key& { return keys_[id]; });
    if (found.second) {
      keys_.push_back(key);
      payloads_.emplace();
    }
    return found;
  }
  std::pair<id_type, bool> insert(const Key& key) { return insert(key, hash(key)); }

 private:
  basic_hash_index<Key, Hasher> slots_;
  std::vector<Key> keys_;
  detail::index_payloads<Payload> payloads_;
};

// Every symbol of a symbol_table by name; duplicates kept.
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
    struct pending {
      std::uint32_t hash;
      symbol_id id;
    };
    std::vector<pending> all;
    all.reserve(table.size());
    for (symbol_id id = 0; id < table.size(); ++id) {
      const symbol& sym = table[id];
      if (keep(sym)) all.push_back(pending{index_hash(sym.name), id});
    }
    // Pass 2: insert, prefetching the home slot a few entries ahead.
    index.slots_.insert_many(
        all.size(), [&](std::size_t k) { return all[k].hash; }, [&](std::size_t k) { return all[k].id; });
    return index;
  }
  static hash_index build(symbol_table&&) = delete;  // the index would dangle

  std::size_t size() const noexcept { return slots_.size(); }
  std::size_t capacity() const noexcept { return slots_.capacity(); }
  std::size_t memory_bytes() const noexcept { return slots_.memory_bytes(); }
  const symbol_table* table() const noexcept { return table_; }

  // Visit the id of every symbol named `name`, in insertion order. f(id) may
  // return bool (false stops).
  template <class F>
  void for_each(std::string_view name, F&& f) const {
    slots_.for_each(name, index_hash(name), name_of(), f);
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
    if (slots_.empty()) return no_symbol;
    const symbol_id id = slots_.find(name, index_hash(name), name_of());
    return id == slots_.npos ? no_symbol : id;
  }
  bool contains(std::string_view name) const { return find_first(name) != no_symbol; }

  // Probe statistics, for benchmarks and tests of the layout.
  std::size_t probes_for(std::string_view name) const { return slots_.probes_for(index_hash(name)); }

 private:
  struct name_of_id {
    const symbol_table* table;
    std::string_view operator()(symbol_id id) const noexcept { return table->name(id); }
  };
  name_of_id name_of() const noexcept { return name_of_id{table_}; }

  const symbol_table* table_ = nullptr;
  basic_hash_index<std::string_view> slots_;
};

}  // namespace v0
}  // namespace linkscope
