// linkscope/resolve/file_format.hpp — what a file is, from its first bytes,
// over every format linkscope reads: the one answer that linkscope-check's
// walk, linkscope-ldd's dispatch and the Python module's open() share.
//
// Each format's own predicate decides; this header only orders them (resolve/
// is the first layer that sees every format):
//   elf              7f 'E' 'L' 'F'                                elf::is_elf
//   archive          "!<arch>\n", "!<thin>\n", "<bigaf>\n"          ar::archive::is_archive
//   macho            feedface / feedfacf, in either byte order     macho::is_macho
//   macho_universal  cafebabe (nfat_arch <= 42: Java class files
//                    share the magic) or cafebabf, big-endian      macho::is_fat
//   pe               "MZ", then "PE\0\0" at e_lfanew (an "MZ" file
//                    without it is a DOS program: unknown)         pe::image::is_pe
//   coff             a COFF object of a machine GNU nm reads, or a
//                    bigobj header                                 coff::is_nm_coff
//   tbd              a text-based stub: "--- !tapi-tbd" (v3 and
//                    later) or "---" and a line end (v1, v2)       macho/tbd.hpp
// An archive's members are not looked at: archive_members() says what its
// first regular member is.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>

#include "linkscope/ar/archive.hpp"
#include "linkscope/coff/nm.hpp"
#include "linkscope/coff/pe.hpp"
#include "linkscope/core/bytes.hpp"
#include "linkscope/elf/file.hpp"
#include "linkscope/macho/fat.hpp"
#include "linkscope/macho/file.hpp"
#include "linkscope/macho/nm.hpp"

namespace linkscope {
inline namespace v0 {

enum class file_format : std::uint8_t { unknown, elf, archive, macho, macho_universal, pe, coff, tbd };

// "elf", "archive", "macho", "macho" (a universal file is Mach-O to a
// caller that names formats: the Python module's File.format, check's JSON),
// "pe", "coff", "tbd", "unknown".
constexpr std::string_view to_string(file_format f) noexcept {
  switch (f) {
    case file_format::elf: return "elf";
    case file_format::archive: return "archive";
    case file_format::macho:
    case file_format::macho_universal: return "macho";
    case file_format::pe: return "pe";
    case file_format::coff: return "coff";
    case file_format::tbd: return "tbd";
    case file_format::unknown: break;
  }
  return "unknown";
}

// The format of a file whose first bytes are `head` (the whole file, or at
// least its first 4 KiB: a PE's "PE\0\0" must lie inside `head`).
inline file_format sniff_format(byte_view head) noexcept {
  if (elf::is_elf(head)) return file_format::elf;
  if (ar::archive::is_archive(head)) return file_format::archive;
  if (macho::is_macho(head)) return file_format::macho;
  if (macho::is_fat(head)) return file_format::macho_universal;
  if (head.size() >= 2 && head.data()[0] == 'M' && head.data()[1] == 'Z')
    return pe::image::is_pe(head) ? file_format::pe : file_format::unknown;
  if (coff::is_nm_coff(head)) return file_format::coff;
  const std::string_view text(reinterpret_cast<const char*>(head.data()), head.size() < 16 ? head.size() : 16);
  if (text.substr(0, 13) == "--- !tapi-tbd" || text.substr(0, 4) == "---\n" || text.substr(0, 5) == "---\r\n")
    return file_format::tbd;
  return file_format::unknown;
}

// What an archive's first regular member is (elf, macho or coff), or unknown.
inline file_format archive_members(byte_view archive) {
  if (!ar::archive::is_archive(archive)) return file_format::unknown;
  if (macho::is_macho_archive(archive)) return file_format::macho;
  if (coff::is_coff_archive(archive)) return file_format::coff;
  if (ar::first_member_is(archive, [](byte_view m) { return elf::is_elf(m); })) return file_format::elf;
  return file_format::unknown;
}

// The format of the file at `path` from its first 4 KiB (and, for an "MZ"
// file whose e_lfanew points further, the four bytes there); unknown when it
// cannot be opened or read. `head_out`, when given, receives those first
// bytes (up to 4096), for a caller that looks further without reading again.
inline file_format sniff_file(const std::string& path, std::string* head_out = nullptr) {
  std::FILE* in = std::fopen(path.c_str(), "rb");
  if (in == nullptr) return file_format::unknown;
  unsigned char head[4096];
  const std::size_t got = std::fread(head, 1, sizeof head, in);
  if (head_out) head_out->assign(reinterpret_cast<const char*>(head), got);
  file_format f = sniff_format(byte_view(head, got));
  if (f == file_format::unknown && got >= 0x40 && head[0] == 'M' && head[1] == 'Z') {
    const std::uint32_t lfanew = load<u32, std::endian::little>(head + 0x3c);
    unsigned char sig[4] = {};
    if (lfanew >= got && std::fseek(in, static_cast<long>(lfanew), SEEK_SET) == 0 &&
        std::fread(sig, 1, 4, in) == 4 && std::memcmp(sig, "PE\0\0", 4) == 0)
      f = file_format::pe;
  }
  std::fclose(in);
  return f;
}

}  // namespace v0
}  // namespace linkscope
