// Tests of linkscope/coff/object.hpp (COFF objects, standard and bigobj) and
// linkscope/coff/pe.hpp (PE images).
//
// Objects come from clang-14 --target=x86_64-pc-windows-msvc and from
// x86_64-w64-mingw32-as (-mbig-obj for bigobj); expected symbol sets and nm
// letters from x86_64-w64-mingw32-nm (binutils) and COMDAT selections from
// llvm-readobj-14. PE images come from x86_64-w64-mingw32-gcc; expected
// imports/exports from x86_64-w64-mingw32-objdump -p and llvm-readobj-14
// --coff-exports. Malformed inputs are byte patches of real files.
#include <linkscope/coff/object.hpp>
#include <linkscope/coff/pe.hpp>

#include <catch2/catch.hpp>

#include <linkscope/core/mapped_file.hpp>
#include <linkscope/symbols/table.hpp>

#include <algorithm>
#include <cstring>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "support/fixtures.hpp"

using namespace linkscope_test;
namespace coff = linkscope::coff;
namespace pe = linkscope::pe;
using linkscope::byte_view;
using linkscope::errc;

namespace {

const char* const sample_c =
    "int printf(const char*, ...);\n"
    "int counter = 3;\n"
    "static int hidden_counter;\n"
    "const int ro_value = 7;\n"
    "int bss_value;\n"
    "__declspec(dllimport) int imported_fn(int);\n"
    "extern int ext_data;\n"
    "static int helper(int x) { return x + hidden_counter; }\n"
    "int exported(int x) { printf(\"%d\\n\", x); return helper(x) + imported_fn(x) + ext_data + ro_value; }\n";

const char* const sample_cpp =
    "inline int twice(int x) { return 2 * x; }\n"
    "template <class T> T add(T a, T b) { return a + b; }\n"
    "int use(int y) { return twice(y) + add(y, 1) + (int)add(1.0, 2.0); }\n";

const char* const sample_s =
    ".text\n.globl f1\nf1: ret\n.globl f2\nf2: ret\n"
    ".data\n.globl d1\nd1: .long 1\nlocal_d: .long 2\n"
    ".section .rdata,\"dr\"\nr1: .long 2\n"
    ".comm c1,8\n.weak w1\n.globl u1\n.long u1\n";

// "letter name" lines, sorted, as our object lists them (nm's view).
std::vector<std::string> our_nm(const std::string& path) {
  auto file = linkscope::mapped_file::open(path);
  REQUIRE(file);
  auto obj = coff::object::parse(file->bytes());
  REQUIRE(obj);
  std::vector<std::string> out;
  auto r = obj->for_each_entry([&](const coff::symbol_entry& e) {
    auto c = obj->nm_letter(e);
    REQUIRE(c);
    if (*c != 0) out.push_back(std::string(1, *c) + " " + std::string(e.name));
  });
  REQUIRE(r);
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> binutils_nm(const std::string& path) {
  auto r = capture("x86_64-w64-mingw32-nm " + shell_quote(path));
  REQUIRE(r.status == 0);
  std::vector<std::string> out;
  for (const std::string& line : lines(r.out)) {
    if (line.size() < 19) continue;
    out.push_back(line.substr(17));
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string patched(const std::string& bytes, std::size_t offset, const void* data, std::size_t n) {
  std::string copy = bytes;
  REQUIRE(offset + n <= copy.size());
  std::memcpy(copy.data() + offset, data, n);
  return copy;
}

template <class T>
T get(const std::string& bytes, std::size_t offset) {
  T v{};
  REQUIRE(offset + sizeof(T) <= bytes.size());
  std::memcpy(&v, bytes.data() + offset, sizeof(T));
  return v;
}

bool have_mingw() { return have_tool("x86_64-w64-mingw32-nm") && have_tool("x86_64-w64-mingw32-as"); }

}  // namespace

TEST_CASE("COFF object from clang: symbols and nm letters equal binutils nm", "[coff]") {
  if (!have_mingw()) { WARN("x86_64-w64-mingw32 binutils missing"); return; }
  const std::string dir = scratch_dir("coff_clang");
  write_file(dir + "/a.c", sample_c);
  REQUIRE(run_in(dir, "clang-14 --target=x86_64-pc-windows-msvc -c a.c -o a.obj") == 0);
  const auto ours = our_nm(dir + "/a.obj");
  const auto theirs = binutils_nm(dir + "/a.obj");
  CHECK(ours == theirs);
  CHECK(theirs.size() > 10);

  // The symbol_source adapter: globals and undefined references.
  auto file = linkscope::mapped_file::open(dir + "/a.obj");
  REQUIRE(file);
  auto obj = coff::object::parse(file->bytes());
  REQUIRE(obj);
  CHECK(obj->machine() == coff::machine::amd64);
  CHECK(obj->form() == coff::object_form::standard);
  auto table = linkscope::symbol_table::from(*obj);
  REQUIRE(table);
  std::set<std::string> undefined, defined_globals;
  for (const auto& s : *table) {
    if (!s.defined) undefined.insert(std::string(s.name));
    else if (s.is_global() && s.kind != linkscope::symbol_kind::section) defined_globals.insert(std::string(s.name));
  }
  std::set<std::string> nm_undefined, nm_defined;
  for (const std::string& l : theirs) {
    if (l[0] == 'U') nm_undefined.insert(l.substr(2));
    else if (l[0] >= 'A' && l[0] <= 'Z') nm_defined.insert(l.substr(2));
  }
  CHECK(undefined == nm_undefined);
  CHECK(defined_globals == nm_defined);
  CHECK(undefined.count("__imp_imported_fn") == 1);

  // Section-definition aux records: length equals the section's raw size.
  int checked = 0;
  REQUIRE(obj->for_each_entry([&](const coff::symbol_entry& e) {
    if (!e.is_section_definition()) return;
    auto def = e.section_definition();
    REQUIRE(def);
    auto sec = obj->section_at(static_cast<std::uint32_t>(e.section_number));
    REQUIRE(sec);
    CHECK(sec->name == e.name);
    CHECK(def->length == sec->header.size_of_raw_data);
    ++checked;
  }));
  CHECK(checked >= 3);
}

TEST_CASE("COFF COMDAT selections equal llvm-readobj", "[coff]") {
  const std::string dir = scratch_dir("coff_comdat");
  write_file(dir + "/c.cpp", sample_cpp);
  REQUIRE(run_in(dir, "clang-14 --target=x86_64-pc-windows-msvc -c c.cpp -o c.obj") == 0);
  // llvm-readobj prints, per section symbol with an aux record, "Selection: Any" etc.
  auto ro = capture("cd " + shell_quote(dir) + " && llvm-readobj-14 --symbols c.obj");
  REQUIRE(ro.status == 0);
  std::multiset<std::string> theirs;
  std::istringstream in(ro.out);
  std::string line;
  while (std::getline(in, line)) {
    auto p = line.find("Selection: ");
    if (p == std::string::npos) continue;
    std::string sel = line.substr(p + 11);
    sel = sel.substr(0, sel.find(' '));
    if (sel != "0x0") theirs.insert(sel);
  }
  auto file = linkscope::mapped_file::open(dir + "/c.obj");
  REQUIRE(file);
  auto obj = coff::object::parse(file->bytes());
  REQUIRE(obj);
  std::multiset<std::string> ours;
  REQUIRE(obj->for_each_entry([&](const coff::symbol_entry& e) {
    auto s = e.selection();
    if (s == coff::comdat_selection::none) return;
    static const char* names[] = {"", "NoDuplicates", "Any", "SameSize", "ExactMatch", "Associative", "Largest", "Newest"};
    ours.insert(names[static_cast<int>(s)]);
  }));
  CHECK(!theirs.empty());
  CHECK(ours == theirs);
}

TEST_CASE("bigobj and gas objects: weak externals, commons, nm parity", "[coff]") {
  if (!have_mingw()) { WARN("x86_64-w64-mingw32 binutils missing"); return; }
  const std::string dir = scratch_dir("coff_bigobj");
  write_file(dir + "/s.s", sample_s);
  REQUIRE(run_in(dir, "x86_64-w64-mingw32-as -mbig-obj s.s -o big.obj && x86_64-w64-mingw32-as s.s -o small.obj") == 0);
  for (const char* name : {"big.obj", "small.obj"}) {
    INFO(name);
    const std::string path = dir + "/" + name;
    CHECK(our_nm(path) == binutils_nm(path));
    auto file = linkscope::mapped_file::open(path);
    REQUIRE(file);
    auto obj = coff::object::parse(file->bytes());
    REQUIRE(obj);
    CHECK(obj->form() == (std::string(name) == "big.obj" ? coff::object_form::bigobj : coff::object_form::standard));
    bool saw_weak = false, saw_common = false;
    REQUIRE(obj->for_each_entry([&](const coff::symbol_entry& e) {
      if (e.name == "w1") {
        auto w = e.weak_external();
        REQUIRE(w);
        auto target = obj->symbol_at(w->tag_index);
        REQUIRE(target);  // the default symbol exists
        saw_weak = true;
      }
      if (e.name == "c1") {
        CHECK(e.is_common());
        CHECK(e.value == 8);
        saw_common = true;
      }
    }));
    CHECK(saw_weak);
    CHECK(saw_common);
  }
  // The bigobj header as the spec gives it.
  const std::string big = read_file(dir + "/big.obj");
  CHECK(get<std::uint16_t>(big, 2) == 0xffff);
  CHECK(coff::is_bigobj(byte_view(std::string_view(big))));
}

TEST_CASE("COFF bad input: every malformed case is a clear error", "[coff][bad]") {
  // Built once: Catch2 re-runs the test case from the top for every SECTION.
  static const std::string good = [] {
    const std::string dir = scratch_dir("coff_bad");
    write_file(dir + "/a.c", sample_c);
    if (run_in(dir, "clang-14 --target=x86_64-pc-windows-msvc -c a.c -o a.obj") != 0) return std::string();
    return read_file(dir + "/a.obj");
  }();
  REQUIRE(!good.empty());
  auto parse = [](const std::string& bytes) { return coff::object::parse(byte_view(std::string_view(bytes))); };
  auto walk = [](const std::string& bytes) -> linkscope::result<void> {
    auto obj = coff::object::parse(byte_view(std::string_view(bytes)));
    if (!obj) return obj.error();
    return obj->for_each_entry([](const coff::symbol_entry&) {});
  };
  REQUIRE(parse(good));
  REQUIRE(walk(good));
  const auto symtab = get<std::uint32_t>(good, 8);
  const auto nsyms = get<std::uint32_t>(good, 12);

  SECTION("truncated file header") {
    auto r = parse(good.substr(0, 10));
    REQUIRE(!r);
    CHECK(r.error().code == errc::truncated);
  }
  SECTION("section count past the end of the file") {
    const std::uint16_t many = 0x7fff;
    auto r = parse(patched(good, 2, &many, 2));
    REQUIRE(!r);
    CHECK(r.error().code == errc::truncated);
    CHECK(std::string(r.error().message) == "section table past end of file");
  }
  SECTION("symbol table past the end") {
    const std::uint32_t huge = 0x10000000;
    auto r = parse(patched(good, 12, &huge, 4));
    REQUIRE(!r);
    CHECK(std::string(r.error().message) == "symbol table past end of file");
  }
  SECTION("symbol section index out of range") {
    // Find a symbol with a positive section number and point it at 0x7000.
    std::size_t at = 0;
    for (std::uint32_t i = 0; i < nsyms; ++i) {
      const std::size_t off = symtab + i * 18;
      if (get<std::int16_t>(good, off + 12) > 0) { at = off; break; }
    }
    REQUIRE(at != 0);
    const std::int16_t bad = 0x7000;
    auto r = walk(patched(good, at + 12, &bad, 2));
    REQUIRE(!r);
    CHECK(r.error().code == errc::out_of_range);
    CHECK(std::string(r.error().message) == "symbol section index out of range");
    CHECK(r.error().offset == at);
  }
  SECTION("section index out of range via section_at") {
    auto obj = parse(good);
    REQUIRE(obj);
    auto s = obj->section_at(obj->section_count() + 1);
    REQUIRE(!s);
    CHECK(s.error().code == errc::out_of_range);
    auto sym = obj->symbol_at(nsyms);
    REQUIRE(!sym);
    CHECK(std::string(sym.error().message) == "symbol index out of range");
  }
  SECTION("string-table offset past end") {
    const unsigned char name[8] = {0, 0, 0, 0, 0xff, 0xff, 0xff, 0x0f};
    auto r = walk(patched(good, symtab, name, 8));
    REQUIRE(!r);
    CHECK(std::string(r.error().message) == "string table offset past end");
    CHECK(r.error().offset == symtab);
  }
  SECTION("string table size past end") {
    const std::uint32_t size = 0x7fffffff;
    auto r = parse(patched(good, symtab + nsyms * 18, &size, 4));
    REQUIRE(!r);
    CHECK(std::string(r.error().message) == "string table past end of file");
  }
  SECTION("aux records past the end of the symbol table") {
    const unsigned char many = 255;
    REQUIRE(nsyms < 200);
    auto r = walk(patched(good, symtab + 17, &many, 1));
    REQUIRE(!r);
    CHECK(std::string(r.error().message) == "aux records past end of symbol table");
  }
  SECTION("unknown anonymous header") {
    std::string bytes(64, '\0');
    bytes[2] = '\xff';
    bytes[3] = '\xff';
    bytes[4] = 1;  // version 1 (not import, not bigobj)
    auto r = parse(bytes);
    REQUIRE(!r);
    CHECK(r.error().code == errc::bad_magic);
  }
}

namespace {

struct objdump_import {
  std::string dll;
  std::string name;  // empty for ordinal
  int ordinal = -1;
  int hint = -1;
  bool operator<(const objdump_import& o) const {
    return std::tie(dll, name, ordinal, hint) < std::tie(o.dll, o.name, o.ordinal, o.hint);
  }
  bool operator==(const objdump_import& o) const {
    return dll == o.dll && name == o.name && ordinal == o.ordinal && hint == o.hint;
  }
};

// The import table as x86_64-w64-mingw32-objdump -p prints it.
std::vector<objdump_import> objdump_imports(const std::string& path) {
  auto r = capture("x86_64-w64-mingw32-objdump -p " + shell_quote(path));
  REQUIRE(r.status == 0);
  std::vector<objdump_import> out;
  std::string dll;
  bool in_table = false;
  for (const std::string& line : lines(r.out)) {
    if (line.find("DLL Name: ") != std::string::npos) {
      dll = line.substr(line.find("DLL Name: ") + 10);
      in_table = false;
      continue;
    }
    if (line.find("vma:  Hint/Ord Member-Name") != std::string::npos) { in_table = true; continue; }
    if (line.empty() || line[0] != '\t') { in_table = false; continue; }
    if (!in_table) continue;
    std::istringstream fields(line);
    std::string vma, second, third;
    fields >> vma >> second >> third;
    objdump_import imp;
    imp.dll = dll;
    if (third == "<none>") {
      imp.ordinal = static_cast<int>(std::stoul(second, nullptr, 16));
    } else {
      imp.hint = std::stoi(second);
      imp.name = third;
    }
    out.push_back(imp);
  }
  return out;
}

}  // namespace

TEST_CASE("PE image imports equal objdump -p; exports equal llvm-readobj", "[pe]") {
  if (!have_tool("x86_64-w64-mingw32-gcc") || !have_tool("x86_64-w64-mingw32-dlltool")) {
    WARN("x86_64-w64-mingw32-gcc missing: PE link test skipped");
    return;
  }
  // Built once: Catch2 re-runs the test case from the top for every SECTION.
  static const std::string dir = [] {
    const std::string d = scratch_dir("pe_link");
    return d;
  }();
  static bool built = false;
  if (!built) {
  for (const char* n : {"alpha", "beta", "gamma"}) {
    const std::string name = n;
    write_file(dir + "/" + name + ".def", "LIBRARY " + name + ".dll\nEXPORTS\n  " + name + "_fn\n  " + name +
                                              "_other\n  " + name + "_var DATA\n  " + name + "_ord @42 NONAME\n");
    REQUIRE(run_in(dir, "x86_64-w64-mingw32-dlltool -d " + name + ".def -l lib" + name + ".a -D " + name + ".dll") == 0);
  }
  write_file(dir + "/main.c",
             "extern int alpha_fn(void); extern int beta_fn(void); extern int gamma_other(void);\n"
             "extern __declspec(dllimport) int beta_var; extern int gamma_ord(void);\n"
             "int main(void) { return alpha_fn() + beta_fn() + gamma_other() + beta_var + gamma_ord(); }\n");
  REQUIRE(run_in(dir, "x86_64-w64-mingw32-gcc -O1 main.c -L. -lalpha -lbeta -lgamma -o main.exe") == 0);
  write_file(dir + "/dll.c", "int one(void){return 1;}\nint two(void){return 2;}\nint three(void){return 3;}\nint var = 4;\n");
  write_file(dir + "/dll.def", "LIBRARY mydll.dll\nEXPORTS\n  one @3\n  two @7 NONAME\n  three\n  var DATA\n  sleepy = KERNEL32.Sleep\n");
  REQUIRE(run_in(dir, "x86_64-w64-mingw32-gcc -shared dll.c dll.def -o mydll.dll") == 0);
  built = true;
  }
  auto file = linkscope::mapped_file::open(dir + "/main.exe");
  REQUIRE(file);
  auto image = pe::image::parse(file->bytes());
  REQUIRE(image);
  CHECK(image->is_pe32_plus());
  auto imports = image->imports();
  REQUIRE(imports);
  std::vector<objdump_import> ours;
  for (const auto& dll : *imports)
    for (const auto& fn : dll.functions)
      ours.push_back({std::string(dll.name), std::string(fn.name), fn.ordinal ? int(*fn.ordinal) : -1,
                      fn.ordinal ? -1 : int(fn.hint)});
  const auto theirs = objdump_imports(dir + "/main.exe");
  CHECK(theirs.size() > 10);
  CHECK(ours == theirs);  // same order, too

  // A DLL with named, NONAME and forwarded exports.
  auto dfile = linkscope::mapped_file::open(dir + "/mydll.dll");
  REQUIRE(dfile);
  auto dll = pe::image::parse(dfile->bytes());
  REQUIRE(dll);
  auto exports = dll->exports();
  REQUIRE(exports);
  auto name = dll->export_name();
  REQUIRE(name);
  CHECK(*name == "mydll.dll");
  // objdump -p: "Export Address Table -- Ordinal Base N" rows
  // "[   i] +base[ ord] rva Export RVA" (or "Forwarder RVA -- target"), and
  // "[Ordinal/Name Pointer] Table" rows "[ ord-base] name".
  auto od = capture("x86_64-w64-mingw32-objdump -p " + shell_quote(dir + "/mydll.dll"));
  REQUIRE(od.status == 0);
  std::map<int, std::string> targets;
  std::map<int, std::string> names;
  int base = -1;
  int table = 0;
  for (const std::string& line : lines(od.out)) {
    if (line.rfind("Export Address Table -- Ordinal Base ", 0) == 0) { base = std::stoi(line.substr(37)); table = 1; continue; }
    if (line == "[Ordinal/Name Pointer] Table") { table = 2; continue; }
    if (line.empty()) { table = 0; continue; }
    if (table == 1 && line.find("+base[") != std::string::npos) {
      const int ord = std::stoi(line.substr(line.find("+base[") + 6));
      std::istringstream rest(line.substr(line.find(']', line.find("+base[")) + 1));
      std::string rva;
      rest >> rva;
      const auto fwd = line.find("Forwarder RVA -- ");
      char buf[32];
      std::snprintf(buf, sizeof buf, "0x%lX", std::stoul(rva, nullptr, 16));
      targets[ord] = fwd != std::string::npos ? line.substr(fwd + 17) : std::string(buf);
    } else if (table == 2 && line.find('[') != std::string::npos) {
      const int idx = std::stoi(line.substr(line.find('[') + 1));
      names[idx + base] = line.substr(line.find(']') + 2);
    }
  }
  std::set<std::string> theirs_exports, ours_exports;
  for (const auto& [ord, target] : targets) theirs_exports.insert(std::to_string(ord) + "|" + names[ord] + "|" + target);
  for (const auto& e : *exports) {
    char rva[32];
    std::snprintf(rva, sizeof rva, "0x%X", e.rva);
    ours_exports.insert(std::to_string(e.ordinal) + "|" + std::string(e.name) + "|" +
                        (e.forwarder.empty() ? std::string(rva) : std::string(e.forwarder)));
  }
  CHECK(theirs_exports.size() == 5);
  CHECK(ours_exports == theirs_exports);

  // Bad input, patched from the real DLL.
  const std::string good = read_file(dir + "/mydll.dll");
  const auto pe_at = get<std::uint32_t>(good, 0x3c);
  const std::size_t opt = pe_at + 4 + 20;
  REQUIRE(get<std::uint16_t>(good, opt) == 0x20b);
  const std::size_t export_dir = opt + 112;
  SECTION("export directory RVA outside every section") {
    const std::uint32_t rva = 0x7ff00000;
    const std::string bytes = patched(good, export_dir, &rva, 4);
    auto img = pe::image::parse(byte_view(std::string_view(bytes)));
    REQUIRE(img);
    auto r = img->exports();
    REQUIRE(!r);
    CHECK(r.error().code == errc::out_of_range);
    CHECK(std::string(r.error().message) == "export directory RVA outside every section");
  }
  const auto export_rva = get<std::uint32_t>(good, export_dir);
  auto img = pe::image::parse(byte_view(std::string_view(good)));
  REQUIRE(img);
  auto ed_view = img->at_rva(export_rva, 40, 0);
  REQUIRE(ed_view);
  const std::size_t ed_off = static_cast<std::size_t>(ed_view->base());
  SECTION("export address table outside every section") {
    const std::uint32_t rva = 0x7ff00000;
    const std::string bytes = patched(good, ed_off + 28, &rva, 4);
    auto r = pe::image::parse(byte_view(std::string_view(bytes)))->exports();
    REQUIRE(!r);
    CHECK(std::string(r.error().message) == "export address table RVA outside every section");
    CHECK(r.error().offset == ed_off + 28);
  }
  SECTION("ordinal base overflow") {
    const std::uint32_t base = 0xfffffff0u;
    const std::string bytes = patched(good, ed_off + 16, &base, 4);
    auto r = pe::image::parse(byte_view(std::string_view(bytes)))->exports();
    REQUIRE(!r);
    CHECK(r.error().code == errc::overflow);
    CHECK(std::string(r.error().message) == "export ordinal base overflow");
  }
  SECTION("import directory RVA outside every section") {
    const std::uint32_t rva = 0x7ff00000;
    const std::string bytes = patched(good, export_dir + 8, &rva, 4);
    auto r = pe::image::parse(byte_view(std::string_view(bytes)))->imports();
    REQUIRE(!r);
    CHECK(std::string(r.error().message) == "import directory RVA outside every section");
  }
  SECTION("not a PE") {
    auto r = pe::image::parse(byte_view(std::string_view(good.substr(0, 40))));
    REQUIRE(!r);
    CHECK(r.error().code == errc::truncated);
  }
}

TEST_CASE("PE32 and PE32+ images from lld-link: imports and delay-load imports equal llvm-readobj", "[pe]") {
  if (!have_tool("lld-link-14") || !have_tool("llvm-dlltool-14")) { WARN("lld-link-14 missing"); return; }
  const std::string dir = scratch_dir("pe_delay");
  write_file(dir + "/alpha.def", "LIBRARY alpha.dll\nEXPORTS\n  alpha_fn\n  alpha_ord @9 NONAME\n");
  write_file(dir + "/beta.def", "LIBRARY beta.dll\nEXPORTS\n  beta_fn\n  beta_two @4\n");
  write_file(dir + "/main.c",
             "int alpha_fn(void); int alpha_ord(void); int beta_fn(void); int beta_two(void);\n"
             "int __stdcall mainCRTStartup(void) { return alpha_fn() + alpha_ord() + beta_fn() + beta_two(); }\n");
  write_file(dir + "/helper.c", "void* __stdcall __delayLoadHelper2(void* a, void* b) { (void)a; return b; }\n");
  struct target { const char* machine; const char* triple; const char* dlltool_machine; bool plus; };
  for (const target& t : {target{"x64", "x86_64-pc-windows-msvc", "i386:x86-64", true},
                          target{"x86", "i686-pc-windows-msvc", "i386", false}}) {
    INFO(t.machine);
    const std::string m = t.machine;
    REQUIRE(run_in(dir, std::string("llvm-dlltool-14 -m ") + t.dlltool_machine + " -d alpha.def -l alpha_" + m + ".lib && " +
                            "llvm-dlltool-14 -m " + t.dlltool_machine + " -d beta.def -l beta_" + m + ".lib && " +
                            "clang-14 --target=" + t.triple + " -c main.c -o main_" + m + ".obj && " +
                            "clang-14 --target=" + t.triple + " -c helper.c -o helper_" + m + ".obj && " +
                            "lld-link-14 /machine:" + m + " /entry:mainCRTStartup /subsystem:console /nodefaultlib main_" +
                            m + ".obj helper_" + m + ".obj alpha_" + m + ".lib beta_" + m +
                            ".lib /delayload:alpha.dll /out:main_" + m + ".exe") == 0);
    // llvm-readobj --coff-imports: Import/DelayImport blocks, "Symbol: NAME (hint or ordinal)".
    auto ro = capture("llvm-readobj-14 --coff-imports " + shell_quote(dir + "/main_" + m + ".exe"));
    REQUIRE(ro.status == 0);
    std::vector<std::string> theirs;
    std::string kind, dll;
    for (const std::string& raw : lines(ro.out)) {
      const auto first = raw.find_first_not_of(' ');
      if (first == std::string::npos) continue;
      const std::string line = raw.substr(first);
      const std::size_t indent = first;
      if (indent == 0 && (line == "Import {" || line == "DelayImport {")) kind = line.substr(0, line.size() - 2);
      else if (indent == 2 && line.rfind("Name: ", 0) == 0) dll = line.substr(6);
      else if (line.rfind("Symbol: ", 0) == 0) theirs.push_back(kind + "|" + dll + "|" + line.substr(8));
    }
    auto file = linkscope::mapped_file::open(dir + "/main_" + m + ".exe");
    REQUIRE(file);
    auto image = pe::image::parse(file->bytes());
    REQUIRE(image);
    CHECK(image->is_pe32_plus() == t.plus);
    std::vector<std::string> ours;
    for (int pass = 0; pass < 2; ++pass) {
      auto dlls = pass == 0 ? image->imports() : image->delay_imports();
      REQUIRE(dlls);
      for (const auto& d : *dlls)
        for (const auto& fn : d.functions)
          ours.push_back(std::string(d.delay_load ? "DelayImport" : "Import") + "|" + std::string(d.name) + "|" +
                         std::string(fn.name) + " (" + std::to_string(fn.ordinal ? *fn.ordinal : fn.hint) + ")");
    }
    CHECK(theirs.size() == 4);
    CHECK(ours == theirs);
  }
}
