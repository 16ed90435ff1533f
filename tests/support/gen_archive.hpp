// Test support: write archive flavours that no tool on Debian 12 writes.
//
//  - AIX big archives ("<bigaf>\n"): fixed-length header, 112-byte member
//    headers linked by offset, a member table and 32/64-bit global symbol
//    tables (AIX "ar_big" file format documentation).
//  - COFF .lib with the MS second linker member (PE/COFF spec §7.4-7.6:
//    first linker member big-endian, second little-endian with 1-based
//    16-bit indices and sorted names, longnames member with NUL-terminated
//    names).
//  - BSD archives with "__.SYMDEF", "__.SYMDEF SORTED" or "__.SYMDEF_64",
//    little- or big-endian, with #1/N names (4.4BSD ar(5), ranlib(5)).
// These follow the published layouts; the tests check what they can against
// llvm-ar-14 / llvm-nm-14, which read all three.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

namespace linkscope_test::gen {

struct input_member {
  std::string name;
  std::string data;
};
struct input_symbol {
  std::string name;
  std::size_t member = 0;  // index into the member list
};

// Left-justified, space-padded ASCII field.
inline std::string field(const std::string& value, std::size_t width) {
  std::string out = value.substr(0, width);
  out.resize(width, ' ');
  return out;
}
inline std::string field(std::uint64_t value, std::size_t width) { return field(std::to_string(value), width); }
inline std::string octal_field(std::uint64_t value, std::size_t width) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%llo", static_cast<unsigned long long>(value));
  return field(std::string(buf), width);
}

