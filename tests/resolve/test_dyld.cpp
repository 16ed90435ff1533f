// resolve/dyld.hpp: the dyld emulator against fixtures made at test time
// (clang-14 -target ARCH-apple-macos11, ld64.lld-14 against an SDK folder of
// .tbd stubs written here) for x86_64 and arm64. Expected values come from
// the tools: every (dylib, symbol) row of llvm-objdump-14 --bind/--lazy-bind
// binds in that dylib or one it re-exports; a dylib rebuilt without a symbol
// gives exactly the undefined symbols that ld64.lld -undefined error reports
// when the client is relinked against it; the unused dylibs are those
// ld64.lld -dead_strip_dylibs drops (llvm-otool-14 -L). Bad input is an
// error naming the image. Opt-in [real]: the sharp npm layout
// (LINKSCOPE_MACHO_REAL, set by scripts/real-parity, which CI runs).
#include "linkscope/resolve/dyld.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "linkscope/core/mapped_file.hpp"
#include "linkscope/macho/file.hpp"
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
    "reexported-libraries:\n"
    "  - targets:         [ x86_64-macos, arm64-macos ]\n"
    "    libraries:       [ '/usr/lib/system/libsystem_c.dylib' ]\n"
    "exports:\n"
    "  - targets:         [ x86_64-macos, arm64-macos ]\n"
    "    symbols:         [ dyld_stub_binder, __tlv_bootstrap ]\n"
    "--- !tapi-tbd\n"
    "tbd-version:     4\n"
    "targets:         [ x86_64-macos, arm64-macos ]\n"
    "install-name:    '/usr/lib/system/libsystem_c.dylib'\n"
    "current-version: 1311\n"
    "exports:\n"
    "  - targets:         [ x86_64-macos, arm64-macos ]\n"
    "    symbols:         [ _printf, _malloc ]\n"
    "...\n";

std::string stub(const std::string& name, const std::string& reexports, const std::string& symbol) {
  std::string s = "--- !tapi-tbd\ntbd-version:     4\ntargets:         [ x86_64-macos, arm64-macos ]\n"
                  "install-name:    '/usr/lib/" + name + ".dylib'\n";
  if (!reexports.empty())
    s += "reexported-libraries:\n  - targets:         [ x86_64-macos, arm64-macos ]\n    libraries:       [ '" + reexports + "' ]\n";
  return s + "exports:\n  - targets:         [ x86_64-macos, arm64-macos ]\n    symbols:         [ " + symbol + " ]\n...\n";
}

