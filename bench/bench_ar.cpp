// Archives: iterate all members and armaps of the LLVM archives
// (/usr/lib/llvm-14/lib/*.a, or the folder in LINKSCOPE_AR_DIR), and look
// symbols up in the union of their armaps (~141k entries) through hash_index
// versus a linear scan of the armaps. The ratio is the figure to watch.
#include <linkscope/ar/archive.hpp>
#include <linkscope/ar/armap.hpp>
#include <linkscope/core/mapped_file.hpp>
#include <linkscope/symbols/index.hpp>
#include <linkscope/symbols/table.hpp>

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace {
using namespace linkscope;

struct corpus {
  std::vector<std::unique_ptr<mapped_file>> files;
  std::vector<ar::archive> archives;
  std::vector<ar::armap> armaps;
  symbol_table table;
  std::uint64_t bytes = 0;

  corpus() {
    const char* dir = std::getenv("LINKSCOPE_AR_DIR");
    std::string folder = dir != nullptr ? dir : "/usr/lib/llvm-14/lib";
    std::vector<std::string> paths;
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(folder, ec))
      if (entry.path().extension() == ".a") paths.push_back(entry.path().string());
    std::sort(paths.begin(), paths.end());
    for (const auto& path : paths) {
      auto file = mapped_file::open(path);
      if (!file) continue;
      auto owned = std::make_unique<mapped_file>(std::move(*file));
      auto archive = ar::archive::open(owned->bytes());
      if (!archive) continue;
      auto map = ar::armap::read(*archive);
      if (!map) continue;
      bytes += owned->size();
      files.push_back(std::move(owned));
      archives.push_back(*archive);
      armaps.push_back(*map);
    }
    for (const auto& map : armaps) (void)table.append(map);
  }
};

const corpus& get() {
  static corpus c;
  return c;
}

void BM_iterate_members(benchmark::State& state) {
  const corpus& c = get();
  std::size_t members = 0;
  for (auto _ : state) {
    members = 0;
    for (const auto& archive : c.archives) {
      auto r = archive.for_each_member([&](const ar::member& m) {
        benchmark::DoNotOptimize(m.name.data());
        ++members;
      });
      benchmark::DoNotOptimize(r);
    }
  }
  state.counters["archives"] = static_cast<double>(c.archives.size());
  state.counters["members"] = static_cast<double>(members);
  state.counters["members/s"] = benchmark::Counter(static_cast<double>(members), benchmark::Counter::kIsIterationInvariantRate);
}

void BM_iterate_armaps(benchmark::State& state) {
  const corpus& c = get();
  std::size_t entries = 0;
  for (auto _ : state) {
    entries = 0;
    for (const auto& map : c.armaps) {
      auto r = map.for_each([&](const ar::armap_entry& e) {
        benchmark::DoNotOptimize(e.name.data());
        ++entries;
      });
      benchmark::DoNotOptimize(r);
    }
  }
  state.counters["entries"] = static_cast<double>(entries);
  state.counters["entries/s"] = benchmark::Counter(static_cast<double>(entries), benchmark::Counter::kIsIterationInvariantRate);
}

// Every armap entry, named to the member that defines it (what --print-armap does).
void BM_armap_with_member_names(benchmark::State& state) {
  const corpus& c = get();
  std::size_t entries = 0;
  for (auto _ : state) {
    entries = 0;
    for (std::size_t i = 0; i < c.archives.size(); ++i) {
      std::uint64_t last = ~std::uint64_t{0};
      std::string_view name;
      auto r = c.armaps[i].for_each([&](const ar::armap_entry& e) {
        if (e.member_offset != last) {
          auto m = c.archives[i].member_at(e.member_offset);
          if (m) name = m->name;
          last = e.member_offset;
        }
        benchmark::DoNotOptimize(name.data());
        ++entries;
      });
      benchmark::DoNotOptimize(r);
    }
  }
  state.counters["entries/s"] = benchmark::Counter(static_cast<double>(entries), benchmark::Counter::kIsIterationInvariantRate);
}

void BM_index_build(benchmark::State& state) {
  const corpus& c = get();
  for (auto _ : state) {
    auto index = hash_index::build(c.table);
    benchmark::DoNotOptimize(index);
  }
  state.counters["symbols"] = static_cast<double>(c.table.size());
}

// Look up every 97th armap name: through the index, and by scanning the armaps.
std::vector<std::string_view> probes(const corpus& c) {
  std::vector<std::string_view> names;
  for (std::size_t i = 0; i < c.table.size(); i += 97) names.push_back(c.table.name(static_cast<symbol_id>(i)));
  return names;
}

void BM_lookup_index(benchmark::State& state) {
  const corpus& c = get();
  const auto index = hash_index::build(c.table);
  const auto names = probes(c);
  std::size_t i = 0;
  for (auto _ : state) {
    std::size_t found = 0;
    index.for_each(names[i], [&](symbol_id) { ++found; });
    benchmark::DoNotOptimize(found);
    if (++i == names.size()) i = 0;
  }
  state.counters["symbols"] = static_cast<double>(c.table.size());
}

void BM_lookup_linear_armap_scan(benchmark::State& state) {
  const corpus& c = get();
  const auto names = probes(c);
  std::size_t i = 0;
  for (auto _ : state) {
    std::size_t found = 0;
    for (const auto& map : c.armaps) {
      auto r = map.for_each([&](const ar::armap_entry& e) {
        if (e.name == names[i]) ++found;
      });
      benchmark::DoNotOptimize(r);
    }
    benchmark::DoNotOptimize(found);
    if (++i == names.size()) i = 0;
  }
  state.counters["symbols"] = static_cast<double>(c.table.size());
}

}  // namespace

BENCHMARK(BM_iterate_members)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_iterate_armaps)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_armap_with_member_names)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_index_build)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_lookup_index);
BENCHMARK(BM_lookup_linear_armap_scan)->Unit(benchmark::kMicrosecond);
