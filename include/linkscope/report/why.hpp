// linkscope/report/why.hpp — the `linkscope-why --json` document
// (schema/linkscope-why.schema.json; the rules are docs/JSON.md's).
//
//   {"version": 1, "semantics": "lld"|"bfd",
//    "extracted": [{"member": "lib.a(m.o)",        the member a link pulls in
//                   "reference": FILE | "lib.a(r.o)" | "<internal>" | "--entry" | ...,
//                   "symbol": SYMBOL}],            the symbol that pulled it, in --why-extract order
//    "undefined": [{"symbol": SYMBOL, "reference": the first file referencing it}],
//    "duplicates": [{"symbol": SYMBOL, "first": FILE, "second": FILE}],
//    "unused_members": ["lib.a(m.o)"...],
//    "archives": N, "symbols_resolved": N}
//
// Names are as ld.lld prints them (members as `lib.a(m.o)`); symbols of a
// static link carry no version. With `demangle`, "demangled" is added beside
// a symbol that demangles. linkscope.why(...).to_dict() in the Python module
// is this document, parsed.
#pragma once

#include <string>
#include <string_view>

#include "linkscope/report/json.hpp"
#include "linkscope/report/json_error.hpp"
#include "linkscope/resolve/static_report.hpp"

namespace linkscope {
inline namespace v0 {
namespace report {

struct why_json_options {
  bool demangle = false;  // add "demangled" (--demangle)
};

inline void write_json(json_writer& w, const resolve::static_link_result& r, const why_json_options& o = {}) {
  using resolve::no_file;
  const auto file_name = [&](resolve::file_id id) -> std::string_view {
    return id == no_file ? std::string_view("<internal>") : std::string_view(r.files[id].name);
  };
  w.begin_object().field("version", 1).field("semantics", to_string(r.semantics));
  w.key("extracted").begin_array();
  for (const resolve::extraction& e : r.extractions) {
    w.begin_object().field("member", r.files[e.member].name).field("reference", r.reference_name(e));
    w.field("symbol", e.symbol);
    write_demangled(w, e.symbol, o.demangle);
    w.end_object();
  }
  w.end_array().key("undefined").begin_array();
  for (const resolve::undefined_symbol& u : r.undefined) {
    w.begin_object().field("symbol", u.name);
    write_demangled(w, u.name, o.demangle);
    w.field("reference", file_name(u.first_reference)).end_object();
  }
  w.end_array().key("duplicates").begin_array();
  for (const resolve::duplicate_definition& d : r.duplicates) {
    w.begin_object().field("symbol", d.name);
    write_demangled(w, d.name, o.demangle);
    w.field("first", file_name(d.first)).field("second", file_name(d.second)).end_object();
  }
  w.end_array().key("unused_members").begin_array();
  for (resolve::file_id id : r.unused_members) w.value(r.files[id].name);
  w.end_array();
  w.field("archives", r.archives).field("symbols_resolved", r.symbols_resolved);
  w.end_object();
}

}  // namespace report
}  // namespace v0
}  // namespace linkscope
