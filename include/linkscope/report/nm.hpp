// linkscope/report/nm.hpp — the `linkscope-nm --json` document
// (schema/linkscope-nm.schema.json; the rules are docs/JSON.md's).
//
//   {"version": 1,
//    "objects": [{"file": FILE,                     the path given
//                 ["member": "lib.a(m.o)", "name": "m.o",]   archive members only
//                 ["arch": "arm64",]                Mach-O: a slice of a universal file
//                 "bits": 32 | 64,
//                 ["warnings": [MESSAGE...],]       COFF: what nm says and goes on from
//                 "symbols": [{"symbol": "foo@@V2", "name": "foo",
//                              ["version": "V2", "default_version": bool,]   ELF versioned symbols only
//                              "type": "T",        nm's letter
//                              "defined": bool,
//                              ["value": "0x1a2b", "size": N]}]}    defined symbols only
//               | {"file", ["member", "name",] "error": MESSAGE[, "offset": N]}]}   an object that cannot be read
//
// One document per run, over every file given: begin_nm_document, then one
// write_nm_* per listed object (an ELF file or member, a coff::nm_object, a
// macho::nm_object) or unreadable input, then end_nm_document. The rows and
// their order are the text listing's (elf/nm.hpp, coff/nm.hpp, macho/nm.hpp);
// names are as stored: -C and --without-symbol-versions change the text only.
// Mach-O sizes are 0, as llvm-nm prints them.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "linkscope/coff/nm.hpp"
#include "linkscope/core/error.hpp"
#include "linkscope/elf/nm.hpp"
#include "linkscope/macho/nm.hpp"
#include "linkscope/report/json.hpp"
#include "linkscope/report/json_error.hpp"

namespace linkscope {
inline namespace v0 {
namespace report {

// {"version": 1, "objects": [
inline void begin_nm_document(json_writer& w) { begin_list_document(w, "objects"); }
// ]}
inline void end_nm_document(json_writer& w) { end_list_document(w); }

namespace detail {

// "file", and for an archive member "member" (`lib.a(m.o)`) and "name" (`m.o`).
inline void write_nm_origin(json_writer& w, std::string_view file, std::string_view member) {
  w.field("file", file);
  if (!member.empty()) write_member_fields(w, file, member);
}

// One element of "symbols"; `version` is empty for an unversioned symbol
// (and always for COFF and Mach-O).
inline void write_nm_symbol(json_writer& w, std::string_view name, std::string_view version, bool default_version,
                            char type, bool defined, u64 value, u64 size) {
  w.begin_object().field("symbol", decorated_symbol(name, version, default_version)).field("name", name);
  if (!version.empty()) w.field("version", version).field("default_version", default_version);
  w.field("type", std::string_view(&type, 1)).field("defined", defined);
  if (defined) {
    w.key("value").hex(value);
    w.field("size", size);
  }
  w.end_object();
}

}  // namespace detail

// An ELF file or archive member (`member` empty for a file): the entries of
// elf::nm_symbols in listing order (sorted, or table order with -p). A
// listing with no_symbols gives an empty "symbols".
inline void write_nm_object(json_writer& w, std::string_view file, std::string_view member,
                            const elf::nm_listing& listing, std::span<const elf::nm_entry> entries) {
  w.begin_object();
  detail::write_nm_origin(w, file, member);
  w.field("bits", listing.is64 ? 64 : 32);
  w.key("symbols").begin_array();
  for (const elf::nm_entry& e : entries)
    detail::write_nm_symbol(w, e.name, e.version, e.ver == version_kind::default_, e.type, !e.undefined(), e.value,
                            e.size);
  w.end_array().end_object();
}

// A COFF object, PE image or import member (coff::nm_file_objects), or the
// error that stopped it.
inline void write_nm_object(json_writer& w, const coff::nm_object& object) {
  w.begin_object();
  detail::write_nm_origin(w, object.file, object.member);
  if (!object.error.empty()) {
    w.field("error", object.error);
    if (object.offset != no_offset) w.field("offset", object.offset);
    w.end_object();
    return;
  }
  w.field("bits", object.bits);
  if (!object.warnings.empty()) {
    w.key("warnings").begin_array();
    for (const auto& warning : object.warnings) w.value(warning);
    w.end_array();
  }
  w.key("symbols").begin_array();
  for (const auto& s : object.symbols) detail::write_nm_symbol(w, s.name, {}, false, s.type, s.defined, s.value, s.size);
  w.end_array().end_object();
}

// A Mach-O object, image or slice (macho::nm_file_objects).
inline void write_nm_object(json_writer& w, const macho::nm_object& object) {
  w.begin_object();
  detail::write_nm_origin(w, object.file, object.member);
  if (!object.arch.empty()) w.field("arch", object.arch);
  w.field("bits", object.bits);
  w.key("symbols").begin_array();
  for (const auto& s : object.symbols) detail::write_nm_symbol(w, s.name, {}, false, s.type, s.defined, s.value, 0);
  w.end_array().end_object();
}

// An input (or archive member) that cannot be read stays in the document
// (docs/JSON.md, rule 4).
inline void write_nm_error(json_writer& w, std::string_view file, std::string_view member, const error& e) {
  write_error_element(w, diagnostic(e, std::string(file), std::string(member)));
}

}  // namespace report
}  // namespace v0
}  // namespace linkscope
