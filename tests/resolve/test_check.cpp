// resolve/check.hpp and linkscope-check: a generated prefix built with gcc;
// every finding is cross-checked with the real tools: `ldd -u -r` (unused
// NEEDED), `ldd` (not found), `readelf -d` (RPATH/RUNPATH, NEEDED), ld.so's
// LD_DEBUG=bindings (which library a symbol binds to), `dpkg -S` (ownership).
// resolve/packages.hpp has its own tests (test_packages.cpp).
#include <linkscope/report/check.hpp>
#include <linkscope/resolve/check.hpp>
#include <linkscope/resolve/duplicates.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <iterator>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "support/fixtures.hpp"

using namespace linkscope;
namespace lt = linkscope_test;

namespace {

// prefix/
//   lib/libC.so     c_func, c_data
//   lib/libB.so     NEEDED libC.so, RUNPATH $ORIGIN; b_func
//   lib/libU.so     u_func (nobody uses it)
//   lib/libA.so     NEEDED libB.so libU.so, RUNPATH $ORIGIN; uses b_func and c_func
//                   (c_func only through libB's dependency: overlinking)
//   lib/libM.so     NEEDED libmissing.so (deleted after the link)
//   lib/libA.so.1 -> libA.so (a symlink to a file already seen)
//   lib/loop1 -> loop2 -> loop1, lib/self -> .. (loops), lib/README (not ELF)
//   bin/prog        NEEDED libA.so, RPATH /opt/elsewhere/lib:$ORIGIN/../lib
//   conda-meta/     app: bin/prog; liba: lib/libA.so lib/libA.so.1; libb: libB, libC
struct fixture {
  std::string dir, prefix;
};

const fixture& make_prefix() {
  static fixture f = [] {
    fixture x;
    x.dir = lt::scratch_dir("check");
    x.prefix = x.dir + "/env";
    const std::string& d = x.dir;
    lt::write_file(d + "/c.c", "int c_data = 3; int c_func(void) { return c_data; }\n");
    lt::write_file(d + "/b.c", "int c_func(void); int b_func(void) { return c_func() + 1; }\n");
    lt::write_file(d + "/u.c", "int u_func(void) { return 7; }\n");
    lt::write_file(d + "/a.c", "int b_func(void); int c_func(void);\nint a_func(void) { return b_func() + c_func(); }\n");
    lt::write_file(d + "/missing.c", "int missing_func(void) { return 1; }\n");
    lt::write_file(d + "/m.c", "int missing_func(void); int m_func(void) { return missing_func(); }\n");
    lt::write_file(d + "/prog.c", "int a_func(void);\nint main(void) { return a_func() == 7 ? 0 : 1; }\n");
    const std::string script =
        "set -e; mkdir -p env/lib env/bin env/conda-meta;"
        "gcc -shared -fPIC -o env/lib/libC.so c.c;"
        "gcc -shared -fPIC -o env/lib/libB.so b.c -Lenv/lib -Wl,--no-as-needed -lC -Wl,--enable-new-dtags,-rpath,'$ORIGIN';"
        "gcc -shared -fPIC -o env/lib/libU.so u.c;"
        "gcc -shared -fPIC -o env/lib/libA.so a.c -Lenv/lib -Wl,--no-as-needed -lB -lU "
        "-Wl,--enable-new-dtags,-rpath,'$ORIGIN';"
        "gcc -shared -fPIC -o libmissing.so missing.c;"
        "gcc -shared -fPIC -o env/lib/libM.so m.c -L. -Wl,--no-as-needed -lmissing;"
        "gcc -o env/bin/prog prog.c -Lenv/lib -Wl,--no-as-needed -lA "
        "-Wl,--disable-new-dtags,-rpath,/opt/elsewhere/lib:'$ORIGIN/../lib' -Wl,-rpath-link,env/lib;"
        "ln -s libA.so env/lib/libA.so.1; ln -s loop2 env/lib/loop1; ln -s loop1 env/lib/loop2; ln -s .. env/lib/self;"
        "echo hello > env/lib/README";
    REQUIRE(lt::run_in(d, script) == 0);
    lt::write_file(x.prefix + "/conda-meta/app-1.0-0.json",
                   "{\"build\": \"0\", \"depends\": [\"liba\"], \"name\": \"app\", \"files\": [\"bin/prog\"],"
                   " \"paths_data\": {\"paths\": [{\"_path\": \"bin/prog\", \"size_in_bytes\": 1.5e3, \"x\": null}]}}");
    lt::write_file(x.prefix + "/conda-meta/liba-1.0-0.json",
                   "{\"name\": \"liba\", \"files\": [\"lib/libA.so\", \"lib\\/libA.so.1\"], \"noarch\": false}");
    lt::write_file(x.prefix + "/conda-meta/libb-2.0-0.json",
                   "{\"files\": [\"lib/libB.so\", \"lib/libC.so\"], \"name\": \"libb\", \"version\": \"2.0\"}");
    return x;
  }();
  return f;
}

const resolve::file_report* find_file(const resolve::prefix_report& r, const std::string& rel) {
  for (const auto& f : r.files)
    if (f.relative == rel) return &f;
  return nullptr;
}

std::set<std::string> ldd_unused(const std::string& file) {
  // ldd -u -r prints "Unused direct dependencies:" then one tab-indented path a line.
  auto r = lt::capture("ldd -u -r " + lt::shell_quote(file) + " 2>/dev/null");
  std::set<std::string> out;
  bool in = false;
  for (const auto& line : lt::lines(r.out)) {
    if (line.find("Unused direct dependencies") != std::string::npos) {
      in = true;
      continue;
    }
    if (in && !line.empty() && line[0] == '\t') out.insert(line.substr(1));
  }
  return out;
}

// ldd -u also lists a NEEDED that was not found (trace mode's placeholder is
// never used), under its name.
std::set<std::string> our_unused(const resolve::file_report& f) {
  std::set<std::string> out;
  for (const auto& n : f.needed)
    if (!n.used) out.insert(n.path.empty() ? n.name : n.path);
  return out;
}

// `readelf -d` RPATH/RUNPATH entries as "TAG entry".
std::set<std::string> readelf_rpaths(const std::string& file) {
  auto r = lt::capture("readelf -d " + lt::shell_quote(file));
  std::set<std::string> out;
  for (const auto& line : lt::lines(r.out)) {
    for (const char* tag : {"RPATH", "RUNPATH"}) {
      if (line.find(std::string("(") + tag + ")") == std::string::npos) continue;
      const auto open = line.find('['), close = line.rfind(']');
      if (open == std::string::npos || close == std::string::npos) continue;
      const std::string list = line.substr(open + 1, close - open - 1);
      std::size_t start = 0;
      for (;;) {
        const auto colon = list.find(':', start);
        out.insert(std::string(tag) + " " + list.substr(start, colon == std::string::npos ? std::string::npos : colon - start));
        if (colon == std::string::npos) break;
        start = colon + 1;
      }
    }
  }
  return out;
}

std::set<std::string> readelf_needed(const std::string& file) {
  auto r = lt::capture("readelf -d " + lt::shell_quote(file));
  std::set<std::string> out;
  for (const auto& line : lt::lines(r.out)) {
    if (line.find("(NEEDED)") == std::string::npos) continue;
    const auto open = line.find('['), close = line.rfind(']');
    out.insert(line.substr(open + 1, close - open - 1));
  }
  return out;
}

}  // namespace

TEST_CASE("glob_match: the allow-list's patterns", "[check]") {
  CHECK(resolve::glob_match("libc.so*", "libc.so.6"));
  CHECK(resolve::glob_match("ld-linux*.so*", "ld-linux-x86-64.so.2"));
  CHECK(resolve::glob_match("lib?.so", "libA.so"));
  CHECK_FALSE(resolve::glob_match("libc.so*", "libcrypto.so.3"));
  CHECK_FALSE(resolve::glob_match("", "x"));
  CHECK(resolve::glob_match("*", ""));
}

TEST_CASE("allow-lists: the data files are the defaults, in parse_allow_list's syntax", "[check][allow]") {
  // The generator of the defaults is data/allow/*.txt: the embedded lists
  // must be what the library's own reader makes of those files.
  const std::string dir = std::string(LINKSCOPE_SOURCE_DIR) + "/data/allow/";
  auto linux_globs = resolve::read_allow_file(dir + "linux.txt");
  auto macos_globs = resolve::read_allow_file(dir + "macos.txt");
  auto windows_globs = resolve::read_allow_file(dir + "windows.txt");
  REQUIRE(linux_globs);
  REQUIRE(macos_globs);
  REQUIRE(windows_globs);
  CHECK(*linux_globs == resolve::default_allow_list());
  CHECK(*macos_globs == resolve::default_macos_allow_list());
  CHECK(*windows_globs == resolve::default_windows_allow_list());
  const resolve::prefix_options defaults;
  CHECK(defaults.allow == *linux_globs);
  CHECK(defaults.macos_allow == *macos_globs);
  CHECK(defaults.windows_allow == *windows_globs);
  // The syntax: comments at a line's start or after white space, trimmed
  // globs, CRLF, a '#' inside a glob kept; a control character is an error
  // at its offset.
  auto parsed = resolve::parse_allow_list("# head\n  libfoo.so*  # why\r\n\n\tlib#x.so\n/opt/*/lib*.dylib");
  REQUIRE(parsed);
  CHECK(*parsed == std::vector<std::string>{"libfoo.so*", "lib#x.so", "/opt/*/lib*.dylib"});
  auto bad = resolve::parse_allow_list(std::string_view("libok.so\nlib\0x.so\n", 18));
  REQUIRE_FALSE(bad);
  CHECK(bad.error().code == errc::malformed);
  CHECK(bad.error().offset == 12);
  // Matching: without '/' the last component, with '/' the whole name; PE's
  // names without regard to case.
  const std::vector<std::string> globs = {"libz.so*", "/usr/lib/*", "KERNEL32.dll"};
  CHECK(resolve::allow_list_matches(globs, "/opt/x/libz.so.1"));
  CHECK(resolve::allow_list_matches(globs, "/usr/lib/libSystem.B.dylib"));
  CHECK_FALSE(resolve::allow_list_matches(globs, "@rpath/usr/lib/libfoo.dylib"));
  CHECK_FALSE(resolve::allow_list_matches(globs, "kernel32.dll"));
  CHECK(resolve::allow_list_matches(globs, "kernel32.dll", true));
  CHECK_FALSE(resolve::allow_list_matches(globs, ""));
}

