// resolve/static.hpp: generated links, each checked against the real linker
// run by the test: ld.lld-14 --why-extract (TSV byte for byte) for lld
// semantics, GNU ld -Map's "Archive member included" section and its
// "undefined reference" errors for bfd semantics.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include <linkscope/resolve/link_line.hpp>
#include <linkscope/resolve/static.hpp>

#include "support/fixtures.hpp"

using namespace linkscope;
using namespace linkscope::resolve;
using namespace linkscope_test;

namespace {

struct our_outcome {
  bool ok = false;
  std::string tsv;
  std::string map;
  std::set<std::string> undefined;
  link_diagnostic diag;
  static_link_result result;
};

// Run linkscope on `args` with the current directory set to `dir`.
our_outcome ours(const std::string& dir, const std::vector<std::string>& args, link_semantics semantics) {
  our_outcome out;
  const auto saved = std::filesystem::current_path();
  std::filesystem::current_path(dir);
  auto line = read_link_line(args, out.diag);
  if (line) {
    auto r = resolve_static(*line, static_options{semantics}, out.diag);
    if (r) {
      out.ok = true;
      out.tsv = r->why_extract_tsv();
      out.map = r->map_includes();
      for (const auto& u : r->undefined) out.undefined.insert(std::string(u.name));
      out.result = std::move(*r);
    }
  }
  std::filesystem::current_path(saved);
  return out;
}

std::string join_args(const std::vector<std::string>& args) {
  std::string s;
  for (const auto& a : args) {
    // Appended piecewise: `" " + std::string&&` trips g++ 12's -Wrestrict false positive at -O3.
    s += ' ';
    s += shell_quote(a);
  }
  return s;
}

struct bfd_outcome {
  int status = -1;
  std::string map;  // the "Archive member included" section, or ""
  std::set<std::string> undefined;
};

// The links of one test case, run with the real linkers in parallel (process
// start-up dominates these tiny links).
class real_links {
 public:
  explicit real_links(std::string dir) : dir_(std::move(dir)) {}

  void add(std::vector<std::string> args) { cases_.push_back(std::move(args)); }

  void run() {
    std::string script;
    for (std::size_t k = 0; k < cases_.size(); ++k) {
      const std::string n = std::to_string(k);
      script += "(ld.lld-14 -m elf_x86_64" + join_args(cases_[k]) + " --why-extract=lld_" + n +
                ".tsv --no-demangle -o lld_" + n + ".out --noinhibit-exec >/dev/null 2>&1) &\n";
      script += "(ld -m elf_x86_64" + join_args(cases_[k]) + " --no-demangle -Map=bfd_" + n + ".map -o bfd_" + n +
                ".out 2>bfd_" + n + ".err; echo $? >bfd_" + n + ".status) &\n";
    }
    script += "wait\n";
    write_file(dir_ + "/links.sh", script);
    REQUIRE(run_in(dir_, "rm -f lld_*.tsv bfd_*.map bfd_*.status; sh links.sh") == 0);
  }

  std::string lld_tsv(std::size_t k) const { return read_file(dir_ + "/lld_" + std::to_string(k) + ".tsv"); }

  bfd_outcome bfd(std::size_t k) const {
    bfd_outcome out;
    const std::string n = std::to_string(k);
    out.status = std::atoi(read_file(dir_ + "/bfd_" + n + ".status").c_str());
    const std::string map = read_file(dir_ + "/bfd_" + n + ".map");
    const auto at = map.find("Archive member included to satisfy reference by file (symbol)\n\n");
    if (at != std::string::npos) {
      const auto end = map.find("\n\n", at + 64);
      out.map = map.substr(at, (end == std::string::npos ? map.size() : end + 1) - at);
    }
    for (const std::string& line : lines(read_file(dir_ + "/bfd_" + n + ".err"))) {
      const auto p = line.find("undefined reference to `");
      if (p == std::string::npos) continue;
      const auto start = p + 24;
      const auto end = line.find('\'', start);
      out.undefined.insert(line.substr(start, end - start));
    }
    return out;
  }

