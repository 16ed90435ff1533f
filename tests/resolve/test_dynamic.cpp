// Tests of resolve/dynamic.hpp: the closure and every binding, compared with
// the real ld.so run in trace mode (support/ld_so_trace.hpp) on programs and
// DSOs built here with gcc: symbol versions, interposition, weak, protected,
// copy relocations, TLS, IFUNC, STB_GNU_UNIQUE, DT_SYMBOLIC, rpath/runpath.
#include <linkscope/resolve/dynamic.hpp>

#include <catch2/catch.hpp>

#include <elf.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "support/fixtures.hpp"
#include "support/ld_so_trace.hpp"

using namespace linkscope;
using namespace linkscope::resolve;
using namespace linkscope_test;

namespace {

std::set<std::string> our_bindings(const dynamic_link& link) {
  std::set<std::string> rows;
  for (const symbol_binding& b : link.bindings)
    rows.insert(link.objects[b.from].path + "\t" + link.objects[b.to].path + "\t" + std::string(b.symbol) + "\t" +
                std::string(b.version));
  return rows;
}

std::string diff(const std::set<std::string>& ours, const std::set<std::string>& theirs) {
  std::string out;
  for (const auto& r : ours)
    if (!theirs.count(r)) out += "only linkscope: " + r + "\n";
  for (const auto& r : theirs)
    if (!ours.count(r)) out += "only ld.so:     " + r + "\n";
  return out;
}

// Set DF_SYMBOLIC in DT_FLAGS of a 64-bit little-endian DSO (linked with -z now so
// that DT_FLAGS exists). -Bsymbolic would resolve the references at link time and
// leave no relocation to look at; this keeps them and makes ld.so search the DSO first.
bool add_df_symbolic(const std::string& path) {
  std::string bytes = read_file(path);
  if (bytes.size() < sizeof(Elf64_Ehdr)) return false;
  Elf64_Ehdr eh;
  std::memcpy(&eh, bytes.data(), sizeof eh);
  for (unsigned i = 0; i < eh.e_phnum; ++i) {
    Elf64_Phdr ph;
    std::memcpy(&ph, bytes.data() + eh.e_phoff + i * sizeof ph, sizeof ph);
    if (ph.p_type != PT_DYNAMIC) continue;
    for (std::size_t off = ph.p_offset; off + sizeof(Elf64_Dyn) <= ph.p_offset + ph.p_filesz; off += sizeof(Elf64_Dyn)) {
      Elf64_Dyn d;
      std::memcpy(&d, bytes.data() + off, sizeof d);
      if (d.d_tag == DT_FLAGS) {
        d.d_un.d_val |= DF_SYMBOLIC;
        std::memcpy(&bytes[off], &d, sizeof d);
        write_file(path, bytes);
        return true;
      }
    }
  }
  return false;
}

struct features_fixture {
  std::string dir;
  bool ok = false;
};

// main -> libinter.so, libbase.so.1 (versioned), libsym.so (DF_SYMBOLIC), libu1/libu2 (C++ unique)
const features_fixture& features() {
  static features_fixture fx = [] {
    features_fixture f;
    f.dir = scratch_dir("dynamic_features");
    if (!have_real_ld_so() || !have_tool("gcc") || !have_tool("g++")) return f;
    const std::string& d = f.dir;
    write_file(d + "/base.c",
               "__asm__(\".symver foo_v1,foo@BASE_1\");\n"
               "__asm__(\".symver foo_v2,foo@@BASE_2\");\n"
               "int foo_v1(void) { return 1; }\n"
               "int foo_v2(void) { return 2; }\n"
               "__attribute__((weak)) int base_weak(void) { return 3; }\n"
               "__attribute__((visibility(\"protected\"))) int base_prot_data = 4;\n"
               "int *base_prot_addr(void) { return &base_prot_data; }\n"
               "int base_data = 5;\n"
               "__thread int base_tls = 6;\n"
               "static int impl(void) { return 7; }\n"
               "static void *resolve_ifunc(void) { return (void *)impl; }\n"
               "int base_ifunc(void) __attribute__((ifunc(\"resolve_ifunc\")));\n"
               "int interposed(void) { return 8; }\n"
               "int base_uses_interposed(void) { return interposed(); }\n"
               "extern int weak_undef(void) __attribute__((weak));\n"
               "int base_call_weak_undef(void) { return weak_undef ? weak_undef() : 0; }\n"
               "int base_read_data(void) { return base_data; }\n"
               "int base_read_tls(void) { return base_tls; }\n");
    write_file(d + "/base.map",
               "BASE_1 { global: foo; local: *; };\n"
               "BASE_2 { global: foo; base_*; interposed; } BASE_1;\n");
    write_file(d + "/inter.c", "int interposed(void) { return 80; }\nint inter_only(void) { return 81; }\n");
    write_file(d + "/sym.c",
               "int sym_fn(void) { return 10; }\n"
               "int sym_data = 12;\n"
               "int sym_call(void) { return sym_fn() + sym_data; }\n");
    write_file(d + "/u.cpp",
               "inline int &counter() { static int c; return c; }\n"
               "extern \"C\" int UNAME() { return ++counter(); }\n");
    write_file(d + "/main.c",
               "int foo(void); extern int base_data; extern __thread int base_tls;\n"
               "int base_ifunc(void); int base_weak(void); int *base_prot_addr(void);\n"
               "int base_uses_interposed(void); int base_call_weak_undef(void); int inter_only(void);\n"
               "int sym_call(void); int u1(void); int u2(void);\n"
               "int interposed(void) { return 100; }\n"
               "int sym_fn(void) { return 11; }\n"
               "int main(void) {\n"
               "  return foo() + base_data + base_tls + base_ifunc() + base_weak() + *base_prot_addr() +\n"
               "         base_uses_interposed() + base_call_weak_undef() + inter_only() + sym_call() + u1() + u2();\n"
               "}\n");
    const int rc = run_in(
        d,
        "mkdir -p lib && "
        "gcc -shared -fPIC -O1 base.c -o lib/libbase.so.1 -Wl,-soname,libbase.so.1 -Wl,--version-script,base.map && "
        "ln -sf libbase.so.1 lib/libbase.so && "
        "gcc -shared -fPIC inter.c -o lib/libinter.so && "
        "gcc -shared -fPIC sym.c -o lib/libsym.so -Wl,-z,now && "
        "g++ -shared -fPIC -O1 -DUNAME=u1 u.cpp -o lib/libu1.so && "
        "g++ -shared -fPIC -O1 -DUNAME=u2 u.cpp -o lib/libu2.so && "
        "gcc -O1 main.c -o main -rdynamic -Llib -Wl,--no-as-needed -linter -lbase -lsym -lu1 -lu2 "
        "-Wl,-rpath,'$ORIGIN/lib'");
    f.ok = rc == 0 && add_df_symbolic(d + "/lib/libsym.so");
    return f;
  }();
  return fx;
}

}  // namespace

