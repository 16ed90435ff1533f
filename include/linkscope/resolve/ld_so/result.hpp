// linkscope/resolve/ld_so/result.hpp — what the ld.so emulator is asked and
// what it answers: dynamic_options in, dynamic_link out (the closure, the
// bindings, the undefined references, the unused NEEDED entries).
//
// Objects are numbered in load order (ld.so's l_next chain); every other
// struct refers to them by that number. The string_views point into the
// mapped files that `dynamic_link::files` keeps alive (shared with an
// object_cache when one was given), so a result outlives the cache.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "linkscope/core/mapped_file.hpp"
#include "linkscope/resolve/search_path.hpp"

namespace linkscope {
inline namespace v0 {
namespace resolve {

inline constexpr std::uint32_t no_object = ~std::uint32_t{0};

struct dynamic_options {
  search_options search;
  std::vector<std::string> preload;                       // LD_PRELOAD names, in order
  std::string default_interpreter = "/lib64/ld-linux-x86-64.so.2";
  bool bindings = true;             // resolve relocations (else only the closure and versions)
  bool bind_dependencies = true;    // relocate every object (ld.so); false: only the main program's
                                    // relocations (what a package check asks of each root)
  bool interposition = true;        // fill dynamic_link::interposed
  bool versions = true;             // dl-version.c's check: fill version_needs and missing_versions
};

// One object of the closure (a link_map).
struct loaded_object {
  std::string name;                  // the name it was first requested by (l_libname)
  std::string path;                  // l_name: how ld.so spells it; empty when not found
  std::string file;                  // what was read on this host
  found_via via = found_via::not_found;
  std::string subdir;                // hwcaps subdirectory it was found in
  std::string where;                 // the object whose RPATH/RUNPATH found it
  std::string_view soname;
  std::string_view rpath, runpath;
  bool has_rpath = false, has_runpath = false;
  std::vector<std::string_view> needed;
  std::vector<std::uint32_t> needed_objects;  // per DT_NEEDED: the object it resolved to
  std::uint32_t loader = no_object;  // who caused it to load
  bool is_main = false, is_interpreter = false, preloaded = false;
  bool symbolic = false, nodeflib = false;
  std::vector<rejected_candidate> rejected;
  std::vector<std::string> warnings;  // malformed parts, with the reason
  bool found() const noexcept { return via != found_via::not_found; }
};

struct symbol_binding {
  std::uint32_t from = 0;
  std::uint32_t to = 0;
  std::string_view symbol;
  std::string_view version;  // the version the reference asked for; empty if none
  bool protected_ = false;
  // Mach-O: found by a flat-namespace lookup (library ordinal -2, or any
  // import of an image without MH_TWOLEVEL), which names no library.
  bool flat = false;
};

struct undefined_reference {
  std::uint32_t from = 0;
  std::string_view symbol;
  std::string_view version;
};

struct missing_version {
  std::uint32_t from = 0;
  std::uint32_t target = no_object;  // the object named by the verneed file
  std::string_view file;     // the verneed file name
  std::string_view version;  // the needed version's name
  bool weak = false;
};

// One verneed entry of a loaded object, as `ldd -v` lists them under
// "Version information:" (rtld.c): the file and version it needs, and the
// object that provides it, if that object is loaded and defines the version.
struct needed_version {
  std::uint32_t from = 0;
  std::uint32_t target = no_object;  // the loaded object named by the verneed file
  std::string_view file;     // the verneed file name (vn_file)
  std::string_view version;  // the needed version's name
  bool weak = false;         // VER_FLG_WEAK: ldd prints "[WEAK] "
  bool satisfied = false;    // target is loaded and defines the version
};

struct interposition {
  std::string_view symbol;
  std::vector<std::uint32_t> definers;  // in scope order; definers[0] wins
};

struct dynamic_link {
  std::vector<loaded_object> objects;      // load order (ld.so's l_next chain); [0] = main
  std::vector<std::uint32_t> search_list;  // global scope (objects in the BFS), in order
  std::vector<symbol_binding> bindings;           // every distinct (from, to, symbol, version)
  std::vector<undefined_reference> undefined;
  std::vector<missing_version> missing_versions;
  std::vector<needed_version> version_needs;  // every verneed entry of the global scope (ldd -v)
  std::vector<std::uint32_t> unused;       // ldd -u: direct NEEDED of main that main never binds to
  std::vector<interposition> interposed;   // names defined by several objects in scope
  std::vector<std::string> warnings;       // cache errors and the like
  std::size_t lookups = 0;                 // symbol lookups performed
  std::size_t relocations = 0;             // relocations with a symbol examined
  std::size_t index_bytes = 0;             // memory of the definition index
  std::size_t index_entries = 0;           // definitions in it
  // The bytes that the string_views above point into (shared with the
  // object_cache, if one was given).
  std::vector<std::shared_ptr<const mapped_file>> files;
  // The device and inode of every file the link read (the program, the
  // closure, the interpreter): what object_cache::end_use takes.
  std::vector<std::pair<std::uint64_t, std::uint64_t>> file_ids;

  bool any_missing() const noexcept {
    for (const auto& o : objects)
      if (!o.found()) return true;
    return false;
  }
};

}  // namespace resolve
}  // namespace v0
}  // namespace linkscope
