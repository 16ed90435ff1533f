// resolve/absorb.hpp and linkscope-absorbed: every verdict is checked against
// a real trial link of a consumer with and without the archive, and the
// re-exported case against `nm -D --defined-only`.
#include <linkscope/resolve/absorb.hpp>

#include <catch2/catch.hpp>

#include <string>

#include "support/fixtures.hpp"

using namespace linkscope;
namespace lt = linkscope_test;

namespace {

struct scenario {
  std::string dir;
  // Does `gcc main.o -L. -lS` link without the archive, and with it?
  bool links_without_archive = false;
  bool links_with_archive = false;
};

// Build libA.a from a.c (with `a_cflags`), libS.so from s.c (+ A when `absorb`),
// and main.o from main.c; then try both consumer links.
scenario build(const std::string& name, const std::string& a_c, const std::string& a_cflags, const std::string& s_c,
               bool absorb, const std::string& main_c, const std::string& s_ldflags = "") {
  scenario sc;
  sc.dir = lt::scratch_dir("absorb_" + name);
  lt::write_file(sc.dir + "/a.c", a_c);
  lt::write_file(sc.dir + "/s.c", s_c);
  lt::write_file(sc.dir + "/main.c", main_c);
  REQUIRE(lt::run_in(sc.dir, "gcc -c -fPIC " + a_cflags + " a.c -o a.o && ar rcs libA.a a.o") == 0);
  REQUIRE(lt::run_in(sc.dir, "gcc -c -fPIC s.c -o s.o && gcc -shared -o libS.so s.o " +
                                 std::string(absorb ? "-Wl,--whole-archive libA.a -Wl,--no-whole-archive " : "") +
                                 s_ldflags) == 0);
  REQUIRE(lt::run_in(sc.dir, "gcc -c main.c -o main.o") == 0);
  sc.links_without_archive = lt::run_in(sc.dir, "gcc main.o -L. -lS -Wl,-rpath,. -o without 2>/dev/null") == 0;
  sc.links_with_archive = lt::run_in(sc.dir, "gcc main.o -L. -lS libA.a -Wl,-rpath,. -o with 2>/dev/null") == 0;
  return sc;
}

bool nm_exports(const std::string& dir, const std::string& symbol) {
  auto r = lt::capture("cd " + lt::shell_quote(dir) + " && nm -D --defined-only libS.so");
  for (const auto& line : lt::lines(r.out))
    if (line.size() > symbol.size() && line.substr(line.size() - symbol.size()) == symbol &&
        line[line.size() - symbol.size() - 1] == ' ')
      return true;
  return false;
}

resolve::archive_report analyze(const scenario& sc, std::vector<std::string> consumers = {}) {
  resolve::absorb_options options;
  for (auto& c : consumers) c = sc.dir + "/" + c;
  options.consumers = consumers;
  auto report = resolve::analyze_absorption(sc.dir + "/libS.so", {sc.dir + "/libA.a"}, options);
  REQUIRE(report);
  REQUIRE(report->archives.size() == 1);
  return report->archives[0];
}

const char* kA = "int helper_add(int x) { return x + 41; }\nint helper_unused(void) { return 7; }\n";
const char* kS = "int helper_add(int);\nint s_api(int x) { return helper_add(x) * 2; }\n";
const char* kMain = "int s_api(int);\nint main(void) { return s_api(1) == 84 ? 0 : 1; }\n";

}  // namespace

TEST_CASE("(a) hidden archive absorbed into S: not needed", "[absorb]") {
  auto sc = build("hidden", kA, "-fvisibility=hidden", kS, true, kMain);
  REQUIRE(sc.links_without_archive);  // the real answer: consumers do not need A
  CHECK_FALSE(nm_exports(sc.dir, "helper_add"));
  auto a = analyze(sc);
  CHECK(a.verdict == resolve::archive_verdict::not_needed);
  REQUIRE(a.members.size() == 1);
  CHECK(a.members[0].status == resolve::member_status::hidden);
  CHECK(std::find(a.evidence.begin(), a.evidence.end(), "helper_add") != a.evidence.end());

  // Stripped S: the hidden copy leaves no trace, but the answer stays "not needed".
  REQUIRE(lt::run_in(sc.dir, "strip -o libS.stripped.so libS.so") == 0);
  auto stripped = resolve::analyze_absorption(sc.dir + "/libS.stripped.so", {sc.dir + "/libA.a"});
  REQUIRE(stripped);
  CHECK_FALSE(stripped->shared_has_symtab);
  CHECK(stripped->archives[0].verdict != resolve::archive_verdict::needed);
}

