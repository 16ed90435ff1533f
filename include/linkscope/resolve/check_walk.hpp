// linkscope/resolve/check_walk.hpp — the walk phase of the whole-prefix
// check (resolve/check.hpp): which files under a prefix are checked, each
// once however many symlinks name it, and on which platform's loader
// (walk_kind: a dynamically linked ELF file, a Mach-O executable, dylib or
// bundle, a PE image); what is counted as skipped instead (objects, static
// programs, dSYM companions, files that are not binaries); and run_parallel,
// the work loop that the plan and link phases share across `jobs` threads.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "linkscope/core/config.hpp"
#include "linkscope/resolve/check_result.hpp"

#if LINKSCOPE_DEFINITIONS
#include <algorithm>
#include <atomic>
#include <filesystem>
#include <optional>
#include <set>
#include <system_error>
#include <thread>
#include <utility>

#include "linkscope/coff/pe.hpp"
#include "linkscope/core/mapped_file.hpp"
#include "linkscope/elf/file.hpp"
#include "linkscope/macho/fat.hpp"
#include "linkscope/macho/file.hpp"
#include "linkscope/resolve/file_format.hpp"

#if !defined(_WIN32)
#include <sys/stat.h>
#endif
#endif  // LINKSCOPE_DEFINITIONS