TEST_CASE("check_prefix on a generated prefix agrees with ldd, readelf and ld.so", "[check]") {
  if (!lt::have_tool("gcc") || !lt::have_tool("ldd") || !lt::have_tool("readelf")) {
    WARN("gcc, ldd or readelf missing");
    return;
  }
  const fixture& fx = make_prefix();
  resolve::prefix_options options;
  options.use_dpkg = false;
  auto report = resolve::check_prefix(fx.prefix, options);
  REQUIRE(report);
  CHECK(report->have_conda);

  // The walk: prog, libA..libU, libM; the symlink to libA.so and the loops skipped.
  std::vector<std::string> walked;
  for (const auto& f : report->files) walked.push_back(f.relative);
  CHECK(walked == std::vector<std::string>{"bin/prog", "lib/libA.so", "lib/libB.so", "lib/libC.so", "lib/libM.so",
                                           "lib/libU.so"});
  CHECK(report->skipped_symlinks == 1);
  CHECK(report->skipped_non_elf >= 4);  // README, conda-meta/*.json

  for (const auto& f : report->files) {
    INFO(f.path);
    // Unused NEEDED: exactly ldd -u -r's list.
    CHECK(our_unused(f) == ldd_unused(f.path));
    // RPATH/RUNPATH entries: exactly readelf -d's.
    std::set<std::string> ours;
    for (const auto& r : f.rpaths) ours.insert(r.tag + " " + r.entry);
    CHECK(ours == readelf_rpaths(f.path));
    // NEEDED entries: readelf -d's.
    std::set<std::string> needed;
    for (const auto& n : f.needed) needed.insert(n.name);
    CHECK(needed == readelf_needed(f.path));
    // Not found: ldd's "=> not found" lines.
    std::set<std::string> ldd_missing, our_missing;
    for (const auto& line : lt::lines(lt::capture("ldd " + lt::shell_quote(f.path) + " 2>/dev/null").out)) {
      const auto at = line.find(" => not found");
      if (at != std::string::npos) ldd_missing.insert(line.substr(line.find_first_not_of('\t'), at - 1));
    }
    for (const auto& m : f.missing) our_missing.insert(m.name);
    CHECK(our_missing == ldd_missing);
  }

  const auto* liba = find_file(*report, "lib/libA.so");
  REQUIRE(liba != nullptr);
  const auto libu = std::set<std::string>{fx.prefix + "/lib/libU.so"};
  CHECK(our_unused(*liba) == libu);
  // Overlinking: c_func binds to libC.so, which libA.so does not NEED.
  REQUIRE(liba->overlinked.size() == 1);
  CHECK(liba->overlinked[0].path == fx.prefix + "/lib/libC.so");
  CHECK(liba->overlinked[0].via == fx.prefix + "/lib/libB.so");
  CHECK(liba->overlinked[0].symbols == std::vector<std::string>{"c_func"});
  CHECK(readelf_needed(liba->path).count("libC.so") == 0);
  // ld.so agrees: running prog, libA's c_func binds to libC.so.
  {
    // prog finds libA through $ORIGIN/../lib, and ld.so does not normalise the path.
    const std::string lib = fx.prefix + "/bin/../lib";
    auto r = lt::capture("LD_BIND_NOW=1 LD_DEBUG=bindings " + lt::shell_quote(fx.prefix + "/bin/prog") + " 2>&1");
    CHECK(r.out.find("binding file " + lib + "/libA.so [0] to " + lib + "/libC.so [0]: normal symbol `c_func'") !=
          std::string::npos);
    CHECK(r.out.find("binding file " + lib + "/libA.so [0] to " + lib + "/libB.so [0]: normal symbol `b_func'") !=
          std::string::npos);
  }
  // libB uses libC directly: no overlinking there.
  const auto* libb = find_file(*report, "lib/libB.so");
  REQUIRE(libb != nullptr);
  CHECK(libb->overlinked.empty());
  REQUIRE(libb->needed.size() >= 1);
  CHECK(libb->needed[0].used);
  CHECK(libb->needed[0].via == resolve::found_via::runpath);
  CHECK(libb->needed[0].owner.package == "libb");
  CHECK(libb->findings == 0);

  // libM: the missing NEEDED.
  const auto* libm = find_file(*report, "lib/libM.so");
  REQUIRE(libm != nullptr);
  REQUIRE(libm->missing.size() == 1);
  CHECK(libm->missing[0].name == "libmissing.so");
  CHECK(libm->missing[0].direct);
  CHECK(std::find(libm->undefined.begin(), libm->undefined.end(), "missing_func") != libm->undefined.end());

  // prog: the RPATH entry outside the prefix; $ORIGIN/../lib is inside.
  const auto* prog = find_file(*report, "bin/prog");
  REQUIRE(prog != nullptr);
  REQUIRE(prog->rpaths.size() == 2);
  CHECK(prog->rpaths[0].tag == "RPATH");
  CHECK(prog->rpaths[0].entry == "/opt/elsewhere/lib");
  CHECK(prog->rpaths[0].outside);
  CHECK(prog->rpaths[1].entry == "$ORIGIN/../lib");
  CHECK(prog->rpaths[1].expanded == fx.prefix + "/lib");
  CHECK_FALSE(prog->rpaths[1].outside);
  // libc comes from the system, but it is allow-listed.
  bool saw_libc = false;
  for (const auto& n : prog->needed) {
    if (n.name != "libc.so.6") continue;
    saw_libc = true;
    CHECK_FALSE(n.in_prefix);
    CHECK(n.allowed);
  }
  CHECK(saw_libc);
  // Ownership: libA in liba; libU and libM own by nobody.
  for (const auto& n : prog->needed)
    if (n.name == "libA.so") CHECK(n.owner.package == "liba");
  CHECK(report->unowned == std::vector<std::string>{"lib/libU.so"});
  CHECK(report->findings > 0);
}

TEST_CASE("declared dependencies: underlinking and overdepending", "[check]") {
  if (!lt::have_tool("gcc")) {
    WARN("gcc missing");
    return;
  }
  const fixture& fx = make_prefix();
  resolve::prefix_options options;
  options.use_dpkg = false;
  options.package = "app";
  options.check_declared = true;
  options.declared = {"numpy"};
  auto report = resolve::check_prefix(fx.prefix, options);
  REQUIRE(report);
  REQUIRE(report->files.size() == 1);
  CHECK(report->files[0].relative == "bin/prog");
  CHECK(report->undeclared == std::vector<std::string>{"liba"});
  CHECK(report->unused_declared == std::vector<std::string>{"numpy"});
  options.declared = {"liba"};
  report = resolve::check_prefix(fx.prefix, options);
  REQUIRE(report);
  CHECK(report->undeclared.empty());
  CHECK(report->unused_declared.empty());
  // The overridable allow-list: without it, libc is a system library finding.
  options.allow.clear();
  auto strict = resolve::check_prefix(fx.prefix, options);
  REQUIRE(strict);
  CHECK(strict->findings > report->findings);
}

TEST_CASE("dpkg attribution agrees with dpkg -S", "[check]") {
  if (!lt::have_tool("dpkg") || !std::filesystem::is_directory("/var/lib/dpkg/info") || !lt::have_tool("gcc")) {
    WARN("no dpkg database");
    return;
  }
  const fixture& fx = make_prefix();
  resolve::prefix_options options;
  options.files = {fx.prefix + "/bin/prog"};
  auto report = resolve::check_prefix(fx.prefix, options);
  REQUIRE(report);
  REQUIRE(report->have_dpkg);
  REQUIRE(report->files.size() == 1);
  std::size_t checked = 0;
  for (const auto& n : report->files[0].needed) {
    if (n.in_prefix || n.path.empty()) continue;
    INFO(n.path);
    // dpkg -S knows the path as the package registered it; try the path, then its /usr-merge alias.
    std::string owner;
    std::vector<std::string> candidates{n.path};
    for (const auto& a : resolve::detail::usr_merge_aliases(n.path)) candidates.push_back(a);
    for (const auto& c : candidates) {
      auto r = lt::capture("dpkg -S " + lt::shell_quote(c) + " 2>/dev/null");
      if (r.status == 0 && !r.out.empty()) {
        owner = r.out.substr(0, r.out.find(": "));
        break;
      }
    }
    CHECK(n.owner.package == owner);
    CHECK(n.owner.source == (owner.empty() ? "" : "dpkg"));
    ++checked;
  }
  CHECK(checked >= 1);  // libc.so.6
}

TEST_CASE("linkscope-check CLI: text, json, exit codes", "[check]") {
  const std::string tool = lt::tool_path("linkscope-check");
  if (!std::filesystem::exists(tool) || !lt::have_tool("gcc")) {
    WARN("linkscope-check not built");
    return;
  }
  const fixture& fx = make_prefix();
  auto text = lt::capture(tool + " --no-dpkg " + lt::shell_quote(fx.prefix));
  CHECK(text.status == 1);
  CHECK(text.out.find("lib/libA.so: unused: libU.so => " + fx.prefix + "/lib/libU.so\n") != std::string::npos);
  CHECK(text.out.find("lib/libA.so: overlinked: 1 symbol from lib/libC.so (loaded by lib/libB.so): c_func\n") !=
        std::string::npos);
  CHECK(text.out.find("lib/libM.so: missing: libmissing.so (not found)\n") != std::string::npos);
  CHECK(text.out.find("bin/prog: rpath: RPATH entry /opt/elsewhere/lib points outside the prefix\n") !=
        std::string::npos);
  CHECK(text.out.find("lib/libA.so: Needed DSO lib/libB.so found in libb\n") != std::string::npos);
  // Found through $ORIGIN/../lib, shown normalised.
  CHECK(text.out.find("bin/prog: Needed DSO lib/libA.so found in liba\n") != std::string::npos);
  CHECK(text.out.find("unowned: Needed DSO lib/libU.so found in no package\n") != std::string::npos);
  auto json = lt::capture(tool + " --no-dpkg --json " + lt::shell_quote(fx.prefix));
  CHECK(json.status == 1);
  CHECK(json.out.rfind("{\"version\":1,", 0) == 0);
  CHECK(json.out.find("\"overlinked\":[{\"path\":\"" + fx.prefix + "/lib/libC.so\"") != std::string::npos);
  // A clean file: exit 0.
  auto clean = lt::capture(tool + " --no-dpkg " + lt::shell_quote(fx.prefix) + " " +
                           lt::shell_quote(fx.prefix + "/lib/libB.so"));
  CHECK(clean.status == 0);
  CHECK(lt::capture(tool + " --bogus 2>/dev/null").status == 2);
  CHECK(lt::capture(tool + " " + lt::shell_quote(fx.dir + "/nonexistent") + " 2>/dev/null").status == 2);
  CHECK(lt::capture(tool + " --package nosuch " + lt::shell_quote(fx.prefix) + " 2>/dev/null").status == 2);
  // --allow-file: data/allow/linux.txt read as a user's list after
  // --no-default-allow gives the default report; without it, libc is a
  // system finding. A list with a control character is an input error.
  const std::string linux_list = std::string(LINKSCOPE_SOURCE_DIR) + "/data/allow/linux.txt";
  const std::string none = lt::capture(tool + " --no-dpkg --no-default-allow " + lt::shell_quote(fx.prefix)).out;
  CHECK(none.find("bin/prog: system: libc.so.6 => ") != std::string::npos);
  CHECK(text.out.find("system: libc.so.6") == std::string::npos);
  // (the closing "N files checked ... (..., 0.004 s)" line holds a time)
  const auto without_time = [](const std::string& out) { return out.substr(0, out.rfind(", ")); };
  CHECK(without_time(lt::capture(tool + " --no-dpkg --no-default-allow --allow-file " + lt::shell_quote(linux_list) +
                                 " " + lt::shell_quote(fx.prefix)).out) == without_time(text.out));
  lt::write_file(fx.dir + "/bad_allow.txt", std::string("libc.so*\n\x01\n"));
  auto bad = lt::capture(tool + " --allow-file " + lt::shell_quote(fx.dir + "/bad_allow.txt") + " " +
                         lt::shell_quote(fx.prefix) + " 2>&1");
  CHECK(bad.status == 2);
  CHECK(bad.out.find("bad_allow.txt: error: control character in an allow-list (offset 0x9)") != std::string::npos);
  CHECK(lt::capture(tool + " --allow-file " + lt::shell_quote(fx.dir + "/none.txt") + " " + lt::shell_quote(fx.prefix) +
                    " 2>/dev/null").status == 2);
}

TEST_CASE("a file given that is no ELF file ld.so would map is an error of the run, named with its offset", "[check]") {
  const fixture& fx = make_prefix();
  // Seven bytes: the ELF magic, class, data and version, and no more. The
  // 16-byte identification that starts at offset 0 is cut short.
  const std::string truncated = fx.dir + "/libtrunc.so.1";
  lt::write_file(truncated, std::string("\x7f" "ELF\x02\x01\x01", 7));
  resolve::prefix_options options;
  options.use_dpkg = false;
  options.files = {truncated, fx.prefix + "/lib/libB.so"};
  auto report = resolve::check_prefix(fx.prefix, options);
  REQUIRE(report);
  REQUIRE(report->files.size() == 2);
  CHECK(report->failed == 1);
  CHECK(report->files[0].failed());
  CHECK(report->files[0].failure.code == errc::truncated);
  CHECK(report->files[0].failure.offset == 0);
  CHECK_FALSE(report->files[1].failed());  // the rest is still checked
  CHECK(report->objects_parsed >= 2);      // libB and libC, each once

  const std::string tool = lt::tool_path("linkscope-check");
  if (!std::filesystem::exists(tool)) return;
  const std::string err = fx.dir + "/check-stderr.txt";
  auto run = lt::capture(tool + " --no-dpkg " + lt::shell_quote(fx.prefix) + " " + lt::shell_quote(truncated) + " 2>" +
                         lt::shell_quote(err));
  CHECK(run.status == 2);
  CHECK(lt::read_file(err) == "linkscope-check: " + truncated + ": error: ELF identification truncated (offset 0x0)\n");
  CHECK(run.out.find("1 file checked, 0 findings, 1 file not analysed") != std::string::npos);
  // A FILE that does not exist: an error through cli::report with the tool's prefix, exit 2 (issue 15 part 6).
  const std::string ghost = fx.dir + "/no-such-file.so";
  auto missing = lt::capture(tool + " --no-dpkg " + lt::shell_quote(fx.prefix) + " " + lt::shell_quote(ghost) + " 2>" +
                             lt::shell_quote(err));
  CHECK(missing.status == 2);
  CHECK(lt::read_file(err).rfind("linkscope-check: " + ghost + ": error: ", 0) == 0);
}

namespace {
// Every GLIBC_ version above 2.17 a file needs, with its symbols, as objdump -T lists them.
std::map<std::string, std::set<std::string>> objdump_glibc_above_217(const std::string& file) {
  std::map<std::string, std::set<std::string>> out;
  for (const auto& line : lt::lines(lt::capture("objdump -T " + lt::shell_quote(file)).out)) {
    if (line.find("*UND*") == std::string::npos) continue;
    const auto open = line.find("(GLIBC_");
    if (open == std::string::npos) continue;
    const auto close = line.find(')', open);
    const std::string version = line.substr(open + 1, close - open - 1);
    std::vector<int> parts;
    std::stringstream in(version.substr(6));
    for (std::string p; std::getline(in, p, '.');) parts.push_back(std::stoi(p));
    if (!(parts > std::vector<int>{2, 17})) continue;
    std::string name = line.substr(close + 1);
    name.erase(0, name.find_first_not_of(' '));
    out[version].insert(name);
  }
  return out;
}
}  // namespace

