// Test support: scratch directories, running the real tools, reading output.
// Fixtures are generated at test time with the toolchain; expected values
// come from the real tools (nm, readelf, ar, ld.so, lld ...), never from
// linkscope's own output.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <initializer_list>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <sys/wait.h>

namespace linkscope_test {

// Concatenate without `"literal" + std::string&&`: g++ 12 at -O3 reports a
// false -Wrestrict overlap inside that operator+ (GCC PR 105329).
inline std::string cat(std::initializer_list<std::string_view> parts) {
  std::string s;
  for (std::string_view p : parts) s.append(p);
  return s;
}

inline std::string shell_quote(std::string_view s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'')
      out += "'\\''";
    else
      out += c;
  }
  out += "'";
  return out;
}

// A fresh scratch directory for one test file (removed and recreated).
inline std::string scratch_dir(const std::string& name) {
  namespace fs = std::filesystem;
  fs::path dir = fs::path(LINKSCOPE_TEST_SCRATCH) / name;
  std::error_code ec;
  fs::remove_all(dir, ec);
  fs::create_directories(dir);
  return dir.string();
}

struct command_result {
  int status = -1;  // exit status, or -1 if it did not exit normally
  std::string out;  // stdout (stderr goes to the test log)
};

// Run a shell command, capturing stdout.
inline command_result capture(const std::string& command) {
  command_result r;
  std::FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return r;
  char buf[65536];
  std::size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof(buf), pipe)) > 0) r.out.append(buf, n);
  int status = ::pclose(pipe);
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

// Run a shell command in `dir`; returns the exit status (stdout/stderr to a log).
inline int run_in(const std::string& dir, const std::string& command) {
  std::string full = "cd " + shell_quote(dir) + " && " + command;
  int status = std::system(full.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

inline bool have_tool(const std::string& name) {
  return capture("command -v " + shell_quote(name) + " >/dev/null 2>&1 && echo yes").out == "yes\n";
}

// GNU nm as the tests run it: `nm`, with GCC's LTO plugin named when it is
// there. Without --plugin, BFD loads every plugin in /usr/lib/bfd-plugins for
// each file, and with lld/llvm installed those are LLVMgold-14.so and -16.so:
// 0.14 s per nm run instead of 0.009 s, minutes over the nm parity matrices.
// The listing is the same (these fixtures hold no LLVM bitcode; GCC LTO
// objects still go through liblto_plugin.so).
inline const std::string& gnu_nm() {
  static const std::string nm = [] {
    const char* plugin = "/usr/lib/bfd-plugins/liblto_plugin.so";
    return std::string(capture(cat({"test -e ", plugin, " && echo yes"})).out == "yes\n" ? cat({"nm --plugin ", plugin})
                                                                                          : std::string("nm"));
  }();
  return nm;
}

// Path of a linkscope-* CLI built alongside the tests.
inline std::string tool_path(const std::string& name) {
  const char* dir = std::getenv("LINKSCOPE_BIN_DIR");
  std::string base = dir != nullptr ? dir : std::string(LINKSCOPE_BINARY_DIR) + "/examples";
  return base + "/" + name;
}

inline void write_file(const std::string& path, std::string_view content) {
  std::ofstream out(path, std::ios::binary);
  out.write(content.data(), static_cast<std::streamsize>(content.size()));
}

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline std::vector<std::string> lines(std::string_view text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t nl = text.find('\n', start);
    if (nl == std::string_view::npos) nl = text.size();
    out.emplace_back(text.substr(start, nl - start));
    start = nl + 1;
  }
  return out;
}

}  // namespace linkscope_test