  // Every case: lld semantics against ld.lld-14, bfd semantics against GNU ld.
  void check_all() {
    run();
    for (std::size_t k = 0; k < cases_.size(); ++k) {
      const auto& args = cases_[k];
      INFO("args:" << join_args(args));
      const our_outcome lld = ours(dir_, args, link_semantics::lld);
      INFO(lld.diag.subject << ": " << lld.diag.err.message);
      REQUIRE(lld.ok);
      const std::string expected = lld_tsv(k);
      REQUIRE(!expected.empty());
      CHECK(lld.tsv == expected);
      const our_outcome bfd = ours(dir_, args, link_semantics::bfd);
      INFO(bfd.diag.subject << ": " << bfd.diag.err.message);
      REQUIRE(bfd.ok);
      const bfd_outcome b = this->bfd(k);
      CHECK(bfd.map == b.map);
      CHECK(bfd.undefined == b.undefined);
      CHECK((b.status == 0) == (bfd.undefined.empty() && bfd.result.duplicates.empty()));
    }
  }

 private:
  std::string dir_;
  std::vector<std::vector<std::string>> cases_;
};

bool have_linkers() {
  if (have_tool("ld.lld-14") && have_tool("ld") && have_tool("clang-14") && have_tool("ar")) return true;
  WARN("ld.lld-14, ld, clang-14 or ar missing: static-link parity tests skipped");
  return false;
}

// Compile C sources (name -> text) into NAME.o in dir.
void compile(const std::string& dir, const std::vector<std::pair<std::string, std::string>>& sources,
             const std::string& flags = "") {
  std::string files;
  for (const auto& [name, text] : sources) {
    write_file(dir + "/" + name + ".c", text);
    files += " " + name + ".c";
  }
  REQUIRE(run_in(dir, "clang-14 -c -fno-pic -O1 " + flags + files) == 0);
}

}  // namespace

TEST_CASE("static: order-dependent links and groups, lld vs bfd") {
  if (!have_linkers()) return;
  const std::string dir = scratch_dir("static_order");
  compile(dir, {{"main", "extern int b(void); void _start(void) { b(); }"},
                {"b", "extern int a(void); int b(void) { return a() + 1; }"},
                {"a", "extern int c(void); int a(void) { return 2; } int a2(void) { return c(); }"},
                {"c", "extern int b(void); int c(void) { return b(); }"}});
  REQUIRE(run_in(dir, "ar rcs liba.a a.o && ar rcs libb.a b.o && ar rcs libc.a c.o") == 0);
  real_links links(dir);
  // liba.a is needed by libb.a's member but written first: lld still links,
  // GNU ld leaves a() undefined.
  const std::vector<std::string> backwards = {"main.o", "liba.a", "libb.a"};
  links.add(backwards);
  // The same with a group: GNU ld rescans it.
  const std::vector<std::string> grouped = {"main.o", "--start-group", "liba.a", "libb.a", "--end-group"};
  links.add(grouped);
  links.add({"main.o", "-(", "liba.a", "libb.a", "-)"});
  // Members stay available under lld; -u pulls a2 -> c -> b (a cycle).
  links.add({"-u", "a2", "libc.a", "main.o", "liba.a", "libb.a"});
  links.add({"main.o", "libb.a", "liba.a", "libc.a"});
  links.add({"main.o", "--start-group", "libc.a", "libb.a", "--end-group", "liba.a", "-u", "a2"});
  links.check_all();
  // a.o also calls c(), which no archive in these two links defines.
  CHECK(ours(dir, backwards, link_semantics::lld).undefined == std::set<std::string>{"c"});
  CHECK(ours(dir, backwards, link_semantics::bfd).undefined == std::set<std::string>{"a"});
  CHECK(ours(dir, grouped, link_semantics::bfd).undefined == std::set<std::string>{"c"});

  // The progress callback: once per input read, in order, ending at the
  // number of inputs; a group's inputs count once the group is done with
  // (GNU ld rescans it: -( liba.a libb.a -) is 1, then 3).
  const auto steps = [&](const std::vector<std::string>& args, link_semantics semantics) {
    const auto saved = std::filesystem::current_path();
    std::filesystem::current_path(dir);
    link_diagnostic diag;
    auto line = read_link_line(args, diag);
    std::vector<std::size_t> seen;
    std::size_t inputs = 0;
    if (line) {
      inputs = line->inputs.size();
      static_options o;
      o.semantics = semantics;
      o.progress = [&](std::size_t done, std::size_t total) {
        if (total == inputs) seen.push_back(done);
      };
      if (!resolve_static(*line, o, diag)) seen.clear();
    }
    std::filesystem::current_path(saved);
    return seen;
  };
  CHECK(steps(backwards, link_semantics::lld) == std::vector<std::size_t>{1, 2, 3});
  CHECK(steps(backwards, link_semantics::bfd) == std::vector<std::size_t>{1, 2, 3});
  CHECK(steps(grouped, link_semantics::lld) == std::vector<std::size_t>{1, 2, 3});
  CHECK(steps(grouped, link_semantics::bfd) == std::vector<std::size_t>{1, 3});
}

