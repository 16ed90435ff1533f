// report/nm.hpp and report/ar.hpp: the linkscope-nm and linkscope-ar
// documents, written by the report functions themselves from the library's
// results on fixtures made at test time (gcc, ar, mingw gcc/dlltool, clang
// for Mach-O). /usr/bin/python3's json module parses each document and
// rebuilds from it the listing of the real tool: GNU nm -p -S (ELF), nm -p
// (COFF), llvm-nm-14 -p (Mach-O), `ar tv`, the "Archive index" of nm -s.
// The expected text is that tool's output, never linkscope's.
#include <linkscope/ar/archive.hpp>
#include <linkscope/ar/armap.hpp>
#include <linkscope/coff/nm.hpp>
#include <linkscope/core/mapped_file.hpp>
#include <linkscope/elf/nm.hpp>
#include <linkscope/macho/nm.hpp>
#include <linkscope/report/ar.hpp>
#include <linkscope/report/nm.hpp>

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "support/fixtures.hpp"

using namespace linkscope;
using namespace linkscope_test;

namespace {

const char* const python = "/usr/bin/python3";

// The fixtures, made once.
struct fixtures {
  std::string dir;
  bool ok = false;
  bool coff = false;   // mingw gcc and dlltool
  bool macho = false;  // clang-14 and llvm-nm-14
};

const fixtures& fx() {
  static const fixtures f = [] {
    fixtures r;
    r.dir = scratch_dir("nm_ar_json");
    write_file(r.dir + "/a.c",
               "int a_data = 3; static int a_local = 4; extern int b_func(int);\n"
               "int a_func(int x) { return b_func(x) + a_local + a_data; }\n"
               "__attribute__((weak)) int a_weak(void) { return 1; }\n"
               "extern int undef_ref; int use_undef(void) { return undef_ref; }\n");
    write_file(r.dir + "/b.c", "int b_func(int x) { return x * 2; } int b_common; const char b_ro[] = \"hi\";\n");
    write_file(r.dir + "/ver.c",
               "int foo_v1(void) { return 1; } int foo_v2(void) { return 2; } int bar(void) { return 3; }\n"
               "__asm__(\".symver foo_v1,foo@VERS_1\"); __asm__(\".symver foo_v2,foo@@VERS_2\");\n");
    write_file(r.dir + "/ver.map", "VERS_1 { global: foo; bar; local: *; };\nVERS_2 { global: foo; } VERS_1;\n");
    write_file(r.dir + "/foo.def", "LIBRARY foo.dll\nEXPORTS\nalpha\nbeta DATA\n");
    r.ok = run_in(r.dir,
                  "gcc -c -fPIC a.c b.c && cp b.c this_is_a_long_member_name_over_16.c && "
                  "gcc -c -fPIC this_is_a_long_member_name_over_16.c && "
                  "gcc -shared -fPIC -o libver.so ver.c -Wl,--version-script=ver.map -Wl,-soname,libver.so.1 && "
                  "ar rcs gnu.a a.o this_is_a_long_member_name_over_16.o && ar rcU dated.a a.o b.o && "
                  "ar rcs --thin thin.a a.o b.o") == 0;
    r.coff = have_tool("x86_64-w64-mingw32-gcc") && have_tool("x86_64-w64-mingw32-dlltool") &&
             capture("nm --help 2>&1").out.find("pe-x86-64") != std::string::npos &&
             run_in(r.dir,
                    "x86_64-w64-mingw32-gcc -c a.c -o a_coff.o && "
                    "x86_64-w64-mingw32-dlltool -d foo.def -l libfoo.a -D foo.dll") == 0;
    r.macho = have_tool("clang-14") && have_tool("llvm-nm-14") &&
              run_in(r.dir, "clang-14 -target x86_64-apple-macos11 -c a.c -o a_macho.o") == 0;
    return r;
  }();
  return f;
}

// Whether a test can run: python3 and the fixtures it needs (WARN when not).
bool can_run(bool made, const char* tools) {
  if (have_tool(python) && made) return true;
  WARN("skipped: /usr/bin/python3 or " << tools << " missing");
  return false;
}

std::string in_dir(const std::string& command) { return capture("cd " + shell_quote(fx().dir) + " && " + command).out; }

// Parse `document` with the json module and print what `mode` rebuilds:
//   nm, nm-nosize   the listing of nm -p [-S]: "\nMEMBER:" before each member's rows
//   ar-tv           `ar tv` (dates in UTC)
//   armap           the "Archive index:" lines of nm -s, "SYMBOL in MEMBER"
//   find            "SYMBOL in MEMBER" per definition
//   archives        per archive "FILE FORMAT" or "FILE error"
// Each key's consistency with the others ("member" is FILE(name), "symbol"
// is name[@|@@version]) is asserted on the way; a failed assertion prints a
// traceback instead of the listing.
std::string rebuild(const std::string& mode, const std::string& document) {
  write_file(fx().dir + "/doc.json", document);
  write_file(fx().dir + "/rebuild.py", R"PY(
import json, sys, time
mode, doc = sys.argv[1], json.loads(open(sys.argv[2], "rb").read().decode("utf-8"))
assert doc["version"] == 1
def member_name(file, member):
    assert member.startswith(file + "(") and member.endswith(")"), member
    return member[len(file) + 1:-1]
def perm(mode):
    return "".join(c if mode & (1 << (8 - i)) else "-" for i, c in enumerate("rwxrwxrwx"))
archives = doc["archives"] if "archives" in doc else [doc]
if mode.startswith("nm"):
    for o in doc["objects"]:
        width = 16 if o["bits"] == 64 else 8
        if "member" in o:
            assert member_name(o["file"], o["member"]) == o["name"]
            print("\n%s:" % o["name"])
        for s in o["symbols"]:
            if "version" in s:
                assert s["symbol"] == s["name"] + ("@@" if s["default_version"] else "@") + s["version"]
            else:
                assert s["symbol"] == s["name"]
            if s["defined"]:
                shown = "%0*x" % (width, int(s["value"], 16))
                if s["size"] and mode == "nm":
                    shown += " %0*x" % (width, s["size"])
            else:
                assert "value" not in s and "size" not in s
                shown = " " * width
            print(shown, s["type"], s["symbol"])
elif mode == "ar-tv":
    for m in doc["members"]:
        assert member_name(doc["file"], m["member"]) == m["name"]
        assert m["data_offset"] > m["header_offset"]
        when = time.strftime("%b %e %H:%M %Y", time.gmtime(m["date"]))
        print("%s %d/%d %6d %s %s" % (perm(m["mode"]), m["uid"], m["gid"], m["size"], when, m["name"]))
elif mode == "armap":
    assert doc["armap"]["kind"]
    for e in doc["armap"]["entries"]:
        print(e["symbol"], "in", member_name(doc["file"], e["member"]))
elif mode == "find":
    for d in doc["definitions"]:
        assert member_name(doc["file"], d["member"]) == d["name"]
        print(doc["symbol"], "in", d["name"])
elif mode == "archives":
    for a in archives:
        assert "version" not in a
        print(a["file"], a["error"] if "error" in a else a["format"])
)PY");
  return in_dir(cat({python, " rebuild.py ", mode, " doc.json 2>&1"}));
}

// The rows nm prints after "Archive index:" (nm -s), up to the blank line.
std::string armap_lines(const std::string& archive) {
  return in_dir("LC_ALL=C " + gnu_nm() + " -s " + archive +
                " | awk '/^Archive index:/ {on = 1; next} on && /^$/ {exit} on'");
}

// linkscope-nm's document for one ELF file, or each member of an archive of them.
std::string elf_nm_document(const std::string& name, const elf::nm_options& options) {
  std::string out;
  json_writer w(out);
  report::begin_nm_document(w);
  auto file = mapped_file::open(fx().dir + "/" + name);
  REQUIRE(file);
  std::vector<elf::nm_entry> entries;
  auto list = [&](std::string_view member, byte_view bytes) {
    entries.clear();
    auto listing = elf::nm_symbols(bytes, options, entries);
    if (listing)
      report::write_nm_object(w, name, member, *listing, entries);
    else
      report::write_nm_error(w, name, member, listing.error());
  };
  if (elf::is_elf(file->bytes())) {
    list({}, file->bytes());
  } else {
    auto archive = ar::archive::open(file->bytes());
    REQUIRE(archive);
    for (const auto& m : archive->members()) {
      REQUIRE(m);
      list(m->name, m->data);
    }
  }
  report::end_nm_document(w);
  return out;
}

// The nm document of a COFF or Mach-O file listed in table order (-p) by
// `list`, coff:: or macho::nm_file_objects.
template <class Object, class Options, class List>
std::string table_order_document(const std::string& name, List list) {
  auto file = mapped_file::open(fx().dir + "/" + name);
  REQUIRE(file);
  Options options;
  options.no_sort = true;
  std::vector<Object> objects;
  REQUIRE(list(file->bytes(), name, options, objects));
  std::string out;
  json_writer w(out);
  report::begin_nm_document(w);
  for (const auto& o : objects) report::write_nm_object(w, o);
  report::end_nm_document(w);
  return out;
}

// One archive's linkscope-ar document: `body` writes what follows "format".
template <class Body>
std::string archive_document(std::string_view name, const ar::archive& archive, Body body) {
  std::string out;
  json_writer w(out);
  report::begin_ar_archive(w, name, archive.kind(), false);
  body(w);
  report::end_ar_archive(w);
  return out;
}

}  // namespace

