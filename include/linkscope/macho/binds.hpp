// linkscope/macho/binds.hpp — what an image imports: dyld's bind opcodes and chained-fixup imports.
//
// Two encodings exist (<mach-o/loader.h>, <mach-o/fixup-chains.h>):
//
// 1. LC_DYLD_INFO(_ONLY) bind streams: byte opcodes (high nibble; the low
//    nibble is an immediate) that drive a small state machine — the library
//    ordinal (SET_DYLIB_ORDINAL_IMM/_ULEB, SET_DYLIB_SPECIAL_IMM for 0 self,
//    -1 main executable, -2 flat lookup, -3 weak lookup), the symbol name and
//    flags (SET_SYMBOL_TRAILING_FLAGS_IMM: WEAK_IMPORT 0x1,
//    NON_WEAK_DEFINITION 0x8), the type (pointer, text absolute32, text
//    pcrel32), the addend (SLEB128) and the location (segment index and
//    offset); DO_BIND* record a bind at the location and advance it by a
//    pointer plus a skip. There are three streams: regular binds, weak binds
//    (coalesced by name across images: no library ordinal) and lazy binds
//    (one entry per stub, each ending with DONE).
// 2. LC_DYLD_CHAINED_FIXUPS: a dyld_chained_fixups_header {fixups_version,
//    starts_offset, imports_offset, symbols_offset, imports_count,
//    imports_format, symbols_format}, then imports_count imports in one of
//    three formats — DYLD_CHAINED_IMPORT (u32: lib_ordinal:8,
//    weak_import:1, name_offset:23), DYLD_CHAINED_IMPORT_ADDEND (the same +
//    an i32 addend) and DYLD_CHAINED_IMPORT_ADDEND64 (u64: lib_ordinal:16,
//    weak_import:1, reserved:15, name_offset:32; + a u64 addend) — and the
//    names at symbols_offset. An 8- or 16-bit ordinal above 0xf0 / 0xfff0
//    is a negative special ordinal.
//
// Both come out as one list of `import_entry` (library ordinal, symbol, weak
// import, addend, kind). Bind-opcode entries also carry their location.
// Every stream read is bounded by its stream; a bind outside its segment,
// an opcode the format does not define, a ULEB128 past the end or over 64
// bits are errors with the offset. Behaviour follows LLVM's
// MachOBindEntry::moveNext and MachOChainedFixupEntry.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "linkscope/core/bytes.hpp"
#include "linkscope/core/error.hpp"
#include "linkscope/macho/file.hpp"
#include "linkscope/macho/leb128.hpp"
#include "linkscope/macho/types.hpp"

