// Tests of the linkscope-ldd CLI against ldd, ldd -r, ldd -u -r and the
// trace-mode ld.so, plus bad input (missing library, broken ld.so.cache,
// symlink loop, wrong-class DSO, malformed dynamic section, bad operands).
#include <catch2/catch.hpp>

#include <elf.h>
#include <unistd.h>

#include <cstring>

#include <algorithm>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "support/fixtures.hpp"
#include "support/ld_so_trace.hpp"

using namespace linkscope_test;

namespace {

std::string ldd_tool() { return tool_path("linkscope-ldd"); }

// Run linkscope-ldd in `dir` (stdout only; stderr to `err_file` when given).
command_result ours(const std::string& dir, const std::string& args, const std::string& err_file = "/dev/null") {
  return capture("cd " + shell_quote(dir) + " && env -u LD_LIBRARY_PATH " + shell_quote(ldd_tool()) + " " + args +
                 " 2>" + shell_quote(err_file));
}

std::vector<std::string> nonempty(const std::string& text) {
  std::vector<std::string> out;
  for (const auto& l : lines(text))
    if (!l.empty()) out.push_back(l);
  return out;
}

struct cli_fixture {
  std::string dir;
  bool ok = false;
};

// m: needs liba (runpath $ORIGIN) and libm (unused); liba has undefined symbols
// (linked with --allow-shlib-undefined). mv: needs a version that libver.so lost.
const cli_fixture& fixture() {
  static cli_fixture fx = [] {
    cli_fixture f;
    f.dir = scratch_dir("ldd_cli");
    if (!have_real_ld_so() || !have_tool("gcc")) return f;
    const std::string& d = f.dir;
    write_file(d + "/a.c",
               "extern int missing_fn(void); extern int missing_var;\n"
               "int a(void) { return missing_fn() + missing_var; }\n");
    write_file(d + "/ver2.c", "int v1(void) { return 1; } int v2(void) { return 2; }\n");
    write_file(d + "/ver1.c", "int v1(void) { return 1; }\n");
    write_file(d + "/v2.map", "V1 { global: v1; local: *; };\nV2 { global: v2; } V1;\n");
    write_file(d + "/v1.map", "V1 { global: v1; local: *; };\n");
    write_file(d + "/m.c", "int a(void); int main(void) { return a(); }\n");
    write_file(d + "/mv.c", "int v2(void); int main(void) { return v2(); }\n");
    f.ok = run_in(d,
                  "gcc -shared -fPIC a.c -o liba.so && "
                  "gcc -shared -fPIC ver2.c -o libver.so -Wl,-soname,libver.so -Wl,--version-script,v2.map && "
                  "gcc m.c -o m -L. -Wl,--no-as-needed -la -lm -Wl,--allow-shlib-undefined "
                  "-Wl,-rpath,'$ORIGIN' && "
                  "gcc mv.c -o mv -L. -lver -Wl,-rpath,'$ORIGIN' && "
                  "gcc -shared -fPIC ver1.c -o libver.so -Wl,-soname,libver.so -Wl,--version-script,v1.map") == 0;
    return f;
  }();
  return fx;
}

}  // namespace

TEST_CASE("linkscope-ldd prints ldd's name => path lines") {
  const auto& fx = fixture();
  if (!fx.ok) {
    WARN("no x86-64 ld.so or gcc here; skipped");
    return;
  }
  auto r = ours(fx.dir, "./m");
  CHECK(r.status == 0);
  CHECK(nonempty(r.out) == ldd_lines(fx.dir, "./m"));
  // Absolute paths and system programs too.
  for (const std::string& program : {fx.dir + "/m", std::string("/bin/sh"), std::string("/usr/bin/ldd")}) {
    if (::access(program.c_str(), R_OK) != 0) continue;
    auto s = ours(fx.dir, shell_quote(program));
    if (s.status == 2) continue;  // a script (ldd itself): not ELF
    CHECK(nonempty(s.out) == ldd_lines(fx.dir, program));
  }
}

