// linkscope/ar/archive.hpp — Unix archives and COFF .lib containers.
//
// Common/GNU/BSD layout (ar(5), POSIX `ar`, PE/COFF spec §7 "Archive (Library)
// File Format"): the magic "!<arch>\n" (or "!<thin>\n"), then members. Each
// member is a 60-byte ASCII header
//     name[16] date[12] uid[6] gid[6] mode[8](octal) size[10] fmag[2]="`\n"
// followed by `size` bytes of data and a '\n' pad byte when the data ends on
// an odd offset. Names:
//   "name/"      GNU/SysV short name, "name   " BSD short name;
//   "/"          symbol table (GNU; in COFF .lib the "first linker member").
//                In a .lib, a second "/" right after it is the "second
//                linker member" (little-endian, sorted, 16-bit indices);
//   "/SYM64/"    GNU 64-bit symbol table;  "//" long-name table (entries end
//                in "/\n" for GNU, in NUL for COFF); "/N" = long name at N;
//   "#1/N"       BSD 4.4: the name is the first N bytes of the data (which
//                `size` includes); "__.SYMDEF", "__.SYMDEF SORTED",
//                "__.SYMDEF_64" as the FIRST member are the BSD ranlib tables.
//   "/<ECSYMBOLS>/"  ARM64EC symbol table of a COFF .lib (skipped).
// Thin archives ("!<thin>\n", GNU) hold only headers for ordinary members:
// the data lives in the file the (long) name names, relative to the
// archive's folder; the size field is that file's size and the next header
// follows immediately. The "/" and "//" members keep their data inline.
//
// AIX big archives ("<bigaf>\n", AIX "ar_big" file format documentation): a
// 128-byte fixed-length header of decimal offsets (member table, 32-bit and
// 64-bit global symbol tables, first and last member, free list), then
// members linked by offset: a 112-byte header
//     size[20] nextoff[20] prevoff[20] date[12] uid[12] gid[12] mode[12](octal) namlen[4]
// then the name, a NUL pad to an even length, "`\n", and the data.
//
// Reading is lazy and zero-copy: `archive` is a view over the caller's bytes;
// members are parsed one header at a time during iteration. Every numeric
// field is parsed with from_chars (parse_ascii_number) and checked; every
// error carries the file offset of the offending field.
//
//   auto file = mapped_file::open(path);            // keep it alive: views point into it
//   auto a = ar::archive::open(file->bytes());
//   for (const result<ar::member>& m : a->members()) {   // regular members only
//     if (!m) { report(m.error()); break; }              // an error ends the walk
//     use(m->name, m->data);                             // thin: m->external, open_thin_member()
//   }
//   // or: LINKSCOPE_CHECK(a->for_each_member([](const ar::member& m) { ... }));
//   // armap offsets -> members: a->member_at(header_offset)
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "linkscope/core/bytes.hpp"
#include "linkscope/core/config.hpp"
#include "linkscope/core/error.hpp"
#include "linkscope/core/mapped_file.hpp"

