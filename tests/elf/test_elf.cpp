// Tests of linkscope/elf/*: file (extended numbering), dynamic (PT_DYNAMIC
// only), symbols (dynsym count from DT_HASH / DT_GNU_HASH), versions,
// hash_table (every defined dynsym found through its own tables, absent
// names rejected, as ld.so), relocations (against readelf -r), the
// symbol_source adapter, and malformed input (each case an error with an
// offset). Expected values come from readelf / llvm-readelf-14 / nm.
#include <linkscope/elf/dynamic.hpp>
#include <linkscope/elf/file.hpp>
#include <linkscope/elf/hash_table.hpp>
#include <linkscope/elf/relocations.hpp>
#include <linkscope/elf/source.hpp>
#include <linkscope/elf/symbols.hpp>
#include <linkscope/elf/types.hpp>
#include <linkscope/elf/versions.hpp>

#include <catch2/catch.hpp>

#include <linkscope/core/mapped_file.hpp>
#include <linkscope/symbols/index.hpp>
#include <linkscope/symbols/table.hpp>

#include <cstring>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "support/elf_fixtures.hpp"
#include "support/fixtures.hpp"

using namespace linkscope;
using namespace linkscope_test;

namespace {

const elf_fixtures& fx() { return elf_fixtures::get("elf_fixtures"); }

std::string readelf(const std::string& args, const std::string& file) {
  return capture("cd " + shell_quote(fx().dir) + " && LC_ALL=C readelf " + args + " " + shell_quote(file) + " 2>/dev/null").out;
}

// Whitespace-separated columns of a line.
std::vector<std::string> columns(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> out;
  std::string w;
  while (in >> w) out.push_back(w);
  return out;
}

// Everything the tests want to know about one DSO, read with our API.
struct dso_facts {
  bool ok = false;
  std::string error;
  std::size_t section_count = 0;
  std::size_t dynsym_sections = 0;  // via .dynsym
  std::size_t dynsym_dynamic = 0;   // via DT_SYMTAB + hash count
  std::vector<std::string> needed;
  std::string soname;
  std::size_t defined = 0, found = 0, found_gnu = 0, found_sysv = 0, absent_rejected = 0, absent_tried = 0;
  bool gnu = false, sysv = false;
  std::multiset<std::string> plt_symbols, glob_dat_symbols, direct_symbols;
  std::map<std::string, std::size_t> reloc_classes;
};

dso_facts read_dso(byte_view bytes) {
  dso_facts facts;
  auto r = elf::visit_elf(bytes, [&](const auto& f) -> result<void> {
    using ET = typename std::decay_t<decltype(f)>::types;
    facts.section_count = f.section_count();
    LINKSCOPE_TRY(dyn, elf::dynamic_info<ET>::read(f));
    LINKSCOPE_TRY(dynsym, elf::read_dynsym(f, dyn));
    LINKSCOPE_TRY(via_dynamic, elf::read_dynsym_from_dynamic(dyn));
    facts.dynsym_sections = dynsym.size();
    facts.dynsym_dynamic = via_dynamic.size();
    LINKSCOPE_TRY(needed, dyn.needed());
    for (auto n : needed) facts.needed.emplace_back(n);
    LINKSCOPE_TRY(soname, dyn.soname());
    facts.soname = std::string(soname);
    LINKSCOPE_TRY(versions, elf::version_tables<ET>::read(f, dyn, via_dynamic.size()));
    LINKSCOPE_TRY(table, elf::hash_table<ET>::open(dyn, via_dynamic, versions));
    facts.gnu = table.has_gnu();
    facts.sysv = table.has_sysv();
    for (std::size_t i = 1; i < via_dynamic.size(); ++i) {
      const auto sym = via_dynamic[i];
      if (sym.st_shndx == elf::SHN_UNDEF) continue;
      LINKSCOPE_TRY(name, via_dynamic.name(i));
      LINKSCOPE_TRY(ver, versions.of(i, name, true));
      ++facts.defined;
      elf::version_request request = elf::version_request::of(ver.name);
      elf::lookup_options options;
      if (!ver.name.empty()) options.version = &request;
      LINKSCOPE_TRY(hit, table.lookup(name, options));
      facts.found += hit.matched && hit.index == i;
      if (table.has_gnu()) {
        LINKSCOPE_TRY(g, table.lookup_gnu(name, options));
        facts.found_gnu += g.matched && g.index == i;
      }
      if (table.has_sysv()) {
        LINKSCOPE_TRY(s, table.lookup_sysv(name, options));
        facts.found_sysv += s.matched && s.index == i;
      }
      // A name that is not there: the same name with a suffix.
      if (facts.absent_tried < 2000) {
        std::string absent = std::string(name) + "_linkscope_absent";
        ++facts.absent_tried;
        LINKSCOPE_TRY(miss, table.lookup(absent));
        facts.absent_rejected += !miss.matched;
      }
    }
    LINKSCOPE_CHECK(elf::for_each_dynamic_relocation(
        dyn,
        [&](const elf::dynamic_relocation& rel) {
          ++facts.reloc_classes[elf::to_string(rel.kind)];
          if (rel.symbol == 0) return;
          auto name = via_dynamic.name(rel.symbol);
          std::string n = name ? std::string(*name) : "?";
          if (rel.kind == elf::reloc_class::plt) facts.plt_symbols.insert(n);
          if (rel.kind == elf::reloc_class::glob_dat) facts.glob_dat_symbols.insert(n);
          if (rel.kind == elf::reloc_class::direct) facts.direct_symbols.insert(n);
        },
        via_dynamic.size()));
    return ok();
  });
  facts.ok = static_cast<bool>(r);
  if (!r) facts.error = r.error().message;
  return facts;
}

}  // namespace

