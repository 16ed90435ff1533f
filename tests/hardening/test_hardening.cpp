// Hardening: every parser against hostile input.
//
//  - truncation sweep: every prefix of every fixture (a stride for big ones)
//    through every parser gives a value or an error (the suite runs under
//    ASan/UBSan in scripts/test-all, so an out-of-bounds read fails it);
//  - byte-flip sweep over the header fields of every fixture;
//  - bounded allocation: tiny files whose headers claim 2^32 symbols,
//    members, sections or verdefs get an error without a large allocation,
//    measured with the counting operator new below (this is its own program);
//  - over 4 GiB: sparse archives (/SYM64/ and __.SYMDEF_64) whose member lies
//    past 4 GiB and an ELF whose sections lie past 4 GiB, compared with nm/ar;
//  - hostile layouts: cyclic DT_NEEDED, symlink loops in search paths, thin
//    archive member paths that are absolute or climb with "..", a 10k-object
//    closure and a 1M-member archive checked by operation counts.
//
// Fixtures: the seed corpora that scripts/fuzz-seeds makes with the toolchain
// (fuzz/corpus/...), the fuzz regression inputs, and files generated here.
#include <catch2/catch.hpp>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <initializer_list>
#include <new>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "linkscope/ar/archive.hpp"
#include "linkscope/ar/armap.hpp"
#include "linkscope/coff/import.hpp"
#include "linkscope/coff/object.hpp"
#include "linkscope/coff/pe.hpp"
#include "linkscope/core/mapped_file.hpp"
#include "linkscope/elf/dynamic.hpp"
#include "linkscope/elf/file.hpp"
#include "linkscope/elf/hash_table.hpp"
#include "linkscope/elf/relocations.hpp"
#include "linkscope/elf/source.hpp"
#include "linkscope/elf/symbols.hpp"
#include "linkscope/elf/versions.hpp"
#include "linkscope/resolve/dynamic.hpp"
#include "linkscope/resolve/ld_so_cache.hpp"
#include "linkscope/resolve/link_line.hpp"
#include "linkscope/resolve/static.hpp"
#include "linkscope/symbols/index.hpp"
#include "linkscope/symbols/table.hpp"
#include "support/fixtures.hpp"

// ---------------------------------------------------------------------------
// Counting allocator (this test program only). The replacements allocate with
// malloc and free with free; g++ 12 at -O2 inlines them and, still treating
// operator new/delete as the builtins, warns that free() is called on memory
// from operator new (-Wmismatched-new-delete). That pairing is exactly what a
// replacement defines, so the warning is silenced for this file.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif
namespace alloc_count {
std::atomic<std::size_t> total{0};    // bytes requested since reset()
std::atomic<std::size_t> largest{0};  // largest single request since reset()
void reset() {
  total = 0;
  largest = 0;
}
void note(std::size_t n) {
  total += n;
  std::size_t prev = largest.load();
  while (n > prev && !largest.compare_exchange_weak(prev, n)) {
  }
}
}  // namespace alloc_count

