// linkscope/resolve/ld_so_cache.hpp — /etc/ld.so.cache, as glibc's ld.so reads it.
//
// ldconfig writes the cache in one of three layouts (glibc sysdeps/generic/dl-cache.h,
// elf/cache.c; `ldconfig -c new|old|compat`):
//
//   old (libc5, glibc <= 2.1):  "ld.so-1.7.0" (11 bytes, padded to 12), u32 nlibs,
//       then nlibs x { i32 flags; u32 key; u32 value } (12 bytes each). key and value
//       are offsets of NUL-terminated strings (soname, path) counted from the end
//       of the entry array.
//   new ("glibc-ld.so.cache1.1"): a 48-byte header { magic[17] version[3] u32 nlibs;
//       u32 len_strings; u8 flags (endianness: 2 little, 3 big, 0 unknown);
//       pad[3]; u32 extension_offset; u32 unused[3] }, then nlibs x 24-byte entries
//       { i32 flags; u32 key; u32 value; u32 osversion; u64 hwcap }. Offsets count from
//       the start of the new header.
//   compat: the old layout whose string area starts (8-byte aligned) with a whole new
//       layout; readers prefer the new part.
//
// Flags: the low byte is the type (3 = ELF libc6), the high byte the ABI (0x0300 x86-64,
// 0x0800 x32, 0x0a00 AArch64 ...). ld.so accepts only its own value (0x303 on x86-64).
// hwcap: bit 62 (DL_CACHE_HWCAP_EXTENSION) with no other bits in the upper half except
// the 10 ISA-level bits means "the low 32 bits index the glibc-hwcaps extension
// section", an array of u32 offsets (from the file start) of subdirectory names such as
// "x86-64-v3". Other non-zero hwcaps are legacy hwcap/platform masks.
// The extension directory: { u32 magic 0xEAA42174; u32 count; count x { u32 tag, flags,
// offset, size } }; tag 0 = generator string, tag 1 = glibc-hwcaps.
//
// Entries are sorted with _dl_cache_libcmp (digits compare numerically, descending
// overall) and ld.so binary-searches them; `lookup` emulates that search exactly,
// including the preference between glibc-hwcaps entries (dl-cache.c search_cache).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "linkscope/core/bytes.hpp"
#include "linkscope/core/config.hpp"
#include "linkscope/core/error.hpp"
#include "linkscope/core/mapped_file.hpp"