TEST_CASE("static: extraction order and first reference (depth first)") {
  if (!have_linkers()) return;
  const std::string dir = scratch_dir("static_dfs");
  compile(dir, {{"main", "extern int x1(void), y1(void); void _start(void) { x1(); y1(); }"},
                {"x1", "extern int x2(void), z(void); int x1(void) { return x2() + z(); }"},
                {"x2", "extern int z(void); int x2(void) { return z(); }"},
                {"y1", "extern int z(void), x2(void); int y1(void) { return z() + x2(); }"},
                {"z", "int z(void) { return 3; }"}});
  REQUIRE(run_in(dir, "ar rcs libx.a x1.o x2.o y1.o z.o && ar rcs liby.a y1.o && ar rcs libz.a z.o") == 0);
  real_links links(dir);
  links.add({"main.o", "libx.a"});
  links.add({"libz.a", "main.o", "liby.a", "libx.a"});
  links.add({"liby.a", "libx.a", "main.o"});
  links.add({"main.o", "liby.a", "libz.a", "libx.a"});
  links.check_all();
}

TEST_CASE("static: weak undefined references extract nothing") {
  if (!have_linkers()) return;
  const std::string dir = scratch_dir("static_weak");
  compile(dir, {{"main", "extern int foo(void) __attribute__((weak)); void _start(void) { if (foo) foo(); }"},
                {"strong", "extern int foo(void); int use_foo(void) { return foo(); }"},
                {"foo", "int foo(void) { return 1; }"},
                {"weakdef", "__attribute__((weak)) int foo(void) { return 7; }"}});
  REQUIRE(run_in(dir, "ar rcs libfoo.a foo.o && ar rcs libuse.a strong.o") == 0);
  real_links links(dir);
  links.add({"main.o", "libfoo.a"});
  links.add({"libfoo.a", "main.o"});
  // a later strong reference does extract
  links.add({"main.o", "libfoo.a", "-u", "use_foo", "libuse.a"});
  links.add({"main.o", "strong.o", "libfoo.a"});
  // a weak definition satisfies the strong reference: nothing extracted
  links.add({"weakdef.o", "strong.o", "libfoo.a"});
  links.check_all();
  const our_outcome o = ours(dir, {"main.o", "libfoo.a"}, link_semantics::lld);
  CHECK(o.tsv == "reference\textracted\tsymbol\n");
  CHECK(o.undefined.empty());
}