TEST_CASE("every DSO fixture: dynsym count, NEEDED, SONAME, hash lookups, via sections and via PT_DYNAMIC", "[elf]") {
  REQUIRE(!fx().files.empty());
  for (const elf_fixture& fixture : fx().files) {
    if (!fixture.dynamic) continue;
    INFO(fixture.name);
    auto mapped = mapped_file::open(fx().path(fixture.name));
    REQUIRE(mapped);
    dso_facts facts = read_dso(mapped->bytes());
    INFO(facts.error);
    REQUIRE(facts.ok);
    // readelf --dyn-syms: "Symbol table '.dynsym' contains N entries:"
    const std::string dyn = readelf("-W --dyn-syms", fixture.name);
    const auto at = dyn.find("contains ");
    REQUIRE(at != std::string::npos);
    const std::size_t expected = std::stoul(dyn.substr(at + 9));
    CHECK(facts.dynsym_sections == expected);
    CHECK(facts.dynsym_dynamic == expected);
    // readelf -d: NEEDED and SONAME.
    std::vector<std::string> needed;
    std::string soname;
    for (const std::string& l : lines(readelf("-d", fixture.name))) {
      auto open = l.find('[');
      auto close = l.rfind(']');
      if (open == std::string::npos || close == std::string::npos) continue;
      if (l.find("(NEEDED)") != std::string::npos) needed.push_back(l.substr(open + 1, close - open - 1));
      if (l.find("(SONAME)") != std::string::npos) soname = l.substr(open + 1, close - open - 1);
    }
    CHECK(facts.needed == needed);
    CHECK(facts.soname == soname);
    CHECK(facts.defined > 0);
    CHECK(facts.found == facts.defined);
    if (facts.gnu) CHECK(facts.found_gnu == facts.defined);
    if (facts.sysv) CHECK(facts.found_sysv == facts.defined);
    CHECK(facts.absent_rejected == facts.absent_tried);
    CHECK((facts.gnu || facts.sysv));
  }
}

TEST_CASE("hash styles are detected as linked", "[elf][hash]") {
  std::map<std::string, std::pair<bool, bool>> expected = {
      {"libver_gnu.so", {true, false}}, {"libver_sysv.so", {false, true}}, {"libver_both.so", {true, true}}};
  for (const auto& [name, styles] : expected) {
    auto mapped = mapped_file::open(fx().path(name));
    if (!mapped) continue;
    dso_facts facts = read_dso(mapped->bytes());
    REQUIRE(facts.ok);
    CHECK(facts.gnu == styles.first);
    CHECK(facts.sysv == styles.second);
  }
}

