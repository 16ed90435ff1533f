// Fuzz target: pe::image — PE/COFF images (DLLs, executables): headers,
// sections, data directories, RVA mapping, the export directory (names,
// ordinals, forwarders), the import and delay-load import directories, the
// header fields, the CLR header, bound imports, RT_MANIFEST resources and
// their dependent assemblies, and the symbol_source adapter.
#include <cstddef>
#include <cstdint>

#include "fuzz_common.hpp"
#include "linkscope/coff/pe.hpp"

using namespace linkscope;
using linkscope_fuzz::sink;

namespace {
void sink_dlls(const std::vector<pe::imported_dll>& dlls) {
  for (const pe::imported_dll& d : dlls) {
    sink(d.name);
    sink(static_cast<u64>(d.delay_load));
    for (const pe::imported_function& fn : d.functions) {
      sink(fn.name);
      sink(static_cast<u64>(fn.ordinal.value_or(0)) + fn.hint + fn.thunk_rva);
    }
  }
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const byte_view bytes = linkscope_fuzz::as_bytes(data, size);
  auto parsed = pe::image::parse(bytes);
  if (!parsed) {
    sink(parsed.error());
    return 0;
  }
  const pe::image& img = *parsed;
  sink(static_cast<u64>(img.is_dll()) + img.section_count());
  for (std::size_t i = 0; i < img.section_count(); ++i) {
    const auto sh = img.section(i);
    sink(static_cast<u64>(sh.virtual_address) + sh.size_of_raw_data);
    linkscope_fuzz::sink_result(img.at_rva(sh.virtual_address, 1, 0), [](byte_view b) { sink(b); });
    linkscope_fuzz::sink_result(img.section_tail_at_rva(sh.virtual_address, 0), [](byte_view b) { sink(b.size()); });
  }
  for (u32 d = 0; d < 18; ++d) {
    const auto dir = img.directory(d);
    sink(static_cast<u64>(dir.virtual_address) + dir.size);
    linkscope_fuzz::sink_result(img.string_at_rva(dir.virtual_address, 0));
  }
  linkscope_fuzz::sink_result(img.export_name());
  linkscope_fuzz::sink_result(img.exports(), [](const std::vector<pe::export_entry>& exports) {
    for (const pe::export_entry& e : exports) {
      sink(e.name);
      sink(e.forwarder);
      sink(u64{e.ordinal} + e.rva + e.hint);
    }
  });
  const pe::header_info& h = img.header();
  sink(u64{h.subsystem} + h.major_os_version + h.dll_characteristics + static_cast<u64>(img.is_managed()));
  linkscope_fuzz::sink_result(img.clr(), [](const pe::clr_info& c) { sink(u64{c.flags} + c.major_runtime_version); });
  linkscope_fuzz::sink_result(img.bound_imports(), [](const std::vector<pe::bound_import>& bound) {
    for (const pe::bound_import& b : bound) sink(b.module);
  });
  linkscope_fuzz::sink_result(img.manifests(), [](const std::vector<byte_view>& manifests) {
    for (const byte_view m : manifests)
      for (const pe::assembly_identity& a : pe::manifest_dependencies(m.chars())) {
        sink(a.name);
        sink(a.version);
      }
  });
  linkscope_fuzz::sink_result(img.exports(), [](const std::vector<pe::export_entry>& exports) {
    for (const pe::export_entry& e : exports)
      if (auto t = pe::split_forwarder(e.forwarder)) sink(t->module);
  });
  linkscope_fuzz::sink_result(img.imports(), sink_dlls);
  linkscope_fuzz::sink_result(img.delay_imports(), sink_dlls);
  linkscope_fuzz::sink_result(img.for_each_symbol([](const symbol& s) {
    sink(s.name);
    if (s.import != nullptr) sink(s.import->dll);
  }));
  return 0;
}