TEST_CASE("static: common symbols (lld does not extract for them, GNU ld does)") {
  if (!have_linkers()) return;
  const std::string dir = scratch_dir("static_common");
  compile(dir, {{"main", "int counter; void _start(void) { counter++; }"}}, "-fcommon");
  compile(dir, {{"def", "int counter = 5; int other(void) { return 1; }"}});
  compile(dir, {{"com", "int counter; int other2(void) { return 2; }"}}, "-fcommon");
  REQUIRE(run_in(dir, "ar rcs libdef.a def.o && ar rcs libcom.a com.o") == 0);
  real_links links(dir);
  links.add({"main.o", "libdef.a"});
  links.add({"main.o", "libcom.a", "libdef.a"});
  links.add({"libdef.a", "main.o"});
  links.check_all();
  CHECK(ours(dir, {"main.o", "libdef.a"}, link_semantics::bfd).result.extractions.size() == 1);
  CHECK(ours(dir, {"main.o", "libdef.a"}, link_semantics::lld).result.extractions.empty());
}

TEST_CASE("static: -u, -e, --whole-archive, --defsym and --wrap") {
  if (!have_linkers()) return;
  const std::string dir = scratch_dir("static_options");
  compile(dir, {{"main", "extern int b(void); void _start(void) { b(); }"},
                {"b", "extern int a(void); int b(void) { return a(); }"},
                {"a", "int a(void) { return 2; }"},
                {"extra", "int extra(void) { return 3; }"},
                {"wrap", "extern int __real_a(void); int __wrap_a(void) { return __real_a() + 1; }"}});
  REQUIRE(run_in(dir, "ar rcs lib.a b.o a.o extra.o && ar rcs libwrap.a wrap.o") == 0);
  real_links links(dir);
  links.add({"main.o", "-u", "extra", "lib.a"});
  links.add({"-u", "extra", "--undefined=a", "lib.a", "main.o"});
  links.add({"--whole-archive", "lib.a", "--no-whole-archive", "main.o"});
  links.add({"main.o", "--whole-archive", "lib.a"});
  links.add({"--defsym", "b=a", "main.o", "lib.a"});
  links.add({"main.o", "--wrap=a", "lib.a", "libwrap.a"});
  const std::vector<std::string> entry = {"-e", "extra", "main.o", "lib.a"};
  links.add(entry);
  links.check_all();
  // A --defsym symbol satisfies references (both linkers link this).
  const std::vector<std::string> defsym_only = {"--defsym", "b=a", "main.o", "a.o"};
  CHECK(run_in(dir, "ld.lld-14 --defsym b=a main.o a.o -o ds.out 2>/dev/null") == 0);
  CHECK(run_in(dir, "ld --defsym b=a main.o a.o -o ds.out 2>/dev/null") == 0);
  CHECK(ours(dir, defsym_only, link_semantics::lld).undefined.empty());
  CHECK(ours(dir, defsym_only, link_semantics::bfd).undefined.empty());
  // The entry symbol pulls from an archive (lld records "--entry").
  CHECK(ours(dir, entry, link_semantics::lld).tsv.find("--entry\tlib.a(extra.o)\textra\n") != std::string::npos);
}

