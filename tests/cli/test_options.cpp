// Every linkscope-* CLI through its option surface (examples/cli/options.hpp,
// issue 15 part 1): --help (exit 0, starts with Usage, lists each option of
// the tool's table, ends with an Examples section), --version, an unknown
// option, a missing option argument and a pair of output modes that exclude
// each other; then the bad inputs (missing, directory, empty, text, truncated,
// random bytes) with the one diagnostic format and exit 2.
//
// The wording of the option errors is glibc getopt_long's, taken at test time
// from GNU nm (`nm --bogus` prints "nm: unrecognized option '--bogus'"), with
// the tool's name in place of nm's and the Try line of GNU tools.
#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "support/fixtures.hpp"

using namespace linkscope_test;

namespace {

struct cli_case {
  const char* name;
  std::vector<const char*> options;  // as --help lists them: "--json", "-D, --dynamic", "-o"
  const char* needs_argument;        // a long option with a required argument
  const char* excluded;              // two output modes given together, or nullptr
};

// The tables of examples/linkscope-*.cpp, option by option.
const std::vector<cli_case>& cases() {
  static const std::vector<cli_case> all = {
      {"linkscope-ar", {"-t", "-s, --print-armap", "--find=SYMBOL", "--json", "--thin-confine"}, "--find", "-t --print-armap"},
      {"linkscope-nm",
       {"-a, --debug-syms", "-A, --print-file-name", "-C, --demangle", "--no-demangle", "-D, --dynamic", "-f, --format=FORMAT",
        "-g, --extern-only", "-o", "-p, --no-sort", "-P, --portability", "-S, --print-size", "-s, --print-armap",
        "--special-syms", "--target=BFDNAME", "-u, --undefined-only", "-U, --defined-only", "--with-symbol-versions",
        "--without-symbol-versions", "--arch=ARCH|all", "--json", "--thin-confine", "-h, --help", "-V, --version"},
       "--format", "--json -P"},
      {"linkscope-ldd",
       {"--tree", "--bindings", "-u, --unused", "-r, --undefined", "--interposed", "--format=dot", "--json", "-v, --verbose", "--stats",
        "--root=DIR", "--library-path=P", "--no-env", "--preload=LIB", "--cache=FILE", "--no-cache", "--isa-level=N",
        "--executable=PATH", "--arch=ARCH", "--dyld-library-path=P", "--dyld-framework-path=P",
        "--dyld-fallback-library-path=P", "--dyld-fallback-framework-path=P", "--env"},
       "--root", "--unused --tree"},
      {"linkscope-implib",
       {"--strict", "--identify-strict", "--dlltool-compat", "--symbols", "--pe=FILE", "--needs", "--consumer=FILE", "--json"},
       "--consumer", "--symbols --needs"},
      {"linkscope-absorbed",
       {"--consumer=FILE", "--cmake-libs=LIST", "--prefix=DIR", "--arch=ARCH", "--root=DIR", "--members", "--thin-confine",
        "--json"},
       "--prefix", nullptr},
      {"linkscope-why",
       {"--semantics=lld|bfd", "--why-extract=FILE", "--chain=MEMBER", "--print-map-includes", "--json", "--stats",
        "--thin-confine"},
       "--chain", nullptr},
      {"linkscope-check",
       {"--package=NAME", "--declared=PKG,...", "--allow=GLOB,...", "--no-default-allow", "--library-path=PATH",
        "--dpkg-info=DIR", "--no-dpkg", "--no-conda", "--undefined", "--max-glibc=VER", "--max-glibcxx=VER",
        "--max-version=FAMILY=VER", "-v, --verbose", "--json"},
       "--package", nullptr},
      {"linkscope-dupes", {"--closure=FILE", "--arch=ARCH", "--abi-only", "--thin-confine", "--json"}, "--closure", nullptr},
      {"linkscope-floors",
       {"--json", "--max-glibc=VER", "--max-glibcxx=VER", "--max-version=FAMILY=VER", "--max-isa=LEVEL", "-a, --all-versions"},
       "--max-glibc", nullptr},
  };
  return all;
}

bool built(const std::string& tool) { return capture("test -x " + shell_quote(tool_path(tool)) + " && echo yes").out == "yes\n"; }

// stderr only (stdout dropped), and the exit status.
command_result errors_of(const std::string& command) { return capture(command + " 2>&1 >/dev/null"); }

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

std::string try_line(const std::string& tool) { return "Try '" + tool + " --help' for more information.\n"; }

// GNU nm's line for `args`, with "nm" replaced by `tool` (glibc's getopt
// wording is the same for every program).
std::string as_nm_says(const std::string& args, const std::string& tool) {
  const std::string line = first_line(errors_of("nm " + args).out);
  REQUIRE(line.rfind("nm: ", 0) == 0);
  return tool + line.substr(2);
}

}  // namespace

