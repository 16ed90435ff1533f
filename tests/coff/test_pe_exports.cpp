// Tests of linkscope/coff/pe.hpp against the real tools: the header fields,
// the import directory (name + hint, ordinal), the delay-load directory (both
// attribute versions), the export directory (ordinal base, NONAME, DATA,
// forwarders "DLL.Name" and "DLL.#N"), bound imports and the CLR header, on
// PE32 (i686) and PE32+ (x64, arm64).
//
// Fixtures are built here: x86_64-w64-mingw32-gcc and i686-w64-mingw32-gcc
// with a .def file; clang-14 + lld-link-14 for arm64, for ordinal forwarders
// and for delay-load imports (GNU ld 2.40 fills no delay-import directory).
// Expected values come from x86_64-w64-mingw32-objdump -p (i686-... for
// PE32) and llvm-readobj-14 (arm64 exports, delay imports). Wine's real PE
// DLLs, when wine64 is installed, are compared with objdump -p too.
#include <linkscope/coff/pe.hpp>

#include <catch2/catch.hpp>

#include <linkscope/core/mapped_file.hpp>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "support/fixtures.hpp"

using namespace linkscope_test;
namespace pe = linkscope::pe;
using linkscope::byte_view;
using linkscope::errc;
using linkscope::symbol;
using linkscope::symbol_kind;

