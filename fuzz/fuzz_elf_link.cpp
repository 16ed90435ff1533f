// Fuzz target: resolve::link_dynamic — the ld.so emulation over one hostile
// object. The resolver has its own readers (the .dynsym count from the hash
// tables, version definitions and needs, every relocation table, the
// definition index), which the elf_* targets do not reach.
//
// The input is written to a private folder as "libc.so.6" and linked as the
// program, with that folder as the only search path (no environment, no
// ld.so.cache, no system folders): a DT_NEEDED libc.so.6, which the seeds
// have, loads the same hostile bytes again as a dependency, so versions,
// cross-object lookups and copy relocations run between two hostile objects.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <unistd.h>

#include "fuzz_common.hpp"
#include "linkscope/resolve/dynamic.hpp"

using namespace linkscope;
using linkscope_fuzz::sink;

namespace {

const std::string& scratch() {
  static const std::string dir = [] {
    const char* tmp = std::getenv("TMPDIR");
    std::string d = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/linkscope-fuzz-elf-link-" +
                    std::to_string(static_cast<long>(::getpid()));
    std::string cmd = "mkdir -p '" + d + "'";
    if (std::system(cmd.c_str()) != 0) std::abort();
    return d;
  }();
  return dir;
}

// Remove the folder at exit (registered after scratch() is built, so that it
// runs before that string is destroyed).
void clean_up() {
  std::remove((scratch() + "/libc.so.6").c_str());
  ::rmdir(scratch().c_str());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = scratch() + "/libc.so.6";
  static const bool registered = std::atexit(clean_up) == 0;
  (void)registered;
  std::FILE* out = std::fopen(path.c_str(), "wb");
  if (out == nullptr) std::abort();
  if (size > 0 && std::fwrite(data, 1, size, out) != size) std::abort();
  if (std::fclose(out) != 0) std::abort();

  resolve::dynamic_options options;
  options.search.use_env = false;
  options.search.library_path = scratch();
  options.search.use_cache = false;
  options.search.system_dirs.clear();
  options.search.legacy_subdirs = false;
  options.search.isa_level = 1;
  options.search.cwd = scratch();
  options.bindings = true;
  auto link = resolve::link_dynamic(path, options);
  linkscope_fuzz::sink_result(link, [](const resolve::dynamic_link& l) {
    for (const auto& o : l.objects) {
      sink(o.name);
      sink(o.path);
      sink(o.soname);
      sink(o.rpath);
      sink(o.runpath);
      for (std::string_view n : o.needed) sink(n);
      for (const auto& w : o.warnings) sink(w);
    }
    for (const auto& b : l.bindings) {
      sink(b.symbol);
      sink(b.version);
      sink(static_cast<std::uint64_t>(b.from) + b.to);
    }
    for (const auto& u : l.undefined) {
      sink(u.symbol);
      sink(u.version);
    }
    for (const auto& m : l.missing_versions) {
      sink(m.file);
      sink(m.version);
    }
    for (const auto& i : l.interposed) sink(i.symbol);
    for (const auto& w : l.warnings) sink(w);
    sink(l.lookups + l.relocations + l.index_bytes);
  });
  return 0;
}
