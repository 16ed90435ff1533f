// linkscope/resolve/foreign_objects.hpp — the Mach-O and COFF objects inside
// a path: the counterpart of resolve/objects.hpp for the formats that are not
// ELF, used where a question takes archives of any platform
// (resolve/absorb.hpp, resolve/duplicates.hpp, resolve/definitions.hpp).
//
//   macho_slice(bytes, arch)     the thin image of a Mach-O file for an
//                                architecture ("" = the file, or the first
//                                slice of a universal one)
//   for_each_foreign_object(path, cputype, f, skipped)
//                                f(name, bytes) for the file itself or each
//                                archive member that is a Mach-O (of that
//                                cputype; 0 = any) or COFF object; a
//                                universal archive gives its cputype slice.
//                                Import members of a mingw import library,
//                                members of another architecture and what is
//                                no object go to `skipped`, with the reason.
//   for_each_foreign_symbol(bytes, f)
//                                the symbols of one such object, in the one
//                                symbol model
//   is_foreign_input(path)       whether a path is one of these (else ELF's)
//   import_thunk_name(name)      a name only an import member defines
//                                (__imp_, _head_, the import descriptors)
//
// Bytes are views into the path's mapping, valid during the callback.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "linkscope/ar/archive.hpp"
#include "linkscope/coff/object.hpp"
#include "linkscope/core/config.hpp"
#include "linkscope/core/error.hpp"
#include "linkscope/core/mapped_file.hpp"
#include "linkscope/elf/types.hpp"
#include "linkscope/macho/fat.hpp"
#include "linkscope/macho/linkage.hpp"
#include "linkscope/macho/symbols.hpp"
#include "linkscope/resolve/file_format.hpp"
#include "linkscope/resolve/objects.hpp"

namespace linkscope {
inline namespace v0 {
namespace resolve {

// Import members of a mingw import library: how a DLL is linked, no copy of it.
inline bool import_thunk_name(std::string_view name) noexcept {
  return name.starts_with("__imp_") || name.starts_with("_head_") || name.starts_with("__head_") ||
         name.starts_with("__IMPORT_DESCRIPTOR_") || name.starts_with("__NULL_IMPORT_DESCRIPTOR") ||
         name.find("_iname") != std::string_view::npos;
}


// Is `path` Mach-O, PE or COFF: a file of those formats, or an archive of
// Mach-O or COFF objects? (Anything else, unreadable files included, is the
// ELF walk's to read or to reject.)
inline bool is_foreign_input(const std::string& path) {
  const file_format format = sniff_file(path);
  if (format == file_format::archive) {
    auto file = mapped_file::open(path);
    const file_format members = file ? archive_members(file->bytes()) : file_format::unknown;
    return members == file_format::macho || members == file_format::coff;
  }
  return format == file_format::macho || format == file_format::macho_universal || format == file_format::pe ||
         format == file_format::coff;
}

// The Mach-O image of `bytes` for `arch` ("" = a thin file, or the first
// slice of a universal one).
result<byte_view> macho_slice(byte_view bytes, std::string_view arch);

#if LINKSCOPE_DEFINITIONS
LINKSCOPE_FUNC result<byte_view> macho_slice(byte_view bytes, std::string_view arch) {
  if (!macho::is_fat(bytes)) {
    if (arch.empty()) return bytes;
    LINKSCOPE_TRY(l, macho::read_linkage(bytes));
    if (arch != macho::arch_name(l.cputype, l.cpusubtype))
      return bytes.fail(errc::not_found, 0, "a thin Mach-O file of another architecture than the one asked for");
    return bytes;
  }
  LINKSCOPE_TRY(fat, macho::fat_file::open(bytes));
  if (fat.slices().empty()) return bytes.fail(errc::malformed, 0, "universal file without slices");
  if (arch.empty()) return fat.slices().front().bytes;
  auto slice = fat.find(arch);
  if (!slice) return bytes.fail(errc::not_found, 0, "no slice for the architecture asked for");
  return slice->bytes;
}
#endif  // LINKSCOPE_DEFINITIONS

// f(member name, bytes) for each Mach-O or COFF object of `path` (an object,
// or an archive of them; universal files give their `cputype` slice, 0 =
// any). Members of another architecture, import members and what is no
// object go to `skipped`.
template <class F>
result<void, diagnostic> for_each_foreign_object(const std::string& path, u32 cputype, F&& f,
                                                 std::vector<skipped_member>* skipped) {
  auto file = mapped_file::open(path);
  if (!file) return diagnostic(file.error(), path);
  byte_view bytes = file->bytes();
  auto skip = [&](std::string_view name, error why) {
    if (skipped != nullptr) skipped->push_back({std::string(name), why});
  };
  auto one = [&](std::string_view name, byte_view object) -> result<void> {
    if (macho::is_macho(object)) {
      auto l = macho::read_linkage(object);
      if (!l) return l.error();
      if (cputype != 0 && l->cputype != cputype) {
        skip(name, object.fail(errc::unsupported, 0, "a member for another architecture"));
        return ok();
      }
      return f(name, object);
    }
    if (coff::is_short_import(object) || elf::is_elf(object)) {
      skip(name, object.fail(errc::unsupported, 0, "not a Mach-O or COFF object (an import member, or ELF)"));
      return ok();
    }
    // A mingw import library's members (thunks, __imp_ pointers, the
    // descriptor heads) are how a DLL is linked, not a copy of its code.
    bool import_member = false;
    auto probe = coff::visit_object(object, [&](const auto& o) {
      return o.for_each_symbol([&](const symbol& sym) {
        if (sym.defined && sym.is_global() && import_thunk_name(sym.name)) import_member = true;
      });
    });
    if (!probe || !*probe) {
      skip(name, !probe ? probe.error() : probe->error());
      return ok();
    }
    if (import_member) {
      skip(name, object.fail(errc::unsupported, 0, "an import member (how a DLL is linked, not a copy of its code)"));
      return ok();
    }
    return f(name, object);
  };
  if (macho::is_fat(bytes)) {
    auto fat = macho::fat_file::open(bytes);
    if (!fat) return diagnostic(fat.error(), path);
    bool found = false;
    for (const auto& slice : fat->slices()) {
      if (cputype != 0 ? slice.cputype != cputype : found) continue;
      found = true;
      bytes = slice.bytes;
    }
    if (!found) return diagnostic(bytes.fail(errc::not_found, 0, "no slice for the architecture asked for"), path);
  }
  if (!ar::archive::is_archive(bytes)) {
    if (auto r = one(path, bytes); !r) return diagnostic(r.error(), path);
    return {};
  }
  auto archive = ar::archive::open(bytes);
  if (!archive) return diagnostic(archive.error(), path);
  std::string failed_member;
  result<void> failed = ok();
  auto walked = archive->for_each_member([&](const ar::member& m) -> bool {
    failed = one(m.name, m.data);
    if (failed) return true;
    failed_member = std::string(m.name);
    return false;
  });
  if (!walked) return diagnostic(walked.error(), path);
  if (!failed) return diagnostic(failed.error(), path, failed_member);
  return {};
}

// f(symbol) for every symbol of a Mach-O or COFF object.
template <class F>
result<void> for_each_foreign_symbol(byte_view object, F&& f) {
  if (macho::is_macho(object)) return macho::symbols_source(object).for_each_symbol(f);
  auto r = coff::visit_object(object, [&](const auto& o) { return o.for_each_symbol(f); });
  if (!r) return r.error();
  return *r;
}

}  // namespace resolve
}  // namespace v0
}  // namespace linkscope
