// linkscope/resolve/static_report.hpp — what a static link emulation answers
// (resolve/static.hpp, report phase): the files that took part, why each
// archive member was extracted, the symbols left undefined, the duplicate
// strong definitions and the members never needed; and the two texts the real
// linkers print for it: ld.lld's --why-extract TSV and the "Archive member
// included" section of GNU ld's -Map.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "linkscope/ar/archive.hpp"
#include "linkscope/core/mapped_file.hpp"

namespace linkscope {
inline namespace v0 {
namespace resolve {

enum class link_semantics : std::uint8_t { lld, bfd };

constexpr const char* to_string(link_semantics s) noexcept { return s == link_semantics::lld ? "lld" : "bfd"; }

struct static_options {
  link_semantics semantics = link_semantics::lld;
  ar::thin_options thin{};  // which thin-archive member paths may be opened
  // Called as the link goes, with the inputs read so far and their number
  // (in order of `done`, once per input; a group's inputs count when the
  // group is done with). Empty: nothing is called.
  std::function<void(std::size_t done, std::size_t total)> progress{};
};

using file_id = std::uint32_t;
inline constexpr file_id no_file = ~file_id{0};

enum class file_role : std::uint8_t { object, member, shared, archive };

constexpr const char* to_string(file_role r) noexcept {
  switch (r) {
    case file_role::object: return "object";
    case file_role::member: return "member";
    case file_role::shared: return "shared";
    case file_role::archive: return "archive";
  }
  return "?";
}

// A file that took part in the link.
struct link_file {
  std::string name;          // as lld prints it: "x.o", "/p/libx.so", "lib.a(m.o)"
  std::string bfd_name;      // as GNU ld prints it (thin members: the member's path)
  std::uint32_t input = 0;   // index into link_line::inputs
  std::uint64_t member_offset = 0;  // member header offset (role member)
  std::uint32_t archive = ~0u;      // file id of the archive (role member)
  std::uint32_t reason = ~0u;       // index into static_link_result::extractions
  file_role role = file_role::object;
  bool whole_archive = false;       // member loaded by --whole-archive
};

// Why a member was loaded.
struct extraction {
  file_id member = no_file;
  file_id reference = no_file;   // the referencing file, or no_file
  std::string reference_label;   // when no_file: "<internal>", "--entry", "--whole-archive", ""
  std::string_view symbol;
};

struct undefined_symbol {
  std::string_view name;
  file_id first_reference = no_file;
};

struct duplicate_definition {
  std::string_view name;
  file_id first = no_file;
  file_id second = no_file;
};

struct static_link_result {
  link_semantics semantics = link_semantics::lld;
  std::vector<link_file> files;
  std::vector<extraction> extractions;       // lld: --why-extract order; bfd: load order
  std::vector<undefined_symbol> undefined;   // strong, referenced by a regular object
  std::vector<duplicate_definition> duplicates;
  std::vector<file_id> unused_members;       // archive members never loaded (file ids of role member)
  std::size_t symbols_resolved = 0;          // symbol resolutions performed (for throughput figures)
  std::size_t archives = 0;

  const std::string& reference_name(const extraction& e) const {
    return e.reference == no_file ? e.reference_label : files[e.reference].name;
  }

  // ld.lld --why-extract text (with --no-demangle).
  std::string why_extract_tsv() const {
    std::string out = "reference\textracted\tsymbol\n";
    for (const extraction& e : extractions) {
      if (e.reference == no_file && e.reference_label == "--whole-archive") continue;
      out.append(reference_name(e)).push_back('\t');
      out.append(files[e.member].name).push_back('\t');
      out.append(e.symbol).push_back('\n');
    }
    return out;
  }

  // GNU ld -Map "Archive member included ..." section (names not demangled).
  std::string map_includes() const {
    std::string out;
    if (extractions.empty()) return out;
    out = "Archive member included to satisfy reference by file (symbol)\n\n";
    for (const extraction& e : extractions) {
      const std::string& member = files[e.member].bfd_name;
      out.append(member);
      std::size_t len = member.size();
      if (len >= 29) {
        out.push_back('\n');
        len = 0;
      }
      while (len < 30) {
        out.push_back(' ');
        ++len;
      }
      if (e.reference != no_file) out.append(files[e.reference].bfd_name).push_back(' ');
      out.push_back('(');
      out.append(e.symbol);
      out.append(")\n");
    }
    return out;
  }

  // The file ids from `member` back to a file given on the command line (or
  // to a reference without a file: -u, --entry ...). The first element is
  // `member`.
  std::vector<file_id> chain(file_id member) const {
    std::vector<file_id> out;
    file_id at = member;
    while (at != no_file && out.size() <= files.size()) {
      out.push_back(at);
      const link_file& f = files[at];
      if (f.reason == ~0u) break;
      at = extractions[f.reason].reference;
    }
    return out;
  }

  // Find a file by its printed name ("lib.a(m.o)"), or no_file.
  file_id find_file(std::string_view name) const {
    for (file_id i = 0; i < files.size(); ++i)
      if (files[i].name == name || files[i].bfd_name == name) return i;
    return no_file;
  }

  // Storage for the mapped inputs the names point into, and for the names
  // the linker makes up (--wrap's __wrap_X / __real_X).
  std::shared_ptr<std::deque<mapped_file>> storage;
  std::shared_ptr<std::deque<std::string>> made_names;
};

}  // namespace resolve
}  // namespace v0
}  // namespace linkscope
