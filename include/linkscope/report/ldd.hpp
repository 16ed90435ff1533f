// linkscope/report/ldd.hpp — the `linkscope-ldd --json FILE` document of an
// ELF program (schema/linkscope-ldd.schema.json, "elf"; the rules are
// docs/JSON.md's).
//
//   {"version": 1, "file": FILE, "interp": PATH, "needed": [NAME...], "rpath", "runpath",
//    "libs": [{"name", "path", "realpath", "found_via", ["subdir", "where",] "soname", "needed",
//              "rpath", "runpath", "preloaded", "skipped": [{"path", "reason"}], "warnings"}],
//    "bindings":  [{"from", "to", "symbol": "name@VER", "name", "version": VER | null}],
//    "unused":    [PATH...],
//    "undefined": [{"from", "symbol", "name", "version"}],
//    "warnings":  [MESSAGE...]}          the run's, then "NAME: not found" per missing library
//
// A binding's or reference's version is the one the reference asks for
// (verneed), so its symbol is `name@VER` (one @), as the --bindings TSV
// gives it in its fourth column. Over several files, linkscope-ldd writes
// {"version": 1, "files": [...]} of these documents (Mach-O and PE ones
// included) and {"file", "error"} elements (report/json_error.hpp).
// linkscope.ldd(...).to_dict() in the Python module is this document, parsed.
#pragma once

#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "linkscope/core/config.hpp"
#include "linkscope/report/json.hpp"
#include "linkscope/report/json_error.hpp"
#include "linkscope/resolve/ld_so/result.hpp"
#include "linkscope/resolve/search_path.hpp"

namespace linkscope {
inline namespace v0 {
namespace report {

struct ldd_json_options {
  // Per object, its path with every symlink resolved ("" when not found);
  // object_realpaths() makes it. Without it, "realpath" is "".
  const std::vector<std::string>* realpaths = nullptr;
  bool demangle = false;  // add "demangled" beside symbols (--demangle)
};

// realpath(3) of each object that was found (index 0, the program, is "").
inline std::vector<std::string> object_realpaths(const resolve::dynamic_link& link) {
  std::vector<std::string> out(link.objects.size());
#if !defined(_WIN32)
  for (std::size_t i = 1; i < link.objects.size(); ++i) {
    const auto& o = link.objects[i];
    if (!o.found()) continue;
    if (char* r = ::realpath(o.file.c_str(), nullptr)) {
      out[i] = r;
      std::free(r);
    }
  }
#endif
  return out;
}

// "skipped": [{"path", "reason"}] and "warnings" of one library, in the
// ELF, Mach-O and PE documents alike (candidates the loader refused).
inline void write_skipped_and_warnings(json_writer& w, const std::vector<resolve::rejected_candidate>& rejected,
                                       const std::vector<std::string>& warnings) {
  w.key("skipped").begin_array();
  for (const auto& r : rejected) w.begin_object().field("path", r.path).field("reason", r.reason).end_object();
  w.end_array();
  w.key("warnings").begin_array();
  for (const auto& s : warnings) w.value(s);
  w.end_array();
}

void write_json(json_writer& w, std::string_view file, const resolve::dynamic_link& link,
                       const ldd_json_options& o = {});

#if LINKSCOPE_DEFINITIONS
LINKSCOPE_FUNC void write_json(json_writer& w, std::string_view file, const resolve::dynamic_link& link,
                       const ldd_json_options& o) {
  const resolve::loaded_object& main = link.objects[0];
  w.begin_object().field("version", 1).field("file", file);
  std::string_view interp;
  for (const auto& obj : link.objects)
    if (obj.is_interpreter) interp = obj.path;
  w.field("interp", interp);
  w.key("needed").begin_array();
  for (auto n : main.needed) w.value(n);
  w.end_array();
  w.field("rpath", main.rpath).field("runpath", main.runpath);
  w.key("libs").begin_array();
  for (std::size_t i = 1; i < link.objects.size(); ++i) {
    const auto& obj = link.objects[i];
    w.begin_object().field("name", obj.name);
    w.field("path", obj.found() ? std::string_view(obj.path) : std::string_view());
    w.field("realpath", o.realpaths != nullptr && i < o.realpaths->size() ? std::string_view((*o.realpaths)[i])
                                                                            : std::string_view());
    w.field("found_via", resolve::to_string(obj.via));
    if (!obj.subdir.empty()) w.field("subdir", obj.subdir);
    if (!obj.where.empty()) w.field("where", obj.where);
    w.field("soname", obj.soname);
    w.key("needed").begin_array();
    for (auto n : obj.needed) w.value(n);
    w.end_array();
    w.field("rpath", obj.rpath).field("runpath", obj.runpath).field("preloaded", obj.preloaded);
    write_skipped_and_warnings(w, obj.rejected, obj.warnings);
    w.end_object();
  }
  w.end_array();
  w.key("bindings").begin_array();
  for (const resolve::symbol_binding& b : link.bindings) {
    w.begin_object().field("from", link.objects[b.from].path).field("to", link.objects[b.to].path);
    write_symbol_fields(w, b.symbol, b.version, false, o.demangle);
    w.end_object();
  }
  w.end_array();
  w.key("unused").begin_array();
  for (std::uint32_t u : link.unused) w.value(link.objects[u].path);
  w.end_array();
  w.key("undefined").begin_array();
  for (const auto& u : link.undefined) {
    w.begin_object().field("from", link.objects[u.from].path);
    write_symbol_fields(w, u.symbol, u.version, false, o.demangle);
    w.end_object();
  }
  w.end_array();
  // Every warning of the run, the missing libraries included (stderr says
  // "NAME: not found" for them too).
  w.key("warnings").begin_array();
  for (const auto& s : link.warnings) w.value(s);
  for (const auto& obj : link.objects)
    if (!obj.found()) w.value(obj.name + ": not found");
  w.end_array();
  w.end_object();
}
#endif  // LINKSCOPE_DEFINITIONS

}  // namespace report
}  // namespace v0
}  // namespace linkscope
