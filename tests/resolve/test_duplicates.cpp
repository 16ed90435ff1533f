// resolve/duplicates.hpp and linkscope-dupes: (e) a vendored copy of a
// library next to the separately shipped DSO. Expected winners come from the
// real ld.so (LD_DEBUG=bindings in trace mode) and GNU ld (-Map); sizes from nm -S.
#include <linkscope/resolve/duplicates.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <string>

#include "support/fixtures.hpp"

using namespace linkscope;
namespace lt = linkscope_test;

namespace {
const resolve::duplicate_symbol* find(const resolve::duplicates_report& r, const std::string& name) {
  for (const auto& d : r.duplicates)
    if (d.name == name) return &d;
  return nullptr;
}

// The library ld.so binds `symbol` to when it relocates `program` (trace mode: nothing runs).
std::string ld_so_binding(const std::string& dir, const std::string& program, const std::string& symbol) {
  lt::run_in(dir, "LD_TRACE_LOADED_OBJECTS=1 LD_WARN=yes LD_BIND_NOW=1 LD_DEBUG=bindings LD_DEBUG_OUTPUT=" + dir +
                      "/bindings /lib64/ld-linux-x86-64.so.2 ./" + program + " >/dev/null");
  auto r = lt::capture("cat " + lt::shell_quote(dir) + "/bindings.* | grep \"normal symbol \\`" + symbol + "'\" | head -1");
  // "binding file ./prog [0] to /dir/libfmt.so [0]: normal symbol `fmt_format'"
  auto to = r.out.find(" to ");
  auto end = r.out.find(" [", to);
  if (to == std::string::npos || end == std::string::npos) return {};
  std::string path = r.out.substr(to + 4, end - to - 4);
  return path.substr(path.rfind('/') + 1);
}

// Which archive members GNU ld includes for this link (its -Map file).
std::string map_includes(const std::string& dir, const std::string& args) {
  lt::run_in(dir, "gcc " + args + " -Wl,-Map,link.map -o linked 2>/dev/null");
  auto text = lt::read_file(dir + "/link.map");
  auto start = text.find("Archive member included");
  if (start == std::string::npos) return {};
  // The section is the header line, a blank line, then entries up to the next blank line.
  auto body = text.find("\n\n", start) + 2;
  auto stop = text.find("\n\n", body);
  return text.substr(start, stop - start);
}
}  // namespace

