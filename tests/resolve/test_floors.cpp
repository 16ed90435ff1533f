// resolve/floors.hpp and linkscope-floors. Expected values come from the
// real tools: objdump -T (the versions of undefined symbols), readelf -n (the
// x86 ISA property), readelf -S (section offsets) and sort -V (the order of
// version numbers), never from linkscope's own output.
#include <linkscope/core/mapped_file.hpp>
#include <linkscope/resolve/floors.hpp>
#include <linkscope/resolve/floors_macho.hpp>
#include <linkscope/resolve/floors_pe.hpp>
#include <linkscope/resolve/floors_policy.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "macho/macho_fixtures.hpp"
#include "support/fixtures.hpp"

using namespace linkscope;
namespace lt = linkscope_test;

namespace {

struct oracle_versions {
  std::map<std::string, std::set<std::string>> symbols;  // version -> undefined symbols bound to it
};

// objdump -T: the version and name of every undefined symbol.
oracle_versions objdump_undefined(const std::string& path) {
  oracle_versions out;
  auto r = lt::capture("objdump -T " + lt::shell_quote(path) +
                       " 2>/dev/null | awk '/\\*UND\\*/ { v = $(NF-1); gsub(/[()]/, \"\", v); print v, $NF }'");
  for (const auto& line : lt::lines(r.out)) {
    std::istringstream in(line);
    std::string version, name;
    in >> version >> name;
    if (version.empty() || name.empty() || version == "Base" || version.find('_') == std::string::npos) continue;
    out.symbols[version].insert(name);
  }
  return out;
}

// The highest of `versions` as sort -V orders them.
std::string sort_v_highest(const std::vector<std::string>& versions) {
  if (versions.empty()) return {};
  std::string list;
  for (const auto& v : versions) list += v + "\n";
  auto r = lt::capture("printf '%s' " + lt::shell_quote(list) + " | sort -V | tail -n 1");
  return r.out.substr(0, r.out.find('\n'));
}

std::vector<std::string> sort_v(std::vector<std::string> versions) {
  std::string list;
  for (const auto& v : versions) list += v + "\n";
  return lt::lines(lt::capture("printf '%s' " + lt::shell_quote(list) + " | sort -V").out);
}

resolve::elf_floors floors_of(const std::string& path) {
  auto file = mapped_file::open(path);
  REQUIRE(file);
  auto floors = resolve::elf_floors_of(file->bytes());
  INFO(path);
  REQUIRE(floors);
  return *floors;
}

const resolve::library_floor* library(const resolve::elf_floors& f, const std::string& name) {
  for (const auto& l : f.libraries)
    if (l.library == name) return &l;
  return nullptr;
}

std::set<std::string> as_set(const std::vector<std::string>& v) { return {v.begin(), v.end()}; }

}  // namespace

TEST_CASE("version names order by numeric components, as sort -V does", "[floors]") {
  const std::vector<std::string> names = {"GLIBC_2.2.5", "GLIBC_2.10", "GLIBC_2.9", "GLIBC_2.2", "GLIBC_2.34", "GLIBC_2.3.4",
                                          "GLIBC_2.17", "GLIBC_2.3", "GLIBC_2.11.1"};
  std::vector<std::string> ours = names;
  std::sort(ours.begin(), ours.end(), [](const std::string& a, const std::string& b) { return resolve::version_less(a, b); });
  CHECK(ours == sort_v(names));

  const std::vector<std::string> cxx = {"GLIBCXX_3.4.9", "GLIBCXX_3.4.30", "GLIBCXX_3.4", "GLIBCXX_3.4.19", "GLIBCXX_3.4.10"};
  ours = cxx;
  std::sort(ours.begin(), ours.end(), [](const std::string& a, const std::string& b) { return resolve::version_less(a, b); });
  CHECK(ours == sort_v(cxx));

  // OpenSSL 1.1's underscore numbers and release letters.
  const std::vector<std::string> ssl = {"OPENSSL_1_1_1", "OPENSSL_1_1_0d", "OPENSSL_1_1_0", "OPENSSL_1_1_1a", "OPENSSL_1_1_0i"};
  ours = ssl;
  std::sort(ours.begin(), ours.end(), [](const std::string& a, const std::string& b) { return resolve::version_less(a, b); });
  CHECK(ours == sort_v(ssl));

  const auto ldbl = resolve::parse_version_name("GLIBCXX_LDBL_3.4.7");
  CHECK(ldbl.scheme == resolve::version_scheme::numbered);
  CHECK(ldbl.family == "GLIBCXX_LDBL");
  CHECK(resolve::parse_version_name("GLIBC_PRIVATE").scheme == resolve::version_scheme::private_);
  CHECK(resolve::parse_version_name("GLIBC_PRIVATE").family == "GLIBC");
  CHECK(resolve::parse_version_name("CXXABI_FLOAT128").scheme == resolve::version_scheme::unknown);
  CHECK(resolve::parse_version_name("Base").scheme == resolve::version_scheme::unknown);
  CHECK(resolve::parse_version_name("libfoo.so.1").scheme == resolve::version_scheme::unknown);
  CHECK(resolve::parse_version_name("GLIBC_2.x").scheme == resolve::version_scheme::unknown);
}

