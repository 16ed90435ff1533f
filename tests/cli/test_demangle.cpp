// --demangle in the CLIs that print symbol names (issue 15 part 3):
// linkscope-why, -absorbed, -dupes, -ldd (--bindings, --undefined) and
// -implib (--symbols, --needs). The expected text is never our own: each
// CLI's output without --demangle is piped through c++filt (binutils), and
// the output with --demangle must be that, byte for byte. The fixture is a
// small C++ library (a namespace, a class, function templates, an extern "C"
// function) built with g++ at test time as a DSO with a version script
// (every symbol @@VERS_2, so the version suffix is kept), the same DSO
// without versions, an archive of its two objects, a program that uses it
// and one whose library references a function nobody defines; for
// linkscope-implib, a mingw import library made by dlltool from a .def file
// and a consumer object compiled by x86_64-w64-mingw32-gcc.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "support/fixtures.hpp"

using namespace linkscope_test;

namespace {

struct demangle_fixture {
  std::string dir;
  bool ok = false;
  bool mingw = false;
};

const demangle_fixture& fixture() {
  static demangle_fixture fx = [] {
    demangle_fixture f;
    f.dir = scratch_dir("demangle_cli");
    if (!have_tool("g++") || !have_tool("c++filt") || !have_tool("ar")) return f;
    const std::string& d = f.dir;
    write_file(d + "/dm_a.cpp",
               "namespace ns {\n"
               "int add(int a, int b) { return a + b; }\n"
               "template <typename T> T twice(T v) { return v + v; }\n"
               "template int twice<int>(int);\n"
               "template double twice<double>(double);\n"
               "}  // namespace ns\n"
               "extern \"C\" int c_func(int x) { return x; }\n");
    write_file(d + "/dm_b.cpp",
               "namespace ns {\n"
               "struct widget { int get() const; static long count(const char* s); };\n"
               "int widget::get() const { return 7; }\n"
               "long widget::count(const char* s) { return s != nullptr ? 1 : 0; }\n"
               "}  // namespace ns\n");
    write_file(d + "/dm.map", "VERS_2 { global: *; };\n");
    write_file(d + "/use.cpp",
               "namespace ns {\n"
               "int add(int, int);\n"
               "template <typename T> T twice(T);\n"
               "struct widget { int get() const; static long count(const char* s); };\n"
               "}  // namespace ns\n"
               "extern \"C\" int c_func(int);\n"
               "int main() {\n"
               "  ns::widget w;\n"
               "  return ns::add(1, 2) + ns::twice(3) + w.get() + static_cast<int>(ns::widget::count(\"x\")) + c_func(0);\n"
               "}\n");
    write_file(d + "/undef.cpp",
               "namespace ns { int missing(double); }\n"
               "int call_missing() { return ns::missing(1.0); }\n");
    write_file(d + "/useu.cpp", "int call_missing();\nint main() { return call_missing(); }\n");
    const int built = run_in(d,
                             "g++ -fPIC -O1 -c dm_a.cpp -o dm_a.o && g++ -fPIC -O1 -c dm_b.cpp -o dm_b.o && "
                             "g++ -fPIC -O1 -c use.cpp -o use.o && g++ -fPIC -O1 -c undef.cpp -o undef.o && "
                             "ar rcs libdm.a dm_a.o dm_b.o && "
                             "g++ -shared dm_a.o dm_b.o -o libdm.so -Wl,--version-script=dm.map -Wl,-soname,libdm.so && "
                             "g++ -shared dm_a.o dm_b.o -o libdm2.so -Wl,-soname,libdm2.so && "
                             "g++ -shared undef.o -o libundef.so -Wl,-soname,libundef.so && "
                             "g++ use.o -o use ./libdm.so -Wl,-rpath,'$ORIGIN' && "
                             "g++ useu.cpp -o useu ./libundef.so -Wl,--allow-shlib-undefined -Wl,-rpath,'$ORIGIN' "
                             ">build.log 2>&1");
    f.ok = built == 0;
    if (f.ok && have_tool("x86_64-w64-mingw32-dlltool") && have_tool("x86_64-w64-mingw32-gcc")) {
      write_file(d + "/dm.def",
                 "LIBRARY dm.dll\nEXPORTS\n_ZN2ns3addEii\n_ZNK2ns6widget3getEv\n_ZN2ns5twiceIiEET_S1_\nc_func\n");
      // The consumer names the C++ functions by their mangled names (no mingw g++ needed).
      write_file(d + "/consumer.c",
                 "extern int add(int, int) __asm__(\"_ZN2ns3addEii\");\n"
                 "extern int twice(int) __asm__(\"_ZN2ns5twiceIiEET_S1_\");\n"
                 "extern int c_func(int);\n"
                 "extern int gone(double) __asm__(\"_ZN2ns7missingEd\");\n"
                 "int consume(void) { return add(1, 2) + twice(3) + c_func(0) + gone(1.0); }\n");
      f.mingw = run_in(d,
                       "x86_64-w64-mingw32-dlltool -d dm.def -l libdm.dll.a -D dm.dll && "
                       "x86_64-w64-mingw32-gcc -c consumer.c -o consumer.o >mingw.log 2>&1") == 0;
    }
    return f;
  }();
  return fx;
}

// stdout of a CLI run in the fixture folder (stderr: `stderr_to`).
command_result run(const std::string& cli, const std::string& args, const std::string& stderr_to = "/dev/null") {
  return capture(cat({"cd ", shell_quote(fixture().dir), " && ", shell_quote(tool_path(cli)), " ", args, " 2>",
                      stderr_to}));
}

// stderr of a CLI run (stdout dropped).
command_result run_stderr(const std::string& cli, const std::string& args) {
  return capture(cat({"cd ", shell_quote(fixture().dir), " && ", shell_quote(tool_path(cli)), " ", args,
                      " 2>&1 >/dev/null"}));
}

// What c++filt makes of `text` (each mangled token demangled in place).
std::string cxxfilt(const std::string& text) {
  const std::string in = fixture().dir + "/cxxfilt.in";
  write_file(in, text);
  return capture(cat({"c++filt < ", shell_quote(in)})).out;
}

// The --demangle output is c++filt of the plain output, the exit status is
// the same, and the fixture's names really were mangled.
void check_against_cxxfilt(const std::string& cli, const std::string& args, bool on_stderr = false) {
  INFO(cli << " " << args);
  const command_result plain = on_stderr ? run_stderr(cli, args) : run(cli, args);
  const command_result demangled =
      on_stderr ? run_stderr(cli, cat({"--demangle ", args})) : run(cli, cat({"--demangle ", args}));
  REQUIRE(plain.status == demangled.status);
  REQUIRE(plain.out.find("_ZN") != std::string::npos);
  CHECK(demangled.out.find("_ZN") == std::string::npos);
  CHECK(demangled.out == cxxfilt(plain.out));
}

}  // namespace

