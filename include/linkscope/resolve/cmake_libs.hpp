// linkscope/resolve/cmake_libs.hpp — a CMake library list read as a
// consumer's link takes it: the entries of a config's <PKG>_LIBRARIES or
// INTERFACE_LINK_LIBRARIES (linkscope-absorbed --cmake-libs), and the
// library words of the link command CMake writes for a probe executable
// (--cmake-package). Nothing is run here: paths are looked up on disk as
// find_library and the linker would (-l: GNU ld's built-in directories,
// resolve/link_line.hpp), and what only CMake can evaluate (a target, a
// generator expression) is said so, never guessed.
#pragma once

#include <cctype>
#include <cstddef>
#include <cstring>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "linkscope/core/config.hpp"
#include "linkscope/core/mapped_file.hpp"
#include "linkscope/elf/dynamic.hpp"
#include "linkscope/elf/file.hpp"
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
                     // "link-dependent" (classify_link_dependent),
                     // or, which only CMake can evaluate: "cmake-target", "generator-expression"
  // "link-dependent" only: the imported shared library whose
  // IMPORTED_LINK_DEPENDENT_LIBRARIES names it, and the DT_NEEDED entry of
  // that file the name stands for ("" when none does).
  std::string dependent_of;
  std::string soname;
  std::string found_by;  // how the link finds soname: "search" (dependent_of's folder or the
                         // linker's own folders), "rpath-link" (only through the -rpath-link
                         // CMake adds for this entry, a target), "" (not at all)
};

// An entry of an imported shared library's IMPORTED_LINK_DEPENDENT_LIBRARIES
// (Caffe2Targets' pthreadpool, cpuinfo, XNNPACK, ..., DNNL::dnnl for
// torch_cpu). CMake never puts these on a consumer's link line: a name that
// is a target gives the link an -rpath-link to its folder, any other name is
// ignored. What the link needs of them is what GNU ld needs of
// `dependent_of`'s own DT_NEEDED entries: it looks each one up to check the
// shared library's undefined symbols, and an executable's link fails when
// one is not found ("libX.so.1, needed by S, not found (try using -rpath or
// -rpath-link)"). So the entry is matched to a DT_NEEDED name
// lib<NAME>.so[.*] of `dependent_of` (NAME as written, the part after "::",
// each also lower-cased), and that name is looked up where the link finds
// it: `dependent_of`'s folder (CMake's build -rpath names the folder of every
// shared library it links by path), then the linker's own folders
// (gnu_ld_search_dirs), then the folder of `location` when CMake knows the
// entry as a target. DT_RUNPATH and ld.so.conf are not read.
cmake_library classify_link_dependent(const std::string& name, const std::string& dependent_of,
                                      const std::string& location = {});

// The verdict on a "link-dependent" entry, as a trial link that drops it from
// the property says: "needed" when its DT_NEEDED name is found only through
// the entry's -rpath-link, or not at all (the link fails either way); else
// "not-needed" (no DT_NEEDED entry, or the linker finds it by itself).
inline const char* dependent_verdict(const cmake_library& lib) {
  return !lib.soname.empty() && lib.found_by != "search" ? "needed" : "not-needed";
}

// The DT_NEEDED names of an ELF file (none when it is no ELF file or has no
// dynamic section).
std::vector<std::string> elf_needed_names(const std::string& path);

// find_library(NAME PATHS prefix/lib ...): lib<NAME>.so, lib<NAME>.a, then NAME.lib.
std::string find_cmake_library(const std::string& prefix, const std::string& name, bool& is_static);

// What the linker takes for -lNAME (or -l:FILE): the prefix's library folders
// as find_library searches them, then GNU ld's built-in directories; in each,
// libNAME.so before libNAME.a (-Bdynamic, the default).
std::string find_dash_l(const std::string& prefix, std::string_view spec, bool& is_static);

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
cmake_library classify_cmake_entry(const std::string& prefix, std::string name,
                                                       std::vector<std::string>& archives);

inline bool unevaluated(const cmake_library& lib) {
  return lib.note == "cmake-target" || lib.note == "generator-expression";
}

// A CMake library list's entries, each classified (classify_cmake_entry):
// the keyword debug makes the next entry "debug-only", optimized and general
// are dropped. The archives found are appended to `archives`.
std::vector<cmake_library> read_cmake_libs(const std::vector<std::string>& entries, const std::string& prefix,
                                                  std::vector<std::string>& archives);

// The entries of a ';'-separated CMake list (empty ones dropped); `separator`
// ',' splits the arguments of a -Wl, word the same way.
std::vector<std::string> split_cmake_list(std::string_view list, char separator = ';');

