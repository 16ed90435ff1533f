// linkscope/elf/relocations.hpp — which dynamic symbols an object's dynamic
// relocations reference, and how.
//
// The dynamic relocation tables are located through the dynamic section
// (gABI "Relocation"; psABI supplements for the types):
//   DT_RELA/DT_RELASZ/DT_RELAENT   Rela {r_offset, r_info, r_addend}
//   DT_REL/DT_RELSZ/DT_RELENT      Rel  {r_offset, r_info}
//   DT_JMPREL/DT_PLTRELSZ/DT_PLTREL  the PLT relocations (Rela or Rel)
//   DT_RELR/DT_RELRSZ/DT_RELRENT   packed relative relocations (no symbol)
// r_info holds the symbol index (into DT_SYMTAB) and the machine-specific
// type. For symbol resolution what matters is the type's *class*, which is
// the same across machines: a PLT slot (JUMP_SLOT: ld.so looks it up with
// ELF_RTYPE_CLASS_PLT), a GOT entry (GLOB_DAT), a COPY relocation (resolved
// skipping the executable), a direct data reference (64/32-bit absolute),
// TLS module/offset/TP-offset/descriptor, RELATIVE and IRELATIVE (no symbol
// lookup). `classify_relocation(machine, type)` gives that class for x86-64,
// i386, AArch64, ARM, RISC-V, PowerPC64 and s390x; unknown types are
// `reloc_class::other`. What ld.so does with the lookup is machine-specific:
// `elf_machine_type_class` / `reloc_classifier` give its ELF_RTYPE_CLASS_*
// bits exactly as glibc defines them per machine (the TLS types are PLT class
// on x86-64, ...).
//
// `for_each_dynamic_relocation(dyn, f)` visits DT_RELA, DT_REL, then DT_JMPREL
// (the order ld.so processes them; RELR entries are relative and have no
// symbol, so they are visited only when asked). When DT_JMPREL lies inside
// the DT_RELA/DT_REL range (some linkers overlap them), the overlapping
// entries are visited once, as PLT relocations.
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>

#include "linkscope/core/bytes.hpp"
#include "linkscope/core/error.hpp"
#include "linkscope/elf/dynamic.hpp"
#include "linkscope/elf/file.hpp"
#include "linkscope/elf/types.hpp"