TEST_CASE("every CLI: --help, --version, option errors, excluded output modes", "[cli][options]") {
  if (!have_tool("nm")) {
    WARN("GNU nm missing: the option errors have no reference wording; skipped");
    return;
  }
  for (const cli_case& c : cases()) {
    const std::string tool = c.name;
    if (!built(tool)) {
      WARN(tool + " not built; skipped");
      continue;
    }
    const std::string exe = shell_quote(tool_path(tool));
    INFO(tool);

    auto help = capture(exe + " --help");
    CHECK(help.status == 0);
    CHECK(help.out.rfind("Usage: " + tool + " ", 0) == 0);
    CHECK(help.out.find("\nOptions:\n") != std::string::npos);
    const auto examples = help.out.find("\nExamples:\n  $ " + tool + " ");
    CHECK(examples != std::string::npos);
    CHECK(help.out.find("\nExit status:\n") != std::string::npos);
    for (const char* option : c.options) {
      INFO(option);
      // In the Options section, at the start of a line after the indent.
      const std::string listed = std::string(option);
      const bool found = help.out.find("\n  " + listed + " ") != std::string::npos ||
                         help.out.find("\n  " + listed + "\n") != std::string::npos ||
                         help.out.find("\n      " + listed + " ") != std::string::npos ||
                         help.out.find("\n      " + listed + "\n") != std::string::npos;
      CHECK(found);
    }
    CHECK(help.out.find("--help") != std::string::npos);
    CHECK(help.out.find("--version") != std::string::npos);

    auto version = capture(exe + " --version");
    CHECK(version.status == 0);
    CHECK(version.out.rfind(tool + " (linkscope) ", 0) == 0);
    CHECK(version.out.find('\n') == version.out.size() - 1);

    // nm --bogus: "nm: unrecognized option '--bogus'".
    auto bogus = errors_of(exe + " --bogus");
    CHECK(bogus.status == 2);
    CHECK(bogus.out == tool + ": unrecognized option '--bogus'\n" + try_line(tool));
    CHECK(first_line(bogus.out) == as_nm_says("--bogus", tool));

    // nm --format: "nm: option '--format' requires an argument".
    auto missing = errors_of(exe + " " + c.needs_argument);
    CHECK(missing.status == 2);
    std::string expected = as_nm_says("--format", tool);
    expected.replace(expected.find("'--format'"), 10, std::string("'") + c.needs_argument + "'");
    CHECK(missing.out == expected + "\n" + try_line(tool));

    if (c.excluded != nullptr) {
      auto both = errors_of(exe + " " + c.excluded + " x");
      CHECK(both.status == 2);
      CHECK(both.out.find(tool + ": options '") == 0);
      CHECK(both.out.find("' exclude each other\n" + try_line(tool)) != std::string::npos);
    }
  }
}

TEST_CASE("linkscope-nm: short option errors as GNU nm prints them", "[cli][options][nm]") {
  if (!have_tool("nm") || !built("linkscope-nm")) return;
  const std::string exe = shell_quote(tool_path("linkscope-nm"));
  // nm -f: "nm: option requires an argument -- 'f'"; nm -7: "nm: invalid option -- '7'".
  for (const char* args : {"-f", "-7", "--bogus", "--format"}) {
    INFO(args);
    auto ours = errors_of(exe + " " + args);
    CHECK(ours.status == 2);
    CHECK(ours.out == as_nm_says(args, "linkscope-nm") + "\n" + try_line("linkscope-nm"));
  }
  // Bundled short flags and -- as nm takes them.
  const std::string dir = scratch_dir("options_nm");
  write_file(dir + "/a.c", "int x; extern int y; int f(void) { return y; }\n");
  if (!have_tool("gcc") || run_in(dir, "gcc -c a.c -o a.o") != 0) return;
  for (const char* args : {"-gS a.o", "-u --defined-only a.o", "--defined-only -u a.o", "-P -f bsd a.o", "-fposix a.o",
                           "--format posix a.o", "-- a.o", "-A -o a.o"}) {
    INFO(args);
    auto real = capture("cd " + shell_quote(dir) + " && nm " + args);
    auto ours = capture("cd " + shell_quote(dir) + " && " + exe + " " + args);
    CHECK(ours.status == real.status);
    CHECK(ours.out == real.out);
  }
}

namespace {

// A bad input given to a CLI: where FILE goes in its arguments.
struct bad_call {
  const char* tool;
  std::string args_before, args_after;  // around FILE
};

// The bytes of a 4 KiB "random" file, fixed (a 64-bit LCG), so that the run
// is repeatable; control characters come early, so it is no text.
std::string random_bytes() {
  std::string out(4096, '\0');
  std::uint64_t x = 0x15'0000'0015ull;
  for (char& c : out) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    c = static_cast<char>(x >> 56);
  }
  out[1] = '\x01';
  return out;
}

}  // namespace