// The fixtures of one arch, in DIR/ARCH: sdk/, app/{bin,lib,plugins}, broken/, nolib/, old/.
std::string make_dyld_fixtures() {
  const std::string dir = scratch_dir("resolve_dyld");
  std::filesystem::create_directories(dir + "/sdk/usr/lib");
  write_file(dir + "/sdk/usr/lib/libSystem.tbd", libsystem_tbd);
  write_file(dir + "/sdk/usr/lib/libSystem.B.tbd", libsystem_tbd);
  write_file(dir + "/sdk/usr/lib/libself.tbd", stub("libself", "", "_self_fn"));
  write_file(dir + "/sdk/usr/lib/libcyc1.tbd", stub("libcyc1", "", "_cyc_fn"));
  write_file(dir + "/a.c",
             "int printf(const char*, ...);\nextern int ext_var;\n"
             "extern int weak_fn(void) __attribute__((weak_import));\n"
             "extern int x_var;\nint x_fn(void);\n"
             "int defined_fn(void) { printf(\"x\"); return ext_var + x_var + x_fn() + (weak_fn ? weak_fn() : 0); }\n");
  write_file(dir + "/w.c", "int weak_fn(void) { return 7; }\nint ext_var = 5;\n");
  write_file(dir + "/x.c", "int x_fn(void) { return 1; }\nint x_var = 2;\n");
  write_file(dir + "/x2.c", "int x_fn(void) { return 1; }\n");
  write_file(dir + "/r.c", "int reexported_fn(void) { return 9; }\n");
  write_file(dir + "/u.c", "int unused_fn(void) { return 1; }\n");
  write_file(dir + "/main.c",
             "int printf(const char*, ...);\nint defined_fn(void);\nint reexported_fn(void);\n"
             "int main(void) { printf(\"%d\\n\", defined_fn() + reexported_fn()); return 0; }\n");
  write_file(dir + "/p.c", "int defined_fn(void);\nint plugin_fn(void) { return defined_fn(); }\n");
  std::filesystem::create_directories(dir + "/sdk/System/Library/Frameworks/Foo.framework");
  write_file(dir + "/sdk/System/Library/Frameworks/Foo.framework/Foo.tbd",
             "--- !tapi-tbd\ntbd-version:     4\ntargets:         [ x86_64-macos, arm64-macos ]\n"
             "install-name:    '/System/Library/Frameworks/Foo.framework/Versions/A/Foo'\n"
             "exports:\n  - targets:         [ x86_64-macos, arm64-macos ]\n    symbols:         [ _fw_fn ]\n...\n");
  write_file(dir + "/f.c", "int fw_fn(void);\nint main(void) { return fw_fn(); }\n");
  write_file(dir + "/s.c", "int self_fn(void);\nint cyc_fn(void);\nint main(void) { return self_fn() + cyc_fn(); }\n");
  std::string script = "set -e\n";
  for (const char* arch : macho_archs) {
    const std::string a = arch;
    const std::string L = "ld64.lld-14 -arch " + a + " -platform_version macos 11.0 11.0 -syslibroot ../sdk -lSystem ";
    script += "mkdir -p " + a + "/app/bin " + a + "/app/lib " + a + "/app/plugins " + a + "/broken " + a + "/old\n";
    script += "cd " + a + "\n";
    for (const char* src : {"a", "w", "x", "x2", "r", "u", "main", "p", "s", "f"})
      script += std::string("clang-14 -target ") + a + "-apple-macos11 -c ../" + src + ".c -o " + src + ".o\n";
    script += L + "-dylib -install_name @rpath/libw.dylib w.o -o app/lib/libw.dylib\n";
    script += L + "-dylib -install_name @rpath/libx.dylib x.o -o app/lib/libx.dylib\n";
    script += L + "-dylib -install_name @rpath/libx.dylib x2.o -o broken/libx.dylib\n";
    script += L + "-dylib -install_name @loader_path/libr.dylib r.o -o app/lib/libr.dylib\n";
    script += L + "-dylib -install_name @rpath/libu.dylib u.o -o app/lib/libu.dylib\n";
    // libx before the re-exported libr: ld64.lld-14 writes LC_LOAD_DYLIB and
    // LC_REEXPORT_DYLIB for -reexport_library, and the binds into a dylib
    // linked after it then name the ordinal before (they would fail in dyld).
    const std::string liba = "-dylib -install_name @rpath/liba.dylib -rpath @loader_path/. a.o app/lib/libx.dylib "
                             "-weak_library app/lib/libw.dylib -reexport_library app/lib/libr.dylib ";
    script += L + liba + "-current_version 2.1 -compatibility_version 2.0 -o app/lib/liba.dylib\n";
    script += L + liba + "-current_version 1.5 -compatibility_version 1.0 -o old/liba.dylib\n";
    script += L + "-execute -rpath @executable_path/../lib main.o app/lib/liba.dylib app/lib/libu.dylib -o app/bin/main\n";
    script += L + "-execute -dead_strip_dylibs -rpath @executable_path/../lib main.o app/lib/liba.dylib app/lib/libu.dylib "
                  "-o app/bin/main_dead\n";
    script += L + "-execute main.o app/lib/liba.dylib -o app/bin/main_norpath\n";
    script += L + "-bundle -rpath @loader_path/../lib p.o app/lib/liba.dylib -o app/plugins/p.bundle\n";
    script += L + "-execute s.o -lself -lcyc1 -o app/bin/main_bad\n";
    script += L + "-execute f.o -framework Foo -o app/bin/main_fw\n";
    script += "cd ..\n";
  }
  write_file(dir + "/make.sh", script);
  if (run_in(dir, "sh make.sh >make.log 2>&1") != 0) return "";
  // After the links: stubs that ld64 would not accept — one re-exporting
  // itself, two re-exporting each other.
  write_file(dir + "/sdk/usr/lib/libself.tbd", stub("libself", "/usr/lib/libself.dylib", "_self_fn"));
  write_file(dir + "/sdk/usr/lib/libcyc1.tbd", stub("libcyc1", "/usr/lib/libcyc2.dylib", "_cyc_fn"));
  write_file(dir + "/sdk/usr/lib/libcyc2.tbd", stub("libcyc2", "/usr/lib/libcyc1.dylib", "_other"));
  return dir;
}

