// Fuzz target: resolve/link_line.hpp — response files (GNU tokenising,
// quotes, escapes, nested and self-including @files) and GNU ld linker
// scripts (GROUP, INPUT, AS_NEEDED, comments, quotes). The input is written
// to one scratch file per process, then read (1) as a response file through
// expand_response_files + parse_link_args and (2) as a linker script named on
// a link line, through the locator (which also resolves -l names the script
// gives; those searches only stat and sniff files).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <unistd.h>

#include "fuzz_common.hpp"
#include "linkscope/resolve/link_line.hpp"

using namespace linkscope;
using linkscope_fuzz::sink;

namespace {
const std::string& scratch_path() {
  static const std::string path = [] {
    const char* dir = std::getenv("TMPDIR");
    return std::string(dir != nullptr && *dir != '\0' ? dir : "/tmp") + "/linkscope-fuzz-link-" +
           std::to_string(static_cast<long>(::getpid())) + ".txt";
  }();
  return path;
}

void sink_line(const resolve::link_line& line) {
  for (const resolve::link_input& in : line.inputs) {
    sink(in.spec);
    sink(in.path);
    sink(in.bfd_path);
    sink(in.origin);
    sink(static_cast<u64>(in.group) + in.is_library + in.static_only + in.whole_archive + in.as_needed);
  }
  for (const std::string& s : line.search_dirs) sink(s);
  for (const std::string& s : line.undefined) sink(s);
  for (const std::string& s : line.wraps) sink(s);
  for (const std::string& s : line.ignored) sink(s);
  for (const resolve::defsym& d : line.defsyms) {
    sink(d.name);
    sink(d.expression);
  }
  sink(line.entry_symbol());
  sink(line.sysroot);
  sink(line.output);
  sink(static_cast<u64>(line.group_count) + line.shared + line.relocatable + line.static_link + line.no_inhibit);
}

void sink_diag(const resolve::link_diagnostic& diag) {
  sink(diag.err);
  sink(diag.subject);
  sink(diag.detail);
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string& path = scratch_path();
  // Remove the file at exit (registered after scratch_path() is built, so it
  // runs before that string is destroyed): replays must not litter /tmp.
  static const bool registered = std::atexit([] { std::remove(scratch_path().c_str()); }) == 0;
  (void)registered;
  {
    std::FILE* out = std::fopen(path.c_str(), "wb");
    if (out == nullptr) return 0;
    if (size > 0) std::fwrite(data, 1, size, out);
    std::fclose(out);
  }
  {
    resolve::link_diagnostic diag;
    const std::vector<std::string> args = {"@" + path};
    auto expanded = resolve::expand_response_files(args, diag);
    if (!expanded) {
      sink_diag(diag);
    } else {
      for (const std::string& a : *expanded) sink(a);
      resolve::link_diagnostic parse_diag;
      auto line = resolve::parse_link_args(*expanded, parse_diag);
      if (line)
        sink_line(*line);
      else
        sink_diag(parse_diag);
    }
  }
  {
    resolve::link_line line;
    resolve::link_input script;
    script.spec = path;
    line.inputs.push_back(script);
    line.search_dirs.push_back("/nonexistent-linkscope-fuzz");
    resolve::link_diagnostic diag;
    resolve::link_line_locator locator(line, diag);
    auto ran = locator.run();
    if (ran)
      sink_line(line);
    else
      sink_diag(diag);
  }
  return 0;
}