namespace {

// "#N" (built with append: g++ 12 -O3 warns falsely on "#" + std::string).
std::string sharp(const std::string& n) {
  std::string s("#");
  s.append(n);
  return s;
}

// What objdump -p prints about one image.
struct objdump_view {
  std::map<std::string, std::string> header;         // "Subsystem" -> "00000003"
  std::vector<std::string> imports;                  // "dll|name|hint" or "dll|#ord"
  std::set<std::string> exports;                     // "ord|name|rva-or-forwarder"
  std::string format;                                // "pei-x86-64"
};

objdump_view objdump_p(const std::string& objdump, const std::string& path) {
  auto r = capture(objdump + " -p " + shell_quote(path) + " 2>/dev/null");
  REQUIRE(r.status == 0);
  objdump_view v;
  std::string dll;
  int table = 0;  // 1 import rows, 2 export address table, 3 name table
  int base = 0;
  std::map<int, std::string> targets, names;
  for (const std::string& line : lines(r.out)) {
    if (line.find("file format ") != std::string::npos) v.format = line.substr(line.find("file format ") + 12);
    if (!line.empty() && line[0] != '\t' && line[0] != ' ' && line.find('\t') != std::string::npos && table == 0) {
      const std::string key = line.substr(0, line.find('\t'));
      std::istringstream rest(line.substr(line.find('\t')));
      std::string value;
      rest >> value;
      v.header.emplace(key, value);
    }
    if (line.find("DLL Name: ") != std::string::npos) {
      dll = line.substr(line.find("DLL Name: ") + 10);
      table = 0;
      continue;
    }
    if (line.find("vma:  Hint/Ord Member-Name") != std::string::npos) { table = 1; continue; }
    if (line.rfind("Export Address Table -- Ordinal Base ", 0) == 0) {
      base = std::stoi(line.substr(37));
      table = 2;
      continue;
    }
    if (line == "[Ordinal/Name Pointer] Table") { table = 3; continue; }
    if (line.empty() || (line[0] != '\t' && line[0] != ' ')) { table = 0; continue; }
    if (table == 1) {
      std::istringstream fields(line);
      std::string vma, second, third;
      fields >> vma >> second >> third;
      if (third == "<none>") v.imports.push_back(dll + "|" + sharp(std::to_string(std::stoul(second, nullptr, 16))));
      else v.imports.push_back(dll + "|" + third + "|" + second);
    } else if (table == 2 && line.find("+base[") != std::string::npos) {
      const int ord = std::stoi(line.substr(line.find("+base[") + 6));
      std::istringstream rest(line.substr(line.find(']', line.find("+base[")) + 1));
      std::string rva;
      rest >> rva;
      const auto fwd = line.find("Forwarder RVA -- ");
      char buf[32];
      std::snprintf(buf, sizeof buf, "0x%lX", std::stoul(rva, nullptr, 16));
      targets[ord] = fwd != std::string::npos ? line.substr(fwd + 17) : std::string(buf);
    } else if (table == 3 && line.find('[') != std::string::npos) {
      const int idx = std::stoi(line.substr(line.find('[') + 1));
      names[idx + base] = line.substr(line.find(']') + 2);
    }
  }
  for (const auto& [ord, target] : targets) v.exports.insert(std::to_string(ord) + "|" + names[ord] + "|" + target);
  return v;
}

struct our_view {
  std::vector<std::string> imports;
  std::set<std::string> exports;
};

our_view ours(const pe::image& img) {
  our_view v;
  auto imports = img.imports();
  REQUIRE(imports);
  for (const auto& dll : *imports)
    for (const auto& fn : dll.functions)
      v.imports.push_back(std::string(dll.name) + "|" +
                          (fn.ordinal ? sharp(std::to_string(*fn.ordinal))
                                      : std::string(fn.name) + "|" + std::to_string(fn.hint)));
  auto exports = img.exports();
  REQUIRE(exports);
  for (const auto& e : *exports) {
    char rva[32];
    std::snprintf(rva, sizeof rva, "0x%X", e.rva);
    v.exports.insert(std::to_string(e.ordinal) + "|" + std::string(e.name) + "|" +
                     (e.forwarder.empty() ? std::string(rva) : std::string(e.forwarder)));
  }
  return v;
}

template <class T>
T get(const std::string& bytes, std::size_t offset) {
  T v{};
  REQUIRE(offset + sizeof(T) <= bytes.size());
  std::memcpy(&v, bytes.data() + offset, sizeof(T));
  return v;
}

std::string hex8(unsigned v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%08x", v);
  return buf;
}

void check_header(const pe::image& img, const objdump_view& od) {
  const pe::header_info& h = img.header();
  CHECK(od.header.at("MajorOSystemVersion") == std::to_string(h.major_os_version));
  CHECK(od.header.at("MinorOSystemVersion") == std::to_string(h.minor_os_version));
  CHECK(od.header.at("MajorSubsystemVersion") == std::to_string(h.major_subsystem_version));
  CHECK(od.header.at("MinorSubsystemVersion") == std::to_string(h.minor_subsystem_version));
  CHECK(od.header.at("MajorImageVersion") == std::to_string(h.major_image_version));
  CHECK(od.header.at("MajorLinkerVersion") == std::to_string(h.major_linker_version));
  CHECK(od.header.at("Subsystem") == hex8(h.subsystem));
  CHECK(od.header.at("DllCharacteristics") == hex8(h.dll_characteristics));
  CHECK(od.header.at("Magic") == (h.pe32_plus ? "020b" : "010b"));
}

struct fixtures {
  std::string dir;
  bool mingw64 = false, mingw32 = false, llvm = false;
};

const char* const foo_c =
    "int alpha(int x){return x+1;}\nint beta(int x){return x+2;}\nint gamma_(int x){return x+3;}\n"
    "int foo_data = 42;\n";
const char* const foo_def =
    "LIBRARY foo.dll\nEXPORTS\n  alpha\n  beta @5\n  gamma_ @9 NONAME\n  foo_data DATA\n  sleepy = KERNEL32.Sleep\n";
const char* const app_c =
    "extern int alpha(int); extern int gamma_(int); extern __declspec(dllimport) int foo_data;\n"
    "int main(void){ return alpha(1)+gamma_(2)+foo_data; }\n";

// Built once per run (Catch2 re-enters a test case for every SECTION).
const fixtures& build() {
  static const fixtures f = [] {
    fixtures x;
    x.dir = scratch_dir("pe_exports");
    write_file(x.dir + "/foo.c", foo_c);
    write_file(x.dir + "/foo.def", foo_def);
    write_file(x.dir + "/app.c", app_c);
    if (have_tool("x86_64-w64-mingw32-gcc") && have_tool("x86_64-w64-mingw32-dlltool")) {
      x.mingw64 = run_in(x.dir, "x86_64-w64-mingw32-gcc -shared foo.c foo.def -o foo64.dll && "
                                "x86_64-w64-mingw32-dlltool -d foo.def -l libfoo64.a -D foo.dll && "
                                "x86_64-w64-mingw32-gcc app.c -L. -lfoo64 -o app64.exe") == 0;
    }
    if (have_tool("i686-w64-mingw32-gcc") && have_tool("i686-w64-mingw32-dlltool")) {
      x.mingw32 = run_in(x.dir, "i686-w64-mingw32-gcc -shared foo.c foo.def -o foo32.dll && "
                                "i686-w64-mingw32-dlltool -d foo.def -l libfoo32.a -D foo.dll && "
                                "i686-w64-mingw32-gcc app.c -L. -lfoo32 -o app32.exe") == 0;
    }
    if (have_tool("clang-14") && have_tool("lld-link-14") && have_tool("llvm-dlltool-14")) {
      write_file(x.dir + "/bar.def", "LIBRARY bar.dll\nEXPORTS\n  bar_fn\n  bar_two\n  bar_ord @3 NONAME\n");
      write_file(x.dir + "/dapp.c",
                 "int bar_fn(int); int bar_two(int); int bar_ord(int);\n"
                 "void* __stdcall __delayLoadHelper2(void* d, void** slot) { (void)d; return *slot; }\n"
                 "int mainCRTStartup(void){ return bar_fn(1)+bar_two(2)+bar_ord(3); }\n");
      x.llvm = run_in(x.dir,
                      "llvm-dlltool-14 -m i386:x86-64 -d bar.def -l bar.lib && "
                      "clang-14 --target=x86_64-pc-windows-msvc -c dapp.c -o dapp.obj && "
                      "lld-link-14 /nologo /entry:mainCRTStartup /nodefaultlib /subsystem:console dapp.obj bar.lib "
                      "/delayload:bar.dll /out:dapp.exe && "
                      "clang-14 --target=x86_64-pc-windows-msvc -c foo.c -o foo_x64.obj && "
                      "lld-link-14 /nologo /dll /noentry /nodefaultlib /machine:x64 /export:alpha "
                      "'/export:byord=KERNEL32.#1' /export:sleepy=KERNEL32.Sleep foo_x64.obj /out:fwd.dll && "
                      "clang-14 --target=aarch64-pc-windows-msvc -c foo.c -o foo_a64.obj && "
                      "lld-link-14 /nologo /dll /noentry /nodefaultlib /machine:arm64 /export:alpha /export:beta,@5 "
                      "/export:foo_data,DATA /export:sleepy=KERNEL32.Sleep foo_a64.obj /out:foo_a64.dll") == 0;
    }
    return x;
  }();
  return f;
}

}  // namespace

