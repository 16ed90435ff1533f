// linkscope/elf/symbols.hpp — .symtab and .dynsym.
//
// A symbol table (gABI "Symbol Table") is an array of Sym records; entry 0 is
// the null symbol. Names are offsets into a string table: for a section-based
// table, the section named by sh_link (which must be SHT_STRTAB and end in
// NUL); for the dynamic table located by DT_SYMTAB, the DT_STRTAB table.
// st_shndx == SHN_XINDEX means the section index is in the parallel
// SHT_SYMTAB_SHNDX section (one Word per symbol, sh_link = the symtab).
//
// The dynamic symbol count is not stored in the dynamic section. With section
// headers it is .dynsym's sh_size / sh_entsize. Through the dynamic section
// (what ld.so sees; read_dynsym_from_dynamic, dynsym_count) it is derived as
// ld.so tools do, and a SHT_DYNSYM header of the same table counts when larger:
//   - DT_HASH: nchain (the second word) equals the number of symbols;
//   - DT_GNU_HASH: the highest symbol index reachable from any bucket, then
//     that chain is walked to its end (low bit set): count = last index + 1.
//     If every bucket is empty, the count is symoffset.
// Every read is bounds-checked against the file; a chain that runs off the
// file is an error.
#pragma once

#include <cstring>
#include <optional>
#include <string_view>

#include "linkscope/core/bytes.hpp"
#include "linkscope/core/error.hpp"
#include "linkscope/elf/dynamic.hpp"
#include "linkscope/elf/file.hpp"
#include "linkscope/elf/types.hpp"