TEST_CASE("stripped section headers: the same dynamic view as the original", "[elf][stripped]") {
  REQUIRE(!fx().stripped_pairs.empty());
  for (const auto& [stripped, original] : fx().stripped_pairs) {
    INFO(stripped);
    auto a = mapped_file::open(fx().path(stripped));
    auto b = mapped_file::open(fx().path(original));
    REQUIRE(a);
    REQUIRE(b);
    dso_facts s = read_dso(a->bytes());
    dso_facts o = read_dso(b->bytes());
    REQUIRE(s.ok);
    REQUIRE(o.ok);
    CHECK(s.section_count == 0);
    CHECK(s.dynsym_dynamic == o.dynsym_sections);
    CHECK(s.found == o.found);
    CHECK(s.needed == o.needed);
    CHECK(s.soname == o.soname);
    // The adapter lists the same symbols with the same versions.
    elf::symbols_source from_stripped(a->bytes()), from_original(b->bytes());
    auto ta = symbol_table::from(from_stripped);
    auto tb = symbol_table::from(from_original);
    REQUIRE(ta);
    REQUIRE(tb);
    REQUIRE(ta->size() == tb->size());
    for (std::size_t i = 0; i < ta->size(); ++i) {
      CHECK((*ta)[static_cast<symbol_id>(i)].name == (*tb)[static_cast<symbol_id>(i)].name);
      CHECK((*ta)[static_cast<symbol_id>(i)].version == (*tb)[static_cast<symbol_id>(i)].version);
    }
  }
}

TEST_CASE("versions: verdef and verneed decoded as readelf -V shows them", "[elf][versions]") {
  auto mapped = mapped_file::open(fx().path("libuse.so"));
  REQUIRE(mapped);
  elf::symbols_source source(mapped->bytes());
  std::map<std::string, std::string> versions;
  REQUIRE(source.for_each_symbol([&](const symbol& s) {
    versions[std::string(s.name)] = std::string(s.version) + (s.ver == version_kind::default_ ? "@@" : "@");
  }));
  CHECK(versions["foo"] == "VERS_2@");
  CHECK(versions["bar"] == "VERS_1@");
  auto lib = mapped_file::open(fx().path("libver_gnu.so"));
  REQUIRE(lib);
  auto table = symbol_table::from(elf::symbols_source(lib->bytes()));
  REQUIRE(table);
  auto index = hash_index::build(*table);
  CHECK(index.find("foo", "VERS_1").size() == 1);
  CHECK(index.find("foo", "VERS_2").size() == 1);
  auto v2 = index.find("foo", "VERS_2");
  REQUIRE(v2.size() == 1);
  CHECK((*table)[v2[0]].ver == version_kind::default_);
  auto v1 = index.find("foo", "VERS_1");
  REQUIRE(v1.size() == 1);
  CHECK((*table)[v1[0]].ver == version_kind::non_default);
  // The version marker symbol VERS_1 carries no version (nm prints "VERS_1").
  auto marker = index.find("VERS_1");
  REQUIRE(marker.size() == 1);
  CHECK((*table)[marker[0]].version.empty());
}