TEST_CASE("floors in the check: --max-glibc makes every version above it a finding, as objdump -T lists them", "[check][floors]") {
  if (!lt::have_tool("gcc") || !lt::have_tool("objdump")) return;
  const fixture& fx = make_prefix();
  const std::string prog = fx.prefix + "/bin/prog";
  const auto want = objdump_glibc_above_217(prog);
  REQUIRE_FALSE(want.empty());  // __libc_start_main@GLIBC_2.34 with this glibc
  resolve::prefix_options options;
  options.use_dpkg = false;
  options.files = {prog};
  options.floor_limits = {*resolve::make_limit("GLIBC", "2.17")};
  auto r = resolve::check_prefix(fx.prefix, options);
  REQUIRE(r);
  const resolve::file_report* f = find_file(*r, "bin/prog");
  REQUIRE(f != nullptr);
  REQUIRE(f->floors.size() == 1);
  std::map<std::string, std::set<std::string>> got;
  for (std::size_t i = 0; i < f->floors[0].above.size(); ++i) {
    CHECK(f->floors[0].libraries[i] == "libc.so.6");
    const auto& need = f->floors[0].above[i];
    got[need.name].insert(need.symbols.begin(), need.symbols.end());
  }
  CHECK(got == want);
  CHECK(f->findings >= 1);
  // At a limit above everything it needs: no floor finding.
  options.floor_limits = {*resolve::make_limit("GLIBC", "99.0")};
  auto high = resolve::check_prefix(fx.prefix, options);
  REQUIRE(high);
  CHECK(find_file(*high, "bin/prog")->floors.empty());

  const std::string tool = lt::tool_path("linkscope-check");
  if (!std::filesystem::exists(tool)) return;
  auto text = lt::capture(tool + " --no-dpkg --max-glibc 2.17 " + lt::shell_quote(fx.prefix) + " " + lt::shell_quote(prog));
  CHECK(text.status == 1);
  for (const auto& [version, names] : want)
    CHECK(text.out.find("bin/prog: floor: " + version + " from libc.so.6 is above GLIBC_2.17: " + *names.begin()) !=
          std::string::npos);
  auto json = lt::capture(tool + " --no-dpkg --json --max-glibc=2.17 " + lt::shell_quote(fx.prefix) + " " +
                          lt::shell_quote(prog));
  CHECK(json.out.find("\"floors\":[{\"family\":\"GLIBC\",\"max\":\"GLIBC_2.17\"") != std::string::npos);
  // Each version above the limit with its symbols (bare names; the version is the key beside them).
  const auto v234 = json.out.find("\"library\":\"libc.so.6\",\"version\":\"GLIBC_2.34\",\"symbols\":[");
  REQUIRE(v234 != std::string::npos);
  CHECK(json.out.substr(v234, json.out.find(']', v234) - v234).find("\"__libc_start_main\"") != std::string::npos);
  CHECK(lt::capture(tool + " --no-dpkg --max-glibc two " + lt::shell_quote(fx.prefix) + " 2>/dev/null").status == 2);
  CHECK(lt::capture(tool + " --no-dpkg --max-version CXXABI " + lt::shell_quote(fx.prefix) + " 2>/dev/null").status == 2);
}

// "Overdepending, or statically linked?" and duplicates across packages
// (resolve/package_findings.hpp). The generator says what is inside each file:
//   lib/libbar.a    package libbar: bar.o (bar_compute, bar_table)
//   lib/libshr.so   package libshr: shr_func
//   lib/libqux.so   package libqux: qux_func (nobody has its code)
//   lib/libfmt.so   package libfmt: fmt_format, fmt_vformat
//   lib/libvendor.so package vendor: its own copy of fmt.c (fmt_format, fmt_vformat)
//   lib/libapp.so   package app: libbar.a linked in with --exclude-libs (hidden),
//                   and shr.c compiled in (a vendored copy of libshr)
//   bin/tool        package app: NEEDED libvendor.so then libfmt.so; calls fmt_format
// The app declares libbar, libshr, libqux, libfmt and vendor. nm shows
// bar_compute local ('t') in libapp.so; ld.so (LD_DEBUG=bindings) binds the
// tool's fmt_format to libvendor.so, the first of the two in load order.
TEST_CASE("overdepending split into unused and statically linked; duplicates across packages with ld.so's winner",
          "[check][packages]") {
  if (!lt::have_tool("gcc") || !lt::have_tool("ar")) {
    WARN("gcc or ar missing");
    return;
  }
  const std::string d = lt::scratch_dir("check_packages");
  lt::write_file(d + "/bar.c", "int bar_table[4] = {1, 2, 3, 4};\nint bar_compute(int i) { return bar_table[i & 3]; }\n");
  lt::write_file(d + "/shr.c", "int shr_func(int x) { return x * 3; }\n");
  lt::write_file(d + "/qux.c", "int qux_func(void) { return 5; }\n");
  lt::write_file(d + "/fmt.c", "int fmt_vformat(int x) { return x + 1; }\nint fmt_format(int x) { return fmt_vformat(x); }\n");
  lt::write_file(d + "/app.c", "int bar_compute(int); int shr_func(int);\nint app_run(int x) { return bar_compute(x) + shr_func(x); }\n");
  lt::write_file(d + "/tool.c", "#include <stdio.h>\nint fmt_format(int);\nint main(void) { printf(\"%d\\n\", fmt_format(1)); return 0; }\n");
  const std::string script =
      "set -e; mkdir -p env/lib env/bin env/conda-meta;"
      "gcc -c -fPIC bar.c -o bar.o; ar rcs env/lib/libbar.a bar.o;"
      "gcc -shared -fPIC -o env/lib/libshr.so shr.c;"
      "gcc -shared -fPIC -o env/lib/libqux.so qux.c;"
      "gcc -shared -fPIC -o env/lib/libfmt.so fmt.c;"
      "gcc -shared -fPIC -o env/lib/libvendor.so fmt.c;"
      "gcc -shared -fPIC -o env/lib/libapp.so app.c shr.c env/lib/libbar.a -Wl,--exclude-libs,ALL;"
      "gcc -o env/bin/tool tool.c -Lenv/lib -Wl,--no-as-needed -lvendor -lfmt -Wl,--enable-new-dtags,-rpath,'$ORIGIN/../lib'";
  REQUIRE(lt::run_in(d, script) == 0);
  const std::string prefix = d + "/env";
  auto meta = [&](const std::string& name, const std::string& files) {
    lt::write_file(linkscope_test::cat({prefix, "/conda-meta/", name, "-1.0-0.json"}),
                   linkscope_test::cat({"{\"name\": \"", name, "\", \"files\": [", files, "]}"}));
  };
  meta("app", "\"lib/libapp.so\", \"bin/tool\"");
  meta("libbar", "\"lib/libbar.a\"");
  meta("libshr", "\"lib/libshr.so\"");
  meta("libqux", "\"lib/libqux.so\"");
  meta("libfmt", "\"lib/libfmt.so\"");
  meta("vendor", "\"lib/libvendor.so\"");

  // The oracles: nm on the absorbed copy, ld.so on the duplicate.
  const auto nm = lt::capture("nm " + lt::shell_quote(prefix + "/lib/libapp.so"));
  REQUIRE(nm.out.find(" t bar_compute\n") != std::string::npos);  // hidden: linked in, not exported
  REQUIRE(nm.out.find(" T shr_func\n") != std::string::npos);
  const auto bindings = lt::capture("LD_DEBUG=bindings " + lt::shell_quote(prefix + "/bin/tool") + " 2>&1");
  bool vendor_wins = false;
  for (const auto& line : lt::lines(bindings.out))
    if (line.find("normal symbol `fmt_format'") != std::string::npos && line.find("/bin/tool") != std::string::npos)
      vendor_wins = line.find("libvendor.so") != std::string::npos;
  REQUIRE(vendor_wins);

  resolve::prefix_options options;
  options.use_dpkg = false;
  options.package = "app";
  options.check_declared = true;
  options.declared = {"libbar", "libshr", "libqux", "libfmt", "vendor"};
  auto report = resolve::check_prefix(prefix, options);
  REQUIRE(report);
  CHECK(report->undeclared.empty());
  CHECK(report->unused_declared == std::vector<std::string>{"libqux"});
  REQUIRE(report->statically_linked.size() == 2);
  const auto& bar = report->statically_linked[0];
  CHECK(bar.package == "libbar");
  REQUIRE(bar.evidence.size() == 1);
  CHECK(bar.evidence[0].file == "lib/libapp.so");
  CHECK(bar.evidence[0].copy_of == "lib/libbar.a");
  CHECK(std::set<std::string>(bar.evidence[0].symbols.begin(), bar.evidence[0].symbols.end()) ==
        std::set<std::string>{"bar_compute", "bar_table"});
  const auto& shr = report->statically_linked[1];
  CHECK(shr.package == "libshr");
  REQUIRE(shr.evidence.size() == 1);
  CHECK(shr.evidence[0].file == "lib/libapp.so");
  CHECK(shr.evidence[0].copy_of == "lib/libshr.so");
  CHECK(shr.evidence[0].symbols == std::vector<std::string>{"shr_func"});

  REQUIRE(report->duplicates.size() == 1);
  const auto& dup = report->duplicates[0];
  CHECK(dup.package_a == "libfmt");
  CHECK(dup.file_a == "lib/libfmt.so");
  CHECK(dup.package_b == "vendor");
  CHECK(dup.file_b == "lib/libvendor.so");
  CHECK(dup.symbols == std::vector<std::string>{"fmt_format", "fmt_vformat"});
  CHECK(dup.winner == "lib/libvendor.so");
  CHECK(dup.consumer == "bin/tool");

  // The CLI says the same, as text and as JSON.
  const std::string cli = lt::tool_path("linkscope-check");
  if (!std::filesystem::exists(cli)) {
    WARN("linkscope-check not built");
    return;
  }
  auto text = lt::capture(cli + " --no-dpkg --package app --declared libbar,libshr,libqux,libfmt,vendor " + lt::shell_quote(prefix));
  CHECK(text.status == 1);
  CHECK(text.out.find("overdepending: package libqux is declared but never used\n") != std::string::npos);
  CHECK(text.out.find("statically linked: package libbar is declared and never linked against, but lib/libapp.so "
                      "holds 2 definitions of lib/libbar.a: ") != std::string::npos);
  CHECK(text.out.find("duplicate: 2 symbols defined by both lib/libfmt.so (libfmt) and lib/libvendor.so (vendor); "
                      "ld.so takes lib/libvendor.so's in bin/tool: fmt_format, fmt_vformat\n") != std::string::npos);
}

TEST_CASE("the version names GNU ld puts in .dynsym are no duplicate definitions", "[check][duplicates]") {
  const std::string libc = "/lib/x86_64-linux-gnu/libc.so.6", libm = "/lib/x86_64-linux-gnu/libm.so.6";
  if (!std::filesystem::exists(libc) || !std::filesystem::exists(libm)) {
    WARN("no x86-64 glibc");
    return;
  }
  // nm -D lists GLIBC_2.2.5 in both, as an absolute symbol ("A").
  for (const auto& lib : {libc, libm})
    REQUIRE(lt::capture("nm -D " + lib).out.find(" A GLIBC_2.2.5\n") != std::string::npos);
  auto report = resolve::find_duplicates({libc, libm});
  REQUIRE(report);
  for (const auto& dup : report->duplicates) CHECK(dup.name.rfind("GLIBC_", 0) != 0);
}

namespace {
// The report's JSON document, without the run's wall time.
std::string report_document(const resolve::prefix_report& r) {
  std::string out;
  {
    json_writer w(out);
    report::write_json(w, r, {});
  }
  return out;
}
}  // namespace

TEST_CASE("jobs: the report is the same on every number of threads", "[check][jobs]") {
  // The generated prefix, whose -j 1 report the tests above check against ldd.
  if (lt::have_tool("gcc")) {
    const fixture& fx = make_prefix();
    resolve::prefix_options options;
    options.use_dpkg = false;
    options.jobs = 1;
    auto one = resolve::check_prefix(fx.prefix, options);
    REQUIRE(one);
    for (unsigned jobs : {2u, 3u, 8u, 0u}) {
      options.jobs = jobs;
      std::size_t calls = 0, last = 0;
      options.progress = [&](std::size_t done, std::size_t total) {
        ++calls;
        CHECK(done == last + 1);  // in order, one at a time
        CHECK(total == one->files.size());
        last = done;
      };
      auto many = resolve::check_prefix(fx.prefix, options);
      REQUIRE(many);
      INFO("jobs " << jobs);
      CHECK(report_document(*many) == report_document(*one));
      CHECK(calls == one->files.size());
    }
  }
  // Real libraries sharing dependencies (libc, libstdc++ ...), so that threads
  // meet in the object cache: the first 300 shared libraries of the system.
  const std::string dir = "/usr/lib/x86_64-linux-gnu";
  if (!std::filesystem::is_directory(dir)) return;
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (e.is_regular_file() && !e.is_symlink() && name.find(".so") != std::string::npos) files.push_back(e.path().string());
  }
  std::sort(files.begin(), files.end());
  if (files.size() > 300) files.resize(300);
  resolve::prefix_options options;
  options.use_dpkg = false;
  options.files = files;
  options.jobs = 1;
  auto one = resolve::check_prefix(dir, options);
  REQUIRE(one);
  CHECK(one->files.size() + one->skipped_symlinks >= files.size() / 2);
  options.jobs = 4;
  auto four = resolve::check_prefix(dir, options);
  REQUIRE(four);
  CHECK(report_document(*four) == report_document(*one));
  CHECK(four->objects_parsed == one->objects_parsed);  // each file parsed once, however many threads asked
  CHECK(one->cache_flushes == 0);
  // A cache limit of 8 MB of mappings: the cache lets go of its files many
  // times over, and the report is the same (objects_parsed counts each file once).
  options.cache_limit = std::size_t{8} << 20;
  for (unsigned jobs : {1u, 2u}) {
    options.jobs = jobs;
    auto bounded = resolve::check_prefix(dir, options);
    REQUIRE(bounded);
    INFO("jobs " << jobs);
    CHECK(bounded->cache_flushes > 5);
    CHECK(report_document(*bounded) == report_document(*one));
  }
}

