// Tests of linkscope/resolve/pe_load.hpp (the Windows loader) where wine64
// (Debian, 8.0) is the oracle for what test_winload.cpp left open (issue 18
// audit): the search order of LoadLibraryExW with
// LOAD_WITH_ALTERED_SEARCH_PATH (--load-mode altered), with
// LOAD_LIBRARY_SEARCH_DEFAULT_DIRS | LOAD_LIBRARY_SEARCH_DLL_LOAD_DIR and
// AddDllDirectory (--load-mode python, --dll-dir) and without flags (program
// mode with --executable); the Windows folder, System32 and the current
// folder of a wineprefix; KnownDLLs; delay-load imports that are called;
// forwarder chains, ordinal forwarders and forwarders into API sets; CLR
// (managed) images; bound import tables.
//
// A tiny mingw driver (driver.exe MODE DLL... [-d DIR]...) calls
// LoadLibraryExW on each DLL and prints `ok DLL` or `fail DLL ERROR`; with
// WINEDEBUG=+loaddll,warn+module wine prints where it loaded each DLL from
// (`Loaded L"Z:\\...\\dep.dll" ...`), `No implementation for X.Y` for an
// export it could not bind, and `Library X ... not found`. The expected
// values are wine's (or objdump -p / llvm-readobj-14 / the .def and the bytes
// that made the fixture), never linkscope's own output.
//
// Cost: one wineprefix per run of this program (its System32 and Windows
// folder are the --windows-root of the emulation); seven wine runs, each
// under `timeout`, the first of which boots the prefix on a thread while
// about 45 mingw/clang tool runs build the fixtures. 7-12 s in all here.
#include <linkscope/coff/pe.hpp>
#include <linkscope/core/mapped_file.hpp>
#include <linkscope/resolve/check.hpp>
#include <linkscope/resolve/pe_load.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "support/fixtures.hpp"

using namespace linkscope_test;
using namespace linkscope::resolve;

namespace {

const std::string wine64 = "/usr/lib/wine/wine64";

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// The dependency names of the search-order fixture: mod/m_K.dll imports
// dep_K.dll, which lies in the folders listed (the first that the mode
// searches should win).
//   mod   the loaded DLL's folder        app  the driver's folder (host/)
//   path  a PATH folder (WINEPATH)       dir  an AddDllDirectory folder
//   cwd   the current folder             win  the Windows folder (C:\windows)
//   sys   System32
//   o1 cwd+path   o2 win+cwd   o3 sys+win   o4 mod+app   o5 app+dir   o6 dir+sys
const std::vector<std::pair<std::string, std::vector<std::string>>> search_cases = {
    {"mod", {"mod"}},         {"app", {"host"}},       {"path", {"pathdir"}},  {"dir", {"dlldir"}},
    {"cwd", {"cwd"}},         {"win", {"@win"}},       {"sys", {"@sys"}},      {"o1", {"cwd", "pathdir"}},
    {"o2", {"@win", "cwd"}},  {"o3", {"@sys", "@win"}}, {"o4", {"mod", "host"}}, {"o5", {"host", "dlldir"}},
    {"o6", {"dlldir", "@sys"}}};

struct world {
  std::string dir, prefix, system32, windows;
  bool ok = false;     // mingw fixtures built
  bool wine = false;   // the wineprefix exists
  bool delay = false;  // dl/delay.exe (clang-14 + lld-link-14)
};

// PE layout facts (PE/COFF spec 3.4): e_lfanew at 0x3c; PE32+'s data
// directories 112 bytes into the optional header; the section table after it.
linkscope::u32 get32(const std::string& b, std::size_t at) {
  return static_cast<linkscope::u32>(static_cast<unsigned char>(b[at])) |
         static_cast<linkscope::u32>(static_cast<unsigned char>(b[at + 1])) << 8 |
         static_cast<linkscope::u32>(static_cast<unsigned char>(b[at + 2])) << 16 |
         static_cast<linkscope::u32>(static_cast<unsigned char>(b[at + 3])) << 24;
}
void put32(std::string& b, std::size_t at, linkscope::u32 v) {
  for (int i = 0; i < 4; ++i) b[at + static_cast<std::size_t>(i)] = static_cast<char>((v >> (8 * i)) & 0xff);
}
void put16(std::string& b, std::size_t at, unsigned v) {
  b[at] = static_cast<char>(v & 0xff);
  b[at + 1] = static_cast<char>((v >> 8) & 0xff);
}
std::size_t directories(const std::string& b) { return get32(b, 0x3c) + 24 + 112; }
// The file offset and RVA of section `name`.
std::pair<std::size_t, linkscope::u32> section(const std::string& b, std::string_view name) {
  const std::size_t pe = get32(b, 0x3c);
  const std::size_t n = static_cast<unsigned char>(b[pe + 6]) | static_cast<unsigned char>(b[pe + 7]) << 8;
  const std::size_t opt_size = static_cast<unsigned char>(b[pe + 20]) | static_cast<unsigned char>(b[pe + 21]) << 8;
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t h = pe + 24 + opt_size + 40 * i;
    if (std::string_view(b.data() + h, 8).substr(0, name.size()) == name) return {get32(b, h + 20), get32(b, h + 12)};
  }
  return {0, 0};
}

// The bound import table written into bound.dll's header slack (offset
// 0x500, before the first section's raw data at 0x600): nowhere.dll (stamp
// 0xdeadbeef) with one forwarder ref, elsewhere.dll (stamp 0x12345678).
constexpr linkscope::u32 bound_at = 0x500, bound_size = 0x40;

