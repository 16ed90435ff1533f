// resolve/link_line.hpp: response files, options, library search and
// GROUP/INPUT scripts. The located inputs are checked against the files
// ld.lld-14 and GNU ld report with --trace (-t) for the same arguments.
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include <linkscope/resolve/link_line.hpp>

#include "support/fixtures.hpp"

using namespace linkscope;
using namespace linkscope::resolve;
using namespace linkscope_test;

namespace {

std::string join_args(const std::vector<std::string>& args) {
  std::string s;
  for (const auto& a : args) {
    // (not `" " + shell_quote(a)`: g++ 12 -O3 -Wrestrict false positive, GCC PR 105329)
    s += ' ';
    s += shell_quote(a);
  }
  return s;
}

result<link_line> read_in(const std::string& dir, const std::vector<std::string>& args, link_diagnostic& diag) {
  const auto saved = std::filesystem::current_path();
  std::filesystem::current_path(dir);
  auto r = read_link_line(args, diag);
  std::filesystem::current_path(saved);
  return r;
}

// The inputs in order as `-t` prints them: ld.lld lists objects and shared
// libraries (archives only through their members), GNU ld lists archives too.
std::vector<std::string> elf_inputs(const std::string& dir, const link_line& line, bool bfd) {
  std::vector<std::string> out;
  for (const auto& in : line.inputs) {
    const std::string& path = bfd && !in.bfd_path.empty() ? in.bfd_path : in.path;
    auto file = mapped_file::open(path[0] == '/' ? path : dir + "/" + path);
    if (file && (sniff_link_input(file->bytes()) == input_format::elf || bfd)) out.push_back(path);
  }
  return out;
}

std::vector<std::string> trace(const std::string& dir, const std::string& linker, const std::vector<std::string>& args) {
  const auto r = capture("cd " + shell_quote(dir) + " && " + linker + " -m elf_x86_64 -t" + join_args(args) +
                         " -o trace.out --noinhibit-exec 2>/dev/null");
  std::vector<std::string> out;
  for (const auto& l : lines(r.out)) {
    if (l.empty() || l.back() == ')') continue;  // archive members "a.a(m.o)"
    // GNU ld also lists the linker scripts it read.
    auto file = mapped_file::open(l[0] == '/' ? l : dir + "/" + l);
    if (file && sniff_link_input(file->bytes()) == input_format::script) continue;
    out.push_back(l);
  }
  return out;
}

bool have_linkers() {
  if (have_tool("ld.lld-14") && have_tool("ld") && have_tool("clang-14")) return true;
  WARN("ld.lld-14, ld or clang-14 missing: link-line parity tests skipped");
  return false;
}

}  // namespace

