// linkscope-floors: the oldest system a file runs on, and the symbols that
// decide it (resolve/floors.hpp): per needed library the highest GLIBC_,
// GLIBCXX_, CXXABI_, GCC_, OPENSSL_ ... version with the symbols behind it,
// GLIBC_PRIVATE, the x86-64 ISA level; checked against --max-* limits.
#include <algorithm>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <linkscope/core/mapped_file.hpp>
#include <linkscope/elf/file.hpp>
#include <linkscope/coff/pe.hpp>
#include <linkscope/report/floors.hpp>
#include <linkscope/resolve/floors_set.hpp>

#include "cli/floor_limits.hpp"
#include "cli/cli.hpp"
#include "cli/options.hpp"

namespace {

constexpr std::string_view tool = "linkscope-floors";

namespace cli = linkscope::cli;
namespace resolve = linkscope::resolve;

constexpr cli::option_spec options[] = {
    {"json", 0, cli::arg::none, nullptr, "write one JSON document ({\"version\": 1, ...}) instead of text"},
    {"max-glibc", 0, cli::arg::required, "VER", "exit 1 when a file needs a GLIBC_ version above VER (2.17, 2.28, ...)"},
    {"max-glibcxx", 0, cli::arg::required, "VER", "exit 1 when a file needs a GLIBCXX_ version above VER (3.4.19, ...)"},
    {"max-version", 0, cli::arg::required, "FAMILY=VER",
     "exit 1 when a file needs a FAMILY_ version above VER (CXXABI=1.3.7, GCC=4.8.0, OPENSSL=3.0.0); repeatable"},
    {"max-isa", 0, cli::arg::required, "LEVEL", "exit 1 when a file needs an x86-64 ISA level above LEVEL (baseline, v2, v3, v4)"},
    {"all-versions", 'a', cli::arg::none, nullptr, "list every version needed with its symbols, not only the highest"},
    {"policy", 0, cli::arg::required, "FILE",
     "check against auditwheel-style policies (manylinux-policy.json): best tag per file and for the set, versions above each failed policy, blacklisted symbols, libraries outside the whitelist"},
    {"macos-target", 0, cli::arg::required, "VER",
     "exit 1 when a Mach-O slice needs a macOS above VER (MACOSX_DEPLOYMENT_TARGET: 10.13, 11.0, ...)"},
    {"require-archs", 0, cli::arg::required, "LIST", "exit 1 when a Mach-O file lacks one of the architectures (x86_64,arm64)"},
    {"windows-target", 0, cli::arg::required, "VER",
     "exit 1 when a PE image needs a Windows above VER (its OS or subsystem version: 6.1, 10.0, ...)"},
    {"forbid-crt", 0, cli::arg::required, "LIST",
     "exit 1 when a PE image imports a C runtime of these flavours (ucrt, msvcrt, vcredist, debug, mingw)"},
    {"require-policy", 0, cli::arg::required, "NAME", "with --policy: exit 1 when a file fails policy NAME (e.g. manylinux_2_17)"},
};

constexpr cli::tool_spec spec{
    "linkscope-floors", "[OPTION]... FILE|DIR...",
    "Report the oldest system each ELF file runs on and why: per needed library the highest\n"
    "version of each family (GLIBC_, GLIBCXX_, CXXABI_, GCC_, OPENSSL_, ...) with the symbols\n"
    "bound to it, GLIBC_PRIVATE (never portable), versions of unknown scheme, and the x86-64 ISA\n"
    "level of the GNU property note. Mach-O (thin or universal): per architecture the minimum OS\n"
    "and SDK (LC_BUILD_VERSION, LC_VERSION_MIN_*). PE: machine, subsystem, the OS and subsystem\n"
    "versions, and the C runtime (UCRT, msvcrt, VC++ redistributable, debug CRT, MinGW). A DIR\n"
    "is searched recursively (symbolic links are not followed); with several files the set's\n"
    "floor follows.",
    options,
    "  linkscope-floors /usr/lib/x86_64-linux-gnu/libstdc++.so.6\n"
    "  linkscope-floors --max-glibc 2.17 --max-glibcxx 3.4.19 build/lib/\n"
    "  linkscope-floors --policy manylinux-policy.json --require-policy manylinux_2_28 wheel/lib/\n"
    "  linkscope-floors --macos-target 11.0 --require-archs x86_64,arm64 lib/libfoo.dylib\n"
    "  linkscope-floors --windows-target 6.1 --forbid-crt debug bin/foo.dll\n"};

std::string join(const std::vector<std::string>& names, std::string_view sep) {
  std::string out;
  for (const auto& n : names) {
    if (!out.empty()) out.append(sep);
    out.append(n);
  }
  return out;
}

std::string isa_bits(std::uint32_t mask) {
  std::vector<std::string> names;
  for (std::uint32_t bit = 1; bit != 0 && bit <= mask; bit <<= 1) {
    if (!(mask & bit)) continue;
    const std::string_view n = linkscope::elf::x86_isa_bit_name(bit);
    if (n.empty()) {
      char buf[24];
      std::snprintf(buf, sizeof buf, "<unknown: %x>", bit);
      names.emplace_back(buf);
    } else {
      names.emplace_back(n);
    }
  }
  return join(names, ", ");
}

void print_policy(const resolve::policy_report& r) {
  if (r.best.empty()) {
    std::printf("  policy: none applies (architecture %s)\n", r.arch.empty() ? "unknown" : r.arch.c_str());
    return;
  }
  std::printf("  policy: best %s\n", r.best.c_str());
  for (const auto& v : r.verdicts) {
    if (v.priority <= r.best_priority) break;
    std::printf("  fails %s:\n", v.tag.c_str());
    for (const auto& e : v.above)
      std::printf("    %s (%s): %s\n", e.version.c_str(), e.library.c_str(), join(e.symbols, " ").c_str());
    for (const auto& b : v.blacklisted) std::printf("    blacklisted %s\n", b.c_str());
    if (v.isa_exceeded) std::printf("    x86 ISA level above baseline\n");
  }
  for (const auto& v : r.verdicts) {
    if (v.tag != r.best) continue;
    if (!v.outside_whitelist.empty()) std::printf("  outside the %s whitelist (to bundle): %s\n", v.tag.c_str(), join(v.outside_whitelist, " ").c_str());
  }
}

void print_macho(const resolve::file_floors& in, const std::string& target) {
  const resolve::macho_floors& m = *in.macho;
  std::printf("%s:\n", in.path.c_str());
  for (const auto& s : m.slices) {
    if (s.platforms.empty()) std::printf("  %s: no minimum OS version\n", s.arch.c_str());
    for (const auto& p : s.platforms)
      std::printf("  %s: %s minos %s sdk %s (%s)\n", s.arch.c_str(), p.platform.c_str(),
                  resolve::macos_version_string(p.minos).c_str(), resolve::macos_version_string(p.sdk).c_str(), p.command.c_str());
  }
  if (!in.macho_exceeded.above_target.empty())
    std::printf("  exceeds --macos-target %s: %s\n", target.c_str(), join(in.macho_exceeded.above_target, " ").c_str());
  if (!in.macho_exceeded.missing_archs.empty())
    std::printf("  missing architectures: %s\n", join(in.macho_exceeded.missing_archs, " ").c_str());
}

void print_pe(const resolve::file_floors& in, const std::string& target) {
  const resolve::pe_floors& f = *in.pe;
  std::printf("%s:\n", in.path.c_str());
  std::printf("  %s %s, %s, subsystem %s\n", resolve::pe_machine_name(f.machine), f.pe32_plus ? "PE32+" : "PE32",
              f.dll ? "DLL" : "EXE", linkscope::pe::subsystem_name(f.subsystem));
  const auto floor = f.windows_floor();
  std::printf("  Windows %s (OS version %s, subsystem version %s)\n", resolve::windows_version_string(floor.first, floor.second).c_str(),
              resolve::windows_version_string(f.major_os_version, f.minor_os_version).c_str(),
              resolve::windows_version_string(f.major_subsystem_version, f.minor_subsystem_version).c_str());
  if (f.crts.empty()) std::printf("  C runtime: none imported\n");
  // One line per flavour and version: a UCRT image imports a dozen api-ms-win-crt-* sets.
  std::vector<std::pair<std::string, std::vector<std::string>>> groups;
  for (const auto& c : f.crts) {
    std::string key = resolve::to_string(c.flavour);
    if (!c.version.empty()) key += " " + c.version;
    auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == key; });
    if (it == groups.end()) groups.push_back({key, {c.dll}});
    else it->second.push_back(c.dll);
  }
  for (const auto& [key, dlls] : groups) std::printf("  C runtime: %s (%s)\n", key.c_str(), join(dlls, " ").c_str());
  if (in.windows_exceeded)
    std::printf("  exceeds --windows-target %s: needs %s\n", target.c_str(), resolve::windows_version_string(floor.first, floor.second).c_str());
  if (!in.forbidden_crts.empty()) std::printf("  forbidden C runtime: %s\n", join(in.forbidden_crts, " ").c_str());
}