namespace linkscope {
inline namespace v0 {
namespace elf {

enum class reloc_class : u8 {
  none,        // R_*_NONE
  relative,    // base + addend, no symbol
  irelative,   // ifunc resolver call, no symbol
  direct,      // absolute address of a symbol (R_X86_64_64, R_386_32, R_AARCH64_ABS64 ...)
  plt,         // JUMP_SLOT: lazily bound PLT slot (lookup with ELF_RTYPE_CLASS_PLT)
  glob_dat,    // GOT entry
  copy,        // COPY: the executable's copy of a DSO's data
  tls_module,  // DTPMOD: module id of the defining object
  tls_offset,  // DTPOFF/DTPREL: offset in the defining module's TLS block
  tls_tpoff,   // TPOFF/TPREL: static TLS offset from the thread pointer
  tls_desc,    // TLSDESC
  other,       // anything else (PC-relative, sizes, unknown types)
};

constexpr const char* to_string(reloc_class c) noexcept {
  switch (c) {
    case reloc_class::none: return "none";
    case reloc_class::relative: return "relative";
    case reloc_class::irelative: return "irelative";
    case reloc_class::direct: return "direct";
    case reloc_class::plt: return "plt";
    case reloc_class::glob_dat: return "glob_dat";
    case reloc_class::copy: return "copy";
    case reloc_class::tls_module: return "tls_module";
    case reloc_class::tls_offset: return "tls_offset";
    case reloc_class::tls_tpoff: return "tls_tpoff";
    case reloc_class::tls_desc: return "tls_desc";
    case reloc_class::other: return "other";
  }
  return "?";
}

// True for classes whose symbol ld.so looks up.
constexpr bool needs_symbol_lookup(reloc_class c) noexcept {
  return c != reloc_class::none && c != reloc_class::relative && c != reloc_class::irelative;
}

constexpr reloc_class classify_relocation(u16 machine, u32 type) noexcept {
  using rc = reloc_class;
  switch (machine) {
    case EM_X86_64:
      switch (type) {
        case 0: return rc::none;
        case 1: case 10: case 11: case 12: case 14: return rc::direct;  // 64, 32, 32S, 16, 8
        case 5: return rc::copy;
        case 6: return rc::glob_dat;
        case 7: return rc::plt;
        case 8: case 38: return rc::relative;  // RELATIVE, RELATIVE64
        case 16: return rc::tls_module;        // DTPMOD64
        case 17: case 21: return rc::tls_offset;  // DTPOFF64, DTPOFF32
        case 18: case 23: return rc::tls_tpoff;   // TPOFF64, TPOFF32
        case 36: return rc::tls_desc;
        case 37: return rc::irelative;
        default: return rc::other;
      }
    case EM_386:
      switch (type) {
        case 0: return rc::none;
        case 1: case 20: case 22: return rc::direct;  // 32, 16, 8
        case 5: return rc::copy;
        case 6: return rc::glob_dat;
        case 7: return rc::plt;
        case 8: return rc::relative;
        case 35: return rc::tls_module;            // TLS_DTPMOD32
        case 36: return rc::tls_offset;            // TLS_DTPOFF32
        case 14: case 37: return rc::tls_tpoff;    // TLS_TPOFF, TLS_TPOFF32
        case 41: return rc::tls_desc;
        case 42: return rc::irelative;
        default: return rc::other;
      }
    case EM_AARCH64:
      switch (type) {
        case 0: case 256: return rc::none;
        case 257: case 258: case 259: return rc::direct;  // ABS64, ABS32, ABS16
        case 1024: return rc::copy;
        case 1025: return rc::glob_dat;
        case 1026: return rc::plt;
        case 1027: return rc::relative;
        case 1028: return rc::tls_module;
        case 1029: return rc::tls_offset;
        case 1030: return rc::tls_tpoff;
        case 1031: return rc::tls_desc;
        case 1032: return rc::irelative;
        default: return rc::other;
      }
    case EM_ARM:
      switch (type) {
        case 0: return rc::none;
        case 2: return rc::direct;  // ABS32
        case 20: return rc::copy;
        case 21: return rc::glob_dat;
        case 22: return rc::plt;
        case 23: return rc::relative;
        case 17: return rc::tls_module;
        case 18: return rc::tls_offset;
        case 19: return rc::tls_tpoff;
        case 13: return rc::tls_desc;
        case 160: return rc::irelative;
        default: return rc::other;
      }
    case EM_RISCV:
      switch (type) {
        case 0: return rc::none;
        case 1: case 2: return rc::direct;
        case 3: return rc::relative;
        case 4: return rc::copy;
        case 5: return rc::plt;
        case 6: case 7: return rc::tls_module;
        case 8: case 9: return rc::tls_offset;
        case 10: case 11: return rc::tls_tpoff;
        case 12: return rc::tls_desc;
        case 58: return rc::irelative;
        default: return rc::other;
      }
    case EM_PPC64:
      switch (type) {
        case 0: return rc::none;
        case 1: case 38: return rc::direct;  // ADDR32, ADDR64
        case 19: return rc::copy;
        case 20: return rc::glob_dat;
        case 21: return rc::plt;
        case 22: return rc::relative;
        case 68: return rc::tls_module;
        case 78: return rc::tls_offset;
        case 73: return rc::tls_tpoff;
        case 248: return rc::irelative;
        default: return rc::other;
      }
    case EM_S390:
      switch (type) {
        case 0: return rc::none;
        case 4: case 22: return rc::direct;  // 32, 64
        case 9: return rc::copy;
        case 10: return rc::glob_dat;
        case 11: return rc::plt;
        case 12: return rc::relative;
        case 54: return rc::tls_module;
        case 55: return rc::tls_offset;
        case 56: return rc::tls_tpoff;
        case 61: return rc::irelative;
        default: return rc::other;
      }
    default: return type == 0 ? rc::none : rc::other;
  }
}

// The ld.so lookup class of a relocation type: glibc's per-machine
// elf_machine_type_class (sysdeps/<machine>/dl-machine.h, glibc 2.36), the
// bits ELF_RTYPE_CLASS_PLT (1: an undefined symbol with a PLT address does not
// satisfy the lookup) and ELF_RTYPE_CLASS_COPY (2: the lookup skips the
// executable). -1 means ld.so looks no symbol up (NONE, RELATIVE, IRELATIVE).
//   x86-64   PLT: JUMP_SLOT, DTPMOD64, DTPOFF64, TPOFF64, TLSDESC; COPY: COPY
//   i386     PLT: JMP_SLOT, TLS_DTPMOD32, TLS_DTPOFF32, TLS_TPOFF32, TLS_TPOFF, TLS_DESC
//   AArch64  PLT: JUMP_SLOT, TLS_DTPMOD, TLS_DTPREL, TLS_TPREL, TLSDESC (LP64)
//   ARM      PLT: JUMP_SLOT, TLS_DTPMOD32, TLS_DTPOFF32, TLS_TPOFF32, TLS_DESC
//   RISC-V   PLT: JUMP_SLOT and the TLS DTPMOD/DTPREL/TPREL of the file's XLEN
//   PPC64    ELFv2 (e_flags & 3 == 2): PLT: JMP_SLOT, ADDR24 and the TLS types
//            (R_PPC64_TLS..DTPREL16_HIGHESTA, TPREL16_HIGH..DTPREL16_HIGHA);
//            ELFv1: every type is PLT class ("the linker won't emit SHN_UNDEF
//            symbols with non-zero values"), COPY is PLT|COPY
//   s390     PLT: JMP_SLOT, TLS_DTPMOD, TLS_DTPOFF, TLS_TPOFF
// Other machines: COPY is not known, every lookup is class 0.
namespace reloc {
// x86-64 (psABI)
inline constexpr u32 X86_64_COPY = 5, X86_64_JUMP_SLOT = 7, X86_64_DTPMOD64 = 16, X86_64_DTPOFF64 = 17,
                     X86_64_TPOFF64 = 18, X86_64_TLSDESC = 36;
// i386
inline constexpr u32 I386_TLS_TPOFF = 14, I386_COPY = 5, I386_JMP_SLOT = 7, I386_TLS_DTPMOD32 = 35,
                     I386_TLS_DTPOFF32 = 36, I386_TLS_TPOFF32 = 37, I386_TLS_DESC = 41;
// AArch64 (LP64)
inline constexpr u32 AARCH64_COPY = 1024, AARCH64_JUMP_SLOT = 1026, AARCH64_TLS_DTPMOD = 1028,
                     AARCH64_TLS_DTPREL = 1029, AARCH64_TLS_TPREL = 1030, AARCH64_TLSDESC = 1031;
// ARM
inline constexpr u32 ARM_TLS_DESC = 13, ARM_TLS_DTPMOD32 = 17, ARM_TLS_DTPOFF32 = 18, ARM_TLS_TPOFF32 = 19,
                     ARM_COPY = 20, ARM_JUMP_SLOT = 22;
// RISC-V
inline constexpr u32 RISCV_COPY = 4, RISCV_JUMP_SLOT = 5, RISCV_TLS_DTPMOD32 = 6, RISCV_TLS_DTPMOD64 = 7,
                     RISCV_TLS_DTPREL32 = 8, RISCV_TLS_DTPREL64 = 9, RISCV_TLS_TPREL32 = 10,
                     RISCV_TLS_TPREL64 = 11;
// PowerPC64
inline constexpr u32 PPC64_ADDR24 = 2, PPC64_COPY = 19, PPC64_JMP_SLOT = 21, PPC64_TLS = 67,
                     PPC64_DTPREL16_HIGHESTA = 106, PPC64_TPREL16_HIGH = 112, PPC64_DTPREL16_HIGHA = 115;
inline constexpr u32 EF_PPC64_ABI = 3;  // e_flags: 1 = ELFv1, 2 = ELFv2
// s390 / s390x
inline constexpr u32 S390_COPY = 9, S390_JMP_SLOT = 11, S390_TLS_DTPMOD = 54, S390_TLS_DTPOFF = 55,
                     S390_TLS_TPOFF = 56;
}  // namespace reloc

constexpr int elf_machine_type_class(u16 machine, bool is64, u32 e_flags, u32 type) noexcept {
  using namespace reloc;
  constexpr int plt = rtype_class_plt, copy = rtype_class_copy;
  switch (machine) {
    case EM_X86_64:
      if (type == X86_64_COPY) return copy;
      return (type == X86_64_JUMP_SLOT || type == X86_64_DTPMOD64 || type == X86_64_DTPOFF64 ||
              type == X86_64_TPOFF64 || type == X86_64_TLSDESC) ? plt : 0;
    case EM_386:
      if (type == I386_COPY) return copy;
      return (type == I386_JMP_SLOT || type == I386_TLS_DTPMOD32 || type == I386_TLS_DTPOFF32 ||
              type == I386_TLS_TPOFF32 || type == I386_TLS_TPOFF || type == I386_TLS_DESC) ? plt : 0;
    case EM_AARCH64:
      if (type == AARCH64_COPY) return copy;
      return (type == AARCH64_JUMP_SLOT || type == AARCH64_TLS_DTPMOD || type == AARCH64_TLS_DTPREL ||
              type == AARCH64_TLS_TPREL || type == AARCH64_TLSDESC) ? plt : 0;
    case EM_ARM:
      if (type == ARM_COPY) return copy;
      return (type == ARM_JUMP_SLOT || type == ARM_TLS_DTPMOD32 || type == ARM_TLS_DTPOFF32 ||
              type == ARM_TLS_TPOFF32 || type == ARM_TLS_DESC) ? plt : 0;
    case EM_RISCV:
      if (type == RISCV_COPY) return copy;
      if (type == RISCV_JUMP_SLOT) return plt;
      if (is64) return (type == RISCV_TLS_DTPMOD64 || type == RISCV_TLS_DTPREL64 || type == RISCV_TLS_TPREL64) ? plt : 0;
      return (type == RISCV_TLS_DTPMOD32 || type == RISCV_TLS_DTPREL32 || type == RISCV_TLS_TPREL32) ? plt : 0;
    case EM_PPC64:
      if ((e_flags & EF_PPC64_ABI) != 2) return type == PPC64_COPY ? (plt | copy) : plt;
      if (type == PPC64_COPY) return copy;
      return (type == PPC64_JMP_SLOT || type == PPC64_ADDR24 ||
              (type >= PPC64_TLS && type <= PPC64_DTPREL16_HIGHESTA) ||
              (type >= PPC64_TPREL16_HIGH && type <= PPC64_DTPREL16_HIGHA)) ? plt : 0;
    case EM_S390:
      if (type == S390_COPY) return copy;
      return (type == S390_JMP_SLOT || type == S390_TLS_DTPMOD || type == S390_TLS_DTPOFF ||
              type == S390_TLS_TPOFF) ? plt : 0;
    default:
      return 0;
  }
}

// The relocation classes of one file's machine and ABI: the lookup class of
// each type, or -1 when ld.so looks no symbol up for it (classify_relocation
// says none, relative or irelative).
class reloc_classifier {
 public:
  constexpr reloc_classifier() noexcept = default;
  constexpr reloc_classifier(u16 machine, bool is64, u32 e_flags) noexcept
      : machine_(machine), is64_(is64), flags_(e_flags) {}
  template <class ET>
  static reloc_classifier of(const file<ET>& f) noexcept {
    return reloc_classifier(f.machine(), ET::is64, static_cast<u32>(f.header().e_flags));
  }
  constexpr int lookup_class(u32 type) const noexcept {
    if (!needs_symbol_lookup(classify_relocation(machine_, type))) return -1;
    return elf_machine_type_class(machine_, is64_, flags_, type);
  }
  constexpr u16 machine() const noexcept { return machine_; }

 private:
  u16 machine_ = 0;
  bool is64_ = false;
  u32 flags_ = 0;
};

// reloc_classifier::lookup_class with a small direct-mapped memo: a DSO's
// symbolic relocations use a handful of types (GLOB_DAT, JUMP_SLOT, the word
// relocation), so the per-machine switch runs a few times per file instead of
// once per relocation (275k times for op_registration_test's closure).
class reloc_class_cache {
 public:
  explicit constexpr reloc_class_cache(reloc_classifier c) noexcept : classes_(c) {
    // Every slot starts as the (exact) entry of type ~0, which no machine uses.
    const slot empty{~u32{0}, static_cast<std::int8_t>(c.lookup_class(~u32{0}))};
    for (slot& s : slots_) s = empty;
  }
  int lookup_class(u32 type) noexcept {
    slot& s = slots_[type % slots];
    if (s.type != type) s = slot{type, static_cast<std::int8_t>(classes_.lookup_class(type))};
    return s.klass;
  }

 private:
  static constexpr u32 slots = 16;
  struct slot {
    u32 type;
    std::int8_t klass;
  };
  reloc_classifier classes_;
  slot slots_[slots]{};
};

// Which table a relocation came from.
enum class reloc_table : u8 { rela, rel, jmprel, relr };

struct dynamic_relocation {
  u64 offset = 0;        // r_offset (a virtual address in DSOs and executables)
  u64 file_offset = 0;   // where the record is in the file (for diagnostics)
  i64 addend = 0;        // r_addend (0 for Rel/Relr)
  u32 symbol = 0;        // dynamic symbol index (0: none)
  u32 type = 0;          // machine-specific r_type
  reloc_class kind = reloc_class::other;
  reloc_table table = reloc_table::rela;
};

// The ld.so emulator's fast path over one relocation table as dynamic_info
// gives it (rela_table / rel_table / jmprel_table: bounds and entry size
// already checked): f(symbol index, r_type) for every entry whose symbol index
// is not 0. Most entries of a big DSO are R_*_RELATIVE with symbol 0 (2.3M of
// op_registration_test's 2.5M relocations); they are skipped without a call.
template <class ET, class F>
void for_each_symbolic_entry(const file<ET>& elf_file, const dynamic_table& t, bool is_rela, F&& f) {
  const std::size_t want = is_rela ? sizeof(typename ET::Rela) : sizeof(typename ET::Rel);
  if (!t.present || t.entsize < want) return;
  const byte_view bytes = elf_file.bytes();
  if (t.offset > bytes.size() || t.size > bytes.size() - t.offset) return;
  const unsigned char* base = bytes.data() + t.offset;
  const std::size_t count = static_cast<std::size_t>(t.size / t.entsize);
  const std::size_t stride = static_cast<std::size_t>(t.entsize);
  if (is_rela) {
    for (std::size_t i = 0; i < count; ++i) {
      typename ET::Rela r;
      std::memcpy(&r, base + i * stride, sizeof r);
      const u32 symidx = r.r_sym();
      if (symidx != 0) f(symidx, static_cast<u32>(r.r_type()));
    }
  } else {
    for (std::size_t i = 0; i < count; ++i) {
      typename ET::Rel r;
      std::memcpy(&r, base + i * stride, sizeof r);
      const u32 symidx = r.r_sym();
      if (symidx != 0) f(symidx, static_cast<u32>(r.r_type()));
    }
  }
}

// Visit every dynamic relocation: f(const dynamic_relocation&) may return
// bool (false stops). With `include_relr`, RELR entries are expanded and
// visited last (kind relative, symbol 0). Symbol indices are checked against
// `symbol_count` when it is nonzero.
template <class ET, class F>
result<void> for_each_dynamic_relocation(const dynamic_info<ET>& dyn, F&& f, std::size_t symbol_count = 0,
                                         bool include_relr = false) {
  using Rela = typename ET::Rela;
  using Rel = typename ET::Rel;
  const file<ET>& elf_file = dyn.elf();
  const byte_view bytes = elf_file.bytes();
  const u16 machine = elf_file.machine();
  bool jmprel_is_rela = true;
  LINKSCOPE_TRY(rela, dyn.rela_table());
  LINKSCOPE_TRY(rel, dyn.rel_table());
  LINKSCOPE_TRY(jmprel, dyn.jmprel_table(jmprel_is_rela));
  bool stop = false;
  auto emit = [&](const dynamic_relocation& r) -> bool {
    if constexpr (std::is_same_v<std::invoke_result_t<F&, const dynamic_relocation&>, bool>) {
      if (!f(r)) stop = true;
    } else {
      f(r);
    }
    return !stop;
  };
  auto overlaps_jmprel = [&](u64 off) {
    return jmprel.present && off >= jmprel.offset && off - jmprel.offset < jmprel.size;
  };
  auto visit = [&](const dynamic_table& t, bool is_rela, reloc_table which) -> result<void> {
    if (!t.present) return ok();
    const u64 entsize = is_rela ? sizeof(Rela) : sizeof(Rel);
    const u64 n = t.size / entsize;
    for (u64 i = 0; i < n && !stop; ++i) {
      const u64 at = t.offset + i * entsize;
      if (which != reloc_table::jmprel && overlaps_jmprel(at)) continue;
      dynamic_relocation r;
      r.file_offset = at;
      r.table = which;
      if (is_rela) {
        const Rela rec = bytes.read_unchecked<Rela>(at);
        r.offset = rec.r_offset;
        r.addend = static_cast<i64>(rec.r_addend);
        r.symbol = rec.r_sym();
        r.type = rec.r_type();
      } else {
        const Rel rec = bytes.read_unchecked<Rel>(at);
        r.offset = rec.r_offset;
        r.symbol = rec.r_sym();
        r.type = rec.r_type();
      }
      r.kind = classify_relocation(machine, r.type);
      if (symbol_count != 0 && r.symbol >= symbol_count)
        return bytes.fail(errc::out_of_range, at, "relocation symbol index past the dynamic symbol table");
      emit(r);
    }
    return ok();
  };
  LINKSCOPE_CHECK(visit(rela, true, reloc_table::rela));
  LINKSCOPE_CHECK(visit(rel, false, reloc_table::rel));
  LINKSCOPE_CHECK(visit(jmprel, jmprel_is_rela, reloc_table::jmprel));
  if (include_relr && !stop) {
    LINKSCOPE_TRY(relr, dyn.relr_table());
    if (relr.present) {
      using uword = typename ET::uword;
      constexpr u64 wbits = sizeof(uword) * 8;
      u64 base = 0;
      for (u64 i = 0; i < relr.size / sizeof(uword) && !stop; ++i) {
        const u64 at = relr.offset + i * sizeof(uword);
        const u64 entry = load<uword, ET::endianness>(bytes.data() + at);
        dynamic_relocation r;
        r.file_offset = at;
        r.table = reloc_table::relr;
        r.kind = reloc_class::relative;
        if ((entry & 1) == 0) {
          r.offset = entry;
          if (!emit(r)) break;
          base = entry + sizeof(uword);
        } else {
          u64 bits = entry >> 1;
          for (u64 k = 0; bits != 0 && k < wbits - 1; ++k, bits >>= 1) {
            if ((bits & 1) == 0) continue;
            r.offset = base + k * sizeof(uword);
            if (!emit(r)) break;
          }
          base += (wbits - 1) * sizeof(uword);
        }
      }
    }
  }
  return ok();
}

}  // namespace elf
}  // namespace v0
}  // namespace linkscope
