// linkscope/coff/object.hpp — COFF relocatable objects, standard and bigobj.
//
// Layout (PE/COFF spec sections 3-5; bigobj per MSVC's winnt.h
// ANON_OBJECT_HEADER_BIGOBJ):
//
//   standard: file_header (20 B) | section headers (40 B each)
//   bigobj:   bigobj_header (56 B) | section headers (40 B each)
//   ... section raw data and relocations (10 B each) anywhere in the file ...
//   symbol table at PointerToSymbolTable: NumberOfSymbols slots of 18 B
//   (standard) or 20 B (bigobj); a symbol with NumberOfAuxSymbols = n owns
//   the next n slots as auxiliary records:
//     - section definition (STATIC symbol named like its section, value 0):
//       length, relocation count, checksum, COMDAT selection and the
//       associated section (bigobj adds the high 16 bits);
//     - weak external (storage class WEAK_EXTERNAL): the default symbol index
//       and the search characteristics;
//     - function definition (EXTERNAL function in a section): size, next;
//     - file (storage class FILE): the file name, NUL-padded over the slots.
//   string table right after the symbol table: u32 size (itself included),
//   then NUL-terminated names referenced by "/offset" section names and by
//   symbol names whose first 4 bytes are zero.
//
// `basic_object<Sym>` is written once against the symbol record (symbol16 or
// symbol32). `visit_object(bytes, f)` detects the form once and calls f with
// the right instantiation; `object` wraps either for callers that want one
// type. Every index (section, symbol, aux, string-table offset) is checked
// before use; nothing is read outside the bytes given.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string_view>
#include <type_traits>
#include <utility>

#include "linkscope/coff/types.hpp"
#include "linkscope/core/bytes.hpp"
#include "linkscope/core/config.hpp"
#include "linkscope/core/error.hpp"
#include "linkscope/symbols/symbol.hpp"
#include "linkscope/symbols/table.hpp"

