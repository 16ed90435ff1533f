// macho/tbd.hpp: .tbd v1-v4 stubs. The oracle is ld64.lld-14: a link against
// the stub succeeds for each symbol the reader lists and fails for one it
// does not, and the image records the install name and current version the
// reader gives (llvm-otool-14 -L).
#include "linkscope/macho/tbd.hpp"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "macho/macho_fixtures.hpp"

using namespace linkscope;
using namespace linkscope_test;

namespace {
const char* tbd_v4 =
    "--- !tapi-tbd\n"
    "tbd-version:     4\n"
    "targets:         [ x86_64-macos, arm64-macos ]\n"
    "install-name:    '/usr/lib/libfoo.dylib'\n"
    "current-version: 2.3.4\n"
    "compatibility-version: 2\n"
    "parent-umbrella:\n"
    "  - targets:         [ x86_64-macos, arm64-macos ]\n"
    "    umbrella:        System\n"
    "exports:\n"
    "  - targets:         [ x86_64-macos, arm64-macos ]\n"
    "    symbols:         [ _foo, _bar,\n"
    "                       _baz ]\n"
    "    weak-symbols:    [ _weak_one ]\n"
    "    thread-local-symbols: [ _tls_one ]\n"
    "  - targets:         [ arm64-macos ]\n"
    "    symbols:         [ '_arm_only' ]\n"
    "    objc-classes:    [ NSThing ]\n"
    "...\n";

const char* tbd_v3 =
    "--- !tapi-tbd-v3\n"
    "archs:           [ x86_64, arm64 ]\n"
    "platform:        macosx\n"
    "install-name:    /usr/lib/libold.dylib\n"
    "current-version: 7.1\n"
    "compatibility-version: 1.0\n"
    "exports:\n"
    "  - archs:           [ x86_64, arm64 ]\n"
    "    symbols:         [ _old_a, _old_b ]\n"
    "    weak-def-symbols: [ _old_weak ]\n"
    "...\n";

const char* tbd_multi =
    "--- !tapi-tbd\n"
    "tbd-version:     4\n"
    "targets:         [ x86_64-macos ]\n"
    "install-name:    '/usr/lib/libumbrella.dylib'\n"
    "reexported-libraries:\n"
    "  - targets:         [ x86_64-macos ]\n"
    "    libraries:       [ '/usr/lib/libinner.dylib' ]\n"
    "exports:\n"
    "  - targets:         [ x86_64-macos ]\n"
    "    symbols:         [ _outer ]\n"
    "--- !tapi-tbd\n"
    "tbd-version:     4\n"
    "targets:         [ x86_64-macos ]\n"
    "install-name:    '/usr/lib/libinner.dylib'\n"
    "exports:\n"
    "  - targets:         [ x86_64-macos ]\n"
    "    symbols:         [ _inner ]\n"
    "...\n";

std::vector<std::string> all_symbols(const macho::tbd::document& d, std::string_view target) {
  std::vector<std::string> out;
  for (const auto& s : d.exports) {
    bool applies = false;
    for (auto t : s.targets) applies = applies || t.find(target) != std::string_view::npos;
    if (!applies) continue;
    for (auto n : s.symbols) out.emplace_back(n);
    for (auto n : s.weak_symbols) out.emplace_back(n);
    for (auto n : s.thread_local_symbols) out.emplace_back(n);
  }
  return out;
}

// Link an x86_64 executable that references `symbol` against stub `tbd`.
bool links(const std::string& dir, const std::string& tbd, const std::string& symbol) {
  write_file(dir + "/libfoo.tbd", tbd);
  const std::string c = symbol.substr(1);  // C name without the leading underscore
  write_file(dir + "/use.c", "extern int " + c + ";\nint main(void) { return " + c + "; }\n");
  return run_in(dir, "clang-14 -target x86_64-apple-macos11 -c use.c -o use.o && ld64.lld-14 -execute -arch x86_64 "
                     "-platform_version macos 11.0 11.0 -L. -lSystem use.o libfoo.tbd -o use >>link.log 2>&1") == 0;
}
}  // namespace

