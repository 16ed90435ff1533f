// linkscope-nm against GNU nm 2.40, byte for byte (LC_ALL=C: nm sorts with
// strcoll, which is strcmp in the C locale), on fixtures generated at test
// time: gcc/clang objects and DSOs (version scripts, verdef and verneed,
// hidden versions, --hash-style=gnu|sysv|both), 32-bit, big-endian and other
// machines, an object with more than 65280 sections, archives (GNU, thin,
// llvm-ar), several files at once. DSOs without section headers (which nm
// cannot read) are checked against nm on the original file and against
// llvm-readelf-14 --dyn-syms.
#include <linkscope/elf/nm.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "support/elf_fixtures.hpp"
#include "support/fixtures.hpp"

using namespace linkscope_test;

namespace {

const elf_fixtures& fx() { return elf_fixtures::get("nm_fixtures"); }

// The oracle is binutils-multiarch's nm (scripts/test-all installs it): its
// BFD has every ELF backend, so ARM/AArch64 mapping symbols and RISC-V local
// labels are target-special and hidden. Debian's single-target nm reads those
// machines through the generic backend instead (linkscope-nm --target=elfNN-*).
bool nm_is_multiarch() {
  static const bool multiarch = capture("nm --help 2>&1").out.find("elf64-littleaarch64") != std::string::npos;
  return multiarch;
}

std::string nm_cmd(const std::string& flags, const std::string& files) {
  return "cd " + shell_quote(fx().dir) + " && LC_ALL=C " + gnu_nm() + " " + flags + " " + files + " 2>/dev/null";
}
std::string ours_cmd(const std::string& flags, const std::string& files) {
  return "cd " + shell_quote(fx().dir) + " && LC_ALL=C " + shell_quote(tool_path("linkscope-nm")) + " " + flags + " " +
         files + " 2>/dev/null";
}

void check_same(const std::string& flags, const std::string& files) {
  auto expected = capture(nm_cmd(flags, files));
  auto actual = capture(ours_cmd(flags, files));
  INFO("nm " << flags << " " << files);
  CHECK(actual.out == expected.out);
  CHECK((actual.status == 0) == (expected.status == 0));
}

// Many flag sets on one file in two shell runs (one for nm, one for ours):
// the outputs are joined with a marker line per flag set.
void check_same_all(const std::vector<std::string>& flag_sets, const std::string& file) {
  auto script = [&](const std::string& program) {
    std::string s = "cd " + shell_quote(fx().dir) + " && export LC_ALL=C && {";
    for (const std::string& flags : flag_sets)
      s += " echo '=== " + flags + "'; " + program + " " + flags + " " + shell_quote(file) + " 2>/dev/null; echo \"rc=$?\";";
    return s + " }";
  };
  auto expected = capture(script(gnu_nm()));
  auto actual = capture(script(shell_quote(tool_path("linkscope-nm"))));
  if (actual.out == expected.out) {
    CHECK(actual.out == expected.out);
    return;
  }
  // Report per flag set.
  auto split = [](const std::string& all) {
    std::vector<std::string> parts;
    std::size_t pos = 0;
    while ((pos = all.find("=== ", pos)) != std::string::npos) {
      std::size_t next = all.find("\n=== ", pos);
      parts.push_back(all.substr(pos, next == std::string::npos ? std::string::npos : next + 1 - pos));
      if (next == std::string::npos) break;
      pos = next + 1;
    }
    return parts;
  };
  auto e = split(expected.out);
  auto a = split(actual.out);
  REQUIRE(e.size() == a.size());
  for (std::size_t i = 0; i < e.size(); ++i) {
    INFO("file " << file);
    CHECK(a[i] == e[i]);
  }
}

const std::vector<std::string> single_file_flags = {
    "",   "-D",  "-p", "-D -p", "-u", "-g", "-A", "-o", "-P", "-S", "--defined-only", "--with-symbol-versions",
    "-a", "-D -S -P -A", "-g -u", "-D --defined-only -g", "-P -S", "-pgS", "-D -u", "-g --defined-only -S",
    "-C", "-D -C", "-C -P -S", "--demangle -A"};

}  // namespace

