// linkscope/elf/file.hpp — lazy views over an ELF file's headers.
//
// Layout (gABI "ELF Header", "Sections", "Program Header"):
//   offset 0        Ehdr (52 or 64 bytes), e_ident tells class and byte order
//   e_phoff         e_phnum  x e_phentsize  program headers (segments)
//   e_shoff         e_shnum  x e_shentsize  section headers
// Extended numbering (gABI "Sections", Table "Section Header Table Entry:
// Index 0"): if the real section count is >= SHN_LORESERVE, e_shnum is 0 and
// section 0's sh_size holds the count; if the section-name table's index is
// >= SHN_LORESERVE, e_shstrndx is SHN_XINDEX and section 0's sh_link holds it.
// (e_phnum == PN_XNUM (0xffff) likewise defers to section 0's sh_info.)
//
// `file<ET>::open(bytes)` checks the header and that both header tables lie in
// the bytes; nothing else is parsed until asked. `visit_elf(bytes, f)` reads
// e_ident once and calls f with the matching file<elf32le/elf32be/elf64le/
// elf64be>, so the code in f is compiled once per variant and never branches
// per record.
//
// Section contents are handed out as byte_views after an overflow-safe bounds
// check; typed tables (`table<T>`) also check sh_entsize against the record
// size and that sh_size is a multiple of it. A string table must end in NUL.
#pragma once

#include <cstring>
#include <optional>
#include <string_view>
#include <type_traits>
#include <utility>

#include "linkscope/core/bytes.hpp"
#include "linkscope/core/error.hpp"
#include "linkscope/elf/types.hpp"

