// linkscope/report/check.hpp — the `linkscope-check --json` document
// (schema/linkscope-check.schema.json; the rules are docs/JSON.md's).
//
//   {"version": 1, "prefix": DIR, "conda_meta": bool, "dpkg": bool,
//    "files": [{"file": PATH, "relative": PATH-IN-PREFIX, "format": "elf" | "macho" | "pe",
//               "needed": [{"name", "path" | null, "found_via", "in_prefix", "used",
//                           "symbols": N, "allowed", "package" | null, "package_source"}],
//               "missing": [{"name", "needed_by", "direct"}], "unused": [NAME...],
//               "overlinked": [{"path", "soname", "via", "allowed", "symbols": ["name@VER"...]}],
//               "system": [PATH...], "rpaths": [{"tag", "entry", "expanded", "outside"}],
//               "undefined": [SYMBOL...], "floors": [VIOLATION...], "warnings": [...],
//               "error": "" | MESSAGE, "findings": N}],
//    "packages": [{"name", "source", "declared", "self", "allowed_only", "dsos": [...]}],
//    "undeclared": [PKG...], "unused_declared": [PKG...],
//    "statically_linked": [{"package", "evidence": [{"file", "copy_of", "count", "symbols"}]}],
//    "duplicates": [{"package_a", "file_a", "package_b", "file_b", "count", "symbols",
//                    "winner" | null, "consumer" | null}],
//    "unowned": [PATH...], "warnings": [...],
//    "stats": {"files", "objects_parsed", "lookups", "skipped_non_elf", "skipped_symlinks",
//              "skipped_static", "milliseconds"},
//    "failed": N, "findings": N}
//
// A VIOLATION (also linkscope-floors' "exceeded") is {"family", "max",
// "highest", "above": [{"library", "version", "symbols"}]}.
// linkscope.check(...).to_dict() in the Python module is this document, parsed.
#pragma once

#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

#include "linkscope/core/config.hpp"
#include "linkscope/core/error.hpp"
#include "linkscope/report/json.hpp"
#include "linkscope/resolve/check.hpp"
#include "linkscope/resolve/floors.hpp"

