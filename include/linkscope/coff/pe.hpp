// linkscope/coff/pe.hpp — PE32 and PE32+ images: exports, imports, delay-load
// imports.
//
// Layout (PE/COFF spec 2 "Overview", 3.4 "Optional Header", 6.3 ".edata",
// 6.4 ".idata", 4.8 "Delay-Load Import Tables"):
//   DOS header ("MZ", e_lfanew at 0x3c) -> "PE\0\0" -> file header (20 B)
//   -> optional header (magic 0x10b PE32 / 0x20b PE32+; ImageBase at 28 / 24,
//   SizeOfHeaders at 60, NumberOfRvaAndSizes at 92 / 108, data directories
//   at 96 / 112) -> section table (40 B each).
//   Tables are located by RVA. An RVA maps to a file offset through the
//   section that contains it (VirtualAddress <= rva < VirtualAddress +
//   max(VirtualSize, SizeOfRawData)); only bytes backed by raw data can be
//   read. Every RVA is checked; one that lies outside every section (or in a
//   section's zero-filled tail) is an error carrying the directory's offset.
//   Export directory (40 B): Name, Base, NumberOfFunctions, NumberOfNames and
//   three arrays: function RVAs (u32), name RVAs (u32, sorted), name
//   ordinals (u16 indices into the function array). A function RVA inside
//   the export directory's own range is a forwarder string "DLL.name".
//   Import directory: 20-byte descriptors until an all-zero one; each names
//   a DLL and a lookup table of thunks (u32 for PE32, u64 for PE32+): top bit
//   set = ordinal in the low 16 bits, else the RVA of {u16 hint, name}.
//   Delay-load directory: 32-byte descriptors (Attributes bit 0 = RVAs, else
//   VAs from ImageBase), with the same thunk format in the name table.
//   Bound import table (directory 11): its "RVA" is a file offset, usually in
//   the headers; 8-byte descriptors {TimeDateStamp, OffsetModuleName,
//   NumberOfModuleForwarderRefs} each followed by that many 8-byte forwarder
//   refs, until an all-zero descriptor; names are offsets from the table.
//   CLR runtime header (directory 14, spec 6.10): present = a managed (.NET)
//   image; the loader hands it to mscoree, so its imports say little.
//   Header fields (subsystem, OS and subsystem versions, DLL
//   characteristics) sit at the same offsets in PE32 and PE32+.
//   Resources (directory 2): a three-level tree type -> name -> language;
//   RT_MANIFEST (type 24) holds the side-by-side manifest, whose
//   <dependentAssembly><assemblyIdentity name=... /> elements name the
//   assemblies (Microsoft.VC90.CRT, Common-Controls) the loader binds via WinSxS.
//   Forwarder strings are "MODULE.Name" or "MODULE.#ordinal"; the module is
//   everything before the last '.', and gets ".dll" when it has no dot of
//   its own (that is how the Windows and Wine loaders split them).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "linkscope/coff/types.hpp"
#include "linkscope/core/bytes.hpp"
#include "linkscope/core/config.hpp"
#include "linkscope/core/error.hpp"
#include "linkscope/symbols/symbol.hpp"
#include "linkscope/symbols/table.hpp"

