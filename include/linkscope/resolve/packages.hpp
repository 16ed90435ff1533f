// linkscope/resolve/packages.hpp — which package owns a file: a conda
// environment's conda-meta records and dpkg's database.
//
// conda: PREFIX/conda-meta/*.json, one record per installed package, whose
// "files" are paths relative to the prefix (resolve/conda_meta.hpp reads them).
// Records are read in file-name order; a path listed twice keeps its first
// owner.
//
// dpkg: /var/lib/dpkg/info/PKG.list or PKG:ARCH.list, one absolute path a line,
// as the .deb spelled it. Since the /usr-merge, /lib/x86_64-linux-gnu/libc.so.6
// is listed while ld.so finds /usr/lib/x86_64-linux-gnu/libc.so.6, and
// alternatives make a listed symlink the only registered spelling. So a path
// is looked up as given (normalised), through its /usr-merge alias
// (/lib <-> /usr/lib, and bin, sbin, lib32, lib64, libx32), then as its
// canonical path and that path's alias; the first spelling a database lists
// wins (`dpkg -S` of the path, else of the alias, else of the realpath, which
// is what dpkg-shlibdeps does).
#pragma once

#include <algorithm>
#include <cstdio>
#include <deque>
#include <filesystem>
#include <string>
#include <string_view>
#include <system_error>
#include <unordered_map>
#include <utility>
#include <vector>
#if !defined(_WIN32)
#include <sys/stat.h>
#endif

#include "linkscope/core/config.hpp"
#include "linkscope/core/error.hpp"
#include "linkscope/core/mapped_file.hpp"
#include "linkscope/resolve/conda_meta.hpp"