TEST_CASE("linkscope-ldd --bindings is ld.so's trace-mode binding set") {
  const auto& fx = fixture();
  if (!fx.ok) {
    WARN("no x86-64 ld.so or gcc here; skipped");
    return;
  }
  auto r = ours(fx.dir, "--bindings ./m");
  const auto theirs = ld_so_bindings(fx.dir, "./m");
  REQUIRE(theirs.size() > 20);
  CHECK(line_set(r.out) == theirs);
  // Four columns always; an unversioned binding ends in a tab.
  for (const auto& l : nonempty(r.out)) CHECK(std::count(l.begin(), l.end(), '\t') == 3);
  CHECK(r.out.find("\t\n") != std::string::npos);
}

TEST_CASE("linkscope-ldd --unused is ldd -u -r, --undefined is ldd -r's messages") {
  const auto& fx = fixture();
  if (!fx.ok) {
    WARN("no x86-64 ld.so or gcc here; skipped");
    return;
  }
  auto unused = ours(fx.dir, "--unused ./m");
  auto real_unused = capture("cd " + shell_quote(fx.dir) + " && ldd -u -r ./m 2>/dev/null");
  CHECK(unused.out == real_unused.out);
  CHECK(unused.out.find("libm.so.6") != std::string::npos);
  CHECK(unused.status == 1);

  // ldd's own spelling: -u -r prints the unused dependencies, as ldd does.
  auto u_r = ours(fx.dir, "-u -r ./m");
  CHECK(u_r.out == real_unused.out);
  CHECK(u_r.status == 1);
  // Output modes exclude each other: --unused --tree used to print the tree
  // and exit 0, hiding the finding (issue 15).
  for (const char* pair : {"--unused --tree", "--tree --unused", "--bindings --json", "--undefined --interposed"}) {
    auto both = capture("cd " + shell_quote(fx.dir) + " && " + shell_quote(ldd_tool()) + " " + pair + " ./m 2>&1");
    CHECK(both.status == 2);
    CHECK(both.out.find("exclude each other") != std::string::npos);
    CHECK(both.out.find("Try 'linkscope-ldd --help' for more information.") != std::string::npos);
  }

  auto undefined = ours(fx.dir, "--undefined ./m");
  // ldd -r prints its version and relocation errors on stdout, around the list.
  auto errors_of = [&](const std::string& program) {
    std::set<std::string> out;
    for (const auto& l : lines(capture("cd " + shell_quote(fx.dir) + " && ldd -r " + program + " 2>/dev/null").out))
      if (!l.empty() && l[0] != '\t') out.insert(l);
    return out;
  };
  CHECK(line_set(undefined.out) == errors_of("./m"));
  CHECK(undefined.out.find("undefined symbol: missing_fn\t(") != std::string::npos);
  CHECK(undefined.status == 1);

  auto version = ours(fx.dir, "--undefined ./mv");
  CHECK(line_set(version.out) == errors_of("./mv"));
  CHECK(version.out.find("version `V2' not found") != std::string::npos);
  // Plain ldd prints the version error before the list, on stdout.
  CHECK(nonempty(ours(fx.dir, "./mv").out) == ldd_lines(fx.dir, "./mv"));
}

TEST_CASE("linkscope-ldd --json, --tree, --format=dot, --interposed") {
  const auto& fx = fixture();
  if (!fx.ok) {
    WARN("no x86-64 ld.so or gcc here; skipped");
    return;
  }
  auto json = ours(fx.dir, "--json ./m");
  CHECK(json.out.find("{\"version\":1") == 0);
  for (const char* key : {"\"interp\":", "\"needed\":", "\"rpath\":", "\"runpath\":", "\"libs\":", "\"realpath\":",
                          "\"found_via\":\"runpath\"", "\"bindings\":", "\"unused\":", "\"undefined\":"})
    CHECK(json.out.find(key) != std::string::npos);
  auto tree = ours(fx.dir, "--tree ./m");
  CHECK(tree.out.find("./m [main]\n  liba.so => ") == 0);
  auto dot = ours(fx.dir, "--format=dot ./m");
  CHECK(dot.out.find("digraph") == 0);
  CHECK(dot.out.find("n0 -> n1;") != std::string::npos);
  auto interposed = ours(fx.dir, "--interposed ./m");
  CHECK(interposed.status == 0);
}

