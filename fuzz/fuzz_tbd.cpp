// Fuzz target: macho::tbd::read — the bounded YAML subset of .tbd stubs
// (documents, indentation, block and flow sequences, quoted scalars) and
// the v1-v4 fields.
#include <cstddef>
#include <cstdint>

#include "fuzz_common.hpp"
#include "linkscope/macho/tbd.hpp"

using namespace linkscope;
using linkscope_fuzz::sink;
using linkscope_fuzz::sink_result;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  sink_result(macho::tbd::read(linkscope_fuzz::as_bytes(data, size)), [](const auto& docs) {
    for (const auto& d : docs) {
      sink(d.install_name);
      sink(d.current_version);
      for (auto t : d.targets) sink(t);
      for (auto l : d.reexported_libraries) sink(l);
      for (const auto& s : d.exports) {
        for (auto n : s.symbols) sink(n);
        for (auto n : s.weak_symbols) sink(n);
      }
    }
  });
  return 0;
}