void* operator new(std::size_t n) {
  alloc_count::note(n);
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t n) {
  alloc_count::note(n);
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
// Every replaceable form, so that no allocation reaches the sanitizer's own
// operator new and is then freed here (ASan reports that as a mismatch).
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  alloc_count::note(n);
  return std::malloc(n == 0 ? 1 : n);
}
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept {
  alloc_count::note(n);
  return std::malloc(n == 0 ? 1 : n);
}
void* operator new(std::size_t n, std::align_val_t a) {
  alloc_count::note(n);
  const std::size_t al = static_cast<std::size_t>(a);
  if (void* p = std::aligned_alloc(al, (n + al - 1) / al * al)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t n, std::align_val_t a) { return operator new(n, a); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }

using namespace linkscope;
using namespace linkscope_test;
namespace fs = std::filesystem;

namespace {

// Reads every byte of every name a parser hands out.
struct sink_t {
  std::uint64_t h = 0;
  void operator()(std::string_view s) {
    for (char c : s) h = h * 31 + static_cast<unsigned char>(c);
    h += s.size();
  }
  void operator()(std::uint64_t v) { h = h * 31 + v; }
};

// Run every parser over `bytes`; returns how many results were values.
std::size_t exercise(byte_view bytes, sink_t& sink) {
  std::size_t values = 0;
  auto note = [&](bool ok) { values += ok ? 1 : 0; };
  // ar
  if (auto a = ar::archive::open(bytes)) {
    ++values;
    for (const auto& m : a->members()) {
      if (!m) break;
      sink(m->name);
      sink(m->data.chars());
      if (m->external) note(static_cast<bool>(ar::thin_member_path("/x/lib.a", *m, {true})));
    }
    if (auto map = ar::armap::read(*a)) {
      std::size_t followed = 0;
      note(static_cast<bool>(map->for_each([&](const ar::armap_entry& e) {
        sink(e.name);
        if (followed++ < 16) note(static_cast<bool>(a->member_at(e.member_offset)));
      })));
    }
    auto lib = coff::import_library::from_archive(*a);
    if (lib)
      for (const auto& r : lib->records()) sink(r.dll), sink(r.symbol);
  }
  // ELF, every reader
  auto r = elf::visit_elf(bytes, [&](const auto& f) -> result<void> {
    using ET = typename std::decay_t<decltype(f)>::types;
    for (const auto& sh : f.section_headers())
      if (auto n = f.section_name(sh)) sink(*n);
    LINKSCOPE_TRY(dyn, elf::dynamic_info<ET>::read(f));
    note(static_cast<bool>(dyn.for_each_needed([&](std::string_view n) { sink(n); })));
    if (auto s = dyn.soname()) sink(*s);
    if (auto s = dyn.runpath()) sink(*s);
    if (auto symtab = elf::read_symtab(f))
      for (std::size_t i = 0; i < symtab->size(); ++i)
        if (auto n = symtab->name(i)) sink(*n);
    auto dynsym = elf::read_dynsym(f, dyn);
    if (!dynsym) return dynsym.error();
    auto versions = elf::version_tables<ET>::read(f, dyn, dynsym->size());
    elf::version_tables<ET> none;
    const auto& v = versions ? *versions : none;
    for (std::size_t i = 0; i < dynsym->size(); ++i) {
      auto n = dynsym->name(i);
      if (!n) continue;
      sink(*n);
      if (auto ver = v.of(i, *n, true)) sink(ver->name);
    }
    if (auto table = elf::hash_table<ET>::open(dyn, *dynsym, v)) {
      for (std::size_t i = 0; i < dynsym->size() && i < 64; ++i)
        if (auto n = dynsym->name(i)) note(static_cast<bool>(table->lookup(*n)));
    }
    note(static_cast<bool>(elf::for_each_dynamic_relocation(
        dyn, [&](const elf::dynamic_relocation& rel) { sink(rel.offset); }, dynsym->size(), true)));
    return {};
  });
  note(static_cast<bool>(r));
  for (auto which : {elf::symbol_table_kind::dynamic, elf::symbol_table_kind::static_})
    note(static_cast<bool>(elf::symbols_source(bytes, which).for_each_symbol([&](const symbol& s) {
      sink(s.name);
      sink(s.version);
    })));
  // COFF object, import member, PE image
  if (auto obj = coff::object::parse(bytes)) {
    ++values;
    note(static_cast<bool>(obj->for_each_section([&](const coff::section& s) { sink(s.name); })));
    note(static_cast<bool>(obj->for_each_entry([&](const coff::symbol_entry& e) {
      sink(e.name);
      if (auto c = obj->nm_letter(e)) sink(static_cast<std::uint64_t>(*c));
    })));
  }
  if (auto imp = coff::parse_short_import(bytes)) {
    ++values;
    sink(imp->dll);
    sink(imp->symbol);
  }
  if (auto img = pe::image::parse(bytes)) {
    ++values;
    if (auto ex = img->exports())
      for (const auto& e : *ex) sink(e.name), sink(e.forwarder);
    if (auto im = img->imports())
      for (const auto& d : *im) {
        sink(d.name);
        for (const auto& fn : d.functions) sink(fn.name);
      }
    if (auto im = img->delay_imports())
      for (const auto& d : *im) sink(d.name);
  }
  // ld.so.cache
  if (auto cache = resolve::ld_so_cache::parse(bytes)) {
    ++values;
    for (const auto& e : *cache) sink(e.name), sink(e.path), sink(cache->lookup(e.name));
  }
  return values;
}

// Parse from an exactly-sized heap copy, so that ASan flags a read one byte
// past the end (a view into a bigger buffer would hide it).
std::size_t exercise_copy(const unsigned char* data, std::size_t size, sink_t& sink) {
  std::unique_ptr<unsigned char[]> copy(new unsigned char[size == 0 ? 1 : size]);
  if (size > 0) std::memcpy(copy.get(), data, size);
  return exercise(byte_view(copy.get(), size), sink);
}

std::string fixture_dir() {
  static const std::string dir = [] {
    std::string d = scratch_dir("hardening-fixtures");
    write_file(d + "/a.c", "int a_data = 1; extern int b(int); int a_func(int x) { return b(x) + a_data; }\n");
    write_file(d + "/fresh.map", "V1 { global: a_func; local: *; };\nV2 { global: a_data; } V1;\n");
    run_in(d, "gcc -O1 -c a.c -o a.o && ar rcs fresh.a a.o && gcc -O1 -fPIC -c a.c -o a_pic.o && "
              "ld.lld-14 -shared -nostdlib --hash-style=both --version-script=fresh.map -soname libfresh.so "
              "a_pic.o -o libfresh.so");
    return d;
  }();
  return dir;
}

// Every fixture: the committed seeds, the regressions and fresh files.
std::vector<std::string> fixtures() {
  std::vector<std::string> out;
  for (const char* sub : {"fuzz/corpus", "fuzz/regressions"}) {
    fs::path root = fs::path(LINKSCOPE_SOURCE_DIR) / sub;
    std::error_code ec;
    for (fs::recursive_directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec))
      if (it->is_regular_file()) out.push_back(it->path().string());
  }
  for (const char* f : {"a.o", "fresh.a", "libfresh.so"})
    if (fs::exists(fixture_dir() + "/" + f)) out.push_back(fixture_dir() + "/" + f);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

TEST_CASE("every parser gives a value or an error for every prefix of every fixture", "[hardening][truncation]") {
  const auto files = fixtures();
  REQUIRE(files.size() >= 20);
  sink_t sink;
  std::size_t runs = 0, full_values = 0;
  for (const std::string& path : files) {
    const std::string bytes = read_file(path);
    const auto* data = reinterpret_cast<const unsigned char*>(bytes.data());
    const std::size_t stride = bytes.size() > 4096 ? bytes.size() / 2048 : 1;
    for (std::size_t len = 0; len < bytes.size(); len += stride) {
      exercise_copy(data, len, sink);
      ++runs;
    }
    // The whole file is recognised by at least one parser (a test that can fail).
    const std::size_t values = exercise_copy(data, bytes.size(), sink);
    // Text seeds (link lines, conda-meta JSON) and Mach-O seeds have no binary
    // parser in this sweep; tests/macho and tests/resolve sweep their own.
    // Mach-O seeds: the macho_* corpora (bind streams, export tries) and any file
    // with a Mach-O magic (fuzz/corpus/dyld_link too).
    const bool macho = bytes.size() >= 4 && [&] {
      const std::uint32_t le = std::uint32_t(data[0]) | std::uint32_t(data[1]) << 8 | std::uint32_t(data[2]) << 16 |
                               std::uint32_t(data[3]) << 24;
      const std::uint32_t be = std::uint32_t(data[3]) | std::uint32_t(data[2]) << 8 | std::uint32_t(data[1]) << 16 |
                               std::uint32_t(data[0]) << 24;
      for (std::uint32_t magic : {0xfeedfaceu, 0xfeedfacfu, 0xcafebabeu, 0xcafebabfu})
        if (le == magic || be == magic) return true;
      return false;
    }();
    if (path.find("/regressions/") == std::string::npos && path.find("link_line") == std::string::npos &&
        path.find("conda_meta") == std::string::npos && path.find("/macho") == std::string::npos && !macho &&
        path.find("/tbd") == std::string::npos) {
      INFO(path);
      CHECK(values > 0);
    }
    full_values += values;
  }
  INFO("prefixes parsed: " << runs);
  CHECK(runs > 10000);
  CHECK(full_values > files.size());
}

TEST_CASE("byte flips over the header fields of every fixture", "[hardening][mutation]") {
  const auto files = fixtures();
  sink_t sink;
  std::size_t runs = 0;
  for (const std::string& path : files) {
    std::string bytes = read_file(path);
    // The header region: the first 320 bytes (ELF/COFF/PE/ar/cache headers
    // and the first member headers), plus the ELF section header table.
    std::vector<std::pair<std::size_t, std::size_t>> regions = {{0, std::min<std::size_t>(bytes.size(), 320)}};
    if (bytes.size() >= 64 && std::memcmp(bytes.data(), "\x7f" "ELF\x02\x01", 6) == 0) {
      std::uint64_t shoff = 0;
      std::uint16_t shnum = 0;
      std::memcpy(&shoff, bytes.data() + 0x28, 8);
      std::memcpy(&shnum, bytes.data() + 0x3c, 2);
      if (shoff < bytes.size()) regions.push_back({shoff, std::min<std::size_t>(bytes.size(), shoff + 64u * shnum)});
    }
    for (auto [begin, end] : regions) {
      for (std::size_t at = begin; at < end; ++at) {
        const char saved = bytes[at];
        for (unsigned char value : {std::uint8_t{0}, std::uint8_t{0xff}, std::uint8_t(saved ^ 0x80),
                                    std::uint8_t(saved + 1)}) {
          bytes[at] = static_cast<char>(value);
          exercise_copy(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(), sink);
          ++runs;
        }
        bytes[at] = saved;
      }
    }
  }
  INFO("mutants parsed: " << runs);
  CHECK(runs > 20000);
}

// ---------------------------------------------------------------------------
// Bounded allocation.

namespace {
void put16(std::string& s, std::size_t at, std::uint16_t v) { std::memcpy(&s[at], &v, 2); }
void put32(std::string& s, std::size_t at, std::uint32_t v) { std::memcpy(&s[at], &v, 4); }
void put64(std::string& s, std::size_t at, std::uint64_t v) { std::memcpy(&s[at], &v, 8); }
void put32be(std::string& s, std::size_t at, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) s[at + i] = static_cast<char>(v >> (24 - 8 * i));
}
void put64be(std::string& s, std::size_t at, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) s[at + i] = static_cast<char>(v >> (56 - 8 * i));
}
std::string ar_header(const std::string& name, std::uint64_t size) {
  std::string h = name;
  h.resize(16, ' ');
  h += "0           0     0     644     ";
  std::string sz = std::to_string(size);
  sz.resize(10, ' ');
  return h + sz + "`\n";
}

// Parse `bytes` with `f` and require an error and no allocation above 1 MiB
// in all (the claimed counts would need gigabytes).
template <class F>
void require_bounded(const std::string& what, const std::string& bytes, F&& f, bool expect_error = true) {
  INFO(what);
  std::unique_ptr<unsigned char[]> copy(new unsigned char[bytes.size()]);
  std::memcpy(copy.get(), bytes.data(), bytes.size());
  alloc_count::reset();
  const bool ok = f(byte_view(copy.get(), bytes.size()));
  const std::size_t total = alloc_count::total, largest = alloc_count::largest;
  INFO("allocated " << total << " bytes, largest " << largest);
  if (expect_error) CHECK_FALSE(ok);
  CHECK(largest < (std::size_t{1} << 20));
  CHECK(total < (std::size_t{4} << 20));
}
}  // namespace

