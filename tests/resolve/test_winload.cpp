// Tests of linkscope/resolve/pe_load.hpp (the Windows loader) on mingw-built
// programs and DLLs, with wine64 (Debian) as the oracle: with
// WINEDEBUG=+loaddll,warn+module it prints `Loaded L"Z:\...\foo.dll" ...:
// native` per DLL it loads from a file, `Library X (which is needed by ...)
// not found` for a missing DLL, and `No implementation for foo.dll.delta
// imported from ...` for a missing export. Wine's own PE DLLs
// (/usr/lib/x86_64-linux-gnu/wine/x86_64-windows) serve as System32.
// One wineprefix per run of this program (wineboot takes 20-60 s the first
// time), every wine run under `timeout`.
#include <linkscope/resolve/pe_load.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <initializer_list>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "support/fixtures.hpp"

using namespace linkscope_test;
using namespace linkscope::resolve;

namespace {

const std::string wine_root = "/usr/lib/x86_64-linux-gnu/wine/x86_64-windows";

struct fixture {
  std::string dir;
  bool ok = false;
  bool delay = false;  // app/delay.exe (lld-link)
};

// app/app.exe imports foo.dll (app/) by name, by ordinal (#9), data
// (foo_data), a missing export (delta), a forwarder to bar.bar_fn and a
// forwarder to bar.nothing (missing); bar.dll lives in pathdir/ only.
// app/ghost.exe imports ghost.dll, which exists nowhere. py/ext.pyd imports
// bar.dll (PATH only). app/sets.exe imports two API sets and an ext-ms set.
const fixture& build() {
  static const fixture f = [] {
    fixture x;
    x.dir = scratch_dir("winload");
    const std::string d = x.dir;
    std::filesystem::create_directories(d + "/app");
    std::filesystem::create_directories(d + "/pathdir");
    std::filesystem::create_directories(d + "/py");
    write_file(d + "/bar.c", "int bar_fn(int x){return x*2;}\n");
    write_file(d + "/bar.def", "LIBRARY bar.dll\nEXPORTS\n  bar_fn\n");
    write_file(d + "/foo.c",
               "int alpha(int x){return x+1;}\nint gamma_(int x){return x+3;}\nint foo_data = 42;\n");
    write_file(d + "/foo.def",
               "LIBRARY foo.dll\nEXPORTS\n  alpha\n  gamma_ @9 NONAME\n  foo_data DATA\n"
               "  chain = bar.bar_fn\n  deadfwd = bar.nothing\n");
    // What app.exe is linked against: foo as it was promised (with delta).
    write_file(d + "/foo_promised.def",
               "LIBRARY foo.dll\nEXPORTS\n  alpha\n  gamma_ @9 NONAME\n  foo_data DATA\n  chain\n  deadfwd\n  delta\n");
    write_file(d + "/app.c",
               "extern int alpha(int); extern int gamma_(int); extern __declspec(dllimport) int foo_data;\n"
               "extern int chain(int); extern int deadfwd(int); extern int delta(int);\n"
               "int main(int argc, char** argv){ (void)argv; if (argc > 5) return delta(1) + deadfwd(2);\n"
               "  return alpha(1)+gamma_(2)+foo_data+chain(3) > 0 ? 0 : 1; }\n");
    write_file(d + "/ghost.def", "LIBRARY ghost.dll\nEXPORTS\n  boo\n");
    write_file(d + "/ghost.c", "extern int boo(void);\nint main(void){ return boo(); }\n");
    write_file(d + "/sets.def1", "LIBRARY api-ms-win-crt-string-l1-1-0.dll\nEXPORTS\n  strlen\n");
    write_file(d + "/sets.def2", "LIBRARY API-MS-Win-Core-Synch-L1-2-0.dll\nEXPORTS\n  Sleep\n");
    write_file(d + "/sets.def3", "LIBRARY ext-ms-win-nothing-here-l1-1-0.dll\nEXPORTS\n  Nothing\n");
    write_file(d + "/sets.c",
               "extern unsigned long long strlen(const char*); extern void Sleep(unsigned);\n"
               "extern int Nothing(void);\n"
               "static volatile int never;\nstatic const char* volatile text = \"x\";\n"
               "int start(void){ Sleep(0); if (never) return Nothing(); return (int)strlen(text) > 0 ? 0 : 1; }\n");
    write_file(d + "/ext.c", "extern int bar_fn(int);\nint ext_fn(int x){ return bar_fn(x); }\n");
    // case.exe imports FOO.DLL (the file is foo.dll); both/app2.exe imports
    // bar.dll, which is in both/ and in pathdir/; delay.exe (lld-link)
    // delay-loads bar.dll and ghost.dll.
    write_file(d + "/FOOcase.def", "LIBRARY FOO.DLL\nEXPORTS\n  alpha\n");
    write_file(d + "/case.c", "extern int alpha(int);\nint main(void){ return alpha(-1); }\n");
    write_file(d + "/app2.c", "extern int bar_fn(int);\nint main(void){ return bar_fn(0); }\n");
    write_file(d + "/delay.c",
               "int bar_fn(int); int boo(void);\n"
               "void* __delayLoadHelper2(void* d, void** slot) { (void)d; return *slot; }\n"
               "int mainCRTStartup(void){ return bar_fn(1) + boo(); }\n");
    std::filesystem::create_directories(d + "/both");
    // host/host.exe exports host_fn; plug/plugin.dll imports it from host.exe
    // (as a .node imports node.exe).
    std::filesystem::create_directories(d + "/host");
    std::filesystem::create_directories(d + "/plug");
    write_file(d + "/host.c", "__declspec(dllexport) int host_fn(int x){ return x; }\nint main(void){ return 0; }\n");
    write_file(d + "/plugin.c", "extern int host_fn(int);\nint plug(int x){ return host_fn(x); }\n");
    // cyc/self.dll imports from itself: x2 (forwarder to self.x), loop
    // (forwarder to self.loop: a cycle) and gone (forwarder to self.nothing).
    std::filesystem::create_directories(d + "/cyc");
    write_file(d + "/self.def",
               "LIBRARY self.dll\nEXPORTS\n  x\n  x2 = self.x\n  y\n  loop = self.loop\n  gone = self.nothing\n");
    write_file(d + "/selfimp.def", "LIBRARY self.dll\nEXPORTS\n  x2\n  loop\n  gone\n");
    write_file(d + "/self.c",
               "extern __declspec(dllimport) int x2(int); extern __declspec(dllimport) int loop(int);\n"
               "extern __declspec(dllimport) int gone(int);\n"
               "int y(int a) { return x2(a) + loop(a) + gone(a); }\nint x(int a) { return a + 1; }\n");
    // A cycle across two DLLs, entered from outside it: cyc/use.dll imports
    // p.dll's pz = p.pf; pf = q.qf and q.dll's qf = p.pf.
    write_file(d + "/p.def", "LIBRARY p.dll\nEXPORTS\n  pz = p.pf\n  pf = q.qf\n  pown\n");
    write_file(d + "/p.c", "int pown(void) { return 1; }\n");
    write_file(d + "/q.def", "LIBRARY q.dll\nEXPORTS\n  qf = p.pf\n  qown\n");
    write_file(d + "/q.c", "int qown(void) { return 2; }\n");
    write_file(d + "/pimp.def", "LIBRARY p.dll\nEXPORTS\n  pz\n");
    write_file(d + "/use.c", "extern int pz(void);\nint use(void) { return pz(); }\n");
    const std::string cc = "x86_64-w64-mingw32-gcc";
    const std::string dt = "x86_64-w64-mingw32-dlltool";
    x.ok = have_tool(cc) && have_tool(dt) &&
           run_in(d, cc + " -shared bar.c bar.def -o pathdir/bar.dll && " + dt +
                         " -d bar.def -l libbar.a -D bar.dll && " + cc +
                         " -shared foo.c foo.def -L. -lbar -o app/foo.dll && " + dt +
                         " -d foo_promised.def -l libfoo.a -D foo.dll && " + cc +
                         " app.c -L. -lfoo -o app/app.exe && " + dt + " -d ghost.def -l libghost.a -D ghost.dll && " +
                         cc + " ghost.c -L. -lghost -o app/ghost.exe && " + dt +
                         " -d sets.def1 -l libs1.a && " + dt + " -d sets.def2 -l libs2.a && " + dt +
                         " -d sets.def3 -l libs3.a && " + cc +
                         " -nostdlib -e start sets.c -L. -ls1 -ls2 -ls3 -o app/sets.exe && " + cc +
                         " -shared ext.c -L. -lbar -o py/ext.pyd && " + dt +
                         " -d FOOcase.def -l libFOOcase.a && " + cc + " case.c -L. -lFOOcase -o app/case.exe && " + cc +
                         " app2.c -L. -lbar -o both/app2.exe && cp pathdir/bar.dll both/bar.dll && cp pathdir/bar.dll both/kernel32.dll && " + cc +
                         " host.c -o host/host.exe -Wl,--out-implib,libhost.a && " + cc +
                         " -shared plugin.c -L. -lhost -o plug/plugin.dll && " + dt +
                         " -d selfimp.def -l libselfimp.a -D self.dll && " + cc +
                         " -shared self.c self.def -L. -lselfimp -o cyc/self.dll && " + cc +
                         " -shared p.c p.def -o cyc/p.dll && " + cc + " -shared q.c q.def -o cyc/q.dll && " + dt +
                         " -d pimp.def -l libpimp.a -D p.dll && " + cc + " -shared use.c -L. -lpimp -o cyc/use.dll") == 0;
    x.delay = x.ok && have_tool("lld-link-14") && have_tool("llvm-dlltool-14") &&
              run_in(d, "llvm-dlltool-14 -m i386:x86-64 -d bar.def -l bar.lib && "
                        "llvm-dlltool-14 -m i386:x86-64 -d ghost.def -l ghost.lib && "
                        "clang-14 --target=x86_64-pc-windows-msvc -c delay.c -o delay.obj && "
                        "lld-link-14 /nologo /entry:mainCRTStartup /nodefaultlib /subsystem:console delay.obj bar.lib "
                        "ghost.lib /delayload:bar.dll /delayload:ghost.dll /out:app/delay.exe") == 0;
    return x;
  }();
  return f;
}

std::uint32_t find_object(const windows_link& w, std::string_view name) {
  for (std::size_t i = 0; i < w.link.objects.size(); ++i)
    if (w.link.objects[i].name == name) return static_cast<std::uint32_t>(i);
  return no_object;
}

std::set<std::string> findings(const windows_link& w) {
  std::set<std::string> out;
  for (const auto& f : w.findings)
    out.insert(std::string(to_string(f.problem)) + " " + f.dll_name + (f.symbol.empty() ? "" : "." + f.symbol));
  return out;
}

// Wine's view of a run: the DLLs it loaded from our folders, the missing
// DLLs and the missing exports.
struct wine_view {
  bool ran = false;
  std::set<std::string> native;   // base names of DLLs loaded from Z:
  std::set<std::string> missing;  // "missing-dll X" / "missing-export dll.name"
};

wine_view run_wine(const std::string& exe, const std::string& winepath) {
  wine_view v;
  if (!std::filesystem::exists("/usr/lib/wine/wine64")) return v;
  static const std::string prefix = [] {
    const std::string p = scratch_dir("winload_prefix");
    return p;
  }();
  const std::string env = "WINEPREFIX=" + shell_quote(prefix) +
                          " WINEDLLOVERRIDES='mscoree,mshtml=' WINEDEBUG=+loaddll,warn+module" +
                          (winepath.empty() ? "" : " WINEPATH=" + shell_quote(winepath));
  auto r = capture("cd " + shell_quote(std::filesystem::path(exe).parent_path().string()) + " && " + env +
                   " timeout 180 /usr/lib/wine/wine64 " + shell_quote(exe) + " 2>&1");
  v.ran = r.out.find("trace:loaddll") != std::string::npos || r.out.find("import_dll") != std::string::npos;
  for (const std::string& line : lines(r.out)) {
    auto loaded = line.find("Loaded L\"Z:");
    if (loaded != std::string::npos && line.find(": native") != std::string::npos) {
      const auto end = line.find('"', loaded + 9);
      std::string path = line.substr(loaded + 8, end - loaded - 8);
      const auto slash = path.rfind('\\');
      std::string base = path.substr(slash + 1);
      std::transform(base.begin(), base.end(), base.begin(), [](unsigned char c) { return char(std::tolower(c)); });
      v.native.insert(base);
    }
    auto lib = line.find("err:module:import_dll Library ");
    if (lib != std::string::npos) {
      const std::string rest = line.substr(lib + 30);
      v.missing.insert("missing-dll " + rest.substr(0, rest.find(' ')));
    }
    auto noimpl = line.find("No implementation for ");
    if (noimpl != std::string::npos) {
      const std::string rest = line.substr(noimpl + 22);
      v.missing.insert("missing-export " + rest.substr(0, rest.find(' ')));
    }
  }
  return v;
}

}  // namespace