void print_text(const resolve::file_floors& in, bool all_versions, int max_isa) {
  const resolve::elf_floors& f = *in.elf;
  std::printf("%s:\n", in.path.c_str());
  bool any = false;
  for (const auto& lib : f.libraries) {
    if (all_versions) {
      for (const auto& v : lib.versions) {
        std::printf("  %s (%s)%s: %s\n", v.name.c_str(), lib.library.c_str(), v.weak ? " [weak]" : "", join(v.symbols, " ").c_str());
        any = true;
      }
      continue;
    }
    for (const auto& h : lib.highest) {
      std::printf("  %s (%s): %s\n", h.highest.c_str(), lib.library.c_str(), join(h.symbols, " ").c_str());
      any = true;
    }
    for (const auto& v : lib.versions) {
      if (v.scheme == resolve::version_scheme::numbered) continue;
      const char* what = v.scheme == resolve::version_scheme::private_ ? "never portable" : "unknown version scheme";
      std::printf("  %s (%s) [%s]: %s\n", v.name.c_str(), lib.library.c_str(), what, join(v.symbols, " ").c_str());
      any = true;
    }
  }
  if (f.x86_isa_needed) {
    std::printf("  x86 ISA needed: %s (level %s)\n", isa_bits(*f.x86_isa_needed).c_str(),
                resolve::x86_isa_level_name(f.x86_isa_level()));
    any = true;
  }
  if (!any) std::printf("  no versioned dependencies\n");
  for (const auto& v : in.violations) {
    std::printf("  exceeds %s: needs %s\n", v.max.c_str(), v.highest.c_str());
    for (std::size_t i = 0; i < v.above.size(); ++i)
      std::printf("    %s (%s): %s\n", v.above[i].name.c_str(), v.libraries[i].c_str(), join(v.above[i].symbols, " ").c_str());
  }
  if (in.isa_exceeded)
    std::printf("  exceeds x86 ISA level %s: needs %s\n", resolve::x86_isa_level_name(max_isa),
                resolve::x86_isa_level_name(f.x86_isa_level()));
  if (in.policy) print_policy(*in.policy);
}

}  // namespace