TEST_CASE("(b) default visibility: re-exported", "[absorb]") {
  auto sc = build("default", kA, "", kS, true, kMain);
  REQUIRE(sc.links_without_archive);
  REQUIRE(nm_exports(sc.dir, "helper_add"));  // nm says S exports the archive's symbol
  auto a = analyze(sc);
  CHECK(a.verdict == resolve::archive_verdict::re_exported);
  REQUIRE(a.members.size() == 1);
  CHECK(a.members[0].status == resolve::member_status::re_exported);
}

TEST_CASE("(c) S leaves a symbol undefined that only A defines: needed", "[absorb]") {
  // S is linked without A (shared libraries may have undefined symbols).
  auto sc = build("undefined", kA, "", kS, false, kMain);
  CHECK_FALSE(sc.links_without_archive);  // ld: libS.so: undefined reference to `helper_add'
  CHECK(sc.links_with_archive);
  auto a = analyze(sc);
  CHECK(a.verdict == resolve::archive_verdict::needed);
  REQUIRE(a.members.size() == 1);
  CHECK(a.members[0].status == resolve::member_status::required);
  CHECK(a.members[0].symbols == std::vector<std::string>{"helper_add"});
}

TEST_CASE("(d) an inline function of S's header calls into A: needed for that consumer", "[absorb]") {
  // main.c plays the consumer that inlined S's header: it calls helper_add itself.
  const char* main_inline =
      "int s_api(int);\nint helper_add(int);\n"
      "static inline int s_inline(int x) { return helper_add(x); }\n"
      "int main(void) { return s_api(1) + s_inline(1) == 126 ? 0 : 1; }\n";
  auto sc = build("inline", kA, "-fvisibility=hidden", kS, true, main_inline);
  CHECK_FALSE(sc.links_without_archive);
  CHECK(sc.links_with_archive);
  // Without the consumer, S alone does not need A ...
  CHECK(analyze(sc).verdict == resolve::archive_verdict::not_needed);
  // ... but this consumer does.
  auto a = analyze(sc, {"main.o"});
  CHECK(a.verdict == resolve::archive_verdict::needed);
  REQUIRE(a.members.size() == 1);
  CHECK(a.members[0].symbols == std::vector<std::string>{"helper_add"});
}

TEST_CASE("an archive that S never touched is unrelated", "[absorb]") {
  auto sc = build("unrelated", "int other_thing(void) { return 3; }\n", "", "int s_api(int x) { return x * 84; }\n", false,
                  kMain);
  REQUIRE(sc.links_without_archive);
  CHECK(analyze(sc).verdict == resolve::archive_verdict::unrelated);
}

