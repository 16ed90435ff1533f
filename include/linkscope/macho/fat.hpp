// linkscope/macho/fat.hpp — universal ("fat") files: several Mach-O slices in one.
//
// Layout (<mach-o/fat.h>), always big-endian whatever the slices are:
//   offset 0   fat_header {magic, nfat_arch}; magic FAT_MAGIC (0xcafebabe) or
//              FAT_MAGIC_64 (0xcafebabf)
//   offset 8   nfat_arch records: fat_arch {cputype, cpusubtype, offset, size,
//              align} (20 bytes) with FAT_MAGIC, fat_arch_64 (32 bytes, 64-bit
//              offset and size) with FAT_MAGIC_64
//   slices     each [offset, offset + size) is a whole Mach-O image (or a
//              static archive of Mach-O members), aligned to 2^align.
//
// Java class files share the magic 0xcafebabe; their next word (the class
// version, 45 and up) would be nfat_arch, so — as LLVM and file(1) do — a
// FAT_MAGIC file with more than 42 slices is taken as not universal.
//
// `fat_file::open` checks that the records lie in the file, that every slice
// lies in the file, does not overlap the headers or another slice, and that
// align is sane. `slices()` lists them; `find(cputype, cpusubtype)` picks one
// (the capability bits of the subtype are ignored, as lipo does).
#pragma once

#include <algorithm>
#include <optional>
#include <string_view>
#include <vector>

#include "linkscope/core/bytes.hpp"
#include "linkscope/core/config.hpp"
#include "linkscope/core/error.hpp"
#include "linkscope/macho/types.hpp"

namespace linkscope {
inline namespace v0 {
namespace macho {

inline constexpr u32 fat_max_java_ambiguous = 42;

inline bool is_fat(byte_view bytes) noexcept {
  if (bytes.size() < 8) return false;
  const u32 magic = load<u32, std::endian::big>(bytes.data());
  if (magic == FAT_MAGIC_64) return true;
  return magic == FAT_MAGIC && load<u32, std::endian::big>(bytes.data() + 4) <= fat_max_java_ambiguous;
}

struct fat_slice {
  u32 cputype = 0;
  u32 cpusubtype = 0;
  u64 offset = 0;  // of the slice in the universal file
  u64 size = 0;
  u32 align = 0;   // log2
  byte_view bytes; // the slice; bytes.base() is its offset in the outermost file
};

// A short architecture name as llvm-nm/lipo print it (x86_64, arm64, ...), or "".
constexpr const char* arch_name(u32 cputype, u32 cpusubtype) noexcept {
  const u32 sub = cpusubtype & ~CPU_SUBTYPE_MASK;
  switch (cputype) {
    case CPU_TYPE_X86: return "i386";
    case CPU_TYPE_X86_64: return sub == CPU_SUBTYPE_X86_64_H ? "x86_64h" : "x86_64";
    case CPU_TYPE_ARM64: return sub == CPU_SUBTYPE_ARM64E ? "arm64e" : "arm64";
    case CPU_TYPE_ARM64_32: return "arm64_32";
    case CPU_TYPE_ARM: return "arm";
    case CPU_TYPE_POWERPC: return "ppc";
    case CPU_TYPE_POWERPC64: return "ppc64";
    default: return "";
  }
}

class fat_file {
 public:
  fat_file() = default;

  static result<fat_file> open(byte_view bytes);

  const std::vector<fat_slice>& slices() const noexcept { return slices_; }

  // The slice for (cputype, cpusubtype); capability bits of the subtype are ignored.
  std::optional<fat_slice> find(u32 cputype, u32 cpusubtype) const noexcept;
  // The slice whose arch_name() is `name` ("x86_64", "arm64", ...).
  std::optional<fat_slice> find(std::string_view name) const noexcept;

 private:
  std::vector<fat_slice> slices_;
};

#if LINKSCOPE_DEFINITIONS
LINKSCOPE_FUNC auto fat_file::open(byte_view bytes) -> result<fat_file> {
  fat_file f;
  LINKSCOPE_TRY(header, bytes.read<fat_header>(0, "fat header truncated"));
  const u32 magic = header.magic;
  if (magic != FAT_MAGIC && magic != FAT_MAGIC_64) return bytes.fail(errc::bad_magic, 0, "not a universal file");
  const bool is64 = magic == FAT_MAGIC_64;
  const u64 count = header.nfat_arch;
  const u64 record = is64 ? sizeof(fat_arch_64) : sizeof(fat_arch);
  u64 table = 0;
  if (!checked_mul(count, record, table) || !bytes.contains(sizeof(fat_header), table))
    return bytes.fail(errc::truncated, 4, "fat_arch records (nfat_arch) past end of file");
  const u64 headers_end = sizeof(fat_header) + table;
  f.slices_.reserve(static_cast<std::size_t>(count));
  for (u64 i = 0; i < count; ++i) {
    const u64 at = sizeof(fat_header) + i * record;
    fat_slice s;
    if (is64) {
      const auto a = bytes.read_unchecked<fat_arch_64>(at);
      s = {a.cputype, a.cpusubtype, a.offset, a.size, a.align, {}};
    } else {
      const auto a = bytes.read_unchecked<fat_arch>(at);
      s = {a.cputype, a.cpusubtype, a.offset, a.size, a.align, {}};
    }
    if (s.align > 15) return bytes.fail(errc::bad_field, at + (is64 ? 24 : 16), "fat_arch align above 2^15");
    if (!bytes.contains(s.offset, s.size))
      return bytes.fail(errc::truncated, at + 8, "fat slice (offset + size) past end of file");
    if (s.offset < headers_end && s.size != 0)
      return bytes.fail(errc::malformed, at + 8, "fat slice overlaps the fat headers");
    s.bytes = bytes.sub_unchecked(s.offset, s.size);
    for (const auto& other : f.slices_) {
      if (other.cputype == s.cputype && other.cpusubtype == s.cpusubtype)
        return bytes.fail(errc::malformed, at, "two fat slices with the same cputype and cpusubtype");
      if (s.size != 0 && other.size != 0 && s.offset < other.offset + other.size && other.offset < s.offset + s.size)
        return bytes.fail(errc::malformed, at + 8, "fat slices overlap");
    }
    f.slices_.push_back(s);
  }
  return f;
}

LINKSCOPE_FUNC auto fat_file::find(u32 cputype, u32 cpusubtype) const noexcept -> std::optional<fat_slice> {
  for (const auto& s : slices_)
    if (s.cputype == cputype && (s.cpusubtype & ~CPU_SUBTYPE_MASK) == (cpusubtype & ~CPU_SUBTYPE_MASK)) return s;
  return std::nullopt;
}

LINKSCOPE_FUNC auto fat_file::find(std::string_view name) const noexcept -> std::optional<fat_slice> {
  for (const auto& s : slices_)
    if (name == arch_name(s.cputype, s.cpusubtype)) return s;
  return std::nullopt;
}

#endif  // LINKSCOPE_DEFINITIONS

}  // namespace macho
}  // namespace v0
}  // namespace linkscope
