// resolve/objects.hpp: the ELF objects inside a path. Fixtures are built at
// test time (gcc, ar, clang-14 for a COFF member); the expected kind of every
// file and member comes from `readelf -h` ("Type:"), the member list and
// order from `ar t`, and each member's bytes from `ar x`.
#include <catch2/catch.hpp>

#include <map>
#include <string>
#include <vector>

#include <linkscope/core/mapped_file.hpp>
#include <linkscope/resolve/objects.hpp>

#include "support/fixtures.hpp"

using namespace linkscope;
using namespace linkscope::resolve;
using namespace linkscope_test;

namespace {

// readelf -h's "Type:" as an object_kind name; "not-elf" when readelf says
// the file is not ELF. A position-independent executable is an executable.
std::string readelf_kind(const std::string& path) {
  const std::string out = capture("readelf -h " + shell_quote(path) + " 2>&1").out;
  if (out.find("Not an ELF file") != std::string::npos) return "not-elf";
  for (const std::string& line : lines(out)) {
    const auto at = line.find("Type:");
    if (at == std::string::npos) continue;
    const std::string type = line.substr(line.find_first_not_of(' ', at + 5));
    if (type.rfind("REL ", 0) == 0) return "relocatable";
    if (type.rfind("EXEC ", 0) == 0) return "executable";
    if (type == "DYN (Position-Independent Executable file)") return "executable";
    if (type == "DYN (Shared object file)") return "shared";
    return "other: " + type;
  }
  return "no Type line";
}

std::string name(object_kind k) {
  switch (k) {
    case object_kind::relocatable: return "relocatable";
    case object_kind::shared: return "shared";
    case object_kind::executable: return "executable";
    case object_kind::other: return "other";
  }
  return "?";
}

struct seen_object {
  std::string display, member, kind, bytes;
  u64 member_offset = 0;
};

std::vector<seen_object> visit(const std::string& path, std::vector<skipped_member>* skipped, error* failure = nullptr) {
  std::vector<seen_object> out;
  auto r = for_each_elf_object(
      path,
      [&](const elf_object& o) {
        out.push_back({std::string(o.display_name), std::string(o.member_name), name(o.kind),
                       std::string(reinterpret_cast<const char*>(o.bytes.data()), o.bytes.size()), o.member_offset});
      },
      skipped);
  if (!r && failure != nullptr) *failure = r.error();
  return out;
}

// Build the fixtures once per test case in `dir`.
bool build_fixtures(const std::string& dir) {
  write_file(dir + "/a.c", "int a(void) { return 1; }\n");
  write_file(dir + "/b.c", "int b_data = 2; int b(void) { return b_data; }\n");
  write_file(dir + "/m.c", "int main(void) { return 0; }\n");
  // Longer than an ELF header, so that readelf reads its magic.
  write_file(dir + "/notes.txt", std::string(3, '\n') + std::string(100, 'x') + "\nnot an object\n");
  return run_in(dir, "gcc -c a.c b.c && gcc -shared -fPIC a.c -o liba.so && gcc -no-pie m.c -o exe && "
                     "gcc -pie -fPIE m.c -o pie") == 0;
}

}  // namespace

TEST_CASE("objects: a plain file is classified as readelf -h says", "[resolve][objects]") {
  REQUIRE(have_tool("gcc"));
  REQUIRE(have_tool("readelf"));
  const std::string dir = scratch_dir("objects_plain");
  REQUIRE(build_fixtures(dir));
  for (const char* file : {"a.o", "b.o", "liba.so", "exe", "pie"}) {
    const std::string path = dir + "/" + file;
    INFO(file);
    std::vector<skipped_member> skipped;
    auto objects = visit(path, &skipped);
    REQUIRE(objects.size() == 1);
    CHECK(objects[0].display == path);
    CHECK(objects[0].member.empty());
    CHECK(objects[0].member_offset == 0);
    CHECK(objects[0].kind == readelf_kind(path));
    CHECK(objects[0].bytes == read_file(path));
    CHECK(skipped.empty());
    auto mapped = mapped_file::open(path);
    REQUIRE(mapped);
    CHECK(name(classify_elf(mapped->bytes())) == readelf_kind(path));
  }
  // The linking table: .symtab for an object, .dynsym for the loadable ones.
  for (const char* file : {"a.o", "liba.so", "pie"}) {
    const std::string path = dir + "/" + file;
    std::size_t visited = 0;
    auto r = for_each_elf_object(path, [&](const elf_object& o) {
      ++visited;
      CHECK((linking_table(o) == elf::symbol_table_kind::static_) == (readelf_kind(path) == "relocatable"));
    });
    CHECK(r.has_value());
    CHECK(visited == 1);
  }
  // A file that is neither ELF nor an archive is an error at offset 0.
  error failure{};
  CHECK(visit(dir + "/notes.txt", nullptr, &failure).empty());
  CHECK(failure.code == errc::bad_magic);
  CHECK(failure.offset == 0);
  CHECK(readelf_kind(dir + "/notes.txt") == "not-elf");
}

