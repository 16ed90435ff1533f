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
#include <cstring>
#include <filesystem>
#include <map>
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

// The kind of a file of `format` whose first bytes (up to 4 KiB) are `head`;
// nothing when it is an ELF file whose program headers lie beyond them.
inline std::optional<walk_kind> walk_kind_of_head(file_format format, byte_view head) {
  if (format == file_format::macho || format == file_format::macho_universal) return sniff_macho(head);
  if (format == file_format::pe) return walk_kind::pe;
  if (format != file_format::elf) return walk_kind::not_elf;
  auto id = elf::identify(head);
  if (id && id->segments_read) return id->dynamically_linked() ? walk_kind::dynamic : walk_kind::other_elf;
  return std::nullopt;
}

inline walk_kind elf_walk_kind(byte_view whole) {
  auto id = elf::identify(whole);
  return id && id->dynamically_linked() ? walk_kind::dynamic : walk_kind::other_elf;
}

// The kind of the file at `path` from its first bytes; an ELF file is mapped
// whole only when its program headers lie beyond them.
inline walk_kind sniff_elf_file(const std::string& path, std::string* error_message) {
  std::string head;
  const file_format format = sniff_file(path, &head);
  if (auto kind = walk_kind_of_head(format, byte_view(reinterpret_cast<const unsigned char*>(head.data()), head.size())))
    return *kind;
  auto mapped = mapped_file::open(path);
  if (!mapped) {
    if (error_message) *error_message = mapped.error().message;
    return walk_kind::not_elf;
  }
  return elf_walk_kind(mapped->bytes());
}

// sniff_elf_file's answer for a file read whole already (`whole`): the same
// first 4 KiB, and a PE signature looked for where sniff_file looks.
inline walk_kind walk_kind_of(byte_view whole) {
  const byte_view head(whole.data(), std::min<std::size_t>(whole.size(), 4096));
  file_format format = sniff_format(head);
  if (format == file_format::unknown && head.size() >= 0x40 && head.data()[0] == 'M' && head.data()[1] == 'Z') {
    const std::uint64_t lfanew = load<u32, std::endian::little>(head.data() + 0x3c);
    if (lfanew >= head.size() && lfanew + 4 <= whole.size() && std::memcmp(whole.data() + lfanew, "PE\0\0", 4) == 0)
      format = file_format::pe;
  }
  if (auto kind = walk_kind_of_head(format, head)) return *kind;
  return elf_walk_kind(whole);
}

// How many consecutive items a thread takes at once when `jobs` threads share
// `n`: neighbours in a sorted list of files tend to load the same libraries,
// and an image read by the thread that parsed it is still in that core's
// cache, where handing out one item at a time would alternate neighbours
// between the threads. Small enough that the threads still finish together:
// at most 32 items, and at least 32 chunks per thread when there are enough.
inline std::size_t parallel_chunk(unsigned jobs, std::size_t n) {
  if (jobs <= 1) return n == 0 ? 1 : n;
  return std::clamp<std::size_t>(n / (std::size_t{jobs} * 32), 1, 32);
}

// One thread's share of items [0, n): fn(i) for each run of `chunk` items it
// takes from `next`, until none are left.
template <class F>
void take_chunks(std::atomic<std::size_t>& next, std::size_t n, std::size_t chunk, F&& fn) {
  for (std::size_t first = next.fetch_add(chunk); first < n; first = next.fetch_add(chunk))
    for (std::size_t i = first, end = std::min(n, first + chunk); i < end; ++i) fn(i);
}