TEST_CASE("ld.so lookup rules: version requests, hidden versions, default version", "[elf][hash]") {
  auto mapped = mapped_file::open(fx().path("libver_both.so"));
  REQUIRE(mapped);
  auto r = elf::visit_elf(mapped->bytes(), [&](const auto& f) -> result<void> {
    using ET = typename std::decay_t<decltype(f)>::types;
    LINKSCOPE_TRY(dyn, elf::dynamic_info<ET>::read(f));
    LINKSCOPE_TRY(dynsym, elf::read_dynsym(f, dyn));
    LINKSCOPE_TRY(versions, elf::version_tables<ET>::read(f, dyn, dynsym.size()));
    LINKSCOPE_TRY(table, elf::hash_table<ET>::open(dyn, dynsym, versions));
    auto name_of = [&](u32 i) { return std::string(*dynsym.name(i)); };
    auto version_of = [&](u32 i) { return std::string(versions.of(i, *dynsym.name(i), true)->name); };
    for (bool gnu : {true, false}) {
      auto look = [&](std::string_view n, const elf::lookup_options& o) {
        return gnu ? *table.lookup_gnu(n, o) : *table.lookup_sysv(n, o);
      };
      // Unversioned request (an old binary): check_match accepts any version
      // index below 3, so foo@VERS_1 (index 2, the oldest) is taken even
      // though it is hidden; foo@@VERS_2 (index 3) is skipped.
      auto plain = look("foo", {});
      CHECK(plain.found);
      CHECK(version_of(plain.index) == "VERS_1");
      // dlsym (return newest): indices >= 2 are skipped, foo@@VERS_2 is the
      // only non-hidden one, so it is returned.
      elf::lookup_options newest;
      newest.return_newest = true;
      CHECK(version_of(look("foo", newest).index) == "VERS_2");
      // Explicit versions.
      auto v1 = elf::version_request::of("VERS_1");
      elf::lookup_options o1;
      o1.version = &v1;
      auto hit1 = look("foo", o1);
      CHECK(hit1.found);
      CHECK(version_of(hit1.index) == "VERS_1");
      auto nope = elf::version_request::of("VERS_9");
      elf::lookup_options o9;
      o9.version = &nope;
      CHECK_FALSE(look("foo", o9).matched);
      // bar@@VERS_1 under an unversioned request: index 2 < 3, found directly.
      auto b = look("bar", {});
      CHECK(b.found);
      CHECK(name_of(b.index) == "bar");
      // Local (hidden by the version script) names are not exported.
      CHECK_FALSE(look("hidden_thing", {}).matched);
      // Undefined symbols never match.
      CHECK_FALSE(look("undef_ext", {}).matched);
    }
    return ok();
  });
  INFO((r ? "" : r.error().message));
  CHECK(r);
}

TEST_CASE("GNU hash with every bucket empty and symoffset below the undefined symbols (GNU ld, as libtorch_global_deps)",
          "[elf][hash]") {
  // GNU ld gives a DSO that defines nothing a 1-bucket table with symoffset 1
  // and no chain words at all, although dynsym holds 4 undefined symbols
  // after index 0. ld.so loads it; the table must open and find nothing.
  const std::string dir = scratch_dir("elf-empty-gnu-hash");
  write_file(dir + "/e.c", "static int unused;\n");
  write_file(dir + "/m.c", "int main(void) { return 0; }\n");
  REQUIRE(run_in(dir, "gcc -shared -fPIC -Wl,--hash-style=gnu e.c -o libempty.so && "
                      "gcc m.c -o m -L. -Wl,--no-as-needed -lempty -Wl,-rpath,'$ORIGIN'") == 0);
  // The loader takes it (the program runs with the library loaded).
  auto loaded = capture("LD_DEBUG=files " + shell_quote(dir + "/m") + " 2>&1");
  REQUIRE(loaded.status == 0);
  CHECK(loaded.out.find("libempty.so") != std::string::npos);
  auto readelf = capture("readelf --dyn-syms -W " + shell_quote(dir + "/libempty.so"));
  REQUIRE(readelf.status == 0);
  CHECK(readelf.out.find("UND __cxa_finalize") != std::string::npos);
  auto mapped = mapped_file::open(dir + "/libempty.so");
  REQUIRE(mapped);
  auto r = elf::visit_elf(mapped->bytes(), [&](const auto& f) -> result<void> {
    using ET = typename std::decay_t<decltype(f)>::types;
    LINKSCOPE_TRY(dyn, elf::dynamic_info<ET>::read(f));
    LINKSCOPE_TRY(dynsym, elf::read_dynsym(f, dyn));
    LINKSCOPE_TRY(versions, elf::version_tables<ET>::read(f, dyn, dynsym.size()));
    LINKSCOPE_TRY(table, elf::hash_table<ET>::open(dyn, dynsym, versions));
    CHECK(table.has_gnu());
    CHECK(dynsym.size() > table.gnu_symoffset());
    // What ld.so indexes through DT_SYMTAB: the SHT_DYNSYM count, larger than the hash tables' (symoffset).
    LINKSCOPE_TRY(via_dynamic, elf::read_dynsym_from_dynamic(dyn));
    CHECK(via_dynamic.size() == dynsym.size());
    LINKSCOPE_TRY(hashed, elf::dynsym_count_from_hash(dyn));
    CHECK(hashed == table.gnu_symoffset());
    for (std::size_t i = 1; i < dynsym.size(); ++i) {
      LINKSCOPE_TRY(name, dynsym.name(i));
      LINKSCOPE_TRY(hit, table.lookup(name));
      CHECK_FALSE(hit.matched);
      u32 chain = 0;
      CHECK_FALSE(table.gnu_chain_hash(static_cast<u32>(i), chain));
    }
    return ok();
  });
  INFO((r ? "" : r.error().message));
  CHECK(r);
}