TEST_CASE("classification and built-in tables", "[winload]") {
  CHECK(classify_dll("VCRUNTIME140.dll", dll_rule::app_dir) == dll_class::vc_redist);
  CHECK(classify_dll("msvcp140_1.dll", dll_rule::app_dir) == dll_class::vc_redist);
  CHECK(classify_dll("vcruntime140d.dll", dll_rule::app_dir) == dll_class::debug_crt);
  CHECK(classify_dll("ucrtbased.dll", dll_rule::system32) == dll_class::debug_crt);
  CHECK(classify_dll("ucrtbase.dll", dll_rule::system32) == dll_class::ucrt);
  CHECK(classify_dll("api-ms-win-crt-runtime-l1-1-0.dll", dll_rule::api_set) == dll_class::ucrt);
  CHECK(classify_dll("api-ms-win-core-synch-l1-2-0.dll", dll_rule::api_set) == dll_class::api_set);
  CHECK(classify_dll("msvcrt.dll", dll_rule::known_dlls) == dll_class::msvcrt);
  CHECK(classify_dll("kernel32.dll", dll_rule::known_dlls) == dll_class::system);
  CHECK(classify_dll("libfoo.dll", dll_rule::path) == dll_class::application);
  CHECK(builtin_known_dll("KERNEL32.DLL"));
  CHECK(!builtin_known_dll("ucrtbase.dll"));
  CHECK(builtin_apiset_host("api-ms-win-crt-heap-l1-1-0.dll") == "ucrtbase.dll");
  CHECK(builtin_apiset_host("api-ms-win-core-synch-l1-2-0.dll") == "kernelbase.dll");
  // The loader's class and the floors' CRT flavour come from one classifier
  // (windows.hpp's classify_crt) and agree. The expected classes are
  // Microsoft's: msvcrt.dll is a Windows component (a KnownDLL); msvcrNN.dll
  // (msvcr100 = VS 2010, msvcr120 = VS 2013) is the C runtime of that Visual
  // Studio's Visual C++ Redistributable, not part of Windows (R. Chen, The
  // Old New Thing, 2014-04-11; Microsoft Learn, "Deployment in Visual C++");
  // d-suffixed builds are debug.
  struct crt_case {
    const char* dll;
    dll_class loader;
    crt_flavour floors;
  };
  for (const crt_case c : {crt_case{"msvcr120.dll", dll_class::vc_redist, crt_flavour::vcredist},
                           crt_case{"MSVCR120.dll", dll_class::vc_redist, crt_flavour::vcredist},
                           crt_case{"msvcr100.dll", dll_class::vc_redist, crt_flavour::vcredist},
                           crt_case{"msvcp120.dll", dll_class::vc_redist, crt_flavour::vcredist},
                           crt_case{"msvcr120d.dll", dll_class::debug_crt, crt_flavour::debug},
                           crt_case{"msvcrt.dll", dll_class::msvcrt, crt_flavour::msvcrt},
                           crt_case{"vcruntime140.dll", dll_class::vc_redist, crt_flavour::vcredist},
                           crt_case{"vcruntime140_1d.dll", dll_class::debug_crt, crt_flavour::debug},
                           crt_case{"msvcp140d.dll", dll_class::debug_crt, crt_flavour::debug},
                           crt_case{"msvcp140d_codecvt_ids.dll", dll_class::debug_crt, crt_flavour::debug},
                           crt_case{"msvcp140_atomic_wait.dll", dll_class::vc_redist, crt_flavour::vcredist},
                           crt_case{"ucrtbase.dll", dll_class::ucrt, crt_flavour::ucrt}}) {
    INFO(c.dll);
    CHECK(classify_dll(c.dll, dll_rule::app_dir) == c.loader);
    CHECK(classify_dll(c.dll, dll_rule::system32) == c.loader);
    const auto crt = classify_crt(c.dll);
    REQUIRE(crt);
    CHECK(crt->flavour == c.floors);
  }
  CHECK(classify_dll("msvcrt20.dll", dll_rule::system32) == dll_class::system);
  CHECK(!classify_crt("msvcrt20.dll"));
  CHECK(classify_dll("libwinpthread-1.dll", dll_rule::app_dir) == dll_class::application);
  CHECK(classify_crt("libwinpthread-1.dll")->flavour == crt_flavour::mingw);
}