// Several files with --json: one document (issue 15: two concatenated
// documents are not JSON), parsed by /usr/bin/python3's json module. Each
// element is the document `--json FILE` prints; a file that cannot be linked
// is {"version", "file", "error"}; the libraries are the ones ldd lists.
TEST_CASE("linkscope-ldd --json over several files is one document") {
  const auto& fx = fixture();
  if (!fx.ok) {
    WARN("no x86-64 ld.so or gcc here; skipped");
    return;
  }
  auto several = ours(fx.dir, "--json ./m ./nothing-here ./mv");
  CHECK(several.status == 2);
  write_file(fx.dir + "/several.json", several.out);
  write_file(fx.dir + "/m.json", ours(fx.dir, "--json ./m").out);
  write_file(fx.dir + "/mv.json", ours(fx.dir, "--json ./mv").out);
  write_file(fx.dir + "/several.py", R"PY(
import json
d = json.load(open("several.json"))
m = json.load(open("m.json"))
mv = json.load(open("mv.json"))
print(sorted(d), d["version"], len(d["files"]))
print(d["files"][0] == m, d["files"][2] == mv)
print(sorted(d["files"][1].items()))
for f in (d["files"][0], d["files"][2]):
    print(" ".join(l["name"] for l in f["libs"] if l["path"]))
)PY");
  auto parsed = capture("cd " + shell_quote(fx.dir) + " && /usr/bin/python3 several.py");
  REQUIRE(parsed.status == 0);
  const auto got = lines(parsed.out);
  REQUIRE(got.size() >= 5);
  CHECK(got[0] == "['files', 'version'] 1 3");
  CHECK(got[1] == "True True");
  CHECK(got[2] == "[('error', 'no such file'), ('file', './nothing-here'), ('version', 1)]");
  // The oracle: the names ldd resolves, in its order (the vDSO aside).
  for (std::size_t i = 0; i < 2; ++i) {
    std::string names;
    for (const std::string& l : ldd_lines(fx.dir, i == 0 ? "./m" : "./mv")) {
      // "name => path", or the interpreter's own line ("\t/lib64/ld-linux-x86-64.so.2").
      if (l.find("not found") != std::string::npos) continue;
      std::string name = l.substr(0, l.find(" => "));
      name.erase(0, name.find_first_not_of(" \t"));
      if (!names.empty()) names += ' ';
      names += name;
    }
    INFO((i == 0 ? "./m" : "./mv"));
    CHECK(got[3 + i] == names);
  }
}