const world& build() {
  static const world w = [] {
    world x;
    x.dir = scratch_dir("winload_wine");
    x.prefix = scratch_dir("winload_wine_prefix");
    x.system32 = x.prefix + "/drive_c/windows/system32";
    x.windows = x.prefix + "/drive_c/windows";
    const std::string& d = x.dir;
    for (const char* sub : {"host", "mod", "pathdir", "dlldir", "cwd", "kn", "fw", "dl", "pdl", "clr"})
      std::filesystem::create_directories(d + "/" + sub);
    write_file(d + "/driver.c", R"c(#include <windows.h>
#include <stdio.h>
#include <string.h>
/* driver MODE DLL... [-d DIR]...: LoadLibraryExW on each DLL; MODE altered
   (LOAD_WITH_ALTERED_SEARCH_PATH), python (AddDllDirectory(DIR) for each -d,
   then LOAD_LIBRARY_SEARCH_DEFAULT_DIRS | LOAD_LIBRARY_SEARCH_DLL_LOAD_DIR)
   or plain (no flags). Prints "ok DLL" or "fail DLL GetLastError()". */
static void widen(const char* s, wchar_t* w) { MultiByteToWideChar(CP_UTF8, 0, s, -1, w, 1024); }
int main(int argc, char** argv) {
  wchar_t w[1024];
  DWORD flags = 0;
  if (argc < 2) return 2;
  if (!strcmp(argv[1], "altered")) flags = LOAD_WITH_ALTERED_SEARCH_PATH;
  else if (!strcmp(argv[1], "python")) flags = LOAD_LIBRARY_SEARCH_DEFAULT_DIRS | LOAD_LIBRARY_SEARCH_DLL_LOAD_DIR;
  for (int i = 2; i + 1 < argc; ++i)
    if (!strcmp(argv[i], "-d")) {
      widen(argv[i + 1], w);
      if (!AddDllDirectory(w)) printf("adddir-fail %lu\n", GetLastError());
    }
  for (int i = 2; i < argc; ++i) {
    if (!strcmp(argv[i], "-d")) { ++i; continue; }
    widen(argv[i], w);
    SetLastError(0);
    HMODULE h = LoadLibraryExW(w, NULL, flags);
    if (h) printf("ok %s\n", argv[i]); else printf("fail %s %lu\n", argv[i], GetLastError());
    fflush(stdout);
  }
  return 0;
}
)c");
    const std::string cc = "x86_64-w64-mingw32-gcc";
    const std::string dt = "x86_64-w64-mingw32-dlltool";
    if (!have_tool(cc) || !have_tool(dt)) return x;
    if (run_in(d, cc + " driver.c -o host/driver.exe") != 0) return x;
    // The wineprefix is made by the first wine run (wineboot: 5-20 s), on a
    // thread of its own while the fixtures are built.
    std::thread boot([dir = x.dir, prefix = x.prefix] {
      if (std::filesystem::exists(wine64))
        capture("cd " + shell_quote(dir) + " && WINEPREFIX=" + shell_quote(prefix) +
                " WINEDLLOVERRIDES='mscoree,mshtml=' WINEDEBUG=-all timeout 300 " + wine64 + " host/driver.exe >/dev/null 2>&1");
    });
    // The search-order fixture (dep_K.dll into the wineprefix comes later).
    std::string cmd = "true";
    for (const auto& [k, where] : search_cases) {
      write_file(d + "/dep_" + k + ".c", "int dep_" + k + "(void){return 1;}\n");
      write_file(d + "/m_" + k + ".c", "extern int dep_" + k + "(void);\nint m_" + k + "(void){return dep_" + k + "();}\n");
      cmd += " && " + cc + " -shared dep_" + k + ".c -o dep_" + k + ".dll -Wl,--out-implib,libdep_" + k + ".a && " + cc +
             " -shared m_" + k + ".c -L. -ldep_" + k + " -o mod/m_" + k + ".dll";
      for (const std::string& to : where)
        if (to[0] != '@') cmd += " && cp dep_" + k + ".dll " + to + "/";
    }
    // KnownDLLs: kn/m_known.dll imports normaliz.dll (a KnownDLL) for
    // IdnToAscii and decoy_only; kn/normaliz.dll is a decoy exporting both.
    write_file(d + "/normaliz.c", "int IdnToAscii(void){return 7;}\nint decoy_only(void){return 8;}\n");
    write_file(d + "/normaliz.def", "LIBRARY normaliz.dll\nEXPORTS\n  IdnToAscii\n  decoy_only\n");
    write_file(d + "/m_known.c",
               "extern int IdnToAscii(void); extern int decoy_only(void);\nint m_known(void){return IdnToAscii()+decoy_only();}\n");
    cmd += " && " + cc + " -shared normaliz.c normaliz.def -o kn/normaliz.dll && " + dt +
           " -d normaliz.def -l libnormaliz.a -D normaliz.dll && " + cc + " -shared m_known.c -L. -lnormaliz -o kn/m_known.dll";
    // --known-dlls: kn/m_kd.dll imports dep_kd.dll, which is in kn/ and in System32.
    write_file(d + "/dep_kd.c", "int dep_kd(void){return 1;}\n");
    write_file(d + "/m_kd.c", "extern int dep_kd(void);\nint m_kd(void){return dep_kd();}\n");
    cmd += " && " + cc + " -shared dep_kd.c -o kn/dep_kd.dll -Wl,--out-implib,libdep_kd.a && " + cc +
           " -shared m_kd.c -L. -ldep_kd -o kn/m_kd.dll";
    // Forwarders: fw/fwd.exe imports from a.dll: fa = b.fb and b.fb = c.fc
    // (two hops), fo = c.#5 (ordinal), fs = api-ms-win-core-synch-l1-2-0.Sleep
    // (an API set), and six that fail: fbad = b.nothing, f2bad = b.fbad2 =
    // c.missing, fobad = c.#77, fsbad = api-ms-...NoSuchFunction, fext =
    // ext-ms-win-nothing-here-l1-1-0.Foo, fghost = ghost.Foo.
    write_file(d + "/c.c", "int fc(void){return 3;}\nint fc2(void){return 4;}\n");
    write_file(d + "/c.def", "LIBRARY c.dll\nEXPORTS\n  fc\n  fc2 @5 NONAME\n");
    write_file(d + "/b.c", "int bown(void){return 2;}\n");
    write_file(d + "/b.def", "LIBRARY b.dll\nEXPORTS\n  fb = c.fc\n  fbad2 = c.missing\n  bown\n");
    write_file(d + "/a.c", "int aown(void){return 1;}\n");
    write_file(d + "/a.def",
               "LIBRARY a.dll\nEXPORTS\n  fa = b.fb\n  fbad = b.nothing\n  f2bad = b.fbad2\n  fo = \"c.#5\"\n"
               "  fobad = \"c.#77\"\n  fs = api-ms-win-core-synch-l1-2-0.Sleep\n"
               "  fsbad = api-ms-win-core-synch-l1-2-0.NoSuchFunction\n  fext = ext-ms-win-nothing-here-l1-1-0.Foo\n"
               "  fghost = ghost.Foo\n  aown\n");
    write_file(d + "/aimp.def",
               "LIBRARY a.dll\nEXPORTS\n  fa\n  fbad\n  f2bad\n  fo\n  fobad\n  fs\n  fsbad\n  fext\n  fghost\n");
    write_file(d + "/fwd.c",
               "#include <stdio.h>\n"
               "extern int fa(void), fbad(void), f2bad(void), fo(void), fobad(void), fs(void), fsbad(void), fext(void),"
               " fghost(void);\n"
               "int main(int argc, char** argv){ (void)argv; if (argc > 5) return fbad()+f2bad()+fobad()+fs()+fsbad()"
               "+fext()+fghost();\n  printf(\"fa %d fo %d\\n\", fa(), fo()); return 0; }\n");
    cmd += " && " + cc + " -shared c.c c.def -o fw/c.dll && " + cc + " -shared b.c b.def -o fw/b.dll && " + cc +
           " -shared a.c a.def -o fw/a.dll && " + dt + " -d aimp.def -l libaimp.a -D a.dll && " + cc +
           " fwd.c -L. -laimp -o fw/fwd.exe";
    // CLR: clr/plain.dll imports ghost.dll (nowhere) and has a section
    // .clrhdr holding a CLR header; il.dll and mixed.dll are copies whose
    // data directory 14 points at it, with flags ILONLY (1) and 0; il.exe
    // is the same for a program (plain.exe).
    write_file(d + "/ghost.def", "LIBRARY ghost.dll\nEXPORTS\n  boo\n");
    write_file(d + "/clr.c",
               "extern int boo(void);\n"
               "__attribute__((section(\".clrhdr\"), used)) const unsigned clr_header[18] = {72, 2 | (5u << 16), 0, 0, 1};\n"
               "int clr_fn(void){ return boo(); }\n");
    write_file(d + "/clrexe.c", read_file(d + "/clr.c") + "int main(void){ return clr_fn(); }\n");
    cmd += " && " + dt + " -d ghost.def -l libghost.a -D ghost.dll && " + cc + " -shared clr.c -L. -lghost -o clr/plain.dll && " +
           cc + " clrexe.c -L. -lghost -o clr/plain.exe";
    // Bound imports: mod/bound.dll is m_mod.dll with a bound import table.
    x.ok = run_in(d, cmd) == 0;
    // Point data directory 14 of `from` at its .clrhdr, write `to` (and `mixed` with Flags 0).
    auto managed = [&](const std::string& from, const std::string& to, const std::string& mixed) {
      std::string b = read_file(d + from);
      const auto [raw, rva] = section(b, ".clrhdr");
      if (raw == 0) return false;
      put32(b, directories(b) + 14 * 8, rva);
      put32(b, directories(b) + 14 * 8 + 4, 72);
      write_file(d + to, b);
      put32(b, raw + 16, 0);  // Flags: not IL-only
      if (!mixed.empty()) write_file(d + mixed, b);
      return true;
    };
    x.ok = x.ok && managed("/clr/plain.dll", "/clr/il.dll", "/clr/mixed.dll") && managed("/clr/plain.exe", "/clr/il.exe", "");
    if (x.ok) {
      std::string m = read_file(d + "/mod/m_mod.dll");
      put32(m, bound_at, 0xdeadbeef);
      put16(m, bound_at + 4, 0x20);
      put16(m, bound_at + 6, 1);
      put32(m, bound_at + 8, 0x12345678);
      put16(m, bound_at + 12, 0x2c);
      m.replace(bound_at + 0x20, 12, std::string("nowhere.dll\0", 12));
      m.replace(bound_at + 0x2c, 14, std::string("elsewhere.dll\0", 14));
      put32(m, directories(m) + 11 * 8, bound_at);
      put32(m, directories(m) + 11 * 8 + 4, bound_size);
      write_file(d + "/mod/bound.dll", m);
    }
    // Delay-load: dl/delay.exe (lld-link) delay-loads bar.dll (in pdl/, found
    // through PATH) for bar_fn and bar_gone (not exported) and ghost.dll
    // (nowhere), and calls all three through its own __delayLoadHelper2,
    // which resolves as the CRT's does (LoadLibraryA, GetProcAddress) and
    // prints what failed. (mingw's dlltool -y delay libraries cannot serve:
    // binutils 2.40's ld leaves data directory 13 empty, so no reader sees them.)
    write_file(d + "/bar.c", "int bar_fn(int x){return x*2;}\n");
    write_file(d + "/bar.def", "LIBRARY bar.dll\nEXPORTS\n  bar_fn\n");
    write_file(d + "/barp.def", "LIBRARY bar.dll\nEXPORTS\n  bar_fn\n  bar_gone\n");
    write_file(d + "/k32.def", "LIBRARY kernel32.dll\nEXPORTS\n  LoadLibraryA\n  GetProcAddress\n  GetStdHandle\n  WriteFile\n  ExitProcess\n");
    write_file(d + "/delay.c", R"c(typedef void* HMODULE;
__declspec(dllimport) HMODULE __stdcall LoadLibraryA(const char*);
__declspec(dllimport) void* __stdcall GetProcAddress(HMODULE, const char*);
__declspec(dllimport) void* __stdcall GetStdHandle(unsigned long);
__declspec(dllimport) int __stdcall WriteFile(void*, const void*, unsigned long, unsigned long*, void*);
__declspec(dllimport) void __stdcall ExitProcess(unsigned);
typedef struct { unsigned attributes, dll_name, module_handle, iat, int_, bound_iat, unload_iat, stamp; } descr;
extern char __ImageBase;
static void out(const char* s) { unsigned long n = 0, len = 0; while (s[len]) ++len; WriteFile(GetStdHandle((unsigned long)-11), s, len, &n, 0); }
static int failed(void) { return -1; }
void* __delayLoadHelper2(const descr* d, void** slot) {
  char* base = &__ImageBase;
  HMODULE* hm = (HMODULE*)(base + d->module_handle);
  const char* dll = base + d->dll_name;
  if (!*hm) *hm = LoadLibraryA(dll);
  if (!*hm) { out("missing-dll "); out(dll); out("\n"); return (void*)failed; }
  unsigned long long e = ((unsigned long long*)(base + d->int_))[slot - (void**)(base + d->iat)];
  void* p = (e >> 63) ? GetProcAddress(*hm, (const char*)(e & 0xffff)) : GetProcAddress(*hm, base + (unsigned)e + 2);
  if (!p) { out("missing-export "); out(dll); out("."); out(base + (unsigned)e + 2); out("\n"); return (void*)failed; }
  *slot = p;
  return p;
}
int bar_fn(int); int bar_gone(void); int boo(void);
int mainCRTStartup(void) {
  out(bar_fn(21) == 42 ? "bar_fn 42\n" : "bar_fn wrong\n");
  bar_gone();
  boo();
  ExitProcess(0);
  return 0;
}
)c");
    x.delay = x.ok && have_tool("lld-link-14") && have_tool("llvm-dlltool-14") && have_tool("clang-14") &&
              run_in(d, cc + " -shared bar.c bar.def -o pdl/bar.dll && "
                         "llvm-dlltool-14 -m i386:x86-64 -d k32.def -l k32.lib && "
                         "llvm-dlltool-14 -m i386:x86-64 -d barp.def -l barp.lib && "
                         "llvm-dlltool-14 -m i386:x86-64 -d ghost.def -l ghost.lib && "
                         "clang-14 --target=x86_64-pc-windows-msvc -O1 -c delay.c -o delay.obj && "
                         "lld-link-14 /nologo /entry:mainCRTStartup /nodefaultlib /subsystem:console delay.obj k32.lib "
                         "barp.lib ghost.lib /delayload:bar.dll /delayload:ghost.dll /out:dl/delay.exe") == 0;
    // The wineprefix: its System32 and Windows folder get the dep_K.dll
    // that belong there; they are the emulation's --windows-root too.
    boot.join();
    if (x.ok && std::filesystem::exists(wine64)) {
      x.wine = std::filesystem::exists(x.system32 + "/kernel32.dll");
      if (x.wine) {
        for (const auto& [k, where] : search_cases)
          for (const std::string& to : where)
            if (to[0] == '@')
              std::filesystem::copy_file(d + "/dep_" + k + ".dll",
                                         (to == "@sys" ? x.system32 : x.windows) + "/dep_" + k + ".dll",
                                         std::filesystem::copy_options::overwrite_existing);
        std::filesystem::copy_file(d + "/kn/dep_kd.dll", x.system32 + "/dep_kd.dll",
                                   std::filesystem::copy_options::overwrite_existing);
      }
    }
    return x;
  }();
  return w;
}

