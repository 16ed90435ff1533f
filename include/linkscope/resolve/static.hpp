// linkscope/resolve/static.hpp — which archive members a static link pulls
// in, and why, without linking.
//
// Input: a `link_line` (link_line.hpp). Output: every extracted member with the
// reference that pulled it in (file, symbol), the symbols left undefined, the
// duplicate strong definitions and the members never needed. Two semantics:
//
// lld (ld.lld 14, ELF/Symbols.cpp, InputFiles.cpp, Driver.cpp)
//   - Files are parsed in command-line order after the -u symbols are entered.
//     An archive contributes one *lazy* symbol per armap entry, in armap order.
//     Archive members stay available for the whole link: a reference written
//     after the archive still extracts from it.
//   - An object's globals are resolved defined-first, then its undefined
//     symbols in symbol-table order. An undefined reference to a lazy symbol,
//     or a lazy symbol arriving for an undefined one, extracts the member at
//     once and parses it recursively (depth first). The --why-extract row is
//     written *after* that recursion returns, so rows come in post-order; its
//     reference is the file that referenced the symbol first (lazy arriving)
//     or the referencing file (reference arriving).
//   - A weak undefined reference never extracts; a common symbol does not
//     extract (no --fortran-common in lld 14's default); a shared library's
//     definition (dynsym, default version, not hidden) satisfies a reference
//     and stops later archives; a shared library's unversioned undefined
//     symbols are references like any other. COMDAT groups: the first file
//     to define a signature keeps it, later copies' symbols become undefined.
//   - After all files: --defsym right-hand-side symbols, the entry symbol
//     ("--entry"), then --wrap (__real_/__wrap_) may extract more.
// bfd (GNU ld 2.40, bfd/elflink.c elf_link_add_archive_symbols, ld/ldlang.c)
//   - Strictly left to right. An archive is scanned when reached: its armap is
//     walked in order, a member is loaded when an entry names a currently
//     undefined symbol (or a common one the member *defines*), and the walk
//     repeats while loading added new undefined symbols. A group is rescanned
//     until a pass adds no new undefined symbol. --defsym and -u act first.
//   - The -Map "Archive member included to satisfy reference by file
//     (symbol)" list gives, per member, the armap name and the file that first
//     referenced it (bfd_link_hash_entry u.undef.abfd).
//   - An --as-needed shared library that satisfies no regular reference when
//     it is reached is dropped (its symbols never enter the table).
//
// Names are views into the mapped inputs, which the result keeps alive.
// Lookups go through one open-addressing table over index_hash (the symbol
// map) and each archive's armap; the work is linear in the symbols read.
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
#include "linkscope/core/error.hpp"
#include "linkscope/core/hash.hpp"
#include "linkscope/core/mapped_file.hpp"
#include "linkscope/elf/dynamic.hpp"
#include "linkscope/elf/file.hpp"
#include "linkscope/elf/symbols.hpp"
#include "linkscope/elf/types.hpp"
#include "linkscope/resolve/link_line.hpp"

