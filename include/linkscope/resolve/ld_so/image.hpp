// linkscope/resolve/ld_so/image.hpp — one object as the ld.so emulator reads
// it (object_image), and the cache of them shared by every root of a run
// (object_cache).
//
// An object_image is what ld.so takes from a file, read once through elf/
// and never changed afterwards: the ELF views (elf::file, elf::dynamic_info),
// .dynsym as ld.so indexes it (elf::read_dynsym_from_dynamic: DT_SYMTAB, the
// hash tables' count, the SHT_DYNSYM rule), .dynstr, the version tables as
// dl-version.c reads them (elf::version_tables::read_dynamic), projected to
// ld.so's l_versions, the DT_NEEDED/SONAME/RPATH/RUNPATH strings, PT_INTERP
// and the relocation classes of its machine. A malformed part becomes a
// warning and the object keeps what could be read.
//
// Loader cache API — object_cache: a run that links many roots (a package
// check: every executable and DSO of a prefix) passes one object_cache to
// link_dynamic(program, options, cache) for every root. Each file is then
// mapped, parsed and pre-faulted once per run, however many closures it
// joins; a file is known by the host path it was opened as and by its
// device+inode (two paths of one file give one image). Results keep the
// mappings they point into alive (dynamic_link::files holds shared
// pointers), so a result may outlive the cache. Thread-safe: roots may be
// linked on several threads against one cache (resolve/check.hpp's -j). A
// lookup holds a lock only to find or insert (a hit: the lock of one of 16
// shards of names); a file is mapped and parsed outside it, and when two
// threads parse one file at once, the first insert wins and the other copy
// is dropped (images never change, so either is the same). `files()`
// counts the distinct files parsed, `hits()` the opens answered from the
// cache.
//
// Memory, exactly: a run that knows which files each root loads says so
// with expect_use(files) per root, and end_use(files) once the root is
// linked; the cache then lets go of a file (its mapping and its image) as
// soon as no pending root needs it, so it holds only what the roots in
// flight and those still to come share. resolve/check.hpp learns the files
// from a first pass of closure-only links: set_closure_only(true) gives
// images that keep just what the load phase reads (the dynamic section's
// strings, PT_INTERP) and no mapping, and share_lookups_with() lets that
// pass leave its file system answers (search_path.hpp's search_probes) and
// its ld.so.cache to the real one. `released()` and `peak_images()` say
// what it let go and the most it held.
// As a backstop, `set_limit(bytes)` bounds the mappings the cache keeps.
// When the files it holds come to more than that, it lets them all go (a
// result or a link in progress keeps what it uses alive) and fills again
// from there; a file parsed again after that does not count twice in
// `files()`. `flushes()` says how often. No limit by default.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>
#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "linkscope/core/bytes.hpp"
#include "linkscope/core/config.hpp"
#include "linkscope/core/error.hpp"
#include "linkscope/core/hash.hpp"
#include "linkscope/core/mapped_file.hpp"
#include "linkscope/elf/dynamic.hpp"
#include "linkscope/elf/file.hpp"
#include "linkscope/elf/hash_table.hpp"
#include "linkscope/elf/relocations.hpp"
#include "linkscope/elf/symbols.hpp"
#include "linkscope/elf/types.hpp"
#include "linkscope/elf/versions.hpp"
#include "linkscope/resolve/ld_so_cache.hpp"
#include "linkscope/resolve/search_path.hpp"