TEST_CASE("linkscope-ldd --demangle: --bindings and --undefined rows as c++filt prints them", "[cli][demangle]") {
  const auto& fx = fixture();
  if (!fx.ok) {
    WARN("g++, c++filt or ar missing, or the fixture did not build");
    return;
  }
  check_against_cxxfilt("linkscope-ldd", "--bindings ./use");
  check_against_cxxfilt("linkscope-ldd", "--undefined ./useu");
  // -C is the short form; the version column stays as it was.
  const command_result shortform = run("linkscope-ldd", "-C --bindings ./use");
  CHECK(shortform.out == cxxfilt(run("linkscope-ldd", "--bindings ./use").out));
  CHECK(shortform.out.find("ns::add(int, int)\tVERS_2\n") != std::string::npos);
  CHECK(shortform.out.find("\tc_func\tVERS_2\n") != std::string::npos);
  CHECK(run("linkscope-ldd", "--undefined -C ./useu").out.find("undefined symbol: ns::missing(double)\t") !=
        std::string::npos);
}

TEST_CASE("linkscope-dupes --demangle: names as c++filt prints them, versions kept", "[cli][demangle]") {
  const auto& fx = fixture();
  if (!fx.ok) {
    WARN("g++, c++filt or ar missing, or the fixture did not build");
    return;
  }
  check_against_cxxfilt("linkscope-dupes", "libdm.so libdm2.so");
  check_against_cxxfilt("linkscope-dupes", "libdm.so libdm.a");
  const std::string out = run("linkscope-dupes", "-C libdm.so libdm2.so").out;
  CHECK(out.find("\nns::widget::get() const\n") != std::string::npos);
  CHECK(out.find("\nns::widget::count(char const*)\n") != std::string::npos);
  // The templates' instantiations are weak: no duplicates, as nm shows them (W).
  CHECK(out.find("twice") == std::string::npos);
}

