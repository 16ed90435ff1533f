// Fuzz target: resolve/conda_meta.hpp — a conda-meta record (untrusted JSON).
// Every decoded string is sunk; an accepted record is written back as JSON
// (every byte escaped as \u00XX below U+0020, '"' and '\\' escaped, the rest
// as decoded) and read again, which must give the same four members: the
// reader's decoding and its acceptance agree with each other. Nesting and
// size bounds are those of conda_meta_limits (depth 512 by default; a
// smaller depth is also tried so that the too-deep path is reached often).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_common.hpp"
#include "linkscope/resolve/conda_meta.hpp"

using namespace linkscope;
using linkscope_fuzz::sink;

namespace {
void quote(std::string& out, std::string_view s) {
  static const char hex[] = "0123456789abcdef";
  out.push_back('"');
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out.push_back('\\');
      out.push_back(c);
    } else if (u < 0x20) {
      out += "\\u00";
      out.push_back(hex[u >> 4]);
      out.push_back(hex[u & 15]);
    } else {
      out.push_back(c);
    }
  }
  out.push_back('"');
}

void quote_list(std::string& out, const std::vector<std::string>& v) {
  out.push_back('[');
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (i) out.push_back(',');
    quote(out, v[i]);
  }
  out.push_back(']');
}

void sink_meta(const resolve::conda_meta& m) {
  sink(m.name);
  sink(m.version);
  for (const auto& d : m.depends) sink(d);
  for (const auto& f : m.files) sink(f);
  sink(static_cast<std::uint64_t>(m.has_name));
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto meta = resolve::read_conda_meta(text);
  linkscope_fuzz::sink_result(meta, sink_meta);
  if (!meta) {
    if (meta.error().has_offset() && meta.error().offset > size) std::abort();  // offsets lie in the input
  } else {
    std::string again = "{";
    if (meta->has_name) {
      again += "\"name\":";
      quote(again, meta->name);
      again += ",";
    }
    again += "\"version\":";
    quote(again, meta->version);
    again += ",\"depends\":";
    quote_list(again, meta->depends);
    again += ",\"files\":";
    quote_list(again, meta->files);
    again += "}";
    auto back = resolve::read_conda_meta(again);
    if (!back || back->name != meta->name || back->version != meta->version || back->depends != meta->depends ||
        back->files != meta->files || back->has_name != meta->has_name)
      std::abort();
  }
  resolve::conda_meta_limits shallow;
  shallow.max_depth = 4;
  linkscope_fuzz::sink_result(resolve::read_conda_meta(text, shallow), sink_meta);
  return 0;
}
