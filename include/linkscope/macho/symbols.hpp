// linkscope/macho/symbols.hpp — nlist symbols as the one symbol model.
//
// LC_SYMTAB (<mach-o/loader.h>) locates an array of `nsyms` nlist/nlist_64
// records (<mach-o/nlist.h>) and a string table. Each record is
//   n_strx   offset of the name in the string table
//   n_type   N_STAB (0xe0: a debugging "stab", kept out of the model),
//            N_PEXT (0x10: private extern), N_TYPE (0x0e: N_UNDF, N_ABS,
//            N_SECT, N_PBUD prebound undefined, N_INDR indirect), N_EXT (0x01)
//   n_sect   1-based section ordinal over all segments' sections, or NO_SECT
//   n_desc   N_WEAK_DEF, N_WEAK_REF, N_NO_DEAD_STRIP, REFERENCED_DYNAMICALLY,
//            N_ARM_THUMB_DEF, N_SYMBOL_RESOLVER, N_ALT_ENTRY; for an undefined
//            symbol of a two-level-namespace image (MH_TWOLEVEL) the high byte
//            is its library ordinal (1..253 the n-th dylib command, 0 SELF,
//            0xfe DYNAMIC_LOOKUP, 0xff EXECUTABLE); for a common symbol
//            (N_UNDF | N_EXT with n_value != 0, n_value being its size) the
//            bits 8..11 are log2 of its alignment
//   n_value  address, or common size, or (N_INDR) the string index of the
//            symbol it stands for
//
// Mapping into `symbol`: N_EXT is a global (binding::weak with N_WEAK_DEF or
// N_WEAK_REF), else a local; N_PEXT is visibility::hidden (a private extern,
// which a static link turns into a local "was a private external"); N_UNDF
// and N_PBUD are undefined; a common is defined with kind common, value =
// its alignment and size = n_value, as ELF's SHN_COMMON is; N_ABS has section
// 0xfff1 (ELF's SHN_ABS); N_SECT has section = n_sect and kind func
// (instructions), tls (thread-local variables) or object. The library
// ordinal follows symbol.hpp's convention. Behaviour follows LLVM's
// MachOObjectFile::getSymbolFlags and llvm-nm's darwin printer.
#pragma once

#include <string_view>
#include <vector>

#include "linkscope/core/bytes.hpp"
#include "linkscope/core/config.hpp"
#include "linkscope/core/error.hpp"
#include "linkscope/macho/fat.hpp"
#include "linkscope/macho/file.hpp"
#include "linkscope/macho/types.hpp"
#include "linkscope/symbols/symbol.hpp"
#include "linkscope/symbols/table.hpp"