const std::string& fixtures() {
  static const std::string dir = have_macho_tools() ? make_dyld_fixtures() : std::string();
  return dir;
}

std::uint32_t find_object(const dyld_link& l, std::string_view path_suffix) {
  for (std::uint32_t i = 0; i < l.objects.size(); ++i) {
    const std::string& p = l.objects[i].path.empty() ? l.objects[i].name : l.objects[i].path;
    if (p.size() >= path_suffix.size() && p.compare(p.size() - path_suffix.size(), path_suffix.size(), path_suffix) == 0) return i;
  }
  return no_object;
}

dyld_link run_dyld(const std::string& file, dyld_options o) {
  auto l = link_dyld(file, o);
  REQUIRE(l);
  return std::move(*l);
}

std::vector<std::string> words(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

// (dylib short name, symbol) of every row of --bind and --lazy-bind.
std::vector<std::pair<std::string, std::string>> objdump_binds(const std::string& path) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const char* flag : {"--bind", "--lazy-bind"}) {
    bool in = false;
    for (const auto& l : lines(capture(std::string("llvm-objdump-14 --macho ") + flag + " " + shell_quote(path)).out)) {
      if (l.rfind("segment", 0) == 0) {
        in = true;
        continue;
      }
      if (!in || l.empty()) continue;
      auto w = words(l);
      if (!w.empty() && w.back() == "(weak_import)") w.pop_back();
      if (w.size() >= 2) out.emplace_back(w[w.size() - 2], w.back());
    }
  }
  return out;
}

std::set<std::string> undefined_of(const dyld_link& l) {
  std::set<std::string> out;
  for (const auto& u : l.undefined) out.insert(l.objects[u.from].name.substr(l.objects[u.from].name.rfind('/') + 1) + ":" + std::string(u.symbol));
  return out;
}

}  // namespace

