// resolve/dyld.hpp against real-tool oracles, for what tests/resolve/test_dyld.cpp
// leaves open (issue 17): weak-definition coalescing, chained-fixup imports,
// @rpath through a grandparent's LC_RPATH, renaming trie re-exports, the
// nlist exports of a dylib without a trie, LC_LOAD_UPWARD_DYLIB and
// LC_LAZY_LOAD_DYLIB, the DYLD_* path options of linkscope-ldd, and bad input.
//
// One scratch folder, one shell script (two compiler runs, about 40 links):
// clang-14 -target {x86_64,arm64}-apple-macos11, ld64.lld-14 (bind opcodes)
// and ld64.lld-16 -fixup_chains (arm64). There is no dyld here, so the
// expected answers come from the tools — llvm-objdump --weak-bind/--bind/
// --lazy-bind/--exports-trie/--private-header(s) (what llvm-otool -hv / -l
// print), llvm-objdump-16 --chained-fixups, llvm-otool -l, llvm-nm -m — and,
// where only dyld's run-time rule decides, from dyld's source (dyld-1378,
// cited at each use). Each tool runs once over all the weak/ and chained/
// files (prefetch), as each process start costs tens of milliseconds. What lld cannot write is patched into its output at test time,
// and each patch is checked with llvm-otool / llvm-objdump before use:
// LC_LOAD_UPWARD_DYLIB and LC_LAZY_LOAD_DYLIB (lld 14 and 16 ignore
// -upward_library / -upward-l, and -lazy_library is an alias of a plain link),
// an export trie with renaming re-exports (lld has no -reexported_symbols_list
// and cannot -alias a dylib's symbol; a .tbd cannot rename), and a dylib with
// its export trie removed.
#include "linkscope/resolve/dyld.hpp"

#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "macho/macho_fixtures.hpp"
#include "resolve/dyld_support.hpp"

using namespace linkscope;
using namespace linkscope::resolve;
using namespace linkscope_test;