TEST_CASE("highest GLIBC_ version and its symbols equal objdump -T on 40 real DSOs", "[floors][real]") {
  if (!lt::have_tool("objdump")) { WARN("objdump not installed"); return; }
  namespace fs = std::filesystem;
  const std::string dir = "/usr/lib/x86_64-linux-gnu";
  std::vector<std::string> dsos;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    std::error_code e2;
    if (entry.is_symlink(e2) || !entry.is_regular_file(e2)) continue;
    const std::string name = entry.path().filename().string();
    if (name.find(".so") == std::string::npos) continue;
    dsos.push_back(entry.path().string());
  }
  std::sort(dsos.begin(), dsos.end());
  if (dsos.size() < 40) { WARN("fewer than 40 DSOs in " + dir); return; }
  std::size_t compared = 0;
  for (std::size_t k = 0; k < 40; ++k) {
    const std::string path = dsos[k * dsos.size() / 40];
    auto file = mapped_file::open(path);
    if (!file || !elf::is_elf(file->bytes())) continue;
    INFO(path);
    auto floors = resolve::elf_floors_of(file->bytes());
    REQUIRE(floors);
    const oracle_versions oracle = objdump_undefined(path);
    std::vector<std::string> glibc;
    for (const auto& [version, symbols] : oracle.symbols)
      if (version.rfind("GLIBC_2", 0) == 0) glibc.push_back(version);
    const std::string expected = sort_v_highest(glibc);
    CHECK(std::string(floors->highest("GLIBC")) == expected);
    if (!expected.empty()) {
      for (const auto& fam : floors->families)
        if (fam.family == "GLIBC") CHECK(as_set(fam.symbols) == oracle.symbols.at(expected));
    }
    ++compared;
  }
  CHECK(compared >= 30);
}

TEST_CASE("a program built here is over 2.17 because of __libc_start_main@GLIBC_2.34", "[floors]") {
  const std::string dir = lt::scratch_dir("floors_program");
  lt::write_file(dir + "/main.c", "int main(void) { return 0; }\n");
  REQUIRE(lt::run_in(dir, "gcc main.c -o prog") == 0);
  const auto oracle = objdump_undefined(dir + "/prog");
  std::vector<std::string> above_217;
  for (const auto& [version, symbols] : oracle.symbols) {
    if (version.rfind("GLIBC_", 0) != 0) continue;
    if (sort_v_highest({version, "GLIBC_2.17"}) == version && version != "GLIBC_2.17") above_217.push_back(version);
  }
  REQUIRE(!above_217.empty());
  const auto floors = floors_of(dir + "/prog");
  auto limit = resolve::make_limit("GLIBC", "2.17");
  REQUIRE(limit);
  const auto violations = resolve::check_limits(floors, {*limit});
  REQUIRE(violations.size() == 1);
  std::set<std::string> versions, symbols, expected_symbols;
  for (const auto& v : violations[0].above) {
    versions.insert(v.name);
    symbols.insert(v.symbols.begin(), v.symbols.end());
  }
  for (const auto& v : above_217) expected_symbols.insert(oracle.symbols.at(v).begin(), oracle.symbols.at(v).end());
  CHECK(versions == as_set(above_217));
  CHECK(symbols == expected_symbols);
  CHECK(symbols.count("__libc_start_main") == 1);
  CHECK(violations[0].highest == sort_v_highest(above_217));
  // Under a limit it meets, nothing is reported.
  auto high = resolve::make_limit("GLIBC", "2.99");
  REQUIRE(high);
  CHECK(resolve::check_limits(floors, {*high}).empty());
}

TEST_CASE("GLIBC_PRIVATE is flagged never portable (libc.so.6 needs it from ld.so)", "[floors][real]") {
  const std::string path = "/lib/x86_64-linux-gnu/libc.so.6";
  if (!std::filesystem::exists(path)) { WARN("no libc.so.6"); return; }
  const auto oracle = objdump_undefined(path);
  if (oracle.symbols.count("GLIBC_PRIVATE") == 0) { WARN("libc.so.6 needs no GLIBC_PRIVATE here"); return; }
  const auto floors = floors_of(path);
  CHECK(floors.uses_private());
  std::set<std::string> symbols;
  for (const auto& lib : floors.libraries)
    for (const auto& v : lib.versions)
      if (v.name == "GLIBC_PRIVATE") {
        CHECK(v.scheme == resolve::version_scheme::private_);
        symbols.insert(v.symbols.begin(), v.symbols.end());
      }
  CHECK(symbols == oracle.symbols.at("GLIBC_PRIVATE"));
}

TEST_CASE("a version-script library: numeric order, unknown schemes reported unordered", "[floors]") {
  const std::string dir = lt::scratch_dir("floors_versions");
  lt::write_file(dir + "/fake.c",
                 "int f9(void) { return 9; }\nint f10(void) { return 10; }\nint f2(void) { return 2; }\n"
                 "int fq(void) { return 128; }\n");
  lt::write_file(dir + "/fake.map",
                 "FAKE_1.2 { global: f2; local: *; };\nFAKE_1.9 { global: f9; } FAKE_1.2;\n"
                 "FAKE_1.10 { global: f10; } FAKE_1.9;\nFAKE_FLOAT128 { global: fq; } FAKE_1.10;\n");
  lt::write_file(dir + "/use.c",
                 "extern int f9(void), f10(void), f2(void), fq(void);\nint use(void) { return f9() + f10() + f2() + fq(); }\n");
  REQUIRE(lt::run_in(dir, "gcc -shared -fPIC fake.c -Wl,--version-script=fake.map -Wl,-soname,libfake.so.1 -o libfake.so") == 0);
  REQUIRE(lt::run_in(dir, "gcc -shared -fPIC use.c -L. -lfake -o libuse.so") == 0);
  const auto oracle = objdump_undefined(dir + "/libuse.so");
  std::vector<std::string> numbered;
  for (const auto& [version, symbols] : oracle.symbols)
    if (version.rfind("FAKE_1", 0) == 0) numbered.push_back(version);
  REQUIRE(numbered.size() == 3);
  const std::string expected = sort_v_highest(numbered);
  const auto floors = floors_of(dir + "/libuse.so");
  const auto* lib = library(floors, "libfake.so.1");
  REQUIRE(lib != nullptr);
  REQUIRE(lib->highest.size() == 1);
  CHECK(lib->highest[0].family == "FAKE");
  CHECK(lib->highest[0].highest == expected);
  CHECK(as_set(lib->highest[0].symbols) == oracle.symbols.at(expected));
  REQUIRE(lib->unordered.size() == 1);
  CHECK(lib->unordered[0] == "FAKE_FLOAT128");
  CHECK(oracle.symbols.count("FAKE_FLOAT128") == 1);
}