TEST_CASE("(e) vendored copy next to the shipped DSO: duplicates, winners, ABI break", "[duplicates]") {
  const std::string dir = lt::scratch_dir("duplicates");
  lt::write_file(dir + "/fmt.c", "int fmt_table[4] = {1, 2, 3, 4};\nint fmt_format(int x) { return x + fmt_table[0]; }\n");
  lt::write_file(dir + "/fmt_v.c", "int fmt_table[8] = {9};\nint fmt_format(int x) { return x * 2; }\nint vendor_only(void) { return 1; }\n");
  lt::write_file(dir + "/main.c", "int fmt_format(int);\nint main(void) { return fmt_format(1) > 100; }\n");
  REQUIRE(lt::run_in(dir, "gcc -fPIC -c fmt.c && gcc -shared -o libfmt.so fmt.o -Wl,-soname,libfmt.so") == 0);
  REQUIRE(lt::run_in(dir, "gcc -fPIC -c fmt_v.c && ar rcs libvendor.a fmt_v.o && gcc -shared -o libvendor.so fmt_v.o") == 0);
  REQUIRE(lt::run_in(dir, "gcc -c main.c && gcc main.o -Wl,--no-as-needed -L. -lvendor -lfmt -Wl,-rpath," + dir + " -o prog") == 0);

  auto report = resolve::find_duplicates({dir + "/prog", dir + "/libfmt.so", dir + "/libvendor.so", dir + "/libvendor.a"});
  REQUIRE(report);
  const auto* format = find(*report, "fmt_format");
  REQUIRE(format != nullptr);
  CHECK(format->sites.size() == 3);  // libfmt.so, libvendor.so, libvendor.a(fmt_v.o)
  CHECK(find(*report, "vendor_only") != nullptr);  // libvendor.so and libvendor.a(fmt_v.o)
  CHECK(find(*report, "main") == nullptr);

  // Run time: the same DSO as ld.so.
  const std::string bound = ld_so_binding(dir, "prog", "fmt_format");
  REQUIRE_FALSE(bound.empty());
  REQUIRE(format->runtime_winner < format->sites.size());
  const std::string& winner = format->sites[format->runtime_winner].file;
  CHECK(winner.substr(winner.rfind('/') + 1) == bound);

  // Sizes as nm -S gives them: fmt_table is 16 bytes in libfmt.so and 32 in the vendored copy.
  auto sizes = lt::capture("cd " + dir + " && nm -S --defined-only libfmt.so libvendor.so | grep ' fmt_table$' | cut -d' ' -f2 | sort -u");
  CHECK(lt::lines(sizes.out) == std::vector<std::string>{"0000000000000010", "0000000000000020"});
  const auto* table = find(*report, "fmt_table");
  REQUIRE(table != nullptr);
  CHECK(table->sizes_differ);
  CHECK(table->abi_break);
  CHECK_FALSE(format->abi_break);

  // Link time, checked against GNU ld's map: archive first -> the vendored member is pulled in.
  auto archive_first = resolve::find_duplicates({dir + "/main.o", dir + "/libvendor.a", dir + "/libfmt.so"});
  REQUIRE(archive_first);
  const auto* f1 = find(*archive_first, "fmt_format");
  REQUIRE(f1 != nullptr);
  const bool ld_pulls_vendor = map_includes(dir, "main.o libvendor.a libfmt.so").find("libvendor.a(fmt_v.o)") != std::string::npos;
  CHECK(ld_pulls_vendor);
  CHECK(f1->sites[f1->link_winner].file == dir + "/libvendor.a(fmt_v.o)");
  // DSO first -> ld resolves from libfmt.so and includes no member.
  auto dso_first = resolve::find_duplicates({dir + "/main.o", dir + "/libfmt.so", dir + "/libvendor.a"});
  REQUIRE(dso_first);
  const auto* f2 = find(*dso_first, "fmt_format");
  REQUIRE(f2 != nullptr);
  CHECK(map_includes(dir, "main.o libfmt.so libvendor.a").find("libvendor.a(fmt_v.o)") == std::string::npos);
  CHECK(f2->sites[f2->link_winner].file == dir + "/libfmt.so");

  // The CLI: exit 1 on findings, JSON shape.
  auto cli = lt::capture(lt::tool_path("linkscope-dupes") + " --json --abi-only " + dir + "/libfmt.so " + dir + "/libvendor.so");
  CHECK(cli.status == 1);
  CHECK(cli.out.find("\"symbol\":\"fmt_table\"") != std::string::npos);
  CHECK(cli.out.find("\"fmt_format\"") == std::string::npos);
  auto none = lt::capture(lt::tool_path("linkscope-dupes") + " " + dir + "/libfmt.so " + dir + "/main.o");
  CHECK(none.status == 0);
  // --closure names a file that must exist: an error naming it, exit 2 (issue 15 part 6), in both spellings.
  for (const char* opt : {" --closure /nonexistent ", " --closure=/nonexistent "}) {
    auto bad = lt::capture(lt::tool_path("linkscope-dupes") + opt + dir + "/libfmt.so " + dir + "/main.o 2>&1");
    CHECK(bad.status == 2);
    CHECK(bad.out.rfind("linkscope-dupes: /nonexistent: error: ", 0) == 0);
  }
}

TEST_CASE("linkscope-dupes: one spelling per file, the version in its own column as nm -D spells it", "[duplicates]") {
  const std::string dir = lt::scratch_dir("duplicates_versions");
  lt::write_file(dir + "/v.map", "VERS_1 { global: vfunc; local: *; };\n");
  lt::write_file(dir + "/a.c", "int vfunc(void) { return 1; }\n");
  REQUIRE(lt::run_in(dir, "gcc -shared -fPIC -o liba.so a.c -Wl,--version-script=v.map && "
                          "gcc -shared -fPIC -o libb.so a.c -Wl,--version-script=v.map") == 0);
  // nm -D: the definition is vfunc@@VERS_1 in both.
  for (const char* lib : {"liba.so", "libb.so"})
    REQUIRE(lt::capture("cd " + dir + " && nm -D --defined-only " + lib).out.find(" T vfunc@@VERS_1\n") !=
            std::string::npos);
  const std::string tool = lt::tool_path("linkscope-dupes");
  // Relative arguments without a slash: ld.so names the root ./liba.so.
  auto text = lt::capture("cd " + dir + " && " + tool + " liba.so libb.so");
  CHECK(text.status == 1);
  const auto rows = lt::lines(text.out);
  REQUIRE(rows.size() == 4);
  CHECK(rows[0] == "vfunc");
  for (std::size_t i : {1u, 2u}) {
    INFO(rows[i]);
    const std::string file = i == 1 ? "liba.so" : "libb.so";
    CHECK(rows[i].rfind("  " + file + " ", 0) == 0);  // the file alone, no @VERSION glued to it
    CHECK(rows[i].find(" func  @@VERS_1") != std::string::npos);
  }
  auto json = lt::capture("cd " + dir + " && " + tool + " --json liba.so libb.so");
  CHECK(json.status == 1);
  // closure_order spells the root as the definitions and the winner do.
  CHECK(json.out.find("\"closure_order\":[\"liba.so\"]") != std::string::npos);
  CHECK(json.out.find("\"runtime_winner\":\"liba.so\"") != std::string::npos);
  CHECK(json.out.find("./liba.so") == std::string::npos);
}