TEST_CASE("headers that claim 2^32 entries get an error without a large allocation", "[hardening][alloc]") {
  // Sanity: the counter sees allocations.
  alloc_count::reset();
  { std::vector<char> v(12345); }
  REQUIRE(alloc_count::largest >= 12345u);

  // Open the archive and walk its whole armap.
  auto read_armap = [](byte_view b) {
    auto arch = ar::archive::open(b);
    if (!arch) return false;
    auto map = ar::armap::read(*arch);
    return map && static_cast<bool>(map->for_each([](const ar::armap_entry&) {}));
  };
  // GNU "/" armap claiming 2^32-1 symbols in a 100-byte table.
  {
    std::string a = cat({"!<arch>\n", ar_header("/", 16)});
    std::string table(16, '\0');
    put32be(table, 0, 0xffffffffu);
    a += table;
    require_bounded("gnu32 armap count", a, read_armap);
  }
  // /SYM64/ claiming 2^62 symbols.
  {
    std::string a = cat({"!<arch>\n", ar_header("/SYM64/", 16)});
    std::string table(16, '\0');
    put64be(table, 0, std::uint64_t{1} << 62);
    a += table;
    require_bounded("gnu64 armap count", a, read_armap);
  }
  // BSD __.SYMDEF whose ranlib size claims 2^32-8 bytes.
  {
    std::string a = cat({"!<arch>\n", ar_header("__.SYMDEF", 16)});
    std::string table(16, '\0');
    put32(table, 0, 0xfffffff8u);
    a += table;
    require_bounded("bsd32 ranlib size", a, read_armap);
  }
  // A member whose size field claims 9,999,999,999 bytes.
  {
    std::string a = cat({"!<arch>\n", ar_header("x.o/", 9999999999ull), "abcd"});
    require_bounded("member size", a, [](byte_view b) {
      auto arch = ar::archive::open(b);
      if (!arch) return false;
      auto lib = coff::import_library::from_archive(*arch);
      return static_cast<bool>(arch->for_each_member([](const ar::member&) {})) && static_cast<bool>(lib);
    });
  }
  const std::string so = read_file(fixture_dir() + "/libfresh.so");
  REQUIRE(so.size() > 64);
  // ELF: extended section count 2^32-1 (e_shnum = 0, section 0's sh_size).
  {
    std::string e = so;
    std::uint64_t shoff = 0;
    std::memcpy(&shoff, e.data() + 0x28, 8);
    REQUIRE(shoff + 64 <= e.size());
    put16(e, 0x3c, 0);
    put64(e, shoff + 0x20, 0xffffffffull);
    require_bounded("ELF e_shnum = 0, sh_size = 2^32-1", e, [](byte_view b) {
      return static_cast<bool>(elf::visit_elf(b, [](const auto&) -> result<void> { return {}; }));
    });
  }
  // ELF: e_phnum = PN_XNUM with sh_info = 2^32-1.
  {
    std::string e = so;
    std::uint64_t shoff = 0;
    std::memcpy(&shoff, e.data() + 0x28, 8);
    put16(e, 0x38, 0xffff);
    put32(e, shoff + 0x2c, 0xffffffffu);
    require_bounded("ELF PN_XNUM with sh_info = 2^32-1", e, [](byte_view b) {
      return static_cast<bool>(elf::visit_elf(b, [](const auto&) -> result<void> { return {}; }));
    });
  }
  // ELF without section headers (ld.so's view): DT_HASH nchain = 2^32-1, and
  // separately DT_VERDEFNUM = 2^32-1 (written over the DT_GNU_HASH entry, so
  // that the symbol count comes from DT_HASH).
  {
    std::string e = so;
    put64(e, 0x28, 0);  // e_shoff
    put16(e, 0x3c, 0);
    put16(e, 0x3e, 0);
    std::uint64_t hash_at = 0, gnu_hash_entry = 0;
    {
      auto f = elf::file<elf::elf64le>::open(byte_view(reinterpret_cast<const unsigned char*>(e.data()), e.size()));
      REQUIRE(f);
      auto dyn = elf::dynamic_info<elf::elf64le>::read(*f);
      REQUIRE(dyn);
      REQUIRE(dyn->hash());
      REQUIRE(dyn->gnu_hash());
      auto off = dyn->offset_of(dyn->hash(), 8);
      REQUIRE(off);
      hash_at = *off;
      gnu_hash_entry = dyn->gnu_hash().at;
    }
    auto read_all = [](byte_view b) {
      return static_cast<bool>(elf::visit_elf(b, [](const auto& f) -> result<void> {
        using ET = typename std::decay_t<decltype(f)>::types;
        LINKSCOPE_TRY(dyn, elf::dynamic_info<ET>::read(f));
        LINKSCOPE_TRY(dynsym, elf::read_dynsym_from_dynamic(dyn));
        LINKSCOPE_TRY(versions, elf::version_tables<ET>::read(f, dyn, dynsym.size()));
        (void)versions;
        return {};
      }));
    };
    std::string nchain = e;
    put32(nchain, hash_at + 4, 0xffffffffu);
    require_bounded("dynsym count from DT_HASH nchain = 2^32-1", nchain, read_all);
    std::string verdefnum = e;
    put64(verdefnum, gnu_hash_entry, 0x6ffffffd);  // DT_VERDEFNUM
    put64(verdefnum, gnu_hash_entry + 8, 0xffffffffull);
    require_bounded("DT_VERDEFNUM = 2^32-1", verdefnum, read_all, false);
    std::string verdef_sections = so;  // with section headers: the .gnu.version_d sh_info
    bool patched = false;
    {
      auto f = elf::file<elf::elf64le>::open(byte_view(reinterpret_cast<const unsigned char*>(so.data()), so.size()));
      REQUIRE(f);
      if (auto found = f->find_section(elf::SHT_GNU_verdef)) {
        put32(verdef_sections, f->section_header_offset(found->first) + 0x2c, 0xffffffffu);
        patched = true;
      }
    }
    if (patched) require_bounded("verdef sh_info = 2^32-1", verdef_sections, read_all, false);
  }
  // COFF object: 65535 sections and 2^32-1 symbols in 40 bytes.
  {
    std::string c(40, '\0');
    put16(c, 0, 0x8664);
    put16(c, 2, 0xffff);
    put32(c, 8, 20);
    put32(c, 12, 0xffffffffu);
    require_bounded("COFF section and symbol counts", c, [](byte_view b) {
      auto obj = coff::object::parse(b);
      return obj && static_cast<bool>(obj->for_each_entry([](const coff::symbol_entry&) {}));
    });
  }
  // ld.so.cache (new format) claiming 2^32-1 entries.
  {
    std::string c = std::string("glibc-ld.so.cache1.1", 20) + std::string(60, '\0');
    put32(c, 20, 0xffffffffu);
    require_bounded("ld.so.cache nlibs", c, [](byte_view b) { return static_cast<bool>(resolve::ld_so_cache::parse(b)); });
    std::string old = std::string("ld.so-1.7.0", 11) + std::string(21, '\0');
    put32(old, 12, 0xffffffffu);
    require_bounded("old ld.so.cache nlibs", old, [](byte_view b) { return static_cast<bool>(resolve::ld_so_cache::parse(b)); });
  }
}