// "Z:\\a\\b" (as wine's log doubles them) or "Z:\a\b" -> "/a/b"; "C:\..." -> the prefix's drive_c.
std::string host_path(const world& w, std::string p) {
  std::string out;
  for (std::size_t i = 0; i < p.size(); ++i) {
    if (p[i] == '\\') {
      out.push_back('/');
      if (i + 1 < p.size() && p[i + 1] == '\\') ++i;
    } else {
      out.push_back(p[i]);
    }
  }
  if (out.size() >= 3 && (out[0] == 'Z' || out[0] == 'z') && out[1] == ':') return out.substr(2);
  if (out.size() >= 3 && (out[0] == 'C' || out[0] == 'c') && out[1] == ':') return w.prefix + "/drive_c" + out.substr(2);
  return out;
}

std::string wine_path(const std::string& unix_path) {
  std::string out = "Z:";
  for (char c : unix_path) out.push_back(c == '/' ? '\\' : c);
  return out;
}

// One wine run: its output, where it loaded each DLL from (lower-case base
// name -> host path, the last one loaded), the "No implementation for X.Y"
// exports, and the "Library X (which is needed by ...) not found" DLLs.
struct wine_run {
  bool ran = false;
  std::vector<std::string> out;
  std::map<std::string, std::string> loaded;
  std::set<std::string> no_implementation;
  std::set<std::string> not_found;
};

