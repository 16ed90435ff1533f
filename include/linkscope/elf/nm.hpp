// linkscope/elf/nm.hpp — the symbol listing of GNU nm 2.40, for ELF.
//
// GNU nm sees ELF through BFD. What it prints follows from three BFD steps,
// reproduced here (binutils bfd/elf.c _bfd_elf_make_section_from_shdr,
// bfd/elfcode.h elf_slurp_symbol_table, bfd/syms.c bfd_decode_symclass and
// decode_section_type, binutils/nm.c filter_symbols and print_symname):
//
//  1. Section flags from each section header: HAS_CONTENTS unless NOBITS;
//     ALLOC from SHF_ALLOC (LOAD if also not NOBITS); READONLY unless
//     SHF_WRITE; CODE from SHF_EXECINSTR, else DATA if LOAD; DEBUGGING for
//     non-ALLOC sections named .debug*, .zdebug*, .gnu.debuglto_.debug_*,
//     .gnu.linkonce.wi.*, .line*, .stab* or .gdb_index; SMALL_DATA for MIPS
//     SHF_MIPS_GPREL on a MIPS section type (with the MIPS backend only, see
//     nm_options::all_backends; .sdata and .sbss are PROGBITS/NOBITS, so D/B). The section letter is then t (CODE), r/g/d (DATA:
//     read-only / small / other), s/b (no contents: small / other),
//     N (DEBUGGING), n (contents, read-only), else '?'. The COFF-style names
//     .drectve/.idata (i), .edata (e), .pdata (p) (followed by end, '.', '$'
//     or a digit) take precedence. Sections BFD does not create (symtab,
//     its string table, section names, SYMTAB_SHNDX, non-ALLOC REL/RELA)
//     or a bad index make the symbol absolute.
//  2. The symbol class (bfd_decode_symclass), in this order: common
//     (SHN_COMMON, x86-64 LCOMMON, MIPS SCOMMON: 'C', or 'c' when small);
//     undefined ('U', or weak 'v' for objects and 'w' otherwise); GNU_IFUNC
//     'i'; weak 'V' (object) / 'W'; GNU_UNIQUE 'u'; a binding that is neither
//     local nor global '?'; absolute 'a'; else the section letter. Global
//     (STB_GLOBAL, defined, not common) upper-cases it.
//  3. Filtering: STT_SECTION and STT_FILE symbols are "debugging" and never
//     listed (nm -a would); with the ARM/AArch64/RISC-V backends, mapping
//     symbols ($a, $d, $t, $x ...) and RISC-V local labels are
//     target-special and skipped (nm_options::all_backends).
// Values: st_value, plus the section address in relocatable files; a common
// symbol shows its size (BFD stores st_size as the value). Dynamic symbols
// carry the version nm appends (versions.hpp). Entry 0 is never listed.
//
// A DSO without section headers (which nm cannot read) is listed from
// PT_DYNAMIC; its letters then come from the PT_LOAD segment holding the
// value (X: T, W: D or B past p_filesz, else R), an approximation of nm.
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <vector>
#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "linkscope/core/bytes.hpp"
#include "linkscope/core/config.hpp"
#include "linkscope/core/error.hpp"
#include "linkscope/elf/dynamic.hpp"
#include "linkscope/elf/file.hpp"
#include "linkscope/elf/symbols.hpp"
#include "linkscope/elf/types.hpp"
#include "linkscope/elf/versions.hpp"
#include "linkscope/symbols/symbol.hpp"