// ---------------------------------------------------------------------------
// Over 4 GiB (sparse files).

namespace {
constexpr std::uint64_t four_gib = std::uint64_t{1} << 32;

bool disk_allows(const std::string& dir) {
  struct statvfs st {};
  if (::statvfs(dir.c_str(), &st) != 0) return false;
  const std::uint64_t free_bytes = static_cast<std::uint64_t>(st.f_bavail) * st.f_frsize;
  if (free_bytes < (std::uint64_t{5} << 30)) {
    WARN("SKIPPED: over-4-GiB cases need 5 GiB free in " << dir << " (have " << (free_bytes >> 20) << " MiB)");
    return false;
  }
  return true;
}

// Write `chunks` (offset, bytes) into a sparse file of `size` bytes.
bool write_sparse(const std::string& path, const std::vector<std::pair<std::uint64_t, std::string>>& chunks,
                  std::uint64_t size) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) return false;
  bool ok = ::ftruncate(fd, static_cast<off_t>(size)) == 0;
  for (const auto& [off, bytes] : chunks)
    ok = ok && ::pwrite(fd, bytes.data(), bytes.size(), static_cast<off_t>(off)) == static_cast<ssize_t>(bytes.size());
  ::close(fd);
  return ok;
}

std::string be_bytes(std::uint64_t v, int n) {
  std::string s;
  for (int i = n - 1; i >= 0; --i) s.push_back(static_cast<char>(v >> (8 * i)));
  return s;
}
std::string le_bytes(std::uint64_t v, int n) {
  std::string s;
  for (int i = 0; i < n; ++i) s.push_back(static_cast<char>(v >> (8 * i)));
  return s;
}
}  // namespace

