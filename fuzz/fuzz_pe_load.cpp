// Fuzz target: resolve::load_windows — the Windows loader over one hostile
// image that stands in for its own dependencies. The input is written to a
// private folder as "self.dll" (the root) and as "apisetschema.dll", and
// that folder is also System32: an import of self.dll binds to the root
// itself, an API set contract is looked up in the hostile schema, and
// forwarders ("self.x", "self.#3", "self.loop") run between the root and
// itself, so forwarder cycles, ordinal ranges and every name table are
// exercised. The seeds (scripts/fuzz-seeds) have such self-imports.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <unistd.h>

#include "fuzz_common.hpp"
#include "linkscope/resolve/pe_load.hpp"

using namespace linkscope;
using linkscope_fuzz::sink;

namespace {

const std::string& scratch() {
  static const std::string dir = [] {
    const char* tmp = std::getenv("TMPDIR");
    std::string d = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/linkscope-fuzz-pe-load-" +
                    std::to_string(static_cast<long>(::getpid()));
    std::string cmd = "mkdir -p '" + d + "'";
    if (std::system(cmd.c_str()) != 0) std::abort();
    return d;
  }();
  return dir;
}

void clean_up() {
  std::remove((scratch() + "/self.dll").c_str());
  std::remove((scratch() + "/apisetschema.dll").c_str());
  ::rmdir(scratch().c_str());
}

void write(const std::string& path, const std::uint8_t* data, std::size_t size) {
  std::FILE* out = std::fopen(path.c_str(), "wb");
  if (out == nullptr) std::abort();
  if (size > 0 && std::fwrite(data, 1, size, out) != size) std::abort();
  if (std::fclose(out) != 0) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string root = scratch() + "/self.dll";
  // Registered after scratch() is built, so that it runs before that string is destroyed.
  static const bool registered = std::atexit(clean_up) == 0;
  (void)registered;
  write(root, data, size);
  write(scratch() + "/apisetschema.dll", data, size);
  resolve::winload_options options;
  options.windows_root = scratch();
  options.mode = resolve::load_mode::altered;
  auto w = resolve::load_windows(root, options);
  if (!w) {
    sink(w.error().err);
    return 0;
  }
  for (std::size_t i = 0; i < w->link.objects.size(); ++i) {
    sink(w->link.objects[i].name);
    sink(static_cast<u64>(w->info[i].rule) + w->info[i].host + w->info[i].assemblies.size());
  }
  for (const auto& b : w->link.bindings) sink(b.symbol);
  for (const auto& f : w->findings) {
    sink(f.symbol);
    sink(f.detail);
  }
  return 0;
}
