// linkscope/macho/nm.hpp — a Mach-O symbol listing as llvm-nm prints it.
//
// llvm-nm is what nm is on macOS, so it is the oracle for Mach-O (checked
// against llvm-nm-14, flag by flag). Each nlist entry of LC_SYMTAB is one
// row; stabs (N_STAB) only with -a. A row carries llvm-nm's type letter:
//   U  N_UNDF|N_EXT, n_value 0        C  N_UNDF|N_EXT, n_value != 0 (common)
//   a  (N_TYPE) N_ABS                  i  N_INDR
//   t  (__TEXT,__text)  d (__DATA,__data)  b (__DATA,__bss)  s other section
//   -  a stab;  ?  anything else (a local N_UNDF, N_PBUD)
// upper case when N_EXT is set. The value is n_value (a common's size).
//
// Order (llvm-nm): by (name, address) bytewise; -n by (defined, address,
// name) with the undefined first; -r reverses the comparison; -p keeps the
// symbol table order. llvm-nm sorts with std::sort, which is not stable, so
// rows whose keys are equal come out in the order libstdc++'s std::sort
// leaves them — that is what this uses too, over the same input order.
//
// Formats: bsd ("VALUE T NAME", 16 hex digits in a 64-bit image, 8 in a
// 32-bit one, blanks for an undefined symbol or an external N_INDR, which
// also gets " (indirect for NAME)"; -S adds a size column that is always
// zero on Mach-O; a stab shows " NSECT NDESC TYPE"), posix ("NAME T VALUE 0",
// no padding), just-symbols (-j, and -u outside -m/-P: names only) and
// darwin (-m): "(SEG,SECT) | (undefined) | (absolute) | (indirect) |
// (common) (alignment 2^N)", then [referenced dynamically], then external /
// weak external / weak private external / private external / non-external
// (was a private external) ..., in an MH_OBJECT [no dead strip], [symbol
// resolver], [alt entry], [cold func], then [Thumb]; the name; for an
// import of a two-level-namespace image (MH_TWOLEVEL) "(from LIBRARY)",
// "(from executable)" or "(dynamically looked up)".
//
// Containers: a universal file lists the slices named by `archs`; with none,
// the host's slice alone (no header), or else every slice after a
// "\nFILE (for architecture ARCH):\n" header. A darwin archive ("!<arch>\n",
// __.SYMDEF, #1/N names) lists each Mach-O member after "\nARCHIVE(MEMBER):\n";
// --print-armap first prints "Archive map\n", "SYMBOL in MEMBER" lines and a
// blank line. -A prefixes every row with "FILE: ", "ARCHIVE:MEMBER: " (posix:
// "ARCHIVE[MEMBER]: ") and "(for architecture ARCH):" for a slice.
// -D: a Mach-O file has no dynamic symbol table; llvm-nm says so for each
// object (an error) and lists nothing.
#pragma once

#include <algorithm>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "linkscope/ar/archive.hpp"
#include "linkscope/ar/armap.hpp"
#include "linkscope/core/bytes.hpp"
#include "linkscope/core/config.hpp"
#include "linkscope/core/error.hpp"
#include "linkscope/macho/fat.hpp"
#include "linkscope/macho/file.hpp"
#include "linkscope/macho/symbols.hpp"
#include "linkscope/symbols/demangle.hpp"

