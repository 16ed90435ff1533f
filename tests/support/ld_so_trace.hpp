// Test support for resolve/: the real ld.so's answers, as sets of lines.
//
// ld.so relocates the whole closure in trace mode only when LD_WARN is set
// (rtld.c: `if (GLRO(dl_lazy) >= 0 && GLRO(dl_verbose))`); without it,
// LD_DEBUG=bindings shows only the vDSO's own lookups. So the reference run is
//   LD_TRACE_LOADED_OBJECTS=1 LD_WARN=yes LD_BIND_NOW=1 LD_DEBUG=bindings
//   LD_DEBUG_OUTPUT=F /lib64/ld-linux-x86-64.so.2 PROGRAM
// and its `binding file A [0] to B [0]: normal symbol `S' [V]` lines become
// the TSV rows `A\tB\tS\tV` (V empty when absent). The vDSO is not a file, so
// its lines are dropped.
#pragma once

#include <dirent.h>
#include <unistd.h>

#include <cstdlib>
#include <set>
#include <string>
#include <vector>

#include "support/fixtures.hpp"

namespace linkscope_test {

inline const char* real_ld_so() { return "/lib64/ld-linux-x86-64.so.2"; }

inline bool have_real_ld_so() {
#if defined(__x86_64__) && defined(__linux__)
  return ::access(real_ld_so(), X_OK) == 0 && have_tool("ldd");
#else
  return false;
#endif
}

// Parse LD_DEBUG=bindings output into TSV rows.
inline std::set<std::string> parse_ld_debug_bindings(const std::string& text) {
  std::set<std::string> rows;
  for (const std::string& line : lines(text)) {
    const std::string head = "binding file ";
    std::size_t p = line.find(head);
    if (p == std::string::npos) continue;
    p += head.size();
    std::size_t to = line.find(" [0] to ", p);
    if (to == std::string::npos) continue;
    std::string from = line.substr(p, to - p);
    std::size_t colon = line.find(" [0]: ", to + 8);
    if (colon == std::string::npos) continue;
    std::string target = line.substr(to + 8, colon - (to + 8));
    std::size_t sym = line.find(" symbol `", colon);
    if (sym == std::string::npos) continue;
    std::size_t sym_end = line.find('\'', sym + 9);
    if (sym_end == std::string::npos) continue;
    std::string name = line.substr(sym + 9, sym_end - (sym + 9));
    std::string version;
    std::size_t v = line.find(" [", sym_end);
    if (v != std::string::npos) {
      std::size_t v_end = line.find(']', v + 2);
      if (v_end != std::string::npos) version = line.substr(v + 2, v_end - (v + 2));
    }
    if (from.find("linux-vdso") != std::string::npos || target.find("linux-vdso") != std::string::npos) continue;
    rows.insert(from + "\t" + target + "\t" + name + "\t" + version);
  }
  return rows;
}

// The binding set of the real ld.so for `program` run from `dir` with extra
// environment `env` (e.g. "LD_LIBRARY_PATH=/x").
inline std::set<std::string> ld_so_bindings(const std::string& dir, const std::string& program,
                                            const std::string& env = "") {
  const std::string prefix = dir + "/ldso-debug";
  capture("rm -f " + shell_quote(prefix) + ".*");
  run_in(dir, "env -u LD_LIBRARY_PATH -u LD_PRELOAD " + env +
                  " LD_TRACE_LOADED_OBJECTS=1 LD_WARN=yes LD_BIND_NOW=1 LD_DEBUG=bindings LD_DEBUG_OUTPUT=" +
                  shell_quote(prefix) + " " + real_ld_so() + " " + shell_quote(program) + " >/dev/null 2>&1");
  std::string all;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (dirent* e = ::readdir(d)) {
      std::string name = e->d_name;
      if (name.rfind("ldso-debug.", 0) == 0) all += read_file(dir + "/" + name);
    }
    ::closedir(d);
  }
  return parse_ld_debug_bindings(all);
}

// Lines of a command's stdout as a set (optionally dropping empty lines).
inline std::set<std::string> line_set(const std::string& text) {
  std::set<std::string> out;
  for (const auto& l : lines(text))
    if (!l.empty()) out.insert(l);
  return out;
}

// ldd's `name => path` lines, without the load address and without the vDSO.
inline std::vector<std::string> ldd_lines(const std::string& dir, const std::string& program,
                                          const std::string& env = "", const std::string& flags = "") {
  auto r = capture("cd " + shell_quote(dir) + " && env -u LD_LIBRARY_PATH -u LD_PRELOAD " + env + " ldd " + flags +
                   " " + shell_quote(program) + " 2>/dev/null");
  std::vector<std::string> out;
  for (std::string l : lines(r.out)) {
    if (l.find("linux-vdso") != std::string::npos) continue;
    std::size_t addr = l.rfind(" (0x");
    if (addr != std::string::npos) l.resize(addr);
    out.push_back(l);
  }
  return out;
}

}  // namespace linkscope_test