TEST_CASE("dyld closure: @rpath up the load chain, @loader_path, stubs under --root", "[dyld]") {
  const std::string& dir = fixtures();
  LINKSCOPE_MACHO_FIXTURES_OR_RETURN(dir);
  for (const char* arch : macho_archs) {
    CAPTURE(arch);
    const std::string base = dir + "/" + arch;
    dyld_options o;
    o.root = dir + "/sdk";
    const dyld_link l = run_dyld(base + "/app/bin/main", o);
    CHECK(l.errors.empty());
    CHECK(l.undefined.empty());
    CHECK_FALSE(l.any_missing());
    const auto liba = find_object(l, "/app/lib/liba.dylib");
    const auto libw = find_object(l, "/app/lib/libw.dylib");
    const auto libr = find_object(l, "/app/lib/libr.dylib");
    const auto sys = find_object(l, "/usr/lib/libSystem.B.dylib");
    const auto sysc = find_object(l, "/usr/lib/system/libsystem_c.dylib");
    REQUIRE(liba != no_object);
    REQUIRE(libw != no_object);
    REQUIRE(libr != no_object);
    REQUIRE(sys != no_object);
    REQUIRE(sysc != no_object);
    // main's LC_RPATH @executable_path/../lib finds liba.
    CHECK(l.objects[liba].via == dyld_found_via::rpath);
    CHECK(l.objects[liba].rpath == "@executable_path/../lib");
    CHECK(l.objects[liba].where == l.objects[0].path);
    // liba's own LC_RPATH comes before main's in the chain.
    CHECK(l.objects[libw].via == dyld_found_via::rpath);
    CHECK(l.objects[libw].rpath == "@loader_path/.");
    CHECK(l.objects[libw].where == l.objects[liba].path);
    CHECK(l.objects[libr].via == dyld_found_via::loader_path);
    // The SDK's stub stands for libSystem; its inlined document for libsystem_c.
    CHECK(l.objects[sys].via == dyld_found_via::path);
    CHECK(l.objects[sys].kind == dyld_image_kind::tbd);
    CHECK(l.objects[sys].file == dir + "/sdk/usr/lib/libSystem.B.tbd");
    CHECK(l.objects[sysc].via == dyld_found_via::inlined);
    // dyld4 order: main's first level (libSystem, liba, libu), then depth first.
    CHECK(sys < liba);
    CHECK(liba < libw);
    // Without a root, libSystem is a system library, not checked.
    const dyld_link bare = run_dyld(base + "/app/bin/main", {});
    const auto bare_sys = find_object(bare, "/usr/lib/libSystem.B.dylib");
    REQUIRE(bare_sys != no_object);
    CHECK(bare.objects[bare_sys].kind == dyld_image_kind::system);
    CHECK(bare.undefined.empty());
    CHECK(bare.unchecked > 0);
    // A bundle analysed alone: its own @loader_path/../lib rpath.
    const dyld_link p = run_dyld(base + "/app/plugins/p.bundle", o);
    CHECK(p.errors.empty());
    CHECK(p.undefined.empty());
    const auto pa = find_object(p, "/app/lib/liba.dylib");
    REQUIRE(pa != no_object);
    CHECK(p.objects[pa].rpath == "@loader_path/../lib");
  }
}

TEST_CASE("dyld bindings: every llvm-objdump bind row binds in its dylib or one it re-exports", "[dyld]") {
  const std::string& dir = fixtures();
  LINKSCOPE_MACHO_FIXTURES_OR_RETURN(dir);
  for (const char* arch : macho_archs) {
    CAPTURE(arch);
    const std::string base = dir + "/" + arch;
    dyld_options o;
    o.root = dir + "/sdk";
    for (const std::string rel : {"/app/bin/main", "/app/plugins/p.bundle"}) {
      const dyld_link l = run_dyld(base + rel, o);
      CAPTURE(rel);
      // Every image of the closure that is a Mach-O file: its rows.
      for (std::uint32_t id = 0; id < l.objects.size(); ++id) {
        if (l.objects[id].kind != dyld_image_kind::macho) continue;
        const auto rows = objdump_binds(l.objects[id].file);
        for (const auto& [dylib, symbol] : rows) {
          CAPTURE(l.objects[id].path, dylib, symbol);
          std::uint32_t named = no_object;
          for (const auto& d : l.objects[id].dependencies)
            if (macho::library_short_name(d.install_name) == dylib) named = d.object;
          REQUIRE(named != no_object);
          bool bound = false;
          for (const auto& b : l.bindings)
            if (b.from == id && b.symbol == symbol && in_or_reexported(l, named, b.to)) bound = true;
          CHECK(bound);
        }
      }
      // _reexported_fn: named liba by main, defined in libr, which liba re-exports.
      if (rel == "/app/bin/main") {
        const auto libr = find_object(l, "/app/lib/libr.dylib");
        bool seen = false;
        for (const auto& b : l.bindings) seen = seen || (b.from == 0 && b.to == libr && b.symbol == "_reexported_fn");
        CHECK(seen);
      }
    }
  }
}