TEST_CASE("archives whose member lies past 4 GiB: /SYM64/ and __.SYMDEF_64", "[hardening][4gib]") {
  const std::string dir = scratch_dir("hardening-4gib-ar");
  if (!disk_allows(dir)) return;
  const std::string obj = read_file(fixture_dir() + "/a.o");
  REQUIRE(obj.size() > 100);
  const std::uint64_t pad = four_gib + 4096;  // the hole member
  const std::vector<std::string> names = {"a_data", "a_func"};

  SECTION("GNU /SYM64/") {
    std::string table = be_bytes(names.size(), 8);
    std::string strings;
    for (const auto& n : names) strings += n + '\0';
    const std::uint64_t table_size = 8 + 8 * names.size() + strings.size();
    const std::uint64_t pad_header = 8 + 60 + table_size + (table_size & 1);
    const std::uint64_t obj_header = pad_header + 60 + pad;
    for (std::size_t i = 0; i < names.size(); ++i) table += be_bytes(obj_header, 8);
    table += strings;
    if (table.size() & 1) table += '\n';
    std::string head = cat({"!<arch>\n", ar_header("/SYM64/", table_size), table, ar_header("pad.bin/", pad)});
    REQUIRE(head.size() == pad_header + 60);
    std::string tail = ar_header("a.o/", obj.size()) + obj;
    const std::string path = dir + "/gnu64.a";
    REQUIRE(write_sparse(path, {{0, head}, {obj_header, tail}}, obj_header + tail.size()));

    auto file = mapped_file::open(path);
    REQUIRE(file);
    auto arch = ar::archive::open(file->bytes());
    REQUIRE(arch);
    std::vector<std::string> members;
    std::uint64_t a_offset = 0;
    for (const auto& m : arch->members()) {
      REQUIRE(m);
      members.emplace_back(m->name);
      if (m->name == "a.o") {
        a_offset = m->header_offset;
        CHECK(m->data.chars() == obj);
      }
    }
    CHECK(members == std::vector<std::string>{"pad.bin", "a.o"});
    CHECK(a_offset == obj_header);
    CHECK(a_offset > four_gib);
    auto map = ar::armap::read(*arch);
    REQUIRE(map);
    CHECK(map->kind() == ar::table_kind::gnu64);
    std::vector<std::string> listed;
    REQUIRE(map->for_each([&](const ar::armap_entry& e) {
      listed.emplace_back(e.name);
      CHECK(e.member_offset == obj_header);
      auto m = arch->member_at(e.member_offset);
      REQUIRE(m);
      CHECK(m->name == "a.o");
    }));
    CHECK(listed == names);
    // The real tools read the same file the same way.
    auto ar_t = capture("ar t " + shell_quote(path));
    CHECK(ar_t.status == 0);
    CHECK(ar_t.out == "pad.bin\na.o\n");
    auto nm_s = capture("nm -s " + shell_quote(path) + " 2>/dev/null");
    CHECK(nm_s.out.find("a_data in a.o") != std::string::npos);
    CHECK(nm_s.out.find("a_func in a.o") != std::string::npos);
  }

  SECTION("BSD __.SYMDEF_64") {
    // #1/N names; ranlib_64 entries {u64 strx, u64 member header offset}, LE.
    const std::string symdef_name = std::string("__.SYMDEF_64") + std::string(4, '\0');  // padded to 16
    std::string strings;
    std::vector<std::uint64_t> strx;
    for (const auto& n : names) {
      strx.push_back(strings.size());
      strings += n + '\0';
    }
    while (strings.size() % 8) strings += '\0';
    const std::uint64_t ranlib_bytes = 16 * names.size();
    const std::uint64_t body = 8 + ranlib_bytes + 8 + strings.size();
    const std::uint64_t table_size = symdef_name.size() + body;
    const std::uint64_t pad_header = 8 + 60 + table_size;
    const std::string pad_name = std::string("pad.bin") + std::string(1, '\0');
    const std::uint64_t obj_header = pad_header + 60 + pad_name.size() + pad;
    std::string table = symdef_name + le_bytes(ranlib_bytes, 8);
    for (std::size_t i = 0; i < names.size(); ++i) table += le_bytes(strx[i], 8) + le_bytes(obj_header, 8);
    table += le_bytes(strings.size(), 8) + strings;
    REQUIRE(table.size() == table_size);
    std::string head = cat({"!<arch>\n", ar_header("#1/16", table_size), table,
                            ar_header(cat({"#1/", std::to_string(pad_name.size())}), pad_name.size() + pad), pad_name});
    const std::string obj_name = std::string("a.o") + std::string(5, '\0');
    std::string tail = ar_header("#1/8", obj_name.size() + obj.size()) + obj_name + obj;
    const std::string path = dir + "/darwin64.a";
    REQUIRE(write_sparse(path, {{0, head}, {obj_header, tail}}, obj_header + tail.size()));

    auto file = mapped_file::open(path);
    REQUIRE(file);
    auto arch = ar::archive::open(file->bytes());
    REQUIRE(arch);
    CHECK(arch->kind() == ar::format::bsd);
    std::vector<std::string> members;
    for (const auto& m : arch->members()) {
      REQUIRE(m);
      members.emplace_back(m->name);
      if (m->name == "a.o") CHECK(m->data.chars() == obj);
    }
    CHECK(members == std::vector<std::string>{"pad.bin", "a.o"});
    auto map = ar::armap::read(*arch);
    REQUIRE(map);
    CHECK(map->kind() == ar::table_kind::bsd64);
    std::vector<std::string> listed;
    REQUIRE(map->for_each([&](const ar::armap_entry& e) {
      listed.emplace_back(e.name);
      CHECK(e.member_offset == obj_header);
    }));
    CHECK(listed == names);
    auto ar_t = capture("llvm-ar-14 t " + shell_quote(path));
    CHECK(ar_t.status == 0);
    CHECK(ar_t.out == "pad.bin\na.o\n");
    auto armap = capture("llvm-nm-14 --print-armap " + shell_quote(path) + " 2>/dev/null");
    CHECK(armap.out.find("a_func in a.o") != std::string::npos);
  }
}

