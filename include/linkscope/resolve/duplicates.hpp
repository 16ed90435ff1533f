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
//
// Mach-O dylibs and PE DLLs (and archives of Mach-O or COFF objects) take
// part as well: a dylib or bundle defines what its export trie lists (an
// executable, whose trie lists its every global, only imports), a DLL what its
// export directory names (forwarders excluded), an object its external
// definitions (import thunks excluded). Neither platform has one run-time
// winner: in the two-level namespace each import names its dylib, and on
// Windows each import names its DLL, so a duplicate interposes only for a
// flat-namespace image. The report gives instead, per duplicate, which copy
// each importer binds to: every image given (and the --closure root) is
// loaded by its platform's emulator (resolve/dyld.hpp, resolve/pe_load.hpp)
// and each binding of the name into one of the given files is listed.
#pragma once

#include <algorithm>
#include <cstddef>
#include <deque>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "linkscope/core/config.hpp"
#include "linkscope/core/error.hpp"
#include "linkscope/core/mapped_file.hpp"
#include "linkscope/elf/source.hpp"
#include "linkscope/resolve/definitions.hpp"
#include "linkscope/resolve/dyld.hpp"
#include "linkscope/resolve/dynamic.hpp"
#include "linkscope/resolve/file_format.hpp"
#include "linkscope/resolve/foreign_objects.hpp"
#include "linkscope/resolve/objects.hpp"
#include "linkscope/resolve/pe_load.hpp"

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

// Mach-O and PE: one image's imports of the name bind to sites[site].
struct importer_binding {
  std::string importer;  // the importing image, as its loader read it (the argument's spelling when given)
  std::size_t site = 0;  // index into duplicate_symbol::sites
  bool flat = false;     // Mach-O: found by a flat-namespace lookup
};

struct duplicate_symbol {
  std::string name;
  std::vector<definition_site> sites;
  std::vector<importer_binding> importers;       // Mach-O and PE (see the top of this file)
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
  std::string arch;          // Mach-O: the slice of universal files ("" = the first)
  dyld_options dyld;         // Mach-O: how the importers' closures are found
  winload_options windows;   // PE: likewise
};

struct duplicates_report {
  std::vector<duplicate_symbol> duplicates;  // sorted by name
  std::vector<std::string> closure_order;    // ld.so global scope used for run-time winners; a file
                                             // also given as an argument is spelled as given there
  std::vector<skipped_member> skipped;
};

// (Declared here, defined below: compiled once in src/ in compiled mode.)
// A failure names the input: the argument as given and, for an archive
// member, the member (diagnostic::where() is "lib.a(member.o)").
result<duplicates_report, diagnostic> find_duplicates(const std::vector<std::string>& paths,
                                                      const duplicates_options& options = {});

