// linkscope/resolve/absorb.hpp — does a consumer of S.so still need A.a?
//
// When a static archive A is linked into a shared library S, its members'
// code is copied into S. Whether a *consumer* of S (a program or library that
// links against S) still needs A at link time depends on what S left behind:
//
//   re-exported  S exports (in .dynsym, default or protected visibility) some
//                of the member's definitions: consumers already get them from
//                S, and linking A as well gives duplicate definitions (an ODR
//                risk when the copies differ).
//   hidden       the definitions are in S (its .symtab shows them, now LOCAL
//                or hidden) but not exported: consumers never see them.
//   absorbed     the definitions are in S's .symtab as GLOBAL but not in its
//                dynamic table (S is an executable, or exports nothing).
//   required     S has undefined dynamic symbols that the member defines and
//                that nothing else provides (S was linked with
//                --allow-shlib-undefined, or A was left on the interface):
//                consumers must link A. With --consumer, the consumer's own
//                undefined references that S does not export but the member
//                defines make it required too (an inline function in S's
//                public header calling into A is the classic case).
//   unused       none of the above.
//
// Verdict per archive: needed (a member is required), else re-exported, else
// not-needed (something was absorbed or hidden), else unrelated.
//
// Without a .symtab (stripped S) hidden definitions leave no trace in the
// file: such members come out unused, and the report says S is stripped.
// Matching is by symbol name; the dynamic table is read through PT_DYNAMIC
// when section headers are gone.
//
// The same question on macOS and Windows, with each platform's own tables:
//   Mach-O  S (a dylib, bundle or executable; one slice of a universal
//           file, options.arch or the first) exports what its export trie
//           lists (re-export entries excluded: that code is another
//           dylib's), or its external nlist definitions when it has no trie.
//           Its nlist is the symtab: a private extern or non-external
//           definition is hidden (ld64 turns hidden visibility and symbols
//           left out of -exported_symbols_list into "non-external (was a
//           private external)"). S's undefined symbols are its non-weak
//           imports that dyld's emulation (resolve/dyld.hpp) finds nowhere;
//           with two-level namespace only a flat-namespace or
//           -undefined dynamic_lookup import can be left so. A is an
//           archive of Mach-O objects (the members of S's architecture).
//   PE      S (a DLL or EXE) exports its export directory's names
//           (forwarders excluded). Exports are explicit on Windows
//           (dllexport, a .def), so a definition in S's COFF symbol table
//           (mingw ld keeps one unless stripped) that is not exported is
//           hidden, whatever its storage class. A DLL cannot leave a symbol
//           undefined (every import names its DLL), so only a --consumer
//           can make a member required. On i386, C names carry a leading
//           underscore in COFF and none in the export table. A is an
//           archive of COFF objects (a static .lib or .a); import members
//           (short import records) are skipped.
#pragma once

#include <algorithm>
#include <cstddef>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include <deque>

#include "linkscope/ar/archive.hpp"
#include "linkscope/coff/object.hpp"
#include "linkscope/coff/pe.hpp"
#include "linkscope/core/config.hpp"
#include "linkscope/core/error.hpp"
#include "linkscope/core/mapped_file.hpp"
#include "linkscope/elf/source.hpp"
#include "linkscope/macho/exports.hpp"
#include "linkscope/macho/fat.hpp"
#include "linkscope/macho/linkage.hpp"
#include "linkscope/macho/symbols.hpp"
#include "linkscope/resolve/dyld.hpp"
#include "linkscope/resolve/dynamic.hpp"
#include "linkscope/resolve/file_format.hpp"
#include "linkscope/resolve/foreign_objects.hpp"
#include "linkscope/resolve/objects.hpp"
#include "linkscope/symbols/index.hpp"
#include "linkscope/symbols/table.hpp"

