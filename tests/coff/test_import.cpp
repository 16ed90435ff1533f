// Tests of linkscope/coff/import.hpp, linkscope/resolve/windows.hpp and
// linkscope-implib.
//
// Short import libraries are generated from .def files written here with
// llvm-dlltool-14 (x86-64, i386 with and without -k, arm64); the records read
// back must equal what the .def declares. Long (binutils) import libraries
// come from x86_64-w64-mingw32-dlltool. The DLL names are compared with
// `x86_64-w64-mingw32-dlltool -I` (byte for byte, exit status too) on the
// generated libraries and on a subset of mingw-w64's own import libraries.
// The --needs answer is checked against a real mingw link (which DLL the
// linker bound each function to, read with objdump -p).
#include <linkscope/coff/import.hpp>
#include <linkscope/resolve/windows.hpp>

#include <catch2/catch.hpp>

#include <linkscope/core/mapped_file.hpp>
#include <linkscope/symbols/table.hpp>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "support/fixtures.hpp"

using namespace linkscope_test;
namespace coff = linkscope::coff;
using linkscope::byte_view;
using linkscope::errc;
using linkscope::import_kind;
using linkscope::import_name_type;

namespace {

struct expected_record {
  std::string symbol;
  std::string import_name;
  std::optional<unsigned> ordinal;
  import_kind kind;
  import_name_type name_type;
  std::optional<unsigned> hint = std::nullopt;
};

struct loaded {
  linkscope::mapped_file file;
  coff::import_library library;
};

loaded load(const std::string& path) {
  loaded l;
  auto f = linkscope::mapped_file::open(path);
  REQUIRE(f);
  l.file = std::move(*f);
  auto lib = coff::import_library::from_bytes(l.file.bytes());
  if (!lib) FAIL(lib.error().message);
  l.library = std::move(*lib);
  return l;
}

void check_records(const coff::import_library& lib, const std::string& dll, std::uint16_t machine,
                   const std::vector<expected_record>& expected) {
  const auto& records = lib.records();
  REQUIRE(records.size() == expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const auto& r = records[i];
    const auto& e = expected[i];
    INFO("record " << i << " " << e.symbol);
    CHECK(r.dll == dll);
    CHECK(r.symbol == e.symbol);
    CHECK(r.import_name == e.import_name);
    CHECK(r.ordinal.has_value() == e.ordinal.has_value());
    if (r.ordinal && e.ordinal) CHECK(*r.ordinal == *e.ordinal);
    CHECK(r.kind == e.kind);
    CHECK(r.name_type == e.name_type);
    CHECK(r.machine == machine);
    if (e.hint) CHECK(r.hint == *e.hint);
    CHECK(r.imp_symbol == "__imp_" + e.symbol);
  }
}

// Symbols llvm-nm-14 lists for the import members (the descriptor objects'
// own symbols left out).
std::set<std::string> llvm_nm_import_symbols(const std::string& path) {
  auto r = capture("llvm-nm-14 " + shell_quote(path));
  REQUIRE(r.status == 0);
  std::set<std::string> out;
  for (const std::string& line : lines(r.out)) {
    if (line.size() < 12 || line.back() == ':') continue;
    std::string name = line.substr(line.rfind(' ') + 1);
    if (name.find("IMPORT_DESCRIPTOR") != std::string::npos || name.find("_NULL_THUNK_DATA") != std::string::npos ||
        name.rfind(".idata$", 0) == 0)
      continue;
    out.insert(name);
  }
  return out;
}

std::set<std::string> our_symbols(const coff::import_library& lib) {
  std::set<std::string> out;
  REQUIRE(lib.for_each_symbol([&](const linkscope::symbol& s) {
    REQUIRE(s.import != nullptr);
    out.insert(std::string(s.name));
  }));
  return out;
}

const std::string implib_tool() { return tool_path("linkscope-implib"); }

}  // namespace

