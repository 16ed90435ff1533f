// Fuzz target: ar::archive — every container flavour (GNU, BSD, COFF .lib,
// thin, AIX big): open, walk the members both ways, re-parse each member by
// its header offset, resolve thin member paths with and without confinement.
#include <cstddef>
#include <cstdint>

#include "fuzz_common.hpp"
#include "linkscope/ar/archive.hpp"

using namespace linkscope;
using linkscope_fuzz::sink;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const byte_view bytes = linkscope_fuzz::as_bytes(data, size);
  sink(static_cast<std::uint64_t>(ar::archive::is_archive(bytes)));
  auto opened = ar::archive::open(bytes);
  if (!opened) {
    sink(opened.error());
    return 0;
  }
  const ar::archive& a = *opened;
  sink(ar::to_string(a.kind()));
  sink(static_cast<std::uint64_t>(a.is_thin()));
  sink(a.long_names());
  sink(a.first_member_offset());
  for (std::size_t i = 0; i < a.symbol_table_count(); ++i) {
    const ar::symbol_table_member& t = a.symbol_table(i);
    sink(ar::to_string(t.kind));
    sink(t.name);
    sink(t.data);
    sink(t.header_offset);
  }
  std::size_t count = 0;
  for (const result<ar::member>& m : a.members()) {
    if (!m) {
      sink(m.error());
      break;
    }
    ++count;
    sink(m->name);
    sink(m->data);
    sink(m->header_offset + m->data_offset + m->size + m->date + m->uid + m->gid + m->mode + m->next_offset);
    // The same member again, by its header offset (what an armap leads to).
    linkscope_fuzz::sink_result(a.member_at(m->header_offset), [&](const ar::member& again) {
      sink(again.name);
      sink(again.data);
    });
    if (m->external) {
      for (bool confine : {false, true}) {
        ar::thin_options options;
        options.confine_to_archive_dir = confine;
        linkscope_fuzz::sink_result(ar::thin_member_path("/some/dir/lib.a", *m, options),
                                    [](const std::string& p) { sink(p); });
        linkscope_fuzz::sink_result(ar::thin_member_path("lib.a", *m, options),
                                    [](const std::string& p) { sink(p); });
      }
    }
  }
  sink(count);
  std::size_t visited = 0;
  linkscope_fuzz::sink_result(a.for_each_member([&](const ar::member& m) {
    sink(m.name);
    return ++visited < 3;  // exercise early stop
  }));
  // Arbitrary offsets: the armap of a hostile file may point anywhere.
  for (std::uint64_t off : {std::uint64_t{0}, std::uint64_t{8}, std::uint64_t{68}, std::uint64_t{size / 2},
                            std::uint64_t{size}, ~std::uint64_t{0}})
    linkscope_fuzz::sink_result(a.member_at(off), [](const ar::member& m) { sink(m.name); });
  return 0;
}
