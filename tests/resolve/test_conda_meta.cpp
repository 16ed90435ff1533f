// resolve/conda_meta.hpp: the conda-meta record reader against the oracle,
// /usr/bin/python3's json.loads(bytes) (what conda writes and reads records
// with): for every input, both accept or both reject, and the four members
// read decode to the same UTF-8. Where Python reports a JSON syntax error on
// an ASCII input, the byte offset is Python's JSONDecodeError.pos.
//
// Deliberate differences, kept out of the comparison: UTF-16/32 input (Python
// decodes it, linkscope refuses it), nesting between max_depth and Python's
// recursion limit, integers of more than 4300 digits (Python refuses them).
#include <linkscope/resolve/conda_meta.hpp>

#include <catch2/catch.hpp>

#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "support/fixtures.hpp"

using namespace linkscope;
namespace lt = linkscope_test;

namespace {

struct bad_case {
  std::string text;
  errc code;
  std::uint64_t offset;
};

// The records json.loads decodes, as Python prints them: one line per input,
// "OK\tname\tversion\tdepends\tfiles" (every string hex, lists joined by ','),
// or "ERR\tpos" (pos: -1 when not a JSONDecodeError on an ASCII input).
const char* oracle_py = R"PY(
import json, sys
data = open(sys.argv[1], 'rb').read()
cases, at = [], 0
while at < len(data):
    n = int.from_bytes(data[at:at + 4], 'little'); at += 4
    cases.append(data[at:at + n]); at += n
def hx(s): return s.encode('utf-8').hex()
for b in cases:
    try:
        d = json.loads(b)
    except json.JSONDecodeError as e:
        print('ERR\t%d' % (e.pos if all(c < 0x80 for c in b) else -1)); continue
    except (ValueError, RecursionError):
        print('ERR\t-1'); continue
    try:
        if not isinstance(d, dict): raise TypeError
        for k in ('name', 'version'):
            if k in d and not isinstance(d[k], str): raise TypeError
        for k in ('depends', 'files'):
            if k in d and not (isinstance(d[k], list) and all(isinstance(x, str) for x in d[k])): raise TypeError
        print('OK\t%s\t%s\t%s\t%s' % (hx(d.get('name', '')), hx(d.get('version', '')),
              ','.join(hx(x) for x in d.get('depends', [])), ','.join(hx(x) for x in d.get('files', []))))
    except (TypeError, UnicodeEncodeError):
        print('ERR\t-1')
)PY";

std::string hex(std::string_view s) {
  static const char digits[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : s) {
    out.push_back(digits[c >> 4]);
    out.push_back(digits[c & 15]);
  }
  return out;
}

std::string join_hex(const std::vector<std::string>& v) {
  std::string out;
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (i) out += ',';  // appended apart: g++ 12 -O3 -Wrestrict misfires on ("," + temporary)
    out += hex(v[i]);
  }
  return out;
}

// What linkscope says, in the oracle's format.
std::string ours(const std::string& input, error* err = nullptr) {
  auto r = resolve::read_conda_meta(input);
  if (!r) {
    if (err) *err = r.error();
    return "ERR";
  }
  return "OK\t" + hex(r->name) + "\t" + hex(r->version) + "\t" + join_hex(r->depends) + "\t" + join_hex(r->files);
}