TEST_CASE("dyld undefined: a dylib rebuilt without a symbol, against ld64.lld -undefined error", "[dyld]") {
  const std::string& dir = fixtures();
  LINKSCOPE_MACHO_FIXTURES_OR_RETURN(dir);
  for (const char* arch : macho_archs) {
    CAPTURE(arch);
    const std::string base = dir + "/" + arch;
    // broken_app/: the app with libx rebuilt without x_var.
    const std::string broken = base + "/broken_app";
    REQUIRE(run_in(base, "rm -rf broken_app && cp -r app broken_app && cp broken/libx.dylib broken_app/lib/libx.dylib") == 0);
    dyld_options o;
    o.root = dir + "/sdk";
    const dyld_link l = run_dyld(broken + "/bin/main", o);
    CHECK(l.errors.empty());
    // The oracle: relink liba against the rebuilt libx.
    const auto r = capture("cd " + shell_quote(base) + " && ld64.lld-14 -arch " + arch +
                           " -platform_version macos 11.0 11.0 -syslibroot ../sdk -lSystem -dylib -undefined error "
                           "-install_name @rpath/liba.dylib a.o broken/libx.dylib -weak_library app/lib/libw.dylib -o /dev/null 2>&1");
    CHECK(r.status != 0);
    std::set<std::string> expected;
    for (const auto& line : lines(r.out)) {
      const auto at = line.find("undefined symbol: ");
      if (at != std::string::npos) expected.insert("liba.dylib:" + line.substr(at + 18));
    }
    REQUIRE_FALSE(expected.empty());
    CHECK(undefined_of(l) == expected);
    // libw missing: it is weakly linked (-weak_library), and ld64.lld marks
    // every import from it weak_import (llvm-objdump says so), so none is undefined.
    REQUIRE(run_in(base, "rm -f broken_app/lib/libw.dylib && cp app/lib/libx.dylib broken_app/lib/libx.dylib") == 0);
    const dyld_link gone = run_dyld(broken + "/bin/main", o);
    CHECK_FALSE(gone.any_missing());
    CHECK(gone.undefined.empty());
    CHECK(capture("llvm-objdump-14 --macho --bind " + shell_quote(base + "/app/lib/liba.dylib") + " | grep -c '_ext_var (weak_import)'").out == "1\n");
  }
}

TEST_CASE("dyld unused dylibs: what ld64.lld -dead_strip_dylibs drops", "[dyld]") {
  const std::string& dir = fixtures();
  LINKSCOPE_MACHO_FIXTURES_OR_RETURN(dir);
  for (const char* arch : macho_archs) {
    CAPTURE(arch);
    const std::string base = dir + "/" + arch;
    auto names = [](const std::string& file) {
      std::set<std::string> out;
      for (const auto& l : lines(capture("llvm-otool-14 -L " + shell_quote(file)).out))
        if (!l.empty() && l[0] == '\t') out.insert(words(l).front());
      return out;
    };
    const auto all = names(base + "/app/bin/main");
    const auto kept = names(base + "/app/bin/main_dead");
    std::set<std::string> dropped;
    for (const auto& n : all)
      if (!kept.count(n)) dropped.insert(n);
    REQUIRE_FALSE(dropped.empty());
    dyld_options o;
    o.root = dir + "/sdk";
    const dyld_link l = run_dyld(base + "/app/bin/main", o);
    std::set<std::string> unused;
    for (const auto& u : l.unused)
      if (u.from == 0) unused.insert(std::string(u.install_name));
    CHECK(unused == dropped);
  }
}

TEST_CASE("dyld refuses a dylib below the compatibility version asked for", "[dyld]") {
  const std::string& dir = fixtures();
  LINKSCOPE_MACHO_FIXTURES_OR_RETURN(dir);
  for (const char* arch : macho_archs) {
    CAPTURE(arch);
    const std::string base = dir + "/" + arch;
    REQUIRE(run_in(base, "rm -rf old_app && cp -r app old_app && cp old/liba.dylib old_app/lib/liba.dylib") == 0);
    dyld_options o;
    o.root = dir + "/sdk";
    const dyld_link l = run_dyld(base + "/old_app/bin/main", o);
    CHECK(l.any_missing());
    bool refused = false;
    for (const auto& r : l.objects[0].rejected) refused = refused || std::strcmp(r.reason, "incompatible library version") == 0;
    CHECK(refused);
    o.version_check = dyld_version_check::none;  // dyld4
    CHECK_FALSE(run_dyld(base + "/old_app/bin/main", o).any_missing());
  }
}