TEST_CASE("closure and import check of a mingw program, against wine", "[winload]") {
  const fixture& f = build();
  if (!f.ok) {
    WARN("x86_64-w64-mingw32-gcc missing: skipped");
    return;
  }
  winload_options opts;
  opts.path = {f.dir + "/pathdir"};
  if (std::filesystem::is_directory(wine_root)) opts.windows_root = wine_root;
  auto w = load_windows(f.dir + "/app/app.exe", opts);
  REQUIRE(w);
  const auto foo = find_object(*w, "foo.dll");
  const auto bar = find_object(*w, "bar.dll");
  REQUIRE(foo != no_object);
  REQUIRE(bar != no_object);
  CHECK(w->info[foo].rule == dll_rule::app_dir);
  CHECK(w->info[bar].rule == dll_rule::path);
  CHECK(w->info[foo].kind == dll_class::application);
  const auto k32 = find_object(*w, "KERNEL32.dll");
  REQUIRE(k32 != no_object);
  CHECK(w->info[k32].kind == dll_class::system);
  CHECK(w->info[k32].rule == (opts.windows_root.empty() ? dll_rule::known_dlls : dll_rule::known_dlls));
  const auto got = findings(*w);
  CHECK(got.count("missing-export foo.dll.delta") == 1);
  CHECK(got.count("forwarder-target-missing foo.dll.deadfwd") == 1);
  CHECK(got.size() == 2);
  // The ordinal and the data import bound to foo.dll; chain bound through the forwarder to bar.dll.
  bool ordinal = false, data = false, chain = false;
  for (const auto& b : w->link.bindings) {
    ordinal = ordinal || (b.to == foo && b.symbol == "#9");
    data = data || (b.to == foo && b.symbol == "foo_data");
    chain = chain || (b.to == bar && b.symbol == "chain");
  }
  CHECK(ordinal);
  CHECK(data);
  CHECK(chain);

  // Without PATH, bar.dll is missing: the forwarder foo.chain -> bar.bar_fn has no target.
  winload_options no_path = opts;
  no_path.path.clear();
  auto w2 = load_windows(f.dir + "/app/app.exe", no_path);
  REQUIRE(w2);
  CHECK(findings(*w2).count("forwarder-target-missing foo.dll.chain") == 1);

  // Wine: the same application DLLs, and the missing export.
  const wine_view wine = run_wine(f.dir + "/app/app.exe", f.dir + "/pathdir");
  if (!wine.ran) {
    WARN("wine64 missing or did not run: oracle part skipped");
    return;
  }
  std::set<std::string> ours_native;
  for (std::size_t i = 0; i < w->link.objects.size(); ++i)
    if (w->info[i].rule == dll_rule::app_dir || w->info[i].rule == dll_rule::path || i == 0) {
      std::string n = w->link.objects[i].name;
      std::transform(n.begin(), n.end(), n.begin(), [](unsigned char c) { return char(std::tolower(c)); });
      ours_native.insert(n);
    }
  CHECK(wine.native == ours_native);
  // Wine says "No implementation for" both for a missing export and for a
  // forwarder whose target is missing.
  std::set<std::string> ours_missing;
  for (const auto& fi : w->findings)
    if (fi.problem == import_problem::missing_export || fi.problem == import_problem::forwarder_missing)
      ours_missing.insert("missing-export " + fi.dll_name + "." + fi.symbol);
  CHECK(ours_missing == std::set<std::string>{"missing-export foo.dll.deadfwd", "missing-export foo.dll.delta"});
  CHECK(wine.missing == ours_missing);
}