std::vector<std::string> oracle_cases() {
  std::vector<std::string> cases = {
      // valid records and every JSON construct
      R"({"name": "zlib", "version": "1.2.13", "depends": ["libgcc-ng >=12"], "files": ["lib/libz.so.1"]})",
      R"({})", " \t\r\n{ } \n", R"({"name": ""})", R"({"files": []})",
      R"({"a": [1, -0, 0.5, -1.5e+10, 2E-3, 1e5, true, false, null, {}, [], {"b": [[]]}], "name": "x"})",
      R"({"n": NaN, "i": Infinity, "j": -Infinity, "name": "nan"})",
      R"({"name": "n\u00e9\u4e2d\ud83d\ude00\/\\\"\b\f\n\r\t", "files": ["x\/y", "z\"q"]})",
      "{\"name\": \"\xc3\xa9\xe4\xb8\xad\xf0\x9f\x98\x80\x7f\"}",
      R"({"name": "a", "name": "b", "files": ["1"], "files": ["2", "3"]})",  // the last wins
      R"({"n\u0061me": "escaped key", "fil\u0065s": ["k"]})",
      R"({"name": "\u0000nul"})", R"({"x": "\ud800", "name": "lone surrogate skipped"})",
      R"({"\udc00": 1, "name": "lone surrogate in a key"})",
      "\xef\xbb\xbf{\"name\": \"bom\"}",
      // lone surrogates kept, UTF-8 encoded surrogates
      R"({"name": "\ud800"})", R"({"name": "\udc00"})", R"({"name": "\ud800\u0041"})", R"({"files": ["\udfff"]})",
      R"({"name": "\ud800\ud800"})", "{\"name\": \"\xed\xa0\x80\"}", "{\"x\": \"\xed\xa0\x80\", \"name\": \"ok\"}",
      "{\"name\": \"\xed\xa0\x80\xed\xb0\x80\"}",
      // invalid UTF-8
      "{\"name\": \"\xff\"}", "{\"name\": \"\xc0\xaf\"}", "{\"name\": \"\xe0\x80\xaf\"}", "{\"name\": \"\xf4\x90\x80\x80\"}",
      "{\"name\": \"\xc3\"}", "{\"name\": \"\xe4\xb8\"}", "{\"x\": \"\x80\", \"name\": \"a\"}", "{\"name\": \"a\"}\xc3\xa9",
      "{\"name\"\xc2\xa0: \"a\"}",
      // syntax errors
      "", " ", "{", "}", "[1]", "\"name\"", "1", "null", R"({"name": "x")", R"({"name": "x)", R"({"name": )",
      R"({"name" "x"})", R"({"name": "x",})", R"({,})", R"({"a": [1,]})", R"({"a": [1 2]})", R"({"a": 01})",
      R"({"a": 1.})", R"({"a": .5})", R"({"a": 1e})", R"({"a": 1e+})", R"({"a": -})", R"({"a": +1})", R"({"a": tru})",
      R"({"a": True})", R"({"a": nul})", R"({"a": NAN})", R"({"a": -NaN})", R"({"a": Infinit})", R"({"a": 0x10})",
      R"({"name": "\q"})", R"({"name": "\u12"})", R"({"name": "\u12g4"})", R"({"name": "\U0041"})", R"({"name": "\)",
      R"({"name": "\u)", R"({"name": "\u00)", "{\"name\": \"a\tb\"}", "{\"name\": \"a\nb\"}", "{\"name\": \"\x1f\"}",
      "{\"name\": \"\x7f\"}", R"({"name": "x"} x)", R"({"name": "x"}{})", R"({"name": "x"} )", R"({'name': 'x'})",
      R"({name: "x"})", R"({"a": [}})", R"({"a": {]})", R"({"a": {"b"}})", R"({"a": {"b":}})", R"({"a" : 1 : 2})",
      "{\"a\":\x0b" "1}", "{\"a\":\xc2\xa0" "1}",
      // the schema: the four members have fixed types
      R"({"name": 1})", R"({"name": null})", R"({"version": 1.0})", R"({"files": "lib/x"})", R"({"files": [1]})",
      R"({"depends": [["a"]]})", R"({"files": ["a", null]})", R"({"depends": {}})", R"({"files": [1 2]})",
      R"({"x": {"name": 1}, "name": "nested name ignored"})",
  };
  // Nesting up to 500 levels (Python's limit is near 1000) and far beyond it.
  for (std::size_t depth : {1, 2, 100, 500}) {
    cases.push_back("{\"x\": " + std::string(depth, '[') + std::string(depth, ']') + "}");
    std::string obj;
    for (std::size_t i = 0; i < depth; ++i) obj += "{\"a\":";
    cases.push_back("{\"x\": " + obj + "1" + std::string(depth, '}') + "}");
  }
  cases.push_back("{\"x\": " + std::string(100000, '[') + "}");
  cases.push_back("{\"x\": " + std::string(100000, '[') + std::string(100000, ']') + "}");
  // Every prefix of two full records (one all ASCII, so that Python's error
  // positions are byte offsets), and every byte replaced by a few interesting ones.
  const std::string bases[] = {
      "{\"name\": \"py\\u00e9\\ud83d\\ude00\xc3\xa9\", \"version\": \"1.0\", \"depends\": [\"a >=1\", \"b\"], "
      "\"n\": [-1.5e3, true, null, {\"k\": \"\\\"\\n\"}], \"files\": [\"lib/x.so\", \"bin/\\/y\"]}",
      "{\"name\": \"a\\u00e9\\ud83d\\ude00\", \"x\": [0, -0.5E+2, false, NaN, -Infinity, {}, []], \"version\": \"2\","
      " \"depends\": [\"c\"], \"files\": [\"lib/\\u0041.so\"]}"};
  for (const std::string& base : bases) {
    for (std::size_t n = 0; n < base.size(); ++n) cases.push_back(base.substr(0, n));
    for (std::size_t n = 0; n < base.size(); ++n)
      for (char c : {'\0', '\x1f', '"', '\\', '{', ']', ',', ':', '\x80', '\xff', 'u', '0', ' '}) {
        std::string m = base;
        m[n] = c;
        cases.push_back(m);
      }
  }
  return cases;
}

}  // namespace