TEST_CASE("link_line: GNU response-file tokenizing") {
  std::vector<std::string> out;
  std::size_t bad = 0;
  REQUIRE(tokenize_gnu("a  b\n\tc\r\n", out, bad));
  CHECK(out == std::vector<std::string>{"a", "b", "c"});
  out.clear();
  REQUIRE(tokenize_gnu(R"('x y' "p q" a\ b 'it''s' "q\"t" \\ -L'/a b'/c)", out, bad));
  CHECK(out == std::vector<std::string>{"x y", "p q", "a b", "its", "q\"t", "\\", "-L/a b/c"});
  out.clear();
  CHECK(!tokenize_gnu("ok 'open", out, bad));
  CHECK(bad == 3);
  out.clear();
  REQUIRE(tokenize_gnu("", out, bad));
  CHECK(out.empty());
}

TEST_CASE("link_line: options, groups and the ignored list") {
  link_diagnostic diag;
  const std::vector<std::string> args = {
      "-z", "relro", "--hash-style=gnu", "-pie", "-o", "out", "-O2", "--gc-sections", "-Lone", "-L", "two",
      "--library-path=three", "a.o", "-lfoo", "-l", "bar", "--library=baz", "-l:exact.a", "-(", "g1.a", "g2.a", "-)",
      "--start-group", "g3.a", "--end-group", "--whole-archive", "w.a", "--no-whole-archive", "--as-needed",
      "s.so", "--no-as-needed", "-Bstatic", "-lst", "-Bdynamic", "-udef1", "-u", "def2", "--undefined=def3",
      "-e", "start", "--defsym=x=y+4", "--defsym", "z=0x10", "--wrap=malloc", "--wrap", "free", "-plugin",
      "/x/LLVMgold.so", "-plugin-opt=mcpu=x86-64", "--build-id", "--eh-frame-hdr", "-dynamic-linker",
      "/lib64/ld-linux-x86-64.so.2", "--sysroot=/sr"};
  auto line = parse_link_args(args, diag);
  INFO(diag.subject);
  REQUIRE(line);
  CHECK(line->search_dirs == std::vector<std::string>{"one", "two", "three"});
  REQUIRE(line->inputs.size() == 11);
  CHECK(line->inputs[0].spec == "a.o");
  CHECK(line->inputs[1].spec == "-lfoo");
  CHECK(line->inputs[1].is_library);
  CHECK(line->inputs[2].spec == "-lbar");
  CHECK(line->inputs[3].spec == "-lbaz");
  CHECK(line->inputs[4].spec == "-l:exact.a");
  CHECK(line->inputs[5].group == 0);
  CHECK(line->inputs[6].group == 0);
  CHECK(line->inputs[7].group == 1);
  CHECK(line->inputs[4].group == -1);
  CHECK(line->inputs[8].whole_archive);
  CHECK(!line->inputs[9].whole_archive);
  CHECK(line->inputs[9].as_needed);
  CHECK(line->inputs[10].static_only);
  CHECK(line->inputs[10].spec == "-lst");
  CHECK(line->undefined == std::vector<std::string>{"def1", "def2", "def3"});
  CHECK(line->entry == "start");
  REQUIRE(line->defsyms.size() == 2);
  CHECK(line->defsyms[0].name == "x");
  CHECK(line->defsyms[0].expression == "y+4");
  CHECK(line->wraps == std::vector<std::string>{"malloc", "free"});
  CHECK(line->sysroot == "/sr");
  CHECK(line->output == "out");
  CHECK(!line->ignored.empty());

  // Unknown options are named; so are misplaced group markers.
  for (const auto& [bad, why] : std::vector<std::pair<std::string, std::string>>{
           {"--frobnicate", "unknown option"}, {"-Q", "unknown option"}, {"--end-group", "--end-group without --start-group"}}) {
    link_diagnostic d;
    CHECK(!parse_link_args({"a.o", bad}, d));
    CHECK(d.subject == bad);
    CHECK(std::string(d.err.message) == why);
  }
  link_diagnostic d;
  CHECK(!parse_link_args({"a.o", "-L"}, d));
  CHECK(d.subject == "-L");
  CHECK(!parse_link_args({"--start-group", "a.o"}, d));
  CHECK(!parse_link_args({"-T", "x.ld", "a.o"}, d));
  CHECK(d.err.code == errc::unsupported);
}

TEST_CASE("link_line: every argument the clang driver passes is understood") {
  if (!have_linkers() || !have_tool("clang++-14")) return;
  const std::string dir = scratch_dir("link_line_driver");
  write_file(dir + "/m.cpp", "int main() { return 0; }\n");
  for (const std::string flags : {"-fuse-ld=lld", "-fuse-ld=bfd", "-fuse-ld=lld -static", "-fuse-ld=lld -shared",
                                  "-fuse-ld=lld -no-pie -Wl,--as-needed -Wl,--gc-sections -Wl,-O1"}) {
    const auto r = capture("cd " + shell_quote(dir) + " && clang++-14 " + flags + " m.cpp -o m -### 2>&1 | tail -1");
    REQUIRE(r.status == 0);
    // The driver prints one line of double-quoted arguments.
    std::vector<std::string> args;
    std::size_t bad = 0;
    REQUIRE(tokenize_gnu(r.out, args, bad));
    REQUIRE(args.size() > 5);
    args.erase(args.begin());  // the linker's path
    link_diagnostic diag;
    auto line = parse_link_args(args, diag);
    INFO(flags << ": " << diag.subject << ": " << diag.err.message);
    CHECK(line);
  }
}

TEST_CASE("link_line: library search and scripts match ld.lld -t and ld -t") {
  if (!have_linkers()) return;
  const std::string dir = scratch_dir("link_line_search");
  namespace fs = std::filesystem;
  for (const char* d : {"d1", "d2", "sr/usr/lib", "sr/lib", "scripts"}) fs::create_directories(dir + "/" + d);
  write_file(dir + "/m.c", "extern int x(void); void _start(void) { x(); }\n");
  write_file(dir + "/x.c", "int x(void) { return 1; }\n");
  REQUIRE(run_in(dir, "clang-14 -c -fPIC m.c x.c && "
                      "clang-14 -shared -nostdlib x.o -o d1/libx.so && ar rcs d1/libx.a x.o && "
                      "ar rcs d2/liby.a x.o && clang-14 -shared -nostdlib x.o -o d2/liby.so.1 && "
                      "cp d1/libx.so d2/libz.so && ar rcs d1/libz.a x.o && "
                      "clang-14 -shared -nostdlib x.o -o sr/lib/libreal.so.1 && ar rcs sr/usr/lib/libns.a x.o && "
                      "clang-14 -shared -nostdlib x.o -Wl,-soname,libq.so.1 -o scripts/libq.so.1") == 0);
  // Debian's libc.so: absolute paths inside the sysroot, AS_NEEDED.
  write_file(dir + "/sr/usr/lib/libc.so",
             "/* GNU ld script\n   Use the shared library */\nOUTPUT_FORMAT(elf64-x86-64)\n"
             "GROUP ( /lib/libreal.so.1 /usr/lib/libns.a  AS_NEEDED ( /lib/libreal.so.1 ) )\n");
  // libgcc_s.so style: a relative name found next to the script, and -l.
  write_file(dir + "/scripts/libq.so", "GROUP ( libq.so.1 -ly )\n");
  write_file(dir + "/scripts/libin.so", "INPUT(libq.so.1)\n");

  const std::vector<std::vector<std::string>> cases = {
      {"m.o", "-Ld1", "-Ld2", "-lx", "-ly"},
      {"m.o", "-Ld1", "-Ld2", "-Bstatic", "-lx", "-Bdynamic", "-lz"},
      {"m.o", "-Ld2", "-Ld1", "-lz"},
      {"m.o", "-Ld2", "-l:liby.so.1", "-l:libx.so", "-Ld1"},
      {"m.o", "-static", "-Ld1", "-lx"},
      {"m.o", "--sysroot=sr", "-L=/usr/lib", "-lc"},
      {"m.o", "-Lscripts", "-Ld2", "-lq"},
      {"m.o", "-Ld2", "scripts/libq.so"},
      {"m.o", "-Ld2", "-Lscripts", "-lin"},
  };
  for (const auto& args : cases) {
    INFO("args:" << join_args(args));
    link_diagnostic diag;
    auto line = read_in(dir, args, diag);
    INFO(diag.subject << ": " << diag.err.message);
    REQUIRE(line);
    CHECK(elf_inputs(dir, *line, false) == trace(dir, "ld.lld-14", args));
    CHECK(elf_inputs(dir, *line, true) == trace(dir, "ld", args));
  }
  // -L$SYSROOT/dir: GNU ld only (ld.lld 14 does not expand it).
  const std::vector<std::string> dollar = {"m.o", "--sysroot=sr", "-L$SYSROOT/usr/lib", "-lc"};
  link_diagnostic diag;
  auto with_dollar = read_in(dir, dollar, diag);
  REQUIRE(with_dollar);
  CHECK(elf_inputs(dir, *with_dollar, true) == trace(dir, "ld", dollar));
  auto line = read_in(dir, {"m.o", "--sysroot=sr", "-L=/usr/lib", "-lc"}, diag);
  REQUIRE(line);
  REQUIRE(line->inputs.size() == 4);
  CHECK(line->inputs[1].origin == "sr/usr/lib/libc.so");
  CHECK(line->inputs[1].group >= 0);
  CHECK(line->inputs[2].path == "sr/usr/lib/libns.a");
  CHECK(!line->inputs[2].as_needed);
  CHECK(line->inputs[3].as_needed);
}

TEST_CASE("link_line: response files") {
  if (!have_linkers()) return;
  const std::string dir = scratch_dir("link_line_rsp");
  std::filesystem::create_directories(dir + "/with space");
  write_file(dir + "/with space/m.c", "extern int x(void); void _start(void) { x(); }\n");
  write_file(dir + "/x.c", "int x(void) { return 1; }\n");
  REQUIRE(run_in(dir, "clang-14 -c 'with space/m.c' -o 'with space/m.o' && clang-14 -c x.c && ar rcs 'it'\\''s.a' x.o") == 0);
  write_file(dir + "/inner.rsp", "\"it's.a\"\n");
  write_file(dir + "/outer.rsp", "'with space/m.o'\n-z relro @inner.rsp\n");
  link_diagnostic diag;
  auto line = read_in(dir, {"@outer.rsp"}, diag);
  INFO(diag.subject << ": " << diag.err.message);
  REQUIRE(line);
  REQUIRE(line->inputs.size() == 2);
  CHECK(line->inputs[0].path == "with space/m.o");
  CHECK(line->inputs[1].path == "it's.a");
  // ld.lld reads the same response files the same way.
  const auto lld = capture("cd " + shell_quote(dir) + " && ld.lld-14 -t @outer.rsp -o out 2>&1");
  CHECK(lld.status == 0);
  CHECK(lld.out == "with space/m.o\nit's.a(x.o)\n");

  // A loop, a missing file and an unterminated quote: errors naming the file.
  write_file(dir + "/loop1.rsp", "m.o @loop2.rsp\n");
  write_file(dir + "/loop2.rsp", "@loop1.rsp\n");
  CHECK(!read_in(dir, {"@loop1.rsp"}, diag));
  CHECK(diag.subject == "@loop1.rsp");
  CHECK(diag.err.code == errc::malformed);
  CHECK(diag.detail == "loop1.rsp -> loop2.rsp -> loop1.rsp");
  CHECK(run_in(dir, "ld.lld-14 @loop1.rsp -o out 2>/dev/null") != 0);
  CHECK(!read_in(dir, {"@missing.rsp"}, diag));
  CHECK(diag.subject == "@missing.rsp");
  CHECK(diag.err.code == errc::not_found);
  write_file(dir + "/bad.rsp", "m.o 'unterminated\n");
  CHECK(!read_in(dir, {"@bad.rsp"}, diag));
  CHECK(diag.subject == "@bad.rsp");
  CHECK(diag.err.offset == 4);
  // Missing inputs and libraries name the argument.
  CHECK(!read_in(dir, {"nothere.o"}, diag));
  CHECK(diag.subject == "nothere.o");
  CHECK(!read_in(dir, {"-L.", "-lnothere"}, diag));
  CHECK(diag.subject == "-lnothere");
  CHECK(std::string(diag.err.message) == "unable to find library");
  // A script with an unsupported command.
  write_file(dir + "/libbad.so", "SECTIONS { .text : { *(.text) } }\n");
  CHECK(!read_in(dir, {"-L.", "-lbad"}, diag));
  CHECK(diag.err.code == errc::unsupported);
  // Text that is no linker script at all (GNU ld: "file format not
  // recognized; treating as linker script", then a syntax error): named as
  // not recognized, without quoting the text.
  write_file(dir + "/notes.txt", "hello world\nthis is text\n");
  CHECK(!read_in(dir, {"notes.txt"}, diag));
  CHECK(diag.err.code == errc::bad_magic);
  CHECK(diag.subject == "notes.txt");
  CHECK(diag.detail.empty());
  // Bytes with control characters are not text: an unknown format (GNU ld:
  // "file format not recognized"), left for the input reader to refuse.
  CHECK(sniff_link_input(byte_view(reinterpret_cast<const unsigned char*>("\x7f\x01\x02jPzK"), 7)) == input_format::unknown);
  CHECK(sniff_link_input(byte_view(reinterpret_cast<const unsigned char*>("GROUP ( a.a )\n"), 14)) == input_format::script);
}
