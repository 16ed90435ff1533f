// hash_index: build and lookup, against a linear scan over the same names and
// against the physical references (a strlen pass over the names; a memory
// bandwidth pass). The figures that we steer by are the ratios. keyed_index
// (the same slots as a map, what the resolvers instantiate): insert and find.
#include <linkscope/symbols/index.hpp>

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <vector>

namespace {
using namespace linkscope;

struct corpus {
  std::string pool;  // NUL-separated names, like an ELF string table
  symbol_table table;
  explicit corpus(std::size_t n) {
    std::vector<std::size_t> offsets;
    for (std::size_t i = 0; i < n; ++i) {
      offsets.push_back(pool.size());
      pool += "_ZN4llvm" + std::to_string(i * 2654435761u % 1000003) + "detail" + std::to_string(i) + "Ev";
      pool.push_back('\0');
    }
    table.reserve(n);
    for (std::size_t off : offsets) {
      symbol sym;
      sym.name = std::string_view(pool.data() + off);
      table.push_back(sym);
    }
  }
};

const corpus& get(std::size_t n) {
  // Owned: the smoke run under LeakSanitizer (scripts/test-all) sees them freed at exit.
  static std::vector<std::pair<std::size_t, std::unique_ptr<corpus>>> cache;
  for (auto& [size, c] : cache)
    if (size == n) return *c;
  cache.emplace_back(n, std::make_unique<corpus>(n));
  return *cache.back().second;
}

void BM_index_build(benchmark::State& state) {
  const corpus& c = get(static_cast<std::size_t>(state.range(0)));
  std::size_t memory = 0;
  for (auto _ : state) {
    auto index = hash_index::build(c.table);
    memory = index.memory_bytes();
    benchmark::DoNotOptimize(index);
  }
  state.counters["symbols/s"] = benchmark::Counter(static_cast<double>(c.table.size()), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["B/symbol"] = static_cast<double>(memory) / static_cast<double>(c.table.size());
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(c.pool.size()));
}

// Physical reference for the build: one strlen per name over the same pool.
void BM_reference_strlen(benchmark::State& state) {
  const corpus& c = get(static_cast<std::size_t>(state.range(0)));
  for (auto _ : state) {
    std::size_t total = 0;
    for (const char* p = c.pool.data(); p < c.pool.data() + c.pool.size(); p += std::strlen(p) + 1) ++total;
    benchmark::DoNotOptimize(total);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(c.pool.size()));
}

// Physical reference: memory bandwidth over the same bytes.
void BM_reference_memchr(benchmark::State& state) {
  const corpus& c = get(static_cast<std::size_t>(state.range(0)));
  for (auto _ : state) {
    const void* hit = std::memchr(c.pool.data(), 0x7f, c.pool.size());
    benchmark::DoNotOptimize(hit);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(c.pool.size()));
}

// The floor of any hash index build: index_hash of every name (8 bytes per
// step), reading the names through the symbol records as the build does, and
// nothing else (no table). A build cannot beat this pass plus its inserts.
void BM_reference_hash(benchmark::State& state) {
  const corpus& c = get(static_cast<std::size_t>(state.range(0)));
  for (auto _ : state) {
    std::uint32_t sum = 0;
    for (const symbol& sym : c.table) sum += index_hash(sym.name);
    benchmark::DoNotOptimize(sum);
  }
  state.counters["symbols/s"] = benchmark::Counter(static_cast<double>(c.table.size()), benchmark::Counter::kIsIterationInvariantRate);
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(c.pool.size()));
}