TEST_CASE("linkscope-absorbed --demangle: evidence and member symbols as c++filt prints them", "[cli][demangle]") {
  const auto& fx = fixture();
  if (!fx.ok) {
    WARN("g++, c++filt or ar missing, or the fixture did not build");
    return;
  }
  check_against_cxxfilt("linkscope-absorbed", "--members libdm.so libdm.a");
  check_against_cxxfilt("linkscope-absorbed", "--members --consumer use.o libdm2.so libdm.a");
}

TEST_CASE("linkscope-why --demangle: --why-extract, --chain, the map and the messages as c++filt prints them",
          "[cli][demangle]") {
  const auto& fx = fixture();
  if (!fx.ok) {
    WARN("g++, c++filt or ar missing, or the fixture did not build");
    return;
  }
  check_against_cxxfilt("linkscope-why", "--why-extract=- use.o libdm.a");
  check_against_cxxfilt("linkscope-why", "--chain 'libdm.a(dm_b.o)' use.o libdm.a");
  check_against_cxxfilt("linkscope-why", "--semantics=bfd --print-map-includes use.o libdm.a");
  // The undefined-symbol message (stderr) of a link that lacks ns::missing.
  check_against_cxxfilt("linkscope-why", "use.o undef.o libdm.a", true);
  const command_result tsv = run("linkscope-why", "--demangle --why-extract=- use.o libdm.a");
  CHECK(tsv.out.find("use.o\tlibdm.a(dm_a.o)\tns::add(int, int)\n") != std::string::npos);
}

TEST_CASE("linkscope-implib --demangle: --symbols and --needs rows as c++filt prints them", "[cli][demangle]") {
  const auto& fx = fixture();
  if (!fx.ok || !fx.mingw) {
    WARN("mingw dlltool/gcc missing, or the fixture did not build");
    return;
  }
  check_against_cxxfilt("linkscope-implib", "--symbols libdm.dll.a");
  check_against_cxxfilt("linkscope-implib", "--needs --consumer consumer.o libdm.dll.a");
  const std::string out = run("linkscope-implib", "-C --symbols libdm.dll.a").out;
  CHECK(out.find("dm.dll\tns::add(int, int)\t") != std::string::npos);
  CHECK(out.find("dm.dll\tc_func\tc_func\t") != std::string::npos);
}

TEST_CASE("linkscope-ldd --demangle on a PE program: bindings and missing exports", "[cli][demangle]") {
  if (!have_tool("x86_64-w64-mingw32-gcc") || !have_tool("c++filt")) {
    WARN("x86_64-w64-mingw32-gcc or c++filt missing; skipped");
    return;
  }
  // app.exe imports ns::add(int, int) (by its Itanium name, through an asm
  // label: no mingw g++ needed) and c_func from dm.dll; dm2/dm.dll lacks ns::add.
  const std::string dir = scratch_dir("demangle_pe");
  write_file(dir + "/dll.c",
             "__declspec(dllexport) int add(int a, int b) __asm__(\"_ZN2ns3addEii\");\n"
             "int add(int a, int b) { return a + b; }\n"
             "__declspec(dllexport) int c_func(int x) { return x; }\n");
  write_file(dir + "/dll2.c", "__declspec(dllexport) int c_func(int x) { return x; }\n");
  write_file(dir + "/app.c",
             "__declspec(dllimport) int add(int a, int b) __asm__(\"_ZN2ns3addEii\");\n"
             "__declspec(dllimport) int c_func(int x);\n"
             "int main(void) { return add(1, 2) + c_func(0); }\n");
  REQUIRE(run_in(dir,
                 "x86_64-w64-mingw32-gcc -shared dll.c -o dm.dll -Wl,--out-implib,libdm.dll.a && "
                 "x86_64-w64-mingw32-gcc app.c -o app.exe -L. -ldm && mkdir -p dm2 && cp app.exe dm2/ && "
                 "x86_64-w64-mingw32-gcc -shared dll2.c -o dm2/dm.dll >build.log 2>&1") == 0);
  const auto ldd = [&](const std::string& args) {
    return capture(cat({"cd ", shell_quote(dir), " && ", shell_quote(tool_path("linkscope-ldd")), " ", args, " 2>/dev/null"}));
  };
  const command_result plain = ldd("--bindings app.exe");
  const command_result demangled = ldd("--demangle --bindings app.exe");
  REQUIRE(plain.out.find("\t_ZN2ns3addEii\t\n") != std::string::npos);
  CHECK(demangled.out == cxxfilt(plain.out));
  CHECK(demangled.out.find("\tns::add(int, int)\t\n") != std::string::npos);
  // "missing export: DLL.SYMBOL": c++filt reads "dm.dll._ZN..." as one token
  // (a '.' may be part of a symbol), so the symbol alone is c++filt's.
  std::string add = cxxfilt("_ZN2ns3addEii\n");
  REQUIRE(!add.empty());
  add.pop_back();  // the newline
  CHECK(ldd("-C --undefined dm2/app.exe").out == cat({"missing export: dm.dll.", add, "\t(dm2/app.exe)\n"}));
  CHECK(ldd("--undefined dm2/app.exe").out == "missing export: dm.dll._ZN2ns3addEii\t(dm2/app.exe)\n");
}