TEST_CASE("linkscope-absorbed prints verdicts, JSON and exit codes", "[absorb][cli]") {
  auto hidden = build("cli_hidden", kA, "-fvisibility=hidden", kS, true, kMain);
  auto needed = build("cli_needed", kA, "", kS, false, kMain);
  const std::string tool = lt::tool_path("linkscope-absorbed");
  auto ok = lt::capture(tool + " " + hidden.dir + "/libS.so " + hidden.dir + "/libA.a");
  CHECK(ok.status == 0);
  CHECK(ok.out.find("libA.a: not-needed") != std::string::npos);
  auto finding = lt::capture(tool + " --json " + needed.dir + "/libS.so " + needed.dir + "/libA.a");
  CHECK(finding.status == 1);
  CHECK(finding.out.find("\"version\":1") != std::string::npos);
  CHECK(finding.out.find("\"verdict\":\"needed\"") != std::string::npos);
  CHECK(finding.out.find("\"status\":\"required\"") != std::string::npos);
  // --cmake-libs with a prefix: A found as lib/libA.a, kineto not found.
  REQUIRE(lt::run_in(needed.dir, "mkdir -p prefix/lib && cp libA.a prefix/lib/") == 0);
  auto cmake = lt::capture(tool + " --json --allow-unevaluated --cmake-libs 'A;kineto;fmt::fmt-header-only' --prefix " +
                           needed.dir + "/prefix " + needed.dir + "/libS.so");
  CHECK(cmake.status == 1);
  // S leaves helper_add undefined, so a missing kineto cannot be declared harmless.
  CHECK(cmake.out.find("{\"name\":\"kineto\",\"verdict\":\"unknown\",\"status\":\"not-found\"}") != std::string::npos);
  auto cmake_ok = lt::capture(tool + " --json --cmake-libs 'kineto' --prefix " + needed.dir + "/prefix " + hidden.dir +
                              "/libS.so");
  CHECK(cmake_ok.status == 0);
  CHECK(cmake_ok.out.find("{\"name\":\"kineto\",\"verdict\":\"not-needed\",\"status\":\"not-found\"}") !=
        std::string::npos);
  CHECK(cmake.out.find("\"status\":\"cmake-target\"") != std::string::npos);
  // A target only CMake can evaluate is never a silent verdict: exit 2 unless
  // --allow-unevaluated, with the report still written.
  auto refused = lt::capture(tool + " --cmake-libs 'A;fmt::fmt-header-only' --prefix " + needed.dir + "/prefix " +
                             needed.dir + "/libS.so 2>&1");
  CHECK(refused.status == 2);
  CHECK(refused.out.find("fmt::fmt-header-only: a CMake target: only CMake can evaluate it (not evaluated)") !=
        std::string::npos);
  CHECK(refused.out.find("linkscope-absorbed: 1 --cmake-libs entry can be evaluated only by CMake") != std::string::npos);
  // Every other kind of entry a CMake config lists is evaluated (each failed
  // before: reported as "not found under PREFIX: not-needed", exit 0). The
  // archive's verdict is the same whichever way it is named, and the same as
  // naming the archive itself (checked against trial links above).
  const std::string libA = needed.dir + "/prefix/lib/libA.a";
  const std::string libz = lt::capture("gcc -print-file-name=libz.so").out;
  const std::string libz_path = libz.substr(0, libz.find('\n'));
  auto entries = lt::capture(tool + " --json --cmake-libs '" + libA + ";$<LINK_ONLY:A>;-lA;-Wl,--as-needed;-pthread;" +
                             libz_path + ";debug;A_d;$<$<CONFIG:Debug>:A>' --allow-unevaluated --prefix " + needed.dir +
                             "/prefix " + needed.dir + "/libS.so");
  CHECK(entries.status == 1);
  CHECK(entries.out.find("{\"name\":\"" + libA + "\",\"path\":\"" + libA + "\",\"status\":\"needed\"}") !=
        std::string::npos);
  CHECK(entries.out.find("{\"name\":\"$<LINK_ONLY:A>\",\"path\":\"" + libA + "\",\"status\":\"needed\"}") !=
        std::string::npos);
  CHECK(entries.out.find("{\"name\":\"-lA\",\"path\":\"" + libA + "\",\"status\":\"needed\"}") != std::string::npos);
  CHECK(entries.out.find("{\"name\":\"-Wl,--as-needed\",\"status\":\"flag\"}") != std::string::npos);
  CHECK(entries.out.find("{\"name\":\"-pthread\",\"status\":\"flag\"}") != std::string::npos);
  if (libz_path.find('/') != std::string::npos)
    CHECK(entries.out.find("{\"name\":\"" + libz_path + "\",\"path\":\"" + libz_path + "\",\"status\":\"shared\"}") !=
          std::string::npos);
  CHECK(entries.out.find("{\"name\":\"A_d\",\"status\":\"debug-only\"}") != std::string::npos);
  CHECK(entries.out.find("{\"name\":\"$<$<CONFIG:Debug>:A>\",\"status\":\"generator-expression\"}") !=
        std::string::npos);
  auto bad = lt::capture(tool + " " + hidden.dir + "/main.c " + hidden.dir + "/libA.a 2>&1");
  CHECK(bad.status == 2);
  CHECK(bad.out.find("linkscope-absorbed: ") == 0);
  CHECK(lt::capture(tool + " --bogus 2>&1").status == 2);
  // S alone, no archive: a usage error (exit 2), not a clean exit 0.
  auto none = lt::capture(tool + " " + hidden.dir + "/libS.so 2>&1");
  CHECK(none.status == 2);
  CHECK(none.out.find("linkscope-absorbed: ") == 0);
}

namespace {

// An installed CMake package Foo under DIR/pkg: lib/libS.so and lib/libA.a
// from the scenario, and lib/cmake/Foo/FooConfig.cmake defining the imported
// target Foo::S, whose link interface lists libA.a (when `with_archive`) and m.
void install_cmake_package(const scenario& sc, const std::string& prefix, bool with_archive) {
  REQUIRE(lt::run_in(sc.dir, "rm -rf " + lt::shell_quote(prefix) + " && mkdir -p " + lt::shell_quote(prefix) +
                                 "/lib/cmake/Foo && cp libS.so libA.a " + lt::shell_quote(prefix) + "/lib/") == 0);
  lt::write_file(prefix + "/lib/cmake/Foo/FooConfig.cmake",
                 "get_filename_component(_foo_lib \"${CMAKE_CURRENT_LIST_DIR}/../..\" ABSOLUTE)\n"
                 "add_library(Foo::S SHARED IMPORTED)\n"
                 "set_target_properties(Foo::S PROPERTIES IMPORTED_LOCATION \"${_foo_lib}/libS.so\"\n"
                 "  INTERFACE_LINK_LIBRARIES \"" +
                     std::string(with_archive ? "${_foo_lib}/libA.a;" : "") + "m\")\n");
}

// The oracle: a consumer that CMake builds with find_package(Foo).
bool cmake_consumer_links(const scenario& sc, const std::string& prefix) {
  const std::string app = sc.dir + "/app";
  REQUIRE(lt::run_in(sc.dir, "rm -rf app && mkdir -p app && cp main.c app/") == 0);
  lt::write_file(app + "/CMakeLists.txt",
                 "cmake_minimum_required(VERSION 3.21)\nproject(app C)\nfind_package(Foo REQUIRED)\n"
                 "add_executable(app main.c)\ntarget_link_libraries(app PRIVATE Foo::S)\n");
  return lt::run_in(app, "cmake -S . -B build -DCMAKE_PREFIX_PATH=" + lt::shell_quote(prefix) +
                             " >/dev/null 2>&1 && cmake --build build >/dev/null 2>&1") == 0;
}

}  // namespace