// Memory follows the roots in flight: an image (its mapping, its parsed
// tables) is let go as soon as no remaining root loads it. Six independent
// chains libkC_2 -> libkC_1 -> libkC_0, every library also needing libhub:
// the walk's order takes the chains one after the other, so on one thread
// the cache never holds more than one chain, the hub, libc and ld.so, and
// every image is let go by the end. The report is the same on any -j.
TEST_CASE("memory: an image is released when no remaining root needs it", "[check][jobs][memory]") {
  if (!lt::have_tool("gcc")) {
    WARN("gcc not found");
    return;
  }
  const std::string dir = lt::scratch_dir("check_release");
  lt::write_file(dir + "/hub.c", "int hub_func(void) { return 1; }\n");
  lt::write_file(dir + "/k.c", "int hub_func(void); int k_func(void) { return hub_func(); }\n");
  std::string script = "set -e; rm -rf env; mkdir -p env/lib; gcc -shared -fPIC -o env/lib/libhub.so hub.c;";
  constexpr int chains = 6;
  for (int c = 0; c < chains; ++c)
    for (int i = 0; i < 3; ++i) {
      const std::string name = "k" + std::to_string(c) + "_" + std::to_string(i);
      script += "gcc -shared -fPIC -o env/lib/lib" + name + ".so k.c -Lenv/lib -Wl,--no-as-needed -lhub" +
                (i > 0 ? " -lk" + std::to_string(c) + "_" + std::to_string(i - 1) : std::string()) +
                " -Wl,-rpath,'$ORIGIN';";
    }
  REQUIRE(lt::run_in(dir, script) == 0);
  resolve::prefix_options options;
  options.use_dpkg = false;
  options.use_conda = false;
  options.jobs = 1;
  auto one = resolve::check_prefix(dir + "/env", options);
  REQUIRE(one);
  REQUIRE(one->files.size() == chains * 3 + 1);
  // The chains, the hub, libc and ld.so (at least): each parsed once.
  CHECK(one->objects_parsed >= chains * 3 + 3);
  INFO("parsed " << one->objects_parsed << ", peak " << one->images_peak << ", released " << one->images_released);
  CHECK(one->images_peak <= 3 + 3 + 1);  // one chain + hub + libc + ld.so (+ libc's own needs)
  CHECK(one->images_released == one->objects_parsed);  // nothing is kept past its last root
  for (unsigned jobs : {2u, 4u}) {
    options.jobs = jobs;
    auto many = resolve::check_prefix(dir + "/env", options);
    REQUIRE(many);
    INFO("jobs " << jobs);
    CHECK(report_document(*many) == report_document(*one));
    CHECK(many->objects_parsed == one->objects_parsed);
    CHECK(many->images_released == many->objects_parsed);
    CHECK(many->images_peak < one->objects_parsed);
  }
}

TEST_CASE("linkscope-check -j and the progress line", "[check][jobs]") {
  const std::string tool = lt::tool_path("linkscope-check");
  if (!std::filesystem::exists(tool) || !lt::have_tool("gcc")) {
    WARN("linkscope-check not built");
    return;
  }
  const fixture& fx = make_prefix();
  const std::string run = tool + " --no-dpkg --json " + lt::shell_quote(fx.prefix);
  auto strip_time = [](std::string s) {
    const auto at = s.find("\"milliseconds\":");
    if (at != std::string::npos) s.erase(at, s.find_first_of(",}", at) - at);
    return s;
  };
  auto one = lt::capture(run + " -j 1 2>&1");
  CHECK(one.status == 1);
  for (const char* j : {"-j 2", "--jobs=5", "-j1024", "--cache-mb 0", "--cache-mb=1 -j 2"}) {
    auto many = lt::capture(run + " " + j + " 2>&1");  // stderr is no terminal: no progress line
    INFO(j);
    CHECK(many.status == one.status);
    CHECK(strip_time(many.out) == strip_time(one.out));
  }
  for (const char* bad : {"-j 0", "-j x", "-j -3", "--jobs=1.5", "-j 1025"}) {
    auto r = lt::capture(run + " " + bad + " 2>&1");
    INFO(bad);
    CHECK(r.status == 2);
    CHECK(r.out == "linkscope-check: -j/--jobs takes a whole number from 1 to 1024\n"
                   "Try 'linkscope-check --help' for more information.\n");
  }
  for (const char* bad : {"--cache-mb x", "--cache-mb -1", "--cache-mb 99999999"}) {
    auto r = lt::capture(run + " " + bad + " 2>&1");
    INFO(bad);
    CHECK(r.status == 2);
    CHECK(r.out.rfind("linkscope-check: --cache-mb takes a whole number of MiB (0: no limit)\n", 0) == 0);
  }
  // On a terminal (script(1) gives the tool a pseudo-terminal), the progress
  // line counts the files and is erased before the report; --quiet drops it.
  if (lt::have_tool("script")) {
    const std::string text = tool + " --no-dpkg -j 2 " + lt::shell_quote(fx.prefix);
    auto tty = lt::capture("script -qec " + lt::shell_quote(text) + " /dev/null");
    CHECK(tty.out.find("linkscope-check: 6/6 files\r\033[K") != std::string::npos);
    auto quiet = lt::capture("script -qec " + lt::shell_quote(text + " --quiet") + " /dev/null");
    CHECK(quiet.out.find("files\r") == std::string::npos);
    CHECK(quiet.out.find("6 files checked") != std::string::npos);
  }
}

namespace {

const char* check_libsystem_tbd =
    "--- !tapi-tbd\ntbd-version:     4\ntargets:         [ x86_64-macos ]\n"
    "install-name:    '/usr/lib/libSystem.B.dylib'\ncurrent-version: 1311\n"
    "exports:\n  - targets:         [ x86_64-macos ]\n    symbols:         [ dyld_stub_binder, _printf ]\n...\n";

const resolve::file_report* file_named(const resolve::prefix_report& r, const std::string& relative) {
  for (const auto& f : r.files)
    if (f.relative == relative) return &f;
  return nullptr;
}

// The prefix's report with unresolved imports as findings, and the files it
// walked (relative), each of which must be of `format` and analysed.
resolve::prefix_report check_all_of(const std::string& env, const std::string& format, std::vector<std::string>& walked,
                                    resolve::prefix_options& options) {
  options.use_dpkg = false;
  options.undefined_is_finding = true;
  auto report = resolve::check_prefix(env, options);
  REQUIRE(report);
  for (const auto& f : report->files) {
    walked.push_back(f.relative);
    CHECK(f.format == format);
    CHECK_FALSE(f.failed());
  }
  return std::move(*report);
}

std::set<std::string> field_set(const std::vector<resolve::needed_entry>& needed, bool used_only, bool unused_only) {
  std::set<std::string> out;
  for (const auto& n : needed)
    if ((!used_only || n.used) && (!unused_only || (!n.path.empty() && !n.used))) out.insert(n.name);
  return out;
}

}  // namespace