wine_run run_wine(const world& w, const std::string& cwd, const std::string& program, const std::string& args,
                  const std::string& winepath) {
  wine_run r;
  if (!w.wine) return r;
  const auto c = capture("cd " + shell_quote(cwd) + " && WINEPREFIX=" + shell_quote(w.prefix) +
                         " WINEDLLOVERRIDES='mscoree,mshtml=' WINEDEBUG=+loaddll,warn+module" +
                         (winepath.empty() ? "" : " WINEPATH=" + shell_quote(winepath)) + " timeout 120 " + wine64 + " " +
                         shell_quote(program) + " " + args + " 2>&1");
  r.out = lines(c.out);
  for (std::string& line : r.out)  // a Windows program's text-mode stdout ends its lines in "\r\n"
    if (!line.empty() && line.back() == '\r') line.pop_back();
  for (const std::string& line : r.out) {
    r.ran = r.ran || line.find("trace:loaddll") != std::string::npos;
    if (auto at = line.find("Loaded L\""); at != std::string::npos) {
      const std::size_t end = line.find('"', at + 9);
      const std::string path = host_path(w, line.substr(at + 9, end - at - 9));
      r.loaded[lower(std::filesystem::path(path).filename().string())] = path;
    }
    if (auto at = line.find("No implementation for "); at != std::string::npos) {
      const std::string rest = line.substr(at + 22);
      r.no_implementation.insert(rest.substr(0, rest.find(' ')));
    }
    if (auto at = line.find("import_dll Library "); at != std::string::npos) {
      const std::string rest = line.substr(at + 19);
      r.not_found.insert(rest.substr(0, rest.find(' ')));
    }
  }
  return r;
}

// The driver under wine in `mode` (altered, python, plain), once per run of
// this program: every m_K.dll of the search-order fixture, then
// kn/m_known.dll, clr/il.dll, clr/mixed.dll and mod/bound.dll; PATH is
// pathdir/, the AddDllDirectory folder dlldir/, the current folder cwd/.
const wine_run& driver_run(const world& w, const std::string& mode) {
  static std::map<std::string, wine_run> runs;
  if (auto it = runs.find(mode); it != runs.end()) return it->second;
  const std::string& d = w.dir;
  std::string args = mode;
  for (const auto& c : search_cases) args += " " + shell_quote(wine_path(d + "/mod/m_" + c.first + ".dll"));
  for (const char* more : {"/kn/m_known.dll", "/clr/il.dll", "/clr/mixed.dll", "/mod/bound.dll"})
    args += " " + shell_quote(wine_path(d + more));
  args += " -d " + shell_quote(wine_path(d + "/dlldir"));
  return runs[mode] = run_wine(w, d + "/cwd", d + "/host/driver.exe", args, wine_path(d + "/pathdir"));
}

// Where wine loaded DLL `name` (lower case) from; "" if it did not.
std::string loaded_from(const wine_run& r, const std::string& name) {
  auto it = r.loaded.find(name);
  return it == r.loaded.end() ? std::string() : it->second;
}

bool has_line(const wine_run& r, const std::string& text) {
  return std::find(r.out.begin(), r.out.end(), text) != r.out.end();
}

std::uint32_t find_object(const windows_link& l, std::string_view name) {
  for (std::size_t i = 0; i < l.link.objects.size(); ++i)
    if (lower(l.link.objects[i].name) == lower(std::string(name))) return static_cast<std::uint32_t>(i);
  return no_object;
}

std::set<std::string> findings(const windows_link& l) {
  std::set<std::string> out;
  for (const auto& f : l.findings)
    out.insert(std::string(to_string(f.problem)) + " " + f.dll_name + (f.symbol.empty() ? "" : "." + f.symbol) +
               (f.delay ? " [delay]" : ""));
  return out;
}

// linkscope-ldd's answers for several files at once: file -> (lower-case DLL
// name -> the text after " => ").
std::map<std::string, std::map<std::string, std::string>> ldd_lists(const std::string& args) {
  std::map<std::string, std::map<std::string, std::string>> out;
  const auto r = capture(shell_quote(tool_path("linkscope-ldd")) + " " + args + " 2>/dev/null");
  std::string file;
  for (const std::string& line : lines(r.out)) {
    if (!line.empty() && line[0] != '\t' && line.back() == ':') {
      file = line.substr(0, line.size() - 1);
      continue;
    }
    const auto arrow = line.find(" => ");
    if (line.empty() || line[0] != '\t' || arrow == std::string::npos) continue;
    out[file][lower(line.substr(1, arrow - 1))] = line.substr(arrow + 4);
  }
  return out;
}

}  // namespace

