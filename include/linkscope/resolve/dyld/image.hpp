// linkscope/resolve/dyld/image.hpp — one file as the dyld emulator reads it
// (dyld_file: one Mach-O image, or the documents of a .tbd stub), and the
// cache of them shared by every root of a run (dyld_cache).
//
// A Mach-O file is read once through macho/linkage.hpp (the slice of the
// run's architecture, for a universal file): its install name and versions,
// its dylib commands, rpaths, imports and exports. A .tbd file is read
// through macho/tbd.hpp: each document is one image (the first is the
// library; the others are libraries it re-exports, "inlined"), whose
// dependencies are its reexported-libraries and whose exports are the names
// it lists for the run's architecture (macho::tbd::for_each_exported_name).
//
// Exports are asked one name at a time (`find`): the export trie is walked
// as dyld walks it (macho::find_export); the nlist exports of an old image
// and a stub's names go into a hash map when the file is read.
//
// The cache knows a file by the host path it was opened as and by its
// device+inode, as ld_so/image.hpp's object_cache does (and as dyld knows a
// loaded image by its file id): two paths of one file give one dyld_file.
// Files that cannot be read are cached too, so a path is tried once per run.
// Thread-safe as object_cache is: the lock is held only to find or insert; a
// file is read outside it and, when two threads read one file at once, the
// first insert wins (a dyld_file never changes once read).
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "linkscope/core/bytes.hpp"
#include "linkscope/core/config.hpp"
#include "linkscope/core/error.hpp"
#include "linkscope/core/mapped_file.hpp"
#include "linkscope/macho/exports.hpp"
#include "linkscope/macho/fat.hpp"
#include "linkscope/macho/file.hpp"
#include "linkscope/macho/linkage.hpp"
#include "linkscope/macho/tbd.hpp"
#include "linkscope/resolve/dyld/result.hpp"

