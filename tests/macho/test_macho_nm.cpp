// macho/nm.hpp and linkscope-nm on Mach-O (named test_macho_nm: tests/elf
// owns the target test_nm): byte-identical to llvm-nm-14's stdout for every
// flag set a packager uses (default, -p, -n, -r, -j, -m, -P, -A, -a, -D, -C,
// -S, -g, -u, --defined-only and their combinations) on objects (64- and
// 32-bit), dylibs, bundles, executables, universal files (the host's slice,
// --arch=ARCH, --arch=A,B, --arch=all), darwin archives of Mach-O objects
// (--print-armap, which linkscope-nm also spells -s as GNU nm does) and a
// universal archive. The expected text is always llvm-nm-14's own output.
#include "linkscope/macho/nm.hpp"

#include <catch2/catch.hpp>

#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "linkscope/core/mapped_file.hpp"
#include "macho/macho_fixtures.hpp"

using namespace linkscope;
using namespace linkscope_test;

namespace {
// The shared fixtures plus this test's own: a 32-bit object, C++ and Rust
// (v0) names for -C, a darwin archive of arm64 objects and a universal
// archive made of the two archives.
const std::string& fixture_dir() {
  static const std::string dir = [] {
    if (!have_macho_tools()) return std::string();
    std::string d = make_macho_fixtures("macho_nm");
    if (d.empty()) return d;
    write_file(d + "/cxx.cpp",
               "namespace ns { struct S { int f(int) const; static int g; }; int S::f(int x) const { return x; }\n"
               "int S::g = 1; template <class T> T twice(T v) { return v + v; } template int twice<int>(int);\n"
               "template long twice<long>(long); }\n"
               "extern \"C\" int plain(void) { return 0; }\n"
               "int use(const ns::S& s) { return s.f(2) + ns::S::g; }\n");
    write_file(d + "/rust.s",
               ".globl __RNvNtCs7ugCUClCr9k_3std9panicking11EMPTY_PANIC\n"
               "__RNvNtCs7ugCUClCr9k_3std9panicking11EMPTY_PANIC = 0x10\n"
               ".globl __RNvCs1234_5hello4main\n__RNvCs1234_5hello4main = 0x20\n"
               ".globl __DefaultRuneLocale\n__DefaultRuneLocale = 0x30\n");
    // n_desc and n_type bits that -m spells out: weak private external, weak
    // external automatically hidden, [no dead strip], [alt entry], [symbol
    // resolver], (undefined [lazy bound]), weak references, __bss, a local
    // in another section.
    write_file(d + "/attrs.s",
               ".text\n.globl _weak_hidden\n.weak_definition _weak_hidden\n.private_extern _weak_hidden\n"
               "_weak_hidden: ret\n.globl _auto_hidden\n.weak_def_can_be_hidden _auto_hidden\n_auto_hidden: ret\n"
               ".globl _kept\n.no_dead_strip _kept\n_kept: ret\n.globl _alt\n.alt_entry _alt\n_alt: ret\n"
               ".globl _resolver\n.symbol_resolver _resolver\n_resolver: ret\n.globl _refdyn\n"
               ".reference _undef_ref\n.weak_reference _weak_undef\n_refdyn: ret\n.lazy_reference _lazy_undef\n"
               ".data\n.globl _data_sym\n_data_sym: .quad _weak_undef\n.zerofill __DATA,__bss,_bss_sym,8,3\n"
               ".globl _bss_sym\n.section __TEXT,__cstring\n_local_str: .asciz \"x\"\n");
    const std::string script =
        "set -e\n"
        "clang-14 -target i386-apple-macos10.13 -fcommon -c a.c -o a_i386.o\n"
        "clang-14 -target x86_64-apple-macos11 -c cxx.cpp -o cxx_x86_64.o\n"
        "clang-14 -target x86_64-apple-macos11 -c rust.s -o rust_x86_64.o\n"
        "clang-14 -target x86_64-apple-macos11 -c attrs.s -o attrs_x86_64.o\n"
        "llvm-ar-14 rcs --format=darwin liba_arm64.a a_arm64.o w_arm64.o\n"
        "llvm-lipo-14 -create liba_darwin.a liba_arm64.a -output libfat.a\n";
    write_file(d + "/make_nm.sh", script);
    if (run_in(d, "sh make_nm.sh >make_nm.log 2>&1") != 0) return std::string();
    return d;
  }();
  return dir;
}

// The flag sets, as llvm-nm-14 spells them (linkscope-nm takes the same).
const std::vector<std::string> flag_sets = {
    "",      "-p",    "-n",    "-r",       "-j",    "-m",    "-P",    "-A",    "-a",    "-D",
    "-C",    "-S",    "-g",    "-u",       "--defined-only", "-g -p", "-u -m", "-g -j", "-P -g",
    "-A -g", "-C -g", "-D -g", "-S -g",    "-n -g", "-r -g", "-n -r", "-A -P", "-u -P", "-a -m",
    "-a -p", "-m -g", "-u -A", "-p -r",    "-C -m"};

// nm_options for one flag set (the library test).
macho::nm_options options_for(const std::string& flags) {
  macho::nm_options o;
  std::istringstream words(flags);
  std::string w;
  while (words >> w) {
    if (w == "-p") o.no_sort = true;
    else if (w == "-n") o.numeric_sort = true;
    else if (w == "-r") o.reverse_sort = true;
    else if (w == "-j") o.format = macho::nm_format::just_symbols;
    else if (w == "-m") o.format = macho::nm_format::darwin;
    else if (w == "-P") o.format = macho::nm_format::posix;
    else if (w == "-A") o.print_file_name = true;
    else if (w == "-a") o.debug_syms = true;
    else if (w == "-D") o.dynamic = true;
    else if (w == "-C") o.demangle = true;
    else if (w == "-S") o.print_size = true;
    else if (w == "-g") o.external_only = true;
    else if (w == "-u") o.undefined_only = true;
    else if (w == "--defined-only") o.defined_only = true;
    else FAIL("unknown flag " << w);
  }
  return o;
}

// llvm-nm-14's stdout and status for ARGS, run once per distinct ARGS.
const command_result& llvm_nm(const std::string& args) {
  static std::map<std::string, command_result> seen;
  auto it = seen.find(args);
  if (it == seen.end()) it = seen.emplace(args, capture("llvm-nm-14 " + args + " 2>/dev/null")).first;
  return it->second;
}

std::vector<std::string> listed_files() {
  std::vector<std::string> files = macho_images();
  for (const char* f : {"liba_fat.dylib", "liba_darwin.a", "a_i386.o", "cxx_x86_64.o", "rust_x86_64.o", "libfat.a",
                        "attrs_x86_64.o"})
    files.push_back(f);
  return files;
}
}  // namespace

