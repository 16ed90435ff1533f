// linkscope/report/ar.hpp — the `linkscope-ar --json` document
// (schema/linkscope-ar.schema.json; the rules are docs/JSON.md's).
//
//   {"version": 1, "file": ARCHIVE, "format": "gnu"|"bsd"|"coff"|"thin"|"aix_big",
//    and one of:
//    "members": [{"member": "lib.a(m.o)", "name": "m.o", "header_offset", "data_offset",
//                 "size", "mode", "uid", "gid", "date": N, ["external": true]}],     t, tv
//    ["error": MESSAGE]                   a member header that could not be read, after the members listed
//  | "armap": {"kind": "gnu32"|..., "entries": [{"symbol", "member": "lib.a(m.o)", "member_offset"}]}   --print-armap
//  | "symbol": SYMBOL, "definitions": [{"member", "name", "member_offset", "armap_index"}]}              --find
//
// An archive that cannot be read is the error document {"version": 1, "file",
// "error", ...} (report/json_error.hpp). Over several archives the document is
// {"version": 1, "archives": [...]}, one element per archive: the object above
// without "version", or the error element.
//
// Each archive is written in pieces, as its members or armap entries are
// visited (an armap may hold millions of entries): begin_ar_archive, one
// begin/write/end group, end_ar_archive. A member is named as the listing
// names it (a thin archive's member by the path it opens). Each archive's
// object is written by a writer of its own, so that a failed archive's
// output can be dropped whole for its error: between the elements of
// "archives" the caller writes the ','.
#pragma once

#include <string_view>

#include "linkscope/ar/archive.hpp"
#include "linkscope/ar/armap.hpp"
#include "linkscope/core/error.hpp"
#include "linkscope/report/json.hpp"
#include "linkscope/report/json_error.hpp"

namespace linkscope {
inline namespace v0 {
namespace report {

// {"version": 1, "archives": [  — the document over several archives.
inline void begin_ar_archives(json_writer& w) { begin_list_document(w, "archives"); }
// ]}
inline void end_ar_archives(json_writer& w) { end_list_document(w); }

// {"version": 1, "file", "format" of one archive; without "version" as an
// element of "archives".
inline void begin_ar_archive(json_writer& w, std::string_view file, ar::format format, bool element) {
  w.begin_object();
  if (!element) w.field("version", 1);
  w.field("file", file).field("format", ar::to_string(format));
}
inline void end_ar_archive(json_writer& w) { w.end_object(); }

// What stands for an archive that cannot be read: the error element of
// "archives", or the error document.
inline void write_ar_error(json_writer& w, const diagnostic& d, bool element) {
  if (element)
    write_error_element(w, d);
  else
    write_error_document(w, d);
}

// t, tv: "members": [...].
inline void begin_ar_members(json_writer& w) { w.key("members").begin_array(); }
inline void write_ar_member(json_writer& w, std::string_view file, std::string_view name, const ar::member& m) {
  w.begin_object();
  write_member_fields(w, file, name);
  w.field("header_offset", m.header_offset).field("data_offset", m.data_offset);
  w.field("size", m.size).field("mode", m.mode).field("uid", m.uid).field("gid", m.gid);
  w.field("date", m.date);
  if (m.external) w.field("external", true);
  w.end_object();
}
// The end of "members"; `stopped`, when the walk stopped at a member header
// that could not be read, is written as "error" after them.
inline void end_ar_members(json_writer& w, const error* stopped = nullptr) {
  w.end_array();
  if (stopped != nullptr) w.field("error", describe(*stopped));
}

// --print-armap: "armap": {"kind", "entries": [...]}.
inline void begin_ar_armap(json_writer& w, const ar::armap& map) {
  w.key("armap").begin_object().field("kind", ar::to_string(map.kind()));
  w.key("entries").begin_array();
}
// `member` names the member at e.member_offset.
inline void write_ar_armap_entry(json_writer& w, std::string_view file, std::string_view member,
                                 const ar::armap_entry& e) {
  w.begin_object().field("symbol", e.name);
  w.field("member", member_label(file, member));
  w.field("member_offset", e.member_offset).end_object();
}
inline void end_ar_armap(json_writer& w) { w.end_array().end_object(); }

// --find SYMBOL: "symbol", "definitions": [...], the armap entries of that
// name in armap order.
inline void begin_ar_find(json_writer& w, std::string_view symbol) {
  w.field("symbol", symbol).key("definitions").begin_array();
}
// `member` names the member at e.member_offset.
inline void write_ar_definition(json_writer& w, std::string_view file, std::string_view member,
                                const ar::armap_entry& e) {
  w.begin_object();
  write_member_fields(w, file, member);
  w.field("member_offset", e.member_offset).field("armap_index", e.index);
  w.end_object();
}
inline void end_ar_find(json_writer& w) { w.end_array(); }

}  // namespace report
}  // namespace v0
}  // namespace linkscope
