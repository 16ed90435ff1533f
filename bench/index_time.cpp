// linkscope-index-time FILE: loads the symbols of FILE (the .dynsym of an ELF
// file, or the armap of an archive) into a symbol_table, builds a hash_index
// over them and looks every name up once. Prints one line of key=value
// figures for bench/scaling.sh:
//   symbols=N load_ms=.. build_ms=.. lookup_ns=.. index_bytes_per_symbol=..
#include <linkscope/ar/archive.hpp>
#include <linkscope/ar/armap.hpp>
#include <linkscope/core/mapped_file.hpp>
#include <linkscope/elf/source.hpp>
#include <linkscope/symbols/index.hpp>
#include <linkscope/symbols/table.hpp>

#include <chrono>
#include <cstdio>

int main(int argc, char** argv) {
  using namespace linkscope;
  using clock = std::chrono::steady_clock;
  if (argc != 2) {
    std::fprintf(stderr, "usage: linkscope-index-time FILE\n");
    return 2;
  }
  auto file = mapped_file::open(argv[1]);
  if (!file) {
    std::fprintf(stderr, "linkscope-index-time: %s: error: %s\n", argv[1], file.error().message);
    return 2;
  }
  const auto t0 = clock::now();
  symbol_table table;
  result<void> loaded = ok();
  if (auto archive = ar::archive::open(file->bytes())) {
    auto map = ar::armap::read(*archive);
    if (!map) loaded = map.error();
    else loaded = table.append(*map);
  } else {
    loaded = table.append(elf::symbols_source(file->bytes()));
  }
  if (!loaded) {
    std::fprintf(stderr, "linkscope-index-time: %s: error: %s\n", argv[1], loaded.error().message);
    return 2;
  }
  const auto t1 = clock::now();
  auto index = hash_index::build(table);
  const auto t2 = clock::now();
  std::size_t found = 0;
  for (symbol_id id = 0; id < table.size(); ++id) found += index.find_first(table.name(id)) != no_symbol;
  const auto t3 = clock::now();
  const auto ms = [](auto d) { return std::chrono::duration<double, std::milli>(d).count(); };
  const double n = static_cast<double>(table.size());
  std::printf("symbols=%zu load_ms=%.3f build_ms=%.3f lookup_ns=%.1f index_bytes_per_symbol=%.2f found=%zu\n", table.size(),
              ms(t1 - t0), ms(t2 - t1), n > 0 ? ms(t3 - t2) * 1e6 / n : 0.0,
              n > 0 ? static_cast<double>(index.memory_bytes()) / n : 0.0, found);
  return found == table.size() ? 0 : 1;
}
