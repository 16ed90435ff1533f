// linkscope/coff/apiset.hpp — the API set schema (version 6) of
// apisetschema.dll: which host DLL implements an api-ms-win-* / ext-ms-*
// contract.
//
// Layout (Windows 10 and later; the layout Wine's apisetschema.dll writes and
// its loader reads, dlls/ntdll/loader.c): the image's ".apiset" section starts
// with a namespace header of 7 u32: Version (6), Size, Flags, Count,
// EntryOffset, HashOffset, HashFactor. At EntryOffset, Count entries of 6 u32:
// Flags, NameOffset, NameLength, HashedLength, ValueOffset, ValueCount. At
// ValueOffset, ValueCount values of 5 u32: Flags, NameOffset, NameLength,
// ValueOffset, ValueLength. Every offset is from the start of the namespace;
// every name is UTF-16LE and every length is in bytes. An entry's name is the
// contract without ".dll" ("api-ms-win-core-synch-l1-2-0"); HashedLength
// covers it up to the last '-' ("api-ms-win-core-synch-l1-2"), and a lookup
// compares only that part, case-insensitively, so any minor version of a
// contract finds the entry. The value whose NameLength is 0 is the default
// host; a value with a name is the host for that one importing module. An
// entry with no value (or an empty one) has no host on this system: for an
// ext-ms-* contract that means "absent, and the caller copes".
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "linkscope/coff/pe.hpp"
#include "linkscope/core/bytes.hpp"
#include "linkscope/core/config.hpp"
#include "linkscope/core/error.hpp"

