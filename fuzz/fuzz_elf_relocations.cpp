// Fuzz target: elf relocations — DT_RELA, DT_REL, DT_JMPREL (with overlap),
// DT_RELR expansion, each relocation classified for its machine and its
// symbol index checked against the dynamic symbol count.
#include <cstddef>
#include <cstdint>

#include "fuzz_common.hpp"
#include "linkscope/elf/dynamic.hpp"
#include "linkscope/elf/file.hpp"
#include "linkscope/elf/relocations.hpp"
#include "linkscope/elf/symbols.hpp"

using namespace linkscope;
using linkscope_fuzz::sink;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const byte_view bytes = linkscope_fuzz::as_bytes(data, size);
  auto r = elf::visit_elf(bytes, [](const auto& f) -> result<void> {
    using ET = typename std::decay_t<decltype(f)>::types;
    LINKSCOPE_TRY(dyn, elf::dynamic_info<ET>::read(f));
    auto dynsym = elf::read_dynsym(f, dyn);
    const std::size_t count = dynsym ? dynsym->size() : 0;
    std::size_t visited = 0;
    const elf::reloc_classifier classes = elf::reloc_classifier::of(f);
    auto each = [&](const elf::dynamic_relocation& rel) {
      sink(rel.offset + rel.file_offset + static_cast<u64>(rel.addend) + rel.symbol + rel.type);
      sink(elf::to_string(rel.kind));
      sink(static_cast<u64>(elf::needs_symbol_lookup(rel.kind)) + static_cast<u64>(classes.lookup_class(rel.type) + 1) +
           static_cast<u64>(rel.table));
      if (dynsym && rel.symbol < dynsym->size()) linkscope_fuzz::sink_result(dynsym->name(rel.symbol));
      ++visited;
    };
    linkscope_fuzz::sink_result(elf::for_each_dynamic_relocation(dyn, each, count, true));
    linkscope_fuzz::sink_result(elf::for_each_dynamic_relocation(dyn, each));
    std::size_t stop = 0;
    linkscope_fuzz::sink_result(
        elf::for_each_dynamic_relocation(dyn, [&](const elf::dynamic_relocation&) { return ++stop < 3; }, count, true));
    sink(visited);
    for (u32 type = 0; type < 64; ++type) sink(elf::to_string(elf::classify_relocation(f.machine(), type)));
    return {};
  });
  linkscope_fuzz::sink_result(r);
  return 0;
}