TEST_CASE("Mach-O files in a prefix: the dyld emulator's verdicts against llvm-otool and ld64.lld", "[check][macho]") {
  if (!lt::have_tool("clang-14") || !lt::have_tool("ld64.lld-14") || !lt::have_tool("llvm-otool-14")) {
    WARN("clang-14, ld64.lld-14 or llvm-otool-14 missing");
    return;
  }
  const std::string dir = lt::scratch_dir("check_macho");
  std::filesystem::create_directories(dir + "/sdk/usr/lib");
  lt::write_file(dir + "/sdk/usr/lib/libSystem.tbd", check_libsystem_tbd);
  lt::write_file(dir + "/good.c", "int good_fn(void) { return 1; }\n");
  lt::write_file(dir + "/unused.c", "int unused_fn(void) { return 2; }\n");
  lt::write_file(dir + "/gone.c", "int gone_fn(void) { return 3; }\n");
  lt::write_file(dir + "/shrunk.c", "int kept_fn(void) { return 4; }\nint shrunk_fn(void) { return 5; }\n");
  lt::write_file(dir + "/shrunk2.c", "int kept_fn(void) { return 4; }\n");
  lt::write_file(dir + "/app.c", "int good_fn(void); int kept_fn(void); int shrunk_fn(void);\n"
                                 "int main(void) { return good_fn() + kept_fn() + shrunk_fn(); }\n");
  lt::write_file(dir + "/app_gone.c", "int good_fn(void); int gone_fn(void);\nint main(void) { return good_fn() + gone_fn(); }\n");
  const std::string L = "ld64.lld-14 -arch x86_64 -platform_version macos 11.0 11.0 -syslibroot sdk -lSystem ";
  const std::string script =
      "set -e; mkdir -p env/bin env/lib;"
      "for s in good unused gone shrunk shrunk2 app app_gone; do clang-14 -target x86_64-apple-macos11 -c $s.c; done;" +
      L + "-dylib -install_name @rpath/libgood.dylib good.o -o env/lib/libgood.dylib;" +
      L + "-dylib -install_name @rpath/libunused.dylib unused.o -o env/lib/libunused.dylib;" +
      L + "-dylib -install_name @rpath/libgone.dylib gone.o -o env/lib/libgone.dylib;" +
      L + "-dylib -install_name @rpath/libshrunk.dylib shrunk.o -o env/lib/libshrunk.dylib;" +
      L + "-dylib -install_name /Users/runner/work/lib/libabs.dylib good.o -o env/lib/libabs.dylib;" +
      L + "-execute -rpath @executable_path/../lib -rpath /opt/build/lib app.o env/lib/libgood.dylib "
          "env/lib/libunused.dylib env/lib/libshrunk.dylib -o env/bin/app;" +
      L + "-execute -dead_strip_dylibs -rpath @executable_path/../lib app.o env/lib/libgood.dylib "
          "env/lib/libunused.dylib env/lib/libshrunk.dylib -o app_dead;" +
      L + "-execute -rpath @executable_path/../lib app_gone.o env/lib/libgood.dylib env/lib/libgone.dylib "
          "-o env/bin/app_gone;"
      "rm env/lib/libgone.dylib;" +
      L + "-dylib -install_name @rpath/libshrunk.dylib shrunk2.o -o env/lib/libshrunk.dylib";
  REQUIRE(lt::run_in(dir, script + " > make.log 2>&1") == 0);
  const std::string env = dir + "/env";
  resolve::prefix_options options;
  // The walk: every Mach-O image (the libSystem stub lies outside the prefix).
  std::vector<std::string> walked;
  const resolve::prefix_report checked = check_all_of(env, "macho", walked, options);
  const resolve::prefix_report* report = &checked;
  CHECK(walked == std::vector<std::string>{"bin/app", "bin/app_gone", "lib/libabs.dylib", "lib/libgood.dylib",
                                           "lib/libshrunk.dylib", "lib/libunused.dylib"});
  // llvm-otool -L: the dylib commands (a dylib's first line is its own id).
  auto otool_deps = [&](const std::string& rel) {
    std::set<std::string> out;
    for (const auto& line : lt::lines(lt::capture("llvm-otool-14 -L " + lt::shell_quote(env + "/" + rel)).out)) {
      if (line.empty() || line[0] != '\t') continue;
      out.insert(line.substr(1, line.find(" (compatibility") - 1));
    }
    return out;
  };
  const auto* app = file_named(*report, "bin/app");
  REQUIRE(app != nullptr);
  CHECK(field_set(app->needed, false, false) == otool_deps("bin/app"));
  // Unused: the dylibs ld64.lld -dead_strip_dylibs leaves out.
  std::set<std::string> dead_stripped = otool_deps("bin/app");
  for (const auto& line : lt::lines(lt::capture("llvm-otool-14 -L " + lt::shell_quote(dir + "/app_dead")).out))
    if (!line.empty() && line[0] == '\t') dead_stripped.erase(line.substr(1, line.find(" (compatibility") - 1));
  CHECK(field_set(app->needed, false, true) == dead_stripped);
  CHECK(dead_stripped == std::set<std::string>{"@rpath/libunused.dylib"});
  // libSystem is the shared cache's: allowed, not in the prefix.
  for (const auto& n : app->needed) {
    INFO(n.name);
    if (n.name == "/usr/lib/libSystem.B.dylib") {
      CHECK(n.allowed);
      CHECK(n.rule == "system");
    } else {
      CHECK(n.in_prefix);
      CHECK(n.rule == "rpath");
    }
  }
  {
    // Without the defaults (data/allow/macos.txt and the shared-cache class)
    // libSystem is not allowed; a user's glob allows it again, with case.
    auto allowed_libsystem = [&](const std::vector<std::string>& globs) {
      resolve::prefix_options o = options;
      o.clear_allow();
      for (const auto& g : globs) o.add_allow(g);
      auto r = resolve::check_prefix(env, o);
      REQUIRE(r);
      for (const auto& n : file_named(*r, "bin/app")->needed)
        if (n.name == "/usr/lib/libSystem.B.dylib") return n.allowed;
      FAIL("no libSystem");
      return false;
    };
    CHECK_FALSE(allowed_libsystem({}));
    CHECK(allowed_libsystem({"libSystem*.dylib"}));
    CHECK(allowed_libsystem({"/usr/lib/*"}));
    CHECK_FALSE(allowed_libsystem({"libsystem*.dylib"}));  // macOS's names keep their case here
  }
  // Undefined: what ld64.lld refuses when the program is linked again against the shrunk dylib.
  auto relink = lt::capture("cd " + lt::shell_quote(dir) + " && " + L +
                            "-execute app.o env/lib/libgood.dylib env/lib/libshrunk.dylib -o relinked 2>&1");
  CHECK(relink.status != 0);
  std::set<std::string> ld_undefined;
  for (const auto& line : lt::lines(relink.out)) {
    const auto at = line.find("undefined symbol: ");
    if (at != std::string::npos) ld_undefined.insert(line.substr(at + 18));
  }
  CHECK(std::set<std::string>(app->undefined.begin(), app->undefined.end()) == ld_undefined);
  CHECK(ld_undefined == std::set<std::string>{"_shrunk_fn"});
  // LC_RPATH: llvm-otool -l's entries; only the absolute build path is outside.
  std::set<std::string> otool_rpaths, ours, outside;
  for (const auto& line : lt::lines(lt::capture("llvm-otool-14 -l " + lt::shell_quote(env + "/bin/app")).out)) {
    const auto at = line.find(" path ");
    if (at != std::string::npos) otool_rpaths.insert(line.substr(at + 6, line.find(" (offset") - at - 6));
  }
  for (const auto& r : app->rpaths) {
    ours.insert(r.entry);
    if (r.outside) outside.insert(r.entry);
  }
  CHECK(ours == otool_rpaths);
  CHECK(outside == std::set<std::string>{"/opt/build/lib"});
  // Missing: the deleted dylib, and nothing else.
  const auto* gone = file_named(*report, "bin/app_gone");
  REQUIRE(gone != nullptr);
  REQUIRE(gone->missing.size() == 1);
  CHECK(gone->missing[0].name == "@rpath/libgone.dylib");
  CHECK(otool_deps("bin/app_gone").count("@rpath/libgone.dylib") == 1);
  CHECK(gone->missing[0].direct);
  // Its imports from the missing dylib are undefined too, as ld64.lld says
  // without it (and as ldd -r lists an absent library's symbols on ELF).
  auto relink_gone = lt::capture("cd " + lt::shell_quote(dir) + " && " + L +
                                 "-execute app_gone.o env/lib/libgood.dylib -o relinked 2>&1");
  CHECK(relink_gone.status != 0);
  CHECK(relink_gone.out.find("undefined symbol: _gone_fn") != std::string::npos);
  CHECK(gone->undefined == std::vector<std::string>{"_gone_fn"});
  // The install name: llvm-otool -D; an absolute build path is not relocatable.
  const auto id_lines = lt::lines(lt::capture("llvm-otool-14 -D " + lt::shell_quote(env + "/lib/libabs.dylib")).out);
  REQUIRE(id_lines.size() == 2);
  const auto* abs = file_named(*report, "lib/libabs.dylib");
  REQUIRE(abs != nullptr);
  REQUIRE(abs->rpaths.size() == 1);
  CHECK(abs->rpaths[0].tag == "LC_ID_DYLIB");
  CHECK(abs->rpaths[0].entry == id_lines[1]);
  CHECK(abs->rpaths[0].outside);
  // One finding of each kind, each in its file.
  CHECK(app->findings == 3);  // unused libunused, undefined _shrunk_fn, rpath /opt/build/lib
  CHECK(gone->findings == 2);  // the missing dylib and its import
  CHECK(abs->findings == 1);
  CHECK(file_named(*report, "lib/libgood.dylib")->findings == 0);
  // Floors: llvm-otool -l's minos of the LC_BUILD_VERSION (11.0, as linked) against a 10.15 target.
  std::string minos;
  for (const auto& line : lt::lines(lt::capture("llvm-otool-14 -l " + lt::shell_quote(env + "/bin/app")).out))
    if (line.find("  minos ") != std::string::npos) minos = line.substr(line.find("minos ") + 6);
  CHECK(minos == "11.0");
  options.macos_target = resolve::parse_macos_version("10.15");
  auto floored = resolve::check_prefix(env, options);
  REQUIRE(floored);
  for (const auto& f : floored->files) {
    INFO(f.relative);
    REQUIRE(f.floors.size() == 1);
    CHECK(f.floors[0].family == "macOS");
    CHECK(f.floors[0].max == "10.15");
    CHECK(f.floors[0].highest == minos);
    CHECK(f.floors[0].above.at(0).name == "macOS " + minos + " (x86_64)");
    CHECK(f.floors[0].libraries.at(0) == "LC_BUILD_VERSION");
    CHECK(f.findings == file_named(*report, f.relative)->findings + 1);
  }
  options.macos_target = resolve::parse_macos_version("11.0");  // not above: no finding
  auto at_target = resolve::check_prefix(env, options);
  REQUIRE(at_target);
  for (const auto& f : at_target->files) CHECK(f.floors.empty());
  // The CLI says so in text.
  const std::string tool = lt::tool_path("linkscope-check");
  if (std::filesystem::exists(tool)) {
    CHECK(lt::capture(tool + " --no-dpkg --macos-target 10.15 " + lt::shell_quote(env)).out.find(
              "lib/libgood.dylib: floor: macOS 11.0 (x86_64) from LC_BUILD_VERSION is above 10.15\n") != std::string::npos);
    CHECK(lt::capture(tool + " --macos-target 10.x " + lt::shell_quote(env) + " 2>&1").status == 2);
    auto text = lt::capture(tool + " --no-dpkg --undefined " + lt::shell_quote(env));
    CHECK(text.status == 1);
    CHECK(text.out.find("bin/app_gone: missing: @rpath/libgone.dylib (not found)\n") != std::string::npos);
    CHECK(text.out.find("bin/app: unused: @rpath/libunused.dylib => " + env + "/lib/libunused.dylib\n") !=
          std::string::npos);
    CHECK(text.out.find("bin/app: undefined: 1 symbol (dyld: Symbol not found), first _shrunk_fn\n") != std::string::npos);
    CHECK(text.out.find("bin/app: rpath: LC_RPATH entry /opt/build/lib points outside the prefix") != std::string::npos);
  }
}

TEST_CASE("PE images in a prefix: the Windows loader's verdicts against objdump -p", "[check][pe]") {
  if (!lt::have_tool("x86_64-w64-mingw32-gcc") || !lt::have_tool("x86_64-w64-mingw32-objdump")) {
    WARN("mingw-w64 missing");
    return;
  }
  const std::string dir = lt::scratch_dir("check_pe");
  lt::write_file(dir + "/good.c", "__declspec(dllexport) int good_fn(void) { return 1; }\n");
  lt::write_file(dir + "/gone.c", "__declspec(dllexport) int gone_fn(void) { return 3; }\n");
  lt::write_file(dir + "/shrunk.c", "__declspec(dllexport) int kept_fn(void) { return 4; }\n"
                                    "__declspec(dllexport) int shrunk_fn(void) { return 5; }\n");
  lt::write_file(dir + "/shrunk2.c", "__declspec(dllexport) int kept_fn(void) { return 4; }\n");
  lt::write_file(dir + "/app.c", "__declspec(dllimport) int good_fn(void); __declspec(dllimport) int kept_fn(void);\n"
                                 "__declspec(dllimport) int shrunk_fn(void);\n"
                                 "int main(void) { return good_fn() + kept_fn() + shrunk_fn(); }\n");
  lt::write_file(dir + "/app_gone.c", "__declspec(dllimport) int good_fn(void); __declspec(dllimport) int gone_fn(void);\n"
                                      "int main(void) { return good_fn() + gone_fn(); }\n");
  const std::string cc = "x86_64-w64-mingw32-gcc ";
  const std::string script =
      "set -e; mkdir -p env/bin env/Library/bin;" + cc + "-shared -o env/Library/bin/good.dll good.c;" + cc +
      "-shared -o env/Library/bin/gone.dll gone.c;" + cc + "-shared -o env/Library/bin/shrunk.dll shrunk.c;" + cc +
      "-o env/bin/app.exe app.c env/Library/bin/good.dll env/Library/bin/shrunk.dll;" + cc +
      "-o env/bin/app_gone.exe app_gone.c env/Library/bin/good.dll env/Library/bin/gone.dll;"
      "rm env/Library/bin/gone.dll;" + cc + "-shared -o env/Library/bin/shrunk.dll shrunk2.c";
  REQUIRE(lt::run_in(dir, script + " > make.log 2>&1") == 0);
  const std::string env = dir + "/env";
  resolve::prefix_options options;
  std::vector<std::string> walked;
  const resolve::prefix_report checked = check_all_of(env, "pe", walked, options);
  const resolve::prefix_report* report = &checked;
  CHECK(walked == std::vector<std::string>{"Library/bin/good.dll", "Library/bin/shrunk.dll", "bin/app.exe",
                                           "bin/app_gone.exe"});
  const auto objdump = [&](const std::string& path) { return lt::capture("x86_64-w64-mingw32-objdump -p " + lt::shell_quote(path)).out; };
  auto dll_names = [&](const std::string& rel) {
    std::set<std::string> out;
    for (const auto& line : lt::lines(objdump(env + "/" + rel))) {
      const auto at = line.find("DLL Name: ");
      if (at != std::string::npos) out.insert(line.substr(at + 10));
    }
    return out;
  };
  const auto* app = file_named(*report, "bin/app.exe");
  REQUIRE(app != nullptr);
  CHECK(field_set(app->needed, false, false) == dll_names("bin/app.exe"));
  for (const auto& n : app->needed) {
    INFO(n.name);
    if (n.name == "good.dll" || n.name == "shrunk.dll") {
      CHECK(n.in_prefix);
      CHECK(n.rule == "path");  // Library/bin, on a conda environment's PATH
      CHECK_FALSE(n.allowed);
    } else {
      CHECK(n.allowed);  // KERNEL32.dll, msvcrt.dll ...: Windows' own
    }
  }
  {
    // Without the defaults, Windows' own DLLs are findings too; a user's glob
    // allows KERNEL32.dll whatever its case, as Windows compares names.
    resolve::prefix_options o = options;
    o.clear_allow();
    o.add_allow("kernel32.DLL");
    auto r = resolve::check_prefix(env, o);
    REQUIRE(r);
    bool saw_kernel32 = false;
    for (const auto& n : file_named(*r, "bin/app.exe")->needed) {
      INFO(n.name);
      const bool kernel32 = n.name == "KERNEL32.dll";
      saw_kernel32 = saw_kernel32 || kernel32;
      CHECK(n.allowed == kernel32);
    }
    CHECK(saw_kernel32);
  }
  // Undefined: the imports from shrunk.dll (objdump -p of app.exe) that its
  // export table (objdump -p of the rebuilt DLL) no longer lists.
  std::set<std::string> imported, exported, expected;
  {
    bool in_shrunk = false;
    for (const auto& line : lt::lines(objdump(env + "/bin/app.exe"))) {
      if (line.find("DLL Name: ") != std::string::npos) in_shrunk = line.find("DLL Name: shrunk.dll") != std::string::npos;
      else if (line.empty()) in_shrunk = false;
      else if (in_shrunk && line.size() > 2 && line[0] == '\t' && line.find("Hint") == std::string::npos) {
        std::istringstream words(line);
        std::string vma, hint, name;
        if (words >> vma >> hint >> name) imported.insert(name);
      }
    }
    bool in_table = false;
    for (const auto& line : lt::lines(objdump(env + "/Library/bin/shrunk.dll"))) {
      if (line.find("[Ordinal/Name Pointer] Table") != std::string::npos) in_table = true;
      else if (in_table && line.find("] ") != std::string::npos) exported.insert(line.substr(line.find("] ") + 2));
      else if (in_table && line.empty()) in_table = false;
    }
  }
  for (const auto& name : imported)
    if (exported.count(name) == 0) expected.insert("shrunk.dll!" + name);
  CHECK(expected == std::set<std::string>{"shrunk.dll!shrunk_fn"});
  CHECK(std::set<std::string>(app->undefined.begin(), app->undefined.end()) == expected);
  // Missing: the deleted DLL.
  const auto* gone = file_named(*report, "bin/app_gone.exe");
  REQUIRE(gone != nullptr);
  REQUIRE(gone->missing.size() == 1);
  CHECK(gone->missing[0].name == "gone.dll");
  CHECK(dll_names("bin/app_gone.exe").count("gone.dll") == 1);
  CHECK(app->findings == 1);   // the missing export
  CHECK(gone->findings == 1);  // the missing DLL
  CHECK(file_named(*report, "Library/bin/good.dll")->findings == 0);
  // Floors: objdump -p's OS and subsystem versions; the higher one against a target just below it.
  std::map<std::string, std::string> header;
  for (const auto& line : lt::lines(objdump(env + "/bin/app.exe"))) {
    std::istringstream words(line);
    std::string key, value;
    if (words >> key >> value) header[key] = value;
  }
  const std::pair<int, int> os{std::stoi(header.at("MajorOSystemVersion")), std::stoi(header.at("MinorOSystemVersion"))};
  const std::pair<int, int> sub{std::stoi(header.at("MajorSubsystemVersion")), std::stoi(header.at("MinorSubsystemVersion"))};
  const auto floor = std::max(os, sub);
  const std::string floor_text = std::to_string(floor.first) + "." + std::to_string(floor.second);
  options.windows_target = std::pair<std::uint16_t, std::uint16_t>(floor.first, 0);
  if (floor.second == 0) options.windows_target->first = static_cast<std::uint16_t>(floor.first - 1);
  auto floored = resolve::check_prefix(env, options);
  REQUIRE(floored);
  const auto* app_floor = file_named(*floored, "bin/app.exe");
  REQUIRE(app_floor != nullptr);
  REQUIRE(app_floor->floors.size() == 1);
  CHECK(app_floor->floors[0].family == "Windows");
  CHECK(app_floor->floors[0].highest == floor_text);
  CHECK(app_floor->findings == app->findings + 1);
  options.windows_target = std::pair<std::uint16_t, std::uint16_t>(floor.first, floor.second);
  auto at_target = resolve::check_prefix(env, options);
  REQUIRE(at_target);
  for (const auto& f : at_target->files) CHECK(f.floors.empty());
}