namespace {

const char* libsystem_tbd =
    "--- !tapi-tbd\n"
    "tbd-version:     4\n"
    "targets:         [ x86_64-macos, arm64-macos ]\n"
    "install-name:    '/usr/lib/libSystem.B.dylib'\n"
    "current-version: 1311\n"
    "exports:\n"
    "  - targets:         [ x86_64-macos, arm64-macos ]\n"
    "    symbols:         [ _printf, _malloc, dyld_stub_binder ]\n"
    "...\n";

// Every fixture, built once. x86_64 with ld64.lld-14 (bind opcodes) unless
// said; chained/ is arm64 with ld64.lld-16 -fixup_chains.
const char* make_script = R"SH(set -e
L="ld64.lld-14 -arch x86_64 -platform_version macos 11.0 11.0 -syslibroot sdk -lSystem"
C="$LLD16 -arch arm64 -platform_version macos 12.0 12.0 -syslibroot sdk -lSystem -fixup_chains"
R="-rpath @executable_path/../lib"
mkdir -p o weak/lib weak/bin chained/lib chained/bin rpath/lib rpath/bin rename/lib rename/bin nlist/lib nlist/bin
mkdir -p kinds/lib kinds/bin cycle/lib cycle/bin env/bin env/fw env/lib sdk/fw1 sdk/fw2 sdk/fb sdk/usr/local/lib
# the sources (stubs stand for the dylibs only linked against)
for n in ka:ka_fn lazy:lazy_fn; do
  printf -- '--- !tapi-tbd\ntbd-version: 4\ntargets: [ x86_64-macos ]\ninstall-name: "@rpath/lib%s.dylib"\nexports:\n  - targets: [ x86_64-macos ]\n    symbols: [ _%s ]\n...\n' ${n%%:*} ${n#*:} > o/lib${n%%:*}.tbd
done
cat > o/w1.c <<'E'
__attribute__((weak)) int shared_weak(void) { return 1; }
int w1_fn(void) { return shared_weak(); }
E
sed -e 's/w1_fn/w2_fn/' -e 's/return 1/return 2/' o/w1.c > o/w2.c
echo 'int shared_weak(void) { return 3; }' > o/w3.c
printf 'int shared_weak(void) { return 4; }\n__attribute__((weak)) int w4_weak(void) { return 4; }\n' > o/w4.c
printf 'int shared_weak(void);\nint w1_fn(void);\nint w2_fn(void);\nint main(void) { return shared_weak() + w1_fn() + w2_fn(); }\n' > o/wm.c
printf 'int shared_weak(void) { return 9; }\nint w1_fn(void);\nint w2_fn(void);\nint main(void) { return shared_weak() + w1_fn() + w2_fn(); }\n' > o/ws.c
printf 'int x_fn(void) { return 1; }\nint x_var = 2;\n' > o/x.c
printf 'int weak_fn(void) { return 7; }\nint ext_var = 5;\n' > o/cw.c
echo 'int reexported_fn(void) { return 9; }' > o/r.c
cat > o/a.c <<'E'
extern int ext_var;
extern int weak_fn(void) __attribute__((weak_import));
extern int x_var;
int x_fn(void);
int defined_fn(void) { return ext_var + x_var + x_fn() + (weak_fn ? weak_fn() : 0); }
E
printf 'int defined_fn(void);\nint reexported_fn(void);\nextern int x_var;\nint *xp = &x_var;\nint main(void) { return defined_fn() + reexported_fn() + *xp; }\n' > o/main.c
echo 'int c_fn(void) { return 3; }' > o/rc.c
printf 'int c_fn(void);\nint b_fn(void) { return c_fn(); }\n' > o/rb.c
printf 'int b_fn(void);\nint a_fn(void) { return b_fn(); }\n' > o/ra.c
printf 'int a_fn(void);\nint main(void) { return a_fn(); }\n' > o/rm.c
printf 'int r_fn(void) { return 9; }\nint r_other(void) { return 8; }\n' > o/nr.c
cat > o/nm.c <<'E'
int m_own(void) { return 1; }
int renamed_fn(void) { return 0; }
int r_other(void) { return 0; }
int renamed_gone(void) { return 0; }
int renamed_q(void) { return 0; }
int pad_a_long_symbol_name_that_makes_the_trie_big_enough_0(void) { return 0; }
int pad_a_long_symbol_name_that_makes_the_trie_big_enough_1(void) { return 0; }
E
printf 'int m_own(void);\nint renamed_fn(void);\nint r_other(void);\nint renamed_gone(void);\nint main(void) { return m_own() + renamed_fn() + r_other() + renamed_gone(); }\n' > o/nmain.c
echo 'int q_fn(void) { return 1; }' > o/q.c
printf 'int q_fn(void);\nint renamed_q(void);\nint main(void) { return q_fn() + renamed_q(); }\n' > o/nflat.c
cat > o/n.c <<'E'
int n_fn(void) { return 1; }
int n_var = 2;
__attribute__((weak)) int n_weak(void) { return 3; }
__attribute__((visibility("hidden"))) int n_hidden(void) { return 4; }
static int n_static(void) { return 5; }
int n_use(void) { return n_static() + n_hidden(); }
E
printf 'int n_fn(void);\nextern int n_var;\nint n_weak(void);\nint main(void) { return n_fn() + n_var + n_weak(); }\n' > o/nmn.c
printf 'int up_fn(void);\nint ka_fn(void) { return up_fn(); }\n' > o/ka.c
printf 'int ka_fn(void);\nint up_fn(void) { return 1; }\nint kb_fn(void) { return ka_fn(); }\n' > o/kb.c
printf 'int ka_fn(void);\nint main(void) { return ka_fn(); }\n' > o/km.c
echo 'int bar_fn(void) { return 1; }' > o/bar.c
echo 'int fb_fn(void) { return 1; }' > o/fb.c
printf 'int bar_fn(void);\nint fb_fn(void);\nint main(void) { return bar_fn() + fb_fn(); }\n' > o/em.c
# C++: a template's static data member and an inline function whose address is taken (weak definitions)
cat > o/t1.cpp <<'E'
template <class T> struct S { static T value; };
template <class T> T S<T>::value = 1;
inline int twice(int x) { return 2 * x; }
int (*twice_p1)(int) = twice;
int t1_fn() { return S<int>::value + twice(1); }
E
sed -e 's/t1_fn/t2_fn/' -e 's/twice_p1/twice_p2/' o/t1.cpp > o/t2.cpp
cat > o/tm.cpp <<'E'
template <class T> struct S { static T value; };
template <class T> T S<T>::value = 1;
inline int twice(int x) { return 2 * x; }
int t1_fn();
int t2_fn();
int (*twice_pm)(int) = twice;
int main() { return S<int>::value + t1_fn() + t2_fn() + twice_pm(1); }
E
# every object at once: x86_64 in o/, arm64 in o/arm64/
(cd o && clang-14 -target x86_64-apple-macos11 -nostdinc++ -c *.c *.cpp && mkdir arm64 && cd arm64 && clang-14 -target arm64-apple-macos11 -c ../w1.c ../w2.c ../w4.c ../wm.c ../x.c ../cw.c ../r.c ../a.c ../main.c)
# weak: two dylibs with a weak _shared_weak, one with a strong one and no
# other weak definition (no MH_WEAK_DEFINES), one with a strong one and a weak one
for s in w1 w2 w3 w4; do $L -dylib -install_name @rpath/lib$s.dylib o/$s.o -o weak/lib/lib$s.dylib; done
for s in w1 w2 w4; do $C -dylib -install_name @rpath/lib$s.dylib o/arm64/$s.o -o chained/lib/lib$s.dylib; done
$L -execute $R o/wm.o weak/lib/libw2.dylib weak/lib/libw1.dylib -o weak/bin/wm
for s in t1 t2; do $L -dylib -install_name @rpath/lib$s.dylib o/$s.o -o weak/lib/lib$s.dylib; done
$L -execute $R o/tm.o weak/lib/libt2.dylib weak/lib/libt1.dylib -o weak/bin/tm
$L -execute $R o/ws.o weak/lib/libw2.dylib weak/lib/libw1.dylib -o weak/bin/ws
$L -execute $R o/wm.o weak/lib/libw2.dylib weak/lib/libw1.dylib weak/lib/libw3.dylib -o weak/bin/wm3
$L -execute $R o/wm.o weak/lib/libw2.dylib weak/lib/libw1.dylib weak/lib/libw4.dylib -o weak/bin/wm4
$C -execute $R o/arm64/wm.o chained/lib/libw2.dylib chained/lib/libw1.dylib -o chained/bin/wm
$C -execute $R o/arm64/wm.o chained/lib/libw2.dylib chained/lib/libw1.dylib chained/lib/libw4.dylib -o chained/bin/wm4
# chained: a chain with a weak library, a re-export, a flat-namespace executable
$C -dylib -install_name @rpath/libx.dylib o/arm64/x.o -o chained/lib/libx.dylib
$C -dylib -install_name @rpath/libcw.dylib o/arm64/cw.o -o chained/lib/libcw.dylib
$C -dylib -install_name @rpath/libr.dylib o/arm64/r.o -o chained/lib/libr.dylib
$C -dylib -install_name @rpath/liba.dylib -rpath @loader_path/. o/arm64/a.o chained/lib/libx.dylib -weak_library chained/lib/libcw.dylib -reexport_library chained/lib/libr.dylib -o chained/lib/liba.dylib
$C -execute $R o/arm64/main.o chained/lib/liba.dylib chained/lib/libx.dylib -o chained/bin/main
$C -execute -flat_namespace $R o/arm64/main.o chained/lib/liba.dylib chained/lib/libx.dylib -o chained/bin/main_flat
# rpath: only the executable has an LC_RPATH; liba -> @rpath/libb -> @rpath/libc
$L -dylib -install_name @rpath/libc.dylib o/rc.o -o rpath/lib/libc.dylib
$L -dylib -install_name @rpath/libb.dylib o/rb.o rpath/lib/libc.dylib -o rpath/lib/libb.dylib
$L -dylib -install_name @rpath/liba.dylib o/ra.o rpath/lib/libb.dylib -o rpath/lib/liba.dylib
$L -execute $R o/rm.o rpath/lib/liba.dylib -o rpath/bin/main
$L -execute o/rm.o rpath/lib/liba.dylib -o rpath/bin/main_norpath
# rename: libm exports placeholders; the test rewrites its trie to re-export them from libr,
# which re-exports libq; libqx defines _q_fn too, after libm in main_flat's (flat) load order
$L -dylib -install_name @rpath/libq.dylib o/q.o -o rename/lib/libq.dylib
$L -dylib -install_name @rpath/libqx.dylib o/q.o -o rename/lib/libqx.dylib
$L -dylib -install_name @rpath/libr.dylib -rpath @loader_path/. o/nr.o -reexport_library rename/lib/libq.dylib -o rename/lib/libr.dylib
$L -dylib -install_name @rpath/libm.dylib -rpath @loader_path/. o/nm.o rename/lib/libr.dylib -o rename/lib/libm.dylib
$L -execute $R o/nmain.o rename/lib/libm.dylib -o rename/bin/main
$L -execute -flat_namespace $R o/nflat.o rename/lib/libm.dylib rename/lib/libqx.dylib -o rename/bin/main_flat
# nlist: the test removes libn's export trie after the link
$L -dylib -install_name @rpath/libn.dylib o/n.o -o nlist/lib/libn.dylib
$L -execute $R o/nmn.o nlist/lib/libn.dylib -o nlist/bin/main
# kinds: libka <-> libkb (the test makes libka's link upward), main -> liblazy (the test makes it lazy)
$L -dylib -install_name @rpath/libkb.dylib o/kb.o o/libka.tbd -o kinds/lib/libkb.dylib
$L -dylib -install_name @rpath/libka.dylib o/ka.o kinds/lib/libkb.dylib -o kinds/lib/libka.dylib
$L -execute $R o/km.o kinds/lib/libka.dylib o/liblazy.tbd -o kinds/bin/main
# cycle: the same two dylibs, left as plain LC_LOAD_DYLIB both ways
cp kinds/lib/libka.dylib kinds/lib/libkb.dylib cycle/lib/
$L -execute $R o/km.o cycle/lib/libka.dylib -o cycle/bin/main
# env: a framework and a dylib whose install names are absent from the root
mkdir -p env/fw/Bar.framework/Versions/A
$L -dylib -install_name /Library/Frameworks/Bar.framework/Versions/A/Bar o/bar.o -o env/fw/Bar.framework/Versions/A/Bar
$L -dylib -install_name /opt/gone/libfb.dylib o/fb.o -o env/lib/libfb.dylib
$L -execute o/em.o env/fw/Bar.framework/Versions/A/Bar env/lib/libfb.dylib -o env/bin/main
ld64.lld-14 -arch x86_64 -platform_version macos 11.0 13.0 -syslibroot sdk -lSystem -execute o/em.o env/fw/Bar.framework/Versions/A/Bar env/lib/libfb.dylib -o env/bin/main13
for d in fw1 fw2; do mkdir -p sdk/$d/Bar.framework/Versions/A; cp env/fw/Bar.framework/Versions/A/Bar sdk/$d/Bar.framework/Versions/A/Bar; done
cp env/lib/libfb.dylib sdk/fb/libfb.dylib
cp env/lib/libfb.dylib sdk/usr/local/lib/libfb.dylib
)SH";

void prefetch(const std::string& command, const std::vector<std::string>& files);

bool have_tools() {
  static const bool have = have_macho_tools() && have_chained_fixup_tools();
  return have;
}

std::string make_fixtures() {
  const std::string dir = scratch_dir("resolve_dyld_oracles");
  std::filesystem::create_directories(dir + "/sdk/usr/lib");
  write_file(dir + "/sdk/usr/lib/libSystem.tbd", libsystem_tbd);
  write_file(dir + "/sdk/usr/lib/libSystem.B.tbd", libsystem_tbd);
  write_file(dir + "/make.sh", make_script);
  if (run_in(dir, cat({"LLD16=", lld16, " sh make.sh >make.log 2>&1"})) != 0) return "";
  // The tools' answers on weak/ and chained/, one run per tool.
  std::vector<std::string> weak, chained;
  for (const auto* sub : {"/weak/bin", "/weak/lib", "/chained/bin", "/chained/lib"})
    for (const auto& e : std::filesystem::directory_iterator(dir + sub))
      (sub[1] == 'w' ? weak : chained).push_back(e.path().string());
  std::vector<std::string> both = weak;
  both.insert(both.end(), chained.begin(), chained.end());
  for (const char* command : {"llvm-objdump-14 --macho --private-header", "llvm-objdump-14 --macho --private-headers", "llvm-nm-14 -m -A"})
    prefetch(command, both);
  for (const char* command : {"llvm-objdump-14 --macho --weak-bind", "llvm-objdump-14 --macho --bind", "llvm-objdump-14 --macho --lazy-bind"})
    prefetch(command, weak);
  prefetch(cat({objdump16, " --macho --chained-fixups"}), chained);
  return dir;
}

const std::string& fixtures() {
  static const std::string dir = have_tools() ? make_fixtures() : std::string();
  return dir;
}

#define FIXTURES_OR_RETURN(dir)                                                          \
  if (!have_tools()) {                                                                   \
    WARN("clang-14 / ld64.lld-14 / llvm-14 / lld-16 / llvm-16 not installed: skipped"); \
    return;                                                                              \
  }                                                                                      \
  REQUIRE_FALSE((dir).empty())

std::vector<std::string> words(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

std::uint32_t find_object(const dyld_link& l, std::string_view suffix) {
  for (std::uint32_t i = 0; i < l.objects.size(); ++i)
    if (ends_with(l.objects[i].path.empty() ? l.objects[i].name : l.objects[i].path, suffix)) return i;
  return no_object;
}

std::size_t count_objects(const dyld_link& l, std::string_view suffix) {
  std::size_t n = 0;
  for (const auto& o : l.objects) n += ends_with(o.path, suffix) ? 1 : 0;
  return n;
}

dyld_link run_dyld(const std::string& file, const std::string& root) {
  dyld_options o;
  o.root = root;
  auto l = link_dyld(file, o);
  REQUIRE(l);
  return std::move(*l);
}

std::string all_errors(const dyld_link& l) {
  std::string s;
  for (const auto& e : l.errors) s += e + "\n";
  return s;
}

// The targets image `from` binds `symbol` to.
std::set<std::uint32_t> targets(const dyld_link& l, std::uint32_t from, std::string_view symbol) {
  std::set<std::uint32_t> out;
  for (const auto& b : l.bindings)
    if (b.from == from && b.symbol == symbol) out.insert(b.to);
  return out;
}

// --- the oracles ----------------------------------------------------------

// A tool's output, run once per command (the fixtures it reads are not
// changed after they are first read).
std::map<std::string, std::string>& tool_memo() {
  static std::map<std::string, std::string> memo;
  return memo;
}
const std::string& tool(const std::string& command) {
  auto& memo = tool_memo();
  auto it = memo.find(command);
  if (it == memo.end()) it = memo.emplace(command, capture(command).out).first;
  return it->second;
}

std::string quoted(const std::string& file) {
  return shell_quote(std::filesystem::path(file).lexically_normal().string());
}

// Run `command` once over many files and keep each file's part as if it had
// been run alone. The tools mark the parts in one of three ways: a "FILE:"
// line before each (llvm-objdump's tables), "FILE: " before every line
// (llvm-nm -A), or nothing but each file's "Mach header" line, in argument
// order (llvm-objdump --private-header[s]).
void prefetch(const std::string& command, const std::vector<std::string>& files) {
  std::string all = command;
  std::vector<std::string> names;
  for (const auto& f : files) {
    names.push_back(std::filesystem::path(f).lexically_normal().string());
    all += " " + shell_quote(names.back());
  }
  std::map<std::string, std::string> parts;
  std::string current;
  std::size_t headers = 0;
  for (const auto& l : lines(capture(all).out)) {
    bool line_of_one = false;
    for (const auto& n : names) {
      if (l == n + ":") current = n;
      if (l.rfind(n + ": ", 0) == 0) {
        parts[n] += l + "\n";
        line_of_one = true;
      }
    }
    if (l == "Mach header" && headers < names.size()) current = names[headers++];
    if (!line_of_one && !current.empty()) parts[current] += l + "\n";
  }
  for (const auto& [name, part] : parts) tool_memo().emplace(command + " " + shell_quote(name), part);
}

// llvm-objdump --private-headers (llvm-otool -l): the install names of the
// dylib commands, in order (LC_ID_DYLIB left out), as llvm-objdump numbers
// library ordinals (ordinal i + 1).
std::vector<std::string> dylibs_used(const std::string& file) {
  std::vector<std::string> out;
  bool dylib = false;
  for (const auto& l : lines(tool("llvm-objdump-14 --macho --private-headers " + quoted(file)))) {
    const auto w = words(l);
    if (w.size() == 2 && w[0] == "cmd") dylib = w[1] != "LC_ID_DYLIB" && w[1].find("DYLIB") != std::string::npos;
    if (dylib && w.size() >= 2 && w[0] == "name") {
      out.push_back(w[1]);
      dylib = false;
    }
  }
  return out;
}

// llvm-objdump --private-header (llvm-otool -hv): the header flags line has WEAK_DEFINES.
bool weak_defines(const std::string& file) {
  const auto out = lines(tool("llvm-objdump-14 --macho --private-header " + quoted(file)));
  return !out.empty() && (" " + out.back() + " ").find(" WEAK_DEFINES ") != std::string::npos;
}

// llvm-nm -m (-A: each line names its file): the external definitions, name -> weak.
std::map<std::string, bool> nm_definitions(const std::string& file) {
  std::map<std::string, bool> out;
  for (const auto& l : lines(tool("llvm-nm-14 -m -A " + quoted(file)))) {
    if (l.find("(undefined)") != std::string::npos || l.find("non-external") != std::string::npos) continue;
    const auto w = words(l);
    if (w.size() < 3) continue;
    if (l.find(" weak external ") != std::string::npos) out[w.back()] = true;
    else if (l.find(" external ") != std::string::npos) out[w.back()] = false;
  }
  return out;
}

// llvm-objdump --weak-bind: the coalescing entries (not the "strong" ones).
std::vector<std::string> weak_binds(const std::string& file) {
  std::vector<std::string> out;
  bool in = false;
  for (const auto& l : lines(tool("llvm-objdump-14 --macho --weak-bind " + quoted(file)))) {
    if (l.rfind("segment", 0) == 0) {
      in = true;
      continue;
    }
    const auto w = words(l);
    if (in && w.size() >= 2 && w.front() != "strong") out.push_back(w.back());
  }
  return out;
}

// llvm-objdump --bind --lazy-bind: (dylib short name, symbol).
std::vector<std::pair<std::string, std::string>> binds(const std::string& file) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const char* flag : {"--bind", "--lazy-bind"}) {
    bool in = false;
    for (const auto& l : lines(tool(std::string("llvm-objdump-14 --macho ") + flag + " " + quoted(file)))) {
      if (l.rfind("segment", 0) == 0) {
        in = true;
        continue;
      }
      auto w = words(l);
      if (!w.empty() && w.back() == "(weak_import)") w.pop_back();
      if (in && w.size() >= 2) out.emplace_back(w[w.size() - 2], w.back());
    }
  }
  return out;
}

