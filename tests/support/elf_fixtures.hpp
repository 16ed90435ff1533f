// ELF fixtures for test_elf and test_nm, generated at test time with gcc,
// clang-14, ld.lld-14, as, ar and llvm-objcopy-14. A fixture whose tool is
// missing or fails is left out with a WARN, so every test iterates over
// `available()` only.
#pragma once

#include <catch2/catch.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include "support/fixtures.hpp"

namespace linkscope_test {

inline constexpr const char* elf_ver_c = R"(
int foo_v1(void) { return 1; }
int foo_v2(void) { return 2; }
__asm__(".symver foo_v1,foo@VERS_1");
__asm__(".symver foo_v2,foo@@VERS_2");
int bar(void) { return 3; }
int hidden_thing(void) { return 4; }
int data_obj = 5;
__thread int tls_var = 6;
extern int undef_ext(void);
extern int weak_undef(void) __attribute__((weak));
int use(void) { return undef_ext() + (weak_undef ? weak_undef() : 0); }
)";

inline constexpr const char* elf_ver_map = R"(VERS_1 { global: foo; bar; data_obj; tls_var; use; local: *; };
VERS_2 { global: foo; } VERS_1;
)";

inline constexpr const char* elf_use_c = R"(
extern int foo(void); extern int bar(void); extern int data_obj;
int g(void) { return foo() + bar() + data_obj; }
int *p = &data_obj;
)";

inline constexpr const char* elf_kinds_c = R"(
int common_var;
static int local_bss;
static int local_data = 7;
int data_var = 1;
const int ro_var = 2;
__thread int tls_bss;
__thread int tls_data = 3;
__attribute__((weak)) int weak_data = 1;
__attribute__((weak)) void weak_fn(void) {}
extern int ext_data;
extern void ext_weak(void) __attribute__((weak));
static void ifunc_impl(void) {}
static void (*resolve_ifunc(void))(void) { return ifunc_impl; }
void ifn(void) __attribute__((ifunc("resolve_ifunc")));
static void local_fn(void) { local_bss++; }
int use_all(void) { local_fn(); if (ext_weak) ext_weak(); return ext_data + local_bss + local_data + tls_bss + tls_data; }
)";

inline constexpr const char* elf_unique_cpp = R"(
inline int& counter() { static int c; return c; }
template <class T> struct holder { static T value; };
template <class T> T holder<T>::value;
int bump() { return ++counter() + holder<int>::value; }
)";

struct elf_fixture {
  std::string name;  // file name in dir
  bool relocatable = false;
  bool dynamic = false;  // has .dynsym
};

class elf_fixtures {
 public:
  std::string dir;
  std::vector<elf_fixture> files;
  std::vector<std::string> archives;
  std::string many;      // object with > 65280 sections ("" if missing)
  std::vector<std::pair<std::string, std::string>> stripped_pairs;  // {no section headers, original}

  std::string path(const std::string& name) const { return dir + "/" + name; }

  static const elf_fixtures& get(const std::string& tag) {
    static elf_fixtures f = build(tag);
    return f;
  }

 private:
  bool step(const std::string& cmd) {
    int rc = run_in(dir, cmd + " >>build.log 2>&1");
    if (rc != 0) WARN("fixture command failed (skipped): " << cmd);
    return rc == 0;
  }
  void obj(const std::string& name, const std::string& cmd) {
    if (step(cmd)) files.push_back({name, true, false});
  }
  void dso(const std::string& name, const std::string& cmd) {
    if (step(cmd)) files.push_back({name, false, true});
  }