// The library entries of a link command CMake wrote (CMakeFiles/<t>.dir/
// link.txt), split as the shell would (tokenize_gnu): every word after
// "-o OUTPUT"; a path inside -Wl,a,PATH,b is an entry of its own, the rest of
// that word stays a -Wl flag. False when the text is no link command (no
// "-o", or a quote that does not close).
bool link_command_libraries(std::string_view text, std::vector<std::string>& entries);


#if LINKSCOPE_DEFINITIONS
LINKSCOPE_FUNC std::vector<std::string> elf_needed_names(const std::string& path) {
  std::vector<std::string> out;
  auto m = mapped_file::open(path);
  if (!m || !elf::is_elf(m->bytes())) return out;
  (void)elf::visit_elf(m->bytes(), [&](const auto& f) -> result<void> {
    using file_type = std::decay_t<decltype(f)>;
    LINKSCOPE_TRY(dyn, elf::dynamic_info<typename file_type::types>::read(f));
    return dyn.for_each_needed([&](std::string_view n) { out.emplace_back(n); });
  });
  return out;
}

LINKSCOPE_FUNC cmake_library classify_link_dependent(const std::string& name, const std::string& dependent_of,
                                                     const std::string& location) {
  cmake_library lib;
  lib.name = name;
  lib.note = "link-dependent";
  lib.dependent_of = dependent_of;
  std::vector<std::string> stems{name};
  if (const auto colons = name.rfind("::"); colons != std::string::npos) stems.push_back(name.substr(colons + 2));
  for (std::size_t i = 0, n = stems.size(); i < n; ++i) {
    std::string lower = stems[i];
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (lower != stems[i]) stems.push_back(lower);
  }
  const std::vector<std::string> needed = elf_needed_names(dependent_of);
  for (const std::string& stem : stems) {
    const std::string want = "lib" + stem + ".so";
    for (const std::string& soname : needed)
      if (soname.rfind(want, 0) == 0 && (soname.size() == want.size() || soname[want.size()] == '.')) {
        lib.soname = soname;
        break;
      }
    if (!lib.soname.empty()) break;
  }
  if (lib.soname.empty()) return lib;
  const std::string beside = (std::filesystem::path(dependent_of).parent_path() / lib.soname).string();
  bool is_static = false;
  if (mapped_file::probe(beside))
    lib.path = beside;
  else
    lib.path = find_dash_l({}, "-l:" + lib.soname, is_static);
  if (!lib.path.empty()) {
    lib.found_by = "search";
    return lib;
  }
  if (!location.empty()) {
    const std::string via = (std::filesystem::path(location).parent_path() / lib.soname).string();
    if (mapped_file::probe(via)) {
      lib.path = via;
      lib.found_by = "rpath-link";
    }
  }
  return lib;
}
#endif  // LINKSCOPE_DEFINITIONS

#if LINKSCOPE_DEFINITIONS
LINKSCOPE_FUNC std::string find_cmake_library(const std::string& prefix, const std::string& name, bool& is_static) {
  const char* dirs[] = {"/lib/", "/lib64/", "/lib/x86_64-linux-gnu/"};
  for (const char* dir : dirs) {
    for (const char* suffix : {".so", ".a"}) {
      std::string path = prefix + dir + "lib" + name + suffix;
      if (mapped_file::probe(path)) {
        is_static = std::strcmp(suffix, ".a") == 0;
        return path;
      }
    }
    std::string lib = prefix + dir + name + ".lib";
    if (mapped_file::probe(lib)) {
      is_static = true;
      return lib;
    }
  }
  return {};
}

LINKSCOPE_FUNC std::string find_dash_l(const std::string& prefix, std::string_view spec, bool& is_static) {
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
      if (mapped_file::probe(base + n)) {
        is_static = sniff_file(base + n) == file_format::archive;
        return base + n;
      }
  }
  return {};
}

LINKSCOPE_FUNC cmake_library classify_cmake_entry(const std::string& prefix, std::string name,
                                                       std::vector<std::string>& archives) {
  cmake_library lib;
  lib.name = name;
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
    if (mapped_file::probe(name)) {
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

LINKSCOPE_FUNC std::vector<cmake_library> read_cmake_libs(const std::vector<std::string>& entries, const std::string& prefix,
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
      {
      cmake_library lib;
      lib.name = name;
      lib.note = "debug-only";
      out.push_back(std::move(lib));
    }
    else
      out.push_back(classify_cmake_entry(prefix, name, archives));
    keyword.clear();
  }
  return out;
}

LINKSCOPE_FUNC std::vector<std::string> split_cmake_list(std::string_view list, char separator) {
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

LINKSCOPE_FUNC bool link_command_libraries(std::string_view text, std::vector<std::string>& entries) {
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
#endif  // LINKSCOPE_DEFINITIONS

}  // namespace resolve
}  // namespace v0
}  // namespace linkscope
