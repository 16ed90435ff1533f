// linkscope-nm on COFF, PE and import libraries against GNU nm 2.40 from
// binutils-multiarch, byte for byte (stdout, the exit status, and stderr with
// the program name replaced), under LC_ALL=C. The expected output is always
// nm's own, run on the same file with the same flags. Fixtures are made at
// test time: mingw-w64 gcc objects (x86-64, i686, -g, -Wa,-mbig-obj), clang-14
// MSVC-target objects (x86-64, i386, arm64), llvm-dlltool-14 short import
// libraries (x86-64, i386), a GNU dlltool long import library, a mingw ar
// archive, mingw DLLs and an executable, a stripped DLL; and the system's real
// crt2.o, libkernel32.a (x86-64 and i686) and wine's PE DLLs.
#include <linkscope/coff/nm.hpp>

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "support/fixtures.hpp"

using namespace linkscope_test;

namespace {

struct coff_fixtures {
  std::string dir;
  bool ready = false;
  std::vector<std::string> files;  // made here, relative to dir
};

bool nm_is_multiarch() {
  static const bool multiarch = capture("nm --help 2>&1").out.find("pe-x86-64") != std::string::npos;
  return multiarch;
}

const coff_fixtures& fx() {
  static const coff_fixtures f = [] {
    coff_fixtures c;
    c.dir = scratch_dir("coff_nm_fixtures");
    const char* source =
        "int common_var;\n"
        "static int local_var = 3;\n"
        "int data_var = 5;\n"
        "const int ro_var = 7;\n"
        "static int bss_local;\n"
        "extern int ext_var;\n"
        "__attribute__((weak)) int weak_fn(void) { return 1; }\n"
        "extern void undef_fn(void);\n"
        "__declspec(dllexport) int exported(int x) { return x + ext_var + local_var + bss_local + ro_var; }\n"
        "static int helper(int y) { return y * 2; }\n"
        "int main_like(void) { undef_fn(); return helper(common_var); }\n";
    write_file(c.dir + "/a.c", source);
    write_file(c.dir + "/pseudo_reloc_list_long_name.c", "static int keep; int get(void) { return keep; }\n");
    write_file(c.dir + "/cxx.cpp",
               "namespace ns { struct widget { int f(int); static int count; }; int widget::f(int x) { return x; }\n"
               "int widget::count; }\nint use(ns::widget& w) { return w.f(1); }\n");
    write_file(c.dir + "/d.c", "int dllfn(int x) { return x + 1; }\nint dllvar = 3;\n");
    write_file(c.dir + "/main.c", "int dllfn(int);\nint main(void) { return dllfn(2); }\n");
    write_file(c.dir + "/x.def",
               "LIBRARY foo.dll\nEXPORTS\n  alpha\n  beta DATA\n  gamma @5 NONAME\n  delta=alpha\n  longer_name_for_idata6\n");
    struct step {
      const char* tool;
      std::string command;
      std::vector<std::string> outputs;
    };
    const std::vector<step> steps = {
        {"x86_64-w64-mingw32-gcc", "x86_64-w64-mingw32-gcc -c a.c -o a64.o", {"a64.o"}},
        {"x86_64-w64-mingw32-gcc", "x86_64-w64-mingw32-gcc -g -c a.c -o a64g.o", {"a64g.o"}},
        {"x86_64-w64-mingw32-gcc", "x86_64-w64-mingw32-gcc -Wa,-mbig-obj -c a.c -o abig.o", {"abig.o"}},
        {"x86_64-w64-mingw32-g++", "x86_64-w64-mingw32-g++ -c cxx.cpp -o cxx64.o", {"cxx64.o"}},
        {"i686-w64-mingw32-gcc", "i686-w64-mingw32-gcc -c a.c -o a32.o", {"a32.o"}},
        {"i686-w64-mingw32-g++", "i686-w64-mingw32-g++ -c cxx.cpp -o cxx32.o", {"cxx32.o"}},
        {"clang-14", "clang-14 --target=x86_64-pc-windows-msvc -c a.c -o a.obj", {"a.obj"}},
        {"clang-14", "clang-14 --target=i686-pc-windows-msvc -c a.c -o a32.obj", {"a32.obj"}},
        {"clang-14", "clang-14 --target=aarch64-pc-windows-msvc -c a.c -o aarm64.obj", {"aarm64.obj"}},
        {"clang-14", "clang-14 --target=x86_64-pc-windows-msvc -c cxx.cpp -o cxx.obj", {"cxx.obj"}},
        {"llvm-dlltool-14", "llvm-dlltool-14 -m i386:x86-64 -d x.def -l x.lib", {"x.lib"}},
        {"llvm-dlltool-14", "llvm-dlltool-14 -m i386 -d x.def -l x32.lib", {"x32.lib"}},
        {"x86_64-w64-mingw32-dlltool", "x86_64-w64-mingw32-dlltool -d x.def -l libx.a -D foo.dll", {"libx.a"}},
        {"x86_64-w64-mingw32-ar", "x86_64-w64-mingw32-ar rcs objs.a a64.o a64g.o", {"objs.a"}},
        {"x86_64-w64-mingw32-gcc",
         "x86_64-w64-mingw32-gcc -shared d.c pseudo_reloc_list_long_name.c -o d.dll -Wl,--out-implib,libd.dll.a",
         {"d.dll", "libd.dll.a"}},
        {"x86_64-w64-mingw32-gcc", "x86_64-w64-mingw32-gcc main.c -L. -ld -o main.exe", {"main.exe"}},
        {"i686-w64-mingw32-gcc", "i686-w64-mingw32-gcc -shared d.c -o d32.dll", {"d32.dll"}},
        {"x86_64-w64-mingw32-strip", "x86_64-w64-mingw32-strip -o ds.dll d.dll", {"ds.dll"}},
    };
    for (const step& s : steps) {
      if (!have_tool(s.tool)) {
        WARN("coff nm fixtures: " << s.tool << " missing, skipping " << s.outputs.front());
        continue;
      }
      if (run_in(c.dir, s.command + " >/dev/null 2>&1") != 0) {
        WARN("coff nm fixtures: failed: " << s.command);
        continue;
      }
      for (const auto& o : s.outputs) c.files.push_back(o);
    }
    // Bad inputs: a COFF object cut inside its section table, a PE whose
    // e_lfanew points past the end.
    run_in(c.dir, "head -c 100 a64.o > truncated.o && cp d.dll bad_lfanew.dll && "
                  "printf '\\377\\377\\000\\000' | dd of=bad_lfanew.dll bs=1 seek=60 conv=notrunc 2>/dev/null");
    c.ready = !c.files.empty();
    return c;
  }();
  return f;
}

// nm's flags (the ones GNU nm 2.40 takes for COFF): one listing per set.
const std::vector<std::string> flag_sets = {
    "", "-a", "-g", "-u", "--defined-only", "-n", "-v", "-r", "-p", "-S", "--size-sort", "-S --size-sort",
    "-r --size-sort", "-P", "--format=posix", "--format=sysv", "-f sysv -u", "-j", "--format=just-symbols",
    "-A", "-o", "-s", "--print-armap -A", "-C", "-C -P", "-t d", "-t o", "-t x", "-n -r", "-a -P -A",
    "--format=sysv -A -S --size-sort", "-p -r", "-g -n", "-D", "--special-syms", "-a --special-syms",
    "-u -A -P", "-g --defined-only -S"};

std::string run_all(const std::string& program, const std::vector<std::string>& flags, const std::string& files) {
  // stdout, then the exit status, then stderr with the program's name as nm
  // writes it and without linkscope's "error: " (nm's LTO plugin notes about
  // files it cannot read are dropped).
  std::string s = "cd " + shell_quote(fx().dir) + " && export LC_ALL=C && {";
  for (const std::string& f : flags) {
    s += cat({" echo '=== ", f, "'; ", program, " ", f, " ", files, " 2>err.txt; s=$?; [ $s -le 1 ] || s=1; echo \"rc=$s\"; ",
              "grep -v -e '^bfd plugin' -e '^BFD ' err.txt | sed -e 's/^linkscope-nm: /nm: /' -e 's/: error: /: /';"});
  }
  return s + " }";
}

std::vector<std::string> split_sets(const std::string& all) {
  std::vector<std::string> parts;
  std::size_t pos = 0;
  while ((pos = all.find("=== ", pos)) != std::string::npos) {
    const std::size_t next = all.find("\n=== ", pos);
    parts.push_back(all.substr(pos, next == std::string::npos ? std::string::npos : next + 1 - pos));
    if (next == std::string::npos) break;
    pos = next + 1;
  }
  return parts;
}

// One CHECK per flag set: nm and linkscope-nm on the same files. Exit status:
// linkscope's CLIs exit 2 for an input error (docs: 0 ok, 1 a finding, 2
// usage or input) where nm exits 1; both are "failed" here, and 0 is 0.
void check_same(const std::vector<std::string>& flags, const std::string& files) {
  const auto expected = split_sets(capture(run_all(gnu_nm(), flags, files)).out);
  const auto actual = split_sets(capture(run_all(shell_quote(tool_path("linkscope-nm")), flags, files)).out);
  REQUIRE(expected.size() == flags.size());
  REQUIRE(actual.size() == flags.size());
  for (std::size_t i = 0; i < flags.size(); ++i) {
    INFO("nm " << flags[i] << " " << files);
    CHECK(actual[i] == expected[i]);
  }
}

#define COFF_FIXTURES_OR_RETURN()                                                    \
  do {                                                                               \
    if (!nm_is_multiarch()) {                                                        \
      WARN("SKIP: nm is not binutils-multiarch's (no pe-x86-64 target)");            \
      return;                                                                        \
    }                                                                                \
    if (!fx().ready) {                                                               \
      WARN("SKIP: no COFF fixtures (mingw-w64, clang-14 and llvm-14 missing)");      \
      return;                                                                        \
    }                                                                                \
  } while (0)

bool made(const std::string& name) {
  for (const auto& f : fx().files)
    if (f == name) return true;
  return false;
}

}  // namespace