TEST_CASE("short import libraries from llvm-dlltool equal their .def", "[implib][short]") {
  const std::string dir = scratch_dir("implib_short");
  const std::string def64 =
      "LIBRARY short64.dll\nEXPORTS\n  func_a\n  func_b @5 NONAME\n  data_c DATA\n  func_d @9\n  const_e CONSTANT\n";
  const std::vector<expected_record> records64 = {
      {"func_a", "func_a", std::nullopt, import_kind::code, import_name_type::name},
      {"func_b", "", 5u, import_kind::code, import_name_type::ordinal},
      {"data_c", "data_c", std::nullopt, import_kind::data, import_name_type::name},
      {"func_d", "func_d", std::nullopt, import_kind::code, import_name_type::name, 9u},
      {"const_e", "const_e", std::nullopt, import_kind::const_, import_name_type::name},
  };
  write_file(dir + "/s64.def", def64);
  REQUIRE(run_in(dir, "llvm-dlltool-14 -m i386:x86-64 -d s64.def -l s64.lib") == 0);
  REQUIRE(run_in(dir, "llvm-dlltool-14 -m arm64 -d s64.def -l sarm64.lib") == 0);
  {
    auto l = load(dir + "/s64.lib");
    check_records(l.library, "short64.dll", coff::machine::amd64, records64);
    CHECK(our_symbols(l.library) == llvm_nm_import_symbols(dir + "/s64.lib"));
    CHECK(l.library.ms_style());
  }
  {
    auto l = load(dir + "/sarm64.lib");
    check_records(l.library, "short64.dll", coff::machine::arm64, records64);
    CHECK(our_symbols(l.library) == llvm_nm_import_symbols(dir + "/sarm64.lib"));
  }
  // i386: C names get '_'; stdcall (_f@8) and fastcall (@f@12) decorations.
  const std::string def32 =
      "LIBRARY std32.dll\nEXPORTS\n  plain\n  StdFunc@8\n  @FastFunc@12\n  CdeclData DATA\n  OrdOnly @5 NONAME\n";
  write_file(dir + "/s32.def", def32);
  REQUIRE(run_in(dir, "llvm-dlltool-14 -m i386 -d s32.def -l s32.lib && llvm-dlltool-14 -m i386 -k -d s32.def -l s32k.lib") == 0);
  {
    auto l = load(dir + "/s32.lib");
    check_records(l.library, "std32.dll", coff::machine::i386,
                  {
                      {"_plain", "plain", std::nullopt, import_kind::code, import_name_type::name_noprefix},
                      {"_StdFunc@8", "StdFunc@8", std::nullopt, import_kind::code, import_name_type::name_noprefix},
                      {"@FastFunc@12", "@FastFunc@12", std::nullopt, import_kind::code, import_name_type::name},
                      {"_CdeclData", "CdeclData", std::nullopt, import_kind::data, import_name_type::name_noprefix},
                      {"_OrdOnly", "", 5u, import_kind::code, import_name_type::ordinal},
                  });
    CHECK(our_symbols(l.library) == llvm_nm_import_symbols(dir + "/s32.lib"));
  }
  {
    // -k (kill-at): the DLL exports undecorated names.
    auto l = load(dir + "/s32k.lib");
    check_records(l.library, "std32.dll", coff::machine::i386,
                  {
                      {"_plain", "plain", std::nullopt, import_kind::code, import_name_type::name_noprefix},
                      {"_StdFunc@8", "StdFunc", std::nullopt, import_kind::code, import_name_type::name_undecorate},
                      {"@FastFunc@12", "FastFunc", std::nullopt, import_kind::code, import_name_type::name_undecorate},
                      {"_CdeclData", "CdeclData", std::nullopt, import_kind::data, import_name_type::name_noprefix},
                      {"_OrdOnly", "", 5u, import_kind::code, import_name_type::ordinal},
                  });
  }
  // The CLI: --symbols TSV and the DLL name like dlltool -I (x86-64 and i386;
  // GNU dlltool for x86-64 mingw cannot read arm64 members).
  auto tsv = capture(implib_tool() + " --symbols " + shell_quote(dir + "/s64.lib"));
  REQUIRE(tsv.status == 0);
  CHECK(tsv.out ==
        "short64.dll\tfunc_a\tfunc_a\t\t0\tcode\tname\n"
        "short64.dll\tfunc_b\t\t5\t0\tcode\tordinal\n"
        "short64.dll\tdata_c\tdata_c\t\t0\tdata\tname\n"
        "short64.dll\tfunc_d\tfunc_d\t\t9\tcode\tname\n"
        "short64.dll\tconst_e\tconst_e\t\t0\tconst\tname\n");
  if (have_tool("x86_64-w64-mingw32-dlltool")) {
    for (const char* lib : {"s64.lib", "s32.lib", "s32k.lib", "sarm64.lib"}) {
      INFO(lib);
      auto theirs = capture("x86_64-w64-mingw32-dlltool -I " + shell_quote(dir + "/" + lib) + " 2>/dev/null");
      auto ours = capture(implib_tool() + " --dlltool-compat " + shell_quote(dir + "/" + lib) + " 2>/dev/null");
      CHECK(ours.out == theirs.out);
      CHECK((ours.status == 0) == (theirs.status == 0));
    }
    // Where dlltool cannot answer (arm64), we still do.
    auto arm = capture(implib_tool() + " " + shell_quote(dir + "/sarm64.lib"));
    CHECK(arm.status == 0);
    CHECK(arm.out == "short64.dll\n");
  }
}

