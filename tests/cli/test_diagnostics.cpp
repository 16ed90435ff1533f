// The one diagnostic format (report/diagnostic.hpp) as the resolving CLIs
// print it for a broken input: `linkscope-X: FILE: error: MESSAGE (offset
// 0x…)`, with `lib.a(member.o)` for an archive member, and the offset one in
// the file the user can open. A failing input is named by the library's
// diagnostic; the CLIs never re-run the analysis to find it.
//
// The fixture: gcc -c of two one-function files; in bad.o the SHT_SYMTAB
// section header's sh_offset is set to 0x7ffffff0 (past the end). `ar rcS`
// (no symbol index, so ar itself does not read bad.o) puts both in lib.a. The
// expected archive offset is the member's data offset, found by searching the
// archive bytes for its `bad.o/` header (GNU ar's name form) plus 60, plus the
// offset the plain bad.o is reported at.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

#include "support/fixtures.hpp"

using namespace linkscope_test;

namespace {

struct broken_fixture {
  std::string dir;
  bool ok = false;
  std::uint64_t member_data = 0;  // offset of bad.o's bytes in lib.a
};

const broken_fixture& fixture() {
  static broken_fixture fx = [] {
    broken_fixture f;
    f.dir = scratch_dir("diagnostics_cli");
    if (!have_tool("gcc") || !have_tool("ar")) return f;
    const std::string& d = f.dir;
    write_file(d + "/good.c", "int good(void) { return 1; }\n");
    write_file(d + "/bad.c", "int bad(void) { return 2; }\n");
    if (run_in(d, "gcc -c good.c bad.c && gcc -shared -o libs.so good.o") != 0) return f;
    std::string bad = read_file(d + "/bad.o");
    auto get = [&](std::size_t at, std::size_t n) {
      std::uint64_t v = 0;
      for (std::size_t i = 0; i < n; ++i) v |= std::uint64_t(static_cast<unsigned char>(bad[at + i])) << (8 * i);
      return v;
    };
    if (bad.size() < 64 || bad[4] != 2 || bad[5] != 1) return f;  // ELF64 LE only
    const std::uint64_t shoff = get(0x28, 8), shnum = get(0x3c, 2);
    bool patched = false;
    for (std::uint64_t i = 0; i < shnum; ++i) {
      const std::size_t h = static_cast<std::size_t>(shoff + i * 64);
      if (h + 64 > bad.size() || get(h + 4, 4) != 2 /* SHT_SYMTAB */) continue;
      const std::uint64_t past = 0x7ffffff0;
      for (std::size_t b = 0; b < 8; ++b) bad[h + 0x18 + b] = static_cast<char>((past >> (8 * b)) & 0xff);
      patched = true;
    }
    if (!patched) return f;
    write_file(d + "/bad.o", bad);
    if (run_in(d, "rm -f lib.a && ar rcS lib.a good.o bad.o") != 0) return f;
    const std::string archive = read_file(d + "/lib.a");
    const auto at = archive.find("bad.o/");
    if (at == std::string::npos) return f;
    f.member_data = at + 60;
    f.ok = true;
    return f;
  }();
  return fx;
}

// stderr and exit status of `tool args` run in the fixture directory.
struct run_result {
  int status = -1;
  std::string err;
};
run_result run(const std::string& tool, const std::string& args) {
  const std::string err = fixture().dir + "/stderr.txt";
  run_result r;
  r.status = capture("cd " + shell_quote(fixture().dir) + " && " + shell_quote(tool_path(tool)) + " " + args +
                     " >/dev/null 2>" + shell_quote(err))
                 .status;
  r.err = read_file(err);
  return r;
}

std::string hex(std::uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

// The offset in "(offset 0x…)" of a diagnostic line, or ~0.
std::uint64_t offset_of(const std::string& line) {
  const auto at = line.find("(offset 0x");
  if (at == std::string::npos) return ~std::uint64_t{0};
  return std::stoull(line.substr(at + 10), nullptr, 16);
}

}  // namespace

TEST_CASE("dupes and absorbed name a broken archive member as lib.a(member.o) with its archive offset") {
  const auto& f = fixture();
  if (!f.ok) {
    WARN("gcc/ar fixture unavailable; skipped");
    return;
  }
  // The plain file: named as given, offset inside bad.o.
  const run_result plain = run("linkscope-dupes", "good.o bad.o");
  CHECK(plain.status == 2);
  REQUIRE(plain.err.rfind("linkscope-dupes: bad.o: error: ", 0) == 0);
  const std::uint64_t inner = offset_of(plain.err);
  REQUIRE(inner != ~std::uint64_t{0});
  CHECK(inner == 0x7ffffff0);  // the sh_offset the fixture wrote
  CHECK(std::count(plain.err.begin(), plain.err.end(), '\n') == 1);

  // The member: lib.a(bad.o), offset = member data offset + offset inside bad.o.
  const run_result member = run("linkscope-dupes", "good.o lib.a");
  CHECK(member.status == 2);
  INFO(member.err);
  CHECK(member.err.rfind("linkscope-dupes: lib.a(bad.o): error: ", 0) == 0);
  CHECK(offset_of(member.err) == f.member_data + inner);
  CHECK(member.err.find(hex(f.member_data + inner)) != std::string::npos);

  // linkscope-absorbed: the archive under analysis, and the same archive as a consumer.
  for (const std::string args : {"libs.so lib.a", "libs.so good.o --consumer lib.a"}) {
    const run_result absorbed = run("linkscope-absorbed", args);
    INFO(args << ": " << absorbed.err);
    CHECK(absorbed.status == 2);
    CHECK(absorbed.err.rfind("linkscope-absorbed: lib.a(bad.o): error: ", 0) == 0);
    CHECK(offset_of(absorbed.err) == f.member_data + inner);
  }
}

TEST_CASE("a missing input is named, without an offset") {
  const auto& f = fixture();
  if (!f.ok) {
    WARN("gcc/ar fixture unavailable; skipped");
    return;
  }
  const run_result dupes = run("linkscope-dupes", "good.o no-such.a");
  CHECK(dupes.status == 2);
  CHECK(dupes.err.rfind("linkscope-dupes: no-such.a: error: ", 0) == 0);
  CHECK(dupes.err.find("(offset") == std::string::npos);
  const run_result absorbed = run("linkscope-absorbed", "no-such.so lib.a");
  CHECK(absorbed.status == 2);
  CHECK(absorbed.err.rfind("linkscope-absorbed: no-such.so: error: ", 0) == 0);
}
