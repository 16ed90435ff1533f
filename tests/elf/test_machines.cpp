// Tests of what elf/ answers per machine and per file kind: elf::identify
// (file.hpp) against readelf -h; the ld.so relocation classes
// (relocations.hpp, elf_machine_type_class) against readelf -r of cross
// objects made with clang --target=...; the .dynsym count (symbols.hpp) from
// 8-byte DT_HASH words (s390x, binutils-s390x-linux-gnu) against readelf.
#include <linkscope/elf/file.hpp>
#include <linkscope/elf/dynamic.hpp>
#include <linkscope/elf/relocations.hpp>
#include <linkscope/elf/symbols.hpp>

#include <catch2/catch.hpp>

#include <linkscope/core/mapped_file.hpp>

#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "support/fixtures.hpp"

using namespace linkscope;
using namespace linkscope_test;

namespace {

std::string readelf(const std::string& args, const std::string& file) {
  return capture("LC_ALL=C readelf " + args + " " + shell_quote(file) + " 2>/dev/null").out;
}

// The value after "Key:" on readelf -h's line for Key.
std::string header_field(const std::string& text, const std::string& key) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string k = line.substr(0, colon);
    k.erase(0, k.find_first_not_of(' '));
    if (k != key) continue;
    std::string v = line.substr(colon + 1);
    v.erase(0, v.find_first_not_of(' '));
    return v;
  }
  return {};
}

// readelf -h's "Machine:" names (binutils readelf.c get_machine_name).
const std::map<std::string, u16>& machine_numbers() {
  static const std::map<std::string, u16> m = {
      {"Advanced Micro Devices X86-64", elf::EM_X86_64}, {"Intel 80386", elf::EM_386},
      {"AArch64", elf::EM_AARCH64},                      {"ARM", elf::EM_ARM},
      {"RISC-V", elf::EM_RISCV},                         {"PowerPC64", elf::EM_PPC64},
      {"PowerPC", elf::EM_PPC},                          {"IBM S/390", elf::EM_S390},
      {"MIPS R3000", elf::EM_MIPS},                      {"Sparc v9", elf::EM_SPARCV9},
  };
  return m;
}

std::string kind_of_readelf_type(const std::string& type) {
  if (type.rfind("REL ", 0) == 0) return "relocatable";
  if (type.rfind("EXEC ", 0) == 0) return "executable";
  if (type == "DYN (Position-Independent Executable file)") return "pie";
  if (type.rfind("DYN ", 0) == 0) return "shared";
  if (type.rfind("CORE ", 0) == 0) return "core";
  return "other";
}

struct machine_fixture {
  std::string file;
  std::string triple;
};

}  // namespace

