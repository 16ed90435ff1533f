// linkscope/elf/dynamic.hpp — the dynamic section, read the way ld.so reads it.
//
// PT_DYNAMIC (gABI "Dynamic Section") locates an array of Dyn {d_tag, d_val}
// entries ending at DT_NULL. Tags that hold addresses (DT_STRTAB, DT_SYMTAB,
// DT_HASH, DT_GNU_HASH, DT_VERSYM, DT_VERDEF, DT_VERNEED, DT_RELA, DT_REL,
// DT_JMPREL, DT_RELR) are virtual addresses; they are turned into file
// offsets through the PT_LOAD segments (p_vaddr -> p_offset, within p_filesz).
// Tags that name strings (DT_NEEDED, DT_SONAME, DT_RPATH, DT_RUNPATH) are
// offsets into the DT_STRTAB table of DT_STRSZ bytes.
//
// Nothing here reads section headers, so a DSO whose section headers were
// stripped (`llvm-objcopy --strip-sections`) is read exactly like ld.so reads
// it. The first occurrence of a single-valued tag wins, as in glibc's
// elf/get-dynamic-info.h (which keeps the last for most tags, but no sane
// linker writes two); DT_NEEDED entries are kept in order.
//
// Every value remembers the file offset of the Dyn entry that held it, so a
// bad address is reported where it was read.
#pragma once

#include <string_view>
#include <vector>

#include "linkscope/core/bytes.hpp"
#include "linkscope/core/error.hpp"
#include "linkscope/elf/file.hpp"
#include "linkscope/elf/types.hpp"

