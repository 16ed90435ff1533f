// linkscope/elf/types.hpp — ELF records for all four variants (32/64-bit, LE/BE).
//
// ELF (System V gABI, "Object Files" chapter; LSB 5.0 for the GNU extensions)
// starts with a 16-byte e_ident: "\x7fELF", EI_CLASS (1 = 32-bit, 2 = 64-bit),
// EI_DATA (1 = little-endian, 2 = big-endian), EI_VERSION, EI_OSABI. Every
// later field is stored in the byte order EI_DATA names, with widths that
// EI_CLASS selects: Elf32_Addr/Off are 4 bytes, Elf64_Addr/Off/Xword 8 bytes.
// The 64-bit Sym and Phdr also reorder their fields for alignment.
//
//   Ehdr   at offset 0: e_phoff/e_phnum/e_phentsize locate the program headers,
//          e_shoff/e_shnum/e_shentsize the section headers, e_shstrndx the
//          section-name string table. When e_shnum >= SHN_LORESERVE (0xff00)
//          it is 0 and sh_size of section 0 holds the count; likewise
//          e_shstrndx == SHN_XINDEX (0xffff) defers to section 0's sh_link.
//   Phdr   segments; PT_LOAD maps [p_offset, +p_filesz) to [p_vaddr, ...),
//          PT_DYNAMIC holds the Dyn array.
//   Shdr   sections (optional for executables and DSOs: ld.so never reads them).
//   Sym    .symtab / .dynsym entries; st_shndx == SHN_XINDEX takes the real
//          index from the parallel SHT_SYMTAB_SHNDX word array.
//   Rel/Rela  r_info packs the symbol index and the type: (sym << 8 | type)
//          in 32-bit files, (sym << 32 | type) in 64-bit files.
//   Verdef/Verdaux/Verneed/Vernaux  GNU symbol versioning (LSB "Symbol
//          Versioning"); Versym is one Half per .dynsym entry.
//
// All records are structs of endian_int members (alignment 1) read by memcpy;
// each size is checked against the spec with static_assert.
#pragma once

#include <bit>
#include <cstdint>
#include <type_traits>

#include "linkscope/core/bytes.hpp"

