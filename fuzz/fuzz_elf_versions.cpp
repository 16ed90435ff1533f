// Fuzz target: elf::version_tables — versym / verdef / verneed, from the
// sections (binutils' view) or from the DT_VERSYM/VERDEF/VERNEED tags (ld.so's
// view on stripped section headers): every index entry and the version of
// every dynamic symbol.
#include <cstddef>
#include <cstdint>

#include "fuzz_common.hpp"
#include "linkscope/elf/dynamic.hpp"
#include "linkscope/elf/file.hpp"
#include "linkscope/elf/symbols.hpp"
#include "linkscope/elf/versions.hpp"

using namespace linkscope;
using linkscope_fuzz::sink;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const byte_view bytes = linkscope_fuzz::as_bytes(data, size);
  auto r = elf::visit_elf(bytes, [](const auto& f) -> result<void> {
    using ET = typename std::decay_t<decltype(f)>::types;
    LINKSCOPE_TRY(dyn, elf::dynamic_info<ET>::read(f));
    auto dynsym = elf::read_dynsym(f, dyn);
    const std::size_t count = dynsym ? dynsym->size() : 0;
    // Also with a symbol count that does not match (a hostile caller's view).
    for (std::size_t claimed : {count, std::size_t{0}, count + 7}) {
      auto versions = elf::version_tables<ET>::read(f, dyn, claimed);
      if (!versions) {
        sink(versions.error());
        continue;
      }
      sink(static_cast<u64>(versions->present()) + versions->size() + versions->max_verdef_index());
      for (const elf::version_entry& e : versions->entries()) {
        sink(e.name);
        sink(e.file);
        sink(static_cast<u64>(e.hash) + e.flags + e.defined + e.needed);
      }
      for (u32 n = 0; n < 4; ++n) sink(versions->entry(static_cast<u16>(n)).name);
      sink(versions->entry(0xffff).name);
      for (std::size_t i = 0; i < versions->size() + 2; ++i) {
        sink(versions->raw(i));
        std::string_view name = "x";
        if (dynsym && i < dynsym->size()) {
          auto n = dynsym->name(i);
          if (n) name = *n;
        }
        for (bool defined : {true, false})
          linkscope_fuzz::sink_result(versions->of(i, name, defined), [](const elf::symbol_version& v) {
            sink(v.name);
            sink(v.file);
            sink(static_cast<u64>(v.index) + v.hidden + v.needed + static_cast<u64>(v.kind));
          });
      }
    }
    return {};
  });
  linkscope_fuzz::sink_result(r);
  return 0;
}