// Does llvm-nm-14's output for several files, `all`, consist of `ours[i]`
// for each file in order, each after an optional "\nPATH:\n" header? (Its
// multi-file output is the single-file outputs with those headers.)
bool splits_into(const std::string& all, const std::vector<std::string>& paths, const std::vector<std::string>& ours) {
  std::size_t pos = 0;
  for (std::size_t i = 0; i < paths.size(); ++i) {
    const std::string header = "\n" + paths[i] + ":\n";
    if (all.compare(pos, header.size(), header) == 0) pos += header.size();
    if (all.compare(pos, ours[i].size(), ours[i]) != 0) return false;
    pos += ours[i].size();
  }
  return pos == all.size();
}

TEST_CASE("macho::nm_file equals llvm-nm-14 for each flag set", "[macho]") {
  LINKSCOPE_MACHO_FIXTURES_OR_RETURN(fixture_dir());
  std::vector<std::string> paths;
  std::vector<mapped_file> files;
  std::string quoted;
  for (const auto& name : listed_files()) {
    paths.push_back(fixture_dir() + "/" + name);
    auto mapped = mapped_file::open(paths.back());
    REQUIRE(mapped);
    files.push_back(std::move(*mapped));
    quoted += " " + shell_quote(paths.back());
  }
  for (const auto& flags : flag_sets) {
    std::vector<std::string> ours(paths.size());
    bool clean = true;
    for (std::size_t i = 0; i < paths.size(); ++i) {
      INFO(paths[i] << " [" << flags << "]");
      std::vector<macho::nm_problem> problems;
      REQUIRE(macho::nm_file(files[i].bytes(), paths[i], options_for(flags), ours[i], &problems));
      clean = clean && problems.empty();
    }
    // One llvm-nm-14 run over every file (a process per file and flag set
    // took two minutes); where that run failed or does not split into ours,
    // each file is compared alone, so a difference names its file.
    const auto all = capture("llvm-nm-14 " + flags + quoted + " 2>/dev/null");
    if (clean && all.status == 0 && splits_into(all.out, paths, ours)) continue;
    for (std::size_t i = 0; i < paths.size(); ++i) {
      INFO(paths[i] << " [" << flags << "]");
      std::vector<macho::nm_problem> problems;
      std::string again;
      REQUIRE(macho::nm_file(files[i].bytes(), paths[i], options_for(flags), again, &problems));
      const auto& theirs = llvm_nm(flags + " " + shell_quote(paths[i]));
      CHECK(again == theirs.out);
      // llvm-nm fails exactly where a problem is reported (-D on Mach-O)
      CHECK(problems.empty() == (theirs.status == 0));
    }
  }
}