TEST_CASE("-Wl,-z,x86-64-v3 is reported as v3, as readelf -n says", "[floors]") {
  const std::string dir = lt::scratch_dir("floors_isa");
  lt::write_file(dir + "/main.c", "int main(void) { return 0; }\n");
  REQUIRE(lt::run_in(dir, "gcc -Wl,-z,x86-64-v3 main.c -o v3 && gcc -Wl,-z,x86-64-v2 main.c -o v2") == 0);
  const auto notes = lt::capture("readelf -n " + lt::shell_quote(dir + "/v3") + " | grep 'x86 ISA needed'").out;
  REQUIRE(notes.find("x86-64-v3") != std::string::npos);
  const auto v3 = floors_of(dir + "/v3");
  REQUIRE(v3.x86_isa_needed);
  CHECK(v3.x86_isa_level() == 3);
  // Every bit readelf names is in the mask.
  for (std::uint32_t bit = 1; bit <= 8; bit <<= 1) {
    const std::string name(elf::x86_isa_bit_name(bit));
    CHECK(((*v3.x86_isa_needed & bit) != 0) == (notes.find(name + ",") != std::string::npos || notes.find(name + "\n") != std::string::npos));
  }
  const auto v2 = floors_of(dir + "/v2");
  const auto notes2 = lt::capture("readelf -n " + lt::shell_quote(dir + "/v2") + " | grep 'x86 ISA needed'").out;
  REQUIRE(notes2.find("x86-64-v2") != std::string::npos);
  CHECK(v2.x86_isa_level() == 2);
}

TEST_CASE("a malformed property note is an error naming its offset", "[floors]") {
  const std::string dir = lt::scratch_dir("floors_badnote");
  lt::write_file(dir + "/main.c", "int main(void) { return 0; }\n");
  REQUIRE(lt::run_in(dir, "gcc -Wl,-z,x86-64-v3 main.c -o prog") == 0);
  // The section's file offset, from readelf -S.
  auto r = lt::capture("readelf -SW " + lt::shell_quote(dir + "/prog") +
                       " | awk '$2 == \".note.gnu.property\" { print $5 } $3 == \".note.gnu.property\" { print $6 }'");
  REQUIRE(!r.out.empty());
  const std::uint64_t offset = std::stoull(r.out, nullptr, 16);
  std::string bytes = lt::read_file(dir + "/prog");
  // n_descsz (the second word of the note header) far past the section.
  bytes[offset + 4] = '\xff';
  bytes[offset + 5] = '\xff';
  lt::write_file(dir + "/bad", bytes);
  auto file = mapped_file::open(dir + "/bad");
  REQUIRE(file);
  auto floors = resolve::elf_floors_of(file->bytes());
  REQUIRE(!floors);
  CHECK(floors.error().offset == offset);

  const auto cli = lt::capture(lt::tool_path("linkscope-floors") + " " + lt::shell_quote(dir + "/bad") + " 2>&1");
  CHECK(cli.status == 2);
  CHECK(cli.out.find("linkscope-floors: " + dir + "/bad: error:") != std::string::npos);
  char hex[32];
  std::snprintf(hex, sizeof hex, "(offset 0x%llx)", static_cast<unsigned long long>(offset));
  CHECK(cli.out.find(hex) != std::string::npos);
}

TEST_CASE("linkscope-floors: exit 1 over a limit, 0 under it, 2 on bad input", "[floors][cli]") {
  const std::string dir = lt::scratch_dir("floors_cli");
  lt::write_file(dir + "/main.c", "int main(void) { return 0; }\n");
  REQUIRE(lt::run_in(dir, "gcc -Wl,-z,x86-64-v3 main.c -o prog") == 0);
  const std::string bin = lt::tool_path("linkscope-floors");
  const std::string prog = lt::shell_quote(dir + "/prog");
  auto over = lt::capture(bin + " --max-glibc 2.17 " + prog);
  CHECK(over.status == 1);
  CHECK(over.out.find("__libc_start_main") != std::string::npos);
  CHECK(lt::capture(bin + " --max-glibc 2.99 " + prog).status == 0);
  CHECK(lt::capture(bin + " --max-isa v2 " + prog).status == 1);
  CHECK(lt::capture(bin + " --max-isa v3 " + prog).status == 0);
  auto json = lt::capture(bin + " --json --max-glibc 2.17 " + prog);
  CHECK(json.status == 1);
  CHECK(json.out.rfind("{\"version\":1", 0) == 0);
  CHECK(json.out.find("\"level\":\"x86-64-v3\"") != std::string::npos);
  CHECK(lt::capture(bin + " --max-glibc two " + prog + " 2>/dev/null").status == 2);
  auto missing = lt::capture(bin + " " + lt::shell_quote(dir + "/nonexistent") + " 2>&1");
  CHECK(missing.status == 2);
  CHECK(missing.out.find("linkscope-floors: " + dir + "/nonexistent: error:") != std::string::npos);
  lt::write_file(dir + "/text.txt", "not a binary\n");
  CHECK(lt::capture(bin + " " + lt::shell_quote(dir + "/text.txt") + " 2>/dev/null").status == 2);
  // A directory is searched for ELF files; the text file is skipped.
  auto walk = lt::capture(bin + " " + lt::shell_quote(dir));
  CHECK(walk.status == 0);
  CHECK(walk.out.find(dir + "/prog:") != std::string::npos);
}

// ---------------------------------------------------------------------------
// Policies: auditwheel's manylinux-policy.json (tests/data/auditwheel), on
// DSOs that bind glibc symbols at chosen versions (.symver) just below and
// just above policy boundaries. The expected tag is computed by
// /usr/bin/python3's json module from the policy file and objdump -p's
// version references and NEEDED entries plus objdump -T's undefined symbols,
// with the rules the policy file is written for (auditwheel's
// versioned_symbols_policy and blacklist): nothing of linkscope is involved.