TEST_CASE("report/nm.hpp: ELF objects, a versioned DSO and an archive, against GNU nm -p -S", "[report][nm][json]") {
  if (!can_run(fx().ok, "gcc/ar")) return;
  struct run {
    const char* file;
    bool dynamic;
    const char* nm_flags;
  };
  for (const run& r : {run{"a.o", false, "-p -S"}, run{"libver.so", true, "-p -S -D"}, run{"libver.so", false, "-p -S"},
                       run{"gnu.a", false, "-p -S"}}) {
    INFO(r.file << " " << r.nm_flags);
    elf::nm_options options;
    options.dynamic = r.dynamic;
    const std::string expected = in_dir(cat({"LC_ALL=C ", gnu_nm(), " ", r.nm_flags, " ", r.file}));
    REQUIRE(!expected.empty());
    CHECK(rebuild("nm", elf_nm_document(r.file, options)) == expected);
  }
  // Selections are the listing's: -u and --defined-only.
  elf::nm_options undefined;
  undefined.undefined_only = true;
  CHECK(rebuild("nm", elf_nm_document("a.o", undefined)) == in_dir("LC_ALL=C " + gnu_nm() + " -p -S -u a.o"));
  elf::nm_options defined;
  defined.defined_only = true;
  CHECK(rebuild("nm", elf_nm_document("gnu.a", defined)) ==
        in_dir("LC_ALL=C " + gnu_nm() + " -p -S --defined-only gnu.a"));
}

