// linkscope/resolve/definitions.hpp — what a file defines and what a shared
// library exports, by name, on every platform linkscope-check walks: the
// evidence behind "statically linked" and "duplicates across packages"
// (resolve/package_findings.hpp).
//
//   exported_strong(path)   the strong definitions of code and data a shared
//                           library exports, sorted, once each:
//     ELF      .dynsym: GLOBAL, defined, default or protected visibility, not
//              common, func/object/tls/ifunc; not STB_GNU_UNIQUE (C++ vague
//              linkage objects every user of a header carries, which ld.so
//              unifies), not _init/_fini (crti.o's entry points);
//     Mach-O   the export trie (dyld's view; LC_DYLD_EXPORTS_TRIE or
//              LC_DYLD_INFO): regular and thread-local entries that are
//              neither re-exports nor weak definitions; an image without a
//              trie gives its external N_SECT nlist entries that are not
//              N_WEAK_DEF. Every slice of a universal file;
//     PE       the export directory's named entries, forwarders left out
//              (they name another DLL's definition).
//   defined_names(path)     every definition of code or data the file holds,
//                           any binding (a static copy linked with hidden
//                           visibility ends up local): ELF .dynsym and
//                           .symtab; Mach-O every N_SECT nlist entry (locals
//                           and private externs included) and the trie; PE its
//                           exports and the COFF symbol table mingw's ld keeps.
//   archive_definitions(path)  per member of a static archive of Mach-O or
//                           COFF objects (ELF members have resolve/absorb.hpp),
//                           the global definitions of code and data. Import
//                           members (a mingw import library's thunks and
//                           __imp_ pointers, short import records) define
//                           nothing here: they are how a DLL is linked, not a
//                           copy of it.
// A file that cannot be read gives nothing: callers judge evidence, and an
// unreadable library holds none they can see.
#pragma once

#include <algorithm>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "linkscope/ar/archive.hpp"
#include "linkscope/coff/object.hpp"
#include "linkscope/coff/pe.hpp"
#include "linkscope/core/config.hpp"
#include "linkscope/core/mapped_file.hpp"
#include "linkscope/macho/fat.hpp"
#include "linkscope/macho/file.hpp"
#include "linkscope/macho/linkage.hpp"
#include "linkscope/macho/symbols.hpp"
#include "linkscope/resolve/foreign_objects.hpp"
#include "linkscope/resolve/objects.hpp"