namespace {

const char* const policy_oracle_py = R"PY(
import json, subprocess, sys
policy_file, path = sys.argv[1], sys.argv[2]
policies = json.load(open(policy_file))
p = subprocess.run(["objdump", "-p", path], capture_output=True, text=True).stdout
needed, refs, lib, in_refs = [], [], None, False
for line in p.splitlines():
    words = line.split()
    if line.startswith("  NEEDED"):
        needed.append(words[1])
    if line.startswith("Version References:"):
        in_refs = True
        continue
    if in_refs:
        if line.startswith("  required from "):
            lib = line.split("required from ")[1].rstrip(":")
        elif len(words) == 4 and lib is not None:
            refs.append((lib, words[3]))
        elif line.strip() == "":
            in_refs = False
t = subprocess.run(["objdump", "-T", path], capture_output=True, text=True).stdout
undefined = set(l.split()[-1] for l in t.splitlines() if "*UND*" in l)
required = {}
for lib, version in refs:
    if "ld-linux" in lib or lib in ("ld64.so.1", "ld64.so.2"):
        continue
    required.setdefault(version.partition("_")[0], set()).add(version)
best = None
for pol in sorted(policies, key=lambda x: -x["priority"]):
    if "x86_64" not in pol["symbol_versions"] and pol["name"] != "linux":
        continue
    allowed = {k: {k + "_" + v for v in vs} for k, vs in pol["symbol_versions"].get("x86_64", {}).items()}
    ok = all(required[k] <= allowed[k] for k in set(required) & set(allowed))
    for blib, syms in pol["blacklist"].items():
        if blib in needed and undefined & set(syms):
            ok = False
    if ok:
        best = pol["name"] + "_x86_64"
        break
print(best)
)PY";

std::string oracle_tag(const std::string& dir, const std::string& so, const char* policy_file = "manylinux-policy.json") {
  const std::string policy = std::string(LINKSCOPE_SOURCE_DIR) + "/tests/data/auditwheel/" + policy_file;
  lt::write_file(dir + "/oracle.py", policy_oracle_py);
  auto r = lt::capture("/usr/bin/python3 " + lt::shell_quote(dir + "/oracle.py") + " " + lt::shell_quote(policy) + " " +
                       lt::shell_quote(dir + "/" + so));
  return r.out.substr(0, r.out.find('\n'));
}

std::vector<resolve::floor_policy> manylinux_policies(const char* policy_file = "manylinux-policy.json") {
  const std::string text = lt::read_file(std::string(LINKSCOPE_SOURCE_DIR) + "/tests/data/auditwheel/" + policy_file);
  auto read = resolve::read_policies(text);
  REQUIRE(read);
  return *read;
}

}  // namespace

TEST_CASE("policy tags just below and just above manylinux boundaries", "[floors][policy]") {
  const std::string dir = lt::scratch_dir("floors_policy");
  struct fixture {
    const char* name;
    const char* source;
  };
  const fixture cases[] = {
      // GLIBC_2.17 exactly: the top of manylinux_2_17.
      {"libc217.so", "#include <string.h>\n#include <time.h>\n__asm__(\".symver clock_gettime, clock_gettime@GLIBC_2.17\");\n"
                     "int f(struct timespec* t, char* d, const char* s, size_t n) { memcpy(d, s, n); return clock_gettime(0, t); }\n"},
      // GLIBC_2.28: the top of manylinux_2_28.
      {"libc228.so", "extern int statx(int, const char*, int, unsigned, void*);\n__asm__(\".symver statx, statx@GLIBC_2.28\");\n"
                     "int g(void* b) { return statx(0, \"\", 0, 0, b); }\n"},
      // GLIBC_2.29: just above manylinux_2_28 (no 2_29/2_30 policy: manylinux_2_31).
      {"libc229.so", "extern int posix_spawn_file_actions_addchdir_np(void*, const char*);\n"
                     "__asm__(\".symver posix_spawn_file_actions_addchdir_np, posix_spawn_file_actions_addchdir_np@GLIBC_2.29\");\n"
                     "int h(void* a) { return posix_spawn_file_actions_addchdir_np(a, \"/\"); }\n"},
      // GLIBC_2.18, and blacklisted in libc.so.6 by the policies up to manylinux_2_17: manylinux_2_24.
      {"libc218.so", "extern int __cxa_thread_atexit_impl(void (*)(void*), void*, void*);\n"
                     "__asm__(\".symver __cxa_thread_atexit_impl, __cxa_thread_atexit_impl@GLIBC_2.18\");\n"
                     "int k(void) { return __cxa_thread_atexit_impl(0, 0, 0); }\n"},
  };
  const auto policies = manylinux_policies();
  std::vector<std::string> tags;
  for (const auto& c : cases) {
    INFO(c.name);
    const std::string source = std::string(c.name) + ".c";
    lt::write_file(dir + "/" + source, c.source);
    REQUIRE(lt::run_in(dir, "gcc -shared -fPIC " + source + " -o " + c.name) == 0);
    const std::string expected = oracle_tag(dir, c.name);
    REQUIRE(!expected.empty());
    REQUIRE(expected != "None");
    const auto floors = floors_of(dir + "/" + c.name);
    const auto report = resolve::evaluate_policies(floors, policies);
    CHECK(report.arch == "x86_64");
    CHECK(report.best == expected);
    tags.push_back(expected);
    // Every policy of higher priority than the best names the versions it does not allow.
    for (const auto& v : report.verdicts) {
      if (v.priority <= report.best_priority) break;
      CHECK(!v.satisfied);
      CHECK((!v.above.empty() || !v.blacklisted.empty()));
    }
  }
  // The boundaries themselves, as the oracle put them: the cases are not all alike.
  CHECK(tags[0] != tags[1]);
  CHECK(tags[1] != tags[2]);

  // The CLI: best tag per file and for the set, exit 1 under --require-policy.
  const std::string bin = lt::tool_path("linkscope-floors");
  const std::string policy = lt::shell_quote(std::string(LINKSCOPE_SOURCE_DIR) + "/tests/data/auditwheel/manylinux-policy.json");
  auto text = lt::capture(bin + " --policy " + policy + " " + lt::shell_quote(dir + "/libc217.so") + " " + lt::shell_quote(dir + "/libc229.so"));
  CHECK(text.status == 0);
  CHECK(text.out.find("policy: best " + tags[0]) != std::string::npos);
  CHECK(text.out.find("policy: best " + tags[2] + " (decided by " + dir + "/libc229.so)") != std::string::npos);
  CHECK(lt::capture(bin + " --policy " + policy + " --require-policy manylinux_2_17 " + lt::shell_quote(dir + "/libc217.so")).status == 0);
  CHECK(lt::capture(bin + " --policy " + policy + " --require-policy manylinux_2_28 " + lt::shell_quote(dir + "/libc229.so")).status == 1);
  // --max-glibc at the same boundaries.
  CHECK(lt::capture(bin + " --max-glibc 2.17 " + lt::shell_quote(dir + "/libc217.so")).status == 0);
  CHECK(lt::capture(bin + " --max-glibc 2.28 " + lt::shell_quote(dir + "/libc228.so")).status == 0);
  CHECK(lt::capture(bin + " --max-glibc 2.28 " + lt::shell_quote(dir + "/libc229.so")).status == 1);
  auto json = lt::capture(bin + " --json --policy " + policy + " " + lt::shell_quote(dir + "/libc218.so"));
  CHECK(json.out.find("\"blacklisted\":[\"libc.so.6: __cxa_thread_atexit_impl\"]") != std::string::npos);
}

