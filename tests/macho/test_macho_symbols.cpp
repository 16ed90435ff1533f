// macho/symbols.hpp (named test_macho_symbols: tests/symbols/test_symbols.cpp owns the CMake target test_symbols):
// llvm-nm-14 (default output, and -m, which spells out every flag the model
// carries: weak, private extern, common alignment, two-level library) on
// objects, dylibs, bundles, executables and each slice of a universal file.
#include "linkscope/macho/symbols.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "linkscope/core/mapped_file.hpp"
#include "linkscope/macho/fat.hpp"
#include "linkscope/macho/file.hpp"
#include "linkscope/symbols/table.hpp"
#include "macho/macho_fixtures.hpp"

using namespace linkscope;
using namespace linkscope_test;

namespace {
const std::string& fixture_dir() {
  static const std::string dir = have_macho_tools() ? make_macho_fixtures("macho_symbols") : std::string();
  return dir;
}

std::string hex16(u64 v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

struct listing {
  std::vector<std::string> plain;   // llvm-nm
  std::vector<std::string> darwin;  // llvm-nm -m
};

// Our rendering of llvm-nm's two formats, from the symbol model (plus the
// nlist bits the model does not carry: the section names, REFERENCED_DYNAMICALLY).
template <class File>
listing render(const File& f) {
  listing out;
  auto sections = macho::section_infos(f);
  REQUIRE(sections);
  auto dylibs = f.dylibs();
  REQUIRE(dylibs);
  struct row {
    std::string name;
    u64 value;
    std::string plain, darwin;
  };
  std::vector<row> rows;
  const bool linked = f.filetype() != macho::MH_OBJECT;
  auto r = macho::for_each_nlist(f, [&](const macho::nlist_entry& e) {
    if (e.is_stab()) return true;
    const symbol s = macho::to_symbol(e, *sections, f.is_two_level(), linked);
    const std::string value = !s.defined ? std::string(16, ' ') : hex16(s.kind == symbol_kind::common ? s.size : s.value);
    row rw{std::string(s.name), s.value, value + " " + macho::nm_type_char(e, *sections) + " " + std::string(s.name), ""};
    std::string d = value + " ";
    if (s.kind == symbol_kind::common) {
      d += "(common) ";
      if (s.value > 1) d += "(alignment 2^" + std::to_string(__builtin_ctzll(s.value)) + ") ";
    } else if (!s.defined) {
      d += "(undefined) ";
    } else if (s.section == macho::absolute_section) {
      d += "(absolute) ";
    } else {
      const auto& sec = (*sections)[s.section - 1u];
      d += "(" + std::string(sec.segment) + "," + std::string(sec.name) + ") ";
    }
    if (s.is_global()) {
      if (e.referenced_dynamically()) d += "[referenced dynamically] ";
      if (s.vis == visibility::hidden)
        d += "private external ";
      else
        d += s.bind == binding::weak ? "weak external " : "external ";
    } else {
      d += s.vis == visibility::hidden ? "non-external (was a private external) " : "non-external ";
    }
    d += std::string(s.name);
    if (!s.defined && s.library_ordinal != 0) {
      if (s.library_ordinal > 0) {
        REQUIRE(static_cast<std::size_t>(s.library_ordinal) <= dylibs->size());
        d += " (from " + std::string(macho::library_short_name((*dylibs)[static_cast<std::size_t>(s.library_ordinal) - 1].name)) + ")";
      } else if (s.library_ordinal == library_ordinal_executable) {
        d += " (from executable)";
      } else if (s.library_ordinal == library_ordinal_flat_lookup) {
        d += " (dynamically looked up)";
      }
    }
    rw.darwin = d;
    rows.push_back(rw);
    return true;
  });
  REQUIRE(r);
  std::stable_sort(rows.begin(), rows.end(), [](const row& a, const row& b) {
    return a.name != b.name ? a.name < b.name : a.value < b.value;
  });
  for (const auto& rw : rows) {
    out.plain.push_back(rw.plain);
    out.darwin.push_back(rw.darwin);
  }
  return out;
}

listing render_bytes(byte_view bytes) {
  listing out;
  auto r = macho::visit_macho(bytes, [&](const auto& f) -> result<void> {
    out = render(f);
    return ok();
  });
  REQUIRE(r);
  return out;
}

std::vector<std::string> nm_lines(const std::string& flags, const std::string& path) {
  auto all = lines(capture("llvm-nm-14 " + flags + " " + shell_quote(path)).out);
  all.erase(std::remove(all.begin(), all.end(), std::string()), all.end());
  return all;
}
}  // namespace

TEST_CASE("macho symbols list as llvm-nm-14 lists them, with and without -m", "[macho]") {
  LINKSCOPE_MACHO_FIXTURES_OR_RETURN(fixture_dir());
  for (const auto& name : macho_images()) {
    INFO(name);
    const std::string path = fixture_dir() + "/" + name;
    auto mapped = mapped_file::open(path);
    REQUIRE(mapped);
    const listing ours = render_bytes(mapped->bytes());
    CHECK(ours.plain == nm_lines("", path));
    CHECK(ours.darwin == nm_lines("-m", path));
  }
}

TEST_CASE("macho symbols of each slice of a universal file equal llvm-nm-14 --arch", "[macho]") {
  LINKSCOPE_MACHO_FIXTURES_OR_RETURN(fixture_dir());
  const std::string path = fixture_dir() + "/liba_fat.dylib";
  auto mapped = mapped_file::open(path);
  REQUIRE(mapped);
  auto fat = macho::fat_file::open(mapped->bytes());
  REQUIRE(fat);
  for (const char* arch : macho_archs) {
    INFO(arch);
    auto slice = fat->find(arch);
    REQUIRE(slice);
    auto expected = nm_lines(std::string("--arch=") + arch, path);
    REQUIRE_FALSE(expected.empty());
    CHECK(render_bytes(slice->bytes).plain == expected);
  }
}

TEST_CASE("macho symbols: the model's fields for each kind of nlist", "[macho]") {
  LINKSCOPE_MACHO_FIXTURES_OR_RETURN(fixture_dir());
  auto find = [](const std::string& file, std::string_view name) {
    auto mapped = mapped_file::open(file);
    REQUIRE(mapped);
    auto table = symbol_table::from(macho::symbols_source(mapped->bytes()));
    REQUIRE(table);
    for (const auto& s : table->symbols())
      if (s.name == name) return s;
    FAIL("no symbol " << name);
    return symbol{};
  };
  // a.c: declared in the source, flags as llvm-nm -m prints them above.
  const std::string obj = fixture_dir() + "/a_x86_64.o";
  const symbol common = find(obj, "_common_var");  // int common_var; with -fcommon
  CHECK(common.kind == symbol_kind::common);
  CHECK(common.size == 4);
  CHECK(common.value == 4);
  const symbol hidden = find(obj, "_hidden_fn");  // visibility("hidden"): private extern
  CHECK(hidden.vis == visibility::hidden);
  CHECK(hidden.bind == binding::global);
  CHECK(hidden.kind == symbol_kind::func);
  const symbol weak_def = find(obj, "_weak_def");  // __attribute__((weak))
  CHECK(weak_def.bind == binding::weak);
  CHECK(weak_def.defined);
  const symbol weak_ref = find(obj, "_weak_fn");  // weak_import
  CHECK(weak_ref.bind == binding::weak);
  CHECK_FALSE(weak_ref.defined);
  CHECK(weak_ref.library_ordinal == 0);  // objects have no two-level namespace
  CHECK(find(obj, "_local_var").bind == binding::local);
  CHECK(find(obj, "_tls_var").kind == symbol_kind::tls);
  // liba: weak_fn and ext_var come from libw (second dylib command), printf from libSystem (first).
  const std::string lib = fixture_dir() + "/liba_x86_64.dylib";
  CHECK(find(lib, "_weak_fn").library_ordinal == 2);
  CHECK(find(lib, "_printf").library_ordinal == 1);
  const symbol was_private = find(lib, "_hidden_fn");
  CHECK(was_private.bind == binding::local);
  CHECK(was_private.vis == visibility::hidden);
}

TEST_CASE("macho symbols: bad symbol tables are errors with offsets", "[macho]") {
  LINKSCOPE_MACHO_FIXTURES_OR_RETURN(fixture_dir());
  std::string content = read_file(fixture_dir() + "/a_x86_64.o");
  auto f = macho::file<macho::macho64le>::open(byte_view(std::string_view(content)));
  REQUIRE(f);
  auto st_cmd = f->find_command(macho::LC_SYMTAB);
  REQUIRE(st_cmd);
  const std::size_t at = static_cast<std::size_t>(st_cmd->offset);
  auto count = [&](const std::string& bytes) {
    std::size_t n = 0;
    return std::make_pair(macho::symbols_source(byte_view(std::string_view(bytes))).for_each_symbol([&](const symbol&) { ++n; }), n);
  };
  REQUIRE(count(content).first);
  std::string big_nsyms = content;
  big_nsyms[at + 12] = '\xff';
  big_nsyms[at + 13] = '\xff';
  auto r1 = count(big_nsyms).first;
  REQUIRE_FALSE(r1);
  CHECK(r1.error().code == errc::truncated);
  std::string big_strsize = content;
  big_strsize[at + 22] = '\x7f';
  auto r2 = count(big_strsize).first;
  REQUIRE_FALSE(r2);
  CHECK(r2.error().code == errc::truncated);
  // n_strx of the first symbol past the string table
  std::string bad_strx = content;
  const u32 symoff = load<u32, std::endian::little>(reinterpret_cast<const unsigned char*>(content.data()) + at + 8);
  bad_strx[symoff + 3] = '\x7f';
  auto r3 = count(bad_strx).first;
  REQUIRE_FALSE(r3);
  CHECK(r3.error().code == errc::out_of_range);
}
