// linkscope/resolve/duplicates.hpp — the same symbol defined in several places.
//
// Over any mix of shared libraries, objects and archives, list the names with
// a *strong* definition (GLOBAL or GNU_UNIQUE, defined, not common, and for a
// DSO exported with default or protected visibility) in more than one file or
// archive member. Typical find: a library vendored into an archive (kineto's
// libfmt.a) next to the distribution's own shared copy (libfmt.so.9).
//
// For each name the report says:
//   - which definition ld.so uses at run time: the first DSO in the global
//     scope of the closure (breadth-first load order of the first DSO or
//     executable given, computed by resolve/dynamic.hpp); DSOs outside that
//     closure follow in command-line order and are marked so;
//   - which definition a link would take: an object file's definition always
//     wins (objects are always loaded); otherwise the first file on the
//     command line that defines it (the order a linker searches);
//   - whether versions differ, and whether sizes differ — for data (OBJECT,
//     TLS) a size mismatch is an ABI break: a copy relocation or a direct
//     access sized for one copy reads or writes past the other.
#pragma once

#include <algorithm>
#include <cstddef>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "linkscope/core/config.hpp"
#include "linkscope/core/error.hpp"
#include "linkscope/core/mapped_file.hpp"
#include "linkscope/elf/source.hpp"
#include "linkscope/resolve/dynamic.hpp"
#include "linkscope/resolve/objects.hpp"

