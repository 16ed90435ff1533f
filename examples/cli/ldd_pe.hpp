// examples/cli/ldd_pe.hpp — linkscope-ldd on a PE image (.exe, .dll, .pyd,
// .node): the Windows loader (resolve/pe_load.hpp) and its outputs, in the
// shapes linkscope-ldd gives ELF files.
//
//   default      `\tNAME => PATH` per DLL in load order; an API set is
//                `NAME => HOST_PATH (api-set)`, a system DLL not read (no
//                --windows-root) `=> NAME (system, not checked)`, a missing
//                one `=> not found`, an ext-ms-* set without host
//                `=> not present (optional)`; ` (delay-load)` marks a DLL
//                reached only through delay-load imports
//   --tree       the dependency tree with the rule that found each DLL and
//                its class: [application-folder application], [known-dlls
//                system], [api-set ucrt -> ucrtbase.dll], [path ...] ...
//                and ", managed" for a CLR image (", managed IL-only" when
//                the loader stops at mscoree.dll)
//   --bindings   TSV from, to, symbol ("#N" for an ordinal), version (empty)
//   --unused     nothing: every DLL a PE image imports is bound by name
//   --undefined  the findings, one a line, as Wine's loader would complain:
//                `missing DLL: X\t(FROM)`, `missing export: X.NAME\t(FROM)`,
//                `forwarder target missing: X.NAME -> T\t(FROM)`,
//                `forwarder cycle: X.NAME -> T -> ...; FILE: export address
//                table entry starts a forwarder cycle (offset 0x...)\t(FROM)`
//                (FILE holds the export that starts the cycle; stderr gets
//                the same as a warning), with ` [delay-load]` for delay-load
//                imports
//   --format=dot, --json
// Exit status: 2 for an unreadable or non-PE file, 1 for a finding (a DLL not
// found outside delay-loads; any finding with --undefined), else 0.
#pragma once

#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <linkscope/coff/pe.hpp>
#include <linkscope/report/json.hpp>
#include <linkscope/report/json_error.hpp>
#include <linkscope/report/ldd_pe.hpp>
#include <linkscope/resolve/pe_load.hpp>
#include <linkscope/symbols/demangle.hpp>

#include "cli/cli.hpp"
#include "cli/ldd_macho.hpp"
#include "cli/options.hpp"

