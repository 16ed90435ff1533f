// Fuzz target: resolve::ld_so_cache — /etc/ld.so.cache in the old
// ("ld.so-1.7.0"), new ("glibc-ld.so.cache1.1") and combined forms, either
// byte order, with the glibc-hwcaps extension: parse, list every entry,
// describe it as ldconfig -p does, and look names up.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_common.hpp"
#include "linkscope/resolve/ld_so_cache.hpp"

using namespace linkscope;
using linkscope_fuzz::sink;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const byte_view bytes = linkscope_fuzz::as_bytes(data, size);
  auto parsed = resolve::ld_so_cache::parse(bytes);
  if (!parsed) {
    sink(parsed.error());
    return 0;
  }
  const resolve::ld_so_cache& cache = *parsed;
  sink(static_cast<u64>(cache.format()) + cache.size() + cache.big_endian());
  sink(cache.generator());
  resolve::cache_lookup_options hwcaps;
  hwcaps.hwcaps_subdirs = {"x86-64-v4", "x86-64-v3", "x86-64-v2"};
  hwcaps.isa_level_bits = 0xf;
  resolve::cache_lookup_options generic;
  generic.also_accept_elf = true;
  generic.expected_flags = resolve::cache_flags::elf_libc6;
  std::size_t looked = 0;
  for (const resolve::ld_so_cache_entry& e : cache) {
    sink(e.name);
    sink(e.path);
    sink(e.hwcaps_subdir);
    sink(static_cast<u64>(e.flags) + e.hwcap + e.is_hwcaps_extension() + e.isa_level());
    sink(resolve::ld_so_cache::describe(e));
    if (looked++ < 64) {
      sink(cache.lookup(e.name));
      sink(cache.lookup(e.name, hwcaps));
      sink(cache.lookup(e.name, generic));
    }
  }
  sink(cache.lookup("libc.so.6"));
  sink(cache.lookup(""));
  return 0;
}
