// linkscope/coff/types.hpp — on-disk records of COFF objects, bigobj objects,
// short import members and PE images.
//
// A COFF object (PE/COFF spec, "Microsoft PE and COFF Specification", section
// 3 "COFF File Header", 4 "Section Table", 5.4 "COFF Symbol Table") starts
// with a 20-byte file header: Machine, NumberOfSections (u16),
// PointerToSymbolTable and NumberOfSymbols. A section table of 40-byte
// headers follows the (object: empty) optional header. The symbol table is an
// array of 18-byte records; a record with NumberOfAuxSymbols = n is followed
// by n auxiliary records of the same size (section definitions, weak
// externals, function definitions, file names). The string table comes right
// after the symbol table: a u32 total size (including itself) and
// NUL-terminated names. A name whose first 4 bytes are zero holds a string
// table offset in its last 4; a section name "/123" (or "//BASE64") does the
// same for sections.
//
// MSVC's /bigobj form (ANON_OBJECT_HEADER_BIGOBJ) begins with Sig1 = 0,
// Sig2 = 0xFFFF, Version >= 2 and a fixed class GUID; it widens the section
// count to u32 and symbol records to 20 bytes (SectionNumber becomes i32).
// Everything else is identical, so object.hpp is written once against a
// symbol-record parameter (standard or bigobj).
//
// A *short import member* (spec 7, "Import Library Format") also starts with
// Sig1 = 0, Sig2 = 0xFFFF, but Version = 0: a 20-byte IMPORT_OBJECT_HEADER,
// then "symbol\0dll\0" (and, for name type EXPORTAS, "exportname\0").
//
// PE images (spec 2-3, 6.3 ".edata", 6.4 ".idata", 5.8 delay-load) add an MZ
// stub, "PE\0\0", the file header and an optional header (PE32 0x10b or
// PE32+ 0x20b) whose data directories locate the export, import and
// delay-import tables by RVA.
#pragma once

#include <cstdint>
#include <string_view>

#include "linkscope/core/bytes.hpp"

