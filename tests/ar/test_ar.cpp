// Tests of linkscope/ar/archive.hpp, linkscope/ar/armap.hpp and linkscope-ar.
//
// Archives are made at test time with GNU ar, llvm-ar-14 (gnu, bsd, darwin,
// thin, SYM64_THRESHOLD=0) and llvm-lib-14; the flavours no tool here writes
// (AIX big, COFF second linker member, __.SYMDEF SORTED, big-endian ranlib)
// come from tests/support/gen_archive.hpp. Expected member lists come from
// `ar t` / `llvm-ar-14 t`, expected armaps from `nm -s` / `llvm-nm-14
// --print-armap`.
#include <linkscope/ar/archive.hpp>
#include <linkscope/ar/armap.hpp>

#include <catch2/catch.hpp>

#include <linkscope/core/mapped_file.hpp>
#include <linkscope/symbols/index.hpp>
#include <linkscope/symbols/table.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include "support/fixtures.hpp"
#include "support/gen_archive.hpp"

using namespace linkscope_test;
namespace ar = linkscope::ar;
using linkscope::errc;

namespace {

// The objects every fixture archive is made of (built once per run).
struct objects {
  std::string dir;
  bool ok = false;
};

const objects& elf_objects() {
  static objects o = [] {
    objects r;
    r.dir = scratch_dir("ar_objects");
    write_file(r.dir + "/a.c", "int a1(void){return 1;}\nint a_data = 3;\nint common_sym;\n");
    write_file(r.dir + "/b.c", "int b1(void){return 2;}\n");
    write_file(r.dir + "/this_is_a_long_member_name_over_16.c", "int b1(void){return 2;}\nint long_only(void){return 4;}\n");
    write_file(r.dir + "/odd.txt", "odd");  // an odd-sized member: padding
    std::filesystem::create_directories(r.dir + "/sub");
    write_file(r.dir + "/sub/c.c", "int c1(void){return 5;}\n");
    r.ok = run_in(r.dir, "gcc -c a.c b.c this_is_a_long_member_name_over_16.c && gcc -c sub/c.c -o sub/c.o") == 0;
    return r;
  }();
  return o;
}

const char* const member_set = "a.o this_is_a_long_member_name_over_16.o odd.txt b.o sub/c.o";

// Member names as our library lists them (thin: joined like GNU ar does).
std::string our_members(const std::string& path) {
  auto file = linkscope::mapped_file::open(path);
  REQUIRE(file);
  auto archive = ar::archive::open(file->bytes());
  REQUIRE(archive);
  std::string out;
  auto r = archive->for_each_member([&](const ar::member& m) {
    if (archive->is_thin()) {
      auto p = ar::thin_member_path(path, m);
      REQUIRE(p);
      out += *p;
    } else {
      out += m.name;
    }
    out += '\n';
  });
  REQUIRE(r);
  return out;
}

// "name in member" lines of our armap (default table, or `which`).
std::string our_armap(const std::string& path, ar::table_kind which = ar::table_kind::none) {
  auto file = linkscope::mapped_file::open(path);
  REQUIRE(file);
  auto archive = ar::archive::open(file->bytes());
  REQUIRE(archive);
  auto map = which == ar::table_kind::none ? ar::armap::read(*archive) : ar::armap::read(*archive, which);
  REQUIRE(map);
  std::string out;
  auto r = map->for_each([&](const ar::armap_entry& e) {
    auto m = archive->member_at(e.member_offset);
    REQUIRE(m);
    std::string name(m->name);
    if (archive->is_thin()) name = *ar::thin_member_path(path, *m);
    out += std::string(e.name) + " in " + name + "\n";
  });
  REQUIRE(r);
  return out;
}

// The lines between `header` and the next empty line of a tool's output.
std::string section(const std::string& text, const std::string& header) {
  std::string out;
  bool in = false;
  for (const auto& line : lines(text)) {
    if (!in) {
      in = line == header;
      continue;
    }
    if (line.empty()) break;
    out += line + "\n";
  }
  return out;
}

std::string nm_index(const std::string& path) { return section(capture("nm -s " + shell_quote(path) + " 2>/dev/null").out, "Archive index:"); }
std::string llvm_armap(const std::string& path) {
  return section(capture("llvm-nm-14 --print-armap " + shell_quote(path) + " 2>/dev/null").out, "Archive map");
}
std::string ar_t(const std::string& path) { return capture("ar t " + shell_quote(path)).out; }
std::string llvm_ar_t(const std::string& path) { return capture("llvm-ar-14 t " + shell_quote(path)).out; }
std::string cli(const std::string& args) { return capture(shell_quote(tool_path("linkscope-ar")) + " " + args).out; }


ar::archive open_bytes(const std::string& bytes) {
  auto a = ar::archive::open(linkscope::byte_view(std::string_view(bytes)));
  REQUIRE(a);
  return *a;
}

// Walk everything an archive offers; return the first error (or ok).
linkscope::error walk_all(const std::string& bytes) {
  auto a = ar::archive::open(linkscope::byte_view(std::string_view(bytes)));
  if (!a) return a.error();
  for (const auto& m : a->members()) {
    if (!m) return m.error();
  }
  auto whole = ar::armap::read(*a);
  if (!whole) return whole.error();
  for (std::size_t t = 0; t < a->symbol_table_count(); ++t) {
    auto map = ar::armap::read(*a, a->symbol_table(t).kind);
    if (!map) return map.error();
    linkscope::error failure{};
    auto r = map->for_each([&](const ar::armap_entry& e) {
      auto m = a->member_at(e.member_offset);
      if (!m) {
        failure = m.error();
        return false;
      }
      return true;
    });
    if (!r) return r.error();
    if (failure.code != errc::ok) return failure;
  }
  return {};
}

}  // namespace