namespace linkscope {
inline namespace v0 {
namespace resolve {

std::vector<std::string> exported_strong(const std::string& path);
std::unordered_set<std::string> defined_names(const std::string& path);

struct member_definitions {
  std::string member;              // the member's name
  std::vector<std::string> names;  // its global definitions, sorted, once each
};
std::vector<member_definitions> archive_definitions(const std::string& path);

#if LINKSCOPE_DEFINITIONS
namespace detail {

inline bool code_or_data(const symbol& s) noexcept {
  return s.kind == symbol_kind::func || s.kind == symbol_kind::object || s.kind == symbol_kind::tls ||
         s.kind == symbol_kind::ifunc;
}

inline void sort_unique(std::vector<std::string>& names) {
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
}

// f(bytes) for the file, or for each slice of a universal file, that is of
// the kind `is_kind` asks for (a thin Mach-O image, an archive).
template <class Is, class F>
void for_each_slice(byte_view bytes, Is&& is_kind, F&& f) {
  if (macho::is_fat(bytes)) {
    auto fat = macho::fat_file::open(bytes);
    if (!fat) return;
    for (const macho::fat_slice& s : fat->slices())
      if (is_kind(s.bytes)) f(s.bytes);
    return;
  }
  if (is_kind(bytes)) f(bytes);
}

// f(thin image bytes) for a Mach-O file: the image, or each slice of a universal file.
template <class F>
void for_each_macho_image(byte_view bytes, F&& f) {
  for_each_slice(bytes, [](byte_view b) { return macho::is_macho(b); }, f);
}

// A Mach-O image's exports as dyld sees them (see the top of this file).
inline void macho_exports(byte_view image, bool strong_only, std::vector<std::string>& out) {
  auto l = macho::read_linkage(image);
  if (!l) return;
  if (l->has_trie) {
    auto walked = macho::for_each_export(l->trie, [&](const macho::export_entry& e) {
      if (e.reexport() || (strong_only && e.weak_definition())) return;
      if (e.kind() != macho::export_kind::regular && e.kind() != macho::export_kind::thread_local_) return;
      out.emplace_back(e.name);
    });
    (void)walked;  // a malformed trie: the names read so far
    return;
  }
  for (const auto& e : l->nlist_exports)
    if (!strong_only || !e.weak) out.emplace_back(e.name);
}

}  // namespace detail

LINKSCOPE_FUNC std::vector<std::string> exported_strong(const std::string& path) {
  std::vector<std::string> out;
  auto file = mapped_file::open(path);
  if (!file) return out;
  const byte_view bytes = file->bytes();
  if (elf::is_elf(bytes)) {
    auto walked = visit_elf_objects(path, [&](const elf_object& object) -> result<void> {
      if (object.kind != object_kind::shared) return ok();
      return for_each_object_symbol(object, elf::symbol_table_kind::dynamic, [&](const symbol& s) {
        if (!detail::strong_definition(s, object.kind) || s.bind == ::linkscope::binding::unique) return;
        if (s.name == "_init" || s.name == "_fini") return;
        if (detail::code_or_data(s)) out.emplace_back(s.name);
      });
    });
    (void)walked;  // an unreadable library exports nothing we can see
  } else if (macho::is_macho(bytes) || macho::is_fat(bytes)) {
    detail::for_each_macho_image(bytes, [&](byte_view image) { detail::macho_exports(image, true, out); });
  } else if (pe::image::is_pe(bytes)) {
    auto image = pe::image::parse(bytes);
    if (image) {
      auto exports = image->exports();
      if (exports)
        for (const auto& e : *exports)
          if (!e.name.empty() && e.forwarder.empty()) out.emplace_back(e.name);
    }
  }
  detail::sort_unique(out);
  return out;
}

LINKSCOPE_FUNC std::unordered_set<std::string> defined_names(const std::string& path) {
  std::unordered_set<std::string> out;
  auto file = mapped_file::open(path);
  if (!file) return out;
  const byte_view bytes = file->bytes();
  auto add = [&](const symbol& s) {
    if (s.defined && detail::code_or_data(s)) out.emplace(s.name);
  };
  if (elf::is_elf(bytes)) {
    auto walked = visit_elf_objects(path, [&](const elf_object& object) -> result<void> {
      for (auto which : {elf::symbol_table_kind::dynamic, elf::symbol_table_kind::static_}) {
        auto r = for_each_object_symbol(object, which, add);
        (void)r;  // a table that is absent or bad: the other one still counts
      }
      return ok();
    });
    (void)walked;
  } else if (macho::is_macho(bytes) || macho::is_fat(bytes)) {
    detail::for_each_macho_image(bytes, [&](byte_view image) {
      auto r = macho::symbols_source(image).for_each_symbol(add);
      (void)r;
      std::vector<std::string> exported;
      detail::macho_exports(image, false, exported);
      for (auto& name : exported) out.insert(std::move(name));
    });
  } else if (pe::image::is_pe(bytes)) {
    auto image = pe::image::parse(bytes);
    if (!image) return out;
    if (auto exports = image->exports())
      for (const auto& e : *exports)
        if (!e.name.empty() && e.forwarder.empty()) out.emplace(e.name);
    if (image->has_symbol_table()) {
      auto table = coff::standard_object::parse(bytes, image->coff_header_offset());
      if (table) {
        auto r = table->for_each_symbol(add);
        (void)r;
      }
    }
  }
  return out;
}

LINKSCOPE_FUNC std::vector<member_definitions> archive_definitions(const std::string& path) {
  std::vector<member_definitions> out;
  auto file = mapped_file::open(path);
  if (!file) return out;
  auto read_archive = [&](byte_view bytes) {
    auto archive = ar::archive::open(bytes);
    if (!archive) return;
    auto walked = archive->for_each_member([&](const ar::member& m) {
      member_definitions d;
      d.member = std::string(m.name);
      auto add = [&](const symbol& s) {
        if (s.defined && s.bind != ::linkscope::binding::local && detail::code_or_data(s) &&
            !import_thunk_name(s.name))
          d.names.emplace_back(s.name);
      };
      if (macho::is_macho(m.data)) {
        auto r = macho::symbols_source(m.data).for_each_symbol(add);
        (void)r;
      } else if (!elf::is_elf(m.data)) {
        auto r = coff::visit_object(m.data, [&](const auto& object) { return object.for_each_symbol(add); });
        (void)r;  // a short import record, or no object: no definitions
      }
      detail::sort_unique(d.names);
      if (!d.names.empty()) out.push_back(std::move(d));
    });
    (void)walked;
  };
  detail::for_each_slice(file->bytes(), [](byte_view b) { return ar::archive::is_archive(b); }, read_archive);
  return out;
}

#endif  // LINKSCOPE_DEFINITIONS

}  // namespace resolve
}  // namespace v0
}  // namespace linkscope