TEST_CASE("dynamic: a GNU-hash-only DSO that defines nothing still binds its references (libtorch_global_deps)") {
  // GNU ld gives such a DSO symoffset 1 and empty buckets: the hash table
  // covers none of its .dynsym entries, yet its relocations name them.
  const std::string dir = scratch_dir("dynamic-empty-gnu-hash");
  write_file(dir + "/e.c", "static int unused;\n");
  write_file(dir + "/m.c", "int main(void) { return 0; }\n");
  if (run_in(dir, "gcc -shared -fPIC -Wl,--hash-style=gnu e.c -o libempty.so && "
                  "gcc m.c -o main -L. -Wl,--no-as-needed -lempty -Wl,-rpath,'$ORIGIN'") != 0) {
    WARN("gcc could not build the fixture; skipped");
    return;
  }
  dynamic_options opts;
  opts.search.use_env = false;
  opts.search.cwd = dir;
  auto link = link_dynamic(dir + "/main", opts);
  REQUIRE(link);
  const auto theirs = ld_so_bindings(dir, dir + "/main");
  const auto ours = our_bindings(*link);
  INFO(diff(ours, theirs));
  CHECK(ours == theirs);
  bool empty_binds = false;
  for (const auto& row : theirs) empty_binds |= row.rfind(dir + "/libempty.so\t", 0) == 0;
  CHECK(empty_binds);  // ld.so binds libempty.so's own __cxa_finalize reference
  for (const auto& object : link->objects)
    for (const auto& w : object.warnings) CHECK(w.find("past the end of .dynsym") == std::string::npos);
}