namespace linkscope {
inline namespace v0 {
namespace resolve {

enum class link_semantics : std::uint8_t { lld, bfd };

constexpr const char* to_string(link_semantics s) noexcept { return s == link_semantics::lld ? "lld" : "bfd"; }

struct static_options {
  link_semantics semantics = link_semantics::lld;
  ar::thin_options thin{};  // which thin-archive member paths may be opened
};

using file_id = std::uint32_t;
inline constexpr file_id no_file = ~file_id{0};

enum class file_role : std::uint8_t { object, member, shared, archive };

constexpr const char* to_string(file_role r) noexcept {
  switch (r) {
    case file_role::object: return "object";
    case file_role::member: return "member";
    case file_role::shared: return "shared";
    case file_role::archive: return "archive";
  }
  return "?";
}

// A file that took part in the link.
struct link_file {
  std::string name;          // as lld prints it: "x.o", "/p/libx.so", "lib.a(m.o)"
  std::string bfd_name;      // as GNU ld prints it (thin members: the member's path)
  std::uint32_t input = 0;   // index into link_line::inputs
  std::uint64_t member_offset = 0;  // member header offset (role member)
  std::uint32_t archive = ~0u;      // file id of the archive (role member)
  std::uint32_t reason = ~0u;       // index into static_link_result::extractions
  file_role role = file_role::object;
  bool whole_archive = false;       // member loaded by --whole-archive
};

// Why a member was loaded.
struct extraction {
  file_id member = no_file;
  file_id reference = no_file;   // the referencing file, or no_file
  std::string reference_label;   // when no_file: "<internal>", "--entry", "--whole-archive", ""
  std::string_view symbol;
};

struct undefined_symbol {
  std::string_view name;
  file_id first_reference = no_file;
};

struct duplicate_definition {
  std::string_view name;
  file_id first = no_file;
  file_id second = no_file;
};

struct static_link_result {
  link_semantics semantics = link_semantics::lld;
  std::vector<link_file> files;
  std::vector<extraction> extractions;       // lld: --why-extract order; bfd: load order
  std::vector<undefined_symbol> undefined;   // strong, referenced by a regular object
  std::vector<duplicate_definition> duplicates;
  std::vector<file_id> unused_members;       // archive members never loaded (file ids of role member)
  std::size_t symbols_resolved = 0;          // symbol resolutions performed (for throughput figures)
  std::size_t archives = 0;

  const std::string& reference_name(const extraction& e) const {
    return e.reference == no_file ? e.reference_label : files[e.reference].name;
  }

  // ld.lld --why-extract text (with --no-demangle).
  std::string why_extract_tsv() const {
    std::string out = "reference\textracted\tsymbol\n";
    for (const extraction& e : extractions) {
      if (e.reference == no_file && e.reference_label == "--whole-archive") continue;
      out.append(reference_name(e)).push_back('\t');
      out.append(files[e.member].name).push_back('\t');
      out.append(e.symbol).push_back('\n');
    }
    return out;
  }

  // GNU ld -Map "Archive member included ..." section (names not demangled).
  std::string map_includes() const {
    std::string out;
    if (extractions.empty()) return out;
    out = "Archive member included to satisfy reference by file (symbol)\n\n";
    for (const extraction& e : extractions) {
      const std::string& member = files[e.member].bfd_name;
      out.append(member);
      std::size_t len = member.size();
      if (len >= 29) {
        out.push_back('\n');
        len = 0;
      }
      while (len < 30) {
        out.push_back(' ');
        ++len;
      }
      if (e.reference != no_file) out.append(files[e.reference].bfd_name).push_back(' ');
      out.push_back('(');
      out.append(e.symbol);
      out.append(")\n");
    }
    return out;
  }

  // The file ids from `member` back to a file given on the command line (or
  // to a reference without a file: -u, --entry ...). The first element is
  // `member`.
  std::vector<file_id> chain(file_id member) const {
    std::vector<file_id> out;
    file_id at = member;
    while (at != no_file && out.size() <= files.size()) {
      out.push_back(at);
      const link_file& f = files[at];
      if (f.reason == ~0u) break;
      at = extractions[f.reason].reference;
    }
    return out;
  }

  // Find a file by its printed name ("lib.a(m.o)"), or no_file.
  file_id find_file(std::string_view name) const {
    for (file_id i = 0; i < files.size(); ++i)
      if (files[i].name == name || files[i].bfd_name == name) return i;
    return no_file;
  }

  // Storage for the mapped inputs the names point into, and for the names
  // the linker makes up (--wrap's __wrap_X / __real_X).
  std::shared_ptr<std::deque<mapped_file>> storage;
  std::shared_ptr<std::deque<std::string>> made_names;
};

namespace detail {

// One global symbol of an object or shared library, as the resolvers see it.
struct input_symbol {
  std::string_view name;
  std::uint64_t value = 0;
  std::uint8_t binding = 0;     // STB_*
  std::uint8_t visibility = 0;  // STV_*
  enum : std::uint8_t { undefined, defined, common, discarded, absolute } kind = undefined;
};

// Open addressing over index_hash; entries keep insertion order.
template <class Entry>
class name_map {
 public:
  std::size_t size() const noexcept { return entries_.size(); }
  Entry& operator[](std::uint32_t i) noexcept { return entries_[i]; }
  const Entry& operator[](std::uint32_t i) const noexcept { return entries_[i]; }

  // Index of `name`, inserting a default entry if absent.
  std::uint32_t insert(std::string_view name, bool& inserted) {
    if ((entries_.size() + 1) * 2 > slots_.size()) grow();
    const std::uint32_t h = index_hash(name);
    std::size_t mask = slots_.size() - 1;
    std::size_t i = h & mask;
    for (;;) {
      const slot s = slots_[i];
      if (s.id == empty) break;
      if (s.hash == h && entries_[s.id].name == name) {
        inserted = false;
        return s.id;
      }
      i = (i + 1) & mask;
    }
    const auto id = static_cast<std::uint32_t>(entries_.size());
    entries_.emplace_back();
    entries_.back().name = name;
    hashes_.push_back(h);
    slots_[i] = slot{h, id};
    inserted = true;
    return id;
  }
  std::uint32_t find(std::string_view name) const noexcept {
    if (slots_.empty()) return empty;
    const std::uint32_t h = index_hash(name);
    std::size_t mask = slots_.size() - 1;
    for (std::size_t i = h & mask;; i = (i + 1) & mask) {
      const slot s = slots_[i];
      if (s.id == empty) return empty;
      if (s.hash == h && entries_[s.id].name == name) return s.id;
    }
  }
  static constexpr std::uint32_t empty = ~std::uint32_t{0};

 private:
  struct slot {
    std::uint32_t hash;
    std::uint32_t id;
  };
  void grow() {
    std::size_t cap = slots_.empty() ? 4096 : slots_.size() * 2;
    slots_.assign(cap, slot{0, empty});
    const std::size_t mask = cap - 1;
    for (std::uint32_t id = 0; id < entries_.size(); ++id) {
      const std::uint32_t h = hashes_[id];
      std::size_t i = h & mask;
      while (slots_[i].id != empty) i = (i + 1) & mask;
      slots_[i] = slot{h, id};
    }
  }
  std::vector<Entry> entries_;
  std::vector<std::uint32_t> hashes_;  // per entry: rehashing never re-reads names
  std::vector<slot> slots_;
};

struct comdat_entry {
  std::string_view name;
};

// Read the global symbols of a relocatable object in symbol-table order.
// With `comdats`, SHT_GROUP COMDAT groups are deduplicated (first file wins)
// and symbols defined in a discarded group come back as `discarded`.
template <class ET>
result<void> read_object_symbols(const elf::file<ET>& f, name_map<comdat_entry>* comdats,
                                 std::vector<input_symbol>& out, std::vector<std::uint8_t>& discarded) {
  out.clear();
  LINKSCOPE_TRY(symtab, elf::read_symtab(f));
  if (symtab.empty()) return ok();
  LINKSCOPE_TRY(symtab_header, f.section(symtab.section()));
  std::size_t first_global = symtab_header.sh_info;
  if (first_global > symtab.size()) return f.bytes().fail(errc::out_of_range, f.section_header_offset(symtab.section()), "symtab sh_info past the symbol count");
  discarded.clear();
  bool any_discarded = false;
  if (comdats != nullptr) {
    const auto count = f.section_count();
    for (std::size_t i = 0; i < count; ++i) {
      const auto sh = f.section_headers()[i];
      if (sh.sh_type != elf::SHT_GROUP) continue;
      LINKSCOPE_TRY(words, f.template table<typename ET::word>(sh, true));
      if (words.empty()) return f.bytes().fail(errc::malformed, sh.sh_offset, "empty SHT_GROUP section");
      const std::uint32_t flags = words[0];
      if ((flags & 1u) == 0) continue;  // GRP_COMDAT
      if (sh.sh_info >= symtab.size())
        return f.bytes().fail(errc::out_of_range, f.section_header_offset(i), "SHT_GROUP signature symbol out of range");
      LINKSCOPE_TRY(signature, symtab.name(static_cast<std::size_t>(sh.sh_info)));
      bool inserted = false;
      comdats->insert(signature, inserted);
      if (inserted) continue;
      if (discarded.empty()) discarded.assign(count, 0);
      for (std::size_t w = 1; w < words.size(); ++w) {
        const std::uint32_t index = words[w];
        if (index >= count) return f.bytes().fail(errc::out_of_range, sh.sh_offset + 4 * w, "SHT_GROUP member section out of range");
        discarded[index] = 1;
        any_discarded = true;
      }
    }
  }
  out.reserve(symtab.size() - first_global);
  for (std::size_t i = first_global; i < symtab.size(); ++i) {
    const auto sym = symtab[i];
    const std::uint8_t bind = elf::st_bind(sym.st_info);
    if (bind == elf::STB_LOCAL) continue;
    LINKSCOPE_TRY(name, symtab.name(i));
    // Reserved st_shndx values are read raw; only SHN_XINDEX needs the
    // SHT_SYMTAB_SHNDX table.
    const std::uint32_t raw = sym.st_shndx;
    std::uint32_t shndx = raw;
    if (raw == 0xffffu) {
      LINKSCOPE_TRY(real, symtab.section_index(i, sym));
      shndx = real;
    }
    input_symbol s;
    s.name = name;
    s.value = sym.st_value;
    s.binding = bind;
    s.visibility = static_cast<std::uint8_t>(sym.st_other & 3);
    if (raw == 0)
      s.kind = input_symbol::undefined;
    else if (raw == 0xfff2u || raw == 0xff02u)  // SHN_COMMON, SHN_X86_64_LCOMMON
      s.kind = input_symbol::common;
    else if (raw >= 0xff00u && raw != 0xffffu)  // SHN_ABS and other reserved values: no section
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
  std::size_t first_global = 1;
  if (dynsym.section() != 0) {
    LINKSCOPE_TRY(sh, f.section(dynsym.section()));
    first_global = sh.sh_info;
    if (first_global > dynsym.size()) first_global = dynsym.size();
    if (first_global == 0) first_global = 1;
  }
  record_array<endian<std::uint16_t, ET::endianness>> versym;
  if (auto found = f.find_section(elf::SHT_GNU_versym)) {
    auto table = f.template table<endian<std::uint16_t, ET::endianness>>(found->second, true);
    if (table && table->size() >= dynsym.size()) versym = *table;
  }
  out.reserve(dynsym.size() - first_global);
  for (std::size_t i = first_global; i < dynsym.size(); ++i) {
    const auto sym = dynsym[i];
    const std::uint8_t bind = elf::st_bind(sym.st_info);
    if (bind == elf::STB_LOCAL) continue;
    const std::uint16_t ver = versym.empty() ? std::uint16_t{1} : static_cast<std::uint16_t>(versym[i]);
    const std::uint16_t index = ver & elf::VERSYM_VERSION;
    LINKSCOPE_TRY(name, dynsym.name(i));
    input_symbol s;
    s.name = name;
    s.binding = bind;
    s.visibility = static_cast<std::uint8_t>(sym.st_other & 3);
    if (sym.st_shndx == elf::SHN_UNDEF) {
      // lld names a versioned reference name@VER: it matches no archive symbol.
      if (index != elf::VER_NDX_LOCAL && index != elf::VER_NDX_GLOBAL) continue;
      s.kind = input_symbol::undefined;
    } else {
      if (ver & elf::VERSYM_HIDDEN) continue;  // only name@VER, never plain name
      s.kind = input_symbol::defined;
    }
    out.push_back(s);
  }
  return ok();
}

}  // namespace detail

// The static-link emulator. One object runs one link. A template only so that
// its body (four ELF variants of every reader) is compiled in the translation
// units that run a link, not in every one that includes the header.
template <class D = void>
class static_linker {
 public:
  static_linker(const link_line& line, static_options options, link_diagnostic& diag)
      : line_(line), options_(options), diag_(diag) {
    result_.semantics = options.semantics;
    result_.storage = std::make_shared<std::deque<mapped_file>>();
    result_.made_names = std::make_shared<std::deque<std::string>>();
  }

  result<static_link_result> run() {
    if (options_.semantics == link_semantics::lld)
      LINKSCOPE_CHECK(run_lld());
    else
      LINKSCOPE_CHECK(run_bfd());
    finish();
    return std::move(result_);
  }

 private:
  // ---- shared state --------------------------------------------------------
  enum class sym_kind : std::uint8_t { placeholder, undefined, lazy, defined, common, shared };
  struct sym_entry {
    std::string_view name;
    file_id file = no_file;        // owner: referencing / defining file; lazy: the archive's file id
    std::uint32_t archive = 0;     // lazy: index into archives_
    std::uint64_t member = 0;      // lazy: member header offset
    sym_kind kind = sym_kind::placeholder;
    std::uint8_t binding = elf::STB_GLOBAL;
    std::uint8_t visibility = elf::STV_DEFAULT;
    bool referenced = false;       // lld: some object referenced it
    bool ref_regular = false;      // referenced by a regular object (not -u / DSO)
    bool absolute = false;
    bool ever_undefined = false;   // bfd: entered the undefs list
    std::uint64_t value = 0;
  };
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

  std::uint32_t symbol(std::string_view name) {
    bool inserted = false;
    return symbols_.insert(name, inserted);
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
      std::vector<detail::input_symbol> syms;
      std::vector<std::uint8_t> discarded;
      auto r = st.archive.for_each_member([&](const ar::member& m) -> bool {
        auto data = member_bytes(st, m);
        if (!data) return false;
        auto rr = elf::visit_elf(*data, [&](const auto& elf) -> result<void> {
          return detail::read_object_symbols(elf, nullptr, syms, discarded);
        });
        if (!rr) return true;  // not an object: skipped like ld does for index-less archives
        for (const auto& s : syms)
          if (s.kind != detail::input_symbol::undefined) st.entries.push_back(ar::armap_entry{s.name, m.header_offset, 0});
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
      return detail::read_object_symbols(f, comdat ? &comdats_ : nullptr, scratch_, discarded_);
    });
    if (!r) return fail(r.error(), result_.files[id].name);
    return ok();
  }

  result<void> read_shared(file_id id, byte_view bytes, std::string_view& soname) {
    auto r = elf::visit_elf(bytes, [&](const auto& f) -> result<void> {
      if (f.type() != elf::ET_DYN) return make_error(errc::unsupported, 0, "not an ELF shared object");
      return detail::read_shared_symbols(f, scratch_, soname);
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

  // ---- lld -----------------------------------------------------------------

  result<void> run_lld() {
    // -u before any file: an Undefined without a file ("<internal>").
    for (const std::string& name : line_.undefined) {
      const std::uint32_t s = symbol(name);
      LINKSCOPE_CHECK(lld_undefined(s, no_file, elf::STB_GLOBAL, elf::STV_DEFAULT, false));
      symbols_[s].referenced = true;
    }
    for (std::uint32_t i = 0; i < line_.inputs.size(); ++i) LINKSCOPE_CHECK(lld_input(i));
    // Symbols named by --defsym expressions (lld: script->referencedSymbols).
    for (const defsym& d : line_.defsyms)
      for (std::string_view name : expression_symbols(d.expression))
        LINKSCOPE_CHECK(lld_undefined(symbol(name), no_file, elf::STB_GLOBAL, elf::STV_DEFAULT, false));
    // The entry symbol, if some file mentions it.
    const std::string entry = line_.entry_symbol();
    if (!entry.empty()) {
      const std::uint32_t s = symbols_.find(entry);
      if (s != symbols_.empty && symbols_[s].kind == sym_kind::lazy) {
        LINKSCOPE_CHECK(lld_extract(s));
        lld_record(s, no_file, "--entry");
      }
    }
    // --defsym symbols are defined from here on (after the files: lld's
    // script symbols do not stop an extraction, they only satisfy references).
    for (const defsym& d : line_.defsyms) {
      sym_entry& e = symbols_[symbol(d.name)];
      if (e.kind == sym_kind::undefined || e.kind == sym_kind::placeholder || e.kind == sym_kind::lazy) {
        e.kind = sym_kind::defined;
        e.file = no_file;
      }
    }
    // --wrap: __real_X and __wrap_X become references when X exists.
    std::vector<std::string_view> seen;
    for (const std::string& name : line_.wraps) {
      bool dup = false;
      for (auto v : seen) dup = dup || v == name;
      if (dup) continue;
      seen.push_back(name);
      const std::uint32_t s = symbols_.find(name);
      if (s == symbols_.empty) continue;
      const std::uint8_t bind = symbols_[s].binding;
      result_.made_names->push_back("__real_" + name);
      result_.made_names->push_back("__wrap_" + name);
      LINKSCOPE_CHECK(lld_undefined(symbol((*result_.made_names)[result_.made_names->size() - 2]), no_file, elf::STB_GLOBAL, elf::STV_DEFAULT, false));
      LINKSCOPE_CHECK(lld_undefined(symbol(result_.made_names->back()), no_file, bind, elf::STV_DEFAULT, false));
    }
    return ok();
  }

  result<void> lld_input(std::uint32_t index) {
    const link_input& in = line_.inputs[index];
    LINKSCOPE_TRY(bytes, open_input(in.path, in.spec));
    const input_format format = sniff_format(bytes->bytes());
    if (format == input_format::archive || format == input_format::thin_archive) {
      LINKSCOPE_TRY(a, open_archive(index, bytes));
      if (in.whole_archive) {
        // Every member, in order, as if given on the command line.
        std::vector<std::uint64_t> offsets;
        auto r = archives_[a].archive.for_each_member([&](const ar::member& m) { offsets.push_back(m.header_offset); });
        if (!r) return fail(r.error(), in.path);
        for (std::uint64_t off : offsets) {
          byte_view data;
          LINKSCOPE_TRY(id, new_member(a, off, true, data));
          record(id, no_file, "--whole-archive", "--whole-archive");
          LINKSCOPE_CHECK(lld_object(id, data));
        }
        archives_[a].parsed = true;
        return ok();
      }
      // One lazy symbol per armap entry, in armap order.
      for (std::size_t e = 0; e < archives_[a].entries.size(); ++e) {
        const ar::armap_entry entry = archives_[a].entries[e];
        LINKSCOPE_CHECK(lld_lazy(symbol(entry.name), a, entry.member_offset));
      }
      archives_[a].parsed = true;
      return ok();
    }
    if (format != input_format::elf)
      return fail(make_error(errc::bad_magic, 0, "unknown file type (not ELF, not an archive)"), in.spec);
    link_file f;
    f.name = in.path;
    f.bfd_name = f.name;
    f.input = index;
    auto kind = elf::visit_elf(bytes->bytes(), [](const auto& elf) -> result<std::uint16_t> { return elf.type(); });
    if (!kind) return fail(kind.error(), in.spec);
    if (*kind == elf::ET_DYN) {
      f.role = file_role::shared;
      const file_id id = add_file(std::move(f));
      return lld_shared(id, bytes->bytes());
    }
    f.role = file_role::object;
    const file_id id = add_file(std::move(f));
    return lld_object(id, bytes->bytes());
  }

  result<void> lld_shared(file_id id, byte_view bytes) {
    std::string_view soname;
    LINKSCOPE_CHECK(read_shared(id, bytes, soname));
    std::string key = soname.empty() ? result_.files[id].name : std::string(soname);
    if (soname.empty()) {
      // lld's default soname: the file name for -l, else the path.
      const link_input& in = line_.inputs[result_.files[id].input];
      if (in.is_library) key = key.substr(key.rfind('/') + 1);
    }
    for (const auto& s : sonames_)
      if (s == key) return ok();
    sonames_.push_back(std::move(key));
    std::vector<detail::input_symbol> syms = std::move(scratch_);
    for (const detail::input_symbol& s : syms) {
      const std::uint32_t sym = symbol(s.name);
      ++result_.symbols_resolved;
      if (s.kind == detail::input_symbol::undefined) {
        LINKSCOPE_CHECK(lld_undefined(sym, id, s.binding, s.visibility, true));
        continue;
      }
      sym_entry& e = symbols_[sym];
      if (e.kind == sym_kind::placeholder) {
        e.kind = sym_kind::shared;
        e.file = id;
        e.binding = s.binding;
        continue;
      }
      if (e.kind == sym_kind::common) continue;
      if (e.visibility == elf::STV_DEFAULT && (e.kind == sym_kind::undefined || e.kind == sym_kind::lazy)) {
        e.kind = sym_kind::shared;  // binding kept
        e.file = id;
      }
    }
    scratch_ = std::move(syms);
    return ok();
  }

  result<void> lld_object(file_id id, byte_view bytes) {
    LINKSCOPE_CHECK(read_object(id, bytes, true));
    // The object's symbols stay in a vector of their own: extraction recurses.
    std::vector<detail::input_symbol> syms = std::move(scratch_);
    scratch_ = {};
    std::vector<std::uint32_t> undefineds;
    std::vector<std::uint32_t> ids(syms.size());
    for (std::size_t i = 0; i < syms.size(); ++i) ids[i] = symbol(syms[i].name);
    for (std::size_t i = 0; i < syms.size(); ++i) {
      const detail::input_symbol& s = syms[i];
      const std::uint32_t sym = ids[i];
      ++result_.symbols_resolved;
      sym_entry& e = symbols_[sym];
      if (s.visibility != elf::STV_DEFAULT && (e.visibility == elf::STV_DEFAULT || s.visibility < e.visibility))
        e.visibility = s.visibility;
      switch (s.kind) {
        case detail::input_symbol::undefined:
          undefineds.push_back(static_cast<std::uint32_t>(i));
          break;
        case detail::input_symbol::common:
          lld_common(sym, id);
          break;
        case detail::input_symbol::discarded: {
          // Defined in a discarded COMDAT copy: an undefined reference.
          if (e.kind == sym_kind::lazy && !archives_[e.archive].parsed) {
            e.kind = sym_kind::undefined;
            e.file = id;
            e.binding = s.binding;
          } else {
            LINKSCOPE_CHECK(lld_undefined(sym, id, s.binding, s.visibility, false, true));
          }
          break;
        }
        default:
          lld_defined(sym, id, s);
          break;
      }
    }
    for (std::uint32_t i : undefineds) {
      const detail::input_symbol& s = syms[i];
      LINKSCOPE_CHECK(lld_undefined(ids[i], id, s.binding, s.visibility, false));
      symbols_[ids[i]].referenced = true;
      symbols_[ids[i]].ref_regular = true;
    }
    return ok();
  }

  void lld_defined(std::uint32_t sym, file_id id, const detail::input_symbol& s) {
    sym_entry& e = symbols_[sym];
    const bool abs = s.kind == detail::input_symbol::absolute;
    auto take = [&] {
      e.kind = sym_kind::defined;
      e.file = id;
      e.binding = s.binding;
      e.absolute = abs;
      e.value = s.value;
    };
    if (e.kind != sym_kind::defined && e.kind != sym_kind::common) return take();
    if (s.binding == elf::STB_WEAK) return;
    if (e.binding == elf::STB_WEAK) return take();
    if (e.kind == sym_kind::common) return take();
    if (e.absolute && abs && e.value == s.value && s.binding == elf::STB_GLOBAL) return;
    result_.duplicates.push_back({e.name, e.file, id});
  }

  void lld_common(std::uint32_t sym, file_id id) {
    sym_entry& e = symbols_[sym];
    if (e.kind != sym_kind::defined && e.kind != sym_kind::common) {
      e.kind = sym_kind::common;
      e.file = id;
      e.binding = elf::STB_GLOBAL;
      return;
    }
    // A defined symbol (even weak? no: a weak definition loses to a common) wins.
    if (e.kind == sym_kind::defined && e.binding == elf::STB_WEAK) {
      e.kind = sym_kind::common;
      e.file = id;
      e.binding = elf::STB_GLOBAL;
    }
  }

  result<void> lld_undefined(std::uint32_t sym, file_id id, std::uint8_t binding, std::uint8_t vis, bool from_shared,
                             bool discarded = false) {
    sym_entry& e = symbols_[sym];
    if (e.kind == sym_kind::placeholder) {
      e.kind = sym_kind::undefined;
      e.file = id;
      e.binding = binding;
      return ok();
    }
    if ((e.kind == sym_kind::shared && vis != elf::STV_DEFAULT) ||
        (e.kind == sym_kind::undefined && binding != elf::STB_WEAK && discarded)) {
      e.kind = sym_kind::undefined;
      e.file = id;
      e.binding = binding;
      return ok();
    }
    if (e.kind == sym_kind::lazy) {
      if (binding == elf::STB_WEAK) {
        e.binding = elf::STB_WEAK;
        return ok();
      }
      LINKSCOPE_CHECK(lld_extract(sym));
      lld_record(sym, id, {});
      return ok();
    }
    if (from_shared) return ok();
    if (e.kind == sym_kind::undefined || e.kind == sym_kind::shared) {
      if (binding != elf::STB_WEAK || !e.referenced) e.binding = binding;
    }
    return ok();
  }

  result<void> lld_lazy(std::uint32_t sym, std::uint32_t archive, std::uint64_t member) {
    ++result_.symbols_resolved;
    sym_entry& e = symbols_[sym];
    if (e.kind == sym_kind::placeholder) {
      e.kind = sym_kind::lazy;
      e.file = archives_[archive].file;
      e.archive = archive;
      e.member = member;
      e.binding = elf::STB_GLOBAL;
      return ok();
    }
    if (e.kind != sym_kind::undefined) return ok();
    if (e.binding == elf::STB_WEAK) {
      e.kind = sym_kind::lazy;
      e.file = archives_[archive].file;
      e.archive = archive;
      e.member = member;
      return ok();
    }
    // lld extracts while the symbol is still Undefined.
    const file_id old = e.file;
    LINKSCOPE_CHECK(lld_extract(archive, member));
    lld_record(sym, old, {});
    return ok();
  }

  // Extract the member behind lazy symbol `sym` (once per member).
  result<void> lld_extract(std::uint32_t sym) { return lld_extract(symbols_[sym].archive, symbols_[sym].member); }
  result<void> lld_extract(std::uint32_t a, std::uint64_t member) {
    if (archives_[a].loaded.count(member) != 0) return ok();
    byte_view data;
    LINKSCOPE_TRY(id, new_member(a, member, false, data));
    return lld_object(id, data);
  }

  // --why-extract row: (reference, the symbol's file now, symbol).
  void lld_record(std::uint32_t sym, file_id reference, std::string label) {
    const sym_entry& e = symbols_[sym];
    file_id extracted = e.file;
    if (e.kind == sym_kind::lazy || extracted == no_file || result_.files[extracted].role != file_role::member)
      return;  // the member did not define it (lld would print an odd row; linkscope prints none)
    if (result_.files[extracted].role == file_role::member && result_.files[extracted].reason == ~0u) {
      record(extracted, reference, reference == no_file ? (label.empty() ? "<internal>" : label) : std::string(), e.name);
    } else {
      // The row still appears (lld writes one per extraction); the member
      // keeps its first reason for the why-chain.
      extraction x;
      x.member = extracted;
      x.reference = reference;
      x.reference_label = reference == no_file ? (label.empty() ? "<internal>" : label) : std::string();
      x.symbol = e.name;
      result_.extractions.push_back(std::move(x));
    }
  }

  // ---- bfd -----------------------------------------------------------------

  result<void> run_bfd() {
    // --defsym first: the symbol is defined, its expression's symbols are references.
    for (const defsym& d : line_.defsyms) {
      for (std::string_view name : expression_symbols(d.expression)) bfd_reference(symbol(name), no_file, elf::STB_GLOBAL, false);
      sym_entry& e = symbols_[symbol(d.name)];
      e.kind = sym_kind::defined;
      e.file = no_file;
      e.binding = elf::STB_GLOBAL;
    }
    for (const std::string& name : line_.undefined) bfd_reference(symbol(name), no_file, elf::STB_GLOBAL, false);
    if (!line_.entry.empty()) bfd_reference(symbol(line_.entry), no_file, elf::STB_GLOBAL, false);
    std::uint32_t i = 0;
    while (i < line_.inputs.size()) {
      const int group = line_.inputs[i].group;
      if (group < 0) {
        LINKSCOPE_CHECK(bfd_input(i, false));
        ++i;
        continue;
      }
      std::uint32_t end = i;
      while (end < line_.inputs.size() && line_.inputs[end].group == group) ++end;
      bool first = true;
      for (;;) {
        const std::size_t before = undefs_;
        for (std::uint32_t k = i; k < end; ++k) LINKSCOPE_CHECK(bfd_input(k, !first));
        first = false;
        if (undefs_ == before) break;
      }
      i = end;
    }
    return ok();
  }

  std::string_view bfd_wrapped(std::string_view name, bool undefined) {
    if (!undefined || line_.wraps.empty()) return name;
    for (const std::string& w : line_.wraps) {
      if (name == w) {
        result_.made_names->push_back("__wrap_" + w);
        return result_.made_names->back();
      }
      if (name.size() == w.size() + 7 && name.substr(0, 7) == "__real_" && name.substr(7) == w) return w;
    }
    return name;
  }

  void bfd_reference(std::uint32_t sym, file_id id, std::uint8_t binding, bool regular) {
    sym_entry& e = symbols_[sym];
    if (regular) {
      e.ref_regular = true;
      if (binding != elf::STB_WEAK) e.referenced = true;
    }
    if (e.kind == sym_kind::placeholder) {
      e.kind = sym_kind::undefined;
      e.file = id;
      e.binding = binding;
      if (binding != elf::STB_WEAK) {
        e.ever_undefined = true;
        ++undefs_;
      }
      return;
    }
    if (e.kind == sym_kind::undefined && e.binding == elf::STB_WEAK && binding != elf::STB_WEAK) {
      e.binding = binding;
      e.file = id;
      if (!e.ever_undefined) {
        e.ever_undefined = true;
        ++undefs_;
      }
    }
  }

  void bfd_define(std::uint32_t sym, file_id id, const detail::input_symbol& s) {
    sym_entry& e = symbols_[sym];
    const bool weak = s.binding == elf::STB_WEAK;
    if (s.kind == detail::input_symbol::common) {
      if (e.kind == sym_kind::placeholder || e.kind == sym_kind::undefined ||
          (e.kind == sym_kind::defined && e.binding == elf::STB_WEAK) || e.kind == sym_kind::shared) {
        e.kind = sym_kind::common;
        e.file = id;
        e.binding = elf::STB_GLOBAL;
      }
      return;
    }
    switch (e.kind) {
      case sym_kind::placeholder:
      case sym_kind::undefined:
      case sym_kind::shared:
      case sym_kind::lazy:
        break;
      case sym_kind::common:
        if (weak) return;
        break;
      case sym_kind::defined:
        if (weak) return;
        if (e.binding != elf::STB_WEAK) {
          if (!(e.absolute && s.kind == detail::input_symbol::absolute && e.value == s.value))
            result_.duplicates.push_back({e.name, e.file, id});
          return;
        }
        break;
    }
    e.kind = sym_kind::defined;
    e.file = id;
    e.binding = s.binding;
    e.absolute = s.kind == detail::input_symbol::absolute;
    e.value = s.value;
  }

  result<void> bfd_object(file_id id, byte_view bytes) {
    LINKSCOPE_CHECK(read_object(id, bytes, false));
    for (const detail::input_symbol& s : scratch_) {
      ++result_.symbols_resolved;
      if (s.kind == detail::input_symbol::undefined) {
        bfd_reference(symbol(bfd_wrapped(s.name, true)), id, s.binding, true);
      } else {
        bfd_define(symbol(s.name), id, s);
      }
    }
    return ok();
  }

  result<void> bfd_shared(file_id id, byte_view bytes, bool as_needed) {
    std::string_view soname;
    LINKSCOPE_CHECK(read_shared(id, bytes, soname));
    if (as_needed) {
      bool needed = false;
      for (const detail::input_symbol& s : scratch_) {
        if (s.kind == detail::input_symbol::undefined) continue;
        const std::uint32_t sym = symbols_.find(s.name);
        if (sym == symbols_.empty) continue;
        const sym_entry& e = symbols_[sym];
        if ((e.kind == sym_kind::undefined || e.kind == sym_kind::shared) && e.referenced) {
          needed = true;
          break;
        }
      }
      if (!needed) return ok();
    }
    for (const detail::input_symbol& s : scratch_) {
      ++result_.symbols_resolved;
      const std::uint32_t sym = symbol(s.name);
      if (s.kind == detail::input_symbol::undefined) {
        bfd_reference(sym, id, s.binding, false);
        continue;
      }
      sym_entry& e = symbols_[sym];
      if (e.kind == sym_kind::placeholder || e.kind == sym_kind::undefined) {
        e.kind = sym_kind::shared;
        e.file = id;
        e.binding = s.binding;
      }
    }
    return ok();
  }

  // Whether member `offset` of archive `a` defines `name` (not as common).
  result<bool> bfd_member_defines(std::uint32_t a, std::uint64_t offset, std::string_view name) {
    auto m = archives_[a].archive.member_at(offset);
    if (!m) return fail(m.error(), archives_[a].path);
    LINKSCOPE_TRY(data, member_bytes(archives_[a], *m));
    std::vector<detail::input_symbol> syms;
    std::vector<std::uint8_t> discarded;
    auto r = elf::visit_elf(data, [&](const auto& f) -> result<void> {
      return detail::read_object_symbols(f, nullptr, syms, discarded);
    });
    if (!r) return false;
    for (const auto& s : syms)
      if (s.name == name && (s.kind == detail::input_symbol::defined || s.kind == detail::input_symbol::absolute))
        return true;
    return false;
  }

  result<void> bfd_archive(std::uint32_t a) {
    archive_state& st = archives_[a];
    if (line_.inputs[st.input].whole_archive) {
      if (st.parsed) return ok();
      st.parsed = true;
      std::vector<std::uint64_t> offsets;
      auto r = st.archive.for_each_member([&](const ar::member& m) { offsets.push_back(m.header_offset); });
      if (!r) return fail(r.error(), st.path);
      for (std::uint64_t off : offsets) {
        byte_view data;
        LINKSCOPE_TRY(id, new_member(a, off, true, data));
        record(id, no_file, "--whole-archive", "--whole-archive");
        LINKSCOPE_CHECK(bfd_object(id, data));
      }
      return ok();
    }
    st.parsed = true;
    const std::size_t count = st.entries.size();
    std::vector<std::uint8_t> included(count, 0);
    bool loop = true;
    while (loop) {
      loop = false;
      std::uint64_t last = ~std::uint64_t{0};
      for (std::size_t i = 0; i < count; ++i) {
        const ar::armap_entry entry = archives_[a].entries[i];
        if (entry.member_offset == last) {
          included[i] = 1;
          continue;
        }
        if (included[i]) continue;
        const std::uint32_t sym = symbols_.find(entry.name);
        if (sym == symbols_.empty) continue;
        const sym_entry& e = symbols_[sym];
        if (e.kind == sym_kind::common) {
          LINKSCOPE_TRY(defines, bfd_member_defines(a, entry.member_offset, entry.name));
          if (!defines) continue;
        } else if (e.kind != sym_kind::undefined || e.binding == elf::STB_WEAK) {
          if (!(e.kind == sym_kind::undefined && e.binding == elf::STB_WEAK)) included[i] = 1;
          continue;
        }
        if (archives_[a].loaded.count(entry.member_offset) != 0) continue;
        const file_id reference = e.file;
        const std::size_t undefs_before = undefs_;
        byte_view data;
        LINKSCOPE_TRY(id, new_member(a, entry.member_offset, false, data));
        record(id, reference, {}, entry.name);
        LINKSCOPE_CHECK(bfd_object(id, data));
        if (undefs_ != undefs_before) loop = true;
        std::size_t mark = i;
        for (;;) {
          included[mark] = 1;
          if (mark == 0) break;
          --mark;
          if (archives_[a].entries[mark].member_offset != entry.member_offset) break;
        }
        last = entry.member_offset;
      }
    }
    return ok();
  }

  result<void> bfd_input(std::uint32_t index, bool rescan) {
    const link_input& in = line_.inputs[index];
    auto opened = opened_.find(index);
    if (rescan) {
      if (opened != opened_.end() && opened->second.first == 1) return bfd_archive(opened->second.second);
      return ok();
    }
    LINKSCOPE_TRY(bytes, open_input(input_path(in), in.spec));
    const input_format format = sniff_format(bytes->bytes());
    if (format == input_format::archive || format == input_format::thin_archive) {
      LINKSCOPE_TRY(a, open_archive(index, bytes));
      opened_.emplace(index, std::make_pair(1, a));
      return bfd_archive(a);
    }
    if (format != input_format::elf)
      return fail(make_error(errc::bad_magic, 0, "unknown file type (not ELF, not an archive)"), in.spec);
    opened_.emplace(index, std::make_pair(0, 0u));
    link_file f;
    f.name = input_path(in);
    f.bfd_name = f.name;
    f.input = index;
    auto kind = elf::visit_elf(bytes->bytes(), [](const auto& elf) -> result<std::uint16_t> { return elf.type(); });
    if (!kind) return fail(kind.error(), in.spec);
    if (*kind == elf::ET_DYN) {
      f.role = file_role::shared;
      const file_id id = add_file(std::move(f));
      return bfd_shared(id, bytes->bytes(), in.as_needed);
    }
    f.role = file_role::object;
    const file_id id = add_file(std::move(f));
    return bfd_object(id, bytes->bytes());
  }

  // ---- results -------------------------------------------------------------

  // Symbols the linker itself defines when they are referenced (lld
  // addReservedSymbols, Writer.cpp; GNU ld's default script): not undefined.
  static bool linker_defined(std::string_view name) noexcept {
    static constexpr std::string_view names[] = {
        "_GLOBAL_OFFSET_TABLE_", "_DYNAMIC", "__ehdr_start", "__executable_start", "_end", "end", "_etext",
        "etext", "_edata", "edata", "__bss_start", "__init_array_start", "__init_array_end",
        "__fini_array_start", "__fini_array_end", "__preinit_array_start", "__preinit_array_end",
        "__rela_iplt_start", "__rela_iplt_end", "__rel_iplt_start", "__rel_iplt_end", "__global_pointer$",
        "_TLS_MODULE_BASE_", "_PROCEDURE_LINKAGE_TABLE_", "__GNU_EH_FRAME_HDR", "__dso_handle"};
    for (std::string_view n : names)
      if (n == name) return true;
    // __start_SEC / __stop_SEC for C-identifier section names.
    return name.rfind("__start_", 0) == 0 || name.rfind("__stop_", 0) == 0;
  }

  void finish() {
    for (std::uint32_t i = 0; i < symbols_.size(); ++i) {
      const sym_entry& e = symbols_[i];
      if (e.kind == sym_kind::undefined && e.binding != elf::STB_WEAK && e.ref_regular && !linker_defined(e.name))
        result_.undefined.push_back({e.name, e.file});
    }
    // Members never loaded, in archive order.
    for (archive_state& st : archives_) {
      auto r = st.archive.for_each_member([&](const ar::member& m) {
        if (st.loaded.count(m.header_offset) != 0) return;
        link_file f;
        f.name = st.path + "(" + std::string(m.name) + ")";
        f.bfd_name = f.name;
        f.input = st.input;
        f.member_offset = m.header_offset;
        f.archive = st.file;
        f.role = file_role::member;
        result_.unused_members.push_back(add_file(std::move(f)));
      });
      (void)r;  // a malformed tail only shortens the unused list
    }
  }

  const link_line& line_;
  static_options options_;
  link_diagnostic& diag_;
  static_link_result result_;
  detail::name_map<sym_entry> symbols_;
  detail::name_map<detail::comdat_entry> comdats_;
  std::vector<archive_state> archives_;
  std::vector<std::string> sonames_;
  std::unordered_map<std::uint32_t, std::pair<int, std::uint32_t>> opened_;
  std::vector<detail::input_symbol> scratch_;
  std::vector<std::uint8_t> discarded_;
  std::size_t undefs_ = 0;
};

// Run a static link over `line`. On error, `diag` names the input.
template <class D = void>
result<static_link_result> resolve_static(linkscope::detail::deferred<const link_line&, D> line, static_options options,
                                          link_diagnostic& diag) {
  static_linker<D> linker(line, options, diag);
  return linker.run();
}

}  // namespace resolve
}  // namespace v0
}  // namespace linkscope