// ---------------------------------------------------------------------------
// Mach-O and PE: each import names its dylib or DLL, so the report says which
// copy each importer binds to. The oracles are the importers' own tables:
// llvm-objdump-14 --macho --bind --lazy-bind (the dylib column, or
// "flat-namespace", where dyld takes the first image in load order that
// exports it: llvm-otool-14 -L's order) and x86_64-w64-mingw32-objdump -p
// (the "DLL Name:" block that imports the name).
namespace {

const char* kFmt = "int fmt_format(int x) { return x + 1; }\nint fmt_only(void) { return 1; }\n";
const char* kVendor = "int fmt_format(int x) { return x + 2; }\nint vendor_only(void) { return 2; }\n";
const char* kApp = "int fmt_format(int);\nint main(void) { return fmt_format(1); }\n";

// The binding of `symbol` in `image` as llvm-objdump prints it: the dylib
// column ("libfmt", or "flat-namespace").
std::string objdump_dylib(const std::string& dir, const std::string& image, const std::string& symbol) {
  for (const auto& line : lt::lines(lt::capture("cd " + lt::shell_quote(dir) + " && llvm-objdump-14 --macho --bind --lazy-bind " +
                                                image).out)) {
    std::vector<std::string> words;
    std::string word;
    for (char c : line + " ") {
      if (c == ' ' || c == '\t') {
        if (!word.empty()) words.push_back(word);
        word.clear();
      } else {
        word += c;
      }
    }
    if (words.size() >= 2 && words.back() == symbol) return words[words.size() - 2];
  }
  return {};
}

}  // namespace

TEST_CASE("Mach-O: which copy each importer binds to, as llvm-objdump's bind tables say", "[duplicates][macho]") {
  if (!lt::have_tool("clang-14") || !lt::have_tool("ld64.lld-14") || !lt::have_tool("llvm-objdump-14") ||
      !lt::have_tool("llvm-otool-14")) {
    WARN("clang-14 / ld64.lld-14 / llvm-objdump-14 not installed: test skipped");
    return;
  }
  for (const char* arch : {"x86_64", "arm64"}) {
    INFO(arch);
    const std::string dir = lt::scratch_dir(std::string("dupes_macho_") + arch);
    lt::write_file(dir + "/fmt.c", kFmt);
    lt::write_file(dir + "/vendor.c", kVendor);
    lt::write_file(dir + "/app.c", kApp);
    REQUIRE(lt::run_in(dir, "mkdir -p sdk/usr/lib") == 0);
    // -lSystem finds libSystem.tbd; -flat_namespace loads /usr/lib/libSystem.B.dylib as libSystem.B.tbd
    for (const char* stub : {"/sdk/usr/lib/libSystem.tbd", "/sdk/usr/lib/libSystem.B.tbd"})
      lt::write_file(dir + stub,
                     "--- !tapi-tbd\ntbd-version: 4\ntargets: [ x86_64-macos, arm64-macos ]\n"
                     "install-name: '/usr/lib/libSystem.B.dylib'\nexports:\n"
                     "  - targets: [ x86_64-macos, arm64-macos ]\n    symbols: [ dyld_stub_binder ]\n...\n");
    const std::string cc = std::string("clang-14 -target ") + arch + "-apple-macos11 -c ";
    const std::string ld = std::string("ld64.lld-14 -arch ") + arch + " -platform_version macos 11.0 11.0 -syslibroot " +
                           lt::shell_quote(dir + "/sdk") + " -lSystem ";
    REQUIRE(lt::run_in(dir, cc + "fmt.c -o fmt.o && " + cc + "vendor.c -o vendor.o && " + cc + "app.c -o app.o") == 0);
    REQUIRE(lt::run_in(dir, ld + "-dylib fmt.o -install_name @rpath/libfmt.dylib -o libfmt.dylib && " + ld +
                                "-dylib vendor.o -install_name @rpath/libvendor.dylib -o libvendor.dylib && "
                                "llvm-ar-14 rcs --format=darwin libvfmt.a fmt.o") == 0);
    const std::string rp = "-rpath @loader_path ";
    REQUIRE(lt::run_in(dir, ld + rp + "app.o libfmt.dylib libvendor.dylib -o app1 && " + ld + rp +
                                "app.o libvendor.dylib libfmt.dylib -o app2 && " + ld + rp +
                                "-flat_namespace app.o libvendor.dylib libfmt.dylib -o app3") == 0);
    REQUIRE(objdump_dylib(dir, "app1", "_fmt_format") == "libfmt");
    REQUIRE(objdump_dylib(dir, "app2", "_fmt_format") == "libvendor");
    REQUIRE(objdump_dylib(dir, "app3", "_fmt_format") == "flat-namespace");
    // the flat lookup takes the first image in load order that exports it
    const auto otool = lt::capture("llvm-otool-14 -L " + lt::shell_quote(dir + "/app3")).out;
    REQUIRE(otool.find("libvendor.dylib") < otool.find("libfmt.dylib"));

    std::vector<std::string> paths;
    for (const char* f : {"app1", "app2", "app3", "libfmt.dylib", "libvendor.dylib", "libvfmt.a"}) paths.push_back(dir + "/" + f);
    auto r = resolve::find_duplicates(paths);
    REQUIRE(r);
    const auto* d = find(*r, "_fmt_format");
    REQUIRE(d != nullptr);
    REQUIRE(d->sites.size() == 3);  // the two dylibs and the archive member; executables only import
    CHECK(d->runtime_winner == ~std::size_t{0});
    std::vector<std::string> seen;
    for (const auto& b : d->importers) {
      const std::string importer = b.importer.substr(b.importer.rfind('/') + 1);
      const std::string to = d->sites[b.site].file.substr(d->sites[b.site].file.rfind('/') + 1);
      seen.push_back(importer + " -> " + to + (b.flat ? " (flat)" : ""));
    }
    CHECK(seen == std::vector<std::string>{"app1 -> libfmt.dylib", "app2 -> libvendor.dylib", "app3 -> libvendor.dylib (flat)"});
    CHECK(find(*r, "_fmt_only") != nullptr);  // libfmt.dylib and the vendored copy in libvfmt.a
    CHECK(find(*r, "_main") == nullptr);
  }
}