namespace {
std::string short_member(std::uint16_t machine, std::uint16_t type_info, std::uint16_t hint, const std::string& data,
                         std::uint32_t size_of_data) {
  std::string m(20, '\0');
  auto put16 = [&](std::size_t at, std::uint16_t v) { m[at] = char(v & 0xff); m[at + 1] = char(v >> 8); };
  put16(2, 0xffff);
  put16(6, machine);
  for (int i = 0; i < 4; ++i) m[12 + i] = char((size_of_data >> (8 * i)) & 0xff);
  put16(16, hint);
  put16(18, type_info);
  return m + data;
}
std::uint16_t type_info(unsigned type, unsigned name_type) { return static_cast<std::uint16_t>(type | (name_type << 2)); }
}  // namespace

TEST_CASE("short import members: every name type and bad input", "[implib][short][bad]") {
  // The record views the member's bytes: keep them alive beyond the call.
  std::string held;
  auto parse = [&held](std::string bytes) {
    held = std::move(bytes);
    return coff::parse_short_import(byte_view(std::string_view(held)));
  };
  SECTION("NAME_EXPORTAS takes the third string (llvm-dlltool-14 cannot write it)") {
    const std::string data = std::string("#sym\0dll.dll\0exported\0", 23);
    auto r = parse(short_member(coff::machine::arm64, type_info(0, 4), 3, data, 23));
    REQUIRE(r);
    CHECK(r->symbol == "#sym");
    CHECK(r->dll == "dll.dll");
    CHECK(r->import_name == "exported");
    CHECK(r->name_type == import_name_type::name_exportas);
    CHECK(r->hint == 3);
  }
  SECTION("i386 rules: NOPREFIX drops one of _ @ ?, UNDECORATE also cuts at @") {
    CHECK(coff::import_name_for("_f@8", import_name_type::name_noprefix) == "f@8");
    CHECK(coff::import_name_for("?f@@YAXXZ", import_name_type::name_noprefix) == "f@@YAXXZ");
    CHECK(coff::import_name_for("@g@12", import_name_type::name_undecorate) == "g");
    CHECK(coff::import_name_for("_h@4", import_name_type::name_undecorate) == "h");
    CHECK(coff::import_name_for("k", import_name_type::name) == "k");
    CHECK(coff::import_name_for("k", import_name_type::ordinal).empty());
  }
  SECTION("truncated import header") {
    auto r = parse(short_member(coff::machine::amd64, 0, 0, "", 0).substr(0, 12));
    REQUIRE(!r);
    CHECK(r.error().code == errc::truncated);
    CHECK(std::string(r.error().message) == "truncated import header");
  }
  SECTION("data past the end of the member") {
    auto r = parse(short_member(coff::machine::amd64, 0, 0, std::string("a\0b\0", 4), 40));
    REQUIRE(!r);
    CHECK(std::string(r.error().message) == "import data past end of member");
  }
  SECTION("symbol name with no NUL") {
    auto r = parse(short_member(coff::machine::amd64, 0, 0, "abc", 3));
    REQUIRE(!r);
    CHECK(r.error().code == errc::malformed);
    CHECK(std::string(r.error().message) == "import symbol name has no NUL");
  }
  SECTION("DLL name with no NUL") {
    auto r = parse(short_member(coff::machine::amd64, 0, 0, std::string("abc\0x.dll", 9), 9));
    REQUIRE(!r);
    CHECK(std::string(r.error().message) == "import DLL name has no NUL");
    CHECK(r.error().offset == 24);
  }
  SECTION("unknown machine") {
    auto r = parse(short_member(0x1234, 0, 0, std::string("a\0b\0", 4), 4));
    REQUIRE(!r);
    CHECK(r.error().code == errc::bad_field);
    CHECK(std::string(r.error().message) == "unknown import machine");
    CHECK(r.error().offset == 6);
  }
  SECTION("unknown name type and type") {
    auto r = parse(short_member(coff::machine::amd64, type_info(0, 5), 0, std::string("a\0b\0", 4), 4));
    REQUIRE(!r);
    CHECK(std::string(r.error().message) == "unknown import name type");
    auto t = parse(short_member(coff::machine::amd64, type_info(3, 1), 0, std::string("a\0b\0", 4), 4));
    REQUIRE(!t);
    CHECK(std::string(t.error().message) == "unknown import type");
  }
  SECTION("EXPORTAS without its third string") {
    auto r = parse(short_member(coff::machine::amd64, type_info(0, 4), 0, std::string("a\0b\0", 4), 4));
    REQUIRE(!r);
    CHECK(std::string(r.error().message) == "EXPORTAS name missing");
  }
  SECTION("an import library with a bad member reports it with the member's offset") {
    const std::string dir = scratch_dir("implib_bad");
    write_file(dir + "/bad.obj", short_member(0x1234, 0, 0, std::string("a\0b\0", 4), 4));
    REQUIRE(run_in(dir, "llvm-ar-14 rcs bad.lib bad.obj") == 0);
    auto in_dir = capture("cd " + shell_quote(dir) + " && " + implib_tool() + " bad.lib 2>&1; echo status=$?");
    CHECK(in_dir.out.find("error: unknown import machine (offset 0x") != std::string::npos);
    CHECK(in_dir.out.find("status=2") != std::string::npos);
  }
  SECTION("a file that is not an archive is an input error (exit 2), as dlltool -I refuses it") {
    const std::string dir = scratch_dir("implib_notlib");
    write_file(dir + "/t.txt", "hello\n");
    CHECK(capture("x86_64-w64-mingw32-dlltool -I " + shell_quote(dir + "/t.txt") + " 2>&1").out.find("is not a library") != std::string::npos);
    auto ours = capture(implib_tool() + " " + shell_quote(dir + "/t.txt") + " 2>&1");
    CHECK(ours.status == 2);
    CHECK(ours.out.rfind("linkscope-implib: " + dir + "/t.txt: error: ", 0) == 0);
  }
}

