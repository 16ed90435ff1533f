// linkscope/resolve/static_load.hpp — the load phase of the static link
// emulation (resolve/static.hpp): the global symbols of a relocatable object
// (.symtab from sh_info on, SHN_XINDEX through SHT_SYMTAB_SHNDX, COMDAT groups
// deduplicated first-file-wins), the dynamic symbols of a shared library that
// take part in resolution, and static_loader, which opens the inputs and the
// archives (armap, or the members' own symbol tables when there is none) and
// keeps every mapping alive in the result.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "linkscope/ar/archive.hpp"
#include "linkscope/ar/armap.hpp"
#include "linkscope/core/config.hpp"
#include "linkscope/core/error.hpp"
#include "linkscope/core/mapped_file.hpp"
#include "linkscope/elf/dynamic.hpp"
#include "linkscope/elf/file.hpp"
#include "linkscope/elf/symbols.hpp"
#include "linkscope/elf/types.hpp"
#include "linkscope/elf/versions.hpp"
#include "linkscope/resolve/link_line.hpp"
#include "linkscope/resolve/static_report.hpp"
#include "linkscope/symbols/index.hpp"

namespace linkscope {
inline namespace v0 {
namespace resolve {
namespace detail {

// One global symbol of an object or shared library, as the resolvers see it.
struct input_symbol {
  std::string_view name;
  std::uint64_t value = 0;
  std::uint8_t binding = 0;     // STB_*
  std::uint8_t visibility = 0;  // STV_*
  enum : std::uint8_t { undefined, defined, common, discarded, absolute } kind = undefined;
};

// COMDAT group signatures seen so far (first file wins).
using comdat_index = keyed_index<std::string_view>;

// Read the global symbols of a relocatable object in symbol-table order.
// With `comdats`, SHT_GROUP COMDAT groups are deduplicated (first file wins)
// and symbols defined in a discarded group come back as `discarded`.
template <class ET>
result<void> read_object_symbols(const elf::file<ET>& f, comdat_index* comdats,
                                 std::vector<input_symbol>& out, std::vector<std::uint8_t>& discarded) {
  out.clear();
  LINKSCOPE_TRY(symtab, elf::read_symtab(f));
  if (symtab.empty()) return ok();
  LINKSCOPE_TRY(first_global, elf::first_global(f, symtab));
  discarded.clear();
  bool any_discarded = false;
  if (comdats != nullptr) {
    // A COMDAT group whose signature was seen before is discarded whole, with
    // every symbol defined in its member sections (gABI "Section Groups").
    LINKSCOPE_CHECK(elf::for_each_comdat_group(f, symtab, [&](const elf::comdat_group<ET>& group) {
      if (comdats->insert(group.signature).second) return;
      if (discarded.empty()) discarded.assign(f.section_count(), 0);
      for (const auto index : group.members) discarded[static_cast<std::uint32_t>(index)] = 1;
      any_discarded = any_discarded || !group.members.empty();
    }));
  }
  out.reserve(symtab.size() - first_global);
  for (std::size_t i = first_global; i < symtab.size(); ++i) {
    const auto sym = symtab[i];
    const std::uint8_t bind = sym.st_bind();
    if (bind == elf::STB_LOCAL) continue;
    LINKSCOPE_TRY(name, symtab.name(i));
    // Reserved st_shndx values are read raw; only SHN_XINDEX needs the
    // SHT_SYMTAB_SHNDX table.
    const std::uint32_t raw = sym.raw_shndx();
    std::uint32_t shndx = raw;
    if (raw == elf::SHN_XINDEX) {
      LINKSCOPE_TRY(real, symtab.section_index(i, sym));
      shndx = real;
    }
    input_symbol s;
    s.name = name;
    s.value = sym.st_value;
    s.binding = bind;
    s.visibility = sym.st_visibility();
    if (raw == elf::SHN_UNDEF)
      s.kind = input_symbol::undefined;
    else if (raw == elf::SHN_COMMON || raw == elf::SHN_X86_64_LCOMMON)
      s.kind = input_symbol::common;
    else if (raw >= elf::SHN_LORESERVE && raw != elf::SHN_XINDEX)  // SHN_ABS and other reserved values: no section
      s.kind = input_symbol::absolute;
    else if (any_discarded && shndx < discarded.size() && discarded[shndx])
      s.kind = input_symbol::discarded;
    else
      s.kind = input_symbol::defined;
    out.push_back(s);
  }
  return ok();
}

// The dynamic symbols of a shared library that take part in resolution:
// defined ones with their default (or no) version, and unversioned undefined
// ones. Also returns DT_SONAME.
template <class ET>
result<void> read_shared_symbols(const elf::file<ET>& f, std::vector<input_symbol>& out, std::string_view& soname) {
  out.clear();
  auto dyn = elf::dynamic_info<ET>::read(f);
  if (!dyn) return dyn.error();
  if (dyn->has_soname()) {
    LINKSCOPE_TRY(name, dyn->soname());
    soname = name;
  }
  LINKSCOPE_TRY(dynsym, elf::read_dynsym(f, *dyn));
  if (dynsym.empty()) return ok();
  const std::size_t first_global = elf::linker_first_global(f, dynsym);
  // The versym array (elf/versions.hpp); a file whose version tables do not
  // read is taken unversioned, as before.
  record_array<typename ET::Versym> versym;
  if (auto versions = elf::version_tables<ET>::read(f, *dyn, dynsym.size()); versions && versions->present())
    versym = versions->versym();
  out.reserve(dynsym.size() - first_global);
  for (std::size_t i = first_global; i < dynsym.size(); ++i) {
    const auto sym = dynsym[i];
    const std::uint8_t bind = sym.st_bind();
    if (bind == elf::STB_LOCAL) continue;
    const std::uint16_t ver = versym.empty() ? std::uint16_t{1} : static_cast<std::uint16_t>(versym[i]);
    const std::uint16_t index = elf::versym_index(ver);
    LINKSCOPE_TRY(name, dynsym.name(i));
    input_symbol s;
    s.name = name;
    s.binding = bind;
    s.visibility = sym.st_visibility();
    if (sym.is_undefined()) {
      // lld names a versioned reference name@VER: it matches no archive symbol.
      if (index != elf::VER_NDX_LOCAL && index != elf::VER_NDX_GLOBAL) continue;
      s.kind = input_symbol::undefined;
    } else {
      if (elf::versym_hidden(ver)) continue;  // only name@VER, never plain name
      s.kind = input_symbol::defined;
    }
    out.push_back(s);
  }
  return ok();
}

#if LINKSCOPE_DEFINITIONS
// Opens the inputs of one link and reads their symbols; the extraction
// phase (static_linker) derives from it.
class static_loader {
 protected:
  static_loader(const link_line& line, static_options options, link_diagnostic& diag)
      : line_(line), options_(options), diag_(diag) {
    result_.semantics = options.semantics;
    result_.storage = std::make_shared<std::deque<mapped_file>>();
    result_.made_names = std::make_shared<std::deque<std::string>>();
  }

  struct archive_state {
    file_id file = no_file;
    std::uint32_t input = 0;
    const mapped_file* bytes = nullptr;
    std::string path;
    ar::archive archive;
    std::vector<ar::armap_entry> entries;
    std::unordered_map<std::uint64_t, file_id> loaded;  // member offset -> file id
    bool parsed = false;
  };

  // The path of an input as the emulated linker finds it.
  const std::string& input_path(const link_input& in) const noexcept {
    return options_.semantics == link_semantics::bfd && !in.bfd_path.empty() ? in.bfd_path : in.path;
  }

  error fail(const error& err, std::string subject, std::string detail = {}) {
    diag_ = {err, std::move(subject), std::move(detail)};
    return err;
  }

  file_id add_file(link_file f) {
    result_.files.push_back(std::move(f));
    return static_cast<file_id>(result_.files.size() - 1);
  }

  result<const mapped_file*> open_input(const std::string& path, const std::string& subject) {
    auto file = mapped_file::open(path);
    if (!file) return fail(file.error(), subject);
    result_.storage->push_back(std::move(*file));
    return &result_.storage->back();
  }

  // Open an archive input and read its armap (or, without one, the member
  // symbol tables: lld treats such members as lazy objects).
  result<std::uint32_t> open_archive(std::uint32_t input, const mapped_file* bytes) {
    const link_input& in = line_.inputs[input];
    auto a = ar::archive::open(bytes->bytes());
    if (!a) return fail(a.error(), input_path(in));
    archive_state st;
    st.input = input;
    st.bytes = bytes;
    st.path = input_path(in);
    st.archive = std::move(*a);
    link_file f;
    f.name = st.path;
    f.bfd_name = st.path;
    f.input = input;
    f.role = file_role::archive;
    st.file = add_file(std::move(f));
    auto map = ar::armap::read(st.archive);
    if (!map) return fail(map.error(), st.path);
    if (!map->empty()) {
      st.entries.reserve(map->size());
      auto r = map->for_each([&](const ar::armap_entry& e) { st.entries.push_back(e); });
      if (!r) return fail(r.error(), st.path);
    } else {
      // No index: list each member's defined globals (lld's LazyObjFile).
      std::vector<input_symbol> syms;
      std::vector<std::uint8_t> discarded;
      auto r = st.archive.for_each_member([&](const ar::member& m) -> bool {
        auto data = member_bytes(st, m);
        if (!data) return false;
        auto rr = elf::visit_elf(*data, [&](const auto& elf) -> result<void> {
          return read_object_symbols(elf, nullptr, syms, discarded);
        });
        if (!rr) return true;  // not an object: skipped like ld does for index-less archives
        for (const auto& s : syms)
          if (s.kind != input_symbol::undefined) st.entries.push_back(ar::armap_entry{s.name, m.header_offset, 0});
        return true;
      });
      if (!r) return fail(r.error(), st.path);
      if (diag_.err.code != errc::ok) return diag_.err;
    }
    ++result_.archives;
    archives_.push_back(std::move(st));
    return static_cast<std::uint32_t>(archives_.size() - 1);
  }

  result<byte_view> member_bytes(archive_state& st, const ar::member& m) {
    if (!m.external) return m.data;
    auto path = ar::thin_member_path(st.path, m, options_.thin);
    if (!path) return fail(path.error(), st.path + "(" + std::string(m.name) + ")");
    LINKSCOPE_TRY(file, open_input(*path, st.path + "(" + std::string(m.name) + ")"));
    return file->bytes();
  }

  // Create the file record of member `offset` and return its bytes.
  result<file_id> new_member(std::uint32_t archive_index, std::uint64_t offset, bool whole, byte_view& bytes) {
    archive_state& st = archives_[archive_index];
    auto m = st.archive.member_at(offset);
    if (!m) return fail(m.error(), st.path);
    LINKSCOPE_TRY(data, member_bytes(st, *m));
    bytes = data;
    link_file f;
    f.name = st.path + "(" + std::string(m->name) + ")";
    if (m->external) {
      auto p = ar::thin_member_path(st.path, *m);
      f.bfd_name = p ? *p : f.name;
    } else {
      f.bfd_name = f.name;
    }
    f.input = st.input;
    f.member_offset = offset;
    f.archive = st.file;
    f.role = file_role::member;
    f.whole_archive = whole;
    const file_id id = add_file(std::move(f));
    st.loaded.emplace(offset, id);
    return id;
  }

  // Read an object's globals (an error names the file).
  result<void> read_object(file_id id, byte_view bytes, bool comdat) {
    if (!elf::is_elf(bytes))
      return fail(make_error(errc::bad_magic, 0, "not an ELF relocatable object"), result_.files[id].name);
    auto r = elf::visit_elf(bytes, [&](const auto& f) -> result<void> {
      if (f.type() != elf::ET_REL) return make_error(errc::unsupported, 0, "not an ELF relocatable object");
      return read_object_symbols(f, comdat ? &comdats_ : nullptr, scratch_, discarded_);
    });
    if (!r) return fail(r.error(), result_.files[id].name);
    return ok();
  }

  result<void> read_shared(file_id id, byte_view bytes, std::string_view& soname) {
    auto r = elf::visit_elf(bytes, [&](const auto& f) -> result<void> {
      if (f.type() != elf::ET_DYN) return make_error(errc::unsupported, 0, "not an ELF shared object");
      return read_shared_symbols(f, scratch_, soname);
    });
    if (!r) return fail(r.error(), result_.files[id].name);
    return ok();
  }

  void record(file_id member, file_id reference, std::string label, std::string_view sym) {
    extraction e;
    e.member = member;
    e.reference = reference;
    e.reference_label = std::move(label);
    e.symbol = sym;
    result_.files[member].reason = static_cast<std::uint32_t>(result_.extractions.size());
    result_.extractions.push_back(std::move(e));
  }

  static std::vector<std::string_view> expression_symbols(std::string_view expr) {
    std::vector<std::string_view> out;
    std::size_t i = 0;
    auto is_start = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '.' || c == '$'; };
    auto is_body = [&](char c) { return is_start(c) || (c >= '0' && c <= '9'); };
    while (i < expr.size()) {
      if (expr[i] >= '0' && expr[i] <= '9') {
        while (i < expr.size() && is_body(expr[i])) ++i;  // a number (0x..., 10K ...)
        continue;
      }
      if (is_start(expr[i])) {
        const std::size_t start = i;
        while (i < expr.size() && is_body(expr[i])) ++i;
        std::string_view word = expr.substr(start, i - start);
        if (word != "ABSOLUTE" && word != "ADDR" && word != "ALIGN" && word != "SIZEOF" && word != ".")
          out.push_back(word);
        continue;
      }
      ++i;
    }
    return out;
  }

  const link_line& line_;
  static_options options_;
  link_diagnostic& diag_;
  static_link_result result_;
  comdat_index comdats_;
  std::vector<archive_state> archives_;
  std::vector<input_symbol> scratch_;
  std::vector<std::uint8_t> discarded_;
};
#endif  // LINKSCOPE_DEFINITIONS

}  // namespace detail
}  // namespace resolve
}  // namespace v0
}  // namespace linkscope