// musllinux: auditwheel's musllinux-policy.json on DSOs linked against stand-ins
// for musl's libc.so and libz.so.1 (made here with -nostdlib and those sonames:
// musl has no symbol versions, so the policies differ by whitelist and
// blacklist). The tag comes from the same oracle; the libraries outside the
// best policy's whitelist from objdump -p's NEEDED and the policy file.
TEST_CASE("musllinux policies: whitelist and blacklist", "[floors][policy]") {
  const std::string dir = lt::scratch_dir("floors_musl");
  lt::write_file(dir + "/libc.c", "int puts(const char* s) { return s != 0; }\n");
  lt::write_file(dir + "/libz.c", "void _tr_init(void* s) { (void)s; }\nint deflate(void* s, int f) { return s != 0 && f; }\n");
  lt::write_file(dir + "/foo.c", "int foo(void) { return 1; }\n");
  lt::write_file(dir + "/ok.c", "int puts(const char*); int deflate(void*, int);\n"
                                "int ok(void* z) { return puts(\"x\") + deflate(z, 0); }\n");
  lt::write_file(dir + "/graft.c", "int puts(const char*); int foo(void);\nint g(void) { return puts(\"x\") + foo(); }\n");
  lt::write_file(dir + "/bl.c", "void _tr_init(void*);\nvoid b(void* s) { _tr_init(s); }\n");
  const std::string so = "gcc -shared -fPIC -nostdlib ";
  REQUIRE(lt::run_in(dir, so + "libc.c -Wl,-soname,libc.so -o libc.so && " + so + "libz.c -Wl,-soname,libz.so.1 -o libz.so.1 && " +
                              so + "foo.c -Wl,-soname,libfoo.so -o libfoo.so && " +
                              so + "ok.c -o ok.so -Wl,--no-as-needed ./libc.so ./libz.so.1 && " +
                              so + "graft.c -o graft.so -Wl,--no-as-needed ./libc.so ./libfoo.so && " +
                              so + "bl.c -o bl.so -Wl,--no-as-needed ./libz.so.1 ./libc.so") == 0);
  lt::write_file(dir + "/whitelist.py", R"PY(
import json, subprocess, sys
policies = {p["name"]: p for p in json.load(open(sys.argv[1]))}
p = subprocess.run(["objdump", "-p", sys.argv[3]], capture_output=True, text=True).stdout
needed = [l.split()[1] for l in p.splitlines() if l.startswith("  NEEDED")]
print(" ".join(n for n in needed if n not in policies[sys.argv[2]]["lib_whitelist"]))
)PY");
  const std::string policy_path = std::string(LINKSCOPE_SOURCE_DIR) + "/tests/data/auditwheel/musllinux-policy.json";
  const auto policies = manylinux_policies("musllinux-policy.json");
  std::vector<std::string> tags;
  for (const char* name : {"ok.so", "graft.so", "bl.so"}) {
    INFO(name);
    const std::string expected = oracle_tag(dir, name, "musllinux-policy.json");
    REQUIRE(!expected.empty());
    REQUIRE(expected != "None");
    const auto report = resolve::evaluate_policies(floors_of(dir + "/" + name), policies);
    CHECK(report.best == expected);
    tags.push_back(expected);
    auto best = std::find_if(report.verdicts.begin(), report.verdicts.end(), [&](const auto& v) { return v.tag == report.best; });
    REQUIRE(best != report.verdicts.end());
    if (best->priority == 0) continue;  // "linux", the fallback: nothing to graft towards
    std::string outside;
    for (const auto& lib : best->outside_whitelist) outside += (outside.empty() ? "" : " ") + lib;
    const auto oracle = lt::capture("/usr/bin/python3 " + lt::shell_quote(dir + "/whitelist.py") + " " +
                                    lt::shell_quote(policy_path) + " " + lt::shell_quote(best->name) + " " +
                                    lt::shell_quote(dir + "/" + name));
    CHECK(outside == oracle.out.substr(0, oracle.out.find('\n')));
  }
  CHECK(tags[0].rfind("musllinux_", 0) == 0);
  // libfoo.so is to be grafted, not a reason to fall back; _tr_init in libz.so.1 is.
  CHECK(tags[1] == tags[0]);
  CHECK(tags[2] != tags[0]);
  CHECK(tags[2] == "linux_x86_64");
}