namespace linkscope::cli {

namespace pe_detail {

using linkscope::resolve::windows_link;

inline void put(std::string_view s) { std::fwrite(s.data(), 1, s.size(), stdout); }

inline std::string shown(const windows_link& w, std::uint32_t id) {
  return std::string(linkscope::report::windows_shown_path(w, id));
}

inline std::string rule_of(const windows_link& w, std::uint32_t id) {
  const auto& info = w.info[id];
  std::string r = to_string(info.rule);
  r.append(" ").append(to_string(info.kind));
  if (info.host != linkscope::resolve::no_object) r.append(" -> ").append(w.link.objects[info.host].name);
  if (info.delay_only) r.append(", delay-load");
  if (info.managed) r.append(info.il_only ? ", managed IL-only" : ", managed");
  for (const auto& a : info.assemblies) r.append(", assembly ").append(a);
  return r;
}

inline std::string target_text(const windows_link& w, std::uint32_t i) {
  const auto& o = w.link.objects[i];
  const auto& info = w.info[i];
  if (info.optional_absent) return "not present (optional)";
  if (!o.found()) return "not found";
  if (info.assumed) return o.name + " (system, not checked)";
  std::string t = o.path;
  if (info.host != linkscope::resolve::no_object) t.append(" (api-set)");
  return t;
}

inline void print_list(const windows_link& w) {
  std::string line;
  for (std::size_t i = 1; i < w.link.objects.size(); ++i) {
    const auto id = static_cast<std::uint32_t>(i);
    line.assign("\t").append(w.link.objects[i].name).append(" => ").append(target_text(w, id));
    if (w.info[i].delay_only) line.append(" (delay-load)");
    line.push_back('\n');
    put(line);
  }
}

inline void print_tree(const windows_link& w) {
  std::vector<char> shown_once(w.link.objects.size(), 0);
  struct item {
    std::uint32_t id;
    std::size_t depth;
    const char* note;
  };
  std::vector<item> work{{0, 0, nullptr}};
  std::string line;
  while (!work.empty()) {
    const item it = work.back();
    work.pop_back();
    const auto& o = w.link.objects[it.id];
    line.assign(2 * it.depth, ' ').append(it.depth == 0 ? o.path : o.name);
    if (it.depth > 0) line.append(" => ").append(target_text(w, it.id));
    line.append(" [").append(rule_of(w, it.id)).append("]");
    if (it.note != nullptr) line.append(it.note);
    if (shown_once[it.id]) {
      line.append(" (see above)\n");
      put(line);
      continue;
    }
    shown_once[it.id] = 1;
    line.push_back('\n');
    put(line);
    // Stack order: imports first, then the DLLs its forwarders loaded.
    const auto& forwards = w.info[it.id].forwards_to;
    for (std::size_t k = forwards.size(); k-- > 0;) work.push_back({forwards[k], it.depth + 1, " (for a forwarder)"});
    for (std::size_t k = o.needed_objects.size(); k-- > 0;) {
      const auto d = o.needed_objects[k];
      if (d == linkscope::resolve::no_object) continue;
      const bool delay = k < w.info[it.id].needed_delay.size() && w.info[it.id].needed_delay[k];
      work.push_back({d, it.depth + 1, delay ? " (delay-load import)" : nullptr});
    }
  }
}

// --demangle: an Itanium name (a mingw import) as c++filt prints it; an
// ordinal ("#N") or an MSVC-decorated name is kept.
inline std::string shown_symbol(std::string_view name, bool demangle) {
  return demangle ? linkscope::symbols::demangle(name) : std::string(name);
}

inline std::string finding_text(const windows_link& w, const linkscope::resolve::import_finding& f, bool demangle = false) {
  using linkscope::resolve::import_problem;
  std::string line;
  switch (f.problem) {
    case import_problem::missing_dll: line.assign("missing DLL: ").append(f.dll_name); break;
    case import_problem::missing_export: line.assign("missing export: ").append(f.dll_name).append(".").append(shown_symbol(f.symbol, demangle)); break;
    case import_problem::forwarder_missing:
    case import_problem::forwarder_cycle:
      line.assign(f.problem == import_problem::forwarder_cycle ? "forwarder cycle: " : "forwarder target missing: ")
          .append(f.dll_name)
          .append(".")
          .append(shown_symbol(f.symbol, demangle));
      if (!f.detail.empty()) line.append(" -> ").append(f.detail);
      if (f.cycle_at != linkscope::resolve::no_object)
        line.append("; ").append(f.cycle.file).append(": ").append(linkscope::describe(f.cycle.err));
      break;
  }
  if (f.delay) line.append(" [delay-load]");
  line.append("\t(").append(shown(w, f.from)).append(")");
  return line;
}

// The document of one image into `out` (an element of the several-file
// document too): report/ldd_pe.hpp's (docs/JSON.md).
inline void write_json(linkscope::json_writer& out, const std::string& file, const windows_link& w, bool demangle = false) {
  linkscope::report::ldd_pe_json_options o;
  o.demangle = demangle;
  linkscope::report::write_json(out, file, w, o);
}

inline void print_json(const std::string& file, const windows_link& w, bool demangle) {
  {
    linkscope::json_writer out(stdout);
    write_json(out, file, w, demangle);
  }
  std::fputc('\n', stdout);
}

inline void print_dot(const windows_link& w) {
  auto quote = [](std::string_view s) {
    std::string q = "\"";
    for (char c : s) {
      if (c == '"' || c == '\\') q.push_back('\\');
      q.push_back(c);
    }
    return q + "\"";
  };
  std::string text = "digraph linkscope_ldd {\n  rankdir=LR;\n  node [shape=box];\n";
  for (std::size_t i = 0; i < w.link.objects.size(); ++i) {
    const auto& o = w.link.objects[i];
    const auto& info = w.info[i];
    std::string style;
    if (!o.found() && !info.optional_absent) style = ", color=red";
    else if (info.kind == linkscope::resolve::dll_class::system || info.assumed) style = ", style=dashed";
    else if (info.kind == linkscope::resolve::dll_class::api_set || info.kind == linkscope::resolve::dll_class::ucrt)
      style = ", style=dotted";
    text += "  n" + std::to_string(i) + " [label=" + quote(o.found() ? o.name : o.name + " (not found)") + style + "];\n";
  }
  for (std::size_t i = 0; i < w.link.objects.size(); ++i) {
    const auto& o = w.link.objects[i];
    for (std::size_t k = 0; k < o.needed_objects.size(); ++k)
      if (o.needed_objects[k] != linkscope::resolve::no_object)
        text += "  n" + std::to_string(i) + " -> n" + std::to_string(o.needed_objects[k]) +
                (k < w.info[i].needed_delay.size() && w.info[i].needed_delay[k] ? " [style=dashed, label=delay]" : "") +
                ";\n";
    if (w.info[i].host != linkscope::resolve::no_object)
      text += "  n" + std::to_string(i) + " -> n" + std::to_string(w.info[i].host) + " [label=host];\n";
  }
  text += "}\n";
  put(text);
}

}  // namespace pe_detail

// The loader's options from linkscope-ldd's: --windows-root, --load-mode,
// --path, --dll-dir, --known-dlls, --current-dir, --executable. A bad
// --load-mode: std::nullopt.
inline std::optional<linkscope::resolve::winload_options> winload_options_from(const parsed& p) {
  linkscope::resolve::winload_options o;
  auto split = [](const std::string& list, std::vector<std::string>& into) {
    std::size_t start = 0;
    while (start <= list.size()) {
      std::size_t end = list.find(';', start);
      if (end == std::string::npos) end = list.size();
      if (end > start) into.push_back(list.substr(start, end - start));
      start = end + 1;
    }
  };
  if (p.has("windows-root")) o.windows_root = p.value("windows-root");
  if (p.has("executable")) o.executable = p.value("executable");
  if (p.has("current-dir")) o.current_dir = p.value("current-dir");
  for (const std::string& v : p.values("path")) split(v, o.path);
  for (const std::string& v : p.values("dll-dir")) o.dll_dirs.push_back(v);
  for (const std::string& v : p.values("known-dlls")) split(v, o.known_dlls);
  if (p.has("load-mode")) {
    const std::string m = p.value("load-mode");
    if (m == "program") o.mode = linkscope::resolve::load_mode::program;
    else if (m == "altered") o.mode = linkscope::resolve::load_mode::altered;
    else if (m == "python") o.mode = linkscope::resolve::load_mode::python;
    else return std::nullopt;
  }
  return o;
}

// linkscope-ldd on one PE image; returns the exit status for it.
// With `into`, the --json document is written there instead of stdout.
// With `demangle` (--demangle), Itanium symbol names are printed demangled and
// the JSON rows get "demangled".
inline int ldd_pe(std::string_view tool, const std::string& file, ldd_output what,
                  const linkscope::resolve::winload_options& options, linkscope::json_writer* into = nullptr,
                  bool demangle = false) {
  auto w = linkscope::resolve::load_windows(file, options);
  if (!w) {
    report(tool, w.error());
    json_error_element(into, what == ldd_output::json, file, w.error().err);
    return exit_error;
  }
  int status = exit_ok;
  for (const auto& s : w->link.warnings) warn(tool, file, s);
  for (std::size_t i = 0; i < w->link.objects.size(); ++i) {
    const auto& o = w->link.objects[i];
    for (const auto& r : o.rejected) warn(tool, file, r.path + ": skipped: " + r.reason);
    for (const auto& s : o.warnings) warn(tool, file, (o.path.empty() ? o.name : o.path) + ": " + s);
  }
  for (const auto& f : w->findings)
    if (f.cycle_at != linkscope::resolve::no_object) warn(tool, f.cycle);
  for (const auto& f : w->findings)
    if (f.problem == linkscope::resolve::import_problem::missing_dll && !f.delay) {
      warn(tool, file, f.dll_name + ": not found (needed by " + pe_detail::shown(*w, f.from) + ")");
      status = exit_finding;
    }
  switch (what) {
    case ldd_output::list: pe_detail::print_list(*w); break;
    case ldd_output::tree: pe_detail::print_tree(*w); break;
    case ldd_output::bindings: {
      std::string line;
      for (const auto& b : w->link.bindings) {
        line.assign(pe_detail::shown(*w, b.from)).push_back('\t');
        line.append(pe_detail::shown(*w, b.to)).push_back('\t');
        line.append(pe_detail::shown_symbol(b.symbol, demangle)).push_back('\t');
        line.append(b.version).push_back('\n');
        pe_detail::put(line);
      }
      break;
    }
    case ldd_output::unused: break;
    case ldd_output::undefined:
      for (const auto& f : w->findings) pe_detail::put(pe_detail::finding_text(*w, f, demangle) + "\n");
      if (!w->findings.empty()) status = exit_finding;
      break;
    case ldd_output::dot: pe_detail::print_dot(*w); break;
    case ldd_output::json:
      if (into)
        pe_detail::write_json(*into, file, *w, demangle);
      else
        pe_detail::print_json(file, *w, demangle);
      break;
  }
  return status;
}

}  // namespace linkscope::cli