  static elf_fixtures build(const std::string& tag) {
    elf_fixtures f;
    f.dir = scratch_dir(tag);
    write_file(f.dir + "/ver.c", elf_ver_c);
    write_file(f.dir + "/ver.map", elf_ver_map);
    write_file(f.dir + "/use.c", elf_use_c);
    write_file(f.dir + "/kinds.c", elf_kinds_c);
    write_file(f.dir + "/uniq.cpp", elf_unique_cpp);
    const std::string lld = "ld.lld-14 -shared -nostdlib --version-script=ver.map -soname libver.so.1";
    // x86-64 objects: gcc and clang.
    f.obj("kinds_gcc.o", "gcc -O1 -fPIC -fcommon -c kinds.c -o kinds_gcc.o");
    f.obj("kinds_clang.o", "clang-14 -O1 -fPIC -fcommon -c kinds.c -o kinds_clang.o");
    f.obj("ver_gcc.o", "gcc -fPIC -c ver.c -o ver_gcc.o");
    f.obj("ver_clang.o", "clang-14 -fPIC -c ver.c -o ver_clang.o");
    f.obj("uniq.o", "g++ -O1 -fPIC -c uniq.cpp -o uniq.o");
    // x86-64 DSOs with each hash style, gcc (ld.bfd) and lld.
    for (const char* style : {"gnu", "sysv", "both"}) {
      const std::string name = std::string("libver_") + style + ".so";
      f.dso(name, "gcc -shared -fPIC -Wl,--hash-style=" + std::string(style) +
                      " -Wl,--version-script=ver.map -Wl,-soname,libver.so.1 -o " + name + " ver.c");
    }
    f.dso("libver_lld.so", lld + " --hash-style=both ver_clang.o -o libver_lld.so");
    f.dso("libuse.so", "gcc -shared -fPIC -o libuse.so use.c -L. -l:libver_gnu.so");
    f.dso("libkinds.so", "gcc -shared -fPIC -fcommon -o libkinds.so kinds.c -Wl,--unresolved-symbols=ignore-all");
    // 32-bit.
    f.obj("ver32.o", "clang-14 -m32 -fPIC -c ver.c -o ver32.o");
    f.obj("kinds32.o", "gcc -m32 -fPIC -fcommon -c kinds.c -o kinds32.o");
    f.dso("libver32.so", "ld.lld-14 -m elf_i386 -shared -nostdlib --hash-style=both --version-script=ver.map "
                         "-soname libver.so.1 ver32.o -o libver32.so");
    f.obj("use32.o", "clang-14 -m32 -fPIC -c use.c -o use32.o");
    f.dso("libuse32.so", "ld.lld-14 -m elf_i386 -shared -nostdlib use32.o libver32.so -o libuse32.so");
    // Big-endian and other machines (clang-14 cross objects, lld-14 DSOs).
    for (const char* target : {"powerpc64-linux-gnu", "mips-linux-gnu", "s390x-linux-gnu", "aarch64-linux-gnu",
                               "armeb-linux-gnueabi", "powerpc-linux-gnu", "riscv64-linux-gnu"}) {
      const std::string t = target;
      const std::string o = "ver_" + t + ".o";
      f.obj(o, "clang-14 --target=" + t + " -fPIC -c ver.c -o " + o);
      f.obj("kinds_" + t + ".o", "clang-14 --target=" + t + " -fPIC -fcommon -c kinds.c -o kinds_" + t + ".o");
      if (t == "s390x-linux-gnu") continue;  // ld.lld-14 has no SystemZ
      const std::string style = t == "mips-linux-gnu" ? "sysv" : "both";  // no .gnu.hash on MIPS
      f.dso("libver_" + t + ".so", lld + " --hash-style=" + style + " " + o + " -o libver_" + t + ".so");
    }
    f.dso("libuse_aarch64.so", "clang-14 --target=aarch64-linux-gnu -fPIC -c use.c -o use_aarch64.o && "
                               "ld.lld-14 -shared -nostdlib use_aarch64.o libver_aarch64-linux-gnu.so -o libuse_aarch64.so");
    // More than 65280 sections: e_shnum = 0, e_shstrndx = SHN_XINDEX, SHT_SYMTAB_SHNDX.
    {
      std::string s;
      s.reserve(70000 * 60);
      for (int i = 0; i < 70000; ++i) {
        const std::string n = std::to_string(i);
        s += ".section .text.f" + n + ",\"ax\",@progbits\n.globl f" + n + "\nf" + n + ":\n ret\n";
      }
      write_file(f.dir + "/many.s", s);
      if (f.step("as many.s -o many.o")) {
        f.many = "many.o";
        f.files.push_back({"many.o", true, false});
      }
    }
    // Section headers stripped.
    for (const char* original : {"libver_both.so", "libver_sysv.so", "libver_gnu.so", "libver32.so",
                                 "libver_powerpc64-linux-gnu.so"}) {
      const std::string stripped = std::string("nosh_") + original;
      if (f.step("llvm-objcopy-14 --strip-sections " + std::string(original) + " " + stripped))
        f.stripped_pairs.emplace_back(stripped, original);
    }
    // Archives.
    std::filesystem::copy_file(f.dir + "/kinds.c", f.dir + "/this_is_a_long_member_name_over_16.c");
    f.step("gcc -fPIC -c this_is_a_long_member_name_over_16.c");
    if (f.step("ar rcs lib_gnu.a kinds_gcc.o ver_gcc.o this_is_a_long_member_name_over_16.o uniq.o"))
      f.archives.push_back("lib_gnu.a");
    if (f.step("ar rcs --thin lib_thin.a kinds_clang.o ver_clang.o")) f.archives.push_back("lib_thin.a");
    if (f.step("llvm-ar-14 rcs --format=gnu lib_llvm.a ver32.o kinds_powerpc64-linux-gnu.o this_is_a_long_member_name_over_16.o"))
      f.archives.push_back("lib_llvm.a");
    return f;
  }
};

}  // namespace linkscope_test
