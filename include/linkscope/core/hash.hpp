// linkscope/core/hash.hpp — the string hashes of the ELF world.
//
// - sysv_hash: the System V ABI hash used by DT_HASH (gABI "Hash Table").
// - gnu_hash:  Bernstein's h*33+c, seeded with 5381, used by DT_GNU_HASH.
// - index_hash: what hash_index stores. It is gnu_hash with the low bit
//   cleared, so that a value taken from a .gnu.hash chain (whose low bit is the
//   chain-end marker) can be reused without rehashing the name.
// - slot mixing: h*33+c clusters in its low bits, so the index scatters it
//   with a Fibonacci multiply before taking the top bits.
#pragma once

#include <cstdint>
#include <string_view>

namespace linkscope {
inline namespace v0 {

constexpr std::uint32_t sysv_hash(std::string_view name) noexcept {
  std::uint32_t h = 0;
  for (char c : name) {
    h = (h << 4) + static_cast<unsigned char>(c);
    std::uint32_t g = h & 0xf0000000u;
    if (g != 0) h ^= g >> 24;
    h &= ~g;
  }
  return h;
}

constexpr std::uint32_t gnu_hash(std::string_view name) noexcept {
  std::uint32_t h = 5381;
  for (char c : name) h = h * 33 + static_cast<unsigned char>(c);
  return h;
}

constexpr std::uint32_t index_hash(std::string_view name) noexcept { return gnu_hash(name) & ~1u; }
constexpr std::uint32_t index_hash_from_gnu(std::uint32_t gnu) noexcept { return gnu & ~1u; }

// Spread a 32-bit hash over 2^bits slots (bits in 1..32).
constexpr std::uint32_t hash_slot(std::uint32_t h, unsigned bits) noexcept {
  return static_cast<std::uint32_t>((static_cast<std::uint64_t>(h) * 0x9E3779B97F4A7C15ull) >> (64 - bits));
}

static_assert(sysv_hash("") == 0);
static_assert(gnu_hash("") == 5381);
static_assert(gnu_hash("printf") == 0x156b2bb8u);
static_assert(sysv_hash("printf") == 0x077905a6u);

}  // namespace v0
}  // namespace linkscope
