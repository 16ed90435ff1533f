// linkscope/elf/versions.hpp — GNU symbol versioning: versym, verdef, verneed.
//
// (LSB Core, "Symbol Versioning".) Three tables work together:
//   versym   (.gnu.version, DT_VERSYM): one Half per dynamic symbol. Bits
//            0..14 are a version index, bit 15 (VERSYM_HIDDEN) marks a
//            non-default definition. Index 0 is local, 1 is global
//            (unversioned), 2.. name a verdef or a verneed entry.
//   verdef   (.gnu.version_d, DT_VERDEF/DT_VERDEFNUM): a chain of Verdef
//            records linked by vd_next (a byte offset from the record), each
//            with vd_cnt Verdaux records (vd_aux, vda_next). The first
//            Verdaux names the version; vd_ndx is the index versym uses. The
//            entry flagged VER_FLG_BASE names the file itself.
//   verneed  (.gnu.version_r, DT_VERNEED/DT_VERNEEDNUM): a chain of Verneed
//            records (one per needed file, vn_file), each with vn_cnt Vernaux
//            records whose vna_other is the versym index.
//
// How GNU nm 2.40 prints a dynamic symbol's version (bfd's
// _bfd_elf_get_symbol_version_string, called with base_p = false):
//   index 0, or 1 when the first verdef is the base (or there is no verdef
//   at that index): nothing; index <= the highest vd_ndx: the verdef name,
//   except nothing when it equals the symbol's own name (the version's
//   marker symbol); otherwise the verneed name, always with one '@'.
//   Separator: "@" when hidden or undefined, "@@" otherwise.
// Chains are walked at most `count` times (a count larger than the table could
// hold is an error) and every record must lie inside the table. The next
// offsets are unsigned and added in 64 bits, so a chain can only move
// forward: a "cycle" made by a wrapping 32-bit offset lands past the table
// and is reported there, with its offset.
#pragma once

#include <string_view>
#include <vector>

#include "linkscope/core/bytes.hpp"
#include "linkscope/core/error.hpp"
#include "linkscope/elf/dynamic.hpp"
#include "linkscope/elf/file.hpp"
#include "linkscope/elf/types.hpp"
#include "linkscope/symbols/symbol.hpp"