TEST_CASE("dyld bad input is an error naming the image", "[dyld]") {
  const std::string& dir = fixtures();
  LINKSCOPE_MACHO_FIXTURES_OR_RETURN(dir);
  for (const char* arch : macho_archs) {
    CAPTURE(arch);
    const std::string base = dir + "/" + arch;
    dyld_options o;
    o.root = dir + "/sdk";
    // A stub re-exporting itself, two stubs re-exporting each other.
    const dyld_link bad = run_dyld(base + "/app/bin/main_bad", o);
    std::string all;
    for (const auto& e : bad.errors) all += e + "\n";
    CAPTURE(all);
    CHECK(all.find("/usr/lib/libself.dylib: re-exports itself") != std::string::npos);
    CHECK(all.find("dependency cycle") != std::string::npos);
    // An @rpath that never resolves (no LC_RPATH at all).
    const dyld_link norpath = run_dyld(base + "/app/bin/main_norpath", o);
    const auto liba = find_object(norpath, "@rpath/liba.dylib");
    REQUIRE(liba != no_object);
    CHECK_FALSE(norpath.objects[liba].found());
    REQUIRE_FALSE(norpath.objects[liba].warnings.empty());
    CHECK(norpath.objects[liba].warnings[0].find("@rpath never resolves") != std::string::npos);
    // An ordinal past the dylib count: main's first lazy bind patched to ordinal 15.
    const std::string patched = base + "/app/bin/main_ordinal";
    std::string bytes = read_file(base + "/app/bin/main");
    {
      auto mapped = mapped_file::open(base + "/app/bin/main");
      REQUIRE(mapped);
      auto f = macho::file<macho::macho64le>::open(mapped->bytes());
      REQUIRE(f);
      auto info = f->dyld_info();
      REQUIRE(info);
      REQUIRE(*info);
      const byte_view lazy = (*info)->lazy_bind;
      REQUIRE_FALSE(lazy.empty());
      // SET_SEGMENT_AND_OFFSET_ULEB, its ULEB, then SET_DYLIB_ORDINAL_IMM.
      std::size_t at = 1;
      while (at < lazy.size() && (lazy.data()[at] & 0x80) != 0) ++at;
      ++at;
      REQUIRE(at < lazy.size());
      REQUIRE((lazy.data()[at] & 0xf0) == 0x10);
      bytes[static_cast<std::size_t>(lazy.base()) + at] = static_cast<char>(0x1f);
    }
    write_file(patched, bytes);
    const dyld_link ord = run_dyld(patched, o);
    REQUIRE_FALSE(ord.errors.empty());
    CHECK(ord.errors[0].find("main_ordinal: library ordinal 15 past its") != std::string::npos);
  }
}