TEST_CASE("GNU ar archives: members equal ar t, armap equals nm -s", "[ar]") {
  const auto& o = elf_objects();
  REQUIRE(o.ok);
  REQUIRE(run_in(o.dir, std::string("rm -f gnu.a thin.a && ar rcs gnu.a ") + member_set + " && ar rcs --thin thin.a " + member_set) == 0);
  for (const char* name : {"gnu.a", "thin.a"}) {
    INFO(name);
    const std::string path = o.dir + "/" + name;
    const std::string expected_members = ar_t(path);
    REQUIRE(lines(expected_members).size() == 5);
    CHECK(our_members(path) == expected_members);
    const std::string expected_armap = nm_index(path);
    REQUIRE(expected_armap.find("a1 in ") != std::string::npos);
    CHECK(our_armap(path) == expected_armap);
    // The CLI, byte for byte.
    CHECK(cli("t " + shell_quote(path)) == expected_members);
    CHECK(cli("tv " + shell_quote(path)) == capture("ar tv " + shell_quote(path)).out);
    CHECK(cli("--print-armap " + shell_quote(path)) == "Archive index:\n" + expected_armap + "\n");
  }
  auto file = linkscope::mapped_file::open(o.dir + "/gnu.a");
  REQUIRE(file);
  auto a = ar::archive::open(file->bytes());
  REQUIRE(a);
  CHECK(a->kind() == ar::format::gnu);
  REQUIRE(a->symbol_table_count() == 1);
  CHECK(a->symbol_table(0).kind == ar::table_kind::gnu32);
  CHECK(!a->long_names().empty());
  // Member data is the object file, byte for byte; odd sizes are padded.
  std::size_t seen = 0;
  for (const auto& m : a->members()) {
    REQUIRE(m);
    const std::string on_disk = read_file(o.dir + "/" + std::string(m->name == "c.o" ? "sub/c.o" : m->name));
    CHECK(m->data.chars() == on_disk);
    CHECK(m->size == on_disk.size());
    CHECK(m->data_offset == m->header_offset + 60);
    ++seen;
  }
  CHECK(seen == 5);
  auto thin_file = linkscope::mapped_file::open(o.dir + "/thin.a");
  REQUIRE(thin_file);
  auto thin = ar::archive::open(thin_file->bytes());
  REQUIRE(thin);
  CHECK(thin->kind() == ar::format::thin);
  REQUIRE(thin->for_each_member([&](const ar::member& m) {
    CHECK(m.external);
    CHECK(m.data.empty());
    auto member_file = ar::open_thin_member(o.dir + "/thin.a", *thin_file, m);
    REQUIRE(member_file);
    CHECK(member_file->size() == m.size);
  }));
}

TEST_CASE("linkscope-ar: several archives in one run, and --", "[ar][cli]") {
  const auto& o = elf_objects();
  REQUIRE(o.ok);
  REQUIRE(run_in(o.dir, std::string("rm -f one.a ./-x.a && ar rcs one.a ") + member_set + " && cp one.a ./-x.a") == 0);
  const std::string one = o.dir + "/one.a";
  // Like nm over several archives: each listing is headed by `\nARCHIVE:`; each list is `ar t`'s.
  CHECK(cli("t " + shell_quote(one) + " " + shell_quote(one)) == "\n" + one + ":\n" + ar_t(one) + "\n" + one + ":\n" + ar_t(one));
  // `--` ends the options: an archive named -x.a gets through, as with `ar t -- -x.a`.
  CHECK(capture("cd " + shell_quote(o.dir) + " && " + shell_quote(tool_path("linkscope-ar")) + " t -- -x.a").out ==
        capture("cd " + shell_quote(o.dir) + " && ar t -- -x.a").out);
  CHECK(capture(shell_quote(tool_path("linkscope-ar")) + " --bogus 2>&1").status == 2);
  CHECK(capture(shell_quote(tool_path("linkscope-ar")) + " --print-armap --find x " + shell_quote(one)).status == 2);
}