namespace {

// Every finding of a report, by kind. `other` gathers the kinds the
// generated prefixes below must not give (a file-level unused dylib, a
// system library outside the prefix, underlinking, an unowned library).
struct finding_kinds {
  std::size_t missing = 0, undefined = 0, overlinked = 0, unused = 0, statically_linked = 0, duplicate = 0, floor = 0,
              rpath = 0, other = 0;
  bool operator==(const finding_kinds&) const = default;
};

std::ostream& operator<<(std::ostream& os, const finding_kinds& k) {
  return os << "{missing " << k.missing << ", undefined " << k.undefined << ", overlinked " << k.overlinked << ", unused "
            << k.unused << ", statically linked " << k.statically_linked << ", duplicate " << k.duplicate << ", floor "
            << k.floor << ", rpath " << k.rpath << ", other " << k.other << "}";
}

finding_kinds kinds_of(const resolve::prefix_report& r) {
  finding_kinds k;
  for (const auto& f : r.files) {
    k.missing += f.missing.size();
    k.undefined += f.undefined.size();
    for (const auto& o : f.overlinked) k.overlinked += o.allowed ? 0 : 1;
    k.floor += f.floors.size();
    for (const auto& p : f.rpaths) k.rpath += p.outside ? 1 : 0;
    for (const auto& n : f.needed) {
      if (n.path.empty()) continue;
      k.other += (!n.used && !n.allowed) ? 1 : 0;
      k.other += (!n.in_prefix && !n.allowed) ? 1 : 0;
    }
  }
  k.unused = r.unused_declared.size();
  k.statically_linked = r.statically_linked.size();
  for (const auto& d : r.duplicates) k.duplicate += d.winner.empty() ? 0 : 1;
  k.other += r.undeclared.size() + r.unowned.size();
  return k;
}

// Writes each {name, text} under dir: the sources of a generated prefix.
void write_sources(const std::string& dir, std::initializer_list<std::pair<const char*, std::string>> files) {
  for (const auto& [name, text] : files) lt::write_file(dir + "/" + name, text);
}

// One conda-meta record per {package, file} under env/conda-meta.
void write_conda_meta(const std::string& env, std::initializer_list<std::pair<const char*, const char*>> packages) {
  for (const auto& [name, file] : packages)
    lt::write_file(env + "/conda-meta/" + name + "-1.0-0.json",
                   std::string("{\"name\": \"") + name + "\", \"files\": [\"" + file + "\"]}");
}

// The defined global names (nm letters T, D, B, S in upper case) of `nm`'s output.
std::set<std::string> nm_defined_globals(const std::string& nm_output) {
  std::set<std::string> out;
  for (const auto& line : lt::lines(nm_output)) {
    std::istringstream words(line);
    std::string value, letter, name;
    if ((words >> value >> letter >> name) && letter.size() == 1 && std::string("TDBS").find(letter[0]) != std::string::npos)
      out.insert(name);
  }
  return out;
}

std::set<std::string> intersection(const std::set<std::string>& a, const std::set<std::string>& b) {
  std::set<std::string> out;
  std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), std::inserter(out, out.begin()));
  return out;
}

// The one statically linked package of a generated prefix: package stat,
// whose archive `archive` is copied into `file` (the real nm's `copied`).
void check_static_copy(const resolve::prefix_report& report, const std::string& file, const std::string& archive,
                       const std::set<std::string>& copied) {
  REQUIRE(report.statically_linked.size() == 1);
  const auto& stat = report.statically_linked[0];
  CHECK(stat.package == "stat");
  REQUIRE(stat.evidence.size() == 1);
  CHECK(stat.evidence[0].file == file);
  CHECK(stat.evidence[0].copy_of == archive);
  CHECK(std::set<std::string>(stat.evidence[0].symbols.begin(), stat.evidence[0].symbols.end()) == copied);
}

// The one duplicate of a generated prefix: `both` (what the real tool says
// fmt's and vendor's libraries both export), loaded together by `consumer`;
// the first loaded is the first of the two in its load order.
struct expected_duplicate {
  std::set<std::string> both;
  std::string fmt_file, vendor_file, consumer;
  std::vector<std::string> load_order;
  std::string fmt_entry, vendor_entry;
};

void check_duplicate(const resolve::prefix_report& report, const expected_duplicate& want) {
  REQUIRE(report.duplicates.size() == 1);
  const auto& dup = report.duplicates[0];
  CHECK(dup.package_a == "fmt");
  CHECK(dup.file_a == want.fmt_file);
  CHECK(dup.package_b == "vendor");
  CHECK(dup.file_b == want.vendor_file);
  CHECK(std::set<std::string>(dup.symbols.begin(), dup.symbols.end()) == want.both);
  const auto fmt_at = std::find(want.load_order.begin(), want.load_order.end(), want.fmt_entry);
  const auto vendor_at = std::find(want.load_order.begin(), want.load_order.end(), want.vendor_entry);
  REQUIRE(fmt_at != want.load_order.end());
  REQUIRE(vendor_at != want.load_order.end());
  CHECK(dup.winner == (fmt_at < vendor_at ? want.fmt_file : want.vendor_file));
  CHECK(dup.consumer == want.consumer);
}

}  // namespace

