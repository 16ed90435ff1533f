// examples/cli/ldd_macho.hpp — linkscope-ldd on a Mach-O file: the dyld
// emulator (resolve/dyld.hpp) and its outputs, in the shapes linkscope-ldd
// gives ELF files.
//
//   default      `\tINSTALL_NAME => PATH` per image in load order; a system
//                library is `=> PATH (system, not checked)`, a missing one
//                `=> not found` (`(weak)` when only weakly linked)
//   --tree       the dependency tree with the rule that found each image:
//                [rpath ENTRY of IMAGE], [loader-path], [executable-path],
//                [path], [fallback], [dyld-library-path], [tbd-inlined], [system]
//   --bindings   TSV from, to, symbol, version (always empty on Mach-O)
//   --unused     the root's dylib commands no import names
//   --undefined  `undefined symbol: NAME\t(IMAGE)`, dyld's "Symbol not found"
//   --format=dot, --json
// Exit status: 2 when the emulator found bad input (errors, each naming its
// image), else 1 for a finding (a library not found, undefined or unused
// with --undefined/--unused), else 0.
#pragma once

#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include <linkscope/core/mapped_file.hpp>
#include <linkscope/macho/fat.hpp>
#include <linkscope/macho/file.hpp>
#include <linkscope/report/json.hpp>
#include <linkscope/report/json_error.hpp>
#include <linkscope/report/ldd_macho.hpp>
#include <linkscope/resolve/dyld.hpp>

#include "cli/cli.hpp"