TEST_CASE("conda-meta records: the four members", "[conda_meta]") {
  auto r = resolve::read_conda_meta(
      R"({"build": "h1", "name": "zlib", "version": "1.2.13", "depends": ["libgcc-ng >=12", "libzlib 1.2.13 h1"],)"
      R"( "files": ["include/zlib.h", "lib\/libz.so.1"], "paths_data": {"paths": [{"_path": "x", "size": 1.5e3}]}})");
  REQUIRE(r);
  CHECK(r->name == "zlib");
  CHECK(r->has_name);
  CHECK(r->version == "1.2.13");
  CHECK(r->depends == std::vector<std::string>{"libgcc-ng >=12", "libzlib 1.2.13 h1"});
  CHECK(r->files == std::vector<std::string>{"include/zlib.h", "lib/libz.so.1"});
  auto empty = resolve::read_conda_meta("{}");
  REQUIRE(empty);
  CHECK_FALSE(empty->has_name);
}

TEST_CASE("conda-meta records: errors carry the offset json.loads reports", "[conda_meta]") {
  // Offsets are those of Python's JSONDecodeError (json.loads(b'...').pos) for these inputs.
  const std::vector<bad_case> cases = {
      {"[1]", errc::malformed, 0},
      {R"({"name": "x)", errc::truncated, 9},  // "Unterminated string starting at"
      {R"({"files": ["a" "b"]})", errc::malformed, 15},
      {R"({"name": "\q"})", errc::malformed, 10},
      {R"({"name": "\u12"})", errc::malformed, 11},
      {"{\"k\" 1}", errc::malformed, 5},
      {"", errc::truncated, 0},
      {R"({"a": 1,})", errc::malformed, 8},
      {R"({"a": 1.})", errc::malformed, 7},
      {R"({"a": tru})", errc::malformed, 6},
      {R"({"a": 1} x)", errc::malformed, 9},
      {"{\"name\": \"a\nb\"}", errc::malformed, 11},
      // Not JSON syntax: the schema and the encoding.
      {R"({"name": 1})", errc::bad_field, 9},
      {R"({"files": [1]})", errc::bad_field, 11},
      {R"({"name": "\ud800"})", errc::malformed, 10},
      {"{\"name\": \"\xc3(\"}", errc::malformed, 10},
      {"{\"name\": \"\xe4\xb8", errc::truncated, 10},
      {std::string("{\0\"\0}\0", 6), errc::unsupported, 0},
  };
  for (const bad_case& c : cases) {
    INFO(c.text);
    auto r = resolve::read_conda_meta(c.text);
    REQUIRE_FALSE(r);
    CHECK(r.error().code == c.code);
    CHECK(r.error().offset == c.offset);
  }
}

