// linkscope-floors: the oldest system a file runs on, and the symbols that
// decide it (resolve/floors.hpp): per needed library the highest GLIBC_,
// GLIBCXX_, CXXABI_, GCC_, OPENSSL_ ... version with the symbols behind it,
// GLIBC_PRIVATE, the x86-64 ISA level; checked against --max-* limits.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include <linkscope/core/mapped_file.hpp>
#include <linkscope/elf/file.hpp>
#include <linkscope/report/json.hpp>
#include <linkscope/report/json_error.hpp>
#include <linkscope/resolve/floors.hpp>
#include <linkscope/resolve/floors_macho.hpp>
#include <linkscope/resolve/floors_pe.hpp>
#include <linkscope/coff/pe.hpp>
#include <linkscope/resolve/floors_policy.hpp>
#include <linkscope/macho/fat.hpp>
#include <linkscope/macho/file.hpp>

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

struct input {
  std::string path;
  linkscope::mapped_file file;
  std::optional<resolve::elf_floors> floors;
  std::vector<resolve::limit_violation> violations;
  bool isa_exceeded = false;
  std::optional<resolve::policy_report> policy;
  bool policy_failed = false;  // failed --require-policy
  std::optional<resolve::macho_floors> macho;
  resolve::macho_violations macho_violations;
  std::optional<resolve::pe_floors> pe;
  bool windows_exceeded = false;
  std::vector<std::string> forbidden_crts;  // imported DLLs of a forbidden flavour
};