TEST_CASE("a policy file that is not the policy shape is an error with its offset", "[floors][policy]") {
  auto bad = resolve::read_policies("[{\"name\": \"x\", \"priority\": \"high\"}]");
  REQUIRE(!bad);
  CHECK(bad.error().offset == std::string("[{\"name\": \"x\", \"priority\": ").size());
  auto syntax = resolve::read_policies("[{\"name\": \"x\",]");
  REQUIRE(!syntax);
  CHECK(syntax.error().offset == 14);
  CHECK(!resolve::read_policies("{}"));
}

TEST_CASE("--max-glibcxx lists every GLIBCXX_ version above it, as objdump -T does", "[floors]") {
  const std::string dir = lt::scratch_dir("floors_glibcxx");
  lt::write_file(dir + "/s.cpp", "#include <string>\n#include <stdexcept>\nstd::string f(const char* s) { if (!s) throw std::runtime_error(\"x\"); return std::string(s) + \"!\"; }\n");
  REQUIRE(lt::run_in(dir, "g++ -shared -fPIC s.cpp -o libs.so") == 0);
  const auto oracle = objdump_undefined(dir + "/libs.so");
  std::set<std::string> expected;
  for (const auto& [version, symbols] : oracle.symbols)
    if (version.rfind("GLIBCXX_", 0) == 0 && version != "GLIBCXX_3.4.19" && sort_v_highest({version, "GLIBCXX_3.4.19"}) == version)
      expected.insert(version);
  CHECK(!expected.empty());
  const auto floors = floors_of(dir + "/libs.so");
  auto limit = resolve::make_limit("GLIBCXX", "3.4.19");
  REQUIRE(limit);
  const auto violations = resolve::check_limits(floors, {*limit});
  std::set<std::string> got;
  for (const auto& v : violations)
    for (const auto& a : v.above) {
      got.insert(a.name);
      CHECK(as_set(a.symbols) == oracle.symbols.at(a.name));
    }
  CHECK(got == expected);
}

// ---------------------------------------------------------------------------
// Mach-O: minos and sdk per slice against llvm-otool-14 -l, on dylibs linked
// by ld64.lld-14 with different -platform_version values (thin and universal).


namespace {

struct otool_version {
  std::string command, minos, sdk;
};

// The first LC_BUILD_VERSION / LC_VERSION_MIN_MACOSX of `arch` in llvm-otool-14 -l
// (of the slice llvm-lipo-14 -thin extracts, for a universal file: llvm-otool-14
// prints the first slice whatever -arch says).
otool_version otool_platform(const std::string& path, const std::string& arch) {
  std::string target = path;
  if (lt::capture("llvm-lipo-14 -info " + lt::shell_quote(path)).out.find("Architectures in the fat file") != std::string::npos) {
    target = path + "." + arch + ".thin";
    lt::capture("llvm-lipo-14 -thin " + arch + " " + lt::shell_quote(path) + " -output " + lt::shell_quote(target));
  }
  auto r = lt::capture("llvm-otool-14 -l " + lt::shell_quote(target));
  otool_version out;
  for (const auto& line : lt::lines(r.out)) {
    std::istringstream in(line);
    std::string key, value;
    in >> key >> value;
    if (key == "cmd" && (value == "LC_BUILD_VERSION" || value == "LC_VERSION_MIN_MACOSX")) {
      if (!out.command.empty()) break;
      out.command = value;
    } else if (!out.command.empty() && out.minos.empty() &&
               (key == (out.command == "LC_BUILD_VERSION" ? "minos" : "version"))) {
      out.minos = value;  // (LC_BUILD_VERSION's tool lines also say "version")
    } else if (!out.command.empty() && key == "sdk" && out.sdk.empty()) {
      out.sdk = value;
    }
  }
  return out;
}

}  // namespace