TEST_CASE("relocations: PLT, GLOB_DAT and direct symbols equal readelf -r", "[elf][relocations]") {
  for (const char* name : {"libuse.so", "libuse32.so", "libuse_aarch64.so", "libkinds.so"}) {
    auto mapped = mapped_file::open(fx().path(name));
    if (!mapped) {
      WARN("missing fixture " << name);
      continue;
    }
    INFO(name);
    dso_facts facts = read_dso(mapped->bytes());
    REQUIRE(facts.ok);
    std::multiset<std::string> plt, glob_dat, direct;
    for (const std::string& l : lines(readelf("-rW", name))) {
      auto cols = columns(l);
      if (cols.size() < 5) continue;
      const std::string& type = cols[2];
      std::string sym = cols[4];
      auto at = sym.find('@');
      if (at != std::string::npos) sym = sym.substr(0, at);
      if (type.find("JUMP_SLOT") != std::string::npos || type.find("JMP_SLOT") != std::string::npos) plt.insert(sym);
      else if (type.find("GLOB_DAT") != std::string::npos) glob_dat.insert(sym);
      else if (type == "R_X86_64_64" || type == "R_386_32" || type == "R_AARCH64_ABS64") direct.insert(sym);
    }
    CHECK(facts.plt_symbols == plt);
    CHECK(facts.glob_dat_symbols == glob_dat);
    CHECK(facts.direct_symbols == direct);
  }
}

TEST_CASE("extended section numbering: e_shnum 0, SHN_XINDEX, SHT_SYMTAB_SHNDX", "[elf][xindex]") {
  if (fx().many.empty()) {
    WARN("no many-section fixture");
    return;
  }
  auto mapped = mapped_file::open(fx().path(fx().many));
  REQUIRE(mapped);
  // readelf -h: "Number of section headers:         0 (70008)"
  std::size_t expected_sections = 0, expected_shstrndx = 0;
  for (const std::string& l : lines(readelf("-h", fx().many))) {
    auto open = l.find('(');
    if (open == std::string::npos) continue;
    if (l.find("Number of section headers") != std::string::npos) expected_sections = std::stoul(l.substr(open + 1));
    if (l.find("string table index") != std::string::npos) expected_shstrndx = std::stoul(l.substr(open + 1));
  }
  REQUIRE(expected_sections > 65280);
  auto r = elf::visit_elf(mapped->bytes(), [&](const auto& f) -> result<void> {
    CHECK(f.header().e_shnum == 0);
    CHECK(f.section_count() == expected_sections);
    CHECK(f.shstrndx() == expected_shstrndx);
    LINKSCOPE_TRY(symtab, elf::read_symtab(f));
    // f69999 lives in a section past 0xff00: found through SHT_SYMTAB_SHNDX.
    bool seen = false;
    for (std::size_t i = 1; i < symtab.size(); ++i) {
      LINKSCOPE_TRY(name, symtab.name(i));
      if (name != "f69999") continue;
      CHECK(symtab[i].st_shndx == elf::SHN_XINDEX);
      LINKSCOPE_TRY(shndx, symtab.section_index(i));
      LINKSCOPE_TRY(sh, f.section(shndx));
      LINKSCOPE_TRY(section_name, f.section_name(sh));
      CHECK(section_name == ".text.f69999");
      seen = true;
    }
    CHECK(seen);
    return ok();
  });
  CHECK(r);
}

