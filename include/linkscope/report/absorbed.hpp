// linkscope/report/absorbed.hpp — the `linkscope-absorbed --json` document
// (schema/linkscope-absorbed.schema.json; the rules are docs/JSON.md's).
//
//   {"version": 1,
//    "file": S,                          the shared library or executable judged against
//    "format": "elf"|"macho"|"pe",       S's format; "arch": the Mach-O slice judged (Mach-O only)
//    "shared_has_symtab": bool, "shared_unresolved": N, "missing_needed": [NAME...],
//    "archives": [{"file": A, "verdict": "needed"|"re-exported"|"not-needed"|"unrelated",
//                  "evidence": [SYMBOL...],
//                  ["demangled": {SYMBOL: DEMANGLED...},   with --demangle: each evidence symbol that demangles]
//                  "members": [{"member": "A(m.o)", "name": "m.o",
//                               "status": "absorbed"|"hidden"|"re-exported"|"required"|"unused",
//                               "symbols": [SYMBOL...],
//                               ["demangled": {SYMBOL: DEMANGLED...}]}],   likewise for "symbols"
//                  "skipped": [{"member": "A(x)", "name": "x", "error": MESSAGE[, "offset": N]}]}],
//    "cmake_libs": [{"name": NAME[, "path": FOUND], "status": ...[, "verdict": ...]
//                    [, "dependent_of": FILE[, "soname": DT_NEEDED, "found_by": "search"|"rpath-link"|"none"]]}]   with --cmake-libs / --cmake-package only
//   }
//
// The key "verdict" is on archives, on a --cmake-libs name that was not
// found (not-needed when S needs nothing outside its NEEDED closure, else
// unknown), and on a --cmake-package IMPORTED_LINK_DEPENDENT_LIBRARIES entry
// (status "link-dependent": needed only when it is a DT_NEEDED entry of
// dependent_of that the linker cannot find; resolve/cmake_libs.hpp). linkscope.absorbed(...).to_dict() in the Python module is this
// document, parsed.
//
// The symbols of "evidence" and "symbols" are plain strings, so "demangled"
// cannot stand beside each one: with --demangle, the object holding such a
// list gets "demangled", an object from each symbol of the list that
// demangles to its demangled form (absent when none does).
#pragma once

#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "linkscope/core/config.hpp"
#include "linkscope/report/json.hpp"
#include "linkscope/report/json_error.hpp"
#include "linkscope/resolve/absorb.hpp"
#include "linkscope/resolve/cmake_libs.hpp"

namespace linkscope {
inline namespace v0 {
namespace report {

// An entry of a CMake config's library list (linkscope-absorbed
// --cmake-libs / --cmake-package) and what became of it.
using cmake_library = resolve::cmake_library;

struct absorbed_json_options {
  bool demangle = false;                            // --demangle: "demangled" maps beside the symbol lists
  const std::vector<cmake_library>* cmake_libs = nullptr;  // --cmake-libs: written as "cmake_libs"
};

// "demangled": {SYMBOL: DEMANGLED} for the symbols of `list` that demangle;
// nothing when none does.
inline void write_demangled_map(json_writer& w, const std::vector<std::string>& list) {
  bool open = false;
  std::set<std::string_view> written;  // a key once, however often the list holds it
  for (const std::string& s : list) {
    std::string d = symbols::demangle(s);
    if (d == s || !written.insert(s).second) continue;
    if (!open) w.key("demangled").begin_object();
    open = true;
    w.field(s, d);
  }
  if (open) w.end_object();
}

void write_json(json_writer& w, const resolve::absorb_report& r, const absorbed_json_options& o = {});

#if LINKSCOPE_DEFINITIONS
LINKSCOPE_FUNC void write_json(json_writer& w, const resolve::absorb_report& r, const absorbed_json_options& o) {
  w.begin_object().field("version", 1).field("file", r.shared).field("format", r.format);
  if (!r.arch.empty()) w.field("arch", r.arch);
  w.field("shared_has_symtab", r.shared_has_symtab);
  w.field("shared_unresolved", r.shared_unresolved);
  w.key("missing_needed").begin_array();
  for (const auto& m : r.missing_needed) w.value(m);
  w.end_array();
  w.key("archives").begin_array();
  for (const auto& a : r.archives) {
    w.begin_object().field("file", a.path).field("verdict", to_string(a.verdict));
    w.key("evidence").begin_array();
    for (const auto& s : a.evidence) w.value(s);
    w.end_array();
    if (o.demangle) write_demangled_map(w, a.evidence);
    w.key("members").begin_array();
    for (const auto& m : a.members) {
      w.begin_object().field("member", a.path + "(" + m.name + ")").field("name", m.name);
      w.field("status", to_string(m.status));
      w.key("symbols").begin_array();
      for (const auto& s : m.symbols) w.value(s);
      w.end_array();
      if (o.demangle) write_demangled_map(w, m.symbols);
      w.end_object();
    }
    w.end_array();
    w.key("skipped").begin_array();
    for (const auto& s : a.skipped) {
      w.begin_object().field("member", a.path + "(" + s.name + ")").field("name", s.name);
      w.field("error", std::string_view(s.why.message));
      if (s.why.has_offset()) w.field("offset", s.why.offset);
      w.end_object();
    }
    w.end_array().end_object();
  }
  w.end_array();
  if (o.cmake_libs != nullptr && !o.cmake_libs->empty()) {
    const bool closed = r.shared_unresolved == 0 && r.missing_needed.empty();
    w.key("cmake_libs").begin_array();
    for (const auto& lib : *o.cmake_libs) {
      w.begin_object().field("name", lib.name);
      if (!lib.path.empty()) w.field("path", lib.path);
      std::string status = lib.note;
      if (status == "not-found") w.field("verdict", closed ? "not-needed" : "unknown");
      if (status == "link-dependent") {
        w.field("dependent_of", lib.dependent_of);
        if (!lib.soname.empty()) w.field("soname", lib.soname).field("found_by", lib.found_by.empty() ? "none" : lib.found_by);
        w.field("verdict", resolve::dependent_verdict(lib));
      }
      if (status.empty())
        for (const auto& a : r.archives)
          if (a.path == lib.path) status = to_string(a.verdict);
      w.field("status", status).end_object();
    }
    w.end_array();
  }
  w.end_object();
}
#endif  // LINKSCOPE_DEFINITIONS

}  // namespace report
}  // namespace v0
}  // namespace linkscope