TEST_CASE("split_forwarder splits at the last dot", "[pe]") {
  auto a = pe::split_forwarder("KERNEL32.Sleep");
  REQUIRE(a);
  CHECK(a->module == "KERNEL32");
  CHECK(a->name == "Sleep");
  auto b = pe::split_forwarder("api-ms-win-core-synch-l1-2-0.WaitOnAddress");
  REQUIRE(b);
  CHECK(b->module == "api-ms-win-core-synch-l1-2-0");
  auto c = pe::split_forwarder("KERNEL32.#17");
  REQUIRE(c);
  CHECK(c->name.empty());
  REQUIRE(c->ordinal);
  CHECK(*c->ordinal == 17);
  CHECK(!pe::split_forwarder("nodot"));
  CHECK(!pe::split_forwarder("K.#70000"));
  CHECK(!pe::split_forwarder("K.#x"));
  CHECK(!pe::split_forwarder(".Name"));
  CHECK(!pe::split_forwarder("K."));
}

TEST_CASE("PE32+ and PE32 (mingw): header, imports and exports equal objdump -p", "[pe]") {
  const fixtures& f = build();
  struct one {
    bool have;
    const char* objdump;
    const char* dll;
    const char* exe;
    bool plus;
    std::uint16_t machine;
  };
  for (const one& c : {one{f.mingw64, "x86_64-w64-mingw32-objdump", "foo64.dll", "app64.exe", true, 0x8664},
                       one{f.mingw32, "i686-w64-mingw32-objdump", "foo32.dll", "app32.exe", false, 0x14c}}) {
    if (!c.have) {
      WARN(std::string(c.objdump) + " toolchain missing: skipped");
      continue;
    }
    for (const char* name : {c.dll, c.exe}) {
      INFO(name);
      auto file = linkscope::mapped_file::open(f.dir + "/" + name);
      REQUIRE(file);
      auto img = pe::image::parse(file->bytes());
      REQUIRE(img);
      CHECK(img->is_pe32_plus() == c.plus);
      CHECK(img->machine() == c.machine);
      CHECK(!img->is_managed());
      const objdump_view od = objdump_p(c.objdump, f.dir + "/" + name);
      check_header(*img, od);
      const our_view v = ours(*img);
      CHECK(v.imports == od.imports);
      CHECK(v.exports == od.exports);
    }
    // The DLL: NONAME, DATA, forwarder, ordinal base 5.
    auto file = linkscope::mapped_file::open(f.dir + "/" + c.dll);
    REQUIRE(file);
    auto img = pe::image::parse(file->bytes());
    REQUIRE(img);
    auto exports = img->exports();
    REQUIRE(exports);
    std::map<std::string, pe::export_entry> by_name;
    bool noname9 = false;
    for (const auto& e : *exports) {
      if (!e.name.empty()) by_name[std::string(e.name)] = e;
      if (e.ordinal == 9 && e.name.empty()) noname9 = true;
    }
    CHECK(noname9);
    CHECK(by_name.at("beta").ordinal == 5);
    CHECK(by_name.at("foo_data").data);
    CHECK(!by_name.at("alpha").data);
    CHECK(by_name.at("sleepy").forwarder == "KERNEL32.Sleep");
    // As a symbol source: foo_data (DATA in the .def, a variable in .data)
    // is an object, the functions and the forwarder are funcs.
    std::map<std::string, symbol_kind> kinds;
    REQUIRE(img->for_each_symbol([&](const symbol& s) {
      if (s.defined) kinds[std::string(s.name)] = s.kind;
    }));
    CHECK(kinds.at("foo_data") == symbol_kind::object);
    CHECK(kinds.at("alpha") == symbol_kind::func);
    CHECK(kinds.at("beta") == symbol_kind::func);
    CHECK(kinds.at("sleepy") == symbol_kind::func);
    // The exe imports gamma_ by ordinal 9 and foo_data (DATA) by name.
    auto efile = linkscope::mapped_file::open(f.dir + "/" + c.exe);
    REQUIRE(efile);
    auto exe = pe::image::parse(efile->bytes());
    REQUIRE(exe);
    auto imports = exe->imports();
    REQUIRE(imports);
    bool by_ordinal = false, data = false;
    for (const auto& d : *imports)
      for (const auto& fn : d.functions) {
        by_ordinal = by_ordinal || (d.name == "foo.dll" && fn.ordinal && *fn.ordinal == 9);
        data = data || (d.name == "foo.dll" && fn.name == "foo_data");
      }
    CHECK(by_ordinal);
    CHECK(data);
  }
}