TEST_CASE("coff::is_nm_coff: what linkscope-nm hands to coff/nm.hpp", "[coff][nm]") {
  COFF_FIXTURES_OR_RETURN();
  for (const std::string name : {"a64.o", "a32.o", "abig.o", "a.obj", "aarm64.obj", "d.dll", "ds.dll"}) {
    if (!made(name)) continue;
    const std::string bytes = read_file(fx().dir + "/" + name);
    INFO(name);
    CHECK(linkscope::coff::is_nm_coff(linkscope::byte_view(reinterpret_cast<const unsigned char*>(bytes.data()),
                                                            bytes.size())));
  }
  const std::string elf = read_file("/bin/true");
  CHECK_FALSE(linkscope::coff::is_nm_coff(
      linkscope::byte_view(reinterpret_cast<const unsigned char*>(elf.data()), elf.size())));
}

TEST_CASE("linkscope-nm equals nm 2.40 on COFF objects (standard, bigobj; x86-64, i386, arm64)", "[coff][nm]") {
  COFF_FIXTURES_OR_RETURN();
  for (const std::string name :
       {"a64.o", "a64g.o", "abig.o", "cxx64.o", "a32.o", "cxx32.o", "a.obj", "a32.obj", "aarm64.obj", "cxx.obj"}) {
    if (!made(name)) continue;
    check_same(flag_sets, name);
  }
}