namespace linkscope {
inline namespace v0 {
namespace ar {

// The container flavour, decided from the magic and the leading members.
enum class format : std::uint8_t {
  gnu,      // "!<arch>\n" with GNU/SysV names (also what llvm-lib and mingw write for .lib)
  bsd,      // "!<arch>\n" with #1/N names or a __.SYMDEF table
  coff,     // "!<arch>\n" with an MS second linker member
  thin,     // "!<thin>\n" (GNU thin archive)
  aix_big,  // "<bigaf>\n"
};

constexpr const char* to_string(format f) noexcept {
  switch (f) {
    case format::gnu: return "gnu";
    case format::bsd: return "bsd";
    case format::coff: return "coff";
    case format::thin: return "thin";
    case format::aix_big: return "aix_big";
  }
  return "?";
}

// What a member is. Iteration with members() yields only `regular` ones.
enum class member_kind : std::uint8_t {
  regular,
  symbol_table,     // "/" (first linker member), "/SYM64/", __.SYMDEF*, AIX global symbol tables
  second_linker,    // COFF second linker member
  long_names,       // "//"
  ec_symbols,       // "/<ECSYMBOLS>/"
  member_table,     // AIX member table
};

// One archive member. Strings and data are views into the archive's bytes.
struct member {
  std::string_view name;     // resolved name (long names resolved, '/' terminator dropped)
  std::uint64_t header_offset = 0;
  std::uint64_t data_offset = 0;  // first data byte (thin external member: end of the header)
  std::uint64_t size = 0;         // data size (thin external member: the external file's size)
  byte_view data;                 // data bytes; empty for a thin external member
  std::uint64_t date = 0;
  std::uint64_t uid = 0;
  std::uint64_t gid = 0;
  std::uint64_t mode = 0;
  std::uint64_t next_offset = 0;  // header offset of the next member (0 = none)
  member_kind kind = member_kind::regular;
  bool external = false;          // thin archive: data lives in the file `name` names
  // Thin archive, name field "/N:M": the member is the one whose header is at
  // offset M inside the (regular) archive that `name` names.
  bool nested = false;
  std::uint64_t nested_offset = 0;
};

// The symbol tables an archive carries (the armap reads them).
enum class table_kind : std::uint8_t {
  none,
  gnu32,         // "/" (GNU, SysV, COFF first linker member): BE u32 count, BE u32 offsets, names
  gnu64,         // "/SYM64/": BE u64 count, BE u64 offsets, names
  bsd32,         // "__.SYMDEF" / "__.SYMDEF SORTED": u32 ranlib bytes, {strx, off} pairs, u32 strtab bytes, strtab
  bsd64,         // "__.SYMDEF_64" / "__.SYMDEF_64 SORTED": the same with u64 fields
  coff_second,   // second linker member: LE u32 m, m offsets, LE u32 n, n u16 indices, names
  aix32,         // AIX global symbol table: BE u32 count, BE u32 offsets, names
  aix64,         // AIX 64-bit global symbol table: BE u64 count, BE u64 offsets, names
};

constexpr const char* to_string(table_kind k) noexcept {
  switch (k) {
    case table_kind::none: return "none";
    case table_kind::gnu32: return "gnu32";
    case table_kind::gnu64: return "gnu64";
    case table_kind::bsd32: return "bsd32";
    case table_kind::bsd64: return "bsd64";
    case table_kind::coff_second: return "coff_second";
    case table_kind::aix32: return "aix32";
    case table_kind::aix64: return "aix64";
  }
  return "?";
}

struct symbol_table_member {
  table_kind kind = table_kind::none;
  std::uint64_t header_offset = 0;
  byte_view data;       // the table's bytes (base() = file offset of data)
  bool sorted = false;  // "__.SYMDEF SORTED"
  std::string_view name;
};

namespace detail {

inline constexpr std::size_t gnu_header_size = 60;
inline constexpr std::size_t big_fixed_header_size = 128;
inline constexpr std::size_t big_member_header_size = 112;

struct gnu_header {
  char name[16];
  char date[12];
  char uid[6];
  char gid[6];
  char mode[8];
  char size[10];
  char fmag[2];
};
static_assert(sizeof(gnu_header) == gnu_header_size);

struct big_fixed_header {
  char magic[8];
  char memoff[20];
  char gstoff[20];
  char gst64off[20];
  char fstmoff[20];
  char lstmoff[20];
  char freeoff[20];
};
static_assert(sizeof(big_fixed_header) == big_fixed_header_size);

struct big_member_header {
  char size[20];
  char nextoff[20];
  char prevoff[20];
  char date[12];
  char uid[12];
  char gid[12];
  char mode[12];
  char namlen[4];
};
static_assert(sizeof(big_member_header) == big_member_header_size);

// Parse a fixed-width ASCII number at `field_offset` (for the error offset).
inline result<std::uint64_t> number_field(const char* field, std::size_t width, std::uint64_t field_offset,
                                          int radix, bool empty_is_zero, const char* what) {
  std::uint64_t value = 0;
  if (!parse_ascii_number(std::string_view(field, width), value, radix, empty_is_zero))
    return error{errc::bad_field, field_offset, what};
  return value;
}

inline std::string_view trim_right_spaces(std::string_view s) noexcept {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\0')) s.remove_suffix(1);
  return s;
}

inline bool is_digit(char c) noexcept { return c >= '0' && c <= '9'; }

}  // namespace detail

class archive;

// Lazy iteration over the regular members. The iterator yields
// result<member>; after an error it yields that error once and then ends,
// so `for (auto m : a.members()) { if (!m) { report(m.error()); break; } ... }`
// sees every problem.
class member_range {
 public:
  class iterator {
   public:
    using value_type = result<member>;
    using difference_type = std::ptrdiff_t;
    iterator() : current_(error{errc::ok, no_offset, ""}) {}
    const result<member>& operator*() const noexcept { return current_; }
    const result<member>* operator->() const noexcept { return &current_; }
    iterator& operator++();
    bool operator==(const iterator& other) const noexcept { return done_ == other.done_ && (done_ || offset_ == other.offset_); }

   private:
    friend class member_range;
    iterator(const archive* a, std::uint64_t offset) : archive_(a), current_(error{errc::ok, no_offset, ""}), offset_(offset) {}
    void load();
    const archive* archive_ = nullptr;
    result<member> current_;
    std::uint64_t offset_ = 0;
    std::size_t steps_ = 0;
    bool done_ = true;
  };

  iterator begin() const;
  iterator end() const { return iterator(); }

 private:
  friend class archive;
  explicit member_range(const archive* a) : archive_(a) {}
  const archive* archive_;
};

class archive {
 public:
  archive() = default;

  // Recognise the magic and read the leading special members (symbol
  // tables, long names). Nothing else is parsed.
  static result<archive> open(byte_view bytes);
  static bool is_archive(byte_view bytes) noexcept {
    return bytes.size() >= 8 && (std::memcmp(bytes.data(), "!<arch>\n", 8) == 0 ||
                                 std::memcmp(bytes.data(), "!<thin>\n", 8) == 0 ||
                                 std::memcmp(bytes.data(), "<bigaf>\n", 8) == 0);
  }

  ar::format kind() const noexcept { return format_; }
  bool is_thin() const noexcept { return format_ == format::thin; }
  byte_view bytes() const noexcept { return bytes_; }

  // Symbol tables present, in file order (at most 2: COFF first+second
  // linker members, or AIX 32+64-bit tables).
  std::size_t symbol_table_count() const noexcept { return table_count_; }
  const symbol_table_member& symbol_table(std::size_t i) const noexcept { return tables_[i]; }
  bool has_symbol_table() const noexcept { return table_count_ > 0; }
  byte_view long_names() const noexcept { return long_names_; }

  // The regular members, lazily (see member_range).
  member_range members() const& noexcept { return member_range(this); }
  member_range members() && = delete;

  // Call f(const member&) for every regular member; f may return bool (false stops).
  template <class F>
  result<void> for_each_member(F&& f) const {
    for (const result<member>& m : members()) {
      if (!m) return m.error();
      if constexpr (std::is_same_v<std::invoke_result_t<F&, const member&>, bool>) {
        if (!f(*m)) break;
      } else {
        f(*m);
      }
    }
    return {};
  }

  // Parse the member whose header is at `header_offset` (e.g. an armap's
  // member offset). Special members are returned with their kind set.
  result<member> member_at(std::uint64_t header_offset) const;

  // Header offset of the first regular member (after the special members), 0 if none.
  std::uint64_t first_member_offset() const noexcept { return first_member_; }

 private:
  friend class member_range;
  result<member> parse_gnu(std::uint64_t offset, bool first) const;
  result<member> parse_big(std::uint64_t offset) const;
  result<std::string_view> long_name(std::uint64_t name_offset, std::uint64_t field_offset) const;
  // Next regular member header at or after `offset` (skipping special ones);
  // returns 0 at the end.
  std::uint64_t max_steps() const noexcept {
    return bytes_.size() / (format_ == format::aix_big ? detail::big_member_header_size + 2 : detail::gnu_header_size) + 2;
  }

  byte_view bytes_;
  byte_view long_names_;
  symbol_table_member tables_[2];
  std::size_t table_count_ = 0;
  std::uint64_t first_member_ = 0;
  std::uint64_t last_member_ = 0;  // AIX: lstmoff
  ar::format format_ = format::gnu;
};

// ---------------------------------------------------------------------------
// Thin archives: the member's file (for a nested member, the file of the
// archive that holds it: open it and call member_at(m.nested_offset)).
// The path is the member name joined to the
// archive's folder exactly as GNU ar/nm do (an absolute name is kept as is;
// otherwise the archive path up to its last '/' is prepended). linkscope never
// opens any other path for a member.

struct thin_options {
  // Refuse member names that are absolute or that climb out of the archive's
  // folder with "..".
  bool confine_to_archive_dir = false;
};

result<std::string> thin_member_path(std::string_view archive_path, const member& m,
                                            thin_options options = {});

// Open a thin archive's member file. Errors (at the member's header offset):
// not_found when it is missing, malformed when it is the archive itself.
inline result<mapped_file> open_thin_member(std::string_view archive_path, const mapped_file& archive_file,
                                            const member& m, thin_options options = {}) {
  LINKSCOPE_TRY(path, thin_member_path(archive_path, m, options));
  auto file = mapped_file::open(path);
  if (!file) {
    error e = file.error();
    if (e.code == errc::not_found) return error{errc::not_found, m.header_offset, "thin archive member file is missing"};
    return error{e.code, m.header_offset, e.message};
  }
  if (file->device() == archive_file.device() && file->inode() == archive_file.inode())
    return error{errc::malformed, m.header_offset, "thin archive member points back at the archive itself"};
  return file;
}

// ---------------------------------------------------------------------------
// Implementation.


inline result<std::string_view> archive::long_name(std::uint64_t name_offset, std::uint64_t field_offset) const {
  if (long_names_.data() == nullptr)
    return error{errc::malformed, field_offset, "long name reference but the archive has no // member"};
  if (name_offset >= long_names_.size())
    return error{errc::out_of_range, field_offset, "long name offset past the end of the // member"};
  const char* begin = reinterpret_cast<const char*>(long_names_.data()) + name_offset;
  const char* end = reinterpret_cast<const char*>(long_names_.data()) + long_names_.size();
  const char* p = begin;
  while (p != end && *p != '\n' && *p != '\0') ++p;
  std::string_view name(begin, static_cast<std::size_t>(p - begin));
  // GNU ends entries with "/\n"; COFF with NUL.
  if (p != end && *p == '\n' && !name.empty() && name.back() == '/') name.remove_suffix(1);
  return name;
}



inline result<member> archive::member_at(std::uint64_t header_offset) const {
  if (format_ == format::aix_big) {
    if (header_offset == 0 || header_offset >= bytes_.size())
      return error{errc::out_of_range, no_offset, "member offset past end of file"};
    LINKSCOPE_TRY(m, parse_big(header_offset));
    for (std::size_t i = 0; i < table_count_; ++i)
      if (tables_[i].header_offset == header_offset) m.kind = member_kind::symbol_table;
    return m;
  }
  if (header_offset < 8 || header_offset >= bytes_.size())
    return error{errc::out_of_range, no_offset, "member offset past end of file"};
  const bool first = header_offset == 8;
  return parse_gnu(header_offset, first);
}

inline member_range::iterator member_range::begin() const {
  iterator it(archive_, archive_->first_member_);
  it.done_ = archive_->first_member_ == 0;
  if (!it.done_) it.load();
  return it;
}

inline void member_range::iterator::load() {
  // Parse at offset_, skipping special members; bounded by the file size so
  // that a loop in an AIX member chain ends with an error.
  for (;;) {
    if (++steps_ > archive_->max_steps()) {
      current_ = error{errc::malformed, archive_->bytes_.base() + offset_, "member chain loops"};
      return;
    }
    if (archive_->format_ == format::aix_big) {
      current_ = archive_->parse_big(offset_);
    } else {
      current_ = archive_->parse_gnu(offset_, offset_ == 8);
    }
    if (!current_ || current_->kind == member_kind::regular) return;
    if (current_->next_offset == 0) {
      done_ = true;
      return;
    }
    offset_ = current_->next_offset;
  }
}

inline member_range::iterator& member_range::iterator::operator++() {
  if (done_) return *this;
  if (!current_) {
    done_ = true;
    return *this;
  }
  std::uint64_t next = current_->next_offset;
  if (archive_->format_ == format::aix_big) {
    if (offset_ == archive_->last_member_) next = 0;
    if (next != 0 && next >= archive_->bytes_.size()) {
      current_ = error{errc::out_of_range, archive_->bytes_.base() + offset_ + 20, "next member offset past end of file"};
      offset_ = next;
      return *this;
    }
  }
  if (next == 0) {
    done_ = true;
    return *this;
  }
  offset_ = next;
  load();
  return *this;
}

// Whether an archive's first regular member (a thin archive's external
// member aside) is of a kind, `is_kind(byte_view)`: how nm picks the backend
// that reads an archive (a Mach-O or a COFF archive). False for bytes that
// are no archive or whose first member header is bad.
template <class IsKind>
bool first_member_is(byte_view bytes, IsKind&& is_kind) {
  auto a = archive::open(bytes);
  if (!a) return false;
  bool kind = false;
  auto r = a->for_each_member([&](const member& m) -> bool {
    kind = !m.external && is_kind(m.data);
    return false;
  });
  return r && kind;
}

#if LINKSCOPE_DEFINITIONS
LINKSCOPE_FUNC result<std::string> thin_member_path(std::string_view archive_path, const member& m,
                                            thin_options options) {
  std::string_view name = m.name;
  if (name.empty()) return error{errc::malformed, m.header_offset, "thin archive member has an empty name"};
  if (options.confine_to_archive_dir) {
    if (name.front() == '/') return error{errc::unsupported, m.header_offset, "thin archive member path is absolute"};
    // Walk the components; depth below zero means ".." escaped the folder.
    long depth = 0;
    std::size_t pos = 0;
    while (pos <= name.size()) {
      std::size_t slash = name.find('/', pos);
      if (slash == std::string_view::npos) slash = name.size();
      std::string_view part = name.substr(pos, slash - pos);
      if (part == "..") {
        if (--depth < 0)
          return error{errc::unsupported, m.header_offset, "thin archive member path leaves the archive's folder"};
      } else if (!part.empty() && part != ".") {
        ++depth;
      }
      pos = slash + 1;
    }
  }
  if (name.front() == '/') return std::string(name);
  std::size_t slash = archive_path.rfind('/');
  std::string path;
  if (slash != std::string_view::npos) path.assign(archive_path.substr(0, slash + 1));
  path.append(name);
  return path;
}

LINKSCOPE_FUNC result<archive> archive::open(byte_view bytes) {
  archive a;
  a.bytes_ = bytes;
  if (bytes.size() < 8) {
    if (bytes.size() > 0 && std::memcmp(bytes.data(), "!<arch>\n", bytes.size()) != 0 &&
        std::memcmp(bytes.data(), "!<thin>\n", bytes.size()) != 0 && std::memcmp(bytes.data(), "<bigaf>\n", bytes.size()) != 0)
      return bytes.fail(errc::bad_magic, 0, "not an archive (bad magic)");
    return bytes.fail(errc::truncated, 0, "file too small for an archive magic");
  }
  const char* magic = reinterpret_cast<const char*>(bytes.data());
  if (std::memcmp(magic, "<bigaf>\n", 8) == 0) {
    a.format_ = format::aix_big;
    LINKSCOPE_TRY(fixed, bytes.read<detail::big_fixed_header>(0, "truncated AIX big archive fixed-length header"));
    LINKSCOPE_TRY(memoff, detail::number_field(fixed.memoff, 20, 8, 10, true, "bad member table offset"));
    LINKSCOPE_TRY(gstoff, detail::number_field(fixed.gstoff, 20, 28, 10, true, "bad global symbol table offset"));
    LINKSCOPE_TRY(gst64off, detail::number_field(fixed.gst64off, 20, 48, 10, true, "bad 64-bit global symbol table offset"));
    LINKSCOPE_TRY(fstmoff, detail::number_field(fixed.fstmoff, 20, 68, 10, true, "bad first member offset"));
    LINKSCOPE_TRY(lstmoff, detail::number_field(fixed.lstmoff, 20, 88, 10, true, "bad last member offset"));
    LINKSCOPE_TRY(freeoff, detail::number_field(fixed.freeoff, 20, 108, 10, true, "bad free list offset"));
    (void)freeoff;
    (void)memoff;
    const std::uint64_t table_offsets[2] = {gstoff, gst64off};
    const table_kind table_kinds[2] = {table_kind::aix32, table_kind::aix64};
    const std::uint64_t field_offsets[2] = {28, 48};
    for (int i = 0; i < 2; ++i) {
      if (table_offsets[i] == 0) continue;
      if (table_offsets[i] >= bytes.size())
        return bytes.fail(errc::out_of_range, field_offsets[i], "global symbol table offset past end of file");
      LINKSCOPE_TRY(table, a.parse_big(table_offsets[i]));
      symbol_table_member& t = a.tables_[a.table_count_++];
      t.kind = table_kinds[i];
      t.header_offset = table_offsets[i];
      t.data = table.data;
      t.name = table.name;
    }
    if (fstmoff != 0 && fstmoff >= bytes.size())
      return bytes.fail(errc::out_of_range, 68, "first member offset past end of file");
    if (lstmoff != 0 && lstmoff >= bytes.size())
      return bytes.fail(errc::out_of_range, 88, "last member offset past end of file");
    a.first_member_ = fstmoff;
    a.last_member_ = lstmoff;
    return a;
  }
  if (std::memcmp(magic, "!<thin>\n", 8) == 0) {
    a.format_ = format::thin;
  } else if (std::memcmp(magic, "!<arch>\n", 8) == 0) {
    a.format_ = format::gnu;
  } else {
    return bytes.fail(errc::bad_magic, 0, "not an archive (bad magic)");
  }
  // Leading special members: "/" or "/SYM64/" or __.SYMDEF*, a COFF second
  // linker member, "//", "/<ECSYMBOLS>/". At most a handful.
  std::uint64_t offset = 8;
  bool first = true;
  bool bsd_names = false;
  for (int guard = 0; guard < 8 && offset < bytes.size(); ++guard) {
    LINKSCOPE_TRY(m, a.parse_gnu(offset, first));
    if (m.kind == member_kind::regular) break;
    if (first && m.name.size() >= 9 && m.name.substr(0, 9) == "__.SYMDEF") bsd_names = true;
    first = false;
    switch (m.kind) {
      case member_kind::symbol_table: {
        if (a.table_count_ == 2) break;
        symbol_table_member& t = a.tables_[a.table_count_++];
        t.header_offset = m.header_offset;
        t.data = m.data;
        t.name = m.name;
        if (m.name == "/")
          t.kind = table_kind::gnu32;
        else if (m.name == "/SYM64/")
          t.kind = table_kind::gnu64;
        else {
          t.kind = m.name.substr(0, 12) == "__.SYMDEF_64" ? table_kind::bsd64 : table_kind::bsd32;
          t.sorted = m.name.size() > 7 && m.name.substr(m.name.size() - 7) == " SORTED";
        }
        break;
      }
      case member_kind::second_linker: {
        a.format_ = format::coff;
        if (a.table_count_ == 2) break;
        symbol_table_member& t = a.tables_[a.table_count_++];
        t.kind = table_kind::coff_second;
        t.header_offset = m.header_offset;
        t.data = m.data;
        t.name = m.name;
        break;
      }
      case member_kind::long_names:
        a.long_names_ = m.data;
        break;
      default:
        break;
    }
    offset = m.next_offset;
    if (offset == 0) break;
  }
  if (bsd_names && a.format_ == format::gnu) a.format_ = format::bsd;
  a.first_member_ = offset < bytes.size() ? offset : 0;
  if (a.format_ == format::gnu && a.first_member_ != 0 && a.long_names_.empty()) {
    // A "#1/" name on the first regular member marks a BSD archive.
    if (fits(a.first_member_, 3, bytes.size()) && std::memcmp(bytes.data() + a.first_member_, "#1/", 3) == 0)
      a.format_ = format::bsd;
  }
  return a;
}

LINKSCOPE_FUNC result<member> archive::parse_gnu(std::uint64_t offset, bool first) const {
  const byte_view& b = bytes_;
  LINKSCOPE_TRY(h, b.read<detail::gnu_header>(offset, "truncated member header"));
  if (h.fmag[0] != '`' || h.fmag[1] != '\n')
    return b.fail(errc::bad_magic, offset + 58, "bad member header terminator (expected \"`\\n\")");
  member m;
  m.header_offset = offset;
  LINKSCOPE_TRY(size, detail::number_field(h.size, 10, b.base() + offset + 48, 10, false, "bad member size field"));
  LINKSCOPE_TRY(date, detail::number_field(h.date, 12, b.base() + offset + 16, 10, true, "bad member date field"));
  LINKSCOPE_TRY(uid, detail::number_field(h.uid, 6, b.base() + offset + 28, 10, true, "bad member uid field"));
  LINKSCOPE_TRY(gid, detail::number_field(h.gid, 6, b.base() + offset + 34, 10, true, "bad member gid field"));
  LINKSCOPE_TRY(mode, detail::number_field(h.mode, 8, b.base() + offset + 40, 8, true, "bad member mode field"));
  m.size = size;
  m.date = date;
  m.uid = uid;
  m.gid = gid;
  m.mode = mode;
  const std::uint64_t data_start = offset + detail::gnu_header_size;
  const std::string_view raw(h.name, 16);
  const std::string_view trimmed = detail::trim_right_spaces(raw);
  std::uint64_t name_in_data = 0;  // BSD #1/N
  if (raw[0] == '/') {
    if (trimmed == "/") {
      m.kind = first ? member_kind::symbol_table : member_kind::second_linker;
      m.name = "/";
    } else if (trimmed == "//") {
      m.kind = member_kind::long_names;
      m.name = "//";
    } else if (trimmed == "/SYM64/") {
      m.kind = member_kind::symbol_table;
      m.name = "/SYM64/";
    } else if (trimmed == "/<ECSYMBOLS>/") {
      m.kind = member_kind::ec_symbols;
      m.name = "/<ECSYMBOLS>/";
    } else if (detail::is_digit(raw[1])) {
      // "/N" (GNU, COFF), "/N:M" in a thin archive for a nested member.
      std::size_t end = 1;
      while (end < trimmed.size() && detail::is_digit(trimmed[end])) ++end;
      if (end != trimmed.size() && trimmed[end] != ':')
        return b.fail(errc::bad_field, offset, "bad long name reference in member name");
      std::uint64_t name_offset = 0;
      if (!parse_ascii_number(trimmed.substr(1, end - 1), name_offset))
        return b.fail(errc::bad_field, offset, "long name reference overflows");
      if (end != trimmed.size()) {
        if (!parse_ascii_number(trimmed.substr(end + 1), m.nested_offset))
          return b.fail(errc::bad_field, offset, "bad nested member offset in member name");
        m.nested = true;
      }
      LINKSCOPE_TRY(name, long_name(name_offset, b.base() + offset));
      m.name = name;
    } else {
      return b.fail(errc::bad_field, offset, "bad special member name");
    }
  } else if (raw.substr(0, 3) == "#1/") {
    std::uint64_t length = 0;
    if (!parse_ascii_number(raw.substr(3), length))
      return b.fail(errc::bad_field, offset + 3, "bad #1/ name length");
    if (length > size) return b.fail(errc::out_of_range, offset + 3, "#1/ name length past the end of the member");
    if (!fits(data_start, length, b.size()))
      return b.fail(errc::truncated, data_start, "#1/ member name past end of file");
    std::string_view name(reinterpret_cast<const char*>(b.data() + data_start), static_cast<std::size_t>(length));
    std::size_t nul = name.find('\0');
    if (nul != std::string_view::npos) name = name.substr(0, nul);
    m.name = name;
    name_in_data = length;
  } else {
    // Short name: ends at the first NUL, else the first '/', else the first space.
    std::size_t end = raw.find('\0');
    if (end == std::string_view::npos) end = raw.find('/');
    if (end == std::string_view::npos) end = raw.find(' ');
    if (end == std::string_view::npos) end = raw.size();
    m.name = raw.substr(0, end);
    // Point into the archive's bytes, not at the local header copy.
    m.name = std::string_view(reinterpret_cast<const char*>(b.data() + offset), m.name.size());
  }
  if (first && m.kind == member_kind::regular && m.name.size() >= 9 && m.name.substr(0, 9) == "__.SYMDEF") {
    // BSD ranlib table: "__.SYMDEF", "__.SYMDEF SORTED", "__.SYMDEF_64", "__.SYMDEF_64 SORTED".
    std::string_view full = name_in_data != 0 ? m.name : trimmed;
    if (full == "__.SYMDEF" || full == "__.SYMDEF SORTED" || full == "__.SYMDEF_64" || full == "__.SYMDEF_64 SORTED") {
      m.kind = member_kind::symbol_table;
      m.name = name_in_data != 0 ? full : std::string_view(reinterpret_cast<const char*>(b.data() + offset), full.size());
    }
  }
  m.data_offset = data_start + name_in_data;
  m.size = size - name_in_data;
  const bool external = format_ == format::thin && m.kind == member_kind::regular;
  if (external) {
    m.external = true;
    m.data = byte_view(b.data() + data_start, 0, b.base() + data_start);
    m.data_offset = data_start;
    m.next_offset = data_start;
  } else {
    if (!fits(m.data_offset, m.size, b.size()))
      return b.fail(errc::truncated, offset + 48, "member size past end of file");
    m.data = b.sub_unchecked(m.data_offset, m.size);
    std::uint64_t next = m.data_offset + m.size;
    next += next & 1;
    m.next_offset = next;
  }
  if (m.next_offset >= b.size()) m.next_offset = 0;
  return m;
}

LINKSCOPE_FUNC result<member> archive::parse_big(std::uint64_t offset) const {
  const byte_view& b = bytes_;
  LINKSCOPE_TRY(h, b.read<detail::big_member_header>(offset, "truncated AIX big member header"));
  const std::uint64_t base = b.base() + offset;
  member m;
  m.header_offset = offset;
  LINKSCOPE_TRY(size, detail::number_field(h.size, 20, base, 10, false, "bad member size field"));
  LINKSCOPE_TRY(next, detail::number_field(h.nextoff, 20, base + 20, 10, true, "bad next member offset"));
  LINKSCOPE_TRY(prev, detail::number_field(h.prevoff, 20, base + 40, 10, true, "bad previous member offset"));
  LINKSCOPE_TRY(date, detail::number_field(h.date, 12, base + 60, 10, true, "bad member date field"));
  LINKSCOPE_TRY(uid, detail::number_field(h.uid, 12, base + 72, 10, true, "bad member uid field"));
  LINKSCOPE_TRY(gid, detail::number_field(h.gid, 12, base + 84, 10, true, "bad member gid field"));
  LINKSCOPE_TRY(mode, detail::number_field(h.mode, 12, base + 96, 8, true, "bad member mode field"));
  LINKSCOPE_TRY(namlen, detail::number_field(h.namlen, 4, base + 108, 10, true, "bad member name length"));
  (void)prev;
  const std::uint64_t name_start = offset + detail::big_member_header_size;
  const std::uint64_t padded = namlen + (namlen & 1);
  if (!fits(name_start, padded + 2, b.size()))
    return b.fail(errc::truncated, name_start, "AIX big member name past end of file");
  const unsigned char* trailer = b.data() + name_start + padded;
  if (trailer[0] != '`' || trailer[1] != '\n')
    return b.fail(errc::bad_magic, name_start + padded, "bad member header terminator (expected \"`\\n\")");
  m.name = std::string_view(reinterpret_cast<const char*>(b.data() + name_start), static_cast<std::size_t>(namlen));
  m.data_offset = name_start + padded + 2;
  m.size = size;
  if (!fits(m.data_offset, size, b.size())) return b.fail(errc::truncated, offset, "member size past end of file");
  m.data = b.sub_unchecked(m.data_offset, size);
  m.date = date;
  m.uid = uid;
  m.gid = gid;
  m.mode = mode;
  m.next_offset = next;
  return m;
}
#endif  // LINKSCOPE_DEFINITIONS

}  // namespace ar
}  // namespace v0
}  // namespace linkscope