TEST_CASE("linkscope-ldd: bad input keeps the rest of the closure") {
  const auto& fx = fixture();
  if (!fx.ok) {
    WARN("no x86-64 ld.so or gcc here; skipped");
    return;
  }
  const std::string d = scratch_dir("ldd_bad");
  write_file(d + "/w.c", "int w(void) { return 1; }\n");
  write_file(d + "/m.c", "int w(void); int main(void) { return w(); }\n");
  REQUIRE(run_in(d, "mkdir -p w32 w64 loop good gone && gcc -shared -fPIC w.c -o w64/libw.so && "
                    "cp w64/libw.so good/libloop.so && cp w64/libw.so gone/libgone.so && "
                    "ln -s libloop.so loop/libloop.so && "
                    "gcc m.c -o m_class -Lw64 -lw -Wl,-rpath,'$ORIGIN/w32:$ORIGIN/w64' && "
                    "gcc m.c -o m_loop -Lgood -Wl,--no-as-needed -lloop -Lw64 -lw "
                    "-Wl,-rpath,'$ORIGIN/loop:$ORIGIN/good:$ORIGIN/w64' && "
                    "gcc m.c -o m_gone -Lgone -Wl,--no-as-needed -lgone -Lw64 -lw -Wl,-rpath,'$ORIGIN/w64' && "
                    "cp w64/libw.so w64/libbroken.so && "
                    "gcc m.c -o m_broken -Lw64 -Wl,--no-as-needed -lbroken -lw -Wl,-rpath,'$ORIGIN/w64'") == 0);

  SECTION("missing library") {
    auto r = ours(d, "./m_gone", d + "/err.txt");
    CHECK(r.status == 1);
    CHECK(nonempty(r.out) == ldd_lines(d, "./m_gone"));
    CHECK(r.out.find("libgone.so => not found") != std::string::npos);
    CHECK(read_file(d + "/err.txt").find("libgone.so: not found") != std::string::npos);
    // The same warning in the JSON document (issue 15 part 6).
    auto j = ours(d, "--json ./m_gone");
    const auto warnings = j.out.find("\"warnings\":[");
    REQUIRE(warnings != std::string::npos);
    CHECK(j.out.find("\"libgone.so: not found\"", warnings) != std::string::npos);
    auto b = ours(d, "--bindings ./m_gone");
    CHECK(line_set(b.out) == ld_so_bindings(d, "./m_gone"));
  }
  SECTION("a DSO of the wrong class is skipped, with the reason") {
    if (run_in(d, "clang-14 -m32 -fPIC -c w.c -o w32.o && ld -m elf_i386 -shared w32.o -o w32/libw.so") != 0) {
      WARN("cannot make a 32-bit DSO here; skipped");
      return;
    }
    auto r = ours(d, "./m_class", d + "/err.txt");
    CHECK(r.status == 0);
    CHECK(nonempty(r.out) == ldd_lines(d, "./m_class"));
    CHECK(r.out.find("/w64/libw.so") != std::string::npos);
    CHECK(read_file(d + "/err.txt").find("w32/libw.so: skipped: wrong ELF class") != std::string::npos);
  }
  SECTION("a symlink loop in the search path") {
    auto r = ours(d, "./m_loop", d + "/err.txt");
    CHECK(nonempty(r.out) == ldd_lines(d, "./m_loop"));
    CHECK(read_file(d + "/err.txt").find("too many levels of symbolic links") != std::string::npos);
  }
  SECTION("a broken ld.so.cache is ignored with a warning") {
    write_file(d + "/broken.cache", std::string("glibc-ld.so.cache1.1") + std::string(8, '\xff'));
    auto r = ours(d, "--cache " + d + "/broken.cache ./m_class", d + "/err.txt");
    CHECK(read_file(d + "/err.txt").find("broken.cache: ignored") != std::string::npos);
    // Without the cache, libc is found in the default directories: same path as ldd's.
    CHECK(nonempty(r.out) == ldd_lines(d, "./m_class"));
  }
  SECTION("a malformed dynamic section") {
    // Point DT_STRTAB of libbroken.so far outside the file.
    std::string bytes = read_file(d + "/w64/libbroken.so");
    Elf64_Ehdr eh;
    std::memcpy(&eh, bytes.data(), sizeof eh);
    bool patched = false;
    for (unsigned i = 0; i < eh.e_phnum; ++i) {
      Elf64_Phdr ph;
      std::memcpy(&ph, bytes.data() + eh.e_phoff + i * sizeof ph, sizeof ph);
      if (ph.p_type != PT_DYNAMIC) continue;
      for (std::size_t off = ph.p_offset; off + sizeof(Elf64_Dyn) <= ph.p_offset + ph.p_filesz; off += sizeof(Elf64_Dyn)) {
        Elf64_Dyn dyn;
        std::memcpy(&dyn, bytes.data() + off, sizeof dyn);
        if (dyn.d_tag != DT_STRTAB) continue;
        dyn.d_un.d_ptr = 0x7f7f7f7f7f7full;
        std::memcpy(&bytes[off], &dyn, sizeof dyn);
        patched = true;
      }
    }
    REQUIRE(patched);
    write_file(d + "/w64/libbroken.so", bytes);
    auto r = ours(d, "./m_broken", d + "/err.txt");
    const std::string err = read_file(d + "/err.txt");
    CHECK(err.find("libbroken.so: ") != std::string::npos);
    CHECK(err.find("offset 0x") != std::string::npos);
    CHECK(r.out.find("libbroken.so => ") != std::string::npos);
    CHECK(r.out.find("libw.so => ") != std::string::npos);
    CHECK(r.out.find("libc.so.6 => ") != std::string::npos);
  }
  SECTION("operands that are not programs") {
    auto missing = ours(d, "./no-such-file", d + "/err.txt");
    CHECK(missing.status == 2);
    CHECK(read_file(d + "/err.txt").find("linkscope-ldd: ./no-such-file: error: ") == 0);
    write_file(d + "/text", "not an ELF file\n");
    CHECK(ours(d, "./text").status == 2);
    CHECK(ours(d, "--no-such-option ./m_class").status == 2);
    CHECK(ours(d, "").status == 2);
  }
}

