// linkscope/macho/file.hpp — a lazy, bounds-checked view of one Mach-O image.
//
// Layout (<mach-o/loader.h>): the mach_header, then `ncmds` load commands in
// the `sizeofcmds` bytes right after it. Every command starts with
// {cmd, cmdsize}; cmdsize includes the command's trailing data (a segment's
// section records, a dylib's name) and is a multiple of 8 in 64-bit files
// and of 4 in 32-bit files. A string in a command (lc_str) is an offset from
// the command's start and must end, with a NUL, before the command does.
// Tables and streams elsewhere in the file are (offset, size) pairs relative
// to the start of the image (the slice, in a universal file).
//
// `file<MT>::open(bytes)` checks the header and walks the command headers
// once (ncmds is bounded by sizeofcmds / 8, itself inside the bytes): each
// cmdsize must be aligned, at least 8 and inside sizeofcmds. Nothing else is
// decoded until asked. The accessors each check what they read — the command
// is at least as big as its record, the strings lie inside their command,
// every (offset, size) lies inside the file — and return the record, a view
// or an error carrying the offset of the offending field. Checks follow
// LLVM's MachOObjectFile.cpp (checkSymtabCommand, checkDyldInfoCommand,
// checkLinkeditDataCommand, parseSegmentLoadCommand), which is what
// llvm-nm/llvm-objdump reject as "truncated or malformed object".
//
// `visit_macho(bytes, f)` reads the magic once and calls f with the matching
// file<macho32le/macho32be/macho64le/macho64be>.
#pragma once

#include <array>
#include <cstring>
#include <optional>
#include <type_traits>
#include <string_view>
#include <utility>
#include <vector>

#include "linkscope/core/bytes.hpp"
#include "linkscope/core/config.hpp"
#include "linkscope/core/error.hpp"
#include "linkscope/macho/types.hpp"

