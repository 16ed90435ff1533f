// linkscope/coff/nm.hpp — COFF objects, PE images and import libraries listed
// as GNU nm 2.40 (binutils-multiarch) lists them, byte for byte.
//
// nm sees COFF through BFD's pe-x86-64, pe-i386, pe-aarch64-little and
// pe-bigobj-x86-64 targets (images: pei-*). What it prints follows from three
// steps, learned from nm's behaviour on objects, images and libraries:
//  1. Section flags: CODE from CNT_CODE or MEM_EXECUTE; DATA from
//     CNT_INITIALIZED_DATA unless the section is a debug one (.debug*,
//     .zdebug*, .gnu.linkonce.wi./.wt., .gnu_debuglink, .stab*), which is
//     DEBUGGING; READONLY unless MEM_WRITE; HAS_CONTENTS when
//     PointerToRawData != 0. The letter: .drectve/.idata (i), .edata (e),
//     .pdata (p) when the name goes on with end, '.', '$' or a digit; else t
//     (CODE), r/d (DATA read-only or not), b (no contents), N (DEBUGGING), n
//     (contents, read-only), else '?'.
//  2. Storage classes: EXTERNAL, WEAK_EXTERNAL and SECTION (104) are global
//     (section 0: undefined 'U', or common 'C' with the size as value; a
//     weak external is 'w' undefined, 'W' defined; SECTION in a section is a
//     local); STATIC and LABEL are local (in section 0 they are 'U'; in
//     section -2 debugging); FILE (named by its aux records), FUNCTION
//     (.bf/.ef), BLOCK and the type classes are debugging ('?', -a only);
//     section -1 and -2 are absolute ('a'). A global upper-cases the letter.
//  3. Values are n_value plus the section's address, which is 0 in objects
//     and VirtualAddress + ImageBase in images.
// A short import member (MSVC's, spec 7) is what BFD makes of it: sections
// .idata$4, .idata$5, .idata$6 (named imports), .text (code), their symbols,
// __imp_X, X (code), and an undefined __IMPORT_DESCRIPTOR_<dll base name>.
// Order: by name (strcmp, or strcoll in the user's locale), stable; -n by
// (undefined first, address, name); --size-sort by the size BFD infers from
// the next symbol of the same section in address order; -r reverses; -p keeps
// table order. Formats: bsd, sysv, posix, just-symbols; -t picks the radix.
// -S prints no size for COFF (BFD keeps none) except under --size-sort.
// A file without a symbol table (a stripped image, -D) is "no symbols" on
// stderr, and exit status 0, as nm says it.
#pragma once

#include <algorithm>
#include <clocale>
#include <cstdio>
#include <cstring>
#include <deque>
#include <string>
#include <string_view>
#include <vector>

#include "linkscope/ar/archive.hpp"
#include "linkscope/ar/armap.hpp"
#include "linkscope/coff/import.hpp"
#include "linkscope/coff/object.hpp"
#include "linkscope/coff/pe.hpp"
#include "linkscope/coff/types.hpp"
#include "linkscope/core/bytes.hpp"
#include "linkscope/core/config.hpp"
#include "linkscope/core/error.hpp"
#include "linkscope/symbols/demangle.hpp"