TEST_CASE("linkscope-nm equals nm 2.40 on import libraries (short and long) and COFF archives", "[coff][nm]") {
  COFF_FIXTURES_OR_RETURN();
  for (const std::string name : {"x.lib", "x32.lib", "libx.a", "objs.a", "libd.dll.a"}) {
    if (!made(name)) continue;
    check_same(flag_sets, name);
  }
}

TEST_CASE("linkscope-nm equals nm 2.40 on PE images: symbol tables kept by mingw, 'no symbols' when stripped",
          "[coff][nm]") {
  COFF_FIXTURES_OR_RETURN();
  for (const std::string name : {"d.dll", "main.exe", "d32.dll", "ds.dll"}) {
    if (!made(name)) continue;
    check_same(flag_sets, name);
  }
}

TEST_CASE("linkscope-nm equals nm 2.40 on several files at once", "[coff][nm]") {
  COFF_FIXTURES_OR_RETURN();
  if (!made("a64.o") || !made("a32.o") || !made("x.lib") || !made("ds.dll")) return;
  check_same(flag_sets, "a64.o a32.o x.lib ds.dll");
}

TEST_CASE("linkscope-nm equals nm 2.40 on the system's mingw-w64 crt2.o and libkernel32.a", "[coff][nm]") {
  COFF_FIXTURES_OR_RETURN();
  for (const std::string path : {"/usr/x86_64-w64-mingw32/lib/crt2.o", "/usr/x86_64-w64-mingw32/lib/libkernel32.a",
                                 "/usr/i686-w64-mingw32/lib/libkernel32.a", "/usr/i686-w64-mingw32/lib/crt2.o"}) {
    if (capture("test -f " + shell_quote(path) + " && echo yes").out != "yes\n") {
      WARN("SKIP: " << path << " missing");
      continue;
    }
    // The real archives' members through each listing and sort (the whole
    // flag matrix runs on the fixtures above; libkernel32.a has ~1600 members,
    // so each flag set here costs seconds, and minutes under ASan).
    check_same({"", "-A", "-P", "-s", "--format=sysv", "-u", "-n", "-S --size-sort"}, shell_quote(path));
  }
}