TEST_CASE("report/nm.hpp: an unreadable input is an error element beside the listed objects", "[report][nm][json]") {
  if (!can_run(fx().ok, "gcc/ar")) return;
  std::string out;
  json_writer w(out);
  report::begin_nm_document(w);
  auto missing = mapped_file::open(fx().dir + "/missing.o");
  REQUIRE(!missing);
  report::write_nm_error(w, "missing.o", {}, missing.error());
  report::write_nm_error(w, "gnu.a", "x.o", make_error(errc::bad_magic, 0x40, "file format not recognized"));
  report::end_nm_document(w);
  write_file(fx().dir + "/errors.json", out);
  // nm says it cannot open the file; the element names it.
  CHECK(in_dir("nm missing.o >/dev/null 2>&1; echo $?") != "0\n");
  CHECK(in_dir(cat({python, " -c 'import json; d = json.load(open(\"errors.json\")); "
                            "[print(o[\"file\"], o.get(\"member\"), o.get(\"name\"), o.get(\"offset\"), "
                            "bool(o[\"error\"])) for o in d[\"objects\"]]'"})) ==
        "missing.o None None None True\ngnu.a gnu.a(x.o) x.o 64 True\n");
}

TEST_CASE("report/nm.hpp: COFF objects and a mingw import library, against nm -p", "[report][nm][json][coff]") {
  if (!can_run(fx().coff, "mingw-w64 gcc/dlltool or an nm that reads pe-x86-64")) return;
  for (const char* name : {"a_coff.o", "libfoo.a"}) {
    INFO(name);
    const std::string document = table_order_document<coff::nm_object, coff::nm_options>(
        name, [](auto&&... args) { return coff::nm_file_objects(args...); });
    // nm prints a member that has no symbols as its header alone.
    CHECK(rebuild("nm-nosize", document) == in_dir(cat({"LC_ALL=C ", gnu_nm(), " -p ", name, " 2>/dev/null"})));
  }
}