// llvm-objdump-16 --chained-fixups: every import (lib_ordinal, weak_import, name).
struct chained_import {
  int ordinal = 0;
  bool weak_import = false;
  std::string name;
};
std::vector<chained_import> chained_imports(const std::string& file) {
  std::vector<chained_import> out;
  for (const auto& l : lines(tool(cat({objdump16, " --macho --chained-fixups ", quoted(file)})))) {
    const auto w = words(l);
    if (l.rfind("dyld chained import[", 0) == 0) out.emplace_back();
    else if (!out.empty() && w.size() >= 3 && w[0] == "lib_ordinal") out.back().ordinal = std::stoi(w[2]);
    else if (!out.empty() && w.size() >= 3 && w[0] == "weak_import") out.back().weak_import = w[2] == "1";
    else if (!out.empty() && w.size() >= 4 && w[0] == "name_offset") out.back().name = w[3].substr(1, w[3].size() - 2);
  }
  return out;
}

// dyld's weak coalescing over `order` (host paths in load order): the first
// image with MH_WEAK_DEFINES that defines `symbol`, a non-weak definition
// winning over earlier weak ones (dyld-1378 dyld/Loader.cpp,
// Loader::resolveSymbol, BIND_SPECIAL_DYLIB_WEAK_LOOKUP: "record first
// implementation found, but keep searching"; "non-weak wins over previous
// weak-def"). Flags from llvm-otool -hv, definitions from llvm-nm -m.
std::string coalesce_oracle(const std::vector<std::string>& order, const std::string& symbol) {
  std::string best;
  bool best_weak = false;
  for (const auto& file : order) {
    if (!weak_defines(file)) continue;
    const auto defs = nm_definitions(file);
    const auto it = defs.find(symbol);
    if (it == defs.end()) continue;
    if (best.empty() || (best_weak && !it->second)) {
      best = file;
      best_weak = it->second;
    }
  }
  return best;
}