namespace linkscope {
inline namespace v0 {
namespace resolve {
namespace detail {
#if LINKSCOPE_DEFINITIONS

// One entry of ld.so's l_versions (by versym index): what a reference asks
// for, or what a definition is.
struct version_entry {
  std::string_view name;
  std::string_view filename;  // verneed file; empty for verdef
  std::uint32_t hash = 0;
  bool hidden = false;
  bool weak = false;
};

// A definition ld.so can find (check_match's first tests): st_value != 0,
// SHN_ABS or STT_TLS, of a type it accepts.
template <class Sym>
bool ld_so_can_match(const Sym& s) noexcept {
  constexpr unsigned allowed_stt = (1u << elf::STT_NOTYPE) | (1u << elf::STT_OBJECT) | (1u << elf::STT_FUNC) |
                                   (1u << elf::STT_COMMON) | (1u << elf::STT_TLS) | (1u << elf::STT_GNU_IFUNC);
  const bool has_value = s.st_value != 0 || s.is_absolute() || s.st_type() == elf::STT_TLS;
  return has_value && ((1u << s.st_type()) & allowed_stt) != 0;
}

template <class ET>
struct object_image {
  using Sym = typename ET::Sym;
  std::shared_ptr<const mapped_file> mapped;
  elf::file<ET> elf;
  elf::dynamic_info<ET> dyn;
  record_array<Sym> dynsym;
  byte_view dynstr;
  record_array<typename ET::Versym> versym;     // one per dynsym entry; empty when none
  elf::hash_table<ET> hashes;                   // DT_GNU_HASH / DT_HASH (for the GNU chain's hashes)
  std::vector<version_entry> versions;          // l_versions: by versym index (the base excluded)
  std::vector<u16> needed_order;                // the verneed entries' indices, in verneed chain order
  std::vector<version_entry> defined_versions;  // every verdef, the base included
  elf::reloc_classifier classes;
  // What the loader needs of the dynamic section and the program headers.
  std::string_view soname, rpath, runpath;
  bool has_rpath = false, has_runpath = false, symbolic = false, nodeflib = false;
  std::vector<std::string_view> needed;
  std::string interpreter;            // PT_INTERP; empty when none
  std::vector<std::string> warnings;  // malformed parts, with the reason
  std::uint64_t device = 0, inode = 0;
  std::uint16_t machine = 0;  // e_machine
  bool readable = false;      // the file could be read: device and inode are its identity
  bool ok = false;
  // A closure-only image (object_cache::set_closure_only) owns the strings
  // above (soname, rpath, runpath, needed) here, and has no mapping, views,
  // symbols nor versions.
  std::deque<std::string> owned;

  bool has_versym() const noexcept { return !versym.empty(); }
  std::uint16_t versym_at(std::size_t i) const noexcept { return static_cast<std::uint16_t>(versym[i]); }
  std::string_view name_of(const Sym& s) const noexcept {
    auto n = dynstr.cstring(s.st_name);
    return n ? *n : std::string_view{};
  }

  // This object's definitions that ld.so can match (ld_so_can_match, with a
  // name): what a lookup probes object by object when no index of a whole
  // closure is built (dynamic_options::bind_dependencies and interposition
  // false: a package check). Built on first use, once per run however many
  // roots load the object, by whichever thread asks first. Keyed by the GNU
  // hash of the name without its bit 0 (definitions::key), read from the
  // DT_GNU_HASH chain where the symbol has an entry there: neither the
  // records nor the names of a big library's tens of thousands of symbols
  // are then read, only those of the few candidates of a lookup's hash (it
  // applies ld_so_can_match and compares names). The symbols before the
  // chain (undefined ones, an executable's PLT addresses among them) are
  // read and hashed by name.
  struct definitions {
    // (mix(key), symidx), grouped by the top `bits` of mix(key) (the bucket),
    // each bucket in .dynsym order; bucket b is [buckets[b], buckets[b + 1]).
    std::vector<std::pair<std::uint32_t, std::uint32_t>> entries;
    std::vector<std::uint32_t> buckets;
    unsigned shift = 31;

    static std::uint32_t key(std::string_view name) noexcept { return gnu_hash(name) & ~1u; }
    // A bijection of the key that spreads its bits (the bucket is its top bits).
    static std::uint32_t mix(std::uint32_t k) noexcept { return k * 0x9E3779B1u; }
    // The entries of key `k` are those of its bucket with first == mix(k):
    // most names not defined here stop at an empty bucket (one cache line).
    std::pair<const std::pair<std::uint32_t, std::uint32_t>*, const std::pair<std::uint32_t, std::uint32_t>*>
    bucket_of(std::uint32_t m) const noexcept {
      const std::uint32_t b = m >> shift;
      return {entries.data() + buckets[b], entries.data() + buckets[b + 1]};
    }
  };
  // Built by the first caller; thread-safe. Double-checked with an atomic
  // flag rather than std::call_once: glibc's pthread_once makes a futex wake
  // system call after every first run, one per image of a run.
  const definitions& own_definitions() const {
    if (own_ready_.load(std::memory_order_acquire)) return own_;
    std::lock_guard<std::mutex> hold(own_lock_);
    if (own_ready_.load(std::memory_order_relaxed)) return own_;
    {
      std::vector<std::pair<std::uint32_t, std::uint32_t>> found;  // in .dynsym order
      for (std::size_t i = 1; i < dynsym.size(); ++i) {
        std::uint32_t chained = 0;
        if (hashes.gnu_chain_hash(static_cast<u32>(i), chained)) {
          // A symbol of the GNU chain is taken by its hash alone, without
          // reading its record: a lookup applies ld_so_can_match to the few
          // candidates of its hash, and compares their names (never empty).
          found.emplace_back(definitions::mix(chained & ~1u), static_cast<std::uint32_t>(i));
          continue;
        }
        const Sym s = dynsym[i];
        if (!ld_so_can_match(s)) continue;
        const std::string_view name = name_of(s);
        if (!name.empty()) found.emplace_back(definitions::mix(definitions::key(name)), static_cast<std::uint32_t>(i));
      }
      // A counting sort by bucket (about one entry per bucket), stable.
      unsigned bits = 1;
      while (bits < 31 && (std::size_t{1} << bits) < found.size()) ++bits;
      own_.shift = 32 - bits;
      own_.buckets.assign((std::size_t{1} << bits) + 1, 0);
      for (const auto& e : found) ++own_.buckets[(e.first >> own_.shift) + 1];
      for (std::size_t b = 1; b < own_.buckets.size(); ++b) own_.buckets[b] += own_.buckets[b - 1];
      std::vector<std::uint32_t> fill(own_.buckets.begin(), own_.buckets.end() - 1);
      own_.entries.resize(found.size());
      for (const auto& e : found) own_.entries[fill[e.first >> own_.shift]++] = e;
    }
    own_ready_.store(true, std::memory_order_release);
    return own_;
  }

 private:
  mutable std::atomic<bool> own_ready_{false};
  mutable std::mutex own_lock_;
  mutable definitions own_;
};

// Pre-fault the pages of a table that will be read in full (dynsym, dynstr,
// versym, relocations) with one madvise(MADV_POPULATE_READ) instead of one page
// fault per 4 KiB (on virtual machines a minor fault costs ~100 us). Purely an
// optimisation: failures (old kernels, non-Linux) are ignored.
inline void prefault(const mapped_file& file, const unsigned char* data, std::size_t size) noexcept {
#if defined(__linux__)
  if (!file.is_mapped() || size < 65536) return;
  const auto page = static_cast<std::uintptr_t>(4096);
  const auto begin = reinterpret_cast<std::uintptr_t>(data) & ~(page - 1);
  const auto end = reinterpret_cast<std::uintptr_t>(data) + size;
  ::madvise(reinterpret_cast<void*>(begin), end - begin, 22 /* MADV_POPULATE_READ */);
#else
  (void)file;
  (void)data;
  (void)size;
#endif
}

// Pre-fault what relocating `img` reads in full: .dynsym, the version
// indices, .dynstr and the relocation tables.
template <class ET>
void prefault_relocated(const object_image<ET>& img) noexcept {
  if (!img.mapped || !img.ok) return;
  const mapped_file& m = *img.mapped;
  const auto& d = img.dyn;
  const unsigned char* base = img.elf.bytes().data();
  if (!img.dynsym.empty())
    prefault(m, base + (d.offset_of(d.symtab(), 0).value_or(0)), img.dynsym.size() * sizeof(typename ET::Sym));
  if (img.has_versym()) prefault(m, base + (d.offset_of(d.versym(), 0).value_or(0)), 2 * img.dynsym.size());
  prefault(m, img.dynstr.data(), img.dynstr.size());
  for (auto table : {d.rela_table(), d.rel_table()})
    if (table && table->present) prefault(m, base + table->offset, table->size);
  bool rela = true;
  if (auto table = d.jmprel_table(rela); table && table->present) prefault(m, base + table->offset, table->size);
}

// Open and parse one object; errors become warnings on the image.
// `closure_only`: keep what the load phase reads (a copy of the dynamic
// section's strings, PT_INTERP, the machine) and let the mapping go.
template <class ET>
std::unique_ptr<object_image<ET>> open_image(std::shared_ptr<const mapped_file> mapped, bool closure_only = false,
                                             bool relocated = true) {
  auto img = std::make_unique<object_image<ET>>();
  img->mapped = std::move(mapped);
  img->device = img->mapped->device();
  img->inode = img->mapped->inode();
  img->readable = true;
  auto note = [&](const error& e) { img->warnings.push_back(describe(e)); };
  auto f = elf::file<ET>::open(img->mapped->bytes());
  if (!f) {
    note(f.error());
    return img;
  }
  img->elf = *f;
  img->machine = img->elf.machine();
  img->classes = elf::reloc_classifier::of(img->elf);
  img->interpreter = std::string(img->elf.interpreter());
  auto dyn = elf::dynamic_info<ET>::read(img->elf);
  if (!dyn) {
    note(dyn.error());
    return img;
  }
  img->dyn = *dyn;
  img->ok = true;
  const auto& d = img->dyn;
  img->dynstr = d.strings();
  if (auto s = d.soname()) img->soname = *s; else note(s.error());
  img->has_rpath = d.has_rpath();
  img->has_runpath = d.has_runpath();
  if (auto s = d.rpath()) img->rpath = *s; else note(s.error());
  if (auto s = d.runpath()) img->runpath = *s; else note(s.error());
  img->symbolic = d.symbolic();
  img->nodeflib = (d.flags_1() & elf::DF_1_NODEFLIB) != 0;
  img->needed.reserve(d.needed_count());
  auto needed = d.for_each_needed([&](std::string_view n) { img->needed.push_back(n); });
  if (!needed) note(needed.error());
  if (closure_only) {
    auto own = [&](std::string_view& v) { v = img->owned.emplace_back(v); };
    own(img->soname);
    own(img->rpath);
    own(img->runpath);
    for (auto& n : img->needed) own(n);
    img->elf = {};
    img->dyn = {};
    img->dynstr = {};
    img->mapped.reset();
    return img;
  }
  if (auto syms = elf::read_dynsym_from_dynamic(d)) {
    img->dynsym = syms->records();
    // Only the GNU chain's hashes are read from it (no lookup goes through
    // it, so the version tables it would consult are none).
    static const elf::version_tables<ET> no_versions;
    if (auto h = elf::hash_table<ET>::open(d, *syms, no_versions)) img->hashes = *h;
  } else {
    note(syms.error());
  }
  if (auto v = elf::version_tables<ET>::read_dynamic(d, img->dynsym.size()); !v) {
    note(v.error());
  } else if (v->present()) {
    img->versym = v->versym();
    img->needed_order = v->needed_order();
    const auto& entries = v->entries();
    img->versions.resize(entries.size());
    for (std::size_t i = 0; i < entries.size(); ++i) {
      const elf::version_entry& e = entries[i];
      if (e.name.empty()) continue;
      const version_entry entry{e.name, e.file, e.hash, e.hidden, e.weak()};
      if (e.defined) img->defined_versions.push_back(entry);
      // The base version (the SONAME) is not available for matching (dl-version.c).
      if (!e.base()) img->versions[i] = entry;
    }
  }
  // Everything prefault_relocated names is read in full when every object
  // is relocated (`relocated`); else relocating a root pre-faults its own,
  // and an object that is only looked into is read where a lookup lands.
  if (relocated) prefault_relocated(*img);
  return img;
}

#else
// Compiled mode: object_cache's interface needs only the name; the image,
// its reader and the loader are compiled in src/.
template <class ET>
struct object_image;
#endif  // LINKSCOPE_DEFINITIONS
}  // namespace detail

class object_cache {
 public:
  // A file's identity: device and inode.
  using file_id = std::pair<std::uint64_t, std::uint64_t>;
  struct file_id_hash {
    std::size_t operator()(const file_id& id) const noexcept {
      return std::hash<std::uint64_t>()(id.second * 0x9E3779B97F4A7C15ull ^ id.first);
    }
  };

  // The member functions that lock, parse or release are defined below the
  // class, under LINKSCOPE_DEFINITIONS: a compiled-mode translation unit
  // sees only their declarations.
  object_cache();
  object_cache(const object_cache&) = delete;
  object_cache& operator=(const object_cache&) = delete;
  // Moving takes the images, not the lock (no thread may use either cache meanwhile).
  object_cache(object_cache&& other) noexcept;
  object_cache& operator=(object_cache&& other) noexcept;

  // The ld.so.cache at host path `path`, read and parsed once per run: every
  // root's library search shares it.
  std::shared_ptr<const ld_so_cache_file> ld_so_cache_for(const std::string& path);
  // The file system answers of the library search (search_path.hpp), shared
  // by every root of the run.
  search_probes& probes() noexcept;
  // Share `other`'s ld.so.cache files and search probes (a closure-only cache
  // that plans the roots of the run `other` links).
  void share_lookups_with(object_cache& other);

  // Images that keep only what the load phase reads (the closure: DT_NEEDED,
  // SONAME, RPATH, RUNPATH, flags, PT_INTERP), without mappings; enough to
  // compute which files each root loads before linking any. The results of
  // such a cache point into its images: keep it alive while they are read.
  // Each such image counts closure_only_cost bytes against set_limit.
  static constexpr std::size_t closure_only_cost = 4096;
  void set_closure_only(bool on) noexcept { closure_only_ = on; }
  // Links through this cache relocate their roots only (dynamic_options::
  // bind_dependencies false): an image's names and relocation tables are not
  // pre-faulted when it is parsed, only when it is relocated as a root.
  void set_roots_only(bool on) noexcept { roots_only_ = on; }

  // Distinct files mapped and parsed (each counts once, even when it was let
  // go and parsed again), and opens answered from the cache.
  std::size_t files() const noexcept { return parsed_.size(); }
  std::size_t hits() const noexcept { return hits_.load(std::memory_order_relaxed); }
  // The most bytes of mappings kept (0: no limit), and how often it was reached.
  void set_limit(std::size_t bytes) noexcept { limit_ = bytes; }
  std::size_t flushes() const noexcept { return flushes_; }

  // Release by use count. A run that knows which files each of its roots
  // loads (a closure-only pass) says so up front: expect_use(files) once per
  // root. After a root is linked, end_use(the same files) lets go of every
  // file no pending root still needs (a file no root announced goes at the
  // first end_use that names it). Results keep what they point into.
  void expect_use(const std::vector<file_id>& ids);
  void end_use(const std::vector<file_id>& ids);
  // Images held now, the most held at once, and how many were let go by end_use.
  std::size_t images() const noexcept { return held_; }
  std::size_t peak_images() const noexcept { return peak_held_; }
  std::size_t released() const noexcept { return released_; }

  // Which ELF variant the cache holds host path `file` as, parsed without
  // error (0 elf64le, 1 elf64be, 2 elf32le, 3 elf32be), or -1.
  int parsed_class_of(const std::string& file);

  // The image of the file at host path `file` (parsed on first use). An
  // unreadable file gives an image with ok == false, no mapping and the
  // reason in its warnings (also cached). The image never changes.
  // `preopened`, when given, is the file's mapping, used instead of opening
  // it again when the cache does not know the file yet.
  template <class ET>
  std::shared_ptr<const detail::object_image<ET>> open(const std::string& file, mapped_file* preopened = nullptr);

 private:
  template <class ET>
  struct entry {
    std::shared_ptr<const detail::object_image<ET>> image;
    std::vector<std::string> paths;  // the by_path keys that name it
  };
  // The images by the names they were opened as, in shards with a lock each
  // (lock order: lock_, then a shard): the hits of every root's DT_NEEDED
  // lookups then rarely meet on one lock, where one lock for everything was
  // the run's most contended (about 18,000 waits on the 10k generated prefix
  // at -j 2; 1,600 with the shards).
  template <class ET>
  struct alignas(64) path_shard {
    std::mutex lock;
    std::unordered_map<std::string, std::shared_ptr<const detail::object_image<ET>>> images;
  };
  template <class ET>
  struct store {
    static constexpr std::size_t shards = 16;
    store() : by_path(std::make_unique<path_shard<ET>[]>(shards)) {}
    std::unique_ptr<path_shard<ET>[]> by_path;
    std::unordered_map<file_id, entry<ET>, file_id_hash> by_file;  // lock_
    path_shard<ET>& shard(const std::string& path) { return by_path[std::hash<std::string>{}(path) % shards]; }
    void clear() {  // lock_ held
      for (std::size_t i = 0; i < shards; ++i) {
        std::lock_guard<std::mutex> hold(by_path[i].lock);
        by_path[i].images.clear();
      }
      by_file.clear();
    }
  };
  // What a closure-only cache shares with the cache of the run it plans.
  struct shared_lookups {
    search_probes probes;
    std::mutex lock;
    std::unordered_map<std::string, std::shared_ptr<const ld_so_cache_file>> ld_so_caches;
  };

  template <class ET>
  static bool held_ok(store<ET>& s, const std::string& file);
  template <class ET>
  void release(store<ET>& s, const file_id& id, std::vector<std::shared_ptr<const void>>& gone);  // lock_ held
  void take(object_cache& other) noexcept;

  std::tuple<store<elf::elf64le>, store<elf::elf64be>, store<elf::elf32le>, store<elf::elf32be>> stores_;
  std::unordered_set<file_id, file_id_hash> parsed_;  // every file parsed, by device and inode
  std::shared_ptr<shared_lookups> shared_;
  std::unordered_map<file_id, std::uint32_t, file_id_hash> pending_;  // expect_use - end_use, per file
  bool closure_only_ = false;
  bool roots_only_ = false;
  std::mutex lock_;
  std::size_t limit_ = 0, bytes_ = 0, flushes_ = 0;
  std::atomic<std::size_t> hits_{0};
  std::size_t held_ = 0, peak_held_ = 0, released_ = 0;
};

#if LINKSCOPE_DEFINITIONS
LINKSCOPE_FUNC object_cache::object_cache() : shared_(std::make_shared<shared_lookups>()) {}
LINKSCOPE_FUNC object_cache::object_cache(object_cache&& other) noexcept { take(other); }
LINKSCOPE_FUNC object_cache& object_cache::operator=(object_cache&& other) noexcept {
  take(other);
  return *this;
}

LINKSCOPE_FUNC std::shared_ptr<const ld_so_cache_file> object_cache::ld_so_cache_for(const std::string& path) {
  std::lock_guard<std::mutex> hold(shared_->lock);
  auto& slot = shared_->ld_so_caches[path];
  if (!slot) slot = ld_so_cache_file::load(path);
  return slot;
}
LINKSCOPE_FUNC search_probes& object_cache::probes() noexcept { return shared_->probes; }
LINKSCOPE_FUNC void object_cache::share_lookups_with(object_cache& other) { shared_ = other.shared_; }

LINKSCOPE_FUNC void object_cache::expect_use(const std::vector<file_id>& ids) {
  std::lock_guard<std::mutex> hold(lock_);
  for (const file_id& id : ids) ++pending_[id];
}
LINKSCOPE_FUNC void object_cache::end_use(const std::vector<file_id>& ids) {
  // The images let go are destroyed (their files unmapped) after the lock
  // is released: other threads' opens do not wait for munmap.
  std::vector<std::shared_ptr<const void>> gone;
  std::lock_guard<std::mutex> hold(lock_);
  for (const file_id& id : ids) {
    auto it = pending_.find(id);
    if (it != pending_.end() && --it->second != 0) continue;
    if (it != pending_.end()) pending_.erase(it);
    std::apply([&](auto&... each) { (release(each, id, gone), ...); }, stores_);
  }
}

LINKSCOPE_FUNC int object_cache::parsed_class_of(const std::string& file) {
  int found = -1, index = 0;
  std::apply(
      [&](auto&... each) {
        ((found = found < 0 && held_ok(each, file) ? index : found, ++index), ...);
      },
      stores_);
  return found;
}

template <class ET>
std::shared_ptr<const detail::object_image<ET>> object_cache::open(const std::string& file, mapped_file* preopened) {
  using image_ptr = std::shared_ptr<const detail::object_image<ET>>;
  store<ET>& s = std::get<store<ET>>(stores_);
  path_shard<ET>& names = s.shard(file);
  {
    // A hit takes only its name's shard: lock_ is for parsing and releasing.
    std::lock_guard<std::mutex> hold(names.lock);
    auto it = names.images.find(file);
    if (it != names.images.end()) {
      hits_.fetch_add(1, std::memory_order_relaxed);
      return it->second;
    }
  }
  auto mapped = preopened != nullptr ? result<mapped_file>(std::move(*preopened)) : mapped_file::open(file);
  if (!mapped) {
    auto failed = std::make_shared<detail::object_image<ET>>();
    failed->warnings.push_back(std::string("cannot read: ") + mapped.error().message);
    std::lock_guard<std::mutex> hold(lock_);
    std::lock_guard<std::mutex> hold_names(names.lock);
    return names.images.emplace(file, image_ptr(std::move(failed))).first->second;
  }
  const file_id key{mapped->device(), mapped->inode()};
  {
    std::lock_guard<std::mutex> hold(lock_);
    auto same = s.by_file.find(key);
    if (same != s.by_file.end()) {
      hits_.fetch_add(1, std::memory_order_relaxed);
      same->second.paths.push_back(file);
      std::lock_guard<std::mutex> hold_names(names.lock);
      return names.images.emplace(file, same->second.image).first->second;
    }
  }
  const std::size_t size = mapped->size();
  image_ptr img =
      detail::open_image<ET>(std::make_shared<const mapped_file>(std::move(*mapped)), closure_only_, !roots_only_);
  std::lock_guard<std::mutex> hold(lock_);
  auto [same, fresh] = s.by_file.emplace(key, entry<ET>{std::move(img), {}});
  if (!fresh) {
    hits_.fetch_add(1, std::memory_order_relaxed);  // another thread parsed it meanwhile: keep the first
    same->second.paths.push_back(file);
    std::lock_guard<std::mutex> hold_names(names.lock);
    return names.images.emplace(file, same->second.image).first->second;
  }
  if (!closure_only_) parsed_.insert(key);
  image_ptr out = same->second.image;
  if (++held_ > peak_held_) peak_held_ = held_;
  bytes_ += closure_only_ ? closure_only_cost : size;
  if (limit_ != 0 && bytes_ > limit_) {
    // Over the limit: let every file go; the caller keeps this one.
    std::apply([](auto&... each) { (each.clear(), ...); }, stores_);
    bytes_ = 0;
    held_ = 0;
    ++flushes_;
    return out;
  }
  same->second.paths.push_back(file);
  std::lock_guard<std::mutex> hold_names(names.lock);
  names.images.emplace(file, out);
  return out;
}

template <class ET>
bool object_cache::held_ok(store<ET>& s, const std::string& file) {
  path_shard<ET>& names = s.shard(file);
  std::lock_guard<std::mutex> hold(names.lock);
  auto it = names.images.find(file);
  return it != names.images.end() && it->second->ok;
}
template <class ET>
void object_cache::release(store<ET>& s, const file_id& id, std::vector<std::shared_ptr<const void>>& gone) {
  auto it = s.by_file.find(id);
  if (it == s.by_file.end()) return;
  gone.push_back(it->second.image);
  for (const std::string& path : it->second.paths) {
    path_shard<ET>& names = s.shard(path);
    std::lock_guard<std::mutex> hold(names.lock);
    names.images.erase(path);
  }
  bytes_ -= std::min(bytes_, it->second.image->mapped ? it->second.image->mapped->size()
                                                      : closure_only_ ? closure_only_cost : std::size_t{0});
  s.by_file.erase(it);
  --held_;
  ++released_;
}

LINKSCOPE_FUNC void object_cache::take(object_cache& other) noexcept {
  stores_ = std::move(other.stores_);
  parsed_ = std::move(other.parsed_);
  shared_ = std::move(other.shared_);
  pending_ = std::move(other.pending_);
  closure_only_ = other.closure_only_;
  roots_only_ = other.roots_only_;
  limit_ = other.limit_;
  bytes_ = other.bytes_;
  flushes_ = other.flushes_;
  hits_.store(other.hits_.load(std::memory_order_relaxed), std::memory_order_relaxed);
  held_ = other.held_;
  peak_held_ = other.peak_held_;
  released_ = other.released_;
}
#endif  // LINKSCOPE_DEFINITIONS

}  // namespace resolve
}  // namespace v0
}  // namespace linkscope