namespace linkscope {
inline namespace v0 {
namespace coff {

enum class nm_format : u8 { bsd, sysv, posix, just_symbols };

struct nm_options {
  nm_format format = nm_format::bsd;  // -f bsd|sysv|posix|just-symbols, -P, -j
  bool undefined_only = false;        // -u
  bool external_only = false;         // -g
  bool defined_only = false;          // -U, --defined-only
  bool debug_syms = false;            // -a
  bool no_sort = false;               // -p
  bool numeric_sort = false;          // -n, -v
  bool reverse_sort = false;          // -r
  bool size_sort = false;             // --size-sort
  bool print_file_name = false;       // -A, -o
  bool print_size = false;            // -S
  bool demangle = false;              // -C
  bool print_armap = false;           // -s, --print-armap
  bool dynamic = false;               // -D: COFF has no dynamic symbols ("no symbols")
  bool multiple_files = false;        // more than one file given
  bool use_strcoll = false;           // sort names with strcoll (a collating locale)
  int radix = 16;                     // -t x|d|o
};

// What nm reports on stderr for one object while it goes on: `where` names
// the object as nm does (the path, or the member's name). `fatal` is false
// for "no symbols", which leaves nm's exit status at 0.
struct nm_problem {
  std::string where;
  error what;
  bool fatal = true;
};

// One listed object for --json: the rows the bsd listing prints, in order.
struct nm_json_symbol {
  std::string name;
  char type = '?';
  bool defined = false;
  u64 value = 0;
  u64 size = 0;
};
struct nm_object {
  std::string file;    // the path given
  std::string member;  // the archive member's own name, or empty
  int bits = 64;
  std::vector<nm_json_symbol> symbols;
  std::string error;   // the object cannot be listed: the message (docs/JSON.md "error")
  u64 offset = no_offset;  // where, when known
  std::vector<std::string> warnings;  // what nm says and goes on from ("no symbols")
};

// Is this a file nm reads through its COFF targets: an object (x86-64,
// i386, arm64; bigobj x86-64), a PE image, or a short import member?
bool is_nm_coff(byte_view bytes) noexcept;
// Does this archive hold COFF members (its first regular member is one)?
bool is_coff_archive(byte_view bytes);

// The listing of one file (an object, image, import member, or an archive
// of them) appended to `out`; problems nm reports and goes on from go to
// `problems`; a file that cannot be read at all is the error.
result<void> nm_file(byte_view bytes, std::string_view display, const nm_options& options, std::string& out,
                     std::vector<nm_problem>* problems = nullptr);
// The same rows as data (--json).
result<void> nm_file_objects(byte_view bytes, std::string_view display, const nm_options& options,
                             std::vector<nm_object>& objects, std::vector<nm_problem>* problems = nullptr);

#if LINKSCOPE_DEFINITIONS
// What follows is the implementation: compiled mode parses it only in src/.
namespace detail {

// BFD's section flags, as far as the letter needs them.
struct nm_section {
  std::string_view name;
  u64 vma = 0;
  u64 size = 0;
  char letter = '?';
};

inline bool nm_debug_section_name(std::string_view n) noexcept {
  static constexpr std::string_view prefixes[] = {".debug", ".zdebug", ".gnu.linkonce.wi.", ".gnu.linkonce.wt.",
                                                  ".gnu_debuglink", ".gnu_debugaltlink", ".stab"};
  for (std::string_view p : prefixes)
    if (n.substr(0, p.size()) == p) return true;
  return false;
}

inline char nm_section_letter(std::string_view name, u32 characteristics, bool has_contents) noexcept {
  static constexpr std::pair<std::string_view, char> by_name[] = {
      {".drectve", 'i'}, {".edata", 'e'}, {".idata", 'i'}, {".pdata", 'p'}};
  for (const auto& [prefix, letter] : by_name) {
    if (name.substr(0, prefix.size()) != prefix) continue;
    if (name.size() == prefix.size()) return letter;
    const char next = name[prefix.size()];
    if (next == '.' || next == '$' || (next >= '0' && next <= '9')) return letter;
  }
  const bool debug_name = nm_debug_section_name(name);
  const bool code = (characteristics & (scn::cnt_code | scn::mem_execute)) != 0;
  const bool data = (characteristics & scn::cnt_initialized_data) != 0 && !debug_name;
  const bool readonly = (characteristics & scn::mem_write) == 0;
  const bool debugging =
      debug_name && (characteristics & (scn::mem_discardable | scn::cnt_initialized_data)) != 0;
  if (code) return 't';
  if (data) return readonly ? 'r' : 'd';
  if (!has_contents) return 'b';
  if (debugging) return 'N';
  if (readonly) return 'n';
  return '?';
}

enum : u32 { nm_und = 0, nm_abs = 0xffffffffu, nm_com = 0xfffffffeu };

struct nm_row {
  std::string_view name;
  u64 value = 0;  // as nm prints it (valueof)
  u64 size = 0;   // --size-sort only
  u32 section = nm_und;  // nm_und, nm_abs, nm_com or a 1-based section index
  u32 order = 0;
  char type = '?';
  bool global = false;     // BSF_GLOBAL or weak: -g keeps it
  bool debugging = false;  // listed with -a only
  bool file = false;       // a FILE record (the size sort's heuristics)
  bool native = true;      // sysv: a COFF record behind it (the Type column)
  u8 storage_class = 0;
  u16 n_type = 0;
  bool undefined() const noexcept { return type == 'U' || type == 'w' || type == 'v'; }
};

// The rows of one object, with what printing needs.
struct nm_listing {
  std::vector<nm_row> rows;
  std::vector<nm_section> sections;  // 1-based in rows (sections[i - 1])
  std::deque<std::string> names;     // names BFD makes (import members)
  int width = 64;
  char leading_char = 0;             // '_' on i386: -C skips it
  bool has_symbols = true;
};

inline bool nm_machine(u16 m) noexcept { return m == machine::amd64 || m == machine::i386 || m == machine::arm64; }

// The object's rows (a COFF object or an image's symbol table), BFD's way.
template <class Object>
result<void> nm_rows(const Object& obj, u64 image_base, bool image, bool i386, nm_listing& out) {
  out.sections.clear();
  LINKSCOPE_CHECK(obj.for_each_section([&](const section& s) {
    nm_section ns;
    ns.name = s.name;
    const section_header& h = s.header;
    u64 vma = h.virtual_address;
    if (vma != 0) {
      vma += image_base;
      if (i386) vma &= 0xffffffffu;
    }
    ns.vma = vma;
    u64 size = h.size_of_raw_data;
    const u64 virtual_size = h.virtual_size;
    if (virtual_size > 0 && (((h.characteristics & scn::cnt_uninitialized_data) != 0 && (!image || size == 0)) ||
                             (image && size > virtual_size)))
      size = virtual_size;
    ns.size = size;
    ns.letter = nm_section_letter(s.name, h.characteristics, h.pointer_to_raw_data != 0);
    out.sections.push_back(ns);
  }));
  u32 order = 0;
  error failure{};
  bool failed = false;
  LINKSCOPE_CHECK(obj.for_each_entry([&](const symbol_entry& e) -> bool {
    nm_row r;
    r.order = order++;
    r.name = e.name;
    r.storage_class = e.storage_class;
    r.n_type = e.type;
    i32 scnum = e.section_number;
    u8 sclass = e.storage_class;
    u64 value = e.value;
    if (sclass == storage_class::section) {
      // BFD reads a SECTION record as a STATIC one at 0; in no section, it
      // names one: the first section of that name, or a new empty one (data,
      // with contents) that BFD makes for it.
      sclass = storage_class::static_;
      value = 0;
      if (scnum == 0) {
        for (std::size_t i = 0; i < out.sections.size() && scnum == 0; ++i)
          if (out.sections[i].name == e.name) scnum = static_cast<i32>(i + 1);
        if (scnum == 0) {
          out.sections.push_back(nm_section{e.name, 0, 0, nm_section_letter(e.name, scn::cnt_initialized_data | scn::mem_write, true)});
          scnum = static_cast<i32>(out.sections.size());
        }
      }
      r.storage_class = sclass;
    }
    u32 section = scnum == 0 ? nm_und : scnum < 0 ? nm_abs : static_cast<u32>(scnum);
    bool global = false, local = false, weak = false;
    switch (sclass) {
      case storage_class::external:
      case storage_class::weak_external:
      case 127:  // C_WEAKEXT
        if (scnum == 0) {
          if (value != 0) section = nm_com;
        } else {
          global = true;
        }
        if (sclass == storage_class::weak_external || sclass == 127) weak = true;
        break;
      case storage_class::static_:
      case storage_class::label:
        if (scnum == sym_debug) r.debugging = true;
        else local = true;
        break;
      case 21:  // C_STATLAB
        global = true;
        break;
      case storage_class::file:
        r.file = true;
        r.debugging = true;
        if (auto file_name = obj.file_name(e)) {
          r.name = *file_name;
        } else {
          failure = file_name.error();
          failed = true;
          return false;
        }
        break;
      case storage_class::null_:
        if (e.type == 0 && value == 0 && scnum == 0) break;
        r.debugging = true;
        break;
      default:
        r.debugging = true;
        break;
    }
    // bfd_decode_symclass
    char c;
    if (section == nm_com) c = 'C';
    else if (section == nm_und) c = weak ? 'w' : 'U';
    else if (weak) c = 'W';
    else if (!global && !local) c = '?';
    else {
      c = section == nm_abs ? 'a' : out.sections[section - 1].letter;
      if (global && c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
    }
    r.type = c;
    r.global = global || weak;
    r.section = section;
    r.value = value + (section != nm_und && section != nm_abs && section != nm_com ? out.sections[section - 1].vma : 0);
    if (section == nm_und) r.value = 0;
    out.rows.push_back(r);
    return true;
  }));
  if (failed) return failure;
  return ok();
}

// A short import member, as BFD builds it.
inline result<void> nm_import_rows(byte_view bytes, nm_listing& out) {
  LINKSCOPE_TRY(rec, parse_short_import(bytes));
  const bool wide = rec.machine != machine::i386;
  out.width = wide ? 64 : 32;
  out.leading_char = rec.machine == machine::i386 ? '_' : 0;
  // pe-aarch64-little 2.40 gives its thunk and table sections 4 bytes.
  const u64 pointer = rec.machine == machine::amd64 ? 8 : 4;
  const u64 thunk = rec.machine == machine::arm64 ? 4 : 8;
  auto add_section = [&](std::string_view name, u64 size, char letter) {
    out.sections.push_back(nm_section{name, 0, size, letter});
    return static_cast<u32>(out.sections.size());
  };
  auto add_row = [&](std::string_view name, u32 section, char type) {
    nm_row r;
    r.name = name;
    r.section = section;
    r.type = type;
    r.global = true;
    r.order = static_cast<u32>(out.rows.size());
    out.rows.push_back(r);
  };
  const u32 id4 = add_section(".idata$4", pointer, 'i');
  const u32 id5 = add_section(".idata$5", pointer, 'i');
  add_row(".idata$4", id4, 'I');
  add_row(".idata$5", id5, 'I');
  if (rec.name_type != import_name_type::ordinal) {
    const u32 id6 = add_section(".idata$6", 2 + rec.symbol.size() + 2, 'i');
    add_row(".idata$6", id6, 'I');
  }
  add_row(out.names.emplace_back("__imp_" + std::string(rec.symbol)), id5, 'I');
  if (rec.kind == import_kind::code) {
    const u32 text = add_section(".text", thunk, 't');
    add_row(".text", text, 'T');
    add_row(rec.symbol, text, 'T');
  } else if (rec.kind == import_kind::const_) {
    add_row(rec.symbol, id5, 'I');
  }
  std::string_view base = rec.dll.substr(0, rec.dll.rfind('.'));
  add_row(out.names.emplace_back("__IMPORT_DESCRIPTOR_" + std::string(base)), nm_und, 'U');
  return ok();
}

class nm_lister {
 public:
  nm_lister(const nm_options& o, std::string& out, std::vector<nm_problem>* problems,
            std::vector<nm_object>* objects = nullptr)
      : o_(o), out_(out), problems_(problems), objects_(objects) {}

  result<void> file(byte_view bytes, std::string_view path) {
    if (ar::archive::is_archive(bytes)) return archive(bytes, path);
    if (o_.format == nm_format::bsd && o_.multiple_files && !o_.print_file_name && !json()) {
      out_ += '\n';
      out_ += path;
      out_ += ":\n";
    } else if (o_.format == nm_format::posix && o_.multiple_files && !o_.print_file_name && !json()) {
      out_ += path;
      out_ += ":\n";
    }
    return object(bytes, {}, path);
  }

 private:
  bool json() const noexcept { return objects_ != nullptr; }

  result<void> archive(byte_view bytes, std::string_view path) {
    LINKSCOPE_TRY(a, ar::archive::open(bytes));
    if (o_.format == nm_format::bsd && o_.multiple_files && !json()) {
      out_ += '\n';
      out_ += path;
      out_ += ":\n";
    }
    if (o_.print_armap && !json()) {
      LINKSCOPE_TRY(map, ar::armap::read(a));
      bool printed = false;
      std::string_view last_name;
      u64 last_offset = ~u64{0};
      LINKSCOPE_CHECK(map.for_each([&](const ar::armap_entry& e) -> bool {
        if (!printed) {
          out_ += "\nArchive index:\n";
          printed = true;
        }
        if (e.member_offset != last_offset) {
          auto m = a.member_at(e.member_offset);
          last_name = m ? m->name : std::string_view();
          last_offset = e.member_offset;
        }
        put_name(e.name, 0);
        out_ += " in ";
        out_ += last_name;
        out_ += '\n';
        return true;
      }));
    }
    return a.for_each_member([&](const ar::member& m) -> bool {
      if (m.external) {
        const error e = make_error(errc::unsupported, no_offset, "thin archive member");
        problem(std::string(m.name), e, true);
        member_error(path, m.name, e);
        return true;
      }
      if (!is_nm_coff(m.data)) {
        const error e = make_error(errc::bad_magic, no_offset, "file format not recognized");
        problem(std::string(m.name), e, true);
        member_error(path, m.name, e);
        return true;
      }
      if (!json()) {
        if (o_.format == nm_format::bsd && !o_.print_file_name) {
          out_ += '\n';
          out_ += m.name;
          out_ += ":\n";
        } else if (o_.format == nm_format::posix && !o_.print_file_name) {
          out_ += path;
          out_ += '[';
          out_ += m.name;
          out_ += "]:\n";
        }
      }
      auto r = object(m.data, path, m.name);
      if (!r) {
        problem(std::string(path) + "(" + std::string(m.name) + ")", r.error().rebased(m.data_offset), true);
        member_error(path, m.name, r.error().rebased(m.data_offset));
      }
      return true;
    });
  }

  void problem(std::string where, error what, bool fatal) {
    if (problems_) problems_->push_back(nm_problem{std::move(where), what, fatal});
  }
  // --json: a member that cannot be listed stays in the document.
  void member_error(std::string_view archive, std::string_view member, const error& what) {
    if (!json()) return;
    nm_object o;
    o.file = std::string(archive);
    o.member = std::string(member);
    o.error = what.message[0] != '\0' ? what.message : to_string(what.code);
    o.offset = what.offset;
    objects_->push_back(std::move(o));
  }

  // One object: `archive` is the archive's path (empty for a file), `name`
  // the member's name or the file's path.
  result<void> object(byte_view bytes, std::string_view archive, std::string_view name) {
    nm_listing listing;
    if (is_short_import(bytes)) {
      LINKSCOPE_CHECK(nm_import_rows(bytes, listing));
    } else if (pe::image::is_pe(bytes)) {
      LINKSCOPE_TRY(img, pe::image::parse(bytes));
      listing.width = img.machine() == machine::i386 ? 32 : 64;
      listing.leading_char = img.machine() == machine::i386 ? '_' : 0;
      if (!img.has_symbol_table()) {
        listing.has_symbols = false;
      } else {
        LINKSCOPE_TRY(obj, standard_object::parse(bytes, img.coff_header_offset()));
        LINKSCOPE_CHECK(nm_rows(obj, img.image_base(), true, img.machine() == machine::i386, listing));
      }
    } else if (is_bigobj(bytes)) {
      // A truncated object is an error here. (nm 2.40 does not recognize it
      // as COFF; its LTO plugin target then claims it: "no symbols".)
      LINKSCOPE_TRY(obj, bigobj_object::parse(bytes));
      listing.has_symbols = obj.symbol_count() != 0;
      LINKSCOPE_CHECK(nm_rows(obj, 0, false, false, listing));
    } else {
      LINKSCOPE_TRY(obj, standard_object::parse(bytes));
      listing.width = obj.machine() == machine::i386 ? 32 : 64;
      listing.leading_char = obj.machine() == machine::i386 ? '_' : 0;
      listing.has_symbols = obj.symbol_count() != 0;
      LINKSCOPE_CHECK(nm_rows(obj, 0, false, obj.machine() == machine::i386, listing));
    }
    if (o_.dynamic) listing.has_symbols = false;
    if (!json()) header(archive, name, listing.width);
    nm_object* jo = nullptr;
    if (json()) {
      objects_->push_back(nm_object{});
      jo = &objects_->back();
      jo->file = std::string(archive.empty() ? name : archive);
      if (!archive.empty()) jo->member = std::string(name);
      jo->bits = listing.width;
    }
    if (!listing.has_symbols || listing.rows.empty()) {
      problem(std::string(name), make_error(errc::ok, no_offset, "no symbols"), false);
      if (jo) jo->warnings.emplace_back("no symbols");
      return ok();
    }
    std::vector<nm_row> rows = select(listing);
    for (const nm_row& r : rows) {
      if (jo) {
        jo->symbols.push_back(nm_json_symbol{std::string(r.name), r.type, !r.undefined(), r.value, r.size});
        continue;
      }
      print_row(r, listing, archive, name);
    }
    return ok();
  }

  void header(std::string_view archive, std::string_view name, int width) {
    if (o_.format != nm_format::sysv) return;
    out_ += o_.undefined_only ? "\n\nUndefined symbols from " : "\n\nSymbols from ";
    if (!archive.empty()) {
      out_ += archive;
      out_ += '[';
      out_ += name;
      out_ += ']';
    } else {
      out_ += name;
    }
    out_ += ":\n\n";
    out_ += width == 32 ? "Name                  Value   Class        Type         Size     Line  Section\n\n"
                        : "Name                  Value           Class        Type         Size             Line  "
                          "Section\n\n";
  }

  // nm's filters, then its order.
  std::vector<nm_row> select(const nm_listing& listing) const {
    std::vector<nm_row> rows;
    rows.reserve(listing.rows.size());
    for (const nm_row& r : listing.rows) {
      const bool und = r.section == nm_und;
      bool keep = true;
      if (o_.undefined_only) keep = und;
      else if (o_.external_only) keep = r.global || und || r.section == nm_com;
      if (keep && !o_.debug_syms && r.debugging) keep = false;
      if (keep && o_.size_sort && (und || r.section == nm_abs)) keep = false;
      if (keep && o_.defined_only && und) keep = false;
      if (keep) rows.push_back(r);
    }
    if (o_.no_sort) return rows;
    if (o_.size_sort) return by_size(std::move(rows), listing);
    if (o_.numeric_sort) {
      std::stable_sort(rows.begin(), rows.end(), [&](const nm_row& a, const nm_row& b) {
        return o_.reverse_sort ? numeric(b, a) < 0 : numeric(a, b) < 0;
      });
    } else {
      std::stable_sort(rows.begin(), rows.end(), [&](const nm_row& a, const nm_row& b) {
        return o_.reverse_sort ? by_name(b, a) < 0 : by_name(a, b) < 0;
      });
    }
    return rows;
  }

  int by_name(const nm_row& a, const nm_row& b) const {
    if (o_.use_strcoll) return std::strcoll(std::string(a.name).c_str(), std::string(b.name).c_str());
    const int c = a.name.compare(b.name);
    return c < 0 ? -1 : c > 0 ? 1 : 0;
  }
  int numeric(const nm_row& a, const nm_row& b) const {
    const bool au = a.section == nm_und, bu = b.section == nm_und;
    if (au != bu) return au ? -1 : 1;
    if (!au && a.value != b.value) return a.value < b.value ? -1 : 1;
    return by_name(a, b);
  }
  static u64 section_vma(const nm_row& r, const nm_listing& l) noexcept {
    return r.section >= 1 && r.section <= l.sections.size() ? l.sections[r.section - 1].vma : 0;
  }
  static bool looks_like_file(const nm_row& r) noexcept {
    const std::string_view n = r.name;
    return r.file || (n.size() > 2 && n[n.size() - 2] == '.' && (n.back() == 'o' || n.back() == 'a'));
  }
  // BFD keeps no symbol sizes for COFF: nm sorts by address, takes the
  // distance to the next symbol of the same section (or to the section's
  // end; a common symbol's value), drops the zero sizes and sorts by size.
  std::vector<nm_row> by_size(std::vector<nm_row> rows, const nm_listing& l) const {
    std::stable_sort(rows.begin(), rows.end(), [&](const nm_row& a, const nm_row& b) {
      if (a.value != b.value) return a.value < b.value;
      const u64 va = section_vma(a, l), vb = section_vma(b, l);
      if (va != vb) return va < vb;
      const bool ag = a.name.find("gnu_compiled") != std::string_view::npos ||
                      a.name.find("gcc2_compiled") != std::string_view::npos;
      const bool bg = b.name.find("gnu_compiled") != std::string_view::npos ||
                      b.name.find("gcc2_compiled") != std::string_view::npos;
      if (ag != bg) return ag;
      const bool af = looks_like_file(a), bf = looks_like_file(b);
      if (af != bf) return af;
      return by_name(a, b) < 0;
    });
    std::vector<nm_row> sized;
    for (std::size_t i = 0; i < rows.size(); ++i) {
      nm_row r = rows[i];
      u64 size = 0;
      if (r.section == nm_com) {
        size = r.value;
      } else if (i + 1 < rows.size() && rows[i + 1].section == r.section) {
        size = rows[i + 1].value - r.value;
      } else if (r.section >= 1 && r.section <= l.sections.size()) {
        const nm_section& s = l.sections[r.section - 1];
        size = s.vma + s.size - r.value;
      }
      if (size == 0) continue;
      r.size = size;
      sized.push_back(r);
    }
    std::stable_sort(sized.begin(), sized.end(), [&](const nm_row& a, const nm_row& b) {
      if (a.size != b.size) return o_.reverse_sort ? a.size > b.size : a.size < b.size;
      return o_.reverse_sort ? by_name(b, a) < 0 : by_name(a, b) < 0;
    });
    return sized;
  }

  void put_value(u64 v, int width, bool pad) {
    char buf[40];
    const int digits = !pad ? 0 : width == 32 ? 8 : 16;
    if (o_.radix == 10)
      std::snprintf(buf, sizeof buf, "%0*lld", digits, static_cast<long long>(v));
    else if (o_.radix == 8)
      std::snprintf(buf, sizeof buf, "%0*llo", digits, static_cast<unsigned long long>(v));
    else
      std::snprintf(buf, sizeof buf, "%0*llx", digits, static_cast<unsigned long long>(v));
    out_ += buf;
  }

  // nm -C through BFD: the target's leading '_' is skipped first (and comes
  // back only if nothing demangles), leading dots are kept aside.
  void put_name(std::string_view name, char leading) {
    if (!o_.demangle || name.empty()) {
      out_ += name;
      return;
    }
    std::string_view rest = name;
    if (leading != 0 && rest.front() == leading) rest.remove_prefix(1);
    std::size_t dots = 0;
    while (dots < rest.size() && (rest[dots] == '.' || rest[dots] == '$')) ++dots;
    const std::string_view core = rest.substr(dots);
    const std::string_view base = core.substr(0, core.find('@'));
    std::string d = symbols::demangle(base);
    if (d == base) {
      out_ += rest;  // BFD gives the name less its leading character back
      return;
    }
    out_ += rest.substr(0, dots);
    out_ += d;
    if (base.size() < core.size()) out_ += core.substr(base.size());
  }

  static std::string coff_type(const nm_row& r) {
    switch (r.storage_class) {
      case 100: return "Block";
      case storage_class::file: return "File";
      case storage_class::section: return "Line";
      default: break;
    }
    if (r.n_type == 0) return "None";
    switch ((r.n_type >> 4) & 3) {
      case 1: return "Pointer";
      case 2: return "Function";
      case 3: return "Array";
      default: break;
    }
    char buf[48];
    std::snprintf(buf, sizeof buf, "<unknown>: %d/%d", r.storage_class, r.n_type);
    return buf;
  }

  std::string_view section_name(const nm_row& r, const nm_listing& l) const {
    if (r.section == nm_und) return "*UND*";
    if (r.section == nm_abs) return "*ABS*";
    if (r.section == nm_com) return "*COM*";
    return l.sections[r.section - 1].name;
  }

  void print_row(const nm_row& r, const nm_listing& l, std::string_view archive, std::string_view name) {
    const int width = l.width;
    switch (o_.format) {
      case nm_format::just_symbols:
        put_name(r.name, l.leading_char);
        break;
      case nm_format::posix:
        if (o_.print_file_name) {
          if (!archive.empty()) {
            out_ += archive;
            out_ += '[';
            out_ += name;
            out_ += "]: ";
          } else {
            out_ += name;
            out_ += ": ";
          }
        }
        put_name(r.name, l.leading_char);
        out_ += ' ';
        out_ += r.type;
        out_ += ' ';
        if (r.undefined()) {
          out_.append(8, ' ');
        } else {
          put_value(r.value, width, false);
          out_ += ' ';
          if (r.size != 0) put_value(r.size, width, false);
        }
        break;
      case nm_format::sysv: {
        prefix(archive, name);
        const std::size_t start = out_.size();
        put_name(r.name, l.leading_char);
        const std::size_t len = out_.size() - start;
        if (len < 20) out_.append(20 - len, ' ');
        out_ += '|';
        if (r.undefined()) out_.append(width == 32 ? 8 : 16, ' ');
        else put_value(r.value, width, true);
        out_ += "|   ";
        out_ += r.type;
        out_ += "  |";
        const std::string t = r.native ? coff_type(r) : std::string();
        if (t.size() < 18) out_.append(18 - t.size(), ' ');
        out_ += t;
        out_ += '|';
        if (r.size != 0) put_value(r.size, width, true);
        else out_.append(width == 32 ? 8 : 16, ' ');
        out_ += "|     |";
        out_ += section_name(r, l);
        break;
      }
      case nm_format::bsd:
        prefix(archive, name);
        if (r.undefined()) {
          out_.append(width == 32 ? 8 : 16, ' ');
        } else {
          put_value(o_.size_sort && !o_.print_size ? r.size : r.value, width, true);
          if (o_.print_size && r.size != 0) {
            out_ += ' ';
            put_value(r.size, width, true);
          }
        }
        out_ += ' ';
        out_ += r.type;
        out_ += ' ';
        put_name(r.name, l.leading_char);
        break;
    }
    out_ += '\n';
  }

  void prefix(std::string_view archive, std::string_view name) {
    if (!o_.print_file_name) return;
    if (!archive.empty()) {
      out_ += archive;
      out_ += ':';
    }
    out_ += name;
    out_ += ':';
  }

  const nm_options& o_;
  std::string& out_;
  std::vector<nm_problem>* problems_;
  std::vector<nm_object>* objects_;
};

}  // namespace detail

LINKSCOPE_FUNC bool is_nm_coff(byte_view bytes) noexcept {
  if (bytes.size() < 20) return false;
  const unsigned char* p = bytes.data();
  const u16 first = load<u16, std::endian::little>(p);
  if (first == 0 && load<u16, std::endian::little>(p + 2) == 0xffff) {
    const u16 version = load<u16, std::endian::little>(p + 4);
    const u16 m = load<u16, std::endian::little>(p + 6);
    if (version == 0) return detail::nm_machine(m);
    return is_bigobj(bytes) && m == machine::amd64;
  }
  if (p[0] == 'M' && p[1] == 'Z') {
    if (!pe::image::is_pe(bytes)) return false;
    const u64 pe_offset = load<u32, std::endian::little>(p + 0x3c);
    if (!bytes.contains(pe_offset + 4, 2)) return false;
    const u16 m = load<u16, std::endian::little>(p + pe_offset + 4);
    return detail::nm_machine(m) || m == machine::ia64;
  }
  // A plain object: its machine, and an optional header no larger than
  // PE32+'s 240 bytes (BFD's coff_object_p refuses a larger f_opthdr as the
  // wrong format), so text that happens to start with a machine's two bytes
  // is not taken for COFF.
  return detail::nm_machine(first) && load<u16, std::endian::little>(p + 16) <= 240;
}

LINKSCOPE_FUNC bool is_coff_archive(byte_view bytes) {
  return ar::first_member_is(bytes, [](byte_view member) { return is_nm_coff(member); });
}

#if defined(__GNUC__)
__attribute__((cold))
#endif
LINKSCOPE_FUNC result<void> nm_file(byte_view bytes, std::string_view display, const nm_options& options,
                                    std::string& out, std::vector<nm_problem>* problems) {
  detail::nm_lister lister(options, out, problems);
  return lister.file(bytes, display);
}

#if defined(__GNUC__)
__attribute__((cold))
#endif
LINKSCOPE_FUNC result<void> nm_file_objects(byte_view bytes, std::string_view display, const nm_options& options,
                                            std::vector<nm_object>& objects, std::vector<nm_problem>* problems) {
  std::string unused;
  detail::nm_lister lister(options, unused, problems, &objects);
  return lister.file(bytes, display);
}
#endif  // LINKSCOPE_DEFINITIONS

}  // namespace coff
}  // namespace v0
}  // namespace linkscope
