// linkscope/macho/types.hpp — Mach-O records for all four variants (32/64-bit, LE/BE).
//
// A Mach-O file (Apple's <mach-o/loader.h>) is a header, then `ncmds` load
// commands packed one after another in `sizeofcmds` bytes, then the data the
// commands point at by file offset:
//
//   offset 0   mach_header (28 bytes) or mach_header_64 (32 bytes: + reserved).
//              magic MH_MAGIC/MH_MAGIC_64 (0xfeedface/0xfeedfacf) in the file's
//              byte order; read in the other order (MH_CIGAM*) it means the
//              file is of the opposite endianness. cputype/cpusubtype,
//              filetype (MH_OBJECT, MH_EXECUTE, MH_DYLIB, MH_BUNDLE ...), flags.
//   then       load_command {cmd, cmdsize} headers, each the first 8 bytes of a
//              bigger record (segment_command, dylib_command, symtab_command ...).
//              cmdsize covers the record and any trailing strings or section
//              headers, and is a multiple of 4 (32-bit) or 8 (64-bit). Strings
//              (lc_str) are offsets from the start of their command.
//   segments   LC_SEGMENT(_64) is followed by `nsects` section(_64) records.
//   __LINKEDIT the symbol table (LC_SYMTAB: nlist(_64) array + string table,
//              <mach-o/nlist.h>), LC_DYSYMTAB's ranges over it, the dyld info
//              streams (LC_DYLD_INFO[_ONLY]: rebase, bind, weak bind, lazy bind,
//              export trie) and linkedit_data blobs (LC_DYLD_EXPORTS_TRIE,
//              LC_DYLD_CHAINED_FIXUPS, LC_FUNCTION_STARTS, LC_CODE_SIGNATURE ...).
//
// Universal ("fat") files (<mach-o/fat.h>) are always big-endian: fat_header
// {FAT_MAGIC 0xcafebabe or FAT_MAGIC_64 0xcafebabf, nfat_arch}, then nfat_arch
// fat_arch (20 bytes: 32-bit offset/size) or fat_arch_64 (32 bytes) records.
//
// Everything is written once against `macho_types<E, Is64>`, as ELF is against
// elf_types<E, Is64>; the records are structs of endian_int (alignment 1) read
// by memcpy, each size checked against the header's with static_assert.
// Behaviour where the headers are silent follows LLVM's MachOObjectFile.cpp.
#pragma once

#include <bit>
#include <cstdint>
#include <string_view>
#include <type_traits>

#include "linkscope/core/bytes.hpp"