int main(int argc, char** argv) {
  cli::fast_stdout();
  cli::parsed p;
  if (int rc = cli::parse(spec, argc, argv, p); rc >= 0) return rc;
  if (p.operands.empty()) return cli::usage_error(spec, "no file given");
  const bool json = p.has("json");
  const bool all_versions = p.has("all-versions");

  std::vector<resolve::version_limit> version_limits;
  if (int rc = cli::read_floor_limits(spec, p, version_limits); rc >= 0) return rc;
  int max_isa = 0;
  if (p.has("max-isa")) {
    max_isa = resolve::parse_x86_isa_level(p.value("max-isa"));
    if (max_isa < 0) return cli::usage_error(spec, "--max-isa: expected baseline, v2, v3 or v4");
  }

  std::vector<resolve::floor_policy> policies;
  if (p.has("policy")) {
    const std::string policy_path = p.value("policy");
    auto text = linkscope::mapped_file::open(policy_path);
    if (!text) {
      cli::report(tool, policy_path, text.error());
      return cli::exit_error;
    }
    auto read = resolve::read_policies(text->bytes().chars());
    if (!read) {
      cli::report(tool, policy_path, read.error());
      return cli::exit_error;
    }
    policies = std::move(*read);
  }
  const std::string required_policy = p.value("require-policy");
  if (!required_policy.empty()) {
    if (policies.empty()) return cli::usage_error(spec, "--require-policy needs --policy FILE");
    bool known = false;
    for (const auto& pol : policies) known = known || pol.name == required_policy;
    if (!known) return cli::usage_error(spec, "--require-policy: no such policy in the --policy file");
  }

  std::optional<linkscope::macho::packed_version> macos_target;
  std::optional<std::pair<std::uint16_t, std::uint16_t>> windows_target;
  if (int rc = cli::read_platform_targets(spec, p, macos_target, windows_target); rc >= 0) return rc;
  const std::string macos_target_text = p.value("macos-target");
  std::vector<std::string> required_archs;
  if (p.has("require-archs")) {
    const std::string list = p.value("require-archs");
    std::size_t start = 0;
    while (start <= list.size()) {
      const std::size_t comma = std::min(list.find(',', start), list.size());
      if (comma > start) required_archs.push_back(list.substr(start, comma - start));
      start = comma + 1;
    }
    if (required_archs.empty()) return cli::usage_error(spec, "--require-archs: expected a list such as x86_64,arm64");
  }

  const std::string windows_target_text = p.value("windows-target");
  std::vector<std::string> forbidden_flavours;
  if (p.has("forbid-crt")) {
    const std::string list = p.value("forbid-crt");
    std::size_t start = 0;
    while (start <= list.size()) {
      const std::size_t comma = std::min(list.find(',', start), list.size());
      const std::string item = list.substr(start, comma - start);
      if (!resolve::is_crt_flavour_name(item))
        return cli::usage_error(spec, "--forbid-crt: expected ucrt, msvcrt, vcredist, debug or mingw");
      forbidden_flavours.push_back(item);
      start = comma + 1;
    }
  }

  resolve::floors_limits limits;
  limits.versions = std::move(version_limits);
  limits.max_isa = max_isa;
  limits.policies = std::move(policies);
  limits.required_policy = required_policy;
  limits.macos_target = macos_target;
  limits.required_archs = std::move(required_archs);
  limits.windows_target = windows_target;
  limits.forbidden_crt_flavours = std::move(forbidden_flavours);
  const resolve::floors_set_report r = resolve::floors_of_set(p.operands, limits);

  // An input that cannot be read: an error of the run (exit 2), on stderr and,
  // with --json, an element of "files" (docs/JSON.md: errors stay in the document).
  for (const auto& d : r.failures) cli::report(tool, d.file, d.err);
  const int status = !r.failures.empty() ? cli::exit_error : r.exceeded ? cli::exit_finding : cli::exit_ok;

  if (json) {
    linkscope::json_writer w(stdout);
    linkscope::report::write_json(w, r, limits);
    w.newline();
    w.flush();
    return status;
  }

  for (const auto& in : r.files) {
    if (in.macho) print_macho(in, macos_target_text);
    else if (in.pe) print_pe(in, windows_target_text);
    else print_text(in, all_versions, max_isa);
  }
  if (r.files.size() > 1) {
    std::printf("all %zu files:\n", r.files.size());
    for (const auto& fam : r.set.families) {
      std::vector<std::string> names;
      for (std::size_t i : fam.files) names.push_back(r.files[i].path);
      std::printf("  %s: %zu file%s: %s\n", fam.highest.c_str(), fam.files.size(), fam.files.size() == 1 ? "" : "s",
                  join(names, " ").c_str());
    }
    if (r.windows)
      std::printf("  Windows: %s (%s)\n", resolve::windows_version_string(r.windows->first, r.windows->second).c_str(),
                  r.files[r.windows_file].path.c_str());
    if (r.macos_minos)
      std::printf("  macOS minos: %s (%s)\n", resolve::macos_version_string(*r.macos_minos).c_str(),
                  r.files[r.macos_file].path.c_str());
    if (r.set.x86_isa_level > 0) std::printf("  x86 ISA level: %s\n", resolve::x86_isa_level_name(r.set.x86_isa_level));
    if (r.policy_file >= 0) {
      const auto& decider = r.files[static_cast<std::size_t>(r.policy_file)];
      std::printf("  policy: best %s (decided by %s)\n", decider.policy->best.c_str(), decider.path.c_str());
    }
    if (!r.set.private_files.empty())
      std::printf("  %zu file(s) need a *_PRIVATE version (never portable)\n", r.set.private_files.size());
  }
  return status;
}