TEST_CASE("ordinal forwarders and arm64 exports (lld-link) equal objdump -p / llvm-readobj", "[pe]") {
  const fixtures& f = build();
  if (!f.llvm) {
    WARN("clang-14 / lld-link-14 missing: skipped");
    return;
  }
  {
    auto file = linkscope::mapped_file::open(f.dir + "/fwd.dll");
    REQUIRE(file);
    auto img = pe::image::parse(file->bytes());
    REQUIRE(img);
    const objdump_view od = objdump_p("x86_64-w64-mingw32-objdump", f.dir + "/fwd.dll");
    CHECK(ours(*img).exports == od.exports);
    CHECK(od.exports.count("2|byord|KERNEL32.#1") == 1);
    auto exports = img->exports();
    REQUIRE(exports);
    for (const auto& e : *exports)
      if (e.name == "byord") {
        auto t = pe::split_forwarder(e.forwarder);
        REQUIRE(t);
        CHECK(t->module == "KERNEL32");
        REQUIRE(t->ordinal);
        CHECK(*t->ordinal == 1);
      }
  }
  {
    auto file = linkscope::mapped_file::open(f.dir + "/foo_a64.dll");
    REQUIRE(file);
    auto img = pe::image::parse(file->bytes());
    REQUIRE(img);
    CHECK(img->machine() == 0xaa64);
    CHECK(img->is_pe32_plus());
    // llvm-readobj-14 --coff-exports: "Ordinal: N", "Name: X", "RVA: 0x..";
    // it lists unused slots (RVA 0) too, which are no exports.
    auto r = capture("llvm-readobj-14 --coff-exports " + shell_quote(f.dir + "/foo_a64.dll"));
    REQUIRE(r.status == 0);
    std::set<std::string> theirs, mine;
    std::string ord, name;
    for (const std::string& line : lines(r.out)) {
      const auto t = line.find_first_not_of(' ');
      if (t == std::string::npos) continue;
      const std::string l = line.substr(t);
      if (l.rfind("Ordinal: ", 0) == 0) ord = l.substr(9);
      if (l.rfind("Name: ", 0) == 0 || l == "Name:") name = l.size() > 6 ? l.substr(6) : "";
      if (l.rfind("RVA: ", 0) == 0 && l != "RVA: 0x0") theirs.insert(ord + "|" + name + "|" + l.substr(5));
    }
    auto exports = img->exports();
    REQUIRE(exports);
    for (const auto& e : *exports) {
      char rva[32];
      std::snprintf(rva, sizeof rva, "0x%X", e.rva);
      mine.insert(std::to_string(e.ordinal) + "|" + std::string(e.name) + "|" + rva);
    }
    CHECK(theirs.size() == 4);
    CHECK(mine == theirs);
    auto h = capture("llvm-readobj-14 --file-headers " + shell_quote(f.dir + "/foo_a64.dll") +
                     " | grep -E 'MajorOperatingSystemVersion|Subsystem:'");
    CHECK(h.out.find("MajorOperatingSystemVersion: " + std::to_string(img->header().major_os_version)) !=
          std::string::npos);
    CHECK(h.out.find("(0x" + std::to_string(img->header().subsystem) + ")") != std::string::npos);
  }
}