// fn(i) for every i < n, on `jobs` threads (this one included), each taking
// the next parallel_chunk(jobs, n) items not yet taken.
template <class F>
void run_parallel(unsigned jobs, std::size_t n, F fn) {
  std::atomic<std::size_t> next{0};
  const std::size_t chunk = parallel_chunk(jobs, n);
  auto work = [&] { take_chunks(next, n, chunk, fn); };
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

// The files under `prefix`: regular files, and symlinks to regular files
// (each list sorted); directory symlinks are not followed, so loops cannot
// happen.
struct walk_list {
  std::vector<std::string> regular, links;
};

inline walk_list list_prefix(const std::string& prefix, prefix_report& report) {
  namespace fs = std::filesystem;
  walk_list out;
  std::error_code ec;
  fs::recursive_directory_iterator it(prefix, fs::directory_options::skip_permission_denied, ec), end;
  if (ec) {
    report.warnings.push_back(prefix + ": " + ec.message());
    return out;
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
      if (entry.is_regular_file(e2)) out.links.push_back(entry.path().string());
      else if (e2) report.warnings.push_back(entry.path().string() + ": " + e2.message());
      continue;
    }
    if (entry.is_regular_file(e2)) out.regular.push_back(entry.path().string());
  }
  std::sort(out.regular.begin(), out.regular.end());
  std::sort(out.links.begin(), out.links.end());
  return out;
}

// What the walk learns of one listed file.
struct walk_fact {
  walk_kind kind = walk_kind::not_elf;
  std::string problem;  // why it could not be read as what it is (a warning)
  std::optional<std::pair<std::uint64_t, std::uint64_t>> id;  // device and inode
  std::vector<std::pair<std::uint64_t, std::uint64_t>> uses;  // the plan's: the files its link reads
};

// Which listed files are checked: the regular files, then the symlinks whose
// target is none of them (nor an earlier symlink's), each file once; the rest
// is counted in `report` (skipped_non_elf, skipped_symlinks, skipped_static)
// and their problems become warnings. `examine(path, fact)` fills a file's
// kind, problem and identity (and may do more: the check plans its link
// there); it runs on `jobs` threads, for every regular file and for each
// symlink that names no regular file (the others take that file's facts, and
// are only stat'ed). The answer is the same for every `jobs`. Returns indices
// into regular-then-links; `facts` has one entry per listed file.
template <class Examine>
std::vector<std::size_t> walk_decide(const walk_list& list, prefix_report& report, unsigned jobs,
                                     std::vector<walk_fact>& facts, Examine examine) {
  const std::size_t regulars = list.regular.size();
  const std::size_t n = regulars + list.links.size();
  facts.assign(n, walk_fact{});
  run_parallel(jobs, regulars, [&](std::size_t i) { examine(list.regular[i], facts[i]); });
  std::map<std::pair<std::uint64_t, std::uint64_t>, std::size_t> regular_by_id;
  for (std::size_t i = 0; i < regulars; ++i)
    if (facts[i].id) regular_by_id.emplace(*facts[i].id, i);
  run_parallel(jobs, list.links.size(), [&](std::size_t k) { facts[regulars + k].id = file_identity(list.links[k]); });
  std::vector<std::size_t> unnamed;  // symlinks to files outside the regular ones
  for (std::size_t k = 0; k < list.links.size(); ++k) {
    walk_fact& f = facts[regulars + k];
    auto same = f.id ? regular_by_id.find(*f.id) : regular_by_id.end();
    if (same == regular_by_id.end()) {
      unnamed.push_back(regulars + k);
      continue;
    }
    f.kind = facts[same->second].kind;
    f.problem = facts[same->second].problem;
  }
  run_parallel(jobs, unnamed.size(), [&](std::size_t u) {
    walk_fact& f = facts[unnamed[u]];
    f = walk_fact{};
    examine(list.links[unnamed[u] - regulars], f);
  });
  std::vector<std::size_t> kept;
  std::set<std::pair<std::uint64_t, std::uint64_t>> seen;
  for (std::size_t i = 0; i < n; ++i) {
    const bool link = i >= regulars;
    const std::string& path = link ? list.links[i - regulars] : list.regular[i];
    const walk_fact& f = facts[i];
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
    kept.push_back(i);
  }
  return kept;
}

}  // namespace detail
#endif  // LINKSCOPE_DEFINITIONS

}  // namespace resolve
}  // namespace v0
}  // namespace linkscope
