// Fuzz target: ar::armap — GNU "/" and "/SYM64/", BSD __.SYMDEF(_64)
// (either byte order), COFF second linker member, AIX global symbol tables:
// read the default and every particular table, walk the entries, follow each
// entry to its member, and index the symbols (hash_index) and look them up.
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "fuzz_common.hpp"
#include "linkscope/ar/archive.hpp"
#include "linkscope/ar/armap.hpp"
#include "linkscope/symbols/index.hpp"
#include "linkscope/symbols/table.hpp"

using namespace linkscope;
using linkscope_fuzz::sink;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const byte_view bytes = linkscope_fuzz::as_bytes(data, size);
  auto opened = ar::archive::open(bytes);
  if (!opened) {
    sink(opened.error());
    return 0;
  }
  const ar::archive& a = *opened;
  auto map = ar::armap::read(a);
  if (!map) {
    sink(map.error());
  } else {
    sink(ar::to_string(map->kind()));
    sink(map->size() + map->part_count() + map->header_offset() + (map->big_endian() ? 1u : 0u));
    for (std::size_t p = 0; p < map->part_count(); ++p) sink(ar::to_string(map->part_kind(p)));
    std::size_t followed = 0;
    linkscope_fuzz::sink_result(map->for_each([&](const ar::armap_entry& e) {
      sink(e.name);
      sink(e.member_offset + e.index);
      // Following every entry would be quadratic on a big table; follow a few.
      if (followed++ < 64)
        linkscope_fuzz::sink_result(a.member_at(e.member_offset), [](const ar::member& m) { sink(m.name); });
    }));
    std::size_t stop_after = 0;
    linkscope_fuzz::sink_result(map->for_each([&](const ar::armap_entry& e) {
      sink(e.name);
      return ++stop_after < 2;
    }));
    auto table = symbol_table::from(*map);
    if (!table) {
      sink(table.error());
    } else {
      const hash_index index = hash_index::build(*table);
      sink(index.size());
      std::size_t looked = 0;
      for (const symbol& s : *table) {
        if (looked++ >= 256) break;
        sink(index.find(s.name).size());
        sink(static_cast<std::uint64_t>(index.contains(s.name)));
      }
      sink(static_cast<std::uint64_t>(index.contains("main")));
    }
  }
  for (ar::table_kind k : {ar::table_kind::gnu32, ar::table_kind::gnu64, ar::table_kind::bsd32,
                           ar::table_kind::bsd64, ar::table_kind::coff_second, ar::table_kind::aix32,
                           ar::table_kind::aix64}) {
    auto part = ar::armap::read(a, k);
    if (!part) {
      sink(part.error());
      continue;
    }
    linkscope_fuzz::sink_result(part->for_each_symbol([](const symbol& s) {
      sink(s.name);
      sink(s.origin);
    }));
  }
  return 0;
}