TEST_CASE("every CLI: bad inputs are named, with their problem, exit 2", "[cli][bad]") {
  const std::string dir = scratch_dir("options_bad");
  if (!have_tool("gcc") || !have_tool("ar")) {
    WARN("gcc or ar missing; skipped");
    return;
  }
  write_file(dir + "/g.c", "int g(void) { return 1; }\n");
  write_file(dir + "/h.c", "int h(void) { return 2; }\n");
  REQUIRE(run_in(dir, "gcc -c g.c -o good.o && gcc -c h.c -o h.o && gcc -shared -fPIC g.c -o good.so && "
                      "ar rcs good.a good.o && ar rcs two.a good.o h.o && mkdir -p dir prefix && : > empty && "
                      "head -c 200 good.so > truncated.so && head -c 1500 two.a > truncated.a") == 0);
  write_file(dir + "/text.txt", "hello world\nthis is text\n");
  write_file(dir + "/random.bin", random_bytes());

  // What each kind of input must be called (the one diagnostic format:
  // "linkscope-X: FILE: error: MESSAGE").
  struct kind {
    const char* file;
    const char* message;  // the part every tool shares, or nullptr: per tool
  };
  const std::vector<kind> kinds = {
      {"missing", "no such file"},          {"dir", "is a directory"}, {"empty", "file is empty (offset 0x0)"},
      {"text.txt", nullptr},                {"truncated.so", nullptr}, {"random.bin", nullptr},
      {"truncated.a", "member size past end of file"},
  };
  // Per tool, the message for text, a truncated ELF, random bytes and a truncated archive.
  struct tool_case {
    bad_call call;
    const char* text;
    const char* truncated_elf;
    const char* random;
    bool takes_archives;
    bool takes_dirs;  // a directory operand is searched (floors), not an error
  };
  const char* not_elf = "not an ELF file (offset 0x0)";
  const char* elf_truncated = "section header table past end of file";
  const char* neither = "neither an ELF file nor an archive (offset 0x0)";
  const std::vector<tool_case> tools = {
      {{"linkscope-nm", "", ""}, "file format not recognized", elf_truncated, "file format not recognized", true, false},
      {{"linkscope-ar", "t ", ""}, "not an archive (bad magic) (offset 0x0)", "not an archive (bad magic) (offset 0x0)",
       "not an archive (bad magic) (offset 0x0)", true, false},
      {{"linkscope-ldd", "", ""}, not_elf, elf_truncated, not_elf, false, false},
      {{"linkscope-implib", "", ""}, "is not a library (not an archive)", "is not a library (not an archive)",
       "is not a library (not an archive)", true, false},
      {{"linkscope-absorbed", "good.so ", ""}, neither, elf_truncated, neither, true, false},
      {{"linkscope-absorbed", "", " good.a"}, "not a shared library (ELF), dylib (Mach-O) or DLL (PE) (offset 0x0)",
       elf_truncated, "not a shared library (ELF), dylib (Mach-O) or DLL (PE) (offset 0x0)", false, false},
      {{"linkscope-why", "", ""}, "file format not recognized (not ELF, not an archive, not a GROUP/INPUT linker script)",
       elf_truncated, "unknown file type (not ELF, not an archive) (offset 0x0)", false, false},
      {{"linkscope-check", "prefix ", ""}, not_elf, elf_truncated, not_elf, false, false},
      {{"linkscope-dupes", "", " good.o"}, neither, elf_truncated, neither, true, false},
      // floors reads more formats as it grows ("not an ELF or Mach-O file").
      {{"linkscope-floors", "", ""}, "not an ELF", elf_truncated, "not an ELF", false, true},
  };
  for (const tool_case& t : tools) {
    const std::string tool = t.call.tool;
    if (!built(tool)) {
      WARN(tool + " not built; skipped");
      continue;
    }
    for (const kind& k : kinds) {
      const std::string file = k.file;
      if (file == "truncated.a" && !t.takes_archives) continue;
      if (file == "dir" && t.takes_dirs) continue;
      std::string message = k.message ? k.message
                            : file == "text.txt" ? t.text
                            : file == "truncated.so" ? t.truncated_elf
                                                     : t.random;
      const std::string args = t.call.args_before + file + t.call.args_after;
      INFO(tool + " " + args);
      auto r = errors_of("cd " + shell_quote(dir) + " && " + shell_quote(tool_path(tool)) + " " + args);
      CHECK(r.status == 2);
      // The file is named as given (linkscope-check names it by its absolute path).
      const std::string line = first_line(r.out);
      CHECK(line.rfind(tool + ": ", 0) == 0);
      const bool named = line.find(": " + file + ": error: " + message) != std::string::npos ||
                         line.find("/" + file + ": error: " + message) != std::string::npos;
      CHECK(named);
    }
  }
}
