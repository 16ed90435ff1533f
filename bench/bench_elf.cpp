// ELF: iterate the dynamic symbol table with versions (the work of nm -D),
// and look every defined dynsym up through the file's own GNU/SysV hash
// table (the work of ld.so per symbol). Input: libtorch_cpu.so.1.13 (34,923
// dynsyms) when installed, else libstdc++.so.6, or the file in
// LINKSCOPE_ELF_FILE. Counters: symbols/s and lookups/s.
#include <linkscope/core/mapped_file.hpp>
#include <linkscope/elf/dynamic.hpp>
#include <linkscope/elf/file.hpp>
#include <linkscope/elf/hash_table.hpp>
#include <linkscope/elf/nm.hpp>
#include <linkscope/elf/source.hpp>
#include <linkscope/elf/symbols.hpp>
#include <linkscope/elf/versions.hpp>

#include <benchmark/benchmark.h>

#include <cstdlib>
#include <string>
#include <vector>

namespace {
using namespace linkscope;

const mapped_file& input() {
  static mapped_file file = [] {
    std::vector<std::string> candidates;
    if (const char* env = std::getenv("LINKSCOPE_ELF_FILE")) candidates.emplace_back(env);
    candidates.emplace_back("/usr/lib/x86_64-linux-gnu/libtorch_cpu.so.1.13");
    candidates.emplace_back("/usr/lib/x86_64-linux-gnu/libstdc++.so.6");
    for (const auto& c : candidates) {
      auto f = mapped_file::open(c);
      if (f) return std::move(*f);
    }
    return mapped_file();
  }();
  return file;
}

void BM_dynsym_with_versions(benchmark::State& state) {
  const byte_view bytes = input().bytes();
  std::size_t count = 0;
  for (auto _ : state) {
    count = 0;
    elf::symbols_source source(bytes);
    auto r = source.for_each_symbol([&](const symbol& s) {
      benchmark::DoNotOptimize(s.version.data());
      ++count;
    });
    if (!r) state.SkipWithError(r.error().message);
  }
  state.counters["symbols/s"] = benchmark::Counter(static_cast<double>(count), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_dynsym_with_versions)->Unit(benchmark::kMillisecond);

void BM_nm_entries(benchmark::State& state) {
  const byte_view bytes = input().bytes();
  std::vector<elf::nm_entry> entries;
  elf::nm_options options;
  options.dynamic = true;
  for (auto _ : state) {
    entries.clear();
    auto r = elf::nm_symbols(bytes, options, entries);
    if (!r) state.SkipWithError(r.error().message);
    benchmark::DoNotOptimize(entries.data());
  }
  state.counters["symbols/s"] =
      benchmark::Counter(static_cast<double>(entries.size()), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_nm_entries)->Unit(benchmark::kMillisecond);

void BM_hash_lookup_all_defined(benchmark::State& state) {
  const byte_view bytes = input().bytes();
  std::size_t lookups = 0;
  for (auto _ : state) {
    lookups = 0;
    auto r = elf::visit_elf(bytes, [&](const auto& f) -> result<void> {
      using ET = typename std::decay_t<decltype(f)>::types;
      LINKSCOPE_TRY(dyn, elf::dynamic_info<ET>::read(f));
      LINKSCOPE_TRY(dynsym, elf::read_dynsym(f, dyn));
      LINKSCOPE_TRY(versions, elf::version_tables<ET>::read(f, dyn, dynsym.size()));
      LINKSCOPE_TRY(table, elf::hash_table<ET>::open(dyn, dynsym, versions));
      for (std::size_t i = 1; i < dynsym.size(); ++i) {
        if (dynsym[i].st_shndx == elf::SHN_UNDEF) continue;
        LINKSCOPE_TRY(name, dynsym.name(i));
        LINKSCOPE_TRY(hit, table.lookup(name));
        benchmark::DoNotOptimize(hit.index);
        ++lookups;
      }
      return ok();
    });
    if (!r) state.SkipWithError(r.error().message);
  }
  state.counters["lookups/s"] = benchmark::Counter(static_cast<double>(lookups), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_hash_lookup_all_defined)->Unit(benchmark::kMillisecond);

}  // namespace
