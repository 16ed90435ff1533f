// Fuzz target: macho bind opcodes (regular, weak, lazy streams) and
// LC_DYLD_CHAINED_FIXUPS imports (all three formats) — of the input read as
// a Mach-O image, and of the input read as a raw chained-fixups blob.
#include <cstddef>
#include <cstdint>

#include "fuzz_common.hpp"
#include "linkscope/macho/binds.hpp"
#include "linkscope/macho/file.hpp"

using namespace linkscope;
using linkscope_fuzz::sink;
using linkscope_fuzz::sink_result;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const byte_view bytes = linkscope_fuzz::as_bytes(data, size);
  auto each = [](const macho::import_entry& e) {
    sink(e.symbol);
    sink(static_cast<std::uint64_t>(e.library_ordinal) + static_cast<std::uint64_t>(e.addend) + e.address +
         e.weak_import + static_cast<std::uint64_t>(e.kind));
  };
  if (macho::is_macho(bytes)) {
    sink_result(macho::visit_macho(bytes, [&](const auto& f) -> result<void> {
      LINKSCOPE_CHECK(macho::for_each_import(f, each));
      // every byte of the image as each kind of stream, from the load commands on
      const byte_view rest = f.bytes().sub_unchecked(0, f.bytes().size());
      sink_result(macho::for_each_bind_in(f, rest, macho::import_source::lazy_bind, each));
      return ok();
    }));
  } else {
    sink_result(macho::for_each_chained_import<std::endian::little>(bytes, each));
    sink_result(macho::for_each_chained_import<std::endian::big>(bytes, each));
  }
  return 0;
}