TEST_CASE("long (binutils) import libraries: records, DLLs across concatenated libraries", "[implib][long]") {
  if (!have_tool("x86_64-w64-mingw32-dlltool")) { WARN("x86_64-w64-mingw32-dlltool missing"); return; }
  const std::string dir = scratch_dir("implib_long");
  write_file(dir + "/one.def", "LIBRARY one.dll\nEXPORTS\n  lf_a\n  lf_b @7 NONAME\n  lf_data DATA\n  lf_c @12\n");
  write_file(dir + "/two.def", "LIBRARY two.dll\nEXPORTS\n  tw_x\n  tw_y @3 NONAME\n");
  REQUIRE(run_in(dir, "x86_64-w64-mingw32-dlltool -d one.def -l libone.a -D one.dll && "
                      "x86_64-w64-mingw32-dlltool -d two.def -l libtwo.a -D two.dll && "
                      "mkdir -p x && cd x && x86_64-w64-mingw32-ar x ../libone.a && x86_64-w64-mingw32-ar x ../libtwo.a && "
                      "x86_64-w64-mingw32-ar rcs ../combo.a $(x86_64-w64-mingw32-ar t ../libone.a) $(x86_64-w64-mingw32-ar t ../libtwo.a)") == 0);
  auto one = load(dir + "/libone.a");
  // dlltool writes the stubs in reverse .def order; compare as a set keyed by symbol.
  std::map<std::string, const coff::import_record*> by_symbol;
  for (const auto& r : one.library.records()) by_symbol[std::string(r.symbol)] = &r;
  REQUIRE(by_symbol.size() == 4);
  for (const auto& [sym, r] : by_symbol) {
    CHECK(r->dll == "one.dll");
    CHECK(r->format == coff::import_format::long_);
    CHECK(r->machine == coff::machine::amd64);
  }
  CHECK(by_symbol["lf_a"]->import_name == "lf_a");
  CHECK(by_symbol["lf_a"]->kind == import_kind::code);
  CHECK(by_symbol["lf_b"]->ordinal.value_or(0) == 7);
  CHECK(by_symbol["lf_b"]->import_name.empty());
  CHECK(by_symbol["lf_b"]->name_type == import_name_type::ordinal);
  CHECK(by_symbol["lf_data"]->kind == import_kind::data);
  CHECK(by_symbol["lf_data"]->import_name == "lf_data");
  CHECK(!by_symbol["lf_c"]->ordinal);
  CHECK(by_symbol["lf_c"]->import_name == "lf_c");
  // Symbols: __imp_X for all, X for code only; equal to binutils nm's
  // defined globals in the stub members.
  {
    auto nm = capture("x86_64-w64-mingw32-nm -g --defined-only " + shell_quote(dir + "/libone.a"));
    REQUIRE(nm.status == 0);
    std::set<std::string> theirs;
    for (const std::string& line : lines(nm.out)) {
      if (line.size() < 20) continue;
      std::string name = line.substr(19);
      if (name.rfind("_head_", 0) == 0 || name.find("_iname") != std::string::npos) continue;
      theirs.insert(name);
    }
    CHECK(our_symbols(one.library) == theirs);
  }
  // The concatenation: every member tied to its own DLL.
  auto combo = load(dir + "/combo.a");
  REQUIRE(combo.library.records().size() == 6);
  for (const auto& r : combo.library.records()) {
    INFO(r.symbol);
    CHECK(r.dll == (r.symbol.substr(0, 3) == "lf_" ? "one.dll" : "two.dll"));
  }
  // DLL names and --strict against dlltool -I / --identify-strict.
  for (const char* lib : {"libone.a", "combo.a"}) {
    INFO(lib);
    auto theirs = capture("x86_64-w64-mingw32-dlltool -I " + shell_quote(dir + "/" + lib));
    auto ours = capture(implib_tool() + " " + shell_quote(dir + "/" + lib));
    CHECK(ours.out == theirs.out);
    CHECK(ours.status == theirs.status);
    auto theirs_strict = capture("x86_64-w64-mingw32-dlltool --identify-strict -I " + shell_quote(dir + "/" + lib) + " 2>/dev/null");
    auto ours_strict = capture(implib_tool() + " --strict " + shell_quote(dir + "/" + lib) + " 2>/dev/null");
    CHECK(ours_strict.out == theirs_strict.out);
    CHECK((ours_strict.status == 0) == (theirs_strict.status == 0));
  }
  CHECK(capture(implib_tool() + " --strict " + shell_quote(dir + "/combo.a") + " 2>/dev/null").status == 1);
}