namespace linkscope {
inline namespace v0 {
namespace pe {

using coff::data_directory;
using coff::section_header;

struct export_entry {
  u32 ordinal = 0;             // biased (Base + index)
  std::string_view name;       // empty for an export by ordinal only
  u32 rva = 0;                 // function RVA (the forwarder string's RVA for forwarders)
  std::string_view forwarder;  // "DLL.name" or "DLL.#ord"; empty otherwise
  u32 hint = 0;                // index in the name pointer table (named exports)
  bool data = false;           // not a forwarder, and not in a code section (DATA exports)
  u64 address_offset = 0;      // file offset of its export address table entry
};

// A forwarder string split as the loader splits it.
struct forwarder_target {
  std::string_view module;  // "NTDLL", "api-ms-win-core-synch-l1-2-0" (no ".dll" added here)
  std::string_view name;    // empty for an ordinal
  std::optional<u16> ordinal;
};

// Split "MODULE.Name" / "MODULE.#N" at the last '.'. Empty module or
// export, or a bad ordinal: std::nullopt.
inline std::optional<forwarder_target> split_forwarder(std::string_view s) noexcept {
  const std::size_t dot = s.rfind('.');
  if (dot == std::string_view::npos || dot == 0 || dot + 1 == s.size()) return std::nullopt;
  forwarder_target t;
  t.module = s.substr(0, dot);
  const std::string_view rest = s.substr(dot + 1);
  if (rest[0] == '#') {
    if (rest.size() < 2 || rest.size() > 6) return std::nullopt;
    u32 v = 0;
    for (char c : rest.substr(1)) {
      if (c < '0' || c > '9') return std::nullopt;
      v = v * 10 + static_cast<u32>(c - '0');
    }
    if (v > 0xffff) return std::nullopt;
    t.ordinal = static_cast<u16>(v);
  } else {
    t.name = rest;
  }
  return t;
}

struct imported_function {
  std::string_view name;        // empty when imported by ordinal
  std::optional<u16> ordinal;
  u16 hint = 0;
  u32 thunk_rva = 0;            // RVA of the IAT slot
};

struct imported_dll {
  std::string_view name;
  bool delay_load = false;
  u32 delay_attributes = 0;  // delay-load only: bit 0 set = RVAs (VC7+), clear = VAs
  std::vector<imported_function> functions;
};

// One entry of the bound import table (read, never used to resolve).
struct bound_import {
  std::string_view module;
  u32 time_date_stamp = 0;
  bool forwarder_ref = false;  // an IMAGE_BOUND_FORWARDER_REF of the entry before
};

// The header fields a loader or a floor check looks at.
struct header_info {
  u16 machine = 0;
  u16 characteristics = 0;
  bool pe32_plus = false;
  u8 major_linker_version = 0, minor_linker_version = 0;
  u16 major_os_version = 0, minor_os_version = 0;
  u16 major_image_version = 0, minor_image_version = 0;
  u16 major_subsystem_version = 0, minor_subsystem_version = 0;
  u16 subsystem = 0;
  u16 dll_characteristics = 0;
};

namespace subsystem {
inline constexpr u16 native = 1;
inline constexpr u16 windows_gui = 2;
inline constexpr u16 windows_cui = 3;
inline constexpr u16 efi_application = 10;
}  // namespace subsystem

// objdump -p's names for the subsystem field.
constexpr const char* subsystem_name(u16 s) noexcept {
  switch (s) {
    case 0: return "unknown";
    case 1: return "native";
    case 2: return "Windows GUI";
    case 3: return "Windows CUI";
    case 5: return "OS/2 CUI";
    case 7: return "POSIX CUI";
    case 8: return "Native Win9x driver";
    case 9: return "Windows CE GUI";
    case 10: return "EFI application";
    case 11: return "EFI boot service driver";
    case 12: return "EFI runtime driver";
    case 13: return "EFI ROM";
    case 14: return "XBOX";
    case 16: return "Boot Application";
  }
  return "?";
}

// One <assemblyIdentity> of a <dependentAssembly> in a manifest.
struct assembly_identity {
  std::string_view name, version, processor_architecture, public_key_token, type, language;
};

namespace detail {
// The value of attribute `key` inside one XML start tag (either quote).
std::string_view xml_attribute(std::string_view tag, std::string_view key) noexcept;
}  // namespace detail

// The dependent assemblies a manifest names (its <dependency> /
// <dependentAssembly> / <assemblyIdentity> elements), in order. A plain
// scan, not an XML parser: enough for what linkers and mt.exe write.
std::vector<assembly_identity> manifest_dependencies(std::string_view xml);

// The CLR header of a managed image.
struct clr_info {
  u16 major_runtime_version = 0, minor_runtime_version = 0;
  u32 flags = 0;
  bool il_only() const noexcept { return (flags & 1u) != 0; }
};

class image {
 public:
  image() = default;

  static result<image> parse(byte_view bytes) noexcept;

  static bool is_pe(byte_view bytes) noexcept {
    if (bytes.size() < sizeof(coff::dos_header_prefix) || bytes.data()[0] != 'M' || bytes.data()[1] != 'Z')
      return false;
    const u64 pe = load<u32, std::endian::little>(bytes.data() + 0x3c);
    return bytes.contains(pe, 4) && std::memcmp(bytes.data() + pe, "PE\0\0", 4) == 0;
  }

  u16 machine() const noexcept { return machine_; }
  // Where the COFF file header starts (just past "PE\0\0"): the COFF symbol
  // table an image may keep is read from there by coff::basic_object.
  u64 coff_header_offset() const noexcept { return coff_header_offset_; }
  // NumberOfSymbols != 0: the image kept its COFF symbol table (mingw's ld
  // does unless stripped; MSVC's link.exe never writes one).
  bool has_symbol_table() const noexcept { return has_symbol_table_; }
  bool is_pe32_plus() const noexcept { return plus_; }
  bool is_dll() const noexcept { return (characteristics_ & 0x2000) != 0; }
  u64 image_base() const noexcept { return image_base_; }
  const header_info& header() const noexcept { return header_; }
  // A CLR header is present: a .NET assembly (mscoree loads it; its native
  // imports are only _CorExeMain / _CorDllMain).
  bool is_managed() const noexcept {
    const data_directory d = directory(coff::dir::clr_runtime_header);
    return d.virtual_address != 0 && d.size != 0;
  }
  result<clr_info> clr() const noexcept;
  // True if `rva` lies in a section that holds code (IMAGE_SCN_CNT_CODE or
  // MEM_EXECUTE): an export elsewhere is data.
  bool rva_is_code(u64 rva) const noexcept;
  std::size_t section_count() const noexcept { return sections_.size(); }
  section_header section(std::size_t i) const noexcept { return sections_[i]; }
  byte_view bytes() const noexcept { return bytes_; }

  data_directory directory(u32 index) const noexcept {
    if (index >= dirs_.size()) return data_directory{};
    return dirs_[index];
  }

  // File bytes for [rva, rva + len): inside one section's raw data (or the
  // headers). `where` is the file offset blamed on failure.
  result<byte_view> at_rva(u64 rva, u64 len, u64 where, const char* what = "RVA outside every section") const noexcept;
  // The rest of the section from `rva` (for strings).
  result<byte_view> section_tail_at_rva(u64 rva, u64 where) const noexcept;
  result<std::string_view> string_at_rva(u64 rva, u64 where) const noexcept;

  // The DLL's own name from the export directory (empty if none).
  result<std::string_view> export_name() const noexcept;

  result<std::vector<export_entry>> exports() const;

  result<std::vector<imported_dll>> imports() const;

  result<std::vector<imported_dll>> delay_imports() const;

  // The RT_MANIFEST resources' bytes (usually one: ID 1 for an .exe, 2 for
  // a DLL), in tree order.
  result<std::vector<byte_view>> manifests() const;

  // The bound import table. Its directory entry holds a file offset (the
  // table normally sits in the headers, after the section table).
  result<std::vector<bound_import>> bound_imports() const;

  // symbol_source: exports as defined global symbols (forwarders included,
  // with value 0; a DATA export is an object, every other a func), imports as undefined symbols carrying import info.
  // Import info pointers are only valid during the callback.
  template <class F>
  result<void> for_each_symbol(F&& f) const {
    LINKSCOPE_TRY(exps, exports());
    u32 index = 0;
    for (const export_entry& e : exps) {
      if (e.name.empty()) continue;
      symbol s;
      s.name = e.name;
      s.value = e.forwarder.empty() ? image_base_ + e.rva : 0;
      s.index = index++;
      s.bind = binding::global;
      s.defined = true;
      // A DATA export (outside every code section) is an object, as its ELF
      // kin; a forwarder names another DLL's export and counts as a func.
      s.kind = e.data ? symbol_kind::object : symbol_kind::func;
      if (!invoke_symbol_callback(f, s)) return ok();
    }
    for (int pass = 0; pass < 2; ++pass) {
      LINKSCOPE_TRY(dlls, pass == 0 ? imports() : delay_imports());
      for (const imported_dll& dll : dlls) {
        for (const imported_function& fn : dll.functions) {
          if (fn.name.empty()) continue;
          import_info info;
          info.dll = dll.name;
          info.import_name = fn.name;
          info.ordinal_or_hint = fn.hint;
          info.kind = import_kind::code;
          info.machine = machine_;
          symbol s;
          s.name = fn.name;
          s.index = index++;
          s.defined = false;
          s.import = &info;
          if (!invoke_symbol_callback(f, s)) return ok();
        }
      }
    }
    return ok();
  }

 private:
  result<void> fill_function(export_entry& e, byte_view funcs, u64 index, data_directory d) const;

  // `budget` bounds the total work: descriptors may share one lookup table,
  // so without it a crafted file could cost (file size)^2.
  result<void> read_thunks(u64 lookup_rva, u64 iat_rva, u64 bias, u64 where, imported_dll& dll, u64& budget) const;

  byte_view bytes_;
  record_array<section_header> sections_;
  record_array<data_directory> dirs_;
  u64 dirs_offset_ = 0;
  u64 coff_header_offset_ = 0;
  bool has_symbol_table_ = false;
  u64 image_base_ = 0;
  u32 size_of_headers_ = 0;
  header_info header_;
  u16 machine_ = 0;
  u16 characteristics_ = 0;
  bool plus_ = false;
};

static_assert(symbol_source<image>);

#if LINKSCOPE_DEFINITIONS
namespace detail {
// The value of attribute `key` inside one XML start tag (either quote).
LINKSCOPE_FUNC std::string_view xml_attribute(std::string_view tag, std::string_view key) noexcept {
  std::size_t at = 0;
  while ((at = tag.find(key, at)) != std::string_view::npos) {
    const bool word_start = at > 0 && (tag[at - 1] == ' ' || tag[at - 1] == '\t' || tag[at - 1] == '\n' ||
                                       tag[at - 1] == '\r');
    std::size_t p = at + key.size();
    at = p;
    if (!word_start) continue;
    while (p < tag.size() && (tag[p] == ' ' || tag[p] == '\t' || tag[p] == '\n' || tag[p] == '\r')) ++p;
    if (p >= tag.size() || tag[p] != '=') continue;
    ++p;
    while (p < tag.size() && (tag[p] == ' ' || tag[p] == '\t' || tag[p] == '\n' || tag[p] == '\r')) ++p;
    if (p >= tag.size() || (tag[p] != '"' && tag[p] != '\'')) continue;
    const char quote = tag[p];
    const std::size_t end = tag.find(quote, p + 1);
    if (end == std::string_view::npos) return {};
    return tag.substr(p + 1, end - p - 1);
  }
  return {};
}
}  // namespace detail

// The dependent assemblies a manifest names (its <dependency> /
// <dependentAssembly> / <assemblyIdentity> elements), in order. A plain
// scan, not an XML parser: enough for what linkers and mt.exe write.
LINKSCOPE_FUNC std::vector<assembly_identity> manifest_dependencies(std::string_view xml) {
  std::vector<assembly_identity> out;
  std::size_t at = 0;
  while ((at = xml.find("<dependentAssembly", at)) != std::string_view::npos) {
    const std::size_t close = xml.find("</dependentAssembly", at);
    const std::string_view body = xml.substr(at, close == std::string_view::npos ? std::string_view::npos : close - at);
    at += 18;
    const std::size_t id = body.find("<assemblyIdentity");
    if (id == std::string_view::npos) continue;
    const std::size_t end = body.find('>', id);
    const std::string_view tag = body.substr(id, end == std::string_view::npos ? std::string_view::npos : end - id);
    assembly_identity a;
    a.name = detail::xml_attribute(tag, "name");
    a.version = detail::xml_attribute(tag, "version");
    a.processor_architecture = detail::xml_attribute(tag, "processorArchitecture");
    a.public_key_token = detail::xml_attribute(tag, "publicKeyToken");
    a.type = detail::xml_attribute(tag, "type");
    a.language = detail::xml_attribute(tag, "language");
    out.push_back(a);
  }
  return out;
}

LINKSCOPE_FUNC auto image::clr() const noexcept -> result<clr_info> {
  const data_directory d = directory(coff::dir::clr_runtime_header);
  if (d.virtual_address == 0 || d.size == 0) return clr_info{};
  LINKSCOPE_TRY(view, at_rva(d.virtual_address, sizeof(coff::clr_header), dirs_offset_ + 14 * 8,
                             "CLR header RVA outside every section"));
  const auto h = view.read_unchecked<coff::clr_header>(0);
  clr_info c;
  c.major_runtime_version = h.major_runtime_version;
  c.minor_runtime_version = h.minor_runtime_version;
  c.flags = h.flags;
  return c;
}

LINKSCOPE_FUNC bool image::rva_is_code(u64 rva) const noexcept {
  for (const section_header& s : sections_) {
    const u64 va = s.virtual_address;
    const u64 span = s.virtual_size > s.size_of_raw_data ? u64{s.virtual_size} : u64{s.size_of_raw_data};
    if (rva < va || rva - va >= span) continue;
    return (s.characteristics & (coff::scn::cnt_code | coff::scn::mem_execute)) != 0;
  }
  return false;
}

LINKSCOPE_FUNC auto image::at_rva(u64 rva, u64 len, u64 where, const char* what) const noexcept -> result<byte_view> {
  for (const section_header& s : sections_) {
    const u64 va = s.virtual_address;
    const u64 span = s.virtual_size > s.size_of_raw_data ? u64{s.virtual_size} : u64{s.size_of_raw_data};
    if (rva < va || rva - va >= span) continue;
    const u64 delta = rva - va;
    if (!fits(delta, len, s.size_of_raw_data))
      return bytes_.fail(errc::out_of_range, where, "RVA range past the section's raw data");
    return bytes_.sub(u64{s.pointer_to_raw_data} + delta, len, "section raw data past end of file");
  }
  if (rva < size_of_headers_ && fits(rva, len, size_of_headers_)) return bytes_.sub(rva, len);
  return bytes_.fail(errc::out_of_range, where, what);
}

LINKSCOPE_FUNC auto image::section_tail_at_rva(u64 rva, u64 where) const noexcept -> result<byte_view> {
  for (const section_header& s : sections_) {
    const u64 va = s.virtual_address;
    const u64 span = s.virtual_size > s.size_of_raw_data ? u64{s.virtual_size} : u64{s.size_of_raw_data};
    if (rva < va || rva - va >= span) continue;
    const u64 delta = rva - va;
    if (delta >= s.size_of_raw_data)
      return bytes_.fail(errc::out_of_range, where, "RVA in the section's zero-filled tail");
    return bytes_.sub(u64{s.pointer_to_raw_data} + delta, u64{s.size_of_raw_data} - delta,
                      "section raw data past end of file");
  }
  if (rva < size_of_headers_) return bytes_.sub(rva, size_of_headers_ - rva);
  return bytes_.fail(errc::out_of_range, where, "RVA outside every section");
}

LINKSCOPE_FUNC auto image::string_at_rva(u64 rva, u64 where) const noexcept -> result<std::string_view> {
  LINKSCOPE_TRY(tail, section_tail_at_rva(rva, where));
  return tail.cstring(0, "string at RVA has no NUL");
}

LINKSCOPE_FUNC auto image::export_name() const noexcept -> result<std::string_view> {
  const data_directory d = directory(coff::dir::export_);
  if (d.virtual_address == 0) return std::string_view{};
  const u64 where = dirs_offset_;
  LINKSCOPE_TRY(view, at_rva(d.virtual_address, sizeof(coff::export_directory), where));
  const auto ed = view.read_unchecked<coff::export_directory>(0);
  if (ed.name == 0) return std::string_view{};
  return string_at_rva(ed.name, view.base() + 12);
}

LINKSCOPE_FUNC result<image> image::parse(byte_view bytes) noexcept {
  image img;
  img.bytes_ = bytes;
  LINKSCOPE_TRY(dos, bytes.read<coff::dos_header_prefix>(0, "truncated DOS header"));
  if (dos.magic[0] != 'M' || dos.magic[1] != 'Z') return bytes.fail(errc::bad_magic, 0, "not a PE image (no MZ)");
  const u64 pe_offset = dos.e_lfanew;
  LINKSCOPE_TRY(sig, bytes.sub(pe_offset, 4, "PE signature past end of file"));
  if (std::memcmp(sig.data(), "PE\0\0", 4) != 0) return bytes.fail(errc::bad_magic, pe_offset, "bad PE signature");
  LINKSCOPE_TRY(fh, bytes.read<coff::file_header>(pe_offset + 4, "truncated COFF file header"));
  img.machine_ = fh.machine;
  img.characteristics_ = fh.characteristics;
  img.coff_header_offset_ = pe_offset + 4;
  img.has_symbol_table_ = fh.number_of_symbols != 0;
  img.header_.machine = fh.machine;
  img.header_.characteristics = fh.characteristics;
  const u64 opt = pe_offset + 4 + sizeof(coff::file_header);
  const u64 opt_size = fh.size_of_optional_header;
  LINKSCOPE_TRY(optional, bytes.sub(opt, opt_size, "optional header past end of file"));
  if (opt_size < 2) return bytes.fail(errc::truncated, opt, "optional header too small");
  const u16 magic = load<u16, std::endian::little>(optional.data());
  u64 dirs_at = 0;
  u64 count_at = 0;
  if (magic == coff::pe32_magic) {
    img.plus_ = false;
    if (opt_size < 96) return bytes.fail(errc::truncated, opt, "PE32 optional header too small");
    img.image_base_ = load<u32, std::endian::little>(optional.data() + 28);
    count_at = 92;
    dirs_at = 96;
  } else if (magic == coff::pe32plus_magic) {
    img.plus_ = true;
    if (opt_size < 112) return bytes.fail(errc::truncated, opt, "PE32+ optional header too small");
    img.image_base_ = load<u64, std::endian::little>(optional.data() + 24);
    count_at = 108;
    dirs_at = 112;
  } else {
    return bytes.fail(errc::bad_magic, opt, "unknown optional header magic");
  }
  img.size_of_headers_ = load<u32, std::endian::little>(optional.data() + 60);
  const auto versions = optional.read_unchecked<coff::optional_header_versions>(0);  // 72 <= 96 bytes
  img.header_.pe32_plus = img.plus_;
  img.header_.major_linker_version = versions.major_linker_version;
  img.header_.minor_linker_version = versions.minor_linker_version;
  img.header_.major_os_version = versions.major_operating_system_version;
  img.header_.minor_os_version = versions.minor_operating_system_version;
  img.header_.major_image_version = versions.major_image_version;
  img.header_.minor_image_version = versions.minor_image_version;
  img.header_.major_subsystem_version = versions.major_subsystem_version;
  img.header_.minor_subsystem_version = versions.minor_subsystem_version;
  img.header_.subsystem = versions.subsystem;
  img.header_.dll_characteristics = versions.dll_characteristics;
  u64 ndirs = load<u32, std::endian::little>(optional.data() + count_at);
  const u64 room = (opt_size - dirs_at) / sizeof(data_directory);
  if (ndirs > room) ndirs = room;  // the loader reads only what the header holds
  LINKSCOPE_TRY(dirs, optional.array<data_directory>(dirs_at, ndirs));
  img.dirs_ = dirs;
  img.dirs_offset_ = opt + dirs_at;
  LINKSCOPE_TRY(sections, bytes.array<section_header>(opt + opt_size, fh.number_of_sections,
                                                      sizeof(section_header), "section table past end of file"));
  img.sections_ = sections;
  return img;
}

LINKSCOPE_FUNC result<std::vector<export_entry>> image::exports() const {
  std::vector<export_entry> out;
  const data_directory d = directory(coff::dir::export_);
  if (d.virtual_address == 0 || d.size == 0) return out;
  const u64 where = dirs_offset_;
  LINKSCOPE_TRY(view, at_rva(d.virtual_address, sizeof(coff::export_directory), where,
                             "export directory RVA outside every section"));
  const auto ed = view.read_unchecked<coff::export_directory>(0);
  const u64 dir_at = view.base();
  const u64 nfunc = ed.number_of_functions;
  const u64 nname = ed.number_of_names;
  if (nfunc > 0 && u64{ed.ordinal_base} + nfunc - 1 > 0xffff)
    return bytes_.fail(errc::overflow, dir_at + 16, "export ordinal base overflow");
  // Tables: sizes checked against the section's raw data before any loop.
  byte_view funcs, names, ords;
  if (nfunc > 0) {
    LINKSCOPE_TRY(f, at_rva(ed.address_of_functions, nfunc * 4, dir_at + 28,
                            "export address table RVA outside every section"));
    funcs = f;
  }
  if (nname > 0) {
    LINKSCOPE_TRY(n, at_rva(ed.address_of_names, nname * 4, dir_at + 32,
                            "export name table RVA outside every section"));
    LINKSCOPE_TRY(o, at_rva(ed.address_of_name_ordinals, nname * 2, dir_at + 36,
                            "export ordinal table RVA outside every section"));
    names = n;
    ords = o;
  }
  std::vector<bool> named(static_cast<std::size_t>(nfunc), false);
  out.reserve(static_cast<std::size_t>(nname));
  for (u64 j = 0; j < nname; ++j) {
    const u32 name_rva = load<u32, std::endian::little>(names.data() + j * 4);
    const u16 index = load<u16, std::endian::little>(ords.data() + j * 2);
    if (index >= nfunc) return bytes_.fail(errc::out_of_range, ords.base() + j * 2, "export name ordinal out of range");
    LINKSCOPE_TRY(name, string_at_rva(name_rva, names.base() + j * 4));
    export_entry e;
    e.name = name;
    e.ordinal = ed.ordinal_base + index;
    e.hint = static_cast<u32>(j);
    LINKSCOPE_CHECK(fill_function(e, funcs, index, d));
    named[index] = true;
    out.push_back(e);
  }
  for (u64 i = 0; i < nfunc; ++i) {
    if (named[static_cast<std::size_t>(i)]) continue;
    if (load<u32, std::endian::little>(funcs.data() + i * 4) == 0) continue;  // unused slot
    export_entry e;
    e.ordinal = static_cast<u32>(ed.ordinal_base + i);
    LINKSCOPE_CHECK(fill_function(e, funcs, i, d));
    out.push_back(e);
  }
  return out;
}

LINKSCOPE_FUNC result<std::vector<imported_dll>> image::imports() const {
  std::vector<imported_dll> out;
  const data_directory d = directory(coff::dir::import);
  if (d.virtual_address == 0) return out;
  u64 budget = bytes_.size() / 4;
  for (u64 i = 0;; ++i) {
    const u64 rva = u64{d.virtual_address} + i * sizeof(coff::import_descriptor);
    LINKSCOPE_TRY(view, at_rva(rva, sizeof(coff::import_descriptor), dirs_offset_ + 8,
                               "import directory RVA outside every section"));
    const auto desc = view.read_unchecked<coff::import_descriptor>(0);
    if (desc.original_first_thunk == 0 && desc.name == 0 && desc.first_thunk == 0) break;
    imported_dll dll;
    LINKSCOPE_TRY(name, string_at_rva(desc.name, view.base() + 12));
    dll.name = name;
    const u32 lookup = desc.original_first_thunk != 0 ? desc.original_first_thunk.value() : desc.first_thunk.value();
    LINKSCOPE_CHECK(read_thunks(lookup, desc.first_thunk, 0, view.base(), dll, budget));
    out.push_back(std::move(dll));
  }
  return out;
}

LINKSCOPE_FUNC result<std::vector<imported_dll>> image::delay_imports() const {
  std::vector<imported_dll> out;
  const data_directory d = directory(coff::dir::delay_import);
  if (d.virtual_address == 0) return out;
  u64 budget = bytes_.size() / 4;
  for (u64 i = 0;; ++i) {
    const u64 rva = u64{d.virtual_address} + i * sizeof(coff::delay_import_descriptor);
    LINKSCOPE_TRY(view, at_rva(rva, sizeof(coff::delay_import_descriptor), dirs_offset_ + 13 * 8,
                               "delay-import directory RVA outside every section"));
    const auto desc = view.read_unchecked<coff::delay_import_descriptor>(0);
    if (desc.dll_name == 0 && desc.import_name_table == 0 && desc.import_address_table == 0) break;
    // Attributes bit 0 clear: pre-VC7 tables hold VAs.
    const u64 bias = (desc.attributes & 1u) ? 0 : image_base_;
    auto unbias = [&](u64 v) -> result<u64> {
      if (v < bias) return bytes_.fail(errc::out_of_range, view.base(), "delay-import VA below ImageBase");
      return v - bias;
    };
    imported_dll dll;
    dll.delay_load = true;
    dll.delay_attributes = desc.attributes;
    LINKSCOPE_TRY(name_rva, unbias(desc.dll_name));
    LINKSCOPE_TRY(name, string_at_rva(name_rva, view.base() + 4));
    dll.name = name;
    LINKSCOPE_TRY(int_rva, unbias(desc.import_name_table));
    LINKSCOPE_TRY(iat_rva, unbias(desc.import_address_table));
    LINKSCOPE_CHECK(read_thunks(int_rva, iat_rva, bias, view.base(), dll, budget));
    out.push_back(std::move(dll));
  }
  return out;
}

LINKSCOPE_FUNC result<std::vector<byte_view>> image::manifests() const {
  std::vector<byte_view> out;
  const data_directory d = directory(coff::dir::resource);
  if (d.virtual_address == 0 || d.size == 0) return out;
  LINKSCOPE_TRY(tree, at_rva(d.virtual_address, d.size, dirs_offset_ + 2 * 8,
                             "resource directory RVA outside every section"));
  // One table: its entries, checked against the tree's bytes.
  auto entries = [&](u64 offset) -> result<std::pair<coff::resource_directory, byte_view>> {
    LINKSCOPE_TRY(dir, tree.read<coff::resource_directory>(offset, "resource table past the resource directory"));
    const u64 n = u64{dir.number_of_named_entries} + dir.number_of_id_entries;
    LINKSCOPE_TRY(list, tree.sub(offset + sizeof(coff::resource_directory), n * sizeof(coff::resource_directory_entry),
                                 "resource entries past the resource directory"));
    return std::pair<coff::resource_directory, byte_view>{dir, list};
  };
  auto entry_at = [](byte_view list, u64 i) {
    return list.read_unchecked<coff::resource_directory_entry>(i * sizeof(coff::resource_directory_entry));
  };
  constexpr u32 subdir = 0x80000000u;
  LINKSCOPE_TRY(root, entries(0));
  const u64 types = root.second.size() / sizeof(coff::resource_directory_entry);
  for (u64 t = 0; t < types; ++t) {
    const auto type = entry_at(root.second, t);
    if ((type.name & subdir) != 0 || type.name != coff::rt_manifest) continue;
    if ((type.offset_to_data & subdir) == 0)
      return bytes_.fail(errc::malformed, root.second.base() + t * 8 + 4, "resource type is not a directory");
    LINKSCOPE_TRY(names, entries(type.offset_to_data & ~subdir));
    const u64 nnames = names.second.size() / sizeof(coff::resource_directory_entry);
    for (u64 n = 0; n < nnames; ++n) {
      const auto name = entry_at(names.second, n);
      if ((name.offset_to_data & subdir) == 0)
        return bytes_.fail(errc::malformed, names.second.base() + n * 8 + 4, "resource name is not a directory");
      LINKSCOPE_TRY(langs, entries(name.offset_to_data & ~subdir));
      const u64 nlangs = langs.second.size() / sizeof(coff::resource_directory_entry);
      for (u64 l = 0; l < nlangs; ++l) {
        const auto lang = entry_at(langs.second, l);
        if ((lang.offset_to_data & subdir) != 0)
          return bytes_.fail(errc::malformed, langs.second.base() + l * 8 + 4, "resource language entry is a directory");
        LINKSCOPE_TRY(data, tree.read<coff::resource_data_entry>(lang.offset_to_data,
                                                                 "resource data entry past the resource directory"));
        LINKSCOPE_TRY(bytes, at_rva(data.data_rva, data.size, tree.base() + lang.offset_to_data,
                                    "resource data RVA outside every section"));
        out.push_back(bytes);
      }
    }
  }
  return out;
}

LINKSCOPE_FUNC result<std::vector<bound_import>> image::bound_imports() const {
  std::vector<bound_import> out;
  const data_directory d = directory(coff::dir::bound_import);
  if (d.virtual_address == 0 || d.size == 0) return out;
  LINKSCOPE_TRY(table, bytes_.sub(d.virtual_address, d.size, "bound import table past end of file"));
  const u64 count = table.size() / sizeof(coff::bound_import_descriptor);
  u64 forwarders_left = 0;
  for (u64 i = 0; i < count; ++i) {
    const auto e = table.read_unchecked<coff::bound_import_descriptor>(i * sizeof(coff::bound_import_descriptor));
    if (forwarders_left == 0 && e.time_date_stamp == 0 && e.offset_module_name == 0 &&
        e.number_of_module_forwarder_refs == 0)
      return out;
    bound_import b;
    b.time_date_stamp = e.time_date_stamp;
    b.forwarder_ref = forwarders_left > 0;
    LINKSCOPE_TRY(name, table.cstring(e.offset_module_name, "bound import module name past the table"));
    b.module = name;
    if (forwarders_left > 0) --forwarders_left;
    else forwarders_left = e.number_of_module_forwarder_refs;
    out.push_back(b);
  }
  return bytes_.fail(errc::malformed, d.virtual_address, "bound import table not terminated");
}

LINKSCOPE_FUNC result<void> image::fill_function(export_entry& e, byte_view funcs, u64 index, data_directory d) const {
  const u32 rva = load<u32, std::endian::little>(funcs.data() + index * 4);
  e.rva = rva;
  e.address_offset = funcs.base() + index * 4;
  if (rva >= d.virtual_address && rva - d.virtual_address < d.size) {
    LINKSCOPE_TRY(fwd, string_at_rva(rva, funcs.base() + index * 4));
    e.forwarder = fwd;
  } else {
    e.data = !rva_is_code(rva);
  }
  return ok();
}

LINKSCOPE_FUNC result<void> image::read_thunks(u64 lookup_rva, u64 iat_rva, u64 bias, u64 where, imported_dll& dll, u64& budget) const {
  const u64 width = plus_ ? 8 : 4;
  const u64 flag = plus_ ? (u64{1} << 63) : (u64{1} << 31);
  // The table must end with a zero thunk inside its section: bound the
  // loop by the raw bytes left from its start.
  LINKSCOPE_TRY(table, section_tail_at_rva(lookup_rva, where));
  const u64 max_entries = table.size() / width;
  for (u64 i = 0;; ++i) {
    if (i >= max_entries) return bytes_.fail(errc::malformed, table.base(), "import lookup table not terminated");
    const u64 v = plus_ ? load<u64, std::endian::little>(table.data() + i * width)
                        : load<u32, std::endian::little>(table.data() + i * width);
    if (v == 0) break;
    if (budget == 0) return bytes_.fail(errc::too_large, table.base(), "import tables larger than the file allows");
    --budget;
    imported_function fn;
    fn.thunk_rva = static_cast<u32>(iat_rva + i * width);
    if (v & flag) {
      fn.ordinal = static_cast<u16>(v & 0xffff);
    } else {
      if (v < bias) return bytes_.fail(errc::out_of_range, table.base() + i * width, "hint/name VA below ImageBase");
      const u64 hn = v - bias;
      if (hn > 0xffffffffu) return bytes_.fail(errc::out_of_range, table.base() + i * width, "hint/name RVA out of range");
      LINKSCOPE_TRY(entry, section_tail_at_rva(hn, table.base() + i * width));
      if (entry.size() < 3) return bytes_.fail(errc::truncated, entry.base(), "hint/name entry truncated");
      fn.hint = load<u16, std::endian::little>(entry.data());
      LINKSCOPE_TRY(name, entry.cstring(2, "import name has no NUL"));
      fn.name = name;
    }
    dll.functions.push_back(fn);
  }
  return ok();
}
#endif  // LINKSCOPE_DEFINITIONS

}  // namespace pe
}  // namespace v0
}  // namespace linkscope