TEST_CASE("an ELF object whose sections lie past 4 GiB", "[hardening][4gib]") {
  const std::string dir = scratch_dir("hardening-4gib-elf");
  if (!disk_allows(dir)) return;
  std::string obj = read_file(fixture_dir() + "/a.o");
  REQUIRE(obj.size() > 64);
  std::uint64_t shoff = 0;
  std::uint16_t shnum = 0;
  std::memcpy(&shoff, obj.data() + 0x28, 8);
  std::memcpy(&shnum, obj.data() + 0x3c, 2);
  REQUIRE(shoff + 64u * shnum <= obj.size());
  // Move every section's contents and the section header table up by D.
  const std::uint64_t shift = four_gib + 8192;
  std::string moved = obj;
  for (std::uint16_t i = 1; i < shnum; ++i) {
    std::uint64_t off = 0;
    std::memcpy(&off, moved.data() + shoff + 64u * i + 0x18, 8);
    put64(moved, shoff + 64u * i + 0x18, off + shift);
  }
  put64(moved, 0x28, shoff + shift);
  const std::string path = dir + "/big.o";
  REQUIRE(write_sparse(path, {{0, moved.substr(0, 64)}, {shift, moved}}, shift + moved.size()));

  auto file = mapped_file::open(path);
  REQUIRE(file);
  std::set<std::string> ours;
  auto r = elf::visit_elf(file->bytes(), [&](const auto& f) -> result<void> {
    CHECK(f.header().e_shoff > four_gib);
    LINKSCOPE_TRY(symtab, elf::read_symtab(f));
    for (std::size_t i = 1; i < symtab.size(); ++i) {
      LINKSCOPE_TRY(name, symtab.name(i));
      if (!name.empty()) ours.emplace(name);
    }
    return {};
  });
  REQUIRE(r);
  CHECK(ours.count("a_func") == 1);
  // nm reads it too, and lists the same named symbols.
  auto nm = capture("nm -P " + shell_quote(path));
  REQUIRE(nm.status == 0);
  std::set<std::string> theirs;
  for (const auto& line : lines(nm.out)) theirs.insert(line.substr(0, line.find(' ')));
  for (const auto& n : theirs) CHECK(ours.count(n) == 1);
  CHECK(theirs.count("a_func") == 1);
}

// ---------------------------------------------------------------------------
// Hostile layouts.

TEST_CASE("thin archive member paths that are absolute or climb with ..", "[hardening][thin]") {
  const std::string dir = scratch_dir("hardening-thin");
  fs::create_directories(dir + "/lib");
  run_in(dir, "gcc -c -x c -o up.o - <<'EOF'\nint up;\nEOF");
  write_file(dir + "/lib/x.c", "int x;\n");
  run_in(dir, "gcc -c lib/x.c -o lib/x.o");
  // A thin archive naming ../up.o, an absolute path and an in-folder member.
  const std::string abs = dir + "/up.o";
  const std::string names = cat({"../up.o/\n", abs, "/\nx.o/\n"});
  std::string a = cat({"!<thin>\n", ar_header("//", names.size()), names});
  if (a.size() & 1) a += '\n';
  a += ar_header("/0", fs::file_size(dir + "/up.o"));
  a += ar_header("/9", fs::file_size(dir + "/up.o"));
  a += ar_header(cat({"/", std::to_string(9 + abs.size() + 2)}), fs::file_size(dir + "/lib/x.o"));
  write_file(dir + "/lib/thin.a", a);
  // GNU ar reads it: the names as written.
  auto ar_t = capture("cd " + shell_quote(dir + "/lib") + " && ar t thin.a");
  CHECK(ar_t.out == "../up.o\n" + abs + "\nx.o\n");

  auto file = mapped_file::open(dir + "/lib/thin.a");
  REQUIRE(file);
  auto arch = ar::archive::open(file->bytes());
  REQUIRE(arch);
  CHECK(arch->is_thin());
  std::vector<std::string> plain, confined;
  ar::thin_options confine;
  confine.confine_to_archive_dir = true;
  for (const auto& m : arch->members()) {
    REQUIRE(m);
    auto p = ar::thin_member_path(dir + "/lib/thin.a", *m);
    REQUIRE(p);
    plain.push_back(*p);
    auto c = ar::thin_member_path(dir + "/lib/thin.a", *m, confine);
    confined.push_back(c ? *c : std::string("refused: ") + c.error().message);
    if (!c) CHECK(c.error().code == errc::unsupported);
  }
  // Default: what GNU ar/nm open (the folder joined, an absolute path kept).
  CHECK(plain == std::vector<std::string>{dir + "/lib/../up.o", abs, dir + "/lib/x.o"});
  // Confined: only the in-folder member is opened.
  REQUIRE(confined.size() == 3);
  CHECK(confined[0].rfind("refused", 0) == 0);
  CHECK(confined[1].rfind("refused", 0) == 0);
  CHECK(confined[2] == dir + "/lib/x.o");
  // nm follows the default paths: it finds `up` through ../up.o.
  auto nm = capture("cd " + shell_quote(dir + "/lib") + " && nm thin.a 2>&1");
  CHECK(nm.out.find("B up") != std::string::npos);
}