TEST_CASE("mingw-w64 import libraries: DLL names equal dlltool -I (subset)", "[implib][mingw]") {
  const std::string libdir = "/usr/x86_64-w64-mingw32/lib";
  if (!have_tool("x86_64-w64-mingw32-dlltool") || !std::ifstream(libdir + "/libkernel32.a")) {
    WARN("mingw-w64-x86-64-dev or binutils-mingw-w64-x86-64 missing");
    return;
  }
  // Single-DLL, multi-DLL (libucrt, libvfw32), static-only (libmingwex,
  // libuuid: dlltool cannot answer) and mixed (libmsvcrt) libraries.
  for (const char* name : {"libkernel32.a", "libucrt.a", "libvfw32.a", "libmsvcrt.a", "libws2_32.a", "libd3d11.a",
                           "libmingwex.a", "libuuid.a", "libruntimeobject.a", "libole32.a"}) {
    INFO(name);
    const std::string path = libdir + "/" + name;
    auto theirs = capture("x86_64-w64-mingw32-dlltool -I " + shell_quote(path) + " 2>/dev/null");
    auto ours = capture(implib_tool() + " " + shell_quote(path) + " 2>/dev/null");
    CHECK(ours.out == theirs.out);
    CHECK(ours.status == theirs.status);
    // Every import record is tied to a DLL that the library names.
    auto l = load(path);
    const auto names = l.library.identify_dlls();
    for (const auto& r : l.library.records()) {
      INFO(r.symbol);
      CHECK(std::find(names.begin(), names.end(), r.dll) != names.end());
    }
  }
}

