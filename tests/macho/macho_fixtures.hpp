// Mach-O fixtures for tests/macho, made at test time with clang-14
// (-target ARCH-apple-macos11), ld64.lld-14 against a libSystem.tbd written
// here, llvm-lipo-14 and llvm-ar-14 --format=darwin. Each test program builds
// its own copy in its own scratch folder (ctest may run them in parallel).
#pragma once

#include <cstdlib>
#include <string>
#include <vector>

#include "linkscope/core/mapped_file.hpp"
#include "support/fixtures.hpp"

namespace linkscope_test {

inline bool have_macho_tools() {
  return have_tool("clang-14") && have_tool("ld64.lld-14") && have_tool("llvm-lipo-14") && have_tool("llvm-nm-14") &&
         have_tool("llvm-otool-14") && have_tool("llvm-objdump-14") && have_tool("llvm-ar-14");
}

inline const char* macho_archs[] = {"x86_64", "arm64"};

// lld 16 writes LC_DYLD_CHAINED_FIXUPS (-fixup_chains) and llvm-objdump 16
// prints them (--chained-fixups); Debian 12: apt-get install lld-16 llvm-16.
inline constexpr const char* lld16 = "/usr/lib/llvm-16/bin/ld64.lld";
inline constexpr const char* objdump16 = "/usr/lib/llvm-16/bin/llvm-objdump";
inline bool have_chained_fixup_tools() { return have_tool(lld16) && have_tool(objdump16); }

// Builds, per arch: a_ARCH.o (locals, hidden, weak def, weak import, common,
// undefined), libw_ARCH.dylib, libr_ARCH.dylib, liba_ARCH.dylib (@rpath install
// name, two rpaths, versions, a weak library and a re-exported one),
// a_ARCH.bundle, main_ARCH and main2_ARCH (executables; main2_chained_ARCH
// with LC_DYLD_CHAINED_FIXUPS when lld 16 is there); then liba_fat.dylib (universal) and
// liba_darwin.a (darwin archive). Returns the folder, or "" on failure.
inline std::string make_macho_fixtures(const std::string& name) {
  const std::string dir = scratch_dir(name);
  write_file(dir + "/libSystem.tbd",
             "--- !tapi-tbd\n"
             "tbd-version:     4\n"
             "targets:         [ x86_64-macos, arm64-macos ]\n"
             "install-name:    '/usr/lib/libSystem.B.dylib'\n"
             "current-version: 1311\n"
             "exports:\n"
             "  - targets:         [ x86_64-macos, arm64-macos ]\n"
             "    symbols:         [ _printf, _malloc, __tlv_bootstrap, dyld_stub_binder ]\n"
             "...\n");
  write_file(dir + "/a.c",
             "int printf(const char*, ...);\n"
             "extern int ext_var;\n"
             "extern int weak_fn(void) __attribute__((weak_import));\n"
             "int common_var;\n"
             "static int local_var = 3;\n"
             "__attribute__((visibility(\"hidden\"))) int hidden_fn(void) { return 1; }\n"
             "__attribute__((weak)) int weak_def(void) { return 2; }\n"
             "__thread int tls_var = 4;\n"
             "int defined_fn(void) { printf(\"x %d\\n\", local_var); return ext_var + tls_var + (weak_fn ? weak_fn() : 0); }\n");
  write_file(dir + "/w.c", "int weak_fn(void) { return 7; }\nint ext_var = 5;\n");
  write_file(dir + "/r.c", "int reexported_fn(void) { return 9; }\n");
  write_file(dir + "/abs.s", ".globl _abs_sym\n_abs_sym = 0x1234\n");
  // main2: a weak definition taken by address (a weak bind), a weak import
  // stored in data (a bind with weak_import), an addend.
  write_file(dir + "/main2.c",
             "int printf(const char*, ...);\nint defined_fn(void);\nint reexported_fn(void);\n"
             "extern int weak_fn(void) __attribute__((weak_import));\nextern int ext_var;\n"
             "__attribute__((weak)) int weak_def(void) { return 3; }\n"
             "int (*fp)(void) = weak_def;\nint (*wp)(void) = weak_fn;\nint *ep = &ext_var + 4;\n"
             "int main(void) { printf(\"%d\\n\", defined_fn() + reexported_fn() + fp() + *ep); return 0; }\n");
  write_file(dir + "/main.c",
             "int printf(const char*, ...);\nint defined_fn(void);\nint reexported_fn(void);\n"
             "int main(void) { printf(\"%d\\n\", defined_fn() + reexported_fn()); return 0; }\n");
  std::string script = "set -e\n";
  for (const char* arch : macho_archs) {
    const std::string a = arch;
    const std::string p = " -arch " + a + " -platform_version macos 11.0 11.0 -L. -lSystem ";
    script += "clang-14 -target " + a + "-apple-macos11 -c abs.s -o abs_" + a + ".o\n";
    for (const char* src : {"a", "w", "r", "main", "main2"})
      script += "clang-14 -target " + a + "-apple-macos11 -fcommon -c " + src + ".c -o " + src + "_" + a + ".o\n";
    script += "ld64.lld-14 -dylib" + p + "-install_name @rpath/libw.dylib w_" + a + ".o -o libw_" + a + ".dylib\n";
    script += "ld64.lld-14 -dylib" + p + "-install_name @loader_path/libr_" + a + ".dylib r_" + a + ".o -o libr_" + a +
              ".dylib\n";
    script += "ld64.lld-14 -dylib" + p +
              "-install_name @rpath/liba.dylib -rpath @loader_path/../lib -rpath /opt/x -current_version 1.2.3 "
              "-compatibility_version 1.0 a_" + a + ".o abs_" + a + ".o -weak_library libw_" + a + ".dylib -reexport_library libr_" + a +
              ".dylib -o liba_" + a + ".dylib\n";
    script += "ld64.lld-14 -bundle" + p + "a_" + a + ".o libw_" + a + ".dylib -o a_" + a + ".bundle\n";
    script += "ld64.lld-14 -execute" + p + "main_" + a + ".o liba_" + a + ".dylib -o main_" + a + "\n";
    script += "ld64.lld-14 -execute" + p + "main2_" + a + ".o liba_" + a + ".dylib libw_" + a + ".dylib -o main2_" + a + "\n";
    if (have_chained_fixup_tools())
      script += std::string(lld16) + " -execute -fixup_chains -arch " + a +
                " -platform_version macos 12.0 12.0 -L. -lSystem main2_" + a + ".o liba_" + a + ".dylib libw_" + a +
                ".dylib -o main2_chained_" + a + "\n";
  }
  if (have_chained_fixup_tools()) {
    // Addends that need DYLD_CHAINED_IMPORT_ADDEND (4000 > the pointer's 8-bit
    // addend) and DYLD_CHAINED_IMPORT_ADDEND64 (2^32 > int32).
    write_file(dir + "/add32.c", "extern int ext_var;\nint *ep = &ext_var + 1000;\nint main(void) { return *ep; }\n");
    write_file(dir + "/add64.c",
               "extern int ext_var;\nchar *ep = (char*)&ext_var + 0x100000000LL;\nint main(void) { return *ep; }\n");
    for (const char* src : {"add32", "add64"})
      script += std::string("clang-14 -target arm64-apple-macos11 -c ") + src + ".c -o " + src + ".o && " + lld16 +
                " -execute -fixup_chains -arch arm64 -platform_version macos 12.0 12.0 -L. -lSystem " + src +
                ".o libw_arm64.dylib -o " + src + "_chained\n";
  }
  script += "llvm-lipo-14 -create liba_x86_64.dylib liba_arm64.dylib -output liba_fat.dylib\n";
  script += "llvm-ar-14 rcs --format=darwin liba_darwin.a a_x86_64.o w_x86_64.o r_x86_64.o\n";
  write_file(dir + "/make.sh", script);
  if (run_in(dir, "sh make.sh >make.log 2>&1") != 0) return "";
  return dir;
}

// Every Mach-O fixture file (thin images only) of make_macho_fixtures.
inline std::vector<std::string> macho_images() {
  std::vector<std::string> out;
  for (const char* arch : macho_archs) {
    const std::string a = arch;
    for (const std::string& f : {"a_" + a + ".o", "libw_" + a + ".dylib", "libr_" + a + ".dylib", "liba_" + a + ".dylib",
                                "a_" + a + ".bundle", "main_" + a, "main_" + a + ".o", "main2_" + a})
      out.push_back(f);
  }
  return out;
}

}  // namespace linkscope_test