namespace linkscope {
inline namespace v0 {
namespace resolve {

enum class ld_so_cache_format : std::uint8_t { old, new_, compat };

constexpr const char* to_string(ld_so_cache_format f) noexcept {
  switch (f) {
    case ld_so_cache_format::old: return "old";
    case ld_so_cache_format::new_: return "new";
    case ld_so_cache_format::compat: return "compat";
  }
  return "?";
}

// Flag values of ldconfig (sysdeps/generic/ldconfig.h).
namespace cache_flags {
inline constexpr std::int32_t type_mask = 0x00ff;
inline constexpr std::int32_t elf = 0x0001;
inline constexpr std::int32_t elf_libc6 = 0x0003;
inline constexpr std::int32_t required_mask = 0xff00;
inline constexpr std::int32_t x8664_lib64 = 0x0300;
inline constexpr std::int32_t x8664_libx32 = 0x0800;
inline constexpr std::int32_t aarch64_lib64 = 0x0a00;
}  // namespace cache_flags

inline constexpr std::uint64_t cache_hwcap_extension = 1ull << 62;
inline constexpr std::uint32_t cache_hwcap_isa_level_mask = (1u << 10) - 1;

struct ld_so_cache_entry {
  std::string_view name;           // the soname ldconfig saw (key)
  std::string_view path;           // where it is (value)
  std::int32_t flags = 0;
  std::uint64_t hwcap = 0;         // 0 in the old format
  std::string_view hwcaps_subdir;  // "x86-64-v3" for glibc-hwcaps entries, else empty
  // The entry names a glibc-hwcaps string. Like ld.so and ldconfig, the string offsets
  // count from the start of the file, which in the compat layout is not where the
  // new header starts: there the names read as "" and ld.so never uses such entries.
  bool has_hwcaps_subdir = false;

  bool is_hwcaps_extension() const noexcept {
    return ((hwcap >> 32) & ~std::uint64_t{cache_hwcap_isa_level_mask}) == (cache_hwcap_extension >> 32);
  }
  std::uint32_t isa_level() const noexcept { return static_cast<std::uint32_t>(hwcap >> 32) & cache_hwcap_isa_level_mask; }
};

// What the running ld.so would accept; the defaults are those of x86-64 glibc 2.36.
struct cache_lookup_options {
  std::int32_t expected_flags = cache_flags::elf_libc6 | cache_flags::x8664_lib64;
  bool also_accept_elf = false;  // generic glibc (no ABI byte) also accepts flags == 1
  // glibc-hwcaps subdirectories the CPU supports, best first (x86-64-v4, v3, v2).
  std::vector<std::string_view> hwcaps_subdirs;
  // cpu_features->isa_1: bit n set when ISA level n is supported (bit 0 baseline).
  std::uint32_t isa_level_bits = 1;
  // Legacy hwcap bits the CPU has (dl_hwcap & hwcap_mask); x86-64: HWCAP_X86_64 = 1<<1.
  std::uint64_t legacy_hwcap = 1ull << 1;
  // Platform bits of legacy entries: an entry with platform bits must equal `platform_bit`.
  // x86: 4 platforms from bit 48; AT_PLATFORM "x86_64" is none of them, so ~0.
  std::uint64_t platform_mask = std::uint64_t{0xf} << 48;
  std::uint64_t platform_bit = ~std::uint64_t{0};
};

// _dl_cache_libcmp: digit runs compare as numbers; otherwise bytewise.
constexpr int cache_libcmp(std::string_view a, std::string_view b) noexcept {
  std::size_t i = 0;
  std::size_t j = 0;
  auto digit = [](char c) { return c >= '0' && c <= '9'; };
  auto at = [](std::string_view s, std::size_t k) -> int { return k < s.size() ? static_cast<unsigned char>(s[k]) : 0; };
  while (i < a.size()) {
    const char ca = a[i];
    const int cb = at(b, j);
    if (digit(ca)) {
      if (cb >= '0' && cb <= '9') {
        std::uint64_t va = 0;
        std::uint64_t vb = 0;
        while (i < a.size() && digit(a[i])) va = va * 10 + static_cast<std::uint64_t>(a[i++] - '0');
        while (j < b.size() && digit(b[j])) vb = vb * 10 + static_cast<std::uint64_t>(b[j++] - '0');
        if (va != vb) return va < vb ? -1 : 1;
      } else {
        return 1;
      }
    } else if (cb >= '0' && cb <= '9') {
      return -1;
    } else if (static_cast<unsigned char>(ca) != cb) {
      return static_cast<unsigned char>(ca) - cb;
    } else {
      ++i;
      ++j;
    }
  }
  return 0 - at(b, j);
}

class ld_so_cache {
 public:
  ld_so_cache() = default;

  // Parse the bytes of a cache file. Every offset is checked; an entry whose strings
  // fall outside the file is an error (ld.so silently ignores such a cache: callers
  // that want ld.so's behaviour treat any error as "no cache"). Compiled once
  // in src/ in compiled mode (core/config.hpp).
  static result<ld_so_cache> parse(byte_view bytes);
  static result<ld_so_cache> parse(std::string_view) = delete;

  ld_so_cache_format format() const noexcept { return format_; }
  std::size_t size() const noexcept { return entries_.size(); }
  const ld_so_cache_entry& operator[](std::size_t i) const noexcept { return entries_[i]; }
  auto begin() const noexcept { return entries_.begin(); }
  auto end() const noexcept { return entries_.end(); }
  std::string_view generator() const noexcept { return generator_; }
  bool big_endian() const noexcept { return big_endian_; }

  // The path ld.so would take from the cache for `name`, or empty.
  std::string_view lookup(std::string_view name, const cache_lookup_options& options = {}) const;

  // ldconfig -p's description of an entry: "libc6,x86-64", "libc6,x86-64, hwcap: \"x86-64-v3\"".
  static std::string describe(const ld_so_cache_entry& entry);

 private:
  std::vector<ld_so_cache_entry> entries_;
  ld_so_cache_format format_ = ld_so_cache_format::new_;
  std::string_view generator_;
  bool big_endian_ = false;
};

#if LINKSCOPE_DEFINITIONS
namespace detail {
inline constexpr char cache_magic_old[] = "ld.so-1.7.0";              // 11 bytes
inline constexpr char cache_magic_new[] = "glibc-ld.so.cache1.1";     // 17 + 3 bytes
inline constexpr std::uint32_t cache_extension_magic = 0xEAA42174u;
inline constexpr std::size_t cache_old_header = 16;
inline constexpr std::size_t cache_old_entry = 12;
inline constexpr std::size_t cache_new_header = 48;
inline constexpr std::size_t cache_new_entry = 24;

template <std::endian E>
struct cache_new_header_t {
  char magic[20];
  endian<u32, E> nlibs;
  endian<u32, E> len_strings;
  u8 flags;
  u8 padding[3];
  endian<u32, E> extension_offset;
  endian<u32, E> unused[3];
};
template <std::endian E>
using cache_u32 = endian<u32, E>;
static_assert(sizeof(cache_new_header_t<std::endian::little>) == cache_new_header);

template <std::endian E>
struct cache_new_entry_t {
  endian<i32, E> flags;
  endian<u32, E> key;
  endian<u32, E> value;
  endian<u32, E> osversion;
  endian<u64, E> hwcap;
};
static_assert(sizeof(cache_new_entry_t<std::endian::little>) == cache_new_entry);

template <std::endian E>
struct cache_old_entry_t {
  endian<i32, E> flags;
  endian<u32, E> key;
  endian<u32, E> value;
};
static_assert(sizeof(cache_old_entry_t<std::endian::little>) == cache_old_entry);

template <std::endian E>
struct cache_extension_section_t {
  endian<u32, E> tag;
  endian<u32, E> flags;
  endian<u32, E> offset;
  endian<u32, E> size;
};
static_assert(sizeof(cache_extension_section_t<std::endian::little>) == 16);

// Parse the new layout that starts at `header_offset` of `file`.
template <std::endian E>
result<void> parse_new_cache(byte_view file, u64 header_offset, std::vector<ld_so_cache_entry>& out,
                             std::string_view& generator) {
  LINKSCOPE_TRY(header, file.read<cache_new_header_t<E>>(header_offset, "ld.so.cache header truncated"));
  LINKSCOPE_TRY(strings, file.sub(header_offset, file.size() - header_offset));
  const u64 nlibs = header.nlibs;
  if (nlibs > (strings.size() - cache_new_header) / cache_new_entry)
    return file.fail(errc::too_large, header_offset + 20, "ld.so.cache entry count exceeds the file");
  LINKSCOPE_TRY(entries, strings.array<cache_new_entry_t<E>>(cache_new_header, nlibs));

  // glibc-hwcaps extension: subdirectory names, indexed by the low half of hwcap.
  std::vector<std::string_view> hwcaps;
  const u64 ext = header.extension_offset;
  if (ext != 0) {
    if (ext % 4 != 0) return file.fail(errc::bad_field, header_offset + 32, "ld.so.cache extension offset misaligned");
    LINKSCOPE_TRY(magic, file.read<cache_u32<E>>(ext, "ld.so.cache extension directory past end"));
    if (magic.value() != cache_extension_magic)
      return file.fail(errc::bad_magic, ext, "ld.so.cache extension directory has a bad magic");
    LINKSCOPE_TRY(count, file.read<cache_u32<E>>(ext + 4, "ld.so.cache extension directory past end"));
    LINKSCOPE_TRY(sections, file.array<cache_extension_section_t<E>>(ext + 8, count.value(), 16,
                                                                      "ld.so.cache extension sections past end"));
    for (std::size_t i = 0; i < sections.size(); ++i) {
      const auto section = sections[i];
      const u64 offset = section.offset;
      const u64 size = section.size;
      if (!fits(offset, size, file.size()))
        return file.fail(errc::truncated, ext + 8 + 16 * i, "ld.so.cache extension section past end");
      if (section.tag == 0) {
        generator = file.sub_unchecked(offset, size).chars();
        while (!generator.empty() && generator.back() == '\0') generator.remove_suffix(1);
      } else if (section.tag == 1 && size != 0 && size % 4 == 0 && offset % 4 == 0) {
        hwcaps.clear();
        for (u64 k = 0; k < size / 4; ++k) {
          const u32 string_offset = load<u32, E>(file.data() + offset + 4 * k);
          auto name = file.cstring(string_offset);
          hwcaps.push_back(name ? *name : std::string_view{});
        }
      }
    }
  }

  out.reserve(out.size() + entries.size());
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const auto e = entries[i];
    LINKSCOPE_TRY(name, strings.cstring(e.key.value(), "ld.so.cache string not terminated"));
    LINKSCOPE_TRY(path, strings.cstring(e.value.value(), "ld.so.cache string not terminated"));
    ld_so_cache_entry entry{name, path, e.flags.value(), e.hwcap.value(), {}};
    if (entry.is_hwcaps_extension()) {
      const u32 index = static_cast<u32>(entry.hwcap);
      if (index < hwcaps.size()) {
        entry.hwcaps_subdir = hwcaps[index];
        entry.has_hwcaps_subdir = true;
      }
    }
    out.push_back(entry);
  }
  return ok();
}
}  // namespace detail

LINKSCOPE_FUNC result<ld_so_cache> ld_so_cache::parse(byte_view bytes) {
  using namespace detail;
  ld_so_cache cache;
  const std::string_view text = bytes.chars();
  if (text.substr(0, 20) == std::string_view(cache_magic_new, 20)) {
    if (bytes.size() < cache_new_header) return bytes.fail(errc::truncated, 0, "ld.so.cache header truncated");
    const u8 flags = bytes.data()[28];
    const u8 endian_bits = flags & 3;
    if (endian_bits == 1) return bytes.fail(errc::bad_field, 28, "ld.so.cache marked invalid");
    cache.format_ = ld_so_cache_format::new_;
    cache.big_endian_ = endian_bits == 3 || (endian_bits == 0 && std::endian::native == std::endian::big);
    if (cache.big_endian_)
      LINKSCOPE_CHECK(parse_new_cache<std::endian::big>(bytes, 0, cache.entries_, cache.generator_));
    else
      LINKSCOPE_CHECK(parse_new_cache<std::endian::little>(bytes, 0, cache.entries_, cache.generator_));
    return cache;
  }
  if (text.substr(0, 11) != std::string_view(cache_magic_old, 11))
    return bytes.fail(errc::bad_magic, 0, "not an ld.so.cache file");
  if (bytes.size() < cache_old_header) return bytes.fail(errc::truncated, 0, "ld.so.cache header truncated");
  // The old format has no endianness marker: it is the host's (ldconfig wrote it there).
  constexpr std::endian E = std::endian::native;
  const u64 nlibs = load<u32, E>(bytes.data() + 12);
  if (nlibs > (bytes.size() - cache_old_header) / cache_old_entry)
    return bytes.fail(errc::too_large, 12, "ld.so.cache entry count exceeds the file");
  const u64 strings_at = cache_old_header + nlibs * cache_old_entry;
  const u64 new_at = (strings_at + 7) & ~u64{7};
  if (new_at < bytes.size() && bytes.size() - new_at > cache_new_header &&
      text.substr(static_cast<std::size_t>(new_at), 20) == std::string_view(cache_magic_new, 20)) {
    const u8 endian_bits = bytes.data()[new_at + 28] & 3;
    if (endian_bits == 1 || (endian_bits != 0 && (endian_bits == 3) != (E == std::endian::big)))
      return bytes.fail(errc::bad_field, new_at + 28, "ld.so.cache has the wrong endianness");
    cache.format_ = ld_so_cache_format::compat;
    LINKSCOPE_CHECK(parse_new_cache<E>(bytes, new_at, cache.entries_, cache.generator_));
    return cache;
  }
  cache.format_ = ld_so_cache_format::old;
  LINKSCOPE_TRY(entries, bytes.template array<cache_old_entry_t<E>>(cache_old_header, nlibs));
  LINKSCOPE_TRY(strings, bytes.sub(strings_at, bytes.size() - strings_at));
  cache.entries_.reserve(entries.size());
  for (const auto e : entries) {
    LINKSCOPE_TRY(name, strings.cstring(e.key.value(), "ld.so.cache string not terminated"));
    LINKSCOPE_TRY(path, strings.cstring(e.value.value(), "ld.so.cache string not terminated"));
    cache.entries_.push_back(ld_so_cache_entry{name, path, e.flags.value(), 0, {}});
  }
  return cache;
}

LINKSCOPE_FUNC std::string_view ld_so_cache::lookup(std::string_view name, const cache_lookup_options& options) const {
  // dl-cache.c search_cache: binary search with ints, then walk back to the first
  // entry of that name and forward through the run.
  const bool has_hwcap = format_ != ld_so_cache_format::old;
  const std::uint64_t tls_bit = 1ull << 63;
  const std::uint64_t exclude = ~(options.legacy_hwcap | options.platform_mask | tls_bit);
  auto flags_ok = [&](std::int32_t flags) {
    return flags == options.expected_flags || (options.also_accept_elf && flags == cache_flags::elf);
  };
  auto priority = [&](std::string_view subdir) -> std::uint32_t {
    for (std::size_t i = 0; i < options.hwcaps_subdirs.size(); ++i)
      if (!subdir.empty() && options.hwcaps_subdirs[i] == subdir) return static_cast<std::uint32_t>(i + 1);
    return 0;
  };
  long left = 0;
  long right = static_cast<long>(entries_.size()) - 1;
  std::string_view best;
  std::uint32_t best_priority = 0;
  while (left <= right) {
    long middle = (left + right) / 2;
    const int cmp = cache_libcmp(name, entries_[static_cast<std::size_t>(middle)].name);
    if (cmp == 0) {
      left = middle;
      while (middle > 0 && cache_libcmp(name, entries_[static_cast<std::size_t>(middle - 1)].name) == 0) --middle;
      do {
        const ld_so_cache_entry& e = entries_[static_cast<std::size_t>(middle)];
        if (middle > left && cache_libcmp(name, e.name) != 0) break;
        if (!flags_ok(e.flags)) continue;
        bool named = false;
        if (has_hwcap) {
          named = e.is_hwcaps_extension();
          if (named && ((1u << (e.isa_level() & 31)) & options.isa_level_bits) != (1u << (e.isa_level() & 31)))
            continue;
          if (!named && !best.empty()) break;
          if ((e.hwcap & exclude) != 0 && !named) continue;
          if (options.platform_mask != 0 && (e.hwcap & options.platform_mask) != 0 &&
              (e.hwcap & options.platform_mask) != options.platform_bit)
            continue;
          if (named) {
            const std::uint32_t p = priority(e.hwcaps_subdir);
            if (p == 0) continue;
            if (best.empty() || p < best_priority)
              best_priority = p;
            else
              continue;
          }
        }
        best = e.path;
        if (!named && e.flags == options.expected_flags) break;
      } while (++middle <= right);
      break;
    }
    if (cmp < 0)
      left = middle + 1;
    else
      right = middle - 1;
  }
  return best;
}

LINKSCOPE_FUNC std::string ld_so_cache::describe(const ld_so_cache_entry& entry) {
  static constexpr const char* types[] = {"libc4", "ELF", "libc5", "libc6"};
  std::string out;
  const std::int32_t type = entry.flags & cache_flags::type_mask;
  out += type <= 3 ? types[type] : "unknown";
  switch (entry.flags & cache_flags::required_mask) {
    case 0x0000: break;
    case 0x0100: case 0x0400: case 0x0500: case 0x0700: out += ",64bit"; break;
    case 0x0200: out += ",IA-64"; break;
    case 0x0300: out += ",x86-64"; break;
    case 0x0600: out += ",N32"; break;
    case 0x0800: out += ",x32"; break;
    case 0x0900: out += ",hard-float"; break;
    case 0x0a00: out += ",AArch64"; break;
    case 0x0b00: out += ",soft-float"; break;
    case 0x0c00: out += ",nan2008"; break;
    case 0x0d00: out += ",N32,nan2008"; break;
    case 0x0e00: out += ",64bit,nan2008"; break;
    case 0x0f00: out += ",soft-float"; break;
    case 0x1000: out += ",double-float"; break;
    default: out += "," + std::to_string(entry.flags & cache_flags::required_mask); break;
  }
  if (entry.has_hwcaps_subdir) {
    out += ", hwcap: \"";
    out += entry.hwcaps_subdir;
    out += "\"";
  } else if (entry.hwcap != 0) {
    char buf[40];
    std::snprintf(buf, sizeof(buf), ", hwcap: 0x%016llx", static_cast<unsigned long long>(entry.hwcap));
    out += buf;
  }
  return out;
}

#endif  // LINKSCOPE_DEFINITIONS

// An ld.so.cache file as read: its mapping and parse, or why it cannot be
// used. One may serve every root of a run (object_cache::ld_so_cache_for).
struct ld_so_cache_file {
  std::unique_ptr<mapped_file> file;
  std::unique_ptr<ld_so_cache> cache;  // null when absent or unusable
  std::optional<error> failure;        // it exists and cannot be read or parsed

  static std::shared_ptr<const ld_so_cache_file> load(const std::string& path);
};

#if LINKSCOPE_DEFINITIONS
LINKSCOPE_FUNC std::shared_ptr<const ld_so_cache_file> ld_so_cache_file::load(const std::string& path) {
  auto out = std::make_shared<ld_so_cache_file>();
  auto file = mapped_file::open(path);
  if (!file) {
    if (file.error().code != errc::not_found) out->failure = file.error();
    return out;
  }
  out->file = std::make_unique<mapped_file>(std::move(*file));
  auto parsed = ld_so_cache::parse(out->file->bytes());
  if (!parsed)
    out->failure = parsed.error();
  else
    out->cache = std::make_unique<ld_so_cache>(std::move(*parsed));
  return out;
}
#endif  // LINKSCOPE_DEFINITIONS

}  // namespace resolve
}  // namespace v0
}  // namespace linkscope