TEST_CASE("conda-meta records: bounded depth and size", "[conda_meta]") {
  // Deep nesting is refused where it passes the limit, not with a stack overflow.
  const std::string deep = "{\"x\": " + std::string(100000, '[') + "}";
  auto r = resolve::read_conda_meta(deep);
  REQUIRE_FALSE(r);
  CHECK(r.error().code == errc::too_large);
  CHECK(r.error().offset == 6 + 511);  // the record is depth 1, so the 512th '[' is depth 513
  resolve::conda_meta_limits limits;
  limits.max_depth = 3;
  CHECK(resolve::read_conda_meta(R"({"x": [[1]]})", limits));
  CHECK_FALSE(resolve::read_conda_meta(R"({"x": [[[1]]]})", limits));
  limits.max_bytes = 8;
  auto big = resolve::read_conda_meta(R"({"name": "x"})", limits);
  REQUIRE_FALSE(big);
  CHECK(big.error().code == errc::too_large);
  CHECK(big.error().offset == 0);
}

TEST_CASE("conda-meta records agree with Python's json.loads", "[conda_meta]") {
  if (!lt::have_tool("/usr/bin/python3")) {
    WARN("/usr/bin/python3 missing");
    return;
  }
  const std::vector<std::string> cases = oracle_cases();
  const std::string dir = lt::scratch_dir("conda_meta");
  std::string packed;
  for (const auto& c : cases) {
    const auto n = static_cast<std::uint32_t>(c.size());
    for (int k = 0; k < 4; ++k) packed.push_back(static_cast<char>((n >> (8 * k)) & 0xff));
    packed += c;
  }
  lt::write_file(dir + "/cases.bin", packed);
  lt::write_file(dir + "/oracle.py", oracle_py);
  auto py = lt::capture("/usr/bin/python3 " + lt::shell_quote(dir + "/oracle.py") + " " + lt::shell_quote(dir + "/cases.bin"));
  REQUIRE(py.status == 0);
  const auto theirs = lt::lines(py.out);
  REQUIRE(theirs.size() == cases.size());
  std::size_t accepted = 0, offsets = 0;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    INFO("case " << i << ": " << hex(cases[i].substr(0, 200)));
    // UTF-16/32 (a NUL or a UTF-16 BOM in the first two bytes): Python decodes it, linkscope refuses it.
    const std::string_view head = std::string_view(cases[i]).substr(0, 2);
    if (head.size() == 2 && (head[0] == '\0' || head[1] == '\0' || head == "\xff\xfe" || head == "\xfe\xff")) {
      CHECK_FALSE(resolve::read_conda_meta(cases[i]));
      continue;
    }
    error err;
    const std::string mine = ours(cases[i], &err);
    if (theirs[i].rfind("OK", 0) == 0) {
      CHECK(mine == theirs[i]);
      ++accepted;
      continue;
    }
    CHECK(mine == "ERR");
    const long pos = std::stol(theirs[i].substr(4));
    if (pos >= 0 && mine == "ERR" && err.code != errc::bad_field) {
      CHECK(err.offset == static_cast<std::uint64_t>(pos));
      ++offsets;
    }
  }
  CHECK(accepted >= 40);
  CHECK(offsets >= 500);
}
