// linkscope/elf/notes.hpp — ELF notes and the GNU property note.
//
// A note section (SHT_NOTE) or segment (PT_NOTE) is a sequence of records
// (gABI "Note Section"):
//   Nhdr      n_namesz, n_descsz, n_type: three Words in the file's byte order
//   name      n_namesz bytes (the owner, "GNU\0"), padded to the alignment
//   desc      n_descsz bytes, padded to the alignment
// The alignment is 4, except in a section or segment aligned to 8 (the GNU
// property note of ELF64 files is), where both paddings are to 8, as
// readelf -n and ld.so read them.
//
// The GNU property note (Linux x86-64 psABI and "Linux Extensions to gABI":
// owner "GNU", n_type NT_GNU_PROPERTY_TYPE_0, in .note.gnu.property, located
// by PT_GNU_PROPERTY in executables and DSOs) holds an array of properties in
// its desc:
//   pr_type   Word
//   pr_datasz Word
//   pr_data   pr_datasz bytes, padded to 8 in ELF64 and 4 in ELF32
// GNU_PROPERTY_X86_ISA_1_NEEDED (0xc0008002) is a 4-byte bit mask of the
// x86-64 micro-architecture levels the object needs: bit 0 baseline, bit 1
// x86-64-v2, bit 2 x86-64-v3, bit 3 x86-64-v4 (what `gcc -Wl,-z,x86-64-v3`
// writes and `readelf -n` prints as "x86 ISA needed: x86-64-baseline, x86-64-v3").
//
// Every record and every property must lie inside its note area; the sizes
// are added in 64 bits, so nothing wraps, and each step moves forward by at
// least the header size, so the walk ends. A record that does not fit is an
// error at the record's file offset.
#pragma once

#include <optional>
#include <string_view>

#include "linkscope/core/bytes.hpp"
#include "linkscope/core/error.hpp"
#include "linkscope/elf/file.hpp"
#include "linkscope/elf/types.hpp"

