// macho/nm.hpp and linkscope-nm on Mach-O (named test_macho_nm: tests/elf
// owns the target test_nm): byte-identical to llvm-nm-14 — default, -m, -g,
// -u, --defined-only on every fixture, and the slices of a universal file
// (no --arch: the host's slice; --arch=arm64; --arch=all with headers).
#include "linkscope/macho/nm.hpp"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "linkscope/core/mapped_file.hpp"
#include "macho/macho_fixtures.hpp"

using namespace linkscope;
using namespace linkscope_test;

namespace {
const std::string& fixture_dir() {
  static const std::string dir = have_macho_tools() ? make_macho_fixtures("macho_nm") : std::string();
  return dir;
}
}  // namespace

TEST_CASE("macho::nm_file equals llvm-nm-14 for each flag set", "[macho]") {
  LINKSCOPE_MACHO_FIXTURES_OR_RETURN(fixture_dir());
  struct flag_set {
    const char* flags;
    macho::nm_options options;
  };
  std::vector<flag_set> sets(5);
  sets[0].flags = "";
  sets[1].flags = "-m";
  sets[1].options.darwin_format = true;
  sets[2].flags = "-g";
  sets[2].options.external_only = true;
  sets[3].flags = "-u";
  sets[3].options.undefined_only = true;
  sets[4].flags = "--defined-only";
  sets[4].options.defined_only = true;
  std::vector<std::string> files = macho_images();
  files.push_back("liba_fat.dylib");
  for (const auto& name : files) {
    const std::string path = fixture_dir() + "/" + name;
    auto mapped = mapped_file::open(path);
    REQUIRE(mapped);
    for (const auto& set : sets) {
      INFO(name << " " << set.flags);
      std::string ours;
      REQUIRE(macho::nm_file(mapped->bytes(), path, set.options, ours));
      CHECK(ours == capture(std::string("llvm-nm-14 ") + set.flags + " " + shell_quote(path)).out);
    }
  }
}

TEST_CASE("linkscope-nm lists Mach-O files as llvm-nm-14 does", "[macho]") {
  LINKSCOPE_MACHO_FIXTURES_OR_RETURN(fixture_dir());
  const std::string nm = tool_path("linkscope-nm");
  REQUIRE(have_tool(nm));
  for (const std::string flags : {"", "-g", "-u", "--defined-only", "--arch=arm64", "--arch=all"}) {
    for (const std::string name : {"liba_fat.dylib", "a_arm64.o", "main2_x86_64", "a_x86_64.bundle"}) {
      if (flags.rfind("--arch", 0) == 0 && name != "liba_fat.dylib") continue;
      INFO(name << " " << flags);
      const std::string path = fixture_dir() + "/" + name;
      const auto ours = capture(shell_quote(nm) + " " + flags + " " + shell_quote(path));
      const auto theirs = capture("llvm-nm-14 " + flags + " " + shell_quote(path));
      CHECK(ours.status == 0);
      CHECK(ours.out == theirs.out);
    }
  }
  // two thin files: a "\nFILE:\n" header before each
  const std::string two = shell_quote(fixture_dir() + "/liba_x86_64.dylib") + " " + shell_quote(fixture_dir() + "/a_x86_64.o");
  CHECK(capture(shell_quote(nm) + " " + two).out == capture("llvm-nm-14 " + two).out);
}