TEST_CASE("LoadLibraryExW search order per load mode, against wine", "[winload][wine]") {
  const world& w = build();
  if (!w.ok || !w.wine || !std::filesystem::exists(tool_path("linkscope-ldd"))) {
    WARN("mingw, wine64 or linkscope-ldd missing: skipped");
    return;
  }
  const std::string d = w.dir;
  std::string dlls_ours;
  for (const auto& c : search_cases) dlls_ours += " " + shell_quote(d + "/mod/m_" + c.first + ".dll");
  struct mode {
    const char* driver;  // the driver's mode
    const char* ours;    // --load-mode
  };
  for (const mode m : {mode{"altered", "altered"}, mode{"python", "python"}, mode{"plain", "program"}}) {
    SECTION(m.ours) {
      const wine_run& wine = driver_run(w, m.driver);
      REQUIRE(wine.ran);
      CHECK(std::none_of(wine.out.begin(), wine.out.end(),
                         [](const std::string& l) { return l.rfind("adddir-fail", 0) == 0; }));  // AddDllDirectory worked
      const auto ours = ldd_lists(std::string("--load-mode ") + m.ours + " --executable " + shell_quote(d + "/host/driver.exe") +
                                  " --path " + shell_quote(d + "/pathdir") + " --dll-dir " + shell_quote(d + "/dlldir") +
                                  " --current-dir " + shell_quote(d + "/cwd") + " --windows-root " + shell_quote(w.system32) +
                                  dlls_ours);
      // Per fixture: wine's "ok" and where it loaded dep_K.dll from, or
      // "fail"; ours: the path of dep_K.dll, or "fail" when it is not found.
      std::map<std::string, std::string> wine_says, we_say;
      for (const auto& [k, where] : search_cases) {
        const std::string dll = wine_path(d + "/mod/m_" + k + ".dll");
        const std::string dep = "dep_" + k + ".dll";
        if (has_line(wine, "ok " + dll)) {
          auto it = wine.loaded.find(dep);
          wine_says[k] = it == wine.loaded.end() ? "ok, but not loaded?" : it->second;
        } else {
          CHECK(std::find_if(wine.out.begin(), wine.out.end(), [&](const std::string& l) {
                  return l.rfind("fail " + dll + " 126", 0) == 0;  // ERROR_MOD_NOT_FOUND
                }) != wine.out.end());
          wine_says[k] = "fail";
        }
        const auto file = ours.find(d + "/mod/m_" + k + ".dll");
        REQUIRE(file != ours.end());
        const auto to = file->second.find(dep);
        REQUIRE(to != file->second.end());
        we_say[k] = to->second == "not found" ? "fail" : to->second;
      }
      CHECK(we_say == wine_says);
      // What the documentation says of each mode, where the fixtures tell it.
      if (std::string(m.ours) == "altered") {
        CHECK(wine_says["o4"] == d + "/mod/dep_o4.dll");
        CHECK(wine_says["app"] == "fail");
      } else if (std::string(m.ours) == "python") {
        CHECK(wine_says["path"] == "fail");
        CHECK(wine_says["cwd"] == "fail");
        CHECK(wine_says["win"] == "fail");
        CHECK(wine_says["o5"] == d + "/host/dep_o5.dll");
        CHECK(wine_says["o6"] == d + "/dlldir/dep_o6.dll");
      } else {
        CHECK(wine_says["mod"] == "fail");
        CHECK(wine_says["o1"] == d + "/cwd/dep_o1.dll");
        CHECK(wine_says["o2"] == w.windows + "/dep_o2.dll");
        CHECK(wine_says["o3"] == w.system32 + "/dep_o3.dll");
        CHECK(wine_says["o4"] == d + "/host/dep_o4.dll");
      }
    }
  }
}

TEST_CASE("KnownDLLs: the system copy's exports, never an application folder's decoy", "[winload][wine]") {
  const world& w = build();
  if (!w.ok || !w.wine) {
    WARN("mingw or wine64 missing: skipped");
    return;
  }
  const std::string d = w.dir;
  // Wine binds normaliz.dll's exports from its own normaliz.dll whatever the
  // mode: decoy_only (which only kn\normaliz.dll exports) has no
  // implementation. (Wine's reason is its load order, builtin before native,
  // not a KnownDLLs list: with LOAD_WITH_ALTERED_SEARCH_PATH its log names
  // the decoy's path with ": builtin". Windows takes KnownDLLs from System32.)
  for (const char* mode : {"altered", "python", "plain"}) {
    const wine_run& wine = driver_run(w, mode);
    REQUIRE(wine.ran);
    INFO(mode);
    std::set<std::string> normaliz;
    for (const std::string& e : wine.no_implementation)
      if (e.rfind("normaliz.dll.", 0) == 0) normaliz.insert(e);
    CHECK(normaliz == std::set<std::string>{"normaliz.dll.decoy_only"});
    CHECK(has_line(wine, "ok " + wine_path(d + "/kn/m_known.dll")));
    winload_options opts;
    opts.windows_root = w.system32;
    opts.executable = d + "/host/driver.exe";
    opts.mode = std::string(mode) == "altered" ? load_mode::altered
                : std::string(mode) == "python" ? load_mode::python
                                                : load_mode::program;
    auto ours = load_windows(d + "/kn/m_known.dll", opts);
    REQUIRE(ours);
    CHECK(findings(*ours) == std::set<std::string>{"missing-export normaliz.dll.decoy_only"});
    const auto n = find_object(*ours, "normaliz.dll");
    REQUIRE(n != no_object);
    CHECK(ours->link.objects[n].path == w.system32 + "/normaliz.dll");
    CHECK(ours->info[n].rule == dll_rule::known_dlls);
  }
  // --known-dlls: a name added to KnownDLLs is taken from System32, before
  // the module's folder, in every mode. Wine has no KnownDLLs list to extend,
  // so this follows Microsoft's "Dynamic-link library search order" ("If the
  // DLL is on the list of known DLLs for the version of Windows on which the
  // application is running, the system uses its copy of the known DLL").
  winload_options opts;
  opts.windows_root = w.system32;
  opts.mode = load_mode::altered;
  auto plain = load_windows(d + "/kn/m_kd.dll", opts);
  REQUIRE(plain);
  const auto p = find_object(*plain, "dep_kd.dll");
  REQUIRE(p != no_object);
  CHECK(plain->link.objects[p].path == d + "/kn/dep_kd.dll");
  CHECK(plain->info[p].rule == dll_rule::module_dir);
  auto cli = capture(shell_quote(tool_path("linkscope-ldd")) + " --tree --load-mode altered --known-dlls 'x.dll;DEP_KD.dll' --windows-root " +
                     shell_quote(w.system32) + " " + shell_quote(d + "/kn/m_kd.dll") + " 2>&1");
  CHECK(cli.out.find("  dep_kd.dll => " + w.system32 + "/dep_kd.dll [known-dlls system]\n") != std::string::npos);
  // Without a Windows tree, a KnownDLL is the system's copy, not searched for.
  auto bare = capture(shell_quote(tool_path("linkscope-ldd")) + " --load-mode altered --known-dlls dep_kd.dll " +
                      shell_quote(d + "/kn/m_kd.dll") + " 2>&1");
  CHECK(bare.out.find("\tdep_kd.dll => dep_kd.dll (system, not checked)\n") != std::string::npos);
}