TEST_CASE("static: shared libraries, --as-needed and a linker-script GROUP") {
  if (!have_linkers()) return;
  const std::string dir = scratch_dir("static_shared");
  compile(dir, {{"main", "extern int foo(void); void _start(void) { foo(); }"},
                {"foo", "extern int bar(void); int foo(void) { return bar(); }"},
                {"bar", "extern int foo(void); int bar(void) { return 1; } int bar2(void) { return foo(); }"}});
  REQUIRE(run_in(dir, "clang-14 -shared -fPIC -nostdlib foo.c bar.c -o libfoo.so") == 0);
  REQUIRE(run_in(dir, "ar rcs libfoo.a foo.o && ar rcs libbar.a bar.o") == 0);
  // A GROUP script: foo.o and bar.o need each other only through the group.
  write_file(dir + "/libgrp.so", "/* GNU ld script */\nOUTPUT_FORMAT(elf64-x86-64)\nGROUP ( libbar.a libfoo.a )\n");
  write_file(dir + "/libin.so", "INPUT ( libbar.a AS_NEEDED ( libfoo.a ) )\n");
  real_links links(dir);
  // the shared library satisfies foo before the archive is reached
  links.add({"main.o", "libfoo.so", "libfoo.a"});
  links.add({"main.o", "libfoo.a", "libfoo.so"});
  links.add({"main.o", "-L.", "-lfoo"});
  links.add({"main.o", "-L.", "-Bstatic", "-lfoo", "-lbar"});
  links.add({"main.o", "-L.", "-l:libfoo.a", "-l:libbar.a"});
  // --as-needed: GNU ld drops a library that nothing needs yet, lld does not
  links.add({"--as-needed", "libfoo.so", "--no-as-needed", "main.o", "libfoo.a", "libbar.a"});
  links.add({"main.o", "--as-needed", "libfoo.so", "--no-as-needed", "libfoo.a"});
  links.add({"main.o", "-L.", "-lgrp"});
  links.add({"main.o", "libgrp.so"});
  links.add({"main.o", "-L.", "-lin"});
  links.check_all();
  CHECK(ours(dir, {"main.o", "-L.", "-lgrp"}, link_semantics::bfd).undefined.empty());
  CHECK(ours(dir, {"main.o", "-L.", "-lin"}, link_semantics::bfd).undefined == std::set<std::string>{"bar"});
  CHECK(ours(dir, {"--as-needed", "libfoo.so", "--no-as-needed", "main.o", "libfoo.a", "libbar.a"},
             link_semantics::bfd).result.extractions.size() == 2);
  CHECK(ours(dir, {"--as-needed", "libfoo.so", "--no-as-needed", "main.o", "libfoo.a", "libbar.a"},
             link_semantics::lld).result.extractions.empty());
}

TEST_CASE("static: thin archives, COMDAT and duplicate definitions") {
  if (!have_linkers()) return;
  const std::string dir = scratch_dir("static_thin");
  std::filesystem::create_directories(dir + "/sub");
  compile(dir, {{"main", "extern int b(void); void _start(void) { b(); }"}, {"dup", "int a(void) { return 3; }"}});
  write_file(dir + "/sub/b.c", "extern int a(void); int b(void) { return a(); }");
  write_file(dir + "/sub/a.c", "int a(void) { return 2; }");
  REQUIRE(run_in(dir, "clang-14 -c sub/b.c -o sub/b.o && clang-14 -c sub/a.c -o sub/a.o") == 0);
  REQUIRE(run_in(dir, "ar rcs --thin libthin.a sub/b.o sub/a.o") == 0);
  // C++ inline functions live in COMDAT groups: the first copy wins.
  write_file(dir + "/inl.h", "inline int twice(int x) { return 2 * x; }\n");
  write_file(dir + "/u1.cpp", "#include \"inl.h\"\nint u1(int x) { return twice(x); }\n");
  write_file(dir + "/u2.cpp", "#include \"inl.h\"\nint u2(int x) { return twice(x) + 1; }\n");
  write_file(dir + "/m.cpp", "int u1(int); int u2(int); extern \"C\" void _start() { u1(1); u2(2); }\n");
  REQUIRE(run_in(dir, "clang++-14 -c -O0 -fno-pic u1.cpp u2.cpp m.cpp && ar rcs libu.a u1.o u2.o") == 0);
  real_links links(dir);
  links.add({"main.o", "libthin.a"});
  links.add({"libthin.a", "main.o"});
  links.add({"m.o", "libu.a"});
  links.check_all();

  // a() defined by dup.o: the archive member is never needed.
  const our_outcome o = ours(dir, {"main.o", "dup.o", "libthin.a"}, link_semantics::lld);
  REQUIRE(o.ok);
  CHECK(o.result.duplicates.empty());
  REQUIRE(o.result.unused_members.size() == 1);
  CHECK(o.result.files[o.result.unused_members[0]].name == "libthin.a(sub/a.o)");
  // Two strong definitions of a(): reported (and ld.lld refuses the link).
  const our_outcome d = ours(dir, {"main.o", "dup.o", "sub/a.o", "libthin.a"}, link_semantics::lld);
  REQUIRE(d.ok);
  REQUIRE(d.result.duplicates.size() == 1);
  CHECK(d.result.duplicates[0].name == "a");
  CHECK(run_in(dir, "ld.lld-14 main.o dup.o sub/a.o libthin.a -o dup.out 2>/dev/null") != 0);
}