namespace linkscope {
inline namespace v0 {
namespace resolve {

struct definition_site {
  std::string file;          // "lib.so", "obj.o" or "lib.a(member.o)"
  std::string version;       // empty when unversioned
  bool default_version = false;  // `version` is the default one (name@@VER)
  std::string member_name;   // the bare member name when from_archive ("member.o"), else ""
  u64 size = 0;
  symbol_kind kind = symbol_kind::notype;
  object_kind from = object_kind::other;  // relocatable (object or archive member), shared, executable
  bool from_archive = false;
  std::size_t argument = 0;  // position of its file on the command line
  std::size_t scope_position = ~std::size_t{0};  // position in ld.so's global scope, or ~0
};

struct duplicate_symbol {
  std::string name;
  std::vector<definition_site> sites;
  std::size_t runtime_winner = ~std::size_t{0};  // index into sites (DSOs only), ~0 if none
  std::size_t link_winner = 0;                   // index into sites
  bool versions_differ = false;
  bool sizes_differ = false;
  bool abi_break = false;  // a data symbol whose sizes differ
};

struct duplicates_options {
  std::string closure_root;  // DSO/executable whose closure gives the run-time order; "" = first DSO given
  dynamic_options closure;
  ar::thin_options thin;
};

struct duplicates_report {
  std::vector<duplicate_symbol> duplicates;  // sorted by name
  std::vector<std::string> closure_order;    // ld.so global scope used for run-time winners; a file
                                             // also given as an argument is spelled as given there
  std::vector<skipped_member> skipped;
};

namespace detail {
inline bool strong_definition(const symbol& s, object_kind from) noexcept {
  if (!s.defined || s.kind == symbol_kind::section || s.kind == symbol_kind::file || s.kind == symbol_kind::common)
    return false;
  if (s.bind != ::linkscope::binding::global && s.bind != ::linkscope::binding::unique) return false;
  if (elf::is_version_definition(s)) return false;  // GLIBC_2.15 in libc and libm: a version, not a definition
  if (from != object_kind::relocatable && s.vis != visibility::default_ && s.vis != visibility::protected_) return false;
  return true;
}
}  // namespace detail

// (Declared here, defined below: compiled once in src/ in compiled mode.)
// A failure names the input: the argument as given and, for an archive
// member, the member (diagnostic::where() is "lib.a(member.o)").
result<duplicates_report, diagnostic> find_duplicates(const std::vector<std::string>& paths,
                                                      const duplicates_options& options = {});

#if LINKSCOPE_DEFINITIONS
LINKSCOPE_FUNC result<duplicates_report, diagnostic> find_duplicates(const std::vector<std::string>& paths,
                                                                     const duplicates_options& options) {
  duplicates_report report;
  std::unordered_map<std::string, std::vector<definition_site>> sites;
  // How each argument that is a plain ELF file (not an archive) links.
  std::vector<object_kind> plain_kind(paths.size(), object_kind::other);

  for (std::size_t argument = 0; argument < paths.size(); ++argument) {
    const std::string& path = paths[argument];
    auto walked = visit_elf_objects(
        path,
        [&](const elf_object& object) {
          const bool from_archive = !object.member_name.empty();
          if (!from_archive) plain_kind[argument] = object.kind;
          std::string display(object.display_name);
          return for_each_object_symbol(object, [&](const symbol& s) {
            if (!detail::strong_definition(s, object.kind)) return;
            auto& list = sites[std::string(s.name)];
            // One definition per file: foo@V1 and foo@@V2 in one DSO are not duplicates.
            for (definition_site& site : list)
              if (site.file == display) {
                if (s.ver == version_kind::default_) {
                  site.version = std::string(s.version);
                  site.default_version = true;
                }
                return;
              }
            definition_site site;
            site.file = display;
            site.version = std::string(s.version);
            site.default_version = s.ver == version_kind::default_;
            site.member_name = std::string(object.member_name);
            site.size = s.size;
            site.kind = s.kind;
            site.from = object.kind;
            site.from_archive = from_archive;
            site.argument = argument;
            list.push_back(std::move(site));
          });
        },
        &report.skipped, options.thin);
    if (!walked) return walked.error();
  }

  // Run-time order: the global scope of the closure of the root DSO/executable.
  const auto loadable = [](object_kind k) { return k == object_kind::shared || k == object_kind::executable; };
  std::string root = options.closure_root;
  for (std::size_t i = 0; root.empty() && i < paths.size(); ++i)
    if (loadable(plain_kind[i])) root = paths[i];
  constexpr std::size_t not_in_scope = ~std::size_t{0};
  std::vector<std::size_t> scope_of_argument(paths.size(), not_in_scope);
  if (!root.empty()) {
    dynamic_options dyn = options.closure;
    dyn.bindings = false;
    const std::string program = root.find('/') == std::string::npos ? "./" + root : root;
    if (auto link = link_dynamic(program, dyn)) {
      std::vector<std::pair<u64, u64>> identity;  // (device, inode) per scope position
      for (std::uint32_t index : link->search_list) {
        const loaded_object& object = link->objects[index];
        report.closure_order.push_back(object.path.empty() ? object.name : object.path);
        auto file = object.found() ? mapped_file::open(object.file) : result<mapped_file>(error{errc::not_found, no_offset, ""});
        identity.emplace_back(file ? file->device() : 0, file ? file->inode() : 0);
      }
      std::vector<char> respelled(identity.size(), 0);
      for (std::size_t argument = 0; argument < paths.size(); ++argument) {
        if (!loadable(plain_kind[argument])) continue;
        auto file = mapped_file::open(paths[argument]);
        if (!file) continue;
        for (std::size_t i = 0; i < identity.size(); ++i)
          if (identity[i].first == file->device() && identity[i].second == file->inode()) {
            scope_of_argument[argument] = i;
            // One file, one spelling: the argument's, as the definitions give it
            // (ld.so spells the root ./liba.so and a found library by its search path).
            if (!respelled[i]) report.closure_order[i] = paths[argument];
            respelled[i] = 1;
            break;
          }
      }
    }
  }

  for (auto& [name, list] : sites) {
    if (list.size() < 2) continue;
    duplicate_symbol dup;
    dup.name = name;
    dup.sites = std::move(list);
    for (definition_site& site : dup.sites)
      if (site.from != object_kind::relocatable) site.scope_position = scope_of_argument[site.argument];
    // Run time: lowest scope position among DSOs; then command-line order for DSOs outside the closure.
    for (std::size_t i = 0; i < dup.sites.size(); ++i) {
      const definition_site& site = dup.sites[i];
      if (site.from == object_kind::relocatable) continue;
      if (dup.runtime_winner == ~std::size_t{0}) {
        dup.runtime_winner = i;
        continue;
      }
      const definition_site& best = dup.sites[dup.runtime_winner];
      if (site.scope_position < best.scope_position ||
          (site.scope_position == best.scope_position && site.argument < best.argument))
        dup.runtime_winner = i;
    }
    // Link time: a plain object file first, else the first on the command line.
    dup.link_winner = 0;
    for (std::size_t i = 0; i < dup.sites.size(); ++i) {
      const auto rank = [](const definition_site& s) { return s.from == object_kind::relocatable && !s.from_archive ? 0 : 1; };
      const definition_site& best = dup.sites[dup.link_winner];
      if (rank(dup.sites[i]) < rank(best) || (rank(dup.sites[i]) == rank(best) && dup.sites[i].argument < best.argument))
        dup.link_winner = i;
    }
    for (const definition_site& site : dup.sites) {
      if (site.version != dup.sites[0].version) dup.versions_differ = true;
      if (site.size != dup.sites[0].size) dup.sizes_differ = true;
    }
    dup.abi_break = dup.sizes_differ && std::any_of(dup.sites.begin(), dup.sites.end(), [](const definition_site& s) {
                      return s.kind == symbol_kind::object || s.kind == symbol_kind::tls;
                    });
    report.duplicates.push_back(std::move(dup));
  }
  std::sort(report.duplicates.begin(), report.duplicates.end(),
            [](const duplicate_symbol& a, const duplicate_symbol& b) { return a.name < b.name; });
  return report;
}
#endif  // LINKSCOPE_DEFINITIONS

}  // namespace resolve
}  // namespace v0
}  // namespace linkscope
