// linkscope/resolve/dynamic.hpp — ld.so emulation: what a program would load and
// where every symbol reference would bind, computed from the files alone.
//
// Nothing is executed, dlopened or mapped as code. The emulation follows glibc 2.36:
//
// Loading (elf/dl-deps.c _dl_map_object_deps, elf/dl-load.c _dl_map_object):
//   the main program, then --preload objects, then breadth-first over DT_NEEDED.
//   A name is first matched against what is loaded (every name an object was
//   requested by, its path, its DT_SONAME); a newly found file is matched by
//   device/inode. The PT_INTERP object is known from the start (matched by its
//   path and SONAME) and joins the list where the BFS first needs it. A name that
//   is not found becomes a placeholder, as ld.so's trace mode fakes one.
//   Candidates of the wrong class or machine are skipped (search_path.hpp).
//
// Binding (elf/dl-reloc.c RESOLVE_MAP, elf/dl-lookup.c _dl_lookup_symbol_x,
// do_lookup_x, check_match) for every relocation with a symbol, in every object
// but the interpreter, as under LD_BIND_NOW:
//   - a reference to a STB_LOCAL or hidden/internal symbol binds locally, unseen;
//   - the scope is the global search list (the BFS order), preceded by the object
//     itself when it has DT_SYMBOLIC / DF_SYMBOLIC;
//   - a definition matches when st_value != 0 (or SHN_ABS, or STT_TLS), its type is
//     NOTYPE/OBJECT/FUNC/COMMON/TLS/GNU_IFUNC, and — for PLT-class relocations
//     (JUMP_SLOT and the TLS ones) — it is not SHN_UNDEF (an executable's undefined
//     symbol with a PLT address does satisfy GLOB_DAT references);
//   - versions: a versioned reference (verneed index) matches the same name+hash,
//     or an unversioned definition unless the reference is hidden or the definition
//     has the hidden bit; an unversioned reference takes versym index 1/2, or the
//     single non-hidden versioned definition of that object;
//   - STB_WEAK binds like STB_GLOBAL; hidden definitions are skipped; STB_GNU_UNIQUE
//     binds to the first definition that was bound;
//   - a COPY relocation's lookup skips the executable;
//   - a reference whose own symbol is STV_PROTECTED binds to itself when the lookup
//     found another object ("protected symbol" in LD_DEBUG output);
//   - an unresolved non-weak reference is "undefined" (ldd -r); weak ones vanish.
// The lookup goes through one index of all definitions of all loaded objects,
// grouped by name in scope order (built in one pass; no per-object hash walks).
#pragma once

#include <algorithm>
#include <cstdio>
#include <cstring>
#if defined(__linux__)
#include <sys/mman.h>
#endif
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "linkscope/core/bytes.hpp"
#include "linkscope/core/error.hpp"
#include "linkscope/core/hash.hpp"
#include "linkscope/core/mapped_file.hpp"
#include "linkscope/elf/dynamic.hpp"
#include "linkscope/elf/file.hpp"
#include "linkscope/elf/types.hpp"
#include "linkscope/resolve/search_path.hpp"

