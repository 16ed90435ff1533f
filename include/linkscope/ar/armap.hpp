// linkscope/ar/armap.hpp — archive symbol tables -> (name, member offset).
//
// The layouts (all offsets are member *header* offsets in the archive):
//   gnu32  "/" (GNU/SysV ar(5); PE/COFF spec §7.4 "First Linker Member"):
//          u32 BE count N, N x u32 BE offsets, N NUL-terminated names in order.
//   gnu64  "/SYM64/": the same with u64 BE count and offsets.
//   bsd32  "__.SYMDEF" / "__.SYMDEF SORTED" (4.4BSD ranlib(5), Apple ar(5)):
//          u32 ranlib_bytes, ranlib_bytes/8 x {u32 strx, u32 member offset},
//          u32 strtab_bytes, strtab. Written in the producer's byte order:
//          little-endian (llvm-ar, x86/arm Darwin) or big-endian (PowerPC,
//          old BSDs). The order is detected from which reading is consistent.
//   bsd64  "__.SYMDEF_64": the same with u64 fields ({u64 strx, u64 offset}).
//   coff_second  PE/COFF spec §7.5 "Second Linker Member": u32 LE M,
//          M x u32 LE member offsets, u32 LE N, N x u16 LE 1-based indices
//          into the offsets, N names (sorted).
//   aix32 / aix64  AIX big archive global symbol tables: u32 (u64) BE count,
//          count x u32 (u64) BE offsets, names.
// Every count is checked against the bytes of its table before anything is
// iterated ("armap count larger than the table"). Names are string_views into
// the archive. The default table is the first one (what nm -s prints: the
// first linker member of a .lib); an AIX archive with both tables yields the
// 32-bit entries, then the 64-bit ones.
//
// `armap` is a symbol_source: each entry becomes a symbol with
// origin = member header offset, index = entry number, defined = true.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <type_traits>

#include "linkscope/ar/archive.hpp"
#include "linkscope/core/bytes.hpp"
#include "linkscope/core/config.hpp"
#include "linkscope/core/error.hpp"
#include "linkscope/symbols/symbol.hpp"
#include "linkscope/symbols/table.hpp"

