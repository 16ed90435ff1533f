// linkscope/resolve/dyld.hpp — dyld emulation: which images a Mach-O image
// would load and where every import would bind, computed from the files
// alone, on any host. Nothing is executed or mapped as code.
//
// The emulation follows dyld4 (dyld-1378), in three phases, one file each:
//   dyld/load.hpp   the closure: install names through DYLD_* paths,
//                   @loader_path, @executable_path, @rpath up the load
//                   chain, absolute paths under the root (.tbd stubs
//                   standing for dylibs), the fallbacks; system libraries
//                   classified, not read; the compatibility-version check
//   dyld/bind.hpp   every import resolved two-level (re-exports followed,
//                   renames included), flat, or by weak coalescing; the
//                   undefined imports; the unused dylibs
//   the result      dyld/result.hpp, in the shape of the ld.so emulator's
// Every file is read once through macho/ (macho/linkage.hpp, macho/tbd.hpp)
// into a dyld_file from a dyld_cache: pass one cache to link_dyld for
// every root of a run and each file is mapped and parsed once per run.
#pragma once

#include <string>

#include "linkscope/core/config.hpp"
#include "linkscope/core/error.hpp"
#include "linkscope/resolve/dyld/image.hpp"
#include "linkscope/resolve/dyld/result.hpp"
// The phases are the implementation: a TU of compiled mode that only calls
// link_dyld sees the declarations below and never parses them.
#if LINKSCOPE_DEFINITIONS
#include "linkscope/resolve/dyld/bind.hpp"
#include "linkscope/resolve/dyld/load.hpp"
#endif

namespace linkscope {
inline namespace v0 {
namespace resolve {

// Emulate dyld for the Mach-O image at host path `file` (an executable, a
// dylib or a bundle; a universal file's slice of options.arch, else its
// first). Errors are only for a root that cannot be read or is not Mach-O;
// every problem further down is on the objects, in errors or in warnings.
result<dyld_link> link_dyld(const std::string& file, const dyld_options& options, dyld_cache& cache);
result<dyld_link> link_dyld(const std::string& file, const dyld_options& options = {});

#if LINKSCOPE_DEFINITIONS
LINKSCOPE_FUNC result<dyld_link> link_dyld(const std::string& file, const dyld_options& options, dyld_cache& cache) {
  dyld_link out;
  detail::dyld_state state(options, out, cache);
  // The root image.
  LINKSCOPE_CHECK(state.load_root(file));
  // The closure, as dyld4's loadDependents recurses.
  state.load_all();
  // Every import, two-level.
  if (options.bindings) detail::dyld_binder(state).bind_all();
  // The mappings stay with the result.
  state.keep_files();
  return out;
}

LINKSCOPE_FUNC result<dyld_link> link_dyld(const std::string& file, const dyld_options& options) {
  dyld_cache cache;
  return link_dyld(file, options, cache);
}
#endif  // LINKSCOPE_DEFINITIONS

}  // namespace resolve
}  // namespace v0
}  // namespace linkscope