TEST_CASE("delay-load imports, both attribute versions, equal llvm-readobj", "[pe]") {
  const fixtures& f = build();
  if (!f.llvm) {
    WARN("clang-14 / lld-link-14 missing: skipped");
    return;
  }
  const std::string path = f.dir + "/dapp.exe";
  auto r = capture("llvm-readobj-14 --coff-imports " + shell_quote(path));
  REQUIRE(r.status == 0);
  // "Name: bar.dll", "Attributes: 0x1", then "Symbol: bar_fn (0)" /
  // "Ordinal: 3" per import.
  std::vector<std::string> theirs;
  std::string attributes;
  for (const std::string& line : lines(r.out)) {
    const auto t = line.find_first_not_of(' ');
    if (t == std::string::npos) continue;
    const std::string l = line.substr(t);
    if (l.rfind("Attributes: ", 0) == 0) attributes = l.substr(12);
    // "Symbol: name (hint)", or "Symbol:  (N)" for an import by ordinal N
    if (l.rfind("Symbol: ", 0) == 0) {
      const std::string name = l.substr(8, l.find(" (") - 8);
      const std::string paren = l.substr(l.find(" (") + 2, l.find(')') - l.find(" (") - 2);
      theirs.push_back(name.empty() ? sharp(paren) : name);
    }
  }
  CHECK(attributes == "0x1");
  REQUIRE(theirs.size() == 3);
  const std::string good = read_file(path);
  auto check = [&](const std::string& bytes, unsigned want_attributes) {
    auto img = pe::image::parse(byte_view(std::string_view(bytes)));
    REQUIRE(img);
    auto normal = img->imports();
    REQUIRE(normal);
    CHECK(normal->empty());
    auto delayed = img->delay_imports();
    REQUIRE(delayed);
    REQUIRE(delayed->size() == 1);
    const auto& dll = (*delayed)[0];
    CHECK(dll.name == "bar.dll");
    CHECK(dll.delay_load);
    CHECK(dll.delay_attributes == want_attributes);
    std::vector<std::string> mine;
    for (const auto& fn : dll.functions)
      mine.push_back(fn.ordinal ? sharp(std::to_string(*fn.ordinal)) : std::string(fn.name));
    CHECK(mine == theirs);
  };
  check(good, 1);  // the VA form (attributes 0) is checked on PE32 below
}

