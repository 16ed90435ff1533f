// linkscope/resolve/dyld/result.hpp — what the dyld emulator is asked
// (dyld_options) and what it answers (dyld_link): the closure, the
// bindings, the undefined imports and the unused dylibs.
//
// The answer has the shape of the ld.so emulator's (ld_so/result.hpp):
// images numbered in load order, [0] the main image, and the same
// symbol_binding / undefined_reference records for the bindings and the
// undefined imports (the version column stays empty: Mach-O has none).
// What differs is what a loader of this platform knows of an image: how
// an install name was found (dyld_found_via: which rule, the rpath of
// which image), and the system libraries that are classified, not read.
// string_views point into the mapped files that `dyld_link::files` keeps
// alive, so a result outlives the cache it came from.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "linkscope/core/mapped_file.hpp"
#include "linkscope/macho/file.hpp"
#include "linkscope/resolve/ld_so/result.hpp"

namespace linkscope {
inline namespace v0 {
namespace resolve {

// dyld's compatibility-version check on a found dylib.
enum class dyld_version_check : std::uint8_t {
  strict,  // refuse a dylib whose compatibility version is below the one the load command asks
           // for (dyld before macOS 12: "Incompatible library version"), 0xffffffff a wildcard
  dyld2,   // as strict, but only for dylibs built for macOS before 10.14 (dyld2's
           // enforceCompatVersion; macOS 11's behaviour)
  none,    // dyld4 (macOS 12 and later) no longer checks
};

struct dyld_options {
  std::string root;        // the file system a copy of macOS or an SDK sits in; "" = the host's /
  std::string executable;  // the main executable's path (for @executable_path) when the root image
                           // is a bundle or a dylib analysed alone; "" = the root image itself
  std::string arch;        // slice of universal files and targets of .tbd stubs; "" = the root image's
  // The DYLD_* variables, as options only (the environment is never read here).
  std::vector<std::string> library_path;            // DYLD_LIBRARY_PATH
  std::vector<std::string> framework_path;          // DYLD_FRAMEWORK_PATH
  std::vector<std::string> fallback_library_path;   // DYLD_FALLBACK_LIBRARY_PATH
  std::vector<std::string> fallback_framework_path; // DYLD_FALLBACK_FRAMEWORK_PATH
  // The default fallbacks (/usr/local/lib, /usr/lib; /Library/Frameworks,
  // /System/Library/Frameworks) for images built with an SDK before macOS 13,
  // as dyld4 applies them ("pre-2022 binaries") when no fallback is set.
  bool default_fallbacks = true;
  // /usr/lib/*.dylib, /System/Library/... (and /System/iOSSupport/...) that
  // are not under the root are "system, not checked", as the dyld shared
  // cache would supply them.
  bool system_not_checked = true;
  dyld_version_check version_check = dyld_version_check::strict;
  bool bindings = true;            // resolve every import (else only the closure)
  std::size_t max_images = 65536;  // a closure larger than this is an error
};

// How an install name was found.
enum class dyld_found_via : std::uint8_t {
  not_found,
  main,              // the root image
  path,              // an absolute install name, under the root
  loader_path,       // @loader_path: the folder of the image holding the load command
  executable_path,   // @executable_path: the main executable's folder
  rpath,             // @rpath: an LC_RPATH of `where` (the needing image or one up its load chain)
  library_path,      // DYLD_LIBRARY_PATH
  framework_path,    // DYLD_FRAMEWORK_PATH
  fallback,          // DYLD_FALLBACK_* or the default fallbacks
  inlined,           // a document inlined in a .tbd that re-exports it
  loaded,            // already loaded under this install name
  system,            // system library, not under the root: not checked
};

constexpr const char* to_string(dyld_found_via v) noexcept {
  switch (v) {
    case dyld_found_via::not_found: return "not-found";
    case dyld_found_via::main: return "main";
    case dyld_found_via::path: return "path";
    case dyld_found_via::loader_path: return "loader-path";
    case dyld_found_via::executable_path: return "executable-path";
    case dyld_found_via::rpath: return "rpath";
    case dyld_found_via::library_path: return "dyld-library-path";
    case dyld_found_via::framework_path: return "dyld-framework-path";
    case dyld_found_via::fallback: return "fallback";
    case dyld_found_via::inlined: return "tbd-inlined";
    case dyld_found_via::loaded: return "loaded";
    case dyld_found_via::system: return "system";
  }
  return "?";
}

enum class dyld_image_kind : std::uint8_t { missing, macho, tbd, system };

// One dylib command of an image and what it resolved to.
struct dyld_dependency {
  std::string_view install_name;
  macho::dylib_kind kind = macho::dylib_kind::load;
  std::uint32_t object = no_object;  // the image it resolved to; no_object when missing
};

// One image of the closure.
struct dyld_object {
  std::string name;      // the install name it was first requested by (the path, for the root)
  std::string path;      // as dyld would spell it (the expanded path, without the root); empty when missing
  std::string file;      // what was read on this host (root + path, maybe a .tbd); empty when not read
  dyld_found_via via = dyld_found_via::not_found;
  std::string where;     // rpath: the image whose LC_RPATH found it
  std::string rpath;     // rpath: that LC_RPATH entry, as written
  dyld_image_kind kind = dyld_image_kind::missing;
  std::string_view install_name;  // LC_ID_DYLIB / tbd install-name
  std::uint32_t current_version = 0, compatibility_version = 0;
  std::uint32_t filetype = 0;     // Mach-O filetype; 0 for tbd and system
  std::vector<dyld_dependency> dependencies;  // load commands (tbd: re-exported libraries), in order
  std::uint32_t loader = no_object;  // the image whose load command first loaded it
  bool weak = false;                 // only weakly linked (a missing one is no error)
  std::vector<rejected_candidate> rejected;  // candidates tried and refused (wrong arch, version...)
  std::vector<std::string> warnings;
  bool found() const noexcept { return via != dyld_found_via::not_found; }
  bool checked() const noexcept { return kind == dyld_image_kind::macho || kind == dyld_image_kind::tbd; }
};

struct unused_dylib {
  std::uint32_t from = 0;     // the image whose load command names it
  std::uint32_t ordinal = 0;  // its library ordinal in `from`
  std::uint32_t to = no_object;
  std::string_view install_name;
};

struct dyld_link {
  std::vector<dyld_object> objects;          // load order; [0] = the root image
  std::vector<symbol_binding> bindings;      // every distinct (from, to, symbol)
  std::vector<undefined_reference> undefined;  // non-weak imports nothing exports (dyld's "Symbol not found")
  std::vector<unused_dylib> unused;          // dylib commands no import names
  std::vector<std::string> errors;           // bad input, each naming its image ("IMAGE: message")
  std::vector<std::string> warnings;
  std::size_t imports = 0;                   // imports examined
  std::size_t unchecked = 0;                 // imports into system images (not checked)
  std::size_t lookups = 0;                   // export lookups performed
  std::vector<std::shared_ptr<const mapped_file>> files;

  bool any_missing() const noexcept {
    for (const auto& o : objects)
      if (!o.found() && !o.weak) return true;
    return false;
  }
};

}  // namespace resolve
}  // namespace v0
}  // namespace linkscope