// --- patches for what lld cannot write (64-bit little-endian images) -------

std::uint32_t get32(const std::string& b, std::size_t at) {
  std::uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(b[at + static_cast<std::size_t>(i)]);
  return v;
}
void put32(std::string& b, std::size_t at, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) b[at + static_cast<std::size_t>(i)] = static_cast<char>((v >> (8 * i)) & 0xff);
}

struct load_command {
  std::size_t offset;
  std::uint32_t cmd, size;
};
std::vector<load_command> load_commands(const std::string& b) {
  std::vector<load_command> out;
  REQUIRE(b.size() >= 32);
  REQUIRE(get32(b, 0) == 0xfeedfacfu);
  std::size_t at = 32;
  for (std::uint32_t i = 0, n = get32(b, 16); i < n; ++i) {
    REQUIRE(at + 8 <= b.size());
    out.push_back({at, get32(b, at), get32(b, at + 4)});
    at += get32(b, at + 4);
  }
  return out;
}

// Rewrite the cmd of the LC_LOAD_DYLIB naming `install_name`.
void patch_dylib_command(const std::string& file, const std::string& install_name, std::uint32_t cmd) {
  std::string b = read_file(file);
  bool done = false;
  for (const auto& lc : load_commands(b)) {
    if (lc.cmd != 0xc) continue;
    const std::size_t name = lc.offset + get32(b, lc.offset + 8);
    if (std::strcmp(b.c_str() + name, install_name.c_str()) == 0) {
      put32(b, lc.offset, cmd);
      done = true;
    }
  }
  REQUIRE(done);
  write_file(file, b);
}

// LC_DYLD_INFO_ONLY's export_off / export_size.
std::size_t dyld_info_command(const std::string& b) {
  for (const auto& lc : load_commands(b))
    if (lc.cmd == 0x80000022u) return lc.offset;
  FAIL("no LC_DYLD_INFO_ONLY");
  return 0;
}

void uleb(std::string& out, std::uint64_t v) {
  do {
    unsigned char c = v & 0x7f;
    v >>= 7;
    if (v != 0) c |= 0x80;
    out.push_back(static_cast<char>(c));
  } while (v != 0);
}

// An export trie: a root with one edge per name (the whole name) to a terminal node.
std::string make_trie(const std::vector<std::pair<std::string, std::string>>& entries) {
  std::size_t root = 2;
  for (const auto& e : entries) root += e.first.size() + 2;  // offsets stay below 128
  std::string nodes, edges;
  for (const auto& [name, info] : entries) {
    edges += name;
    edges.push_back('\0');
    uleb(edges, root + nodes.size());
    uleb(nodes, info.size());
    nodes += info;
    nodes.push_back('\0');  // no children
  }
  std::string out;
  out.push_back('\0');
  out.push_back(static_cast<char>(entries.size()));
  out += edges;
  REQUIRE(out.size() == root);
  REQUIRE(root + nodes.size() < 128);
  return out + nodes;
}

}  // namespace