TEST_CASE("thin archive nesting a regular archive (/N:M names)", "[ar]") {
  const auto& o = elf_objects();
  REQUIRE(o.ok);
  // GNU ar adds the members of a regular archive to a thin one as "/N:M":
  // long name N (the nested archive), header offset M inside it.
  REQUIRE(run_in(o.dir, "rm -f inner.a nest.a && ar rcs inner.a a.o this_is_a_long_member_name_over_16.o && "
                        "ar rcs --thin nest.a inner.a b.o") == 0);
  const std::string path = o.dir + "/nest.a";
  const std::string expected = ar_t(path);
  REQUIRE(expected.find("this_is_a_long_member_name_over_16.o\n") != std::string::npos);
  CHECK(cli("t " + shell_quote(path)) == expected);
  CHECK(cli("tv " + shell_quote(path)) == capture("ar tv " + shell_quote(path)).out);
  CHECK(cli("--print-armap " + shell_quote(path)) == "Archive index:\n" + nm_index(path) + "\n");
  auto file = linkscope::mapped_file::open(path);
  REQUIRE(file);
  auto a = ar::archive::open(file->bytes());
  REQUIRE(a);
  auto inner_file = linkscope::mapped_file::open(o.dir + "/inner.a");
  REQUIRE(inner_file);
  auto inner = ar::archive::open(inner_file->bytes());
  REQUIRE(inner);
  std::string names;
  REQUIRE(a->for_each_member([&](const ar::member& m) {
    if (!m.nested) {
      names += *ar::thin_member_path(path, m) + "\n";
      return;
    }
    CHECK(m.name == "inner.a");
    auto nested = inner->member_at(m.nested_offset);
    REQUIRE(nested);
    names += std::string(nested->name) + "\n";
  }));
  CHECK(names == expected);
}

TEST_CASE("ar tv with real dates, uids and modes", "[ar]") {
  const auto& o = elf_objects();
  REQUIRE(o.ok);
  // U: keep the real timestamps, uid, gid and mode (GNU ar is deterministic by default).
  REQUIRE(run_in(o.dir, "rm -f u.a && cp odd.txt odd_mode.txt && chmod 4751 odd_mode.txt && touch -d '2021-07-04 13:37' a.o && ar rcsU u.a a.o odd_mode.txt b.o") == 0);
  const std::string path = o.dir + "/u.a";
  const std::string expected = capture("ar tv " + shell_quote(path)).out;
  CHECK(expected.find("2021") != std::string::npos);
  CHECK(cli("tv " + shell_quote(path)) == expected);
  CHECK(capture("TZ=Asia/Kolkata " + shell_quote(tool_path("linkscope-ar")) + " tv " + shell_quote(path)).out ==
        capture("TZ=Asia/Kolkata ar tv " + shell_quote(path)).out);
}