TEST_CASE("real DSOs: every defined dynsym is found through its own hash table", "[elf][real]") {
  for (const char* path : {"/usr/lib/x86_64-linux-gnu/libstdc++.so.6", "/lib/x86_64-linux-gnu/libc.so.6",
                           "/usr/lib/x86_64-linux-gnu/libtorch_cpu.so.1.13"}) {
    auto mapped = mapped_file::open(path);
    if (!mapped) {
      WARN("not present: " << path);
      continue;
    }
    INFO(path);
    dso_facts facts = read_dso(mapped->bytes());
    INFO(facts.error);
    REQUIRE(facts.ok);
    CHECK(facts.defined > 1000);
    CHECK(facts.found == facts.defined);
    CHECK(facts.absent_rejected == facts.absent_tried);
    CHECK(facts.dynsym_dynamic == facts.dynsym_sections);
  }
}

// ---------------------------------------------------------------------------
// Malformed input. Each case patches a copy of a valid DSO and expects an
// error (with an offset) from the reader that meets the damage.

namespace {

using ET = elf::elf64le;

std::string load(const std::string& name) { return read_file(fx().path(name)); }
byte_view view(const std::string& s) { return byte_view(s); }

template <class T>
void patch(std::string& s, u64 offset, T value) {
  std::memcpy(s.data() + offset, &value, sizeof(T));
}

// Run every reader over the bytes; return the first error, if any.
result<void> read_everything(byte_view bytes) {
  return elf::visit_elf(bytes, [&](const auto& f) -> result<void> {
    using T = typename std::decay_t<decltype(f)>::types;
    LINKSCOPE_TRY(dyn, elf::dynamic_info<T>::read(f));
    LINKSCOPE_TRY(symtab, elf::read_symtab(f));
    for (std::size_t i = 1; i < symtab.size(); ++i) {
      LINKSCOPE_TRY(n, symtab.name(i));
      (void)n;
      LINKSCOPE_TRY(x, symtab.section_index(i));
      (void)x;
    }
    LINKSCOPE_TRY(dynsym, elf::read_dynsym(f, dyn));
    LINKSCOPE_TRY(versions, elf::version_tables<T>::read(f, dyn, dynsym.size()));
    for (std::size_t i = 1; i < dynsym.size(); ++i) {
      LINKSCOPE_TRY(n, dynsym.name(i));
      LINKSCOPE_TRY(v, versions.of(i, n, dynsym[i].st_shndx != 0));
      (void)v;
    }
    if (dyn.present()) {
      LINKSCOPE_TRY(via, elf::read_dynsym_from_dynamic(dyn));
      LINKSCOPE_TRY(table, elf::hash_table<T>::open(dyn, via, versions));
      LINKSCOPE_TRY(hit, table.lookup("foo"));
      (void)hit;
      LINKSCOPE_CHECK(elf::for_each_dynamic_relocation(dyn, [](const elf::dynamic_relocation&) {}, via.size(), true));
    }
    return ok();
  });
}

struct layout {
  ET::Ehdr ehdr{};
  std::map<std::string, std::pair<u64, ET::Shdr>> sections;  // name -> (header offset, header)
  u64 dynamic_phdr = 0;                                      // offset of the PT_DYNAMIC program header
};

layout layout_of(const std::string& s) {
  layout out;
  auto f = elf::file<ET>::open(view(s));
  REQUIRE(f);
  out.ehdr = f->header();
  for (std::size_t i = 0; i < f->section_count(); ++i) {
    auto sh = f->section_headers()[i];
    auto n = f->section_name(sh);
    REQUIRE(n);
    out.sections[std::string(*n)] = {f->section_header_offset(i), sh};
  }
  for (std::size_t i = 0; i < f->program_headers().size(); ++i)
    if (f->program_headers()[i].p_type == elf::PT_DYNAMIC) out.dynamic_phdr = out.ehdr.e_phoff + i * sizeof(ET::Phdr);
  return out;
}

void expect_error(const std::string& bytes, const char* what) {
  INFO(what);
  auto r = read_everything(view(bytes));
  REQUIRE_FALSE(r);
  CHECK(r.error().has_offset());
  CHECK(r.error().offset < bytes.size() + 0x100000);
}

}  // namespace

