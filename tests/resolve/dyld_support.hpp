// Helpers shared by the dyld emulator's tests (test_dyld.cpp,
// test_dyld_oracles.cpp).
#pragma once

#include <cstdint>
#include <set>
#include <vector>

#include "linkscope/resolve/dyld.hpp"

namespace linkscope_test {

// `to` is `id` or an image `id` re-exports, transitively.
inline bool in_or_reexported(const linkscope::resolve::dyld_link& l, std::uint32_t id, std::uint32_t to) {
  std::vector<std::uint32_t> work{id};
  std::set<std::uint32_t> seen;
  while (!work.empty()) {
    const auto x = work.back();
    work.pop_back();
    if (x == to) return true;
    if (x == linkscope::resolve::no_object || !seen.insert(x).second) continue;
    for (const auto& d : l.objects[x].dependencies)
      if (d.kind == linkscope::macho::dylib_kind::reexport) work.push_back(d.object);
  }
  return false;
}

}  // namespace linkscope_test