TEST_CASE("llvm-ar-14 formats: gnu, bsd, darwin, thin, /SYM64/, __.SYMDEF_64", "[ar]") {
  const auto& o = elf_objects();
  REQUIRE(o.ok);
  struct flavour {
    const char* file;
    const char* command;
    ar::format format;
    ar::table_kind table;
  };
  const flavour flavours[] = {
      {"l_gnu.a", "llvm-ar-14 rcs --format=gnu", ar::format::gnu, ar::table_kind::gnu32},
      {"l_bsd.a", "llvm-ar-14 rcs --format=bsd", ar::format::bsd, ar::table_kind::bsd32},
      {"l_darwin.a", "llvm-ar-14 rcs --format=darwin", ar::format::bsd, ar::table_kind::bsd32},
      {"l_thin.a", "llvm-ar-14 rcs --thin", ar::format::thin, ar::table_kind::gnu32},
      {"l_gnu64.a", "SYM64_THRESHOLD=0 llvm-ar-14 rcs --format=gnu", ar::format::gnu, ar::table_kind::gnu64},
      {"l_darwin64.a", "SYM64_THRESHOLD=0 llvm-ar-14 rcs --format=darwin", ar::format::bsd, ar::table_kind::bsd64},
      {"l_bsd64.a", "SYM64_THRESHOLD=0 llvm-ar-14 rcs --format=bsd", ar::format::bsd, ar::table_kind::gnu64},
  };
  for (const auto& f : flavours) {
    INFO(f.file);
    const std::string path = o.dir + "/" + f.file;
    REQUIRE(run_in(o.dir, std::string("rm -f ") + f.file + " && " + f.command + " " + f.file + " " + member_set) == 0);
    const std::string expected_members = llvm_ar_t(path);
    REQUIRE(lines(expected_members).size() == 5);
    CHECK(our_members(path) == expected_members);
    CHECK(cli("t " + shell_quote(path)) == expected_members);
    CHECK(cli("tv " + shell_quote(path)) == capture("llvm-ar-14 tv " + shell_quote(path)).out);
    // llvm-nm prints thin member names unjoined; GNU nm joins them like GNU ar.
    const std::string expected_armap = f.format == ar::format::thin ? nm_index(path) : llvm_armap(path);
    REQUIRE(expected_armap.find("long_only in ") != std::string::npos);
    CHECK(our_armap(path) == expected_armap);
    auto file = linkscope::mapped_file::open(path);
    REQUIRE(file);
    auto a = ar::archive::open(file->bytes());
    REQUIRE(a);
    CHECK(a->kind() == f.format);
    REQUIRE(a->has_symbol_table());
    CHECK(a->symbol_table(0).kind == f.table);
  }
}

TEST_CASE("COFF .lib from llvm-lib-14", "[ar]") {
  const auto& o = elf_objects();
  REQUIRE(o.ok);
  if (!have_tool("llvm-lib-14")) {
    WARN("llvm-lib-14 missing");
    return;
  }
  REQUIRE(run_in(o.dir,
                 "rm -f x.lib && clang-14 --target=x86_64-pc-windows-msvc -c a.c -o a.obj && "
                 "clang-14 --target=x86_64-pc-windows-msvc -c this_is_a_long_member_name_over_16.c -o this_is_a_long_member_name_over_16.obj && "
                 "clang-14 --target=x86_64-pc-windows-msvc -c b.c -o b.obj && "
                 "llvm-lib-14 /out:x.lib a.obj this_is_a_long_member_name_over_16.obj b.obj") == 0);
  const std::string path = o.dir + "/x.lib";
  CHECK(our_members(path) == llvm_ar_t(path));
  CHECK(our_members(path) == ar_t(path));
  const std::string expected = nm_index(path);
  REQUIRE(expected.find("long_only in ") != std::string::npos);
  CHECK(our_armap(path) == expected);
  CHECK(cli("--print-armap " + shell_quote(path)) == "Archive index:\n" + expected + "\n");
}

TEST_CASE("generated COFF .lib with a second linker member", "[ar][gen]") {
  const auto& o = elf_objects();
  REQUIRE(o.ok);
  const std::vector<gen::input_member> members = {{"a.o", read_file(o.dir + "/a.o")},
                                                  {"this_is_a_long_member_name_over_16.o", read_file(o.dir + "/this_is_a_long_member_name_over_16.o")},
                                                  {"b.o", read_file(o.dir + "/b.o")}};
  const std::vector<gen::input_symbol> symbols = {{"a1", 0}, {"a_data", 0}, {"b1", 1}, {"long_only", 1}, {"b1", 2}, {"Zeta", 2}};
  const std::string path = o.dir + "/gen_coff.lib";
  write_file(path, gen::coff_lib(members, symbols));
  CHECK(our_members(path) == llvm_ar_t(path));
  CHECK(our_members(path) == ar_t(path));
  // GNU nm reads the first linker member; llvm-nm the second (sorted) one.
  CHECK(our_armap(path) == nm_index(path));
  const std::string second = llvm_armap(path);
  REQUIRE(second.substr(0, 12) == "Zeta in b.o\n");
  CHECK(our_armap(path, ar::table_kind::coff_second) == second);
  const std::string bytes = read_file(path);
  auto a = open_bytes(bytes);
  CHECK(a.kind() == ar::format::coff);
  REQUIRE(a.symbol_table_count() == 2);
  CHECK(a.symbol_table(1).kind == ar::table_kind::coff_second);
}