TEST_CASE("delay-load imports that are called: wine resolves them as we report", "[winload][wine]") {
  const world& w = build();
  if (!w.ok || !w.delay || !w.wine) {
    WARN("mingw, lld-link-14 or wine64 missing: skipped");
    return;
  }
  const std::string d = w.dir;
  // Our delay imports are the ones llvm-readobj-14 lists.
  std::set<std::string> readobj;
  {
    std::string dll;
    bool delay = false;
    for (const std::string& line : lines(capture("llvm-readobj-14 --coff-imports " + shell_quote(d + "/dl/delay.exe")).out)) {
      if (line.rfind("DelayImport {", 0) == 0) delay = true;
      else if (line.rfind("Import {", 0) == 0) delay = false;
      else if (delay && line.rfind("  Name: ", 0) == 0) dll = line.substr(8);
      else if (delay && line.find("Symbol: ") != std::string::npos) {
        const std::string s = line.substr(line.find("Symbol: ") + 8);
        readobj.insert(dll + "!" + s.substr(0, s.find(' ')));
      }
    }
  }
  CHECK(readobj == std::set<std::string>{"bar.dll!bar_fn", "bar.dll!bar_gone", "ghost.dll!boo"});
  auto mapped = linkscope::mapped_file::open(d + "/dl/delay.exe");
  REQUIRE(mapped);
  auto img = linkscope::pe::image::parse(mapped->bytes());
  REQUIRE(img);
  auto delayed = img->delay_imports();
  REQUIRE(delayed);
  std::set<std::string> ours_table;
  for (const auto& dll : *delayed)
    for (const auto& fn : dll.functions) ours_table.insert(std::string(dll.name) + "!" + std::string(fn.name));
  CHECK(ours_table == readobj);

  // Wine, calling all three: bar.dll from PATH, bar_gone and ghost.dll fail.
  const wine_run wine = run_wine(w, d + "/dl", d + "/dl/delay.exe", "", wine_path(d + "/pdl"));
  REQUIRE(wine.ran);
  CHECK(has_line(wine, "bar_fn 42"));
  CHECK(loaded_from(wine, "bar.dll") == d + "/pdl/bar.dll");
  std::set<std::string> wine_failed;
  for (const std::string& line : wine.out)
    if (line.rfind("missing-dll ", 0) == 0 || line.rfind("missing-export ", 0) == 0)
      wine_failed.insert(line.substr(0, line.find(' ') + 1) + line.substr(line.find(' ') + 1) + " [delay]");
  CHECK(wine_failed == std::set<std::string>{"missing-dll ghost.dll [delay]", "missing-export bar.dll.bar_gone [delay]"});

  winload_options opts;
  opts.windows_root = w.system32;
  opts.path = {d + "/pdl"};
  auto ours = load_windows(d + "/dl/delay.exe", opts);
  REQUIRE(ours);
  CHECK(findings(*ours) == wine_failed);
  const auto bar = find_object(*ours, "bar.dll");
  REQUIRE(bar != no_object);
  CHECK(ours->link.objects[bar].path == wine.loaded.at("bar.dll"));
  CHECK(ours->info[bar].rule == dll_rule::path);
  CHECK(ours->info[bar].delay_only);
  CHECK(!ours->any_problem());
  bool bar_fn = false;
  for (const auto& b : ours->link.bindings) bar_fn = bar_fn || (b.to == bar && b.symbol == "bar_fn");
  CHECK(bar_fn);
}

TEST_CASE("forwarders: two hops, by ordinal, into an API set, and six that fail, against wine", "[winload][wine]") {
  const world& w = build();
  if (!w.ok || !w.wine) {
    WARN("mingw or wine64 missing: skipped");
    return;
  }
  const std::string d = w.dir;
  // The forwarders are what the .def files made (objdump -p).
  const std::string table = capture("x86_64-w64-mingw32-objdump -p " + shell_quote(d + "/fw/a.dll")).out;
  for (const char* f : {"b.fb", "c.#5", "api-ms-win-core-synch-l1-2-0.Sleep", "ghost.Foo"})
    CHECK(table.find(std::string("Forwarder RVA -- ") + f + "\n") != std::string::npos);

  const wine_run wine = run_wine(w, d + "/fw", d + "/fw/fwd.exe", "", "");
  REQUIRE(wine.ran);
  // fa ran c.fc (3) through b.fb; fo ran c.#5, which is fc2 (4).
  CHECK(has_line(wine, "fa 3 fo 4"));
  CHECK(wine.no_implementation == std::set<std::string>{"a.dll.f2bad", "a.dll.fbad", "a.dll.fext", "a.dll.fghost",
                                                        "a.dll.fobad", "a.dll.fsbad"});

  winload_options opts;
  opts.windows_root = w.system32;
  auto ours = load_windows(d + "/fw/fwd.exe", opts);
  REQUIRE(ours);
  // Wine says "No implementation for" for every forwarder whose target is missing.
  std::set<std::string> ours_missing;
  for (const auto& f : ours->findings) {
    CHECK(f.problem == import_problem::forwarder_missing);
    ours_missing.insert(f.dll_name + "." + f.symbol);
  }
  CHECK(ours_missing == wine.no_implementation);
  // The DLLs wine loaded from our folders: the same.
  std::set<std::string> wine_ours, ours_native;
  for (const auto& [name, path] : wine.loaded)
    if (path.rfind(d + "/", 0) == 0) wine_ours.insert(path);
  for (std::size_t i = 0; i < ours->link.objects.size(); ++i)
    if (ours->link.objects[i].path.rfind(d + "/", 0) == 0) ours_native.insert(ours->link.objects[i].path);
  CHECK(ours_native == wine_ours);
  CHECK(wine_ours == std::set<std::string>{d + "/fw/fwd.exe", d + "/fw/a.dll", d + "/fw/b.dll", d + "/fw/c.dll"});
  // Where the resolved ones bind: c.dll twice, the API set's host (wine's
  // apisetschema: kernelbase.dll) once.
  std::map<std::string, std::string> bound;
  for (const auto& b : ours->link.bindings)
    if (b.from == 0) bound[std::string(b.symbol)] = ours->link.objects[b.to].name;
  CHECK(bound["fa"] == "c.dll");
  CHECK(bound["fo"] == "c.dll");
  CHECK(lower(bound["fs"]) == "kernelbase.dll");
  for (const auto& f : ours->findings)
    if (f.symbol == "f2bad") CHECK(f.detail == "b.fbad2 -> c.missing");
}