TEST_CASE("delay-load VA form (attributes 0) on a PE32 image", "[pe]") {
  const fixtures& f = build();
  if (!f.llvm) return;
  const std::string dir = f.dir;
  static const bool built =
      run_in(dir, "llvm-dlltool-14 -m i386 -d bar.def -l bar32.lib && "
                  "clang-14 --target=i686-pc-windows-msvc -c dapp.c -o dapp32.obj && "
                  "lld-link-14 /nologo /entry:mainCRTStartup /nodefaultlib /subsystem:console /machine:x86 "
                  "/safeseh:no dapp32.obj bar32.lib /delayload:bar.dll /out:dapp32.exe") == 0;
  if (!built) {
    WARN("i686 lld-link delay-load fixture failed: skipped");
    return;
  }
  const std::string good = read_file(dir + "/dapp32.exe");
  auto img = pe::image::parse(byte_view(std::string_view(good)));
  REQUIRE(img);
  CHECK(!img->is_pe32_plus());
  auto rva_form = img->delay_imports();
  REQUIRE(rva_form);
  REQUIRE(rva_form->size() == 1);
  // Rewrite the descriptor and name table to VAs, clear attribute bit 0.
  const auto d = img->directory(13);
  auto desc = img->at_rva(d.virtual_address, 32, 0);
  REQUIRE(desc);
  std::string old = good;
  const std::size_t at = static_cast<std::size_t>(desc->base());
  const auto base = static_cast<std::uint32_t>(img->image_base());
  auto get32 = [&](std::size_t off) {
    std::uint32_t v;
    std::memcpy(&v, old.data() + off, 4);
    return v;
  };
  auto put32 = [&](std::size_t off, std::uint32_t v) { std::memcpy(&old[off], &v, 4); };
  put32(at, 0);
  for (int field = 1; field < 6; ++field)
    if (get32(at + 4 * field) != 0) put32(at + 4 * field, get32(at + 4 * field) + base);
  auto name_table = img->at_rva(get32(at + 16) - base, 4, 0);
  REQUIRE(name_table);
  for (std::size_t e = static_cast<std::size_t>(name_table->base());; e += 4) {
    const std::uint32_t v = get32(e);
    if (v == 0) break;
    if ((v & 0x80000000u) == 0) put32(e, v + base);
  }
  auto patched = pe::image::parse(byte_view(std::string_view(old)));
  REQUIRE(patched);
  auto va_form = patched->delay_imports();
  REQUIRE(va_form);
  REQUIRE(va_form->size() == 1);
  CHECK((*va_form)[0].delay_attributes == 0);
  CHECK((*va_form)[0].name == (*rva_form)[0].name);
  REQUIRE((*va_form)[0].functions.size() == (*rva_form)[0].functions.size());
  for (std::size_t i = 0; i < (*va_form)[0].functions.size(); ++i) {
    CHECK((*va_form)[0].functions[i].name == (*rva_form)[0].functions[i].name);
    CHECK((*va_form)[0].functions[i].ordinal == (*rva_form)[0].functions[i].ordinal);
  }
}

