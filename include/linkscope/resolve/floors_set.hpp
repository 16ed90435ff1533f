// linkscope/resolve/floors_set.hpp — the floors of a set of files (a
// package, a wheel's lib/, an npm package's prebuilt folder), what
// `linkscope-floors` and Python's linkscope.floors() report: each file read
// by its format's floors (ELF: floors.hpp and floors_policy.hpp; Mach-O:
// floors_macho.hpp; PE: floors_pe.hpp), checked against the limits the caller
// gives, and the set's floor: the highest version of each family with the
// files that need it, the highest x86-64 ISA level, the highest macOS minimum
// and Windows version with the file that decides it, the best policy tag the
// whole set meets.
//
// A directory operand is searched recursively for ELF, Mach-O, universal and
// MZ files (symbolic links are not followed), in path order. A file that
// cannot be read is a failure of the run (a diagnostic with its path), not a
// floor; the others are still reported.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "linkscope/core/config.hpp"
#include "linkscope/core/error.hpp"
#include "linkscope/core/mapped_file.hpp"
#include "linkscope/elf/file.hpp"
#include "linkscope/macho/fat.hpp"
#include "linkscope/macho/file.hpp"
#include "linkscope/resolve/floors.hpp"
#include "linkscope/resolve/floors_macho.hpp"
#include "linkscope/resolve/floors_pe.hpp"
#include "linkscope/resolve/floors_policy.hpp"