TEST_CASE("malformed: truncation at every point is an error or a consistent prefix, never a crash", "[elf][bad]") {
  const std::string full = load("libver_both.so");
  REQUIRE(full.size() > 1000);
  REQUIRE(read_everything(view(full)));
  std::size_t errors = 0;
  for (std::size_t cut = 0; cut < full.size(); ++cut) {
    const std::string prefix = full.substr(0, cut);  // owned copy: ASan catches any read past it
    auto r = read_everything(view(prefix));
    if (!r) {
      ++errors;
      if (cut >= 16) CHECK(r.error().has_offset());
    }
  }
  // Section headers sit at the end: every proper prefix is missing them.
  CHECK(errors == full.size());
  // The stripped DSO (no section headers): cuts inside the PT_LOAD images.
  for (const auto& [stripped, original] : fx().stripped_pairs) {
    (void)original;
    const std::string s = load(stripped);
    for (std::size_t cut = 0; cut < s.size(); cut += 7) {
      const std::string prefix = s.substr(0, cut);
      auto r = read_everything(view(prefix));
      (void)r;  // must not crash; tables past the cut are errors
    }
    break;
  }
}

TEST_CASE("malformed: tables, entsize, links, strings, versions, hash tables, PT_DYNAMIC", "[elf][bad]") {
  const std::string good = load("libver_both.so");
  const layout l = layout_of(good);
  REQUIRE(l.sections.count(".dynsym"));
  REQUIRE(l.sections.count(".dynstr"));
  REQUIRE(l.sections.count(".gnu.version"));
  REQUIRE(l.sections.count(".gnu.version_d"));
  REQUIRE(l.sections.count(".gnu.hash"));
  REQUIRE(l.sections.count(".hash"));
  const auto [dynsym_at, dynsym] = l.sections.at(".dynsym");
  const auto [dynstr_at, dynstr] = l.sections.at(".dynstr");
  const auto [versym_at, versym] = l.sections.at(".gnu.version");
  const auto [verdef_at, verdef] = l.sections.at(".gnu.version_d");
  const auto [gnu_at, gnu] = l.sections.at(".gnu.hash");
  const u64 sh_entsize = offsetof(ET::Shdr, sh_entsize), sh_link = offsetof(ET::Shdr, sh_link),
            sh_size = offsetof(ET::Shdr, sh_size), sh_offset = offsetof(ET::Shdr, sh_offset);

  SECTION("zero sh_entsize") {
    std::string s = good;
    patch<u64>(s, dynsym_at + sh_entsize, 0);
    expect_error(s, "zero entsize");
  }
  SECTION("wrong sh_entsize") {
    std::string s = good;
    patch<u64>(s, dynsym_at + sh_entsize, 16);
    expect_error(s, "wrong entsize");
  }
  SECTION("out-of-range table") {
    std::string s = good;
    patch<u64>(s, dynsym_at + sh_offset, good.size() - 8);
    expect_error(s, "table past the end");
  }
  SECTION("table size overflowing") {
    std::string s = good;
    patch<u64>(s, dynsym_at + sh_size, ~u64{0} - 23);
    expect_error(s, "huge table");
  }
  SECTION("out-of-range sh_link") {
    std::string s = good;
    patch<u32>(s, dynsym_at + sh_link, 5000);
    expect_error(s, "sh_link");
  }
  SECTION("sh_link to a section that is not a string table") {
    std::string s = good;
    patch<u32>(s, dynsym_at + sh_link, 0);
    expect_error(s, "sh_link to SHT_NULL");
  }
  SECTION("string table without a final NUL") {
    std::string s = good;
    s[dynstr.sh_offset + dynstr.sh_size - 1] = 'x';
    expect_error(s, "no NUL");
  }
  SECTION("versym index past the verdef count") {
    std::string s = good;
    // Symbol 1's versym -> index 77 (no verdef, no verneed has it).
    patch<u16>(s, versym.sh_offset + 2 * 7, 77);
    expect_error(s, "versym past verdef");
  }
  SECTION("vd_next that would loop back (wraps in 32 bits)") {
    std::string s = good;
    // First Verdef's vd_next = -20 as a u32.
    patch<u32>(s, verdef.sh_offset + 16, static_cast<u32>(-20));
    expect_error(s, "vd_next cycle");
  }
  SECTION("verdef count larger than the table") {
    std::string s = good;
    patch<u32>(s, verdef_at + offsetof(ET::Shdr, sh_info), 100000);
    expect_error(s, "verdef count");
  }
  SECTION("GNU hash bloom size 0") {
    std::string s = good;
    patch<u32>(s, gnu.sh_offset + 8, 0);
    expect_error(s, "bloom 0");
  }
  SECTION("GNU hash chain running off the table") {
    std::string s = good;
    // Clear the end bit of the last chain word.
    const u64 last = gnu.sh_offset + gnu.sh_size - 4;
    u32 w;
    std::memcpy(&w, s.data() + last, 4);
    patch<u32>(s, last, w & ~1u);
    expect_error(s, "chain off the table");
  }
  SECTION("GNU hash bucket outside the symbol table") {
    std::string s = good;
    u32 bloom_size;
    std::memcpy(&bloom_size, s.data() + gnu.sh_offset + 8, 4);
    patch<u32>(s, gnu.sh_offset + 16 + 8 * bloom_size, 100000);
    expect_error(s, "bucket");
  }
  SECTION("PT_DYNAMIC outside the file") {
    std::string s = good;
    REQUIRE(l.dynamic_phdr != 0);
    patch<u64>(s, l.dynamic_phdr + offsetof(ET::Phdr, p_offset), good.size() + 4096);
    expect_error(s, "PT_DYNAMIC");
  }
  SECTION("program header table past the end") {
    std::string s = good;
    patch<u64>(s, offsetof(ET::Ehdr, e_phoff), good.size() - 10);
    expect_error(s, "phdrs");
  }
  SECTION("bad e_shstrndx") {
    std::string s = good;
    patch<u16>(s, offsetof(ET::Ehdr, e_shstrndx), 999);
    expect_error(s, "shstrndx");
  }
  (void)dynstr_at;
  (void)versym_at;
  (void)gnu_at;
}