TEST_CASE("linkscope-ldd --demangle on a Mach-O program: as `c++filt -_` prints it", "[cli][demangle]") {
  if (!have_tool("clang-14") || !have_tool("ld64.lld-14") || !have_tool("c++filt")) {
    WARN("clang-14, ld64.lld-14 or c++filt missing; skipped");
    return;
  }
  // Mach-O names carry the C-level leading underscore (__ZN2ns3addEii): the
  // oracle is c++filt -_ (llvm-nm -C prints them so too).
  const std::string dir = scratch_dir("demangle_macho");
  write_file(dir + "/dm.cpp", "namespace ns { int add(int a, int b) { return a + b; } }\n"
                              "extern \"C\" int c_func(int x) { return x; }\n");
  write_file(dir + "/app.cpp", "namespace ns { int add(int, int); int missing(double); }\n"
                               "extern \"C\" int c_func(int);\n"
                               "int main() { return ns::add(1, 2) + c_func(0) + ns::missing(1.0); }\n");
  REQUIRE(run_in(dir,
                 "clang-14 -target x86_64-apple-macos11 -c dm.cpp -o dm.o && "
                 "clang-14 -target x86_64-apple-macos11 -c app.cpp -o app.o && "
                 "ld64.lld-14 -dylib -arch x86_64 -platform_version macos 11.0 11.0 -install_name @rpath/libdm.dylib "
                 "dm.o -o libdm.dylib && ld64.lld-14 -execute -arch x86_64 -platform_version macos 11.0 11.0 "
                 "-rpath @loader_path app.o libdm.dylib -o app -undefined dynamic_lookup >build.log 2>&1") == 0);
  for (const char* mode : {"--bindings", "--undefined"}) {
    INFO(mode);
    const std::string plain_cmd = cat({"cd ", shell_quote(dir), " && ", shell_quote(tool_path("linkscope-ldd")), " ", mode, " app 2>/dev/null"});
    const command_result plain = capture(plain_cmd);
    const command_result expected = capture(cat({plain_cmd, " | c++filt -_"}));
    const command_result demangled =
        capture(cat({"cd ", shell_quote(dir), " && ", shell_quote(tool_path("linkscope-ldd")), " --demangle ", mode, " app 2>/dev/null"}));
    REQUIRE(plain.out.find("__ZN2ns") != std::string::npos);
    CHECK(demangled.status == plain.status);
    CHECK(demangled.out == expected.out);
    CHECK(demangled.out.find("__ZN2ns") == std::string::npos);
  }
}

TEST_CASE("--demangle is listed in each CLI's --help", "[cli][demangle]") {
  for (const char* cli : {"linkscope-why", "linkscope-absorbed", "linkscope-dupes", "linkscope-ldd", "linkscope-implib"}) {
    INFO(cli);
    const std::string help = capture(cat({shell_quote(tool_path(cli)), " --help"})).out;
    CHECK(help.find("--demangle") != std::string::npos);
  }
}
