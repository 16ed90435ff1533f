// Fuzz target: macho::for_each_export — the export trie as raw bytes
// (ULEB128 nodes, terminal info, edges, cycle and depth bounds), and the
// trie of the input read as a Mach-O image.
#include <cstddef>
#include <cstdint>

#include "fuzz_common.hpp"
#include "linkscope/macho/exports.hpp"
#include "linkscope/macho/file.hpp"

using namespace linkscope;
using linkscope_fuzz::sink;
using linkscope_fuzz::sink_result;

namespace {
result<void> walk(byte_view trie) {
  return macho::for_each_export(trie, [](const macho::export_entry& e) {
    sink(e.name);
    sink(e.import_name);
    sink(e.address + e.flags + e.resolver + e.library_ordinal + e.node_offset);
  });
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const byte_view bytes = linkscope_fuzz::as_bytes(data, size);
  if (macho::is_macho(bytes)) {
    sink_result(macho::visit_macho(bytes, [](const auto& f) -> result<void> {
      LINKSCOPE_TRY(trie, f.export_trie());
      if (trie) return walk(*trie);
      return ok();
    }));
  } else {
    sink_result(walk(bytes));
  }
  return 0;
}