TEST_CASE("the CLIs follow a thin member that climbs with .. as ld.lld does, and refuse it with --thin-confine",
          "[hardening][thin]") {
  const std::string why = tool_path("linkscope-why"), arx = tool_path("linkscope-ar");
  if (!have_tool(why) || !have_tool(arx)) {
    WARN("linkscope-why / linkscope-ar not built: CLI thin-archive test skipped");
    return;
  }
  const std::string dir = scratch_dir("hardening-thin-cli");
  fs::create_directories(dir + "/lib");
  write_file(dir + "/up.c", "int up = 1;\n");
  // GNU ar stores the member as "../up.o" (relative to the archive's folder).
  REQUIRE(run_in(dir, "gcc -c up.c && ar rcT lib/t.a up.o") == 0);
  const std::string in_dir = "cd " + shell_quote(dir) + " && ";
  auto lld = capture(in_dir + "ld.lld-14 -m elf_x86_64 -e 0 -u up lib/t.a --why-extract=- -o /dev/null");
  REQUIRE(lld.status == 0);
  auto ours = capture(in_dir + shell_quote(why) + " --why-extract=- -u up lib/t.a");
  CHECK(ours.status == 0);
  CHECK(ours.out == lld.out);
  CHECK(ours.out.find("lib/t.a(../up.o)\tup") != std::string::npos);
  auto gnu_t = capture(in_dir + "ar t lib/t.a");
  CHECK(capture(in_dir + shell_quote(arx) + " t lib/t.a").out == gnu_t.out);
  // nm names the member by the path it opens ("lib/../up.o").
  const std::string nmx = tool_path("linkscope-nm");
  for (const char* flags : {"", "-A ", "-P "}) {
    INFO("nm " << flags);
    auto gnu_nm = capture(in_dir + "nm " + flags + "lib/t.a");
    REQUIRE(gnu_nm.status == 0);
    CHECK(gnu_nm.out.find("lib/../up.o") != std::string::npos);
    CHECK(capture(in_dir + shell_quote(nmx) + " " + flags + "lib/t.a").out == gnu_nm.out);
  }
  auto nm_refused = capture(in_dir + shell_quote(nmx) + " --thin-confine lib/t.a 2>&1");
  CHECK(nm_refused.status == 2);
  CHECK(nm_refused.out.find("lib/t.a(../up.o): error: thin archive member path leaves") != std::string::npos);
  // Confined: the member is refused, with where and why, and nothing is opened.
  auto refused = capture(in_dir + shell_quote(why) + " --thin-confine -u up lib/t.a 2>&1");
  CHECK(refused.status == 2);
  CHECK(refused.out.find("lib/t.a(../up.o): error: thin archive member path leaves the archive's folder (offset 0x") !=
        std::string::npos);
  auto listed = capture(in_dir + shell_quote(arx) + " --thin-confine t lib/t.a 2>&1");
  CHECK(listed.status == 0);
  CHECK(listed.out.find("warning: thin archive member path leaves the archive's folder: ../up.o") != std::string::npos);
}

TEST_CASE("cyclic DT_NEEDED and symlink loops in the search path terminate", "[hardening][cycles]") {
  const std::string dir = scratch_dir("hardening-cycles");
  fs::create_directories(dir + "/lib");
  write_file(dir + "/a.c", "extern int b(void); int a(void) { return b(); }\n");
  write_file(dir + "/b.c", "extern int a(void); int b(void) { return 1; } int b2(void) { return a(); }\n");
  write_file(dir + "/m.c", "extern int a(void); int main(void) { return a(); }\n");
  // liba needs libb, libb needs liba (built in two rounds).
  REQUIRE(run_in(dir, "gcc -fPIC -c a.c b.c m.c && "
                      "gcc -shared -o lib/liba.so a.o -Wl,-soname,liba.so && "
                      "gcc -shared -o lib/libb.so b.o -Wl,-soname,libb.so -Llib -la && "
                      "gcc -shared -o lib/liba.so a.o -Wl,-soname,liba.so -Llib -lb && "
                      "gcc -o main m.o -Llib -Wl,-rpath-link,lib -la -Wl,--no-as-needed -Wl,-rpath,'$ORIGIN/lib:$ORIGIN/loop'") == 0);
  // A symlink loop in the search path: loop -> loop2 -> loop.
  fs::create_symlink("loop2", dir + "/loop");
  fs::create_symlink("loop", dir + "/loop2");
  // And a library symlink that points at itself.
  fs::create_symlink("libself.so", dir + "/lib/libself.so");

  resolve::dynamic_options options;
  options.search.use_env = false;
  options.search.library_path = dir + "/loop:" + dir + "/lib";
  options.bindings = true;
  auto link = resolve::link_dynamic(dir + "/main", options);
  REQUIRE(link);
  std::vector<std::string> names;
  for (const auto& o : link->objects) names.push_back(fs::path(o.file).filename().string());
  // Each object once, in ld.so's load order (as ldd prints it).
  CHECK(std::count(names.begin(), names.end(), "liba.so") == 1);
  CHECK(std::count(names.begin(), names.end(), "libb.so") == 1);
  // Bounded work: lookups and relocations are counted by the resolver.
  CHECK(link->lookups < 10000);
  // liba's DT_NEEDED libb is not found through main's DT_RUNPATH (it is not
  // transitive): ldd gets the same library path as the resolver.
  auto ldd = capture("LD_LIBRARY_PATH=" + shell_quote(dir + "/loop:" + dir + "/lib") + " ldd " + shell_quote(dir + "/main"));
  CHECK(ldd.out.find("liba.so => " + dir + "/lib/liba.so") != std::string::npos);
  CHECK(ldd.out.find("libb.so => " + dir + "/lib/libb.so") != std::string::npos);
  // A name that only resolves through the self-loop symlink is not found, and the search ends.
  resolve::dynamic_options self = options;
  auto missing = resolve::link_dynamic(dir + "/lib/libself.so", self);
  CHECK_FALSE(missing);
}