#if LINKSCOPE_DEFINITIONS
namespace detail {

// What a Mach-O or PE file defines, when it is a loadable image (a dylib,
// bundle, executable, DLL or EXE); else the cputype its objects are read for.
struct foreign_image {
  bool loadable = false;
  object_kind kind = object_kind::shared;
  u32 cputype = 0;
  std::vector<symbol> definitions;  // names view `names`
  std::deque<std::string> names;
};

LINKSCOPE_FUNC result<foreign_image, diagnostic> foreign_image_definitions(const std::string& path, const std::string& arch) {
  foreign_image out;
  auto file = mapped_file::open(path);
  if (!file) return diagnostic(file.error(), path);
  const byte_view bytes = file->bytes();
  auto define = [&](std::string_view name, symbol_kind kind) {
    symbol s;
    s.name = out.names.emplace_back(name);
    s.kind = kind;
    out.definitions.push_back(s);
  };
  if (pe::image::is_pe(bytes)) {
    auto image = pe::image::parse(bytes);
    if (!image) return diagnostic(image.error(), path);
    out.loadable = true;
    out.kind = image->is_dll() ? object_kind::shared : object_kind::executable;
    auto exports = image->exports();
    if (!exports) return diagnostic(exports.error(), path);
    std::unordered_map<std::string_view, symbol_kind> kinds;  // DATA exports are objects
    auto typed = image->for_each_symbol([&](const symbol& s) {
      if (s.defined) kinds.emplace(s.name, s.kind);
    });
    (void)typed;
    for (const auto& e : *exports)
      if (!e.name.empty() && e.forwarder.empty())
        define(e.name, kinds.count(e.name) != 0 ? kinds[e.name] : symbol_kind::func);
    return out;
  }
  if (!macho::is_macho(bytes) && !macho::is_fat(bytes)) return out;  // an archive or a COFF object
  auto image = macho_slice(bytes, arch);
  if (!image) return diagnostic(image.error(), path);
  auto l = macho::read_linkage(*image);
  if (!l) return diagnostic(l.error(), path);
  out.cputype = l->cputype;
  if (l->filetype == macho::MH_OBJECT) return out;
  out.loadable = true;
  out.kind = l->is_executable() ? object_kind::executable : object_kind::shared;
  // A Mach-O executable's trie lists every global it has (_main,
  // __mh_execute_header): it is an importer here, not a copy of a library.
  if (l->is_executable()) return out;
  std::unordered_map<std::string_view, symbol_kind> kinds;  // from the nlist, when it has the name
  auto typed = macho::symbols_source(*image).for_each_symbol([&](const symbol& s) {
    if (s.defined && s.is_global()) kinds.emplace(s.name, s.kind);
  });
  (void)typed;
  std::vector<std::string> names;
  macho_exports(*image, true, names);
  for (const std::string& n : names) define(n, kinds.count(n) != 0 ? kinds[n] : symbol_kind::func);
  return out;
}

// Which copy each importer binds to (Mach-O, PE): load every image given, and
// the closure root, with its platform's emulator.
LINKSCOPE_FUNC void bind_importers(const std::vector<std::string>& paths, const std::vector<char>& foreign_image,
                                   const duplicates_options& options, duplicates_report& report) {
  std::vector<std::string> roots;
  for (std::size_t i = 0; i < paths.size(); ++i)
    if (foreign_image[i]) roots.push_back(paths[i]);
  if (!options.closure_root.empty() && sniff_file(options.closure_root) != file_format::elf)
    roots.push_back(options.closure_root);
  if (roots.empty() || report.duplicates.empty()) return;
  // The given files by identity, so that a loader's spelling finds them;
  // each path is opened once, however many bindings name it.
  std::unordered_map<std::string, std::pair<u64, u64>> identities;
  auto identity = [&](const std::string& path) -> std::pair<u64, u64> {
    auto [it, added] = identities.try_emplace(path, 0, 0);
    if (added)
      if (auto file = mapped_file::open(path)) it->second = {file->device(), file->inode()};
    return it->second;
  };
  std::vector<std::pair<u64, u64>> given;
  for (const std::string& p : paths) given.push_back(identity(p));
  std::unordered_map<std::string, duplicate_symbol*> by_name;
  for (duplicate_symbol& d : report.duplicates) by_name.emplace(d.name, &d);
  auto record = [&](const std::string& importer_file, const std::string& target_file, std::string_view symbol_name, bool flat) {
    auto d = by_name.find(std::string(symbol_name));
    if (d == by_name.end()) return;
    const auto target = identity(target_file);
    std::string importer = importer_file;
    const auto from = identity(importer_file);
    for (std::size_t i = 0; i < paths.size(); ++i)
      if (given[i] == from && from.second != 0) importer = paths[i];
    for (std::size_t s = 0; s < d->second->sites.size(); ++s) {
      const definition_site& site = d->second->sites[s];
      if (site.from == object_kind::relocatable || given[site.argument] != target || target.second == 0) continue;
      for (const importer_binding& b : d->second->importers)
        if (b.importer == importer && b.site == s) return;
      d->second->importers.push_back({importer, s, flat});
      return;
    }
  };
  for (const std::string& root : roots) {
    const file_format format = sniff_file(root);
    if (format == file_format::pe) {
      auto link = load_windows(root, options.windows);
      if (!link) continue;  // an importer that cannot be loaded binds nothing we can see
      const auto& objects = link->link.objects;
      for (const auto& b : link->link.bindings)
        if (b.from < objects.size() && b.to < objects.size())
          record(objects[b.from].file, objects[b.to].file, b.symbol, false);
    } else {
      dyld_options dyld = options.dyld;
      dyld.arch = options.arch;
      dyld.bindings = true;
      auto link = link_dyld(root, dyld);
      if (!link) continue;
      for (const auto& b : link->bindings)
        if (b.from < link->objects.size() && b.to < link->objects.size())
          record(link->objects[b.from].file, link->objects[b.to].file, b.symbol, b.flat);
    }
  }
  for (duplicate_symbol& d : report.duplicates)
    std::sort(d.importers.begin(), d.importers.end(), [](const importer_binding& a, const importer_binding& b) {
      return a.importer != b.importer ? a.importer < b.importer : a.site < b.site;
    });
}

}  // namespace detail

