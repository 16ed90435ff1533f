// linkscope/macho/nm.hpp — a Mach-O symbol listing as llvm-nm prints it.
//
// llvm-nm is what nm is on macOS, so it is the oracle for Mach-O. For each
// nlist symbol that is not a stab it prints the value (16 hex digits in a
// 64-bit image, 8 in a 32-bit one; blanks for an undefined symbol), the type
// letter (symbols.hpp: nm_type_char) and the name, sorted by name (then by
// value). `-m` (darwin_format) spells the type out instead:
//   (SEG,SECT) | (undefined) | (absolute) | (indirect) | (prebound undefined)
//   | (common) (alignment 2^N), then [referenced dynamically], then
//   external / weak external / private external / non-external /
//   non-external (was a private external), the name, and for an import of a
//   two-level-namespace image "(from LIBRARY)", "(from executable)" or
//   "(dynamically looked up)".
// `-u` prints only the names of the undefined symbols; `-g` only the
// external ones; `--defined-only` leaves the undefined out.
//
// A universal file lists one slice: the one named by `arch`, the host's
// (x86_64 here) when `arch` is empty and it has one — with no header, as
// llvm-nm 14 does — or, for "all" or a file without the host's slice, every
// slice after a "\nFILE (for architecture ARCH):\n" header.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "linkscope/core/bytes.hpp"
#include "linkscope/core/config.hpp"
#include "linkscope/core/error.hpp"
#include "linkscope/macho/fat.hpp"
#include "linkscope/macho/file.hpp"
#include "linkscope/macho/symbols.hpp"

namespace linkscope {
inline namespace v0 {
namespace macho {

struct nm_options {
  bool darwin_format = false;   // -m
  bool undefined_only = false;  // -u
  bool external_only = false;   // -g
  bool defined_only = false;    // --defined-only
  std::string_view arch;        // --arch: "", "all" or an architecture name
  std::string_view host_arch = "x86_64";
};

namespace detail {
inline void append_hex(std::string& out, u64 value, int digits) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "%0*llx", digits, static_cast<unsigned long long>(value));
  out += buf;
}
}  // namespace detail

// The listing of one thin image, appended to `out`.
template <class MT>
result<void> nm_image(const file<MT>& f, const nm_options& options, std::string& out) {
  LINKSCOPE_TRY(sections, section_infos(f));
  LINKSCOPE_TRY(dylibs, f.dylibs());
  const bool linked = f.filetype() != MH_OBJECT;
  const int digits = MT::is64 ? 16 : 8;
  struct row {
    std::string_view name;
    u64 value;
    std::string text;
  };
  std::vector<row> rows;
  auto r = for_each_nlist(f, [&](const nlist_entry& e) {
    if (e.is_stab()) return true;
    const symbol s = to_symbol(e, sections, f.is_two_level(), linked);
    if (options.undefined_only && s.defined) return true;
    if (options.defined_only && !s.defined) return true;
    if (options.external_only && !e.is_external()) return true;
    row rw{s.name, s.value, {}};
    std::string& t = rw.text;
    if (options.undefined_only) {
      t.assign(s.name);
    } else {
      if (!s.defined)
        t.assign(static_cast<std::size_t>(digits), ' ');
      else
        detail::append_hex(t, s.kind == symbol_kind::common ? s.size : s.value, digits);
      t += ' ';
      if (!options.darwin_format) {
        t += nm_type_char(e, sections);
        t += ' ';
      } else {
        if (s.kind == symbol_kind::common) {
          t += "(common) ";
          if (s.value > 1) t += "(alignment 2^" + std::to_string(std::countr_zero(s.value)) + ") ";
        } else if (e.type() == N_PBUD) {
          t += "(prebound undefined) ";
        } else if (!s.defined) {
          t += "(undefined) ";
        } else if (e.type() == N_ABS) {
          t += "(absolute) ";
        } else if (e.type() == N_INDR) {
          t += "(indirect) ";
        } else if (e.n_sect >= 1 && e.n_sect <= sections.size()) {
          const auto& sec = sections[e.n_sect - 1u];
          t += '(';
          t += sec.segment;
          t += ',';
          t += sec.name;
          t += ") ";
        } else {
          t += "(?,?) ";
        }
        if (e.is_external()) {
          if (e.referenced_dynamically()) t += "[referenced dynamically] ";
          if (e.is_private_external())
            t += "private external ";
          else
            t += s.bind == binding::weak ? "weak external " : "external ";
        } else {
          t += e.is_private_external() ? "non-external (was a private external) " : "non-external ";
        }
      }
      t += s.name;
      if (options.darwin_format && !s.defined && s.library_ordinal != 0) {
        if (s.library_ordinal > 0 && static_cast<std::size_t>(s.library_ordinal) <= dylibs.size()) {
          t += " (from ";
          t += library_short_name(dylibs[static_cast<std::size_t>(s.library_ordinal) - 1].name);
          t += ')';
        } else if (s.library_ordinal == library_ordinal_executable) {
          t += " (from executable)";
        } else if (s.library_ordinal == library_ordinal_flat_lookup) {
          t += " (dynamically looked up)";
        }
      }
    }
    rows.push_back(std::move(rw));
    return true;
  });
  if (!r) return r.error();
  std::stable_sort(rows.begin(), rows.end(),
                   [](const row& a, const row& b) { return a.name != b.name ? a.name < b.name : a.value < b.value; });
  for (const auto& rw : rows) {
    out += rw.text;
    out += '\n';
  }
  return ok();
}

// The listing of a thin or universal file; `display` names it in slice headers.
// (Compiled once in src/ in compiled mode, core/config.hpp.)
result<void> nm_file(byte_view bytes, std::string_view display, const nm_options& options, std::string& out);

#if LINKSCOPE_DEFINITIONS
LINKSCOPE_FUNC result<void> nm_file(byte_view bytes, std::string_view display, const nm_options& options,
                                    std::string& out) {
  auto list_thin = [&](byte_view image) -> result<void> {
    return visit_macho(image, [&](const auto& f) -> result<void> { return nm_image(f, options, out); });
  };
  if (!is_fat(bytes)) return list_thin(bytes);
  LINKSCOPE_TRY(fat, fat_file::open(bytes));
  const std::string_view wanted = options.arch.empty() && fat.find(options.host_arch) ? options.host_arch : options.arch;
  if (!wanted.empty() && wanted != "all") {
    auto slice = fat.find(wanted);
    if (!slice) return error{errc::not_found, no_offset, "no slice for the requested architecture"};
    return list_thin(slice->bytes);
  }
  for (const auto& slice : fat.slices()) {
    out += '\n';
    out += display;
    out += " (for architecture ";
    out += arch_name(slice.cputype, slice.cpusubtype);
    out += "):\n";
    LINKSCOPE_CHECK(list_thin(slice.bytes));
  }
  return ok();
}
#endif  // LINKSCOPE_DEFINITIONS

}  // namespace macho
}  // namespace v0
}  // namespace linkscope