TEST_CASE("dyld weak coalescing: the first definition in load order among MH_WEAK_DEFINES images", "[dyld][oracle]") {
  const std::string& dir = fixtures();
  FIXTURES_OR_RETURN(dir);
  // Opcode-based (weak-bind stream) and chained (imports with ordinal -3).
  for (const std::string kind : {"weak", "chained"}) {
    for (const std::string exe : {"wm", "ws", "wm3", "wm4", "tm"}) {
      if (kind == "chained" && exe != "wm" && exe != "wm4") continue;  // the opcode-based ones cover these
      CAPTURE(kind, exe);
      const std::string bin = dir + "/" + kind + "/bin/" + exe;
      const dyld_link l = run_dyld(bin, dir + "/sdk");
      CHECK(l.errors.empty());
      CHECK(l.undefined.empty());
      // Load order: the executable, then its dylib commands (all direct).
      std::vector<std::string> order{bin};
      for (const auto& d : dylibs_used(bin))
        if (d.rfind("@rpath/", 0) == 0) order.push_back(dir + "/" + kind + "/lib/" + d.substr(7));
      std::size_t checked = 0;
      for (const auto& file : order) {
        const std::uint32_t from = file == bin ? 0 : find_object(l, file.substr(file.rfind('/')));
        REQUIRE(from != no_object);
        std::vector<std::string> coalesced;
        if (kind == "weak") {
          coalesced = weak_binds(file);
        } else {
          for (const auto& i : chained_imports(file))
            if (i.ordinal == -3) coalesced.push_back(i.name);
        }
        for (const auto& symbol : coalesced) {
          CAPTURE(file, symbol);
          const std::string expected = coalesce_oracle(order, symbol);
          REQUIRE_FALSE(expected.empty());
          const std::uint32_t to = expected == bin ? 0 : find_object(l, expected.substr(expected.rfind('/')));
          REQUIRE(to != no_object);
          const auto got = targets(l, from, symbol);
          CHECK(got.count(to) == 1);
          // A dylib's only bind of its weak symbol is the coalescing one.
          if (from != 0) CHECK(got.size() == 1);
          ++checked;
        }
      }
      CHECK(checked >= 2);
    }
  }
  // The cases in words: libw1's own call binds to libw2's copy (first in
  // load order); a strong definition in the executable wins for both; libw3
  // (strong, no MH_WEAK_DEFINES) is not considered; libw4 (strong, with
  // MH_WEAK_DEFINES) wins over the earlier weak copies; C++ (tm): the
  // executable's own weak copies of S<int>::value and twice() come first.
  const std::string w = dir + "/weak/";
  CHECK_FALSE(weak_defines(w + "lib/libw3.dylib"));
  CHECK(weak_defines(w + "lib/libw4.dylib"));
  CHECK(coalesce_oracle({w + "bin/wm", w + "lib/libw2.dylib", w + "lib/libw1.dylib"}, "_shared_weak") == w + "lib/libw2.dylib");
  const dyld_link wm4 = run_dyld(w + "bin/wm4", dir + "/sdk");
  const auto w1 = find_object(wm4, "/libw1.dylib"), w4 = find_object(wm4, "/libw4.dylib");
  CHECK(targets(wm4, w1, "_shared_weak") == std::set<std::uint32_t>{w4});
  const dyld_link tm = run_dyld(w + "bin/tm", dir + "/sdk");
  const auto t1 = find_object(tm, "/libt1.dylib"), t2 = find_object(tm, "/libt2.dylib");
  REQUIRE(t1 != no_object);
  REQUIRE(t2 != no_object);
  for (const char* symbol : {"__ZN1SIiE5valueE", "__Z5twicei"}) {
    CAPTURE(symbol);
    CHECK(nm_definitions(w + "lib/libt1.dylib").at(symbol));  // weak external
    CHECK(targets(tm, t1, symbol) == std::set<std::uint32_t>{0});
    CHECK(targets(tm, t2, symbol) == std::set<std::uint32_t>{0});
  }
}

TEST_CASE("dyld chained fixups: every import of llvm-objdump-16 --chained-fixups binds in the dylib of its ordinal",
          "[dyld][oracle]") {
  const std::string& dir = fixtures();
  FIXTURES_OR_RETURN(dir);
  for (const std::string exe : {"main", "main_flat", "wm", "wm4"}) {
    CAPTURE(exe);
    const dyld_link l = run_dyld(dir + "/chained/bin/" + exe, dir + "/sdk");
    CHECK(l.errors.empty());
    CHECK(l.undefined.empty());
    std::size_t rows = 0;
    for (std::uint32_t id = 0; id < l.objects.size(); ++id) {
      if (l.objects[id].kind != dyld_image_kind::macho) continue;
      const std::string& file = l.objects[id].file;
      const auto used = dylibs_used(file);
      for (const auto& imp : chained_imports(file)) {
        CAPTURE(file, imp.ordinal, imp.name);
        ++rows;
        const auto got = targets(l, id, imp.name);
        if (imp.ordinal > 0) {
          // The dylib named by the ordinal (llvm-objdump's numbering), or one it re-exports.
          REQUIRE(static_cast<std::size_t>(imp.ordinal) <= used.size());
          const std::string& named = used[static_cast<std::size_t>(imp.ordinal) - 1];
          std::uint32_t dep = no_object;
          for (const auto& d : l.objects[id].dependencies)
            if (d.install_name == named) dep = d.object;
          REQUIRE(dep != no_object);
          if (!l.objects[dep].found()) {
            CHECK(imp.weak_import);
            continue;
          }
          REQUIRE(got.size() == 1);
          if (l.objects[dep].kind == dyld_image_kind::macho) CHECK(in_or_reexported(l, dep, *got.begin()));
        } else if (imp.ordinal == -2) {
          // Flat: the first image in load order whose own exports (llvm-nm -m) define it.
          REQUIRE(got.size() == 1);
          std::uint32_t first = no_object;
          for (std::uint32_t k = 0; k < l.objects.size() && first == no_object; ++k)
            if (l.objects[k].kind == dyld_image_kind::macho && nm_definitions(l.objects[k].file).count(imp.name)) first = k;
          CHECK(*got.begin() == first);
        } else {
          CHECK(imp.ordinal == -3);  // coalescing: the test case above
          CHECK(got.size() == 1);
        }
      }
    }
    CHECK(rows >= 3);
  }
  // _reexported_fn: named liba by main, found in libr (liba's LC_REEXPORT_DYLIB).
  const dyld_link l = run_dyld(dir + "/chained/bin/main", dir + "/sdk");
  CHECK(targets(l, 0, "_reexported_fn") == std::set<std::uint32_t>{find_object(l, "/chained/lib/libr.dylib")});
  // libcw gone: liba's imports from it are weak_import (llvm-objdump says so), nothing is undefined.
  REQUIRE(run_in(dir, "rm -rf chained_nocw && cp -r chained chained_nocw && rm chained_nocw/lib/libcw.dylib") == 0);
  const dyld_link gone = run_dyld(dir + "/chained_nocw/bin/main", dir + "/sdk");
  CHECK(gone.errors.empty());
  CHECK(gone.undefined.empty());
  CHECK_FALSE(gone.any_missing());
}