TEST_CASE("names whose case differs; the application folder before PATH; against wine", "[winload]") {
  const fixture& f = build();
  if (!f.ok) return;
  winload_options opts;
  if (std::filesystem::is_directory(wine_root)) opts.windows_root = wine_root;
  opts.path = {f.dir + "/pathdir"};
  auto c = load_windows(f.dir + "/app/case.exe", opts);
  REQUIRE(c);
  const auto foo = find_object(*c, "FOO.DLL");
  REQUIRE(foo != no_object);
  CHECK(c->link.objects[foo].path == f.dir + "/app/foo.dll");
  CHECK(c->info[foo].rule == dll_rule::app_dir);
  CHECK(c->findings.empty());
  auto both = load_windows(f.dir + "/both/app2.exe", opts);
  REQUIRE(both);
  const auto bar = find_object(*both, "bar.dll");
  REQUIRE(bar != no_object);
  CHECK(both->link.objects[bar].path == f.dir + "/both/bar.dll");
  CHECK(both->info[bar].rule == dll_rule::app_dir);
  // A KnownDLL is never taken from the application folder (both/kernel32.dll is a decoy).
  const auto k32 = find_object(*both, "KERNEL32.dll");
  REQUIRE(k32 != no_object);
  CHECK(both->info[k32].rule == dll_rule::known_dlls);
  CHECK(both->link.objects[k32].path != f.dir + "/both/kernel32.dll");
  winload_options bare;
  auto no_root = load_windows(f.dir + "/both/app2.exe", bare);
  REQUIRE(no_root);
  const auto k32b = find_object(*no_root, "KERNEL32.dll");
  REQUIRE(k32b != no_object);
  CHECK(no_root->info[k32b].rule == dll_rule::known_dlls);
  CHECK(no_root->info[k32b].assumed);
  const wine_view wc = run_wine(f.dir + "/app/case.exe", "");
  if (!wc.ran) return;
  CHECK(wc.native == std::set<std::string>{"case.exe", "foo.dll"});
  CHECK(wc.missing.empty());
  // Which bar.dll wine loads: the path in its "Loaded" line.
  auto r = capture("cd " + shell_quote(f.dir + "/both") + " && WINEPREFIX=" +
                   shell_quote(std::string(LINKSCOPE_TEST_SCRATCH) + "/winload_prefix") +
                   " WINEDLLOVERRIDES='mscoree,mshtml=' WINEDEBUG=+loaddll WINEPATH=" +
                   shell_quote(f.dir + "/pathdir") + " timeout 180 /usr/lib/wine/wine64 app2.exe 2>&1 | grep 'bar.dll'");
  CHECK(r.out.find(R"(\\both\\bar.dll)") != std::string::npos);
  CHECK(r.out.find(R"(\\pathdir\\bar.dll)") == std::string::npos);
}

TEST_CASE("delay-load imports are reported apart", "[winload]") {
  const fixture& f = build();
  if (!f.delay) {
    WARN("lld-link-14 missing: skipped");
    return;
  }
  winload_options opts;
  opts.path = {f.dir + "/pathdir"};
  auto w = load_windows(f.dir + "/app/delay.exe", opts);
  REQUIRE(w);
  const auto bar = find_object(*w, "bar.dll");
  REQUIRE(bar != no_object);
  CHECK(w->link.objects[bar].found());
  CHECK(w->info[bar].delay_only);
  REQUIRE(w->findings.size() == 1);
  CHECK(w->findings[0].problem == import_problem::missing_dll);
  CHECK(w->findings[0].dll_name == "ghost.dll");
  CHECK(w->findings[0].delay);
  CHECK(!w->any_problem());
  CHECK(w->any_problem(true));
}

TEST_CASE("a missing DLL, against wine", "[winload]") {
  const fixture& f = build();
  if (!f.ok) return;
  winload_options opts;
  if (std::filesystem::is_directory(wine_root)) opts.windows_root = wine_root;
  auto w = load_windows(f.dir + "/app/ghost.exe", opts);
  REQUIRE(w);
  CHECK(findings(*w) == std::set<std::string>{"missing-dll ghost.dll"});
  CHECK(w->any_problem());
  const wine_view wine = run_wine(f.dir + "/app/ghost.exe", "");
  if (!wine.ran) return;
  CHECK(wine.missing == std::set<std::string>{"missing-dll ghost.dll"});
}

TEST_CASE("python mode does not search PATH; program mode does", "[winload]") {
  const fixture& f = build();
  if (!f.ok) return;
  winload_options opts;
  opts.path = {f.dir + "/pathdir"};
  opts.mode = load_mode::python;
  auto py = load_windows(f.dir + "/py/ext.pyd", opts);
  REQUIRE(py);
  CHECK(findings(*py).count("missing-dll bar.dll") == 1);
  opts.dll_dirs = {f.dir + "/pathdir"};
  auto py2 = load_windows(f.dir + "/py/ext.pyd", opts);
  REQUIRE(py2);
  CHECK(findings(*py2).count("missing-dll bar.dll") == 0);
  CHECK(py2->info[find_object(*py2, "bar.dll")].rule == dll_rule::dll_dir);
  opts.dll_dirs.clear();
  opts.mode = load_mode::program;
  auto prog = load_windows(f.dir + "/py/ext.pyd", opts);
  REQUIRE(prog);
  CHECK(findings(*prog).count("missing-dll bar.dll") == 0);
}

