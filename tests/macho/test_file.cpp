// macho/types.hpp, macho/file.hpp: load commands, dylibs, rpaths, uuid,
// build versions, segments and sections, symtab, against llvm-otool-14 -l / -L
// on fixtures made at test time (tests/macho/macho_fixtures.hpp).
#include "linkscope/macho/file.hpp"

#include <catch2/catch.hpp>

#include <cstdio>
#include <string>
#include <vector>

#include "linkscope/core/mapped_file.hpp"
#include "linkscope/macho/types.hpp"
#include "macho/macho_fixtures.hpp"

using namespace linkscope;
using namespace linkscope_test;

namespace {

const std::string& fixture_dir() {
  static const std::string dir = have_macho_tools() ? make_macho_fixtures("macho_file") : std::string();
  return dir;
}

std::string trim(std::string s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.erase(s.begin());
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.pop_back();
  return s;
}

std::string version_xy(macho::packed_version v) {  // otool -l: "11.0", "11.0.1"
  std::string out = std::to_string(v.major()) + "." + std::to_string(v.minor());
  if (v.patch() != 0) out += "." + std::to_string(v.patch());
  return out;
}
std::string version_xyz(macho::packed_version v) {  // otool -L: "1.2.3"
  return std::to_string(v.major()) + "." + std::to_string(v.minor()) + "." + std::to_string(v.patch());
}

// The lines of `llvm-otool-14 -l` we compare: cmd, path/name, sectname, nsyms, uuid, minos/sdk.
std::vector<std::string> otool_summary(const std::string& path) {
  std::vector<std::string> out;
  for (const auto& raw : lines(capture("llvm-otool-14 -l " + shell_quote(path)).out)) {
    const std::string line = trim(raw);
    for (const char* key : {"cmd ", "path ", "name ", "sectname ", "nsyms ", "uuid ", "minos ", "sdk "}) {
      if (line.rfind(key, 0) == 0) {
        std::string value = trim(line.substr(std::string(key).size()));
        const auto paren = value.find(" (offset ");
        if (paren != std::string::npos) value.resize(paren);
        out.push_back(std::string(key) + value);
      }
    }
  }
  return out;
}

template <class File>
std::vector<std::string> our_summary(const File& f) {
  std::vector<std::string> out;
  for (const auto lc : f.commands()) {
    out.push_back(std::string("cmd ") + macho::command_name(lc.cmd));
    if (lc.cmd == File::types::segment_command_id) {
      auto seg = f.segment(lc);
      REQUIRE(seg);
      for (const auto& s : seg->sections) out.push_back("sectname " + std::string(s.name()));
    } else if (macho::dylib_kind_of(lc.cmd) || lc.cmd == macho::LC_ID_DYLIB) {
      auto d = f.dylib(lc);
      REQUIRE(d);
      out.push_back("name " + std::string(d->name));
    } else if (lc.cmd == macho::LC_RPATH || lc.cmd == macho::LC_LOAD_DYLINKER) {
      auto c = f.template command<typename File::lc_str_command>(lc);
      REQUIRE(c);
      auto s = f.command_string(lc, c->offset, sizeof(typename File::lc_str_command), 8);
      REQUIRE(s);
      out.push_back((lc.cmd == macho::LC_RPATH ? "path " : "name ") + std::string(*s));
    } else if (lc.cmd == macho::LC_SYMTAB) {
      auto st = f.symtab();
      REQUIRE(st);
      REQUIRE(*st);
      out.push_back("nsyms " + std::to_string((*st)->symbols.size()));
    } else if (lc.cmd == macho::LC_UUID) {
      auto u = f.uuid();
      REQUIRE(u);
      REQUIRE(*u);
      char buf[64];
      const auto& b = **u;
      std::snprintf(buf, sizeof buf, "uuid %02X%02X%02X%02X-%02X%02X-%02X%02X-%02X%02X-%02X%02X%02X%02X%02X%02X", b[0],
                    b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
      out.push_back(buf);
    } else if (lc.cmd == macho::LC_BUILD_VERSION) {
      auto c = f.template command<typename File::build_version_command>(lc);
      REQUIRE(c);
      // otool prints sdk before minos
      out.push_back("sdk " + (c->sdk == 0u ? std::string("n/a") : version_xy({c->sdk})));
      out.push_back("minos " + version_xy({c->minos}));
    }
  }
  return out;
}

// `llvm-otool-14 -L`: the install name and every dylib, with versions and kind.
std::vector<std::string> otool_libraries(const std::string& path) {
  auto all = lines(capture("llvm-otool-14 -L " + shell_quote(path)).out);
  if (!all.empty()) all.erase(all.begin());  // "path:"
  for (auto& l : all) l = trim(l);
  return all;
}

}  // namespace

TEST_CASE("macho::file load commands match llvm-otool -l on every fixture", "[macho]") {
  LINKSCOPE_MACHO_FIXTURES_OR_RETURN(fixture_dir());
  std::size_t checked = 0;
  for (const auto& name : macho_images()) {
    INFO(name);
    const std::string path = fixture_dir() + "/" + name;
    auto mapped = mapped_file::open(path);
    REQUIRE(mapped);
    const auto bytes = mapped->bytes();
    REQUIRE(macho::is_macho(bytes));
    const auto expected = otool_summary(path);
    REQUIRE(expected.size() > 4);
    auto r = macho::visit_macho(bytes, [&](const auto& f) -> result<void> {
      CHECK(f.is64());
      CHECK_FALSE(f.is_big_endian());
      CHECK(our_summary(f) == expected);
      return ok();
    });
    REQUIRE(r);
    ++checked;
  }
  CHECK(checked == macho_images().size());
}

TEST_CASE("macho::file dylibs, install name and versions match llvm-otool -L", "[macho]") {
  LINKSCOPE_MACHO_FIXTURES_OR_RETURN(fixture_dir());
  for (const auto& name : macho_images()) {
    if (name.size() > 2 && name.substr(name.size() - 2) == ".o") continue;
    INFO(name);
    const std::string path = fixture_dir() + "/" + name;
    auto mapped = mapped_file::open(path);
    REQUIRE(mapped);
    std::vector<std::string> ours;
    auto r = macho::visit_macho(mapped->bytes(), [&](const auto& f) -> result<void> {
      auto line = [](const macho::dylib_ref& d) {
        std::string s = std::string(d.name) + " (compatibility version " + version_xyz(d.compatibility_version) +
                        ", current version " + version_xyz(d.current_version);
        if (d.kind != macho::dylib_kind::load) s += std::string(", ") + macho::to_string(d.kind);
        return s + ")";
      };
      LINKSCOPE_TRY(id, f.install_name());
      if (id) ours.push_back(line(*id));
      LINKSCOPE_TRY(libs, f.dylibs());
      for (const auto& d : libs) ours.push_back(line(d));
      return ok();
    });
    REQUIRE(r);
    CHECK(ours == otool_libraries(path));
  }
}

TEST_CASE("macho::file accessors: rpaths, platform, dyld info, linkedit data", "[macho]") {
  LINKSCOPE_MACHO_FIXTURES_OR_RETURN(fixture_dir());
  auto mapped = mapped_file::open(fixture_dir() + "/liba_arm64.dylib");
  REQUIRE(mapped);
  auto f = macho::file<macho::macho64le>::open(mapped->bytes());
  REQUIRE(f);
  CHECK(f->cputype() == macho::CPU_TYPE_ARM64);
  CHECK(f->filetype() == macho::MH_DYLIB);
  CHECK(f->is_two_level());
  auto rp = f->rpaths();
  REQUIRE(rp);
  CHECK(*rp == std::vector<std::string_view>{"@loader_path/../lib", "/opt/x"});  // the -rpath flags given to ld64.lld
  auto id = f->install_name();
  REQUIRE(id);
  REQUIRE(*id);
  CHECK((*id)->name == "@rpath/liba.dylib");
  CHECK((*id)->current_version.raw == ((1u << 16) | (2u << 8) | 3u));  // -current_version 1.2.3
  auto plats = f->platforms();
  REQUIRE(plats);
  REQUIRE(plats->size() == 1);
  CHECK((*plats)[0].platform == macho::PLATFORM_MACOS);
  CHECK((*plats)[0].minos.major() == 11);  // -platform_version macos 11.0 11.0
  auto info = f->dyld_info();
  REQUIRE(info);
  REQUIRE(*info);
  CHECK((*info)->cmd == macho::LC_DYLD_INFO_ONLY);
  CHECK_FALSE((*info)->exports.empty());
  auto starts = f->linkedit_data(macho::LC_FUNCTION_STARTS);
  REQUIRE(starts);
  CHECK(*starts);
  auto chained = f->linkedit_data(macho::LC_DYLD_CHAINED_FIXUPS);
  REQUIRE(chained);
  CHECK_FALSE(*chained);
  auto dys = f->dysymtab();
  REQUIRE(dys);
  CHECK(*dys);
  // The wrong variant is refused.
  CHECK_FALSE(macho::file<macho::macho32le>::open(mapped->bytes()));
  CHECK_FALSE(macho::file<macho::macho64be>::open(mapped->bytes()));
}

namespace {
// A minimal 64-bit LE header with one command, for malformed cases.
std::string tiny_macho(u32 ncmds, u32 sizeofcmds, u32 cmd, u32 cmdsize, std::size_t total) {
  std::string s(total, '\0');
  auto put = [&](std::size_t at, u32 v) {
    for (int i = 0; i < 4; ++i) s[at + static_cast<std::size_t>(i)] = static_cast<char>((v >> (8 * i)) & 0xff);
  };
  put(0, macho::MH_MAGIC_64);
  put(4, macho::CPU_TYPE_X86_64);
  put(12, macho::MH_DYLIB);
  put(16, ncmds);
  put(20, sizeofcmds);
  put(32, cmd);
  put(36, cmdsize);
  return s;
}
}  // namespace

TEST_CASE("macho::file rejects malformed load commands with their offset", "[macho]") {
  auto open = [](const std::string& s) { return macho::file<macho::macho64le>::open(byte_view(std::string_view(s))); };
  // sizeofcmds past the end of the file
  auto r1 = open(tiny_macho(1, 4096, macho::LC_UUID, 24, 64));
  REQUIRE_FALSE(r1);
  CHECK(r1.error().offset == 20);
  // ncmds larger than sizeofcmds can hold
  auto r2 = open(tiny_macho(1000, 24, macho::LC_UUID, 24, 64));
  REQUIRE_FALSE(r2);
  CHECK(r2.error().code == errc::too_large);
  // cmdsize not a multiple of 8
  auto r3 = open(tiny_macho(1, 24, macho::LC_UUID, 20, 64));
  REQUIRE_FALSE(r3);
  CHECK(r3.error().offset == 36);
  // cmdsize past sizeofcmds
  auto r4 = open(tiny_macho(1, 24, macho::LC_UUID, 32, 64));
  REQUIRE_FALSE(r4);
  CHECK(r4.error().code == errc::truncated);
  // cmdsize below 8
  auto r5 = open(tiny_macho(1, 24, macho::LC_UUID, 0, 64));
  REQUIRE_FALSE(r5);
  CHECK(r5.error().code == errc::bad_field);
  // cmdsize smaller than the record: the accessor refuses it
  const std::string small = tiny_macho(1, 8, macho::LC_UUID, 8, 64);
  auto r6 = open(small);
  REQUIRE(r6);
  auto u = r6->uuid();
  REQUIRE_FALSE(u);
  CHECK(u.error().offset == 36);
  // a dylib name offset outside its command
  std::string dy = tiny_macho(1, 24, macho::LC_LOAD_DYLIB, 24, 64);
  dy[40] = 30;  // name offset 30 >= cmdsize 24
  auto r7 = open(dy);
  REQUIRE(r7);
  auto libs = r7->dylibs();
  REQUIRE_FALSE(libs);
  CHECK(libs.error().offset == 40);
  // a dylib name without its NUL inside the command
  std::string dy2 = tiny_macho(1, 32, macho::LC_LOAD_DYLIB, 32, 72);
  dy2[40] = 24;
  for (std::size_t i = 56; i < 64; ++i) dy2[i] = 'x';
  auto r8 = open(dy2);
  REQUIRE(r8);
  auto libs2 = r8->dylibs();
  REQUIRE_FALSE(libs2);
  CHECK(libs2.error().code == errc::malformed);
}

TEST_CASE("macho::file survives truncation and byte flips of every fixture", "[macho]") {
  LINKSCOPE_MACHO_FIXTURES_OR_RETURN(fixture_dir());
  for (const auto& name : macho_images()) {
    const std::string content = read_file(fixture_dir() + "/" + name);
    auto exercise = [](std::string_view s) {
      (void)macho::visit_macho(byte_view(s), [](const auto& f) -> result<void> {
        (void)f.dylibs();
        (void)f.rpaths();
        (void)f.sections();
        (void)f.platforms();
        (void)f.uuid();
        (void)f.dysymtab();
        (void)f.dyld_info();
        (void)f.export_trie();
        if (auto st = f.symtab(); st && *st)
          for (const auto& sym : (*st)->symbols) (void)f.symbol_name(**st, sym);
        return ok();
      });
    };
    for (std::size_t cut = 0; cut < content.size(); cut += 1 + content.size() / 97) exercise(std::string_view(content).substr(0, cut));
    std::string flipped = content;
    for (std::size_t i = 0; i < std::min<std::size_t>(flipped.size(), 4096); i += 7) {
      flipped[i] = static_cast<char>(flipped[i] ^ 0xff);
      exercise(flipped);
      flipped[i] = content[i];
    }
  }
  SUCCEED();
}