TEST_CASE("generated BSD archives: __.SYMDEF SORTED, _64, big-endian", "[ar][gen]") {
  const auto& o = elf_objects();
  REQUIRE(o.ok);
  const std::vector<gen::input_member> members = {{"a.o", read_file(o.dir + "/a.o")},
                                                  {"this_is_a_long_member_name_over_16.o", read_file(o.dir + "/this_is_a_long_member_name_over_16.o")},
                                                  {"b.o", read_file(o.dir + "/b.o")}};
  const std::vector<gen::input_symbol> symbols = {{"a1", 0}, {"a_data", 0}, {"b1", 1}, {"long_only", 1}, {"b1", 2}, {"Zeta", 2}};
  for (bool is64 : {false, true}) {
    for (bool sorted : {false, true}) {
      INFO("is64 " << is64 << " sorted " << sorted);
      // llvm-nm-14 reads the little-endian #1/ form: that is the oracle.
      const std::string le_path = o.dir + "/gen_bsd_le.a";
      write_file(le_path, gen::bsd(members, symbols, {is64, false, sorted, false}));
      const std::string expected = llvm_armap(le_path);
      REQUIRE(lines(expected).size() == symbols.size());
      if (sorted) CHECK(expected.substr(0, 12) == "Zeta in b.o\n");
      CHECK(our_armap(le_path) == expected);
      const std::string expected_members = llvm_ar_t(le_path);
      CHECK(our_members(le_path) == expected_members);
      // The same table big-endian, and with the name in the raw 16-byte field.
      for (bool big : {false, true}) {
        for (bool raw : {false, true}) {
          INFO("big " << big << " raw " << raw);
          if (is64 && sorted && raw) continue;  // "__.SYMDEF_64 SORTED" does not fit 16 bytes
          const std::string path = o.dir + "/gen_bsd_variant.a";
          write_file(path, gen::bsd(members, symbols, {is64, big, sorted, raw}));
          CHECK(our_armap(path) == expected);
          CHECK(our_members(path) == expected_members);
          auto file = linkscope::mapped_file::open(path);
          REQUIRE(file);
          auto a = ar::archive::open(file->bytes());
          REQUIRE(a);
          CHECK(a->kind() == ar::format::bsd);
          REQUIRE(a->has_symbol_table());
          CHECK(a->symbol_table(0).kind == (is64 ? ar::table_kind::bsd64 : ar::table_kind::bsd32));
          CHECK(a->symbol_table(0).sorted == sorted);
          auto map = ar::armap::read(*a);
          REQUIRE(map);
          CHECK(map->big_endian() == big);
        }
      }
    }
  }
}

TEST_CASE("generated AIX big archive", "[ar][gen]") {
  const auto& o = elf_objects();
  REQUIRE(o.ok);
  const std::vector<gen::input_member> members = {{"a.o", read_file(o.dir + "/a.o")},
                                                  {"this_is_a_long_member_name_over_16.o", read_file(o.dir + "/this_is_a_long_member_name_over_16.o")},
                                                  {"odd.txt", "odd"},
                                                  {"b.o", read_file(o.dir + "/b.o")}};
  const std::vector<gen::input_symbol> syms32 = {{"a1", 0}, {"b1", 1}, {"b1", 3}};
  const std::vector<gen::input_symbol> syms64 = {{"a1_64", 0}, {"long_only", 1}};
  const std::string path = o.dir + "/big.a";
  const std::string bytes = gen::aix_big(members, syms32, syms64);
  write_file(path, bytes);
  // llvm-ar-14 reads big archives (but not their symbol tables).
  const std::string expected = llvm_ar_t(path);
  REQUIRE(expected == "a.o\nthis_is_a_long_member_name_over_16.o\nodd.txt\nb.o\n");
  CHECK(our_members(path) == expected);
  CHECK(cli("t " + shell_quote(path)) == expected);
  auto a = open_bytes(bytes);
  CHECK(a.kind() == ar::format::aix_big);
  REQUIRE(a.symbol_table_count() == 2);
  CHECK(a.symbol_table(0).kind == ar::table_kind::aix32);
  CHECK(a.symbol_table(1).kind == ar::table_kind::aix64);
  std::size_t i = 0;
  REQUIRE(a.for_each_member([&](const ar::member& m) {
    CHECK(m.data.chars() == members[i].data);
    CHECK(m.mode == 0644);
    CHECK(m.date == 1700000000);
    ++i;
  }));
  CHECK(i == members.size());
  // Both tables, 32-bit entries first; names as the generator wrote them.
  CHECK(our_armap(path) ==
        "a1 in a.o\nb1 in this_is_a_long_member_name_over_16.o\nb1 in b.o\n"
        "a1_64 in a.o\nlong_only in this_is_a_long_member_name_over_16.o\n");
  CHECK(our_armap(path, ar::table_kind::aix64) == "a1_64 in a.o\nlong_only in this_is_a_long_member_name_over_16.o\n");
}

