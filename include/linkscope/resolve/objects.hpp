// linkscope/resolve/objects.hpp — the ELF objects inside a path.
//
// A path on a link line is an ELF object, a shared library, or an archive of
// objects (regular or thin). `for_each_elf_object(path, f)` opens it once and
// calls f(object) for the file itself or for each archive member that is an
// ELF file, with the display name lld and GNU ld use, `lib.a(member.o)`.
// Members that are not ELF (a stray text file, a COFF object) are reported
// through `skipped`, never silently treated as empty.
//
// The object's bytes are views into the mapped archive (or into the thin
// member's own mapping) and are valid only during the callback.
#pragma once

#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "linkscope/ar/archive.hpp"
#include "linkscope/core/bytes.hpp"
#include "linkscope/core/error.hpp"
#include "linkscope/core/mapped_file.hpp"
#include "linkscope/elf/file.hpp"
#include "linkscope/elf/source.hpp"
#include "linkscope/elf/types.hpp"

namespace linkscope {
inline namespace v0 {
namespace resolve {

enum class object_kind : u8 { relocatable, shared, executable, other };

struct elf_object {
  std::string_view display_name;  // "path" or "path(member)"
  std::string_view member_name;   // empty for a plain file
  byte_view bytes;
  object_kind kind = object_kind::other;
  u64 member_offset = 0;          // header offset in the archive (0 for a plain file)
};

struct skipped_member {
  std::string name;
  error why;
};

// How a linker takes an ELF file, from elf::identify: a position-independent
// executable (readelf's "DYN (Position-Independent Executable file)") is an
// executable, any other ET_DYN a shared library.
inline object_kind classify_elf(byte_view bytes) noexcept {
  const auto id = elf::identify(bytes);
  if (!id) return object_kind::other;
  switch (id->kind) {
    case elf::file_kind::relocatable: return object_kind::relocatable;
    case elf::file_kind::shared: return object_kind::shared;
    case elf::file_kind::executable:
    case elf::file_kind::pie: return object_kind::executable;
    case elf::file_kind::core:
    case elf::file_kind::other: return object_kind::other;
  }
  return object_kind::other;
}

// Visit the ELF objects of `path`. f(const elf_object&) may return bool (false stops).
template <class F>
result<void> for_each_elf_object(const std::string& path, F&& f, std::vector<skipped_member>* skipped = nullptr,
                                 ar::thin_options thin = {}) {
  auto call = [&](const elf_object& object) -> bool {
    if constexpr (std::is_same_v<std::invoke_result_t<F&, const elf_object&>, bool>)
      return f(object);
    else {
      f(object);
      return true;
    }
  };
  LINKSCOPE_TRY(file, mapped_file::open(path));
  const byte_view bytes = file.bytes();
  if (!ar::archive::is_archive(bytes)) {
    if (!elf::is_elf(bytes)) return bytes.fail(errc::bad_magic, 0, "neither an ELF file nor an archive");
    call(elf_object{path, {}, bytes, classify_elf(bytes), 0});
    return ok();
  }
  LINKSCOPE_TRY(archive, ar::archive::open(bytes));
  std::string display;
  for (const result<ar::member>& m : archive.members()) {
    if (!m) return m.error();
    display.assign(path).append("(").append(m->name).append(")");
    mapped_file external;
    byte_view data = m->data;
    if (m->external) {
      auto opened = ar::open_thin_member(path, file, *m, thin);
      if (!opened) {
        if (skipped != nullptr) skipped->push_back({std::string(m->name), opened.error()});
        continue;
      }
      external = std::move(*opened);
      data = external.bytes();
    }
    if (!elf::is_elf(data)) {
      if (skipped != nullptr)
        skipped->push_back({std::string(m->name), error{errc::bad_magic, m->data_offset, "archive member is not an ELF object"}});
      continue;
    }
    if (!call(elf_object{display, m->name, data, classify_elf(data), m->header_offset})) break;
  }
  return ok();
}

// The table a linker reads: .symtab of a relocatable object, .dynsym of a
// shared library or executable.
inline elf::symbol_table_kind linking_table(const elf_object& object) noexcept {
  return object.kind == object_kind::relocatable ? elf::symbol_table_kind::static_ : elf::symbol_table_kind::dynamic;
}

// Visit the symbols of one object's `which` table. An error's offset is
// already one in the file a user can open: a member's bytes carry their
// offset in the archive (byte_view::base), and a thin member's are its own
// file's.
template <class F>
result<void> for_each_object_symbol(const elf_object& object, elf::symbol_table_kind which, F&& f) {
  return elf::symbols_source(object.bytes, which).for_each_symbol(std::forward<F>(f));
}
template <class F>
result<void> for_each_object_symbol(const elf_object& object, F&& f) {
  return for_each_object_symbol(object, linking_table(object), std::forward<F>(f));
}

// for_each_elf_object for a resolver that reads each object and can fail on
// one: f(const elf_object&) returns result<void>, and the first failure stops
// the walk and comes back as a diagnostic naming the input — `path` and, for an
// archive member, the member — so that no caller re-runs anything to learn
// which file it was.
template <class F>
result<void, diagnostic> visit_elf_objects(const std::string& path, F&& f, std::vector<skipped_member>* skipped = nullptr,
                                           ar::thin_options thin = {}) {
  result<void> failed = ok();
  std::string member;
  auto walked = for_each_elf_object(
      path,
      [&](const elf_object& object) {
        failed = f(object);
        if (failed) return true;
        member = std::string(object.member_name);
        return false;
      },
      skipped, thin);
  if (!walked) return diagnostic(walked.error(), path);
  if (!failed) return diagnostic(failed.error(), path, std::move(member));
  return {};
}

namespace detail {
// A strong definition, as a linker and ld.so take it: GLOBAL or GNU_UNIQUE,
// defined, not common, not a version-definition symbol; from a loadable
// object, exported (default or protected visibility). The Mach-O and PE
// symbol models map onto the same fields (a private extern is hidden).
inline bool strong_definition(const symbol& s, object_kind from) noexcept {
  if (!s.defined || s.kind == symbol_kind::section || s.kind == symbol_kind::file || s.kind == symbol_kind::common)
    return false;
  if (s.bind != ::linkscope::binding::global && s.bind != ::linkscope::binding::unique) return false;
  if (elf::is_version_definition(s)) return false;  // GLIBC_2.15 in libc and libm: a version, not a definition
  if (from != object_kind::relocatable && s.vis != visibility::default_ && s.vis != visibility::protected_) return false;
  return true;
}
}  // namespace detail

}  // namespace resolve
}  // namespace v0
}  // namespace linkscope
