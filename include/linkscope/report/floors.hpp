// linkscope/report/floors.hpp — the `linkscope-floors --json` document
// (schema/linkscope-floors.schema.json; the rules are docs/JSON.md's) of a
// resolve::floors_set_report. linkscope.floors(...).to_dict() in the Python
// module is this document, parsed.
//
//   {"version": 1,
//    "files": [ELF | MACHO | PE | {"file", "error", "offset", ...}],
//    "set": {"families": [{"family", "version", "files": [PATH...]}],
//            "x86_isa_level", "private_files": [PATH...],
//            "windows": {"version", "file"} | null, "macos_minos": {"version", "file"} | null,
//            "policy": {"best", "decided_by"} | null (only with policies)},
//    "exceeded": bool}
//
//   ELF:   {"file", "format": "elf", "machine", "libraries": [{"library", "versions":
//           [{"name", "scheme", "weak", "symbols"}], "highest": [{"family", "version",
//           "symbols"}], "private", "unordered"}], "families": [...], "x86_isa_needed":
//           {"mask", "level"} | null, "exceeded": [VIOLATION...], "policy": {...}}
//   MACHO: {"file", "format": "macho", "universal", "slices": [{"arch", "platforms":
//           [{"platform", "command", "minos", "sdk"}]}], "macos_minos", "above_macos_target",
//           "missing_archs"}
//   PE:    {"file", "format": "pe", "machine", "pe32_plus", "dll", "subsystem", "os_version",
//           "subsystem_version", "windows", "imports", "crt": [{"dll", "flavour", "version"}],
//           "above_windows_target", "forbidden_crt"}
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "linkscope/coff/pe.hpp"
#include "linkscope/core/config.hpp"
#include "linkscope/report/check.hpp"
#include "linkscope/report/json.hpp"
#include "linkscope/report/json_error.hpp"
#include "linkscope/resolve/floors_set.hpp"