TEST_CASE("report/nm.hpp: a Mach-O object, against llvm-nm-14 -p", "[report][nm][json][macho]") {
  if (!can_run(fx().macho, "clang-14/llvm-nm-14")) return;
  const std::string document = table_order_document<macho::nm_object, macho::nm_options>(
      "a_macho.o", [](auto&&... args) { return macho::nm_file_objects(args...); });
  CHECK(rebuild("nm-nosize", document) == in_dir("llvm-nm-14 -p a_macho.o"));
}

TEST_CASE("report/ar.hpp: members against `ar tv`, the armap against nm -s, --find", "[report][ar][json]") {
  if (!can_run(fx().ok, "gcc/ar")) return;
  for (const char* name : {"gnu.a", "dated.a"}) {
    INFO(name);
    auto file = mapped_file::open(fx().dir + "/" + name);
    REQUIRE(file);
    auto archive = ar::archive::open(file->bytes());
    REQUIRE(archive);

    const std::string members = archive_document(name, *archive, [&](json_writer& w) {
      report::begin_ar_members(w);
      for (const auto& m : archive->members()) {
        REQUIRE(m);
        report::write_ar_member(w, name, m->name, *m);
      }
      report::end_ar_members(w);
    });
    CHECK(rebuild("ar-tv", members) == in_dir(cat({"TZ=UTC ar tv ", name})));

    auto map = ar::armap::read(*archive);
    REQUIRE(map);
    std::vector<ar::armap_entry> a_func;
    const std::string index = archive_document(name, *archive, [&](json_writer& w) {
      report::begin_ar_armap(w, *map);
      REQUIRE(map->for_each([&](const ar::armap_entry& e) {
        auto m = archive->member_at(e.member_offset);
        REQUIRE(m);
        report::write_ar_armap_entry(w, name, m->name, e);
        if (e.name == "a_func") a_func.push_back(e);
      }));
      report::end_ar_armap(w);
    });
    CHECK(rebuild("armap", index) == armap_lines(name));

    const std::string found = archive_document(name, *archive, [&](json_writer& w) {
      report::begin_ar_find(w, "a_func");
      for (const auto& e : a_func) {
        auto m = archive->member_at(e.member_offset);
        REQUIRE(m);
        report::write_ar_definition(w, name, m->name, e);
      }
      report::end_ar_find(w);
    });
    CHECK(rebuild("find", found) == in_dir(cat({"LC_ALL=C ", gnu_nm(), " -s ", name, " | grep '^a_func in '"})));
  }
}

TEST_CASE("report/ar.hpp: several archives in one document, an unreadable one as its error element",
          "[report][ar][json]") {
  if (!can_run(fx().ok, "gcc/ar")) return;
  std::string out;
  json_writer w(out);
  report::begin_ar_archives(w);
  std::vector<std::string> names;
  for (const char* name : {"gnu.a", "missing.a", "thin.a"}) {
    auto file = mapped_file::open(fx().dir + "/" + name);
    if (!file) {
      report::write_ar_error(w, diagnostic(file.error(), name), true);
      continue;
    }
    auto archive = ar::archive::open(file->bytes());
    REQUIRE(archive);
    report::begin_ar_archive(w, name, archive->kind(), true);
    report::begin_ar_members(w);
    for (const auto& m : archive->members()) {
      REQUIRE(m);
      report::write_ar_member(w, name, m->name, *m);
      names.emplace_back(m->name);
    }
    report::end_ar_members(w);
    report::end_ar_archive(w);
  }
  report::end_ar_archives(w);
  const std::string missing = in_dir("ar t missing.a >/dev/null 2>&1; echo $?");
  CHECK(missing != "0\n");
  const std::string listed = rebuild("archives", out);
  const auto rows = lines(listed);
  REQUIRE(rows.size() == 3);
  CHECK(rows[0] == "gnu.a gnu");
  CHECK(rows[1].rfind("missing.a ", 0) == 0);
  CHECK(rows[1] != "missing.a gnu");
  CHECK(rows[2] == "thin.a thin");
  // The members' names are ar's; each thin member is external.
  std::string ar_names;
  for (const char* name : {"gnu.a", "thin.a"}) ar_names += in_dir(cat({"ar t ", name}));
  std::string ours;
  for (const auto& n : names) ours += n + "\n";
  CHECK(ours == ar_names);
  write_file(fx().dir + "/list.json", out);
  CHECK(in_dir(cat({python, " -c 'import json; d = json.load(open(\"list.json\")); "
                            "print(all(m.get(\"external\") for m in d[\"archives\"][2][\"members\"]))'"})) == "True\n");
}