namespace linkscope {
inline namespace v0 {
namespace elf {

struct nm_entry {
  std::string_view name;     // the symbol's own name (the sort key)
  std::string_view version;  // dynamic symbols: the version nm appends ("" for none)
  u64 value = 0;             // value as nm prints it
  u64 size = 0;              // st_size
  u32 index = 0;             // index in its table
  char type = '?';           // nm's letter
  version_kind ver = version_kind::none;  // '@' (non_default) or '@@' (default_)
  bool undefined() const noexcept { return type == 'U' || type == 'w' || type == 'v'; }
};

struct nm_options {
  bool dynamic = false;         // -D
  bool undefined_only = false;  // -u
  bool external_only = false;   // -g
  bool defined_only = false;    // --defined-only
  bool debug_syms = false;      // -a
  bool special_syms = false;    // --special-syms
  // Emulate an nm whose BFD has every ELF backend (binutils-multiarch, or a
  // native nm on ARM/AArch64/MIPS/RISC-V): hide the target-special symbols
  // (ARM/AArch64 mapping symbols, RISC-V local labels), MIPS small-data
  // letters. false emulates an nm that reads the file's machine through the
  // generic elf32/64-little/big backend: Debian's single-target x86-64 nm on a
  // foreign file, or any nm given --target=elfNN-little|big that matches it.
  bool all_backends = true;
  // nm --target=elfNN-little|big: nm takes a named target only for a file it
  // matches (class and byte order); such a file is then read through the
  // generic backend, as with all_backends = false. Other files are unaffected.
  enum class generic_target : u8 { none, elf32_little, elf32_big, elf64_little, elf64_big };
  generic_target target = generic_target::none;
};

// The generic target that BFD calls `name` (none for any other name).
inline nm_options::generic_target generic_target_named(std::string_view name) noexcept {
  using g = nm_options::generic_target;
  if (name == "elf32-little") return g::elf32_little;
  if (name == "elf32-big") return g::elf32_big;
  if (name == "elf64-little") return g::elf64_little;
  if (name == "elf64-big") return g::elf64_big;
  return g::none;
}

// What listing a file gave.
struct nm_listing {
  bool is64 = false;
  bool no_symbols = false;  // nm would say "FILE: no symbols"
};

namespace detail {

// Pre-fault [p, p + bytes) for writing with one madvise(MADV_POPULATE_WRITE)
// (Linux >= 5.14; ignored elsewhere or when it fails) instead of one page
// fault per 4 KiB: 35k entries are 2 MB, 500 faults.
inline void populate_for_write([[maybe_unused]] void* p, [[maybe_unused]] std::size_t bytes) noexcept {
#if defined(__linux__)
  if (bytes < (std::size_t{1} << 18)) return;
  const auto page = static_cast<std::uintptr_t>(4096);
  const auto begin = (reinterpret_cast<std::uintptr_t>(p) + page - 1) & ~(page - 1);
  const auto end = (reinterpret_cast<std::uintptr_t>(p) + bytes) & ~(page - 1);
  if (end > begin) ::madvise(reinterpret_cast<void*>(begin), end - begin, 23 /* MADV_POPULATE_WRITE */);
#endif
}

inline void prefetch([[maybe_unused]] const void* p) noexcept {
#if defined(__GNUC__) || defined(__clang__)
  __builtin_prefetch(p, 0, 0);
#endif
}

inline bool starts_with(std::string_view s, std::string_view prefix) noexcept {
  return s.size() >= prefix.size() && s.compare(0, prefix.size(), prefix) == 0;
}

// bfd/syms.c coff_section_type: the name, then end, '.', '$' or a digit.
inline char coff_section_letter(std::string_view name) noexcept {
  struct pair {
    std::string_view prefix;
    char letter;
  };
  static constexpr pair table[] = {{".drectve", 'i'}, {".edata", 'e'}, {".idata", 'i'}, {".pdata", 'p'}};
  for (const pair& p : table) {
    if (!starts_with(name, p.prefix)) continue;
    if (name.size() == p.prefix.size()) return p.letter;
    const char next = name[p.prefix.size()];
    if (next == '.' || next == '$' || (next >= '0' && next <= '9')) return p.letter;
  }
  return '?';
}

inline bool is_debugging_section_name(std::string_view name) noexcept {
  if (name.empty() || name[0] != '.') return false;
  return starts_with(name, ".debug") || starts_with(name, ".gnu.debuglto_.debug_") ||
         starts_with(name, ".gnu.linkonce.wi.") || starts_with(name, ".zdebug") || starts_with(name, ".line") ||
         starts_with(name, ".stab") || name == ".gdb_index";
}

// A local label name as BFD's ELF backends judge it: ".L...", "..." and
// "_.L_..." (compiler-internal labels), and the assembler's "L<digits>"
// labels that carry a ^A or ^B ("L0^A..." is a fake symbol).
inline bool is_local_label_name(std::string_view name) noexcept {
  if (starts_with(name, ".L") || starts_with(name, "..") || starts_with(name, "_.L_")) return true;
  if (name.size() < 2 || name[0] != 'L' || name[1] < '0' || name[1] > '9') return false;
  bool marked = false;
  for (std::size_t i = 2; i < name.size(); ++i) {
    const char c = name[i];
    if (c == 1 || c == 2) {
      if (c == 1 && i == 2) return true;
      marked = true;
    } else if (c < '0' || c > '9') {
      return false;
    }
  }
  return marked;
}

// The symbols a target's BFD backend calls special (is_target_special_symbol),
// which nm lists only with --special-syms: ARM and AArch64 mapping and tag
// symbols ($a, $t, $d, $x, ... alone or followed by '.'; bfd_is_{arm,aarch64}_
// special_symbol_name); RISC-V's mapping symbols ($x..., $d...), local labels
// (.Lpcrel_hi0, .LBB0_1, which RISC-V objects keep for their relocations) and
// the empty name.
inline bool is_target_special(u16 machine, std::string_view name) noexcept {
  if (machine == EM_RISCV)
    return name.empty() || starts_with(name, "$x") || starts_with(name, "$d") || is_local_label_name(name);
  if (name.size() < 2 || name[0] != '$') return false;
  if (name.size() > 2 && name[2] != '.') return false;
  const char c = name[1];
  if (machine == EM_ARM) return c >= 'a' && c <= 'z';
  if (machine == EM_AARCH64) return c == 'x' || c == 'd' || c == 'm' || c == 'f' || c == 'p';
  return false;
}

}  // namespace detail

// Per-file classification: one letter per section (lower case; 0 = no BFD
// section, i.e. absolute).
template <class ET>
class nm_classifier {
 public:
  using Sym = typename ET::Sym;
  using Shdr = typename ET::Shdr;

  static result<nm_classifier> make(const file<ET>& f, bool all_backends = true) {
    nm_classifier c;
    c.all_backends_ = all_backends;
    c.file_ = &f;
    c.relocatable_ = f.type() == ET_REL;
    const std::size_t n = f.section_count();
    c.letters_.assign(n, 0);
    c.addresses_.assign(c.relocatable_ ? n : 0, 0);
    u32 symtab_link = ~0u;
    for (std::size_t i = 0; i < n; ++i) {
      const Shdr sh = f.section_headers()[i];
      if (sh.sh_type == SHT_SYMTAB) symtab_link = sh.sh_link;
    }
    for (std::size_t i = 1; i < n; ++i) {
      const Shdr sh = f.section_headers()[i];
      const u32 type = sh.sh_type;
      const u64 flags = sh.sh_flags;
      if (c.relocatable_) c.addresses_[i] = sh.sh_addr;
      if (type == SHT_NULL || type == SHT_SYMTAB || type == SHT_SYMTAB_SHNDX) continue;
      if (type == SHT_STRTAB && (i == f.shstrndx() || i == symtab_link)) continue;
      if ((type == SHT_REL || type == SHT_RELA) && (flags & SHF_ALLOC) == 0) continue;
      LINKSCOPE_TRY(name, f.section_name(sh));
      const bool has_contents = type != SHT_NOBITS;
      const bool alloc = (flags & SHF_ALLOC) != 0;
      const bool load = alloc && has_contents;
      const bool readonly = (flags & SHF_WRITE) == 0;
      const bool code = (flags & SHF_EXECINSTR) != 0;
      const bool data = !code && load;
      // The MIPS backend sees a section's header only for MIPS section types
      // (elf_backend_section_from_shdr): .sdata/.sbss (PROGBITS/NOBITS with
      // SHF_MIPS_GPREL) are D/B to binutils-multiarch 2.40's nm.
      const bool small = all_backends && f.machine() == EM_MIPS && (flags & SHF_MIPS_GPREL) != 0 &&
                         type >= 0x70000000u && type <= 0x7fffffffu;  // SHT_LOPROC..SHT_HIPROC
      const bool debugging = !alloc && detail::is_debugging_section_name(name);
      char letter = detail::coff_section_letter(name);
      if (letter == '?') {
        if (code) letter = 't';
        else if (data) letter = readonly ? 'r' : small ? 'g' : 'd';
        else if (!has_contents) letter = small ? 's' : 'b';
        else if (debugging) letter = 'N';
        else if (readonly) letter = 'n';
        else letter = '?';
      }
      c.letters_[i] = letter;
    }
    return c;
  }

  // nm's letter for a symbol whose real section index is `shndx`.
  char letter(const Sym& sym, u32 shndx) const noexcept {
    const u8 bind = sym.st_bind();
    const u8 type = sym.st_type();
    const u16 machine = file_->machine();
    if (shndx == SHNX_COMMON || (machine == EM_X86_64 && shndx == resolved_shndx(SHN_X86_64_LCOMMON)))
      return 'C';
    if (all_backends_ && machine == EM_MIPS && shndx == resolved_shndx(SHN_MIPS_SCOMMON)) return 'c';
    const bool undefined =
        shndx == SHN_UNDEF || (all_backends_ && machine == EM_MIPS && shndx == resolved_shndx(SHN_MIPS_SUNDEFINED));
    if (undefined) {
      if (bind == STB_WEAK) return type == STT_OBJECT || type == STT_COMMON ? 'v' : 'w';
      return 'U';
    }
    if (type == STT_GNU_IFUNC) return 'i';
    if (bind == STB_WEAK) return type == STT_OBJECT || type == STT_COMMON ? 'V' : 'W';
    if (bind == STB_GNU_UNIQUE) return 'u';
    if (bind != STB_LOCAL && bind != STB_GLOBAL) return '?';
    char c = 'a';
    if (is_reserved_shndx(shndx)) c = 'a';
    else if (letters_.empty()) c = segment_letter(sym);
    else if (shndx < letters_.size() && letters_[shndx] != 0) c = letters_[shndx];
    if (bind == STB_GLOBAL && c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
    return c;
  }

  // The value nm prints.
  u64 value(const Sym& sym, u32 shndx) const noexcept {
    if (shndx == SHNX_COMMON || (file_->machine() == EM_X86_64 && shndx == resolved_shndx(SHN_X86_64_LCOMMON)))
      return sym.st_size;
    u64 v = sym.st_value;
    if (relocatable_ && shndx < addresses_.size() && letters_[shndx] != 0) v += addresses_[shndx];
    return v;
  }

  // Whether nm lists the symbol (before the -u/-g/--defined-only filters).
  bool listed(const Sym& sym, std::string_view name, const nm_options& options) const noexcept {
    const u8 type = sym.st_type();
    if (!options.debug_syms && (type == STT_SECTION || type == STT_FILE)) return false;
    if (all_backends_ && !options.special_syms && detail::is_target_special(file_->machine(), name)) return false;
    return true;
  }

 private:
  // No section headers: classify by the PT_LOAD segment holding the value.
  char segment_letter(const Sym& sym) const noexcept {
    if (sym.st_type() == STT_TLS) return 'd';
    const u64 v = sym.st_value;
    for (const auto& ph : file_->program_headers()) {
      if (ph.p_type != PT_LOAD) continue;
      const u64 start = ph.p_vaddr;
      if (v < start || v - start >= static_cast<u64>(ph.p_memsz)) continue;
      const u32 pf = ph.p_flags;
      if (pf & 1u) return 't';
      if (pf & 2u) return v - start >= static_cast<u64>(ph.p_filesz) ? 'b' : 'd';
      return 'r';
    }
    return 'a';
  }

  const file<ET>* file_ = nullptr;
  bool relocatable_ = false;
  bool all_backends_ = false;
  std::vector<char> letters_;
  std::vector<u64> addresses_;
};

// Append nm's entries for one ELF file (unsorted, in table order) to `out`.
// Flattened: the hot loop of `nm -D` keeps every call inlined whatever else
// the including unit instantiates (GCC dropped push_back out of line when
// linkscope-nm grew its Mach-O listing: +2.7% instructions on libtorch_cpu).
#if defined(__GNUC__) && !defined(__clang__)
#define LINKSCOPE_NM_HOT __attribute__((flatten))
#else
#define LINKSCOPE_NM_HOT
#endif
template <class ET>
LINKSCOPE_NM_HOT result<nm_listing> nm_symbols(const file<ET>& f, const nm_options& options, std::vector<nm_entry>& out) {
  nm_listing listing;
  listing.is64 = ET::is64;
  using g = nm_options::generic_target;
  constexpr bool big = ET::endianness == std::endian::big;
  constexpr g own = ET::is64 ? (big ? g::elf64_big : g::elf64_little) : (big ? g::elf32_big : g::elf32_little);
  LINKSCOPE_TRY(classifier, nm_classifier<ET>::make(f, options.all_backends && options.target != own));
  symbol_table_view<ET> table;
  version_tables<ET> versions;
  if (options.dynamic) {
    LINKSCOPE_TRY(dyn, dynamic_info<ET>::read(f));
    LINKSCOPE_TRY(dynsym, read_dynsym(f, dyn));
    table = dynsym;
    LINKSCOPE_TRY(v, version_tables<ET>::read(f, dyn, table.size()));
    versions = std::move(v);
  } else {
    LINKSCOPE_TRY(symtab, read_symtab(f));
    table = symtab;
  }
  if (table.size() <= 1) {
    listing.no_symbols = true;
    return listing;
  }
  out.reserve(out.size() + table.size() - 1);
  detail::populate_for_write(out.data() + out.size(), (table.size() - 1) * sizeof(nm_entry));
  // Names sit in string-table order, not symbol order: at libtorch scale
  // (35k names over 2.7 MB of .dynstr) each is a cache miss. Fetch the name
  // a few symbols ahead so that the misses overlap.
  const byte_view strings = table.strings();
  constexpr std::size_t ahead = 8;
  for (std::size_t i = 1; i < table.size(); ++i) {
    if (i + ahead < table.size()) {
      const u32 at = table[i + ahead].st_name;
      if (at < strings.size()) detail::prefetch(strings.data() + at);
    }
    const auto sym = table[i];
    LINKSCOPE_TRY(shndx, table.section_index(i, sym));
    LINKSCOPE_TRY(stored_name, table.name(i));
    std::string_view name = stored_name;
    // BFD names an unnamed section symbol after its section (bfd_elf_sym_name).
    if (sym.st_name == 0 && sym.st_type() == STT_SECTION && shndx < f.section_count()) {
      LINKSCOPE_TRY(section_name, f.section_name(f.section_headers()[shndx]));
      name = section_name;
    }
    if (!classifier.listed(sym, name, options)) continue;
    nm_entry e;
    e.type = classifier.letter(sym, shndx);
    const bool undefined = e.undefined();
    if (options.undefined_only && !undefined) continue;
    if (options.defined_only && undefined) continue;
    if (options.external_only && !options.undefined_only) {
      const u8 bind = sym.st_bind();
      const bool global = bind == STB_WEAK || bind == STB_GNU_UNIQUE || (bind == STB_GLOBAL) || undefined ||
                          e.type == 'C' || e.type == 'c';
      if (!global) continue;
    }
    e.name = name;
    e.index = static_cast<u32>(i);
    e.value = classifier.value(sym, shndx);
    e.size = sym.st_size;
    if (versions.present()) {
      LINKSCOPE_TRY(ver, versions.of(i, name, !undefined));
      e.version = ver.name;
      e.ver = ver.kind;
    }
    out.push_back(e);
  }
  return listing;
}

// The same for raw bytes of any ELF variant (compiled once in src/ in
// compiled mode, core/config.hpp).
result<nm_listing> nm_symbols(byte_view bytes, const nm_options& options, std::vector<nm_entry>& out);

#if LINKSCOPE_DEFINITIONS
LINKSCOPE_FUNC result<nm_listing> nm_symbols(byte_view bytes, const nm_options& options, std::vector<nm_entry>& out) {
  return visit_elf(bytes, [&](const auto& f) -> result<nm_listing> { return nm_symbols(f, options, out); });
}
#endif

}  // namespace elf
}  // namespace v0
}  // namespace linkscope

// Compiled mode: nm_classifier is instantiated once, in src/elf_instances.cpp.
#if LINKSCOPE_EXTERN_TEMPLATES || defined(LINKSCOPE_IMPLEMENTATION)
extern template class ::linkscope::elf::nm_classifier<::linkscope::elf::elf32le>;
extern template class ::linkscope::elf::nm_classifier<::linkscope::elf::elf32be>;
extern template class ::linkscope::elf::nm_classifier<::linkscope::elf::elf64le>;
extern template class ::linkscope::elf::nm_classifier<::linkscope::elf::elf64be>;
#endif