TEST_CASE("linkscope-ldd --root with a private ld.so.cache matches ld.so in a chroot") {
  if (!have_real_ld_so() || ::geteuid() != 0 || !have_tool("chroot") || !have_tool("gcc")) {
    WARN("needs root, chroot and gcc; skipped");
    return;
  }
  const std::string d = scratch_dir("ldd_root");
  const std::string root = d + "/root";
  write_file(d + "/p.c", "int p(void) { return 1; }\n");
  write_file(d + "/m.c", "int p(void); int main(void) { return p(); }\n");
  const int rc = run_in(
      d,
      "mkdir -p root/lib/x86_64-linux-gnu root/lib64 root/etc root/opt/priv/glibc-hwcaps/x86-64-v2 && "
      "cp -L /lib/x86_64-linux-gnu/libc.so.6 root/lib/x86_64-linux-gnu/ && "
      "cp -L /lib64/ld-linux-x86-64.so.2 root/lib64/ && "
      "gcc -shared -fPIC p.c -o root/opt/priv/libpriv.so.1 -Wl,-soname,libpriv.so.1 && "
      "cp root/opt/priv/libpriv.so.1 root/opt/priv/glibc-hwcaps/x86-64-v2/ && "
      "gcc m.c -o root/m root/opt/priv/libpriv.so.1 && "
      "echo /opt/priv > root/etc/ld.so.conf && PATH=$PATH:/sbin ldconfig -r root 2>/dev/null");
  if (rc != 0) {
    WARN("could not build the sysroot; skipped");
    return;
  }
  auto real = capture("chroot " + shell_quote(root) +
                      " /lib64/ld-linux-x86-64.so.2 --list /m 2>/dev/null");
  std::vector<std::string> expected;
  for (std::string l : nonempty(real.out)) {
    if (l.find("linux-vdso") != std::string::npos) continue;
    std::size_t addr = l.rfind(" (0x");
    if (addr != std::string::npos) l.resize(addr);
    expected.push_back(l);
  }
  REQUIRE(!expected.empty());
  auto r = ours(d, "--no-env --root " + shell_quote(root) + " /m");
  CHECK(nonempty(r.out) == expected);
  CHECK(r.out.find("libpriv.so.1 => /opt/priv/glibc-hwcaps/x86-64-v2/libpriv.so.1") != std::string::npos);
  // Without hwcaps support (--isa-level 1) the cache's plain entry is used.
  auto baseline = ours(d, "--no-env --isa-level 1 --root " + shell_quote(root) + " /m");
  CHECK(baseline.out.find("libpriv.so.1 => /opt/priv/libpriv.so.1") != std::string::npos);
}

TEST_CASE("linkscope-ldd --root /nonexistent blames the root, not the input file") {
  auto r = capture(shell_quote(ldd_tool()) + " --root /nonexistent-linkscope-root /bin/ls 2>&1");
  CHECK(r.status == 2);
  CHECK(r.out.rfind("linkscope-ldd: /nonexistent-linkscope-root: error: ", 0) == 0);
  CHECK(r.out.find("/bin/ls") == std::string::npos);
}

