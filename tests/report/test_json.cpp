// report/json.hpp: documents written by json_writer, parsed back at test time
// by /usr/bin/python3's json module (the oracle), which prints every leaf as
// "path type value" with strings as the hex of their bytes (surrogateescape:
// a \udcXX escape stands for the raw byte XX, Python's convention for bytes
// that are not UTF-8). The expected lines are built here from the inputs.
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include <linkscope/report/json.hpp>

#include "support/fixtures.hpp"

using namespace linkscope;
using namespace linkscope_test;

namespace {

const char* const python = "/usr/bin/python3";

// The leaves of the document at `path`, as the json module parses it; the
// first line is "ok" or "error <message>".
std::string parse_with_python(const std::string& dir, const std::string& document) {
  const std::string file = dir + "/doc.json";
  write_file(file, document);
  write_file(dir + "/leaves.py", R"PY(
import json, sys
raw = open(sys.argv[1], "rb").read()
try:
    doc = json.loads(raw.decode("utf-8"))
except Exception as e:
    print("error", type(e).__name__)
    sys.exit(0)
print("ok")
def walk(path, v):
    if isinstance(v, dict):
        print(path, "object", len(v))
        for k, x in v.items():
            walk(path + "/" + k.encode("utf-8", "surrogateescape").hex(), x)
    elif isinstance(v, list):
        print(path, "array", len(v))
        for i, x in enumerate(v):
            walk(path + "/" + str(i), x)
    elif isinstance(v, bool):
        print(path, "bool", v)
    elif v is None:
        print(path, "null")
    elif isinstance(v, int):
        print(path, "int", v)
    elif isinstance(v, str):
        print(path, "string", v.encode("utf-8", "surrogateescape").hex())
    else:
        print(path, "other", type(v).__name__)
walk("", doc)
)PY");
  return capture(std::string(python) + " " + shell_quote(dir + "/leaves.py") + " " + shell_quote(file)).out;
}

std::string hex(std::string_view bytes) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string out;
  for (char c : bytes) {
    const auto b = static_cast<unsigned char>(c);
    out.push_back(digits[b >> 4]);
    out.push_back(digits[b & 15]);
  }
  return out;
}

bool have_python() { return have_tool(python); }

}  // namespace

TEST_CASE("json_writer escapes every control character and the JSON specials", "[report][json]") {
  REQUIRE(have_python());  // /usr/bin/python3 is the oracle
  const std::string dir = scratch_dir("json_escape");
  std::vector<std::string> inputs;
  std::string all_controls;
  for (int c = 0; c < 0x20; ++c) all_controls.push_back(static_cast<char>(c));
  inputs.push_back(all_controls);
  inputs.push_back("quote \" backslash \\ slash / del \x7f end");
  inputs.push_back(std::string("nul\0inside", 10));
  inputs.push_back("");
  std::string doc;
  {
    json_writer w(doc);
    w.begin_array();
    for (const auto& s : inputs) w.value(s);
    w.end_array();
  }
  // Raw control bytes must not appear inside the document.
  for (char c : doc) CHECK(static_cast<unsigned char>(c) >= 0x20);
  std::string want = cat({"ok\n array ", std::to_string(inputs.size()), "\n"});
  for (std::size_t i = 0; i < inputs.size(); ++i)
    want += cat({"/", std::to_string(i), " string ", hex(inputs[i]), "\n"});
  CHECK(parse_with_python(dir, doc) == want);
}

TEST_CASE("json_writer passes UTF-8 through and keeps invalid bytes recoverable", "[report][json]") {
  REQUIRE(have_python());  // /usr/bin/python3 is the oracle
  const std::string dir = scratch_dir("json_utf8");
  const std::vector<std::string> valid = {
      "caf\xc3\xa9",                      // U+00E9
      "\xe2\x82\xac",                     // U+20AC
      "\xf0\x9f\x98\x80",                 // U+1F600 (4 bytes)
      "\xed\x9f\xbf\xee\x80\x80",         // U+D7FF, U+E000 around the surrogates
      "\xf4\x8f\xbf\xbf",                 // U+10FFFF
  };
  const std::vector<std::string> invalid = {
      "\xff",                    // never in UTF-8
      "a\x80z",                  // lone continuation byte
      "\xc3",                    // truncated at the end
      "\xe2\x82z",               // truncated before an ASCII byte
      "\xc0\xaf",                // overlong '/'
      "\xed\xa0\x80",            // an encoded surrogate (U+D800)
      "\xf4\x90\x80\x80",        // past U+10FFFF
      "\xf8\x88\x80\x80\x80",    // 5-byte form
  };
  std::string doc;
  {
    json_writer w(doc);
    w.begin_object();
    w.key("valid").begin_array();
    for (const auto& s : valid) w.value(s);
    w.end_array();
    w.key("invalid").begin_array();
    for (const auto& s : invalid) w.value(s);
    w.end_array();
    w.field("key \xff", 1);
    w.end_object();
  }
  // UTF-8 stays UTF-8 (not \u-escaped): the bytes appear as they are.
  for (const auto& s : valid) CHECK(doc.find(s) != std::string::npos);
  std::string want = "ok\n object 3\n";
  want += cat({"/", hex("valid"), " array ", std::to_string(valid.size()), "\n"});
  for (std::size_t i = 0; i < valid.size(); ++i)
    want += cat({"/", hex("valid"), "/", std::to_string(i), " string ", hex(valid[i]), "\n"});
  want += cat({"/", hex("invalid"), " array ", std::to_string(invalid.size()), "\n"});
  for (std::size_t i = 0; i < invalid.size(); ++i)
    want += cat({"/", hex("invalid"), "/", std::to_string(i), " string ", hex(invalid[i]), "\n"});
  want += cat({"/", hex("key \xff"), " int 1\n"});
  CHECK(parse_with_python(dir, doc) == want);
}

