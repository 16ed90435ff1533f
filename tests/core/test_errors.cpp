// core/error.hpp and report/diagnostic.hpp: the errc table in docs/errors.md
// matches the enum, result<T, diagnostic> holds and copies a diagnostic, and
// the one formatter writes `linkscope-X: FILE: error: MESSAGE (offset 0x...)`.
#include <linkscope/core/error.hpp>
#include <linkscope/report/diagnostic.hpp>

#include <catch2/catch.hpp>

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "support/fixtures.hpp"

using namespace linkscope;
namespace lt = linkscope_test;

namespace {

std::string trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return std::string(s);
}

// The cells of a Markdown table row "| a | b | c |".
std::vector<std::string> cells(std::string_view row) {
  std::vector<std::string> out;
  if (row.size() < 2 || row.front() != '|') return out;
  row.remove_prefix(1);
  while (!row.empty()) {
    const std::size_t bar = row.find('|');
    if (bar == std::string_view::npos) break;
    out.push_back(trim(row.substr(0, bar)));
    row.remove_prefix(bar + 1);
  }
  return out;
}

}  // namespace

TEST_CASE("docs/errors.md lists every errc once, with its to_string text", "[core][error]") {
  const std::string doc = lt::read_file(std::string(LINKSCOPE_SOURCE_DIR) + "/docs/errors.md");
  REQUIRE(!doc.empty());
  // Rows of the table whose first cell is `name`.
  std::map<std::string, std::vector<std::string>> rows;
  std::size_t row_count = 0;
  for (const std::string& line : lt::lines(doc)) {
    auto c = cells(line);
    if (c.size() != 3 || c[0].size() < 3 || c[0].front() != '`' || c[0].back() != '`') continue;
    ++row_count;
    rows[c[0].substr(1, c[0].size() - 2)].push_back(c[1]);
  }
  // Every value the enum can hold that to_string and name_of know (the
  // compiler's -Wswitch makes both switches cover every enumerator).
  std::size_t enumerators = 0;
  for (unsigned v = 0; v <= 0xff; ++v) {
    const auto code = static_cast<errc>(v);
    const std::string_view name = name_of(code);
    INFO("errc value " << v);
    CHECK((name == "unknown") == (std::string_view(to_string(code)) == "unknown"));
    if (name == "unknown") continue;
    ++enumerators;
    INFO("errc::" << name);
    auto it = rows.find(std::string(name));
    REQUIRE(it != rows.end());
    CHECK(it->second.size() == 1);
    CHECK(it->second.front() == to_string(code));
  }
  CHECK(enumerators == static_cast<std::size_t>(errc::usage) + 1);
  // No row for a value the enum does not have.
  CHECK(row_count == enumerators);
}

TEST_CASE("result<T, diagnostic> carries the file and member", "[core][error]") {
  auto fail = []() -> result<std::string, diagnostic> {
    return diagnostic(error{errc::truncated, 0x44, "member runs past the end"}, "dir/libx.a", "m.o");
  };
  auto r = fail();
  REQUIRE(!r);
  auto copy = r;
  CHECK(copy.error().where() == "dir/libx.a(m.o)");
  CHECK(copy.error().code() == errc::truncated);
  CHECK(copy.error().offset() == 0x44u);
  copy = result<std::string, diagnostic>(std::string("value"));
  REQUIRE(copy);
  CHECK(*copy == "value");
  result<void, diagnostic> v = diagnostic(error{errc::not_found, no_offset, ""}, "x");
  REQUIRE(!v);
  CHECK(std::string(v.error().message()) == "not found");  // an empty message prints the errc's text
  static_assert(sizeof(error) <= 24, "error stays small: it is returned from every read");
}

TEST_CASE("one formatter for every CLI", "[core][error][report]") {
  diagnostic d(error{errc::truncated, 0x1a4, "section header table runs past the end"}, "lib.so");
  CHECK(format_diagnostic("linkscope-nm", d) ==
        "linkscope-nm: lib.so: error: section header table runs past the end (offset 0x1a4)\n");
  diagnostic m(error{errc::bad_field, 8, "member size is not a number"}, "libfoo.a", "bar.o");
  CHECK(format_diagnostic("linkscope-ar", m) == "linkscope-ar: libfoo.a(bar.o): error: member size is not a number (offset 0x8)\n");
  diagnostic w = diagnostic::warning(error{errc::bad_magic, 0, "archive member is not an ELF object"}, "l.a", "t.txt");
  CHECK(format_diagnostic("linkscope-dupes", w) ==
        "linkscope-dupes: l.a(t.txt): warning: archive member is not an ELF object (offset 0x0)\n");
  diagnostic n(error{errc::not_found, no_offset, ""}, "missing.o");
  n.context = "a.rsp -> b.rsp";
  CHECK(format_diagnostic("linkscope-why", n) == "linkscope-why: missing.o: error: not found\nlinkscope-why: note: a.rsp -> b.rsp\n");
  diagnostic big(error{errc::overflow, 0xffffffffffffull, "x"}, "f");
  CHECK(format_diagnostic("t", big) == "t: f: error: x (offset 0xffffffffffff)\n");
}