TEST_CASE("Mach-O minos and sdk equal llvm-otool-14 -l", "[floors][macho]") {
  if (!lt::have_macho_tools()) {
    WARN("clang-14 / ld64.lld-14 / llvm-otool-14 / llvm-lipo-14 missing");
    return;
  }
  const std::string dir = lt::scratch_dir("floors_macho");
  lt::write_file(dir + "/libSystem.tbd",
                 "--- !tapi-tbd\ntbd-version:     4\ntargets:         [ x86_64-macos, arm64-macos ]\n"
                 "install-name:    '/usr/lib/libSystem.B.dylib'\ncurrent-version: 1311\nexports:\n"
                 "  - targets:         [ x86_64-macos, arm64-macos ]\n    symbols:         [ _printf, dyld_stub_binder ]\n...\n");
  lt::write_file(dir + "/f.c", "int f(void) { return 1; }\n");
  struct fixture {
    const char* arch;
    const char* minos;
    const char* sdk;
  };
  const fixture cases[] = {{"x86_64", "10.9", "10.15"}, {"x86_64", "10.13.4", "11.1"}, {"arm64", "11.0", "12.0"},
                           {"arm64", "12.3", "13.1"}, {"x86_64", "14.2", "14.2"}};
  std::vector<std::string> built;
  for (const auto& c : cases) {
    const std::string name = std::string("lib_") + c.arch + "_" + c.minos + ".dylib";
    REQUIRE(lt::run_in(dir, std::string("clang-14 -target ") + c.arch + "-apple-macos" + c.minos + " -c f.c -o f_" + c.arch + ".o") == 0);
    REQUIRE(lt::run_in(dir, std::string("ld64.lld-14 -dylib -arch ") + c.arch + " -platform_version macos " + c.minos + " " +
                                c.sdk + " f_" + c.arch + ".o -L. -lSystem -o " + name) == 0);
    built.push_back(name);
  }
  REQUIRE(lt::run_in(dir, "llvm-lipo-14 -create lib_x86_64_10.9.dylib lib_arm64_12.3.dylib -output fat.dylib") == 0);
  built.push_back("fat.dylib");
  for (const auto& name : built) {
    INFO(name);
    auto file = mapped_file::open(dir + "/" + name);
    REQUIRE(file);
    auto floors = resolve::macho_floors_of(file->bytes());
    REQUIRE(floors);
    CHECK(floors->universal == (name == "fat.dylib"));
    for (const auto& slice : floors->slices) {
      const otool_version expected = otool_platform(dir + "/" + name, slice.arch);
      REQUIRE(!expected.command.empty());
      REQUIRE(slice.platforms.size() >= 1);
      CHECK(slice.platforms[0].command == expected.command);
      CHECK(resolve::macos_version_string(slice.platforms[0].minos) == expected.minos);
      CHECK(resolve::macos_version_string(slice.platforms[0].sdk) == expected.sdk);
    }
  }
  // The CLI: --macos-target and --require-archs.
  const std::string bin = lt::tool_path("linkscope-floors");
  const std::string fat = lt::shell_quote(dir + "/fat.dylib");
  const std::string minos_arm = otool_platform(dir + "/fat.dylib", "arm64").minos;  // 12.3
  CHECK(lt::capture(bin + " --macos-target " + minos_arm + " " + fat).status == 0);
  auto over = lt::capture(bin + " --macos-target 12.2 " + fat);
  CHECK(over.status == 1);
  CHECK(over.out.find("exceeds --macos-target 12.2: arm64") != std::string::npos);
  CHECK(lt::capture(bin + " --require-archs x86_64,arm64 " + fat).status == 0);
  auto thin = lt::capture(bin + " --require-archs x86_64,arm64 " + lt::shell_quote(dir + "/lib_x86_64_10.9.dylib"));
  CHECK(thin.status == 1);
  CHECK(thin.out.find("missing architectures: arm64") != std::string::npos);
  auto json = lt::capture(bin + " --json " + fat + " " + lt::shell_quote(dir + "/lib_x86_64_14.2.dylib"));
  INFO(json.out);
  CHECK(json.status == 0);
  CHECK(json.out.find("\"macos_minos\":{\"version\":\"" + otool_platform(dir + "/lib_x86_64_14.2.dylib", "x86_64").minos + "\"") !=
        std::string::npos);
  CHECK(lt::capture(bin + " --macos-target eleven " + fat + " 2>/dev/null").status == 2);
  // A truncated Mach-O is an input error naming the file.
  std::string bytes = lt::read_file(dir + "/lib_arm64_12.3.dylib");
  lt::write_file(dir + "/cut.dylib", bytes.substr(0, 40));
  auto cut = lt::capture(bin + " " + lt::shell_quote(dir + "/cut.dylib") + " 2>&1");
  CHECK(cut.status == 2);
  CHECK(cut.out.find("linkscope-floors: " + dir + "/cut.dylib: error:") != std::string::npos);
}

// ---------------------------------------------------------------------------
// PE: machine, subsystem and versions against x86_64-w64-mingw32-objdump -p on
// mingw-built images; the C runtime of each DLL name objdump -p lists.

namespace {

// "Key\t\tvalue" lines of objdump -p's optional header dump, and the DLL names.
struct objdump_pe {
  std::map<std::string, std::string> fields;
  std::vector<std::string> dlls;
};

objdump_pe mingw_objdump_p(const std::string& path) {
  objdump_pe out;
  auto r = lt::capture("x86_64-w64-mingw32-objdump -p " + lt::shell_quote(path));
  for (const auto& line : lt::lines(r.out)) {
    std::istringstream in(line);
    std::string key, value;
    in >> key >> value;
    if (key == "DLL" && value == "Name:") {
      std::string dll;
      in >> dll;
      out.dlls.push_back(dll);
    } else if (!key.empty() && out.fields.count(key) == 0) {
      std::string rest;
      std::getline(in, rest);
      out.fields[key] = value + rest;
    }
  }
  return out;
}

resolve::pe_floors pe_of(const std::string& path) {
  auto file = mapped_file::open(path);
  REQUIRE(file);
  auto floors = resolve::pe_floors_of(file->bytes());
  INFO(path);
  REQUIRE(floors);
  return *floors;
}

}  // namespace

