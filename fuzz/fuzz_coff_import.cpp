// Fuzz target: coff import libraries — short import members
// (IMPORT_OBJECT_HEADER) and MinGW long import members (.idata$N objects),
// alone or inside any ar container: every record, the DLL names dlltool -I
// would print, the static symbols, and the symbol_source adapter.
#include <cstddef>
#include <cstdint>

#include "fuzz_common.hpp"
#include "linkscope/coff/import.hpp"

using namespace linkscope;
using linkscope_fuzz::sink;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const byte_view bytes = linkscope_fuzz::as_bytes(data, size);
  linkscope_fuzz::sink_result(coff::parse_short_import(bytes, 8, "member.o"), [](const coff::import_record& r) {
    sink(r.dll);
    sink(r.symbol);
    sink(r.import_name);
    sink(r.info().import_name);
  });
  auto lib = coff::import_library::from_bytes(bytes);
  if (!lib) {
    sink(lib.error());
    return 0;
  }
  sink(lib->member_count() + lib->other_members() + lib->object_members() + lib->ms_style());
  for (const coff::import_record& r : lib->records()) {
    sink(r.dll);
    sink(r.symbol);
    sink(r.imp_symbol);
    sink(r.import_name);
    sink(r.member_name);
    sink(static_cast<u64>(r.ordinal.value_or(0)) + r.hint + static_cast<u64>(r.kind) + static_cast<u64>(r.name_type) +
         r.machine + static_cast<u64>(r.format) + r.member_offset + r.defines_thunk());
  }
  for (bool bfd_only : {false, true})
    for (std::string_view d : lib->identify_dlls(bfd_only)) sink(d);
  for (std::string_view d : lib->dlls()) sink(d);
  for (const auto& s : lib->static_symbols()) {
    sink(s.name);
    sink(s.member_name);
  }
  linkscope_fuzz::sink_result(lib->for_each_symbol([](const symbol& s) {
    sink(s.name);
    if (s.import != nullptr) {
      sink(s.import->dll);
      sink(s.import->import_name);
    }
  }));
  return 0;
}