namespace linkscope {
inline namespace v0 {
namespace elf {

template <class ET>
class symbol_table_view {
 public:
  using Sym = typename ET::Sym;
  using word = typename ET::word;

  symbol_table_view() = default;
  symbol_table_view(record_array<Sym> symbols, byte_view strings, u64 offset, bool dynamic,
                    u32 section = 0) noexcept
      : symbols_(symbols), strings_(strings), offset_(offset), section_(section), dynamic_(dynamic) {}

  void set_shndx_table(record_array<word> shndx) noexcept { shndx_ = shndx; }

  std::size_t size() const noexcept { return symbols_.size(); }
  bool empty() const noexcept { return symbols_.empty(); }
  bool is_dynamic() const noexcept { return dynamic_; }
  // Index of the symbol table's section (0 when located through DT_SYMTAB).
  u32 section() const noexcept { return section_; }
  u64 offset() const noexcept { return offset_; }
  u64 entry_offset(std::size_t index) const noexcept { return offset_ + index * sizeof(Sym); }
  const record_array<Sym>& records() const noexcept { return symbols_; }
  byte_view strings() const noexcept { return strings_; }

  Sym operator[](std::size_t index) const noexcept { return symbols_[index]; }

  result<std::string_view> name(const Sym& sym) const noexcept { return strings_.cstring(sym.st_name); }
  result<std::string_view> name(std::size_t index) const noexcept {
    // The common case without building an intermediate result: this runs once
    // per symbol in every listing and every binding pass.
    const u64 at = symbols_[index].st_name;
    if (at < strings_.size()) {
      const unsigned char* p = strings_.data() + at;
      if (const void* nul = std::memchr(p, 0, strings_.size() - static_cast<std::size_t>(at)))
        return std::string_view(reinterpret_cast<const char*>(p),
                                static_cast<std::size_t>(static_cast<const unsigned char*>(nul) - p));
    }
    const auto n = strings_.cstring(at);
    return error{n.error().code, entry_offset(index), "symbol name offset outside its string table"};
  }

  // The symbol's resolved section index: st_shndx, or the SHT_SYMTAB_SHNDX
  // entry when st_shndx == SHN_XINDEX. Reserved values (SHN_ABS, SHN_COMMON,
  // processor-specific) are returned as resolved_shndx(raw), e.g. SHNX_ABS,
  // so that they never collide with real indices >= 0xff00 (types.hpp).
  result<u32> section_index(std::size_t index) const noexcept { return section_index(index, symbols_[index]); }
  result<u32> section_index(std::size_t index, const Sym& sym) const noexcept {
    const u32 shndx = sym.st_shndx;
    if (shndx != SHN_XINDEX) return resolved_shndx(shndx);
    if (index >= shndx_.size())
      return error{errc::malformed, entry_offset(index), "SHN_XINDEX symbol without a SHT_SYMTAB_SHNDX entry"};
    return static_cast<u32>(shndx_[index]);
  }

 private:
  record_array<Sym> symbols_;
  byte_view strings_;
  record_array<word> shndx_;
  u64 offset_ = 0;
  u32 section_ = 0;
  bool dynamic_ = false;
};

namespace detail {
template <class ET>
result<symbol_table_view<ET>> symbol_table_from_section(const file<ET>& f, u32 index,
                                                        const typename ET::Shdr& sh) noexcept {
  using Sym = typename ET::Sym;
  const byte_view bytes = f.bytes();
  const u64 where = f.section_header_offset(index);
  if (sh.sh_entsize != sizeof(Sym))
    return bytes.fail(errc::bad_field, where, "symbol table sh_entsize is not the Sym size");
  if (sh.sh_link >= f.section_count())
    return bytes.fail(errc::out_of_range, where, "symbol table sh_link out of range");
  LINKSCOPE_TRY(syms, f.template table<Sym>(sh));
  auto strings = f.string_table(sh.sh_link);
  if (!strings) return strings.error();
  symbol_table_view<ET> view(syms, *strings, sh.sh_offset, sh.sh_type == SHT_DYNSYM, index);
  // A parallel SHT_SYMTAB_SHNDX section, if any links to this table.
  for (std::size_t i = 0; i < f.section_count(); ++i) {
    const auto x = f.section_headers()[i];
    if (x.sh_type != SHT_SYMTAB_SHNDX || x.sh_link != index) continue;
    LINKSCOPE_TRY(words, f.template table<typename ET::word>(x, true));
    if (words.size() < syms.size())
      return bytes.fail(errc::malformed, f.section_header_offset(i), "SHT_SYMTAB_SHNDX shorter than its symbol table");
    view.set_shndx_table(words);
    break;
  }
  return view;
}
}  // namespace detail

// .symtab (SHT_SYMTAB). An empty view when there is none.
template <class ET>
result<symbol_table_view<ET>> read_symtab(const file<ET>& f) noexcept {
  auto found = f.find_section(SHT_SYMTAB);
  if (!found) return symbol_table_view<ET>();
  return detail::symbol_table_from_section(f, found->first, found->second);
}

// The index of .symtab's first non-local symbol: the section's sh_info (gABI:
// "one greater than the symbol table index of the last local symbol"),
// checked against the symbol count.
template <class ET>
result<std::size_t> first_global(const file<ET>& f, const symbol_table_view<ET>& symtab) noexcept {
  if (symtab.empty() || symtab.is_dynamic()) return std::size_t{0};
  LINKSCOPE_TRY(header, f.section(symtab.section()));
  const u64 first = header.sh_info;
  if (first > symtab.size())
    return f.bytes().fail(errc::out_of_range, f.section_header_offset(symtab.section()), "symtab sh_info past the symbol count");
  return static_cast<std::size_t>(first);
}

// The first non-local index of a table as the static linker takes it when it
// reads a shared library's .dynsym (lld's ELFFileBase::init reads sh_info of
// .symtab and .dynsym alike), forgiving where lld is: past the count clamps to
// the count, 0 (or no section header: a table found through DT_SYMTAB) is 1,
// skipping only the null symbol.
template <class ET>
std::size_t linker_first_global(const file<ET>& f, const symbol_table_view<ET>& table) noexcept {
  if (table.empty()) return 0;
  if (table.section() == 0) return 1;
  auto header = f.section(table.section());
  if (!header) return 1;
  const u64 first = header->sh_info;
  if (first > table.size()) return table.size();
  return first == 0 ? 1 : static_cast<std::size_t>(first);
}

// COMDAT section groups (gABI "Section Groups"): an SHT_GROUP section is an
// array of words, a flag word (GRP_COMDAT) and then the indexes of its member
// sections; its sh_info names the signature symbol in `symtab` (its sh_link).
// f(signature, members) is called for every COMDAT group, in section order,
// with `members` the member section indexes, each checked to be a section of
// the file. Groups without GRP_COMDAT are skipped.
template <class ET>
struct comdat_group {
  std::string_view signature;
  record_array<typename ET::word> members;  // member section indexes (the flag word excluded)
};

template <class ET, class F>
result<void> for_each_comdat_group(const file<ET>& f, const symbol_table_view<ET>& symtab, F&& fn) {
  using word = typename ET::word;
  const u64 count = f.section_count();
  for (u64 i = 0; i < count; ++i) {
    const auto sh = f.section_headers()[static_cast<std::size_t>(i)];
    if (sh.sh_type != SHT_GROUP) continue;
    LINKSCOPE_TRY(words, f.template table<word>(sh, true));
    if (words.empty()) return f.bytes().fail(errc::malformed, sh.sh_offset, "empty SHT_GROUP section");
    if ((static_cast<u32>(words[0]) & GRP_COMDAT) == 0) continue;
    if (sh.sh_info >= symtab.size())
      return f.bytes().fail(errc::out_of_range, f.section_header_offset(i), "SHT_GROUP signature symbol out of range");
    LINKSCOPE_TRY(signature, symtab.name(static_cast<std::size_t>(sh.sh_info)));
    for (std::size_t w = 1; w < words.size(); ++w)
      if (static_cast<u64>(static_cast<u32>(words[w])) >= count)
        return f.bytes().fail(errc::out_of_range, sh.sh_offset + sizeof(word) * w, "SHT_GROUP member section out of range");
    fn(comdat_group<ET>{signature, words.drop_front(1)});
  }
  return ok();
}

// Number of dynamic symbols from DT_HASH (nchain) or DT_GNU_HASH (walk the
// last chain). Fails if neither table exists.
template <class ET>
result<u64> dynsym_count_from_hash(const dynamic_info<ET>& dyn) noexcept {
  const file<ET>& f = dyn.elf();
  const byte_view bytes = f.bytes();
  using word = typename ET::word;
  if (dyn.hash()) {
    // DT_HASH words are 4 bytes, except on s390x and Alpha (8 bytes).
    const bool wide = ET::is64 && (f.machine() == EM_S390 || f.machine() == 0x9026 /* EM_ALPHA */);
    const u64 word_size = wide ? 8 : 4;
    LINKSCOPE_TRY(off, dyn.offset_of(dyn.hash(), 2 * word_size));
    if (wide) return static_cast<u64>(bytes.read_unchecked<endian<u64, ET::endianness>>(off + 8));
    return static_cast<u64>(bytes.read_unchecked<word>(off + 4));
  }
  if (dyn.gnu_hash()) {
    using GH = typename ET::GnuHashHeader;
    LINKSCOPE_TRY(off, dyn.offset_of(dyn.gnu_hash(), sizeof(GH)));
    const GH header = bytes.read_unchecked<GH>(off);
    const u64 nbuckets = header.nbuckets;
    const u64 symoffset = header.symoffset;
    const u64 bloom_size = header.bloom_size;
    u64 bloom_bytes = 0, bucket_bytes = 0, buckets_at = 0;
    if (!checked_mul(bloom_size, sizeof(typename ET::uword), bloom_bytes) ||
        !checked_mul(nbuckets, 4, bucket_bytes) || !checked_add(off + sizeof(GH), bloom_bytes, buckets_at) ||
        !fits(buckets_at, bucket_bytes, bytes.size()))
      return bytes.fail(errc::truncated, off, "GNU hash buckets past end of file");
    u64 max_index = 0;
    bool any = false;
    for (u64 b = 0; b < nbuckets; ++b) {
      const u64 v = bytes.read_unchecked<word>(buckets_at + 4 * b);
      if (v != 0 && (!any || v > max_index)) {
        max_index = v;
        any = true;
      }
    }
    if (!any) return symoffset;
    if (max_index < symoffset) return bytes.fail(errc::out_of_range, off, "GNU hash bucket below symoffset");
    const u64 chains_at = buckets_at + bucket_bytes;
    for (u64 i = max_index;; ++i) {
      const u64 pos = chains_at + 4 * (i - symoffset);
      if (i - symoffset > bytes.size() / 4 || !fits(pos, 4, bytes.size()))
        return bytes.fail(errc::truncated, chains_at, "GNU hash chain runs off the end of the file");
      const u32 h = bytes.read_unchecked<word>(pos);
      if (h & 1u) return i + 1;
    }
  }
  return error{errc::not_found, dyn.offset(), "no DT_HASH or DT_GNU_HASH to count dynamic symbols"};
}

// The number of dynamic symbols ld.so can index at DT_SYMTAB (file offset
// `symtab_offset`): the hash tables' count, except that a SHT_DYNSYM section
// header that describes the same table (same offset, Sym-sized entries) is
// believed when it counts more. A GNU hash table says nothing of the
// undefined symbols after its chains: GNU ld gives a DSO that defines nothing
// (libtorch_global_deps) symoffset 1 and empty buckets although its
// relocations name the undefined symbols 1..4, and ld.so indexes .dynsym by
// the relocation without a bound. Without either hash table, the section's
// count is taken; with neither, it is an error.
template <class ET>
result<u64> dynsym_count(const dynamic_info<ET>& dyn, u64 symtab_offset) noexcept {
  using Sym = typename ET::Sym;
  const file<ET>& f = dyn.elf();
  auto from_hash = dynsym_count_from_hash(dyn);
  if (!from_hash && from_hash.error().code != errc::not_found) return from_hash.error();
  const u64 hashed = from_hash ? *from_hash : 0;
  if (auto sec = f.find_section(SHT_DYNSYM)) {
    const auto& sh = sec->second;
    if (static_cast<u64>(sh.sh_offset) == symtab_offset && static_cast<u64>(sh.sh_entsize) == sizeof(Sym)) {
      const u64 n = static_cast<u64>(sh.sh_size) / sizeof(Sym);
      if (n > hashed && fits(symtab_offset, n * sizeof(Sym), f.bytes().size())) return n;
    }
  }
  return from_hash;
}

// The dynamic symbol table located through the dynamic section only
// (DT_SYMTAB, DT_STRTAB, count from dynsym_count): what ld.so sees.
template <class ET>
result<symbol_table_view<ET>> read_dynsym_from_dynamic(const dynamic_info<ET>& dyn) noexcept {
  using Sym = typename ET::Sym;
  if (!dyn.present() || !dyn.symtab()) return symbol_table_view<ET>();
  if (dyn.syment() && dyn.syment().value != sizeof(Sym))
    return error{errc::bad_field, dyn.syment().at, "DT_SYMENT is not the Sym size"};
  LINKSCOPE_TRY(start, dyn.offset_of(dyn.symtab(), 0));
  LINKSCOPE_TRY(count, dynsym_count(dyn, start));
  u64 bytes_needed = 0;
  if (!checked_mul(count, sizeof(Sym), bytes_needed))
    return error{errc::overflow, dyn.symtab().at, "dynamic symbol count overflows"};
  LINKSCOPE_TRY(off, dyn.offset_of(dyn.symtab(), bytes_needed));
  const byte_view bytes = dyn.elf().bytes();
  record_array<Sym> syms(bytes.data() + off, static_cast<std::size_t>(count));
  return symbol_table_view<ET>(syms, dyn.strings(), off, true, 0);
}

// .dynsym: the SHT_DYNSYM section when section headers exist (what nm -D
// reads), else through the dynamic section.
template <class ET>
result<symbol_table_view<ET>> read_dynsym(const file<ET>& f, const dynamic_info<ET>& dyn) noexcept {
  if (f.section_count() > 0) {
    auto found = f.find_section(SHT_DYNSYM);
    if (found) return detail::symbol_table_from_section(f, found->first, found->second);
    return symbol_table_view<ET>();
  }
  return read_dynsym_from_dynamic(dyn);
}

}  // namespace elf
}  // namespace v0
}  // namespace linkscope