TEST_CASE("PE fields equal objdump -p; the C runtime of every imported DLL", "[floors][pe]") {
  if (!lt::have_tool("x86_64-w64-mingw32-gcc") || !lt::have_tool("x86_64-w64-mingw32-objdump") ||
      !lt::have_tool("x86_64-w64-mingw32-dlltool")) {
    WARN("mingw-w64 missing");
    return;
  }
  const std::string dir = lt::scratch_dir("floors_pe");
  lt::write_file(dir + "/main.c", "int main(void) { return 0; }\n");
  REQUIRE(lt::run_in(dir, "x86_64-w64-mingw32-gcc main.c -o plain.exe") == 0);
  REQUIRE(lt::run_in(dir, "x86_64-w64-mingw32-gcc main.c -o win7.exe -mwindows -Wl,--major-os-version,6 "
                          "-Wl,--minor-os-version,1 -Wl,--major-subsystem-version,6 -Wl,--minor-subsystem-version,2") == 0);
  // A DLL importing from a CRT of each flavour, through import libraries made from .def files.
  const std::vector<std::pair<std::string, std::string>> crts = {
      {"ucrtbase", "ucrt"},     {"api-ms-win-crt-runtime-l1-1-0", "ucrt"}, {"vcruntime140", "vcredist"},
      {"msvcp140d", "debug"},   {"msvcr120", "vcredist"},                  {"msvcrt", "msvcrt"},
      {"libwinpthread-1", "mingw"}, {"kernel32", ""}, {"msvcr100", "vcredist"}, {"vcruntime140_1d", "debug"}};
  std::string source, libs;
  for (std::size_t i = 0; i < crts.size(); ++i) {
    const std::string fn = "crt_fn" + std::to_string(i);
    lt::write_file(dir + "/c" + std::to_string(i) + ".def", "LIBRARY " + crts[i].first + ".dll\nEXPORTS\n" + fn + "\n");
    REQUIRE(lt::run_in(dir, "x86_64-w64-mingw32-dlltool -d c" + std::to_string(i) + ".def -l libc" + std::to_string(i) + ".a") == 0);
    source += "extern int " + fn + "(void);\n";
    libs += " -lc" + std::to_string(i);
  }
  source += "int f(void) { return 0";
  for (std::size_t i = 0; i < crts.size(); ++i) source += " + crt_fn" + std::to_string(i) + "()";
  source += "; }\n";
  lt::write_file(dir + "/crt.c", source);
  REQUIRE(lt::run_in(dir, "x86_64-w64-mingw32-gcc -shared -nostdlib crt.c -L." + libs + " -o crt.dll -Wl,-e,f") == 0);

  for (const std::string name : {"plain.exe", "win7.exe", "crt.dll"}) {
    INFO(name);
    const auto oracle = mingw_objdump_p(dir + "/" + name);
    const auto f = pe_of(dir + "/" + name);
    CHECK(std::to_string(f.major_os_version) == oracle.fields.at("MajorOSystemVersion"));
    CHECK(std::to_string(f.minor_os_version) == oracle.fields.at("MinorOSystemVersion"));
    CHECK(std::to_string(f.major_subsystem_version) == oracle.fields.at("MajorSubsystemVersion"));
    CHECK(std::to_string(f.minor_subsystem_version) == oracle.fields.at("MinorSubsystemVersion"));
    // "00000003\t(Windows CUI)"
    const std::string subsystem = oracle.fields.at("Subsystem");
    CHECK(std::stoul(subsystem, nullptr, 16) == f.subsystem);
    CHECK(subsystem.find(std::string("(") + pe::subsystem_name(f.subsystem) + ")") != std::string::npos);
    CHECK(oracle.fields.at("Magic").find(f.pe32_plus ? "(PE32+)" : "(PE32)") != std::string::npos);
    CHECK(as_set(f.imports) == as_set(oracle.dlls));
    // Every CRT among objdump's DLL names, classified as the table says.
    std::map<std::string, std::string> flavour_of;
    for (const auto& c : f.crts) flavour_of[c.dll] = resolve::to_string(c.flavour);
    for (const auto& dll : oracle.dlls) {
      std::string stem = dll.substr(0, dll.size() - 4);
      std::string lower = stem;
      for (char& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      auto it = std::find_if(crts.begin(), crts.end(), [&](const auto& c) { return c.first == lower; });
      const std::string expected = it == crts.end() ? "" : it->second;
      CHECK((flavour_of.count(dll) ? flavour_of[dll] : std::string()) == expected);
    }
  }
  const auto crt = pe_of(dir + "/crt.dll");
  CHECK(crt.dll);
  for (const auto& c : crt.crts)
    if (c.dll == "vcruntime140.dll" || c.dll == "msvcp140d.dll") CHECK(c.version == "14");

  const std::string bin = lt::tool_path("linkscope-floors");
  const std::string win7 = lt::shell_quote(dir + "/win7.exe");
  // win7.exe: OS 6.1, subsystem 6.2 (objdump -p): the floor is 6.2.
  CHECK(lt::capture(bin + " --windows-target 6.2 " + win7).status == 0);
  CHECK(lt::capture(bin + " --windows-target 6.1 " + win7).status == 1);
  CHECK(lt::capture(bin + " --forbid-crt debug " + lt::shell_quote(dir + "/crt.dll")).status == 1);
  CHECK(lt::capture(bin + " --forbid-crt debug " + lt::shell_quote(dir + "/plain.exe")).status == 0);
  CHECK(lt::capture(bin + " --forbid-crt nonsense " + win7 + " 2>/dev/null").status == 2);
  auto json = lt::capture(bin + " --json " + win7 + " " + lt::shell_quote(dir + "/plain.exe"));
  CHECK(json.out.find("\"windows\":{\"version\":\"6.2\",\"file\":\"" + dir + "/win7.exe\"}") != std::string::npos);
  // A cut image is an input error naming the file.
  lt::write_file(dir + "/cut.exe", lt::read_file(dir + "/plain.exe").substr(0, 200));
  auto cut = lt::capture(bin + " " + lt::shell_quote(dir + "/cut.exe") + " 2>&1");
  CHECK(cut.status == 2);
  CHECK(cut.out.find("linkscope-floors: " + dir + "/cut.exe: error:") != std::string::npos);
}

TEST_CASE("corrupted notes and version tables give a value or an error, never a crash", "[floors][hardening]") {
  const std::string dir = lt::scratch_dir("floors_sweep");
  lt::write_file(dir + "/main.c", "#include <stdio.h>\nint main(void) { puts(\"x\"); return 0; }\n");
  REQUIRE(lt::run_in(dir, "gcc -Wl,-z,x86-64-v3 main.c -o prog") == 0);
  const std::string good = lt::read_file(dir + "/prog");
  // The sections the floors read, from readelf -S: notes and the version tables.
  auto r = lt::capture("readelf -SW " + lt::shell_quote(dir + "/prog") +
                       " | sed 's/^ *\\[ *[0-9]*\\]//' | awk '$1 ~ /^\\.note|^\\.gnu\\.version/ { print $4, $5 }'");
  std::size_t swept = 0;
  for (const auto& line : lt::lines(r.out)) {
    std::istringstream in(line);
    std::string off_hex, size_hex;
    in >> off_hex >> size_hex;
    if (off_hex.empty() || size_hex.empty()) continue;
    const std::size_t off = std::stoul(off_hex, nullptr, 16), size = std::stoul(size_hex, nullptr, 16);
    for (std::size_t i = off; i < off + size && i < good.size(); ++i) {
      for (unsigned char value : {0x00, 0xff, 0x7f}) {
        std::string bytes = good;
        bytes[i] = static_cast<char>(value);
        auto floors = resolve::elf_floors_of(byte_view(std::string_view(bytes)));
        if (!floors) CHECK(floors.error().offset != no_offset);
        ++swept;
      }
    }
  }
  CHECK(swept > 100);
  // Every truncation point of the file.
  for (std::size_t n = 0; n < good.size(); n += 7) {
    auto floors = resolve::elf_floors_of(byte_view(std::string_view(good).substr(0, n)));
    (void)floors;
  }
}
