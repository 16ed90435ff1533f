// Fuzz target: macho::file — the header, the load-command walk, every typed
// accessor and the nlist symbols (dylibs, install name, rpaths, uuid, platforms, segments and
// sections, symtab and names, dysymtab, dyld info streams, linkedit data).
#include <cstddef>
#include <cstdint>

#include "fuzz_common.hpp"
#include "linkscope/macho/file.hpp"
#include "linkscope/macho/symbols.hpp"

using namespace linkscope;
using linkscope_fuzz::sink;
using linkscope_fuzz::sink_result;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const byte_view bytes = linkscope_fuzz::as_bytes(data, size);
  sink(static_cast<std::uint64_t>(macho::is_macho(bytes)));
  auto r = macho::visit_macho(bytes, [](const auto& f) -> result<void> {
    sink(std::uint64_t{f.cputype()} + f.filetype() + f.flags());
    for (const auto lc : f.commands()) {
      sink(std::uint64_t{lc.cmd} ^ lc.offset);
      sink(lc.bytes);
    }
    sink_result(f.dylibs(), [](const auto& v) { for (const auto& d : v) sink(d.name); });
    sink_result(f.install_name(), [](const auto& d) { if (d) sink(d->name); });
    sink_result(f.rpaths(), [](const auto& v) { for (auto s : v) sink(s); });
    sink_result(f.strings_of(macho::LC_LOAD_DYLINKER), [](const auto& v) { for (auto s : v) sink(s); });
    sink_result(f.uuid(), [](const auto& u) { if (u) sink((*u)[0]); });
    sink_result(f.platforms(), [](const auto& v) { for (const auto& p : v) sink(p.minos.raw); });
    sink_result(f.segments(), [](const auto& v) {
      for (const auto& s : v) {
        sink(s.segment.name());
        for (const auto& sec : s.sections) sink(sec.name());
      }
    });
    sink_result(f.symtab(), [&](const auto& st) {
      if (!st) return;
      for (const auto& sym : st->symbols) sink_result(f.symbol_name(*st, sym));
    });
    sink_result(f.dysymtab(), [](const auto& d) { if (d) sink(std::uint64_t{d->nundefsym}); });
    sink_result(f.dyld_info(), [](const auto& d) {
      if (d) {
        sink(d->bind);
        sink(d->lazy_bind);
        sink(d->weak_bind);
        sink(d->exports);
      }
    });
    sink_result(macho::section_infos(f), [&](const auto& sections) {
      for (const auto& s : sections) {
        sink(s.segment);
        sink(s.name);
      }
      sink_result(macho::for_each_nlist(f, [&](const macho::nlist_entry& e) {
        const symbol sym = macho::to_symbol(e, sections, f.is_two_level(), true);
        sink(sym.name);
        sink(e.indirect_name);
        sink(static_cast<std::uint64_t>(macho::nm_type_char(e, sections)) + sym.section);
        return true;
      }));
    });
    sink_result(f.export_trie(), [](const auto& t) { if (t) sink(*t); });
    sink_result(f.linkedit_data(macho::LC_DYLD_CHAINED_FIXUPS), [](const auto& t) { if (t) sink(*t); });
    return {};
  });
  sink_result(r);
  return 0;
}