TEST_CASE("malformed: no section headers, DT_GNU_HASH count walk and DT_STRTAB checks", "[elf][bad]") {
  if (fx().stripped_pairs.empty()) return;
  // nosh_libver_gnu.so: only DT_GNU_HASH counts the symbols.
  std::string good;
  for (const auto& [stripped, original] : fx().stripped_pairs)
    if (original == "libver_gnu.so") good = load(stripped);
  if (good.empty()) return;
  REQUIRE(read_everything(view(good)));
  auto f = elf::file<ET>::open(view(good));
  REQUIRE(f);
  auto dyn = elf::dynamic_info<ET>::read(*f);
  REQUIRE(dyn);
  auto gnu = dyn->offset_of(dyn->gnu_hash(), 16);
  REQUIRE(gnu);
  {
    std::string s = good;
    patch<u32>(s, *gnu + 8, 0);
    expect_error(s, "bloom 0, no section headers");
  }
  {
    // Every chain word without its end bit: the count walk runs to the end of the file.
    std::string s = good;
    u32 nbuckets, symoffset, bloom;
    std::memcpy(&nbuckets, s.data() + *gnu, 4);
    std::memcpy(&symoffset, s.data() + *gnu + 4, 4);
    std::memcpy(&bloom, s.data() + *gnu + 8, 4);
    const u64 chains = *gnu + 16 + 8 * u64{bloom} + 4 * u64{nbuckets};
    for (u64 p = chains; p + 4 <= s.size(); p += 4) {
      u32 w;
      std::memcpy(&w, s.data() + p, 4);
      patch<u32>(s, p, w & ~1u);
    }
    expect_error(s, "chain walk off the file");
  }
  {
    // DT_STRSZ larger than the segment.
    std::string s = good;
    const u64 base = dyn->offset();
    for (std::size_t i = 0; i < dyn->entries().size(); ++i)
      if (dyn->entries()[i].d_tag == elf::DT_STRSZ) patch<u64>(s, base + i * 16 + 8, u64{1} << 40);
    expect_error(s, "DT_STRSZ");
  }
}