TEST_CASE("bound imports and the CLR header, patched into a real DLL", "[pe]") {
  const fixtures& f = build();
  if (!f.mingw64) return;
  const std::string good = read_file(f.dir + "/foo64.dll");
  auto img = pe::image::parse(byte_view(std::string_view(good)));
  REQUIRE(img);
  auto none = img->bound_imports();
  REQUIRE(none);
  CHECK(none->empty());
  const auto pe_at = get<std::uint32_t>(good, 0x3c);
  const std::size_t opt = pe_at + 4 + 20;
  const std::size_t dirs = opt + 112;
  const std::size_t nsec = get<std::uint16_t>(good, pe_at + 6);
  const std::size_t sections_end = opt + get<std::uint16_t>(good, pe_at + 4 + 16) + 40 * nsec;
  REQUIRE(sections_end + 80 <= get<std::uint32_t>(good, opt + 60));  // room in SizeOfHeaders
  // The table: KERNEL32.dll with one forwarder ref to NTDLL.DLL, then msvcrt.dll.
  std::string table(80, '\0');
  auto put16 = [&](std::size_t off, std::uint16_t v) { std::memcpy(&table[off], &v, 2); };
  auto put32 = [&](std::size_t off, std::uint32_t v) { std::memcpy(&table[off], &v, 4); };
  put32(0, 0x11111111); put16(4, 32); put16(6, 1);
  put32(8, 0x22222222); put16(12, 45);
  put32(16, 0x33333333); put16(20, 55);
  const char names[] = "KERNEL32.dll\0NTDLL.DLL\0msvcrt.dll";
  table.replace(32, sizeof names, names, sizeof names);
  std::string bytes = good;
  bytes.replace(sections_end, 80, table);
  const std::uint32_t where[2] = {static_cast<std::uint32_t>(sections_end), 80};
  std::memcpy(&bytes[dirs + 11 * 8], where, 8);
  auto bound_img = pe::image::parse(byte_view(std::string_view(bytes)));
  REQUIRE(bound_img);
  auto bound = bound_img->bound_imports();
  REQUIRE(bound);
  REQUIRE(bound->size() == 3);
  CHECK((*bound)[0].module == "KERNEL32.dll");
  CHECK((*bound)[0].time_date_stamp == 0x11111111u);
  CHECK((*bound)[1].module == "NTDLL.DLL");
  CHECK((*bound)[1].forwarder_ref);
  CHECK((*bound)[2].module == "msvcrt.dll");
  CHECK(!(*bound)[2].forwarder_ref);
  // objdump -p sees the same directory entry.
  write_file(f.dir + "/bound.dll", bytes);
  auto od = capture("x86_64-w64-mingw32-objdump -p " + shell_quote(f.dir + "/bound.dll") + " | grep 'Entry b'");
  CHECK(od.out.find("Bound Import Directory") != std::string::npos);
  SECTION("a name offset past the table is an error with the offset") {
    std::string bad = bytes;
    const std::uint16_t far = 200;
    std::memcpy(&bad[sections_end + 4], &far, 2);
    auto r = pe::image::parse(byte_view(std::string_view(bad)))->bound_imports();
    REQUIRE(!r);
    CHECK(r.error().offset == sections_end + 200);
  }
  SECTION("an unterminated table is an error") {
    // 24 bytes: three descriptors whose names (offsets 0, 4, 8: inside the
    // descriptors themselves) are short strings, and no all-zero descriptor.
    std::string bad = bytes;
    const std::uint16_t zero = 0, none = 0;
    std::memcpy(&bad[sections_end + 4], &zero, 2);
    std::memcpy(&bad[sections_end + 6], &none, 2);
    std::memcpy(&bad[sections_end + 12], &zero, 2);
    std::memcpy(&bad[sections_end + 20], &zero, 2);
    const std::uint32_t small[2] = {static_cast<std::uint32_t>(sections_end), 24};
    std::memcpy(&bad[dirs + 11 * 8], small, 8);
    auto r = pe::image::parse(byte_view(std::string_view(bad)))->bound_imports();
    REQUIRE(!r);
    CHECK(r.error().code == errc::malformed);
  }
  SECTION("a CLR header makes the image managed") {
    // Point directory 14 at 24 bytes of .rdata-like data: the export
    // directory's bytes serve, they only have to be inside a section.
    std::string managed = good;
    const auto exp = img->directory(0);
    std::uint32_t ent[2] = {exp.virtual_address, 72};
    std::memcpy(&managed[dirs + 14 * 8], ent, 8);
    auto m = pe::image::parse(byte_view(std::string_view(managed)));
    REQUIRE(m);
    CHECK(m->is_managed());
    CHECK(m->clr());
    write_file(f.dir + "/managed.dll", managed);
    auto od2 = capture("x86_64-w64-mingw32-objdump -p " + shell_quote(f.dir + "/managed.dll") + " | grep 'Entry e'");
    CHECK(od2.out.find(hex8(exp.virtual_address)) != std::string::npos);
    std::uint32_t outside[2] = {0x7ff00000u, 72};
    std::memcpy(&managed[dirs + 14 * 8], outside, 8);
    auto bad = pe::image::parse(byte_view(std::string_view(managed)))->clr();
    REQUIRE(!bad);
    CHECK(bad.error().offset == dirs + 14 * 8);
  }
}

TEST_CASE("wine's PE DLLs: imports and exports equal objdump -p", "[pe][wine]") {
  const std::string root = "/usr/lib/x86_64-linux-gnu/wine/x86_64-windows";
  if (!std::filesystem::is_directory(root) || !have_tool("x86_64-w64-mingw32-objdump")) {
    WARN("wine64 (Debian package) missing: skipped");
    return;
  }
  std::size_t checked = 0;
  for (const char* name : {"kernel32.dll", "kernelbase.dll", "ntdll.dll", "ucrtbase.dll", "msvcrt.dll",
                           "vcruntime140.dll", "msvcp140.dll", "user32.dll", "advapi32.dll", "apisetschema.dll",
                           "ws2_32.dll", "ole32.dll"}) {
    const std::string path = root + "/" + name;
    if (!std::filesystem::exists(path)) continue;
    INFO(name);
    auto file = linkscope::mapped_file::open(path);
    REQUIRE(file);
    auto img = pe::image::parse(file->bytes());
    REQUIRE(img);
    CHECK(img->machine() == 0x8664);
    const objdump_view od = objdump_p("x86_64-w64-mingw32-objdump", path);
    check_header(*img, od);
    const our_view v = ours(*img);
    CHECK(v.imports == od.imports);
    CHECK(v.exports == od.exports);
    ++checked;
  }
  CHECK(checked >= 10);
}

