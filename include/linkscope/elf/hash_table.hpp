// linkscope/elf/hash_table.hpp — symbol lookup through DT_GNU_HASH / DT_HASH,
// exactly as glibc's ld.so does it (elf/dl-lookup.c: do_lookup_x, check_match).
//
// DT_HASH (gABI "Hash Table"): Word nbucket, Word nchain, bucket[nbucket],
// chain[nchain]; nchain equals the number of dynamic symbols. A name with
// SysV hash h starts at bucket[h % nbucket] and follows chain[] until 0.
// (s390x and Alpha use 8-byte words.)
//
// DT_GNU_HASH (the GNU extension; see glibc dl-lookup.c and the binutils
// ELF linker): Word nbuckets, symoffset, bloom_size, bloom_shift; then
// bloom_size address-sized words, nbuckets Words, then one Word per dynamic
// symbol from symoffset on: the symbol's GNU hash with bit 0 replaced by an
// end-of-chain flag. Lookup of hash h:
//   word = bloom[(h / C) % bloom_size]  (C = 32 or 64 bits; bloom_size is a
//          power of two, ld.so masks with bloom_size - 1)
//   both bits (h % C) and ((h >> bloom_shift) % C) of word must be set;
//   i = buckets[h % nbuckets]; if i == 0: absent;
//   walk chain[i - symoffset], i+1 ...: where (chain ^ h) >> 1 == 0, compare
//   the name; stop after the entry whose low bit is 1.
// ld.so uses the GNU table whenever DT_GNU_HASH exists; so does lookup().
//
// check_match (per candidate): reject st_value == 0 unless SHN_ABS or
// STT_TLS; reject undefined symbols for PLT lookups (type_class bit 0);
// accept only NOTYPE/OBJECT/FUNC/COMMON/TLS/GNU_IFUNC; then versions: a
// versioned request matches an entry with the same (vd_hash, name), or any
// non-hidden symbol whose own index is unversioned (hash 0), unless the
// request is hidden; an unversioned request skips symbols with version index
// >= 3 (>= 2 for dlsym's "return newest") and, when exactly one non-hidden
// such symbol was seen, returns it. A match that is local or has
// hidden/internal visibility means "not in this object" (do_lookup_x).
//
// Every table is bounds-checked against the file and the symbol count when it
// is opened; lookups then read without checks but never past those bounds.
#pragma once

#include <string_view>

#include "linkscope/core/bytes.hpp"
#include "linkscope/core/error.hpp"
#include "linkscope/core/hash.hpp"
#include "linkscope/elf/dynamic.hpp"
#include "linkscope/elf/file.hpp"
#include "linkscope/elf/symbols.hpp"
#include "linkscope/elf/types.hpp"
#include "linkscope/elf/versions.hpp"