TEST_CASE("a generated macOS prefix gives one finding of each kind, as llvm-otool, llvm-objdump, llvm-nm and ld64.lld say",
          "[check][macho][packages]") {
  if (!lt::have_tool("clang-14") || !lt::have_tool("ld64.lld-14") || !lt::have_tool("llvm-otool-14") ||
      !lt::have_tool("llvm-nm-14") || !lt::have_tool("llvm-ar-14")) {
    WARN("clang-14, ld64.lld-14, llvm-otool-14, llvm-nm-14 or llvm-ar-14 missing");
    return;
  }
  const std::string dir = lt::scratch_dir("check_macho_kinds");
  std::filesystem::create_directories(dir + "/sdk/usr/lib");
  lt::write_file(dir + "/sdk/usr/lib/libSystem.tbd", check_libsystem_tbd);
  write_sources(
      dir,
      {{"base.c", "int base_fn(void) { return 1; }\n"},
       {"mid.c", "int base_fn(void);\nint mid_fn(void) { return base_fn(); }\nint shrunk_fn(void) { return 2; }\n"},
       {"mid2.c", "int base_fn(void);\nint mid_fn(void) { return base_fn(); }\n"},
       {"gone.c", "int gone_fn(void) { return 4; }\n"},
       {"stat.c", "int stat_fn(void) { return 5; }\nint stat_table[3] = {1, 2, 3};\n"},
       {"unused.c", "int unused_fn(void) { return 6; }\n"},
       {"fmt.c", "int fmt_format(int x) { return x + 1; }\n"},
       {"vendor.c", "int fmt_format(int x) { return x + 1; }\nint vendor_fn(void) { return 7; }\n"},
       {"app.c",
        "int base_fn(void); int mid_fn(void); int shrunk_fn(void); int stat_fn(void);\n"
        "int fmt_format(int); int vendor_fn(void);\n"
        "int main(void) { return base_fn() + mid_fn() + shrunk_fn() + stat_fn() + fmt_format(1) + vendor_fn(); }\n"}});
  const std::string L = "ld64.lld-14 -arch x86_64 -platform_version macos 11.0 11.0 -syslibroot sdk -lSystem ";
  // bin/app (package app) links libmid, libfmt, libvendor and libgone, and
  // libstat.a statically; base_fn comes from libbase, which only libmid
  // links: -undefined dynamic_lookup makes it a flat-namespace import.
  // libgone is then deleted and libmid rebuilt without shrunk_fn.
  const std::string script =
      "set -e; mkdir -p env/lib env/bin env/conda-meta;"
      "for s in base mid mid2 gone stat unused fmt vendor app; do clang-14 -target x86_64-apple-macos11 -c $s.c; done;"
      "llvm-ar-14 rcs --format=darwin env/lib/libstat.a stat.o;" +
      L + "-dylib -install_name @rpath/libbase.dylib base.o -o env/lib/libbase.dylib;" +
      L + "-dylib -install_name @rpath/libmid.dylib -rpath @loader_path mid.o env/lib/libbase.dylib -o env/lib/libmid.dylib;" +
      L + "-dylib -install_name @rpath/libgone.dylib gone.o -o env/lib/libgone.dylib;" +
      L + "-dylib -install_name @rpath/libunused.dylib unused.o -o env/lib/libunused.dylib;" +
      L + "-dylib -install_name @rpath/libfmt.dylib fmt.o -o env/lib/libfmt.dylib;" +
      L + "-dylib -install_name @rpath/libvendor.dylib vendor.o -o env/lib/libvendor.dylib;" +
      L + "-execute -undefined dynamic_lookup -rpath @executable_path/../lib -rpath /opt/build/lib app.o "
          "env/lib/libmid.dylib env/lib/libfmt.dylib env/lib/libvendor.dylib env/lib/libgone.dylib env/lib/libstat.a "
          "-o env/bin/app;"
      "rm env/lib/libgone.dylib;" +
      L + "-dylib -install_name @rpath/libmid.dylib -rpath @loader_path mid2.o env/lib/libbase.dylib -o env/lib/libmid.dylib";
  REQUIRE(lt::run_in(dir, script + " > make.log 2>&1") == 0);
  const std::string env = dir + "/env";
  write_conda_meta(env, {{"app", "bin/app"},
                         {"base", "lib/libbase.dylib"},
                         {"mid", "lib/libmid.dylib"},
                         {"stat", "lib/libstat.a"},
                         {"unused", "lib/libunused.dylib"},
                         {"fmt", "lib/libfmt.dylib"},
                         {"vendor", "lib/libvendor.dylib"}});

  resolve::prefix_options options;
  options.use_dpkg = false;
  options.package = "app";
  options.check_declared = true;
  options.declared = {"mid", "stat", "unused", "fmt", "vendor"};  // not base: app only binds it by a flat lookup
  options.undefined_is_finding = true;
  options.macos_target = resolve::parse_macos_version("10.15");
  auto report = resolve::check_prefix(env, options);
  REQUIRE(report);
  REQUIRE(report->files.size() == 1);
  const resolve::file_report& app = report->files[0];
  CHECK(app.relative == "bin/app");
  CHECK(app.format == "macho");

  auto otool_deps = [&](const std::string& rel) {
    std::vector<std::string> out;
    for (const auto& line : lt::lines(lt::capture("llvm-otool-14 -L " + lt::shell_quote(env + "/" + rel)).out))
      if (!line.empty() && line[0] == '\t') out.push_back(line.substr(1, line.find(" (compatibility") - 1));
    return out;
  };
  const std::vector<std::string> app_deps = otool_deps("bin/app");
  auto links = [&](const std::vector<std::string>& deps, const std::string& name) {
    return std::find(deps.begin(), deps.end(), name) != deps.end();
  };
  // Missing: a dylib command of the file whose dylib is gone.
  CHECK(links(app_deps, "@rpath/libgone.dylib"));
  REQUIRE(app.missing.size() == 1);
  CHECK(app.missing[0].name == "@rpath/libgone.dylib");
  // Undefined: what ld64.lld refuses when app is linked again (two-level, libbase given).
  auto relink = lt::capture("cd " + lt::shell_quote(dir) + " && " + L +
                            "-execute app.o env/lib/libmid.dylib env/lib/libbase.dylib env/lib/libfmt.dylib "
                            "env/lib/libvendor.dylib env/lib/libstat.a -o relinked 2>&1");
  CHECK(relink.status != 0);
  std::set<std::string> ld_undefined;
  for (const auto& line : lt::lines(relink.out)) {
    const auto at = line.find("undefined symbol: ");
    if (at != std::string::npos) ld_undefined.insert(line.substr(at + 18));
  }
  CHECK(ld_undefined == std::set<std::string>{"_shrunk_fn"});
  CHECK(std::set<std::string>(app.undefined.begin(), app.undefined.end()) == ld_undefined);
  // Overlinked: llvm-objdump's flat-namespace imports, which libbase defines
  // (llvm-nm) and which app gets only because libmid links libbase (llvm-otool -L).
  std::set<std::string> flat;
  for (const auto& line :
       lt::lines(lt::capture("llvm-objdump-14 --macho --bind --lazy-bind " + lt::shell_quote(env + "/bin/app")).out)) {
    const auto at = line.find(" flat-namespace ");
    if (at == std::string::npos) continue;
    std::istringstream rest(line.substr(at + 16));
    std::string name;
    if (rest >> name) flat.insert(name);
  }
  CHECK(flat == std::set<std::string>{"_base_fn"});
  const auto base_defines = nm_defined_globals(lt::capture("llvm-nm-14 " + lt::shell_quote(env + "/lib/libbase.dylib")).out);
  CHECK(intersection(flat, base_defines) == flat);
  CHECK(links(otool_deps("lib/libmid.dylib"), "@rpath/libbase.dylib"));
  CHECK_FALSE(links(app_deps, "@rpath/libbase.dylib"));
  REQUIRE(app.overlinked.size() == 1);
  const auto& over = app.overlinked[0];
  CHECK(std::filesystem::equivalent(over.path, env + "/lib/libbase.dylib"));
  CHECK(over.soname == "@rpath/libbase.dylib");
  CHECK(std::filesystem::equivalent(over.via, env + "/lib/libmid.dylib"));
  CHECK_FALSE(over.allowed);
  CHECK(std::set<std::string>(over.symbols.begin(), over.symbols.end()) == flat);
  // Unused: the declared package whose dylib app does not link.
  CHECK_FALSE(links(app_deps, "@rpath/libunused.dylib"));
  CHECK(report->unused_declared == std::vector<std::string>{"unused"});
  // Statically linked: libstat.a's definitions (llvm-nm) that app holds.
  const auto app_defines = nm_defined_globals(lt::capture("llvm-nm-14 " + lt::shell_quote(env + "/bin/app")).out);
  const auto stat_defines = nm_defined_globals(lt::capture("llvm-nm-14 " + lt::shell_quote(env + "/lib/libstat.a")).out);
  const auto copied = intersection(app_defines, stat_defines);
  CHECK(copied == std::set<std::string>{"_stat_fn", "_stat_table"});
  check_static_copy(*report, "bin/app", "lib/libstat.a", copied);
  // Duplicate: what both dylibs export (llvm-nm -gU), loaded together by app;
  // the first loaded is the first of the two in app's dylib commands.
  auto exported = [&](const std::string& rel) {
    return nm_defined_globals(lt::capture("llvm-nm-14 -gU " + lt::shell_quote(env + "/" + rel)).out);
  };
  const auto both = intersection(exported("lib/libfmt.dylib"), exported("lib/libvendor.dylib"));
  CHECK(both == std::set<std::string>{"_fmt_format"});
  check_duplicate(*report, {both, "lib/libfmt.dylib", "lib/libvendor.dylib", "bin/app", app_deps, "@rpath/libfmt.dylib",
                            "@rpath/libvendor.dylib"});
  // Floor: llvm-otool -l's minos against 10.15.
  REQUIRE(app.floors.size() == 1);
  CHECK(app.floors[0].highest == "11.0");
  // Not relocatable: the absolute LC_RPATH.
  std::set<std::string> outside;
  for (const auto& r : app.rpaths)
    if (r.outside) outside.insert(r.entry);
  CHECK(outside == std::set<std::string>{"/opt/build/lib"});
  // One of each, and nothing else.
  CHECK(kinds_of(*report) == finding_kinds{.missing = 1, .undefined = 1, .overlinked = 1, .unused = 1,
                                           .statically_linked = 1, .duplicate = 1, .floor = 1, .rpath = 1, .other = 0});
  CHECK(report->findings == 8);

  // A flat-namespace import that the linked dylib re-exports is that dylib's
  // interface, not overlinking. (lld 14 cannot follow an @rpath re-export, and
  // -flat_namespace needs libSystem under its install name.)
  lt::write_file(dir + "/inner.c", "int inner_fn(void) { return 9; }\n");
  lt::write_file(dir + "/app2.c", "int inner_fn(void); int main(void) { return inner_fn(); }\n");
  lt::write_file(dir + "/sdk/usr/lib/libSystem.B.tbd", check_libsystem_tbd);
  const std::string reexport =
      "set -e; clang-14 -target x86_64-apple-macos11 -c inner.c app2.c;" + L +
      "-dylib -install_name @loader_path/libinner.dylib inner.o -o env/lib/libinner.dylib;" + L +
      "-dylib -install_name @rpath/libumbrella.dylib -reexport_library env/lib/libinner.dylib -o env/lib/libumbrella.dylib;" +
      L + "-execute -flat_namespace -rpath @executable_path/../lib app2.o env/lib/libumbrella.dylib -o env/bin/app2";
  REQUIRE(lt::run_in(dir, reexport + " >> make.log 2>&1") == 0);
  CHECK(otool_deps("bin/app2") == std::vector<std::string>{"/usr/lib/libSystem.B.dylib", "@rpath/libumbrella.dylib"});
  CHECK(links(otool_deps("lib/libumbrella.dylib"), "@loader_path/libinner.dylib"));
  const std::string app2_binds =
      lt::capture("llvm-objdump-14 --macho --bind --lazy-bind " + lt::shell_quote(env + "/bin/app2")).out;
  CHECK(app2_binds.find("flat-namespace   _inner_fn") != std::string::npos);
  resolve::prefix_options plain;
  plain.use_dpkg = false;
  plain.use_conda = false;
  plain.files = {env + "/bin/app2"};
  auto flat_reexport = resolve::check_prefix(env, plain);
  REQUIRE(flat_reexport);
  REQUIRE(flat_reexport->files.size() == 1);
  CHECK(flat_reexport->files[0].overlinked.empty());
  CHECK(flat_reexport->files[0].undefined.empty());
  CHECK(flat_reexport->files[0].missing.empty());
  CHECK(flat_reexport->files[0].findings == 0);

  // The CLI says so in text.
  const std::string tool = lt::tool_path("linkscope-check");
  if (std::filesystem::exists(tool)) {
    auto text = lt::capture(tool + " --no-dpkg --undefined --package app --declared mid,stat,unused,fmt,vendor --macos-target 10.15 " +
                            lt::shell_quote(env));
    CHECK(text.status == 1);
    CHECK(text.out.find("bin/app: overlinked: 1 symbol from ") != std::string::npos);
    CHECK(text.out.find("statically linked: package stat is declared and never linked against, but bin/app holds 2 "
                        "definitions of lib/libstat.a") != std::string::npos);
    CHECK(text.out.find("duplicate: 1 symbol defined by both lib/libfmt.dylib (fmt) and lib/libvendor.dylib (vendor)") !=
          std::string::npos);
  }
}

TEST_CASE("a generated Windows prefix gives one finding of each kind a PE image can have, as objdump -p and nm say",
          "[check][pe][packages]") {
  if (!lt::have_tool("x86_64-w64-mingw32-gcc") || !lt::have_tool("x86_64-w64-mingw32-objdump") ||
      !lt::have_tool("x86_64-w64-mingw32-nm")) {
    WARN("mingw-w64 missing");
    return;
  }
  const std::string dir = lt::scratch_dir("check_pe_kinds");
  const std::string x = "__declspec(dllexport) ";
  write_sources(
      dir, {{"mid.c", x + "int mid_fn(void) { return 1; }\n" + x + "int shrunk_fn(void) { return 2; }\n"},
            {"mid2.c", x + "int mid_fn(void) { return 1; }\n"},
            {"gone.c", x + "int gone_fn(void) { return 4; }\n"},
            {"stat.c", "int stat_fn(void) { return 5; }\nint stat_table[3] = {1, 2, 3};\n"},
            {"unused.c", x + "int unused_fn(void) { return 6; }\n"},
            {"fmt.c", x + "int fmt_format(int x) { return x + 1; }\n" + x + "int fmt_only_fn(void) { return 8; }\n"},
            {"vendor.c", x + "int fmt_format(int x) { return x + 1; }\n" + x + "int vendor_fn(void) { return 7; }\n"}});
  const std::string m = "__declspec(dllimport) ";
  lt::write_file(dir + "/app.c",
                 m + "int mid_fn(void); " + m + "int shrunk_fn(void); " + m + "int gone_fn(void);\n" + m +
                     "int fmt_format(int); " + m + "int vendor_fn(void); " + m +
                     "int fmt_only_fn(void);\nint stat_fn(void);\n"
                     "int main(void) { return mid_fn() + shrunk_fn() + gone_fn() + stat_fn() + fmt_format(1) + "
                     "vendor_fn() + fmt_only_fn(); }\n");
  const std::string cc = "x86_64-w64-mingw32-gcc ";
  const std::string script =
      "set -e; mkdir -p env/Library/bin env/Library/lib env/conda-meta;" + cc +
      "-c stat.c -o stat.o; x86_64-w64-mingw32-ar rcs env/Library/lib/libstat.a stat.o;"
      "for s in mid gone unused fmt vendor; do " + cc + "-shared -o env/Library/bin/$s.dll $s.c; done;" + cc +
      "-o env/Library/bin/app.exe app.c env/Library/bin/mid.dll env/Library/bin/fmt.dll env/Library/bin/vendor.dll "
      "env/Library/bin/gone.dll env/Library/lib/libstat.a;"
      "rm env/Library/bin/gone.dll;" + cc + "-shared -o env/Library/bin/mid.dll mid2.c";
  REQUIRE(lt::run_in(dir, script + " > make.log 2>&1") == 0);
  const std::string env = dir + "/env";
  write_conda_meta(env, {{"app", "Library/bin/app.exe"},
                         {"mid", "Library/bin/mid.dll"},
                         {"stat", "Library/lib/libstat.a"},
                         {"unused", "Library/bin/unused.dll"},
                         {"fmt", "Library/bin/fmt.dll"},
                         {"vendor", "Library/bin/vendor.dll"}});

  const auto objdump = [&](const std::string& rel) {
    return lt::capture("x86_64-w64-mingw32-objdump -p " + lt::shell_quote(env + "/" + rel)).out;
  };
  // objdump -p: the DLL names of the import directory, in order, and each one's imported names.
  std::vector<std::string> dlls;
  std::map<std::string, std::set<std::string>> imported;
  {
    std::string current;
    for (const auto& line : lt::lines(objdump("Library/bin/app.exe"))) {
      const auto at = line.find("DLL Name: ");
      if (at != std::string::npos) {
        current = line.substr(at + 10);
        dlls.push_back(current);
      } else if (line.empty()) {
        current.clear();
      } else if (!current.empty() && line[0] == '\t' && line.find("Hint") == std::string::npos) {
        std::istringstream words(line);
        std::string vma, hint, name;
        if (words >> vma >> hint >> name) imported[current].insert(name);
      }
    }
  }
  auto exports = [&](const std::string& rel) {
    std::set<std::string> out;
    bool in_table = false;
    for (const auto& line : lt::lines(objdump(rel))) {
      if (line.find("[Ordinal/Name Pointer] Table") != std::string::npos) in_table = true;
      else if (in_table && line.find("] ") != std::string::npos) out.insert(line.substr(line.find("] ") + 2));
      else if (in_table && line.empty()) in_table = false;
    }
    return out;
  };

  resolve::prefix_options options;
  options.use_dpkg = false;
  options.package = "app";
  options.check_declared = true;
  options.declared = {"mid", "stat", "unused", "fmt", "vendor"};
  options.undefined_is_finding = true;
  auto floor_of = [&] {
    std::map<std::string, std::string> header;
    for (const auto& line : lt::lines(objdump("Library/bin/app.exe"))) {
      std::istringstream words(line);
      std::string key, value;
      if (words >> key >> value) header[key] = value;
    }
    return std::max(std::pair<int, int>{std::stoi(header.at("MajorOSystemVersion")), std::stoi(header.at("MinorOSystemVersion"))},
                    std::pair<int, int>{std::stoi(header.at("MajorSubsystemVersion")), std::stoi(header.at("MinorSubsystemVersion"))});
  }();
  REQUIRE(floor_of.first > 3);
  options.windows_target = std::pair<std::uint16_t, std::uint16_t>(static_cast<std::uint16_t>(floor_of.first - 1), 0);
  auto report = resolve::check_prefix(env, options);
  REQUIRE(report);
  REQUIRE(report->files.size() == 1);
  const resolve::file_report& app = report->files[0];
  CHECK(app.relative == "Library/bin/app.exe");
  CHECK(app.format == "pe");
  // Missing: the deleted DLL.
  CHECK(std::count(dlls.begin(), dlls.end(), "gone.dll") == 1);
  REQUIRE(app.missing.size() == 1);
  CHECK(app.missing[0].name == "gone.dll");
  // Undefined: the imports from mid.dll its export table no longer lists.
  std::set<std::string> expected;
  const auto mid_exports = exports("Library/bin/mid.dll");
  for (const auto& name : imported["mid.dll"])
    if (mid_exports.count(name) == 0) expected.insert("mid.dll!" + name);
  CHECK(expected == std::set<std::string>{"mid.dll!shrunk_fn"});
  CHECK(std::set<std::string>(app.undefined.begin(), app.undefined.end()) == expected);
  // Overlinked: every import names its DLL, so there is none.
  CHECK(app.overlinked.empty());
  // Unused: the declared package whose DLL app does not import.
  CHECK(std::count(dlls.begin(), dlls.end(), "unused.dll") == 0);
  CHECK(report->unused_declared == std::vector<std::string>{"unused"});
  // Statically linked: libstat.a's definitions (nm) in app.exe's COFF symbol table (nm).
  const auto nm = [&](const std::string& rel) {
    return nm_defined_globals(lt::capture("x86_64-w64-mingw32-nm " + lt::shell_quote(env + "/" + rel)).out);
  };
  const auto copied = intersection(nm("Library/bin/app.exe"), nm("Library/lib/libstat.a"));
  CHECK(copied == std::set<std::string>{"stat_fn", "stat_table"});
  check_static_copy(*report, "Library/bin/app.exe", "Library/lib/libstat.a", copied);
  // Duplicate: what both DLLs export (objdump -p), both imported by app.exe;
  // the first loaded is the first of the two in its import directory.
  const auto both = intersection(exports("Library/bin/fmt.dll"), exports("Library/bin/vendor.dll"));
  CHECK(both == std::set<std::string>{"fmt_format"});
  check_duplicate(*report, {both, "Library/bin/fmt.dll", "Library/bin/vendor.dll", "Library/bin/app.exe", dlls, "fmt.dll",
                            "vendor.dll"});
  // Floor: the optional header's versions against a target below them.
  REQUIRE(app.floors.size() == 1);
  CHECK(app.floors[0].family == "Windows");
  // A PE image holds no search path: nothing to relocate.
  CHECK(app.rpaths.empty());
  // Overlinking and search paths do not apply to PE (see check.hpp).
  CHECK(kinds_of(*report) == finding_kinds{.missing = 1, .undefined = 1, .overlinked = 0, .unused = 1,
                                           .statically_linked = 1, .duplicate = 1, .floor = 1, .rpath = 0, .other = 0});
  CHECK(report->findings == 6);
}