namespace linkscope {
inline namespace v0 {
namespace macho {

// The magic number read as big-endian bytes (what `file` prints first).
inline u32 raw_magic(byte_view bytes) noexcept {
  if (bytes.size() < 4) return 0;
  return load<u32, std::endian::big>(bytes.data());
}
inline bool is_macho(byte_view bytes) noexcept {
  const u32 m = raw_magic(bytes);
  return m == MH_MAGIC || m == MH_CIGAM || m == MH_MAGIC_64 || m == MH_CIGAM_64;
}

// How a dylib is loaded (the command that names it).
enum class dylib_kind : u8 { load, weak, reexport, upward, lazy };
constexpr const char* to_string(dylib_kind k) noexcept {
  switch (k) {
    case dylib_kind::load: return "load";
    case dylib_kind::weak: return "weak";
    case dylib_kind::reexport: return "reexport";
    case dylib_kind::upward: return "upward";
    case dylib_kind::lazy: return "lazy";
  }
  return "?";
}
// The dylib kind of a load command, or nullopt if it does not load a dylib.
constexpr std::optional<dylib_kind> dylib_kind_of(u32 cmd) noexcept {
  switch (cmd) {
    case LC_LOAD_DYLIB: return dylib_kind::load;
    case LC_LOAD_WEAK_DYLIB: return dylib_kind::weak;
    case LC_REEXPORT_DYLIB: return dylib_kind::reexport;
    case LC_LOAD_UPWARD_DYLIB: return dylib_kind::upward;
    case LC_LAZY_LOAD_DYLIB: return dylib_kind::lazy;
    default: return std::nullopt;
  }
}

// One load command: its id, size, file offset and bytes (cmdsize of them).
struct load_command_ref {
  u32 cmd = 0;
  u32 cmdsize = 0;
  u64 offset = 0;   // from the start of the image
  byte_view bytes;  // the whole command; bytes.base() is its offset in the outermost file
};

struct dylib_ref {
  std::string_view name;  // install name
  dylib_kind kind = dylib_kind::load;
  packed_version current_version;
  packed_version compatibility_version;
  u32 timestamp = 0;
  u64 offset = 0;  // of the load command
};

// The short name llvm-nm -m and otool print for a dylib ("(from libSystem)"):
// a framework's name (Foo.framework/Foo, Foo.framework/Versions/A/Foo), else
// the file name less ".dylib" and one version component (libSystem.B.dylib,
// libvips-cpp.8.18.8.dylib -> libvips-cpp.8.18), else up to its first '.', as LLVM's guessLibraryShortName does
// for the usual cases; a "_debug" or "_profile" suffix is dropped.
inline std::string_view library_short_name(std::string_view install_name) noexcept {
  const auto slash = install_name.rfind('/');
  std::string_view base = slash == std::string_view::npos ? install_name : install_name.substr(slash + 1);
  const auto framework = install_name.find(".framework/");
  if (framework == std::string_view::npos) {
    // libFoo.A.dylib -> libFoo; libvips-cpp.8.18.8.dylib -> libvips-cpp.8.18
    // (the .dylib and one version component go, as llvm-objdump prints them).
    constexpr std::string_view dylib = ".dylib";
    if (base.size() > dylib.size() && base.substr(base.size() - dylib.size()) == dylib) {
      base = base.substr(0, base.size() - dylib.size());
      const auto dot = base.rfind('.');
      if (dot != std::string_view::npos) base = base.substr(0, dot);
    } else {
      const auto dot = base.find('.');
      if (dot != std::string_view::npos) base = base.substr(0, dot);
    }
  }
  for (std::string_view suffix : {std::string_view("_debug"), std::string_view("_profile")})
    if (base.size() > suffix.size() && base.substr(base.size() - suffix.size()) == suffix)
      base = base.substr(0, base.size() - suffix.size());
  return base;
}

struct platform_version {
  u32 cmd = 0;       // LC_BUILD_VERSION or an LC_VERSION_MIN_*
  u32 platform = 0;  // PLATFORM_*; for LC_VERSION_MIN_* the platform it implies
  packed_version minos;
  packed_version sdk;
};

// The five dyld-info streams (empty views where the size is 0).
struct dyld_info_streams {
  byte_view rebase, bind, weak_bind, lazy_bind, exports;
  u32 cmd = 0;  // LC_DYLD_INFO or LC_DYLD_INFO_ONLY
};

template <class MT>
class file {
 public:
  using types = MT;
  using mach_header = typename MT::mach_header;
  using segment_command = typename MT::segment_command;
  using section = typename MT::section;
  using nlist = typename MT::nlist;
  using dylib_command = typename MT::dylib_command;
  using lc_str_command = typename MT::lc_str_command;
  using symtab_command = typename MT::symtab_command;
  using dysymtab_command = typename MT::dysymtab_command;
  using dyld_info_command = typename MT::dyld_info_command;
  using linkedit_data_command = typename MT::linkedit_data_command;
  using build_version_command = typename MT::build_version_command;
  using version_min_command = typename MT::version_min_command;
  using uuid_command = typename MT::uuid_command;
  using load_command = typename MT::load_command;

  file() = default;

  static result<file> open(byte_view bytes) noexcept;

  byte_view bytes() const noexcept { return bytes_; }
  const mach_header& header() const noexcept { return header_; }
  u32 cputype() const noexcept { return header_.cputype; }
  u32 cpusubtype() const noexcept { return header_.cpusubtype; }
  u32 filetype() const noexcept { return header_.filetype; }
  u32 flags() const noexcept { return header_.flags; }
  u32 command_count() const noexcept { return header_.ncmds; }
  static constexpr bool is64() noexcept { return MT::is64; }
  static constexpr bool is_big_endian() noexcept { return MT::endianness == std::endian::big; }
  bool is_two_level() const noexcept { return (flags() & MH_TWOLEVEL) != 0; }

  // Lazy iteration over the (already structurally checked) load commands.
  class command_iterator {
   public:
    using value_type = load_command_ref;
    using difference_type = std::ptrdiff_t;
    command_iterator() = default;
    command_iterator(const file* f, u64 offset, u32 index) : file_(f), offset_(offset), index_(index) {}
    load_command_ref operator*() const {
      const auto lc = file_->bytes_.template read_unchecked<load_command>(offset_);
      return {lc.cmd, lc.cmdsize, offset_, file_->bytes_.sub_unchecked(offset_, lc.cmdsize)};
    }
    command_iterator& operator++() {
      offset_ += file_->bytes_.template read_unchecked<load_command>(offset_).cmdsize;
      ++index_;
      return *this;
    }
    command_iterator operator++(int) {
      auto t = *this;
      ++*this;
      return t;
    }
    bool operator==(const command_iterator& o) const { return index_ == o.index_; }

   private:
    const file* file_ = nullptr;
    u64 offset_ = 0;
    u32 index_ = 0;
  };
  struct command_range {
    const file* f;
    command_iterator begin() const { return {f, sizeof(mach_header), 0}; }
    command_iterator end() const { return {f, f->commands_end_, f->command_count()}; }
  };
  command_range commands() const noexcept { return {this}; }

  // The command as record T: cmdsize must hold all of T.
  template <class T>
  result<T> command(const load_command_ref& lc) const noexcept {
    if (lc.cmdsize < sizeof(T)) return bytes_.fail(errc::bad_field, lc.offset + 4, "cmdsize too small for its command");
    return lc.bytes.template read_unchecked<T>(0);
  }

  // An lc_str inside command `lc`: past the fixed record, NUL-terminated before cmdsize.
  result<std::string_view> command_string(const load_command_ref& lc, u32 str_offset, u64 record_size,
                                          u64 field_offset) const noexcept;

  // A dylib command (LC_ID_DYLIB or one that loads a dylib).
  result<dylib_ref> dylib(const load_command_ref& lc) const noexcept;

  // Every dylib the image loads, in load-command order: entry i has
  // two-level-namespace library ordinal i + 1.
  result<std::vector<dylib_ref>> dylibs() const;

  // LC_ID_DYLIB (a dylib's own install name), if any.
  result<std::optional<dylib_ref>> install_name() const noexcept;

  // Strings of the commands with id `cmd` whose record is an lc_str_command
  // (LC_RPATH, LC_LOAD_DYLINKER, LC_SUB_FRAMEWORK, LC_SUB_CLIENT, ...).
  result<std::vector<std::string_view>> strings_of(u32 cmd) const;
  result<std::vector<std::string_view>> rpaths() const { return strings_of(LC_RPATH); }

  result<std::optional<std::array<u8, 16>>> uuid() const noexcept;

  // LC_BUILD_VERSION and LC_VERSION_MIN_* in command order (a zippered
  // binary has two build versions).
  result<std::vector<platform_version>> platforms() const;

  // A segment command and its section records (checked to lie in cmdsize,
  // and the segment's file range in the file).
  struct segment_ref {
    segment_command segment;
    record_array<section> sections;
    u64 offset = 0;  // of the load command
    byte_view section_bytes;  // the section records, in the file
    // (segname, sectname) of section i as views into the file.
    std::pair<std::string_view, std::string_view> section_names(std::size_t i) const noexcept {
      const unsigned char* rec = section_bytes.data() + i * sizeof(section);
      return {fixed_name(rec + 16), fixed_name(rec)};
    }
  };
  result<segment_ref> segment(const load_command_ref& lc) const noexcept;
  result<std::vector<segment_ref>> segments() const;
  // All sections in file order: n_sect k (1-based) is sections()[k - 1].
  result<std::vector<section>> sections() const;

  // The first command with id `cmd`, or nullopt.
  std::optional<load_command_ref> find_command(u32 cmd) const noexcept;

  // LC_SYMTAB: the nlist array and the string table, both inside the file.
  struct symtab_ref {
    record_array<nlist> symbols;
    byte_view strings;
    u64 offset = 0;  // of the load command
  };
  result<std::optional<symtab_ref>> symtab() const noexcept;
  // Name of symbol `sym`; n_strx must lie inside the string table (the
  // string may run to its end without a NUL only if it ends there: LLVM
  // reads up to strsize).
  result<std::string_view> symbol_name(const symtab_ref& table, const nlist& sym) const noexcept;

  // LC_DYSYMTAB with its symbol ranges checked against nsyms and its tables against the file.
  result<std::optional<dysymtab_command>> dysymtab() const noexcept;

  // LC_DYLD_INFO(_ONLY): each stream (off, size) inside the file.
  result<std::optional<dyld_info_streams>> dyld_info() const noexcept;

  // A linkedit_data_command's blob (LC_DYLD_EXPORTS_TRIE, LC_DYLD_CHAINED_FIXUPS,
  // LC_FUNCTION_STARTS, LC_DATA_IN_CODE, LC_CODE_SIGNATURE, ...), or nullopt.
  result<std::optional<byte_view>> linkedit_data(u32 cmd) const noexcept;

  // The export trie: LC_DYLD_EXPORTS_TRIE, else the dyld info export stream.
  result<std::optional<byte_view>> export_trie() const noexcept;

 private:
  byte_view bytes_;
  mach_header header_{};
  u64 commands_end_ = 0;
};

// The member functions' bodies: compiled once per variant in compiled mode
// (src/linkscope.cpp instantiates file<MT> for the four variants, and every
// other translation unit sees the `extern template` declarations below).
#if LINKSCOPE_DEFINITIONS
template <class MT>
LINKSCOPE_FUNC auto file<MT>::open(byte_view bytes) noexcept -> result<file> {
  file f;
  f.bytes_ = bytes;
  LINKSCOPE_TRY(header, bytes.template read<mach_header>(0, "Mach-O header truncated"));
  if (static_cast<u32>(header.magic) != MT::magic) return bytes.fail(errc::bad_magic, 0, "not a Mach-O file of this variant");
  f.header_ = header;
  const u64 ncmds = header.ncmds;
  const u64 sizeofcmds = header.sizeofcmds;
  if (!bytes.contains(sizeof(mach_header), sizeofcmds))
    return bytes.fail(errc::truncated, 20, "load commands (sizeofcmds) past end of file");
  // Every command takes at least 8 bytes, so ncmds is bounded by the bytes present.
  if (ncmds > sizeofcmds / sizeof(load_command))
    return bytes.fail(errc::too_large, 16, "ncmds does not fit in sizeofcmds");
  u64 offset = sizeof(mach_header);
  const u64 end = sizeof(mach_header) + sizeofcmds;
  for (u64 i = 0; i < ncmds; ++i) {
    if (!fits(offset, sizeof(load_command), end))
      return bytes.fail(errc::truncated, offset, "load command past sizeofcmds");
    const auto lc = bytes.template read_unchecked<load_command>(offset);
    const u64 size = lc.cmdsize;
    if (size < sizeof(load_command)) return bytes.fail(errc::bad_field, offset + 4, "cmdsize less than 8");
    if (size % MT::command_alignment != 0) return bytes.fail(errc::bad_field, offset + 4, "cmdsize not aligned");
    if (!fits(offset, size, end)) return bytes.fail(errc::truncated, offset + 4, "cmdsize past sizeofcmds");
    offset += size;
  }
  f.commands_end_ = offset;
  return f;
}

template <class MT>
LINKSCOPE_FUNC auto file<MT>::command_string(const load_command_ref& lc, u32 str_offset, u64 record_size,
                                             u64 field_offset) const noexcept -> result<std::string_view> {
  if (str_offset < record_size || str_offset >= lc.cmdsize)
    return bytes_.fail(errc::out_of_range, lc.offset + field_offset, "string offset outside its load command");
  const void* nul = std::memchr(lc.bytes.data() + str_offset, 0, lc.cmdsize - str_offset);
  if (nul == nullptr) return bytes_.fail(errc::malformed, lc.offset + str_offset, "string not terminated in its load command");
  const char* first = reinterpret_cast<const char*>(lc.bytes.data() + str_offset);
  return std::string_view(first, static_cast<std::size_t>(static_cast<const char*>(nul) - first));
}

template <class MT>
LINKSCOPE_FUNC auto file<MT>::dylib(const load_command_ref& lc) const noexcept -> result<dylib_ref> {
  LINKSCOPE_TRY(d, command<dylib_command>(lc));
  LINKSCOPE_TRY(name, command_string(lc, d.name, sizeof(dylib_command), 8));
  dylib_ref out;
  out.name = name;
  out.kind = dylib_kind_of(lc.cmd).value_or(dylib_kind::load);
  out.current_version = {d.current_version};
  out.compatibility_version = {d.compatibility_version};
  out.timestamp = d.timestamp;
  out.offset = lc.offset;
  return out;
}

template <class MT>
LINKSCOPE_FUNC auto file<MT>::dylibs() const -> result<std::vector<dylib_ref>> {
  std::vector<dylib_ref> out;
  for (const auto lc : commands()) {
    if (!dylib_kind_of(lc.cmd)) continue;
    LINKSCOPE_TRY(d, dylib(lc));
    out.push_back(d);
  }
  return out;
}

template <class MT>
LINKSCOPE_FUNC auto file<MT>::install_name() const noexcept -> result<std::optional<dylib_ref>> {
  for (const auto lc : commands()) {
    if (lc.cmd != LC_ID_DYLIB) continue;
    LINKSCOPE_TRY(d, dylib(lc));
    return std::optional<dylib_ref>(d);
  }
  return std::optional<dylib_ref>();
}

template <class MT>
LINKSCOPE_FUNC auto file<MT>::strings_of(u32 cmd) const -> result<std::vector<std::string_view>> {
  std::vector<std::string_view> out;
  for (const auto lc : commands()) {
    if (lc.cmd != cmd) continue;
    LINKSCOPE_TRY(c, command<lc_str_command>(lc));
    LINKSCOPE_TRY(s, command_string(lc, c.offset, sizeof(lc_str_command), 8));
    out.push_back(s);
  }
  return out;
}

template <class MT>
LINKSCOPE_FUNC auto file<MT>::uuid() const noexcept -> result<std::optional<std::array<u8, 16>>> {
  for (const auto lc : commands()) {
    if (lc.cmd != LC_UUID) continue;
    LINKSCOPE_TRY(c, command<uuid_command>(lc));
    std::array<u8, 16> out{};
    std::memcpy(out.data(), c.uuid, 16);
    return std::optional<std::array<u8, 16>>(out);
  }
  return std::optional<std::array<u8, 16>>();
}

template <class MT>
LINKSCOPE_FUNC auto file<MT>::platforms() const -> result<std::vector<platform_version>> {
  std::vector<platform_version> out;
  for (const auto lc : commands()) {
    if (lc.cmd == LC_BUILD_VERSION) {
      LINKSCOPE_TRY(c, command<build_version_command>(lc));
      u64 tools = 0;
      if (!checked_mul(c.ntools, sizeof(typename MT::build_tool_version), tools) ||
          tools > lc.cmdsize - sizeof(build_version_command))
        return bytes_.fail(errc::truncated, lc.offset + 20, "build tools past end of LC_BUILD_VERSION");
      out.push_back({lc.cmd, c.platform, {c.minos}, {c.sdk}});
    } else if (lc.cmd == LC_VERSION_MIN_MACOSX || lc.cmd == LC_VERSION_MIN_IPHONEOS ||
               lc.cmd == LC_VERSION_MIN_TVOS || lc.cmd == LC_VERSION_MIN_WATCHOS) {
      LINKSCOPE_TRY(c, command<version_min_command>(lc));
      const u32 platform = lc.cmd == LC_VERSION_MIN_MACOSX     ? PLATFORM_MACOS
                           : lc.cmd == LC_VERSION_MIN_IPHONEOS ? PLATFORM_IOS
                           : lc.cmd == LC_VERSION_MIN_TVOS     ? PLATFORM_TVOS
                                                               : PLATFORM_WATCHOS;
      out.push_back({lc.cmd, platform, {c.version}, {c.sdk}});
    }
  }
  return out;
}

template <class MT>
LINKSCOPE_FUNC auto file<MT>::segment(const load_command_ref& lc) const noexcept -> result<segment_ref> {
  LINKSCOPE_TRY(seg, command<segment_command>(lc));
  u64 section_bytes = 0;
  if (!checked_mul(seg.nsects, sizeof(section), section_bytes) ||
      section_bytes > lc.cmdsize - sizeof(segment_command))
    return bytes_.fail(errc::truncated, lc.offset + 8 + 16 + 4 * sizeof(typename MT::uword),
                       "segment's sections past its cmdsize");
  if (!bytes_.contains(seg.fileoff, seg.filesize))
    return bytes_.fail(errc::truncated, lc.offset + 8 + 16 + 2 * sizeof(typename MT::uword),
                       "segment fileoff + filesize past end of file");
  auto sections = record_array<section>(lc.bytes.data() + sizeof(segment_command), seg.nsects);
  for (u32 i = 0; i < seg.nsects; ++i) {
    const section s = sections[i];
    // An object's sections have file contents unless zerofill (LLVM: "offset
    // field plus size field ... extends past the end of the file").
    if (!s.is_zerofill() && filetype() != MH_DSYM && !bytes_.contains(s.offset, s.size))
      return bytes_.fail(errc::truncated, lc.offset + sizeof(segment_command) + u64{i} * sizeof(section),
                         "section offset + size past end of file");
  }
  return segment_ref{seg, sections, lc.offset, lc.bytes.sub_unchecked(sizeof(segment_command), section_bytes)};
}

template <class MT>
LINKSCOPE_FUNC auto file<MT>::segments() const -> result<std::vector<segment_ref>> {
  std::vector<segment_ref> out;
  for (const auto lc : commands()) {
    if (lc.cmd != MT::segment_command_id) continue;
    LINKSCOPE_TRY(s, segment(lc));
    out.push_back(s);
  }
  return out;
}

template <class MT>
LINKSCOPE_FUNC auto file<MT>::sections() const -> result<std::vector<section>> {
  std::vector<section> out;
  for (const auto lc : commands()) {
    if (lc.cmd != MT::segment_command_id) continue;
    LINKSCOPE_TRY(s, segment(lc));
    for (const auto& sec : s.sections) out.push_back(sec);
  }
  return out;
}

template <class MT>
LINKSCOPE_FUNC auto file<MT>::find_command(u32 cmd) const noexcept -> std::optional<load_command_ref> {
  for (const auto lc : commands())
    if (lc.cmd == cmd) return lc;
  return std::nullopt;
}

template <class MT>
LINKSCOPE_FUNC auto file<MT>::symtab() const noexcept -> result<std::optional<symtab_ref>> {
  auto lc = find_command(LC_SYMTAB);
  if (!lc) return std::optional<symtab_ref>();
  LINKSCOPE_TRY(st, command<symtab_command>(*lc));
  LINKSCOPE_TRY(syms, bytes_.template array<nlist>(st.symoff, st.nsyms, sizeof(nlist),
                                                   "symbol table (symoff + nsyms) past end of file"));
  LINKSCOPE_TRY(strings, bytes_.sub(st.stroff, st.strsize, "string table (stroff + strsize) past end of file"));
  return std::optional<symtab_ref>(symtab_ref{syms, strings, lc->offset});
}

template <class MT>
LINKSCOPE_FUNC auto file<MT>::symbol_name(const symtab_ref& table, const nlist& sym) const noexcept
    -> result<std::string_view> {
  const u64 strx = sym.n_strx;
  if (strx >= table.strings.size()) {
    if (strx == 0) return std::string_view();
    return table.strings.fail(errc::out_of_range, 0, "n_strx past end of string table");
  }
  const char* first = reinterpret_cast<const char*>(table.strings.data() + strx);
  const std::size_t room = table.strings.size() - static_cast<std::size_t>(strx);
  const void* nul = std::memchr(first, 0, room);
  return std::string_view(first, nul ? static_cast<std::size_t>(static_cast<const char*>(nul) - first) : room);
}

template <class MT>
LINKSCOPE_FUNC auto file<MT>::dysymtab() const noexcept -> result<std::optional<dysymtab_command>> {
  auto lc = find_command(LC_DYSYMTAB);
  if (!lc) return std::optional<dysymtab_command>();
  LINKSCOPE_TRY(d, command<dysymtab_command>(*lc));
  u64 nsyms = 0;
  if (auto st = find_command(LC_SYMTAB)) {
    LINKSCOPE_TRY(s, command<symtab_command>(*st));
    nsyms = s.nsyms;
  }
  const u64 ranges[3][2] = {{d.ilocalsym, d.nlocalsym}, {d.iextdefsym, d.nextdefsym}, {d.iundefsym, d.nundefsym}};
  for (int i = 0; i < 3; ++i)
    if (!fits(ranges[i][0], ranges[i][1], nsyms))
      return bytes_.fail(errc::out_of_range, lc->offset + 8 + 8 * static_cast<u64>(i), "dysymtab symbol range past nsyms");
  if (!bytes_.contains(d.indirectsymoff, u64{d.nindirectsyms} * 4))
    return bytes_.fail(errc::truncated, lc->offset + 56, "indirect symbol table past end of file");
  return std::optional<dysymtab_command>(d);
}

template <class MT>
LINKSCOPE_FUNC auto file<MT>::dyld_info() const noexcept -> result<std::optional<dyld_info_streams>> {
  std::optional<load_command_ref> lc = find_command(LC_DYLD_INFO_ONLY);
  if (!lc) lc = find_command(LC_DYLD_INFO);
  if (!lc) return std::optional<dyld_info_streams>();
  LINKSCOPE_TRY(d, command<dyld_info_command>(*lc));
  dyld_info_streams out;
  out.cmd = lc->cmd;
  const u32 pairs[5][2] = {{d.rebase_off, d.rebase_size}, {d.bind_off, d.bind_size},
                           {d.weak_bind_off, d.weak_bind_size}, {d.lazy_bind_off, d.lazy_bind_size},
                           {d.export_off, d.export_size}};
  byte_view* views[5] = {&out.rebase, &out.bind, &out.weak_bind, &out.lazy_bind, &out.exports};
  for (int i = 0; i < 5; ++i) {
    if (pairs[i][1] == 0) continue;
    if (!bytes_.contains(pairs[i][0], pairs[i][1]))
      return bytes_.fail(errc::truncated, lc->offset + 8 + 8 * static_cast<u64>(i), "dyld info stream past end of file");
    *views[i] = bytes_.sub_unchecked(pairs[i][0], pairs[i][1]);
  }
  return std::optional<dyld_info_streams>(out);
}

template <class MT>
LINKSCOPE_FUNC auto file<MT>::linkedit_data(u32 cmd) const noexcept -> result<std::optional<byte_view>> {
  auto lc = find_command(cmd);
  if (!lc) return std::optional<byte_view>();
  LINKSCOPE_TRY(d, command<linkedit_data_command>(*lc));
  LINKSCOPE_TRY(blob, bytes_.sub(d.dataoff, d.datasize, "linkedit data (dataoff + datasize) past end of file"));
  return std::optional<byte_view>(blob);
}

template <class MT>
LINKSCOPE_FUNC auto file<MT>::export_trie() const noexcept -> result<std::optional<byte_view>> {
  LINKSCOPE_TRY(trie, linkedit_data(LC_DYLD_EXPORTS_TRIE));
  if (trie) return trie;
  LINKSCOPE_TRY(info, dyld_info());
  if (info && !info->exports.empty()) return std::optional<byte_view>(info->exports);
  return std::optional<byte_view>();
}

#endif  // LINKSCOPE_DEFINITIONS

#if LINKSCOPE_EXTERN_TEMPLATES || defined(LINKSCOPE_IMPLEMENTATION)
extern template class file<macho32le>;
extern template class file<macho32be>;
extern template class file<macho64le>;
extern template class file<macho64be>;
#endif

// Open `bytes` as whichever of the four variants its magic names and call f(file<MT>).
template <class F>
auto visit_macho(byte_view bytes, F&& f) -> decltype(f(std::declval<const file<macho64le>&>())) {
  using R = decltype(f(std::declval<const file<macho64le>&>()));
  auto run = [&](auto tag) -> R {
    using MT = typename decltype(tag)::type;
    auto opened = file<MT>::open(bytes);
    if (!opened) return R(opened.error());
    return f(*opened);
  };
  switch (raw_magic(bytes)) {
    case MH_MAGIC: return run(std::type_identity<macho32be>{});
    case MH_CIGAM: return run(std::type_identity<macho32le>{});
    case MH_MAGIC_64: return run(std::type_identity<macho64be>{});
    case MH_CIGAM_64: return run(std::type_identity<macho64le>{});
    default:
      if (bytes.size() < 4) return R(bytes.fail(errc::truncated, 0, "Mach-O magic truncated"));
      return R(bytes.fail(errc::bad_magic, 0, "not a Mach-O file"));
  }
}

}  // namespace macho
}  // namespace v0
}  // namespace linkscope
