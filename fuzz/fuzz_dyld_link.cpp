// Fuzz target: resolve::link_dyld — the dyld emulation over one hostile
// Mach-O image standing as its own dependency. The emulator has its own
// paths (install-name expansion, @rpath up the load chain, the cycle and
// re-export checks, trie lookups by name, flat and weak lookups) that the
// macho_* targets do not reach.
//
// The input is written to a private folder as "libself.dylib" and linked as
// the root, with that folder as the root (so no host file is read): a load
// command @loader_path/libself.dylib, @rpath/libself.dylib with an
// LC_RPATH @loader_path, or /libself.dylib — which the seeds have — loads
// the same hostile bytes again as a dependency, so binding and re-exports
// run between two hostile images (and the cycle checks fire).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <unistd.h>

#include "fuzz_common.hpp"
#include "linkscope/resolve/dyld.hpp"

using namespace linkscope;
using linkscope_fuzz::sink;

namespace {

const std::string& scratch() {
  static const std::string dir = [] {
    const char* tmp = std::getenv("TMPDIR");
    std::string d = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/linkscope-fuzz-dyld-link-" +
                    std::to_string(static_cast<long>(::getpid()));
    std::string cmd = "mkdir -p '" + d + "'";
    if (std::system(cmd.c_str()) != 0) std::abort();
    return d;
  }();
  return dir;
}

void clean_up() {
  std::remove((scratch() + "/libself.dylib").c_str());
  ::rmdir(scratch().c_str());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = scratch() + "/libself.dylib";
  static const bool registered = std::atexit(clean_up) == 0;
  (void)registered;
  std::FILE* out = std::fopen(path.c_str(), "wb");
  if (out == nullptr) std::abort();
  if (size > 0 && std::fwrite(data, 1, size, out) != size) std::abort();
  if (std::fclose(out) != 0) std::abort();

  resolve::dyld_options options;
  options.root = scratch();
  options.executable = path;
  options.max_images = 64;
  // A fresh cache per input: the file's bytes change under the same inode.
  resolve::dyld_cache cache;
  auto link = resolve::link_dyld(path, options, cache);
  linkscope_fuzz::sink_result(link, [](const resolve::dyld_link& l) {
    for (const auto& o : l.objects) {
      sink(o.name);
      sink(o.path);
      sink(o.install_name);
      sink(o.where);
      for (const auto& d : o.dependencies) sink(d.install_name);
      for (const auto& w : o.warnings) sink(w);
      for (const auto& r : o.rejected) sink(r.reason);
    }
    for (const auto& b : l.bindings) {
      sink(b.symbol);
      sink(static_cast<std::uint64_t>(b.from) + b.to);
    }
    for (const auto& u : l.undefined) sink(u.symbol);
    for (const auto& u : l.unused) sink(u.install_name);
    for (const auto& e : l.errors) sink(e);
    sink(l.imports + l.lookups + l.unchecked);
  });
  return 0;
}
