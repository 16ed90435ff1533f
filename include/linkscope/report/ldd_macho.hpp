// linkscope/report/ldd_macho.hpp — the `linkscope-ldd --json FILE` document of
// a Mach-O image (schema/linkscope-ldd.schema.json, "macho"; the rules are
// docs/JSON.md's), over the dyld emulator's answer (resolve/dyld.hpp).
//
//   {"version": 1, "file": FILE, "format": "mach-o",
//    "libs": [{"name", "path", "file", "found_via", ["where", "rpath",] "install_name",
//              "current_version", "compatibility_version", "system", "stub", "weak",
//              "loaded_by", "skipped": [{"path", "reason"}], "warnings"}],
//    "bindings":  [{"from", "to", "symbol", "name", "version": null}],
//    "unused":    [{"from", "name", "path"}],
//    "undefined": [{"from", "symbol", "name", "version": null}],
//    "errors":    [MESSAGE...],        bad input, each naming its image
//    "warnings":  [MESSAGE...]}
//
// An image is named by the path dyld would spell ("path", without the root),
// or by its install name when it was not found. Versions are "X.Y.Z". Mach-O
// symbols have no version, so "version" is always null; with `demangle`,
// "demangled" is the name without the C-level leading underscore, demangled
// (`__ZN2ns3addEii` is ns::add(int, int), as `c++filt -_` prints it).
// linkscope.ldd(...).to_dict() in the Python module is this document, parsed.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "linkscope/core/config.hpp"
#include "linkscope/report/json.hpp"
#include "linkscope/report/json_error.hpp"
#include "linkscope/report/ldd.hpp"
#include "linkscope/resolve/dyld/result.hpp"
#include "linkscope/symbols/demangle.hpp"

namespace linkscope {
inline namespace v0 {
namespace report {

struct ldd_macho_json_options {
  bool demangle = false;  // add "demangled" beside symbols (--demangle)
};

// A Mach-O symbol demangled: the C-level leading underscore is dropped before
// the Itanium name is demangled (as llvm-nm -C and `c++filt -_` print it); a
// name that does not demangle is kept whole.
inline std::string demangle_macho(std::string_view name) {
  if (name.size() > 1 && name[0] == '_') {
    std::string d = symbols::demangle(name.substr(1));
    if (d != name.substr(1)) return d;
  }
  return std::string(name);
}

// A packed Mach-O version (xxxx.yy.zz) as "X.Y.Z".
inline std::string macho_version_string(std::uint32_t v) {
  return std::to_string(v >> 16) + "." + std::to_string((v >> 8) & 0xff) + "." + std::to_string(v & 0xff);
}

// How the document names an image: its path, or its install name when missing.
inline std::string_view dyld_shown_path(const resolve::dyld_object& o) {
  return o.path.empty() ? std::string_view(o.name) : std::string_view(o.path);
}

namespace ldd_macho_detail {

inline void write_symbol(json_writer& w, std::string_view name, std::string_view version, bool demangle) {
  write_symbol_fields(w, name, version, false, false);
  if (!demangle) return;
  if (std::string d = demangle_macho(name); d != name) w.key("demangled").value(d);
}

}  // namespace ldd_macho_detail

void write_json(json_writer& w, std::string_view file, const resolve::dyld_link& link,
                       const ldd_macho_json_options& o = {});

#if LINKSCOPE_DEFINITIONS
LINKSCOPE_FUNC void write_json(json_writer& w, std::string_view file, const resolve::dyld_link& link,
                       const ldd_macho_json_options& o) {
  w.begin_object().field("version", 1).field("file", file).field("format", "mach-o");
  w.key("libs").begin_array();
  for (std::size_t i = 1; i < link.objects.size(); ++i) {
    const auto& obj = link.objects[i];
    w.begin_object().field("name", obj.name).field("path", obj.path).field("file", obj.file);
    w.field("found_via", resolve::to_string(obj.via));
    if (!obj.where.empty()) w.field("where", obj.where);
    if (!obj.rpath.empty()) w.field("rpath", obj.rpath);
    w.field("install_name", obj.install_name);
    w.field("current_version", macho_version_string(obj.current_version));
    w.field("compatibility_version", macho_version_string(obj.compatibility_version));
    w.field("system", obj.kind == resolve::dyld_image_kind::system);
    w.field("stub", obj.kind == resolve::dyld_image_kind::tbd);
    w.field("weak", obj.weak);
    w.field("loaded_by", obj.loader < link.objects.size() ? dyld_shown_path(link.objects[obj.loader]) : std::string_view());
    write_skipped_and_warnings(w, obj.rejected, obj.warnings);
    w.end_object();
  }
  w.end_array();
  w.key("bindings").begin_array();
  for (const resolve::symbol_binding& b : link.bindings) {
    w.begin_object().field("from", dyld_shown_path(link.objects[b.from])).field("to", dyld_shown_path(link.objects[b.to]));
    ldd_macho_detail::write_symbol(w, b.symbol, b.version, o.demangle);
    w.end_object();
  }
  w.end_array();
  w.key("unused").begin_array();
  for (const auto& u : link.unused) {
    w.begin_object().field("from", dyld_shown_path(link.objects[u.from])).field("name", u.install_name);
    w.field("path", u.to < link.objects.size() ? dyld_shown_path(link.objects[u.to]) : std::string_view());
    w.end_object();
  }
  w.end_array();
  w.key("undefined").begin_array();
  for (const auto& u : link.undefined) {
    w.begin_object().field("from", dyld_shown_path(link.objects[u.from]));
    ldd_macho_detail::write_symbol(w, u.symbol, u.version, o.demangle);
    w.end_object();
  }
  w.end_array();
  w.key("errors").begin_array();
  for (const auto& s : link.errors) w.value(s);
  w.end_array();
  w.key("warnings").begin_array();
  for (const auto& s : link.warnings) w.value(s);
  w.end_array();
  w.end_object();
}
#endif  // LINKSCOPE_DEFINITIONS

}  // namespace report
}  // namespace v0
}  // namespace linkscope
