// linkscope/coff/import.hpp — Windows import libraries: one import_record
// model read from short (MSVC/LLVM) and long (GNU binutils/mingw) members.
//
// Short import members (PE/COFF spec 7.1-7.3, "Import Library Format"):
//   IMPORT_OBJECT_HEADER (20 B): Sig1 0, Sig2 0xFFFF, Version 0, Machine,
//   TimeDateStamp, SizeOfData, OrdinalOrHint, then a u16 holding Type (bits
//   0-1: CODE, DATA, CONST) and NameType (bits 2-4). SizeOfData bytes follow:
//   "symbol\0dll\0", and for NameType EXPORTAS (5... here 4) a third
//   "exportname\0". The name the loader looks up comes from NameType:
//     ORDINAL          import by OrdinalOrHint, no name;
//     NAME             the symbol name as is;
//     NAME_NOPREFIX    the symbol name without a leading '?', '@' or '_'
//                      (the '_' is i386's C prefix: _foo -> foo);
//     NAME_UNDECORATE  as NOPREFIX, then cut at the first '@'
//                      (i386 stdcall _foo@8 / fastcall @foo@8 -> foo);
//     NAME_EXPORTAS    the explicit third string.
//   The member defines __imp_<symbol> and, unless the type is DATA,
//   <symbol> (the call thunk).
//
// Long members (what GNU dlltool and mingw-w64 write) are ordinary COFF
// objects that the linker assembles into the import table by section name:
//   head  (_h.o)  .idata$2 = the IMAGE_IMPORT_DESCRIPTOR; its Name field
//                 (offset 12) is relocated against the tail's "<x>_iname";
//                 defines _head_<x>;
//   tail  (_t.o)  .idata$7 = the DLL name, no relocations; defines <x>_iname;
//   stub  (_sNNNNN.o) .idata$5/.idata$4 = the IAT/ILT slot (relocated to
//                 .idata$6, or the ordinal with the top bit set), .idata$6 =
//                 u16 hint + name, .idata$7 = a reference to _head_<x>, .text
//                 = the thunk; defines __imp_<symbol> (and <symbol>).
// A stub is tied to its DLL through .idata$7 -> _head_<x> -> Name reloc ->
// <x>_iname -> tail's .idata$7, so a library that concatenates several
// DLLs' import libraries (libucrt.a, libmincore.a) maps every member right.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "linkscope/ar/archive.hpp"
#include "linkscope/coff/object.hpp"
#include "linkscope/coff/types.hpp"
#include "linkscope/core/config.hpp"
#include "linkscope/core/bytes.hpp"
#include "linkscope/core/error.hpp"
#include "linkscope/symbols/symbol.hpp"
#include "linkscope/symbols/table.hpp"

