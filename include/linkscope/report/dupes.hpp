// linkscope/report/dupes.hpp — the `linkscope-dupes --json` document
// (schema/linkscope-dupes.schema.json; the rules are docs/JSON.md's).
//
//   {"version": 1,
//    "closure_order": [FILE...],            ld.so's global scope for run-time winners
//    "duplicates": [{"symbol": "foo",       the symbol's name (its versions are per definition)
//                    ["demangled": "ns::foo()",          with --demangle, where it differs]
//                    "runtime_winner": "libb.so" | "",   the definition ld.so binds to
//                    "link_winner": "liba.so",           the one a link takes
//                    "versions_differ", "sizes_differ", "abi_break": bool,
//                    ["importers": [{"importer": IMAGE, "binds_to": FILE[, "flat": true]}],
//                                  Mach-O and PE: the copy each importing image binds to]
//                    "definitions": [{"file": the input (the archive for a member),
//                                     "member": "lib.a(m.o)" (archive members only),
//                                     "symbol": "foo@@V2", "name": "foo", "version": "V2" | null,
//                                     ["demangled": "ns::foo()"  with --demangle, where it differs]
//                                     "size": N, "kind": "func"|"object"|...}]}]}
//
// A winner is named as its definition's "member" when it is an archive
// member, else as its "file". linkscope.dupes(...).to_dict() in the Python
// module is this document, parsed.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "linkscope/core/config.hpp"
#include "linkscope/report/json.hpp"
#include "linkscope/report/json_error.hpp"
#include "linkscope/resolve/duplicates.hpp"

namespace linkscope {
inline namespace v0 {
namespace report {

struct dupes_json_options {
  bool abi_only = false;  // only the data symbols whose sizes differ (--abi-only)
  bool demangle = false;  // add "demangled" (--demangle)
};

// How many duplicates the document lists (what the CLI's exit status counts).
inline std::size_t dupes_shown(const resolve::duplicates_report& r, const dupes_json_options& o = {}) {
  std::size_t n = 0;
  for (const auto& d : r.duplicates)
    if (!o.abi_only || d.abi_break) ++n;
  return n;
}

void write_json(json_writer& w, const resolve::duplicates_report& r, const dupes_json_options& o = {});

#if LINKSCOPE_DEFINITIONS
LINKSCOPE_FUNC void write_json(json_writer& w, const resolve::duplicates_report& r, const dupes_json_options& o) {
  w.begin_object().field("version", 1);
  w.key("closure_order").begin_array();
  for (const auto& f : r.closure_order) w.value(f);
  w.end_array().key("duplicates").begin_array();
  for (const auto& d : r.duplicates) {
    if (o.abi_only && !d.abi_break) continue;
    w.begin_object().field("symbol", d.name);
    write_demangled(w, d.name, o.demangle);
    w.field("runtime_winner", d.runtime_winner < d.sites.size() ? d.sites[d.runtime_winner].file : std::string());
    w.field("link_winner", d.sites[d.link_winner].file);
    w.field("versions_differ", d.versions_differ).field("sizes_differ", d.sizes_differ).field("abi_break", d.abi_break);
    if (!d.importers.empty()) {
      w.key("importers").begin_array();
      for (const auto& b : d.importers) {
        w.begin_object().field("importer", b.importer).field("binds_to", d.sites[b.site].file);
        if (b.flat) w.field("flat", true);
        w.end_object();
      }
      w.end_array();
    }
    w.key("definitions").begin_array();
    for (const auto& s : d.sites) {
      w.begin_object();
      const bool member = s.from_archive && s.file.size() >= s.member_name.size() + 2 && !s.member_name.empty();
      if (member) {
        w.field("file", std::string_view(s.file).substr(0, s.file.size() - s.member_name.size() - 2));
        w.field("member", s.file);
      } else {
        w.field("file", s.file);
      }
      write_symbol_fields(w, d.name, s.version, s.default_version, o.demangle);
      w.field("size", s.size).field("kind", to_string(s.kind));
      w.end_object();
    }
    w.end_array().end_object();
  }
  w.end_array().end_object();
}
#endif  // LINKSCOPE_DEFINITIONS

}  // namespace report
}  // namespace v0
}  // namespace linkscope
