// linkscope/symbols/demangle.hpp — demangle: an Itanium C++ name as `nm -C`
// prints it.
//
// The name is handed to the C++ runtime's demangler (abi::__cxa_demangle).
// A name that does not demangle is returned unchanged, as GNU nm does. A
// version suffix (`name@VER`, `name@@VER`) is kept after the demangled base.
#pragma once

#include <cstdlib>
#include <string>
#include <string_view>

#if __has_include(<cxxabi.h>)
#include <cxxabi.h>
#define LINKSCOPE_HAVE_CXXABI 1
#endif

namespace linkscope::symbols {

// The demangled form of `name`, or `name` itself when it is not a mangled
// C++ name.
inline std::string demangle(std::string_view name) {
  std::string out(name);
#if defined(LINKSCOPE_HAVE_CXXABI)
  const std::size_t at = name.find('@');
  const std::string_view base = at == std::string_view::npos ? name : name.substr(0, at);
  if (base.size() < 2 || base[0] != '_' || base[1] != 'Z') return out;
  const std::string mangled(base);
  int status = 0;
  char* d = abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status);
  if (status == 0 && d != nullptr) {
    out = d;
    if (at != std::string_view::npos) out.append(name.substr(at));
  }
  std::free(d);
#endif
  return out;
}

}  // namespace linkscope::symbols