TEST_CASE("identify: class, data, machine, e_type and kind equal readelf -h", "[elf][identify]") {
  const std::string dir = scratch_dir("elf-identify");
  write_file(dir + "/a.c", "extern int g(void); int f(void) { return g() + 1; }\n");
  write_file(dir + "/m.c", "int main(void) { return 0; }\n");
  std::vector<std::string> files;
  auto make = [&](const std::string& name, const std::string& cmd) {
    if (run_in(dir, cmd + " >>build.log 2>&1") == 0) files.push_back(name);
    else WARN("fixture command failed (skipped): " << cmd);
  };
  make("a.o", "gcc -fPIC -c a.c -o a.o");
  make("liba.so", "gcc -shared a.o -o liba.so");
  make("pie", "gcc -pie -fPIE m.c -o pie");
  make("nopie", "gcc -no-pie m.c -o nopie");
  make("static", "gcc -static m.c -o static");
  make("a32.o", "clang-14 -m32 -fPIC -c a.c -o a32.o");
  for (const char* t : {"aarch64-linux-gnu", "powerpc64-linux-gnu", "s390x-linux-gnu", "riscv64-linux-gnu",
                        "armv7a-linux-gnueabihf", "powerpc-linux-gnu", "mips-linux-gnu"})
    make(std::string(t) + ".o", std::string("clang-14 --target=") + t + " -fPIC -c a.c -o " + t + ".o");
  REQUIRE(files.size() >= 5);
  // libc.so.6 has PT_INTERP and runs, but it is a DSO.
  files.push_back("/lib/x86_64-linux-gnu/libc.so.6");
  for (const auto& name : files) {
    const std::string path = name[0] == '/' ? name : dir + "/" + name;
    INFO(path);
    auto mapped = mapped_file::open(path);
    REQUIRE(mapped);
    auto id = elf::identify(mapped->bytes());
    REQUIRE(id);
    const std::string h = readelf("-h -W", path);
    CHECK((id->is64() ? "ELF64" : "ELF32") == header_field(h, "Class"));
    CHECK(header_field(h, "Data").find(id->big_endian() ? "big endian" : "little endian") != std::string::npos);
    const auto m = machine_numbers().find(header_field(h, "Machine"));
    REQUIRE(m != machine_numbers().end());
    CHECK(id->machine == m->second);
    CHECK(elf::to_string(id->kind) == kind_of_readelf_type(header_field(h, "Type")));
    CHECK(id->segments_read);
    const std::string l = readelf("-l -W", path);
    CHECK(id->dynamic == (l.find(" DYNAMIC ") != std::string::npos));
    CHECK(id->interpreter == (l.find(" INTERP ") != std::string::npos));
    CHECK(id->dynamically_linked() == (id->loadable() && l.find(" DYNAMIC ") != std::string::npos));
    // The first 64 bytes (what the library search reads) give the same header facts.
    auto head = elf::identify(mapped->bytes().sub_unchecked(0, 64));
    REQUIRE(head);
    CHECK(head->machine == id->machine);
    CHECK(head->type == id->type);
    CHECK(head->elf_class == id->elf_class);
  }
  // Not ELF, truncated, bad class: errors with the offset of the field.
  const std::string junk = "\x7f" "ELF\x03\x01\x01";
  auto bad = elf::identify(byte_view(reinterpret_cast<const unsigned char*>(junk.data()), junk.size()));
  CHECK_FALSE(bad);
  std::string bad_class(64, '\0');
  bad_class.replace(0, 4, "\x7f" "ELF");
  bad_class[4] = 3;
  bad_class[5] = 1;
  auto bc = elf::identify(byte_view(reinterpret_cast<const unsigned char*>(bad_class.data()), bad_class.size()));
  REQUIRE_FALSE(bc);
  CHECK(bc.error().offset == elf::ei_class);
  const std::string text = "#!/bin/sh\n";
  CHECK_FALSE(elf::identify(byte_view(reinterpret_cast<const unsigned char*>(text.data()), text.size())));
}

namespace {

// ld.so's lookup class for a relocation, from readelf's name for its type and
// glibc 2.36's elf_machine_type_class of that machine (sysdeps/*/dl-machine.h):
// -1 = no lookup (NONE, RELATIVE, IRELATIVE), else PLT (1) | COPY (2).
int expected_class(u16 machine, bool is64, bool ppc64_elfv2, const std::string& name) {
  auto ends = [&](const char* suffix) {
    const std::string s(suffix);
    return name.size() >= s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0;
  };
  auto has = [&](const char* part) { return name.find(part) != std::string::npos; };
  if (ends("_NONE") || has("RELATIVE")) return -1;
  if (machine == elf::EM_PPC64 && !ppc64_elfv2) return ends("_COPY") ? 3 : 1;
  if (ends("_COPY")) return 2;
  if (ends("JUMP_SLOT") || ends("JMP_SLOT")) return 1;
  switch (machine) {
    case elf::EM_X86_64:
      return (ends("DTPMOD64") || ends("DTPOFF64") || ends("TPOFF64") || ends("TLSDESC")) ? 1 : 0;
    case elf::EM_386:
      return (ends("TLS_DTPMOD32") || ends("TLS_DTPOFF32") || ends("TLS_TPOFF32") || ends("TLS_TPOFF") ||
              ends("TLS_DESC")) ? 1 : 0;
    case elf::EM_AARCH64:
      return (ends("TLS_DTPMOD") || ends("TLS_DTPREL") || ends("TLS_TPREL") || ends("TLSDESC") ||
              ends("TLS_DTPMOD64") || ends("TLS_DTPREL64") || ends("TLS_TPREL64")) ? 1 : 0;
    case elf::EM_ARM:
      return (ends("TLS_DTPMOD32") || ends("TLS_DTPOFF32") || ends("TLS_TPOFF32") || ends("TLS_DESC")) ? 1 : 0;
    case elf::EM_RISCV:
      if (is64) return (ends("TLS_DTPMOD64") || ends("TLS_DTPREL64") || ends("TLS_TPREL64")) ? 1 : 0;
      return (ends("TLS_DTPMOD32") || ends("TLS_DTPREL32") || ends("TLS_TPREL32")) ? 1 : 0;
    case elf::EM_PPC64:
      return (has("DTPMOD") || has("DTPREL") || has("TPREL") || ends("_TLS") || ends("ADDR24")) ? 1 : 0;
    case elf::EM_S390:
      return (ends("TLS_DTPMOD") || ends("TLS_DTPOFF") || ends("TLS_TPOFF")) ? 1 : 0;
    default: return 0;
  }
}

// readelf -r -W: r_offset (hex) -> type name, for every dynamic relocation.
std::map<u64, std::string> readelf_relocations(const std::string& path) {
  std::map<u64, std::string> out;
  std::istringstream in(readelf("-r -W", path));
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream cols(line);
    std::string offset, info, type;
    if (!(cols >> offset >> info >> type)) continue;
    if (type.rfind("R_", 0) != 0) continue;
    out[std::stoull(offset, nullptr, 16)] = type;
  }
  return out;
}

}  // namespace

