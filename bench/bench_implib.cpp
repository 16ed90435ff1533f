// Import libraries at scale: a short-import .lib with 100k members (made by
// llvm-dlltool-14 from a generated .def), parsed fully, then one question
// answered two ways: "which DLL does symbol X come from" through the
// hash_index against a linear scan over the import records. The same
// question answered by llvm-nm is timed by bench/parity_implib.sh's
// companion, bench/implib_100k.sh.
#include <linkscope/coff/import.hpp>
#include <linkscope/core/mapped_file.hpp>
#include <linkscope/symbols/index.hpp>
#include <linkscope/symbols/table.hpp>

#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

namespace {
using namespace linkscope;

constexpr std::size_t members = 100000;

struct fixture {
  std::string path;
  mapped_file file;
  bool ok = false;
  fixture() {
    const char* tmp = std::getenv("TMPDIR");
    const std::string dir = std::string(tmp ? tmp : "/tmp") + "/linkscope_bench_implib";
    std::system(("mkdir -p '" + dir + "'").c_str());
    path = dir + "/big.lib";
    if (!std::ifstream(path)) {
      std::ofstream def(dir + "/big.def");
      def << "LIBRARY big.dll\nEXPORTS\n";
      for (std::size_t i = 0; i < members; ++i) def << "  big_function_" << i << (i % 10 == 0 ? " DATA" : "") << "\n";
      def.close();
      std::system(("llvm-dlltool-14 -m i386:x86-64 -d '" + dir + "/big.def' -l '" + path + "'").c_str());
    }
    auto f = mapped_file::open(path);
    if (!f) return;
    file = std::move(*f);
    ok = true;
  }
};

fixture& get() {
  static fixture f;
  return f;
}

std::vector<std::string> queries() {
  std::vector<std::string> q;
  for (std::size_t i = 0; i < 1000; ++i) q.push_back("__imp_big_function_" + std::to_string(i * 97 % members));
  return q;
}

void BM_implib_parse(benchmark::State& state) {
  fixture& f = get();
  if (!f.ok) { state.SkipWithError("no fixture (llvm-dlltool-14?)"); return; }
  std::size_t records = 0;
  for (auto _ : state) {
    auto lib = coff::import_library::from_bytes(f.file.bytes());
    if (!lib) { state.SkipWithError(lib.error().message); return; }
    records = lib->records().size();
    benchmark::DoNotOptimize(lib);
  }
  state.counters["records"] = static_cast<double>(records);
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * f.file.size()));
}
BENCHMARK(BM_implib_parse)->Unit(benchmark::kMillisecond);

void BM_implib_lookup_index(benchmark::State& state) {
  fixture& f = get();
  if (!f.ok) { state.SkipWithError("no fixture"); return; }
  auto lib = coff::import_library::from_bytes(f.file.bytes());
  auto table = symbol_table::from(*lib);
  auto index = hash_index::build(*table);
  const auto q = queries();
  for (auto _ : state) {
    std::size_t found = 0;
    for (const std::string& name : q)
      index.for_each(name, [&](symbol_id id) { found += (*table)[id].import != nullptr; });
    benchmark::DoNotOptimize(found);
  }
  state.counters["lookups/s"] = benchmark::Counter(static_cast<double>(q.size()), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_implib_lookup_index);

void BM_implib_lookup_linear(benchmark::State& state) {
  fixture& f = get();
  if (!f.ok) { state.SkipWithError("no fixture"); return; }
  auto lib = coff::import_library::from_bytes(f.file.bytes());
  const auto q = queries();
  for (auto _ : state) {
    std::size_t found = 0;
    for (const std::string& name : q)
      for (const auto& r : lib->records())
        if (r.imp_symbol == name) { ++found; break; }
    benchmark::DoNotOptimize(found);
  }
  state.counters["lookups/s"] = benchmark::Counter(static_cast<double>(q.size()), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_implib_lookup_linear)->Unit(benchmark::kMillisecond);

}  // namespace