inline void put_be(std::string& out, std::uint64_t value, int bytes) {
  for (int i = bytes - 1; i >= 0; --i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}
inline void put_le(std::string& out, std::uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

// A 60-byte common header.
inline std::string gnu_header(const std::string& name_field, std::uint64_t size, std::uint64_t mode = 0644,
                              std::uint64_t date = 0) {
  return field(name_field, 16) + field(date, 12) + field(std::uint64_t{0}, 6) + field(std::uint64_t{0}, 6) +
         octal_field(mode, 8) + field(size, 10) + "`\n";
}

// ---------------------------------------------------------------------------
// AIX big archive.
inline std::string aix_big(const std::vector<input_member>& members, const std::vector<input_symbol>& syms32,
                           const std::vector<input_symbol>& syms64) {
  std::string out(128, ' ');
  std::vector<std::uint64_t> offsets;
  auto member_header = [](std::uint64_t size, std::uint64_t next, std::uint64_t prev, const std::string& name) {
    std::string h = field(size, 20) + field(next, 20) + field(prev, 20) + field(std::uint64_t{1700000000}, 12) +
                    field(std::uint64_t{0}, 12) + field(std::uint64_t{0}, 12) + octal_field(0644, 12) +
                    field(name.size(), 4) + name;
    if (name.size() & 1) h.push_back('\0');
    h += "`\n";
    return h;
  };
  // Member sizes are known up front, so each header's next offset is too.
  std::uint64_t at = 128;
  for (const auto& m : members) {
    offsets.push_back(at);
    std::uint64_t len = 112 + m.name.size() + (m.name.size() & 1) + 2 + m.data.size();
    at += len + (len & 1);
  }
  const std::uint64_t memoff = at;
  std::uint64_t prev = 0;
  for (std::size_t i = 0; i < members.size(); ++i) {
    std::uint64_t next = i + 1 < members.size() ? offsets[i + 1] : memoff;
    out += member_header(members[i].data.size(), next, prev, members[i].name);
    out += members[i].data;
    if (out.size() & 1) out.push_back('\0');
    prev = offsets[i];
  }
  // Member table: count[20], offsets[20] x n, names.
  std::string table = field(members.size(), 20);
  for (auto o : offsets) table += field(o, 20);
  for (const auto& m : members) table += m.name + '\0';
  out += member_header(table.size(), 0, prev, "");
  out += table;
  if (out.size() & 1) out.push_back('\0');
  auto symbol_table = [&](const std::vector<input_symbol>& syms, int width) -> std::uint64_t {
    if (syms.empty()) return 0;
    std::string t;
    put_be(t, syms.size(), width);
    for (const auto& s : syms) put_be(t, offsets[s.member], width);
    for (const auto& s : syms) t += s.name + '\0';
    std::uint64_t off = out.size();
    out += member_header(t.size(), 0, memoff, "");
    out += t;
    if (out.size() & 1) out.push_back('\0');
    return off;
  };
  const std::uint64_t gstoff = symbol_table(syms32, 4);
  const std::uint64_t gst64off = symbol_table(syms64, 8);
  std::string fixed = std::string("<bigaf>\n") + field(memoff, 20) + field(gstoff, 20) + field(gst64off, 20) +
                      field(members.empty() ? 0 : offsets.front(), 20) +
                      field(members.empty() ? 0 : offsets.back(), 20) + field(std::uint64_t{0}, 20);
  out.replace(0, 128, fixed);
  return out;
}

// ---------------------------------------------------------------------------
// COFF .lib with first and second linker members and a longnames member.
inline std::string coff_lib(const std::vector<input_member>& members, const std::vector<input_symbol>& syms) {
  // Names: >15 chars go to the longnames member ("/N").
  std::string longnames;
  std::vector<std::string> name_fields;
  for (const auto& m : members) {
    if (m.name.size() > 15) {
      name_fields.push_back("/" + std::to_string(longnames.size()));
      longnames += m.name + '\0';
    } else {
      name_fields.push_back(m.name + "/");
    }
  }
  auto padded = [](std::uint64_t n) { return n + (n & 1); };
  std::vector<std::string> sorted_names;
  std::string first_strings;
  for (const auto& s : syms) first_strings += s.name + '\0';
  const std::uint64_t first_size = 4 + 4 * syms.size() + first_strings.size();
  std::vector<std::size_t> order(syms.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return syms[a].name < syms[b].name; });
  std::string second_strings;
  for (auto i : order) second_strings += syms[i].name + '\0';
  const std::uint64_t second_size = 4 + 4 * members.size() + 4 + 2 * syms.size() + second_strings.size();
  std::uint64_t at = 8 + 60 + padded(first_size) + 60 + padded(second_size) + 60 + padded(longnames.size());
  std::vector<std::uint64_t> offsets;
  for (const auto& m : members) {
    offsets.push_back(at);
    at += 60 + padded(m.data.size());
  }
  std::string out = "!<arch>\n";
  out += gnu_header("/", first_size, 0);
  put_be(out, syms.size(), 4);
  for (const auto& s : syms) put_be(out, offsets[s.member], 4);
  out += first_strings;
  if (out.size() & 1) out.push_back('\n');
  out += gnu_header("/", second_size, 0);
  put_le(out, members.size(), 4);
  for (auto o : offsets) put_le(out, o, 4);
  put_le(out, syms.size(), 4);
  for (auto i : order) put_le(out, syms[i].member + 1, 2);
  out += second_strings;
  if (out.size() & 1) out.push_back('\n');
  out += gnu_header("//", longnames.size(), 0);
  out += longnames;
  if (out.size() & 1) out.push_back('\n');
  for (std::size_t i = 0; i < members.size(); ++i) {
    out += gnu_header(name_fields[i], members[i].data.size());
    out += members[i].data;
    if (out.size() & 1) out.push_back('\n');
  }
  return out;
}

// ---------------------------------------------------------------------------
// BSD archive with a ranlib table.
struct bsd_options {
  bool is64 = false;
  bool big_endian = false;
  bool sorted = false;       // "__.SYMDEF SORTED" with the entries sorted by name
  bool raw_name = false;     // table name in the 16-byte field instead of #1/N
};

inline std::string bsd(const std::vector<input_member>& members, const std::vector<input_symbol>& syms_in,
                       bsd_options opt = {}) {
  std::vector<input_symbol> syms = syms_in;
  if (opt.sorted)
    std::stable_sort(syms.begin(), syms.end(), [](const input_symbol& a, const input_symbol& b) { return a.name < b.name; });
  const int w = opt.is64 ? 8 : 4;
  auto put = [&](std::string& out, std::uint64_t v) {
    if (opt.big_endian)
      put_be(out, v, w);
    else
      put_le(out, v, w);
  };
  std::string table_name = opt.is64 ? "__.SYMDEF_64" : "__.SYMDEF";
  if (opt.sorted) table_name += " SORTED";
  std::string strtab;
  std::vector<std::uint64_t> strx;
  for (const auto& s : syms) {
    strx.push_back(strtab.size());
    strtab += s.name + '\0';
  }
  while (strtab.size() % w) strtab.push_back('\0');
  const std::uint64_t table_size = w + syms.size() * 2 * w + w + strtab.size();
  // The table's name: "#1/N" (name padded to a multiple of 4 with NULs) or the raw field.
  std::string table_name_data;
  std::string table_field;
  if (opt.raw_name) {
    table_field = table_name;
  } else {
    table_name_data = table_name;
    while (table_name_data.size() % 4) table_name_data.push_back('\0');
    table_field = "#1/" + std::to_string(table_name_data.size());
  }
  std::uint64_t at = 8 + 60 + table_name_data.size() + table_size;
  at += at & 1;
  std::vector<std::uint64_t> offsets;
  std::vector<std::string> name_data;
  for (const auto& m : members) {
    offsets.push_back(at);
    std::string nd = m.name;
    while (nd.size() % 4) nd.push_back('\0');
    name_data.push_back(nd);
    std::uint64_t len = 60 + nd.size() + m.data.size();
    at += len + (len & 1);
  }
  std::string out = "!<arch>\n";
  out += gnu_header(table_field, table_name_data.size() + table_size);
  out += table_name_data;
  put(out, syms.size() * 2 * w);
  for (std::size_t i = 0; i < syms.size(); ++i) {
    put(out, strx[i]);
    put(out, offsets[syms[i].member]);
  }
  put(out, strtab.size());
  out += strtab;
  if (out.size() & 1) out.push_back('\n');
  for (std::size_t i = 0; i < members.size(); ++i) {
    out += gnu_header("#1/" + std::to_string(name_data[i].size()), name_data[i].size() + members[i].data.size());
    out += name_data[i];
    out += members[i].data;
    if (out.size() & 1) out.push_back('\n');
  }
  return out;
}

}  // namespace linkscope_test::gen