namespace linkscope {
inline namespace v0 {
namespace elf {

// One dynamic tag's value and the file offset of its Dyn entry.
struct dynamic_value {
  u64 value = 0;
  u64 at = no_offset;
  constexpr bool present() const noexcept { return at != no_offset; }
  constexpr explicit operator bool() const noexcept { return present(); }
};

// A table located by dynamic tags: file offset and size in bytes.
struct dynamic_table {
  u64 offset = 0;
  u64 size = 0;
  u64 entsize = 0;
  bool present = false;
};

template <class ET>
class dynamic_info {
 public:
  using Dyn = typename ET::Dyn;

  dynamic_info() = default;

  // Read PT_DYNAMIC. A file without PT_DYNAMIC gives an empty info
  // (present() == false), not an error.
  static result<dynamic_info> read(const file<ET>& f) noexcept {
    dynamic_info info;
    info.file_ = &f;
    auto segment = f.find_segment(PT_DYNAMIC);
    if (!segment) return info;
    const byte_view bytes = f.bytes();
    const u64 ph_offset = segment->p_offset;
    const u64 ph_size = segment->p_filesz;
    if (!fits(ph_offset, ph_size, bytes.size()))
      return bytes.fail(errc::truncated, ph_offset, "PT_DYNAMIC outside the file");
    const u64 count = ph_size / sizeof(Dyn);
    LINKSCOPE_TRY(entries, bytes.template array<Dyn>(ph_offset, count, sizeof(Dyn), "PT_DYNAMIC outside the file"));
    info.present_ = true;
    info.offset_ = ph_offset;
    std::size_t used = 0;
    for (std::size_t i = 0; i < entries.size(); ++i) {
      const Dyn d = entries[i];
      const i64 tag = static_cast<i64>(d.d_tag);
      const u64 value = static_cast<u64>(d.d_val);
      const u64 at = ph_offset + i * sizeof(Dyn);
      used = i + 1;
      if (tag == DT_NULL) break;
      auto set = [&](dynamic_value& slot) {
        if (!slot.present()) slot = dynamic_value{value, at};
      };
      switch (tag) {
        case DT_NEEDED: ++info.needed_count_; break;
        case DT_SONAME: set(info.soname_); break;
        case DT_RPATH: set(info.rpath_); break;
        case DT_RUNPATH: set(info.runpath_); break;
        case DT_FLAGS: set(info.flags_); break;
        case DT_FLAGS_1: set(info.flags_1_); break;
        case DT_SYMTAB: set(info.symtab_); break;
        case DT_SYMENT: set(info.syment_); break;
        case DT_STRTAB: set(info.strtab_); break;
        case DT_STRSZ: set(info.strsz_); break;
        case DT_HASH: set(info.hash_); break;
        case DT_GNU_HASH: set(info.gnu_hash_); break;
        case DT_VERSYM: set(info.versym_); break;
        case DT_VERDEF: set(info.verdef_); break;
        case DT_VERDEFNUM: set(info.verdefnum_); break;
        case DT_VERNEED: set(info.verneed_); break;
        case DT_VERNEEDNUM: set(info.verneednum_); break;
        case DT_RELA: set(info.rela_); break;
        case DT_RELASZ: set(info.relasz_); break;
        case DT_RELAENT: set(info.relaent_); break;
        case DT_REL: set(info.rel_); break;
        case DT_RELSZ: set(info.relsz_); break;
        case DT_RELENT: set(info.relent_); break;
        case DT_JMPREL: set(info.jmprel_); break;
        case DT_PLTRELSZ: set(info.pltrelsz_); break;
        case DT_PLTREL: set(info.pltrel_); break;
        case DT_RELR: set(info.relr_); break;
        case DT_RELRSZ: set(info.relrsz_); break;
        case DT_RELRENT: set(info.relrent_); break;
        case DT_BIND_NOW: set(info.bind_now_); break;
        case DT_SYMBOLIC: set(info.symbolic_); break;
        case DT_TEXTREL: set(info.textrel_); break;
        default: break;
      }
    }
    info.entries_ = record_array<Dyn>(bytes.data() + ph_offset, used);

    if (info.strtab_.present()) {
      if (!info.strsz_.present())
        return bytes.fail(errc::malformed, info.strtab_.at, "DT_STRTAB without DT_STRSZ");
      LINKSCOPE_TRY(str_offset, f.vaddr_to_offset(info.strtab_.value, info.strsz_.value, info.strtab_.at));
      info.strings_ = bytes.sub_unchecked(str_offset, info.strsz_.value);
      info.strtab_offset_ = str_offset;
      if (info.strings_.empty() || info.strings_.data()[info.strings_.size() - 1] != 0)
        return bytes.fail(errc::malformed, str_offset, "dynamic string table does not end with NUL");
    }
    return info;
  }
  static result<dynamic_info> read(file<ET>&&) = delete;

  bool present() const noexcept { return present_; }
  // File offset of the dynamic array, and its entries up to and including DT_NULL.
  u64 offset() const noexcept { return offset_; }
  const record_array<Dyn>& entries() const noexcept { return entries_; }
  const file<ET>& elf() const noexcept { return *file_; }

  // The dynamic string table (DT_STRTAB, DT_STRSZ), and a string in it.
  byte_view strings() const noexcept { return strings_; }
  u64 strtab_offset() const noexcept { return strtab_offset_; }
  result<std::string_view> string(u64 offset, u64 where = no_offset) const noexcept {
    if (strings_.empty()) return error{errc::malformed, where, "dynamic string without DT_STRTAB"};
    auto s = strings_.cstring(offset);
    if (!s && where != no_offset) return error{s.error().code, where, s.error().message};
    return s;
  }

  // DT_NEEDED names in order. f(std::string_view) may return bool (false stops).
  template <class F>
  result<void> for_each_needed(F&& f) const {
    for (std::size_t i = 0; i < entries_.size(); ++i) {
      const Dyn d = entries_[i];
      if (static_cast<i64>(d.d_tag) != DT_NEEDED) continue;
      LINKSCOPE_TRY(name, string(static_cast<u64>(d.d_val), offset_ + i * sizeof(Dyn)));
      if constexpr (std::is_same_v<std::invoke_result_t<F&, std::string_view>, bool>) {
        if (!f(name)) break;
      } else {
        f(name);
      }
    }
    return ok();
  }
  result<std::vector<std::string_view>> needed() const {
    std::vector<std::string_view> out;
    out.reserve(needed_count_);
    LINKSCOPE_CHECK(for_each_needed([&](std::string_view n) { out.push_back(n); }));
    return out;
  }
  std::size_t needed_count() const noexcept { return needed_count_; }

  // String-valued tags: empty optional-like result when absent.
  result<std::string_view> soname() const noexcept { return optional_string(soname_); }
  result<std::string_view> rpath() const noexcept { return optional_string(rpath_); }
  result<std::string_view> runpath() const noexcept { return optional_string(runpath_); }
  bool has_soname() const noexcept { return soname_.present(); }
  bool has_rpath() const noexcept { return rpath_.present(); }
  bool has_runpath() const noexcept { return runpath_.present(); }

  u64 flags() const noexcept { return flags_.value; }
  u64 flags_1() const noexcept { return flags_1_.value; }
  bool bind_now() const noexcept {
    return bind_now_.present() || (flags_.value & DF_BIND_NOW) != 0 || (flags_1_.value & DF_1_NOW) != 0;
  }
  bool symbolic() const noexcept { return symbolic_.present() || (flags_.value & DF_SYMBOLIC) != 0; }

  // Raw tag values (addresses are virtual addresses).
  const dynamic_value& symtab() const noexcept { return symtab_; }
  const dynamic_value& syment() const noexcept { return syment_; }
  const dynamic_value& strtab() const noexcept { return strtab_; }
  const dynamic_value& strsz() const noexcept { return strsz_; }
  const dynamic_value& hash() const noexcept { return hash_; }
  const dynamic_value& gnu_hash() const noexcept { return gnu_hash_; }
  const dynamic_value& versym() const noexcept { return versym_; }
  const dynamic_value& verdef() const noexcept { return verdef_; }
  const dynamic_value& verdefnum() const noexcept { return verdefnum_; }
  const dynamic_value& verneed() const noexcept { return verneed_; }
  const dynamic_value& verneednum() const noexcept { return verneednum_; }
  const dynamic_value& flags_value() const noexcept { return flags_; }
  const dynamic_value& flags_1_value() const noexcept { return flags_1_; }

  // File offset of the object an address tag points at, given its size in
  // bytes (checked against the segment and the file).
  result<u64> offset_of(const dynamic_value& tag, u64 size) const noexcept {
    return file_->vaddr_to_offset(tag.value, size, tag.at);
  }

  // Relocation tables located by DT_RELA/DT_RELASZ/DT_RELAENT, DT_REL...,
  // DT_JMPREL/DT_PLTRELSZ/DT_PLTREL, DT_RELR/DT_RELRSZ/DT_RELRENT.
  result<dynamic_table> rela_table() const noexcept { return table_of(rela_, relasz_, relaent_, sizeof(typename ET::Rela)); }
  result<dynamic_table> rel_table() const noexcept { return table_of(rel_, relsz_, relent_, sizeof(typename ET::Rel)); }
  result<dynamic_table> relr_table() const noexcept { return table_of(relr_, relrsz_, relrent_, sizeof(typename ET::Relr)); }
  // The PLT relocations: is_rela tells DT_PLTREL (DT_RELA or DT_REL).
  result<dynamic_table> jmprel_table(bool& is_rela) const noexcept {
    is_rela = pltrel_.present() ? pltrel_.value == static_cast<u64>(DT_RELA) : ET::is64;
    if (pltrel_.present() && pltrel_.value != static_cast<u64>(DT_RELA) && pltrel_.value != static_cast<u64>(DT_REL))
      return error{errc::bad_field, pltrel_.at, "DT_PLTREL is neither DT_RELA nor DT_REL"};
    dynamic_value ent{is_rela ? sizeof(typename ET::Rela) : sizeof(typename ET::Rel), pltrel_.at};
    return table_of(jmprel_, pltrelsz_, ent, ent.value);
  }

 private:
  result<std::string_view> optional_string(const dynamic_value& tag) const noexcept {
    if (!tag.present()) return std::string_view();
    return string(tag.value, tag.at);
  }
  result<dynamic_table> table_of(const dynamic_value& addr, const dynamic_value& size, const dynamic_value& ent,
                                 u64 record) const noexcept {
    dynamic_table t;
    if (!addr.present()) return t;
    if (!size.present()) return error{errc::malformed, addr.at, "relocation table without its size tag"};
    if (ent.present() && ent.value != record) return error{errc::bad_field, ent.at, "relocation entry size is wrong"};
    if (size.value % record != 0) return error{errc::bad_field, size.at, "relocation table size is not a multiple of its entry size"};
    LINKSCOPE_TRY(off, offset_of(addr, size.value));
    t.offset = off;
    t.size = size.value;
    t.entsize = record;
    t.present = true;
    return t;
  }

  const file<ET>* file_ = nullptr;
  bool present_ = false;
  u64 offset_ = 0;
  record_array<Dyn> entries_;
  byte_view strings_;
  u64 strtab_offset_ = 0;
  std::size_t needed_count_ = 0;
  dynamic_value soname_, rpath_, runpath_, flags_, flags_1_, symtab_, syment_, strtab_, strsz_, hash_, gnu_hash_,
      versym_, verdef_, verdefnum_, verneed_, verneednum_, rela_, relasz_, relaent_, rel_, relsz_, relent_, jmprel_,
      pltrelsz_, pltrel_, relr_, relrsz_, relrent_, bind_now_, symbolic_, textrel_;
};

}  // namespace elf
}  // namespace v0
}  // namespace linkscope