TEST_CASE("static: why-chains lead back to the command line") {
  if (!have_linkers()) return;
  const std::string dir = scratch_dir("static_chain");
  compile(dir, {{"main", "extern int b(void); void _start(void) { b(); }"},
                {"b", "extern int a(void); int b(void) { return a(); }"},
                {"a", "int a(void) { return 2; }"}});
  REQUIRE(run_in(dir, "ar rcs lib.a a.o b.o") == 0);
  const our_outcome o = ours(dir, {"main.o", "lib.a"}, link_semantics::lld);
  REQUIRE(o.ok);
  const file_id a = o.result.find_file("lib.a(a.o)");
  REQUIRE(a != no_file);
  const auto chain = o.result.chain(a);
  REQUIRE(chain.size() == 3);
  CHECK(o.result.files[chain[1]].name == "lib.a(b.o)");
  CHECK(o.result.files[chain[2]].name == "main.o");
  CHECK(o.result.extractions[o.result.files[a].reason].symbol == "a");
  // The CLI prints the same chain.
  if (have_tool(tool_path("linkscope-why"))) {
    const auto r = capture("cd " + shell_quote(dir) + " && " + shell_quote(tool_path("linkscope-why")) +
                           " --chain 'lib.a(a.o)' main.o lib.a");
    CHECK(r.status == 0);
    CHECK(r.out == "lib.a(a.o)  <- a\n  lib.a(b.o)  <- b\n    main.o  (command line)\n");
  }
}

TEST_CASE("static: bad input names the argument") {
  if (!have_linkers()) return;
  const std::string dir = scratch_dir("static_bad");
  compile(dir, {{"main", "extern int b(void); void _start(void) { b(); }"}, {"b", "int b(void) { return 1; }"}});
  write_file(dir + "/notes.txt", "just text\n");
  REQUIRE(run_in(dir, "ar rcs libtext.a b.o notes.txt") == 0);
  {
    const our_outcome o = ours(dir, {"main.o", "missing.o"}, link_semantics::lld);
    CHECK(!o.ok);
    CHECK(o.diag.subject == "missing.o");
    CHECK(o.diag.err.code == errc::not_found);
  }
  {
    const our_outcome o = ours(dir, {"main.o", "-L.", "-lnothere"}, link_semantics::lld);
    CHECK(!o.ok);
    CHECK(o.diag.subject == "-lnothere");
  }
  {
    const our_outcome o = ours(dir, {"main.o", "--frobnicate"}, link_semantics::lld);
    CHECK(!o.ok);
    CHECK(o.diag.subject == "--frobnicate");
    CHECK(std::string(o.diag.err.message) == "unknown option");
  }
  {
    // A member that is not an object: loaded by --whole-archive.
    const our_outcome o = ours(dir, {"main.o", "--whole-archive", "libtext.a"}, link_semantics::lld);
    CHECK(!o.ok);
    CHECK(o.diag.subject == "libtext.a(notes.txt)");
    CHECK(run_in(dir, "ld.lld-14 main.o --whole-archive libtext.a -o t.out 2>/dev/null") != 0);
  }
  {
    // Not an ELF file nor an archive nor a script.
    write_file(dir + "/binary.o", std::string("\x01\x02\x00\x03", 4));
    const our_outcome o = ours(dir, {"main.o", "binary.o"}, link_semantics::bfd);
    CHECK(!o.ok);
    CHECK(o.diag.subject == "binary.o");
  }
}