namespace linkscope {
inline namespace v0 {
namespace resolve {

#if LINKSCOPE_DEFINITIONS
namespace detail {
// A Python extension module on Windows: FILE.pyd, in any case.
inline bool is_pyd(std::string_view path) noexcept {
  if (path.size() < 4) return false;
  const std::string_view ext = path.substr(path.size() - 4);
  return ext[0] == '.' && (ext[1] | 0x20) == 'p' && (ext[2] | 0x20) == 'y' && (ext[3] | 0x20) == 'd';
}


// What a walk needs to know of a file before linking it. `dynamic`, `macho`
// and `pe` are checked; `other_elf` and `other_macho` (objects, static
// programs, dSYM companions...) are counted as skipped_static.
enum class walk_kind { not_elf, dynamic, other_elf, macho, other_macho, pe };

// A Mach-O image a loader maps: an executable, a dylib or a bundle (a
// universal file: by its first slice).
inline walk_kind sniff_macho(byte_view header) {
  byte_view thin = header;
  if (macho::is_fat(header)) {
    // The first fat_arch: cputype, cpusubtype, offset (fat_arch_64: a 64-bit offset).
    const bool wide = load<u32, std::endian::big>(header.data()) == macho::FAT_MAGIC_64;
    if (header.size() < 8 + 16) return walk_kind::other_macho;
    const u64 offset = wide ? load<u64, std::endian::big>(header.data() + 16) : load<u32, std::endian::big>(header.data() + 16);
    if (offset + 16 > header.size()) return walk_kind::macho;  // beyond the head: let the loader judge it
    thin = byte_view(header.data() + offset, header.size() - offset);
  }
  if (!macho::is_macho(thin) || thin.size() < 16) return walk_kind::other_macho;
  // raw_magic reads the magic big-endian: MH_MAGIC* means a big-endian image.
  const bool big = macho::raw_magic(thin) == macho::MH_MAGIC || macho::raw_magic(thin) == macho::MH_MAGIC_64;
  const u32 filetype = big ? load<u32, std::endian::big>(thin.data() + 12) : load<u32, std::endian::little>(thin.data() + 12);
  return filetype == macho::MH_EXECUTE || filetype == macho::MH_DYLIB || filetype == macho::MH_BUNDLE
             ? walk_kind::macho
             : walk_kind::other_macho;
}

// The kind of the file at `path` from its first bytes; an ELF file is mapped
// whole only when its program headers lie beyond them.
inline walk_kind sniff_elf_file(const std::string& path, std::string* error_message) {
  std::string head;
  const file_format format = sniff_file(path, &head);
  const byte_view header(reinterpret_cast<const unsigned char*>(head.data()), head.size());
  if (format == file_format::macho || format == file_format::macho_universal) return sniff_macho(header);
  if (format == file_format::pe) return walk_kind::pe;
  if (format != file_format::elf) return walk_kind::not_elf;
  auto kind = [](const result<elf::identity>& id) {
    return id && id->dynamically_linked() ? walk_kind::dynamic : walk_kind::other_elf;
  };
  auto id = elf::identify(header);
  if (id && id->segments_read) return kind(id);
  auto mapped = mapped_file::open(path);
  if (!mapped) {
    if (error_message) *error_message = mapped.error().message;
    return walk_kind::not_elf;
  }
  return kind(elf::identify(mapped->bytes()));
}

// fn(i) for every i < n, on `jobs` threads (this one included), each taking
// the next i not yet taken.
template <class F>
void run_parallel(unsigned jobs, std::size_t n, F fn) {
  std::atomic<std::size_t> next{0};
  auto work = [&] {
    for (std::size_t i = next++; i < n; i = next++) fn(i);
  };
  if (jobs <= 1 || n <= 1) {
    work();
    return;
  }
  std::vector<std::thread> threads;
  threads.reserve(jobs - 1);
  for (unsigned t = 1; t < jobs; ++t) threads.emplace_back(work);
  work();
  for (auto& t : threads) t.join();
}

// The device and inode of a file (its identity, as ld.so sees it).
inline std::optional<std::pair<std::uint64_t, std::uint64_t>> file_identity(const std::string& path) {
#if !defined(_WIN32)
  struct ::stat st;
  if (::stat(path.c_str(), &st) != 0) return std::nullopt;
  return std::make_pair(static_cast<std::uint64_t>(st.st_dev), static_cast<std::uint64_t>(st.st_ino));
#else
  auto mapped = mapped_file::open(path);
  if (!mapped) return std::nullopt;
  return std::make_pair(mapped->device(), mapped->inode());
#endif
}

// The ELF files to analyse under `prefix`: regular files first, then symlinks
// whose target is not one of them (nor another symlink's); directory symlinks
// are not followed, so loops cannot happen. The files are read (sniffed) and
// stat'ed on `jobs` threads; the answer is the same for every `jobs`.
inline std::vector<std::string> walk_prefix(const std::string& prefix, prefix_report& report, unsigned jobs = 1) {
  namespace fs = std::filesystem;
  std::vector<std::string> regular, links;
  std::error_code ec;
  fs::recursive_directory_iterator it(prefix, fs::directory_options::skip_permission_denied, ec), end;
  if (ec) {
    report.warnings.push_back(prefix + ": " + ec.message());
    return {};
  }
  for (; it != end; it.increment(ec)) {
    if (ec) {
      report.warnings.push_back(ec.message());
      ec.clear();
      continue;
    }
    const fs::directory_entry& entry = *it;
    std::error_code e2;
    if (entry.is_symlink(e2)) {
      if (entry.is_regular_file(e2)) links.push_back(entry.path().string());
      else if (e2) report.warnings.push_back(entry.path().string() + ": " + e2.message());
      continue;
    }
    if (entry.is_regular_file(e2)) regular.push_back(entry.path().string());
  }
  std::sort(regular.begin(), regular.end());
  std::sort(links.begin(), links.end());
  // What each file is, and its identity: read in parallel, judged in order.
  struct sniffed {
    walk_kind kind = walk_kind::not_elf;
    std::string problem;
    std::optional<std::pair<std::uint64_t, std::uint64_t>> id;
  };
  const std::size_t n = regular.size() + links.size();
  std::vector<sniffed> facts(n);
  run_parallel(jobs, n, [&](std::size_t i) {
    const std::string& path = i < regular.size() ? regular[i] : links[i - regular.size()];
    sniffed& f = facts[i];
    f.kind = sniff_elf_file(path, &f.problem);
    if (f.kind != walk_kind::not_elf) f.id = file_identity(path);
  });
  std::vector<std::string> out;
  std::set<std::pair<std::uint64_t, std::uint64_t>> seen;
  for (std::size_t i = 0; i < n; ++i) {
    const bool link = i >= regular.size();
    std::string& path = link ? links[i - regular.size()] : regular[i];
    const sniffed& f = facts[i];
    if (!f.problem.empty()) report.warnings.push_back(path + ": " + f.problem);
    if (f.kind == walk_kind::not_elf) {
      if (f.problem.empty()) ++report.skipped_non_elf;
      continue;
    }
    if (f.id && !seen.insert(*f.id).second) {
      if (link) ++report.skipped_symlinks;
      continue;
    }
    if (f.kind == walk_kind::other_elf || f.kind == walk_kind::other_macho) {
      ++report.skipped_static;
      continue;
    }
    out.push_back(std::move(path));
  }
  return out;
}


}  // namespace detail
#endif  // LINKSCOPE_DEFINITIONS

}  // namespace resolve
}  // namespace v0
}  // namespace linkscope