TEST_CASE("relocation classes per machine equal ld.so's elf_machine_type_class for readelf's type names",
          "[elf][relocations]") {
  const std::string dir = scratch_dir("elf-reloc-classes");
  write_file(dir + "/def.c",
             "int ext_data = 1;\nint ext_fn(void) { return 0; }\n__thread int tls_gd;\n__thread int tls_ie;\n");
  write_file(dir + "/use.c",
             "extern int ext_data;\nextern int ext_fn(void);\nextern __thread int tls_gd;\n"
             "extern __thread int tls_ie __attribute__((tls_model(\"initial-exec\")));\n"
             "int* data_addr(void) { return &ext_data; }\nint call(void) { return ext_fn(); }\n"
             "int* gd(void) { return &tls_gd; }\nint* ie(void) { return &tls_ie; }\n"
             "int* data_word = &ext_data;\nstatic int local;\nint* local_word = &local;\n");
  write_file(dir + "/exe.c", "extern int ext_data;\nint main(void) { return ext_data; }\n");
  struct target {
    std::string triple;
    std::string ld;  // linker command
  };
  const std::vector<target> targets = {
      {"x86_64-linux-gnu", "ld.lld-14"},         {"i386-linux-gnu", "ld.lld-14"},
      {"aarch64-linux-gnu", "ld.lld-14"},        {"armv7a-linux-gnueabihf", "ld.lld-14"},
      {"riscv64-linux-gnu", "ld.lld-14"},        {"powerpc64le-linux-gnu", "ld.lld-14"},
      {"powerpc64-linux-gnu", "ld.lld-14"},      {"s390x-linux-gnu", "s390x-linux-gnu-ld"},
  };
  std::map<int, std::size_t> seen_classes;
  std::size_t machines = 0;
  for (const auto& t : targets) {
    const std::string& T = t.triple;
    const std::string cc = "clang-14 --target=" + T + " -O1 ";
    const std::string cmd = cc + "-fPIC -c def.c -o def_" + T + ".o && " + cc + "-fPIC -c use.c -o use_" + T + ".o && " +
                            cc + "-fno-pic -c exe.c -o exe_" + T + ".o && " + t.ld + " -shared def_" + T +
                            ".o -soname libdef.so -o libdef_" + T + ".so && " + t.ld + " -shared use_" + T +
                            ".o libdef_" + T + ".so -o libuse_" + T + ".so && " + t.ld + " -e main exe_" + T +
                            ".o libdef_" + T + ".so -o exe_" + T;
    if (run_in(dir, cmd + " >>build.log 2>&1") != 0) {
      WARN("fixture commands failed for " << T << " (skipped)");
      continue;
    }
    ++machines;
    for (const std::string& name : {"libuse_" + T + ".so", "exe_" + T}) {
      const std::string path = dir + "/" + name;
      INFO(path);
      const auto names = readelf_relocations(path);
      REQUIRE_FALSE(names.empty());
      auto mapped = mapped_file::open(path);
      REQUIRE(mapped);
      std::size_t compared = 0;
      auto r = elf::visit_elf(mapped->bytes(), [&](const auto& f) -> result<void> {
        using ET = typename std::decay_t<decltype(f)>::types;
        LINKSCOPE_TRY(dyn, elf::dynamic_info<ET>::read(f));
        const elf::reloc_classifier classes = elf::reloc_classifier::of(f);
        elf::reloc_class_cache memo(classes);  // the ld.so emulator's memoised form
        const bool elfv2 = (static_cast<u32>(f.header().e_flags) & elf::reloc::EF_PPC64_ABI) == 2;
        return elf::for_each_dynamic_relocation(dyn, [&](const elf::dynamic_relocation& rel) {
          auto it = names.find(rel.offset);
          if (it == names.end()) return;
          INFO(it->second);
          const int want = expected_class(f.machine(), ET::is64, elfv2, it->second);
          CHECK(classes.lookup_class(rel.type) == want);
          CHECK(memo.lookup_class(rel.type) == want);
          ++seen_classes[want];
          ++compared;
        });
      });
      INFO((r ? "" : r.error().message));
      CHECK(r);
      CHECK(compared == names.size());
    }
  }
  CHECK(machines >= 6);
  CHECK(seen_classes[-1] > 0);  // RELATIVE
  CHECK(seen_classes[0] > 0);   // GLOB_DAT, absolute words
  CHECK(seen_classes[1] > 0);   // JUMP_SLOT, TLS
  CHECK(seen_classes[2] > 0);   // COPY
}