namespace linkscope {
inline namespace v0 {
namespace resolve {

inline constexpr std::uint32_t no_object = ~std::uint32_t{0};

struct dynamic_options {
  search_options search;
  std::vector<std::string> preload;                       // LD_PRELOAD names, in order
  std::string default_interpreter = "/lib64/ld-linux-x86-64.so.2";
  bool bindings = true;                                   // resolve every relocation
};

// One object of the closure (a link_map).
struct loaded_object {
  std::string name;                  // the name it was first requested by (l_libname)
  std::string path;                  // l_name: how ld.so spells it; empty when not found
  std::string file;                  // what was read on this host
  found_via via = found_via::not_found;
  std::string subdir;                // hwcaps subdirectory it was found in
  std::string where;                 // the object whose RPATH/RUNPATH found it
  std::string_view soname;
  std::string_view rpath, runpath;
  bool has_rpath = false, has_runpath = false;
  std::vector<std::string_view> needed;
  std::vector<std::uint32_t> needed_objects;  // per DT_NEEDED: the object it resolved to
  std::uint32_t loader = no_object;  // who caused it to load
  bool is_main = false, is_interpreter = false, preloaded = false;
  bool symbolic = false, nodeflib = false;
  std::vector<rejected_candidate> rejected;
  std::vector<std::string> warnings;  // malformed parts, with the reason
  bool found() const noexcept { return via != found_via::not_found; }
};

struct symbol_binding {
  std::uint32_t from = 0;
  std::uint32_t to = 0;
  std::string_view symbol;
  std::string_view version;  // the version the reference asked for; empty if none
  bool protected_ = false;
};

struct undefined_reference {
  std::uint32_t from = 0;
  std::string_view symbol;
  std::string_view version;
};

struct missing_version {
  std::uint32_t from = 0;
  std::uint32_t target = no_object;  // the object named by vn_file
  std::string_view file;     // vn_file
  std::string_view version;  // vna_name
  bool weak = false;
};

struct interposition {
  std::string_view symbol;
  std::vector<std::uint32_t> definers;  // in scope order; definers[0] wins
};

struct dynamic_link {
  std::vector<loaded_object> objects;      // load order (ld.so's l_next chain); [0] = main
  std::vector<std::uint32_t> search_list;  // global scope (objects in the BFS), in order
  std::vector<symbol_binding> bindings;           // every distinct (from, to, symbol, version)
  std::vector<undefined_reference> undefined;
  std::vector<missing_version> missing_versions;
  std::vector<std::uint32_t> unused;       // ldd -u: direct NEEDED of main that main never binds to
  std::vector<interposition> interposed;   // names defined by several objects in scope
  std::vector<std::string> warnings;       // cache errors and the like
  std::size_t lookups = 0;                 // symbol lookups performed
  std::size_t relocations = 0;             // relocations with a symbol examined
  std::size_t index_bytes = 0;             // memory of the definition index
  std::size_t index_entries = 0;           // definitions in it
  // The bytes that the string_views above point into.
  std::vector<std::unique_ptr<mapped_file>> files;

  bool any_missing() const noexcept {
    for (const auto& o : objects)
      if (!o.found()) return true;
    return false;
  }
};

namespace detail {

// Relocation type classes (elf_machine_type_class): 1 = PLT, 2 = COPY, 0 = other;
// -1 = no symbol lookup (NONE, RELATIVE ...).
inline int reloc_type_class(std::uint16_t machine, std::uint32_t type) noexcept {
  switch (machine) {
    case 62:  // EM_X86_64
      if (type == 0 || type == 8 || type == 37) return -1;
      if (type == 7 || type == 16 || type == 17 || type == 18 || type == 36) return 1;
      return type == 5 ? 2 : 0;
    case 3:  // EM_386
      if (type == 0 || type == 8 || type == 42) return -1;
      if (type == 7 || type == 35 || type == 36 || type == 37 || type == 14 || type == 41) return 1;
      return type == 5 ? 2 : 0;
    case 183:  // EM_AARCH64
      if (type == 0 || type == 1027 || type == 1032) return -1;
      if (type == 1026 || type == 1028 || type == 1029 || type == 1030 || type == 1031) return 1;
      return type == 1024 ? 2 : 0;
    default:
      return 0;
  }
}

struct version_entry {
  std::string_view name;
  std::string_view filename;  // verneed file; empty for verdef
  std::uint32_t hash = 0;
  bool hidden = false;
  bool weak = false;
};

template <class ET>
struct object_image {
  using Sym = typename ET::Sym;
  std::unique_ptr<mapped_file> mapped;
  elf::file<ET> elf;
  elf::dynamic_info<ET> dyn;
  record_array<Sym> dynsym;
  byte_view dynstr;
  const unsigned char* versym = nullptr;  // u16 per dynsym entry (ET's byte order)
  std::vector<version_entry> versions;          // l_versions: by versym index
  std::vector<version_entry> defined_versions;  // every verdef, the base included
  std::uint64_t device = 0, inode = 0;
  bool ok = false;

  std::uint16_t versym_at(std::size_t i) const noexcept {
    return load<u16, ET::endianness>(versym + 2 * i);
  }
  std::string_view name_of(const Sym& s) const noexcept {
    auto n = dynstr.cstring(s.st_name);
    return n ? *n : std::string_view{};
  }
};

// Number of .dynsym entries from DT_HASH (nchain) or DT_GNU_HASH (last chain end),
// as tools that read no section headers do; bounded by the bytes present.
template <class ET>
result<std::size_t> dynsym_count_from_hash(const elf::file<ET>& f, const elf::dynamic_info<ET>& dyn,
                                           u64 symtab_offset) {
  const byte_view bytes = f.bytes();
  const std::size_t max_syms = (bytes.size() - symtab_offset) / sizeof(typename ET::Sym);
  if (dyn.hash().present()) {
    LINKSCOPE_TRY(off, dyn.offset_of(dyn.hash(), 8));
    const u64 nchain = load<u32, ET::endianness>(bytes.data() + off + 4);
    return static_cast<std::size_t>(std::min<u64>(nchain, max_syms));
  }
  if (dyn.gnu_hash().present()) {
    LINKSCOPE_TRY(off, dyn.offset_of(dyn.gnu_hash(), 16));
    LINKSCOPE_TRY(header, bytes.read<typename ET::GnuHashHeader>(off));
    const u64 nbuckets = header.nbuckets;
    const u64 symoffset = header.symoffset;
    const u64 bloom = header.bloom_size;
    u64 buckets_at = 0;
    if (!checked_add(off + 16, bloom * sizeof(typename ET::uword), buckets_at) || bloom > bytes.size())
      return bytes.fail(errc::overflow, off, "GNU hash bloom size overflows");
    LINKSCOPE_TRY(buckets, bytes.template array<typename ET::word>(buckets_at, nbuckets, 4, "GNU hash buckets past end"));
    u64 last = 0;
    for (std::size_t b = 0; b < buckets.size(); ++b) last = std::max<u64>(last, buckets[b]);
    if (last < symoffset) return static_cast<std::size_t>(std::min<u64>(symoffset, max_syms));
    const u64 chains_at = buckets_at + 4 * nbuckets;
    for (u64 i = last;; ++i) {
      const u64 at = chains_at + 4 * (i - symoffset);
      if (!fits(at, 4, bytes.size()) || i >= max_syms) return bytes.fail(errc::truncated, at, "GNU hash chain runs past the end");
      if (load<u32, ET::endianness>(bytes.data() + at) & 1u) return static_cast<std::size_t>(i + 1);
    }
  }
  return std::size_t{0};
}

// The .dynsym count the resolver uses. A GNU hash table says nothing of the undefined symbols after its chains (GNU
// ld gives a DSO that defines nothing symoffset 1 and empty buckets, although
// its relocations name the undefined symbols 1..4; ld.so indexes .dynsym by the
// relocation without a bound). So when a SHT_DYNSYM section header describes
// the same table, its count is taken when it is larger.
template <class ET>
result<std::size_t> dynsym_count(const elf::file<ET>& f, const elf::dynamic_info<ET>& dyn, u64 symtab_offset) {
  LINKSCOPE_TRY(from_dynamic, dynsym_count_from_hash(f, dyn, symtab_offset));
  const std::size_t max_syms = (f.bytes().size() - symtab_offset) / sizeof(typename ET::Sym);
  if (auto sec = f.find_section(elf::SHT_DYNSYM)) {
    const auto& sh = sec->second;
    if (static_cast<u64>(sh.sh_offset) == symtab_offset && static_cast<u64>(sh.sh_entsize) == sizeof(typename ET::Sym)) {
      const u64 n = std::min<u64>(static_cast<u64>(sh.sh_size) / sizeof(typename ET::Sym), max_syms);
      if (n > from_dynamic) return static_cast<std::size_t>(n);
    }
  }
  return from_dynamic;
}

template <class ET>
result<void> read_versions(object_image<ET>& img) {
  const byte_view bytes = img.elf.bytes();
  auto put = [&](std::size_t ndx, const version_entry& v) {
    if (ndx > 0xffff) return;
    if (img.versions.size() <= ndx) img.versions.resize(ndx + 1);
    img.versions[ndx] = v;
  };
  if (img.dyn.verdef().present()) {
    LINKSCOPE_TRY(off, img.dyn.offset_of(img.dyn.verdef(), sizeof(typename ET::Verdef)));
    u64 at = off;
    const u64 limit = img.dyn.verdefnum().present() ? img.dyn.verdefnum().value : 0xffff;
    for (u64 n = 0; n < limit && n < 0x10000; ++n) {
      LINKSCOPE_TRY(vd, bytes.read<typename ET::Verdef>(at, "verdef past end of file"));
      if (vd.vd_cnt != 0) {
        LINKSCOPE_TRY(aux, bytes.read<typename ET::Verdaux>(at + vd.vd_aux, "verdaux past end of file"));
        LINKSCOPE_TRY(name, img.dynstr.cstring(aux.vda_name));
        const version_entry v{name, {}, vd.vd_hash, false, false};
        img.defined_versions.push_back(v);
        // The base version (the SONAME) is not available for matching (dl-version.c).
        if ((vd.vd_flags & elf::VER_FLG_BASE) == 0) put(vd.vd_ndx & 0x7fff, v);
      }
      if (vd.vd_next == 0) break;
      at += vd.vd_next;
    }
  }
  if (img.dyn.verneed().present()) {
    LINKSCOPE_TRY(off, img.dyn.offset_of(img.dyn.verneed(), sizeof(typename ET::Verneed)));
    u64 at = off;
    const u64 limit = img.dyn.verneednum().present() ? img.dyn.verneednum().value : 0xffff;
    for (u64 n = 0; n < limit && n < 0x10000; ++n) {
      LINKSCOPE_TRY(vn, bytes.read<typename ET::Verneed>(at, "verneed past end of file"));
      LINKSCOPE_TRY(file, img.dynstr.cstring(vn.vn_file));
      u64 aux_at = at + vn.vn_aux;
      for (u64 k = 0; k < vn.vn_cnt && k < 0x10000; ++k) {
        LINKSCOPE_TRY(aux, bytes.read<typename ET::Vernaux>(aux_at, "vernaux past end of file"));
        LINKSCOPE_TRY(name, img.dynstr.cstring(aux.vna_name));
        put(aux.vna_other & 0x7fff, version_entry{name, file, aux.vna_hash, (aux.vna_other & 0x8000) != 0,
                                                  (aux.vna_flags & elf::VER_FLG_WEAK) != 0});
        if (aux.vna_next == 0) break;
        aux_at += aux.vna_next;
      }
      if (vn.vn_next == 0) break;
      at += vn.vn_next;
    }
  }
  return ok();
}

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

inline void prefetch([[maybe_unused]] const void* p) noexcept {
#if defined(__GNUC__) || defined(__clang__)
  __builtin_prefetch(p);
#endif
}

// Reserve `n` elements and pre-fault them for writing (MADV_POPULATE_WRITE): the
// big arrays of the index are written once, and one call is far cheaper than
// a page fault per 4 KiB.
template <class T>
void reserve_populated(std::vector<T>& v, std::size_t n) {
  v.reserve(n);
#if defined(__linux__)
  const std::size_t bytes = n * sizeof(T);
  if (bytes < (std::size_t{1} << 20)) return;
  const auto page = static_cast<std::uintptr_t>(4096);
  const auto begin = (reinterpret_cast<std::uintptr_t>(v.data()) + page - 1) & ~(page - 1);
  const auto end = (reinterpret_cast<std::uintptr_t>(v.data()) + bytes) & ~(page - 1);
  if (end > begin) ::madvise(reinterpret_cast<void*>(begin), end - begin, 23 /* MADV_POPULATE_WRITE */);
#endif
}

// Open and parse one object; errors become warnings on `obj` (the object stays in
// the closure, with what could be read).
template <class ET>
std::unique_ptr<object_image<ET>> open_image(const std::string& file, loaded_object& obj) {
  auto img = std::make_unique<object_image<ET>>();
  auto mapped = mapped_file::open(file);
  if (!mapped) {
    obj.warnings.push_back(std::string("cannot read: ") + mapped.error().message);
    return img;
  }
  img->mapped = std::make_unique<mapped_file>(std::move(*mapped));
  img->device = img->mapped->device();
  img->inode = img->mapped->inode();
  auto note = [&](const error& e) {
    std::string w = e.message;
    if (e.has_offset()) {
      char buf[32];
      std::snprintf(buf, sizeof buf, " (offset 0x%llx)", static_cast<unsigned long long>(e.offset));
      w += buf;
    }
    obj.warnings.push_back(std::move(w));
  };
  auto f = elf::file<ET>::open(img->mapped->bytes());
  if (!f) {
    note(f.error());
    return img;
  }
  img->elf = *f;
  auto dyn = elf::dynamic_info<ET>::read(img->elf);
  if (!dyn) {
    note(dyn.error());
    return img;
  }
  img->dyn = *dyn;
  img->ok = true;
  auto& d = img->dyn;
  img->dynstr = d.strings();
  if (auto s = d.soname()) obj.soname = *s; else note(s.error());
  obj.has_rpath = d.has_rpath();
  obj.has_runpath = d.has_runpath();
  if (auto s = d.rpath()) obj.rpath = *s; else note(s.error());
  if (auto s = d.runpath()) obj.runpath = *s; else note(s.error());
  obj.symbolic = d.symbolic();
  obj.nodeflib = (d.flags_1() & elf::DF_1_NODEFLIB) != 0;
  auto needed = d.for_each_needed([&](std::string_view n) { obj.needed.push_back(n); });
  if (!needed) note(needed.error());
  if (d.symtab().present()) {
    auto off = d.offset_of(d.symtab(), sizeof(typename ET::Sym));
    if (!off) {
      note(off.error());
    } else {
      auto count = dynsym_count(img->elf, d, *off);
      if (!count) {
        note(count.error());
      } else {
        auto syms = img->elf.bytes().template array<typename ET::Sym>(*off, *count);
        if (syms) img->dynsym = *syms; else note(syms.error());
      }
    }
  }
  if (d.versym().present() && !img->dynsym.empty()) {
    auto off = d.offset_of(d.versym(), 2 * img->dynsym.size());
    if (off) img->versym = img->elf.bytes().data() + *off; else note(off.error());
  }
  if (auto v = read_versions(*img); !v) note(v.error());
  // Everything below is read in full by the resolver.
  const mapped_file& m = *img->mapped;
  prefault(m, img->dynstr.data(), img->dynstr.size());
  if (!img->dynsym.empty())
    prefault(m, img->elf.bytes().data() + (d.offset_of(d.symtab(), 0).value_or(0)),
             img->dynsym.size() * sizeof(typename ET::Sym));
  if (img->versym != nullptr) prefault(m, img->versym, 2 * img->dynsym.size());
  for (auto table : {d.rela_table(), d.rel_table()})
    if (table && table->present) prefault(m, img->elf.bytes().data() + table->offset, table->size);
  bool rela = true;
  if (auto table = d.jmprel_table(rela); table && table->present)
    prefault(m, img->elf.bytes().data() + table->offset, table->size);
  return img;
}

// All definitions of the closure, grouped by name, each group in scope order.
struct definition_index {
  struct slot {
    std::uint32_t hash;
    std::uint32_t group;  // no_object = empty
  };
  struct entry {
    std::uint32_t object;  // position in the scope
    std::uint32_t symidx;
  };
  std::vector<slot> slots;
  std::vector<std::uint32_t> group_start;  // size groups + 1
  std::vector<entry> entries;
  std::vector<std::string_view> group_name;
  std::uint64_t mask = 0;

  std::size_t memory_bytes() const noexcept {
    return slots.capacity() * sizeof(slot) + group_start.capacity() * 4 + entries.capacity() * sizeof(entry) +
           group_name.capacity() * sizeof(std::string_view);
  }
  std::size_t home(std::uint32_t h) const noexcept {
    return static_cast<std::size_t>((static_cast<std::uint64_t>(h) * 0x9E3779B97F4A7C15ull) >> (64 - bits));
  }
  std::uint32_t find(std::string_view name, std::uint32_t h) const noexcept {
    if (slots.empty()) return no_object;
    std::size_t i = home(h);
    for (;;) {
      const slot& s = slots[i];
      if (s.group == no_object) return no_object;
      if (s.hash == h && group_name[s.group] == name) return s.group;
      i = (i + 1) & mask;
    }
  }
  void prefetch(std::uint32_t h) const noexcept {
    if (!slots.empty()) resolve::detail::prefetch(&slots[home(h)]);
  }
  std::uint32_t insert(std::string_view name, std::uint32_t h) {
    std::size_t i = home(h);
    for (;;) {
      slot& s = slots[i];
      if (s.group == no_object) {
        s.hash = h;
        s.group = static_cast<std::uint32_t>(group_name.size());
        group_name.push_back(name);
        return s.group;
      }
      if (s.hash == h && group_name[s.group] == name) return s.group;
      i = (i + 1) & mask;
    }
  }
  void reserve(std::size_t n) {
    bits = 3;
    while ((std::size_t{1} << bits) < n + n / 2 + 8) ++bits;
    reserve_populated(slots, std::size_t{1} << bits);
    slots.assign(std::size_t{1} << bits, slot{0, no_object});
    mask = (std::uint64_t{1} << bits) - 1;
    reserve_populated(group_name, n);
  }
  unsigned bits = 3;
};

template <class ET>
class linker {
 public:
  using Sym = typename ET::Sym;

  linker(const dynamic_options& options, dynamic_link& out) : options_(options), out_(out), search_(options.search) {}

  void load(const std::string& program, std::unique_ptr<object_image<ET>> main_image, loaded_object main) {
    const std::string& cwd = search_.options().cwd;
    main.is_main = true;
    main.via = found_via::main_program;
    add_object(std::move(main), std::move(main_image), program, cwd);
    machine_ = images_[0]->elf.machine();
    // The interpreter: known from the start, in the list only once needed.
    std::string interp = options_.default_interpreter;
    for (const auto& ph : images_[0]->elf.program_headers()) {
      if (ph.p_type != elf::PT_INTERP) continue;
      auto s = images_[0]->elf.bytes().cstring(ph.p_offset);
      if (s && !s->empty()) interp = std::string(*s);
    }
    interpreter_path_ = interp;
    {
      loaded_object rtld;
      rtld.name = interp;
      rtld.path = interp;
      rtld.file = search_.options().root + interp;
      rtld.via = found_via::interpreter;
      rtld.is_interpreter = true;
      auto img = open_image<ET>(rtld.file, rtld);
      interpreter_ = std::move(rtld);
      interpreter_image_ = std::move(img);
      if (interpreter_image_->ok) {
        by_name_.emplace(interpreter_->path, interp_marker);
        if (!interpreter_->soname.empty()) by_name_.emplace(std::string(interpreter_->soname), interp_marker);
        by_file_.emplace(file_key(*interpreter_image_), interp_marker);
      }
    }
    // Preloads, then BFS.
    for (const auto& p : options_.preload) {
      const std::uint32_t id = map_object(p, 0);
      if (id != no_object && !in_list_[id]) {
        objects()[id].preloaded = true;
        append_to_list(id);
      }
    }
    for (std::size_t i = 0; i < bfs_.size(); ++i) {
      const std::uint32_t id = bfs_[i];
      const std::size_t n = objects()[id].needed.size();
      for (std::size_t k = 0; k < n; ++k) {
        const std::string name(objects()[id].needed[k]);
        const std::uint32_t dep = map_object(name, id);
        objects()[id].needed_objects.push_back(dep);
        if (dep != no_object && !in_list_[dep]) append_to_list(dep);
      }
    }
    if (auto e = search_.cache_error())
      out_.warnings.push_back(std::string(search_.options().cache_file) + ": ignored: " + e->message);
    // The search list is the BFS without placeholders (dl-deps.c drops faked maps);
    // the load order (l_next) is the BFS with the interpreter moved right after its
    // predecessor in the search list (rtld.c).
    for (std::uint32_t id : bfs_)
      if (objects_[id].found()) out_.search_list.push_back(id);
    load_order_ = bfs_;
    if (interp_id_ != no_object) {
      load_order_.erase(std::find(load_order_.begin(), load_order_.end(), interp_id_));
      auto at = std::find(out_.search_list.begin(), out_.search_list.end(), interp_id_);
      if (at != out_.search_list.begin() && at != out_.search_list.end()) {
        auto prev = std::find(load_order_.begin(), load_order_.end(), *(at - 1));
        load_order_.insert(prev + 1, interp_id_);
      } else {
        load_order_.push_back(interp_id_);
      }
    }
  }

  void resolve() {
    build_index();
    // Bindings: at most one per relocation with a symbol, and in practice about
    // one per .dynsym entry (each (symbol, class) pair binds once per object).
    // Most relocations of a big DSO are R_*_RELATIVE (2.3M of the 2.5M of
    // op_registration_test's closure), so relocs / 2 pre-faulted 60 MB for
    // 7 MB of bindings.
    std::size_t relocs = 0, symbols = 0;
    for (std::uint32_t id : out_.search_list) {
      const auto& d = images_[id]->dyn;
      symbols += images_[id]->dynsym.size();
      for (auto table : {d.rela_table(), d.rel_table()})
        if (table && table->present) relocs += table->size / table->entsize;
    }
    reserve_populated(out_.bindings, std::min(relocs, symbols) / 2);
    // Relocate every object but the interpreter and placeholders.
    for (std::uint32_t pos = 0; pos < out_.search_list.size(); ++pos) {
      const std::uint32_t id = out_.search_list[pos];
      if (objects()[id].is_interpreter || !images_[id]->ok) continue;
      relocate(id, pos, false);
    }
    // Unused direct dependencies (ldd -u): relocate main only, walk NEEDED against the
    // load order as rtld.c does.
    std::vector<char> used(objects().size(), 0);
    for (const symbol_binding& b : main_bindings_) used[b.to] = 1;
    std::size_t next = 1;
    for (std::size_t k = 0; k < objects()[0].needed.size(); ++k) {
      if (next >= load_order_.size()) break;
      const std::uint32_t id = load_order_[next++];
      if (!used[id] && objects()[id].found()) out_.unused.push_back(id);
    }
    find_interposed();
  }

  // dl-version.c: every verneed entry must be defined by the object it names.
  void check_versions() { find_missing_versions(); }

  void finish() {
    // Objects in load order: renumber so that out_.objects is the l_next chain.
    std::vector<std::uint32_t> renum(objects().size(), no_object);
    std::vector<loaded_object> ordered;
    ordered.reserve(load_order_.size());
    for (std::uint32_t id : load_order_) {
      renum[id] = static_cast<std::uint32_t>(ordered.size());
      ordered.push_back(std::move(objects()[id]));
    }
    auto fix = [&](std::uint32_t& v) {
      if (v != no_object) v = renum[v];
    };
    for (auto& o : ordered) {
      fix(o.loader);
      for (auto& n : o.needed_objects) fix(n);
    }
    for (auto& v : out_.search_list) fix(v);
    for (auto& b : out_.bindings) {
      fix(b.from);
      fix(b.to);
    }
    for (auto& u : out_.undefined) fix(u.from);
    for (auto& u : out_.unused) fix(u);
    for (auto& m : out_.missing_versions) {
      fix(m.from);
      fix(m.target);
    }
    for (auto& ip : out_.interposed)
      for (auto& d : ip.definers) fix(d);
    out_.objects = std::move(ordered);
    out_.index_bytes = index_.memory_bytes();
    out_.index_entries = index_.entries.size();
    for (auto& img : images_)
      if (img && img->mapped) out_.files.push_back(std::move(img->mapped));
    if (interpreter_image_ && interpreter_image_->mapped) out_.files.push_back(std::move(interpreter_image_->mapped));
  }

 private:
  static constexpr std::uint32_t interp_marker = no_object - 1;
  std::vector<loaded_object>& objects() { return objects_; }

  static std::pair<std::uint64_t, std::uint64_t> file_key(const object_image<ET>& img) {
    return {img.device, img.inode};
  }
  struct pair_hash {
    std::size_t operator()(const std::pair<std::uint64_t, std::uint64_t>& p) const noexcept {
      return std::hash<std::uint64_t>()(p.first * 0x9E3779B97F4A7C15ull ^ p.second);
    }
  };

  std::uint32_t add_object(loaded_object obj, std::unique_ptr<object_image<ET>> img, const std::string& path,
                           const std::string& cwd) {
    const std::uint32_t id = static_cast<std::uint32_t>(objects_.size());
    obj.path = path;
    search_objects_.push_back(std::make_unique<search_object>());
    search_object& so = *search_objects_.back();
    so.name = path;
    so.origin = origin_of(path, cwd);
    so.has_rpath = obj.has_rpath;
    so.has_runpath = obj.has_runpath;
    so.rpath = obj.rpath;
    so.runpath = obj.runpath;
    so.nodeflib = obj.nodeflib;
    so.is_main = obj.is_main;
    so.loader = obj.loader != no_object ? search_objects_[obj.loader].get() : nullptr;
    if (!path.empty()) by_name_.emplace(path, id);
    if (!obj.name.empty()) by_name_.emplace(obj.name, id);
    if (!obj.soname.empty()) by_name_.emplace(std::string(obj.soname), id);
    if (img->mapped) by_file_.emplace(file_key(*img), id);
    objects_.push_back(std::move(obj));
    images_.push_back(std::move(img));
    in_list_.push_back(0);
    if (objects_.size() == 1) append_to_list(0);
    return id;
  }

  void append_to_list(std::uint32_t id) {
    in_list_[id] = 1;
    bfs_.push_back(id);
  }

  std::uint32_t bring_in_interpreter() {
    // The interpreter becomes a real object the first time something needs it.
    if (interp_id_ != no_object) return interp_id_;
    loaded_object rtld = std::move(*interpreter_);
    auto img = std::move(interpreter_image_);
    const std::string path = rtld.path;
    interp_id_ = add_object(std::move(rtld), std::move(img), path, search_.options().cwd);
    for (auto& [k, v] : by_name_)
      if (v == interp_marker) v = interp_id_;
    for (auto& [k, v] : by_file_)
      if (v == interp_marker) v = interp_id_;
    return interp_id_;
  }

  std::uint32_t lookup_loaded(const std::string& name) {
    auto it = by_name_.find(name);
    if (it == by_name_.end()) return no_object;
    return it->second == interp_marker ? bring_in_interpreter() : it->second;
  }

  // _dl_map_object for `name` needed by `loader` (an object id).
  std::uint32_t map_object(const std::string& name, std::uint32_t loader) {
    if (std::uint32_t id = lookup_loaded(name); id != no_object) return id;
    found_library found = search_.find(name, search_objects_[loader].get(), *search_objects_[0]);
    loaded_object obj;
    obj.name = name;
    obj.loader = loader;
    obj.rejected = std::move(found.rejected);
    if (!found.found()) {
      // Trace mode: a placeholder that later requests of the same name find.
      obj.via = found_via::not_found;
      const std::uint32_t id = static_cast<std::uint32_t>(objects_.size());
      objects_.push_back(std::move(obj));
      images_.push_back(std::make_unique<object_image<ET>>());
      search_objects_.push_back(std::make_unique<search_object>());
      in_list_.push_back(0);
      by_name_.emplace(name, id);
      return id;
    }
    obj.via = found.via;
    obj.subdir = std::move(found.subdir);
    obj.where = std::move(found.where);
    obj.file = found.file;
    auto img = open_image<ET>(found.file, obj);
    if (img->mapped) {
      auto same = by_file_.find(file_key(*img));
      if (same != by_file_.end()) {
        const std::uint32_t id = same->second == interp_marker ? bring_in_interpreter() : same->second;
        by_name_.emplace(name, id);
        return id;
      }
    }
    return add_object(std::move(obj), std::move(img), found.path, search_.options().cwd);
  }

  void build_index() {
    const auto& list = out_.search_list;
    scope_pos_.assign(objects_.size(), no_object);
    // Size everything on the definitions that can match (undefined symbols are
    // most of many .dynsym tables).
    std::size_t total = 0;
    for (std::uint32_t pos = 0; pos < list.size(); ++pos) {
      scope_pos_[list[pos]] = pos;
      const auto& img = *images_[list[pos]];
      for (std::size_t i = 1; i < img.dynsym.size(); ++i) {
        const Sym s = img.dynsym[i];
        total += (s.st_value != 0 || static_cast<u32>(s.st_shndx) == elf::SHN_ABS || (s.st_info & 0xf) == elf::STT_TLS);
      }
    }
    index_.reserve(total);
    struct pending {
      std::uint32_t group, object, symidx, hash;
      std::string_view name;
    };
    std::vector<pending> all;
    reserve_populated(all, total);
    // Pass 1: names and hashes. Names are scattered over each .dynstr (string
    // table order is not symbol order): fetch the name a few symbols ahead.
    constexpr std::size_t ahead = 8;
    for (std::uint32_t pos = 0; pos < list.size(); ++pos) {
      const auto& img = *images_[list[pos]];
      const std::size_t n = img.dynsym.size();
      for (std::size_t i = 1; i < n; ++i) {
        if (i + ahead < n) {
          const u32 at = img.dynsym[i + ahead].st_name;
          if (at < img.dynstr.size()) prefetch(img.dynstr.data() + at);
        }
        const Sym s = img.dynsym[i];
        const unsigned stt = s.st_info & 0xf;
        const u64 value = s.st_value;
        const u32 shndx = s.st_shndx;
        if (value == 0 && shndx != elf::SHN_ABS && stt != elf::STT_TLS) continue;
        if (((1u << stt) & allowed_stt) == 0) continue;
        const std::string_view name = img.name_of(s);
        if (name.empty()) continue;
        all.push_back({0, pos, static_cast<std::uint32_t>(i), index_hash(name), name});
      }
    }
    // Pass 2: insert in scope order, fetching the home slot a few entries ahead.
    for (std::size_t k = 0; k < all.size(); ++k) {
      if (k + ahead < all.size()) prefetch(&index_.slots[index_.home(all[k + ahead].hash)]);
      all[k].group = index_.insert(all[k].name, all[k].hash);
    }
    const std::size_t groups = index_.group_name.size();
    index_.group_start.assign(groups + 1, 0);
    for (const auto& p : all) ++index_.group_start[p.group + 1];
    for (std::size_t g = 0; g < groups; ++g) index_.group_start[g + 1] += index_.group_start[g];
    std::vector<std::uint32_t> fill(index_.group_start.begin(), index_.group_start.end() - 1);
    reserve_populated(index_.entries, all.size());
    index_.entries.resize(all.size());
    for (const auto& p : all) index_.entries[fill[p.group]++] = {p.object, p.symidx};
  }

  static constexpr unsigned allowed_stt = (1u << 0) | (1u << 1) | (1u << 2) | (1u << 5) | (1u << 6) | (1u << 10);

  struct found_def {
    std::uint32_t object = no_object;  // object id
    std::uint32_t symidx = 0;
  };

  // check_match for one candidate; returns 1 match, 0 no, and counts versioned.
  int check_match(const object_image<ET>& def, std::uint32_t symidx, const version_entry* want, int type_class,
                  std::uint32_t& num_versions, std::uint32_t& versioned) const {
    const Sym s = def.dynsym[symidx];
    if ((type_class & 1) && static_cast<u32>(s.st_shndx) == elf::SHN_UNDEF) return 0;
    if (def.versym == nullptr) return 1;
    const std::uint16_t raw = def.versym_at(symidx);
    const std::uint16_t ndx = raw & 0x7fff;
    if (want != nullptr) {
      const version_entry* have = ndx < def.versions.size() ? &def.versions[ndx] : nullptr;
      const bool same = have != nullptr && have->hash == want->hash && have->name == want->name;
      const std::uint32_t have_hash = have != nullptr ? have->hash : 0;
      if (!same && (want->hidden || have_hash != 0 || (raw & 0x8000))) return 0;
      return 1;
    }
    if (ndx >= 3) {
      if ((raw & 0x8000) == 0 && num_versions++ == 0) versioned = symidx;
      return 0;
    }
    return 1;
  }

  // Search the definitions of object `obj` (candidates [b, e) of the group) like
  // do_lookup_x does for one map. Returns the symidx or 0.
  std::uint32_t match_in_object(const definition_index::entry* b, const definition_index::entry* e,
                                const version_entry* want, int type_class) const {
    const auto& img = *images_[out_.search_list[b->object]];
    std::uint32_t num_versions = 0, versioned = 0;
    for (const auto* c = b; c != e; ++c)
      if (check_match(img, c->symidx, want, type_class, num_versions, versioned)) return c->symidx;
    return num_versions == 1 ? versioned : 0;
  }

  // _dl_lookup_symbol_x over [self (if symbolic)] + global scope.
  // Returns the defining object id, or no_object.
  found_def lookup(std::string_view name, std::uint32_t hash, const version_entry* want, int type_class,
                   std::uint32_t self, bool symbolic) {
    ++out_.lookups;
    const std::uint32_t g = index_.find(name, hash);
    if (g == no_object) return {};
    const auto* first = index_.entries.data() + index_.group_start[g];
    const auto* last = index_.entries.data() + index_.group_start[g + 1];
    auto scan = [&](std::uint32_t only_pos, found_def& result) -> bool {
      for (const auto* c = first; c != last;) {
        const auto* end = c;
        while (end != last && end->object == c->object) ++end;
        const std::uint32_t pos = c->object;
        const std::uint32_t id = out_.search_list[pos];
        if ((only_pos == no_object || pos == only_pos) && !((type_class & 2) && objects_[id].is_main)) {
          const std::uint32_t symidx = match_in_object(c, end, want, type_class);
          if (symidx != 0) {
            const Sym s = images_[id]->dynsym[symidx];
            const unsigned vis = s.st_other & 3;
            const unsigned bind = s.st_info >> 4;
            if (vis != elf::STV_HIDDEN && vis != elf::STV_INTERNAL) {
              if (bind == elf::STB_GLOBAL || bind == elf::STB_WEAK) {
                result = {id, symidx};
                return true;
              }
              if (bind == elf::STB_GNU_UNIQUE) {
                auto [it, fresh] = unique_.emplace(name, found_def{id, symidx});
                result = (type_class & 2) ? found_def{id, symidx} : it->second;
                (void)fresh;
                return true;
              }
            }
          }
        }
        c = end;
      }
      return false;
    };
    found_def result;
    if (symbolic && scope_pos_[self] != no_object && scan(scope_pos_[self], result)) return result;
    if (scan(no_object, result)) return result;
    return {};
  }

  void relocate(std::uint32_t id, std::uint32_t pos, bool) {
    (void)pos;
    auto& img = *images_[id];
    const auto& d = img.dyn;
    const bool symbolic = objects_[id].symbolic;
    // Which (symidx, class) pairs were already looked up: the result is the same.
    std::vector<std::uint8_t> done(img.dynsym.size(), 0);
    // Three passes so that the cache misses overlap: collect the (symbol,
    // class) pairs to look up in relocation order; then their names and
    // hashes (names are scattered over .dynstr); then the lookups, fetching
    // the index slot a few references ahead.
    refs_.clear();
    auto handle = [&](u64 info) {
      const u32 type = ET::r_type(static_cast<typename ET::uword>(info));
      const u32 symidx = ET::r_sym(static_cast<typename ET::uword>(info));
      if (symidx == 0) return;
      const int type_class = reloc_type_class(machine_, type);
      if (type_class < 0) return;
      ++out_.relocations;
      if (symidx >= img.dynsym.size()) {
        objects_[id].warnings.push_back("relocation names a symbol past the end of .dynsym");
        return;
      }
      const std::uint8_t bit = static_cast<std::uint8_t>(1u << type_class);
      if (done[symidx] & bit) return;
      done[symidx] |= bit;
      const Sym ref = img.dynsym[symidx];
      const unsigned bind = ref.st_info >> 4;
      const unsigned vis = ref.st_other & 3;
      if (bind == elf::STB_LOCAL || vis == elf::STV_HIDDEN || vis == elf::STV_INTERNAL) return;
      refs_.push_back({symidx, static_cast<std::uint32_t>(type_class), 0, {}});
    };
    auto bind_all = [&] {
      constexpr std::size_t ahead = 8;
      const std::size_t n = refs_.size();
      for (std::size_t k = 0; k < n; ++k) {
        if (k + ahead < n) {
          const u32 at = img.dynsym[refs_[k + ahead].symidx].st_name;
          if (at < img.dynstr.size()) prefetch(img.dynstr.data() + at);
        }
        reference& r = refs_[k];
        r.name = img.name_of(img.dynsym[r.symidx]);
        r.hash = index_hash(r.name);
      }
      for (std::size_t k = 0; k < n; ++k) {
        if (k + ahead < n) index_.prefetch(refs_[k + ahead].hash);
        const reference& r = refs_[k];
        const u32 symidx = r.symidx;
        const int type_class = static_cast<int>(r.type_class);
        const Sym ref = img.dynsym[symidx];
        const unsigned bind = ref.st_info >> 4;
        const unsigned vis = ref.st_other & 3;
        const std::string_view name = r.name;
        const version_entry* want = nullptr;
        if (img.versym != nullptr) {
          const std::uint16_t ndx = img.versym_at(symidx) & 0x7fff;
          if (ndx < img.versions.size() && img.versions[ndx].hash != 0) want = &img.versions[ndx];
        }
        found_def def = lookup(name, r.hash, want, type_class, id, symbolic);
        if (def.object == no_object) {
          if (bind != elf::STB_WEAK) out_.undefined.push_back({id, name, want ? want->name : std::string_view{}});
          continue;
        }
        bool is_protected = false;
        if (vis == elf::STV_PROTECTED) {
          is_protected = true;
          if (type_class == 1) {
            if (def.object != id) def = {id, symidx};
          } else {
            found_def plt = lookup(name, r.hash, want, 1, id, symbolic);
            if (plt.object != no_object && plt.object != id) def = {id, symidx};
          }
        }
        symbol_binding b{id, def.object, name, want ? want->name : std::string_view{}, is_protected};
        out_.bindings.push_back(b);
        if (objects_[id].is_main) main_bindings_.push_back(b);
      }
    };
    auto run = [&](const result<elf::dynamic_table>& table, bool rela) {
      if (!table) {
        objects_[id].warnings.push_back(std::string("relocations: ") + table.error().message);
        return;
      }
      if (!table->present) return;
      const unsigned char* base = img.elf.bytes().data() + table->offset;
      const std::size_t count = table->size / table->entsize;
      // Most entries of a big DSO are R_*_RELATIVE (symbol 0): skip them here,
      // without a call (2.3M of op_registration_test's 2.5M relocations).
      const std::size_t stride = table->entsize;
      for (std::size_t i = 0; i < count; ++i) {
        u64 info;
        if (rela) {
          typename ET::Rela r;
          std::memcpy(&r, base + i * stride, sizeof r);
          info = r.r_info;
        } else {
          typename ET::Rel r;
          std::memcpy(&r, base + i * stride, sizeof r);
          info = r.r_info;
        }
        if (ET::r_sym(static_cast<typename ET::uword>(info)) == 0) continue;
        handle(info);
      }
    };
    run(d.rela_table(), true);
    run(d.rel_table(), false);
    bool jmprel_rela = true;
    auto jmprel = d.jmprel_table(jmprel_rela);
    run(jmprel, jmprel_rela);
    bind_all();
  }

  struct reference {
    std::uint32_t symidx, type_class, hash;
    std::string_view name;
  };
  std::vector<reference> refs_;

  void find_missing_versions() {
    for (std::uint32_t id : out_.search_list) {
      const auto& img = *images_[id];
      for (const auto& v : img.versions) {
        if (v.filename.empty() || v.hash == 0) continue;
        const std::uint32_t target = lookup_loaded(std::string(v.filename));
        if (target == no_object || !objects_[target].found()) continue;  // missing lib reported already
        bool have = false;
        for (const auto& dv : images_[target]->defined_versions)
          have = have || (dv.hash == v.hash && dv.name == v.name);
        if (!have && images_[target]->ok) out_.missing_versions.push_back({id, target, v.filename, v.name, v.weak});
      }
    }
  }

  void find_interposed() {
    const std::size_t groups = index_.group_name.size();
    for (std::size_t g = 0; g < groups; ++g) {
      const auto* first = index_.entries.data() + index_.group_start[g];
      const auto* last = index_.entries.data() + index_.group_start[g + 1];
      if (last - first < 2) continue;
      interposition ip;
      ip.symbol = index_.group_name[g];
      for (const auto* c = first; c != last; ++c) {
        const std::uint32_t id = out_.search_list[c->object];
        const Sym s = images_[id]->dynsym[c->symidx];
        const unsigned bind = s.st_info >> 4;
        const unsigned vis = s.st_other & 3;
        if (static_cast<u32>(s.st_shndx) == elf::SHN_UNDEF) continue;
        if (bind != elf::STB_GLOBAL && bind != elf::STB_WEAK && bind != elf::STB_GNU_UNIQUE) continue;
        if (vis == elf::STV_HIDDEN || vis == elf::STV_INTERNAL) continue;
        if (images_[id]->versym != nullptr && (images_[id]->versym_at(c->symidx) & 0x8000)) continue;
        if (ip.definers.empty() || ip.definers.back() != id) ip.definers.push_back(id);
      }
      if (ip.definers.size() > 1) out_.interposed.push_back(std::move(ip));
    }
  }

  const dynamic_options& options_;
  dynamic_link& out_;
  library_search search_;
  std::vector<loaded_object> objects_;
  std::vector<std::unique_ptr<object_image<ET>>> images_;
  std::vector<std::unique_ptr<search_object>> search_objects_;
  std::vector<char> in_list_;
  std::vector<std::uint32_t> bfs_;
  std::vector<std::uint32_t> load_order_;
  std::unordered_map<std::string, std::uint32_t> by_name_;
  std::unordered_map<std::pair<std::uint64_t, std::uint64_t>, std::uint32_t, pair_hash> by_file_;
  std::optional<loaded_object> interpreter_;
  std::unique_ptr<object_image<ET>> interpreter_image_;
  std::string interpreter_path_;
  std::uint32_t interp_id_ = no_object;
  std::uint16_t machine_ = 0;
  definition_index index_;
  std::vector<std::uint32_t> scope_pos_;
  std::unordered_map<std::string_view, found_def> unique_;
  std::vector<symbol_binding> main_bindings_;
};

template <class ET>
result<void> link_with(const std::string& program, const dynamic_options& options, dynamic_link& out) {
  loaded_object main;
  main.name = program;
  main.file = options.search.root.empty() || program.empty() || program[0] != '/' ? program
                                                                                  : options.search.root + program;
  auto img = open_image<ET>(main.file, main);
  if (!img->ok) {
    if (!img->mapped) return make_error(errc::not_found, no_offset, "cannot read the program");
    auto f = elf::file<ET>::open(img->mapped->bytes());
    if (!f) return f.error();
    auto d = elf::dynamic_info<ET>::read(*f);
    if (!d) return d.error();
  }
  dynamic_options opts = options;
  opts.search.target.elf_class = ET::is64 ? 2 : 1;
  opts.search.target.elf_data = ET::endianness == std::endian::little ? 1 : 2;
  opts.search.target.machine = img->elf.machine();
  linker<ET> l(opts, out);
  l.load(program, std::move(img), std::move(main));
  l.check_versions();
  if (options.bindings) l.resolve();
  l.finish();
  return ok();
}

}  // namespace detail

// Emulate ld.so for `program` (spelled as on ld.so's command line; ldd adds "./"
// to a bare name). Errors are only for an unreadable or non-ELF program; every
// problem further down the closure is recorded on the objects and in warnings.
template <class D = void>
result<dynamic_link> link_dynamic(linkscope::detail::deferred<std::string, D> program, const dynamic_options& options = {}) {
  if (program.find('/') == std::string::npos) program = "./" + program;
  const std::string file = options.search.root.empty() || program[0] != '/' ? program : options.search.root + program;
  auto mapped = mapped_file::open(file);
  if (!mapped) return mapped.error();
  auto kind = elf::identify_elf(mapped->bytes());
  if (!kind) return kind.error();
  dynamic_link out;
  result<void> r = ok();
  if (kind->is64)
    r = kind->big_endian ? detail::link_with<linkscope::detail::deferred<elf::elf64be, D>>(program, options, out)
                         : detail::link_with<linkscope::detail::deferred<elf::elf64le, D>>(program, options, out);
  else
    r = kind->big_endian ? detail::link_with<linkscope::detail::deferred<elf::elf32be, D>>(program, options, out)
                         : detail::link_with<linkscope::detail::deferred<elf::elf32le, D>>(program, options, out);
  if (!r) return r.error();
  return out;
}

}  // namespace resolve
}  // namespace v0
}  // namespace linkscope