TEST_CASE("CLR images: an IL-only one stops at mscoree.dll, a mixed-mode one loads its imports, as wine does",
          "[winload][wine]") {
  const world& w = build();
  if (!w.ok || !w.wine) {
    WARN("mingw or wine64 missing: skipped");
    return;
  }
  const std::string d = w.dir;
  CHECK(capture("x86_64-w64-mingw32-objdump -p " + shell_quote(d + "/clr/il.dll")).out.find(" 00000048 CLR Runtime Header") !=
        std::string::npos);
  // Wine (mscoree disabled, as every run here): il.dll wants mscoree.dll and
  // nothing else; its import of ghost.dll is never looked at. mixed.dll's is.
  const wine_run& wine = driver_run(w, "altered");
  REQUIRE(wine.ran);
  bool il_wants_mscoree = false, ghost_for_il = false, ghost_for_mixed = false;
  for (const std::string& line : wine.out) {
    il_wants_mscoree = il_wants_mscoree || (line.find("mscoree.dll not found, IL-only binary") != std::string::npos &&
                                            line.find("il.dll") != std::string::npos);
    const bool ghost = line.find("Library ghost.dll (which is needed by") != std::string::npos;
    ghost_for_il = ghost_for_il || (ghost && line.find("\\\\il.dll") != std::string::npos);
    ghost_for_mixed = ghost_for_mixed || (ghost && line.find("\\\\mixed.dll") != std::string::npos);
  }
  CHECK(il_wants_mscoree);
  CHECK(!ghost_for_il);
  CHECK(ghost_for_mixed);
  CHECK(!has_line(wine, "ok " + wine_path(d + "/clr/il.dll")));
  CHECK(!has_line(wine, "ok " + wine_path(d + "/clr/mixed.dll")));

  winload_options opts;
  opts.windows_root = w.system32;
  opts.mode = load_mode::altered;
  auto il = load_windows(d + "/clr/il.dll", opts);
  REQUIRE(il);
  CHECK(il->root_managed);
  CHECK(il->root_il_only);
  CHECK(il->info[0].il_only);
  REQUIRE(il->link.objects[0].needed.size() == 1);
  CHECK(il->link.objects[0].needed[0] == "mscoree.dll");
  CHECK(find_object(*il, "ghost.dll") == no_object);
  CHECK(il->findings.empty());
  bool cor = false;
  for (const auto& b : il->link.bindings) cor = cor || (b.from == 0 && b.symbol == "_CorDllMain");
  CHECK(cor);
  auto mixed = load_windows(d + "/clr/mixed.dll", opts);
  REQUIRE(mixed);
  CHECK(mixed->root_managed);
  CHECK(!mixed->root_il_only);
  CHECK(findings(*mixed) == std::set<std::string>{"missing-dll ghost.dll"});
  // A program: _CorExeMain.
  const wine_run exe = run_wine(w, d + "/clr", d + "/clr/il.exe", "", "");
  REQUIRE(exe.ran);
  CHECK(std::any_of(exe.out.begin(), exe.out.end(), [](const std::string& l) {
    return l.find("mscoree.dll not found, IL-only binary L\"il.exe\" cannot be loaded") != std::string::npos;
  }));
  CHECK(exe.not_found.empty());
  auto il_exe = load_windows(d + "/clr/il.exe", opts);
  REQUIRE(il_exe);
  CHECK(il_exe->root_il_only);
  CHECK(il_exe->link.objects[0].needed == std::vector<std::string_view>{"mscoree.dll"});
  CHECK(il_exe->findings.empty());
  bool exe_main = false;
  for (const auto& b : il_exe->link.bindings) exe_main = exe_main || (b.from == 0 && b.symbol == "_CorExeMain");
  CHECK(exe_main);
  auto tree = capture(shell_quote(tool_path("linkscope-ldd")) + " --tree --windows-root " + shell_quote(w.system32) + " " +
                      shell_quote(d + "/clr/il.dll") + "; echo rc=$?");
  CHECK(tree.out.rfind(d + "/clr/il.dll [main main, managed IL-only]\n  mscoree.dll => " + w.system32 + "/mscoree.dll [", 0) == 0);
  CHECK(tree.out.find("ghost.dll") == std::string::npos);
  CHECK(tree.out.find("rc=0") != std::string::npos);
  // --json says the same: "managed" and "il_only" as the CLR header's flags
  // (objdump -p above; the fixture wrote ILONLY into il.*, 0 into mixed.dll,
  // no header into plain.dll), for each file of one run.
  auto json = capture(shell_quote(tool_path("linkscope-ldd")) + " --json --windows-root " + shell_quote(w.system32) + " " +
                      shell_quote(d + "/clr/il.dll") + " " + shell_quote(d + "/clr/mixed.dll") + " " +
                      shell_quote(d + "/clr/plain.dll") + " " + shell_quote(d + "/clr/il.exe"));
  std::vector<std::string> flags;
  for (std::size_t at = json.out.find("\"format\":"); at != std::string::npos; at = json.out.find("\"format\":", at + 1)) {
    const std::size_t end = json.out.find("\"assemblies\"", at);
    REQUIRE(end != std::string::npos);
    flags.push_back(json.out.substr(at, end - at));
  }
  CHECK(flags == std::vector<std::string>{"\"format\":\"pe\",\"managed\":true,\"il_only\":true,",
                                          "\"format\":\"pe\",\"managed\":true,\"il_only\":false,",
                                          "\"format\":\"pe\",\"managed\":false,\"il_only\":false,",
                                          "\"format\":\"pe\",\"managed\":true,\"il_only\":true,"});
}