TEST_CASE("--needs: import libraries and DLLs a link needs, checked against a real mingw link", "[implib][needs]") {
  if (!have_tool("x86_64-w64-mingw32-gcc") || !have_tool("x86_64-w64-mingw32-dlltool")) {
    WARN("x86_64-w64-mingw32-gcc missing: --needs link test skipped");
    return;
  }
  const std::string dir = scratch_dir("implib_needs");
  // alpha and beta both export shared_fn: the linker takes the first library.
  write_file(dir + "/alpha.def", "LIBRARY alpha.dll\nEXPORTS\n  alpha_fn\n  shared_fn\n");
  write_file(dir + "/beta.def", "LIBRARY beta.dll\nEXPORTS\n  beta_fn\n  beta_var DATA\n  shared_fn\n");
  write_file(dir + "/gamma.def", "LIBRARY gamma.dll\nEXPORTS\n  gamma_fn\n  gamma_ord @42 NONAME\n");
  write_file(dir + "/delta.def", "LIBRARY delta.dll\nEXPORTS\n  delta_fn\n");
  for (const char* n : {"alpha", "beta", "gamma", "delta"})
    REQUIRE(run_in(dir, std::string("x86_64-w64-mingw32-dlltool -d ") + n + ".def -l lib" + n + ".a -D " + n + ".dll") == 0);
  write_file(dir + "/use.c",
             "extern int alpha_fn(void), beta_fn(void), shared_fn(void), gamma_ord(void);\n"
             "extern __declspec(dllimport) int beta_var;\n"
             "int user(void) { return alpha_fn() + beta_fn() + shared_fn() + gamma_ord() + beta_var; }\n");
  write_file(dir + "/main.c", "int user(void);\nint main(void) { return user(); }\n");
  write_file(dir + "/missing.c", "extern int nowhere_fn(void);\nint more(void) { return nowhere_fn(); }\n");
  REQUIRE(run_in(dir, "x86_64-w64-mingw32-gcc -c use.c missing.c && "
                      "x86_64-w64-mingw32-gcc main.c use.o -L. -lalpha -lbeta -lgamma -ldelta -o main.exe") == 0);
  // Which DLL the linker bound each function to.
  auto od = capture("x86_64-w64-mingw32-objdump -p " + shell_quote(dir + "/main.exe"));
  REQUIRE(od.status == 0);
  std::map<std::string, std::string> linked;  // function (or #ordinal) -> DLL
  std::string dll;
  for (const std::string& line : lines(od.out)) {
    if (line.find("DLL Name: ") != std::string::npos) { dll = line.substr(line.find("DLL Name: ") + 10); continue; }
    if (line.empty() || line[0] != '\t' || dll.empty()) continue;
    std::istringstream f(line);
    std::string vma, second, third;
    f >> vma >> second >> third;
    if (third == "<none>") linked[std::string("#").append(std::to_string(std::stoul(second, nullptr, 16)))] = dll;
    else if (!third.empty() && third != "Hint/Ord") linked[third] = dll;
  }
  REQUIRE(linked.count("shared_fn") == 1);
  CHECK(linked["shared_fn"] == "alpha.dll");

  // The library API.
  std::vector<loaded> libs;
  for (const char* n : {"libalpha.a", "libbeta.a", "libgamma.a", "libdelta.a"}) libs.push_back(load(dir + "/" + n));
  std::vector<const coff::import_library*> ptrs;
  for (auto& l : libs) ptrs.push_back(&l.library);
  auto use_file = linkscope::mapped_file::open(dir + "/use.o");
  REQUIRE(use_file);
  auto use = coff::object::parse(use_file->bytes());
  REQUIRE(use);
  linkscope::resolve::windows_consumer consumer;
  REQUIRE(consumer.add(*use));
  const auto needs = linkscope::resolve::resolve_windows_link(consumer, ptrs);
  CHECK(needs.ok());
  std::set<std::string> seen_functions;
  for (const auto& r : needs.resolved) {
    INFO(r.symbol);
    REQUIRE(r.record != nullptr);
    std::string key(r.record->ordinal ? std::string_view("#") : r.record->import_name);
    if (r.record->ordinal) key.append(std::to_string(*r.record->ordinal));
    REQUIRE(linked.count(key) == 1);
    CHECK(r.dll == linked[key]);  // the DLL the linker chose
    seen_functions.insert(key);
  }
  CHECK(seen_functions.size() == 5);
  // Minimal set: alpha, beta, gamma; never delta.
  CHECK(needs.needed_libraries == std::vector<std::size_t>{0, 1, 2});

  // The CLI, text: one row per symbol, the needed libraries, exit 0.
  auto cli = capture("cd " + shell_quote(dir) + " && " + implib_tool() +
                     " --needs --consumer use.o libalpha.a libbeta.a libgamma.a libdelta.a");
  CHECK(cli.status == 0);
  CHECK(cli.out.find("resolved\tshared_fn\tlibalpha.a\talpha.dll\n") != std::string::npos);
  CHECK(cli.out.find("resolved\t__imp_beta_var\tlibbeta.a\tbeta.dll\n") != std::string::npos);
  CHECK(cli.out.find("needed\tlibgamma.a\tgamma.dll\n") != std::string::npos);
  CHECK(cli.out.find("libdelta.a") == std::string::npos);
  // Something unresolved: exit 1 and the symbol listed (the real link fails too).
  auto bad = capture("cd " + shell_quote(dir) + " && " + implib_tool() +
                     " --needs --consumer use.o --consumer missing.o libalpha.a libbeta.a libgamma.a");
  CHECK(bad.status == 1);
  CHECK(bad.out.find("unresolved\tnowhere_fn\n") != std::string::npos);
  CHECK(run_in(dir, "x86_64-w64-mingw32-gcc main.c use.o missing.o -L. -lalpha -lbeta -lgamma -o bad.exe 2>/dev/null") != 0);

  // A PE image: each imported DLL checked against the libraries given.
  auto pe_partial = capture("cd " + shell_quote(dir) + " && " + implib_tool() +
                            " --needs --consumer main.exe libalpha.a libbeta.a libgamma.a");
  CHECK(pe_partial.status == 1);  // KERNEL32.dll and msvcrt.dll have no import library here
  CHECK(pe_partial.out.find("dll\talpha.dll\tlibalpha.a\tok\n") != std::string::npos);
  CHECK(pe_partial.out.find("dll\tgamma.dll\tlibgamma.a\tok\n") != std::string::npos);
  CHECK(pe_partial.out.find("dll\tKERNEL32.dll\t-\tno-import-library\n") != std::string::npos);
  if (std::ifstream("/usr/x86_64-w64-mingw32/lib/libkernel32.a")) {
    auto pe_full = capture("cd " + shell_quote(dir) + " && " + implib_tool() +
                           " --needs --consumer main.exe libalpha.a libbeta.a libgamma.a "
                           "/usr/x86_64-w64-mingw32/lib/libkernel32.a /usr/x86_64-w64-mingw32/lib/libmsvcrt.a");
    CHECK(pe_full.status == 0);
    CHECK(pe_full.out.find("no-import-library") == std::string::npos);
    // beta.dll lost beta_fn: the image imports a function the library lacks.
    write_file(dir + "/beta2.def", "LIBRARY beta.dll\nEXPORTS\n  beta_var DATA\n  shared_fn\n");
    REQUIRE(run_in(dir, "x86_64-w64-mingw32-dlltool -d beta2.def -l libbeta2.a -D beta.dll") == 0);
    auto pe_missing = capture("cd " + shell_quote(dir) + " && " + implib_tool() +
                              " --needs --consumer main.exe libalpha.a libbeta2.a libgamma.a "
                              "/usr/x86_64-w64-mingw32/lib/libkernel32.a /usr/x86_64-w64-mingw32/lib/libmsvcrt.a");
    CHECK(pe_missing.status == 1);
    CHECK(pe_missing.out.find("missing\tbeta.dll\tbeta_fn\n") != std::string::npos);
  }
  // JSON shape.
  auto json = capture("cd " + shell_quote(dir) + " && " + implib_tool() +
                      " --json --needs --consumer use.o libalpha.a libbeta.a libgamma.a");
  CHECK(json.out.rfind("{\"version\":1,", 0) == 0);
  CHECK(json.out.find("\"needed_libraries\":[\"libalpha.a\",\"libbeta.a\",\"libgamma.a\"]") != std::string::npos);
}