TEST_CASE("API sets through wine's apisetschema.dll; an ext-ms set without host is missing, as wine says", "[winload]") {
  const fixture& f = build();
  if (!f.ok || !std::filesystem::is_directory(wine_root)) {
    WARN("wine64 or mingw missing: skipped");
    return;
  }
  winload_options opts;
  opts.windows_root = wine_root;
  auto w = load_windows(f.dir + "/app/sets.exe", opts);
  REQUIRE(w);
  const auto crt = find_object(*w, "api-ms-win-crt-string-l1-1-0.dll");
  REQUIRE(crt != no_object);
  REQUIRE(w->info[crt].host != no_object);
  CHECK(w->link.objects[w->info[crt].host].name == "ucrtbase.dll");
  CHECK(w->info[crt].kind == dll_class::ucrt);
  const auto synch = find_object(*w, "API-MS-Win-Core-Synch-L1-2-0.dll");
  REQUIRE(synch != no_object);
  REQUIRE(w->info[synch].host != no_object);
  CHECK(w->link.objects[w->info[synch].host].name == "kernelbase.dll");
  const auto ext = find_object(*w, "ext-ms-win-nothing-here-l1-1-0.dll");
  REQUIRE(ext != no_object);
  // wine's loader refuses the program: "Library ext-ms-win-nothing-here-l1-1-0.dll ... not found"
  const wine_view wine = run_wine(f.dir + "/app/sets.exe", "");
  if (wine.ran) CHECK(wine.missing == std::set<std::string>{"missing-dll ext-ms-win-nothing-here-l1-1-0.dll"});
  CHECK_FALSE(w->info[ext].optional_absent);
  CHECK(findings(*w) == std::set<std::string>{"missing-dll ext-ms-win-nothing-here-l1-1-0.dll"});
  // Without a schema the set cannot be looked up: it may be hosted on the real system.
  auto unknown = load_windows(f.dir + "/app/sets.exe", winload_options{});
  REQUIRE(unknown);
  const auto ext2 = find_object(*unknown, "ext-ms-win-nothing-here-l1-1-0.dll");
  REQUIRE(ext2 != no_object);
  CHECK(unknown->info[ext2].optional_absent);
  CHECK(findings(*unknown).empty());
}