namespace {
// A minimal ELF64 relocatable object that defines `def` in .text and
// references `ref` (if not empty): null, .text, .symtab, .strtab, .shstrtab.
std::string tiny_object(const std::string& def, const std::string& ref) {
  std::string shstr = std::string("\0.text\0.symtab\0.strtab\0.shstrtab\0", 34);
  std::string str = std::string(1, '\0') + def + '\0';
  const std::size_t ref_name = str.size();
  if (!ref.empty()) str += ref + '\0';
  std::string syms(24, '\0');
  auto sym = [&](std::uint32_t name, unsigned char info, std::uint16_t shndx) {
    std::string s(24, '\0');
    put32(s, 0, name);
    s[4] = static_cast<char>(info);
    put16(s, 6, shndx);
    syms += s;
  };
  sym(1, 0x12, 1);  // GLOBAL FUNC in .text
  if (!ref.empty()) sym(static_cast<std::uint32_t>(ref_name), 0x10, 0);  // GLOBAL NOTYPE UNDEF
  std::string out(64, '\0');
  const std::size_t text_at = out.size();
  out += '\xc3';
  while (out.size() % 8) out += '\0';
  const std::size_t sym_at = out.size();
  out += syms;
  const std::size_t str_at = out.size();
  out += str;
  const std::size_t shstr_at = out.size();
  out += shstr;
  while (out.size() % 8) out += '\0';
  const std::size_t sh_at = out.size();
  auto sh = [&](std::uint32_t name, std::uint32_t type, std::uint64_t off, std::uint64_t size, std::uint32_t link,
                std::uint32_t info, std::uint64_t entsize, std::uint64_t flags) {
    std::string h(64, '\0');
    put32(h, 0, name);
    put32(h, 4, type);
    put64(h, 8, flags);
    put64(h, 0x18, off);
    put64(h, 0x20, size);
    put32(h, 0x28, link);
    put32(h, 0x2c, info);
    put64(h, 0x30, 1);
    put64(h, 0x38, entsize);
    out += h;
  };
  sh(0, 0, 0, 0, 0, 0, 0, 0);
  sh(1, 1, text_at, 1, 0, 0, 0, 6);
  sh(7, 2, sym_at, syms.size(), 3, 1, 24, 0);
  sh(15, 3, str_at, str.size(), 0, 0, 0, 0);
  sh(23, 3, shstr_at, shstr.size(), 0, 0, 0, 0);
  const unsigned char ident[16] = {0x7f, 'E', 'L', 'F', 2, 1, 1, 0};
  std::memcpy(&out[0], ident, 16);
  put16(out, 16, 1);     // ET_REL
  put16(out, 18, 62);    // EM_X86_64
  put32(out, 20, 1);
  put64(out, 0x28, sh_at);
  put16(out, 0x34, 64);
  put16(out, 0x3a, 64);
  put16(out, 0x3c, 5);
  put16(out, 0x3e, 4);
  return out;
}

// A GNU archive with a "/" armap: member i defines names[i].
std::string gnu_archive(const std::vector<std::string>& member_names, const std::vector<std::string>& datas,
                        const std::vector<std::string>& defined) {
  std::string longnames;
  std::vector<std::string> fields;
  for (const auto& n : member_names) {
    if (n.size() < 15) {
      fields.push_back(n + "/");
    } else {
      fields.push_back(cat({"/", std::to_string(longnames.size())}));
      longnames += n + "/\n";
    }
  }
  std::string strings;
  for (const auto& d : defined) strings += d + '\0';
  const std::uint64_t table_size = 4 + 4 * defined.size() + strings.size();
  std::uint64_t at = 8 + 60 + table_size + (table_size & 1);
  if (!longnames.empty()) at += 60 + longnames.size() + (longnames.size() & 1);
  std::string members;
  std::vector<std::uint32_t> offsets;
  for (std::size_t i = 0; i < datas.size(); ++i) {
    offsets.push_back(static_cast<std::uint32_t>(at + members.size()));
    members += ar_header(fields[i], datas[i].size()) + datas[i];
    if (datas[i].size() & 1) members += '\n';
  }
  std::string table = be_bytes(defined.size(), 4);
  for (std::size_t i = 0; i < defined.size(); ++i) table += be_bytes(offsets[i], 4);
  table += strings;
  if (table.size() & 1) table += '\n';
  std::string out = "!<arch>\n" + ar_header("/", table_size) + table;
  if (!longnames.empty()) {
    out += ar_header("//", longnames.size()) + longnames;
    if (longnames.size() & 1) out += '\n';
  }
  return out + members;
}
}  // namespace

TEST_CASE("a 10k-object closure is resolved with linear work", "[hardening][scale]") {
  const std::string dir = scratch_dir("hardening-closure");
  constexpr std::size_t n = 10000;
  std::vector<std::string> names, datas, defined;
  for (std::size_t i = 0; i < n; ++i) {
    names.push_back(cat({"m", std::to_string(i), ".o"}));
    defined.push_back(cat({"f", std::to_string(i)}));
    datas.push_back(tiny_object(defined.back(), i + 1 < n ? cat({"f", std::to_string(i + 1)}) : std::string()));
  }
  write_file(dir + "/libchain.a", gnu_archive(names, datas, defined));
  write_file(dir + "/main.o", tiny_object("_start", "f0"));
  // The generated objects are real: ld.lld links the closure.
  CHECK(run_in(dir, "ld.lld-14 main.o libchain.a -o chain.out") == 0);

  const std::vector<std::string> args = {dir + "/main.o", dir + "/libchain.a"};
  resolve::link_diagnostic diag;
  auto line = resolve::read_link_line(args, diag);
  REQUIRE(line);
  auto linked = resolve::resolve_static(*line, {}, diag);
  INFO(diag.err.message << " " << diag.subject);
  REQUIRE(linked);
  CHECK(linked->extractions.size() == n);
  CHECK(linked->undefined.empty());
  // Each object has 2 symbols: resolution work is linear in the symbols.
  INFO("symbol resolutions: " << linked->symbols_resolved);
  CHECK(linked->symbols_resolved <= 8 * n);
  CHECK(linked->symbols_resolved >= n);
}

TEST_CASE("a 1M-member archive: lazy iteration and an index with linear probes", "[hardening][scale]") {
  constexpr std::size_t n = 1000000;
  std::string bytes = "!<arch>\n";
  bytes.reserve(8 + n * 62);
  for (std::size_t i = 0; i < n; ++i) {
    std::string name = cat({"m", std::to_string(i), ".o/"});
    bytes += ar_header(name, 2) + "x\n";
  }
  auto arch = ar::archive::open(byte_view(bytes));
  REQUIRE(arch);
  std::size_t members = 0, header_bytes_seen = 0;
  std::uint64_t last = 0;
  for (const auto& m : arch->members()) {
    REQUIRE(m);
    ++members;
    // Each member is found right after the previous one: no rescans.
    CHECK((m->header_offset > last || members == 1));
    header_bytes_seen += m->data_offset - m->header_offset;
    last = m->header_offset;
    if (members % 100000 == 0) { REQUIRE(m->name == cat({"m", std::to_string(members - 1), ".o"})); }
  }
  CHECK(members == n);
  CHECK(header_bytes_seen == 60 * n);
  // An index over 1M names: total probes stay linear.
  symbol_table table;
  table.reserve(n);
  std::vector<std::string> names;
  names.reserve(n);
  for (std::size_t i = 0; i < n; ++i) names.push_back(cat({"sym_", std::to_string(i)}));
  for (std::size_t i = 0; i < n; ++i) {
    symbol s;
    s.name = names[i];
    s.origin = i;
    table.push_back(s);
  }
  const hash_index index = hash_index::build(table);
  std::size_t probes = 0;
  for (std::size_t i = 0; i < n; i += 10) probes += index.probes_for(names[i]);
  INFO("probes for 100k lookups: " << probes);
  CHECK(probes < 100000 * 8);
  CHECK(index.find_first("sym_999999") != no_symbol);
}
