// Tests of linkscope/coff/apiset.hpp on wine's apisetschema.dll (Debian
// wine64): every entry's default host, as a Python reading of the same
// section with the documented v6 layout gives it, and patched bad input.
#include <linkscope/coff/apiset.hpp>

#include <catch2/catch.hpp>

#include <linkscope/core/mapped_file.hpp>

#include <cstring>
#include <filesystem>
#include <map>
#include <string>

#include "support/fixtures.hpp"

using namespace linkscope_test;
namespace pe = linkscope::pe;
using linkscope::byte_view;
using linkscope::errc;

namespace {
const std::string schema_dll = "/usr/lib/x86_64-linux-gnu/wine/x86_64-windows/apisetschema.dll";
}

TEST_CASE("is_apiset_name", "[apiset]") {
  CHECK(pe::is_apiset_name("api-ms-win-crt-runtime-l1-1-0.dll"));
  CHECK(pe::is_apiset_name("API-MS-Win-Core-Synch-L1-2-0.dll"));
  CHECK(pe::is_apiset_name("ext-ms-win-ntuser-window-l1-1-0"));
  CHECK(!pe::is_apiset_name("kernel32.dll"));
  CHECK(!pe::is_apiset_name("ap"));
}

TEST_CASE("wine's API set schema: hosts equal an independent reading", "[apiset][wine]") {
  if (!std::filesystem::exists(schema_dll) || !have_tool("/usr/bin/python3")) {
    WARN("wine64 missing: skipped");
    return;
  }
  // The oracle: a short Python reading of the section (v6 layout), printing
  // "name host" for each entry's first value.
  const std::string script =
      "import struct,sys\n"
      "b=open(sys.argv[1],'rb').read()\n"
      "pe=struct.unpack_from('<I',b,0x3c)[0]; n=struct.unpack_from('<H',b,pe+6)[0]; so=struct.unpack_from('<H',b,pe+20)[0]\n"
      "sec=pe+24+so\n"
      "for i in range(n):\n"
      "  if b[sec+40*i:sec+40*i+8].rstrip(b'\\0')==b'.apiset': base=struct.unpack_from('<I',b,sec+40*i+20)[0]\n"
      "v,size,flags,count,eo,ho,hf=struct.unpack_from('<7I',b,base)\n"
      "s=lambda o,l: b[base+o:base+o+l].decode('utf-16le').lower()\n"
      "for i in range(count):\n"
      "  f,no,nl,hl,vo,vc=struct.unpack_from('<6I',b,base+eo+24*i)\n"
      "  host=s(*struct.unpack_from('<II',b,base+vo+12)) if vc else ''\n"
      "  print(s(no,nl), host)\n";
  const std::string dir = scratch_dir("apiset");
  write_file(dir + "/read.py", script);
  auto r = capture("/usr/bin/python3 " + shell_quote(dir + "/read.py") + " " + shell_quote(schema_dll));
  REQUIRE(r.status == 0);
  std::map<std::string, std::string> theirs;
  for (const std::string& line : lines(r.out)) {
    const auto sp = line.find(' ');
    if (sp != std::string::npos) theirs[line.substr(0, sp)] = line.substr(sp + 1);
  }
  auto file = linkscope::mapped_file::open(schema_dll);
  REQUIRE(file);
  auto img = pe::image::parse(file->bytes());
  REQUIRE(img);
  auto schema = pe::apiset_schema::read(*img);
  REQUIRE(schema);
  std::map<std::string, std::string> ours;
  for (const auto& e : schema->entries()) ours[e.name] = e.values.empty() ? "" : e.values.front().host;
  CHECK(ours.size() > 400);
  CHECK(ours == theirs);
  // Lookups: any minor version, any case, with or without ".dll".
  CHECK(schema->host("api-ms-win-crt-runtime-l1-1-0.dll") == std::optional<std::string>("ucrtbase.dll"));
  CHECK(schema->host("API-MS-WIN-CRT-RUNTIME-L1-1-7") == std::optional<std::string>("ucrtbase.dll"));
  CHECK(!schema->host("api-ms-win-nonexistent-l1-1-0.dll"));

  // Bad input, patched into the section.
  std::string bytes = read_file(schema_dll);
  std::size_t base = 0;
  for (std::size_t i = 0; i < img->section_count(); ++i)
    if (std::string(img->section(i).name, 7) == ".apiset") base = img->section(i).pointer_to_raw_data;
  REQUIRE(base != 0);
  auto parse = [&](const std::string& b) {
    auto im = pe::image::parse(byte_view(std::string_view(b)));
    REQUIRE(im);
    return pe::apiset_schema::read(*im);
  };
  SECTION("version 2 is unsupported") {
    std::string b = bytes;
    const std::uint32_t v = 2;
    std::memcpy(&b[base], &v, 4);
    auto s = parse(b);
    REQUIRE(!s);
    CHECK(s.error().code == errc::unsupported);
    CHECK(s.error().offset == base);
  }
  SECTION("a count past the section") {
    std::string b = bytes;
    const std::uint32_t v = 0x10000000;
    std::memcpy(&b[base + 12], &v, 4);
    auto s = parse(b);
    REQUIRE(!s);
    CHECK(s.error().code == errc::out_of_range);
    CHECK(s.error().offset == base + 16);
  }
  SECTION("a name past the section") {
    std::string b = bytes;
    std::uint32_t entries = 0;
    std::memcpy(&entries, &b[base + 16], 4);
    const std::uint32_t v = 0x7ffffff0;
    std::memcpy(&b[base + entries + 4], &v, 4);
    auto s = parse(b);
    REQUIRE(!s);
    CHECK(std::string(s.error().message) == "API set name past the section");
    CHECK(s.error().offset == base + entries + 4);
  }
}