TEST_CASE("dyld @rpath through a grandparent's LC_RPATH", "[dyld][oracle]") {
  const std::string& dir = fixtures();
  FIXTURES_OR_RETURN(dir);
  const std::string base = dir + "/rpath";
  // llvm-otool -l: only the executable has an LC_RPATH.
  auto rpaths = [](const std::string& file) {
    return capture("llvm-otool-14 -l " + shell_quote(file) + " | grep -c 'cmd LC_RPATH'").out;
  };
  CHECK(rpaths(base + "/bin/main") == "1\n");
  for (const char* lib : {"liba", "libb", "libc"}) CHECK(rpaths(base + "/lib/" + lib + ".dylib") == "0\n");
  CHECK(dylibs_used(base + "/lib/libb.dylib").back() == "@rpath/libc.dylib");
  const dyld_link l = run_dyld(base + "/bin/main", dir + "/sdk");
  CHECK(l.errors.empty());
  CHECK(l.undefined.empty());
  CHECK_FALSE(l.any_missing());
  // dyld-1378 dyld/Loader.cpp, Loader::forEachResolvedAtPathVar: @rpath
  // tries the LC_RPATHs of each image of the rpath stack (the load chain),
  // from the requester up to the main executable.
  for (const char* lib : {"/lib/libb.dylib", "/lib/libc.dylib"}) {
    CAPTURE(lib);
    const auto id = find_object(l, std::string("/rpath") + lib);
    REQUIRE(id != no_object);
    CHECK(l.objects[id].via == dyld_found_via::rpath);
    CHECK(l.objects[id].rpath == "@executable_path/../lib");
    CHECK(l.objects[id].where == l.objects[0].path);
  }
  // libb's import of _c_fn (llvm-objdump: from libc) binds in libc.
  const auto libb = find_object(l, "/rpath/lib/libb.dylib"), libc = find_object(l, "/rpath/lib/libc.dylib");
  bool row = false;
  for (const auto& [dylib, symbol] : binds(base + "/lib/libb.dylib")) row = row || (dylib == "libc" && symbol == "_c_fn");
  CHECK(row);
  CHECK(targets(l, libb, "_c_fn") == std::set<std::uint32_t>{libc});
  // Without the executable's LC_RPATH nothing finds liba, and the warning names the image with the load command.
  const dyld_link bare = run_dyld(base + "/bin/main_norpath", dir + "/sdk");
  const auto liba = find_object(bare, "@rpath/liba.dylib");
  REQUIRE(liba != no_object);
  CHECK_FALSE(bare.objects[liba].found());
  CHECK(bare.objects[liba].loader == 0);
  REQUIRE_FALSE(bare.objects[liba].warnings.empty());
  CHECK(bare.objects[liba].warnings[0].find("@rpath never resolves") != std::string::npos);
  CHECK(bare.objects[liba].warnings[0].find(bare.objects[0].path) != std::string::npos);
}

TEST_CASE("dyld trie re-exports that rename", "[dyld][oracle]") {
  const std::string& dir = fixtures();
  FIXTURES_OR_RETURN(dir);
  const std::string libm = dir + "/rename/lib/libm.dylib";
  // The trie lld wrote (llvm-objdump --exports-trie: "0x... _m_own").
  std::uint64_t m_own = 0;
  for (const auto& l : lines(capture("llvm-objdump-14 --macho --exports-trie " + shell_quote(libm)).out)) {
    const auto w = words(l);
    if (w.size() == 2 && w[1] == "_m_own") m_own = std::stoull(w[0], nullptr, 16);
  }
  REQUIRE(m_own != 0);
  // libr's ordinal in libm.
  const auto used = dylibs_used(libm);
  std::size_t libr = 0;
  for (std::size_t i = 0; i < used.size(); ++i)
    if (used[i] == "@rpath/libr.dylib") libr = i + 1;
  REQUIRE(libr != 0);
  // Rewrite it: _m_own stays; _renamed_fn re-exports libr's _r_fn, _r_other
  // re-exports libr's _r_other, _renamed_gone re-exports a _r_gone libr lacks.
  auto regular = [](std::uint64_t address) {
    std::string s;
    uleb(s, 0);
    uleb(s, address);
    return s;
  };
  auto reexport = [](std::uint64_t ordinal, const std::string& name) {
    std::string s;
    uleb(s, 0x08);  // EXPORT_SYMBOL_FLAGS_REEXPORT
    uleb(s, ordinal);
    s += name;
    s.push_back('\0');
    return s;
  };
  const std::string trie = make_trie({{"_m_own", regular(m_own)},
                                      {"_renamed_fn", reexport(libr, "_r_fn")},
                                      {"_r_other", reexport(libr, "")},
                                      {"_renamed_gone", reexport(libr, "_r_gone")},
                                      {"_q_fn", reexport(libr, "")},
                                      {"_renamed_q", reexport(libr, "_q_fn")}});
  std::string b = read_file(libm);
  const std::size_t info = dyld_info_command(b);
  const std::size_t off = get32(b, info + 40), size = get32(b, info + 44);
  REQUIRE(trie.size() <= size);
  b.replace(off, size, trie + std::string(size - trie.size(), '\0'));
  write_file(libm, b);
  // The oracle reads the patched trie as re-exports, one renaming.
  const std::string shown = capture(cat({objdump16, " --macho --exports-trie ", shell_quote(libm)})).out;
  CHECK(shown.find("[re-export] _renamed_fn (_r_fn from libr)") != std::string::npos);
  CHECK(shown.find("[re-export] _r_other (from libr)") != std::string::npos);
  CHECK(shown.find("[re-export] _renamed_gone (_r_gone from libr)") != std::string::npos);
  CHECK(nm_definitions(dir + "/rename/lib/libr.dylib").count("_r_gone") == 0);
  const dyld_link l = run_dyld(dir + "/rename/bin/main", dir + "/sdk");
  CHECK(l.errors.empty());
  const auto m = find_object(l, "/rename/lib/libm.dylib"), r = find_object(l, "/rename/lib/libr.dylib");
  REQUIRE(m != no_object);
  REQUIRE(r != no_object);
  CHECK(targets(l, 0, "_m_own") == std::set<std::uint32_t>{m});
  CHECK(targets(l, 0, "_renamed_fn") == std::set<std::uint32_t>{r});
  CHECK(targets(l, 0, "_r_other") == std::set<std::uint32_t>{r});
  // The renamed target libr lacks: undefined, as dyld's "Symbol not found".
  REQUIRE(l.undefined.size() == 1);
  CHECK(l.undefined[0].from == 0);
  CHECK(l.undefined[0].symbol == "_renamed_gone");
  // Flat (the mode dyld calls shallow): each image in load order is asked for
  // its own exports. libm's _q_fn keeps its name, so libr is asked in the same
  // mode and libr's LC_REEXPORT_DYLIB of libq is not followed: libm has no
  // _q_fn and libqx, next in load order, has. A renaming entry is promoted to
  // the two-level lookup that follows re-exports, so _renamed_q is libq's
  // _q_fn (dyld-1378 dyld/Loader.cpp, Loader::hasExportedSymbol: "Explicitly
  // promote to a ::staticLink resolution when looking for a reexported symbol
  // in ::shallow mode", only when nameChanged).
  CHECK(shown.find("[re-export] _q_fn (from libr)") != std::string::npos);
  CHECK(shown.find("[re-export] _renamed_q (_q_fn from libr)") != std::string::npos);
  CHECK(nm_definitions(dir + "/rename/lib/libr.dylib").count("_q_fn") == 0);
  CHECK(nm_definitions(dir + "/rename/lib/libq.dylib").count("_q_fn") == 1);
  CHECK(nm_definitions(dir + "/rename/lib/libqx.dylib").count("_q_fn") == 1);
  CHECK(dylibs_used(dir + "/rename/lib/libr.dylib").back() == "@rpath/libq.dylib");
  for (const auto& [dylib, symbol] : binds(dir + "/rename/bin/main_flat")) CHECK(dylib == "flat-namespace");
  const dyld_link flat = run_dyld(dir + "/rename/bin/main_flat", dir + "/sdk");
  CHECK(flat.errors.empty());
  CHECK(flat.undefined.empty());
  const auto fm = find_object(flat, "/rename/lib/libm.dylib"), fq = find_object(flat, "/rename/lib/libq.dylib"),
             fqx = find_object(flat, "/rename/lib/libqx.dylib");
  REQUIRE(fq != no_object);
  REQUIRE(fqx != no_object);
  CHECK(fm < fqx);
  CHECK(targets(flat, 0, "_q_fn") == std::set<std::uint32_t>{fqx});
  CHECK(targets(flat, 0, "_renamed_q") == std::set<std::uint32_t>{fq});
}