TEST_CASE("the RT_MANIFEST resource and its dependent assemblies (windres), against llvm-readobj", "[pe]") {
  const fixtures& f = build();
  if (!f.mingw64 || !have_tool("x86_64-w64-mingw32-windres")) {
    WARN("x86_64-w64-mingw32-windres missing: skipped");
    return;
  }
  const std::string manifest =
      "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n"
      "<assembly xmlns=\"urn:schemas-microsoft-com:asm.v1\" manifestVersion=\"1.0\">\n"
      "  <dependency>\n    <dependentAssembly>\n"
      "      <assemblyIdentity type=\"win32\" name=\"Microsoft.VC90.CRT\" version=\"9.0.21022.8\" "
      "processorArchitecture=\"amd64\" publicKeyToken=\"1fc8b3b9a1e18e3b\"></assemblyIdentity>\n"
      "    </dependentAssembly>\n  </dependency>\n"
      "  <dependency>\n    <dependentAssembly>\n"
      "      <assemblyIdentity type='win32' name='Microsoft.Windows.Common-Controls' version='6.0.0.0' "
      "processorArchitecture='*' publicKeyToken='6595b64144ccf1df' language='*' />\n"
      "    </dependentAssembly>\n  </dependency>\n</assembly>\n";
  write_file(f.dir + "/app.manifest", manifest);
  write_file(f.dir + "/man.rc", "2 24 \"app.manifest\"\n");
  REQUIRE(run_in(f.dir, "x86_64-w64-mingw32-windres man.rc -O coff -o man.o && "
                        "x86_64-w64-mingw32-gcc -shared foo.c man.o -o man.dll") == 0);
  auto file = linkscope::mapped_file::open(f.dir + "/man.dll");
  REQUIRE(file);
  auto img = pe::image::parse(file->bytes());
  REQUIRE(img);
  auto m = img->manifests();
  REQUIRE(m);
  REQUIRE(m->size() == 1);
  const std::string_view text(reinterpret_cast<const char*>((*m)[0].data()), (*m)[0].size());
  CHECK(text == manifest);
  // llvm-readobj-14 --coff-resources: "Type: MANIFEST (ID 24)", "Name: (ID 2)", "DataSize: N".
  auto r = capture("llvm-readobj-14 --coff-resources " + shell_quote(f.dir + "/man.dll"));
  CHECK(r.out.find("Type: MANIFEST (ID 24)") != std::string::npos);
  CHECK(r.out.find("Name: (ID 2)") != std::string::npos);
  CHECK(r.out.find("DataSize: " + std::to_string(manifest.size())) != std::string::npos);
  const auto deps = pe::manifest_dependencies(text);
  REQUIRE(deps.size() == 2);
  CHECK(deps[0].name == "Microsoft.VC90.CRT");
  CHECK(deps[0].version == "9.0.21022.8");
  CHECK(deps[0].processor_architecture == "amd64");
  CHECK(deps[0].public_key_token == "1fc8b3b9a1e18e3b");
  CHECK(deps[1].name == "Microsoft.Windows.Common-Controls");
  CHECK(deps[1].language == "*");
  // No resources at all: no manifest, no error.
  auto plain = linkscope::mapped_file::open(f.dir + "/foo64.dll");
  REQUIRE(plain);
  auto none = pe::image::parse(plain->bytes())->manifests();
  REQUIRE(none);
  CHECK(none->empty());
  // A data entry pointing outside every section is an error at its offset.
  std::string bad = read_file(f.dir + "/man.dll");
  auto rsrc = img->at_rva(img->directory(2).virtual_address, 0x58, 0);
  REQUIRE(rsrc);
  // The tree written by windres: root, type, name tables (0x18 each), data entry at 0x48.
  const std::size_t data_entry = static_cast<std::size_t>(rsrc->base()) + 0x48;
  const std::uint32_t far = 0x7ff00000u;
  std::memcpy(&bad[data_entry], &far, 4);
  auto e = pe::image::parse(byte_view(std::string_view(bad)))->manifests();
  REQUIRE(!e);
  CHECK(std::string(e.error().message) == "resource data RVA outside every section");
  CHECK(e.error().offset == data_entry);
}