// Without the toolchain a test warns and returns; with it, the fixtures must build.
#define LINKSCOPE_MACHO_FIXTURES_OR_RETURN(dir)                                    \
  if (!::linkscope_test::have_macho_tools()) {                                     \
    WARN("clang-14 / ld64.lld-14 / llvm-14 tools not installed: test skipped");    \
    return;                                                                        \
  }                                                                                \
  REQUIRE_FALSE((dir).empty())

namespace linkscope_test {
// Real macOS binaries given by the caller (scripts/real-parity, which CI runs, sets
// LINKSCOPE_MACHO_REAL to a ':'-separated list of the npm files it unpacked);
// empty when the variable is unset, so the real-file cases are opt-in.
inline std::vector<std::string> real_macho_files() {
  std::vector<std::string> out;
  const char* env = std::getenv("LINKSCOPE_MACHO_REAL");
  if (!env) return out;
  std::string all = env;
  std::size_t start = 0;
  while (start <= all.size()) {
    const auto colon = all.find(':', start);
    const std::string item = all.substr(start, colon == std::string::npos ? std::string::npos : colon - start);
    if (!item.empty()) out.push_back(item);
    if (colon == std::string::npos) break;
    start = colon + 1;
  }
  return out;
}
}  // namespace linkscope_test