TEST_CASE("dynamic: every binding matches ld.so (versions, interposition, weak, protected, copy, TLS, IFUNC, unique, symbolic)") {
  const auto& fx = features();
  if (!fx.ok) {
    WARN("no x86-64 ld.so, gcc or g++ here; skipped");
    return;
  }
  dynamic_options opts;
  opts.search.use_env = false;
  opts.search.cwd = fx.dir;
  // link_dynamic spells paths from the cwd like ld.so: run it from the fixture dir.
  auto link = link_dynamic(fx.dir + "/main", opts);
  REQUIRE(link);
  const auto theirs = ld_so_bindings(fx.dir, fx.dir + "/main");
  REQUIRE(theirs.size() > 50);
  const auto ours = our_bindings(*link);
  INFO(diff(ours, theirs));
  CHECK(ours == theirs);

  // Spot checks of the features, against rows that ld.so printed.
  const std::string lib = fx.dir + "/lib/";
  const std::string main = fx.dir + "/main";
  CHECK(theirs.count(main + "\t" + lib + "libbase.so.1\tfoo\tBASE_2"));                   // default version
  CHECK(theirs.count(main + "\t" + lib + "libbase.so.1\tbase_data\tBASE_2"));             // copy reloc skips main
  CHECK(theirs.count(lib + "libbase.so.1\t" + main + "\tbase_data\tBASE_2"));             // ... then binds to main
  CHECK(theirs.count(lib + "libbase.so.1\t" + main + "\tinterposed\tBASE_2"));            // main interposes
  // (gcc/ld resolve references to protected definitions at link time: no dynamic
  // relocation is left whose lookup ld.so would print as "protected symbol".)
  CHECK(theirs.count(lib + "libsym.so\t" + lib + "libsym.so\tsym_fn\t"));                 // DF_SYMBOLIC
  CHECK(theirs.count(main + "\t" + lib + "libbase.so.1\tbase_ifunc\tBASE_2"));            // IFUNC
  CHECK(theirs.count(main + "\t" + lib + "libbase.so.1\tbase_tls\tBASE_2"));              // TLS
  CHECK(theirs.count(lib + "libu2.so\t" + lib + "libu1.so\t_ZZ7countervE1c\t"));          // STB_GNU_UNIQUE
  for (const auto& row : theirs) CHECK(row.find("\tweak_undef\t") == std::string::npos);  // undefined weak
  CHECK(link->undefined.empty());

  // The closure, in ld.so's order.
  std::vector<std::string> names;
  for (std::size_t i = 1; i < link->objects.size(); ++i) names.push_back(link->objects[i].name);
  std::vector<std::string> ldd_names;
  for (const auto& l : ldd_lines(fx.dir, fx.dir + "/main")) {
    std::string s = l.substr(1);
    ldd_names.push_back(s.substr(0, s.find(" => ")));
  }
  CHECK(names == ldd_names);

  // Interposition: `interposed` is defined by main, libinter and libbase; main wins.
  bool seen = false;
  for (const auto& ip : link->interposed) {
    if (ip.symbol != "interposed") continue;
    seen = true;
    REQUIRE(ip.definers.size() == 3);
    CHECK(link->objects[ip.definers[0]].is_main);
    CHECK(link->objects[ip.definers[1]].name == "libinter.so");
    CHECK(link->objects[ip.definers[2]].name == "libbase.so.1");
  }
  CHECK(seen);
}

TEST_CASE("dynamic: one object_cache for several roots: the same answers as ld.so, each file read once") {
  const auto& fx = features();
  if (!fx.ok) {
    WARN("no x86-64 ld.so, gcc or g++ here; skipped");
    return;
  }
  dynamic_options opts;
  opts.search.use_env = false;
  opts.search.cwd = fx.dir;
  object_cache cache;
  const std::vector<std::string> roots = {fx.dir + "/main", fx.dir + "/lib/libinter.so", fx.dir + "/lib/libu2.so",
                                          fx.dir + "/main"};
  std::set<std::pair<std::uint64_t, std::uint64_t>> distinct;
  for (const auto& root : roots) {
    INFO(root);
    auto cached = link_dynamic(root, opts, cache);
    REQUIRE(cached);
    const auto theirs = ld_so_bindings(fx.dir, root);
    const auto ours = our_bindings(*cached);
    INFO(diff(ours, theirs));
    CHECK(ours == theirs);
    for (const auto& o : cached->objects) {
      struct ::stat st {};
      if (o.found() && ::stat(o.file.c_str(), &st) == 0) distinct.insert({st.st_dev, st.st_ino});
    }
    // Only the root's relocations: exactly ld.so's rows from the root.
    dynamic_options main_only = opts;
    main_only.bind_dependencies = false;
    main_only.interposition = false;
    auto root_only = link_dynamic(root, main_only, cache);
    REQUIRE(root_only);
    std::set<std::string> from_root;
    for (const auto& row : theirs)
      if (row.rfind(cached->objects[0].path + "\t", 0) == 0) from_root.insert(row);
    const auto ours_root = our_bindings(*root_only);
    INFO(diff(ours_root, from_root));
    CHECK(ours_root == from_root);
    CHECK(root_only->unused == cached->unused);
    CHECK(root_only->objects.size() == cached->objects.size());
  }
  // Every distinct file of the closures (the interpreter among them) was mapped once.
  CHECK(cache.files() == distinct.size());
  CHECK(cache.hits() > 0);
}