TEST_CASE("dynsym count from 8-byte DT_HASH words (s390x) and the SHT_DYNSYM rule", "[elf][symbols]") {
  if (!have_tool("s390x-linux-gnu-ld") || !have_tool("llvm-objcopy-14")) {
    WARN("no s390x-linux-gnu-ld (binutils-s390x-linux-gnu) or llvm-objcopy-14; skipped");
    return;
  }
  const std::string dir = scratch_dir("elf-s390x-hash");
  std::string c;
  for (int i = 0; i < 40; ++i) c += "int f" + std::to_string(i) + "(void) { return " + std::to_string(i) + "; }\n";
  c += "extern int ext(void);\nint call(void) { return ext(); }\n";
  write_file(dir + "/a.c", c);
  REQUIRE(run_in(dir, "clang-14 --target=s390x-linux-gnu -fPIC -c a.c -o a.o && "
                      "s390x-linux-gnu-ld -shared --hash-style=sysv a.o -o libsysv.so && "
                      "s390x-linux-gnu-ld -shared --hash-style=both a.o -o libboth.so && "
                      "s390x-linux-gnu-ld -shared --hash-style=gnu a.o -o libgnu.so && "
                      "for f in sysv both gnu; do llvm-objcopy-14 --strip-sections lib$f.so nosh_$f.so; done") == 0);
  for (const char* style : {"sysv", "both", "gnu"}) {
    const std::string lib = dir + "/lib" + style + ".so";
    INFO(lib);
    // readelf: ".hash" has 8-byte entries; the symbol count of .dynsym.
    const std::string sections = readelf("-S -W", lib);
    if (std::string(style) != "gnu") CHECK(sections.find(" HASH ") != std::string::npos);
    const std::string syms = readelf("--dyn-syms -W", lib);
    const auto at = syms.find("contains ");
    REQUIRE(at != std::string::npos);
    const u64 want = std::stoull(syms.substr(at + 9));
    for (const std::string& path : {lib, dir + "/nosh_" + style + ".so"}) {
      INFO(path);
      auto mapped = mapped_file::open(path);
      REQUIRE(mapped);
      auto r = elf::visit_elf(mapped->bytes(), [&](const auto& f) -> result<void> {
        using ET = typename std::decay_t<decltype(f)>::types;
        CHECK(f.machine() == elf::EM_S390);
        CHECK(ET::is64);
        LINKSCOPE_TRY(dyn, elf::dynamic_info<ET>::read(f));
        LINKSCOPE_TRY(view, elf::read_dynsym_from_dynamic(dyn));
        CHECK(view.size() == want);
        LINKSCOPE_TRY(hashed, elf::dynsym_count_from_hash(dyn));
        CHECK(hashed == want);
        return ok();
      });
      INFO((r ? "" : r.error().message));
      CHECK(r);
    }
  }
}