namespace linkscope {
inline namespace v0 {
namespace pe {

struct apiset_value {
  std::string importer;  // empty: the default host
  std::string host;      // empty: no host
};

struct apiset_entry {
  std::string name;    // lower-case, without ".dll": "api-ms-win-core-synch-l1-2-0"
  std::size_t hashed = 0;  // characters compared by a lookup (up to the last '-')
  bool sealed = false;     // Flags bit 0
  std::vector<apiset_value> values;
};

// True for a name the loader treats as an API set contract.
bool is_apiset_name(std::string_view name) noexcept;

class apiset_schema {
 public:
  // Read the ".apiset" section of `image` (apisetschema.dll). No such section:
  // errc::not_found.
  static result<apiset_schema> read(const image& img);

  // Parse a namespace (version 6) from the section's bytes.
  static result<apiset_schema> parse(byte_view ns);

  const std::vector<apiset_entry>& entries() const noexcept { return entries_; }

  // The entry for a contract name ("API-MS-Win-Core-Synch-L1-2-0.dll"), or
  // null. As the loader does: drop ".dll", cut at the last '-', compare that
  // part with each entry's hashed part, ignoring case.
  const apiset_entry* find(std::string_view contract) const noexcept;

  // The host DLL for `contract` imported by `importer` (a file name), empty
  // when the entry has no host; std::nullopt when the schema has no entry.
  std::optional<std::string> host(std::string_view contract, std::string_view importer = {}) const;

  static std::string lower(std::string_view s);

 private:
  static std::size_t strnlen_(const char* s, std::size_t n) noexcept;
  // A UTF-16LE name, lower-cased; characters past ASCII become '?' (no
  // contract or DLL name in a schema uses them).
  static result<std::string> utf16(byte_view ns, u64 offset, u64 length, u64 where);

  std::vector<apiset_entry> entries_;
};

#if LINKSCOPE_DEFINITIONS
LINKSCOPE_FUNC bool is_apiset_name(std::string_view name) noexcept {
  auto starts = [&](std::string_view p) {
    if (name.size() < p.size()) return false;
    for (std::size_t i = 0; i < p.size(); ++i) {
      char c = name[i];
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
      if (c != p[i]) return false;
    }
    return true;
  };
  return starts("api-") || starts("ext-");
}

LINKSCOPE_FUNC auto apiset_schema::read(const image& img) -> result<apiset_schema> {
  for (std::size_t i = 0; i < img.section_count(); ++i) {
    const coff::section_header s = img.section(i);
    if (std::string_view(s.name, strnlen_(s.name, 8)) != ".apiset") continue;
    LINKSCOPE_TRY(bytes, img.bytes().sub(s.pointer_to_raw_data, s.size_of_raw_data,
                                         ".apiset section past end of file"));
    return parse(bytes);
  }
  return make_error(errc::not_found, no_offset, "no .apiset section");
}

LINKSCOPE_FUNC auto apiset_schema::parse(byte_view ns) -> result<apiset_schema> {
  apiset_schema out;
  if (!ns.contains(0, 28)) return ns.fail(errc::truncated, 0, "API set namespace header truncated");
  auto u32_at = [&](u64 off) { return load<u32, std::endian::little>(ns.data() + off); };
  if (u32_at(0) != 6) return ns.fail(errc::unsupported, 0, "API set schema version is not 6");
  const u64 count = u32_at(12);
  const u64 entries = u32_at(16);
  if (count > ns.size() / 24 || !ns.contains(entries, count * 24))
    return ns.fail(errc::out_of_range, 16, "API set entries past the section");
  out.entries_.reserve(static_cast<std::size_t>(count));
  for (u64 i = 0; i < count; ++i) {
    const u64 at = entries + i * 24;
    apiset_entry e;
    e.sealed = (u32_at(at) & 1u) != 0;
    LINKSCOPE_TRY(name, utf16(ns, u32_at(at + 4), u32_at(at + 8), at + 4));
    e.name = std::move(name);
    const u64 hashed = u32_at(at + 12) / 2;
    e.hashed = hashed <= e.name.size() ? static_cast<std::size_t>(hashed) : e.name.size();
    const u64 values = u32_at(at + 16);
    const u64 nvalues = u32_at(at + 20);
    if (nvalues > ns.size() / 20 || !ns.contains(values, nvalues * 20))
      return ns.fail(errc::out_of_range, at + 16, "API set values past the section");
    for (u64 j = 0; j < nvalues; ++j) {
      const u64 v = values + j * 20;
      apiset_value value;
      LINKSCOPE_TRY(importer, utf16(ns, u32_at(v + 4), u32_at(v + 8), v + 4));
      LINKSCOPE_TRY(host, utf16(ns, u32_at(v + 12), u32_at(v + 16), v + 12));
      value.importer = std::move(importer);
      value.host = std::move(host);
      e.values.push_back(std::move(value));
    }
    out.entries_.push_back(std::move(e));
  }
  return out;
}

LINKSCOPE_FUNC auto apiset_schema::find(std::string_view contract) const noexcept -> const apiset_entry* {
  std::string key = lower(contract);
  if (key.size() > 4 && key.compare(key.size() - 4, 4, ".dll") == 0) key.resize(key.size() - 4);
  const std::size_t dash = key.rfind('-');
  if (dash == std::string::npos) return nullptr;
  const std::string_view part(key.data(), dash);
  for (const apiset_entry& e : entries_)
    if (std::string_view(e.name).substr(0, e.hashed) == part) return &e;
  return nullptr;
}

LINKSCOPE_FUNC std::optional<std::string> apiset_schema::host(std::string_view contract, std::string_view importer) const {
  const apiset_entry* e = find(contract);
  if (e == nullptr) return std::nullopt;
  const std::string who = lower(importer);
  std::string fallback;
  bool have_default = false;
  for (const apiset_value& v : e->values) {
    if (v.importer.empty()) {
      if (!have_default) fallback = v.host;
      have_default = true;
    } else if (!who.empty() && lower(v.importer) == who) {
      return v.host;
    }
  }
  if (!have_default && !e->values.empty()) return e->values.front().host;
  return fallback;
}

LINKSCOPE_FUNC std::string apiset_schema::lower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

LINKSCOPE_FUNC std::size_t apiset_schema::strnlen_(const char* s, std::size_t n) noexcept {
  std::size_t i = 0;
  while (i < n && s[i] != '\0') ++i;
  return i;
}

LINKSCOPE_FUNC auto apiset_schema::utf16(byte_view ns, u64 offset, u64 length, u64 where) -> result<std::string> {
  if (length % 2 != 0 || !ns.contains(offset, length))
    return ns.fail(errc::out_of_range, where, "API set name past the section");
  std::string out;
  out.reserve(static_cast<std::size_t>(length / 2));
  for (u64 i = 0; i < length; i += 2) {
    const u16 c = load<u16, std::endian::little>(ns.data() + offset + i);
    char ch = c < 0x80 ? static_cast<char>(c) : '?';
    if (ch >= 'A' && ch <= 'Z') ch = static_cast<char>(ch - 'A' + 'a');
    out.push_back(ch);
  }
  return out;
}

#endif  // LINKSCOPE_DEFINITIONS

}  // namespace pe
}  // namespace v0
}  // namespace linkscope