TEST_CASE("dyld on the real sharp npm layout", "[dyld][real]") {
  const auto files = real_macho_files();
  if (files.empty()) return;
  const std::string dir = scratch_dir("resolve_dyld_real");
  for (const std::string cpu : {"x64", "arm64"}) {
    std::string node, vips;
    for (const auto& f : files) {
      if (f.find("sharp-darwin-" + cpu + "-0.35.6.node") != std::string::npos) node = f;
      if (f.find("sharp-libvips-darwin-" + cpu) != std::string::npos && f.find("libvips-cpp.8.18.8.dylib") != std::string::npos)
        vips = f;
    }
    if (node.empty() || vips.empty()) {
      WARN("LINKSCOPE_MACHO_REAL has no sharp-darwin-" + cpu + " .node and libvips-cpp pair");
      continue;
    }
    CAPTURE(cpu);
    // node_modules/@img/... as npm lays it out.
    const std::string img = dir + "/node_modules/@img";
    const std::string node_dir = img + "/sharp-darwin-" + cpu + "/lib";
    const std::string vips_dir = img + "/sharp-libvips-darwin-" + cpu + "/lib";
    std::filesystem::create_directories(node_dir);
    std::filesystem::create_directories(vips_dir);
    const std::string node_path = node_dir + "/sharp-darwin-" + cpu + "-0.35.6.node";
    std::filesystem::create_symlink(node, node_path);
    std::filesystem::create_symlink(vips, vips_dir + "/libvips-cpp.8.18.8.dylib");
    const dyld_link l = run_dyld(node_path, {});
    CHECK(l.errors.empty());
    CHECK(l.undefined.empty());
    const auto v = find_object(l, "/sharp-libvips-darwin-" + cpu + "/lib/libvips-cpp.8.18.8.dylib");
    REQUIRE(v != no_object);
    CHECK(l.objects[v].via == dyld_found_via::rpath);
    CHECK(l.objects[v].rpath == "@loader_path/../../sharp-libvips-darwin-" + cpu + "/lib");
    CHECK(l.objects[v].where == node_path);
    for (const char* sys : {"/usr/lib/libSystem.B.dylib", "/usr/lib/libc++.1.dylib",
                            "/System/Library/Frameworks/Foundation.framework/Versions/C/Foundation"}) {
      const auto s = find_object(l, sys);
      REQUIRE(s != no_object);
      CHECK(l.objects[s].kind == dyld_image_kind::system);
    }
    // Every import of the .node into libvips-cpp binds in libvips-cpp's trie.
    std::set<std::string> expected, bound;
    for (const auto& [dylib, symbol] : objdump_binds(node_path))
      if (dylib == "libvips-cpp.8.18") expected.insert(symbol);
    for (const auto& b : l.bindings)
      if (b.from == 0 && b.to == v) bound.insert(std::string(b.symbol));
    REQUIRE_FALSE(expected.empty());
    CHECK(bound == expected);
  }
}

TEST_CASE("linkscope-ldd on Mach-O: the rule that found each image, findings and exit status", "[dyld][cli]") {
  const std::string& dir = fixtures();
  LINKSCOPE_MACHO_FIXTURES_OR_RETURN(dir);
  const std::string ldd = tool_path("linkscope-ldd");
  if (!have_tool(ldd)) {
    WARN("linkscope-ldd not built: test skipped");
    return;
  }
  const std::string base = dir + "/x86_64";
  const std::string root = " --root " + shell_quote(dir + "/sdk") + " ";
  const auto tree = capture(ldd + " --tree" + root + shell_quote(base + "/app/bin/main"));
  CHECK(tree.status == 0);
  CHECK(tree.out.find("@rpath/liba.dylib => " + base + "/app/lib/liba.dylib [rpath @executable_path/../lib of " + base +
                      "/app/bin/main]") != std::string::npos);
  CHECK(tree.out.find("@rpath/libw.dylib => " + base + "/app/lib/libw.dylib [rpath @loader_path/. of " + base +
                      "/app/lib/liba.dylib]") != std::string::npos);
  CHECK(tree.out.find("@loader_path/libr.dylib => " + base + "/app/lib/libr.dylib [loader-path]") != std::string::npos);
  const auto list = capture(ldd + " " + shell_quote(base + "/app/bin/main"));
  CHECK(list.out.find("\t/usr/lib/libSystem.B.dylib => /usr/lib/libSystem.B.dylib (system, not checked)\n") != std::string::npos);
  // Findings: an undefined import (exit 1), an unused dylib (exit 1).
  REQUIRE(run_in(base, "rm -rf cli_app && cp -r app cli_app && cp broken/libx.dylib cli_app/lib/libx.dylib") == 0);
  const auto undef = capture(ldd + " --undefined" + root + shell_quote(base + "/cli_app/bin/main"));
  CHECK(undef.status == 1);
  CHECK(undef.out == "undefined symbol: _x_var\t(" + base + "/cli_app/lib/liba.dylib)\n");
  const auto unused = capture(ldd + " --unused" + root + shell_quote(base + "/app/bin/main"));
  CHECK(unused.status == 1);
  CHECK(unused.out == "Unused direct dependencies:\n\t" + base + "/app/lib/libu.dylib\n");
  const auto bindings = capture(ldd + " --bindings" + root + shell_quote(base + "/app/bin/main"));
  CHECK(bindings.out.find(base + "/app/bin/main\t" + base + "/app/lib/libr.dylib\t_reexported_fn\t\n") != std::string::npos);
  // Bad input: exit 2.
  CHECK(capture(ldd + root + shell_quote(base + "/app/bin/main_bad") + " 2>/dev/null").status == 2);
}