namespace linkscope {
inline namespace v0 {
namespace macho {

inline constexpr u16 absolute_section = 0xfff1;  // symbol::section of an N_ABS symbol
inline constexpr u32 S_THREAD_LOCAL_VARIABLES = 0x13;

// One nlist entry, decoded (any variant).
struct nlist_entry {
  std::string_view name;
  std::string_view indirect_name;  // N_INDR: the symbol it stands for
  u64 value = 0;
  u32 index = 0;
  u8 n_type = 0;
  u8 n_sect = 0;
  u16 n_desc = 0;

  u8 type() const noexcept { return static_cast<u8>(n_type & N_TYPE); }
  bool is_stab() const noexcept { return (n_type & N_STAB) != 0; }
  bool is_external() const noexcept { return (n_type & N_EXT) != 0; }
  bool is_private_external() const noexcept { return (n_type & N_PEXT) != 0; }
  bool is_common() const noexcept { return !is_stab() && type() == N_UNDF && is_external() && value != 0; }
  bool is_undefined() const noexcept { return !is_common() && (type() == N_UNDF || type() == N_PBUD); }
  bool weak_def() const noexcept { return (n_desc & N_WEAK_DEF) != 0; }
  bool weak_ref() const noexcept { return (n_desc & N_WEAK_REF) != 0; }
  bool referenced_dynamically() const noexcept { return (n_desc & REFERENCED_DYNAMICALLY) != 0; }
  bool no_dead_strip() const noexcept { return (n_desc & N_NO_DEAD_STRIP) != 0; }
  u8 library_ordinal() const noexcept { return static_cast<u8>(n_desc >> 8); }
  u8 common_align() const noexcept { return static_cast<u8>((n_desc >> 8) & 0x0f); }
};

// n_desc's library ordinal in symbol.hpp's convention.
constexpr std::int16_t to_library_ordinal(u8 ordinal) noexcept {
  switch (ordinal) {
    case SELF_LIBRARY_ORDINAL: return library_ordinal_self;
    case DYNAMIC_LOOKUP_ORDINAL: return library_ordinal_flat_lookup;
    case EXECUTABLE_ORDINAL: return library_ordinal_executable;
    default: return static_cast<std::int16_t>(ordinal);
  }
}

// What a section holds, for the symbol kind and nm's letter.
struct section_info {
  std::string_view segment;
  std::string_view name;
  u32 flags = 0;
};

template <class MT>
result<std::vector<section_info>> section_infos(const file<MT>& f) {
  LINKSCOPE_TRY(segments, f.segments());
  std::vector<section_info> out;
  for (const auto& seg : segments) {
    for (std::size_t i = 0; i < seg.sections.size(); ++i) {
      const auto [segment, name] = seg.section_names(i);
      out.push_back({segment, name, seg.sections[i].flags});
    }
  }
  return out;
}

// Visit every nlist entry (stabs included), names checked against the string
// table; callback(const nlist_entry&) returns false to stop.
template <class MT, class F>
result<void> for_each_nlist(const file<MT>& f, F&& callback) {
  LINKSCOPE_TRY(table, f.symtab());
  if (!table) return ok();
  for (std::size_t i = 0; i < table->symbols.size(); ++i) {
    const auto sym = table->symbols[i];
    LINKSCOPE_TRY(name, f.symbol_name(*table, sym));
    nlist_entry e;
    e.name = name;
    e.value = sym.n_value;
    e.index = static_cast<u32>(i);
    e.n_type = sym.n_type_raw;
    e.n_sect = sym.n_sect;
    e.n_desc = sym.n_desc;
    if (!e.is_stab() && e.type() == N_INDR) {
      typename MT::nlist target = sym;
      target.n_strx.set(static_cast<u32>(e.value));
      if (e.value > 0xffffffffu || e.value >= table->strings.size())
        return table->strings.fail(errc::out_of_range, 0, "N_INDR name index past end of string table");
      LINKSCOPE_TRY(indirect, f.symbol_name(*table, target));
      e.indirect_name = indirect;
    }
    if (e.type() == N_SECT && !e.is_stab() && e.n_sect == NO_SECT)
      return f.bytes().fail(errc::bad_field, 0, "N_SECT symbol with n_sect NO_SECT");
    if (!callback(e)) break;
  }
  return ok();
}

// The symbol model of one entry. `sections` gives the kinds; `two_level` and
// `linked` (not MH_OBJECT) decide whether the library ordinal means anything.
symbol to_symbol(const nlist_entry& e, const std::vector<section_info>& sections, bool two_level,
                        bool linked) noexcept;

// llvm-nm's one-letter type of an entry, lower case for a non-external one:
// U undefined, C common, A absolute, I indirect, T __TEXT,__text,
// D __DATA,__data, B __DATA,__bss, S any other section, '-' a stab.
char nm_type_char(const nlist_entry& e, const std::vector<section_info>& sections) noexcept;

#if LINKSCOPE_DEFINITIONS
LINKSCOPE_FUNC symbol to_symbol(const nlist_entry& e, const std::vector<section_info>& sections, bool two_level,
                        bool linked) noexcept {
  symbol out;
  out.name = e.name;
  out.value = e.value;
  out.index = e.index;
  out.bind = !e.is_external() ? binding::local : (e.weak_def() || e.weak_ref()) ? binding::weak : binding::global;
  out.vis = e.is_private_external() ? visibility::hidden : visibility::default_;
  if (e.is_common()) {
    out.defined = true;
    out.kind = symbol_kind::common;
    out.size = e.value;
    out.value = u64{1} << e.common_align();
    return out;
  }
  switch (e.type()) {
    case N_UNDF:
    case N_PBUD:
      out.defined = false;
      out.section = 0;
      out.value = 0;
      if (linked) out.library_ordinal = two_level ? to_library_ordinal(e.library_ordinal()) : library_ordinal_flat_lookup;
      break;
    case N_ABS:
      out.section = absolute_section;
      break;
    case N_INDR:
      out.kind = symbol_kind::other;
      break;
    case N_SECT: {
      out.section = e.n_sect;
      if (e.n_sect >= 1 && e.n_sect <= sections.size()) {
        const u32 flags = sections[e.n_sect - 1u].flags;
        if ((flags & SECTION_TYPE) == S_THREAD_LOCAL_VARIABLES)
          out.kind = symbol_kind::tls;
        else if ((flags & (S_ATTR_PURE_INSTRUCTIONS | S_ATTR_SOME_INSTRUCTIONS)) != 0)
          out.kind = symbol_kind::func;
        else
          out.kind = symbol_kind::object;
      }
      break;
    }
    default:
      out.kind = symbol_kind::other;
      break;
  }
  return out;
}

LINKSCOPE_FUNC char nm_type_char(const nlist_entry& e, const std::vector<section_info>& sections) noexcept {
  if (e.is_stab()) return '-';
  if (e.is_common()) return 'C';
  if (e.type() == N_UNDF) return 'U';
  char c = '?';
  switch (e.type()) {
    case N_ABS: c = 'a'; break;
    case N_INDR: c = 'i'; break;
    case N_PBUD: c = 'u'; break;
    case N_SECT:
      if (e.n_sect >= 1 && e.n_sect <= sections.size()) {
        const auto& s = sections[e.n_sect - 1u];
        if (s.segment == "__TEXT" && s.name == "__text")
          c = 't';
        else if (s.segment == "__DATA" && s.name == "__data")
          c = 'd';
        else if (s.segment == "__DATA" && s.name == "__bss")
          c = 'b';
        else
          c = 's';
      } else {
        c = 's';
      }
      break;
    default: break;
  }
  if (e.is_external() && c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  return c;
}
#endif  // LINKSCOPE_DEFINITIONS

// Visit the symbols (stabs left out) of one opened image.
template <class MT, class F>
result<void> for_each_macho_symbol(const file<MT>& f, u64 origin, F&& callback) {
  LINKSCOPE_TRY(sections, section_infos(f));
  const bool two_level = f.is_two_level();
  const bool linked = f.filetype() != MH_OBJECT;
  return for_each_nlist(f, [&](const nlist_entry& e) {
    if (e.is_stab()) return true;
    symbol out = to_symbol(e, sections, two_level, linked);
    out.origin = origin;
    return invoke_symbol_callback(callback, out);
  });
}

// A symbol_source over the nlist symbols of one thin Mach-O image (object,
// dylib, bundle or executable) — for a universal file, of one slice.
class symbols_source {
 public:
  symbols_source() = default;
  explicit symbols_source(byte_view bytes, u64 origin = 0) noexcept : bytes_(bytes), origin_(origin) {}

  template <class F>
  result<void> for_each_symbol(F&& f) const {
    return visit_macho(bytes_, [&](const auto& image) -> result<void> { return for_each_macho_symbol(image, origin_, f); });
  }

 private:
  byte_view bytes_;
  u64 origin_ = 0;
};
static_assert(symbol_source<symbols_source>);

}  // namespace macho
}  // namespace v0
}  // namespace linkscope