// The symbol records alone: one read of each name's size through the table
// (sizeof(symbol) bytes apart), the other stream every build reads.
void BM_reference_records(benchmark::State& state) {
  const corpus& c = get(static_cast<std::size_t>(state.range(0)));
  for (auto _ : state) {
    std::size_t sum = 0;
    for (const symbol& sym : c.table) sum += sym.name.size();
    benchmark::DoNotOptimize(sum);
  }
  state.counters["symbols/s"] = benchmark::Counter(static_cast<double>(c.table.size()), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["B/record"] = static_cast<double>(sizeof(symbol));
}

// The physical reference for lookup scaling (issue 9, goal d): what one
// lookup touches, without the work. Per query, in a random order: one read of
// a 13 B/symbol slot array, one of an 80 B/symbol record array and one of a
// 32 B/symbol name area, each at an unrelated index (independent reads, so
// the CPU may overlap them). From 1M to 10M symbols the arrays go from
// ~125 MB to ~1.25 GB: the ns per query that this adds is the memory
// hierarchy (cache, TLB, DRAM), which no index layout of that size escapes.
void BM_reference_random_reads(benchmark::State& state) {
  const std::size_t n = static_cast<std::size_t>(state.range(0));
  std::vector<std::uint8_t> slots(n * 13, 1), records(n * 80, 2), names(n * 32, 3);
  std::vector<std::uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0u);
  std::shuffle(order.begin(), order.end(), std::mt19937(12345));
  for (auto _ : state) {
    std::uint64_t sum = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const std::uint64_t k = order[i];
      sum += slots[k * 13] + records[(k * 7919u) % n * 80] + names[(k * 104729u) % n * 32];
    }
    benchmark::DoNotOptimize(sum);
  }
  state.counters["queries/s"] = benchmark::Counter(static_cast<double>(n), benchmark::Counter::kIsIterationInvariantRate);
}

void BM_index_lookup(benchmark::State& state) {
  const corpus& c = get(static_cast<std::size_t>(state.range(0)));
  auto index = hash_index::build(c.table);
  std::size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(index.find_first(c.table.name(static_cast<symbol_id>(i))));
    i = (i + 7919) % c.table.size();
  }
  state.counters["lookups/s"] = benchmark::Counter(1, benchmark::Counter::kIsIterationInvariantRate);
}

// keyed_index, the map the resolvers instantiate (the static linker's symbol
// table): insert every name once from empty (growth included), then look
// every name up again in a scattered order.
void BM_keyed_insert(benchmark::State& state) {
  const corpus& c = get(static_cast<std::size_t>(state.range(0)));
  std::size_t memory = 0;
  for (auto _ : state) {
    keyed_index<std::string_view, std::uint64_t> map;
    for (const symbol& sym : c.table) map[map.insert(sym.name).first] += 1;
    memory = map.memory_bytes();
    benchmark::DoNotOptimize(map);
  }
  state.counters["symbols/s"] = benchmark::Counter(static_cast<double>(c.table.size()), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["B/symbol"] = static_cast<double>(memory) / static_cast<double>(c.table.size());
}

void BM_keyed_find(benchmark::State& state) {
  const corpus& c = get(static_cast<std::size_t>(state.range(0)));
  keyed_index<std::string_view> map;
  for (const symbol& sym : c.table) map.insert(sym.name);
  std::size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(map.find(c.table.name(static_cast<symbol_id>(i))));
    i = (i + 7919) % c.table.size();
  }
  state.counters["lookups/s"] = benchmark::Counter(1, benchmark::Counter::kIsIterationInvariantRate);
}

void BM_linear_scan_lookup(benchmark::State& state) {
  const corpus& c = get(static_cast<std::size_t>(state.range(0)));
  std::size_t i = 0;
  for (auto _ : state) {
    std::string_view want = c.table.name(static_cast<symbol_id>(i));
    symbol_id found = no_symbol;
    for (symbol_id id = 0; id < c.table.size(); ++id)
      if (c.table.name(id) == want) {
        found = id;
        break;
      }
    benchmark::DoNotOptimize(found);
    i = (i + 7919) % c.table.size();
  }
  state.counters["lookups/s"] = benchmark::Counter(1, benchmark::Counter::kIsIterationInvariantRate);
}

}  // namespace

BENCHMARK(BM_index_build)->Arg(10000)->Arg(100000)->Arg(1000000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_reference_strlen)->Arg(10000)->Arg(100000)->Arg(1000000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_reference_memchr)->Arg(100000)->Arg(1000000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_reference_hash)->Arg(100000)->Arg(1000000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_reference_records)->Arg(100000)->Arg(1000000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_index_lookup)->Arg(100000)->Arg(1000000);
BENCHMARK(BM_reference_random_reads)->Arg(1000000)->Arg(10000000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_linear_scan_lookup)->Arg(100000);
BENCHMARK(BM_keyed_insert)->Arg(100000)->Arg(1000000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_keyed_find)->Arg(100000)->Arg(1000000);