TEST_CASE("linkscope-nm equals nm 2.40 on wine's PE DLLs", "[coff][nm]") {
  COFF_FIXTURES_OR_RETURN();
  const std::string wine = "/usr/lib/x86_64-linux-gnu/wine/x86_64-windows/";
  for (const std::string name : {"kernel32.dll", "ucrtbase.dll", "ntdll.dll", "msvcp140.dll"}) {
    const std::string path = wine + name;
    if (capture("test -f " + shell_quote(path) + " && echo yes").out != "yes\n") {
      WARN("SKIP: " << path << " missing (package wine64)");
      continue;
    }
    check_same({"", "-a", "-p", "-n", "-P", "--format=sysv", "-g", "-u", "-S --size-sort", "-A"}, shell_quote(path));
  }
}

TEST_CASE("linkscope-nm on bad COFF and PE input: nm's message, or an error with the file and offset", "[coff][nm]") {
  COFF_FIXTURES_OR_RETURN();
  // A PE whose e_lfanew points past the end: neither reads it.
  check_same({"", "-P"}, "bad_lfanew.dll");
  // A COFF object cut inside its section table: nm 2.40 does not recognise it
  // as COFF (its LTO plugin then claims it: "no symbols"); linkscope-nm says
  // what is wrong and where, and fails.
  const auto ours =
      capture("cd " + shell_quote(fx().dir) + " && " + shell_quote(tool_path("linkscope-nm")) + " truncated.o 2>&1");
  CHECK(ours.status == 2);
  CHECK(ours.out == "linkscope-nm: truncated.o: error: section table past end of file (offset 0x14)\n");
  // Cut anywhere: never a crash, always exit 0 or 2 (an input error) with a message.
  const std::string cut =
      cat({"cd ", shell_quote(fx().dir), " && for n in 1 19 20 21 40 64 200 400 700 1000 1400; do for f in a64.o abig.o "
           "d.dll; do head -c $n $f > cut.bin; ",
           shell_quote(tool_path("linkscope-nm")), " -a cut.bin >/dev/null 2>&1; s=$?; ",
           "[ $s -le 2 ] || echo \"$f $n: status $s\"; done; done"});
  CHECK(capture(cut).out.empty());
}

TEST_CASE("linkscope-nm --json on COFF: docs/JSON.md's keys, the rows of the bsd listing", "[coff][nm][json]") {
  COFF_FIXTURES_OR_RETURN();
  if (!made("x.lib") || !made("ds.dll") || !made("a64.o")) return;
  const std::string nm = shell_quote(tool_path("linkscope-nm"));
  // "member" is lib.a(member), "name" the member beside it; unreadable input
  // and stripped images stay in the document.
  const std::string summary =
      " | /usr/bin/python3 -c 'import json,sys\n"
      "for o in json.load(sys.stdin)[\"objects\"]:\n"
      "  print(o[\"file\"], o.get(\"member\"), o.get(\"name\"), o.get(\"error\"), o.get(\"warnings\"), "
      "len(o.get(\"symbols\", [])))'";
  const auto doc = capture(cat({"cd ", shell_quote(fx().dir), " && ", nm, " --json x.lib ds.dll missing.o 2>/dev/null",
                                summary}));
  const auto members = capture("cd " + shell_quote(fx().dir) + " && ar t x.lib | wc -l");
  CHECK(doc.out.find("x.lib x.lib(foo.dll) foo.dll None None ") != std::string::npos);
  CHECK(doc.out.find("ds.dll None None None ['no symbols'] 0\n") != std::string::npos);
  CHECK(doc.out.find("missing.o None None no such file None 0\n") != std::string::npos);
  CHECK(std::to_string(linkscope_test::lines(doc.out).size() - 2) + "\n" == members.out);
  // The rows: "VALUE TYPE NAME" as nm prints them (LC_ALL=C), objects in order.
  const std::string to_bsd =
      " | /usr/bin/python3 -c 'import json,sys\n"
      "for o in json.load(sys.stdin)[\"objects\"]:\n"
      "  w = 16 if o[\"bits\"] == 64 else 8\n"
      "  for s in o[\"symbols\"]:\n"
      "    v = (\"%0*x\" % (w, int(s[\"value\"], 16))) if s[\"defined\"] else \" \" * w\n"
      "    print(v, s[\"type\"], s[\"symbol\"])'";
  for (const std::string name : {"a64.o", "a32.o", "x.lib", "libx.a", "d.dll"}) {
    if (!made(name)) continue;
    INFO(name);
    const auto ours = capture(cat({"cd ", shell_quote(fx().dir), " && LC_ALL=C ", nm, " --json ", name, to_bsd}));
    const auto theirs = capture(cat({"cd ", shell_quote(fx().dir), " && LC_ALL=C nm ", name,
                                     " 2>/dev/null | grep -v -e '^$' -e ':$'"}));
    CHECK(ours.out == theirs.out);
  }
}