TEST_CASE("objects: archive members in ar t order, non-ELF members skipped and reported", "[resolve][objects]") {
  REQUIRE(have_tool("gcc"));
  REQUIRE(have_tool("readelf"));
  REQUIRE(have_tool("ar"));
  const std::string dir = scratch_dir("objects_archive");
  REQUIRE(build_fixtures(dir));
  std::string members = "a.o notes.txt b.o liba.so";
  if (have_tool("clang-14") && run_in(dir, "clang-14 --target=x86_64-pc-windows-msvc -c b.c -o b.obj") == 0)
    members += " b.obj";  // a COFF object: not ELF
  REQUIRE(run_in(dir, "ar rcs lib.a " + members) == 0);
  // The oracle: ar t for the order, ar x + readelf -h per member.
  const std::vector<std::string> order = lines(capture("ar t " + shell_quote(dir + "/lib.a")).out);
  REQUIRE(order.size() >= 4);
  const std::string extracted = dir + "/x";
  REQUIRE(run_in(dir, "mkdir -p x && cd x && ar x ../lib.a") == 0);
  std::vector<std::string> want_elf, want_skipped;
  std::map<std::string, std::string> want_kind;
  for (const std::string& m : order) {
    const std::string kind = readelf_kind(extracted + "/" + m);
    if (kind == "not-elf") {
      want_skipped.push_back(m);
    } else {
      want_elf.push_back(m);
      want_kind[m] = kind;
    }
  }
  CHECK(want_skipped.size() >= 1);
  std::vector<skipped_member> skipped;
  const std::string path = dir + "/lib.a";
  auto objects = visit(path, &skipped);
  REQUIRE(objects.size() == want_elf.size());
  const std::string archive_bytes = read_file(path);
  for (std::size_t i = 0; i < objects.size(); ++i) {
    const auto& o = objects[i];
    INFO(o.display);
    CHECK(o.member == want_elf[i]);
    CHECK(o.display == path + "(" + want_elf[i] + ")");
    CHECK(o.kind == want_kind[want_elf[i]]);
    CHECK(o.bytes == read_file(extracted + "/" + want_elf[i]));
    // member_offset is the member's 60-byte header, which names it (GNU: "name/").
    REQUIRE(o.member_offset + 60 <= archive_bytes.size());
    CHECK(archive_bytes.compare(o.member_offset, want_elf[i].size() + 1, want_elf[i] + "/") == 0);
  }
  REQUIRE(skipped.size() == want_skipped.size());
  for (std::size_t i = 0; i < skipped.size(); ++i) {
    CHECK(skipped[i].name == want_skipped[i]);
    CHECK(skipped[i].why.code == errc::bad_magic);
  }
  // Without a skipped list the same members are visited; f may stop early.
  CHECK(visit(path, nullptr).size() == want_elf.size());
  std::size_t calls = 0;
  auto r = for_each_elf_object(path, [&](const elf_object&) { return ++calls < 2; });
  CHECK(r.has_value());
  CHECK(calls == 2);
}

TEST_CASE("objects: a thin archive's members are opened by path", "[resolve][objects]") {
  REQUIRE(have_tool("gcc"));
  REQUIRE(have_tool("readelf"));
  REQUIRE(have_tool("ar"));
  const std::string dir = scratch_dir("objects_thin");
  REQUIRE(build_fixtures(dir));
  REQUIRE(run_in(dir, "ar rcsT thin.a a.o notes.txt liba.so") == 0);
  const std::vector<std::string> order = lines(capture("cd " + shell_quote(dir) + " && ar t thin.a").out);
  REQUIRE(order == std::vector<std::string>{"a.o", "notes.txt", "liba.so"});
  std::vector<skipped_member> skipped;
  const std::string path = dir + "/thin.a";
  auto objects = visit(path, &skipped);
  REQUIRE(objects.size() == 2);
  CHECK(objects[0].display == path + "(a.o)");
  CHECK(objects[0].kind == readelf_kind(dir + "/a.o"));
  CHECK(objects[0].bytes == read_file(dir + "/a.o"));
  CHECK(objects[1].display == path + "(liba.so)");
  CHECK(objects[1].kind == readelf_kind(dir + "/liba.so"));
  CHECK(objects[1].bytes == read_file(dir + "/liba.so"));
  REQUIRE(skipped.size() == 1);
  CHECK(skipped[0].name == "notes.txt");
  CHECK(skipped[0].why.code == errc::bad_magic);
  // A member whose file is gone is reported, not fatal.
  REQUIRE(run_in(dir, "rm a.o") == 0);
  skipped.clear();
  objects = visit(path, &skipped);
  REQUIRE(objects.size() == 1);
  CHECK(objects[0].display == path + "(liba.so)");
  REQUIRE(skipped.size() == 2);
  CHECK(skipped[0].name == "a.o");
  CHECK(skipped[0].why.code != errc::ok);
}
