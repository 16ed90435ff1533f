// Tests of resolve/file_format.hpp: the one sniff that linkscope-check's
// walk, linkscope-ldd, linkscope-nm and the Python module share. Each file is
// made by the toolchain that defines its format (gcc and ar for ELF,
// clang-14 -target *-apple-*, llvm-lipo-14 and llvm-ar-14 for Mach-O, mingw's
// gcc, ar and dlltool for COFF and PE, a written .tbd), so the expected
// format is the generator's; the files nothing should take for a format are
// the ones binutils-multiarch's objdump -f calls "file format not recognized".
#include <linkscope/core/mapped_file.hpp>
#include <linkscope/resolve/file_format.hpp>

#include <catch2/catch.hpp>

#include <string>
#include <utility>
#include <vector>

#include "support/fixtures.hpp"

using namespace linkscope;
using namespace linkscope_test;

namespace {

file_format of_bytes(const std::string& path) {
  auto mapped = mapped_file::open(path);
  REQUIRE(mapped);
  return sniff_format(mapped->bytes());
}

file_format members_of(const std::string& path) {
  auto mapped = mapped_file::open(path);
  REQUIRE(mapped);
  return archive_members(mapped->bytes());
}

}  // namespace

TEST_CASE("sniff_format names what each toolchain made", "[file_format]") {
  const std::string d = scratch_dir("file_format");
  write_file(d + "/a.c", "int f(void) { return 1; }\nint g;\n");
  write_file(d + "/libSystem.tbd",
             "--- !tapi-tbd\ntbd-version: 4\ntargets: [ x86_64-macos ]\ninstall-name: '/usr/lib/libSystem.B.dylib'\n...\n");
  write_file(d + "/old.tbd", "---\narchs: [ x86_64 ]\ninstall-name: /usr/lib/libz.1.dylib\n...\n");
  write_file(d + "/a.def", "LIBRARY a.dll\nEXPORTS\nf\n");
  std::vector<std::pair<std::string, file_format>> expected = {
      {"a.o", file_format::elf},        {"liba.so", file_format::elf},   {"liba.a", file_format::archive},
      {"libSystem.tbd", file_format::tbd}, {"old.tbd", file_format::tbd}};
  std::string script = "set -e\ngcc -c a.c -o a.o\ngcc -shared a.o -o liba.so\nar rcs liba.a a.o\n";
  const bool macho = have_tool("clang-14") && have_tool("llvm-lipo-14") && have_tool("llvm-ar-14");
  if (macho) {
    script +=
        "clang-14 -target x86_64-apple-macos11 -c a.c -o a_x86_64.o\n"
        "clang-14 -target arm64-apple-macos11 -c a.c -o a_arm64.o\n"
        "llvm-lipo-14 -create a_x86_64.o a_arm64.o -output a_fat.o\n"
        "llvm-ar-14 rcs --format=darwin liba_darwin.a a_x86_64.o\n";
    expected.insert(expected.end(), {{"a_x86_64.o", file_format::macho},
                                     {"a_arm64.o", file_format::macho},
                                     {"a_fat.o", file_format::macho_universal},
                                     {"liba_darwin.a", file_format::archive}});
  }
  const bool mingw = have_tool("x86_64-w64-mingw32-gcc") && have_tool("x86_64-w64-mingw32-dlltool");
  if (mingw) {
    script +=
        "x86_64-w64-mingw32-gcc -c a.c -o a_win.o\n"
        "x86_64-w64-mingw32-gcc -shared a_win.o -o a.dll\n"
        "x86_64-w64-mingw32-ar rcs liba_win.a a_win.o\n"
        "x86_64-w64-mingw32-dlltool -d a.def -l a.lib\n";
    expected.insert(expected.end(), {{"a_win.o", file_format::coff},
                                     {"a.dll", file_format::pe},
                                     {"liba_win.a", file_format::archive},
                                     {"a.lib", file_format::archive}});
  }
  write_file(d + "/make.sh", script);
  REQUIRE(run_in(d, "sh make.sh >make.log 2>&1") == 0);
  for (const auto& [name, format] : expected) {
    INFO(name);
    CHECK(of_bytes(d + "/" + name) == format);
    CHECK(sniff_file(d + "/" + name) == format);
  }
  CHECK(members_of(d + "/liba.a") == file_format::elf);
  if (macho) CHECK(members_of(d + "/liba_darwin.a") == file_format::macho);
  if (mingw) {
    CHECK(members_of(d + "/liba_win.a") == file_format::coff);
    CHECK(members_of(d + "/a.lib") == file_format::coff);  // short import members
  }
  CHECK(members_of(d + "/a.o") == file_format::unknown);
  CHECK(to_string(file_format::macho_universal) == "macho");
  CHECK(to_string(file_format::coff) == "coff");
}

TEST_CASE("sniff_format: what objdump -f does not recognize is unknown", "[file_format]") {
  const std::string d = scratch_dir("file_format_not");
  // x86-64's machine bytes (64 86) and then text: its "f_opthdr" is 0x7369,
  // more than a PE32+ optional header. A Java class file (cafebabe, then a
  // version word > 42 where nfat_arch would be). A DOS program ("MZ", no PE
  // header). Text. An empty file.
  write_file(d + "/text.o", std::string("d\x86", 2) + "hello world this is text and more text");
  write_file(d + "/A.class", std::string("\xca\xfe\xba\xbe\x00\x00\x00\x34", 8) + std::string(64, '\0'));
  std::string dos = "MZ" + std::string(0x3a, '\0') + std::string("\x40\x00\x00\x00", 4) + "not a PE header";
  write_file(d + "/dos.exe", dos);
  write_file(d + "/notes.txt", "---- not yaml\n");
  write_file(d + "/empty", "");
  const bool objdump = have_tool("objdump");
  for (const std::string name : {"text.o", "A.class", "dos.exe", "notes.txt", "empty"}) {
    INFO(name);
    // (mapped_file refuses an empty file: its bytes are no bytes)
    CHECK((name == "empty" ? sniff_format(byte_view()) : of_bytes(d + "/" + name)) == file_format::unknown);
    CHECK(sniff_file(d + "/" + name) == file_format::unknown);
    if (objdump && name != "empty")  // objdump -f says nothing of an empty file (status 1)
      CHECK(capture("objdump -f " + shell_quote(d + "/" + name) + " 2>&1 >/dev/null | grep -c 'file format not recognized'").out == "1\n");
  }
  CHECK(sniff_file(d + "/does-not-exist") == file_format::unknown);
}

TEST_CASE("sniff_file reads a PE signature that lies beyond the first 4 KiB", "[file_format]") {
  // e_lfanew = 0x2000: the head alone cannot show "PE\0\0", the file can.
  const std::string d = scratch_dir("file_format_far");
  std::string far = "MZ" + std::string(0x3a, '\0') + std::string("\x00\x20\x00\x00", 4);
  far.resize(0x2000, '\0');
  far += std::string("PE\0\0", 4) + std::string(0x100, '\0');
  write_file(d + "/far.exe", far);
  const auto* bytes = reinterpret_cast<const unsigned char*>(far.data());
  CHECK(sniff_format(byte_view(bytes, far.size())) == file_format::pe);
  CHECK(sniff_format(byte_view(bytes, 4096)) == file_format::unknown);
  CHECK(sniff_file(d + "/far.exe") == file_format::pe);
}