TEST_CASE("dyld: a framework found as its SDK stub, DYLD_LIBRARY_PATH first, a symlink loop", "[dyld]") {
  const std::string& dir = fixtures();
  LINKSCOPE_MACHO_FIXTURES_OR_RETURN(dir);
  for (const char* arch : macho_archs) {
    CAPTURE(arch);
    const std::string base = dir + "/" + arch;
    dyld_options o;
    o.root = dir + "/sdk";
    // Foo.framework/Versions/A/Foo is Foo.framework/Foo.tbd in an SDK.
    const dyld_link fw = run_dyld(base + "/app/bin/main_fw", o);
    const auto foo = find_object(fw, "/System/Library/Frameworks/Foo.framework/Versions/A/Foo");
    REQUIRE(foo != no_object);
    CHECK(fw.objects[foo].kind == dyld_image_kind::tbd);
    CHECK(fw.objects[foo].file == dir + "/sdk/System/Library/Frameworks/Foo.framework/Foo.tbd");
    CHECK(fw.undefined.empty());
    bool bound = false;
    for (const auto& b : fw.bindings) bound = bound || (b.from == 0 && b.to == foo && b.symbol == "_fw_fn");
    CHECK(bound);
    // DYLD_LIBRARY_PATH (an option, under the root) comes before @rpath: the
    // broken libx in it gives the undefined import.
    REQUIRE(run_in(dir, std::string("mkdir -p sdk/dlp_") + arch + " && cp " + arch + "/broken/libx.dylib sdk/dlp_" + arch + "/") == 0);
    o.library_path = {std::string("/dlp_") + arch};
    const dyld_link dlp = run_dyld(base + "/app/bin/main", o);
    const auto x = find_object(dlp, "/dlp_" + std::string(arch) + "/libx.dylib");
    REQUIRE(x != no_object);
    CHECK(dlp.objects[x].via == dyld_found_via::library_path);
    CHECK(undefined_of(dlp) == std::set<std::string>{"liba.dylib:_x_var"});
    // linkscope-ldd: the option, or the environment with --env only.
    const std::string ldd = tool_path("linkscope-ldd");
    if (have_tool(ldd)) {
      const std::string args = " --undefined --root " + shell_quote(dir + "/sdk") + " " + shell_quote(base + "/app/bin/main");
      const std::string env = "DYLD_LIBRARY_PATH=/dlp_" + std::string(arch) + " ";
      CHECK(capture(ldd + " --dyld-library-path /dlp_" + arch + args).status == 1);
      CHECK(capture(env + ldd + " --env" + args).status == 1);
      CHECK(capture(env + ldd + args).status == 0);  // the environment is not read without --env
      CHECK(capture(env + ldd + " --env --dyld-library-path /nowhere" + args).status == 0);  // the option wins
    }
    // An rpath folder that loops through symlinks: not found, no hang.
    REQUIRE(run_in(base, "rm -rf loop_app && cp -r app loop_app && rm -rf loop_app/lib && ln -s lib2 loop_app/lib && "
                         "ln -s lib loop_app/lib2") == 0);
    const dyld_link loop = run_dyld(base + "/loop_app/bin/main", {});
    CHECK(loop.any_missing());
  }
}
