// Fuzz target: pe::apiset_schema — the API set namespace (v6): the input is
// read as a PE image with an .apiset section (apisetschema.dll) and, when it
// is none, as the namespace bytes themselves; then contracts are looked up.
#include <cstddef>
#include <cstdint>

#include "fuzz_common.hpp"
#include "linkscope/coff/apiset.hpp"

using namespace linkscope;
using linkscope_fuzz::sink;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const byte_view bytes = linkscope_fuzz::as_bytes(data, size);
  result<pe::apiset_schema> schema = make_error(errc::not_found, no_offset, "no image");
  if (auto img = pe::image::parse(bytes)) schema = pe::apiset_schema::read(*img);
  if (!schema) schema = pe::apiset_schema::parse(bytes);
  if (!schema) {
    sink(schema.error());
    return 0;
  }
  for (const auto& e : schema->entries()) {
    sink(e.name);
    sink(static_cast<u64>(e.hashed) + e.values.size());
  }
  for (const char* contract : {"api-ms-win-crt-runtime-l1-1-0.dll", "API-MS-WIN-CORE-SYNCH-L1-2-0", "ext-ms-win-x-l1-1-0",
                               "api-", "-", ""}) {
    auto host = schema->host(contract, "self.dll");
    if (host) sink(*host);
  }
  return 0;
}
