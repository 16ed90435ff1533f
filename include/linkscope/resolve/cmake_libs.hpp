// linkscope/resolve/cmake_libs.hpp — a CMake library list read as a
// consumer's link takes it: the entries of a config's <PKG>_LIBRARIES or
// INTERFACE_LINK_LIBRARIES (linkscope-absorbed --cmake-libs), and the
// library words of the link command CMake writes for a probe executable
// (--cmake-package). Nothing is run here: paths are looked up on disk as
// find_library and the linker would (-l: GNU ld's built-in directories,
// resolve/link_line.hpp), and what only CMake can evaluate (a target, a
// generator expression) is said so, never guessed.
#pragma once

#include <cstddef>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "linkscope/core/mapped_file.hpp"
#include "linkscope/resolve/file_format.hpp"
#include "linkscope/resolve/link_line.hpp"

namespace linkscope {
inline namespace v0 {
namespace resolve {

// One entry and what became of it.
struct cmake_library {
  std::string name;  // as the list writes it
  std::string path;  // the file it names, when found
  std::string note;  // "" (an archive, to be judged), "shared", "not-found", "flag", "debug-only",
                     // or, which only CMake can evaluate: "cmake-target", "generator-expression"
};

// find_library(NAME PATHS prefix/lib ...): lib<NAME>.so, lib<NAME>.a, then NAME.lib.
inline std::string find_cmake_library(const std::string& prefix, const std::string& name, bool& is_static) {
  const char* dirs[] = {"/lib/", "/lib64/", "/lib/x86_64-linux-gnu/"};
  for (const char* dir : dirs) {
    for (const char* suffix : {".so", ".a"}) {
      std::string path = prefix + dir + "lib" + name + suffix;
      if (auto f = mapped_file::open(path)) {
        is_static = std::strcmp(suffix, ".a") == 0;
        return path;
      }
    }
    std::string lib = prefix + dir + name + ".lib";
    if (auto f = mapped_file::open(lib)) {
      is_static = true;
      return lib;
    }
  }
  return {};
}

// What the linker takes for -lNAME (or -l:FILE): the prefix's library folders
// as find_library searches them, then GNU ld's built-in directories; in each,
// libNAME.so before libNAME.a (-Bdynamic, the default).
inline std::string find_dash_l(const std::string& prefix, std::string_view spec, bool& is_static) {
  const std::string name(spec.substr(2));
  if (name.empty()) return {};
  if (name[0] != ':') {
    std::string found = find_cmake_library(prefix, name, is_static);
    if (!found.empty()) return found;
  }
  const std::vector<std::string> names =
      name[0] == ':' ? std::vector<std::string>{name.substr(1)}
                     : std::vector<std::string>{"lib" + name + ".so", "lib" + name + ".a"};
  for (const std::string& dir : gnu_ld_search_dirs()) {
    const std::string base = detail::sysroot_dir(dir, {}) + "/";
    for (const std::string& n : names)
      if (mapped_file::open(base + n)) {
        is_static = sniff_file(base + n) == file_format::archive;
        return base + n;
      }
  }
  return {};
}

// One entry of a CMake library list, as a consumer's link takes it:
//   lib.a / lib.so (a path)      the file, judged (an archive) or "shared"
//   NAME                         find_library under the prefix
//   -lNAME, -l:FILE              the linker's search (find_dash_l)
//   $<LINK_ONLY:X>               X (what CMake puts in a static library's interface)
//   -Wl,..., -pthread, -L...     "flag": an option, not a library
//   NS::target, other $<...>     "cmake-target" / "generator-expression": only
//                                CMake can evaluate them (exit 2 unless --allow-unevaluated)
//   X-NOTFOUND, a missing file   "not-found"
// (The keyword "debug" before an entry makes it "debug-only"; see main.)
inline cmake_library classify_cmake_entry(const std::string& prefix, std::string name,
                                                       std::vector<std::string>& archives) {
  cmake_library lib{name, {}, {}};
  const std::string link_only = "$<LINK_ONLY:";
  if (name.rfind(link_only, 0) == 0 && name.size() > link_only.size() + 1 && name.back() == '>' &&
      name.find('$', 1) == std::string::npos)
    name = name.substr(link_only.size(), name.size() - link_only.size() - 1);
  bool is_static = false;
  if (name.find("$<") != std::string::npos) {
    lib.note = "generator-expression";
  } else if (name.find("::") != std::string::npos) {
    lib.note = "cmake-target";
  } else if (name.find("-NOTFOUND") != std::string::npos) {
    lib.note = "not-found";
  } else if (name.rfind("-l", 0) == 0 && name.size() > 2) {
    lib.path = find_dash_l(prefix, name, is_static);
  } else if (!name.empty() && name[0] == '-') {
    lib.note = "flag";
  } else if (name.find('/') != std::string::npos) {
    if (mapped_file::open(name)) {
      lib.path = name;
      is_static = sniff_file(name) == file_format::archive;
    }
  } else {
    lib.path = find_cmake_library(prefix, name, is_static);
  }
  if (lib.note.empty()) {
    if (lib.path.empty())
      lib.note = "not-found";
    else if (!is_static)
      lib.note = "shared";
    else
      archives.push_back(lib.path);
  }
  return lib;
}

inline bool unevaluated(const cmake_library& lib) {
  return lib.note == "cmake-target" || lib.note == "generator-expression";
}

// A CMake library list's entries, each classified (classify_cmake_entry):
// the keyword debug makes the next entry "debug-only", optimized and general
// are dropped. The archives found are appended to `archives`.
inline std::vector<cmake_library> read_cmake_libs(const std::vector<std::string>& entries, const std::string& prefix,
                                                  std::vector<std::string>& archives) {
  std::vector<cmake_library> out;
  std::string keyword;
  for (const std::string& name : entries) {
    if (name.empty()) continue;
    if (name == "debug" || name == "optimized" || name == "general") {
      keyword = name;
      continue;
    }
    if (keyword == "debug")
      out.push_back(cmake_library{name, {}, "debug-only"});
    else
      out.push_back(classify_cmake_entry(prefix, name, archives));
    keyword.clear();
  }
  return out;
}

// The entries of a ';'-separated CMake list (empty ones dropped); `separator`
// ',' splits the arguments of a -Wl, word the same way.
inline std::vector<std::string> split_cmake_list(std::string_view list, char separator = ';') {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= list.size()) {
    std::size_t end = list.find(separator, start);
    if (end == std::string_view::npos) end = list.size();
    if (end > start) out.emplace_back(list.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

// The library entries of a link command CMake wrote (CMakeFiles/<t>.dir/
// link.txt), split as the shell would (tokenize_gnu): every word after
// "-o OUTPUT"; a path inside -Wl,a,PATH,b is an entry of its own, the rest of
// that word stays a -Wl flag. False when the text is no link command (no
// "-o", or a quote that does not close).
inline bool link_command_libraries(std::string_view text, std::vector<std::string>& entries) {
  std::vector<std::string> words;
  std::size_t bad = 0;
  if (!tokenize_gnu(text, words, bad)) return false;
  bool after_output = false;
  for (std::size_t i = 0; i < words.size(); ++i) {
    const std::string& w = words[i];
    if (!after_output) {
      if (w == "-o") {
        ++i;
        after_output = true;
      }
      continue;
    }
    if (w.rfind("-Wl,", 0) != 0) {
      entries.push_back(w);
      continue;
    }
    std::string flags;
    for (const std::string& part : split_cmake_list(std::string_view(w).substr(4), ',')) {
      if (part[0] == '/')
        entries.push_back(part);
      else
        flags += (flags.empty() ? "-Wl," : ",") + part;
    }
    if (!flags.empty()) entries.push_back(flags);
  }
  return after_output;
}

}  // namespace resolve
}  // namespace v0
}  // namespace linkscope
