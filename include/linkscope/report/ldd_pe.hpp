// linkscope/report/ldd_pe.hpp — the `linkscope-ldd --json FILE` document of a
// PE image (.exe, .dll, .pyd, .node; schema/linkscope-ldd.schema.json, "pe";
// the rules are docs/JSON.md's), over the Windows loader's answer
// (resolve/pe_load.hpp).
//
//   {"version": 1, "file": FILE, "format": "pe", "managed", "il_only", "assemblies": [NAME VERSION...],
//    "needed": [{"name", "delay_load"}],
//    "libs": [{"name", "path", "found_via", "class", "api_set_host", "found", "optional",
//              "delay_load_only", "checked", "loaded_by", "needed": [{"name", "delay_load"}],
//              "assemblies", "skipped": [{"path", "reason"}], "warnings"}],
//    "bindings":  [{"from", "to", "symbol", "name", "version": null}],
//    "unused":    [],                  every DLL a PE image imports is bound by name
//    "undefined": [{"from", "problem", "dll", "symbol"[, "demangled"], "delay_load", "forwarder"
//                   [, "cycle_file", "offset"]}],
//    "warnings":  [MESSAGE...]}
//
// "managed": the root has a CLR header; "il_only": it is also flagged
// COMIMAGE_FLAGS_ILONLY, so the loader binds mscoree.dll (_CorDllMain or
// _CorExeMain) and nothing else: its other imports are the runtime's.
// A DLL is named by the path it was found at, or by its name when it was not
// found. "path" is "" for a DLL not found and for a system DLL assumed (no
// Windows tree given); "checked" says its exports were read. A binding by
// ordinal names the symbol "#N". "problem" is missing-dll, missing-export,
// forwarder-target-missing or forwarder-cycle, as Wine's loader complains.
// A forwarder-cycle row names the DLL whose export starts the cycle
// ("cycle_file") and the file offset of that export's address table entry
// ("offset"). With `demangle`, "demangled" is an Itanium name (a mingw import) as c++filt
// prints it.
// linkscope.ldd(...).to_dict() in the Python module is this document, parsed.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "linkscope/report/json.hpp"
#include "linkscope/report/json_error.hpp"
#include "linkscope/report/ldd.hpp"
#include "linkscope/resolve/pe_load.hpp"

namespace linkscope {
inline namespace v0 {
namespace report {

struct ldd_pe_json_options {
  bool demangle = false;  // add "demangled" beside symbols (--demangle)
};

// How the document names a DLL: its path, or its name when it was not found.
inline std::string_view windows_shown_path(const resolve::windows_link& w, std::uint32_t id) {
  const auto& o = w.link.objects[id];
  return o.path.empty() ? std::string_view(o.name) : std::string_view(o.path);
}

namespace ldd_pe_detail {

// "needed": each import of object `i`, and whether it is a delay-load one.
inline void write_needed(json_writer& out, const resolve::windows_link& w, std::size_t i) {
  out.key("needed").begin_array();
  const auto& o = w.link.objects[i];
  for (std::size_t k = 0; k < o.needed.size(); ++k)
    out.begin_object()
        .field("name", o.needed[k])
        .field("delay_load", k < w.info[i].needed_delay.size() && w.info[i].needed_delay[k])
        .end_object();
  out.end_array();
}

}  // namespace ldd_pe_detail

inline void write_json(json_writer& out, std::string_view file, const resolve::windows_link& w,
                       const ldd_pe_json_options& o = {}) {
  out.begin_object().field("version", 1).field("file", file).field("format", "pe").field("managed", w.root_managed);
  out.field("il_only", w.root_il_only);
  out.key("assemblies").begin_array();
  for (const auto& a : w.info[0].assemblies) out.value(a);
  out.end_array();
  ldd_pe_detail::write_needed(out, w, 0);
  out.key("libs").begin_array();
  for (std::size_t i = 1; i < w.link.objects.size(); ++i) {
    const auto& obj = w.link.objects[i];
    const auto& info = w.info[i];
    const bool hosted = info.host != resolve::no_object;
    out.begin_object().field("name", obj.name);
    out.field("path", obj.found() && !info.assumed ? std::string_view(obj.path) : std::string_view());
    out.field("found_via", resolve::to_string(info.rule)).field("class", resolve::to_string(info.kind));
    out.field("api_set_host", hosted ? std::string_view(w.link.objects[info.host].name) : std::string_view());
    out.field("found", obj.found()).field("optional", info.optional_absent).field("delay_load_only", info.delay_only);
    out.field("checked", obj.found() && !info.assumed && !hosted);
    out.field("loaded_by", obj.loader < w.link.objects.size() ? windows_shown_path(w, obj.loader) : std::string_view());
    ldd_pe_detail::write_needed(out, w, i);
    out.key("assemblies").begin_array();
    for (const auto& a : info.assemblies) out.value(a);
    out.end_array();
    write_skipped_and_warnings(out, obj.rejected, obj.warnings);
    out.end_object();
  }
  out.end_array();
  out.key("bindings").begin_array();
  for (const resolve::symbol_binding& b : w.link.bindings) {
    out.begin_object().field("from", windows_shown_path(w, b.from)).field("to", windows_shown_path(w, b.to));
    write_symbol_fields(out, b.symbol, b.version, false, o.demangle);
    out.end_object();
  }
  out.end_array();
  out.key("unused").begin_array().end_array();
  out.key("undefined").begin_array();
  for (const auto& f : w.findings) {
    out.begin_object().field("from", windows_shown_path(w, f.from)).field("problem", resolve::to_string(f.problem));
    out.field("dll", f.dll_name).field("symbol", f.symbol);
    write_demangled(out, f.symbol, o.demangle);
    out.field("delay_load", f.delay).field("forwarder", f.detail);
    if (f.cycle_at != resolve::no_object)
      out.field("cycle_file", windows_shown_path(w, f.cycle_at)).field("offset", f.cycle.offset());
    out.end_object();
  }
  out.end_array();
  out.key("warnings").begin_array();
  for (const auto& s : w.link.warnings) out.value(s);
  out.end_array();
  out.end_object();
}

}  // namespace report
}  // namespace v0
}  // namespace linkscope