namespace linkscope {
inline namespace v0 {
namespace report {

struct check_json_options {
  double seconds = 0;  // the run's wall time, for stats.milliseconds
  // Threads that write the files' objects, a batch at a time; the document is
  // the same for every value.
  unsigned jobs = 1;
};

// One family over its limit.
inline void write_violation(json_writer& w, const resolve::limit_violation& v) {
  w.begin_object();
  w.field("family", v.family);
  w.field("max", v.max);
  w.field("highest", v.highest);
  w.key("above").begin_array();
  for (std::size_t i = 0; i < v.above.size(); ++i) {
    w.begin_object();
    w.field("library", v.libraries[i]);
    w.field("version", v.above[i].name);
    w.key("symbols").begin_array();
    for (const auto& sym : v.above[i].symbols) w.value(sym);
    w.end_array();
    w.end_object();
  }
  w.end_array();
  w.end_object();
}

void write_json(json_writer& w, const resolve::prefix_report& r, const check_json_options& o = {});

#if LINKSCOPE_DEFINITIONS
// One file's object in the "files" array.
inline void write_checked_file(json_writer& w, const resolve::file_report& f) {
  w.begin_object();
  w.field("file", f.path);
  w.field("relative", f.relative);
  w.field("format", f.format);
  w.key("needed").begin_array();
  for (const auto& n : f.needed) {
    w.begin_object();
    w.field("name", n.name);
    if (n.path.empty()) w.key("path").value(nullptr); else w.field("path", n.path);
    if (n.rule.empty()) w.field("found_via", resolve::to_string(n.via)); else w.field("found_via", n.rule);
    w.field("in_prefix", n.in_prefix);
    w.field("used", n.used);
    w.field("symbols", n.symbols);
    w.field("allowed", n.allowed);
    if (n.owner.package.empty()) w.key("package").value(nullptr); else w.field("package", n.owner.package);
    w.field("package_source", n.owner.source);
    w.end_object();
  }
  w.end_array();
  w.key("missing").begin_array();
  for (const auto& m : f.missing) {
    w.begin_object();
    w.field("name", m.name);
    w.field("needed_by", m.needed_by);
    w.field("direct", m.direct);
    w.end_object();
  }
  w.end_array();
  w.key("unused").begin_array();
  for (const auto& n : f.needed)
    if (!n.path.empty() && !n.used) w.value(n.name);
  w.end_array();
  w.key("overlinked").begin_array();
  for (const auto& o : f.overlinked) {
    w.begin_object();
    w.field("path", o.path);
    w.field("soname", o.soname);
    w.field("via", o.via);
    w.field("allowed", o.allowed);
    w.key("symbols").begin_array();
    for (const auto& s : o.symbols) w.value(s);
    w.end_array();
    w.end_object();
  }
  w.end_array();
  w.key("system").begin_array();
  for (const auto& n : f.needed)
    if (!n.path.empty() && !n.in_prefix) w.value(n.path);
  w.end_array();
  w.key("rpaths").begin_array();
  for (const auto& p : f.rpaths) {
    w.begin_object();
    w.field("tag", p.tag);
    w.field("entry", p.entry);
    w.field("expanded", p.expanded);
    w.field("outside", p.outside);
    w.end_object();
  }
  w.end_array();
  w.key("undefined").begin_array();
  for (const auto& u : f.undefined) w.value(u);
  w.end_array();
  w.key("floors").begin_array();
  for (const auto& v : f.floors) write_violation(w, v);
  w.end_array();
  w.key("warnings").begin_array();
  for (const auto& x : f.warnings) w.value(x);
  w.end_array();
  w.field("error", f.failed() ? describe(f.failure) : std::string());
  w.field("findings", f.findings);
  w.end_object();
}

LINKSCOPE_FUNC void write_json(json_writer& w, const resolve::prefix_report& r, const check_json_options& o) {
  w.begin_object();
  w.field("version", 1);
  w.field("prefix", r.prefix);
  w.field("conda_meta", r.have_conda);
  w.field("dpkg", r.have_dpkg);
  w.key("files").begin_array();
  if (o.jobs <= 1 || r.files.size() < 256) {
    for (const auto& f : r.files) write_checked_file(w, f);
  } else {
    // Each file's object is written on its own (one writer per file, on
    // o.jobs threads), a batch at a time, then copied in order.
    constexpr std::size_t batch = 1024;
    std::vector<std::string> parts(batch);
    for (std::size_t first = 0; first < r.files.size(); first += batch) {
      const std::size_t count = std::min(batch, r.files.size() - first);
      resolve::detail::run_parallel(std::min(o.jobs, 64u), count, [&](std::size_t i) {
        parts[i].clear();
        json_writer part(parts[i]);
        write_checked_file(part, r.files[first + i]);
      });
      for (std::size_t i = 0; i < count; ++i) w.raw_value(parts[i]);
    }
  }
  w.end_array();
  w.key("packages").begin_array();
  for (const auto& p : r.packages) {
    w.begin_object();
    w.field("name", p.name);
    w.field("source", p.source);
    w.field("declared", p.declared);
    w.field("self", p.self);
    w.field("allowed_only", p.allowed_only);
    w.key("dsos").begin_array();
    for (const auto& d : p.dsos) w.value(d);
    w.end_array();
    w.end_object();
  }
  w.end_array();
  w.key("undeclared").begin_array();
  for (const auto& s : r.undeclared) w.value(s);
  w.end_array();
  w.key("unused_declared").begin_array();
  for (const auto& s : r.unused_declared) w.value(s);
  w.end_array();
  w.key("statically_linked").begin_array();
  for (const auto& d : r.statically_linked) {
    w.begin_object().field("package", d.package).key("evidence").begin_array();
    for (const auto& e : d.evidence) {
      w.begin_object().field("file", e.file).field("copy_of", e.copy_of).field("count", e.count);
      w.key("symbols").begin_array();
      for (const auto& x : e.symbols) w.value(x);
      w.end_array().end_object();
    }
    w.end_array().end_object();
  }
  w.end_array();
  w.key("duplicates").begin_array();
  for (const auto& d : r.duplicates) {
    w.begin_object().field("package_a", d.package_a).field("file_a", d.file_a);
    w.field("package_b", d.package_b).field("file_b", d.file_b).field("count", d.count);
    w.key("symbols").begin_array();
    for (const auto& x : d.symbols) w.value(x);
    w.end_array();
    if (d.winner.empty()) w.key("winner").value(nullptr); else w.field("winner", d.winner);
    if (d.consumer.empty()) w.key("consumer").value(nullptr); else w.field("consumer", d.consumer);
    w.end_object();
  }
  w.end_array();
  w.key("unowned").begin_array();
  for (const auto& s : r.unowned) w.value(s);
  w.end_array();
  w.key("warnings").begin_array();
  for (const auto& s : r.warnings) w.value(s);
  w.end_array();
  w.key("stats").begin_object();
  w.field("files", r.files.size());
  w.field("objects_parsed", r.objects_parsed);
  w.field("lookups", r.lookups);
  w.field("skipped_non_elf", r.skipped_non_elf);
  w.field("skipped_symlinks", r.skipped_symlinks);
  w.field("skipped_static", r.skipped_static);
  w.field("milliseconds", static_cast<long long>(o.seconds * 1000));
  w.end_object();
  w.field("failed", r.failed);
  w.field("findings", r.findings);
  w.end_object();
}
#endif  // LINKSCOPE_DEFINITIONS

}  // namespace report
}  // namespace v0
}  // namespace linkscope