namespace linkscope {
inline namespace v0 {
namespace elf {

inline bool is_elf(byte_view bytes) noexcept {
  return bytes.size() >= 4 && std::memcmp(bytes.data(), elf_magic, 4) == 0;
}

template <class ET>
class file {
 public:
  using types = ET;
  using Ehdr = typename ET::Ehdr;
  using Shdr = typename ET::Shdr;
  using Phdr = typename ET::Phdr;
  using Sym = typename ET::Sym;

  file() = default;

  static result<file> open(byte_view bytes) noexcept {
    file f;
    f.bytes_ = bytes;
    if (!is_elf(bytes)) return bytes.fail(errc::bad_magic, 0, "not an ELF file");
    if (bytes.size() < ei_nident) return bytes.fail(errc::truncated, 0, "ELF identification truncated");
    const u8 cls = bytes.data()[ei_class];
    const u8 data = bytes.data()[ei_data];
    if (cls != (ET::is64 ? elfclass64 : elfclass32)) return bytes.fail(errc::bad_field, ei_class, "ELF class mismatch");
    if (data != (ET::endianness == std::endian::little ? elfdata2lsb : elfdata2msb))
      return bytes.fail(errc::bad_field, ei_data, "ELF data encoding mismatch");
    LINKSCOPE_TRY(ehdr, bytes.read<Ehdr>(0, "ELF header truncated"));
    f.ehdr_ = ehdr;

    // Section headers (optional).
    const u64 shoff = ehdr.e_shoff;
    u64 shnum = ehdr.e_shnum;
    u64 shstrndx = ehdr.e_shstrndx;
    if (shoff != 0) {
      if (ehdr.e_shentsize != sizeof(Shdr))
        return bytes.fail(errc::bad_field, offsetof_shentsize(), "e_shentsize is not the Shdr size");
      LINKSCOPE_TRY(sh0, bytes.read<Shdr>(shoff, "section header table past end of file"));
      if (shnum == 0) shnum = sh0.sh_size;  // extended numbering
      if (shstrndx == SHN_XINDEX) shstrndx = sh0.sh_link;
      u64 table_bytes = 0;
      if (!checked_mul(shnum, sizeof(Shdr), table_bytes))
        return bytes.fail(errc::overflow, shoff, "section header table size overflows");
      if (!fits(shoff, table_bytes, bytes.size()))
        return bytes.fail(errc::truncated, shoff, "section header table past end of file");
      f.shnum_ = static_cast<std::size_t>(shnum);
      f.shdrs_ = record_array<Shdr>(bytes.data() + shoff, f.shnum_);
      if (shnum == 0) shstrndx = 0;
      if (shstrndx != SHN_UNDEF && shstrndx >= shnum)
        return bytes.fail(errc::out_of_range, offsetof_shstrndx(), "e_shstrndx out of range");
      f.shstrndx_ = static_cast<u32>(shstrndx);
    }

    // Program headers (optional).
    const u64 phoff = ehdr.e_phoff;
    u64 phnum = ehdr.e_phnum;
    if (phoff != 0 && phnum != 0) {
      if (ehdr.e_phentsize != sizeof(Phdr))
        return bytes.fail(errc::bad_field, offsetof_phentsize(), "e_phentsize is not the Phdr size");
      if (phnum == 0xffff && f.shnum_ > 0) phnum = f.shdrs_[0].sh_info;  // PN_XNUM
      LINKSCOPE_TRY(phdrs, bytes.array<Phdr>(phoff, phnum, sizeof(Phdr), "program header table past end of file"));
      f.phdrs_ = phdrs;
    }
    return f;
  }

  byte_view bytes() const noexcept { return bytes_; }
  const Ehdr& header() const noexcept { return ehdr_; }
  u16 type() const noexcept { return ehdr_.e_type; }
  u16 machine() const noexcept { return ehdr_.e_machine; }
  u8 osabi() const noexcept { return ehdr_.e_ident[ei_osabi]; }
  static constexpr bool is64() noexcept { return ET::is64; }
  static constexpr bool is_big_endian() noexcept { return ET::endianness == std::endian::big; }

  const record_array<Phdr>& program_headers() const noexcept { return phdrs_; }
  // The PT_INTERP path (the program interpreter ld.so is), "" when there is
  // none or it does not read as a NUL-terminated string inside the file.
  std::string_view interpreter() const noexcept {
    for (const Phdr& ph : phdrs_) {
      if (static_cast<u32>(ph.p_type) != PT_INTERP) continue;
      auto path = bytes_.cstring(ph.p_offset);
      return path ? *path : std::string_view{};
    }
    return {};
  }
  const record_array<Shdr>& section_headers() const noexcept { return shdrs_; }
  // Real section count (extended numbering applied); 0 without section headers.
  std::size_t section_count() const noexcept { return shnum_; }
  u32 shstrndx() const noexcept { return shstrndx_; }

  result<Shdr> section(u64 index) const noexcept {
    if (index >= shnum_) return bytes_.fail(errc::out_of_range, ehdr_.e_shoff, "section index out of range");
    return shdrs_[static_cast<std::size_t>(index)];
  }
  // File offset of section header `index` (for error messages).
  u64 section_header_offset(u64 index) const noexcept {
    return static_cast<u64>(ehdr_.e_shoff) + index * sizeof(Shdr);
  }

  // The bytes of a section (empty for SHT_NOBITS).
  result<byte_view> section_data(const Shdr& sh) const noexcept {
    if (sh.sh_type == SHT_NOBITS) return byte_view(bytes_.data(), 0, bytes_.base());
    return bytes_.sub(sh.sh_offset, sh.sh_size, "section contents past end of file");
  }

  // A section as an array of T: sh_entsize must equal sizeof(T) (0 is
  // accepted only when `allow_zero_entsize`), sh_size a multiple of it.
  template <class T>
  result<record_array<T>> table(const Shdr& sh, bool allow_zero_entsize = false) const noexcept {
    const u64 entsize = sh.sh_entsize;
    if (entsize != sizeof(T) && !(entsize == 0 && allow_zero_entsize))
      return bytes_.fail(errc::bad_field, sh.sh_offset, "section entry size does not match its record size");
    if (sh.sh_size % sizeof(T) != 0)
      return bytes_.fail(errc::bad_field, sh.sh_offset, "section size is not a multiple of its entry size");
    return bytes_.template array<T>(sh.sh_offset, sh.sh_size / sizeof(T), sizeof(T), "section table past end of file");
  }

  // A string table section: SHT_STRTAB, in the file, ends with NUL.
  result<byte_view> string_table(u64 index) const noexcept {
    LINKSCOPE_TRY(sh, section(index));
    if (sh.sh_type != SHT_STRTAB)
      return bytes_.fail(errc::bad_field, section_header_offset(index), "linked section is not a string table");
    LINKSCOPE_TRY(data, section_data(sh));
    if (data.empty() || data.data()[data.size() - 1] != 0)
      return bytes_.fail(errc::malformed, sh.sh_offset, "string table does not end with NUL");
    return data;
  }

  // Name of a section through e_shstrndx ("" when there is no name table).
  result<std::string_view> section_name(const Shdr& sh) const noexcept {
    if (shstrndx_ == SHN_UNDEF) return std::string_view();
    if (!names_checked_) {
      auto names = string_table(shstrndx_);
      if (!names) return names.error();
      names_ = *names;
      names_checked_ = true;
    }
    return names_.cstring(sh.sh_name);
  }

  // First section of type `type`, with its index.
  std::optional<std::pair<u32, Shdr>> find_section(u32 type) const noexcept {
    for (std::size_t i = 0; i < shnum_; ++i) {
      Shdr sh = shdrs_[i];
      if (sh.sh_type == type) return std::pair<u32, Shdr>(static_cast<u32>(i), sh);
    }
    return std::nullopt;
  }
  std::optional<std::pair<u32, Shdr>> find_section(std::string_view name) const noexcept {
    for (std::size_t i = 0; i < shnum_; ++i) {
      Shdr sh = shdrs_[i];
      auto n = section_name(sh);
      if (n && *n == name) return std::pair<u32, Shdr>(static_cast<u32>(i), sh);
    }
    return std::nullopt;
  }

  // First program header of type `type`.
  std::optional<Phdr> find_segment(u32 type) const noexcept {
    for (const Phdr& ph : phdrs_)
      if (ph.p_type == type) return ph;
    return std::nullopt;
  }

  // Map a virtual address range to a file offset through the PT_LOAD
  // segments (the file-backed part, p_filesz). Fails if [vaddr, vaddr+size)
  // is not wholly inside one segment's file image or the file. `where` is
  // the file offset reported on failure (the field that held the address).
  result<u64> vaddr_to_offset(u64 vaddr, u64 size = 0, u64 where = no_offset) const noexcept {
    for (const Phdr& ph : phdrs_) {
      if (ph.p_type != PT_LOAD) continue;
      const u64 start = ph.p_vaddr;
      const u64 filesz = ph.p_filesz;
      if (vaddr < start || vaddr - start >= filesz) continue;
      const u64 delta = vaddr - start;
      if (size > filesz - delta) continue;
      u64 offset = 0;
      if (!checked_add(static_cast<u64>(ph.p_offset), delta, offset) || !fits(offset, size, bytes_.size()))
        return bytes_.fail(errc::truncated, ph.p_offset, "segment past end of file");
      return offset;
    }
    return error{errc::out_of_range, where == no_offset ? no_offset : bytes_.base() + where,
                 "address range not in the file image of any PT_LOAD segment"};
  }

 private:
  static constexpr u64 offsetof_shentsize() noexcept { return ET::is64 ? 58 : 46; }
  static constexpr u64 offsetof_shstrndx() noexcept { return ET::is64 ? 62 : 50; }
  static constexpr u64 offsetof_phentsize() noexcept { return ET::is64 ? 54 : 42; }

  byte_view bytes_;
  Ehdr ehdr_{};
  record_array<Phdr> phdrs_;
  record_array<Shdr> shdrs_;
  std::size_t shnum_ = 0;
  u32 shstrndx_ = 0;
  mutable byte_view names_;
  mutable bool names_checked_ = false;
};

// What kind of ELF file this is: the one answer to "what is this file?" for
// every loader, linker and sniffer (elf::identify). It reads e_ident and the
// Ehdr, then, when the program header table lies in `bytes`, the segments:
//   relocatable  ET_REL (an object for a static link)
//   executable   ET_EXEC
//   pie          ET_DYN whose DT_FLAGS_1 has DF_1_PIE (what file(1) and
//                readelf call a "position-independent executable"; a PIE
//                linked before binutils 2.26 lacks the flag and is `shared`)
//   shared       any other ET_DYN (a DSO; libc.so.6 is one although it has
//                PT_INTERP and runs)
//   core         ET_CORE;  other: anything else (ET_NONE, OS/processor types)
// `dynamic` is "has PT_DYNAMIC" (ld.so maps it with its dependencies; an
// ET_EXEC without it is statically linked). Given only the first bytes of a
// file (a search candidate's 64-byte header), the header fields are exact and
// `segments_read` is false.
enum class file_kind : u8 { relocatable, executable, pie, shared, core, other };

constexpr const char* to_string(file_kind k) noexcept {
  switch (k) {
    case file_kind::relocatable: return "relocatable";
    case file_kind::executable: return "executable";
    case file_kind::pie: return "pie";
    case file_kind::shared: return "shared";
    case file_kind::core: return "core";
    case file_kind::other: return "other";
  }
  return "?";
}

struct identity {
  u8 elf_class = 0;   // EI_CLASS: elfclass32 or elfclass64
  u8 data = 0;        // EI_DATA: elfdata2lsb or elfdata2msb
  u8 version = 0;     // EI_VERSION (1 = EV_CURRENT)
  u8 osabi = 0;       // EI_OSABI
  u16 type = 0;       // e_type
  u16 machine = 0;    // e_machine
  file_kind kind = file_kind::other;
  bool segments_read = false;  // the program headers were in `bytes` and read
  bool dynamic = false;        // PT_DYNAMIC present
  bool interpreter = false;    // PT_INTERP present

  constexpr bool is64() const noexcept { return elf_class == elfclass64; }
  constexpr bool big_endian() const noexcept { return data == elfdata2msb; }
  // ET_EXEC or ET_DYN: what ld.so's open_verify accepts as a loadable object.
  constexpr bool loadable() const noexcept { return type == ET_EXEC || type == ET_DYN; }
  // A loadable object that ld.so links dynamically (has PT_DYNAMIC).
  constexpr bool dynamically_linked() const noexcept { return loadable() && dynamic; }
};

namespace detail {
template <class ET>
result<identity> identify_as(byte_view bytes, identity id) noexcept {
  using Ehdr = typename ET::Ehdr;
  using Phdr = typename ET::Phdr;
  using Dyn = typename ET::Dyn;
  LINKSCOPE_TRY(ehdr, bytes.read<Ehdr>(0, "ELF header truncated"));
  id.type = ehdr.e_type;
  id.machine = ehdr.e_machine;
  switch (id.type) {
    case ET_REL: id.kind = file_kind::relocatable; break;
    case ET_EXEC: id.kind = file_kind::executable; break;
    case ET_DYN: id.kind = file_kind::shared; break;
    case ET_CORE: id.kind = file_kind::core; break;
    default: id.kind = file_kind::other; break;
  }
  const u64 phoff = ehdr.e_phoff;
  const u64 phnum = ehdr.e_phnum;
  u64 table_bytes = 0;
  if (phoff == 0 || phnum == 0 || ehdr.e_phentsize != sizeof(Phdr) || phnum == 0xffff /* PN_XNUM */ ||
      !checked_mul(phnum, sizeof(Phdr), table_bytes) || !fits(phoff, table_bytes, bytes.size())) {
    id.segments_read = phoff == 0 || phnum == 0;  // no table at all: nothing more to read
    return id;
  }
  id.segments_read = true;
  const record_array<Phdr> phdrs(bytes.data() + phoff, static_cast<std::size_t>(phnum));
  for (const Phdr& ph : phdrs) {
    const u32 t = ph.p_type;
    if (t == PT_INTERP) id.interpreter = true;
    if (t != PT_DYNAMIC || id.dynamic) continue;
    id.dynamic = true;
    if (id.type != ET_DYN) continue;
    const u64 off = ph.p_offset;
    const u64 size = ph.p_filesz;
    if (!fits(off, size, bytes.size())) continue;
    const record_array<Dyn> dyns(bytes.data() + off, static_cast<std::size_t>(size / sizeof(Dyn)));
    for (const Dyn& d : dyns) {
      const i64 tag = static_cast<i64>(d.d_tag);
      if (tag == DT_NULL) break;
      if (tag == DT_FLAGS_1 && (static_cast<u64>(d.d_val) & DF_1_PIE) != 0) id.kind = file_kind::pie;
    }
  }
  return id;
}
}  // namespace detail

inline result<identity> identify(byte_view bytes) noexcept {
  if (!is_elf(bytes)) return bytes.fail(errc::bad_magic, 0, "not an ELF file");
  if (bytes.size() < ei_nident) return bytes.fail(errc::truncated, 0, "ELF identification truncated");
  identity id;
  id.elf_class = bytes.data()[ei_class];
  id.data = bytes.data()[ei_data];
  id.version = bytes.data()[ei_version];
  id.osabi = bytes.data()[ei_osabi];
  if (id.elf_class != elfclass32 && id.elf_class != elfclass64)
    return bytes.fail(errc::bad_field, ei_class, "bad ELF class");
  if (id.data != elfdata2lsb && id.data != elfdata2msb) return bytes.fail(errc::bad_field, ei_data, "bad ELF data encoding");
  if (id.is64()) return id.big_endian() ? detail::identify_as<elf64be>(bytes, id) : detail::identify_as<elf64le>(bytes, id);
  return id.big_endian() ? detail::identify_as<elf32be>(bytes, id) : detail::identify_as<elf32le>(bytes, id);
}

// Open `bytes` as the right file<ET> and call f(const file<ET>&). f must
// return the same result<R> type for all four variants; errors of opening
// are returned as that type.
template <class F>
auto visit_elf(byte_view bytes, F&& f) -> std::invoke_result_t<F&, const file<elf64le>&> {
  using R = std::invoke_result_t<F&, const file<elf64le>&>;
  static_assert(std::is_same_v<R, std::invoke_result_t<F&, const file<elf32le>&>> &&
                    std::is_same_v<R, std::invoke_result_t<F&, const file<elf32be>&>> &&
                    std::is_same_v<R, std::invoke_result_t<F&, const file<elf64be>&>>,
                "visit_elf: f must return the same type for every ELF variant");
  auto kind = identify(bytes);
  if (!kind) return R(kind.error());
  auto run = [&](auto tag) -> R {
    using ET = decltype(tag);
    auto opened = file<ET>::open(bytes);
    if (!opened) return R(opened.error());
    return f(*opened);
  };
  if (kind->is64()) return kind->big_endian() ? run(elf64be{}) : run(elf64le{});
  return kind->big_endian() ? run(elf32be{}) : run(elf32le{});
}

}  // namespace elf
}  // namespace v0
}  // namespace linkscope