namespace linkscope {
inline namespace v0 {
namespace coff {

enum class object_form : u8 { standard, bigobj };

// A decoded section header.
struct section {
  u32 index = 0;  // 1-based, as symbols number them
  std::string_view name;
  section_header header{};

  u32 characteristics() const noexcept { return header.characteristics; }
  bool is_code() const noexcept { return (characteristics() & scn::cnt_code) != 0; }
  bool is_bss() const noexcept { return (characteristics() & scn::cnt_uninitialized_data) != 0; }
  bool is_writable() const noexcept { return (characteristics() & scn::mem_write) != 0; }
  bool is_comdat() const noexcept { return (characteristics() & scn::lnk_comdat) != 0; }
  // BFD's SEC_HAS_CONTENTS: raw data present in the file.
  bool has_contents() const noexcept {
    return header.pointer_to_raw_data != 0 && header.size_of_raw_data != 0 && !is_bss();
  }
};

// A decoded symbol-table entry with its auxiliary records.
struct symbol_entry {
  std::string_view name;
  u32 index = 0;  // slot index in the symbol table
  u32 value = 0;
  i32 section_number = 0;
  u16 type = 0;
  u8 storage_class = 0;
  u8 aux_count = 0;
  byte_view aux;        // aux_count slots
  u32 aux_stride = 18;  // 18 (standard) or 20 (bigobj)

  bool is_external() const noexcept { return storage_class == storage_class::external; }
  bool is_weak_external() const noexcept { return storage_class == storage_class::weak_external; }
  bool is_undefined() const noexcept {
    return section_number == sym_undefined && is_external() && value == 0;
  }
  bool is_common() const noexcept { return section_number == sym_undefined && is_external() && value != 0; }
  bool is_absolute() const noexcept { return section_number == sym_absolute; }
  bool is_debug() const noexcept { return section_number == sym_debug; }
  bool is_function() const noexcept { return ((type >> 4) & 3) == 2; }  // IMAGE_SYM_DTYPE_FUNCTION
  bool is_file() const noexcept { return storage_class == storage_class::file; }
  bool is_section_definition() const noexcept {
    if (aux_count == 0 || value != 0) return false;
    if (storage_class == storage_class::static_) return section_number > 0;
    // C++/CLI appdomain globals: external ABS symbols with a section aux.
    return storage_class == storage_class::external && section_number == sym_absolute;
  }

  std::optional<aux_section_definition> section_definition() const noexcept {
    if (!is_section_definition() || aux.size() < sizeof(aux_section_definition)) return std::nullopt;
    return aux.read_unchecked<aux_section_definition>(0);
  }
  std::optional<aux_weak_external> weak_external() const noexcept {
    if (!is_weak_external() || aux_count == 0 || aux.size() < sizeof(aux_weak_external)) return std::nullopt;
    return aux.read_unchecked<aux_weak_external>(0);
  }
  std::optional<aux_function_definition> function_definition() const noexcept {
    if (!is_external() || !is_function() || section_number <= 0 || aux_count == 0 ||
        aux.size() < sizeof(aux_function_definition))
      return std::nullopt;
    return aux.read_unchecked<aux_function_definition>(0);
  }
  // The file name carried by a FILE symbol's aux records (NUL padding cut).
  std::string_view file_name() const noexcept {
    if (!is_file()) return {};
    std::string_view s = aux.chars();
    std::size_t nul = s.find('\0');
    return nul == std::string_view::npos ? s : s.substr(0, nul);
  }
  // COMDAT selection of a section-definition symbol (none otherwise).
  comdat_selection selection() const noexcept {
    auto def = section_definition();
    if (!def || def->selection > 7) return comdat_selection::none;
    return static_cast<comdat_selection>(def->selection);
  }
  // Associated section of an ASSOCIATIVE COMDAT (bigobj: 32 bits).
  u32 associated_section() const noexcept {
    auto def = section_definition();
    if (!def) return 0;
    u32 n = def->number;
    if (aux_stride == 20) n |= u32{def->high_number} << 16;
    return n;
  }
};

namespace detail {
inline bool decode_base64_offset(std::string_view digits, u64& out) noexcept {
  u64 value = 0;
  for (char c : digits) {
    unsigned d = 0;
    if (c >= 'A' && c <= 'Z') d = static_cast<unsigned>(c - 'A');
    else if (c >= 'a' && c <= 'z') d = static_cast<unsigned>(c - 'a') + 26;
    else if (c >= '0' && c <= '9') d = static_cast<unsigned>(c - '0') + 52;
    else if (c == '+') d = 62;
    else if (c == '/') d = 63;
    else return false;
    value = value * 64 + d;
    if (value > 0xffffffffu) return false;
  }
  out = value;
  return true;
}
inline std::string_view fixed_name(const char* p, std::size_t n) noexcept {
  std::size_t len = 0;
  while (len < n && p[len] != '\0') ++len;
  return std::string_view(p, len);
}
}  // namespace detail

// True when the bytes start like a bigobj header (Sig1 0, Sig2 0xFFFF,
// Version >= 2, the bigobj class GUID).
inline bool is_bigobj(byte_view bytes) noexcept {
  if (bytes.size() < sizeof(bigobj_header)) return false;
  auto h = bytes.read_unchecked<bigobj_header>(0);
  return h.sig1 == 0 && h.sig2 == 0xffff && h.version >= 2 &&
         std::memcmp(h.class_id, bigobj_class_id, sizeof(bigobj_class_id)) == 0;
}
// True when the bytes start like a short import member.
inline bool is_short_import(byte_view bytes) noexcept {
  if (bytes.size() < 6) return false;
  const unsigned char* p = bytes.data();
  return load<u16, std::endian::little>(p) == 0 && load<u16, std::endian::little>(p + 2) == 0xffff &&
         load<u16, std::endian::little>(p + 4) == 0;
}

template <class Sym>
class basic_object {
  static_assert(std::is_same_v<Sym, symbol16> || std::is_same_v<Sym, symbol32>);

 public:
  using symbol_record = Sym;
  static constexpr bool is_big = std::is_same_v<Sym, symbol32>;
  static constexpr u32 symbol_size = sizeof(Sym);

  basic_object() = default;

  // `header_offset` is where the COFF file header starts: 0 in an object,
  // just past "PE\0\0" in an image (pe::image::coff_header_offset()), whose
  // PointerToSymbolTable, when not 0, locates a symbol table in the same
  // form (mingw's ld keeps one; the string table follows it as in objects).
  static result<basic_object> parse(byte_view bytes, u64 header_offset = 0) noexcept;

  u16 machine() const noexcept { return machine_; }
  u32 timestamp() const noexcept { return timestamp_; }
  u16 characteristics() const noexcept { return characteristics_; }
  object_form form() const noexcept { return is_big ? object_form::bigobj : object_form::standard; }
  u32 section_count() const noexcept { return section_count_; }
  u32 symbol_count() const noexcept { return symbol_count_; }
  byte_view bytes() const noexcept { return bytes_; }
  byte_view string_table() const noexcept { return strtab_; }

  // The file name of a FILE symbol as BFD reads it: a string-table name when
  // the aux record's first 4 bytes are zero; over several aux records, all
  // of their bytes; in one aux record, its first 14 (FILNMLEN). NULs end it.
  result<std::string_view> file_name(const symbol_entry& e) const noexcept;

  // String-table lookup (offsets count from the size field).
  result<std::string_view> string_at(u64 offset) const noexcept;

  // Section by 1-based index.
  result<section> section_at(u32 index) const noexcept;

  template <class F>
  result<void> for_each_section(F&& f) const {
    for (u32 i = 1; i <= section_count_; ++i) {
      LINKSCOPE_TRY(s, section_at(i));
      if constexpr (std::is_same_v<std::invoke_result_t<F&, const section&>, bool>) {
        if (!f(s)) break;
      } else {
        f(s);
      }
    }
    return ok();
  }

  // Raw data of a section (empty for BSS-like sections).
  result<byte_view> section_data(const section& s) const noexcept;

  result<record_array<relocation>> relocations(const section& s) const noexcept;

  // Symbol at a slot index (the slot must not be an aux record of another
  // symbol; the caller walks with for_each_entry or uses relocation indices).
  result<symbol_entry> symbol_at(u32 index) const noexcept;

  // Visit every symbol (aux slots skipped). f(const symbol_entry&) may return
  // bool (false stops).
  template <class F>
  result<void> for_each_entry(F&& f) const {
    for (u32 i = 0; i < symbol_count_;) {
      LINKSCOPE_TRY(e, symbol_at(i));
      i += 1 + e.aux_count;
      if constexpr (std::is_same_v<std::invoke_result_t<F&, const symbol_entry&>, bool>) {
        if (!f(e)) break;
      } else {
        f(e);
      }
    }
    return ok();
  }

  // The one symbol model (symbols/symbol.hpp). `origin` is the caller's
  // member offset or file id.
  symbol to_symbol(const symbol_entry& e, u64 origin = 0) const noexcept;

  template <class F>
  result<void> for_each_symbol(F&& f, u64 origin = 0) const {
    bool stop = false;
    return for_each_entry([&](const symbol_entry& e) {
      if (stop) return false;
      symbol s = to_symbol(e, origin);
      if (!invoke_symbol_callback(f, s)) stop = true;
      return !stop;
    });
  }

  // The letter GNU nm (binutils, pe-x86-64) prints for a symbol, or 0 for
  // symbols nm does not list (FILE, debug, and other non-symbol classes).
  result<char> nm_letter(const symbol_entry& e) const noexcept;

  static char section_letter(const section& sec) noexcept;

 private:
  u64 no_offset_in_file() const noexcept { return no_offset; }
  u64 section_table_offset() const noexcept;
  // The name of the symbol in the slot at `slot_offset` of the symbol table.
  // A short name is a view of the file's bytes (never of a local record copy).
  result<std::string_view> symbol_name_of(u64 slot_offset) const noexcept;

  byte_view bytes_;
  byte_view symtab_;
  byte_view strtab_;
  record_array<section_header> sections_;
  u32 section_count_ = 0;
  u32 symbol_count_ = 0;
  u64 header_offset_ = 0;
  u32 timestamp_ = 0;
  u16 machine_ = 0;
  u16 characteristics_ = 0;
};

// The member functions' bodies: compiled once per symbol record in compiled
// mode (src/linkscope.cpp instantiates both forms; every other translation
// unit sees the `extern template` declarations below).
#if LINKSCOPE_DEFINITIONS
template <class Sym>
LINKSCOPE_FUNC auto basic_object<Sym>::parse(byte_view bytes, u64 header_offset) noexcept -> result<basic_object> {
  basic_object obj;
  obj.bytes_ = bytes;
  obj.header_offset_ = header_offset;
  u64 section_table = 0;
  u64 symtab = 0;
  u64 nsyms = 0;
  if constexpr (is_big) {
    LINKSCOPE_TRY(h, bytes.template read<bigobj_header>(0, "truncated bigobj header"));
    if (h.sig1 != 0 || h.sig2 != 0xffff || h.version < 2 ||
        std::memcmp(h.class_id, bigobj_class_id, sizeof(bigobj_class_id)) != 0)
      return bytes.fail(errc::bad_magic, 0, "not a bigobj header");
    obj.machine_ = h.machine;
    obj.timestamp_ = h.time_date_stamp;
    obj.section_count_ = h.number_of_sections;
    symtab = h.pointer_to_symbol_table;
    nsyms = h.number_of_symbols;
    section_table = sizeof(bigobj_header);
  } else {
    LINKSCOPE_TRY(h, bytes.template read<file_header>(header_offset, "truncated COFF file header"));
    obj.machine_ = h.machine;
    obj.timestamp_ = h.time_date_stamp;
    obj.section_count_ = h.number_of_sections;
    obj.characteristics_ = h.characteristics;
    symtab = h.pointer_to_symbol_table;
    nsyms = h.number_of_symbols;
    section_table = header_offset + sizeof(file_header) + u64{h.size_of_optional_header};
  }
  // Section table: count checked against the bytes before any use.
  LINKSCOPE_TRY(sections, bytes.template array<section_header>(section_table, obj.section_count_,
                                                               sizeof(section_header),
                                                               "section table past end of file"));
  obj.sections_ = sections;
  // Symbol table and string table (absent when PointerToSymbolTable is 0).
  if (symtab != 0 || nsyms != 0) {
    u64 table_bytes = 0;
    if (!checked_mul(nsyms, symbol_size, table_bytes))
      return bytes.fail(errc::overflow, symtab, "symbol table size overflows");
    if (!bytes.contains(symtab, table_bytes))
      return bytes.fail(errc::truncated, symtab, "symbol table past end of file");
    obj.symtab_ = bytes.sub_unchecked(symtab, table_bytes);
    obj.symbol_count_ = static_cast<u32>(nsyms);
    const u64 strtab = symtab + table_bytes;
    if (strtab + 4 <= bytes.size()) {
      u32 size = load<u32, std::endian::little>(bytes.data() + strtab);
      if (size < 4) size = 4;  // some writers store 0 for an empty table
      if (!bytes.contains(strtab, size))
        return bytes.fail(errc::truncated, strtab, "string table past end of file");
      obj.strtab_ = bytes.sub_unchecked(strtab, size);
    }
  }
  return obj;
}

template <class Sym>
LINKSCOPE_FUNC auto basic_object<Sym>::file_name(const symbol_entry& e) const noexcept -> result<std::string_view> {
  if (!e.is_file() || e.aux_count == 0) return std::string_view(e.name);
  const unsigned char* aux = e.aux.data();
  if (aux[0] == 0 && aux[1] == 0 && aux[2] == 0 && aux[3] == 0)
    return string_at(load<u32, std::endian::little>(aux + 4));
  std::string_view chars = e.aux.chars();
  if (e.aux_count == 1) chars = chars.substr(0, 14);
  return chars.substr(0, chars.find('\0'));
}

template <class Sym>
LINKSCOPE_FUNC auto basic_object<Sym>::string_at(u64 offset) const noexcept -> result<std::string_view> {
  if (offset < 4 || offset >= strtab_.size())
    return bytes_.fail(errc::out_of_range, strtab_.empty() ? 0 : strtab_.base() - bytes_.base() + offset,
                       "string table offset past end");
  return strtab_.cstring(offset, "string table name has no NUL");
}

template <class Sym>
LINKSCOPE_FUNC auto basic_object<Sym>::section_at(u32 index) const noexcept -> result<section> {
  if (index == 0 || index > section_count_)
    return bytes_.fail(errc::out_of_range, no_offset_in_file(), "section index out of range");
  section s;
  s.index = index;
  s.header = sections_[index - 1];
  const u64 header_offset = section_table_offset() + u64{index - 1} * sizeof(section_header);
  // The name must point into the file, not into the local copy `s.header`
  // (a view of the copy would dangle once `s` is returned).
  std::string_view raw = detail::fixed_name(reinterpret_cast<const char*>(bytes_.data() + header_offset), 8);
  if (raw.size() > 1 && raw[0] == '/') {
    u64 offset = 0;
    bool ok = raw[1] == '/' ? detail::decode_base64_offset(raw.substr(2), offset)
                            : parse_ascii_number(raw.substr(1), offset);
    if (!ok) return bytes_.fail(errc::bad_field, header_offset, "bad long section name reference");
    LINKSCOPE_TRY(name, string_at(offset));
    s.name = name;
  } else {
    s.name = raw;
  }
  return s;
}

template <class Sym>
LINKSCOPE_FUNC auto basic_object<Sym>::section_data(const section& s) const noexcept -> result<byte_view> {
  if (s.header.pointer_to_raw_data == 0 || s.is_bss()) return byte_view(bytes_.data(), 0, bytes_.base());
  return bytes_.sub(s.header.pointer_to_raw_data, s.header.size_of_raw_data, "section data past end of file");
}

template <class Sym>
LINKSCOPE_FUNC auto basic_object<Sym>::relocations(const section& s) const noexcept
    -> result<record_array<relocation>> {
  u64 count = s.header.number_of_relocations;
  u64 offset = s.header.pointer_to_relocations;
  if ((s.characteristics() & scn::lnk_nreloc_ovfl) != 0 && count == 0xffff) {
    // The real count is in the first relocation's VirtualAddress (and includes it).
    LINKSCOPE_TRY(first, bytes_.template read<relocation>(offset, "relocations past end of file"));
    count = first.virtual_address;
    if (count == 0) return bytes_.fail(errc::bad_field, offset, "bad extended relocation count");
    offset += sizeof(relocation);
    count -= 1;
  }
  return bytes_.template array<relocation>(offset, count, sizeof(relocation), "relocations past end of file");
}

template <class Sym>
LINKSCOPE_FUNC auto basic_object<Sym>::symbol_at(u32 index) const noexcept -> result<symbol_entry> {
  if (index >= symbol_count_)
    return bytes_.fail(errc::out_of_range, no_offset_in_file(), "symbol index out of range");
  const u64 offset = u64{index} * symbol_size;
  const Sym rec = symtab_.template read_unchecked<Sym>(offset);
  symbol_entry e;
  e.index = index;
  e.value = rec.value;
  e.section_number = static_cast<i32>(rec.section_number.value());
  e.type = rec.type;
  e.storage_class = rec.storage_class;
  e.aux_count = rec.number_of_aux_symbols;
  e.aux_stride = symbol_size;
  if (u64{index} + 1 + e.aux_count > symbol_count_)
    return symtab_.fail(errc::out_of_range, offset, "aux records past end of symbol table");
  e.aux = symtab_.sub_unchecked(offset + symbol_size, u64{e.aux_count} * symbol_size);
  LINKSCOPE_TRY(name, symbol_name_of(offset));
  e.name = name;
  if (e.section_number > 0 && static_cast<u32>(e.section_number) > section_count_)
    return symtab_.fail(errc::out_of_range, offset, "symbol section index out of range");
  return e;
}

template <class Sym>
LINKSCOPE_FUNC symbol basic_object<Sym>::to_symbol(const symbol_entry& e, u64 origin) const noexcept {
  symbol s;
  s.name = e.name;
  s.value = e.value;
  s.index = e.index;
  s.origin = origin;
  s.section = static_cast<u16>(e.section_number);
  if (e.is_weak_external()) {
    s.bind = binding::weak;
    s.defined = false;
  } else if (e.is_external()) {
    s.bind = binding::global;
    s.defined = e.section_number != sym_undefined || e.value != 0;
  } else {
    s.bind = binding::local;
    s.defined = e.section_number != sym_undefined;
  }
  if (e.is_file()) {
    s.kind = symbol_kind::file;
  } else if (e.is_section_definition()) {
    s.kind = symbol_kind::section;
    if (auto def = e.section_definition()) s.size = def->length;
  } else if (e.is_common()) {
    s.kind = symbol_kind::common;
    s.size = e.value;
  } else if (e.is_function()) {
    s.kind = symbol_kind::func;
    if (auto fn = e.function_definition()) s.size = fn->total_size;
  } else if (e.section_number > 0 && static_cast<u32>(e.section_number) <= section_count_) {
    const section_header& h = sections_[static_cast<u32>(e.section_number) - 1];
    s.kind = (h.characteristics & scn::cnt_code) != 0 ? symbol_kind::func : symbol_kind::object;
  }
  return s;
}

template <class Sym>
LINKSCOPE_FUNC auto basic_object<Sym>::nm_letter(const symbol_entry& e) const noexcept -> result<char> {
  const bool global = e.is_external() || e.is_weak_external();
  if (e.is_weak_external()) return 'w';
  if (e.is_file() || e.is_debug()) return '\0';
  if (e.is_external() && e.section_number == sym_undefined) return e.value != 0 ? 'C' : 'U';
  if (!e.is_external() && e.storage_class != storage_class::static_ &&
      e.storage_class != storage_class::label && e.storage_class != storage_class::function &&
      e.storage_class != storage_class::section)
    return '\0';
  char c = '?';
  if (e.is_absolute()) {
    c = 'a';
  } else if (e.section_number > 0) {
    LINKSCOPE_TRY(sec, section_at(static_cast<u32>(e.section_number)));
    c = section_letter(sec);
  } else {
    return '\0';
  }
  if (global && c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  return c;
}

template <class Sym>
LINKSCOPE_FUNC char basic_object<Sym>::section_letter(const section& sec) noexcept {
  // binutils coff_section_type(): name prefixes first.
  static constexpr std::pair<std::string_view, char> by_name[] = {
      {".drectve", 'i'}, {".edata", 'e'}, {".idata", 'i'}, {".pdata", 'p'}};
  for (const auto& [prefix, letter] : by_name)
    if (sec.name.substr(0, prefix.size()) == prefix) return letter;
  const u32 ch = sec.characteristics();
  if (ch & scn::cnt_code) return 't';
  if (ch & scn::cnt_initialized_data) return (ch & scn::mem_write) ? 'd' : 'r';
  if (ch & scn::cnt_uninitialized_data) return 'b';
  if (sec.name.substr(0, 6) == ".debug") return 'N';
  if (ch & (scn::lnk_info | scn::lnk_remove)) return 'n';
  return (ch & scn::mem_write) ? 'd' : 'r';
}

template <class Sym>
LINKSCOPE_FUNC u64 basic_object<Sym>::section_table_offset() const noexcept {
  if constexpr (is_big) return sizeof(bigobj_header);
  else return header_offset_ + sizeof(file_header) +
              (bytes_.contains(header_offset_, sizeof(file_header))
                   ? u64{bytes_.read_unchecked<file_header>(header_offset_).size_of_optional_header}
                   : 0);
}

template <class Sym>
LINKSCOPE_FUNC auto basic_object<Sym>::symbol_name_of(u64 slot_offset) const noexcept -> result<std::string_view> {
  const unsigned char* raw = symtab_.data() + slot_offset;  // the name is the slot's first 8 bytes
  if (raw[0] == 0 && raw[1] == 0 && raw[2] == 0 && raw[3] == 0) {
    const u32 offset = load<u32, std::endian::little>(raw + 4);
    if (offset < 4 || offset >= strtab_.size())
      return symtab_.fail(errc::out_of_range, slot_offset, "string table offset past end");
    return strtab_.cstring(offset, "string table name has no NUL");
  }
  return detail::fixed_name(reinterpret_cast<const char*>(raw), 8);
}

#endif  // LINKSCOPE_DEFINITIONS

using standard_object = basic_object<symbol16>;
using bigobj_object = basic_object<symbol32>;
#if LINKSCOPE_EXTERN_TEMPLATES || defined(LINKSCOPE_IMPLEMENTATION)
extern template class basic_object<symbol16>;
extern template class basic_object<symbol32>;
#endif

// Detect the form once and call f(basic_object<Sym>&).
template <class F>
auto visit_object(byte_view bytes, F&& f) -> result<std::invoke_result_t<F&, const standard_object&>> {
  using R = std::invoke_result_t<F&, const standard_object&>;
  if (is_short_import(bytes))
    return bytes.fail(errc::unsupported, 0, "short import member, not a COFF object");
  if (bytes.size() >= 4 && load<u16, std::endian::little>(bytes.data()) == 0 &&
      load<u16, std::endian::little>(bytes.data() + 2) == 0xffff) {
    if (!is_bigobj(bytes)) return bytes.fail(errc::bad_magic, 0, "unknown anonymous COFF object header");
    LINKSCOPE_TRY(obj, bigobj_object::parse(bytes));
    if constexpr (std::is_void_v<R>) {
      f(obj);
      return ok();
    } else {
      return f(obj);
    }
  }
  LINKSCOPE_TRY(obj, standard_object::parse(bytes));
  if constexpr (std::is_void_v<R>) {
    f(obj);
    return ok();
  } else {
    return f(obj);
  }
}

// Either form behind one type; dispatch happens per call, never per record.
class object {
 public:
  object() = default;
  static result<object> parse(byte_view bytes) noexcept;

  object_form form() const noexcept { return form_; }
  template <class F>
  decltype(auto) visit(F&& f) const {
    if (form_ == object_form::bigobj) return f(big_);
    return f(standard_);
  }
  u16 machine() const noexcept { return visit([](const auto& o) { return o.machine(); }); }
  u32 section_count() const noexcept { return visit([](const auto& o) { return o.section_count(); }); }
  u32 symbol_count() const noexcept { return visit([](const auto& o) { return o.symbol_count(); }); }
  result<section> section_at(u32 i) const noexcept;
  result<byte_view> section_data(const section& s) const noexcept;
  result<record_array<relocation>> relocations(const section& s) const noexcept;
  result<symbol_entry> symbol_at(u32 i) const noexcept;
  result<char> nm_letter(const symbol_entry& e) const noexcept;
  template <class F>
  result<void> for_each_section(F&& f) const {
    return visit([&](const auto& o) { return o.for_each_section(f); });
  }
  template <class F>
  result<void> for_each_entry(F&& f) const {
    return visit([&](const auto& o) { return o.for_each_entry(f); });
  }
  template <class F>
  result<void> for_each_symbol(F&& f) const {
    return visit([&](const auto& o) { return o.for_each_symbol(f, origin_); });
  }
  // Origin given to every symbol (member offset or file id).
  void set_origin(u64 origin) noexcept { origin_ = origin; }

 private:
  standard_object standard_;
  bigobj_object big_;
  object_form form_ = object_form::standard;
  u64 origin_ = 0;
};

#if LINKSCOPE_DEFINITIONS
LINKSCOPE_FUNC auto object::parse(byte_view bytes) noexcept -> result<object> {
  if (is_short_import(bytes))
    return bytes.fail(errc::unsupported, 0, "short import member, not a COFF object");
  object o;
  if (bytes.size() >= 4 && load<u16, std::endian::little>(bytes.data()) == 0 &&
      load<u16, std::endian::little>(bytes.data() + 2) == 0xffff) {
    if (!is_bigobj(bytes)) return bytes.fail(errc::bad_magic, 0, "unknown anonymous COFF object header");
    LINKSCOPE_TRY(big, bigobj_object::parse(bytes));
    o.big_ = big;
    o.form_ = object_form::bigobj;
  } else {
    LINKSCOPE_TRY(std_, standard_object::parse(bytes));
    o.standard_ = std_;
    o.form_ = object_form::standard;
  }
  return o;
}

LINKSCOPE_FUNC auto object::section_at(u32 i) const noexcept -> result<section> {
  return visit([&](const auto& o) { return o.section_at(i); });
}

LINKSCOPE_FUNC auto object::section_data(const section& s) const noexcept -> result<byte_view> {
  return visit([&](const auto& o) { return o.section_data(s); });
}

LINKSCOPE_FUNC auto object::relocations(const section& s) const noexcept -> result<record_array<relocation>> {
  return visit([&](const auto& o) { return o.relocations(s); });
}

LINKSCOPE_FUNC auto object::symbol_at(u32 i) const noexcept -> result<symbol_entry> {
  return visit([&](const auto& o) { return o.symbol_at(i); });
}

LINKSCOPE_FUNC auto object::nm_letter(const symbol_entry& e) const noexcept -> result<char> {
  return visit([&](const auto& o) { return o.nm_letter(e); });
}

#endif  // LINKSCOPE_DEFINITIONS

static_assert(symbol_source<object>);

}  // namespace coff
}  // namespace v0
}  // namespace linkscope