namespace linkscope {
inline namespace v0 {
namespace elf {

// A versioned request (ld.so's struct r_found_version).
struct version_request {
  std::string_view name;
  u32 hash = 0;         // ELF (SysV) hash of name: vna_hash / vd_hash
  bool hidden = false;  // the reference's version is hidden (vna_other & 0x8000)
  static version_request of(std::string_view name, bool hidden = false) noexcept {
    return version_request{name, sysv_hash(name), hidden};
  }
};

struct lookup_options {
  const version_request* version = nullptr;
  int type_class = 0;
  bool return_newest = false;  // DL_LOOKUP_RETURN_NEWEST (dlsym)
};

struct lookup_result {
  u32 index = 0;        // dynamic symbol index; 0 when not found
  bool found = false;   // a usable definition (global/weak/unique, default/protected)
  bool matched = false; // a name/version match, even if local or hidden (found false then)
};

template <class ET>
class hash_table {
 public:
  using Sym = typename ET::Sym;
  using word = typename ET::word;
  using uword = typename ET::uword;
  using bloom_word = endian<uword, ET::endianness>;

  hash_table() = default;

  // Open the tables named by the dynamic section for `dynsym` (from
  // read_dynsym / read_dynsym_from_dynamic) and `versions` (may be empty).
  static result<hash_table> open(const dynamic_info<ET>& dyn, const symbol_table_view<ET>& dynsym,
                                 const version_tables<ET>& versions) noexcept {
    hash_table t;
    t.dynsym_ = dynsym;
    t.versions_ = &versions;
    const byte_view bytes = dyn.elf().bytes();
    t.bytes_ = bytes;
    const u64 count = dynsym.size();
    if (dyn.gnu_hash()) {
      using GH = typename ET::GnuHashHeader;
      LINKSCOPE_TRY(off, dyn.offset_of(dyn.gnu_hash(), sizeof(GH)));
      const GH h = bytes.read_unchecked<GH>(off);
      const u64 nbuckets = h.nbuckets, symoffset = h.symoffset, bloom_size = h.bloom_size;
      if (bloom_size == 0) return bytes.fail(errc::bad_field, off + 8, "GNU hash bloom size is 0");
      if ((bloom_size & (bloom_size - 1)) != 0)
        return bytes.fail(errc::bad_field, off + 8, "GNU hash bloom size is not a power of two");
      if (nbuckets == 0) return bytes.fail(errc::bad_field, off, "GNU hash has no buckets");
      if (symoffset > count) return bytes.fail(errc::out_of_range, off + 4, "GNU hash symoffset past the symbol table");
      u64 bloom_bytes = 0, bucket_bytes = 0, size = sizeof(GH);
      if (!checked_mul(bloom_size, sizeof(uword), bloom_bytes) || !checked_mul(nbuckets, 4, bucket_bytes) ||
          !checked_add(size, bloom_bytes, size) || !checked_add(size, bucket_bytes, size) || !fits(off, size, bytes.size()))
        return bytes.fail(errc::truncated, off, "GNU hash table past end of file");
      t.gnu_ = true;
      t.gnu_offset_ = off;
      t.nbuckets_ = static_cast<u32>(nbuckets);
      t.symoffset_ = static_cast<u32>(symoffset);
      t.bloom_mask_ = static_cast<u32>(bloom_size - 1);
      t.bloom_shift_ = h.bloom_shift;
      t.bloom_ = bytes.data() + off + sizeof(GH);
      t.buckets_ = t.bloom_ + bloom_bytes;
      t.chains_ = t.buckets_ + bucket_bytes;
      // Buckets must point into [symoffset, count). The chains are
      // contiguous, so every chain ends at or before the end of the chain
      // that starts at the highest bucket: that one must be terminated
      // inside the file and before the symbol count. With every bucket
      // empty there are no chains at all (GNU ld writes such a table, with
      // symoffset below the count of undefined symbols, and ld.so takes it).
      u64 last_bucket = 0;
      for (u64 b = 0; b < nbuckets; ++b) {
        const u32 v = load<u32, ET::endianness>(t.buckets_ + 4 * b);
        if (v != 0 && (v < symoffset || v >= count))
          return bytes.fail(errc::out_of_range, off + sizeof(GH) + bloom_bytes + 4 * b,
                            "GNU hash bucket points outside the symbol table");
        if (v > last_bucket) last_bucket = v;
      }
      if (last_bucket != 0) {
        const u64 chains_at = off + size;
        u64 i = last_bucket;
        for (; i < count; ++i) {
          const u64 at = chains_at + 4 * (i - symoffset);
          if (!fits(at, 4, bytes.size())) return bytes.fail(errc::truncated, at, "GNU hash chain past end of file");
          if (load<u32, ET::endianness>(bytes.data() + at) & 1u) break;
        }
        if (i == count)
          return bytes.fail(errc::malformed, chains_at + 4 * (count - 1 - symoffset), "GNU hash chain runs off the table");
        t.chain_end_ = static_cast<u32>(i + 1);
      } else {
        t.chain_end_ = static_cast<u32>(symoffset);
      }
    }
    if (dyn.hash()) {
      const bool wide = ET::is64 && (dyn.elf().machine() == EM_S390 || dyn.elf().machine() == 0x9026);
      const u64 ws = wide ? 8 : 4;
      LINKSCOPE_TRY(off, dyn.offset_of(dyn.hash(), 2 * ws));
      const u64 nbucket = read_word(bytes.data() + off, wide);
      const u64 nchain = read_word(bytes.data() + off + ws, wide);
      if (nbucket == 0) return bytes.fail(errc::bad_field, off, "SysV hash has no buckets");
      if (nchain > count) return bytes.fail(errc::out_of_range, off + ws, "SysV hash nchain exceeds the symbol count");
      u64 size = 0;
      if (!checked_add(nbucket, nchain, size) || !checked_add(size, 2, size) || !checked_mul(size, ws, size) ||
          !fits(off, size, bytes.size()))
        return bytes.fail(errc::truncated, off, "SysV hash table past end of file");
      t.sysv_ = true;
      t.sysv_offset_ = off;
      t.sysv_wide_ = wide;
      t.nbucket_ = nbucket;
      t.nchain_ = nchain;
    }
    return t;
  }

  bool has_gnu() const noexcept { return gnu_; }
  bool has_sysv() const noexcept { return sysv_; }
  bool empty() const noexcept { return !gnu_ && !sysv_; }

  // Look `name` up as ld.so does: the GNU table if present, else SysV.
  result<lookup_result> lookup(std::string_view name, const lookup_options& options = {}) const noexcept {
    if (gnu_) return lookup_gnu(name, options);
    if (sysv_) return lookup_sysv(name, options);
    return lookup_result{};
  }

  // The GNU table only (bloom filter, bucket, chain).
  result<lookup_result> lookup_gnu(std::string_view name, const lookup_options& options = {}) const noexcept {
    return lookup_gnu_hashed(name, gnu_hash(name), options);
  }
  result<lookup_result> lookup_gnu_hashed(std::string_view name, u32 h, const lookup_options& options = {}) const noexcept {
    lookup_state state;
    if (!gnu_) return lookup_result{};
    constexpr u32 bits = sizeof(uword) * 8;
    const uword word_value = load<uword, ET::endianness>(bloom_ + sizeof(uword) * ((h / bits) & bloom_mask_));
    const u32 bit1 = h & (bits - 1);
    // glibc shifts a uint_fast32_t (64 bits on LP64): a shift of 32..63
    // gives 0. A shift >= the width is UB in C++, so spell that out.
    const u32 bit2 = bloom_shift_ < 32 ? (h >> bloom_shift_) & (bits - 1) : 0;
    if (((word_value >> bit1) & (word_value >> bit2) & 1) == 0) return lookup_result{};
    u32 i = load<u32, ET::endianness>(buckets_ + 4 * (h % nbuckets_));
    if (i == 0) return lookup_result{};
    for (; i < chain_end_; ++i) {
      const u32 chain = load<u32, ET::endianness>(chains_ + 4 * (i - symoffset_));
      if (((chain ^ h) >> 1) == 0) {
        LINKSCOPE_TRY(r, check_match(name, i, options, state));
        if (r.matched) return r;
      }
      if (chain & 1u) break;
    }
    return finish(state);
  }

  // The SysV table only.
  result<lookup_result> lookup_sysv(std::string_view name, const lookup_options& options = {}) const noexcept {
    lookup_state state;
    if (!sysv_) return lookup_result{};
    const u64 ws = sysv_wide_ ? 8 : 4;
    const unsigned char* base = bytes_.data() + sysv_offset_;
    const u64 h = sysv_hash(name);
    u64 i = read_word(base + ws * (2 + h % nbucket_), sysv_wide_);
    for (u64 steps = 0; i != 0; ++steps) {
      if (i >= nchain_ || steps > nchain_)
        return bytes_.fail(errc::malformed, sysv_offset_, "SysV hash chain leaves the table or loops");
      LINKSCOPE_TRY(r, check_match(name, static_cast<u32>(i), options, state));
      if (r.matched) return r;
      i = read_word(base + ws * (2 + nbucket_ + i), sysv_wide_);
    }
    return finish(state);
  }

  // The hash stored in the GNU chain for symbol `index` (bit 0 = end flag),
  // or nothing for indices below symoffset.
  bool gnu_chain_hash(u32 index, u32& out) const noexcept {
    if (!gnu_ || index < symoffset_ || index >= chain_end_) return false;
    out = load<u32, ET::endianness>(chains_ + 4 * (index - symoffset_));
    return true;
  }
  u32 gnu_symoffset() const noexcept { return symoffset_; }

 private:
  struct lookup_state {
    u32 versioned_index = 0;
    int num_versions = 0;
  };

  static u64 read_word(const unsigned char* p, bool wide) noexcept {
    return wide ? load<u64, ET::endianness>(p) : load<u32, ET::endianness>(p);
  }

  lookup_result finish(const lookup_state& state) const noexcept {
    if (state.num_versions == 1) return accept(state.versioned_index);
    return lookup_result{};
  }

  lookup_result accept(u32 index) const noexcept {
    const Sym sym = dynsym_[index];
    lookup_result r;
    r.index = index;
    r.matched = true;
    const u8 vis = sym.st_visibility();
    const u8 bind = sym.st_bind();
    r.found = vis != STV_HIDDEN && vis != STV_INTERNAL &&
              (bind == STB_GLOBAL || bind == STB_WEAK || bind == STB_GNU_UNIQUE);
    return r;
  }

  result<lookup_result> check_match(std::string_view name, u32 index, const lookup_options& options,
                                    lookup_state& state) const noexcept {
    const Sym sym = dynsym_[index];
    const u8 type = sym.st_type();
    const u32 shndx = sym.st_shndx;
    if ((sym.st_value == 0 && shndx != SHN_ABS && type != STT_TLS) ||
        ((options.type_class & rtype_class_plt) != 0 && shndx == SHN_UNDEF))
      return lookup_result{};
    constexpr u32 allowed = (1u << STT_NOTYPE) | (1u << STT_OBJECT) | (1u << STT_FUNC) | (1u << STT_COMMON) |
                            (1u << STT_TLS) | (1u << STT_GNU_IFUNC);
    if (((1u << type) & allowed) == 0) return lookup_result{};
    auto sym_name = dynsym_.name(index);
    if (!sym_name) return sym_name.error();
    if (*sym_name != name) return lookup_result{};
    const bool have_versym = versions_ != nullptr && versions_->present();
    if (options.version != nullptr) {
      if (have_versym) {
        const u16 raw = versions_->raw(index);
        const version_entry e = versions_->entry(static_cast<u16>(raw & VERSYM_VERSION));
        const bool same = e.hash == options.version->hash && (e.defined || e.needed) && e.name == options.version->name;
        if (!same && (options.version->hidden || e.hash != 0 || (raw & VERSYM_HIDDEN) != 0)) return lookup_result{};
      }
    } else if (have_versym) {
      const u16 raw = versions_->raw(index);
      if ((raw & VERSYM_VERSION) >= (options.return_newest ? 2 : 3)) {
        if ((raw & VERSYM_HIDDEN) == 0 && state.num_versions++ == 0) state.versioned_index = index;
        return lookup_result{};
      }
    }
    return accept(index);
  }

  symbol_table_view<ET> dynsym_;
  const version_tables<ET>* versions_ = nullptr;
  byte_view bytes_;
  bool gnu_ = false, sysv_ = false, sysv_wide_ = false;
  u64 gnu_offset_ = 0, sysv_offset_ = 0, nbucket_ = 0, nchain_ = 0;
  u32 nbuckets_ = 0, symoffset_ = 0, bloom_mask_ = 0, bloom_shift_ = 0;
  const unsigned char* bloom_ = nullptr;
  const unsigned char* buckets_ = nullptr;
  const unsigned char* chains_ = nullptr;
  u32 chain_end_ = 0;  // one past the last chain entry checked to lie in the file
};

}  // namespace elf
}  // namespace v0
}  // namespace linkscope
