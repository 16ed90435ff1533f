// Fuzz target: elf::dynamic_info — PT_DYNAMIC read the way ld.so reads it:
// DT_NEEDED/SONAME/RPATH/RUNPATH strings, flags, every address tag mapped to
// a file offset, and the relocation tables it locates.
#include <cstddef>
#include <cstdint>

#include "fuzz_common.hpp"
#include "linkscope/elf/dynamic.hpp"
#include "linkscope/elf/file.hpp"

using namespace linkscope;
using linkscope_fuzz::sink;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const byte_view bytes = linkscope_fuzz::as_bytes(data, size);
  auto r = elf::visit_elf(bytes, [](const auto& f) -> result<void> {
    using ET = typename std::decay_t<decltype(f)>::types;
    LINKSCOPE_TRY(dyn, elf::dynamic_info<ET>::read(f));
    sink(static_cast<std::uint64_t>(dyn.present()) + dyn.offset() + dyn.entries().size());
    sink(dyn.strings());
    linkscope_fuzz::sink_result(dyn.for_each_needed([](std::string_view n) { sink(n); }));
    linkscope_fuzz::sink_result(dyn.needed(), [](const auto& v) {
      for (std::string_view n : v) sink(n);
    });
    sink(dyn.needed_count());
    linkscope_fuzz::sink_result(dyn.soname());
    linkscope_fuzz::sink_result(dyn.rpath());
    linkscope_fuzz::sink_result(dyn.runpath());
    sink(dyn.flags() + dyn.flags_1() + dyn.bind_now() + dyn.symbolic() + dyn.has_soname() + dyn.has_rpath() +
         dyn.has_runpath());
    for (const elf::dynamic_value* v : {&dyn.symtab(), &dyn.strtab(), &dyn.hash(), &dyn.gnu_hash(), &dyn.versym(),
                                        &dyn.verdef(), &dyn.verneed()}) {
      if (!v->present()) continue;
      linkscope_fuzz::sink_result(dyn.offset_of(*v, 0));
      linkscope_fuzz::sink_result(dyn.offset_of(*v, 16));
    }
    sink(dyn.syment().value + dyn.strsz().value + dyn.verdefnum().value + dyn.verneednum().value +
         dyn.flags_value().at + dyn.flags_1_value().at);
    auto table = [&](const result<elf::dynamic_table>& t) {
      linkscope_fuzz::sink_result(t, [&](const elf::dynamic_table& tab) {
        sink(tab.offset + tab.size + tab.entsize + tab.present);
        if (tab.present) linkscope_fuzz::sink_result(f.bytes().sub(tab.offset, tab.size), [](byte_view b) { sink(b); });
      });
    };
    table(dyn.rela_table());
    table(dyn.rel_table());
    table(dyn.relr_table());
    bool is_rela = false;
    table(dyn.jmprel_table(is_rela));
    sink(static_cast<std::uint64_t>(is_rela));
    for (std::size_t i = 0; i < dyn.entries().size(); ++i) {
      const auto d = dyn.entries()[i];
      linkscope_fuzz::sink_result(dyn.string(static_cast<u64>(d.d_val), 0));
    }
    return {};
  });
  linkscope_fuzz::sink_result(r);
  return 0;
}
