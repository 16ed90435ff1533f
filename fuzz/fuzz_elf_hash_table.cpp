// Fuzz target: elf::hash_table — DT_GNU_HASH (bloom, buckets, chains) and
// DT_HASH lookups exactly as ld.so does them: every dynamic symbol's name
// looked up through both tables, with and without a version request, plus
// names that are not there.
#include <cstddef>
#include <cstdint>

#include "fuzz_common.hpp"
#include "linkscope/elf/dynamic.hpp"
#include "linkscope/elf/file.hpp"
#include "linkscope/elf/hash_table.hpp"
#include "linkscope/elf/symbols.hpp"
#include "linkscope/elf/versions.hpp"

using namespace linkscope;
using linkscope_fuzz::sink;

namespace {
void sink_lookup(const result<elf::lookup_result>& r) {
  linkscope_fuzz::sink_result(r, [](const elf::lookup_result& l) { sink(u64{l.index} + l.found + l.matched); });
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const byte_view bytes = linkscope_fuzz::as_bytes(data, size);
  auto r = elf::visit_elf(bytes, [](const auto& f) -> result<void> {
    using ET = typename std::decay_t<decltype(f)>::types;
    LINKSCOPE_TRY(dyn, elf::dynamic_info<ET>::read(f));
    // Both views of .dynsym: the section and what the dynamic section implies.
    for (int which = 0; which < 2; ++which) {
      auto dynsym = which == 0 ? elf::read_dynsym(f, dyn) : elf::read_dynsym_from_dynamic(dyn);
      if (!dynsym) {
        sink(dynsym.error());
        continue;
      }
      auto versions = elf::version_tables<ET>::read(f, dyn, dynsym->size());
      elf::version_tables<ET> no_versions;
      const elf::version_tables<ET>& v = versions ? *versions : no_versions;
      auto table = elf::hash_table<ET>::open(dyn, *dynsym, v);
      if (!table) {
        sink(table.error());
        continue;
      }
      sink(static_cast<u64>(table->has_gnu()) + table->has_sysv() + table->empty());
      const elf::version_request vers1 = elf::version_request::of("VERS_1");
      const elf::version_request hidden = elf::version_request::of("VERS_2", true);
      elf::lookup_options with_version;
      with_version.version = &vers1;
      elf::lookup_options plt;
      plt.type_class = elf::rtype_class_plt;
      plt.version = &hidden;
      elf::lookup_options newest;
      newest.return_newest = true;
      for (std::size_t i = 0; i < dynsym->size() && i < 2048; ++i) {
        auto name = dynsym->name(i);
        if (!name) continue;
        sink_lookup(table->lookup(*name));
        sink_lookup(table->lookup(*name, with_version));
        sink_lookup(table->lookup(*name, plt));
        sink_lookup(table->lookup(*name, newest));
        if (table->has_gnu()) sink_lookup(table->lookup_gnu(*name));
        if (table->has_sysv()) sink_lookup(table->lookup_sysv(*name));
      }
      for (const char* missing : {"", "main", "printf", "foo", "a_func_not_there_at_all"}) {
        sink_lookup(table->lookup(missing));
        if (table->has_gnu()) sink_lookup(table->lookup_gnu(missing));
        if (table->has_sysv()) sink_lookup(table->lookup_sysv(missing));
      }
    }
    return {};
  });
  linkscope_fuzz::sink_result(r);
  return 0;
}