TEST_CASE("armap is a symbol_source; --find goes through hash_index", "[ar]") {
  const auto& o = elf_objects();
  REQUIRE(o.ok);
  const std::string path = o.dir + "/gnu.a";
  REQUIRE(run_in(o.dir, std::string("rm -f gnu.a && ar rcs gnu.a ") + member_set) == 0);
  auto file = linkscope::mapped_file::open(path);
  REQUIRE(file);
  auto a = ar::archive::open(file->bytes());
  REQUIRE(a);
  auto map = ar::armap::read(*a);
  REQUIRE(map);
  auto table = linkscope::symbol_table::from(*map);
  REQUIRE(table);
  CHECK(table->size() == map->size());
  CHECK(table->size() == lines(nm_index(path)).size());
  auto index = linkscope::hash_index::build(*table);
  auto ids = index.find("b1");
  REQUIRE(ids.size() == 2);  // nm -s: b1 in this_is_a_long..., b1 in b.o
  std::vector<std::string> defining;
  for (auto id : ids) {
    CHECK((*table)[id].defined);
    defining.emplace_back(a->member_at((*table)[id].origin)->name);
  }
  CHECK(defining == std::vector<std::string>{"this_is_a_long_member_name_over_16.o", "b.o"});
  // The CLI agrees with the nm -s lines for that symbol.
  std::string expected;
  for (const auto& line : lines(nm_index(path)))
    if (line.substr(0, 6) == "b1 in ") expected += line + "\n";
  CHECK(cli("--find b1 " + shell_quote(path)) == expected);
  CHECK(capture(shell_quote(tool_path("linkscope-ar")) + " --find no_such_symbol " + shell_quote(path)).status == 1);
  const std::string json = cli("--json --find b1 " + shell_quote(path));
  CHECK(json.find("\"version\":1") != std::string::npos);
  CHECK(json.find("gnu.a(b.o)") != std::string::npos);
}

TEST_CASE("thin archive members: missing, self-reference, confinement", "[ar][bad]") {
  const auto& o = elf_objects();
  REQUIRE(o.ok);
  const std::string dir = scratch_dir("ar_thin");
  write_file(dir + "/x.o", read_file(o.dir + "/a.o"));
  REQUIRE(run_in(dir, "ar rcs --thin t.a x.o && rm x.o") == 0);
  {
    auto file = linkscope::mapped_file::open(dir + "/t.a");
    REQUIRE(file);
    auto a = ar::archive::open(file->bytes());
    REQUIRE(a);
    auto first = *a->members().begin();
    REQUIRE(first);
    auto member_file = ar::open_thin_member(dir + "/t.a", *file, *first);
    REQUIRE(!member_file);
    CHECK(member_file.error().code == errc::not_found);
    CHECK(member_file.error().offset == first->header_offset);
  }
  // A thin archive whose member is the archive itself (by name, and through a symlink).
  // Names in the "//" table, as GNU ar writes thin archives.
  const std::string long_names = "self.a/\nalias.o/\n../up.o/\n/abs.o/\n";  // offsets 0, 8, 17, 26
  REQUIRE(long_names.size() == 34);
  const std::string self = "!<thin>\n" + gen::gnu_header("//", 34) + long_names + gen::gnu_header("/0", 196) +
                           gen::gnu_header("/8", 196) + gen::gnu_header("/17", 10) + gen::gnu_header("/26", 10);
  write_file(dir + "/self.a", self);
  std::filesystem::create_symlink("self.a", dir + "/alias.o");
  auto file = linkscope::mapped_file::open(dir + "/self.a");
  REQUIRE(file);
  auto a = ar::archive::open(file->bytes());
  REQUIRE(a);
  std::vector<ar::member> ms;
  REQUIRE(a->for_each_member([&](const ar::member& m) { ms.push_back(m); }));
  REQUIRE(ms.size() == 4);
  CHECK(ms[2].name == "../up.o");
  CHECK(ms[3].name == "/abs.o");
  for (int i = 0; i < 2; ++i) {
    auto r = ar::open_thin_member(dir + "/self.a", *file, ms[static_cast<std::size_t>(i)]);
    REQUIRE(!r);
    CHECK(r.error().code == errc::malformed);
    CHECK(r.error().offset == ms[static_cast<std::size_t>(i)].header_offset);
  }
  ar::thin_options confine;
  confine.confine_to_archive_dir = true;
  CHECK(ar::thin_member_path(dir + "/self.a", ms[2], confine).error().code == errc::unsupported);
  CHECK(ar::thin_member_path(dir + "/self.a", ms[3], confine).error().code == errc::unsupported);
  CHECK(*ar::thin_member_path(dir + "/self.a", ms[2]) == dir + "/../up.o");
  CHECK(*ar::thin_member_path(dir + "/self.a", ms[3]) == "/abs.o");
  CHECK(*ar::thin_member_path("self.a", ms[0]) == "self.a");
}