TEST_CASE("macho::tbd reads v4, v3 and multi-document stubs", "[macho]") {
  auto v4 = macho::tbd::read(byte_view(std::string_view(tbd_v4)));
  REQUIRE(v4);
  REQUIRE(v4->size() == 1);
  const auto& d = (*v4)[0];
  CHECK(d.version == 4);
  CHECK(d.install_name == "/usr/lib/libfoo.dylib");
  CHECK(d.current_version == "2.3.4");
  CHECK(d.compatibility_version == "2");
  CHECK(d.targets == std::vector<std::string_view>{"x86_64-macos", "arm64-macos"});
  CHECK(d.parent_umbrella == std::vector<std::string_view>{"System"});
  REQUIRE(d.exports.size() == 2);
  CHECK(d.exports[0].symbols == std::vector<std::string_view>{"_foo", "_bar", "_baz"});
  CHECK(d.exports[0].weak_symbols == std::vector<std::string_view>{"_weak_one"});
  CHECK(d.exports[0].thread_local_symbols == std::vector<std::string_view>{"_tls_one"});
  CHECK(d.exports[1].symbols == std::vector<std::string_view>{"_arm_only"});
  CHECK(d.exports[1].objc_classes == std::vector<std::string_view>{"NSThing"});

  auto v3 = macho::tbd::read(byte_view(std::string_view(tbd_v3)));
  REQUIRE(v3);
  CHECK((*v3)[0].version == 3);
  CHECK((*v3)[0].platform == "macosx");
  CHECK((*v3)[0].install_name == "/usr/lib/libold.dylib");
  CHECK((*v3)[0].exports[0].weak_symbols == std::vector<std::string_view>{"_old_weak"});

  auto multi = macho::tbd::read(byte_view(std::string_view(tbd_multi)));
  REQUIRE(multi);
  REQUIRE(multi->size() == 2);
  CHECK((*multi)[0].reexported_libraries == std::vector<std::string_view>{"/usr/lib/libinner.dylib"});
  CHECK((*multi)[1].install_name == "/usr/lib/libinner.dylib");
  CHECK((*multi)[1].exports[0].symbols == std::vector<std::string_view>{"_inner"});
}

TEST_CASE("macho::tbd: ld64.lld-14 links exactly the symbols the reader lists", "[macho]") {
  if (!have_macho_tools()) {
    WARN("clang-14 / ld64.lld-14 not installed: test skipped");
    return;
  }
  const std::string dir = scratch_dir("macho_tbd");
  write_file(dir + "/libSystem.tbd",
             "--- !tapi-tbd\ntbd-version: 4\ntargets: [ x86_64-macos ]\ninstall-name: '/usr/lib/libSystem.B.dylib'\n"
             "exports:\n  - targets: [ x86_64-macos ]\n    symbols: [ dyld_stub_binder ]\n...\n");
  for (const char* text : {tbd_v4, tbd_v3}) {
    auto docs = macho::tbd::read(byte_view(std::string_view(text)));
    REQUIRE(docs);
    const auto& d = (*docs)[0];
    const auto symbols = all_symbols(d, "x86_64");
    REQUIRE(symbols.size() >= 2);
    for (const auto& s : symbols) {
      if (s == "_tls_one") continue;  // a thread-local needs a __thread declaration
      INFO(d.install_name << " " << s);
      CHECK(links(dir, text, s));
    }
    CHECK_FALSE(links(dir, text, "_not_exported"));
    if (d.version == 4) CHECK_FALSE(links(dir, text, "_arm_only"));  // arm64 only
    // the image names the install name and version the reader gave
    REQUIRE(links(dir, text, symbols[0]));
    const auto otool = capture("llvm-otool-14 -L " + shell_quote(dir + "/use")).out;
    CHECK(otool.find(std::string(d.install_name) + " (compatibility version") != std::string::npos);
    CHECK(otool.find("current version " + std::string(d.current_version) + (d.current_version.size() == 3 ? ".0)" : ")")) !=
          std::string::npos);
  }
}

TEST_CASE("macho::tbd: malformed lines are errors with their offset", "[macho]") {
  auto read = [](std::string_view s) { return macho::tbd::read(byte_view(s)); };
  auto r1 = read("--- !tapi-tbd\ntbd-version: 4\ninstall-name: x\nexports:\n  - symbols: [ _a, _b\n");
  REQUIRE_FALSE(r1);
  CHECK(r1.error().offset == 67);  // the '[' that is never closed
  auto r2 = read("--- !tapi-tbd\ntbd-version: 4\n   install-name: x\n");
  REQUIRE_FALSE(r2);
  CHECK(r2.error().offset == 32);  // the over-indented key
  auto r3 = read("--- !tapi-tbd\ntbd-version: 4\ninstall-name: 'x\n");
  REQUIRE_FALSE(r3);
  CHECK(r3.error().offset == 43);  // the opening quote
  auto r4 = read("--- !tapi-tbd\ntbd-version: 9\ninstall-name: x\n");
  REQUIRE_FALSE(r4);
  CHECK(r4.error().offset == 27);
  auto r5 = read("--- !yaml\n");
  REQUIRE_FALSE(r5);
  CHECK(r5.error().code == errc::unsupported);
  auto r6 = read("--- !tapi-tbd\ntbd-version: 4\nthis is not yaml\n");
  REQUIRE_FALSE(r6);
  CHECK(r6.error().offset == 29);
  auto r7 = read("--- !tapi-tbd\ntbd-version: 4\ninstall-name: x\nexports: [ a ] b\n");
  REQUIRE_FALSE(r7);
  CHECK_FALSE(read(""));
}