TEST_CASE("dynamic: rpath inheritance, runpath, LD_LIBRARY_PATH, missing libraries and cycles match ld.so") {
  if (!have_real_ld_so() || !have_tool("gcc")) {
    WARN("no x86-64 ld.so or gcc here; skipped");
    return;
  }
  const std::string d = scratch_dir("dynamic_paths");
  write_file(d + "/y.c", "int y(void) { return 2; }\nint shared_name(void) { return 1; }\n");
  write_file(d + "/x.c", "int y(void); int x(void) { return y(); }\n");
  write_file(d + "/c1.c", "int c2(void); int c1(void) { return 1; } int c1_calls(void) { return c2(); }\n");
  write_file(d + "/c2.c", "int c1(void); int c2(void) { return 2; } int c2_calls(void) { return c1(); }\n");
  write_file(d + "/gone.c", "int gone(void) { return 3; }\n");
  write_file(d + "/m.c",
             "int x(void); int c1_calls(void); int gone(void) __attribute__((weak));\n"
             "int main(void) { return x() + c1_calls() + (gone ? gone() : 0); }\n");
  REQUIRE(run_in(d,
                 "mkdir -p r ry cyc && gcc -shared -fPIC y.c -o ry/liby.so && "
                 "gcc -shared -fPIC x.c -o r/libx.so -Lry -ly && "
                 "gcc -shared -fPIC c2.c -o cyc/libc2.so && "
                 "gcc -shared -fPIC c1.c -o cyc/libc1.so -Wl,-soname,libc1.so -Lcyc -lc2 && "
                 "gcc -shared -fPIC c2.c -o cyc/libc2.so -Lcyc -lc1 && "
                 "gcc -shared -fPIC gone.c -o libgone.so && "
                 "gcc m.c -o m_rpath -Lr -Lcyc -L. -Wl,--no-as-needed -lx -lc1 -lgone -Wl,-rpath-link,ry:cyc "
                 "-Wl,--disable-new-dtags -Wl,-rpath,'$ORIGIN/r:$ORIGIN/ry:$ORIGIN/cyc' && "
                 "gcc m.c -o m_runpath -Lr -Lcyc -L. -Wl,--no-as-needed -lx -lc1 -Wl,-rpath-link,ry:cyc "
                 "-Wl,--enable-new-dtags -Wl,-rpath,'$ORIGIN/r:$ORIGIN/cyc' && rm libgone.so") == 0);
  struct run {
    const char* program;
    std::optional<std::string> llp;
  };
  for (const run& r : {run{"./m_rpath", std::nullopt}, run{"./m_runpath", std::nullopt},
                       run{"./m_runpath", d + "/ry"}}) {
    INFO(r.program << " LD_LIBRARY_PATH=" << r.llp.value_or("(none)"));
    dynamic_options opts;
    opts.search.use_env = false;
    opts.search.library_path = r.llp;
    opts.search.cwd = d;
    // Paths relative to the cwd: run from d.
    const std::string env = r.llp ? "LD_LIBRARY_PATH=" + *r.llp : "";
    std::string saved(4096, '\0');
    REQUIRE(::getcwd(saved.data(), saved.size()) != nullptr);
    REQUIRE(::chdir(d.c_str()) == 0);
    auto link = link_dynamic(r.program, opts);
    REQUIRE(::chdir(saved.c_str()) == 0);
    REQUIRE(link);
    std::vector<std::string> ours;
    for (std::size_t i = 1; i < link->objects.size(); ++i) {
      const auto& o = link->objects[i];
      ours.push_back("\t" + (o.found() ? (o.name == o.path ? o.path : o.name + " => " + o.path) : o.name + " => not found"));
    }
    CHECK(ours == ldd_lines(d, r.program, env));
    const auto theirs = ld_so_bindings(d, r.program, env);
    const auto mine = our_bindings(*link);
    INFO(diff(mine, theirs));
    CHECK(mine == theirs);
  }
}