namespace linkscope {
inline namespace v0 {
namespace resolve {
namespace detail {

// A dependency an image declares (a dylib command, or a tbd re-exported library).
struct dyld_dependency_decl {
  std::string_view install_name;
  macho::dylib_kind kind = macho::dylib_kind::load;
  std::uint32_t compatibility = 0;  // asked for; 0 when none
};

// What a lookup of one name in one image (its own exports only) found.
struct dyld_export_hit {
  bool weak = false;               // a weak definition
  bool reexport = false;           // trie re-export: look `import_name` up in dependency `ordinal`
  std::uint64_t ordinal = 0;
  std::string_view import_name;    // empty: the same name
};

struct dyld_image {
  dyld_image_kind kind = dyld_image_kind::missing;
  std::string_view install_name;
  std::uint32_t current_version = 0, compatibility_version = 0;
  std::uint32_t filetype = 0;
  bool is_dylib = false;
  bool two_level = true;
  bool weak_defines = false;
  bool applies = true;                 // tbd: the document lists the run's architecture
  std::uint32_t minos = 0, sdk = 0;    // Mach-O: of its first platform command
  std::vector<dyld_dependency_decl> dependencies;
  std::vector<std::string_view> lazy_dylibs;  // LC_LAZY_LOAD_DYLIB: neither loaded nor counted (see read_macho)
  std::vector<std::string_view> rpaths;
  std::vector<macho::import_entry> imports;
  bool has_trie = false;
  byte_view trie;
  std::unordered_map<std::string_view, bool> names;  // nlist or tbd exports -> weak

  // One name in this image's own exports (re-exported dylibs are the caller's business).
  result<std::optional<dyld_export_hit>> find(std::string_view name) const;
};

// One file: a Mach-O image (images.size() == 1) or a .tbd's documents.
struct dyld_file {
  std::shared_ptr<const mapped_file> mapped;
  std::vector<dyld_image> images;
  std::deque<std::string> storage;  // names built from a stub (objc)
  std::string error;                // why it cannot be used (empty: ok)
  const char* reason = "";          // a short static reason, for rejected candidates
  bool absent = false;              // no such file (any other failure is a reason to refuse a candidate)
  std::uint64_t device = 0, inode = 0;
  bool ok() const noexcept { return error.empty(); }
};

inline bool looks_like_tbd(byte_view bytes) noexcept {
  const std::string_view text = bytes.chars();
  std::size_t at = 0;
  while (at < text.size() && (text[at] == ' ' || text[at] == '\n' || text[at] == '\r' || text[at] == '\t')) ++at;
  return text.substr(at, 3) == "---";
}

void read_macho(dyld_file& out, std::uint32_t cputype);

void read_tbd(dyld_file& out, std::string_view arch);

}  // namespace detail

class dyld_cache {
 public:
  dyld_cache() = default;
  dyld_cache(const dyld_cache&) = delete;
  dyld_cache& operator=(const dyld_cache&) = delete;
  // Moving takes the files, not the lock (no thread may use either cache meanwhile).
  dyld_cache(dyld_cache&& other) noexcept;
  dyld_cache& operator=(dyld_cache&& other) noexcept;

  std::size_t files() const noexcept { return files_; }
  std::size_t hits() const noexcept { return hits_; }

  // The file at host path `file`, read for architecture (cputype, arch name).
  // A file that cannot be read, or is neither Mach-O nor .tbd, has ok() false.
  std::shared_ptr<const detail::dyld_file> open(const std::string& file, std::uint32_t cputype, std::string_view arch);

 private:
  std::unordered_map<std::string, std::shared_ptr<const detail::dyld_file>> by_path_;
  std::map<std::tuple<std::uint64_t, std::uint64_t, std::uint32_t>, std::shared_ptr<const detail::dyld_file>> by_file_;
  std::mutex lock_;
  std::size_t files_ = 0;
  std::size_t hits_ = 0;
};

#if LINKSCOPE_DEFINITIONS
namespace detail {
LINKSCOPE_FUNC auto dyld_image::find(std::string_view name) const -> result<std::optional<dyld_export_hit>> {
  using hit = std::optional<dyld_export_hit>;
  if (has_trie) {
    LINKSCOPE_TRY(e, macho::find_export(trie, name));
    if (!e) return hit();
    dyld_export_hit h;
    h.weak = e->weak_definition();
    if (e->reexport()) {
      h.reexport = true;
      h.ordinal = e->library_ordinal;
      h.import_name = e->import_name;
    }
    return hit(h);
  }
  auto it = names.find(name);
  if (it == names.end()) return hit();
  dyld_export_hit h;
  h.weak = it->second;
  return hit(h);
}

LINKSCOPE_FUNC void read_macho(dyld_file& out, std::uint32_t cputype) {
  auto l = macho::read_linkage_slice(out.mapped->bytes(), cputype);
  if (!l) {
    out.error = describe(l.error());
    out.reason = l.error().code == errc::not_found ? "wrong architecture" : "malformed Mach-O";
    return;
  }
  dyld_image img;
  img.kind = dyld_image_kind::macho;
  img.install_name = l->install_name;
  img.current_version = l->current_version;
  img.compatibility_version = l->compatibility_version;
  img.filetype = l->filetype;
  img.is_dylib = l->is_dylib();
  img.two_level = l->two_level;
  img.weak_defines = l->weak_defines;
  img.minos = l->minos;
  img.sdk = l->sdk;
  img.dependencies.reserve(l->dylibs.size());
  // dyld neither loads an LC_LAZY_LOAD_DYLIB at launch nor counts it among
  // the dependents a library ordinal names: dyld-1378 mach_o/UnsafeHeader.cpp,
  // UnsafeHeader::forEachLinkedDylib (and dyld2's ImageLoaderMachO::
  // doGetDependentLibraries, dyld-360) take LC_LOAD_DYLIB, LC_LOAD_WEAK_DYLIB,
  // LC_REEXPORT_DYLIB and LC_LOAD_UPWARD_DYLIB only.
  for (const auto& d : l->dylibs) {
    if (d.kind == macho::dylib_kind::lazy)
      img.lazy_dylibs.push_back(d.install_name);
    else
      img.dependencies.push_back({d.install_name, d.kind, d.compatibility});
  }
  img.rpaths = std::move(l->rpaths);
  img.imports = std::move(l->imports);
  img.has_trie = l->has_trie;
  img.trie = l->trie;
  img.names.reserve(l->nlist_exports.size());
  for (const auto& e : l->nlist_exports) img.names.emplace(e.name, e.weak);
  out.images.push_back(std::move(img));
}

LINKSCOPE_FUNC void read_tbd(dyld_file& out, std::string_view arch) {
  auto docs = macho::tbd::read(out.mapped->bytes());
  if (!docs) {
    out.error = describe(docs.error());
    out.reason = "malformed .tbd";
    return;
  }
  for (const auto& d : *docs) {
    dyld_image img;
    img.kind = dyld_image_kind::tbd;
    img.install_name = d.install_name;
    img.current_version = macho::tbd::packed_version_of(d.current_version).value_or(0);
    img.compatibility_version = macho::tbd::packed_version_of(d.compatibility_version).value_or(0);
    img.filetype = macho::MH_DYLIB;
    img.is_dylib = true;
    img.applies = macho::tbd::applies_to(d.targets, arch);
    for (std::string_view lib : d.reexported_libraries) img.dependencies.push_back({lib, macho::dylib_kind::reexport, 0});
    macho::tbd::for_each_exported_name(d, arch, [&](std::string_view name, bool weak) {
      if (img.names.find(name) != img.names.end()) return;
      // A name built in the reader's buffer needs storage of its own.
      const std::string_view text = out.mapped->bytes().chars();
      const bool in_text = std::greater_equal<const char*>()(name.data(), text.data()) &&
                           std::less<const char*>()(name.data(), text.data() + text.size());
      if (!in_text) name = out.storage.emplace_back(name);
      img.names.emplace(name, weak);
      img.weak_defines = img.weak_defines || weak;
    });
    out.images.push_back(std::move(img));
  }
}
}  // namespace detail
#endif  // LINKSCOPE_DEFINITIONS

#if LINKSCOPE_DEFINITIONS
LINKSCOPE_FUNC dyld_cache::dyld_cache(dyld_cache&& other) noexcept
    : by_path_(std::move(other.by_path_)), by_file_(std::move(other.by_file_)), files_(other.files_),
      hits_(other.hits_) {}

LINKSCOPE_FUNC dyld_cache& dyld_cache::operator=(dyld_cache&& other) noexcept {
  by_path_ = std::move(other.by_path_);
  by_file_ = std::move(other.by_file_);
  files_ = other.files_;
  hits_ = other.hits_;
  return *this;
}

LINKSCOPE_FUNC std::shared_ptr<const detail::dyld_file> dyld_cache::open(const std::string& file, std::uint32_t cputype, std::string_view arch) {
  using file_ptr = std::shared_ptr<const detail::dyld_file>;
  std::string key = file;
  key.push_back('\0');
  key.append(std::to_string(cputype));
  {
    std::lock_guard<std::mutex> hold(lock_);
    auto it = by_path_.find(key);
    if (it != by_path_.end()) {
      ++hits_;
      return it->second;
    }
  }
  auto mapped = mapped_file::open(file);
  if (!mapped) {
    auto failed = std::make_shared<detail::dyld_file>();
    failed->error = std::string("cannot read: ") + mapped.error().message;
    failed->absent = mapped.error().code == errc::not_found;
    // A symlink loop, a folder, no permission: dyld's "tried: ... (reason)".
    failed->reason = failed->absent ? "no such file" : mapped.error().message;
    std::lock_guard<std::mutex> hold(lock_);
    return by_path_.emplace(std::move(key), file_ptr(std::move(failed))).first->second;
  }
  const std::tuple<std::uint64_t, std::uint64_t, std::uint32_t> id{mapped->device(), mapped->inode(), cputype};
  {
    std::lock_guard<std::mutex> hold(lock_);
    auto same = by_file_.find(id);
    if (same != by_file_.end()) {
      ++hits_;
      return by_path_.emplace(std::move(key), same->second).first->second;
    }
  }
  auto f = std::make_shared<detail::dyld_file>();
  f->device = mapped->device();
  f->inode = mapped->inode();
  f->mapped = std::make_shared<const mapped_file>(std::move(*mapped));
  const byte_view bytes = f->mapped->bytes();
  if (macho::is_macho(bytes) || macho::is_fat(bytes))
    detail::read_macho(*f, cputype);
  else if (detail::looks_like_tbd(bytes))
    detail::read_tbd(*f, arch);
  else {
    f->error = "not a Mach-O file or a .tbd stub";
    f->reason = "not Mach-O";
  }
  std::lock_guard<std::mutex> hold(lock_);
  auto [same, fresh] = by_file_.emplace(id, file_ptr(std::move(f)));
  if (fresh) ++files_;
  else ++hits_;  // another thread read it meanwhile: keep the first
  return by_path_.emplace(std::move(key), same->second).first->second;
}
#endif  // LINKSCOPE_DEFINITIONS

}  // namespace resolve
}  // namespace v0
}  // namespace linkscope