namespace linkscope {
inline namespace v0 {
namespace macho {

// mach_header.magic as read in the file's own byte order.
inline constexpr u32 MH_MAGIC = 0xfeedface, MH_CIGAM = 0xcefaedfe, MH_MAGIC_64 = 0xfeedfacf, MH_CIGAM_64 = 0xcffaedfe;
inline constexpr u32 FAT_MAGIC = 0xcafebabe, FAT_MAGIC_64 = 0xcafebabf;

// filetype
inline constexpr u32 MH_OBJECT = 0x1, MH_EXECUTE = 0x2, MH_FVMLIB = 0x3, MH_CORE = 0x4, MH_PRELOAD = 0x5,
                     MH_DYLIB = 0x6, MH_DYLINKER = 0x7, MH_BUNDLE = 0x8, MH_DYLIB_STUB = 0x9, MH_DSYM = 0xa,
                     MH_KEXT_BUNDLE = 0xb, MH_FILESET = 0xc;
// flags
inline constexpr u32 MH_NOUNDEFS = 0x1, MH_DYLDLINK = 0x4, MH_TWOLEVEL = 0x80, MH_FORCE_FLAT = 0x100,
                     MH_WEAK_DEFINES = 0x8000, MH_BINDS_TO_WEAK = 0x10000, MH_PIE = 0x200000,
                     MH_SUBSECTIONS_VIA_SYMBOLS = 0x2000;

// cputype / cpusubtype (<mach/machine.h>)
inline constexpr u32 CPU_ARCH_ABI64 = 0x01000000, CPU_ARCH_ABI64_32 = 0x02000000;
inline constexpr u32 CPU_TYPE_X86 = 7, CPU_TYPE_X86_64 = CPU_TYPE_X86 | CPU_ARCH_ABI64, CPU_TYPE_ARM = 12,
                     CPU_TYPE_ARM64 = CPU_TYPE_ARM | CPU_ARCH_ABI64, CPU_TYPE_ARM64_32 = CPU_TYPE_ARM | CPU_ARCH_ABI64_32,
                     CPU_TYPE_POWERPC = 18, CPU_TYPE_POWERPC64 = CPU_TYPE_POWERPC | CPU_ARCH_ABI64;
inline constexpr u32 CPU_SUBTYPE_MASK = 0xff000000;  // capability bits (CPU_SUBTYPE_LIB64, PtrAuth ABI)
inline constexpr u32 CPU_SUBTYPE_X86_ALL = 3, CPU_SUBTYPE_X86_64_H = 8, CPU_SUBTYPE_ARM64_ALL = 0,
                     CPU_SUBTYPE_ARM64E = 2;

// Load commands. LC_REQ_DYLD marks the ones dyld must understand to load the file.
inline constexpr u32 LC_REQ_DYLD = 0x80000000;
inline constexpr u32 LC_SEGMENT = 0x1, LC_SYMTAB = 0x2, LC_SYMSEG = 0x3, LC_THREAD = 0x4, LC_UNIXTHREAD = 0x5,
                     LC_DYSYMTAB = 0xb, LC_LOAD_DYLIB = 0xc, LC_ID_DYLIB = 0xd, LC_LOAD_DYLINKER = 0xe,
                     LC_ID_DYLINKER = 0xf, LC_PREBOUND_DYLIB = 0x10, LC_ROUTINES = 0x11, LC_SUB_FRAMEWORK = 0x12,
                     LC_SUB_UMBRELLA = 0x13, LC_SUB_CLIENT = 0x14, LC_SUB_LIBRARY = 0x15, LC_TWOLEVEL_HINTS = 0x16,
                     LC_PREBIND_CKSUM = 0x17, LC_LOAD_WEAK_DYLIB = 0x18 | LC_REQ_DYLD, LC_SEGMENT_64 = 0x19,
                     LC_ROUTINES_64 = 0x1a, LC_UUID = 0x1b, LC_RPATH = 0x1c | LC_REQ_DYLD, LC_CODE_SIGNATURE = 0x1d,
                     LC_SEGMENT_SPLIT_INFO = 0x1e, LC_REEXPORT_DYLIB = 0x1f | LC_REQ_DYLD, LC_LAZY_LOAD_DYLIB = 0x20,
                     LC_ENCRYPTION_INFO = 0x21, LC_DYLD_INFO = 0x22, LC_DYLD_INFO_ONLY = 0x22 | LC_REQ_DYLD,
                     LC_LOAD_UPWARD_DYLIB = 0x23 | LC_REQ_DYLD, LC_VERSION_MIN_MACOSX = 0x24,
                     LC_VERSION_MIN_IPHONEOS = 0x25, LC_FUNCTION_STARTS = 0x26, LC_DYLD_ENVIRONMENT = 0x27,
                     LC_MAIN = 0x28 | LC_REQ_DYLD, LC_DATA_IN_CODE = 0x29, LC_SOURCE_VERSION = 0x2a,
                     LC_DYLIB_CODE_SIGN_DRS = 0x2b, LC_ENCRYPTION_INFO_64 = 0x2c, LC_LINKER_OPTION = 0x2d,
                     LC_LINKER_OPTIMIZATION_HINT = 0x2e, LC_VERSION_MIN_TVOS = 0x2f, LC_VERSION_MIN_WATCHOS = 0x30,
                     LC_NOTE = 0x31, LC_BUILD_VERSION = 0x32, LC_DYLD_EXPORTS_TRIE = 0x33 | LC_REQ_DYLD,
                     LC_DYLD_CHAINED_FIXUPS = 0x34 | LC_REQ_DYLD, LC_FILESET_ENTRY = 0x35 | LC_REQ_DYLD;

// The name llvm-otool prints for a load command, or "" if unknown.
constexpr const char* command_name(u32 cmd) noexcept {
  switch (cmd) {
    case LC_SEGMENT: return "LC_SEGMENT";
    case LC_SYMTAB: return "LC_SYMTAB";
    case LC_SYMSEG: return "LC_SYMSEG";
    case LC_THREAD: return "LC_THREAD";
    case LC_UNIXTHREAD: return "LC_UNIXTHREAD";
    case LC_DYSYMTAB: return "LC_DYSYMTAB";
    case LC_LOAD_DYLIB: return "LC_LOAD_DYLIB";
    case LC_ID_DYLIB: return "LC_ID_DYLIB";
    case LC_LOAD_DYLINKER: return "LC_LOAD_DYLINKER";
    case LC_ID_DYLINKER: return "LC_ID_DYLINKER";
    case LC_PREBOUND_DYLIB: return "LC_PREBOUND_DYLIB";
    case LC_ROUTINES: return "LC_ROUTINES";
    case LC_SUB_FRAMEWORK: return "LC_SUB_FRAMEWORK";
    case LC_SUB_UMBRELLA: return "LC_SUB_UMBRELLA";
    case LC_SUB_CLIENT: return "LC_SUB_CLIENT";
    case LC_SUB_LIBRARY: return "LC_SUB_LIBRARY";
    case LC_TWOLEVEL_HINTS: return "LC_TWOLEVEL_HINTS";
    case LC_PREBIND_CKSUM: return "LC_PREBIND_CKSUM";
    case LC_LOAD_WEAK_DYLIB: return "LC_LOAD_WEAK_DYLIB";
    case LC_SEGMENT_64: return "LC_SEGMENT_64";
    case LC_ROUTINES_64: return "LC_ROUTINES_64";
    case LC_UUID: return "LC_UUID";
    case LC_RPATH: return "LC_RPATH";
    case LC_CODE_SIGNATURE: return "LC_CODE_SIGNATURE";
    case LC_SEGMENT_SPLIT_INFO: return "LC_SEGMENT_SPLIT_INFO";
    case LC_REEXPORT_DYLIB: return "LC_REEXPORT_DYLIB";
    case LC_LAZY_LOAD_DYLIB: return "LC_LAZY_LOAD_DYLIB";
    case LC_ENCRYPTION_INFO: return "LC_ENCRYPTION_INFO";
    case LC_DYLD_INFO: return "LC_DYLD_INFO";
    case LC_DYLD_INFO_ONLY: return "LC_DYLD_INFO_ONLY";
    case LC_LOAD_UPWARD_DYLIB: return "LC_LOAD_UPWARD_DYLIB";
    case LC_VERSION_MIN_MACOSX: return "LC_VERSION_MIN_MACOSX";
    case LC_VERSION_MIN_IPHONEOS: return "LC_VERSION_MIN_IPHONEOS";
    case LC_FUNCTION_STARTS: return "LC_FUNCTION_STARTS";
    case LC_DYLD_ENVIRONMENT: return "LC_DYLD_ENVIRONMENT";
    case LC_MAIN: return "LC_MAIN";
    case LC_DATA_IN_CODE: return "LC_DATA_IN_CODE";
    case LC_SOURCE_VERSION: return "LC_SOURCE_VERSION";
    case LC_DYLIB_CODE_SIGN_DRS: return "LC_DYLIB_CODE_SIGN_DRS";
    case LC_ENCRYPTION_INFO_64: return "LC_ENCRYPTION_INFO_64";
    case LC_LINKER_OPTION: return "LC_LINKER_OPTION";
    case LC_LINKER_OPTIMIZATION_HINT: return "LC_LINKER_OPTIMIZATION_HINT";
    case LC_VERSION_MIN_TVOS: return "LC_VERSION_MIN_TVOS";
    case LC_VERSION_MIN_WATCHOS: return "LC_VERSION_MIN_WATCHOS";
    case LC_NOTE: return "LC_NOTE";
    case LC_BUILD_VERSION: return "LC_BUILD_VERSION";
    case LC_DYLD_EXPORTS_TRIE: return "LC_DYLD_EXPORTS_TRIE";
    case LC_DYLD_CHAINED_FIXUPS: return "LC_DYLD_CHAINED_FIXUPS";
    case LC_FILESET_ENTRY: return "LC_FILESET_ENTRY";
    default: return "";
  }
}

// build_version_command.platform
inline constexpr u32 PLATFORM_MACOS = 1, PLATFORM_IOS = 2, PLATFORM_TVOS = 3, PLATFORM_WATCHOS = 4,
                     PLATFORM_BRIDGEOS = 5, PLATFORM_MACCATALYST = 6, PLATFORM_IOSSIMULATOR = 7,
                     PLATFORM_TVOSSIMULATOR = 8, PLATFORM_WATCHOSSIMULATOR = 9, PLATFORM_DRIVERKIT = 10;

// section.flags: the type is the low byte.
inline constexpr u32 SECTION_TYPE = 0x000000ff, S_ZEROFILL = 0x1, S_CSTRING_LITERALS = 0x2,
                     S_NON_LAZY_SYMBOL_POINTERS = 0x6, S_LAZY_SYMBOL_POINTERS = 0x7, S_SYMBOL_STUBS = 0x8,
                     S_GB_ZEROFILL = 0xc, S_THREAD_LOCAL_ZEROFILL = 0x12, S_ATTR_PURE_INSTRUCTIONS = 0x80000000,
                     S_ATTR_SOME_INSTRUCTIONS = 0x00000400;

// nlist.n_type (<mach-o/nlist.h>): stab bits, private-extern, type, extern.
inline constexpr u8 N_STAB = 0xe0, N_PEXT = 0x10, N_TYPE = 0x0e, N_EXT = 0x01;
inline constexpr u8 N_UNDF = 0x0, N_ABS = 0x2, N_SECT = 0xe, N_PBUD = 0xc, N_INDR = 0xa;
inline constexpr u8 NO_SECT = 0, MAX_SECT = 255;
// nlist.n_desc
inline constexpr u16 REFERENCE_TYPE = 0x7, REFERENCED_DYNAMICALLY = 0x10, N_NO_DEAD_STRIP = 0x20,
                     N_WEAK_REF = 0x40, N_WEAK_DEF = 0x80, N_REF_TO_WEAK = 0x80, N_ARM_THUMB_DEF = 0x8,
                     N_SYMBOL_RESOLVER = 0x100, N_ALT_ENTRY = 0x200, N_COLD_FUNC = 0x400;
// Two-level namespace library ordinals (the high byte of an undefined symbol's n_desc).
inline constexpr u8 SELF_LIBRARY_ORDINAL = 0x0, MAX_LIBRARY_ORDINAL = 0xfd, DYNAMIC_LOOKUP_ORDINAL = 0xfe,
                    EXECUTABLE_ORDINAL = 0xff;

// The 16-byte name fields of segments and sections: NUL-padded, not always
// terminated. The view points into the record it is given: a copy's name
// dies with the copy (file.hpp's section_names() views the file itself).
inline std::string_view fixed_name(const char (&field)[16]) noexcept {
  std::size_t n = 0;
  while (n < 16 && field[n] != '\0') ++n;
  return {field, n};
}

inline std::string_view fixed_name(const unsigned char* field) noexcept {
  std::size_t n = 0;
  while (n < 16 && field[n] != 0) ++n;
  return {reinterpret_cast<const char*>(field), n};
}

// Records whose layout is the same in every variant, only byte order differs.
template <std::endian E>
struct macho_common {
  using u32e = endian<u32, E>;
  using i32e = endian<i32, E>;
  using u64e = endian<u64, E>;

  struct load_command {
    u32e cmd;
    u32e cmdsize;
  };
  static_assert(sizeof(load_command) == 8);

  // lc_str: an offset from the start of the command.
  struct dylib_command {
    u32e cmd;
    u32e cmdsize;
    u32e name;  // lc_str
    u32e timestamp;
    u32e current_version;        // X.Y.Z as xxxx.yy.zz nibbles: 16.8.8 bits
    u32e compatibility_version;
  };
  static_assert(sizeof(dylib_command) == 24);

  // rpath_command, dylinker_command and sub_{framework,umbrella,client,library}_command.
  struct lc_str_command {
    u32e cmd;
    u32e cmdsize;
    u32e offset;  // lc_str
  };
  static_assert(sizeof(lc_str_command) == 12);

  struct uuid_command {
    u32e cmd;
    u32e cmdsize;
    unsigned char uuid[16];
  };
  static_assert(sizeof(uuid_command) == 24);

  struct version_min_command {
    u32e cmd;
    u32e cmdsize;
    u32e version;  // X.Y.Z in nibbles xxxx.yy.zz
    u32e sdk;
  };
  static_assert(sizeof(version_min_command) == 16);

  struct build_version_command {
    u32e cmd;
    u32e cmdsize;
    u32e platform;
    u32e minos;
    u32e sdk;
    u32e ntools;  // build_tool_version records follow
  };
  static_assert(sizeof(build_version_command) == 24);

  struct build_tool_version {
    u32e tool;
    u32e version;
  };
  static_assert(sizeof(build_tool_version) == 8);

  struct symtab_command {
    u32e cmd;
    u32e cmdsize;
    u32e symoff;
    u32e nsyms;
    u32e stroff;
    u32e strsize;
  };
  static_assert(sizeof(symtab_command) == 24);

  struct dysymtab_command {
    u32e cmd;
    u32e cmdsize;
    u32e ilocalsym;
    u32e nlocalsym;
    u32e iextdefsym;
    u32e nextdefsym;
    u32e iundefsym;
    u32e nundefsym;
    u32e tocoff;
    u32e ntoc;
    u32e modtaboff;
    u32e nmodtab;
    u32e extrefsymoff;
    u32e nextrefsyms;
    u32e indirectsymoff;
    u32e nindirectsyms;
    u32e extreloff;
    u32e nextrel;
    u32e locreloff;
    u32e nlocrel;
  };
  static_assert(sizeof(dysymtab_command) == 80);

  struct dyld_info_command {
    u32e cmd;
    u32e cmdsize;
    u32e rebase_off;
    u32e rebase_size;
    u32e bind_off;
    u32e bind_size;
    u32e weak_bind_off;
    u32e weak_bind_size;
    u32e lazy_bind_off;
    u32e lazy_bind_size;
    u32e export_off;
    u32e export_size;
  };
  static_assert(sizeof(dyld_info_command) == 48);

  struct linkedit_data_command {
    u32e cmd;
    u32e cmdsize;
    u32e dataoff;
    u32e datasize;
  };
  static_assert(sizeof(linkedit_data_command) == 16);

  struct entry_point_command {
    u32e cmd;
    u32e cmdsize;
    u64e entryoff;
    u64e stacksize;
  };
  static_assert(sizeof(entry_point_command) == 24);

  struct source_version_command {
    u32e cmd;
    u32e cmdsize;
    u64e version;  // A.B.C.D.E packed as a24.b10.c10.d10.e10
  };
  static_assert(sizeof(source_version_command) == 16);
};

// Fat headers: big-endian whatever the slices are.
struct fat_header {
  be<u32> magic;
  be<u32> nfat_arch;
};
static_assert(sizeof(fat_header) == 8);

struct fat_arch {
  be<u32> cputype;
  be<u32> cpusubtype;
  be<u32> offset;
  be<u32> size;
  be<u32> align;  // a power of 2
};
static_assert(sizeof(fat_arch) == 20);

struct fat_arch_64 {
  be<u32> cputype;
  be<u32> cpusubtype;
  be<u64> offset;
  be<u64> size;
  be<u32> align;
  be<u32> reserved;
};
static_assert(sizeof(fat_arch_64) == 32);

template <std::endian E, bool Is64>
struct macho_types : macho_common<E> {
  static constexpr std::endian endianness = E;
  static constexpr bool is64 = Is64;
  using uword = std::conditional_t<Is64, u64, u32>;
  using u16e = endian<u16, E>;
  using u32e = endian<u32, E>;
  using i32e = endian<i32, E>;
  using word = endian<uword, E>;  // 4 or 8 bytes: addresses and sizes
  // load commands are padded to 8 bytes in 64-bit files, to 4 in 32-bit files
  static constexpr u32 command_alignment = Is64 ? 8 : 4;
  static constexpr u32 magic = Is64 ? MH_MAGIC_64 : MH_MAGIC;
  static constexpr u32 segment_command_id = Is64 ? LC_SEGMENT_64 : LC_SEGMENT;

  struct mach_header32 {
    u32e magic;
    u32e cputype;
    u32e cpusubtype;
    u32e filetype;
    u32e ncmds;
    u32e sizeofcmds;
    u32e flags;
  };
  struct mach_header64 : mach_header32 {
    u32e reserved;
  };
  using mach_header = std::conditional_t<Is64, mach_header64, mach_header32>;
  static_assert(sizeof(mach_header) == (Is64 ? 32 : 28));

  struct segment_command {
    u32e cmd;
    u32e cmdsize;
    char segname[16];
    word vmaddr;
    word vmsize;
    word fileoff;
    word filesize;
    i32e maxprot;
    i32e initprot;
    u32e nsects;
    u32e flags;
    std::string_view name() const noexcept { return fixed_name(segname); }
  };
  static_assert(sizeof(segment_command) == (Is64 ? 72 : 56));

  struct section32 {
    char sectname[16];
    char segname[16];
    word addr;
    word size;
    u32e offset;
    u32e align;
    u32e reloff;
    u32e nreloc;
    u32e flags;
    u32e reserved1;
    u32e reserved2;
  };
  struct section64 : section32 {
    u32e reserved3;
  };
  struct section : std::conditional_t<Is64, section64, section32> {
    std::string_view name() const noexcept { return fixed_name(this->sectname); }
    std::string_view segment_name() const noexcept { return fixed_name(this->segname); }
    u32 type() const noexcept { return static_cast<u32>(this->flags) & SECTION_TYPE; }
    bool is_zerofill() const noexcept {
      const u32 t = type();
      return t == S_ZEROFILL || t == S_GB_ZEROFILL || t == S_THREAD_LOCAL_ZEROFILL;
    }
  };
  static_assert(sizeof(section) == (Is64 ? 80 : 68));

  struct nlist {
    u32e n_strx;
    u8 n_type_raw;
    u8 n_sect;
    u16e n_desc;
    word n_value;

    u8 type() const noexcept { return static_cast<u8>(n_type_raw & N_TYPE); }
    bool is_stab() const noexcept { return (n_type_raw & N_STAB) != 0; }
    bool is_external() const noexcept { return (n_type_raw & N_EXT) != 0; }
    bool is_private_external() const noexcept { return (n_type_raw & N_PEXT) != 0; }
    u16 desc() const noexcept { return n_desc; }
    bool weak_def() const noexcept { return (desc() & N_WEAK_DEF) != 0; }
    bool weak_ref() const noexcept { return (desc() & N_WEAK_REF) != 0; }
    bool no_dead_strip() const noexcept { return (desc() & N_NO_DEAD_STRIP) != 0; }
    bool referenced_dynamically() const noexcept { return (desc() & REFERENCED_DYNAMICALLY) != 0; }
    bool symbol_resolver() const noexcept { return (desc() & N_SYMBOL_RESOLVER) != 0; }
    bool alt_entry() const noexcept { return (desc() & N_ALT_ENTRY) != 0; }
    // GET_LIBRARY_ORDINAL: the high byte of n_desc of an undefined symbol.
    u8 library_ordinal() const noexcept { return static_cast<u8>((desc() >> 8) & 0xff); }
    // GET_COMM_ALIGN: log2 alignment of a common symbol.
    u8 common_align() const noexcept { return static_cast<u8>((desc() >> 8) & 0x0f); }
    // A common symbol: undefined, external, with a size in n_value.
    bool is_common() const noexcept {
      return !is_stab() && type() == N_UNDF && is_external() && static_cast<uword>(n_value) != 0;
    }
  };
  static_assert(sizeof(nlist) == (Is64 ? 16 : 12));
};

using macho32le = macho_types<std::endian::little, false>;
using macho32be = macho_types<std::endian::big, false>;
using macho64le = macho_types<std::endian::little, true>;
using macho64be = macho_types<std::endian::big, true>;

// A packed X.Y.Z version (dylib versions, minos, sdk): 16.8.8 bits.
struct packed_version {
  u32 raw = 0;
  constexpr u32 major() const noexcept { return raw >> 16; }
  constexpr u32 minor() const noexcept { return (raw >> 8) & 0xff; }
  constexpr u32 patch() const noexcept { return raw & 0xff; }
};

}  // namespace macho
}  // namespace v0
}  // namespace linkscope