TEST_CASE("linkscope-absorbed --cmake-package: CMake's own link interface, judged as a trial link says", "[absorb][cli]") {
  if (!lt::have_tool("cmake")) {
    WARN("cmake missing: skipped");
    return;
  }
  const std::string tool = lt::tool_path("linkscope-absorbed");
  struct expectation {
    const char* name;
    scenario sc;
    const char* verdict;
  };
  // hidden: S absorbed A with hidden visibility (consumers do not need it);
  // needed: S leaves helper_add undefined and only A defines it.
  expectation cases[] = {{"pkg_hidden", build("pkg_hidden", kA, "-fvisibility=hidden", kS, true, kMain), "not-needed"},
                         {"pkg_needed", build("pkg_needed", kA, "", kS, false, kMain), "needed"}};
  for (auto& c : cases) {
    INFO(c.name);
    const std::string prefix = c.sc.dir + "/pkg";
    // The trial links: the consumer without libA.a in the interface links
    // exactly when the verdict is not-needed; with it, it always links.
    install_cmake_package(c.sc, prefix, false);
    const bool links_without = cmake_consumer_links(c.sc, prefix);
    install_cmake_package(c.sc, prefix, true);
    REQUIRE(cmake_consumer_links(c.sc, prefix));
    CHECK(links_without == (std::string(c.verdict) == "not-needed"));
    auto r = lt::capture(tool + " --json --cmake-package Foo --prefix " + lt::shell_quote(prefix) + " " +
                         lt::shell_quote(prefix + "/lib/libS.so"));
    INFO(r.out);
    CHECK(r.status == (links_without ? 0 : 1));
    CHECK(r.out.find("{\"name\":\"" + prefix + "/lib/libA.a\",\"path\":\"" + prefix + "/lib/libA.a\",\"status\":\"" +
                     c.verdict + "\"}") != std::string::npos);
    CHECK(r.out.find("{\"name\":\"" + prefix + "/lib/libS.so\",\"path\":\"" + prefix + "/lib/libS.so\",\"status\":\"shared\"}") !=
          std::string::npos);
    CHECK(r.out.find("{\"name\":\"-lm\",\"path\":") != std::string::npos);
  }
  // A package CMake cannot find: exit 2 with CMake's own words.
  auto missing = lt::capture(tool + " --cmake-package NoSuchPackageHere " + cases[0].sc.dir + "/libS.so 2>&1");
  CHECK(missing.status == 2);
  CHECK(missing.out.find("linkscope-absorbed: --cmake-package NoSuchPackageHere: CMake could not evaluate it") == 0);
  CHECK(missing.out.find("NoSuchPackageHereConfig.cmake") != std::string::npos);
  auto both = lt::capture(tool + " --cmake-package Foo --cmake-libs m --prefix /usr " + cases[0].sc.dir + "/libS.so 2>&1");
  CHECK(both.status == 2);
}