TEST_CASE("bound imports are read, never used to resolve: wine and we load bound.dll as m_mod.dll", "[winload][wine]") {
  const world& w = build();
  if (!w.ok) {
    WARN("mingw missing: skipped");
    return;
  }
  const std::string d = w.dir;
  // objdump -p shows the directory entry the fixture wrote.
  CHECK(capture("x86_64-w64-mingw32-objdump -p " + shell_quote(d + "/mod/bound.dll")).out.find(
            "Entry b 0000000000000500 00000040 Bound Import Directory") != std::string::npos);
  auto mapped = linkscope::mapped_file::open(d + "/mod/bound.dll");
  REQUIRE(mapped);
  auto img = linkscope::pe::image::parse(mapped->bytes());
  REQUIRE(img);
  auto table = img->bound_imports();
  REQUIRE(table);
  REQUIRE(table->size() == 2);
  CHECK((*table)[0].module == "nowhere.dll");
  CHECK((*table)[0].time_date_stamp == 0xdeadbeef);
  CHECK(!(*table)[0].forwarder_ref);
  CHECK((*table)[1].module == "elsewhere.dll");
  CHECK((*table)[1].time_date_stamp == 0x12345678);
  CHECK((*table)[1].forwarder_ref);

  winload_options opts;
  opts.mode = load_mode::altered;
  if (w.wine) opts.windows_root = w.system32;
  auto bound = load_windows(d + "/mod/bound.dll", opts);
  auto plain = load_windows(d + "/mod/m_mod.dll", opts);
  REQUIRE(bound);
  REQUIRE(plain);
  CHECK(find_object(*bound, "nowhere.dll") == no_object);
  CHECK(find_object(*bound, "elsewhere.dll") == no_object);
  CHECK(bound->link.objects.size() == plain->link.objects.size());
  for (std::size_t i = 1; i < std::min(bound->link.objects.size(), plain->link.objects.size()); ++i)
    CHECK(bound->link.objects[i].path == plain->link.objects[i].path);
  CHECK(bound->findings.empty());
  if (!w.wine) return;
  const wine_run& wine = driver_run(w, "altered");
  REQUIRE(wine.ran);
  CHECK(has_line(wine, "ok " + wine_path(d + "/mod/bound.dll")));
  CHECK(loaded_from(wine, "dep_mod.dll") == d + "/mod/dep_mod.dll");
  CHECK(std::none_of(wine.out.begin(), wine.out.end(), [](const std::string& l) {
    return l.find("nowhere") != std::string::npos || l.find("elsewhere") != std::string::npos;
  }));
}

// linkscope-check loads a .pyd as Python 3.8+ does, not as a program: a conda
// environment env/ with python.exe (the driver, copied) at its root,
// Library/bin/dep_lib.dll, and Lib/site-packages/pkg/ with dep_own.dll and
// two extensions: ok.pyd (dep_own, dep_lib) and ext.pyd (also dep_user, which
// lies only in a PATH folder outside the environment). Wine runs the driver in
// python mode with conda's DLL folders added (AddDllDirectory, as conda's
// python does at start-up) and that PATH: its loaded paths and "not found"
// DLLs are the oracle. Program mode would find dep_user.dll through PATH.
TEST_CASE("linkscope-check: a .pyd in a conda environment is loaded as Python 3.8+ loads it, against wine",
          "[winload][wine][check]") {
  const world& w = build();
  if (!w.ok || !w.wine) {
    WARN("mingw or wine64 missing: skipped");
    return;
  }
  const std::string d = scratch_dir("winload_wine_pyd");
  const std::string env = d + "/env", pkg = env + "/Lib/site-packages/pkg";
  std::filesystem::create_directories(env + "/Library/bin");
  std::filesystem::create_directories(pkg);
  std::filesystem::create_directories(d + "/userpath");
  write_file(d + "/lib.c", "__declspec(dllexport) int lib_fn(void) { return 1; }\n");
  write_file(d + "/own.c", "__declspec(dllexport) int own_fn(void) { return 2; }\n");
  write_file(d + "/user.c", "__declspec(dllexport) int user_fn(void) { return 3; }\n");
  write_file(d + "/ok.c", "__declspec(dllimport) int lib_fn(void); __declspec(dllimport) int own_fn(void);\n"
                          "__declspec(dllexport) int PyInit_ok(void) { return lib_fn() + own_fn(); }\n");
  write_file(d + "/ext.c", "__declspec(dllimport) int lib_fn(void); __declspec(dllimport) int own_fn(void);\n"
                           "__declspec(dllimport) int user_fn(void);\n"
                           "__declspec(dllexport) int PyInit_ext(void) { return lib_fn() + own_fn() + user_fn(); }\n");
  const std::string cc = "x86_64-w64-mingw32-gcc ";
  REQUIRE(run_in(d, "set -e; " + cc + "-shared -o env/Library/bin/dep_lib.dll lib.c; " + cc + "-shared -o " +
                        shell_quote(pkg + "/dep_own.dll") + " own.c; " + cc + "-shared -o userpath/dep_user.dll user.c; " +
                        cc + "-shared -o " + shell_quote(pkg + "/ok.pyd") + " ok.c env/Library/bin/dep_lib.dll " +
                        shell_quote(pkg + "/dep_own.dll") + "; " + cc + "-shared -o " + shell_quote(pkg + "/ext.pyd") +
                        " ext.c env/Library/bin/dep_lib.dll " + shell_quote(pkg + "/dep_own.dll") +
                        " userpath/dep_user.dll; cp " + shell_quote(w.dir + "/host/driver.exe") +
                        " env/python.exe > make.log 2>&1") == 0);
  const wine_run wine = run_wine(w, d, env + "/python.exe",
                                 "python " + shell_quote(wine_path(pkg + "/ok.pyd")) + " " +
                                     shell_quote(wine_path(pkg + "/ext.pyd")) + " -d " + shell_quote(wine_path(env)) +
                                     " -d " + shell_quote(wine_path(env + "/Library/bin")),
                                 wine_path(d + "/userpath"));
  REQUIRE(wine.ran);
  CHECK(has_line(wine, "ok " + wine_path(pkg + "/ok.pyd")));
  CHECK(std::find_if(wine.out.begin(), wine.out.end(), [&](const std::string& l) {
          return l.rfind("fail " + wine_path(pkg + "/ext.pyd") + " 126", 0) == 0;
        }) != wine.out.end());
  REQUIRE(wine.not_found == std::set<std::string>{"dep_user.dll"});

  linkscope::resolve::prefix_options options;
  options.use_dpkg = false;
  options.windows.windows_root = w.system32;
  options.windows.path = {d + "/userpath"};  // a PATH the user gives: a program would search it
  auto report = linkscope::resolve::check_prefix(env, options);
  REQUIRE(report);
  for (const char* name : {"ok.pyd", "ext.pyd"}) {
    INFO(name);
    const linkscope::resolve::file_report* fr = nullptr;
    for (const auto& f : report->files)
      if (f.path == pkg + "/" + name) fr = &f;
    REQUIRE(fr != nullptr);
    std::map<std::string, std::string> ours;
    for (const auto& n : fr->needed)
      if (n.in_prefix) ours[lower(n.name)] = n.file;
    // Wine loaded dep_own.dll beside the .pyd and dep_lib.dll from Library/bin.
    CHECK(ours["dep_own.dll"] == loaded_from(wine, "dep_own.dll"));
    CHECK(ours["dep_lib.dll"] == loaded_from(wine, "dep_lib.dll"));
    std::set<std::string> missing;
    for (const auto& m : fr->missing) missing.insert(lower(m.name));
    CHECK(missing == (std::string(name) == "ext.pyd" ? wine.not_found : std::set<std::string>{}));
  }
}