namespace linkscope {
inline namespace v0 {
namespace elf {

// One version index's meaning.
struct version_entry {
  std::string_view name;  // version name ("" when the index is unused)
  std::string_view file;  // verneed: the needed file (vn_file); "" for verdef
  u32 hash = 0;           // vd_hash or vna_hash (what ld.so compares)
  u16 flags = 0;          // vd_flags or vna_flags
  bool defined = false;   // from verdef
  bool needed = false;    // from verneed
  bool hidden = false;    // verneed: vna_other's hidden bit (the reference accepts no unversioned definition)
  bool base() const noexcept { return defined && (flags & VER_FLG_BASE) != 0; }
  bool weak() const noexcept { return needed && (flags & VER_FLG_WEAK) != 0; }
};

// The decoded version of one symbol.
struct symbol_version {
  std::string_view name;  // "" when unversioned (local/global/base)
  std::string_view file;  // for verneed references
  u16 index = 0;          // versym & 0x7fff
  bool hidden = false;    // versym bit 15
  bool needed = false;    // reference to another file's version (verneed)
  version_kind kind = version_kind::none;
};

template <class ET>
class version_tables {
 public:
  using Verdef = typename ET::Verdef;
  using Verdaux = typename ET::Verdaux;
  using Verneed = typename ET::Verneed;
  using Vernaux = typename ET::Vernaux;
  using Versym = typename ET::Versym;

  version_tables() = default;

  // Read the tables for a dynamic symbol table of `dynsym_count` entries.
  // With section headers, the sections are used (like binutils); otherwise
  // the DT_VERSYM/DT_VERDEF/DT_VERNEED tags (like ld.so). No versym -> an
  // empty, valid object (present() == false).
  static result<version_tables> read(const file<ET>& f, const dynamic_info<ET>& dyn, std::size_t dynsym_count) {
    return read_from(f, dyn, dynsym_count, f.section_count() > 0);
  }
  // The tables as ld.so reads them (dl-version.c): DT_VERSYM, DT_VERDEF and
  // DT_VERNEED only, whatever the section headers say.
  static result<version_tables> read_dynamic(const dynamic_info<ET>& dyn, std::size_t dynsym_count) {
    return read_from(dyn.elf(), dyn, dynsym_count, false);
  }

  bool present() const noexcept { return present_; }
  std::size_t size() const noexcept { return versym_.size(); }
  // The versym array (one Half per dynamic symbol; empty when absent).
  const record_array<Versym>& versym() const noexcept { return versym_; }
  // Highest vd_ndx in verdef (bfd's cverdefs).
  u16 max_verdef_index() const noexcept { return max_verdef_; }
  const std::vector<version_entry>& entries() const noexcept { return entries_; }
  // The versym indices of the verneed entries in the order of the verneed
  // chain (file by file, Vernaux by Vernaux), the order in which ld.so checks
  // them (dl-version.c) and `ldd -v` lists them; linkers number them otherwise.
  const std::vector<u16>& needed_order() const noexcept { return needed_order_; }

  // What version index `n` means (an empty entry when unused).
  version_entry entry(u16 n) const noexcept { return n < entries_.size() ? entries_[n] : version_entry{}; }

  // The raw versym value of symbol `index` (0 when there is no versym).
  u16 raw(std::size_t index) const noexcept { return index < versym_.size() ? static_cast<u16>(versym_[index]) : 0; }

 private:
  static result<version_tables> read_from(const file<ET>& f, const dynamic_info<ET>& dyn, std::size_t dynsym_count,
                                          bool use_sections) {
    version_tables v;
    const byte_view bytes = f.bytes();
    byte_view strings;
    bool have_strings = false;
    byte_view versym_bytes, verdef_bytes, verneed_bytes;
    u64 verdef_count = 0, verneed_count = 0;
    bool have_versym = false, have_verdef = false, have_verneed = false;
    if (use_sections) {
      for (std::size_t i = 0; i < f.section_count(); ++i) {
        const auto sh = f.section_headers()[i];
        const u32 type = sh.sh_type;
        if (type != SHT_GNU_versym && type != SHT_GNU_verdef && type != SHT_GNU_verneed) continue;
        LINKSCOPE_TRY(data, f.section_data(sh));
        if (type == SHT_GNU_versym) {
          versym_bytes = data;
          have_versym = true;
          continue;
        }
        if (sh.sh_link >= f.section_count())
          return bytes.fail(errc::out_of_range, f.section_header_offset(i), "version section sh_link out of range");
        auto str = f.string_table(sh.sh_link);
        if (!str) return str.error();
        strings = *str;
        have_strings = true;
        if (type == SHT_GNU_verdef) {
          verdef_bytes = data;
          verdef_count = sh.sh_info;
          have_verdef = true;
        } else {
          verneed_bytes = data;
          verneed_count = sh.sh_info;
          have_verneed = true;
        }
      }
    } else if (dyn.present()) {
      strings = dyn.strings();
      have_strings = !strings.empty();
      if (dyn.versym()) {
        u64 size = 0;
        if (!checked_mul(dynsym_count, 2, size)) return error{errc::overflow, dyn.versym().at, "versym size overflows"};
        LINKSCOPE_TRY(off, dyn.offset_of(dyn.versym(), size));
        versym_bytes = bytes.sub_unchecked(off, size);
        have_versym = true;
      }
      // Verdef/verneed sizes are unknown: give the rest of the segment... the
      // rest of the file; every record is bounds-checked as it is read.
      if (dyn.verdef()) {
        LINKSCOPE_TRY(off, dyn.offset_of(dyn.verdef(), sizeof(Verdef)));
        verdef_bytes = bytes.sub_unchecked(off, bytes.size() - off);
        verdef_count = dyn.verdefnum().value;
        have_verdef = true;
      }
      if (dyn.verneed()) {
        LINKSCOPE_TRY(off, dyn.offset_of(dyn.verneed(), sizeof(Verneed)));
        verneed_bytes = bytes.sub_unchecked(off, bytes.size() - off);
        verneed_count = dyn.verneednum().value;
        have_verneed = true;
      }
    }
    if (!have_versym) return v;
    if (versym_bytes.size() / 2 < dynsym_count)
      return versym_bytes.fail(errc::truncated, 0, "versym table shorter than the dynamic symbol table");
    v.versym_ = record_array<Versym>(versym_bytes.data(), dynsym_count);
    v.versym_offset_ = versym_bytes.base();
    v.present_ = true;
    if ((have_verdef || have_verneed) && !have_strings)
      return bytes.fail(errc::malformed, 0, "version tables without a string table");
    if (have_verdef) LINKSCOPE_CHECK(v.read_verdef(verdef_bytes, verdef_count, strings));
    if (have_verneed) LINKSCOPE_CHECK(v.read_verneed(verneed_bytes, verneed_count, strings));
    v.has_definitions_or_needs_ = have_verdef || have_verneed;
    return v;
  }

 public:
  // The version of dynamic symbol `index` with the given name, as GNU nm
  // prints it (see the header comment). `defined` is st_shndx != SHN_UNDEF.
  result<symbol_version> of(std::size_t index, std::string_view symbol_name, bool defined) const noexcept {
    symbol_version out;
    if (!present_ || !has_definitions_or_needs_ || index >= versym_.size()) return out;
    const u16 raw_value = versym_[index];
    out.index = versym_index(raw_value);
    out.hidden = versym_hidden(raw_value);
    const u16 n = out.index;
    if (n == 0) return out;
    if (n == 1 && (n > max_verdef_ || (n < entries_.size() && entries_[n].defined && (entries_[n].flags & VER_FLG_BASE))))
      return out;
    if (n <= max_verdef_) {
      const version_entry& e = entries_[n];
      if (!e.defined || e.name == symbol_name) return out;
      out.name = e.name;
    } else {
      if (n >= entries_.size() || !entries_[n].needed)
        return error{errc::out_of_range, versym_offset_ + 2 * index, "versym index names no verdef or verneed entry"};
      out.name = entries_[n].name;
      out.file = entries_[n].file;
      out.needed = true;
      out.hidden = true;
    }
    out.kind = (out.hidden || !defined) ? version_kind::non_default : version_kind::default_;
    return out;
  }

 private:
  version_entry& slot(u16 index) {
    if (entries_.size() <= index) entries_.resize(static_cast<std::size_t>(index) + 1);
    return entries_[index];
  }

  result<void> read_verdef(byte_view table, u64 count, byte_view strings) {
    u64 pos = 0;
    // Each record is at least sizeof(Verdef) bytes and offsets only grow in
    // sane files; bound the walk by the count and by the table size.
    const u64 limit = table.size() / sizeof(Verdef);
    if (count > limit) return table.fail(errc::too_large, 0, "verdef count exceeds what the table can hold");
    for (u64 i = 0; i < count; ++i) {
      LINKSCOPE_TRY(vd, table.template read<Verdef>(pos, "verdef record past end of table"));
      const u16 ndx = versym_index(vd.vd_ndx);
      if (ndx == 0) return table.fail(errc::bad_field, pos, "verdef index 0");
      std::string_view name;
      if (vd.vd_cnt > 0) {
        u64 aux_pos = 0;
        if (!checked_add(pos, vd.vd_aux, aux_pos)) return table.fail(errc::overflow, pos, "vd_aux overflows");
        if (!table.contains(aux_pos, sizeof(Verdaux)))
          return table.fail(errc::out_of_range, pos, "vd_aux points outside the verdef table");
        const Verdaux aux = table.template read_unchecked<Verdaux>(aux_pos);
        auto s = strings.cstring(aux.vda_name);
        if (!s) return table.fail(errc::out_of_range, aux_pos, "verdaux name outside the string table");
        name = *s;
      }
      version_entry& e = slot(ndx);
      e.name = name;
      e.flags = vd.vd_flags;
      e.hash = vd.vd_hash;
      e.defined = true;
      if (ndx > max_verdef_) max_verdef_ = ndx;
      if (vd.vd_next == 0) break;
      u64 next = 0;
      if (i + 1 < count && (!checked_add(pos, vd.vd_next, next) || !table.contains(next, sizeof(Verdef))))
        return table.fail(errc::out_of_range, pos, "vd_next points outside the verdef table");
      pos = next;
    }
    return ok();
  }

  result<void> read_verneed(byte_view table, u64 count, byte_view strings) {
    const u64 limit = table.size() / sizeof(Verneed);
    if (count > limit) return table.fail(errc::too_large, 0, "verneed count exceeds what the table can hold");
    u64 pos = 0;
    for (u64 i = 0; i < count; ++i) {
      LINKSCOPE_TRY(vn, table.template read<Verneed>(pos, "verneed record past end of table"));
      auto file_name = strings.cstring(vn.vn_file);
      if (!file_name) return table.fail(errc::out_of_range, pos, "verneed file name outside the string table");
      u64 aux_pos = 0;
      if (!checked_add(pos, vn.vn_aux, aux_pos)) return table.fail(errc::overflow, pos, "vn_aux overflows");
      const u64 aux_limit = table.size() / sizeof(Vernaux);
      if (vn.vn_cnt > aux_limit) return table.fail(errc::too_large, pos, "vn_cnt exceeds what the table can hold");
      for (u64 j = 0; j < vn.vn_cnt; ++j) {
        if (!table.contains(aux_pos, sizeof(Vernaux)))
          return table.fail(errc::out_of_range, pos, "vn_aux/vna_next points outside the verneed table");
        const Vernaux vna = table.template read_unchecked<Vernaux>(aux_pos);
        auto name = strings.cstring(vna.vna_name);
        if (!name) return table.fail(errc::out_of_range, aux_pos, "vernaux name outside the string table");
        const u16 other = versym_index(vna.vna_other);
        if (other != 0) {
          version_entry& e = slot(other);
          if (!e.defined) {
            needed_order_.push_back(other);
            e.name = *name;
            e.file = *file_name;
            e.flags = vna.vna_flags;
            e.hash = vna.vna_hash;
            e.needed = true;
            e.hidden = versym_hidden(vna.vna_other);
          }
        }
        if (vna.vna_next == 0) break;
        if (!checked_add(aux_pos, vna.vna_next, aux_pos)) return table.fail(errc::overflow, pos, "vna_next overflows");
      }
      if (vn.vn_next == 0) break;
      u64 next = 0;
      if (i + 1 < count && (!checked_add(pos, vn.vn_next, next) || !table.contains(next, sizeof(Verneed))))
        return table.fail(errc::out_of_range, pos, "vn_next points outside the verneed table");
      pos = next;
    }
    return ok();
  }

  record_array<Versym> versym_;
  u64 versym_offset_ = 0;
  std::vector<version_entry> entries_;
  std::vector<u16> needed_order_;
  u16 max_verdef_ = 0;
  bool present_ = false;
  bool has_definitions_or_needs_ = false;
};

}  // namespace elf
}  // namespace v0
}  // namespace linkscope
