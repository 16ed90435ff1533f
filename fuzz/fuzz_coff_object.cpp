// Fuzz target: coff::object — standard and bigobj COFF objects: sections
// (names through the string table, data, relocations including the
// NRELOC_OVFL form), every symbol with its aux records, the nm letter, and
// the symbol_source adapter.
#include <cstddef>
#include <cstdint>

#include "fuzz_common.hpp"
#include "linkscope/coff/object.hpp"

using namespace linkscope;
using linkscope_fuzz::sink;

namespace {
void entry(const coff::symbol_entry& e) {
  sink(e.name);
  sink(e.file_name());
  sink(static_cast<u64>(e.value) + e.index + e.aux_count + static_cast<u64>(e.section_number));
  sink(static_cast<u64>(e.is_undefined()) + e.is_common() + e.is_absolute() + e.is_debug() + e.is_function() +
       e.is_section_definition() + e.associated_section() + static_cast<u64>(e.selection()));
  if (auto d = e.section_definition()) sink(static_cast<u64>(d->length));
  if (auto w = e.weak_external()) sink(static_cast<u64>(w->tag_index));
  if (auto fn = e.function_definition()) sink(static_cast<u64>(fn->total_size));
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const byte_view bytes = linkscope_fuzz::as_bytes(data, size);
  sink(static_cast<u64>(coff::is_bigobj(bytes)) + coff::is_short_import(bytes));
  auto parsed = coff::object::parse(bytes);
  if (!parsed) {
    sink(parsed.error());
    return 0;
  }
  const coff::object& obj = *parsed;
  sink(static_cast<u64>(obj.machine()) + obj.section_count() + obj.symbol_count() + static_cast<u64>(obj.form()));
  linkscope_fuzz::sink_result(obj.for_each_section([&](const coff::section& s) {
    sink(s.name);
    sink(static_cast<u64>(s.is_code()) + s.is_bss() + s.is_writable() + s.is_comdat() + s.has_contents());
    linkscope_fuzz::sink_result(obj.section_data(s), [](byte_view d) { sink(d); });
    linkscope_fuzz::sink_result(obj.relocations(s), [](const record_array<coff::relocation>& relocs) {
      for (const coff::relocation& r : relocs) sink(static_cast<u64>(r.symbol_table_index) + r.type);
    });
  }));
  linkscope_fuzz::sink_result(obj.section_at(0), [](const coff::section& s) { sink(s.name); });
  linkscope_fuzz::sink_result(obj.section_at(obj.section_count() + 1), [](const coff::section& s) { sink(s.name); });
  linkscope_fuzz::sink_result(obj.for_each_entry([&](const coff::symbol_entry& e) {
    entry(e);
    linkscope_fuzz::sink_result(obj.nm_letter(e), [](char c) { sink(static_cast<u64>(c)); });
  }));
  linkscope_fuzz::sink_result(obj.symbol_at(obj.symbol_count()), [](const coff::symbol_entry& e) { entry(e); });
  linkscope_fuzz::sink_result(obj.for_each_symbol([](const symbol& s) {
    sink(s.name);
    sink(s.size + s.value + static_cast<u64>(s.kind) + static_cast<u64>(s.bind) + s.defined);
  }));
  // The per-form interface as well (visit_object dispatches once).
  linkscope_fuzz::sink_result(coff::visit_object(bytes, [](const auto& o) {
    sink(o.string_table());
    for (u32 i = 0; i < o.symbol_count() && i < 4096; ++i)
      linkscope_fuzz::sink_result(o.symbol_at(i), [](const coff::symbol_entry& e) { sink(e.name); });
    linkscope_fuzz::sink_result(o.string_at(4));
    linkscope_fuzz::sink_result(o.string_at(~u64{0}));
  }));
  return 0;
}