TEST_CASE("dyld nlist exports of a dylib without an export trie", "[dyld][oracle]") {
  const std::string& dir = fixtures();
  FIXTURES_OR_RETURN(dir);
  const std::string libn = dir + "/nlist/lib/libn.dylib";
  std::string b = read_file(libn);
  const std::size_t info = dyld_info_command(b);
  REQUIRE(get32(b, info + 44) != 0);
  put32(b, info + 40, 0);
  put32(b, info + 44, 0);
  write_file(libn, b);
  // llvm-objdump finds no trie any more; llvm-nm -m still lists the externals.
  const std::string trie = capture("llvm-objdump-14 --macho --exports-trie " + shell_quote(libn)).out;
  CHECK(trie.find("_n_fn") == std::string::npos);
  const auto defs = nm_definitions(libn);
  CHECK(defs.count("_n_fn") == 1);
  CHECK(defs.count("_n_hidden") == 0);  // non-external (was a private external)
  // dyld-1378 dyld/Loader.cpp, Loader::hasExportedSymbol, "try old slow way":
  // without a trie, every N_SECT|N_EXT nlist symbol is an export, N_WEAK_DEF weak.
  dyld_cache cache;
  const auto f = cache.open(libn, 0, "x86_64");
  REQUIRE(f->ok());
  REQUIRE(f->images.size() == 1);
  const auto& img = f->images[0];
  CHECK_FALSE(img.has_trie);
  std::map<std::string, bool> got;
  for (const auto& [name, weak] : img.names) got[std::string(name)] = weak;
  CHECK(got == defs);
  for (const char* name : {"_n_hidden", "_n_static", "_nothing"}) {
    auto hit = img.find(name);
    REQUIRE(hit);
    CHECK_FALSE(*hit);
  }
  // Every bind of the client (llvm-objdump: from libn) binds in libn.
  const dyld_link l = run_dyld(dir + "/nlist/bin/main", dir + "/sdk");
  CHECK(l.errors.empty());
  CHECK(l.undefined.empty());
  const auto n = find_object(l, "/nlist/lib/libn.dylib");
  std::size_t rows = 0;
  for (const auto& [dylib, symbol] : binds(dir + "/nlist/bin/main")) {
    if (dylib != "libn") continue;
    CAPTURE(symbol);
    ++rows;
    CHECK(targets(l, 0, symbol) == std::set<std::uint32_t>{n});
  }
  CHECK(rows == 3);
}

TEST_CASE("dyld LC_LOAD_UPWARD_DYLIB and LC_LAZY_LOAD_DYLIB", "[dyld][oracle]") {
  const std::string& dir = fixtures();
  FIXTURES_OR_RETURN(dir);
  const std::string base = dir + "/kinds";
  patch_dylib_command(base + "/lib/libka.dylib", "@rpath/libkb.dylib", 0x80000023u);  // LC_LOAD_UPWARD_DYLIB
  patch_dylib_command(base + "/bin/main", "@rpath/liblazy.dylib", 0x20u);            // LC_LAZY_LOAD_DYLIB
  CHECK(capture("llvm-otool-14 -l " + shell_quote(base + "/lib/libka.dylib") + " | grep -c 'cmd LC_LOAD_UPWARD_DYLIB'").out == "1\n");
  CHECK(capture("llvm-otool-14 -l " + shell_quote(base + "/bin/main") + " | grep -c 'cmd LC_LAZY_LOAD_DYLIB'").out == "1\n");
  const dyld_link l = run_dyld(base + "/bin/main", dir + "/sdk");
  // Upward: loaded as any dependency (dyld-1378 mach_o/UnsafeHeader.cpp,
  // forEachLinkedDylib), its cycle back to libka is no error.
  CHECK(all_errors(l).empty());
  CHECK(l.undefined.empty());
  const auto ka = find_object(l, "/kinds/lib/libka.dylib"), kb = find_object(l, "/kinds/lib/libkb.dylib");
  REQUIRE(ka != no_object);
  REQUIRE(kb != no_object);
  CHECK(count_objects(l, "/libka.dylib") == 1);
  CHECK(count_objects(l, "/libkb.dylib") == 1);
  REQUIRE(l.objects[ka].dependencies.size() == 2);
  CHECK(l.objects[ka].dependencies[1].kind == macho::dylib_kind::upward);
  CHECK(targets(l, ka, "_up_fn") == std::set<std::uint32_t>{kb});
  CHECK(targets(l, kb, "_ka_fn") == std::set<std::uint32_t>{ka});
  // Lazy: dyld never loads it at launch and does not count it among the
  // dependents an ordinal names (forEachLinkedDylib takes LC_LOAD_DYLIB,
  // LC_LOAD_WEAK_DYLIB, LC_REEXPORT_DYLIB, LC_LOAD_UPWARD_DYLIB only; dyld-360
  // src/ImageLoaderMachO.cpp, doGetDependentLibraries, the same). liblazy is
  // absent from kinds/lib: nothing is missing, nothing unused.
  CHECK(find_object(l, "liblazy.dylib") == no_object);
  CHECK_FALSE(l.any_missing());
  CHECK(l.objects[0].dependencies.size() == 2);
  for (const auto& u : l.unused) CHECK(u.install_name != "@rpath/liblazy.dylib");
}