TEST_CASE("static: the linkscope-why CLI") {
  if (!have_linkers()) return;
  const std::string why = tool_path("linkscope-why");
  if (!have_tool(why)) {
    WARN("linkscope-why not built: CLI test skipped");
    return;
  }
  const std::string dir = scratch_dir("static_cli");
  compile(dir, {{"main", "extern int b(void); void _start(void) { b(); }"},
                {"b", "extern int a(void); int b(void) { return a(); }"},
                {"a", "int a(void) { return 2; }"}});
  REQUIRE(run_in(dir, "ar rcs lib.a a.o b.o") == 0);
  write_file(dir + "/link.rsp", "-z\nrelro\n--gc-sections\nmain.o\nlib.a\n");
  const std::string in_dir = "cd " + shell_quote(dir) + " && ";
  REQUIRE(run_in(dir, "ld.lld-14 @link.rsp --why-extract=lld.tsv --no-demangle -o out") == 0);
  auto r = capture(in_dir + shell_quote(why) + " @link.rsp --why-extract=ours.tsv");
  CHECK(r.status == 0);
  CHECK(read_file(dir + "/ours.tsv") == read_file(dir + "/lld.tsv"));
  r = capture(in_dir + shell_quote(why) + " --semantics=bfd --print-map-includes @link.rsp");
  CHECK(r.status == 0);
  REQUIRE(run_in(dir, "ld @link.rsp --no-demangle -Map=bfd.map -o out") == 0);
  CHECK(read_file(dir + "/bfd.map").find(r.out.substr(0, r.out.size() - 1)) != std::string::npos);
  r = capture(in_dir + shell_quote(why) + " --json @link.rsp");
  CHECK(r.status == 0);
  CHECK(r.out.rfind("{\"version\":1,\"semantics\":\"lld\",\"extracted\":[{\"member\":\"lib.a(a.o)\",\"reference\":\"lib.a(b.o)\"", 0) == 0);
  // A finding: GNU ld semantics leave a() undefined when lib.a comes first.
  r = capture(in_dir + shell_quote(why) + " --semantics=bfd lib.a main.o 2>&1");
  CHECK(r.status == 1);
  CHECK(r.out.find("linkscope-why: undefined symbol: b (referenced by main.o)") != std::string::npos);
  // Errors name the argument; --help lists the ignored options.
  // An option neither linkscope-why nor the linker knows: GNU ld's getopt_long
  // message ("ld: unrecognized option '--frobnicate'") under the tool's name.
  r = capture(in_dir + shell_quote(why) + " main.o --frobnicate 2>&1");
  CHECK(r.status == 2);
  const auto gnu_ld = capture("ld main.o --frobnicate 2>&1");
  const std::string ld_line = gnu_ld.out.substr(0, gnu_ld.out.find('\n'));
  CHECK(ld_line == "ld: unrecognized option '--frobnicate'");
  CHECK(r.out == "linkscope-why" + ld_line.substr(2) + "\nTry 'linkscope-why --help' for more information.\n");
  r = capture(in_dir + shell_quote(why) + " main.o -lnope 2>&1");
  CHECK(r.status == 2);
  CHECK(r.out == "linkscope-why: -lnope: error: unable to find library\n");
  // On a terminal (script(1) gives the tool a pseudo-terminal), the progress
  // line counts the inputs and is erased before the report; --quiet drops it.
  if (have_tool("script")) {
    const std::string text = in_dir + shell_quote(why) + " main.o lib.a";
    auto tty = capture("script -qec " + shell_quote(text) + " /dev/null");
    CHECK(tty.out.find("linkscope-why: 2/2 inputs\r\033[K2 members extracted") != std::string::npos);
    auto quiet = capture("script -qec " + shell_quote(text + " --quiet") + " /dev/null");
    CHECK(quiet.out.find("inputs\r") == std::string::npos);
    CHECK(quiet.out.find("2 members extracted") != std::string::npos);
    // Not a terminal: nothing on stderr.
    CHECK(capture(text + " 2>&1").out.rfind("2 members extracted", 0) == 0);
  }
  // -lm -lc with no -L: GNU ld finds them in its built-in directories (its
  // default script's SEARCH_DIR list, which gnu_ld_search_dirs() copies);
  // ld.lld has none and fails as we do under lld semantics.
  const auto verbose = capture("ld --verbose 2>&1");
  if (verbose.out.find("elf_x86_64") != std::string::npos) {
    std::vector<std::string> searched;
    for (std::size_t at = verbose.out.find("SEARCH_DIR(\""); at != std::string::npos;
         at = verbose.out.find("SEARCH_DIR(\"", at + 1)) {
      const std::size_t begin = at + 12;
      searched.push_back(verbose.out.substr(begin, verbose.out.find('"', begin) - begin));
    }
    CHECK(searched == gnu_ld_search_dirs());
    // atexit comes from libc_nonshared.a, which Debian's libc.so script GROUPs in.
    write_file(dir + "/hello.c", "#include <math.h>\n#include <stdio.h>\n#include <stdlib.h>\nstatic void bye(void) {}\n"
                                 "int main(int c, char** v) { (void)v; atexit(bye); printf(\"%f\\n\", sqrt((double)c)); return 0; }\n");
    REQUIRE(run_in(dir, "gcc -c hello.c -o hello.o") == 0);
    const std::string crt = "/usr/lib/x86_64-linux-gnu/";
    auto gcc_file = [](const char* name) {
      std::string p = capture(std::string("gcc -print-file-name=") + name).out;
      while (!p.empty() && (p.back() == '\n' || p.back() == '\r')) p.pop_back();
      return p;
    };
    const std::string args = crt + "crt1.o " + crt + "crti.o " + gcc_file("crtbegin.o") + " hello.o -lm -lc " +
                             gcc_file("crtend.o") + " " + crt + "crtn.o";
    REQUIRE(run_in(dir, "ld -Map=hello.map " + args + " -o hello") == 0);
    r = capture(in_dir + shell_quote(why) + " --semantics=bfd --print-map-includes " + args);
    CHECK(r.status == 0);
    const std::string map = read_file(dir + "/hello.map");
    CHECK(map.find("Archive member included") != std::string::npos);
    // Every member we say GNU ld includes is in its map, in the same words.
    CHECK(r.out.find("libc_nonshared.a(atexit.oS)") != std::string::npos);
    for (const auto& line : lines(r.out)) CHECK(map.find(line) != std::string::npos);
    r = capture(in_dir + shell_quote(why) + " --json --semantics=bfd " + args);
    CHECK(r.status == 0);
    const auto lld = capture(in_dir + "ld.lld-14 " + args + " -o hello_lld 2>&1");
    CHECK(lld.status != 0);
    CHECK(lld.out.find("unable to find library -lm") != std::string::npos);
    r = capture(in_dir + shell_quote(why) + " " + args + " 2>&1");
    CHECK(r.status == 2);
    CHECK(r.out == "linkscope-why: -lm: error: unable to find library\n");
  }
  r = capture(shell_quote(why) + " --help");
  CHECK(r.status == 0);
  CHECK(r.out.find("--gc-sections") != std::string::npos);
  CHECK(r.out.find("-dynamic-linker ARG") != std::string::npos);
}
