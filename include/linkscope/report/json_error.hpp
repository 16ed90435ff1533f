// linkscope/report/json_error.hpp — the JSON element of an input that cannot
// be read, shared by every CLI document (docs/JSON.md, rule 4).
//
// An input that fails stays in the document: {"file", "error"} plus "member"
// (`lib.a(member.o)`, with "name" the bare member) and "offset" (a JSON
// integer) where the diagnostic has them. linkscope-ldd, -ar, -implib and
// -floors put one such element in their per-input array; linkscope-dupes,
// -absorbed and -why, whose answer needs every input, write it as the whole
// document ({"version": 1, "file", "error", ...}) and still exit 2. The stderr
// line (report/diagnostic.hpp) is printed as well: the JSON does not replace it.
//
// A second helper, symbol_json, writes the contract's symbol keys: "symbol"
// as `name`, `name@VER` or `name@@VER`, "name" and "version" beside it, and
// "demangled" when asked for and different; and write_member_fields writes an
// archive member's "member" (`lib.a(member.o)`) and "name" keys;
// begin/end_list_document the frame {"version": 1, KEY: [...]} of a document
// over several inputs.
#pragma once

#include <string>
#include <string_view>

#include "linkscope/core/error.hpp"
#include "linkscope/report/json.hpp"
#include "linkscope/symbols/demangle.hpp"

namespace linkscope {
inline namespace v0 {
namespace report {

// `lib.a(member.o)`: an archive member as linkers and nm name it.
inline std::string member_label(std::string_view file, std::string_view member) {
  std::string out;
  out.reserve(file.size() + member.size() + 2);
  out.append(file).append("(").append(member).append(")");
  return out;
}

// "member" (`lib.a(member.o)`) and "name" (the bare member) of an archive
// member, inside an object the caller opened.
inline void write_member_fields(json_writer& w, std::string_view file, std::string_view member) {
  w.field("member", member_label(file, member)).field("name", member);
}

// The keys of a failed input, inside an object the caller opened.
inline void write_error_fields(json_writer& w, const diagnostic& d) {
  w.field("file", d.file);
  if (!d.member.empty()) write_member_fields(w, d.file, d.member);
  w.field("error", std::string_view(d.message()));
  if (d.has_offset()) w.field("offset", d.offset());
}

// One element {"file", "error", ...} of a per-input array.
inline void write_error_element(json_writer& w, const diagnostic& d) {
  w.begin_object();
  write_error_fields(w, d);
  w.end_object();
}

// A whole document for a run that failed on one input: {"version": 1, "file", "error", ...}.
inline void write_error_document(json_writer& w, const diagnostic& d) {
  w.begin_object().field("version", 1);
  write_error_fields(w, d);
  w.end_object();
}

// {"version": 1, KEY: [ — a document over several inputs, one element
// each (linkscope-nm's "objects", linkscope-ar's "archives") ...
inline void begin_list_document(json_writer& w, std::string_view key) {
  w.begin_object().field("version", 1).key(key).begin_array();
}
// ... and its end: ]}
inline void end_list_document(json_writer& w) { w.end_array().end_object(); }

// `name`, `name@VER` (hidden or needed version) or `name@@VER` (default version).
inline std::string decorated_symbol(std::string_view name, std::string_view version, bool is_default = false) {
  std::string out(name);
  if (!version.empty()) out.append(is_default ? "@@" : "@").append(version);
  return out;
}

// "demangled": only when asked for, and only where it differs from `name`.
inline void write_demangled(json_writer& w, std::string_view name, bool demangle) {
  if (!demangle) return;
  std::string d = symbols::demangle(name);
  if (d != name) w.field("demangled", d);
}

// "symbol", "name", "version" (null when unversioned) and, with `demangle`,
// "demangled", inside an object the caller opened.
inline void write_symbol_fields(json_writer& w, std::string_view name, std::string_view version, bool is_default,
                                bool demangle) {
  w.field("symbol", decorated_symbol(name, version, is_default)).field("name", name);
  w.key("version");
  if (version.empty())
    w.value(nullptr);
  else
    w.value(version);
  write_demangled(w, name, demangle);
}

}  // namespace report
}  // namespace v0
}  // namespace linkscope