namespace {

// Package Bar under DIR/pkg: lib/libT.so (DT_NEEDED libdep.so.1, which it
// calls) is the imported target Bar::T, whose IMPORTED_LINK_DEPENDENT_LIBRARIES
// are `deps`; libdep.so.1 is the target Bar::dep, installed in lib/private/
// (not a folder the linker searches) and, when `beside`, in lib/ as well.
void install_dependent_package(const std::string& dir, const std::string& deps, bool beside) {
  const std::string prefix = dir + "/pkg";
  REQUIRE(lt::run_in(dir, "rm -rf pkg && mkdir -p pkg/lib/private pkg/lib/cmake/Bar && cp libT.so pkg/lib/ && "
                          "cp libdep.so.1 pkg/lib/private/" + std::string(beside ? " && cp libdep.so.1 pkg/lib/" : "")) == 0);
  lt::write_file(prefix + "/lib/cmake/Bar/BarConfig.cmake",
                 "get_filename_component(_bar_lib \"${CMAKE_CURRENT_LIST_DIR}/../..\" ABSOLUTE)\n"
                 "add_library(Bar::dep SHARED IMPORTED)\n"
                 "set_target_properties(Bar::dep PROPERTIES IMPORTED_LOCATION \"${_bar_lib}/private/libdep.so.1\"\n"
                 "  IMPORTED_SONAME libdep.so.1)\n"
                 "add_library(Bar::T SHARED IMPORTED)\n"
                 "set_target_properties(Bar::T PROPERTIES IMPORTED_LOCATION \"${_bar_lib}/libT.so\"\n"
                 "  IMPORTED_LINK_DEPENDENT_LIBRARIES \"" + deps + "\")\n");
}

// The oracle: a consumer of Bar::T that CMake builds.
bool bar_consumer_links(const std::string& dir) {
  lt::write_file(dir + "/app/CMakeLists.txt",
                 "cmake_minimum_required(VERSION 3.21)\nproject(app C)\nfind_package(Bar REQUIRED)\n"
                 "add_executable(app main.c)\ntarget_link_libraries(app PRIVATE Bar::T)\n");
  lt::write_file(dir + "/app/main.c", "int t_fn(void);\nint main(void) { return t_fn(); }\n");
  return lt::run_in(dir + "/app", "rm -rf build && cmake -S . -B build -DCMAKE_PREFIX_PATH=" +
                                      lt::shell_quote(dir + "/pkg") +
                                      " >/dev/null 2>&1 && cmake --build build >build.log 2>&1") == 0;
}

}  // namespace

TEST_CASE("linkscope-absorbed --cmake-package: IMPORTED_LINK_DEPENDENT_LIBRARIES, each judged as a trial link without it says",
          "[absorb][cli]") {
  if (!lt::have_tool("cmake")) {
    WARN("cmake missing: skipped");
    return;
  }
  const std::string tool = lt::tool_path("linkscope-absorbed");
  const std::string dir = lt::scratch_dir("absorb_link_dependent");
  lt::write_file(dir + "/dep.c", "int dep_fn(void) { return 0; }\n");
  lt::write_file(dir + "/t.c", "int dep_fn(void);\nint t_fn(void) { return dep_fn(); }\n");
  REQUIRE(lt::run_in(dir, "cc -shared -fPIC -Wl,-soname,libdep.so.1 dep.c -o libdep.so.1 && "
                          "cc -shared -fPIC t.c ./libdep.so.1 -o libT.so && mkdir -p app") == 0);
  REQUIRE(lt::capture("readelf -d " + lt::shell_quote(dir + "/libT.so")).out.find("[libdep.so.1]") != std::string::npos);
  struct trial {
    bool beside;           // libdep.so.1 also beside libT.so
    const char* entry;     // the entry judged
    const char* verdict;   // ours
    const char* found_by;  // ours, or "" when there is no soname
  };
  const trial trials[] = {
      {false, "Bar::dep", "needed", "rpath-link"},  // only the target's -rpath-link finds libdep.so.1
      {false, "absent", "not-needed", ""},          // no DT_NEEDED entry of libT.so
      {true, "Bar::dep", "not-needed", "search"},   // beside libT.so: CMake's -rpath to lib/ finds it
  };
  const std::string libT = dir + "/pkg/lib/libT.so";
  for (const trial& t : trials) {
    INFO(std::string(t.entry) + (t.beside ? ", libdep.so.1 beside libT.so" : ", libdep.so.1 in lib/private only"));
    // The package as shipped links; without the entry it links exactly when
    // the entry is not needed.
    install_dependent_package(dir, "Bar::dep;absent", t.beside);
    REQUIRE(bar_consumer_links(dir));
    auto r = lt::capture(tool + " --json --cmake-package Bar --prefix " + lt::shell_quote(dir + "/pkg") + " " +
                         lt::shell_quote(libT));
    install_dependent_package(dir, std::string(t.entry) == "absent" ? "Bar::dep" : "absent", t.beside);
    const bool links_without = bar_consumer_links(dir);
    if (!links_without)
      CHECK(lt::read_file(dir + "/app/build.log").find("libdep.so.1, needed by " + libT + ", not found") !=
            std::string::npos);
    CHECK(links_without == (std::string(t.verdict) == "not-needed"));
    INFO(r.out);
    std::string row = "{\"name\":\"" + std::string(t.entry) + "\",";
    if (*t.found_by != 0)
      row += "\"path\":\"" + dir + (std::string(t.found_by) == "search" ? "/pkg/lib/libdep.so.1" : "/pkg/lib/private/libdep.so.1") +
             "\",";
    row += "\"dependent_of\":\"" + libT + "\",";
    if (*t.found_by != 0) row += "\"soname\":\"libdep.so.1\",\"found_by\":\"" + std::string(t.found_by) + "\",";
    row += "\"verdict\":\"" + std::string(t.verdict) + "\",\"status\":\"link-dependent\"}";
    CHECK(r.out.find(row) != std::string::npos);
    // A needed dependent library is a finding (exit 1).
    CHECK(r.status == (t.beside ? 0 : 1));
  }
}

