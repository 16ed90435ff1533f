// macho/tbd.hpp: .tbd v1-v4 stubs. The oracle is ld64.lld-14: a link against
// the stub succeeds for each symbol the reader lists and fails for one it
// does not, and the image records the install name and current version the
// reader gives (llvm-otool-14 -L).
#include "linkscope/macho/tbd.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
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

// v1 and v2 write Objective-C class and ivar names with a leading
// underscore that is not part of the name.
const char* tbd_v2 =
    "--- !tapi-tbd-v2\n"
    "archs:           [ x86_64 ]\n"
    "uuids:           [ 'x86_64: 11111111-2222-3333-4444-555555555555' ]\n"
    "platform:        macosx\n"
    "flags:           [ not_app_extension_safe ]\n"
    "install-name:    /usr/lib/libtwo.dylib\n"
    "current-version: 3.1.4\n"
    "swift-version:   5\n"
    "exports:\n"
    "  - archs:           [ x86_64 ]\n"
    "    symbols:         [ _two_a ]\n"
    "    objc-classes:    [ _NSTwo ]\n"
    "    objc-ivars:      [ _NSTwo._count ]\n"
    "    weak-def-symbols: [ _two_weak ]\n"
    "undefineds:\n"
    "  - archs:           [ x86_64 ]\n"
    "    weak-ref-symbols: [ _elsewhere ]\n"
    "...\n";

const char* tbd_v1 =
    "---\n"
    "archs:           [ x86_64 ]\n"
    "platform:        macosx\n"
    "install-name:    /usr/lib/libone.dylib\n"
    "current-version: 1.5\n"
    "objc-constraint: none\n"
    "exports:\n"
    "  - archs:           [ x86_64 ]\n"
    "    allowed-clients: [ client ]\n"
    "    symbols:         [ _one_a, _one_b ]\n"
    "    objc-classes:    [ _NSOne ]\n"
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

// Link an x86_64 executable that references `symbol` against stub `tbd`.
// The reference is written in assembly, so that any name ("_OBJC_CLASS_$_X")
// can be referenced.
bool links(const std::string& dir, const std::string& tbd, const std::string& symbol) {
  write_file(dir + "/libfoo.tbd", tbd);
  write_file(dir + "/use.s", ".globl _main\n_main:\n  movq " + symbol + "@GOTPCREL(%rip), %rax\n  ret\n");
  return run_in(dir, "clang-14 -target x86_64-apple-macos11 -c use.s -o use.o && ld64.lld-14 -execute -arch x86_64 "
                     "-platform_version macos 11.0 11.0 -L. -lSystem use.o libfoo.tbd -o use >link.log 2>&1") == 0;
}