TEST_CASE("linkscope-nm matches GNU nm on every fixture and flag set", "[nm]") {
  if (!have_tool("nm")) {
    WARN("nm not installed");
    return;
  }
  REQUIRE(!fx().files.empty());
  INFO("GNU nm here is not binutils-multiarch's (apt-get install binutils-multiarch; test-all does)");
  REQUIRE(nm_is_multiarch());
  // Every flag set on a representative file of each kind, a short list on
  // the others (CI runs this under sanitizers on two cores).
  const std::set<std::string> representative = {"kinds_gcc.o", "kinds_clang.o", "uniq.o", "libver_gnu.so",
                                                 "libuse.so", "libkinds.so", "ver32.o", "libver32.so",
                                                 "kinds_powerpc64-linux-gnu.o", "libver_powerpc64-linux-gnu.so"};
  const std::vector<std::string> short_flags = {"", "-D", "-S -P -A", "-g -u --defined-only"};
  for (const elf_fixture& f : fx().files) {
    if (f.name == fx().many) continue;  // below, with fewer flag sets
    check_same_all(representative.count(f.name) ? single_file_flags : short_flags, f.name);
  }
}

TEST_CASE("linkscope-nm on an object with more than 65280 sections", "[nm][xindex]") {
  if (fx().many.empty()) {
    WARN("no many-section fixture");
    return;
  }
  check_same_all({"", "-S -P -g"}, fx().many);
}

TEST_CASE("linkscope-nm on archives and several files", "[nm][archive]") {
  REQUIRE(!fx().archives.empty());
  for (const std::string& a : fx().archives)
    check_same_all({"", "-s", "-A", "-P", "-P -A", "-s -P", "-g -S", "-D", "-u --defined-only", "-p -s"}, a);
  std::string several;
  for (const elf_fixture& f : fx().files)
    if (f.name != fx().many) several += " " + f.name;
  for (const std::string& a : fx().archives) several += " " + a;
  for (const char* flags : {"", "-D", "-P -A", "-s -g"}) check_same(flags, several);
}

TEST_CASE("linkscope-nm -D reads DSOs without section headers through PT_DYNAMIC", "[nm][stripped]") {
  REQUIRE(!fx().stripped_pairs.empty());
  for (const auto& [stripped, original] : fx().stripped_pairs) {
    INFO(stripped);
    // nm itself says "no symbols" here.
    auto nm_stripped = capture(nm_cmd("-D", stripped));
    CHECK(nm_stripped.out.empty());
    // Same names, values, versions and order as nm -D -p on the original;
    // the letters come from the segments, so compare the other columns.
    auto expected = lines(capture(nm_cmd("-D -p", original)).out);
    auto actual = lines(capture(ours_cmd("-D -p", stripped)).out);
    REQUIRE(actual.size() == expected.size());
    for (std::size_t i = 0; i < actual.size(); ++i) {
      const std::size_t width = expected[i].find(' ', 1) == 16 || expected[i].rfind("                 ", 0) == 0 ? 16 : 8;
      CHECK(actual[i].substr(0, width) == expected[i].substr(0, width));  // value
      CHECK(actual[i].substr(width + 3) == expected[i].substr(width + 3));  // name@version
      const char t = expected[i][width + 1];
      if (t == 'U' || t == 'w' || t == 'v' || t == 'A' || t == 'T') CHECK(actual[i][width + 1] == t);
    }
    // And the names against llvm-readelf-14 --dyn-syms (which reads DT_HASH/DT_GNU_HASH).
    if (have_tool("llvm-readelf-14")) {
      auto readelf = lines(capture("cd " + shell_quote(fx().dir) + " && llvm-readelf-14 --dyn-syms " + stripped).out);
      std::multiset<std::string> readelf_names, our_names;
      for (const std::string& l : readelf) {
        // "   Num:    Value  Size Type Bind Vis Ndx Name"
        auto colon = l.find(':');
        if (colon == std::string::npos || l.find("Num:") != std::string::npos) continue;
        std::vector<std::string> cols;
        std::size_t pos = colon + 1;
        while (pos < l.size()) {
          while (pos < l.size() && l[pos] == ' ') ++pos;
          std::size_t end = l.find(' ', pos);
          if (end == std::string::npos) end = l.size();
          if (end > pos) cols.push_back(l.substr(pos, end - pos));
          pos = end;
        }
        if (cols.size() >= 7) readelf_names.insert(cols[6]);
      }
      if (readelf_names.empty()) {
        WARN("llvm-readelf-14 lists nothing for " << stripped << " (it needs DT_HASH without section headers)");
        continue;
      }
      // llvm-readelf-14 prints versions only when it finds DT_VERSYM's
      // section; compare the bare names.
      auto bare = [](std::string n) { return n.substr(0, n.find('@')); };
      std::multiset<std::string> readelf_bare;
      for (const std::string& n : readelf_names) readelf_bare.insert(bare(n));
      for (const std::string& l : actual) our_names.insert(bare(l.substr(l.rfind(' ') + 1)));
      CHECK(our_names == readelf_bare);
    }
  }
}