namespace linkscope {
inline namespace v0 {
namespace ar {

struct armap_entry {
  std::string_view name;
  std::uint64_t member_offset = 0;  // header offset of the defining member
  std::uint32_t index = 0;          // entry number in the armap (over all parts)
};

class armap {
 public:
  armap() = default;

  // The default table(s) of `a` (see the header comment). An archive with no
  // symbol table gives an empty armap.
  static result<armap> read(const archive& a);
  // One particular table (e.g. table_kind::coff_second).
  static result<armap> read(const archive& a, table_kind which);
  static result<armap> read(archive&&) = delete;
  static result<armap> read(archive&&, table_kind) = delete;

  bool empty() const noexcept { return total_ == 0; }
  // Number of entries (validated against the table bytes).
  std::size_t size() const noexcept { return static_cast<std::size_t>(total_); }
  table_kind kind() const noexcept { return part_count_ > 0 ? parts_[0].kind : table_kind::none; }
  std::size_t part_count() const noexcept { return part_count_; }
  table_kind part_kind(std::size_t i) const noexcept { return parts_[i].kind; }
  bool big_endian() const noexcept { return part_count_ > 0 && parts_[0].big_endian; }
  // File offset of the first table's header.
  std::uint64_t header_offset() const noexcept { return part_count_ > 0 ? parts_[0].header_offset : 0; }

  // f(const armap_entry&) -> void or bool (false stops). Fails on a malformed
  // table (names running out, a bad string index, a bad member index).
  template <class F>
  result<void> for_each(F&& f) const {
    std::uint32_t index = 0;
    for (std::size_t p = 0; p < part_count_; ++p) {
      bool go_on = true;
      LINKSCOPE_CHECK(visit_part(parts_[p], index, [&](const armap_entry& e) {
        if constexpr (std::is_same_v<std::invoke_result_t<F&, const armap_entry&>, bool>) {
          go_on = f(e);
        } else {
          f(e);
        }
        return go_on;
      }));
      if (!go_on) break;
    }
    return {};
  }

  // symbol_source: origin = member header offset, index = entry number.
  template <class F>
  result<void> for_each_symbol(F&& f) const {
    return for_each([&](const armap_entry& e) {
      symbol sym;
      sym.name = e.name;
      sym.origin = e.member_offset;
      sym.index = e.index;
      sym.defined = true;
      sym.bind = binding::global;
      return invoke_symbol_callback(f, sym);
    });
  }

 private:
  struct part {
    table_kind kind = table_kind::none;
    std::uint64_t header_offset = 0;
    byte_view data;
    std::uint64_t count = 0;
    std::uint64_t table_offset = 0;  // offset in data of the first offset/ranlib entry
    std::uint64_t width = 4;         // width of one offset field
    std::uint64_t strings_offset = 0;
    std::uint64_t strings_size = 0;
    std::uint64_t indices_offset = 0;  // coff_second
    std::uint64_t member_count = 0;    // coff_second
    bool big_endian = true;
  };

  static result<part> parse_part(const symbol_table_member& t);
  template <class F>
  static result<void> visit_part(const part& p, std::uint32_t& index, F&& f);

  static std::uint64_t load_word(const unsigned char* at, std::uint64_t width, bool big) noexcept {
    if (width == 8) return big ? load<std::uint64_t, std::endian::big>(at) : load<std::uint64_t, std::endian::little>(at);
    return big ? load<std::uint32_t, std::endian::big>(at) : load<std::uint32_t, std::endian::little>(at);
  }

  part parts_[2];
  std::size_t part_count_ = 0;
  std::uint64_t total_ = 0;
};

static_assert(symbol_source<armap>);


template <class F>
result<void> armap::visit_part(const part& p, std::uint32_t& index, F&& f) {
  const byte_view& d = p.data;
  const unsigned char* data = d.data();
  const char* strings = reinterpret_cast<const char*>(data + p.strings_offset);
  const std::size_t strings_size = static_cast<std::size_t>(p.strings_size);
  if (p.kind == table_kind::bsd32 || p.kind == table_kind::bsd64) {
    const std::uint64_t w = p.width;
    for (std::uint64_t i = 0; i < p.count; ++i) {
      const unsigned char* entry = data + p.table_offset + i * 2 * w;
      const std::uint64_t strx = load_word(entry, w, p.big_endian);
      const std::uint64_t offset = load_word(entry + w, w, p.big_endian);
      if (strx >= strings_size)
        return d.fail(errc::out_of_range, p.table_offset + i * 2 * w, "__.SYMDEF string index past the string table");
      const void* nul = std::memchr(strings + strx, 0, strings_size - static_cast<std::size_t>(strx));
      const std::size_t len = nul != nullptr ? static_cast<std::size_t>(static_cast<const char*>(nul) - (strings + strx))
                                             : strings_size - static_cast<std::size_t>(strx);
      if (!f(armap_entry{std::string_view(strings + strx, len), offset, index++})) return {};
    }
    return {};
  }
  // Sequential names.
  std::size_t pos = 0;
  for (std::uint64_t i = 0; i < p.count; ++i) {
    if (pos >= strings_size)
      return d.fail(errc::truncated, p.strings_offset + pos, "armap names end before its symbol count");
    const void* nul = std::memchr(strings + pos, 0, strings_size - pos);
    if (nul == nullptr) return d.fail(errc::malformed, p.strings_offset + pos, "armap name not terminated");
    const std::size_t len = static_cast<std::size_t>(static_cast<const char*>(nul) - (strings + pos));
    std::uint64_t offset = 0;
    if (p.kind == table_kind::coff_second) {
      const std::uint16_t member_index = load<std::uint16_t, std::endian::little>(data + p.indices_offset + i * 2);
      if (member_index == 0 || member_index > p.member_count)
        return d.fail(errc::out_of_range, p.indices_offset + i * 2, "second linker member index out of range");
      offset = load<std::uint32_t, std::endian::little>(data + p.table_offset + (member_index - 1u) * 4u);
    } else {
      offset = load_word(data + p.table_offset + i * p.width, p.width, true);
    }
    if (!f(armap_entry{std::string_view(strings + pos, len), offset, index++})) return {};
    pos += len + 1;
  }
  return {};
}

inline result<armap> armap::read(const archive& a) {
  armap map;
  if (!a.has_symbol_table()) return map;
  const bool both = a.kind() == format::aix_big;
  for (std::size_t i = 0; i < a.symbol_table_count() && (i == 0 || both); ++i) {
    LINKSCOPE_TRY(p, parse_part(a.symbol_table(i)));
    map.total_ += p.count;
    map.parts_[map.part_count_++] = p;
  }
  return map;
}

inline result<armap> armap::read(const archive& a, table_kind which) {
  armap map;
  for (std::size_t i = 0; i < a.symbol_table_count(); ++i) {
    if (a.symbol_table(i).kind != which) continue;
    LINKSCOPE_TRY(p, parse_part(a.symbol_table(i)));
    map.total_ = p.count;
    map.parts_[map.part_count_++] = p;
    return map;
  }
  return error{errc::not_found, no_offset, "the archive has no symbol table of that kind"};
}

#if LINKSCOPE_DEFINITIONS
LINKSCOPE_FUNC result<armap::part> armap::parse_part(const symbol_table_member& t) {
  part p;
  p.kind = t.kind;
  p.header_offset = t.header_offset;
  p.data = t.data;
  const byte_view& d = t.data;
  switch (t.kind) {
    case table_kind::gnu32:
    case table_kind::gnu64:
    case table_kind::aix32:
    case table_kind::aix64: {
      p.width = (t.kind == table_kind::gnu64 || t.kind == table_kind::aix64) ? 8 : 4;
      p.big_endian = true;
      if (d.size() < p.width) return d.fail(errc::truncated, 0, "armap too small for its symbol count");
      p.count = load_word(d.data(), p.width, true);
      // count * width must fit in what follows the count.
      if (p.count > (d.size() - p.width) / p.width)
        return d.fail(errc::too_large, 0, "armap symbol count larger than the table");
      p.table_offset = p.width;
      p.strings_offset = p.width + p.count * p.width;
      p.strings_size = d.size() - p.strings_offset;
      return p;
    }
    case table_kind::bsd32:
    case table_kind::bsd64: {
      const std::uint64_t w = t.kind == table_kind::bsd64 ? 8 : 4;
      p.width = w;
      if (d.size() < w) return d.fail(errc::truncated, 0, "__.SYMDEF too small for its size field");
      // Try little-endian first (llvm-ar, Darwin), then big-endian; the
      // right one has ranlib bytes that are a multiple of the entry size
      // and a string table size that fits.
      bool chosen = false;
      for (int attempt = 0; attempt < 2 && !chosen; ++attempt) {
        const bool big = attempt == 1;
        const std::uint64_t ranlib_bytes = load_word(d.data(), w, big);
        if (ranlib_bytes % (2 * w) != 0) continue;
        if (ranlib_bytes > d.size() - w) continue;
        const std::uint64_t after = w + ranlib_bytes;
        if (d.size() - after < w) continue;
        const std::uint64_t strtab_bytes = load_word(d.data() + after, w, big);
        if (strtab_bytes > d.size() - after - w) continue;
        p.big_endian = big;
        p.count = ranlib_bytes / (2 * w);
        p.table_offset = w;
        p.strings_offset = after + w;
        p.strings_size = strtab_bytes;
        chosen = true;
      }
      if (!chosen) {
        // Report the little-endian reading's problem.
        const std::uint64_t ranlib_bytes = load_word(d.data(), w, false);
        if (ranlib_bytes % (2 * w) != 0)
          return d.fail(errc::bad_field, 0, "__.SYMDEF ranlib size is not a multiple of the entry size");
        if (ranlib_bytes > d.size() - w) return d.fail(errc::too_large, 0, "armap symbol count larger than the table");
        return d.fail(errc::too_large, w + ranlib_bytes, "__.SYMDEF string table size larger than the table");
      }
      return p;
    }
    case table_kind::coff_second: {
      p.width = 4;
      p.big_endian = false;
      if (d.size() < 4) return d.fail(errc::truncated, 0, "second linker member too small");
      p.member_count = load<std::uint32_t, std::endian::little>(d.data());
      if (p.member_count > (d.size() - 4) / 4)
        return d.fail(errc::too_large, 0, "second linker member count larger than the table");
      p.table_offset = 4;
      const std::uint64_t count_at = 4 + p.member_count * 4;
      if (d.size() - count_at < 4) return d.fail(errc::truncated, count_at, "second linker member symbol count missing");
      p.count = load<std::uint32_t, std::endian::little>(d.data() + count_at);
      if (p.count > (d.size() - count_at - 4) / 2)
        return d.fail(errc::too_large, count_at, "armap symbol count larger than the table");
      p.indices_offset = count_at + 4;
      p.strings_offset = p.indices_offset + p.count * 2;
      p.strings_size = d.size() - p.strings_offset;
      return p;
    }
    case table_kind::none:
      break;
  }
  return error{errc::unsupported, t.header_offset, "unknown symbol table kind"};
}
#endif  // LINKSCOPE_DEFINITIONS

}  // namespace ar
}  // namespace v0
}  // namespace linkscope