TEST_CASE("macho::nm_options.darwin_format and .arch keep their meaning", "[macho]") {
  LINKSCOPE_MACHO_FIXTURES_OR_RETURN(fixture_dir());
  const std::string path = fixture_dir() + "/liba_fat.dylib";
  auto mapped = mapped_file::open(path);
  REQUIRE(mapped);
  macho::nm_options o;
  o.darwin_format = true;
  o.arch = "arm64";
  std::string ours;
  REQUIRE(macho::nm_file(mapped->bytes(), path, o, ours));
  CHECK(ours == capture("llvm-nm-14 -m --arch=arm64 " + shell_quote(path)).out);
}

TEST_CASE("linkscope-nm lists Mach-O files as llvm-nm-14 does", "[macho]") {
  LINKSCOPE_MACHO_FIXTURES_OR_RETURN(fixture_dir());
  const std::string nm = tool_path("linkscope-nm");
  REQUIRE(have_tool(nm));
  auto same = [&](const std::string& ours_flags, const std::string& llvm_flags, const std::string& files) {
    INFO(ours_flags << " " << files);
    const auto ours = capture(shell_quote(nm) + " " + ours_flags + " " + files + " 2>/dev/null");
    const auto& theirs = llvm_nm(llvm_flags + " " + files);
    CHECK(ours.out == theirs.out);
    CHECK((ours.status == 0) == (theirs.status == 0));
  };
  auto q = [&](const std::string& name) { return shell_quote(fixture_dir() + "/" + name); };
  // each flag set over four kinds at once (a universal dylib, an executable,
  // a universal archive, an object), headers included
  for (const auto& flags : flag_sets)
    same(flags, flags, q("liba_fat.dylib") + " " + q("main2_x86_64") + " " + q("libfat.a") + " " + q("cxx_x86_64.o"));
  // universal files and archives: the slices asked for
  for (const std::string flags : {"--arch=arm64", "--arch=all", "--arch=all -A", "--arch=all -P -A", "--arch=x86_64,arm64",
                                  "--arch=x86_64 --arch=arm64", "--arch=i386", "--arch=all -m", "--arch=all -j"})
    for (const std::string name : {"liba_fat.dylib", "libfat.a", "liba_darwin.a", "a_x86_64.o"}) same(flags, flags, q(name));
  // the armap of a darwin archive (__.SYMDEF): -s is GNU nm's letter for --print-armap
  for (const std::string name : {"liba_darwin.a", "liba_arm64.a"}) {
    same("-s", "--print-armap", q(name));
    same("--print-armap -g", "--print-armap -g", q(name));
  }
  // several files: a "\nFILE:\n" header before each thin file (not with -m or -A)
  const std::string two = q("liba_x86_64.dylib") + " " + q("a_x86_64.o");
  for (const std::string flags : {"", "-m", "-j", "-P", "-A", "-u", "-D"}) same(flags, flags, two);
  same("", "", q("a_x86_64.o") + " " + q("liba_fat.dylib") + " " + q("liba_darwin.a"));
}