// ---------------------------------------------------------------------------
// Mach-O: S is a dylib linked by ld64.lld-14 (-force_load A.a is its
// --whole-archive), for x86_64 and arm64. The oracles are the consumer's
// trial link with and without A.a, llvm-nm-14 -m (what S's nlist calls each
// symbol) and llvm-objdump-14 (S's export trie and its flat-namespace binds).
namespace {

// S judged against one archive A, both in `dir`, with `consumers` (also in `dir`).
resolve::absorb_report judge_in(const std::string& dir, const std::string& s, const std::string& a,
                                std::vector<std::string> consumers, const char* format) {
  resolve::absorb_options options;
  for (auto& c : consumers) c = dir + "/" + c;
  options.consumers = consumers;
  auto report = resolve::analyze_absorption(dir + "/" + s, {dir + "/" + a}, options);
  REQUIRE(report);
  CHECK(report->format == format);
  REQUIRE(report->archives.size() == 1);
  return *report;
}

struct macho_case {
  std::string dir, link;
  std::string arch;
  bool links(const std::string& out, const std::string& inputs) const {
    return lt::run_in(dir, link + " -execute " + inputs + " -o " + out + " >" + out + ".log 2>&1") == 0;
  }
  std::string tool(const std::string& command) const { return lt::capture("cd " + lt::shell_quote(dir) + " && " + command).out; }
  resolve::archive_report judge(const std::string& s, const std::string& a, std::vector<std::string> consumers = {}) const {
    auto report = judge_in(dir, s, a, std::move(consumers), "macho");
    CHECK(report.arch == arch);
    return report.archives[0];
  }
};

macho_case build_macho(const std::string& arch) {
  macho_case c;
  c.arch = arch;
  c.dir = lt::scratch_dir("absorb_macho_" + arch);
  c.link = "ld64.lld-14 -arch " + arch + " -platform_version macos 11.0 11.0 -L. -lSystem";
  lt::write_file(c.dir + "/libSystem.tbd",
                 "--- !tapi-tbd\ntbd-version: 4\ntargets: [ x86_64-macos, arm64-macos ]\n"
                 "install-name: '/usr/lib/libSystem.B.dylib'\nexports:\n"
                 "  - targets: [ x86_64-macos, arm64-macos ]\n    symbols: [ dyld_stub_binder ]\n...\n");
  lt::write_file(c.dir + "/a.c", kA);
  lt::write_file(c.dir + "/s.c", kS);
  lt::write_file(c.dir + "/main.c", kMain);
  lt::write_file(c.dir + "/main2.c",
                 "int s_api(int);\nint helper_add(int);\n"
                 "int main(void) { return s_api(1) + helper_add(1) == 126 ? 0 : 1; }\n");
  lt::write_file(c.dir + "/other.c", "int other_thing(void) { return 3; }\n");
  const std::string cc = "clang-14 -target " + arch + "-apple-macos11 -c ";
  REQUIRE(lt::run_in(c.dir, cc + "a.c -o a.o && " + cc + "-fvisibility=hidden a.c -o ah.o && " + cc + "s.c -o s.o && " + cc +
                                "main.c -o main.o && " + cc + "main2.c -o main2.o && " + cc + "other.c -o other.o") == 0);
  REQUIRE(lt::run_in(c.dir, "llvm-ar-14 rcs --format=darwin libA.a a.o && llvm-ar-14 rcs --format=darwin libAh.a ah.o && "
                            "llvm-ar-14 rcs --format=darwin libO.a other.o") == 0);
  const std::string dylib = c.link + " -dylib s.o ";
  REQUIRE(lt::run_in(c.dir, dylib + "-force_load libAh.a -install_name @rpath/libSh.dylib -o libSh.dylib") == 0);
  REQUIRE(lt::run_in(c.dir, dylib + "-force_load libA.a -exported_symbol _s_api -install_name @rpath/libSx.dylib -o libSx.dylib") == 0);
  REQUIRE(lt::run_in(c.dir, dylib + "-force_load libA.a -install_name @rpath/libSd.dylib -o libSd.dylib") == 0);
  REQUIRE(lt::run_in(c.dir, dylib + "-undefined dynamic_lookup -install_name @rpath/libSu.dylib -o libSu.dylib") == 0);
  return c;
}

}  // namespace

