// Fuzz target: elf::symbols_source — the symbol_source adapter that every
// resolver uses: .dynsym with versions and .symtab into the one symbol model,
// collected into a symbol_table, indexed (hash_index) and looked up by name
// and by name@version.
#include <cstddef>
#include <cstdint>

#include "fuzz_common.hpp"
#include "linkscope/elf/source.hpp"
#include "linkscope/symbols/index.hpp"
#include "linkscope/symbols/table.hpp"

using namespace linkscope;
using linkscope_fuzz::sink;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const byte_view bytes = linkscope_fuzz::as_bytes(data, size);
  for (elf::symbol_table_kind which : {elf::symbol_table_kind::dynamic, elf::symbol_table_kind::static_}) {
    const elf::symbols_source source(bytes, which, 42);
    auto table = symbol_table::from(source);
    if (!table) {
      sink(table.error());
      continue;
    }
    for (const symbol& s : *table) {
      sink(s.name);
      sink(s.version);
      sink(s.value + s.size + s.origin + s.index + s.section + static_cast<u64>(s.bind) + static_cast<u64>(s.kind) +
           static_cast<u64>(s.vis) + static_cast<u64>(s.ver) + s.defined);
    }
    const hash_index index = hash_index::build(*table);
    std::size_t looked = 0;
    for (const symbol& s : *table) {
      if (looked++ >= 512) break;
      sink(index.find(s.name).size());
      sink(index.find(s.name, s.version).size());
      sink(index.find_first(s.name));
    }
    sink(static_cast<u64>(index.contains("foo")));
    std::size_t stop = 0;
    linkscope_fuzz::sink_result(source.for_each_symbol([&](const symbol&) { return ++stop < 2; }));
  }
  return 0;
}