namespace linkscope {
inline namespace v0 {
namespace resolve {

enum class member_status : u8 { absorbed, hidden, re_exported, required, unused };
enum class archive_verdict : u8 { not_needed, needed, re_exported, unrelated };

constexpr const char* to_string(member_status s) noexcept {
  switch (s) {
    case member_status::absorbed: return "absorbed";
    case member_status::hidden: return "hidden";
    case member_status::re_exported: return "re-exported";
    case member_status::required: return "required";
    case member_status::unused: return "unused";
  }
  return "?";
}
constexpr const char* to_string(archive_verdict v) noexcept {
  switch (v) {
    case archive_verdict::not_needed: return "not-needed";
    case archive_verdict::needed: return "needed";
    case archive_verdict::re_exported: return "re-exported";
    case archive_verdict::unrelated: return "unrelated";
  }
  return "?";
}

struct absorb_options {
  std::vector<std::string> consumers;  // objects, archives or DSOs that link against S
  ar::thin_options thin;
  std::size_t max_evidence = 16;       // evidence symbols kept per archive
  // Load S's DT_NEEDED closure as ld.so would (resolve/dynamic.hpp) and
  // discount S's undefined symbols that a library of the closure defines:
  // only what nothing else provides can make an archive "required".
  bool use_closure = true;
  dynamic_options closure;
  // Mach-O: the slice of a universal S, and of universal or mixed archives
  // and consumers ("x86_64", "arm64"); "" = S's first slice.
  std::string arch;
  // Mach-O: how S's dylib closure is found (root, executable, DYLD_* paths);
  // arch and bindings are set from the above.
  dyld_options dyld;
};

struct member_report {
  std::string name;
  member_status status = member_status::unused;
  std::vector<std::string> symbols;  // the symbols that decided the status
  std::size_t defined = 0;           // global definitions in the member
};

struct archive_report {
  std::string path;
  archive_verdict verdict = archive_verdict::unrelated;
  std::vector<std::string> evidence;
  std::vector<member_report> members;
  std::vector<skipped_member> skipped;  // members that are not ELF objects, missing thin members
};

struct absorb_report {
  std::string shared;
  std::string format;  // "elf", "macho" or "pe": S's format
  std::string arch;    // Mach-O: the slice analysed ("x86_64", "arm64"); else ""
  bool shared_has_symtab = false;
  std::size_t shared_exports = 0;
  std::size_t shared_undefined = 0;          // strong undefined dynamic symbols of S
  std::size_t shared_unresolved = 0;         // ... that S's NEEDED closure does not define
  std::vector<std::string> missing_needed;   // NEEDED libraries of the closure not found
  std::vector<archive_report> archives;
  bool any_needed() const noexcept {
    return std::any_of(archives.begin(), archives.end(),
                       [](const archive_report& a) { return a.verdict == archive_verdict::needed; });
  }
};

// Analyse S (a shared library or executable) against each archive. A failure
// names the input (S, a consumer, an archive or its member).
result<absorb_report, diagnostic> analyze_absorption(const std::string& shared_path, const std::vector<std::string>& archives,
                                         const absorb_options& options = {});

namespace detail {

inline bool is_real_definition(const symbol& sym) noexcept {
  return sym.defined && sym.is_global() && sym.kind != symbol_kind::section && sym.kind != symbol_kind::file;
}

// What S offers and lacks, with names viewing S's mapping.
struct shared_view {
  symbol_table dynamic;   // every dynsym entry
  symbol_table symtab;    // every defined .symtab entry (locals included)
  hash_index exports;     // defined, global, default/protected visibility
  hash_index undefined;   // strong undefined, not defined by any library of S's closure
  hash_index in_symtab;   // any definition in .symtab
  bool has_symtab = false;
  std::deque<std::string> owned;  // names built while reading (Mach-O trie, PE i386 decoration)
};

}  // namespace detail

// The definitions: compiled once in src/ in compiled mode (core/config.hpp).
#if LINKSCOPE_DEFINITIONS
namespace detail {

LINKSCOPE_FUNC result<void> load_shared(byte_view bytes, shared_view& out) {
  LINKSCOPE_CHECK(out.dynamic.append(elf::symbols_source(bytes, elf::symbol_table_kind::dynamic)));
  LINKSCOPE_CHECK(out.symtab.append(elf::symbols_source(bytes, elf::symbol_table_kind::static_),
                                    [](const symbol& s) {
                                      return s.defined && s.kind != symbol_kind::section && s.kind != symbol_kind::file;
                                    }));
  out.has_symtab = !out.symtab.empty();
  out.exports = hash_index::build(out.dynamic, [](const symbol& s) {
    return is_real_definition(s) && (s.vis == visibility::default_ || s.vis == visibility::protected_);
  });
  out.in_symtab = hash_index::build(out.symtab);
  return ok();
}

inline bool table_definition(const symbol& s) noexcept {
  return s.defined && s.kind != symbol_kind::section && s.kind != symbol_kind::file;
}

// A name S exports, as a dynamic-table entry.
inline void add_export(shared_view& out, std::string_view name, bool weak) {
  symbol s;
  s.name = out.owned.emplace_back(name);
  s.bind = weak ? ::linkscope::binding::weak : ::linkscope::binding::global;
  s.kind = symbol_kind::func;
  out.dynamic.push_back(s);
}

inline void finish_shared(shared_view& out) {
  out.has_symtab = !out.symtab.empty();
  out.exports = hash_index::build(out.dynamic, [](const symbol& s) {
    return is_real_definition(s) && (s.vis == visibility::default_ || s.vis == visibility::protected_);
  });
  out.in_symtab = hash_index::build(out.symtab);
}

// S as one Mach-O image: the trie (or its external nlist definitions) as the
// dynamic table with its non-weak imports as undefined entries, its nlist
// definitions as the symtab.
LINKSCOPE_FUNC result<void> load_shared_macho(byte_view image, const macho::linkage& l, shared_view& out) {
  if (l.has_trie) {
    LINKSCOPE_CHECK(macho::for_each_export(l.trie, [&](const macho::export_entry& e) {
      if (!e.reexport()) add_export(out, e.name, e.weak_definition());
    }));
  } else {
    for (const auto& e : l.nlist_exports) add_export(out, e.name, e.weak);
  }
  for (const auto& i : l.imports) {
    if (i.weak_import || i.library_ordinal == 0 || i.library_ordinal == -3) continue;  // self, weak coalescing
    symbol s;
    s.name = i.symbol;
    s.defined = false;
    out.dynamic.push_back(s);
  }
  LINKSCOPE_CHECK(out.symtab.append(macho::symbols_source(image), table_definition));
  finish_shared(out);
  return ok();
}

// S as a PE image: its exports (forwarders excluded) as the dynamic table,
// and its COFF symbol table, all of it hidden (exports are explicit).
LINKSCOPE_FUNC result<void> load_shared_pe(byte_view bytes, shared_view& out) {
  LINKSCOPE_TRY(image, pe::image::parse(bytes));
  const bool underscore = image.machine() == coff::machine::i386;
  LINKSCOPE_TRY(exports, image.exports());
  for (const auto& e : exports) {
    if (e.name.empty() || !e.forwarder.empty()) continue;
    add_export(out, underscore ? "_" + std::string(e.name) : std::string(e.name), false);
  }
  if (image.has_symbol_table()) {
    LINKSCOPE_TRY(table, coff::standard_object::parse(bytes, image.coff_header_offset()));
    LINKSCOPE_CHECK(table.for_each_symbol([&](const symbol& sym) {
      if (!table_definition(sym)) return;
      symbol s = sym;
      s.vis = visibility::hidden;
      out.symtab.push_back(s);
    }));
  }
  finish_shared(out);
  return ok();
}

// Names defined (and visible) in the libraries of S's DT_NEEDED closure.
LINKSCOPE_FUNC result<std::unordered_set<std::string>> closure_definitions(const std::string& shared_path,
                                                                           const absorb_options& options,
                                                                           std::vector<std::string>& missing) {
  dynamic_options dyn = options.closure;
  dyn.bindings = false;
  std::string program = shared_path;
  if (program.find('/') == std::string::npos) program = "./" + program;
  LINKSCOPE_TRY(link, link_dynamic(program, dyn));
  std::unordered_set<std::string> defined;
  for (std::size_t i = 1; i < link.objects.size(); ++i) {
    const loaded_object& object = link.objects[i];
    if (!object.found()) {
      missing.push_back(object.name);
      continue;
    }
    auto file = mapped_file::open(object.file);
    if (!file) continue;
    auto r = elf::symbols_source(file->bytes(), elf::symbol_table_kind::dynamic).for_each_symbol([&](const symbol& s) {
      if (is_real_definition(s) && s.vis != visibility::hidden && s.vis != visibility::internal) defined.emplace(s.name);
    });
    (void)r;  // a malformed library of the closure defines nothing we can see
  }
  return defined;
}

// Undefined references of the consumers that they do not define themselves
// and that S does not export.
LINKSCOPE_FUNC result<std::unordered_set<std::string>, diagnostic> consumer_needs(
    const std::vector<std::string>& consumers, const shared_view& shared, const ar::thin_options& thin, u32 cputype) {
  std::unordered_set<std::string> undefined;
  std::unordered_set<std::string> defined;
  auto note = [&](const symbol& sym) {
    if (!sym.is_global()) return;
    if (sym.defined)
      defined.emplace(sym.name);
    else if (sym.bind == ::linkscope::binding::global)
      undefined.emplace(sym.name);
  };
  for (const std::string& path : consumers) {
    if (!is_foreign_input(path)) {
      auto walked = visit_elf_objects(
          path, [&](const elf_object& object) { return for_each_object_symbol(object, note); }, nullptr, thin);
      if (!walked) return walked.error();
    } else {
      auto walked = for_each_foreign_object(
          path, cputype, [&](std::string_view, byte_view object) { return for_each_foreign_symbol(object, note); },
          nullptr);
      if (!walked) return walked.error();
    }
  }
  std::unordered_set<std::string> needs;
  for (const std::string& name : undefined)
    if (defined.count(name) == 0 && !shared.exports.contains(name)) needs.insert(name);
  return needs;
}

inline void add_evidence(std::vector<std::string>& evidence, const std::vector<std::string>& symbols, std::size_t cap) {
  for (const std::string& s : symbols) {
    if (evidence.size() >= cap) return;
    evidence.push_back(s);
  }
}

}  // namespace detail

LINKSCOPE_FUNC result<absorb_report, diagnostic> analyze_absorption(const std::string& shared_path,
                                                                    const std::vector<std::string>& archives,
                                                                    const absorb_options& options) {
  auto shared_file = mapped_file::open(shared_path);
  if (!shared_file) return diagnostic(shared_file.error(), shared_path);
  const byte_view shared_bytes = shared_file->bytes();
  absorb_report report;
  report.shared = shared_path;
  detail::shared_view shared;
  std::vector<std::string> missing_needed;
  // Which of S's strong undefined symbols nothing of its closure provides.
  std::unordered_set<std::string> provided;    // ELF: what the closure defines
  std::unordered_set<std::string> unresolved;  // Mach-O: what dyld finds nowhere
  u32 cputype = 0;                             // Mach-O: the slice's, for archives and consumers
  const bool is_elf = elf::is_elf(shared_bytes);
  if (is_elf) {
    report.format = "elf";
    if (auto loaded = detail::load_shared(shared_bytes, shared); !loaded) return diagnostic(loaded.error(), shared_path);
    if (options.use_closure) {
      auto closure = detail::closure_definitions(shared_path, options, missing_needed);
      if (closure) provided = std::move(*closure);
    }
  } else if (macho::is_macho(shared_bytes) || macho::is_fat(shared_bytes)) {
    report.format = "macho";
    auto image = macho_slice(shared_bytes, options.arch);
    if (!image) return diagnostic(image.error(), shared_path);
    auto l = macho::read_linkage(*image);
    if (!l) return diagnostic(l.error(), shared_path);
    cputype = l->cputype;
    report.arch = macho::arch_name(l->cputype, l->cpusubtype);
    if (auto loaded = detail::load_shared_macho(*image, *l, shared); !loaded) return diagnostic(loaded.error(), shared_path);
    if (options.use_closure) {
      dyld_options dyld = options.dyld;
      dyld.arch = report.arch;
      dyld.bindings = true;
      auto link = link_dyld(shared_path, dyld);
      if (link) {
        // Two-level imports were checked by the static link against their
        // dylib: unresolved only when dyld says "Symbol not found" (the dylib
        // changed or is missing). A flat-namespace import (dynamic_lookup)
        // is unresolved unless some image S loads, and that the emulation
        // reads, binds it: an unread system image proves nothing.
        std::unordered_set<std::string_view> bound;
        for (const auto& b : link->bindings)
          if (b.from == 0 && b.to < link->objects.size() && link->objects[b.to].checked()) bound.insert(b.symbol);
        for (const auto& u : link->undefined)
          if (u.from == 0) unresolved.emplace(u.symbol);
        for (const auto& i : l->imports)
          if (!i.weak_import && (i.library_ordinal == -2 || (!l->two_level && i.library_ordinal > 0)) &&
              bound.count(i.symbol) == 0)
            unresolved.emplace(i.symbol);
        for (const auto& o : link->objects)
          if (!o.found() && !o.weak) missing_needed.push_back(o.name);
      }
    } else {
      for (const symbol& sym : shared.dynamic)
        if (!sym.defined) unresolved.emplace(sym.name);
    }
  } else if (pe::image::is_pe(shared_bytes)) {
    report.format = "pe";
    if (auto loaded = detail::load_shared_pe(shared_bytes, shared); !loaded) return diagnostic(loaded.error(), shared_path);
  } else {
    return diagnostic(shared_bytes.fail(errc::bad_magic, 0, "not a shared library (ELF), dylib (Mach-O) or DLL (PE)"),
                      shared_path);
  }
  std::size_t strong_undefined = 0;
  shared.undefined = hash_index::build(shared.dynamic, [&](const symbol& s) {
    if (s.defined || s.bind != ::linkscope::binding::global) return false;
    ++strong_undefined;
    return is_elf ? provided.count(std::string(s.name)) == 0 : unresolved.count(std::string(s.name)) != 0;
  });
  LINKSCOPE_TRY(needs, detail::consumer_needs(options.consumers, shared, options.thin, cputype));

  report.shared_has_symtab = shared.has_symtab;
  report.shared_exports = shared.exports.size();
  report.shared_undefined = strong_undefined;
  report.shared_unresolved = shared.undefined.size();
  report.missing_needed = std::move(missing_needed);

  for (const std::string& path : archives) {
    archive_report ar_report;
    ar_report.path = path;
    auto judge = [&](std::string name, const auto& for_each_definition) -> result<void> {
      member_report member;
      member.name = std::move(name);
      std::vector<std::string> required, exported, hidden, absorbed;
      auto r = for_each_definition([&](const symbol& sym) {
        if (!detail::is_real_definition(sym)) return;
        ++member.defined;
        const bool in_exports = shared.exports.contains(sym.name);
        if ((!in_exports && shared.undefined.contains(sym.name)) || needs.count(std::string(sym.name)) != 0) {
          required.emplace_back(sym.name);
        } else if (in_exports) {
          exported.emplace_back(sym.name);
        } else {
          bool found_local = false, found_global = false;
          shared.in_symtab.for_each(sym.name, [&](symbol_id id) {
            const symbol& s = shared.symtab[id];
            if (s.bind == ::linkscope::binding::local || s.vis == visibility::hidden || s.vis == visibility::internal)
              found_local = true;
            else
              found_global = true;
          });
          if (found_local)
            hidden.emplace_back(sym.name);
          else if (found_global)
            absorbed.emplace_back(sym.name);
        }
      });
      if (!r) return r;
      if (!required.empty()) {
        member.status = member_status::required;
        member.symbols = std::move(required);
      } else if (!exported.empty()) {
        member.status = member_status::re_exported;
        member.symbols = std::move(exported);
      } else if (!hidden.empty()) {
        member.status = member_status::hidden;
        member.symbols = std::move(hidden);
      } else if (!absorbed.empty()) {
        member.status = member_status::absorbed;
        member.symbols = std::move(absorbed);
      }
      ar_report.members.push_back(std::move(member));
      return ok();
    };
    if (is_elf) {
      auto walked = visit_elf_objects(
          path,
          [&](const elf_object& object) {
            return judge(std::string(object.member_name.empty() ? object.display_name : object.member_name),
                         [&](auto&& f) { return for_each_object_symbol(object, elf::symbol_table_kind::static_, f); });
          },
          &ar_report.skipped, options.thin);
      if (!walked) return walked.error();
    } else {
      auto walked = for_each_foreign_object(
          path, cputype,
          [&](std::string_view name, byte_view object) {
            return judge(std::string(name), [&](auto&& f) { return for_each_foreign_symbol(object, f); });
          },
          &ar_report.skipped);
      if (!walked) return walked.error();
    }

    auto members_with = [&](member_status s) {
      std::vector<const member_report*> out;
      for (const member_report& m : ar_report.members)
        if (m.status == s) out.push_back(&m);
      return out;
    };
    auto required = members_with(member_status::required);
    auto exported = members_with(member_status::re_exported);
    auto hidden = members_with(member_status::hidden);
    auto absorbed = members_with(member_status::absorbed);
    const std::vector<const member_report*>* evidence_from = nullptr;
    if (!required.empty()) {
      ar_report.verdict = archive_verdict::needed;
      evidence_from = &required;
    } else if (!exported.empty()) {
      ar_report.verdict = archive_verdict::re_exported;
      evidence_from = &exported;
    } else if (!hidden.empty() || !absorbed.empty()) {
      ar_report.verdict = archive_verdict::not_needed;
      evidence_from = hidden.empty() ? &absorbed : &hidden;
    }
    if (evidence_from != nullptr)
      for (const member_report* m : *evidence_from) detail::add_evidence(ar_report.evidence, m->symbols, options.max_evidence);
    report.archives.push_back(std::move(ar_report));
  }
  return report;
}
#endif  // LINKSCOPE_DEFINITIONS

}  // namespace resolve
}  // namespace v0
}  // namespace linkscope