TEST_CASE("Mach-O: each verdict agrees with ld64.lld-14 trial links and llvm-nm/llvm-objdump", "[absorb][macho]") {
  if (!lt::have_tool("clang-14") || !lt::have_tool("ld64.lld-14") || !lt::have_tool("llvm-nm-14") ||
      !lt::have_tool("llvm-objdump-14")) {
    WARN("clang-14 / ld64.lld-14 / llvm-nm-14 not installed: test skipped");
    return;
  }
  std::vector<std::string> dirs;  // x86_64's, then arm64's
  for (const char* arch : {"x86_64", "arm64"}) {
    INFO(arch);
    const macho_case c = build_macho(arch);
    dirs.push_back(c.dir);
    // hidden: -fvisibility=hidden, and -exported_symbol leaving A's globals out
    for (const std::string s : {"libSh.dylib", "libSx.dylib"}) {
      INFO(s);
      CHECK(c.links("without_" + s, "main.o " + s));
      const std::string nm = c.tool("llvm-nm-14 -m " + s);
      REQUIRE(nm.find("non-external (was a private external) _helper_add") != std::string::npos);
      CHECK(c.tool("llvm-objdump-14 --macho --exports-trie " + s).find("_helper_add") == std::string::npos);
      auto a = c.judge(s, s == "libSh.dylib" ? "libAh.a" : "libA.a");
      CHECK(a.verdict == resolve::archive_verdict::not_needed);
      REQUIRE(a.members.size() == 1);
      CHECK(a.members[0].status == resolve::member_status::hidden);
      CHECK(a.members[0].symbols == std::vector<std::string>{"_helper_add", "_helper_unused"});
    }
    // re-exported: S's trie exports A's definitions
    {
      REQUIRE(c.tool("llvm-objdump-14 --macho --exports-trie libSd.dylib").find("_helper_add") != std::string::npos);
      CHECK(c.links("without_d", "main.o libSd.dylib"));
      auto a = c.judge("libSd.dylib", "libA.a");
      CHECK(a.verdict == resolve::archive_verdict::re_exported);
      REQUIRE(a.members.size() == 1);
      CHECK(a.members[0].status == resolve::member_status::re_exported);
    }
    // needed: S left _helper_add to the flat namespace (-undefined dynamic_lookup);
    // ld64 does not check a dylib's undefined symbols, so no consumer link fails:
    // dyld fails at load time ("Symbol not found: _helper_add ... flat namespace").
    {
      REQUIRE(c.tool("llvm-objdump-14 --macho --lazy-bind libSu.dylib").find("flat-namespace   _helper_add") !=
              std::string::npos);
      // dyld's emulation claims no binding for it: only the unread libSystem
      // could hold it, and a flat lookup stopping there proves nothing.
      auto link = resolve::link_dyld(c.dir + "/libSu.dylib", {});
      REQUIRE(link);
      for (const auto& b : link->bindings) CHECK(b.symbol != "_helper_add");
      CHECK(link->unchecked >= 1);
      auto a = c.judge("libSu.dylib", "libA.a");
      CHECK(a.verdict == resolve::archive_verdict::needed);
      REQUIRE(a.members.size() == 1);
      CHECK(a.members[0].symbols == std::vector<std::string>{"_helper_add"});
    }
    // needed by a consumer that calls into A itself: the link without A fails
    // with exactly that symbol, and links with A.
    {
      CHECK_FALSE(c.links("without2", "main2.o libSh.dylib"));
      CHECK(lt::read_file(c.dir + "/without2.log").find("undefined symbol: _helper_add") != std::string::npos);
      CHECK(c.links("with2", "main2.o libSh.dylib libAh.a"));
      CHECK(c.judge("libSh.dylib", "libAh.a").verdict == resolve::archive_verdict::not_needed);
      auto a = c.judge("libSh.dylib", "libAh.a", {"main2.o"});
      CHECK(a.verdict == resolve::archive_verdict::needed);
      CHECK(a.evidence == std::vector<std::string>{"_helper_add"});
    }
    // unrelated
    CHECK(c.judge("libSd.dylib", "libO.a").verdict == resolve::archive_verdict::unrelated);
  }
  // A universal S and archive: --arch picks the slice of both.
  const std::string& x = dirs[0];
  const std::string& arm = dirs[1];
  const std::string fat = lt::scratch_dir("absorb_macho_fat");
  REQUIRE(lt::run_in(fat, "llvm-lipo-14 -create " + x + "/libSd.dylib " + arm + "/libSd.dylib -output libSd.dylib && " +
                              "llvm-lipo-14 -create " + x + "/libA.a " + arm + "/libA.a -output libA.a") == 0);
  for (const char* arch : {"x86_64", "arm64"}) {
    resolve::absorb_options options;
    options.arch = arch;
    auto report = resolve::analyze_absorption(fat + "/libSd.dylib", {fat + "/libA.a"}, options);
    REQUIRE(report);
    CHECK(report->arch == arch);
    CHECK(report->archives[0].verdict == resolve::archive_verdict::re_exported);
  }
  resolve::absorb_options wrong;
  wrong.arch = "i386";
  auto refused = resolve::analyze_absorption(fat + "/libSd.dylib", {fat + "/libA.a"}, wrong);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().file == fat + "/libSd.dylib");
}

