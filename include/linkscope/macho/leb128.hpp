// linkscope/macho/leb128.hpp — LEB128 numbers, as dyld's streams spell them.
//
// The export trie, the bind/rebase opcode streams and LC_FUNCTION_STARTS
// store integers as (U|S)LEB128: 7 bits per byte, least significant group
// first, the high bit set on every byte but the last; SLEB128 sign-extends
// from bit 6 of the last byte. A number that runs past the end of its
// stream, or that needs more than 64 bits, is an error at the offset of its
// first byte (LLVM's decodeULEB128 calls these "malformed uleb128, extends
// past end" and "uleb128 too big for uint64").
#pragma once

#include "linkscope/core/bytes.hpp"
#include "linkscope/core/error.hpp"

namespace linkscope {
inline namespace v0 {
namespace macho {

// Read a ULEB128 at `offset` in `bytes`, advancing `offset` past it.
inline result<u64> read_uleb128(byte_view bytes, u64& offset) noexcept {
  const u64 start = offset;
  u64 value = 0;
  unsigned shift = 0;
  for (;;) {
    if (offset >= bytes.size()) return bytes.fail(errc::truncated, start, "uleb128 runs past end of stream");
    const u8 byte = bytes.data()[offset++];
    const u64 low = byte & 0x7f;
    if (shift >= 64) {
      if (low != 0) return bytes.fail(errc::overflow, start, "uleb128 too big for 64 bits");
    } else {
      if (shift > 57 && (low >> (64 - shift)) != 0) return bytes.fail(errc::overflow, start, "uleb128 too big for 64 bits");
      value |= low << shift;
    }
    if ((byte & 0x80) == 0) return value;
    shift += 7;
  }
}

inline result<i64> read_sleb128(byte_view bytes, u64& offset) noexcept {
  const u64 start = offset;
  u64 value = 0;
  unsigned shift = 0;
  u8 byte = 0;
  do {
    if (offset >= bytes.size()) return bytes.fail(errc::truncated, start, "sleb128 runs past end of stream");
    byte = bytes.data()[offset++];
    const u64 low = byte & 0x7f;
    if (shift >= 64) {
      // only sign-extension padding may follow the 64th bit
      const bool negative = (value >> 63) != 0;
      if (low != (negative ? 0x7fu : 0u)) return bytes.fail(errc::overflow, start, "sleb128 too big for 64 bits");
    } else {
      value |= low << shift;
    }
    shift += 7;
  } while ((byte & 0x80) != 0);
  if (shift < 64 && (byte & 0x40) != 0) value |= ~u64{0} << shift;
  return static_cast<i64>(value);
}

}  // namespace macho
}  // namespace v0
}  // namespace linkscope