TEST_CASE("dynamic: a chain of DSOs, each binding into the next") {
  if (!have_tool("gcc")) {
    WARN("no gcc; skipped");
    return;
  }
  // DSOs in a chain, each needing the next and calling into it (bench/parity_ldd.sh
  // times a 10k-object closure; process start-up makes building many here slow).
  const std::string d = scratch_dir("dynamic_many");
  const int n = 25;
  std::string script = "set -e\n";
  write_file(d + "/one.c", "int NEXT(void); int SELF(void) { return NEXT() + 1; }\n");
  write_file(d + "/last.c", "int SELF(void) { return 0; }\n");
  script += "gcc -shared -fPIC -DSELF=f" + std::to_string(n - 1) + " last.c -o libo" + std::to_string(n - 1) + ".so\n";
  // Build one object and patch names with sed would be faster, but gcc -shared on a tiny file is ~20 ms:
  // instead, link all DSOs from one object file per DSO name with the assembler.
  for (int i = n - 2; i >= 0; --i) {
    script += "printf '.globl f" + std::to_string(i) + "\\n.type f" + std::to_string(i) +
              ",@function\\nf" + std::to_string(i) + ": jmp f" + std::to_string(i + 1) + "@PLT\\n' > o" +
              std::to_string(i) + ".s\n";
  }
  script += "for f in o*.s; do as $f -o ${f%.s}.o; done\n";
  for (int i = n - 2; i >= 0; --i)
    script += "ld -shared o" + std::to_string(i) + ".o -o libo" + std::to_string(i) + ".so -L. -lo" +
              std::to_string(i + 1) + "\n";
  write_file(d + "/build.sh", script);
  if (run_in(d, "sh build.sh >/dev/null 2>&1") != 0) {
    WARN("could not build the chain; skipped");
    return;
  }
  dynamic_options opts;
  opts.search.use_env = false;
  opts.search.library_path = d;
  auto link = link_dynamic(d + "/libo0.so", opts);
  REQUIRE(link);
  CHECK(link->objects.size() >= static_cast<std::size_t>(n));
  std::size_t chain = 0;
  for (const auto& b : link->bindings)
    if (b.symbol.substr(0, 1) == "f") ++chain;
  CHECK(chain == static_cast<std::size_t>(n - 1));
  CHECK_FALSE(link->any_missing());
}

TEST_CASE("dynamic: a root's own relocations probed object by object equal the closure index's, on system files") {
  // bind_dependencies and interposition off (a package check) look each
  // reference up through every scope object's own definitions instead of an
  // index of the whole closure: the root's rows, undefined symbols and ldd -u
  // must be what the index gives (which the ld.so tests above check).
  std::vector<std::string> roots;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/usr/lib/x86_64-linux-gnu", ec)) {
    const std::string name = e.path().filename().string();
    if (e.is_regular_file(ec) && !e.is_symlink(ec) && name.find(".so") != std::string::npos) roots.push_back(e.path());
  }
  std::sort(roots.begin(), roots.end());
  if (roots.size() > 150) roots.resize(150);
  for (const char* bin : {"/usr/bin/python3", "/usr/bin/perl", "/usr/bin/cmake"})
    if (std::filesystem::exists(bin)) roots.push_back(bin);
  REQUIRE(roots.size() > 20);
  dynamic_options full;
  full.search.use_env = false;
  dynamic_options root_only = full;
  root_only.bind_dependencies = false;
  root_only.interposition = false;
  object_cache cache;
  std::size_t compared = 0, rows = 0;
  for (const auto& root : roots) {
    auto a = link_dynamic(root, full, cache);
    auto b = link_dynamic(root, root_only, cache);
    if (!a || !b) {
      CHECK(!a == !b);
      continue;
    }
    INFO(root);
    std::set<std::string> from_root;
    for (const auto& row : our_bindings(*a))
      if (row.rfind(a->objects[0].path + "\t", 0) == 0) from_root.insert(row);
    const auto probed = our_bindings(*b);
    INFO(diff(probed, from_root));
    CHECK(probed == from_root);
    std::set<std::string> undef_a, undef_b;
    for (const auto& u : a->undefined)
      if (u.from == 0) undef_a.insert(std::string(u.symbol) + "@" + std::string(u.version));
    for (const auto& u : b->undefined) undef_b.insert(std::string(u.symbol) + "@" + std::string(u.version));
    CHECK(undef_b == undef_a);
    CHECK(b->unused == a->unused);
    ++compared;
    rows += probed.size();
  }
  INFO(compared << " roots, " << rows << " bindings");
  CHECK(compared > 20);
  CHECK(rows > 1000);
}