// Regular files under `dir` that start with an ELF, Mach-O, universal or MZ magic, in path order.
void walk(const std::string& dir, std::vector<std::string>& out) {
  std::error_code ec;
  std::vector<std::string> found;
  for (auto it = std::filesystem::recursive_directory_iterator(dir, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    std::error_code type_ec;
    if (!it->is_regular_file(type_ec) || it->is_symlink(type_ec)) continue;
    std::FILE* f = std::fopen(it->path().c_str(), "rb");
    if (f == nullptr) continue;
    unsigned char magic[8] = {};
    const std::size_t got = std::fread(magic, 1, 8, f);
    std::fclose(f);
    const linkscope::byte_view head(magic, got);
    if (linkscope::elf::is_elf(head) || linkscope::macho::is_macho(head) || linkscope::macho::is_fat(head) ||
        (got >= 2 && magic[0] == 'M' && magic[1] == 'Z'))
      found.push_back(it->path().string());
  }
  std::sort(found.begin(), found.end());
  out.insert(out.end(), found.begin(), found.end());
}

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

void print_macho(const input& in, const std::string& target) {
  const resolve::macho_floors& m = *in.macho;
  std::printf("%s:\n", in.path.c_str());
  for (const auto& s : m.slices) {
    if (s.platforms.empty()) std::printf("  %s: no minimum OS version\n", s.arch.c_str());
    for (const auto& p : s.platforms)
      std::printf("  %s: %s minos %s sdk %s (%s)\n", s.arch.c_str(), p.platform.c_str(),
                  resolve::macos_version_string(p.minos).c_str(), resolve::macos_version_string(p.sdk).c_str(), p.command.c_str());
  }
  if (!in.macho_violations.above_target.empty())
    std::printf("  exceeds --macos-target %s: %s\n", target.c_str(), join(in.macho_violations.above_target, " ").c_str());
  if (!in.macho_violations.missing_archs.empty())
    std::printf("  missing architectures: %s\n", join(in.macho_violations.missing_archs, " ").c_str());
}

std::string windows_version(std::uint16_t major, std::uint16_t minor) {
  return std::to_string(major) + "." + std::to_string(minor);
}

void print_pe(const input& in, const std::string& target) {
  const resolve::pe_floors& f = *in.pe;
  std::printf("%s:\n", in.path.c_str());
  std::printf("  %s %s, %s, subsystem %s\n", resolve::pe_machine_name(f.machine), f.pe32_plus ? "PE32+" : "PE32",
              f.dll ? "DLL" : "EXE", linkscope::pe::subsystem_name(f.subsystem));
  const auto floor = f.windows_floor();
  std::printf("  Windows %s (OS version %s, subsystem version %s)\n", windows_version(floor.first, floor.second).c_str(),
              windows_version(f.major_os_version, f.minor_os_version).c_str(),
              windows_version(f.major_subsystem_version, f.minor_subsystem_version).c_str());
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
    std::printf("  exceeds --windows-target %s: needs %s\n", target.c_str(), windows_version(floor.first, floor.second).c_str());
  if (!in.forbidden_crts.empty()) std::printf("  forbidden C runtime: %s\n", join(in.forbidden_crts, " ").c_str());
}

void print_text(const input& in, bool all_versions, const std::vector<resolve::version_limit>& limits, int max_isa) {
  const resolve::elf_floors& f = *in.floors;
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
  (void)limits;
}

void write_strings(linkscope::json_writer& w, std::string_view key, const std::vector<std::string>& values) {
  w.key(key).begin_array();
  for (const auto& v : values) w.value(v);
  w.end_array();
}

void write_json_macho(linkscope::json_writer& w, const input& in) {
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
  write_strings(w, "above_macos_target", in.macho_violations.above_target);
  write_strings(w, "missing_archs", in.macho_violations.missing_archs);
  w.end_object();
}

void write_json_pe(linkscope::json_writer& w, const input& in) {
  const resolve::pe_floors& f = *in.pe;
  w.begin_object();
  w.field("file", in.path);
  w.field("format", "pe");
  w.field("machine", resolve::pe_machine_name(f.machine));
  w.field("pe32_plus", f.pe32_plus);
  w.field("dll", f.dll);
  w.field("subsystem", linkscope::pe::subsystem_name(f.subsystem));
  w.field("os_version", windows_version(f.major_os_version, f.minor_os_version));
  w.field("subsystem_version", windows_version(f.major_subsystem_version, f.minor_subsystem_version));
  const auto floor = f.windows_floor();
  w.field("windows", windows_version(floor.first, floor.second));
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

void write_json_file(linkscope::json_writer& w, const input& in, int max_isa) {
  if (in.macho) return write_json_macho(w, in);
  if (in.pe) return write_json_pe(w, in);
  const resolve::elf_floors& f = *in.floors;
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
    w.key("highest").begin_array();
    for (const auto& h : lib.highest) {
      w.begin_object();
      w.field("family", h.family);
      w.field("version", h.highest);
      write_strings(w, "symbols", h.symbols);
      w.end_object();
    }
    w.end_array();
    write_strings(w, "private", lib.private_);
    write_strings(w, "unordered", lib.unordered);
    w.end_object();
  }
  w.end_array();
  w.key("families").begin_array();
  for (const auto& h : f.families) {
    w.begin_object();
    w.field("family", h.family);
    w.field("version", h.highest);
    write_strings(w, "symbols", h.symbols);
    w.end_object();
  }
  w.end_array();
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
  for (const auto& v : in.violations) cli::write_violation(w, v);
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

}  // namespace

int main(int argc, char** argv) {
  cli::fast_stdout();
  cli::parsed p;
  if (int rc = cli::parse(spec, argc, argv, p); rc >= 0) return rc;
  if (p.operands.empty()) return cli::usage_error(spec, "no file given");
  const bool json = p.has("json");
  const bool all_versions = p.has("all-versions");

  std::vector<resolve::version_limit> limits;
  if (int rc = cli::read_floor_limits(spec, p, limits); rc >= 0) return rc;
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

  const std::string macos_target_text = p.value("macos-target");
  std::optional<linkscope::macho::packed_version> macos_target;
  if (p.has("macos-target")) {
    macos_target = resolve::parse_macos_version(macos_target_text);
    if (!macos_target) return cli::usage_error(spec, "--macos-target: not a macOS version (e.g. 11.0)");
  }
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
  std::optional<std::pair<std::uint16_t, std::uint16_t>> windows_target;
  if (p.has("windows-target")) {
    windows_target = resolve::parse_windows_version(windows_target_text);
    if (!windows_target) return cli::usage_error(spec, "--windows-target: not a Windows version (e.g. 6.1)");
  }
  std::vector<std::string> forbidden_flavours;
  if (p.has("forbid-crt")) {
    const std::string list = p.value("forbid-crt");
    std::size_t start = 0;
    while (start <= list.size()) {
      const std::size_t comma = std::min(list.find(',', start), list.size());
      const std::string item = list.substr(start, comma - start);
      if (item != "ucrt" && item != "msvcrt" && item != "vcredist" && item != "debug" && item != "mingw")
        return cli::usage_error(spec, "--forbid-crt: expected ucrt, msvcrt, vcredist, debug or mingw");
      forbidden_flavours.push_back(item);
      start = comma + 1;
    }
  }

  std::vector<std::string> paths;
  int status = cli::exit_ok;
  for (const auto& operand : p.operands) {
    std::error_code ec;
    if (std::filesystem::is_directory(operand, ec)) walk(operand, paths);
    else paths.push_back(operand);
  }

  std::vector<input> inputs;
  inputs.reserve(paths.size());
  // An input that cannot be read: an error of the run (exit 2), on stderr and,
  // with --json, an element of "files" (docs/JSON.md: errors stay in the document).
  std::vector<linkscope::diagnostic> failures;
  auto fail = [&](const std::string& path, const linkscope::error& err) {
    cli::report(tool, path, err);
    failures.emplace_back(err, path);
    status = cli::exit_error;
  };
  for (const auto& path : paths) {
    input in;
    in.path = path;
    auto mapped = linkscope::mapped_file::open(path);
    if (!mapped) {
      fail(path, mapped.error());
      continue;
    }
    in.file = std::move(*mapped);
    const linkscope::byte_view bytes = in.file.bytes();
    if (linkscope::macho::is_macho(bytes) || linkscope::macho::is_fat(bytes)) {
      auto macho = resolve::macho_floors_of(bytes);
      if (!macho) {
        fail(path, macho.error());
        continue;
      }
      in.macho = std::move(*macho);
      in.macho_violations = resolve::check_macho(*in.macho, macos_target, required_archs);
      if (in.macho_violations.any() && status == cli::exit_ok) status = cli::exit_finding;
      inputs.push_back(std::move(in));
      continue;
    }
    if (bytes.size() >= 2 && bytes.data()[0] == 'M' && bytes.data()[1] == 'Z') {
      auto pe = resolve::pe_floors_of(bytes);
      if (!pe) {
        fail(path, pe.error());
        continue;
      }
      in.pe = std::move(*pe);
      in.windows_exceeded = windows_target && in.pe->windows_floor() > *windows_target;
      for (const auto& c : in.pe->crts)
        if (std::find(forbidden_flavours.begin(), forbidden_flavours.end(), resolve::to_string(c.flavour)) != forbidden_flavours.end())
          in.forbidden_crts.push_back(c.dll);
      if ((in.windows_exceeded || !in.forbidden_crts.empty()) && status == cli::exit_ok) status = cli::exit_finding;
      inputs.push_back(std::move(in));
      continue;
    }
    if (!linkscope::elf::is_elf(bytes)) {
      fail(path, linkscope::error{linkscope::errc::bad_magic, 0, "not an ELF, Mach-O or PE file"});
      continue;
    }
    auto floors = resolve::elf_floors_of(bytes);
    if (!floors) {
      fail(path, floors.error());
      continue;
    }
    in.floors = std::move(*floors);
    in.violations = resolve::check_limits(*in.floors, limits);
    in.isa_exceeded = max_isa > 0 && in.floors->x86_isa_level() > max_isa;
    if (!policies.empty()) {
      in.policy = resolve::evaluate_policies(*in.floors, policies);
      for (const auto& v : in.policy->verdicts)
        if (v.name == required_policy && !v.satisfied) in.policy_failed = true;
    }
    if ((!in.violations.empty() || in.isa_exceeded || in.policy_failed) && status == cli::exit_ok) status = cli::exit_finding;
    inputs.push_back(std::move(in));
  }

  std::vector<const resolve::elf_floors*> list;
  for (const auto& in : inputs) list.push_back(in.floors ? &*in.floors : nullptr);
  // The highest macOS minimum over the Mach-O files.
  std::optional<linkscope::macho::packed_version> set_macos;
  std::size_t set_macos_file = 0;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].macho) continue;
    if (auto m = inputs[i].macho->macos_minos(); m && (!set_macos || m->raw > set_macos->raw)) {
      set_macos = m;
      set_macos_file = i;
    }
  }
  const resolve::set_floors set = resolve::merge_set(list);
  std::vector<const resolve::policy_report*> reports;
  for (const auto& in : inputs) reports.push_back(in.policy ? &*in.policy : nullptr);
  const long long set_policy = resolve::set_best_policy(reports);

  // The highest Windows floor over the PE files.
  std::optional<std::pair<std::uint16_t, std::uint16_t>> set_windows;
  std::size_t set_windows_file = 0;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].pe) continue;
    const auto floor = inputs[i].pe->windows_floor();
    if (!set_windows || floor > *set_windows) {
      set_windows = floor;
      set_windows_file = i;
    }
  }

  if (json) {
    linkscope::json_writer w(stdout);
    w.begin_object();
    w.field("version", 1);
    w.key("files").begin_array();
    for (const auto& in : inputs) write_json_file(w, in, max_isa);
    for (const auto& d : failures) linkscope::report::write_error_element(w, d);
    w.end_array();
    w.key("set").begin_object();
    w.key("families").begin_array();
    for (const auto& fam : set.families) {
      w.begin_object();
      w.field("family", fam.family);
      w.field("version", fam.highest);
      w.key("files").begin_array();
      for (std::size_t i : fam.files) w.value(inputs[i].path);
      w.end_array();
      w.end_object();
    }
    w.end_array();
    w.field("x86_isa_level", resolve::x86_isa_level_name(set.x86_isa_level));
    w.key("private_files").begin_array();
    for (std::size_t i : set.private_files) w.value(inputs[i].path);
    w.end_array();
    w.key("windows");
    if (set_windows) {
      w.begin_object();
      w.field("version", windows_version(set_windows->first, set_windows->second));
      w.field("file", inputs[set_windows_file].path);
      w.end_object();
    } else {
      w.value(nullptr);
    }
    w.key("macos_minos");
    if (set_macos) {
      w.begin_object();
      w.field("version", resolve::macos_version_string(*set_macos));
      w.field("file", inputs[set_macos_file].path);
      w.end_object();
    } else {
      w.value(nullptr);
    }
    if (!policies.empty()) {
      w.key("policy");
      if (set_policy < 0) {
        w.value(nullptr);
      } else {
        w.begin_object();
        w.field("best", inputs[static_cast<std::size_t>(set_policy)].policy->best);
        w.field("decided_by", inputs[static_cast<std::size_t>(set_policy)].path);
        w.end_object();
      }
    }
    w.end_object();
    w.field("exceeded", status == cli::exit_finding);
    w.end_object();
    w.newline();
    w.flush();
    return status;
  }

  for (const auto& in : inputs) {
    if (in.macho) print_macho(in, macos_target_text);
    else if (in.pe) print_pe(in, windows_target_text);
    else print_text(in, all_versions, limits, max_isa);
  }
  if (inputs.size() > 1) {
    std::printf("all %zu files:\n", inputs.size());
    for (const auto& fam : set.families) {
      std::vector<std::string> names;
      for (std::size_t i : fam.files) names.push_back(inputs[i].path);
      std::printf("  %s: %zu file%s: %s\n", fam.highest.c_str(), fam.files.size(), fam.files.size() == 1 ? "" : "s",
                  join(names, " ").c_str());
    }
    if (set_windows)
      std::printf("  Windows: %s (%s)\n", windows_version(set_windows->first, set_windows->second).c_str(),
                  inputs[set_windows_file].path.c_str());
    if (set_macos)
      std::printf("  macOS minos: %s (%s)\n", resolve::macos_version_string(*set_macos).c_str(), inputs[set_macos_file].path.c_str());
    if (set.x86_isa_level > 0) std::printf("  x86 ISA level: %s\n", resolve::x86_isa_level_name(set.x86_isa_level));
    if (set_policy >= 0)
      std::printf("  policy: best %s (decided by %s)\n", inputs[static_cast<std::size_t>(set_policy)].policy->best.c_str(),
                  inputs[static_cast<std::size_t>(set_policy)].path.c_str());
    if (!set.private_files.empty()) std::printf("  %zu file(s) need a *_PRIVATE version (never portable)\n", set.private_files.size());
  }
  return status;
}