TEST_CASE("PE: which copy each importer binds to, as objdump -p's import tables say", "[duplicates][pe]") {
  if (!lt::have_tool("x86_64-w64-mingw32-gcc") || !lt::have_tool("x86_64-w64-mingw32-objdump")) {
    WARN("mingw-w64 not installed: test skipped");
    return;
  }
  const std::string dir = lt::scratch_dir("dupes_pe");
  lt::write_file(dir + "/fmt.c", kFmt);
  lt::write_file(dir + "/vendor.c", kVendor);
  lt::write_file(dir + "/app.c", kApp);
  const std::string cc = "x86_64-w64-mingw32-gcc ";
  REQUIRE(lt::run_in(dir, cc + "-shared fmt.c -o fmt.dll -Wl,--out-implib,libfmt.dll.a && " + cc +
                              "-shared vendor.c -o vendor.dll -Wl,--out-implib,libvendor.dll.a && " + cc +
                              "app.c -L. -lfmt -lvendor -o app1.exe && " + cc + "app.c -L. -lvendor -lfmt -o app2.exe && " +
                              cc + "-c fmt.c -o fmt.o && x86_64-w64-mingw32-ar rcs libvfmt.a fmt.o") == 0);
  // objdump -p: the DLL whose import block lists fmt_format
  auto importing_dll = [&](const std::string& exe) {
    std::string dll;
    for (const auto& line : lt::lines(lt::capture("x86_64-w64-mingw32-objdump -p " + lt::shell_quote(dir + "/" + exe)).out)) {
      const auto at = line.find("DLL Name: ");
      if (at != std::string::npos) dll = line.substr(at + 10);
      if (line.size() > 11 && line.substr(line.size() - 11) == " fmt_format") return dll;
    }
    return std::string();
  };
  REQUIRE(importing_dll("app1.exe") == "fmt.dll");
  REQUIRE(importing_dll("app2.exe") == "vendor.dll");
  std::vector<std::string> paths;
  for (const char* f : {"app1.exe", "app2.exe", "fmt.dll", "vendor.dll", "libvfmt.a", "libfmt.dll.a"}) paths.push_back(dir + "/" + f);
  auto r = resolve::find_duplicates(paths);
  REQUIRE(r);
  const auto* d = find(*r, "fmt_format");
  REQUIRE(d != nullptr);
  REQUIRE(d->sites.size() == 3);  // two DLLs and libvfmt.a(fmt.o); the import library's thunks are not copies
  REQUIRE(d->importers.size() == 2);
  CHECK(d->sites[d->importers[0].site].file == dir + "/fmt.dll");
  CHECK(d->importers[0].importer == dir + "/app1.exe");
  CHECK(d->sites[d->importers[1].site].file == dir + "/vendor.dll");
  CHECK(d->importers[1].importer == dir + "/app2.exe");
}