namespace linkscope {
inline namespace v0 {
namespace macho {

inline constexpr u8 BIND_OPCODE_MASK = 0xf0, BIND_IMMEDIATE_MASK = 0x0f;
inline constexpr u8 BIND_OPCODE_DONE = 0x00, BIND_OPCODE_SET_DYLIB_ORDINAL_IMM = 0x10,
                    BIND_OPCODE_SET_DYLIB_ORDINAL_ULEB = 0x20, BIND_OPCODE_SET_DYLIB_SPECIAL_IMM = 0x30,
                    BIND_OPCODE_SET_SYMBOL_TRAILING_FLAGS_IMM = 0x40, BIND_OPCODE_SET_TYPE_IMM = 0x50,
                    BIND_OPCODE_SET_ADDEND_SLEB = 0x60, BIND_OPCODE_SET_SEGMENT_AND_OFFSET_ULEB = 0x70,
                    BIND_OPCODE_ADD_ADDR_ULEB = 0x80, BIND_OPCODE_DO_BIND = 0x90,
                    BIND_OPCODE_DO_BIND_ADD_ADDR_ULEB = 0xa0, BIND_OPCODE_DO_BIND_ADD_ADDR_IMM_SCALED = 0xb0,
                    BIND_OPCODE_DO_BIND_ULEB_TIMES_SKIPPING_ULEB = 0xc0, BIND_OPCODE_THREADED = 0xd0;
inline constexpr u8 BIND_SYMBOL_FLAGS_WEAK_IMPORT = 0x1, BIND_SYMBOL_FLAGS_NON_WEAK_DEFINITION = 0x8;
inline constexpr u8 BIND_TYPE_POINTER = 1, BIND_TYPE_TEXT_ABSOLUTE32 = 2, BIND_TYPE_TEXT_PCREL32 = 3;
inline constexpr u32 DYLD_CHAINED_IMPORT = 1, DYLD_CHAINED_IMPORT_ADDEND = 2, DYLD_CHAINED_IMPORT_ADDEND64 = 3;
// Binds one stream may record: a DO_BIND_ULEB_TIMES count is also bounded by its segment.
inline constexpr u64 bind_max_entries = u64{1} << 24;

enum class import_source : u8 { bind, weak_bind, lazy_bind, chained_fixup };
constexpr const char* to_string(import_source k) noexcept {
  switch (k) {
    case import_source::bind: return "bind";
    case import_source::weak_bind: return "weak-bind";
    case import_source::lazy_bind: return "lazy-bind";
    case import_source::chained_fixup: return "chained-fixup";
  }
  return "?";
}

struct import_entry {
  std::string_view symbol;
  i64 library_ordinal = 0;  // 1..n the n-th dylib; 0 self, -1 main executable, -2 flat, -3 weak
  i64 addend = 0;
  import_source kind = import_source::bind;
  bool weak_import = false;
  bool non_weak_definition = false;  // weak-bind stream: a strong definition overriding weak ones
  u8 type = BIND_TYPE_POINTER;       // bind opcodes only
  u32 segment_index = 0;             // bind opcodes only: LC_SEGMENT(_64) ordinal, 0-based
  u64 segment_offset = 0;
  u64 address = 0;                   // bind opcodes only: segment vmaddr + offset
  u32 import_index = 0;              // chained fixups: index in the import table
};

namespace detail {
struct segment_extent {
  u64 vmaddr, vmsize;
};
}  // namespace detail

// Decode one bind-opcode stream; callback(const import_entry&) -> void.
template <class MT, class F>
result<void> for_each_bind_in(const file<MT>& f, byte_view stream, import_source kind, F&& callback) {
  if (stream.empty()) return ok();
  LINKSCOPE_TRY(segments, f.segments());
  std::vector<detail::segment_extent> extents;
  extents.reserve(segments.size());
  for (const auto& s : segments) extents.push_back({s.segment.vmaddr, s.segment.vmsize});
  constexpr u64 pointer_size = MT::is64 ? 8 : 4;

  import_entry state;
  state.kind = kind;
  bool have_segment = false;
  bool have_symbol = false;
  u64 emitted = 0;
  u64 at = 0;
  auto emit = [&](u64 opcode_at) -> result<void> {
    if (!have_symbol) return stream.fail(errc::malformed, opcode_at, "bind without a symbol name");
    if (!have_segment) return stream.fail(errc::malformed, opcode_at, "bind without a segment");
    const auto& seg = extents[state.segment_index];
    if (state.segment_offset >= seg.vmsize) return stream.fail(errc::out_of_range, opcode_at, "bind past end of its segment");
    if (++emitted > bind_max_entries) return stream.fail(errc::too_large, opcode_at, "too many binds in one stream");
    state.address = seg.vmaddr + state.segment_offset;
    callback(static_cast<const import_entry&>(state));
    return ok();
  };
  while (at < stream.size()) {
    const u64 opcode_at = at;
    const u8 byte = stream.data()[at++];
    const u8 opcode = byte & BIND_OPCODE_MASK;
    const u8 immediate = byte & BIND_IMMEDIATE_MASK;
    switch (opcode) {
      case BIND_OPCODE_DONE:
        // Lazy binds are separate entries each ended by DONE; the other streams end here.
        if (kind != import_source::lazy_bind) return ok();
        break;
      case BIND_OPCODE_SET_DYLIB_ORDINAL_IMM:
        state.library_ordinal = immediate;
        break;
      case BIND_OPCODE_SET_DYLIB_ORDINAL_ULEB: {
        LINKSCOPE_TRY(ordinal, read_uleb128(stream, at));
        if (ordinal > 0xffff) return stream.fail(errc::out_of_range, opcode_at, "bind library ordinal too big");
        state.library_ordinal = static_cast<i64>(ordinal);
        break;
      }
      case BIND_OPCODE_SET_DYLIB_SPECIAL_IMM:
        // The immediate is a 4-bit negative number: 0 self, 0xf -1, 0xe -2, 0xd -3.
        state.library_ordinal = immediate == 0 ? 0 : static_cast<i64>(static_cast<std::int8_t>(BIND_OPCODE_MASK | immediate));
        break;
      case BIND_OPCODE_SET_SYMBOL_TRAILING_FLAGS_IMM: {
        LINKSCOPE_TRY(name, stream.cstring(at, "bind symbol name not terminated"));
        state.symbol = name;
        at += name.size() + 1;
        state.weak_import = (immediate & BIND_SYMBOL_FLAGS_WEAK_IMPORT) != 0;
        state.non_weak_definition = (immediate & BIND_SYMBOL_FLAGS_NON_WEAK_DEFINITION) != 0;
        have_symbol = true;
        break;
      }
      case BIND_OPCODE_SET_TYPE_IMM:
        if (immediate < BIND_TYPE_POINTER || immediate > BIND_TYPE_TEXT_PCREL32)
          return stream.fail(errc::bad_field, opcode_at, "unknown bind type");
        state.type = immediate;
        break;
      case BIND_OPCODE_SET_ADDEND_SLEB: {
        LINKSCOPE_TRY(addend, read_sleb128(stream, at));
        state.addend = addend;
        break;
      }
      case BIND_OPCODE_SET_SEGMENT_AND_OFFSET_ULEB: {
        if (immediate >= extents.size()) return stream.fail(errc::out_of_range, opcode_at, "bind segment index past the segments");
        LINKSCOPE_TRY(offset, read_uleb128(stream, at));
        state.segment_index = immediate;
        state.segment_offset = offset;
        have_segment = true;
        break;
      }
      case BIND_OPCODE_ADD_ADDR_ULEB: {
        LINKSCOPE_TRY(delta, read_uleb128(stream, at));
        state.segment_offset += delta;  // wraps as dyld's does; checked at the next bind
        break;
      }
      case BIND_OPCODE_DO_BIND:
        LINKSCOPE_CHECK(emit(opcode_at));
        state.segment_offset += pointer_size;
        break;
      case BIND_OPCODE_DO_BIND_ADD_ADDR_ULEB: {
        LINKSCOPE_CHECK(emit(opcode_at));
        LINKSCOPE_TRY(delta, read_uleb128(stream, at));
        state.segment_offset += delta + pointer_size;
        break;
      }
      case BIND_OPCODE_DO_BIND_ADD_ADDR_IMM_SCALED:
        LINKSCOPE_CHECK(emit(opcode_at));
        state.segment_offset += u64{immediate} * pointer_size + pointer_size;
        break;
      case BIND_OPCODE_DO_BIND_ULEB_TIMES_SKIPPING_ULEB: {
        LINKSCOPE_TRY(count, read_uleb128(stream, at));
        LINKSCOPE_TRY(skip, read_uleb128(stream, at));
        // Each bind must land in the segment, so count is bounded by it; emit() checks each.
        for (u64 i = 0; i < count; ++i) {
          LINKSCOPE_CHECK(emit(opcode_at));
          state.segment_offset += skip + pointer_size;
        }
        break;
      }
      case BIND_OPCODE_THREADED:
        return stream.fail(errc::unsupported, opcode_at, "threaded binds (arm64e) are not read");
      default:
        return stream.fail(errc::malformed, opcode_at, "unknown bind opcode");
    }
  }
  return ok();
}

// The chained-fixups header (<mach-o/fixup-chains.h>), in the image's byte order.
template <std::endian E>
struct dyld_chained_fixups_header {
  endian<u32, E> fixups_version;
  endian<u32, E> starts_offset;
  endian<u32, E> imports_offset;
  endian<u32, E> symbols_offset;
  endian<u32, E> imports_count;
  endian<u32, E> imports_format;
  endian<u32, E> symbols_format;  // 0 plain, 1 zlib
};
static_assert(sizeof(dyld_chained_fixups_header<std::endian::little>) == 28);

// DYLD_CHAINED_IMPORT and DYLD_CHAINED_IMPORT_ADDEND share the first word.
template <std::endian E>
struct dyld_chained_import {
  endian<u32, E> raw;
  u32 lib_ordinal() const noexcept { return raw & 0xffu; }
  bool weak_import() const noexcept { return ((raw >> 8) & 1u) != 0; }
  u32 name_offset() const noexcept { return raw >> 9; }
};
template <std::endian E>
struct dyld_chained_import_addend {
  dyld_chained_import<E> import;
  endian<i32, E> addend;
};
template <std::endian E>
struct dyld_chained_import_addend64 {
  endian<u64, E> raw;
  endian<u64, E> addend;
  u32 lib_ordinal() const noexcept { return static_cast<u32>(raw & 0xffffu); }
  bool weak_import() const noexcept { return ((raw >> 16) & 1u) != 0; }
  u32 name_offset() const noexcept { return static_cast<u32>(raw >> 32); }
};
static_assert(sizeof(dyld_chained_import<std::endian::little>) == 4);
static_assert(sizeof(dyld_chained_import_addend<std::endian::little>) == 8);
static_assert(sizeof(dyld_chained_import_addend64<std::endian::little>) == 16);

// An 8- or 16-bit chained-import ordinal as a signed library ordinal.
constexpr i64 chained_ordinal(u32 raw, bool wide) noexcept {
  if (!wide) return raw > 0xf0 ? static_cast<i64>(static_cast<std::int8_t>(raw)) : static_cast<i64>(raw);
  return raw > 0xfff0 ? static_cast<i64>(static_cast<std::int16_t>(raw)) : static_cast<i64>(raw);
}

// The imports of a LC_DYLD_CHAINED_FIXUPS blob; callback(const import_entry&).
template <std::endian E, class F>
result<void> for_each_chained_import(byte_view blob, F&& callback) {
  using header_t = dyld_chained_fixups_header<E>;
  LINKSCOPE_TRY(header, blob.template read<header_t>(0, "chained fixups header truncated"));
  if (header.fixups_version != 0u) return blob.fail(errc::unsupported, 0, "chained fixups version is not 0");
  if (header.symbols_format != 0u) return blob.fail(errc::unsupported, 24, "compressed chained-fixup symbols are not read");
  const u32 format = header.imports_format;
  u64 record = 0;
  switch (format) {
    case DYLD_CHAINED_IMPORT: record = sizeof(dyld_chained_import<E>); break;
    case DYLD_CHAINED_IMPORT_ADDEND: record = sizeof(dyld_chained_import_addend<E>); break;
    case DYLD_CHAINED_IMPORT_ADDEND64: record = sizeof(dyld_chained_import_addend64<E>); break;
    default: return blob.fail(errc::bad_field, 20, "unknown chained imports format");
  }
  const u64 count = header.imports_count;
  u64 bytes = 0;
  if (!checked_mul(count, record, bytes) || !blob.contains(header.imports_offset, bytes))
    return blob.fail(errc::truncated, 8, "chained imports (imports_offset + imports_count) past end of fixups");
  if (header.symbols_offset > blob.size())
    return blob.fail(errc::truncated, 12, "chained import names (symbols_offset) past end of fixups");
  const byte_view names = blob.sub_unchecked(header.symbols_offset, blob.size() - header.symbols_offset);
  for (u64 i = 0; i < count; ++i) {
    const u64 at = header.imports_offset + i * record;
    import_entry e;
    e.kind = import_source::chained_fixup;
    e.import_index = static_cast<u32>(i);
    u32 name_offset = 0;
    if (format == DYLD_CHAINED_IMPORT_ADDEND64) {
      const auto imp = blob.template read_unchecked<dyld_chained_import_addend64<E>>(at);
      e.library_ordinal = chained_ordinal(imp.lib_ordinal(), true);
      e.weak_import = imp.weak_import();
      e.addend = static_cast<i64>(static_cast<u64>(imp.addend));
      name_offset = imp.name_offset();
    } else {
      const auto imp = blob.template read_unchecked<dyld_chained_import<E>>(at);
      e.library_ordinal = chained_ordinal(imp.lib_ordinal(), false);
      e.weak_import = imp.weak_import();
      name_offset = imp.name_offset();
      if (format == DYLD_CHAINED_IMPORT_ADDEND)
        e.addend = blob.template read_unchecked<dyld_chained_import_addend<E>>(at).addend;
    }
    if (name_offset >= names.size()) return blob.fail(errc::out_of_range, at, "chained import name offset past the names");
    LINKSCOPE_TRY(name, names.cstring(name_offset, "chained import name not terminated"));
    e.symbol = name;
    callback(static_cast<const import_entry&>(e));
  }
  return ok();
}

// Every import of an image, in this order: the bind, weak-bind and lazy-bind
// streams of LC_DYLD_INFO(_ONLY), then the LC_DYLD_CHAINED_FIXUPS imports.
template <class MT, class F>
result<void> for_each_import(const file<MT>& f, F&& callback) {
  LINKSCOPE_TRY(info, f.dyld_info());
  if (info) {
    LINKSCOPE_CHECK(for_each_bind_in(f, info->bind, import_source::bind, callback));
    LINKSCOPE_CHECK(for_each_bind_in(f, info->weak_bind, import_source::weak_bind, callback));
    LINKSCOPE_CHECK(for_each_bind_in(f, info->lazy_bind, import_source::lazy_bind, callback));
  }
  LINKSCOPE_TRY(chained, f.linkedit_data(LC_DYLD_CHAINED_FIXUPS));
  if (chained) LINKSCOPE_CHECK(for_each_chained_import<MT::endianness>(*chained, callback));
  return ok();
}

// The imports as one list.
template <class MT>
result<std::vector<import_entry>> imports(const file<MT>& f) {
  std::vector<import_entry> out;
  LINKSCOPE_CHECK(for_each_import(f, [&](const import_entry& e) { out.push_back(e); }));
  return out;
}

}  // namespace macho
}  // namespace v0
}  // namespace linkscope
