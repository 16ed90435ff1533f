// linkscope/macho/linkage.hpp — what a dynamic loader needs of one Mach-O
// image, read once: the runtime-linking summary of file.hpp, binds.hpp,
// exports.hpp and symbols.hpp, with no variant left in its type.
//
// dyld (and linkscope's emulation of it, resolve/dyld/) asks an image:
//   - what it is: filetype (MH_EXECUTE, MH_DYLIB, MH_BUNDLE), cputype, and
//     the header flags dyld reads (MH_TWOLEVEL: ordinals are meaningful;
//     MH_WEAK_DEFINES: it takes part in weak coalescing; MH_BINDS_TO_WEAK);
//   - its own install name and versions (LC_ID_DYLIB);
//   - the dylibs it links (LC_LOAD_DYLIB, LC_LOAD_WEAK_DYLIB,
//     LC_REEXPORT_DYLIB, LC_LOAD_UPWARD_DYLIB, LC_LAZY_LOAD_DYLIB, in
//     command order: entry i has library ordinal i + 1, as llvm-objdump
//     numbers them) with the compatibility version each asks for; dyld
//     itself skips LC_LAZY_LOAD_DYLIB, neither loading nor counting it
//     (resolve/dyld/image.hpp);
//   - its LC_RPATH entries, in command order;
//   - the minimum OS and SDK of its first platform (LC_BUILD_VERSION or
//     LC_VERSION_MIN_*);
//   - its imports (bind opcodes or chained-fixup imports, binds.hpp);
//   - its exports: the export trie (exports.hpp: looked up with
//     find_export), or, for an old image without one, the nlist symbols
//     that are external definitions (N_SECT | N_EXT, dyld's "old slow way").
// In a universal file the slice of the wanted cputype is read
// (`read_linkage_slice`); every check is the one of the reader it comes from.
#pragma once

#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "linkscope/core/bytes.hpp"
#include "linkscope/core/error.hpp"
#include "linkscope/macho/binds.hpp"
#include "linkscope/macho/exports.hpp"
#include "linkscope/macho/fat.hpp"
#include "linkscope/macho/file.hpp"
#include "linkscope/macho/symbols.hpp"
#include "linkscope/macho/types.hpp"

namespace linkscope {
inline namespace v0 {
namespace macho {

// One dylib the image links (a load command), as a loader reads it.
struct linked_dylib {
  std::string_view install_name;
  dylib_kind kind = dylib_kind::load;
  u32 compatibility = 0;  // the compatibility version it asks for (packed xxxx.yy.zz)
  u32 current = 0;        // the current version it was linked against
  u64 offset = 0;         // of the load command
};

// An nlist export of an image without an export trie.
struct nlist_export {
  std::string_view name;
  bool weak = false;
};

struct linkage {
  u32 cputype = 0;
  u32 cpusubtype = 0;
  u32 filetype = 0;
  bool is64 = false;
  bool two_level = false;      // MH_TWOLEVEL
  bool weak_defines = false;   // MH_WEAK_DEFINES
  bool binds_to_weak = false;  // MH_BINDS_TO_WEAK
  // LC_ID_DYLIB
  bool has_id = false;
  std::string_view install_name;
  u32 current_version = 0;
  u32 compatibility_version = 0;
  std::vector<linked_dylib> dylibs;       // ordinal i + 1 is dylibs[i]
  std::vector<std::string_view> rpaths;   // LC_RPATH, in command order
  bool has_platform = false;
  u32 minos = 0, sdk = 0;                 // of the first platform command
  bool has_trie = false;
  byte_view trie;                         // the export trie, when has_trie
  std::vector<nlist_export> nlist_exports;  // only when there is no trie
  std::vector<import_entry> imports;

  bool is_executable() const noexcept { return filetype == MH_EXECUTE; }
  bool is_dylib() const noexcept { return filetype == MH_DYLIB; }
  bool is_bundle() const noexcept { return filetype == MH_BUNDLE; }
};

template <class MT>
result<linkage> read_linkage(const file<MT>& f) {
  linkage out;
  out.cputype = f.cputype();
  out.cpusubtype = f.cpusubtype();
  out.filetype = f.filetype();
  out.is64 = MT::is64;
  out.two_level = (f.flags() & MH_TWOLEVEL) != 0;
  out.weak_defines = (f.flags() & MH_WEAK_DEFINES) != 0;
  out.binds_to_weak = (f.flags() & MH_BINDS_TO_WEAK) != 0;
  LINKSCOPE_TRY(id, f.install_name());
  if (id) {
    out.has_id = true;
    out.install_name = id->name;
    out.current_version = id->current_version.raw;
    out.compatibility_version = id->compatibility_version.raw;
  }
  LINKSCOPE_TRY(dylibs, f.dylibs());
  out.dylibs.reserve(dylibs.size());
  for (const dylib_ref& d : dylibs)
    out.dylibs.push_back({d.name, d.kind, d.compatibility_version.raw, d.current_version.raw, d.offset});
  LINKSCOPE_TRY(rpaths, f.rpaths());
  out.rpaths = std::move(rpaths);
  LINKSCOPE_TRY(platforms, f.platforms());
  if (!platforms.empty()) {
    out.has_platform = true;
    out.minos = platforms.front().minos.raw;
    out.sdk = platforms.front().sdk.raw;
  }
  LINKSCOPE_TRY(trie, f.export_trie());
  if (trie) {
    out.has_trie = true;
    out.trie = *trie;
  } else {
    LINKSCOPE_CHECK(for_each_nlist(f, [&](const nlist_entry& e) {
      if (!e.is_stab() && e.is_external() && e.type() == N_SECT) out.nlist_exports.push_back({e.name, e.weak_def()});
      return true;
    }));
  }
  LINKSCOPE_TRY(imports, macho::imports(f));
  out.imports = std::move(imports);
  return out;
}

// Read a thin image of any variant.
result<linkage> read_linkage(byte_view image);
// Read `bytes` (a thin image or a universal file): of a universal file, the
// slice of `cputype` (any subtype; 0: the first slice). A universal file
// without that slice is errc::not_found; a thin image of another cputype
// (when cputype != 0) too.
result<linkage> read_linkage_slice(byte_view bytes, u32 cputype);

// Both are compiled once in src/ in compiled mode (core/config.hpp): they
// instantiate the reader for every Mach-O variant.
#if LINKSCOPE_DEFINITIONS
LINKSCOPE_FUNC result<linkage> read_linkage(byte_view image) {
  return visit_macho(image, [](const auto& f) -> result<linkage> { return read_linkage(f); });
}

LINKSCOPE_FUNC result<linkage> read_linkage_slice(byte_view bytes, u32 cputype) {
  if (is_fat(bytes)) {
    LINKSCOPE_TRY(fat, fat_file::open(bytes));
    for (const fat_slice& s : fat.slices())
      if (cputype == 0 || s.cputype == cputype) return read_linkage(s.bytes);
    return bytes.fail(errc::not_found, 0, "no slice of the wanted architecture in the universal file");
  }
  LINKSCOPE_TRY(l, read_linkage(bytes));
  if (cputype != 0 && l.cputype != cputype) return bytes.fail(errc::not_found, 4, "Mach-O image of another architecture");
  return std::move(l);
}
#endif  // LINKSCOPE_DEFINITIONS

}  // namespace macho
}  // namespace v0
}  // namespace linkscope