namespace linkscope {
inline namespace v0 {
namespace coff {

// IMAGE_FILE_MACHINE_* values seen in practice.
namespace machine {
inline constexpr u16 unknown = 0x0;
inline constexpr u16 i386 = 0x14c;
inline constexpr u16 amd64 = 0x8664;
inline constexpr u16 arm = 0x1c0;
inline constexpr u16 armnt = 0x1c4;
inline constexpr u16 arm64 = 0xaa64;
inline constexpr u16 arm64ec = 0xa641;
inline constexpr u16 arm64x = 0xa64e;
inline constexpr u16 ia64 = 0x200;
inline constexpr u16 riscv64 = 0x5064;
}  // namespace machine

constexpr bool known_machine(u16 m) noexcept {
  switch (m) {
    case machine::i386: case machine::amd64: case machine::arm: case machine::armnt:
    case machine::arm64: case machine::arm64ec: case machine::arm64x: case machine::ia64:
    case machine::riscv64:
      return true;
    default:
      return false;
  }
}
constexpr const char* machine_name(u16 m) noexcept {
  switch (m) {
    case machine::i386: return "i386";
    case machine::amd64: return "x86-64";
    case machine::arm: return "arm";
    case machine::armnt: return "armnt";
    case machine::arm64: return "arm64";
    case machine::arm64ec: return "arm64ec";
    case machine::arm64x: return "arm64x";
    case machine::ia64: return "ia64";
    case machine::riscv64: return "riscv64";
    default: return "unknown";
  }
}
// 64-bit machines use 8-byte import thunks in long import members.
constexpr bool is_64bit_machine(u16 m) noexcept {
  return m == machine::amd64 || m == machine::arm64 || m == machine::arm64ec || m == machine::arm64x ||
         m == machine::ia64 || m == machine::riscv64;
}

struct file_header {
  le<u16> machine;
  le<u16> number_of_sections;
  le<u32> time_date_stamp;
  le<u32> pointer_to_symbol_table;
  le<u32> number_of_symbols;
  le<u16> size_of_optional_header;
  le<u16> characteristics;
};
static_assert(sizeof(file_header) == 20);

// ANON_OBJECT_HEADER_BIGOBJ.
struct bigobj_header {
  le<u16> sig1;     // 0
  le<u16> sig2;     // 0xFFFF
  le<u16> version;  // >= 2
  le<u16> machine;
  le<u32> time_date_stamp;
  unsigned char class_id[16];
  le<u32> size_of_data;
  le<u32> flags;
  le<u32> metadata_size;
  le<u32> metadata_offset;
  le<u32> number_of_sections;
  le<u32> pointer_to_symbol_table;
  le<u32> number_of_symbols;
};
static_assert(sizeof(bigobj_header) == 56);

// {D1BAA1C7-BAEE-4ba9-AF20-FAF66AA4DCB8} as stored.
inline constexpr unsigned char bigobj_class_id[16] = {0xc7, 0xa1, 0xba, 0xd1, 0xee, 0xba, 0xa9, 0x4b,
                                                      0xaf, 0x20, 0xfa, 0xf6, 0x6a, 0xa4, 0xdc, 0xb8};

struct section_header {
  char name[8];
  le<u32> virtual_size;
  le<u32> virtual_address;
  le<u32> size_of_raw_data;
  le<u32> pointer_to_raw_data;
  le<u32> pointer_to_relocations;
  le<u32> pointer_to_linenumbers;
  le<u16> number_of_relocations;
  le<u16> number_of_linenumbers;
  le<u32> characteristics;
};
static_assert(sizeof(section_header) == 40);

// IMAGE_SCN_* flags.
namespace scn {
inline constexpr u32 cnt_code = 0x20;
inline constexpr u32 cnt_initialized_data = 0x40;
inline constexpr u32 cnt_uninitialized_data = 0x80;
inline constexpr u32 lnk_info = 0x200;
inline constexpr u32 lnk_remove = 0x800;
inline constexpr u32 lnk_comdat = 0x1000;
inline constexpr u32 lnk_nreloc_ovfl = 0x01000000;
inline constexpr u32 mem_discardable = 0x02000000;
inline constexpr u32 mem_execute = 0x20000000;
inline constexpr u32 mem_read = 0x40000000;
inline constexpr u32 mem_write = 0x80000000;
}  // namespace scn

struct relocation {
  le<u32> virtual_address;
  le<u32> symbol_table_index;
  le<u16> type;
};
static_assert(sizeof(relocation) == 10);

// The 8-byte name field shared by symbols: inline (NUL-padded) or, when the
// first 4 bytes are zero, an offset into the string table.
struct symbol_name {
  unsigned char raw[8];
};
static_assert(sizeof(symbol_name) == 8);

// IMAGE_SYMBOL (18 bytes).
struct symbol16 {
  symbol_name name;
  le<u32> value;
  le<std::int16_t> section_number;
  le<u16> type;
  u8 storage_class;
  u8 number_of_aux_symbols;
};
static_assert(sizeof(symbol16) == 18);

// IMAGE_SYMBOL_EX (bigobj, 20 bytes).
struct symbol32 {
  symbol_name name;
  le<u32> value;
  le<std::int32_t> section_number;
  le<u16> type;
  u8 storage_class;
  u8 number_of_aux_symbols;
};
static_assert(sizeof(symbol32) == 20);

// Auxiliary records (the first 18 bytes of an aux slot; bigobj slots have 2
// more unused bytes).
struct aux_function_definition {
  le<u32> tag_index;
  le<u32> total_size;
  le<u32> pointer_to_linenumber;
  le<u32> pointer_to_next_function;
  unsigned char unused[2];
};
static_assert(sizeof(aux_function_definition) == 18);

struct aux_weak_external {
  le<u32> tag_index;
  le<u32> characteristics;  // 1 NOLIBRARY, 2 LIBRARY, 3 ALIAS, 4 ANTI_DEPENDENCY
  unsigned char unused[10];
};
static_assert(sizeof(aux_weak_external) == 18);

struct aux_section_definition {
  le<u32> length;
  le<u16> number_of_relocations;
  le<u16> number_of_linenumbers;
  le<u32> check_sum;
  le<u16> number;      // associated section (ASSOCIATIVE comdats), low 16 bits
  u8 selection;        // IMAGE_COMDAT_SELECT_*
  u8 unused;
  le<u16> high_number; // bigobj: high 16 bits of `number`
};
static_assert(sizeof(aux_section_definition) == 18);

// IMAGE_SYM_CLASS_* storage classes.
namespace storage_class {
inline constexpr u8 end_of_function = 0xff;
inline constexpr u8 null_ = 0;
inline constexpr u8 automatic = 1;
inline constexpr u8 external = 2;
inline constexpr u8 static_ = 3;
inline constexpr u8 register_ = 4;
inline constexpr u8 external_def = 5;
inline constexpr u8 label = 6;
inline constexpr u8 undefined_label = 7;
inline constexpr u8 member_of_struct = 8;
inline constexpr u8 argument = 9;
inline constexpr u8 struct_tag = 10;
inline constexpr u8 function = 101;
inline constexpr u8 end_of_struct = 102;
inline constexpr u8 file = 103;
inline constexpr u8 section = 104;
inline constexpr u8 weak_external = 105;
inline constexpr u8 clr_token = 107;
}  // namespace storage_class

// IMAGE_COMDAT_SELECT_*.
enum class comdat_selection : u8 {
  none = 0,
  nodup = 1,
  any = 2,
  same_size = 3,
  exact_match = 4,
  associative = 5,
  largest = 6,
  newest = 7,
};
constexpr const char* to_string(comdat_selection s) noexcept {
  switch (s) {
    case comdat_selection::none: return "none";
    case comdat_selection::nodup: return "nodup";
    case comdat_selection::any: return "any";
    case comdat_selection::same_size: return "same_size";
    case comdat_selection::exact_match: return "exact_match";
    case comdat_selection::associative: return "associative";
    case comdat_selection::largest: return "largest";
    case comdat_selection::newest: return "newest";
  }
  return "?";
}

// Special section numbers.
inline constexpr std::int32_t sym_undefined = 0;
inline constexpr std::int32_t sym_absolute = -1;
inline constexpr std::int32_t sym_debug = -2;

// IMPORT_OBJECT_HEADER (short import member).
struct import_header {
  le<u16> sig1;  // 0
  le<u16> sig2;  // 0xFFFF
  le<u16> version;
  le<u16> machine;
  le<u32> time_date_stamp;
  le<u32> size_of_data;
  le<u16> ordinal_or_hint;
  le<u16> type_info;  // bits 0-1 type, 2-4 name type, 5-15 reserved
};
static_assert(sizeof(import_header) == 20);

// ---- PE images ------------------------------------------------------------

struct dos_header_prefix {
  char magic[2];  // "MZ"
  unsigned char unused[58];
  le<u32> e_lfanew;
};
static_assert(sizeof(dos_header_prefix) == 64);

struct data_directory {
  le<u32> virtual_address;
  le<u32> size;
};
static_assert(sizeof(data_directory) == 8);

// The parts of the optional header that linkscope reads; the data
// directories follow at 96 (PE32) or 112 (PE32+).
inline constexpr u16 pe32_magic = 0x10b;
inline constexpr u16 pe32plus_magic = 0x20b;

namespace dir {
inline constexpr u32 export_ = 0;
inline constexpr u32 import = 1;
inline constexpr u32 resource = 2;
inline constexpr u32 bound_import = 11;
inline constexpr u32 delay_import = 13;
inline constexpr u32 clr_runtime_header = 14;
}  // namespace dir

// Optional-header fields at the same offset in PE32 and PE32+ (spec 3.4.1,
// 3.4.2): the linker version, the OS / image / subsystem versions, the
// subsystem and the DLL characteristics.
struct optional_header_versions {
  le<u16> magic;
  u8 major_linker_version;
  u8 minor_linker_version;
  unsigned char code_sizes_and_bases[36];  // sizes, entry point, bases, alignments
  le<u16> major_operating_system_version;  // offset 40
  le<u16> minor_operating_system_version;
  le<u16> major_image_version;
  le<u16> minor_image_version;
  le<u16> major_subsystem_version;
  le<u16> minor_subsystem_version;
  le<u32> win32_version_value;
  le<u32> size_of_image;
  le<u32> size_of_headers;
  le<u32> checksum;
  le<u16> subsystem;  // offset 68
  le<u16> dll_characteristics;
};
static_assert(sizeof(optional_header_versions) == 72);

// The resource tree (spec 6.9 ".rsrc"): a directory table (16 B) followed
// by NumberOfNamedEntries + NumberOfIdEntries entries (8 B); an entry's
// OffsetToData with the top bit set is a subdirectory, else a data entry
// (16 B); both offsets are from the start of the resource directory.
struct resource_directory {
  le<u32> characteristics;
  le<u32> time_date_stamp;
  le<u16> major_version;
  le<u16> minor_version;
  le<u16> number_of_named_entries;
  le<u16> number_of_id_entries;
};
static_assert(sizeof(resource_directory) == 16);

struct resource_directory_entry {
  le<u32> name;            // top bit: offset of a name string, else an ID
  le<u32> offset_to_data;  // top bit: a subdirectory
};
static_assert(sizeof(resource_directory_entry) == 8);

struct resource_data_entry {
  le<u32> data_rva;
  le<u32> size;
  le<u32> codepage;
  le<u32> reserved;
};
static_assert(sizeof(resource_data_entry) == 16);

inline constexpr u32 rt_manifest = 24;

// IMAGE_BOUND_IMPORT_DESCRIPTOR and IMAGE_BOUND_FORWARDER_REF (winnt.h):
// both 8 bytes; names are offsets from the start of the bound import table.
struct bound_import_descriptor {
  le<u32> time_date_stamp;
  le<u16> offset_module_name;
  le<u16> number_of_module_forwarder_refs;  // the refs follow (same size)
};
static_assert(sizeof(bound_import_descriptor) == 8);

// IMAGE_COR20_HEADER, the start (spec 6.10 "The .cormeta Section"; ECMA-335
// II.25.3.3).
struct clr_header {
  le<u32> cb;
  le<u16> major_runtime_version;
  le<u16> minor_runtime_version;
  le<u32> metadata_rva;
  le<u32> metadata_size;
  le<u32> flags;  // 1 ILONLY, 2 32BITREQUIRED, 0x20000 32BITPREFERRED
};
static_assert(sizeof(clr_header) == 20);

struct export_directory {
  le<u32> characteristics;
  le<u32> time_date_stamp;
  le<u16> major_version;
  le<u16> minor_version;
  le<u32> name;
  le<u32> ordinal_base;
  le<u32> number_of_functions;
  le<u32> number_of_names;
  le<u32> address_of_functions;
  le<u32> address_of_names;
  le<u32> address_of_name_ordinals;
};
static_assert(sizeof(export_directory) == 40);

struct import_descriptor {
  le<u32> original_first_thunk;  // import lookup table
  le<u32> time_date_stamp;
  le<u32> forwarder_chain;
  le<u32> name;
  le<u32> first_thunk;  // import address table
};
static_assert(sizeof(import_descriptor) == 20);

struct delay_import_descriptor {
  le<u32> attributes;  // bit 0: RVAs (else VAs, pre-VC7)
  le<u32> dll_name;
  le<u32> module_handle;
  le<u32> import_address_table;
  le<u32> import_name_table;
  le<u32> bound_import_address_table;
  le<u32> unload_information_table;
  le<u32> time_date_stamp;
};
static_assert(sizeof(delay_import_descriptor) == 32);

}  // namespace coff
}  // namespace v0
}  // namespace linkscope