namespace linkscope {
inline namespace v0 {
namespace resolve {

// What a file must not exceed; each empty member checks nothing.
struct floors_limits {
  std::vector<version_limit> versions;             // --max-glibc, --max-glibcxx, --max-version
  int max_isa = 0;                                 // x86-64 ISA level (0: no limit)
  std::vector<floor_policy> policies;              // auditwheel-style policies
  std::string required_policy;                     // a policy every ELF file must meet ("": none)
  std::optional<macho::packed_version> macos_target;
  std::vector<std::string> required_archs;         // Mach-O architectures every Mach-O file must have
  std::optional<std::pair<u16, u16>> windows_target;
  std::vector<std::string> forbidden_crt_flavours;  // ucrt, msvcrt, vcredist, debug, mingw
};

// One file: exactly one of elf, macho and pe is set.
struct file_floors {
  std::string path;
  std::optional<elf_floors> elf;
  std::vector<limit_violation> violations;  // ELF: the version limits exceeded
  bool isa_exceeded = false;                // ELF: above max_isa
  std::optional<policy_report> policy;      // ELF, with policies
  bool policy_failed = false;               // ELF: fails the required policy
  std::optional<macho_floors> macho;
  macho_violations macho_exceeded;
  std::optional<pe_floors> pe;
  bool windows_exceeded = false;
  std::vector<std::string> forbidden_crts;  // PE: imported DLLs of a forbidden flavour
  bool exceeded() const noexcept {
    return !violations.empty() || isa_exceeded || policy_failed || macho_exceeded.any() || windows_exceeded ||
           !forbidden_crts.empty();
  }
};

struct floors_set_report {
  std::vector<file_floors> files;    // the files read, in operand (then path) order
  std::vector<diagnostic> failures;  // the files that could not be read
  set_floors set;                    // ELF: indexes into `files`
  std::optional<macho::packed_version> macos_minos;  // the highest over the Mach-O files
  std::size_t macos_file = 0;
  std::optional<std::pair<u16, u16>> windows;        // the highest over the PE files
  std::size_t windows_file = 0;
  long long policy_file = -1;  // the file whose best tag is the set's (-1: none or no policies)
  bool exceeded = false;       // some file exceeds a limit
};

// Regular files under `dir` that start with an ELF, Mach-O, universal or MZ
// magic, appended to `out` in path order.
void find_binaries(const std::string& dir, std::vector<std::string>& out);

namespace floors_set_detail {

result<file_floors> read_one(const std::string& path, byte_view bytes, const floors_limits& limits);

}  // namespace floors_set_detail

// The floors of `operands` (files, and directories searched for binaries).
floors_set_report floors_of_set(const std::vector<std::string>& operands, const floors_limits& limits);

#if LINKSCOPE_DEFINITIONS
namespace floors_set_detail {
LINKSCOPE_FUNC result<file_floors> read_one(const std::string& path, byte_view bytes, const floors_limits& limits) {
  file_floors f;
  f.path = path;
  if (macho::is_macho(bytes) || macho::is_fat(bytes)) {
    auto m = macho_floors_of(bytes);
    if (!m) return m.error();
    f.macho = std::move(*m);
    f.macho_exceeded = check_macho(*f.macho, limits.macos_target, limits.required_archs);
    return f;
  }
  if (bytes.size() >= 2 && bytes.data()[0] == 'M' && bytes.data()[1] == 'Z') {
    auto pe = pe_floors_of(bytes);
    if (!pe) return pe.error();
    f.pe = std::move(*pe);
    f.windows_exceeded = limits.windows_target && f.pe->windows_floor() > *limits.windows_target;
    for (const auto& c : f.pe->crts) {
      const auto& forbidden = limits.forbidden_crt_flavours;
      if (std::find(forbidden.begin(), forbidden.end(), to_string(c.flavour)) != forbidden.end())
        f.forbidden_crts.push_back(c.dll);
    }
    return f;
  }
  if (!elf::is_elf(bytes)) return error{errc::bad_magic, 0, "not an ELF, Mach-O or PE file"};
  auto e = elf_floors_of(bytes);
  if (!e) return e.error();
  f.elf = std::move(*e);
  f.violations = check_limits(*f.elf, limits.versions);
  f.isa_exceeded = limits.max_isa > 0 && f.elf->x86_isa_level() > limits.max_isa;
  if (!limits.policies.empty()) {
    f.policy = evaluate_policies(*f.elf, limits.policies);
    for (const auto& v : f.policy->verdicts)
      if (v.name == limits.required_policy && !v.satisfied) f.policy_failed = true;
  }
  return f;
}
}  // namespace floors_set_detail

LINKSCOPE_FUNC void find_binaries(const std::string& dir, std::vector<std::string>& out) {
  std::error_code ec;
  std::vector<std::string> found;
  for (auto it = std::filesystem::recursive_directory_iterator(dir, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    std::error_code type_ec;
    if (it->is_symlink(type_ec) || !it->is_regular_file(type_ec)) continue;
    std::FILE* f = std::fopen(it->path().c_str(), "rb");
    if (f == nullptr) continue;
    unsigned char magic[8] = {};
    const std::size_t got = std::fread(magic, 1, sizeof magic, f);
    std::fclose(f);
    const byte_view head(magic, got);
    if (elf::is_elf(head) || macho::is_macho(head) || macho::is_fat(head) || (got >= 2 && magic[0] == 'M' && magic[1] == 'Z'))
      found.push_back(it->path().string());
  }
  std::sort(found.begin(), found.end());
  out.insert(out.end(), found.begin(), found.end());
}

LINKSCOPE_FUNC floors_set_report floors_of_set(const std::vector<std::string>& operands, const floors_limits& limits) {
  floors_set_report out;
  std::vector<std::string> paths;
  for (const auto& operand : operands) {
    std::error_code ec;
    if (std::filesystem::is_directory(operand, ec)) find_binaries(operand, paths);
    else paths.push_back(operand);
  }
  out.files.reserve(paths.size());
  for (const auto& path : paths) {
    auto mapped = mapped_file::open(path);
    if (!mapped) {
      out.failures.emplace_back(mapped.error(), path);
      continue;
    }
    auto f = floors_set_detail::read_one(path, mapped->bytes(), limits);
    if (!f) {
      out.failures.emplace_back(f.error(), path);
      continue;
    }
    out.exceeded = out.exceeded || f->exceeded();
    out.files.push_back(std::move(*f));
  }

  std::vector<const elf_floors*> elf;
  std::vector<const policy_report*> reports;
  for (std::size_t i = 0; i < out.files.size(); ++i) {
    const file_floors& f = out.files[i];
    elf.push_back(f.elf ? &*f.elf : nullptr);
    reports.push_back(f.policy ? &*f.policy : nullptr);
    if (f.macho) {
      if (auto m = f.macho->macos_minos(); m && (!out.macos_minos || m->raw > out.macos_minos->raw)) {
        out.macos_minos = m;
        out.macos_file = i;
      }
    }
    if (f.pe) {
      const auto floor = f.pe->windows_floor();
      if (!out.windows || floor > *out.windows) {
        out.windows = floor;
        out.windows_file = i;
      }
    }
  }
  out.set = merge_set(elf);
  out.policy_file = set_best_policy(reports);
  return out;
}
#endif  // LINKSCOPE_DEFINITIONS

}  // namespace resolve
}  // namespace v0
}  // namespace linkscope
