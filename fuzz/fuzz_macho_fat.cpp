// Fuzz target: macho::fat_file — fat_arch / fat_arch_64 records, slice
// bounds, overlap checks, slice lookup, and each slice opened as Mach-O.
#include <cstddef>
#include <cstdint>

#include "fuzz_common.hpp"
#include "linkscope/macho/fat.hpp"
#include "linkscope/macho/file.hpp"

using namespace linkscope;
using linkscope_fuzz::sink;
using linkscope_fuzz::sink_result;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const byte_view bytes = linkscope_fuzz::as_bytes(data, size);
  sink(static_cast<std::uint64_t>(macho::is_fat(bytes)));
  sink_result(macho::fat_file::open(bytes), [](const macho::fat_file& fat) {
    for (const auto& s : fat.slices()) {
      sink(s.bytes);
      sink(macho::arch_name(s.cputype, s.cpusubtype));
      sink_result(macho::visit_macho(s.bytes, [](const auto& f) -> result<void> {
        sink_result(f.dylibs(), [](const auto& v) { sink(std::uint64_t{v.size()}); });
        return {};
      }));
    }
    if (auto s = fat.find("arm64")) sink(s->offset);
    if (auto s = fat.find(macho::CPU_TYPE_X86_64, macho::CPU_SUBTYPE_X86_ALL)) sink(s->offset);
  });
  return 0;
}