TEST_CASE("json_writer numbers: the integer limits, bools, null, hex strings", "[report][json]") {
  REQUIRE(have_python());  // /usr/bin/python3 is the oracle
  const std::string dir = scratch_dir("json_numbers");
  std::string doc;
  {
    json_writer w(doc);
    w.begin_array();
    w.value(std::numeric_limits<std::int64_t>::min());
    w.value(std::numeric_limits<std::int64_t>::max());
    w.value(std::numeric_limits<std::uint64_t>::max());
    w.value(0);
    w.value(-1);
    w.value(static_cast<std::uint8_t>(255));
    w.value(static_cast<short>(-32768));
    w.value(true);
    w.value(false);
    w.value(nullptr);
    w.hex(0);
    w.hex(0xdeadbeefcafef00dull);
    w.end_array();
  }
  const std::string want =
      "ok\n array 12\n"
      "/0 int -9223372036854775808\n"
      "/1 int 9223372036854775807\n"
      "/2 int 18446744073709551615\n"
      "/3 int 0\n"
      "/4 int -1\n"
      "/5 int 255\n"
      "/6 int -32768\n"
      "/7 bool True\n"
      "/8 bool False\n"
      "/9 null\n"
      "/10 string " + hex("0x0") + "\n"
      "/11 string " + hex("0xdeadbeefcafef00d") + "\n";
  CHECK(parse_with_python(dir, doc) == want);
}

TEST_CASE("json_writer nesting: commas, empty containers, keys, deep documents, FILE* sink", "[report][json]") {
  REQUIRE(have_python());  // /usr/bin/python3 is the oracle
  const std::string dir = scratch_dir("json_nesting");
  auto build = [](json_writer& w) {
    w.begin_object();
    w.field("version", 1);
    w.key("empty_object").begin_object().end_object();
    w.key("empty_array").begin_array().end_array();
    w.key("list").begin_array();
    w.begin_object().field("a", "x").field("b", false).end_object();
    w.begin_array().value(1).begin_array().end_array().value(2).end_array();
    w.value("last");
    w.end_array();
    w.key("deep");
    for (int i = 0; i < 100; ++i) w.begin_array();
    w.value(7);
    for (int i = 0; i < 100; ++i) w.end_array();
    w.end_object();
    w.newline();
  };
  std::string doc;
  {
    json_writer w(doc);
    build(w);
  }
  // The FILE* sink writes the same bytes.
  const std::string path = dir + "/file.json";
  std::FILE* file = std::fopen(path.c_str(), "wb");
  REQUIRE(file != nullptr);
  {
    json_writer w(file);
    build(w);
  }
  std::fclose(file);
  CHECK(read_file(path) == doc);
  std::string want = "ok\n object 5\n";
  want += cat({"/", hex("version"), " int 1\n"});
  want += cat({"/", hex("empty_object"), " object 0\n"});
  want += cat({"/", hex("empty_array"), " array 0\n"});
  const std::string list = cat({"/", hex("list")});
  want += list + " array 3\n";
  want += list + "/0 object 2\n";
  want += list + "/0/" + hex("a") + " string " + hex("x") + "\n";
  want += list + "/0/" + hex("b") + " bool False\n";
  want += list + "/1 array 3\n";
  want += list + "/1/0 int 1\n";
  want += list + "/1/1 array 0\n";
  want += list + "/1/2 int 2\n";
  want += list + "/2 string " + hex("last") + "\n";
  std::string path_deep = cat({"/", hex("deep")});
  for (int i = 0; i < 100; ++i) {
    want += path_deep + " array 1\n";
    path_deep += "/0";
  }
  want += path_deep + " int 7\n";
  CHECK(parse_with_python(dir, doc) == want);
}

TEST_CASE("json_writer raw_value splices a value another writer wrote", "[report][json]") {
  std::string part;
  {
    json_writer w(part);
    w.begin_object().field("a", "x\"y").key("b").begin_array().value(1).value(2).end_array().end_object();
  }
  auto write = [&](bool spliced) {
    std::string out;
    json_writer w(out);
    w.begin_array().value(0);
    if (spliced)
      w.raw_value(part);
    else
      w.begin_object().field("a", "x\"y").key("b").begin_array().value(1).value(2).end_array().end_object();
    w.begin_object().key("k");
    if (spliced)
      w.raw_value(part);
    else
      w.begin_object().field("a", "x\"y").key("b").begin_array().value(1).value(2).end_array().end_object();
    w.end_object().end_array();
    return out;
  };
  CHECK(write(true) == write(false));
  CHECK(write(true) == R"([0,{"a":"x\"y","b":[1,2]},{"k":{"a":"x\"y","b":[1,2]}}])");
}