TEST_CASE("linkscope-nm --json and errors", "[nm][json]") {
  auto json = capture(ours_cmd("--json -D", "libver_gnu.so"));
  CHECK(json.status == 0);
  CHECK(json.out.find("\"version\":1") != std::string::npos);
  CHECK(json.out.find("\"name\":\"foo\"") != std::string::npos);
  CHECK(json.out.find("\"version\":\"VERS_2\"") != std::string::npos);
  write_file(fx().dir + "/not_elf.txt", "hello\n");
  auto bad = capture(ours_cmd("", "not_elf.txt"));
  CHECK(bad.status == 2);
  auto missing = capture(ours_cmd("", "does_not_exist.o"));
  CHECK(missing.status == 2);
  auto usage = capture(ours_cmd("--bogus-option", "x"));
  CHECK(usage.status == 2);
}

TEST_CASE("linkscope-nm -C demangles as GNU nm -C", "[nm][demangle]") {
  if (!have_tool("nm") || !have_tool("g++")) {
    WARN("nm or g++ not installed");
    return;
  }
  // A C++ object: constructors (C1/C2), a member function, a static
  // initializer (_GLOBAL__sub_I_..., left as is) and a plain C name.
  const std::string src = fx().dir + "/demangle.cpp";
  auto made = capture("cd " + shell_quote(fx().dir) +
                      " && printf '%s\\n' 'namespace n { struct S { S(); void f(int); }; S::S() {} void S::f(int) {} }'"
                      " 'struct G { G(); }; G::G() {} static G g; extern \"C\" int plain() { return 0; }'"
                      " 'template <class T> T twice(T t) { return t + t; } template long twice(long);' > demangle.cpp"
                      " && g++ -c demangle.cpp -o demangle_cxx.o");
  REQUIRE(made.status == 0);
  check_same_all({"-C", "--demangle", "-C -P", "-C -S -A", "-C --no-demangle", ""}, "demangle_cxx.o");
  // A C++ DSO with versioned dynamic symbols (name@@VER after the demangled name).
  for (const char* lib : {"/usr/lib/x86_64-linux-gnu/libstdc++.so.6", "/usr/lib/aarch64-linux-gnu/libstdc++.so.6"})
    if (capture(std::string("test -r ") + lib).status == 0) check_same_all({"-D -C", "-DC --without-symbol-versions"}, lib);
}

// --target=BFDNAME as nm takes it: a generic ELF target (elf32-little, ...)
// reads the files of its class and byte order through the generic backend,
// so mapping symbols and local labels are listed; other files are unaffected;
// --special-syms lists them too; an unknown target is refused.
TEST_CASE("linkscope-nm --target and --special-syms against nm", "[nm][target]") {
  if (!have_tool("nm") || !nm_is_multiarch()) {
    WARN("binutils-multiarch's nm is not installed");
    return;
  }
  const std::vector<std::string> names = {"kinds_aarch64-linux-gnu.o", "libuse_aarch64.so", "kinds_armeb-linux-gnueabi.o",
                                          "libver_armeb-linux-gnueabi.so", "kinds_riscv64-linux-gnu.o",
                                          "libver_riscv64-linux-gnu.so", "kinds_mips-linux-gnu.o", "kinds_gcc.o"};
  std::size_t present = 0;
  for (const std::string& name : names) {
    if (std::none_of(fx().files.begin(), fx().files.end(), [&](const elf_fixture& f) { return f.name == name; })) continue;
    ++present;
    check_same_all({"-a", "--special-syms", "-a --special-syms", "--target=elf64-little", "--target=elf32-big",
                    "--target=elf64-little -a", "--target=elf32-big -P -a", "--target=elf32-little",
                    "--target=elf64-big", "--target=elf64-littleaarch64 -a"},
                   name);
  }
  CHECK(present >= 6);
  // The listing differs with the generic backend (the case is not vacuous).
  const std::string riscv = "kinds_riscv64-linux-gnu.o";
  CHECK(capture(nm_cmd("-a", riscv)).out != capture(nm_cmd("-a --target=elf64-little", riscv)).out);
  auto bad = capture(ours_cmd("--target=elf64-nonesuch", "kinds_gcc.o"));
  CHECK(bad.status == 2);
  CHECK(capture(nm_cmd("--target=elf64-nonesuch", "kinds_gcc.o")).status != 0);
}

