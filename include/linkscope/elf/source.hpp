// linkscope/elf/source.hpp — ELF objects and DSOs as a `symbol_source`.
//
// `elf::symbols_source{bytes, table}` enumerates the .dynsym (with versions:
// name@VER / name@@VER as GNU nm prints them, see versions.hpp) or the
// .symtab of any ELF variant as `linkscope::symbol`s. Entry 0 (the null
// symbol) is skipped; every other entry is reported, locals included, so a
// caller filters what it needs (`sym.is_global()`, `sym.defined`). The
// dispatch on class and byte order happens once per for_each_symbol call.
//
// For the dynamic table, a file without section headers is read through
// PT_DYNAMIC (DT_SYMTAB, DT_STRTAB, the hash tables for the count, DT_VERSYM
// ...), as ld.so would.
#pragma once

#include <string_view>

#include "linkscope/core/bytes.hpp"
#include "linkscope/core/error.hpp"
#include "linkscope/elf/dynamic.hpp"
#include "linkscope/elf/file.hpp"
#include "linkscope/elf/symbols.hpp"
#include "linkscope/elf/types.hpp"
#include "linkscope/elf/versions.hpp"
#include "linkscope/symbols/symbol.hpp"
#include "linkscope/symbols/table.hpp"

namespace linkscope {
inline namespace v0 {
namespace elf {

enum class symbol_table_kind : u8 { dynamic, static_ };

// Decode the fixed fields of an ELF symbol into the shared model (name and
// version are left to the caller). `shndx` is the resolved section index.
template <class ET>
symbol to_symbol(const typename ET::Sym& sym, u32 shndx, u32 index) noexcept {
  symbol out;
  out.value = sym.st_value;
  out.size = sym.st_size;
  out.index = index;
  // Resolved index (see symbol_table_view::section_index); reserved values
  // are stored back as their 16-bit st_shndx (SHN_ABS, SHN_COMMON ...).
  out.section = shndx > 0xffff ? static_cast<u16>(shndx & 0xffff) : static_cast<u16>(shndx);
  out.defined = shndx != SHN_UNDEF;
  switch (sym.st_bind()) {
    case STB_LOCAL: out.bind = binding::local; break;
    case STB_WEAK: out.bind = binding::weak; break;
    case STB_GNU_UNIQUE: out.bind = binding::unique; break;
    default: out.bind = binding::global; break;
  }
  switch (sym.st_type()) {
    case STT_NOTYPE: out.kind = symbol_kind::notype; break;
    case STT_OBJECT: out.kind = symbol_kind::object; break;
    case STT_FUNC: out.kind = symbol_kind::func; break;
    case STT_SECTION: out.kind = symbol_kind::section; break;
    case STT_FILE: out.kind = symbol_kind::file; break;
    case STT_COMMON: out.kind = symbol_kind::common; break;
    case STT_TLS: out.kind = symbol_kind::tls; break;
    case STT_GNU_IFUNC: out.kind = symbol_kind::ifunc; break;
    default: out.kind = symbol_kind::other; break;
  }
  if (shndx == SHNX_COMMON) out.kind = symbol_kind::common;
  switch (sym.st_visibility()) {
    case STV_INTERNAL: out.vis = visibility::internal; break;
    case STV_HIDDEN: out.vis = visibility::hidden; break;
    case STV_PROTECTED: out.vis = visibility::protected_; break;
    default: out.vis = visibility::default_; break;
  }
  return out;
}

// Visit the symbols of one table of an already opened file.
template <class ET, class F>
result<void> for_each_elf_symbol(const file<ET>& f, symbol_table_kind which, u64 origin, F&& callback) {
  LINKSCOPE_TRY(dyn, dynamic_info<ET>::read(f));
  symbol_table_view<ET> table;
  version_tables<ET> versions;
  if (which == symbol_table_kind::dynamic) {
    LINKSCOPE_TRY(dynsym, read_dynsym(f, dyn));
    table = dynsym;
    LINKSCOPE_TRY(v, version_tables<ET>::read(f, dyn, table.size()));
    versions = std::move(v);
  } else {
    LINKSCOPE_TRY(symtab, read_symtab(f));
    table = symtab;
  }
  for (std::size_t i = 1; i < table.size(); ++i) {
    const auto sym = table[i];
    LINKSCOPE_TRY(shndx, table.section_index(i, sym));
    LINKSCOPE_TRY(name, table.name(i));
    symbol out = to_symbol<ET>(sym, shndx, static_cast<u32>(i));
    out.name = name;
    out.origin = origin;
    if (versions.present()) {
      LINKSCOPE_TRY(ver, versions.of(i, name, out.defined));
      out.version = ver.name;
      out.ver = ver.kind;
    }
    if (!invoke_symbol_callback(callback, out)) break;
  }
  return ok();
}

// The symbol GNU ld adds to .dynsym for each version a DSO defines
// (`GLIBC_2.15`, `ZLIB_1.2.0`: STT_OBJECT, SHN_ABS, value 0, size 0, and its
// version is itself, which the reader leaves out as nm does; nm -D prints
// "A GLIBC_2.15"). It names a version, not code or data, so two libraries
// that both define a version hold no duplicate definitions.
inline bool is_version_definition(const symbol& s) noexcept {
  return s.defined && s.section == SHN_ABS && s.kind == symbol_kind::object && s.value == 0 && s.size == 0 &&
         (s.version.empty() || s.version == s.name);
}

// A symbol_source over the bytes of one ELF file (object, DSO or executable).
class symbols_source {
 public:
  symbols_source() = default;
  explicit symbols_source(byte_view bytes, symbol_table_kind which = symbol_table_kind::dynamic, u64 origin = 0) noexcept
      : bytes_(bytes), which_(which), origin_(origin) {}

  template <class F>
  result<void> for_each_symbol(F&& f) const {
    return visit_elf(bytes_, [&](const auto& elf_file) -> result<void> {
      return for_each_elf_symbol(elf_file, which_, origin_, f);
    });
  }

 private:
  byte_view bytes_;
  symbol_table_kind which_ = symbol_table_kind::dynamic;
  u64 origin_ = 0;
};
static_assert(symbol_source<symbols_source>);

}  // namespace elf
}  // namespace v0
}  // namespace linkscope