TEST_CASE("linkscope-nm: llvm-nm-only options on an ELF file are an error, not ignored", "[macho]") {
  const std::string nm = tool_path("linkscope-nm");
  REQUIRE(have_tool(nm));
  for (const std::string flags : {"-n", "-r", "-m", "-j", "--format=darwin"}) {
    INFO(flags);
    const auto r = capture(shell_quote(nm) + " " + flags + " " + shell_quote(nm) + " 2>/dev/null");
    CHECK(r.status == 2);
    CHECK(r.out.empty());
  }
}

TEST_CASE("linkscope-nm on real macOS binaries equals llvm-nm-14 for each flag set", "[macho][real]") {
  const auto files = real_macho_files();
  if (files.empty()) return;  // opt-in: scripts/real-parity (CI) sets LINKSCOPE_MACHO_REAL
  const std::string nm = tool_path("linkscope-nm");
  REQUIRE(have_tool(nm));
  for (const auto& path : files)
    for (const auto& flags : flag_sets) {
      INFO(path << " [" << flags << "]");
      const auto ours = capture(shell_quote(nm) + " " + flags + " " + shell_quote(path) + " 2>/dev/null");
      const auto theirs = capture("llvm-nm-14 " + flags + " " + shell_quote(path) + " 2>/dev/null");
      CHECK(ours.out == theirs.out);
    }
}

TEST_CASE("linkscope-nm --json on Mach-O: the rows llvm-nm-14 -P prints, as ELF's keys", "[macho]") {
  LINKSCOPE_MACHO_FIXTURES_OR_RETURN(fixture_dir());
  const std::string nm = tool_path("linkscope-nm");
  REQUIRE(have_tool(nm));
  // One "NAME TYPE VALUE 0" line per symbol from the JSON (the posix format's
  // columns), objects in order.
  const std::string to_posix =
      " | /usr/bin/python3 -c 'import json,sys\n"
      "for o in json.load(sys.stdin)[\"objects\"]:\n"
      "  for s in o[\"symbols\"]: print(s[\"name\"], s[\"type\"], s.get(\"value\", \"0x0\")[2:], s.get(\"size\", 0))'";
  for (const std::string flags : {"", "-g", "-u", "-n", "-p"})
    for (const std::string name : {"a_x86_64.o", "main2_arm64", "a_i386.o", "liba_darwin.a"}) {
      INFO(name << " [" << flags << "]");
      const std::string path = shell_quote(fixture_dir() + "/" + name);
      const auto ours = capture(shell_quote(nm) + " --json " + flags + " " + path + to_posix);
      // without the archive's "\nA(M):\n" labels
      const auto theirs = capture("llvm-nm-14 -P " + flags + " " + path + " | grep -v -e '^$' -e ':$'");
      CHECK(ours.out == theirs.out);
    }
}

TEST_CASE("linkscope-nm --json names the slice of a universal file, as llvm-nm-14 --arch=all labels it", "[macho]") {
  LINKSCOPE_MACHO_FIXTURES_OR_RETURN(fixture_dir());
  const std::string nm = tool_path("linkscope-nm");
  REQUIRE(have_tool(nm));
  const std::string archs =
      " | /usr/bin/python3 -c 'import json,sys\n"
      "for o in json.load(sys.stdin)[\"objects\"]: print(o[\"arch\"])'";
  // the labels "\nFILE (for architecture ARCH):\n" of llvm-nm-14, in order
  const std::string labels = " | sed -n 's/.*(for architecture \\(.*\\)):$/\\1/p'";
  const std::string fat = shell_quote(fixture_dir() + "/liba_fat.dylib");
  CHECK(capture(shell_quote(nm) + " --json --arch=all " + fat + archs).out ==
        capture("llvm-nm-14 --arch=all " + fat + labels).out);
  // the host's slice listed alone still says which it is
  CHECK(capture(shell_quote(nm) + " --json " + fat + archs).out == "x86_64\n");
}