// ---------------------------------------------------------------------------
// PE: S is a DLL linked by x86_64-w64-mingw32-gcc. Exports are explicit, so a
// definition left out of the .def is hidden. The oracles: the consumer's
// trial link with and without A, and objdump -p's export table.
TEST_CASE("PE: each verdict agrees with mingw trial links and objdump -p", "[absorb][pe]") {
  if (!lt::have_tool("x86_64-w64-mingw32-gcc") || !lt::have_tool("x86_64-w64-mingw32-objdump")) {
    WARN("mingw-w64 not installed: test skipped");
    return;
  }
  const std::string dir = lt::scratch_dir("absorb_pe");
  lt::write_file(dir + "/a.c", kA);
  lt::write_file(dir + "/s.c", kS);
  lt::write_file(dir + "/main.c", kMain);
  lt::write_file(dir + "/main2.c",
                 "int s_api(int);\nint helper_add(int);\n"
                 "int main(void) { return s_api(1) + helper_add(1) == 126 ? 0 : 1; }\n");
  lt::write_file(dir + "/s.def", "EXPORTS\ns_api\n");
  const std::string cc = "x86_64-w64-mingw32-gcc";
  REQUIRE(lt::run_in(dir, cc + " -c a.c -o a.o && x86_64-w64-mingw32-ar rcs libA.a a.o && " + cc + " -c s.c -o s.o && " + cc +
                              " -c main2.c -o main2.o") == 0);
  REQUIRE(lt::run_in(dir, cc + " -shared -o S.dll s.o libA.a s.def -Wl,--out-implib,libS.dll.a") == 0);
  REQUIRE(lt::run_in(dir, cc + " -shared -o Sd.dll s.o -Wl,--whole-archive libA.a -Wl,--no-whole-archive "
                               "-Wl,--export-all-symbols -Wl,--out-implib,libSd.dll.a") == 0);
  REQUIRE(lt::run_in(dir, "x86_64-w64-mingw32-strip -o Ss.dll S.dll") == 0);
  auto exports_of = [&](const std::string& dll) {
    return lt::capture("x86_64-w64-mingw32-objdump -p " + lt::shell_quote(dir + "/" + dll)).out;
  };
  auto judge = [&](const std::string& s, const std::string& a, std::vector<std::string> consumers = {}) {
    return judge_in(dir, s, a, std::move(consumers), "pe");
  };
  // hidden: the .def exports s_api only; the consumer links without A
  CHECK(exports_of("S.dll").find("] helper_add") == std::string::npos);
  CHECK(lt::run_in(dir, cc + " main.c -L. -lS -o m.exe") == 0);
  auto hidden = judge("S.dll", "libA.a");
  CHECK(hidden.shared_has_symtab);
  CHECK(hidden.archives[0].verdict == resolve::archive_verdict::not_needed);
  REQUIRE(hidden.archives[0].members.size() == 1);
  CHECK(hidden.archives[0].members[0].status == resolve::member_status::hidden);
  // re-exported: --export-all-symbols puts helper_add in the export table
  CHECK(exports_of("Sd.dll").find("] helper_add") != std::string::npos);
  CHECK(lt::run_in(dir, cc + " main.c -L. -lSd -o md.exe") == 0);
  CHECK(judge("Sd.dll", "libA.a").archives[0].verdict == resolve::archive_verdict::re_exported);
  // needed by a consumer that calls helper_add: it fails without A, with that symbol
  const auto without = lt::capture("cd " + lt::shell_quote(dir) + " && " + cc + " main2.o -L. -lS -o m2.exe 2>&1");
  CHECK(without.status != 0);
  CHECK(without.out.find("undefined reference to `helper_add'") != std::string::npos);
  CHECK(lt::run_in(dir, cc + " main2.o -L. -lS libA.a -o m3.exe") == 0);
  auto needed = judge("S.dll", "libA.a", {"main2.o"});
  CHECK(needed.archives[0].verdict == resolve::archive_verdict::needed);
  CHECK(needed.archives[0].evidence == std::vector<std::string>{"helper_add"});
  // stripped: no COFF symbol table, so the hidden copy leaves no trace
  auto stripped = judge("Ss.dll", "libA.a");
  CHECK_FALSE(stripped.shared_has_symtab);
  CHECK(stripped.archives[0].verdict == resolve::archive_verdict::unrelated);
  // the import library is how S is linked, not a copy of it: every member skipped
  auto implib = judge("S.dll", "libS.dll.a");
  CHECK(implib.archives[0].verdict == resolve::archive_verdict::unrelated);
  CHECK(implib.archives[0].members.empty());
  CHECK_FALSE(implib.archives[0].skipped.empty());
}