namespace linkscope::cli {

enum class ldd_output { list, tree, bindings, unused, undefined, dot, json };

// The element of linkscope-ldd's several-file --json document for a file that
// could not be linked: {"version": 1, "file": F, "error": MESSAGE[, "offset": N]}
// (report/json_error.hpp, docs/JSON.md rule 4).
// With one FILE (no `into`), --json prints that document by itself.
inline void json_error_element(linkscope::json_writer* into, bool json, const std::string& file,
                               const linkscope::error& err) {
  if (into) {
    linkscope::report::write_error_document(*into, linkscope::diagnostic(err, file));
  } else if (json) {
    {
      linkscope::json_writer w(stdout);
      linkscope::report::write_error_document(w, linkscope::diagnostic(err, file));
    }
    std::fputc('\n', stdout);
  }
}

namespace detail {

inline void put(std::string_view s) { std::fwrite(s.data(), 1, s.size(), stdout); }

inline std::string rule_of(const linkscope::resolve::dyld_object& o) {
  using linkscope::resolve::dyld_found_via;
  std::string r = to_string(o.via);
  if (o.via == dyld_found_via::rpath) r += " " + o.rpath + " of " + o.where;
  return r;
}

inline void print_list(const linkscope::resolve::dyld_link& link) {
  std::string line;
  for (std::size_t i = 1; i < link.objects.size(); ++i) {
    const auto& o = link.objects[i];
    line.assign("\t").append(o.name).append(" => ");
    if (!o.found())
      line.append("not found").append(o.weak ? " (weak)" : "");
    else
      line.append(o.path).append(o.kind == linkscope::resolve::dyld_image_kind::system ? " (system, not checked)" : "");
    line.push_back('\n');
    put(line);
  }
}

inline void print_tree(const linkscope::resolve::dyld_link& link) {
  using linkscope::resolve::no_object;
  std::vector<char> shown(link.objects.size(), 0);
  struct item {
    std::uint32_t id;
    std::size_t depth;
    std::string_view name;
  };
  std::vector<item> work{{0, 0, link.objects[0].path}};
  std::string line;
  while (!work.empty()) {
    const item it = work.back();
    work.pop_back();
    line.assign(2 * it.depth, ' ').append(it.name);
    const auto& o = link.objects[it.id];
    if (!o.found()) {
      line.append(" => not found").append(o.weak ? " (weak)\n" : "\n");
      put(line);
      continue;
    }
    if (it.depth > 0) line.append(" => ").append(o.path);
    line.append(" [").append(rule_of(o)).append("]");
    if (shown[it.id]) {
      line.append(" (see above)\n");
      put(line);
      continue;
    }
    shown[it.id] = 1;
    line.push_back('\n');
    put(line);
    for (std::size_t k = o.dependencies.size(); k-- > 0;)
      if (o.dependencies[k].object != no_object) work.push_back({o.dependencies[k].object, it.depth + 1, o.dependencies[k].install_name});
  }
}

// The document of one file into `w` (an element of the several-file document
// too): report/ldd_macho.hpp's (docs/JSON.md).
inline void write_json(linkscope::json_writer& w, const std::string& file, const linkscope::resolve::dyld_link& link,
                       bool demangle = false) {
  linkscope::report::ldd_macho_json_options o;
  o.demangle = demangle;
  linkscope::report::write_json(w, file, link, o);
}

inline void print_json(const std::string& file, const linkscope::resolve::dyld_link& link, bool demangle) {
  {
    linkscope::json_writer w(stdout);
    write_json(w, file, link, demangle);
  }
  std::fputc('\n', stdout);
}

inline void print_dot(const linkscope::resolve::dyld_link& link) {
  auto quote = [](std::string_view s) {
    std::string q = "\"";
    for (char c : s) {
      if (c == '"' || c == '\\') q.push_back('\\');
      q.push_back(c);
    }
    return q + "\"";
  };
  std::string text = "digraph linkscope_ldd {\n  rankdir=LR;\n  node [shape=box];\n";
  for (std::size_t i = 0; i < link.objects.size(); ++i) {
    const auto& o = link.objects[i];
    text += "  n" + std::to_string(i) + " [label=" + quote(o.found() ? o.path : o.name + " (not found)") +
            (o.found() ? (o.kind == linkscope::resolve::dyld_image_kind::system ? ", style=dashed" : "") : ", color=red") + "];\n";
  }
  for (std::size_t i = 0; i < link.objects.size(); ++i)
    for (const auto& d : link.objects[i].dependencies)
      if (d.object != linkscope::resolve::no_object)
        text += "  n" + std::to_string(i) + " -> n" + std::to_string(d.object) +
                (d.kind == linkscope::macho::dylib_kind::load ? "" : std::string(" [label=") + to_string(d.kind) + "]") + ";\n";
  text += "}\n";
  put(text);
}

}  // namespace detail

// linkscope-ldd on one Mach-O file; returns the exit status for it.
// With `into`, the --json document is written there instead of stdout.
// With `demangle` (--demangle), symbol names are printed demangled and the
// JSON rows get "demangled".
inline int ldd_macho(std::string_view tool, const std::string& file, ldd_output what,
                     linkscope::resolve::dyld_options options, linkscope::json_writer* into = nullptr,
                     bool demangle = false) {
  options.bindings = what != ldd_output::list && what != ldd_output::tree && what != ldd_output::dot;
  auto link = linkscope::resolve::link_dyld(file, options);
  if (!link) {
    report(tool, file, link.error());
    json_error_element(into, what == ldd_output::json, file, link.error());
    return exit_error;
  }
  int status = exit_ok;
  for (const auto& e : link->errors) {
    std::string line;
    line.append(tool).append(": ").append(file).append(": error: ").append(e).push_back('\n');
    std::fwrite(line.data(), 1, line.size(), stderr);
    status = exit_error;
  }
  for (const auto& w : link->warnings) warn(tool, file, w);
  bool missing = false;
  for (const auto& o : link->objects) {
    for (const auto& r : o.rejected) warn(tool, file, r.path + ": skipped: " + r.reason);
    for (const auto& w : o.warnings) warn(tool, file, o.name + ": " + w);
    if (!o.found() && !o.weak) {
      warn(tool, file, o.name + ": not found");
      missing = true;
    }
  }
  if (missing && status == exit_ok) status = exit_finding;
  switch (what) {
    case ldd_output::list: detail::print_list(*link); break;
    case ldd_output::tree: detail::print_tree(*link); break;
    case ldd_output::bindings: {
      std::string line;
      for (const auto& b : link->bindings) {
        line.assign(linkscope::report::dyld_shown_path(link->objects[b.from])).push_back('\t');
        line.append(linkscope::report::dyld_shown_path(link->objects[b.to])).push_back('\t');
        line.append(demangle ? linkscope::report::demangle_macho(b.symbol) : std::string(b.symbol)).push_back('\t');
        line.append(b.version).push_back('\n');
        detail::put(line);
      }
      break;
    }
    case ldd_output::unused: {
      bool any = false;
      for (const auto& u : link->unused) {
        if (u.from != 0) continue;
        if (!any) detail::put("Unused direct dependencies:\n");
        any = true;
        const std::string_view shown = u.to < link->objects.size() ? linkscope::report::dyld_shown_path(link->objects[u.to]) : u.install_name;
        detail::put("\t" + std::string(shown) + "\n");
      }
      if (any && status == exit_ok) status = exit_finding;
      break;
    }
    case ldd_output::undefined: {
      std::string line;
      for (const auto& u : link->undefined) {
        line.assign("undefined symbol: ").append(demangle ? linkscope::report::demangle_macho(u.symbol) : std::string(u.symbol)).append("\t(").append(linkscope::report::dyld_shown_path(link->objects[u.from])).append(")\n");
        detail::put(line);
      }
      if (!link->undefined.empty() && status == exit_ok) status = exit_finding;
      break;
    }
    case ldd_output::dot: detail::print_dot(*link); break;
    case ldd_output::json:
      if (into)
        detail::write_json(*into, file, *link, demangle);
      else
        detail::print_json(file, *link, demangle);
      break;
  }
  return status;
}

}  // namespace linkscope::cli