namespace linkscope {
inline namespace v0 {
namespace elf {

inline constexpr u32 PT_GNU_PROPERTY = 0x6474e553;
inline constexpr u32 NT_GNU_PROPERTY_TYPE_0 = 5;
inline constexpr u32 GNU_PROPERTY_X86_FEATURE_1_AND = 0xc0000002, GNU_PROPERTY_X86_ISA_1_NEEDED = 0xc0008002,
                     GNU_PROPERTY_X86_ISA_1_USED = 0xc0010002;
inline constexpr u32 GNU_PROPERTY_X86_ISA_1_BASELINE = 0x1, GNU_PROPERTY_X86_ISA_1_V2 = 0x2,
                     GNU_PROPERTY_X86_ISA_1_V3 = 0x4, GNU_PROPERTY_X86_ISA_1_V4 = 0x8;

template <std::endian E>
struct note_header {
  endian<u32, E> n_namesz;
  endian<u32, E> n_descsz;
  endian<u32, E> n_type;
};
static_assert(sizeof(note_header<std::endian::little>) == 12);

template <std::endian E>
struct property_header {
  endian<u32, E> pr_type;
  endian<u32, E> pr_datasz;
};
static_assert(sizeof(property_header<std::endian::little>) == 8);

// One note record.
struct note {
  std::string_view name;  // the owner without its terminating NUL ("GNU")
  u32 type = 0;           // n_type
  byte_view desc;         // the descriptor (its base() is its file offset)
  u64 offset = 0;         // file offset of the record's header
};

// One GNU property of an NT_GNU_PROPERTY_TYPE_0 note.
struct gnu_property {
  u32 type = 0;    // pr_type
  byte_view data;  // pr_data (pr_datasz bytes)
  u64 offset = 0;  // file offset of the property's header

  // The 4-byte value of a UINT32 property (the x86 ISA and feature masks);
  // nullopt when pr_datasz is not 4.
  template <std::endian E>
  std::optional<u32> u32_value() const noexcept {
    if (data.size() != 4) return std::nullopt;
    return static_cast<u32>(data.read_unchecked<endian<u32, E>>(0));
  }
};

namespace detail {
constexpr u64 align_up(u64 value, u64 align) noexcept { return (value + (align - 1)) & ~(align - 1); }

// Walk the notes of one area. f(const note&) returns false to stop.
template <std::endian E, class F>
result<bool> walk_notes(byte_view area, u64 align, F& f) {
  align = align == 8 ? 8 : 4;
  u64 pos = 0;
  while (pos < area.size()) {
    if (!area.contains(pos, sizeof(note_header<E>)))
      return area.fail(errc::truncated, pos, "note header past the end of its note area");
    const auto header = area.read_unchecked<note_header<E>>(pos);
    const u64 namesz = header.n_namesz;
    const u64 descsz = header.n_descsz;
    const u64 name_at = pos + sizeof(note_header<E>);
    const u64 desc_at = align_up(name_at + namesz, align);
    if (!area.contains(name_at, namesz) || !area.contains(desc_at, descsz))
      return area.fail(errc::truncated, pos, "note name or descriptor past the end of its note area");
    std::string_view name(reinterpret_cast<const char*>(area.data() + name_at), static_cast<std::size_t>(namesz));
    if (!name.empty() && name.back() == '\0') name.remove_suffix(1);
    note n{name, static_cast<u32>(header.n_type), area.sub_unchecked(desc_at, descsz), area.base() + pos};
    if (!f(n)) return false;
    pos = align_up(desc_at + descsz, align);
  }
  return true;
}
}  // namespace detail

// Visit every note of the file: the SHT_NOTE sections when the file has
// section headers (what readelf -n reads), else the PT_NOTE segments.
// f(const note&) returns bool (false stops the walk).
template <class ET, class F>
result<void> for_each_note(const file<ET>& f, F&& visit) {
  constexpr std::endian E = ET::endianness;
  if (f.section_count() > 0) {
    for (std::size_t i = 0; i < f.section_count(); ++i) {
      const auto sh = f.section_headers()[i];
      if (static_cast<u32>(sh.sh_type) != SHT_NOTE) continue;
      LINKSCOPE_TRY(area, f.section_data(sh));
      LINKSCOPE_TRY(more, detail::walk_notes<E>(area, static_cast<u64>(sh.sh_addralign), visit));
      if (!more) return ok();
    }
    return ok();
  }
  for (const auto& ph : f.program_headers()) {
    if (static_cast<u32>(ph.p_type) != PT_NOTE) continue;
    LINKSCOPE_TRY(area, f.bytes().sub(ph.p_offset, ph.p_filesz, "note segment past end of file"));
    LINKSCOPE_TRY(more, detail::walk_notes<E>(area, static_cast<u64>(ph.p_align), visit));
    if (!more) return ok();
  }
  return ok();
}

// Visit the properties of every GNU property note (owner "GNU", type
// NT_GNU_PROPERTY_TYPE_0). f(const gnu_property&) returns bool.
template <class ET, class F>
result<void> for_each_gnu_property(const file<ET>& f, F&& visit) {
  constexpr std::endian E = ET::endianness;
  constexpr u64 pad = ET::is64 ? 8 : 4;
  error failure;
  bool failed = false;
  LINKSCOPE_CHECK(for_each_note(f, [&](const note& n) -> bool {
    if (n.name != "GNU" || n.type != NT_GNU_PROPERTY_TYPE_0) return true;
    const byte_view desc = n.desc;
    u64 pos = 0;
    while (pos < desc.size()) {
      if (!desc.contains(pos, sizeof(property_header<E>))) {
        failure = desc.fail(errc::truncated, pos, "GNU property header past the end of its note");
        failed = true;
        return false;
      }
      const auto header = desc.read_unchecked<property_header<E>>(pos);
      const u64 size = header.pr_datasz;
      const u64 data_at = pos + sizeof(property_header<E>);
      if (!desc.contains(data_at, size)) {
        failure = desc.fail(errc::truncated, pos, "GNU property data past the end of its note");
        failed = true;
        return false;
      }
      gnu_property p{static_cast<u32>(header.pr_type), desc.sub_unchecked(data_at, size), desc.base() + pos};
      if (!visit(p)) return false;
      pos = detail::align_up(data_at + size, pad);
    }
    return true;
  }));
  if (failed) return failure;
  return ok();
}

// The GNU_PROPERTY_X86_ISA_1_NEEDED mask of an x86 file; nullopt when the
// file has no such property. A property whose size is not 4 is an error.
template <class ET>
result<std::optional<u32>> x86_isa_needed(const file<ET>& f) {
  std::optional<u32> mask;
  error failure;
  bool failed = false;
  LINKSCOPE_CHECK(for_each_gnu_property(f, [&](const gnu_property& p) -> bool {
    if (p.type != GNU_PROPERTY_X86_ISA_1_NEEDED) return true;
    auto value = p.template u32_value<ET::endianness>();
    if (!value) {
      failure = error{errc::bad_field, p.offset, "GNU_PROPERTY_X86_ISA_1_NEEDED is not 4 bytes"};
      failed = true;
      return false;
    }
    mask = mask.value_or(0) | *value;
    return true;
  }));
  if (failed) return failure;
  return mask;
}

// The name readelf -n gives a bit of the ISA mask ("x86-64-v3"); "" for bits
// it does not name.
constexpr std::string_view x86_isa_bit_name(u32 bit) noexcept {
  switch (bit) {
    case GNU_PROPERTY_X86_ISA_1_BASELINE: return "x86-64-baseline";
    case GNU_PROPERTY_X86_ISA_1_V2: return "x86-64-v2";
    case GNU_PROPERTY_X86_ISA_1_V3: return "x86-64-v3";
    case GNU_PROPERTY_X86_ISA_1_V4: return "x86-64-v4";
    default: return "";
  }
}

}  // namespace elf
}  // namespace v0
}  // namespace linkscope