namespace {

struct bad_case {
  const char* what;
  std::string bytes;
  errc code;
  std::uint64_t offset;
};

std::string gnu_with(const std::string& members) { return "!<arch>\n" + members; }

}  // namespace

TEST_CASE("bad input: each gets a clear error with its offset", "[ar][bad]") {
  using gen::gnu_header;
  const std::string good_member = gnu_header("a.o/", 4) + "abcd";
  std::string symtab_big_count;  // "/" claiming 1000 entries in 8 bytes
  gen::put_be(symtab_big_count, 1000, 4);
  gen::put_be(symtab_big_count, 68, 4);
  std::string symtab_short_names;  // 2 entries, one name
  gen::put_be(symtab_short_names, 2, 4);
  gen::put_be(symtab_short_names, 8, 4);
  gen::put_be(symtab_short_names, 8, 4);
  symtab_short_names += std::string("x\0", 2);
  std::string bsd_bad;  // ranlib bytes far larger than the table
  gen::put_le(bsd_bad, 8000, 4);
  gen::put_le(bsd_bad, 0, 4);
  std::string aix_fixed_overflow = "<bigaf>\n" + std::string(20, '9') + std::string(100, ' ');
  std::string aix_loop;
  {
    // One member whose next offset points at itself, lstmoff elsewhere.
    std::string member = gen::field(std::uint64_t{2}, 20) + gen::field(std::uint64_t{128}, 20) + gen::field(std::uint64_t{0}, 20) +
                         gen::field(std::uint64_t{0}, 12) + gen::field(std::uint64_t{0}, 12) + gen::field(std::uint64_t{0}, 12) +
                         gen::field(std::uint64_t{644}, 12) + gen::field(std::uint64_t{2}, 4) + "ab`\nzz";
    aix_loop = "<bigaf>\n" + gen::field(std::uint64_t{0}, 20) + gen::field(std::uint64_t{0}, 20) + gen::field(std::uint64_t{0}, 20) +
               gen::field(std::uint64_t{128}, 20) + gen::field(std::uint64_t{1}, 20) + gen::field(std::uint64_t{0}, 20) + member;
  }
  std::string coff_second_bad;  // 1 member, 1 symbol with index 7
  gen::put_le(coff_second_bad, 1, 4);
  gen::put_le(coff_second_bad, 8, 4);
  gen::put_le(coff_second_bad, 1, 4);
  gen::put_le(coff_second_bad, 7, 2);
  coff_second_bad += std::string("s\0", 2);
  std::string first_linker;
  gen::put_be(first_linker, 0, 4);

  const std::vector<bad_case> cases = {
      {"bad magic", "!<arcx>\n" + good_member, errc::bad_magic, 0},
      {"short file", "!<ar", errc::truncated, 0},
      {"not an archive", "\x7f" "ELF", errc::bad_magic, 0},
      {"truncated header", gnu_with(gnu_header("a.o/", 4).substr(0, 30)), errc::truncated, 8},
      {"bad header terminator", gnu_with(gnu_header("a.o/", 4).substr(0, 58) + "XX" + "abcd"), errc::bad_magic, 8 + 58},
      {"size past end", gnu_with(gnu_header("a.o/", 9999) + "abcd"), errc::truncated, 8 + 48},
      {"non-digit size", gnu_with(gnu_header("a.o/", 4).replace(48, 3, "1x4") + "abcd"), errc::bad_field, 8 + 48},
      {"negative size", gnu_with(gnu_header("a.o/", 4).replace(48, 2, "-4") + "abcd"), errc::bad_field, 8 + 48},
      {"non-digit date", gnu_with(gnu_header("a.o/", 4).replace(16, 3, "abc") + "abcd"), errc::bad_field, 8 + 16},
      {"non-octal mode", gnu_with(gnu_header("a.o/", 4).replace(40, 3, "999") + "abcd"), errc::bad_field, 8 + 40},
      {"second member truncated", gnu_with(good_member + "abc"), errc::truncated, 8 + 64},
      {"long name past //", gnu_with(gnu_header("//", 8) + "x.o/\n\n\n\n" + gnu_header("/40", 4) + "abcd"), errc::out_of_range, 8 + 68},
      {"long name without //", gnu_with(gnu_header("/0", 4) + "abcd"), errc::malformed, 8},
      {"long name reference junk", gnu_with(gnu_header("/1a", 4) + "abcd"), errc::bad_field, 8},
      {"#1/ length past the member", gnu_with(gnu_header("#1/20", 4) + "abcd"), errc::out_of_range, 8 + 3},
      {"#1/ length junk", gnu_with(gnu_header("#1/2x", 4) + "abcd"), errc::bad_field, 8 + 3},
      {"armap count larger than the table", gnu_with(gnu_header("/", 8) + symtab_big_count + good_member), errc::too_large, 68},
      {"armap names end early", gnu_with(gnu_header("/", 14) + symtab_short_names + good_member), errc::truncated, 68 + 14},
      {"__.SYMDEF size larger than the table", gnu_with(gnu_header("__.SYMDEF", 8) + bsd_bad + good_member), errc::too_large, 68},
      {"COFF second linker member index", gnu_with(gnu_header("/", 4) + first_linker + gnu_header("/", 16) + coff_second_bad + good_member),
       errc::out_of_range, 8 + 64 + 60 + 12},
      {"AIX numeric overflow", aix_fixed_overflow, errc::bad_field, 8},
      {"AIX truncated fixed header", "<bigaf>\n0", errc::truncated, 0},
      {"AIX member chain loops", aix_loop, errc::malformed, 128},
  };
  for (const auto& c : cases) {
    INFO(c.what);
    linkscope::error e = walk_all(c.bytes);
    CHECK(e.code == c.code);
    CHECK(e.offset == c.offset);
    CHECK(e.message[0] != '\0');
  }
}

