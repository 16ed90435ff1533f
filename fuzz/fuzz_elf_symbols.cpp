// Fuzz target: elf symbols — .symtab, .dynsym by section, .dynsym through the
// dynamic section only (count from DT_HASH / DT_GNU_HASH), names and
// SHN_XINDEX section indices of every symbol.
#include <cstddef>
#include <cstdint>

#include "fuzz_common.hpp"
#include "linkscope/elf/dynamic.hpp"
#include "linkscope/elf/file.hpp"
#include "linkscope/elf/symbols.hpp"

using namespace linkscope;
using linkscope_fuzz::sink;

namespace {
template <class View>
void walk(const View& view) {
  sink(view.size() + view.is_dynamic() + view.section() + view.offset());
  sink(view.strings());
  for (std::size_t i = 0; i < view.size(); ++i) {
    const auto sym = view[i];
    linkscope_fuzz::sink_result(view.name(i));
    linkscope_fuzz::sink_result(view.name(sym));
    linkscope_fuzz::sink_result(view.section_index(i));
    sink(static_cast<u64>(sym.st_value) + static_cast<u64>(sym.st_size) + sym.st_info + sym.st_other);
    sink(view.entry_offset(i));
  }
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const byte_view bytes = linkscope_fuzz::as_bytes(data, size);
  auto r = elf::visit_elf(bytes, [](const auto& f) -> result<void> {
    using ET = typename std::decay_t<decltype(f)>::types;
    linkscope_fuzz::sink_result(elf::read_symtab(f), [](const auto& v) { walk(v); });
    auto dyn = elf::dynamic_info<ET>::read(f);
    if (!dyn) {
      sink(dyn.error());
      return {};
    }
    linkscope_fuzz::sink_result(elf::read_dynsym(f, *dyn), [](const auto& v) { walk(v); });
    linkscope_fuzz::sink_result(elf::read_dynsym_from_dynamic(*dyn), [](const auto& v) { walk(v); });
    linkscope_fuzz::sink_result(elf::dynsym_count_from_hash(*dyn));
    if (auto at = dyn->offset_of(dyn->symtab(), 0)) linkscope_fuzz::sink_result(elf::dynsym_count(*dyn, *at));
    return {};
  });
  linkscope_fuzz::sink_result(r);
  return 0;
}