namespace linkscope {
inline namespace v0 {
namespace resolve {

struct package_owner {
  std::string package;      // "libc6:amd64", "libfoo"; empty when nobody owns it
  std::string source;       // "conda", "dpkg"; "prefix": in the prefix, which has no conda-meta;
                            // "unknown": no database covers it; "": a database covers it, nobody owns it
  std::string listed_path;  // the path under which the database lists it
};

// Package name without dpkg's ":arch" qualifier.
inline std::string_view package_base_name(std::string_view name) noexcept {
  const std::size_t colon = name.find(':');
  return colon == std::string_view::npos ? name : name.substr(0, colon);
}

namespace detail {

inline std::string_view base_name(std::string_view path) noexcept {
  const std::size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

// std::filesystem::path(path).lexically_normal().string(), without taking
// the path apart when it is normal already (no empty, "." or ".." element;
// a path with a backslash always goes through std::filesystem).
inline std::string lexically_normal_path(const std::string& path) {
  const std::string_view p = path;
  bool normal = p.find('\\') == std::string_view::npos && p != "." && p != ".." &&
                p.find("//") == std::string_view::npos;
  for (std::size_t at = 0; normal && at < p.size();) {
    std::size_t end = p.find('/', at);
    if (end == std::string_view::npos) end = p.size();
    const std::string_view element = p.substr(at, end - at);
    if (element == "." || element == "..") normal = false;
    at = end + 1;
  }
  if (normal) return path;
  return std::filesystem::path(path).lexically_normal().string();
}

// The canonical path (symlinks resolved), or the lexically normal one when it
// cannot be had.
inline std::string canonical_or_normal(const std::string& path) {
  std::error_code ec;
  auto c = std::filesystem::weakly_canonical(path, ec);
  if (ec) return std::filesystem::path(path).lexically_normal().string();
  return c.string();
}

// canonical_or_normal, with each folder resolved once: a file in a folder
// seen before costs one lstat (is it a symlink?), where canonical_or_normal
// reads every element of its path again (a readlink or stat each). Only an
// absolute, lexically normal path whose last element is no symlink takes
// that way; anything else goes through canonical_or_normal whole, so the
// answer is the same. Not thread-safe: one per thread.
class canonical_paths {
 public:
  std::string operator()(const std::string& path) {
#if defined(_WIN32)
    return canonical_or_normal(path);
#else
    const std::size_t slash = path.rfind('/');
    if (path.empty() || path[0] != '/' || slash == 0 || slash + 1 == path.size() || lexically_normal_path(path) != path)
      return canonical_or_normal(path);
    std::string dir = path.substr(0, slash);
    auto at = dirs_.find(dir);
    if (at == dirs_.end()) {
      std::string resolved = canonical_or_normal(dir);
      at = dirs_.emplace(std::move(dir), std::move(resolved)).first;
    }
    std::string joined = at->second;
    if (joined != "/") joined += '/';
    joined.append(path, slash + 1);
    struct ::stat st;
    if (::lstat(joined.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) return canonical_or_normal(path);
    return joined;
#endif
  }

 private:
  std::unordered_map<std::string, std::string> dirs_;  // folder as given -> canonical_or_normal
};

// `path` is `dir` or below it (both absolute and normal).
inline bool path_within(std::string_view path, std::string_view dir) noexcept {
  if (dir.empty()) return false;
  if (dir == "/") return !path.empty() && path[0] == '/';
  if (path.size() < dir.size() || path.substr(0, dir.size()) != dir) return false;
  return path.size() == dir.size() || path[dir.size()] == '/';
}

// The /usr-merge aliases of an absolute path (/lib/x <-> /usr/lib/x, bin, sbin, lib64 ...).
inline std::vector<std::string> usr_merge_aliases(const std::string& path) {
  static constexpr std::string_view tops[] = {"/lib/", "/lib32/", "/lib64/", "/libx32/", "/bin/", "/sbin/"};
  std::vector<std::string> out;
  for (std::string_view top : tops) {
    if (path.compare(0, top.size(), top) == 0) out.push_back("/usr" + path);
    if (path.compare(0, 4 + top.size(), std::string("/usr").append(top)) == 0) out.push_back(path.substr(4));
  }
  return out;
}

}  // namespace detail

// conda-meta/*.json of a prefix: relative path (normalised) -> package name.
// A record that cannot be read or has no "name" is skipped with a warning
// ("FILE: MESSAGE (offset 0x...)") when `warnings` is given.
result<std::unordered_map<std::string, std::string>> conda_owners(const std::string& prefix,
                                                                  std::vector<std::string>* warnings = nullptr);

// Owners of absolute paths from dpkg's database (info_dir/*.list); a path no
// package lists is absent from the map. `listed_path` says which spelling the
// database has.
std::unordered_map<std::string, package_owner> dpkg_owners(const std::vector<std::string>& paths,
                                                           const std::string& info_dir = "/var/lib/dpkg/info");

#if LINKSCOPE_DEFINITIONS

LINKSCOPE_FUNC result<std::unordered_map<std::string, std::string>> conda_owners(const std::string& prefix,
                                                                                 std::vector<std::string>* warnings) {
  std::unordered_map<std::string, std::string> out;
  std::error_code ec;
  std::vector<std::filesystem::path> records;
  for (std::filesystem::directory_iterator it(prefix + "/conda-meta", ec), end; !ec && it != end; it.increment(ec))
    if (it->path().extension() == ".json") records.push_back(it->path());
  std::sort(records.begin(), records.end());
  for (const auto& record : records) {
    auto file = mapped_file::open(record.string());
    if (!file) {
      if (warnings) warnings->push_back(record.string() + ": " + file.error().message);
      continue;
    }
    auto meta = read_conda_meta(file->bytes().chars());
    if (!meta) {
      if (warnings) warnings->push_back(record.string() + ": " + describe(meta.error()));
      continue;
    }
    if (meta->name.empty()) {
      if (warnings) warnings->push_back(record.string() + ": no \"name\"");
      continue;
    }
    for (auto& f : meta->files) out.emplace(std::filesystem::path(f).lexically_normal().string(), meta->name);
  }
  return out;
}

LINKSCOPE_FUNC std::unordered_map<std::string, package_owner> dpkg_owners(const std::vector<std::string>& paths,
                                                                          const std::string& info_dir) {
  std::unordered_map<std::string, package_owner> out;
  // candidate spelling -> the paths asking for it, in order of preference.
  // Keys view strings kept in `spellings` (a deque: stable addresses), so that the
  // 150k lines of a typical database are looked up without allocating.
  std::deque<std::string> spellings;
  std::unordered_map<std::string_view, std::vector<std::pair<std::string, int>>> wanted;
  for (const auto& p : paths) {
    int rank = 0;
    auto want = [&](const std::string& c) {
      auto it = wanted.find(c);
      if (it == wanted.end()) it = wanted.emplace(spellings.emplace_back(c), std::vector<std::pair<std::string, int>>{}).first;
      it->second.push_back({p, rank++});
    };
    const std::string normal = std::filesystem::path(p).lexically_normal().string();
    want(normal);
    for (const auto& a : detail::usr_merge_aliases(normal)) want(a);
    const std::string canonical = detail::canonical_or_normal(p);
    if (canonical != normal) {
      want(canonical);
      for (const auto& a : detail::usr_merge_aliases(canonical)) want(a);
    }
  }
  std::unordered_map<std::string, int> best;
  std::error_code ec;
  std::vector<std::filesystem::path> lists;
  for (std::filesystem::directory_iterator it(info_dir, ec), end; !ec && it != end; it.increment(ec)) {
    const auto& entry = it->path();
    if (entry.extension() == ".list") lists.push_back(entry);
  }
  std::sort(lists.begin(), lists.end());
  for (const auto& list : lists) {
    auto file = mapped_file::open(list.string());
    if (!file) continue;
    const std::string package = list.stem().string();
    const std::string_view text = file->bytes().chars();
    std::size_t start = 0;
    while (start < text.size()) {
      std::size_t nl = text.find('\n', start);
      if (nl == std::string_view::npos) nl = text.size();
      std::string_view line = text.substr(start, nl - start);
      start = nl + 1;
      if (line.empty()) continue;
      auto w = wanted.find(line);
      if (w == wanted.end()) continue;
      for (const auto& [path, rank] : w->second) {
        auto b = best.find(path);
        if (b != best.end() && b->second <= rank) continue;
        best[path] = rank;
        out[path] = package_owner{package, "dpkg", std::string(line)};
      }
    }
  }
  return out;
}

#endif  // LINKSCOPE_DEFINITIONS

}  // namespace resolve
}  // namespace v0
}  // namespace linkscope