namespace linkscope {
inline namespace v0 {
namespace report {
namespace floors_detail {

inline void write_strings(json_writer& w, std::string_view key, const std::vector<std::string>& values) {
  w.key(key).begin_array();
  for (const auto& v : values) w.value(v);
  w.end_array();
}

// [{"family", "version", "symbols"}]: the highest version of each family.
inline void write_families(json_writer& w, std::string_view key, const std::vector<resolve::family_floor>& families) {
  w.key(key).begin_array();
  for (const auto& h : families) {
    w.begin_object();
    w.field("family", h.family);
    w.field("version", h.highest);
    write_strings(w, "symbols", h.symbols);
    w.end_object();
  }
  w.end_array();
}

void write_macho(json_writer& w, const resolve::file_floors& in);

void write_pe(json_writer& w, const resolve::file_floors& in);

void write_file(json_writer& w, const resolve::file_floors& in, int max_isa);

}  // namespace floors_detail

// The whole document; `limits` are the ones the report was made with.
void write_json(json_writer& w, const resolve::floors_set_report& r, const resolve::floors_limits& limits);

#if LINKSCOPE_DEFINITIONS
namespace floors_detail {
LINKSCOPE_FUNC void write_macho(json_writer& w, const resolve::file_floors& in) {
  const resolve::macho_floors& m = *in.macho;
  w.begin_object();
  w.field("file", in.path);
  w.field("format", "macho");
  w.field("universal", m.universal);
  w.key("slices").begin_array();
  for (const auto& s : m.slices) {
    w.begin_object();
    w.field("arch", s.arch);
    w.key("platforms").begin_array();
    for (const auto& p : s.platforms) {
      w.begin_object();
      w.field("platform", p.platform);
      w.field("command", p.command);
      w.field("minos", resolve::macos_version_string(p.minos));
      w.field("sdk", resolve::macos_version_string(p.sdk));
      w.end_object();
    }
    w.end_array();
    w.end_object();
  }
  w.end_array();
  w.key("macos_minos");
  if (auto minos = m.macos_minos()) w.value(resolve::macos_version_string(*minos));
  else w.value(nullptr);
  write_strings(w, "above_macos_target", in.macho_exceeded.above_target);
  write_strings(w, "missing_archs", in.macho_exceeded.missing_archs);
  w.end_object();
}

LINKSCOPE_FUNC void write_pe(json_writer& w, const resolve::file_floors& in) {
  const resolve::pe_floors& f = *in.pe;
  w.begin_object();
  w.field("file", in.path);
  w.field("format", "pe");
  w.field("machine", resolve::pe_machine_name(f.machine));
  w.field("pe32_plus", f.pe32_plus);
  w.field("dll", f.dll);
  w.field("subsystem", pe::subsystem_name(f.subsystem));
  w.field("os_version", resolve::windows_version_string(f.major_os_version, f.minor_os_version));
  w.field("subsystem_version", resolve::windows_version_string(f.major_subsystem_version, f.minor_subsystem_version));
  const auto floor = f.windows_floor();
  w.field("windows", resolve::windows_version_string(floor.first, floor.second));
  write_strings(w, "imports", f.imports);
  w.key("crt").begin_array();
  for (const auto& c : f.crts) {
    w.begin_object();
    w.field("dll", c.dll);
    w.field("flavour", resolve::to_string(c.flavour));
    w.field("version", c.version);
    w.end_object();
  }
  w.end_array();
  w.field("above_windows_target", in.windows_exceeded);
  write_strings(w, "forbidden_crt", in.forbidden_crts);
  w.end_object();
}

LINKSCOPE_FUNC void write_file(json_writer& w, const resolve::file_floors& in, int max_isa) {
  if (in.macho) return write_macho(w, in);
  if (in.pe) return write_pe(w, in);
  const resolve::elf_floors& f = *in.elf;
  w.begin_object();
  w.field("file", in.path);
  w.field("format", "elf");
  w.field("machine", static_cast<unsigned>(f.machine));
  w.key("libraries").begin_array();
  for (const auto& lib : f.libraries) {
    w.begin_object();
    w.field("library", lib.library);
    w.key("versions").begin_array();
    for (const auto& v : lib.versions) {
      w.begin_object();
      w.field("name", v.name);
      w.field("scheme", resolve::to_string(v.scheme));
      w.field("weak", v.weak);
      write_strings(w, "symbols", v.symbols);
      w.end_object();
    }
    w.end_array();
    write_families(w, "highest", lib.highest);
    write_strings(w, "private", lib.private_);
    write_strings(w, "unordered", lib.unordered);
    w.end_object();
  }
  w.end_array();
  write_families(w, "families", f.families);
  w.key("x86_isa_needed");
  if (f.x86_isa_needed) {
    w.begin_object();
    w.field("mask", *f.x86_isa_needed);
    w.field("level", resolve::x86_isa_level_name(f.x86_isa_level()));
    w.end_object();
  } else {
    w.value(nullptr);
  }
  w.key("exceeded").begin_array();
  for (const auto& v : in.violations) write_violation(w, v);
  if (in.isa_exceeded) {
    w.begin_object();
    w.field("family", "x86-64");
    w.field("max", resolve::x86_isa_level_name(max_isa));
    w.field("highest", resolve::x86_isa_level_name(f.x86_isa_level()));
    w.key("above").begin_array().end_array();
    w.end_object();
  }
  w.end_array();
  if (in.policy) {
    const auto& r = *in.policy;
    w.key("policy").begin_object();
    w.field("arch", r.arch);
    w.key("best");
    if (r.best.empty()) w.value(nullptr);
    else w.value(r.best);
    w.key("verdicts").begin_array();
    for (const auto& v : r.verdicts) {
      w.begin_object();
      w.field("name", v.name);
      w.field("tag", v.tag);
      w.field("priority", v.priority);
      w.field("satisfied", v.satisfied);
      w.key("above").begin_array();
      for (const auto& e : v.above) {
        w.begin_object();
        w.field("library", e.library);
        w.field("version", e.version);
        write_strings(w, "symbols", e.symbols);
        w.end_object();
      }
      w.end_array();
      write_strings(w, "blacklisted", v.blacklisted);
      write_strings(w, "outside_whitelist", v.outside_whitelist);
      w.field("isa_exceeded", v.isa_exceeded);
      w.end_object();
    }
    w.end_array();
    w.end_object();
  }
  w.end_object();
}
}  // namespace floors_detail

LINKSCOPE_FUNC void write_json(json_writer& w, const resolve::floors_set_report& r, const resolve::floors_limits& limits) {
  w.begin_object();
  w.field("version", 1);
  w.key("files").begin_array();
  for (const auto& in : r.files) floors_detail::write_file(w, in, limits.max_isa);
  for (const auto& d : r.failures) write_error_element(w, d);
  w.end_array();
  w.key("set").begin_object();
  w.key("families").begin_array();
  for (const auto& fam : r.set.families) {
    w.begin_object();
    w.field("family", fam.family);
    w.field("version", fam.highest);
    w.key("files").begin_array();
    for (std::size_t i : fam.files) w.value(r.files[i].path);
    w.end_array();
    w.end_object();
  }
  w.end_array();
  w.field("x86_isa_level", resolve::x86_isa_level_name(r.set.x86_isa_level));
  w.key("private_files").begin_array();
  for (std::size_t i : r.set.private_files) w.value(r.files[i].path);
  w.end_array();
  w.key("windows");
  if (r.windows) {
    w.begin_object();
    w.field("version", resolve::windows_version_string(r.windows->first, r.windows->second));
    w.field("file", r.files[r.windows_file].path);
    w.end_object();
  } else {
    w.value(nullptr);
  }
  w.key("macos_minos");
  if (r.macos_minos) {
    w.begin_object();
    w.field("version", resolve::macos_version_string(*r.macos_minos));
    w.field("file", r.files[r.macos_file].path);
    w.end_object();
  } else {
    w.value(nullptr);
  }
  if (!limits.policies.empty()) {
    w.key("policy");
    if (r.policy_file < 0) {
      w.value(nullptr);
    } else {
      w.begin_object();
      w.field("best", r.files[static_cast<std::size_t>(r.policy_file)].policy->best);
      w.field("decided_by", r.files[static_cast<std::size_t>(r.policy_file)].path);
      w.end_object();
    }
  }
  w.end_object();
  w.field("exceeded", r.exceeded);
  w.end_object();
}
#endif  // LINKSCOPE_DEFINITIONS

}  // namespace report
}  // namespace v0
}  // namespace linkscope