namespace linkscope {
inline namespace v0 {
namespace macho {

enum class nm_format : u8 { bsd, posix, darwin, just_symbols };

struct nm_options {
  nm_format format = nm_format::bsd;  // -P posix, -m darwin, -j just-symbols
  bool darwin_format = false;         // -m (the same as format = darwin)
  bool undefined_only = false;        // -u
  bool external_only = false;         // -g
  bool defined_only = false;          // --defined-only
  bool debug_syms = false;            // -a: stabs too
  bool no_sort = false;               // -p
  bool numeric_sort = false;          // -n
  bool reverse_sort = false;          // -r
  bool print_file_name = false;       // -A, -o
  bool print_size = false;            // -S (always zero on Mach-O)
  bool demangle = false;              // -C: the name less its leading '_', if it demangles
  bool print_armap = false;           // --print-armap
  bool dynamic = false;               // -D
  bool multiple_files = false;        // more than one file given: "\nFILE:\n" before a thin file
  std::string_view arch;              // --arch: "", "all" or an architecture name ...
  std::vector<std::string_view> archs;  // ... or several (--arch given more than once, or A,B)
  std::string_view host_arch = "x86_64";
};

// Something llvm-nm reports on stderr for one object while it goes on with
// the others: `where` names the object as llvm-nm does ("FILE", "MEMBER").
struct nm_problem {
  std::string where;
  error what;
};

// One listed object for --json (linkscope-nm's keys, as for ELF): the rows
// that the text listing prints, in its order, names as stored.
struct nm_json_symbol {
  std::string_view name;
  char type = '?';
  bool defined = false;
  u64 value = 0;
};
struct nm_object {
  std::string file;    // the path given
  std::string member;  // the archive member, or empty
  std::string arch;    // the slice of a universal file (even the host slice listed alone), or empty
  int bits = 64;
  std::vector<nm_json_symbol> symbols;
};

// Does this archive hold Mach-O members (its first regular member is one)?
bool is_macho_archive(byte_view bytes);

// The listing of a thin or universal file, or of a darwin archive of Mach-O
// objects; `display` names it in headers. Problems llvm-nm reports while it
// goes on (-D, an --arch the file lacks) go to `problems` when given; a
// malformed file is the error.
// (Compiled once in src/ in compiled mode, core/config.hpp.)
result<void> nm_file(byte_view bytes, std::string_view display, const nm_options& options, std::string& out,
                     std::vector<nm_problem>* problems = nullptr);

// The same objects and rows as data (--json): one nm_object per listed
// image (a thin file, a slice, an archive member); the text-only options
// (format, -A, -S, -C) do not apply.
result<void> nm_file_objects(byte_view bytes, std::string_view display, const nm_options& options,
                             std::vector<nm_object>& objects, std::vector<nm_problem>* problems = nullptr);

#if LINKSCOPE_DEFINITIONS
// What follows is the implementation: compiled mode parses it only in src/.
namespace detail {
inline void append_hex(std::string& out, u64 value, int digits) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "%0*llx", digits, static_cast<unsigned long long>(value));
  out += buf;
}

// How one object is named in its rows and labels.
struct nm_context {
  std::string_view archive;       // the archive's path, or empty
  std::string_view architecture;  // a slice's arch when it is named, or empty
  std::string_view filename;      // the file's path, or the member's name
  std::string_view slice;         // the slice's arch in a universal file, named or not (--json)
};

// One row of the listing (llvm-nm's NMSymbol).
struct nm_row {
  std::string_view name;
  std::string_view indirect_name;
  u64 address = 0;
  char type = '?';
  bool undefined = false;  // N_UNDF|N_EXT with n_value 0
  bool global = false;     // N_EXT
  u8 n_type = 0;
  u8 n_sect = 0;
  u16 n_desc = 0;
};

inline char nm_letter(const nlist_entry& e, const std::vector<section_info>& sections, u32 filetype) noexcept {
  const bool global = e.is_external();
  const u8 type = e.type();
  if (global && type == N_UNDF) return e.value != 0 ? 'C' : 'U';
  char c = '?';
  if (type == N_ABS) {
    c = 'a';
  } else if (e.is_stab()) {
    c = '-';
  } else if (type == N_INDR) {
    c = 'i';
  } else if (type == N_SECT) {
    c = 's';
    if (e.n_sect >= 1 && e.n_sect <= sections.size()) {
      const auto& s = sections[e.n_sect - 1u];
      if ((s.segment == "__TEXT" && s.name == "__text") ||
          (filetype == MH_KEXT_BUNDLE && s.segment == "__TEXT_EXEC" && s.name == "__text"))
        c = 't';
      else if (s.segment == "__DATA" && s.name == "__data")
        c = 'd';
      else if (s.segment == "__DATA" && s.name == "__bss")
        c = 'b';
    }
  }
  if (global && c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  return c;
}

inline const char* stab_name(u8 n_type) noexcept {
  switch (n_type) {
    case 0x20: return "GSYM";
    case 0x22: return "FNAME";
    case 0x24: return "FUN";
    case 0x26: return "STSYM";
    case 0x28: return "LCSYM";
    case 0x2e: return "BNSYM";
    case 0x30: return "PC";
    case 0x32: return "AST";
    case 0x3c: return "OPT";
    case 0x40: return "RSYM";
    case 0x44: return "SLINE";
    case 0x4e: return "ENSYM";
    case 0x60: return "SSYM";
    case 0x64: return "SO";
    case 0x66: return "OSO";
    case 0x80: return "LSYM";
    case 0x82: return "BINCL";
    case 0x84: return "SOL";
    case 0x86: return "PARAM";
    case 0x88: return "VERS";
    case 0x8a: return "OLEV";
    case 0xa0: return "PSYM";
    case 0xa2: return "EINCL";
    case 0xa4: return "ENTRY";
    case 0xc0: return "LBRAC";
    case 0xc2: return "EXCL";
    case 0xe0: return "RBRAC";
    case 0xe2: return "BCOMM";
    case 0xe4: return "ECOMM";
    case 0xe8: return "ECOML";
    case 0xfe: return "LENG";
    default: return nullptr;
  }
}

inline void append_file_name(std::string& out, const nm_options& o, const nm_context& ctx) {
  if (!ctx.architecture.empty()) {
    out += "(for architecture ";
    out += ctx.architecture;
    out += "):";
  }
  if (o.format == nm_format::posix && !ctx.archive.empty()) {
    out += ctx.archive;
    out += '[';
    out += ctx.filename;
    out += "]: ";
  } else {
    if (!ctx.archive.empty()) {
      out += ctx.archive;
      out += ':';
    }
    out += ctx.filename;
    out += ": ";
  }
}

inline void append_label(std::string& out, const nm_context& ctx) {
  out += '\n';
  if (ctx.archive.empty()) {
    out += ctx.filename;
  } else {
    out += ctx.archive;
    out += '(';
    out += ctx.filename;
    out += ')';
  }
  if (!ctx.architecture.empty()) {
    out += " (for architecture ";
    out += ctx.architecture;
    out += ')';
  }
  out += ":\n";
}

// The darwin (-m) form of one row after its address column.
inline void append_darwin(std::string& out, const nm_row& r, const std::vector<section_info>& sections, u32 filetype,
                          u32 flags, const std::vector<dylib_ref>& dylibs, std::string_view name) {
  const u8 type = r.n_type & N_TYPE;
  const u16 desc = r.n_desc;
  switch (type) {
    case N_UNDF:
      if (r.address != 0) {
        out += "(common) ";
        const unsigned align = (desc >> 8) & 0x0f;
        if (align != 0) out += "(alignment 2^" + std::to_string(align) + ") ";
      } else {
        switch (desc & REFERENCE_TYPE) {
          case 1: out += "(undefined [lazy bound]) "; break;   // REFERENCE_FLAG_UNDEFINED_LAZY
          case 5: out += "(undefined [private lazy bound]) "; break;  // ..._PRIVATE_UNDEFINED_LAZY
          case 4: out += "(undefined [private]) "; break;      // ..._PRIVATE_UNDEFINED_NON_LAZY
          default: out += "(undefined) "; break;
        }
      }
      break;
    case N_ABS: out += "(absolute) "; break;
    case N_INDR: out += "(indirect) "; break;
    case N_SECT:
      if (r.n_sect >= 1 && r.n_sect <= sections.size()) {
        const auto& s = sections[r.n_sect - 1u];
        out += '(';
        out += s.segment;
        out += ',';
        out += s.name;
        out += ") ";
      } else {
        out += "(?,?) ";
      }
      break;
    default: out += "(?) "; break;
  }
  if (r.n_type & N_EXT) {
    if (desc & REFERENCED_DYNAMICALLY) out += "[referenced dynamically] ";
    if (r.n_type & N_PEXT) {
      out += (desc & N_WEAK_DEF) ? "weak private external " : "private external ";
    } else if (desc & (N_WEAK_REF | N_WEAK_DEF)) {
      out += (desc & (N_WEAK_REF | N_WEAK_DEF)) == (N_WEAK_REF | N_WEAK_DEF) ? "weak external automatically hidden "
                                                                            : "weak external ";
    } else {
      out += "external ";
    }
  } else {
    out += (r.n_type & N_PEXT) ? "non-external (was a private external) " : "non-external ";
  }
  if (filetype == MH_OBJECT) {
    if (desc & N_NO_DEAD_STRIP) out += "[no dead strip] ";
    if (type != N_UNDF && (desc & N_SYMBOL_RESOLVER)) out += "[symbol resolver] ";
    if (type != N_UNDF && (desc & N_ALT_ENTRY)) out += "[alt entry] ";
    if (type != N_UNDF && (desc & N_COLD_FUNC)) out += "[cold func] ";
  }
  if (desc & N_ARM_THUMB_DEF) out += "[Thumb] ";
  out += name;
  if (type == N_INDR) {
    out += " (for ";
    out += r.indirect_name;
    out += ')';
  }
  if ((flags & MH_TWOLEVEL) && ((type == N_UNDF && r.address == 0) || type == N_PBUD)) {
    const unsigned ordinal = desc >> 8;
    if (ordinal == EXECUTABLE_ORDINAL) {
      out += " (from executable)";
    } else if (ordinal == DYNAMIC_LOOKUP_ORDINAL) {
      out += " (dynamically looked up)";
    } else if (ordinal != 0) {
      if (ordinal <= dylibs.size()) {
        const std::string_view install = dylibs[ordinal - 1].name;
        const std::string_view shortname = library_short_name(install);
        out += " (from ";
        out += shortname.empty() ? install : shortname;
        out += ')';
      } else {
        out += " (from bad library ordinal " + std::to_string(ordinal) + ")";
      }
    }
  }
}

// The listing of one thin image, appended to `out`. `print_name`: the
// "\nFILE:\n" header of a thin file among several.
template <class MT>
result<void> nm_rows(const file<MT>& f, const nm_options& o, const std::vector<section_info>& sections,
                     std::vector<nm_row>& rows) {
  const u32 filetype = f.filetype();
  auto walked = for_each_nlist(f, [&](const nlist_entry& e) {
    if (e.is_stab() && !o.debug_syms) return true;
    nm_row r;
    r.name = e.name;
    r.indirect_name = e.indirect_name;
    r.address = e.value;
    r.type = nm_letter(e, sections, filetype);
    r.global = e.is_external();
    r.undefined = r.global && e.type() == N_UNDF && e.value == 0;
    r.n_type = e.n_type;
    r.n_sect = e.n_sect;
    r.n_desc = e.n_desc;
    rows.push_back(r);
    return true;
  });
  if (!walked) return walked.error();

  if (!o.no_sort) {
    auto by_name = [](const nm_row& a, const nm_row& b) {
      // (name, size, address); the size is always zero on Mach-O.
      if (a.name != b.name) return a.name < b.name;
      return a.address < b.address;
    };
    auto by_address = [](const nm_row& a, const nm_row& b) {
      // (defined, address, name, size)
      if (a.undefined != b.undefined) return a.undefined;
      if (a.address != b.address) return a.address < b.address;
      return a.name < b.name;
    };
    if (o.numeric_sort) {
      if (o.reverse_sort)
        std::sort(rows.begin(), rows.end(), [&](const nm_row& a, const nm_row& b) { return by_address(b, a); });
      else
        std::sort(rows.begin(), rows.end(), by_address);
    } else {
      if (o.reverse_sort)
        std::sort(rows.begin(), rows.end(), [&](const nm_row& a, const nm_row& b) { return by_name(b, a); });
      else
        std::sort(rows.begin(), rows.end(), by_name);
    }
  }
  return ok();
}

inline bool nm_listed(const nm_row& r, const nm_options& o) noexcept {
  return !((!r.undefined && o.undefined_only) || (r.undefined && o.defined_only) || (!r.global && o.external_only));
}

template <class MT>
result<void> nm_image_json(const file<MT>& f, const nm_options& o, const nm_context& ctx, std::string_view path,
                           std::vector<nm_object>& objects) {
  LINKSCOPE_TRY(sections, section_infos(f));
  std::vector<nm_row> rows;
  LINKSCOPE_CHECK(nm_rows(f, o, sections, rows));
  nm_object object;
  object.file = std::string(path);
  if (!ctx.archive.empty()) object.member = std::string(ctx.filename);
  object.arch = std::string(ctx.slice);
  object.bits = MT::is64 ? 64 : 32;
  for (const nm_row& r : rows)
    if (nm_listed(r, o)) object.symbols.push_back({r.name, r.type, r.type != 'U', r.address});
  objects.push_back(std::move(object));
  return ok();
}

template <class MT>
result<void> nm_image(const file<MT>& f, const nm_options& o, const nm_context& ctx, bool print_name,
                      std::string& out) {
  LINKSCOPE_TRY(sections, section_infos(f));
  LINKSCOPE_TRY(dylibs, f.dylibs());
  const u32 filetype = f.filetype();
  const int digits = MT::is64 ? 16 : 8;
  std::vector<nm_row> rows;
  LINKSCOPE_CHECK(nm_rows(f, o, sections, rows));

  if (print_name && !o.print_file_name && o.format != nm_format::darwin) {
    out += '\n';
    out += ctx.filename;
    out += ":\n";
  }
  const std::string blanks(static_cast<std::size_t>(digits), ' ');
  std::string demangled;
  for (const nm_row& r : rows) {
    if (!nm_listed(r, o)) continue;
    std::string_view name = r.name;
    if (o.demangle && o.format != nm_format::darwin && name.size() >= 3 && name[0] == '_') {
      // llvm-nm drops the leading '_' of a Mach-O name, then demangles an
      // Itanium (_Z, ___Z) or Rust v0 (_R) name; anything else stays as it is.
      const std::string_view bare = name.substr(1);
      if (bare.substr(0, 2) == "_Z" || bare.substr(0, 4) == "___Z") {
        demangled = symbols::demangle(bare);
        if (demangled != bare) name = demangled;
      } else if (bare.substr(0, 2) == "_R") {
        if (auto rust = symbols::demangle_rust(bare)) {
          demangled = std::move(*rust);
          name = demangled;
        }
      }
    }
    if (o.print_file_name) append_file_name(out, o, ctx);
    if ((o.format == nm_format::just_symbols || (o.undefined_only && o.format != nm_format::darwin)) &&
        o.format != nm_format::posix) {
      out += name;
      out += '\n';
      continue;
    }
    const bool defined = r.type != 'U';
    std::string address;
    if (!defined) {
      if (o.format == nm_format::posix)
        address = "0";  // llvm-nm prints the value, 0, unpadded
      else
        address = blanks;
    } else if (r.type == 'I') {
      address = blanks;
    } else if (o.format == nm_format::posix) {
      char buf[24];
      std::snprintf(buf, sizeof buf, "%llx", static_cast<unsigned long long>(r.address));
      address = buf;
    } else {
      append_hex(address, r.address, digits);
    }
    if (o.format == nm_format::darwin) {
      if ((r.n_type & N_TYPE) == N_INDR) address = blanks;
      out += address;
      out += ' ';
      append_darwin(out, r, sections, filetype, f.flags(), dylibs, r.name);  // -m does not demangle
      out += '\n';
      continue;
    }
    if (o.format == nm_format::posix) {
      out += name;
      out += ' ';
      out += r.type;
      out += ' ';
      out += address;
      out += " 0\n";
      continue;
    }
    out += address;
    out += ' ';
    if (o.print_size) {
      if (defined)
        out.append(static_cast<std::size_t>(digits), '0');
      else
        out += blanks;
      out += ' ';
    }
    out += r.type;
    if (r.type == '-') {
      char buf[32];
      std::snprintf(buf, sizeof buf, " %02x %04x ", r.n_sect, r.n_desc);
      out += buf;
      if (const char* stab = stab_name(r.n_type)) {
        std::snprintf(buf, sizeof buf, "%5.5s", stab);
      } else {
        std::snprintf(buf, sizeof buf, "   %02x", r.n_type);
      }
      out += buf;
    }
    out += ' ';
    out += name;
    if (r.type == 'I') {
      out += " (indirect for ";
      out += r.indirect_name;
      out += ')';
    }
    out += '\n';
  }
  return ok();
}

inline nm_options normalized(const nm_options& options) {
  nm_options o = options;
  if (o.darwin_format) o.format = nm_format::darwin;
  if (!o.arch.empty()) o.archs.insert(o.archs.begin(), o.arch);
  return o;
}

inline bool arch_all(const nm_options& o) {
  return std::find(o.archs.begin(), o.archs.end(), std::string_view("all")) != o.archs.end();
}

// The arch names asked for, "all" left out.
inline std::vector<std::string_view> arch_flags(const nm_options& o) {
  std::vector<std::string_view> out;
  for (auto a : o.archs)
    if (a != "all") out.push_back(a);
  return out;
}

class nm_lister {
 public:
  nm_lister(const nm_options& o, std::string& out, std::vector<nm_problem>* problems,
            std::vector<nm_object>* objects = nullptr, std::string_view path = {})
      : o_(o), out_(out), problems_(problems), objects_(objects), path_(path) {}

  // One thin object: -D's "no dynamic symbol table" is a problem, not an error.
  result<void> object(byte_view image, const nm_context& ctx, bool print_label, bool print_name,
                      std::string_view problem_name) {
    if (print_label) append_label(out_, ctx);
    if (o_.dynamic) {
      problem(problem_name, error{errc::unsupported, no_offset, "File format has no dynamic symbol table"});
      return ok();
    }
    return visit_macho(image, [&](const auto& f) -> result<void> {
      if (objects_) return nm_image_json(f, o_, ctx, path_, *objects_);
      return nm_image(f, o_, ctx, print_name, out_);
    });
  }

  // A thin file's architecture against --arch (llvm-nm's checkMachOAndArchFlags).
  bool arch_matches(byte_view image) const {
    const auto flags = arch_flags(o_);
    if (arch_all(o_) || flags.empty()) return true;
    const std::string_view arch =
        visit_macho(image, [](const auto& f) -> result<std::string_view> {
          return std::string_view(arch_name(f.cputype(), f.cpusubtype()));
        }).value_or(std::string_view());
    return std::find(flags.begin(), flags.end(), arch) != flags.end();
  }

  result<void> archive(byte_view bytes, std::string_view display, std::string_view architecture, bool print_label,
                       bool armap, std::string_view slice_arch = {}) {
    LINKSCOPE_TRY(a, ar::archive::open(bytes));
    if (armap && o_.print_armap) {
      LINKSCOPE_TRY(map, ar::armap::read(a));
      if (!map.empty()) {
        std::string text = "Archive map\n";
        std::string_view last_name;
        u64 last_offset = ~u64{0};
        LINKSCOPE_CHECK(map.for_each([&](const ar::armap_entry& e) {
          if (e.member_offset != last_offset) {
            auto m = a.member_at(e.member_offset);
            last_name = m ? m->name : std::string_view();
            last_offset = e.member_offset;
          }
          text += e.name;
          text += " in ";
          text += last_name;
          text += '\n';
        }));
        out_ += text;
        out_ += '\n';
      }
    }
    result<void> failed = ok();
    LINKSCOPE_CHECK(a.for_each_member([&](const ar::member& m) -> bool {
      if (m.external || !(is_macho(m.data))) return true;  // llvm-nm skips what is not an object
      if (!arch_matches(m.data)) {
        problem(display, error{errc::not_found, no_offset, "No architecture specified"});
        return false;
      }
      nm_context ctx{display, architecture, m.name, slice_arch};
      auto r = object(m.data, ctx, print_label, false, m.name);
      if (!r) {
        failed = r.error();
        return false;
      }
      return true;
    }));
    return failed;
  }

  // One slice of a universal file: an image or an archive.
  result<void> slice(const fat_slice& s, std::string_view display, std::string_view architecture, bool print_label) {
    // An archive in a slice labels its members unless -A (in every case).
    const std::string_view slice_arch = arch_name(s.cputype, s.cpusubtype);
    if (ar::archive::is_archive(s.bytes))
      return archive(s.bytes, display, architecture, !o_.print_file_name, false, slice_arch);
    nm_context ctx{{}, architecture, display, slice_arch};
    return object(s.bytes, ctx, print_label, false, display);
  }

  result<void> file(byte_view bytes, std::string_view display) {
    if (ar::archive::is_archive(bytes)) return archive(bytes, display, {}, !o_.print_file_name, true);
    if (!is_fat(bytes)) {
      if (!arch_matches(bytes)) {
        problem(display, error{errc::not_found, no_offset, "No architecture specified"});
        return ok();
      }
      nm_context ctx{{}, {}, display, {}};
      return object(bytes, ctx, false, o_.multiple_files, display);
    }
    LINKSCOPE_TRY(fat, fat_file::open(bytes));
    const auto flags = arch_flags(o_);
    if (!arch_all(o_) && !flags.empty()) {
      for (std::string_view wanted : flags) {
        bool found = false;
        for (const auto& s : fat.slices()) {
          if (wanted != arch_name(s.cputype, s.cpusubtype)) continue;
          found = true;
          const bool several = flags.size() > 1;
          LINKSCOPE_CHECK(slice(s, display, several ? wanted : std::string_view(), several && !o_.print_file_name));
        }
        if (!found) {
          problem(display, error{errc::not_found, no_offset, "the file does not contain the architecture given by --arch"});
          return ok();
        }
      }
      return ok();
    }
    if (!arch_all(o_)) {
      for (const auto& s : fat.slices())
        if (o_.host_arch == arch_name(s.cputype, s.cpusubtype)) return slice(s, display, {}, false);
    }
    const bool several = fat.slices().size() > 1;
    for (const auto& s : fat.slices()) {
      const std::string_view arch = several ? std::string_view(arch_name(s.cputype, s.cpusubtype)) : std::string_view();
      LINKSCOPE_CHECK(slice(s, display, arch, !o_.print_file_name));
    }
    return ok();
  }

 private:
  void problem(std::string_view where, error what) {
    if (problems_) problems_->push_back({std::string(where), what});
  }

  const nm_options& o_;
  std::string& out_;
  std::vector<nm_problem>* problems_;
  std::vector<nm_object>* objects_;
  std::string_view path_;
};
}  // namespace detail

// Cold: a program that lists ELF too (linkscope-nm) keeps its ELF listing
// inlined as before (callgrind on nm -D libtorch_cpu: +2.7% without it).
#if defined(__GNUC__)
__attribute__((cold))
#endif
LINKSCOPE_FUNC result<void> nm_file(byte_view bytes, std::string_view display, const nm_options& options,
                                    std::string& out, std::vector<nm_problem>* problems) {
  const nm_options o = detail::normalized(options);
  detail::nm_lister lister(o, out, problems);
  return lister.file(bytes, display);
}

#if defined(__GNUC__)
__attribute__((cold))
#endif
LINKSCOPE_FUNC result<void> nm_file_objects(byte_view bytes, std::string_view display, const nm_options& options,
                                            std::vector<nm_object>& objects, std::vector<nm_problem>* problems) {
  nm_options o = detail::normalized(options);
  o.print_armap = false;
  std::string unused;
  detail::nm_lister lister(o, unused, problems, &objects, display);
  return lister.file(bytes, display);
}

LINKSCOPE_FUNC bool is_macho_archive(byte_view bytes) {
  return ar::first_member_is(bytes, [](byte_view member) { return is_macho(member); });
}
#endif  // LINKSCOPE_DEFINITIONS

}  // namespace macho
}  // namespace v0
}  // namespace linkscope