LINKSCOPE_FUNC result<duplicates_report, diagnostic> find_duplicates(const std::vector<std::string>& paths,
                                                                     const duplicates_options& options) {
  duplicates_report report;
  std::unordered_map<std::string, std::vector<definition_site>> sites;
  // How each argument that is a plain ELF file (not an archive) links.
  std::vector<object_kind> plain_kind(paths.size(), object_kind::other);

  // One definition per file and name (foo@V1 and foo@@V2 in one DSO are not duplicates).
  auto add_site = [&](const symbol& s, std::string display, std::string_view member, object_kind from, bool from_archive,
                      std::size_t argument) {
    auto& list = sites[std::string(s.name)];
    for (definition_site& site : list)
      if (site.file == display) {
        if (s.ver == version_kind::default_) {
          site.version = std::string(s.version);
          site.default_version = true;
        }
        return;
      }
    definition_site site;
    site.file = std::move(display);
    site.version = std::string(s.version);
    site.default_version = s.ver == version_kind::default_;
    site.member_name = std::string(member);
    site.size = s.size;
    site.kind = s.kind;
    site.from = from;
    site.from_archive = from_archive;
    site.argument = argument;
    list.push_back(std::move(site));
  };
  std::vector<char> foreign_image(paths.size(), 0);  // a Mach-O or PE image given
  for (std::size_t argument = 0; argument < paths.size(); ++argument) {
    const std::string& path = paths[argument];
    if (is_foreign_input(path)) {
      auto image = detail::foreign_image_definitions(path, options.arch);
      if (!image) return image.error();
      if (image->loadable) {
        foreign_image[argument] = 1;
        plain_kind[argument] = image->kind;
        for (const symbol& s : image->definitions) add_site(s, path, {}, image->kind, false, argument);
        continue;
      }
      auto walked = for_each_foreign_object(
          path, image->cputype,
          [&](std::string_view name, byte_view object) {
            const bool from_archive = name != path;
            const std::string display = from_archive ? path + "(" + std::string(name) + ")" : path;
            return for_each_foreign_symbol(object, [&](const symbol& s) {
              if (!detail::strong_definition(s, object_kind::relocatable) || import_thunk_name(s.name)) return;
              add_site(s, display, from_archive ? name : std::string_view(), object_kind::relocatable, from_archive,
                       argument);
            });
          },
          &report.skipped);
      if (!walked) return walked.error();
      continue;
    }
    auto walked = visit_elf_objects(
        path,
        [&](const elf_object& object) {
          const bool from_archive = !object.member_name.empty();
          if (!from_archive) plain_kind[argument] = object.kind;
          return for_each_object_symbol(object, [&](const symbol& s) {
            if (!detail::strong_definition(s, object.kind)) return;
            add_site(s, std::string(object.display_name), object.member_name, object.kind, from_archive, argument);
          });
        },
        &report.skipped, options.thin);
    if (!walked) return walked.error();
  }

  // Run-time order: the global scope of the closure of the root DSO/executable.
  const auto loadable = [](object_kind k) { return k == object_kind::shared || k == object_kind::executable; };
  std::string root = options.closure_root;
  for (std::size_t i = 0; root.empty() && i < paths.size(); ++i)
    if (loadable(plain_kind[i]) && !foreign_image[i]) root = paths[i];
  if (!root.empty() && sniff_file(root) != file_format::elf) root.clear();  // a Mach-O/PE root: importers below
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
        if (!loadable(plain_kind[argument]) || foreign_image[argument]) continue;
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
    // Run time: lowest scope position among DSOs; then command-line order for
    // DSOs outside the closure. Mach-O and PE images have no such winner.
    for (std::size_t i = 0; i < dup.sites.size(); ++i) {
      const definition_site& site = dup.sites[i];
      if (site.from == object_kind::relocatable || foreign_image[site.argument]) continue;
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
  detail::bind_importers(paths, foreign_image, options, report);
  return report;
}
#endif  // LINKSCOPE_DEFINITIONS

}  // namespace resolve
}  // namespace v0
}  // namespace linkscope