// The files of wine's PE tree whose names end in one of `suffixes`, sorted.
static std::vector<std::string> wine_files(std::initializer_list<std::string_view> suffixes) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(wine_root)) {
    const std::string name = e.path().filename().string();
    for (std::string_view suffix : suffixes)
      if (name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
        out.push_back(e.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

TEST_CASE("every import of every wine DLL resolves within wine's tree", "[winload][wine]") {
  if (!std::filesystem::is_directory(wine_root)) {
    WARN("wine64 missing: skipped");
    return;
  }
  winload_options opts;
  opts.windows_root = wine_root;
  std::size_t files = 0, bindings = 0;
  std::vector<std::string> problems;
  for (const std::string& path : wine_files({".dll"})) {
    const std::string name = std::filesystem::path(path).filename().string();
    auto w = load_windows(path, opts);
    REQUIRE(w);
    ++files;
    bindings += w->link.bindings.size();
    for (const auto& f : w->findings) problems.push_back(name + ": " + to_string(f.problem) + " " + f.dll_name + "." + f.symbol);
  }
  INFO(files << " DLLs, " << bindings << " bindings");
  CHECK(files > 500);
  CHECK(problems == std::vector<std::string>{});
}

// Everything a load gives, as one string: objects (name, file, rule, class,
// needed, delay), bindings, findings, warnings.
static std::string summary(const windows_link& w) {
  std::string out;
  for (std::size_t i = 0; i < w.link.objects.size(); ++i) {
    const auto& o = w.link.objects[i];
    out += o.name + "|" + o.file + "|" + to_string(w.info[i].rule) + "|" + to_string(w.info[i].kind) + "|" +
           (w.info[i].delay_only ? "delay" : "") + "|";
    for (const auto& n : o.needed) out += std::string(n) + ",";
    for (const auto& r : o.rejected) out += "rejected " + r.path + ": " + r.reason + ",";
    for (const auto& wr : o.warnings) out += "warning " + wr + ",";
    out += "\n";
  }
  for (const auto& b : w.link.bindings) out += std::to_string(b.from) + ">" + std::to_string(b.to) + " " + std::string(b.symbol) + "\n";
  for (const auto& f : w.findings)
    out += std::string(to_string(f.problem)) + " " + std::to_string(f.from) + " " + f.dll_name + "." + f.symbol + " " + f.detail + "\n";
  for (const auto& wr : w.link.warnings) out += "warning " + wr + "\n";
  return out;
}

TEST_CASE("one cache shared by every root and by two threads gives each root's own load", "[winload][wine]") {
  if (!std::filesystem::is_directory(wine_root)) {
    WARN("wine64 missing: skipped");
    return;
  }
  winload_options opts;
  opts.windows_root = wine_root;
  const std::vector<std::string> roots = wine_files({".dll", ".exe"});
  REQUIRE(roots.size() > 500);
  // Each root alone, with a cache of its own: what the wine test above checks.
  std::vector<std::string> alone(roots.size());
  std::size_t opened_alone = 0;
  for (std::size_t i = 0; i < roots.size(); ++i) {
    winload_cache own;
    auto w = load_windows(roots[i], opts, own);
    REQUIRE(w);
    alone[i] = summary(*w);
    opened_alone += own.files();
  }
  // Every root through one cache, on two threads taking roots in turn.
  winload_cache shared;
  std::vector<std::string> together(roots.size());
  std::atomic<std::size_t> next{0};
  auto work = [&] {
    for (std::size_t i = next++; i < roots.size(); i = next++) {
      auto w = load_windows(roots[i], opts, shared);
      if (w) together[i] = summary(*w);
    }
  };
  std::thread other(work);
  work();
  other.join();
  std::size_t differ = 0;
  for (std::size_t i = 0; i < roots.size(); ++i)
    if (alone[i] != together[i]) {
      if (differ++ == 0) {
        INFO(roots[i]);
        CHECK(together[i] == alone[i]);
      }
    }
  CHECK(differ == 0);
  // Each file was read once: no more files than the tree holds (and the
  // roots themselves), and far fewer than the roots read alone.
  std::size_t in_tree = 0;
  for (const auto& e : std::filesystem::directory_iterator(wine_root)) in_tree += e.is_regular_file() ? 1 : 0;
  CHECK(shared.files() <= in_tree);
  CHECK(shared.files() >= roots.size());
  CHECK(shared.files() * 3 < opened_alone);
  CHECK(shared.hits() > shared.files());
}

TEST_CASE("linkscope-ldd on PE images: list, tree, undefined, json, dot, exit codes", "[winload][cli]") {
  const fixture& f = build();
  const std::string ldd = tool_path("linkscope-ldd");
  if (!f.ok || !std::filesystem::exists(ldd)) {
    WARN("mingw or linkscope-ldd missing: skipped");
    return;
  }
  const std::string app = shell_quote(f.dir + "/app/app.exe");
  const std::string path = " --path " + shell_quote(f.dir + "/pathdir");
  auto list = capture(ldd + " " + app + path + " 2>/dev/null; echo rc=$?");
  CHECK(list.out.find("\tfoo.dll => " + f.dir + "/app/foo.dll\n") != std::string::npos);
  CHECK(list.out.find("\tbar.dll => " + f.dir + "/pathdir/bar.dll\n") != std::string::npos);
  CHECK(list.out.find("\tKERNEL32.dll => KERNEL32.dll (system, not checked)\n") != std::string::npos);
  CHECK(list.out.find("rc=0") != std::string::npos);
  auto tree = capture(ldd + " --tree " + app + path);
  CHECK(tree.out.find("  foo.dll => " + f.dir + "/app/foo.dll [application-folder application]\n") != std::string::npos);
  CHECK(tree.out.find("bar.dll => " + f.dir + "/pathdir/bar.dll [path application] (for a forwarder)") !=
        std::string::npos);
  auto undefined = capture(ldd + " -r " + app + path + "; echo rc=$?");
  CHECK(undefined.out == "forwarder target missing: foo.dll.deadfwd -> bar.nothing\t(" + f.dir +
                             "/app/app.exe)\nmissing export: foo.dll.delta\t(" + f.dir + "/app/app.exe)\nrc=1\n");
  auto ghost = capture(ldd + " " + shell_quote(f.dir + "/app/ghost.exe") + " 2>&1; echo rc=$?");
  CHECK(ghost.out.find("\tghost.dll => not found\n") != std::string::npos);
  CHECK(ghost.out.find("warning: ghost.dll: not found") != std::string::npos);
  CHECK(ghost.out.find("rc=1") != std::string::npos);
  auto py = capture(ldd + " --load-mode python " + shell_quote(f.dir + "/py/ext.pyd") + path + " 2>/dev/null; echo rc=$?");
  CHECK(py.out.find("\tbar.dll => not found\n") != std::string::npos);
  CHECK(py.out.find("rc=1") != std::string::npos);
  auto json = capture(ldd + " --json " + app + path);
  CHECK(json.out.rfind("{\"version\":1,", 0) == 0);
  CHECK(json.out.find("\"problem\":\"missing-export\",\"dll\":\"foo.dll\",\"symbol\":\"delta\"") != std::string::npos);
  auto dot = capture(ldd + " --format=dot " + app + path);
  CHECK(dot.out.rfind("digraph linkscope_ldd {", 0) == 0);
  auto bad = capture(ldd + " --load-mode bogus " + app + " 2>/dev/null; echo rc=$?");
  CHECK(bad.out == "rc=2\n");
  if (std::filesystem::is_directory(wine_root)) {
    auto sets = capture(ldd + " --windows-root " + wine_root + " " + shell_quote(f.dir + "/app/sets.exe"));
    CHECK(sets.out.find("\tapi-ms-win-crt-string-l1-1-0.dll => " + wine_root + "/ucrtbase.dll (api-set)\n") !=
          std::string::npos);
    CHECK(sets.out.find("\text-ms-win-nothing-here-l1-1-0.dll => not found\n") != std::string::npos);
    auto unknown = capture(ldd + " " + shell_quote(f.dir + "/app/sets.exe"));
    CHECK(unknown.out.find("\text-ms-win-nothing-here-l1-1-0.dll => not present (optional)\n") != std::string::npos);
  }
}

TEST_CASE("--executable: a DLL that imports its host program binds to it", "[winload]") {
  const fixture& f = build();
  if (!f.ok) return;
  winload_options opts;
  opts.mode = load_mode::altered;
  auto alone = load_windows(f.dir + "/plug/plugin.dll", opts);
  REQUIRE(alone);
  CHECK(findings(*alone).count("missing-dll host.exe") == 1);
  opts.executable = f.dir + "/host/host.exe";
  auto hosted = load_windows(f.dir + "/plug/plugin.dll", opts);
  REQUIRE(hosted);
  const auto host = find_object(*hosted, "host.exe");
  REQUIRE(host != no_object);
  CHECK(hosted->info[host].rule == dll_rule::executable);
  CHECK(hosted->link.objects[host].path == f.dir + "/host/host.exe");
  CHECK(findings(*hosted).empty());
}

namespace {

// The file offset of the export address table entry whose forwarder is
// `forwarder`, from x86_64-w64-mingw32-objdump alone: -p's ImageBase, "Export
// Address Table" RVA and "[ i] ... Forwarder RVA -- forwarder" row; -h's
// section VMA and file offset. 0 when objdump does not show it.
std::uint64_t objdump_eat_entry(const std::string& dll, const std::string& forwarder) {
  const auto p = lines(capture("x86_64-w64-mingw32-objdump -p " + shell_quote(dll)).out);
  std::uint64_t image_base = 0, eat = 0, index = ~std::uint64_t{0};
  for (const std::string& l : p) {
    if (l.rfind("ImageBase", 0) == 0) image_base = std::stoull(l.substr(l.find_last_of('\t') + 1), nullptr, 16);
    if (l.find("\tExport Address Table \t") != std::string::npos) eat = std::stoull(l.substr(l.find_last_of('\t') + 1), nullptr, 16);
    const std::string tail = "Forwarder RVA -- " + forwarder;
    if (l.size() > tail.size() && l.compare(l.size() - tail.size(), tail.size(), tail) == 0 && l.find('[') != std::string::npos)
      index = std::stoull(l.substr(l.find('[') + 1));
  }
  if (image_base == 0 || eat == 0 || index == ~std::uint64_t{0}) return 0;
  const std::uint64_t entry = eat + 4 * index;
  for (const std::string& l : lines(capture("x86_64-w64-mingw32-objdump -h " + shell_quote(dll)).out)) {
    std::istringstream in(l);
    std::string idx, name, size, vma, lma, off;
    if (!(in >> idx >> name >> size >> vma >> lma >> off) || idx.empty() || !std::isdigit(static_cast<unsigned char>(idx[0])))
      continue;
    const std::uint64_t va = std::stoull(vma, nullptr, 16) - image_base, n = std::stoull(size, nullptr, 16);
    if (entry >= va && entry - va < n) return std::stoull(off, nullptr, 16) + (entry - va);
  }
  return 0;
}

std::string hex(std::uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

}  // namespace

TEST_CASE("forwarders to the DLL itself: resolved, a cycle, a missing target", "[winload]") {
  const fixture& f = build();
  if (!f.ok) return;
  winload_options opts;
  auto w = load_windows(f.dir + "/cyc/self.dll", opts);
  REQUIRE(w);
  CHECK(findings(*w) == std::set<std::string>{"forwarder-cycle self.dll.loop", "forwarder-target-missing self.dll.gone"});
  // The cycle names the file and the export address table entry of `loop`
  // (objdump -p: its forwarder row; -h: where its section lies in the file).
  const std::uint64_t loop_at = objdump_eat_entry(f.dir + "/cyc/self.dll", "self.loop");
  REQUIRE(loop_at != 0);
  for (const auto& fi : w->findings) {
    if (fi.problem == import_problem::forwarder_cycle) {
      CHECK(fi.detail == "self.loop -> self.loop");
      CHECK(fi.cycle_at == 0);
      CHECK(fi.cycle.file == f.dir + "/cyc/self.dll");
      CHECK(fi.cycle.offset() == loop_at);
    } else {
      CHECK(fi.cycle_at == no_object);
    }
  }
  bool x2 = false;
  for (const auto& b : w->link.bindings) x2 = x2 || (b.symbol == "x2" && b.from == 0 && b.to == 0);
  CHECK(x2);
}

TEST_CASE("a forwarder cycle across two DLLs is blamed on the export that starts it, with its file and offset",
          "[winload]") {
  const fixture& f = build();
  if (!f.ok) return;
  const std::string use = f.dir + "/cyc/use.dll", p = f.dir + "/cyc/p.dll";
  // objdump -p: p.dll forwards pz to p.pf and pf to q.qf; q.dll qf to p.pf.
  const std::uint64_t pf_at = objdump_eat_entry(p, "q.qf");
  REQUIRE(pf_at != 0);
  REQUIRE(objdump_eat_entry(p, "p.pf") != 0);
  REQUIRE(objdump_eat_entry(f.dir + "/cyc/q.dll", "p.pf") != 0);
  auto w = load_windows(use, winload_options{});
  REQUIRE(w);
  CHECK(findings(*w) == std::set<std::string>{"forwarder-cycle p.dll.pz"});
  REQUIRE(w->findings.size() == 1);
  const import_finding& fi = w->findings[0];
  // pz enters the cycle; pf (p.dll) is the first export on it. (Wine 8.0 is
  // no oracle here: LoadLibraryExW on use.dll overflows its stack.)
  CHECK(fi.detail == "p.pf -> q.qf -> p.pf");
  REQUIRE(fi.cycle_at == find_object(*w, "p.dll"));
  CHECK(fi.cycle.file == p);
  CHECK(fi.cycle.code() == linkscope::errc::malformed);
  CHECK(fi.cycle.offset() == pf_at);
  // The CLI: the -r line and a warning (stderr) as every diagnostic is
  // printed, and the JSON row's cycle_file and offset.
  const std::string ldd = shell_quote(tool_path("linkscope-ldd"));
  const std::string blame = p + ": export address table entry starts a forwarder cycle (offset " + hex(pf_at) + ")";
  auto r = capture(ldd + " -r " + shell_quote(use) + " 2>/dev/null; echo rc=$?");
  CHECK(r.out == "forwarder cycle: p.dll.pz -> p.pf -> q.qf -> p.pf; " + blame + "\t(" + use + ")\nrc=1\n");
  auto err = capture(ldd + " " + shell_quote(use) + " 2>&1 >/dev/null");
  CHECK(err.out.find("linkscope-ldd: " + p + ": warning: export address table entry starts a forwarder cycle (offset " +
                     hex(pf_at) + ")\n") != std::string::npos);
  auto json = capture(ldd + " --json " + shell_quote(use) + " 2>/dev/null");
  CHECK(json.out.find("\"problem\":\"forwarder-cycle\",\"dll\":\"p.dll\",\"symbol\":\"pz\",\"delay_load\":false,"
                      "\"forwarder\":\"p.pf -> q.qf -> p.pf\",\"cycle_file\":\"" +
                      p + "\",\"offset\":" + std::to_string(pf_at) + "}") != std::string::npos);
}

TEST_CASE("a DLL of another machine in the application folder is skipped, as wine does", "[winload]") {
  const fixture& f = build();
  if (!f.ok || !have_tool("i686-w64-mingw32-gcc")) {
    WARN("i686-w64-mingw32-gcc missing: skipped");
    return;
  }
  const std::string mix = f.dir + "/mix";
  std::filesystem::create_directories(mix);
  std::filesystem::copy_file(f.dir + "/app/app.exe", mix + "/app.exe", std::filesystem::copy_options::overwrite_existing);
  REQUIRE(run_in(f.dir, "i686-w64-mingw32-gcc -shared foo.c foo.def -o mix/foo.dll") == 0);
  winload_options opts;
  if (std::filesystem::is_directory(wine_root)) opts.windows_root = wine_root;
  opts.path = {f.dir + "/app", f.dir + "/pathdir"};
  auto w = load_windows(mix + "/app.exe", opts);
  REQUIRE(w);
  const auto foo = find_object(*w, "foo.dll");
  REQUIRE(foo != no_object);
  CHECK(w->link.objects[foo].path == f.dir + "/app/foo.dll");
  CHECK(w->info[foo].rule == dll_rule::path);
  REQUIRE(w->link.objects[foo].rejected.size() == 1);
  CHECK(w->link.objects[foo].rejected[0].path == mix + "/foo.dll");
  const wine_view wine = run_wine(mix + "/app.exe", f.dir + "/app;" + f.dir + "/pathdir");
  if (!wine.ran) return;
  // Wine loads app\foo.dll (the x64 one from PATH), not mix\foo.dll.
  auto r = capture("cd " + shell_quote(mix) + " && WINEPREFIX=" +
                   shell_quote(std::string(LINKSCOPE_TEST_SCRATCH) + "/winload_prefix") +
                   " WINEDLLOVERRIDES='mscoree,mshtml=' WINEDEBUG=+loaddll WINEPATH=" +
                   shell_quote(f.dir + "/app;" + f.dir + "/pathdir") +
                   " timeout 180 /usr/lib/wine/wine64 app.exe 2>&1 | grep 'foo.dll'");
  CHECK(r.out.find(R"(\\app\\foo.dll)") != std::string::npos);
  CHECK(r.out.find(R"(\\mix\\foo.dll)") == std::string::npos);
}

// ---------------------------------------------------------------------------
// Bad input at loader level: the root's unreadable import directory is an
// error naming the file and the offset of its data-directory entry (objdump -p
// prints the bogus RVA there; llvm-readobj-14 --coff-imports gives up), and a
// dependency's broken export table is a warning with its offset that checks
// no import against it, instead of "missing export" for every one.
namespace {

// PE layout facts (PE/COFF spec): e_lfanew at 0x3c; the optional header
// after the 24-byte signature and file header; PE32+'s data directories at
// 112 into it, PE32's at 96; section headers after the optional header.
struct pe_layout {
  std::size_t directories = 0, sections = 0, nsections = 0;
};
linkscope::u32 le32(const std::string& b, std::size_t at) {
  return static_cast<linkscope::u32>(static_cast<unsigned char>(b[at])) | static_cast<linkscope::u32>(static_cast<unsigned char>(b[at + 1])) << 8 |
         static_cast<linkscope::u32>(static_cast<unsigned char>(b[at + 2])) << 16 |
         static_cast<linkscope::u32>(static_cast<unsigned char>(b[at + 3])) << 24;
}
pe_layout layout(const std::string& b) {
  pe_layout l;
  const std::size_t pe = le32(b, 0x3c), opt = pe + 24;
  const bool plus = static_cast<unsigned char>(b[opt]) == 0x0b && static_cast<unsigned char>(b[opt + 1]) == 0x02;
  l.directories = opt + (plus ? 112 : 96);
  l.nsections = static_cast<unsigned char>(b[pe + 6]) | static_cast<unsigned char>(b[pe + 7]) << 8;
  const std::size_t opt_size = static_cast<unsigned char>(b[pe + 20]) | static_cast<unsigned char>(b[pe + 21]) << 8;
  l.sections = opt + opt_size;
  return l;
}
std::size_t file_offset(const std::string& b, const pe_layout& l, linkscope::u32 rva) {
  for (std::size_t i = 0; i < l.nsections; ++i) {
    const std::size_t h = l.sections + 40 * i;
    const linkscope::u32 va = le32(b, h + 12), raw_size = le32(b, h + 16), raw = le32(b, h + 20);
    if (rva >= va && rva < va + raw_size) return raw + (rva - va);
  }
  return 0;
}
void put16(std::string& b, std::size_t at, unsigned v) {
  b[at] = static_cast<char>(v & 0xff);
  b[at + 1] = static_cast<char>(v >> 8);
}

}  // namespace

TEST_CASE("bad input at loader level: an error or warning with file and offset, no false findings", "[winload]") {
  const fixture& f = build();
  if (!f.ok) return;
  const std::string dir = scratch_dir("winload_bad");
  std::filesystem::copy_file(f.dir + "/app/app.exe", dir + "/app.exe", std::filesystem::copy_options::overwrite_existing);
  std::string app = read_file(f.dir + "/app/app.exe");
  const pe_layout a = layout(app);
  // the import directory (entry 1) points outside every section
  const std::size_t entry = a.directories + 8;
  app[entry] = 0;
  app[entry + 1] = 0;
  put16(app, entry + 2, 0x7ff0);
  write_file(dir + "/badimp.exe", app);
  CHECK(capture("x86_64-w64-mingw32-objdump -p " + shell_quote(dir + "/badimp.exe")).out.find("Entry 1 000000007ff00000") !=
        std::string::npos);
  CHECK(capture("llvm-readobj-14 --coff-imports " + shell_quote(dir + "/badimp.exe") + " >/dev/null 2>&1; echo $?").out != "0\n");
  auto bad = load_windows(dir + "/badimp.exe", winload_options{});
  REQUIRE_FALSE(bad);
  CHECK(bad.error().file == dir + "/badimp.exe");
  CHECK(bad.error().err.offset == entry);
  auto cli = capture(shell_quote(tool_path("linkscope-ldd")) + " " + shell_quote(dir + "/badimp.exe") + " 2>&1; echo rc=$?");
  CHECK(cli.out.find("error: import directory RVA outside every section (offset 0x") != std::string::npos);
  CHECK(cli.out.find("rc=2") != std::string::npos);

  // foo.dll's first name ordinal out of range
  std::string foo = read_file(f.dir + "/app/foo.dll");
  const pe_layout l = layout(foo);
  const std::size_t exports = file_offset(foo, l, le32(foo, l.directories));
  REQUIRE(exports != 0);
  const std::size_t ordinals = file_offset(foo, l, le32(foo, exports + 36));  // AddressOfNameOrdinals
  REQUIRE(ordinals != 0);
  put16(foo, ordinals, 0x7777);
  write_file(dir + "/foo.dll", foo);
  CHECK(capture("x86_64-w64-mingw32-objdump -p " + shell_quote(dir + "/foo.dll")).out.find("[30583] ") != std::string::npos);
  auto w = load_windows(dir + "/app.exe", winload_options{});
  REQUIRE(w);
  const auto fo = find_object(*w, "foo.dll");
  REQUIRE(fo != no_object);
  REQUIRE(w->link.objects[fo].warnings.size() == 1);
  CHECK(w->link.objects[fo].warnings[0] ==
        "exports: export name ordinal out of range (offset " + hex(ordinals) + "); imports from it are not checked");
  for (const std::string& finding : findings(*w)) CHECK(finding.find("foo.dll") == std::string::npos);
  // The CLI names the file: "linkscope-ldd: APP: warning: FOO: exports: ... (offset 0x...)".
  auto warned = capture(shell_quote(tool_path("linkscope-ldd")) + " " + shell_quote(dir + "/app.exe") + " 2>&1 >/dev/null");
  CHECK(warned.out.find(": warning: " + dir + "/foo.dll: exports: export name ordinal out of range (offset " +
                        hex(ordinals) + ")") != std::string::npos);

  // The name pointer table past the end of its section (NumberOfNames
  // 0x100000), and outside every section (AddressOfNames 0x7ff00000): each a
  // warning on foo.dll (its path) at the offset of its AddressOfNames field.
  // llvm-readobj-14 --coff-exports rejects both.
  struct variant {
    const char* sub;
    std::size_t field;  // into the export directory
    linkscope::u32 value;
    const char* message;
  };
  for (const variant v : {variant{"names_long", 24, 0x100000, "RVA range past the section's raw data"},
                          variant{"names_out", 32, 0x7ff00000, "export name table RVA outside every section"}}) {
    const std::string sub = dir + "/" + v.sub;
    std::filesystem::create_directories(sub);
    std::filesystem::copy_file(f.dir + "/app/app.exe", sub + "/app.exe", std::filesystem::copy_options::overwrite_existing);
    std::string bad_foo = read_file(f.dir + "/app/foo.dll");
    for (int i = 0; i < 4; ++i) bad_foo[exports + v.field + static_cast<std::size_t>(i)] = static_cast<char>((v.value >> (8 * i)) & 0xff);
    write_file(sub + "/foo.dll", bad_foo);
    CHECK(capture("llvm-readobj-14 --coff-exports " + shell_quote(sub + "/foo.dll") + " >/dev/null 2>&1; echo $?").out != "0\n");
    auto vw = load_windows(sub + "/app.exe", winload_options{});
    REQUIRE(vw);
    const auto vo = find_object(*vw, "foo.dll");
    REQUIRE(vo != no_object);
    CHECK(vw->link.objects[vo].path == sub + "/foo.dll");
    REQUIRE(vw->link.objects[vo].warnings.size() == 1);
    CHECK(vw->link.objects[vo].warnings[0] ==
          std::string("exports: ") + v.message + " (offset " + hex(exports + 32) + "); imports from it are not checked");
    for (const std::string& finding : findings(*vw)) CHECK(finding.find("foo.dll") == std::string::npos);
  }
}