namespace linkscope {
inline namespace v0 {
namespace elf {

// e_ident
inline constexpr unsigned char elf_magic[4] = {0x7f, 'E', 'L', 'F'};
inline constexpr unsigned ei_class = 4, ei_data = 5, ei_version = 6, ei_osabi = 7, ei_nident = 16;
inline constexpr u8 elfclass32 = 1, elfclass64 = 2;
inline constexpr u8 elfdata2lsb = 1, elfdata2msb = 2;

// e_type
inline constexpr u16 ET_NONE = 0, ET_REL = 1, ET_EXEC = 2, ET_DYN = 3, ET_CORE = 4;

// e_machine (the ones we name; others pass through)
inline constexpr u16 EM_386 = 3, EM_68K = 4, EM_MIPS = 8, EM_PARISC = 15, EM_PPC = 20, EM_PPC64 = 21,
                     EM_S390 = 22, EM_ARM = 40, EM_SH = 42, EM_SPARCV9 = 43, EM_IA_64 = 50, EM_X86_64 = 62,
                     EM_AARCH64 = 183, EM_RISCV = 243, EM_LOONGARCH = 258;

// Special section indices
inline constexpr u32 SHN_UNDEF = 0, SHN_LORESERVE = 0xff00, SHN_ABS = 0xfff1, SHN_COMMON = 0xfff2,
                     SHN_XINDEX = 0xffff, SHN_HIRESERVE = 0xffff;
// A symbol's *resolved* section index (symbol_table_view::section_index)
// keeps real indices (which may exceed 0xff00 in files with extended
// numbering, via SHT_SYMTAB_SHNDX) apart from the reserved st_shndx values,
// as BFD does: a reserved raw value r (0xff00..0xfffe) becomes 0xffff0000 | r.
inline constexpr u32 shndx_reserved_base = 0xffff0000u;
constexpr u32 resolved_shndx(u32 raw) noexcept { return raw >= 0xff00 ? (shndx_reserved_base | raw) : raw; }
inline constexpr u32 SHNX_ABS = shndx_reserved_base | 0xfff1, SHNX_COMMON = shndx_reserved_base | 0xfff2;
constexpr bool is_reserved_shndx(u32 resolved) noexcept { return resolved >= shndx_reserved_base; }
// Processor-specific commons
inline constexpr u32 SHN_X86_64_LCOMMON = 0xff02, SHN_MIPS_ACOMMON = 0xff00, SHN_MIPS_SCOMMON = 0xff03,
                     SHN_MIPS_SUNDEFINED = 0xff04;

// sh_type
inline constexpr u32 SHT_NULL = 0, SHT_PROGBITS = 1, SHT_SYMTAB = 2, SHT_STRTAB = 3, SHT_RELA = 4, SHT_HASH = 5,
                     SHT_DYNAMIC = 6, SHT_NOTE = 7, SHT_NOBITS = 8, SHT_REL = 9, SHT_SHLIB = 10, SHT_DYNSYM = 11,
                     SHT_INIT_ARRAY = 14, SHT_FINI_ARRAY = 15, SHT_PREINIT_ARRAY = 16, SHT_GROUP = 17,
                     SHT_SYMTAB_SHNDX = 18, SHT_RELR = 19, SHT_GNU_HASH = 0x6ffffff6, SHT_GNU_verdef = 0x6ffffffd,
                     SHT_GNU_verneed = 0x6ffffffe, SHT_GNU_versym = 0x6fffffff;
// SHT_GROUP flag word (the section's first word)
inline constexpr u32 GRP_COMDAT = 0x1;

// sh_flags
inline constexpr u64 SHF_WRITE = 0x1, SHF_ALLOC = 0x2, SHF_EXECINSTR = 0x4, SHF_MERGE = 0x10, SHF_STRINGS = 0x20,
                     SHF_INFO_LINK = 0x40, SHF_GROUP = 0x200, SHF_TLS = 0x400, SHF_MIPS_GPREL = 0x10000000,
                     SHF_X86_64_LARGE = 0x10000000;

// p_type
inline constexpr u32 PT_NULL = 0, PT_LOAD = 1, PT_DYNAMIC = 2, PT_INTERP = 3, PT_NOTE = 4, PT_PHDR = 6, PT_TLS = 7,
                     PT_GNU_EH_FRAME = 0x6474e550, PT_GNU_STACK = 0x6474e551, PT_GNU_RELRO = 0x6474e552;

// Symbol binding, type, visibility
inline constexpr u8 STB_LOCAL = 0, STB_GLOBAL = 1, STB_WEAK = 2, STB_GNU_UNIQUE = 10;
inline constexpr u8 STT_NOTYPE = 0, STT_OBJECT = 1, STT_FUNC = 2, STT_SECTION = 3, STT_FILE = 4, STT_COMMON = 5,
                    STT_TLS = 6, STT_RELC = 8, STT_SRELC = 9, STT_GNU_IFUNC = 10;
inline constexpr u8 STV_DEFAULT = 0, STV_INTERNAL = 1, STV_HIDDEN = 2, STV_PROTECTED = 3;
constexpr u8 st_bind(u8 info) noexcept { return static_cast<u8>(info >> 4); }
constexpr u8 st_type(u8 info) noexcept { return static_cast<u8>(info & 0xf); }
constexpr u8 st_visibility(u8 other) noexcept { return static_cast<u8>(other & 0x3); }

// d_tag
inline constexpr i64 DT_NULL = 0, DT_NEEDED = 1, DT_PLTRELSZ = 2, DT_PLTGOT = 3, DT_HASH = 4, DT_STRTAB = 5,
                     DT_SYMTAB = 6, DT_RELA = 7, DT_RELASZ = 8, DT_RELAENT = 9, DT_STRSZ = 10, DT_SYMENT = 11,
                     DT_INIT = 12, DT_FINI = 13, DT_SONAME = 14, DT_RPATH = 15, DT_SYMBOLIC = 16, DT_REL = 17,
                     DT_RELSZ = 18, DT_RELENT = 19, DT_PLTREL = 20, DT_DEBUG = 21, DT_TEXTREL = 22,
                     DT_JMPREL = 23, DT_BIND_NOW = 24, DT_INIT_ARRAY = 25, DT_FINI_ARRAY = 26,
                     DT_INIT_ARRAYSZ = 27, DT_FINI_ARRAYSZ = 28, DT_RUNPATH = 29, DT_FLAGS = 30,
                     DT_PREINIT_ARRAY = 32, DT_PREINIT_ARRAYSZ = 33, DT_SYMTAB_SHNDX = 34, DT_RELRSZ = 35,
                     DT_RELR = 36, DT_RELRENT = 37, DT_GNU_HASH = 0x6ffffef5, DT_VERSYM = 0x6ffffff0,
                     DT_RELACOUNT = 0x6ffffff9, DT_RELCOUNT = 0x6ffffffa, DT_FLAGS_1 = 0x6ffffffb,
                     DT_VERDEF = 0x6ffffffc, DT_VERDEFNUM = 0x6ffffffd, DT_VERNEED = 0x6ffffffe,
                     DT_VERNEEDNUM = 0x6fffffff, DT_AUXILIARY = 0x7ffffffd, DT_FILTER = 0x7fffffff;
// DT_FLAGS / DT_FLAGS_1 bits
inline constexpr u64 DF_ORIGIN = 0x1, DF_SYMBOLIC = 0x2, DF_TEXTREL = 0x4, DF_BIND_NOW = 0x8, DF_STATIC_TLS = 0x10;
inline constexpr u64 DF_1_NOW = 0x1, DF_1_GLOBAL = 0x2, DF_1_GROUP = 0x4, DF_1_NODELETE = 0x8, DF_1_LOADFLTR = 0x10,
                     DF_1_INITFIRST = 0x20, DF_1_NOOPEN = 0x40, DF_1_ORIGIN = 0x80, DF_1_DIRECT = 0x100,
                     DF_1_INTERPOSE = 0x400, DF_1_NODEFLIB = 0x800, DF_1_PIE = 0x8000000;

// ld.so's lookup classes (ELF_RTYPE_CLASS_*; relocations.hpp maps relocation types to them)
inline constexpr int rtype_class_plt = 1;   // undefined symbols (PLT addresses) never match
inline constexpr int rtype_class_copy = 2;  // the lookup skips the executable

// Versioning
inline constexpr u16 VER_NDX_LOCAL = 0, VER_NDX_GLOBAL = 1, VERSYM_HIDDEN = 0x8000, VERSYM_VERSION = 0x7fff;
inline constexpr u16 VER_FLG_BASE = 0x1, VER_FLG_WEAK = 0x2;
// A .gnu.version entry: bits 0..14 the version index, bit 15 hidden.
constexpr u16 versym_index(u16 versym) noexcept { return static_cast<u16>(versym & VERSYM_VERSION); }
constexpr bool versym_hidden(u16 versym) noexcept { return (versym & VERSYM_HIDDEN) != 0; }

template <std::endian E, bool Is64>
struct elf_types {
  static constexpr std::endian endianness = E;
  static constexpr bool is64 = Is64;
  using uword = std::conditional_t<Is64, u64, u32>;  // host type of Addr/Off/Xword-or-Word
  using half = endian<u16, E>;
  using word = endian<u32, E>;
  using sword = endian<i32, E>;
  using xword = endian<u64, E>;
  using addr = endian<uword, E>;
  using off = endian<uword, E>;
  using sxword = endian<std::conditional_t<Is64, i64, i32>, E>;  // d_tag, r_addend

  struct Ehdr {
    unsigned char e_ident[16];
    half e_type;
    half e_machine;
    word e_version;
    addr e_entry;
    off e_phoff;
    off e_shoff;
    word e_flags;
    half e_ehsize;
    half e_phentsize;
    half e_phnum;
    half e_shentsize;
    half e_shnum;
    half e_shstrndx;
  };
  static_assert(sizeof(Ehdr) == (Is64 ? 64 : 52));

  struct Shdr {
    word sh_name;
    word sh_type;
    addr sh_flags;  // Word in ELF32, Xword in ELF64
    addr sh_addr;
    off sh_offset;
    addr sh_size;
    word sh_link;
    word sh_info;
    addr sh_addralign;
    addr sh_entsize;
  };
  static_assert(sizeof(Shdr) == (Is64 ? 64 : 40));

  struct Phdr32 {
    word p_type;
    off p_offset;
    addr p_vaddr;
    addr p_paddr;
    word p_filesz;
    word p_memsz;
    word p_flags;
    word p_align;
  };
  struct Phdr64 {
    word p_type;
    word p_flags;
    off p_offset;
    addr p_vaddr;
    addr p_paddr;
    xword p_filesz;
    xword p_memsz;
    xword p_align;
  };
  using Phdr = std::conditional_t<Is64, Phdr64, Phdr32>;
  static_assert(sizeof(Phdr) == (Is64 ? 56 : 32));

  struct Sym32 {
    word st_name;
    addr st_value;
    word st_size;
    unsigned char st_info;
    unsigned char st_other;
    half st_shndx;
    u8 st_bind() const noexcept { return elf::st_bind(st_info); }
    u8 st_type() const noexcept { return elf::st_type(st_info); }
    u8 st_visibility() const noexcept { return elf::st_visibility(st_other); }
    // st_shndx as stored (reserved values such as SHN_ABS and SHN_XINDEX raw).
    u32 raw_shndx() const noexcept { return static_cast<u32>(st_shndx); }
    bool is_undefined() const noexcept { return static_cast<u32>(st_shndx) == SHN_UNDEF; }
    bool is_absolute() const noexcept { return static_cast<u32>(st_shndx) == SHN_ABS; }
    // STV_HIDDEN or STV_INTERNAL: binds inside its own object, never seen by others.
    bool binds_locally() const noexcept {
      return st_visibility() == STV_HIDDEN || st_visibility() == STV_INTERNAL;
    }
  };
  struct Sym64 {
    word st_name;
    unsigned char st_info;
    unsigned char st_other;
    half st_shndx;
    addr st_value;
    xword st_size;
    u8 st_bind() const noexcept { return elf::st_bind(st_info); }
    u8 st_type() const noexcept { return elf::st_type(st_info); }
    u8 st_visibility() const noexcept { return elf::st_visibility(st_other); }
    // st_shndx as stored (reserved values such as SHN_ABS and SHN_XINDEX raw).
    u32 raw_shndx() const noexcept { return static_cast<u32>(st_shndx); }
    bool is_undefined() const noexcept { return static_cast<u32>(st_shndx) == SHN_UNDEF; }
    bool is_absolute() const noexcept { return static_cast<u32>(st_shndx) == SHN_ABS; }
    // STV_HIDDEN or STV_INTERNAL: binds inside its own object, never seen by others.
    bool binds_locally() const noexcept {
      return st_visibility() == STV_HIDDEN || st_visibility() == STV_INTERNAL;
    }
  };
  using Sym = std::conditional_t<Is64, Sym64, Sym32>;
  static_assert(sizeof(Sym) == (Is64 ? 24 : 16));

  struct Dyn {
    sxword d_tag;
    addr d_val;  // d_un: d_val or d_ptr
  };
  static_assert(sizeof(Dyn) == (Is64 ? 16 : 8));

  static constexpr u32 r_sym(uword info) noexcept {
    if constexpr (Is64) return static_cast<u32>(info >> 32);
    else return static_cast<u32>(info >> 8);
  }
  static constexpr u32 r_type(uword info) noexcept {
    if constexpr (Is64) return static_cast<u32>(info & 0xffffffffu);
    else return static_cast<u32>(info & 0xffu);
  }

  struct Rel {
    addr r_offset;
    addr r_info;
    u32 r_sym() const noexcept { return elf_types::r_sym(r_info); }
    u32 r_type() const noexcept { return elf_types::r_type(r_info); }
  };
  struct Rela {
    addr r_offset;
    addr r_info;
    sxword r_addend;
    u32 r_sym() const noexcept { return elf_types::r_sym(r_info); }
    u32 r_type() const noexcept { return elf_types::r_type(r_info); }
  };
  static_assert(sizeof(Rel) == (Is64 ? 16 : 8));
  static_assert(sizeof(Rela) == (Is64 ? 24 : 12));
  using Relr = addr;

  // Versioning records have the same layout in both classes.
  struct Verdef {
    half vd_version;
    half vd_flags;
    half vd_ndx;
    half vd_cnt;
    word vd_hash;
    word vd_aux;
    word vd_next;
  };
  struct Verdaux {
    word vda_name;
    word vda_next;
  };
  struct Verneed {
    half vn_version;
    half vn_cnt;
    word vn_file;
    word vn_aux;
    word vn_next;
  };
  struct Vernaux {
    word vna_hash;
    half vna_flags;
    half vna_other;
    word vna_name;
    word vna_next;
  };
  using Versym = half;
  static_assert(sizeof(Verdef) == 20 && sizeof(Verdaux) == 8 && sizeof(Verneed) == 16 && sizeof(Vernaux) == 16);
  static_assert(sizeof(Versym) == 2);

  // Header of a DT_GNU_HASH table: nbuckets, symoffset, bloom_size, bloom_shift,
  // then bloom words (uword each), buckets (u32), chains (u32).
  struct GnuHashHeader {
    word nbuckets;
    word symoffset;
    word bloom_size;
    word bloom_shift;
  };
  static_assert(sizeof(GnuHashHeader) == 16);
};

using elf32le = elf_types<std::endian::little, false>;
using elf32be = elf_types<std::endian::big, false>;
using elf64le = elf_types<std::endian::little, true>;
using elf64be = elf_types<std::endian::big, true>;

}  // namespace elf
}  // namespace v0
}  // namespace linkscope