TEST_CASE("bad input: every truncation of every flavour fails cleanly", "[ar][bad]") {
  const auto& o = elf_objects();
  REQUIRE(o.ok);
  REQUIRE(run_in(o.dir, "rm -f tr_gnu.a tr_bsd.a && ar rcs tr_gnu.a a.o this_is_a_long_member_name_over_16.o odd.txt && "
                        "llvm-ar-14 rcs --format=darwin tr_bsd.a a.o this_is_a_long_member_name_over_16.o odd.txt") == 0);
  const std::vector<gen::input_member> members = {{"a.o", "0123456789"}, {"this_is_a_long_member_name_over_16.o", "x"}};
  const std::vector<gen::input_symbol> symbols = {{"a1", 0}, {"b1", 1}};
  const std::vector<std::string> inputs = {read_file(o.dir + "/tr_gnu.a"), read_file(o.dir + "/tr_bsd.a"),
                                           gen::aix_big(members, symbols, symbols), gen::coff_lib(members, symbols),
                                           gen::bsd(members, symbols, {true, true, true, false})};
  for (const auto& full : inputs) {
    REQUIRE(walk_all(full).code == errc::ok);
    for (std::size_t len = 0; len < full.size(); ++len) {
      // A heap copy of exactly `len` bytes, so that ASan sees any over-read.
      std::vector<char> copy(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(len));
      const std::string bytes(copy.begin(), copy.end());
      linkscope::error e = walk_all(bytes);
      if (e.code != errc::ok) CHECK((e.offset == linkscope::no_offset || e.offset <= len));
    }
  }
}

TEST_CASE("real archives: linkscope-ar t == ar t, --print-armap == nm -s", "[ar][real]") {
  std::vector<std::string> paths = {"/usr/lib/llvm-14/lib/libLLVMBinaryFormat.a", "/usr/lib/llvm-14/lib/libLLVMDemangle.a",
                                    "/usr/lib/llvm-14/lib/libLLVMBitstreamReader.a", "/usr/lib/x86_64-linux-gnu/libc_nonshared.a",
                                    "/usr/lib/x86_64-linux-gnu/libz.a"};
  std::size_t checked = 0;
  for (const auto& path : paths) {
    if (!std::filesystem::exists(path)) continue;
    INFO(path);
    ++checked;
    CHECK(cli("t " + shell_quote(path)) == ar_t(path));
    const std::string ours = cli("--print-armap " + shell_quote(path));
    const std::string nm = capture("nm -s " + shell_quote(path) + " 2>/dev/null").out;
    const std::size_t at = nm.find("Archive index:\n");
    if (at == std::string::npos) {
      CHECK(ours.empty());
      continue;
    }
    const std::size_t end = nm.find("\n\n", at);
    REQUIRE(end != std::string::npos);
    CHECK(ours == nm.substr(at, end + 2 - at));
  }
  if (checked == 0) WARN("no real archives found");
}