namespace linkscope {
inline namespace v0 {
namespace coff {

enum class import_format : u8 { short_, long_ };

struct import_record {
  std::string_view dll;          // empty if a long member could not be tied to a DLL
  std::string_view symbol;       // X; the library also defines __imp_X
  std::string_view imp_symbol;   // "__imp_X" (set by import_library::finish for short members)
  std::string_view import_name;  // what the loader looks up; empty for ordinal imports
  std::optional<u16> ordinal;    // set for imports by ordinal
  u16 hint = 0;                  // name-table hint (0 for ordinal imports)
  import_kind kind = import_kind::code;
  import_name_type name_type = import_name_type::name;
  u16 machine = 0;
  import_format format = import_format::short_;
  u64 member_offset = 0;         // archive member header offset (caller-defined)
  std::string_view member_name;

  bool defines_thunk() const noexcept { return kind != import_kind::data; }
  import_info info() const noexcept {
    import_info i;
    i.dll = dll;
    i.import_name = import_name;
    i.by_ordinal = ordinal.has_value();
    i.ordinal_or_hint = ordinal ? *ordinal : hint;
    i.kind = kind;
    i.name_type = name_type;
    i.machine = machine;
    return i;
  }
};

namespace detail {
inline std::string_view trim_one_prefix(std::string_view name) noexcept {
  if (!name.empty() && (name[0] == '?' || name[0] == '@' || name[0] == '_')) name.remove_prefix(1);
  return name;
}
}  // namespace detail

// The loader-visible name for a short import's symbol under a name type.
// (`export_as` is the third string, used only by NAME_EXPORTAS.)
inline std::string_view import_name_for(std::string_view symbol, import_name_type type,
                                        std::string_view export_as = {}) noexcept {
  switch (type) {
    case import_name_type::ordinal: return {};
    case import_name_type::name: return symbol;
    case import_name_type::name_noprefix: return detail::trim_one_prefix(symbol);
    case import_name_type::name_undecorate: {
      std::string_view n = detail::trim_one_prefix(symbol);
      return n.substr(0, n.find('@'));
    }
    case import_name_type::name_exportas: return export_as;
  }
  return symbol;
}

// Parse one short import member. `member` holds exactly the member's bytes.
result<import_record> parse_short_import(byte_view member, u64 member_offset = 0,
                                                std::string_view member_name = {}) noexcept;

// An import library: every import record of every member, in member order,
// plus what `dlltool -I` would print. Build it with from_archive(), or feed
// add_member() for each member yourself and call finish().
//
// The readers are declared here and defined below (LINKSCOPE_DEFINITIONS):
// in compiled mode (core/config.hpp) they are compiled once, in src/.
class import_library {
 public:
  import_library() = default;

  // Read every regular member of an archive (.lib / .a, any ar flavour).
  // Thin archives' external members are skipped (their bytes are elsewhere).
  static result<import_library> from_archive(const ar::archive& archive);
  static result<import_library> from_bytes(byte_view bytes);

  // Feed one member. Members that are neither import members nor COFF
  // objects are counted and skipped; a malformed short import or COFF object
  // is an error (its offset is the member's).
  result<void> add_member(byte_view bytes, u64 member_offset = 0, std::string_view member_name = {});

  // Tie long stubs to DLLs; call once after the last add_member().
  void finish();

  const std::vector<import_record>& records() const noexcept { return records_; }
  std::size_t member_count() const noexcept { return member_count_; }
  std::size_t other_members() const noexcept { return other_members_; }  // neither import nor object
  std::size_t object_members() const noexcept { return object_members_; }

  // What `x86_64-w64-mingw32-dlltool -I` prints, line by line, in the same
  // order (duplicates kept): the .idata$7 sections without relocations (or,
  // for an MS-style library that defines __NULL_IMPORT_DESCRIPTOR, the
  // .idata$6 sections flagged initialised data) whose first two bytes are
  // printable. Unlike dlltool, members of every COFF machine are read; use
  // identify_dlls(true) for dlltool's own view (i386 and x86-64 only).
  std::vector<std::string_view> identify_dlls(bool only_bfd_machines = false) const {
    std::vector<std::string_view> out;
    const bool ms_style = only_bfd_machines ? ms_style_bfd_ : ms_style_;
    for (const candidate& c : candidates_) {
      if (only_bfd_machines && !c.bfd_machine) continue;
      if (c.ms_style_section == ms_style) out.push_back(c.text);
    }
    return out;
  }
  // The distinct DLLs of all records, in first-seen order.
  std::vector<std::string_view> dlls() const {
    std::vector<std::string_view> out;
    for (const import_record& r : records_) {
      if (r.dll.empty()) continue;
      bool seen = false;
      for (std::string_view d : out) seen = seen || d == r.dll;
      if (!seen) out.push_back(r.dll);
    }
    return out;
  }
  bool ms_style() const noexcept { return ms_style_; }

  // External definitions of ordinary (non-import) object members.
  struct static_symbol {
    std::string_view name;
    u64 member_offset = 0;
    std::string_view member_name;
  };
  const std::vector<static_symbol>& static_symbols() const noexcept { return static_symbols_; }

  // symbol_source: __imp_X for every record and X unless the import is DATA.
  // Each symbol's `import` points into this library (valid after finish()).
  template <class F>
  result<void> for_each_symbol(F&& f) const {
    for (std::size_t i = 0; i < records_.size(); ++i) {
      const import_record& r = records_[i];
      const import_info* info = finished_ ? &infos_[i] : nullptr;
      symbol s;
      s.origin = r.member_offset;
      s.index = static_cast<u32>(i);
      s.bind = binding::global;
      s.defined = true;
      s.import = info;
      if (r.defines_thunk()) {
        s.name = r.symbol;
        s.kind = r.kind == import_kind::code ? symbol_kind::func : symbol_kind::object;
        if (!invoke_symbol_callback(f, s)) return ok();
      }
      s.name = r.imp_symbol;
      s.kind = symbol_kind::object;
      if (!invoke_symbol_callback(f, s)) return ok();
    }
    return ok();
  }

 private:
  struct candidate {
    std::string_view text;
    bool ms_style_section = false;  // .idata$6 (MS-style) rather than .idata$7
    bool bfd_machine = false;
  };
  struct pending_stub {
    std::size_t record;
    std::string_view head_symbol;
  };

  static bool printable(unsigned char c) noexcept { return c >= 0x20 && c < 0x7f; }

  result<void> add_object(const object& obj, u16 m, u64 member_offset, std::string_view member_name);

 private:
  std::vector<import_record> records_;
  std::vector<import_info> infos_;
  std::shared_ptr<const std::string> arena_;
  std::vector<static_symbol> static_symbols_;
  std::vector<candidate> candidates_;
  std::vector<pending_stub> stubs_;
  std::unordered_map<std::string_view, std::string_view> heads_;   // _head_x -> x_iname
  std::unordered_map<std::string_view, std::string_view> inames_;  // x_iname -> "x.dll"
  std::size_t member_count_ = 0;
  std::size_t other_members_ = 0;
  std::size_t object_members_ = 0;
  error error_{};
  bool ms_style_ = false;
  bool ms_style_bfd_ = false;
  bool finished_ = false;
};

#if LINKSCOPE_DEFINITIONS
LINKSCOPE_FUNC result<import_library> import_library::from_archive(const ar::archive& archive) {
  import_library lib;
  // A short import member takes at least 84 bytes (ar header, import
  // header, two names): reserving for that many only claims address space,
  // pages are touched as records arrive, and it saves the regrowth copies
  // that otherwise cost ~15% of a 100k-member parse.
  lib.records_.reserve(std::min<std::size_t>(archive.bytes().size() / 84, std::size_t{1} << 22));
  LINKSCOPE_CHECK(archive.for_each_member([&](const ar::member& m) -> bool {
    if (m.external) return true;
    auto added = lib.add_member(m.data, m.header_offset, m.name);
    if (!added) {
      lib.error_ = added.error();
      return false;
    }
    return true;
  }));
  if (lib.error_.code != errc::ok) return lib.error_;
  lib.finish();
  return lib;
}

LINKSCOPE_FUNC result<import_library> import_library::from_bytes(byte_view bytes) {
  if (ar::archive::is_archive(bytes)) {
    LINKSCOPE_TRY(archive, ar::archive::open(bytes));
    return from_archive(archive);
  }
  // A lone member: a short import or a COFF object.
  import_library lib;
  LINKSCOPE_CHECK(lib.add_member(bytes, 0, {}));
  lib.finish();
  return lib;
}

LINKSCOPE_FUNC result<void> import_library::add_member(byte_view bytes, u64 member_offset,
                                                      std::string_view member_name) {
  ++member_count_;
  if (is_short_import(bytes)) {
    LINKSCOPE_TRY(r, parse_short_import(bytes, member_offset, member_name));
    // (bfd's ILF reader synthesises .idata$6 without SEC_DATA for short
    // members: never a dlltool -I candidate.)
    records_.push_back(r);
    return ok();
  }
  if (bytes.size() < sizeof(file_header)) {
    ++other_members_;
    return ok();
  }
  auto parsed = object::parse(bytes);
  if (!parsed) {
    ++other_members_;
    return ok();  // not a COFF object (ELF, LTO bitcode, text): not ours
  }
  const object& obj = *parsed;
  const u16 m = obj.machine();
  if (!known_machine(m) && m != machine::unknown) {
    ++other_members_;
    return ok();
  }
  // Sanity: a real object's section table must parse.
  LINKSCOPE_CHECK(obj.for_each_section([](const section&) {}));
  return add_object(obj, m, member_offset, member_name);
}

LINKSCOPE_FUNC void import_library::finish() {
  for (pending_stub& p : stubs_) {
    import_record& r = records_[p.record];
    auto head = heads_.find(p.head_symbol);
    if (head != heads_.end()) {
      auto tail = inames_.find(head->second);
      if (tail != inames_.end()) r.dll = tail->second;
    }
  }
  // Stubs that could not be tied (no .idata$7 reference) fall back to the
  // library's only DLL, when there is exactly one.
  std::string_view only;
  bool single = true;
  for (const auto& [sym, dll] : inames_) {
    if (only.empty()) only = dll;
    else if (dll != only) single = false;
  }
  if (single && !only.empty())
    for (import_record& r : records_)
      if (r.dll.empty()) r.dll = only;
  // "__imp_X" for short members lives in one shared, immutable arena so
  // that copies of the library keep valid views.
  std::size_t total = 0;
  for (const import_record& r : records_)
    if (r.imp_symbol.empty()) total += 6 + r.symbol.size();
  auto arena = std::make_shared<std::string>();
  arena->reserve(total);
  std::vector<std::pair<std::size_t, std::size_t>> spans;
  for (const import_record& r : records_) {
    if (!r.imp_symbol.empty()) continue;
    spans.emplace_back(arena->size(), 6 + r.symbol.size());
    arena->append("__imp_").append(r.symbol);
  }
  std::size_t next = 0;
  for (import_record& r : records_) {
    if (!r.imp_symbol.empty()) continue;
    r.imp_symbol = std::string_view(arena->data() + spans[next].first, spans[next].second);
    ++next;
  }
  arena_ = std::move(arena);
  infos_.clear();
  infos_.reserve(records_.size());
  for (const import_record& r : records_) infos_.push_back(r.info());
  finished_ = true;
}

LINKSCOPE_FUNC result<void> import_library::add_object(const object& obj, u16 m, u64 member_offset,
                                                      std::string_view member_name) {
  ++object_members_;
  const bool bfd_machine = m == machine::i386 || m == machine::amd64;
  // Symbols: what is defined where, and the special names.
  std::string_view imp_symbol;   // __imp_X defined here
  u32 imp_section = 0;
  bool has_null_descriptor = false;
  std::vector<std::pair<std::string_view, u32>> defined;  // (name, section) of externals
  LINKSCOPE_CHECK(obj.for_each_entry([&](const symbol_entry& e) {
    if (e.name.substr(0, 24) == "__NULL_IMPORT_DESCRIPTOR") has_null_descriptor = true;
    if (!e.is_external() || e.section_number <= 0) return;
    defined.emplace_back(e.name, static_cast<u32>(e.section_number));
    if (e.name.substr(0, 6) == "__imp_" && imp_symbol.empty()) {
      imp_symbol = e.name;
      imp_section = static_cast<u32>(e.section_number);
    }
  }));
  if (has_null_descriptor) {
    ms_style_ = true;
    if (bfd_machine) ms_style_bfd_ = true;
  }
  std::optional<section> idata2, idata4, idata5, idata6, idata7_reloc;
  bool any_idata = false;
  LINKSCOPE_CHECK(obj.for_each_section([&](const section& s) {
    if (s.name.substr(0, 7) == ".idata$") any_idata = true;
    if (s.name == ".idata$2" && !idata2) idata2 = s;
    else if (s.name == ".idata$4" && !idata4) idata4 = s;
    else if (s.name == ".idata$5" && !idata5) idata5 = s;
    else if (s.name == ".idata$6" && !idata6) idata6 = s;
    else if (s.name == ".idata$7" && s.header.number_of_relocations != 0 && !idata7_reloc) idata7_reloc = s;
  }));
  // A member without import sections is ordinary code (mingw's libmsvcrt.a
  // carries some): its external definitions are static definitions.
  if (!any_idata) {
    for (const auto& [name, sec] : defined) static_symbols_.push_back({name, member_offset, member_name});
    return ok();
  }
  // Identify candidates and tails, in section order.
  LINKSCOPE_CHECK(obj.for_each_section([&](const section& s) -> void {
    const bool is7 = s.name == ".idata$7";
    const bool is6 = s.name == ".idata$6";
    if (!is7 && !is6) return;
    if (!s.has_contents()) return;
    if (is7 && s.header.number_of_relocations != 0) return;
    if (is6 && (s.characteristics() & scn::cnt_initialized_data) == 0) return;
    auto data = obj.section_data(s);
    if (!data || data->empty()) return;
    const unsigned char* p = data->data();
    if (p[0] == 0 || !printable(p[0]) || (data->size() >= 2 && !printable(p[1]))) return;
    std::string_view text = data->chars();
    text = text.substr(0, text.find('\0'));
    candidates_.push_back({text, is6, bfd_machine});
    if (is7) {
      // The tail: the symbols defined in this section name the DLL string.
      for (const auto& [name, sec] : defined)
        if (sec == s.index) inames_.emplace(name, text);
    }
  }));
  // Head: .idata$2's Name field (offset 12) is relocated to the iname.
  if (idata2) {
    LINKSCOPE_TRY(relocs, obj.relocations(*idata2));
    std::string_view iname;
    for (const relocation& rel : relocs) {
      if (rel.virtual_address != 12) continue;
      auto target = obj.symbol_at(rel.symbol_table_index);
      if (!target) return target.error();
      iname = target->name;
    }
    if (!iname.empty())
      for (const auto& [name, sec] : defined)
        if (sec == idata2->index) heads_.emplace(name, iname);
  }
  // Stub: defines __imp_X in .idata$5.
  if (!imp_symbol.empty() && idata5 && imp_section == idata5->index) {
    import_record r;
    r.format = import_format::long_;
    r.machine = m;
    r.member_offset = member_offset;
    r.member_name = member_name;
    r.symbol = imp_symbol.substr(6);
    r.imp_symbol = imp_symbol;
    r.kind = import_kind::data;
    for (const auto& [name, sec] : defined) {
      if (name != r.symbol) continue;
      LINKSCOPE_TRY(s, obj.section_at(sec));
      r.kind = s.is_code() ? import_kind::code : import_kind::data;
    }
    // By name (.idata$6 = hint + name) or by ordinal (the thunk value).
    bool named = false;
    if (idata6 && idata6->has_contents()) {
      LINKSCOPE_TRY(data, obj.section_data(*idata6));
      if (data.size() >= 3) {
        r.hint = load<u16, std::endian::little>(data.data());
        LINKSCOPE_TRY(name, data.cstring(2, "hint/name entry has no NUL"));
        r.import_name = name;
        r.name_type = import_name_type::name;
        named = true;
      }
    }
    if (!named) {
      LINKSCOPE_TRY(data, obj.section_data(*idata5));
      const bool wide = data.size() >= 8 && is_64bit_machine(m);
      if (data.size() < 4) return data.fail(errc::truncated, 0, "import thunk too small");
      const u64 value = wide ? load<u64, std::endian::little>(data.data())
                             : load<u32, std::endian::little>(data.data());
      const u64 flag = wide ? (u64{1} << 63) : (u64{1} << 31);
      if ((value & flag) == 0) return data.fail(errc::malformed, 0, "import thunk is neither name nor ordinal");
      r.ordinal = static_cast<u16>(value & 0xffff);
      r.name_type = import_name_type::ordinal;
    }
    std::string_view head;
    if (idata7_reloc) {
      LINKSCOPE_TRY(relocs, obj.relocations(*idata7_reloc));
      if (!relocs.empty()) {
        LINKSCOPE_TRY(target, obj.symbol_at(relocs[0].symbol_table_index));
        head = target.name;
      }
    }
    stubs_.push_back({records_.size(), head});
    records_.push_back(r);
  }
  return ok();
}
#endif  // LINKSCOPE_DEFINITIONS

#if LINKSCOPE_DEFINITIONS
LINKSCOPE_FUNC result<import_record> parse_short_import(byte_view member, u64 member_offset,
                                                std::string_view member_name) noexcept {
  LINKSCOPE_TRY(h, member.read<import_header>(0, "truncated import header"));
  if (h.sig1 != 0 || h.sig2 != 0xffff) return member.fail(errc::bad_magic, 0, "not an import header");
  if (h.version != 0) return member.fail(errc::unsupported, 4, "unknown import header version");
  if (!known_machine(h.machine)) return member.fail(errc::bad_field, 6, "unknown import machine");
  LINKSCOPE_TRY(data, member.sub(sizeof(import_header), h.size_of_data, "import data past end of member"));
  const u16 info = h.type_info;
  const unsigned type = info & 3u;
  const unsigned name_type = (info >> 2) & 7u;
  if (type > 2) return member.fail(errc::bad_field, 18, "unknown import type");
  if (name_type > 4) return member.fail(errc::bad_field, 18, "unknown import name type");
  import_record r;
  r.format = import_format::short_;
  r.member_offset = member_offset;
  r.member_name = member_name;
  r.machine = h.machine;
  r.kind = type == 0 ? import_kind::code : type == 1 ? import_kind::data : import_kind::const_;
  r.name_type = static_cast<import_name_type>(name_type);
  if (data.empty()) return member.fail(errc::malformed, sizeof(import_header), "import symbol name has no NUL");
  LINKSCOPE_TRY(sym, data.cstring(0, "import symbol name has no NUL"));
  if (sym.empty()) return member.fail(errc::malformed, sizeof(import_header), "empty import symbol name");
  if (sym.size() + 1 >= data.size())
    return member.fail(errc::malformed, sizeof(import_header) + sym.size() + 1, "import DLL name has no NUL");
  LINKSCOPE_TRY(dll, data.cstring(sym.size() + 1, "import DLL name has no NUL"));
  r.symbol = sym;
  r.dll = dll;
  std::string_view export_as;
  if (r.name_type == import_name_type::name_exportas) {
    const u64 third = sym.size() + 1 + dll.size() + 1;
    if (third >= data.size())
      return member.fail(errc::malformed, sizeof(import_header) + third, "EXPORTAS name missing");
    LINKSCOPE_TRY(e, data.cstring(third, "EXPORTAS name has no NUL"));
    export_as = e;
  }
  if (r.name_type == import_name_type::ordinal) {
    r.ordinal = h.ordinal_or_hint;
  } else {
    r.hint = h.ordinal_or_hint;
    r.import_name = import_name_for(sym, r.name_type, export_as);
  }
  return r;
}
#endif  // LINKSCOPE_DEFINITIONS

}  // namespace coff
}  // namespace v0
}  // namespace linkscope
