// macho/fat.hpp: universal files against llvm-otool-14 -f, slice choice,
// and overlap / past-end errors.
#include "linkscope/macho/fat.hpp"

#include <catch2/catch.hpp>

#include <array>
#include <string>
#include <vector>

#include "linkscope/core/mapped_file.hpp"
#include "linkscope/macho/file.hpp"
#include "macho/macho_fixtures.hpp"

using namespace linkscope;
using namespace linkscope_test;

namespace {
const std::string& fixture_dir() {
  static const std::string dir = have_macho_tools() ? make_macho_fixtures("macho_fat") : std::string();
  return dir;
}
std::string trim(std::string s) {
  while (!s.empty() && s.front() == ' ') s.erase(s.begin());
  return s;
}
}  // namespace

TEST_CASE("macho::fat_file lists the slices llvm-otool -f prints", "[macho]") {
  LINKSCOPE_MACHO_FIXTURES_OR_RETURN(fixture_dir());
  const std::string path = fixture_dir() + "/liba_fat.dylib";
  auto mapped = mapped_file::open(path);
  REQUIRE(mapped);
  REQUIRE(macho::is_fat(mapped->bytes()));
  CHECK_FALSE(macho::is_macho(mapped->bytes()));
  auto fat = macho::fat_file::open(mapped->bytes());
  REQUIRE(fat);
  std::vector<std::string> expected;
  for (const auto& l : lines(capture("llvm-otool-14 -f " + shell_quote(path)).out)) {
    const std::string t = trim(l);
    for (const char* key : {"cputype ", "cpusubtype ", "offset ", "size ", "align "})
      if (t.rfind(key, 0) == 0) expected.push_back(t.substr(0, t.find(' ', std::string(key).size())));
  }
  std::vector<std::string> ours;
  for (const auto& s : fat->slices()) {
    ours.push_back("cputype " + std::to_string(s.cputype));
    ours.push_back("cpusubtype " + std::to_string(s.cpusubtype & ~macho::CPU_SUBTYPE_MASK));
    ours.push_back("offset " + std::to_string(s.offset));
    ours.push_back("size " + std::to_string(s.size));
    ours.push_back("align 2^" + std::to_string(s.align));
  }
  CHECK(ours == expected);
  REQUIRE(fat->slices().size() == 2);

  // Each slice is byte-identical to the thin file lipo was given.
  for (const char* arch : macho_archs) {
    INFO(arch);
    auto slice = fat->find(arch);
    REQUIRE(slice);
    CHECK(slice->bytes.chars() == read_file(fixture_dir() + "/liba_" + std::string(arch) + ".dylib"));
    auto f = macho::file<macho::macho64le>::open(slice->bytes);
    REQUIRE(f);
    CHECK(f->cputype() == slice->cputype);
  }
  auto by_type = fat->find(macho::CPU_TYPE_ARM64, macho::CPU_SUBTYPE_ARM64_ALL);
  REQUIRE(by_type);
  CHECK(std::string(macho::arch_name(by_type->cputype, by_type->cpusubtype)) == "arm64");
  CHECK_FALSE(fat->find(macho::CPU_TYPE_POWERPC, 0));
  CHECK_FALSE(fat->find("i386"));
}

namespace {
std::string fat_image(std::vector<std::array<u32, 5>> archs, std::size_t total) {
  std::string s(total, '\0');
  auto put = [&](std::size_t at, u32 v) {
    for (int i = 0; i < 4; ++i) s[at + static_cast<std::size_t>(i)] = static_cast<char>((v >> (8 * (3 - i))) & 0xff);
  };
  put(0, macho::FAT_MAGIC);
  put(4, static_cast<u32>(archs.size()));
  for (std::size_t i = 0; i < archs.size(); ++i)
    for (std::size_t k = 0; k < 5; ++k) put(8 + 20 * i + 4 * k, archs[i][k]);
  return s;
}
}  // namespace

TEST_CASE("macho::fat_file rejects overlapping and past-end slices with offsets", "[macho]") {
  auto open = [](const std::string& s) { return macho::fat_file::open(byte_view(std::string_view(s))); };
  auto good = open(fat_image({{macho::CPU_TYPE_X86_64, 3, 64, 32, 2}, {macho::CPU_TYPE_ARM64, 0, 96, 32, 2}}, 128));
  REQUIRE(good);
  CHECK(good->slices().size() == 2);
  auto past = open(fat_image({{macho::CPU_TYPE_X86_64, 3, 64, 100, 2}}, 128));
  REQUIRE_FALSE(past);
  CHECK(past.error().offset == 16);
  auto overlap = open(fat_image({{macho::CPU_TYPE_X86_64, 3, 64, 48, 2}, {macho::CPU_TYPE_ARM64, 0, 96, 32, 2}}, 128));
  REQUIRE_FALSE(overlap);
  CHECK(overlap.error().code == errc::malformed);
  CHECK(overlap.error().offset == 36);
  auto headers = open(fat_image({{macho::CPU_TYPE_X86_64, 3, 8, 32, 2}}, 128));
  REQUIRE_FALSE(headers);
  CHECK(headers.error().code == errc::malformed);
  auto count = open(fat_image({}, 16).replace(4, 4, std::string("\0\0\0\x10", 4)));
  REQUIRE_FALSE(count);
  CHECK(count.error().offset == 4);
  // A Java class file (0xcafebabe, then version 45+) is not universal.
  std::string java = fat_image({}, 16);
  java[7] = 52;
  CHECK_FALSE(macho::is_fat(byte_view(std::string_view(java))));
}