TEST_CASE("--package-dir: unpacked packages own their files", "[check][packages]") {
  if (!lt::have_tool("gcc")) return;
  // pk/app/bin/prog NEEDED libdep.so (pk/dep/lib) and libother.so (pk/other/lib); no conda-meta.
  const std::string dir = lt::scratch_dir("check_package_dir");
  lt::write_file(dir + "/dep.c", "int dep_fn(void) { return 1; }\n");
  lt::write_file(dir + "/other.c", "int other_fn(void) { return 2; }\n");
  lt::write_file(dir + "/prog.c", "int dep_fn(void); int other_fn(void);\nint main(void) { return dep_fn() + other_fn(); }\n");
  REQUIRE(lt::run_in(dir, "mkdir -p pk/app/bin pk/dep/lib pk/other/lib && "
                          "gcc -shared -fPIC -o pk/dep/lib/libdep.so dep.c && "
                          "gcc -shared -fPIC -o pk/other/lib/libother.so other.c && "
                          "gcc -o pk/app/bin/prog prog.c -Lpk/dep/lib -Lpk/other/lib -ldep -lother "
                          "-Wl,-rpath,'$ORIGIN/../../dep/lib:$ORIGIN/../../other/lib'") == 0);
  resolve::prefix_options options;
  options.use_dpkg = false;
  options.check_declared = true;
  options.declared = {"dep", "gone"};
  options.package_dirs = {{"app", dir + "/pk/app"}, {"dep", dir + "/pk/dep"}, {"other", dir + "/pk/other/"}};
  options.files = {dir + "/pk/app/bin/prog"};  // the app package's own files, as conda-build checks one package
  auto report = resolve::check_prefix(dir + "/pk", options);
  REQUIRE(report);
  const auto* prog = file_named(*report, "app/bin/prog");
  REQUIRE(prog != nullptr);
  std::map<std::string, std::string> owners;
  for (const auto& n : prog->needed)
    if (n.in_prefix) owners[n.name] = n.owner.package + " " + n.owner.source + " " + n.owner.listed_path;
  CHECK(owners == std::map<std::string, std::string>{{"libdep.so", "dep package-dir lib/libdep.so"},
                                                     {"libother.so", "other package-dir lib/libother.so"}});
  CHECK(report->undeclared == std::vector<std::string>{"other"});  // used, not declared
  CHECK(report->unused_declared == std::vector<std::string>{"gone"});
  std::set<std::string> used;
  for (const auto& p : report->packages) {
    used.insert(p.name + " " + p.source);
    CHECK_FALSE(p.self);  // app owns the checked file, and no needed DSO
  }
  CHECK(used == std::set<std::string>{"dep package-dir", "other package-dir"});
  CHECK(report->unowned.empty());
  // The CLI: NAME=DIR, and a usage error without the '='.
  const std::string tool = lt::tool_path("linkscope-check");
  if (std::filesystem::exists(tool)) {
    const std::string pk = lt::shell_quote(dir + "/pk");
    auto text = lt::capture(tool + " --no-dpkg --declared dep --package-dir app=" + pk + "/app --package-dir dep=" + pk +
                            "/dep --package-dir other=" + pk + "/other -v " + pk + " " + pk + "/app/bin/prog");
    CHECK(text.out.find("app/bin/prog: Needed DSO dep/lib/libdep.so found in dep\n") != std::string::npos);
    CHECK(text.out.find("underlinking: package other is used but not declared\n") != std::string::npos);
    for (const char* bad : {"--package-dir app", "--package-dir =x", "--package-dir app="}) {
      auto r = lt::capture(tool + " " + bad + " " + pk + " 2>&1");
      INFO(bad);
      CHECK(r.status == 2);
      CHECK(r.out.rfind("linkscope-check: --package-dir takes NAME=DIR\n", 0) == 0);
    }
  }
}

TEST_CASE("the check's JSON document is the same for every number of writing threads, and Python reads it",
          "[check][json]") {
  // More files than one batch (1024), with strings that need escapes, so that
  // the threaded writer's splicing and batch boundaries are both crossed.
  resolve::prefix_report r;
  r.prefix = "/p";
  for (int i = 0; i < 2500; ++i) {
    resolve::file_report f;
    f.path = "/p/lib/lib" + std::to_string(i) + ".so";
    f.relative = "lib/lib" + std::to_string(i) + ".so";
    resolve::needed_entry n;
    n.name = "libdep\"" + std::to_string(i % 7) + "\\.so";
    n.path = i % 3 == 0 ? std::string() : "/p/lib/" + n.name;
    n.used = i % 2 == 0;
    f.needed.push_back(n);
    if (i % 5 == 0) f.undefined.push_back("sym\t" + std::to_string(i));
    f.findings = static_cast<std::size_t>(i % 4);
    r.files.push_back(std::move(f));
  }
  auto document = [&](unsigned jobs) {
    std::string out;
    {
      json_writer w(out);
      report::write_json(w, r, {0, jobs});
    }
    return out;
  };
  const std::string one = document(1);
  CHECK(document(2) == one);
  CHECK(document(3) == one);
  CHECK(document(64) == one);
  REQUIRE(lt::have_tool("/usr/bin/python3"));  // the oracle reads the document
  const std::string dir = lt::scratch_dir("check_json_threads");
  lt::write_file(dir + "/doc.json", one);
  auto py = lt::capture("/usr/bin/python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); "
                        "print(len(d[\"files\"]), d[\"files\"][2499][\"relative\"], d[\"files\"][7][\"needed\"][0][\"name\"], "
                        "d[\"files\"][5][\"undefined\"][0] == \"sym\\t5\")' " +
                        lt::shell_quote(dir + "/doc.json"));
  REQUIRE(py.status == 0);
  CHECK(py.out == "2500 lib/lib2499.so libdep\"0\\.so True\n");
}

// The walk's helpers are internal (resolve/check_walk.hpp's detail): built
// in header-only mode only.
#if LINKSCOPE_DEFINITIONS
TEST_CASE("the walk's one-read classification agrees with sniff_elf_file on real and edge-case files", "[check][walk]") {
  // check_prefix reads each walked file once and classifies it from those
  // bytes (walk_kind_of); sniff_elf_file reads the first 4 KiB (and maps the
  // file when an ELF file's program headers lie beyond them). Both must give
  // the same kind for every file.
  namespace fs = std::filesystem;
  std::vector<std::string> files;
  for (const char* dir : {"/usr/bin", "/usr/sbin", "/usr/lib/x86_64-linux-gnu", "/etc"}) {
    std::error_code ec;
    std::size_t taken = 0;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end && taken < 150; it.increment(ec))
      if (std::error_code e2; it->is_regular_file(e2) && !it->is_symlink(e2)) {
        files.push_back(it->path().string());
        ++taken;
      }
  }
  const std::string dir = lt::scratch_dir("walk_kinds");
  auto put = [&](const std::string& name, std::string bytes) {
    lt::write_file(dir + "/" + name, bytes);
    files.push_back(dir + "/" + name);
  };
  auto le32 = [](std::string& s, std::size_t at, std::uint32_t v) {
    if (s.size() < at + 4) s.resize(at + 4, '\0');
    for (int k = 0; k < 4; ++k) s[at + k] = static_cast<char>((v >> (8 * k)) & 0xff);
  };
  std::string mz(0x40, '\0');
  mz[0] = 'M';
  mz[1] = 'Z';
  {
    std::string far = mz;  // "PE\0\0" beyond the first 4 KiB
    le32(far, 0x3c, 5000);
    far.resize(5000);
    far += std::string("PE\0\0", 4) + std::string(64, '\0');
    put("far_pe.exe", far);
    std::string short_pe = mz;  // e_lfanew past the end
    le32(short_pe, 0x3c, 6000);
    short_pe.resize(4200);
    put("short.exe", short_pe);
    put("mz_only.bin", mz);
  }
  for (std::uint32_t type : {1u, 2u, 6u, 8u, 10u}) {  // object, execute, dylib, bundle, dSYM
    std::string m(32, '\0');
    le32(m, 0, 0xfeedfacf);
    le32(m, 4, 0x01000007);
    le32(m, 12, type);
    put("macho" + std::to_string(type), m);
  }
  {
    std::string fat(8, '\0');  // a universal file whose first slice lies beyond the first 4 KiB
    fat[0] = '\xca'; fat[1] = '\xfe'; fat[2] = '\xba'; fat[3] = '\xbe'; fat[7] = 1;
    fat += std::string("\x01\x00\x00\x07\x00\x00\x00\x03\x00\x00\x20\x00\x00\x00\x00\x20\x00\x00\x00\x0e", 20);
    fat.resize(0x2000, '\0');
    std::string m(32, '\0');
    le32(m, 0, 0xfeedfacf);
    le32(m, 12, 6);
    put("fat_far", fat + m);
  }
  put("empty", "");
  put("text", "#!/bin/sh\necho hi\n");
  put("elf_stub", std::string("\x7f" "ELF\x02\x01\x01", 7));
  std::size_t compared = 0, elf_dynamic = 0;
  for (const auto& f : files) {
    INFO(f);
    auto mapped = mapped_file::open(f);
    if (!mapped) continue;
    const auto one_read = resolve::detail::walk_kind_of(mapped->bytes());
    const auto sniffed = resolve::detail::sniff_elf_file(f, nullptr);
    CHECK(one_read == sniffed);
    ++compared;
    elf_dynamic += sniffed == resolve::detail::walk_kind::dynamic;
  }
  CHECK(compared > 100);
  CHECK(elf_dynamic > 20);
}

TEST_CASE("run_parallel hands every item to exactly one thread, in runs of consecutive items", "[check][walk]") {
  using resolve::detail::parallel_chunk;
  // One thread takes everything at once; more threads take between 1 and 32
  // consecutive items, at least 32 runs per thread when there are enough.
  CHECK(parallel_chunk(1, 0) == 1);
  CHECK(parallel_chunk(1, 1000) == 1000);
  CHECK(parallel_chunk(2, 10) == 1);
  CHECK(parallel_chunk(2, 1931) == 30);
  CHECK(parallel_chunk(2, 100000) == 32);
  CHECK(parallel_chunk(64, 100000) == 32);
  CHECK(parallel_chunk(64, 1000) == 1);
  for (unsigned jobs : {1u, 2u, 3u, 7u, 64u}) {
    for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{5}, std::size_t{63}, std::size_t{64},
                          std::size_t{65}, std::size_t{2049}, std::size_t{10007}}) {
      std::vector<std::atomic<int>> seen(n);
      std::vector<std::thread::id> by(n);
      resolve::detail::run_parallel(jobs, n, [&](std::size_t i) {
        seen[i].fetch_add(1);
        by[i] = std::this_thread::get_id();
      });
      std::size_t once = 0;
      for (auto& s : seen) once += s.load() == 1;
      CHECK(once == n);
      // Items of one chunk went to one thread.
      const std::size_t chunk = parallel_chunk(jobs, n);
      std::size_t split = 0;
      for (std::size_t i = 1; i < n; ++i) split += i % chunk != 0 && by[i] != by[i - 1];
      CHECK(split == 0);
    }
  }
}
#endif  // LINKSCOPE_DEFINITIONS