TEST_CASE("dyld DYLD_FRAMEWORK_PATH and the fallbacks through linkscope-ldd", "[dyld][oracle][cli]") {
  const std::string& dir = fixtures();
  FIXTURES_OR_RETURN(dir);
  const std::string ldd = tool_path("linkscope-ldd");
  if (!have_tool(ldd)) {
    WARN("linkscope-ldd not built: test skipped");
    return;
  }
  // dyld-1378 dyld/DyldProcessConfig.cpp, PathOverrides::forEachPathVariant:
  // a framework's partial path goes through DYLD_FRAMEWORK_PATH, any other
  // name's leaf through DYLD_LIBRARY_PATH; then the path itself; then a
  // framework through DYLD_FALLBACK_FRAMEWORK_PATH, any other through
  // DYLD_FALLBACK_LIBRARY_PATH. Without a fallback option, only an image
  // built with an SDK before macOS 13 gets the defaults
  // (forEachDylibFallback / forEachFrameworkFallback: /usr/local/lib,
  // /usr/lib; /Library/Frameworks, /System/Library/Frameworks).
  const std::string bar = "/Library/Frameworks/Bar.framework/Versions/A/Bar => ";
  const std::string partial = "/Bar.framework/Versions/A/Bar";
  const std::string fb = "/opt/gone/libfb.dylib => ";
  auto tree = [&](const std::string& exe, const std::string& opts) {
    return capture(ldd + " --tree --root " + shell_quote(dir + "/sdk") + " " + opts + " " + shell_quote(dir + "/env/bin/" + exe) +
                   " 2>/dev/null");
  };
  auto has = [](const command_result& r, const std::string& line) {
    CAPTURE(r.out, line);
    return r.out.find(line) != std::string::npos;
  };
  // No option: the default library fallback /usr/local/lib finds libfb; Bar is nowhere.
  auto r = tree("main", "");
  CHECK(r.status == 1);
  CHECK(has(r, bar + "not found"));
  CHECK(has(r, fb + "/usr/local/lib/libfb.dylib [fallback]"));
  // DYLD_FRAMEWORK_PATH.
  r = tree("main", "--dyld-framework-path /fw1");
  CHECK(r.status == 0);
  CHECK(has(r, bar + "/fw1" + partial + " [dyld-framework-path]"));
  // DYLD_FALLBACK_FRAMEWORK_PATH; DYLD_FRAMEWORK_PATH comes first.
  r = tree("main", "--dyld-fallback-framework-path /fw2");
  CHECK(r.status == 0);
  CHECK(has(r, bar + "/fw2" + partial + " [fallback]"));
  r = tree("main", "--dyld-fallback-framework-path /fw2 --dyld-framework-path /fw1");
  CHECK(has(r, bar + "/fw1" + partial + " [dyld-framework-path]"));
  // DYLD_LIBRARY_PATH is for non-framework names only (the leaf "Bar" is not looked up there).
  r = tree("main", "--dyld-library-path /fw1/Bar.framework/Versions/A");
  CHECK(has(r, bar + "not found"));
  // DYLD_FALLBACK_LIBRARY_PATH replaces the default library fallbacks;
  // the framework fallback is not used for a dylib.
  r = tree("main", "--dyld-fallback-library-path /fb --dyld-framework-path /fw1");
  CHECK(r.status == 0);
  CHECK(has(r, fb + "/fb/libfb.dylib [fallback]"));
  r = tree("main", "--dyld-fallback-library-path /nowhere --dyld-framework-path /fw1");
  CHECK(r.status == 1);
  CHECK(has(r, fb + "not found"));
  // Colon-separated lists (dyld's forEachInColonList), and the environment with --env only.
  r = tree("main", "--dyld-framework-path /nowhere:/fw2:/fw1");
  CHECK(has(r, bar + "/fw2" + partial + " [dyld-framework-path]"));
  r = capture("DYLD_FRAMEWORK_PATH=/fw1 DYLD_FALLBACK_LIBRARY_PATH=/fb " + ldd + " --tree --env --root " +
              shell_quote(dir + "/sdk") + " " + shell_quote(dir + "/env/bin/main13") + " 2>/dev/null");
  CHECK(r.status == 0);
  CHECK(has(r, bar + "/fw1" + partial + " [dyld-framework-path]"));
  CHECK(has(r, fb + "/fb/libfb.dylib [fallback]"));
  r = capture("DYLD_FALLBACK_FRAMEWORK_PATH=/fw2 " + ldd + " --tree --root " + shell_quote(dir + "/sdk") + " " +
              shell_quote(dir + "/env/bin/main") + " 2>/dev/null");
  CHECK(has(r, bar + "not found"));  // no --env: the environment is not read
  // Built with the macOS 13 SDK (llvm-otool -l: sdk 13.0): no default fallbacks.
  CHECK(capture("llvm-otool-14 -l " + shell_quote(dir + "/env/bin/main13") + " | grep -c 'sdk 13.0'").out == "1\n");
  r = tree("main13", "--dyld-framework-path /fw1");
  CHECK(r.status == 1);
  CHECK(has(r, fb + "not found"));
  r = tree("main13", "--dyld-framework-path /fw1 --dyld-fallback-library-path /fb");
  CHECK(r.status == 0);
  CHECK(has(r, fb + "/fb/libfb.dylib [fallback]"));
}

TEST_CASE("dyld bad input: a plain load cycle, an @rpath through a symlink loop", "[dyld][oracle]") {
  const std::string& dir = fixtures();
  FIXTURES_OR_RETURN(dir);
  // libka -> libkb -> libka through LC_LOAD_DYLIB both ways (llvm-objdump --dylibs-used).
  const std::string base = dir + "/cycle";
  CHECK(dylibs_used(base + "/lib/libka.dylib").back() == "@rpath/libkb.dylib");
  CHECK(dylibs_used(base + "/lib/libkb.dylib").back() == "@rpath/libka.dylib");
  // dyld loads each image once (dyld-1378 dyld/JustInTimeLoader.cpp,
  // JustInTimeLoader::loadDependents returns when dependentsSet; a found
  // image is reused): the cycle launches, so it is a warning, not an error.
  const dyld_link l = run_dyld(base + "/bin/main", dir + "/sdk");
  CHECK(all_errors(l).empty());
  CHECK(l.undefined.empty());
  CHECK_FALSE(l.any_missing());
  CHECK(count_objects(l, "/libka.dylib") == 1);
  CHECK(count_objects(l, "/libkb.dylib") == 1);
  const auto ka = find_object(l, "/cycle/lib/libka.dylib"), kb = find_object(l, "/cycle/lib/libkb.dylib");
  CHECK(targets(l, kb, "_ka_fn") == std::set<std::uint32_t>{ka});
  std::string warnings;
  for (const auto& w : l.warnings) warnings += w + "\n";
  CAPTURE(warnings);
  CHECK(warnings.find(l.objects[kb].path + ": dependency cycle") != std::string::npos);
  // An rpath folder that loops through symlinks: the candidate is refused
  // with the reason, on the image that holds the load command, and the
  // missing library names that image.
  REQUIRE(run_in(dir, "rm -rf loop && mkdir loop && cp -r rpath/bin loop/bin && ln -s lib2 loop/lib && ln -s lib loop/lib2") == 0);
  const dyld_link loop = run_dyld(dir + "/loop/bin/main", dir + "/sdk");
  CHECK(loop.any_missing());
  bool refused = false;
  for (const auto& c : loop.objects[0].rejected) refused = refused || std::strstr(c.reason, "symbolic links") != nullptr;
  CHECK(refused);
  const auto liba = find_object(loop, "@rpath/liba.dylib");
  REQUIRE(liba != no_object);
  REQUIRE_FALSE(loop.objects[liba].warnings.empty());
  CHECK(loop.objects[liba].warnings[0].find(loop.objects[0].path) != std::string::npos);
}