// Every name the reader says the stub exports for x86_64.
std::vector<std::string> exported_names(const macho::tbd::document& d) {
  std::vector<std::string> out;
  macho::tbd::for_each_exported_name(d, "x86_64", [&](std::string_view n, bool) { out.emplace_back(n); });
  return out;
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
  for (const char* text : {tbd_v4, tbd_v3, tbd_v2, tbd_v1}) {
    auto docs = macho::tbd::read(byte_view(std::string_view(text)));
    REQUIRE(docs);
    const auto& d = (*docs)[0];
    const auto symbols = exported_names(d);
    REQUIRE(symbols.size() >= 2);
    for (const auto& s : symbols) {
      if (s == "_tls_one") continue;  // a thread-local needs a __thread declaration
      INFO(d.install_name << " " << s);
      CHECK(links(dir, text, s));
    }
    CHECK_FALSE(links(dir, text, "_not_exported"));
    if (d.version == 4) CHECK_FALSE(links(dir, text, "_arm_only"));  // arm64 only
    // v1/v2: the underscore as written is not part of the class name
    if (d.version <= 2) {
      CHECK(std::find(symbols.begin(), symbols.end(), d.version == 2 ? "_OBJC_CLASS_$_NSTwo" : "_OBJC_CLASS_$_NSOne") !=
            symbols.end());
      CHECK_FALSE(links(dir, text, d.version == 2 ? "_OBJC_CLASS_$__NSTwo" : "_OBJC_CLASS_$__NSOne"));
    }
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

// TAPI's mapping has a key set per version, with required keys; ld64 refuses
// a stub with any other key, a duplicated key or a missing required one, and
// names the line and column. The reader must refuse the same stubs, at the
// same place.
TEST_CASE("macho::tbd: the stubs ld64.lld-14 refuses are errors where it points", "[macho]") {
  if (!have_macho_tools()) {
    WARN("clang-14 / ld64.lld-14 not installed: test skipped");
    return;
  }
  const std::string dir = scratch_dir("macho_tbd_keys");
  write_file(dir + "/libSystem.tbd",
             "--- !tapi-tbd\ntbd-version: 4\ntargets: [ x86_64-macos ]\ninstall-name: '/usr/lib/libSystem.B.dylib'\n"
             "exports:\n  - targets: [ x86_64-macos ]\n    symbols: [ dyld_stub_binder ]\n...\n");
  const std::string v2 = "archs: [ x86_64 ]\nplatform: macosx\ninstall-name: /usr/lib/libfoo.dylib\n";
  const std::string sec = "exports:\n  - archs: [ x86_64 ]\n    symbols: [ _plain ]\n";
  const std::string v4 = "tbd-version: 4\ntargets: [ x86_64-macos ]\ninstall-name: /usr/lib/libfoo.dylib\n";
  const std::string sec4 = "exports:\n  - targets: [ x86_64-macos ]\n    symbols: [ _plain ]\n";
  const std::vector<std::string> refused = {
      "--- !tapi-tbd-v2\n" + v2 + sec + "bogus: 1\n...\n",
      "--- !tapi-tbd-v2\n" + v2 + sec + "swift-abi-version: 5\n...\n",          // v3/v4's key
      "--- !tapi-tbd-v3\n" + v2 + sec + "swift-version: 5\n...\n",              // v1/v2's key
      "---\n" + v2 + sec + "flags: [ flat_namespace ]\n...\n",                 // not in v1
      "---\n" + v2 + sec + "undefineds:\n  - archs: [ x86_64 ]\n...\n",       // not in v1
      "--- !tapi-tbd-v2\n" + v2 + sec + "    objc-eh-types: [ E ]\n...\n",     // v3 and v4 only
      "--- !tapi-tbd-v3\n" + v2 + sec + "    weak-symbols: [ _w ]\n...\n",     // v4's spelling
      "--- !tapi-tbd-v3\n" + v2 + sec + "    allowed-clients: [ c ]\n...\n",   // v1's spelling
      "--- !tapi-tbd-v2\narchs: [ x86_64 ]\ninstall-name: /usr/lib/libfoo.dylib\n" + sec + "...\n",  // no platform
      "--- !tapi-tbd-v2\nplatform: macosx\ninstall-name: /usr/lib/libfoo.dylib\n" + sec + "...\n",   // no archs
      "--- !tapi-tbd-v2\n" + v2 + "exports:\n  - symbols: [ _plain ]\n...\n",  // a section without archs
      "--- !tapi-tbd-v2\n" + v2 + sec + "undefineds:\n  - archs: [ x86_64 ]\n    weak-symbols: [ _w ]\n...\n",
      "--- !tapi-tbd\ntargets: [ x86_64-macos ]\ninstall-name: /usr/lib/libfoo.dylib\n" + sec4 + "...\n",
      "--- !tapi-tbd\n" + v4 + sec4 + "    weak-def-symbols: [ _w ]\n...\n",  // v1-3's spelling
      "--- !tapi-tbd\n" + v4 + sec4 + "platform: macos\n...\n",
      "--- !tapi-tbd\n" + v4 + "parent-umbrella:\n  - targets: [ x86_64-macos ]\n    name: System\n" + sec4 +
          "...\n",
      "--- !tapi-tbd\n" + v4 + "reexported-libraries:\n  - targets: [ x86_64-macos ]\n" + sec4 + "...\n",
  };
  for (const auto& text : refused) {
    INFO(text);
    CHECK_FALSE(links(dir, text, "_plain"));
    // "libfoo.tbd:LINE:COLUMN: error: ..." from ld64.lld-14
    const std::string log = capture("cat " + shell_quote(dir + "/link.log")).out;
    const auto at = log.find("\nlibfoo.tbd:");
    REQUIRE(at != std::string::npos);
    const std::size_t line = std::stoul(log.substr(at + 12));
    const std::size_t column = std::stoul(log.substr(log.find(':', at + 12) + 1));
    auto r = macho::tbd::read(byte_view(std::string_view(text)));
    REQUIRE_FALSE(r);
    const auto offset = static_cast<std::size_t>(r.error().offset);
    const std::size_t line_start = text.rfind('\n', offset == 0 ? 0 : offset - 1);
    const std::size_t our_line = 1 + static_cast<std::size_t>(std::count(text.begin(), text.begin() + offset, '\n'));
    const std::size_t our_column = offset - (line_start == std::string::npos ? 0 : line_start + 1) + 1;
    CHECK(our_line == line);
    CHECK(our_column == column);
  }
  // and the stubs it takes with every optional key of their version
  for (const std::string& text : std::vector<std::string>{"--- !tapi-tbd-v1\n" + v2 + sec + "...\n",
                                 "--- !tapi-tbd-v2\n" + v2 + sec + "objc-constraint: retain_release\nparent-umbrella: S\n"
                                 "undefineds:\n  - archs: [ x86_64 ]\n    weak-ref-symbols: [ _w ]\n...\n",
                                 "--- !tapi-tbd-v3\n" + v2 + sec + "swift-abi-version: 5\n...\n",
                                 "--- !tapi-tbd\n" + v4 + "uuids:\n  - target: x86_64-macos\n"
                                 "    value: 11111111-2222-3333-4444-555555555555\nflags: [ installapi ]\n"
                                 "swift-abi-version: 5\nallowable-clients:\n  - targets: [ x86_64-macos ]\n"
                                 "    clients: [ c ]\n" + sec4 + "undefineds:\n  - targets: [ x86_64-macos ]\n"
                                 "    weak-symbols: [ _w ]\n...\n"}) {
    INFO(text);
    CHECK(links(dir, text, "_plain"));
    auto r = macho::tbd::read(byte_view(std::string_view(text)));
    REQUIRE(r);
    CHECK(exported_names((*r)[0]) == std::vector<std::string>{"_plain"});
  }
  // A repeated key is not refused: the last one counts, in ld64 as here.
  const std::string twice = "--- !tapi-tbd-v2\n" + v2 + "install-name: /usr/lib/libbar.dylib\n" + sec + "...\n";
  REQUIRE(links(dir, twice, "_plain"));
  CHECK(capture("llvm-otool-14 -L " + shell_quote(dir + "/use")).out.find("/usr/lib/libbar.dylib (") != std::string::npos);
  auto r = macho::tbd::read(byte_view(std::string_view(twice)));
  REQUIRE(r);
  CHECK((*r)[0].install_name == "/usr/lib/libbar.dylib");
}
