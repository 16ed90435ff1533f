// linkscope/symbols/symbol.hpp — the one symbol model that every format feeds.
//
// An ar armap entry, an ELF .symtab/.dynsym entry, a COFF symbol and a
// Windows import record all become a `symbol`. Strings are views into the
// bytes of the file they came from (mapped_file); a symbol must not outlive
// them. Fields that a format does not have keep their defaults.
//
//   origin   which file/member of the source the symbol belongs to. For an
//            armap it is the member's offset in the archive; for an ELF or
//            COFF file it is 0 unless the source says otherwise.
//   index    the symbol's index in its own table (ELF symbol index, COFF
//            symbol index, armap entry number).
//   library_ordinal  Mach-O two-level namespace: the library an undefined
//            symbol of a linked image binds to — n (1..253) is the n-th
//            dylib load command, or one of the special values below. 0 for
//            every other format, and for Mach-O definitions and objects.
// Weak definitions and weak references are `binding::weak` (defined or not),
// as in ELF; a Mach-O private extern (N_PEXT) is `visibility::hidden`.
#pragma once

#include <cstdint>
#include <string_view>

namespace linkscope {
inline namespace v0 {

enum class binding : std::uint8_t { local, global, weak, unique };
enum class symbol_kind : std::uint8_t { notype, object, func, section, file, common, tls, ifunc, other };
enum class visibility : std::uint8_t { default_, internal, hidden, protected_ };

// How a version string attaches: none, name@VER (non-default or hidden, and
// every verneed reference), or name@@VER (the default definition).
enum class version_kind : std::uint8_t { none, non_default, default_ };

// Windows import libraries: what the import is.
enum class import_kind : std::uint8_t { none, code, data, const_ };
// IMPORT_OBJECT_NAME_TYPE (PE/COFF spec 7.2).
enum class import_name_type : std::uint8_t { ordinal, name, name_noprefix, name_undecorate, name_exportas };

constexpr const char* to_string(binding b) noexcept {
  switch (b) {
    case binding::local: return "local";
    case binding::global: return "global";
    case binding::weak: return "weak";
    case binding::unique: return "unique";
  }
  return "?";
}
constexpr const char* to_string(symbol_kind k) noexcept {
  switch (k) {
    case symbol_kind::notype: return "notype";
    case symbol_kind::object: return "object";
    case symbol_kind::func: return "func";
    case symbol_kind::section: return "section";
    case symbol_kind::file: return "file";
    case symbol_kind::common: return "common";
    case symbol_kind::tls: return "tls";
    case symbol_kind::ifunc: return "ifunc";
    case symbol_kind::other: return "other";
  }
  return "?";
}
constexpr const char* to_string(visibility v) noexcept {
  switch (v) {
    case visibility::default_: return "default";
    case visibility::internal: return "internal";
    case visibility::hidden: return "hidden";
    case visibility::protected_: return "protected";
  }
  return "?";
}
constexpr const char* to_string(import_kind k) noexcept {
  switch (k) {
    case import_kind::none: return "none";
    case import_kind::code: return "code";
    case import_kind::data: return "data";
    case import_kind::const_: return "const";
  }
  return "?";
}
constexpr const char* to_string(import_name_type t) noexcept {
  switch (t) {
    case import_name_type::ordinal: return "ordinal";
    case import_name_type::name: return "name";
    case import_name_type::name_noprefix: return "name_noprefix";
    case import_name_type::name_undecorate: return "name_undecorate";
    case import_name_type::name_exportas: return "name_exportas";
  }
  return "?";
}

// Import information of a Windows import symbol (both __imp_X and X).
struct import_info {
  std::string_view dll;          // e.g. "KERNEL32.dll"
  std::string_view import_name;  // the name the loader looks up (after name-type rules)
  std::uint16_t ordinal_or_hint = 0;
  bool by_ordinal = false;       // ordinal_or_hint is an ordinal, not a hint
  import_kind kind = import_kind::none;
  import_name_type name_type = import_name_type::name;
  std::uint16_t machine = 0;
};

// Mach-O library ordinals with a special meaning (dyld's BIND_SPECIAL_DYLIB_*;
// n_desc's SELF / EXECUTABLE / DYNAMIC_LOOKUP ordinals map to them).
inline constexpr std::int16_t library_ordinal_self = 0, library_ordinal_executable = -1,
                              library_ordinal_flat_lookup = -2, library_ordinal_weak_lookup = -3;

struct symbol {
  std::string_view name;
  std::string_view version;  // empty when unversioned
  std::uint64_t value = 0;
  std::uint64_t size = 0;
  std::uint64_t origin = 0;  // member offset (archives) or file id
  std::uint32_t index = 0;   // index in the symbol's own table
  std::uint16_t section = 0; // section index (format-specific; 0 = undefined in ELF)
  binding bind = binding::global;
  symbol_kind kind = symbol_kind::notype;
  visibility vis = visibility::default_;
  version_kind ver = version_kind::none;
  bool defined = true;
  std::int16_t library_ordinal = 0;  // Mach-O imports (see above); 0 elsewhere
  const import_info* import = nullptr;  // non-null for import-library symbols

  bool is_global() const noexcept { return bind != binding::local; }
};

}  // namespace v0
}  // namespace linkscope