// ldd on files that ld.so does not link dynamically (issue 15 part 6): a
// static-pie, a DSO without NEEDED, an object and a static executable; stdout,
// stderr and the exit status are ldd's, alone and several in one run.
TEST_CASE("linkscope-ldd: statically linked and not a dynamic executable, as ldd says") {
  const auto& fx = fixture();
  if (!fx.ok || !have_tool("ldd")) {
    WARN("no x86-64 ld.so, gcc or ldd here; skipped");
    return;
  }
  const std::string d = scratch_dir("ldd_static");
  write_file(d + "/s.c", "int main(void) { return 0; }\n");
  write_file(d + "/q.c", "int q(void) { return 1; }\n");
  REQUIRE(run_in(d, "gcc -c s.c -o s.o && gcc -shared -fPIC -nostdlib q.c -o libq.so") == 0);
  std::vector<std::string> files = {"./s.o", "./libq.so"};
  if (run_in(d, "gcc -static-pie s.c -o spie") == 0) files.push_back("./spie");
  if (run_in(d, "gcc -static s.c -o sexe") == 0) files.push_back("./sexe");
  if (capture("test -f /sbin/ldconfig && echo yes").out == "yes\n") files.push_back("/sbin/ldconfig");
  auto both = [&](const std::string& program, const std::string& args) {
    const auto out = capture("cd " + shell_quote(d) + " && env -u LD_LIBRARY_PATH " + program + " " + args + " 2>err.txt");
    return std::make_pair(out, read_file(d + "/err.txt"));
  };
  std::string all;
  for (const auto& f : files) {
    INFO(f);
    all += " " + f;
    auto real = both("ldd", f);
    auto ours_ = both(shell_quote(ldd_tool()), f);
    CHECK(ours_.first.out == real.first.out);
    CHECK(ours_.first.status == real.first.status);
    CHECK(ours_.second == real.second);
  }
  auto real = both("ldd", all);
  auto ours_ = both(shell_quote(ldd_tool()), all);
  CHECK(ours_.first.out == real.first.out);
  CHECK(ours_.first.status == real.first.status);
  CHECK(ours_.second == real.second);
}

TEST_CASE("linkscope-ldd --format=dot over several files is one graph") {
  const auto& fx = fixture();
  if (!fx.ok) {
    WARN("no x86-64 ld.so or gcc here; skipped");
    return;
  }
  auto dot = ours(fx.dir, "--format=dot ./m ./mv");
  CHECK(dot.out.find("digraph") == 0);
  CHECK(dot.out.find("digraph", 1) == std::string::npos);
  CHECK(dot.out.find("\n}\n") == dot.out.size() - 3);
  // libc is one node, needed by both programs.
  const std::string libc_label = "libc.so.6\"]";
  const auto first = dot.out.find(libc_label);
  REQUIRE(first != std::string::npos);
  CHECK(dot.out.find(libc_label, first + 1) == std::string::npos);
  CHECK(dot.out.find("[label=\"./m\"]") != std::string::npos);
  CHECK(dot.out.find("[label=\"./mv\"]") != std::string::npos);
}

// ldd -v: the list, then "Version information:", per loaded object in load
// order, each verneed entry in the verneed chain's order with the object that
// provides it (issue 15 part 6). The oracle is ldd -v itself.
TEST_CASE("linkscope-ldd -v is ldd -v's version information") {
  const auto& fx = fixture();
  if (!fx.ok || !have_tool("ldd")) {
    WARN("no x86-64 ld.so, gcc or ldd here; skipped");
    return;
  }
  std::vector<std::string> programs = {"./m", "./mv"};
  for (const char* p : {"/usr/bin/python3", "/usr/bin/ls"})
    if (capture(std::string("test -x ") + p + " && echo yes").out == "yes\n") programs.emplace_back(p);
  for (const auto& program : programs) {
    INFO(program);
    auto r = ours(fx.dir, "-v " + program);
    const auto real = ldd_lines(fx.dir, program, "", "-v");
    CHECK(lines(r.out) == real);
    CHECK(r.out.find("\tVersion information:\n") != std::string::npos);
    auto long_form = ours(fx.dir, "--verbose " + program);
    CHECK(long_form.out == r.out);
  }
}
