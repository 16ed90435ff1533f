// linkscope/core/hash.hpp — the string hashes of the ELF world.
//
// - sysv_hash: the System V ABI hash used by DT_HASH (gABI "Hash Table").
// - gnu_hash:  Bernstein's h*33+c, seeded with 5381, used by DT_GNU_HASH.
// - index_hash: what hash_index stores. Not gnu_hash: h*33+c is a serial
//   chain of one multiply-add per byte, and it clusters in its low bits. The
//   index hash consumes 8 bytes per step (multiply-xorshift, in the spirit of
//   splitmix64) and finishes with a full avalanche, so its 32 bits can address
//   slots directly. It is an in-memory hash only (host byte order).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
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

inline std::uint32_t index_hash(std::string_view name) noexcept {
  const char* p = name.data();
  std::size_t n = name.size();
  std::uint64_t h = 0x9E3779B97F4A7C15ull ^ n;
  while (n >= 8) {
    std::uint64_t word;
    std::memcpy(&word, p, 8);
    h = (h ^ word) * 0xbf58476d1ce4e5b9ull;
    h ^= h >> 31;
    p += 8;
    n -= 8;
  }
  if (n != 0) {
    std::uint64_t word = 0;
    std::memcpy(&word, p, n);
    h = (h ^ word) * 0x94d049bb133111ebull;
  }
  h ^= h >> 32;
  h *= 0x9E3779B97F4A7C15ull;
  return static_cast<std::uint32_t>(h >> 32);
}

static_assert(sysv_hash("") == 0);
static_assert(gnu_hash("") == 5381);
static_assert(gnu_hash("printf") == 0x156b2bb8u);
static_assert(sysv_hash("printf") == 0x077905a6u);

}  // namespace v0
}  // namespace linkscope
