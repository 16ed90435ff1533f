// linkscope/core/json_reader.hpp — a strict, bounded JSON reader.
//
// One reader for every JSON input linkscope takes (conda-meta records,
// auditwheel policy files): RFC 8259 as /usr/bin/python3's json.loads accepts
// it, validated byte by byte.
//   - UTF-8 only; every byte sequence is validated (no overlongs, nothing
//     above U+10FFFF); strings: no raw control character below U+0020; the
//     escapes \" \\ \/ \b \f \n \r \t \uXXXX, a \uD8xx\uDCxx pair joined into one
//     code point; a lone surrogate in a kept value is an error reported after
//     the syntax (json.loads keeps it in a str that cannot be UTF-8);
//   - numbers as in RFC 8259 plus Python's NaN, Infinity and -Infinity, kept
//     as text, never converted;
//   - whitespace is space, tab, CR and LF.
// Nesting deeper than `max_depth` is refused; a skipped value allocates
// nothing. Every error carries the byte offset where the input went wrong.
//
// Two ways to use it: a record reader derives from json_reader and pulls the
// members it wants with the primitives (string, value to skip, expect), as
// resolve/conda_meta.hpp does; or read_json() builds a small tree
// (json_value) of a document known to be small (policy files), bounded by
// `max_bytes`.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "linkscope/core/config.hpp"
#include "linkscope/core/error.hpp"

namespace linkscope {
inline namespace v0 {

class json_reader {
 public:
  json_reader(std::string_view text, std::size_t max_depth) : s_(text), max_depth_(max_depth) {}

  // The position of the next byte to read.
  std::size_t position() const noexcept { return i_; }
  // The first deferred error (a wrong type or a kept string that is not UTF-8), ok when none.
  const error& deferred() const noexcept { return deferred_; }

  enum class text_mode { skip, key, value };

  static error fail(errc code, std::size_t at, const char* message) noexcept { return error{code, at, message}; }
  // A member of the wrong type, or a kept string that is no UTF-8: reported
  // once the whole input is known to be JSON, as json.loads finds syntax
  // errors before anyone looks at the values. The first one wins.
  void defer(errc code, std::size_t at, const char* message) noexcept {
    if (deferred_.code == errc::ok) deferred_ = error{code, at, message};
  }
  unsigned byte(std::size_t at) const noexcept { return static_cast<unsigned char>(s_[at]); }
  bool at_end() const noexcept { return i_ >= s_.size(); }
  void ws() noexcept {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r')) ++i_;
  }
  // The input ended where more was required: truncated; anything else: malformed.
  error unexpected(const char* message) const noexcept;
  result<void> expect(char c, const char* message);

  // Any JSON value, validated and skipped. `depth` is the nesting of a
  // container that starts here.
  result<void> value(std::size_t depth);

  result<void> container(std::size_t depth);

  // A literal is reported where it starts, as json.loads does.
  result<void> literal(std::string_view word);

  bool digit() const noexcept { return !at_end() && s_[i_] >= '0' && s_[i_] <= '9'; }

  // -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?, or -Infinity. A '.' or an
  // exponent without digits is reported at the '.' or 'e' (json.loads stops
  // the number before it).
  result<void> number();

  static int hex_digit(char c) noexcept;
  // Four hex digits at `at`; -1 when they are not there.
  long hex4(std::size_t at) const noexcept;

  static void append_utf8(std::string& out, std::uint32_t cp);

  // Length of the UTF-8 sequence at i_ (Unicode 15, table 3-7), 0 if none.
  // `surrogate` is set for ED A0..BF xx, a UTF-16 surrogate encoded as UTF-8,
  // which json.loads(bytes) decodes ('surrogatepass') into a lone surrogate.
  std::size_t utf8_length(bool& surrogate) const noexcept;

  // A string at '"'. `out` receives the decoded UTF-8 unless mode is skip. A
  // lone surrogate escape is an error in a kept value, U+FFFD in a key (it can
  // then match no member linkscope reads), and only validated when skipped.
  result<void> string(text_mode mode, std::string* out);
  // Whether the bytes from `at` to the end are all hex digits (a \u cut short).
  bool hex_run(std::size_t at) const noexcept;

 protected:
  std::string_view s_;
  std::size_t max_depth_ = 512;
  std::size_t i_ = 0;
  error deferred_;
};

// A parsed JSON document (read_json).
struct json_member;
struct json_value {
  enum class kind : std::uint8_t { null, boolean, number, string, array, object };
  kind type = kind::null;
  bool boolean = false;
  std::string text;  // a string's decoded UTF-8, or a number as written
  std::vector<json_value> items;                             // array
  std::vector<json_member> members;                          // object, in document order
  std::size_t offset = 0;                                    // where the value starts

  bool is_object() const noexcept { return type == kind::object; }
  bool is_array() const noexcept { return type == kind::array; }
  bool is_string() const noexcept { return type == kind::string; }
  bool is_number() const noexcept { return type == kind::number; }
  // The last member named `key` (json.loads keeps the last), nullptr when none.
  const json_value* find(std::string_view key) const noexcept;
};

struct json_member {
  std::string name;
  json_value value;
};

struct json_limits {
  std::size_t max_depth = 512;
  std::size_t max_bytes = std::size_t{1} << 24;  // 16 MiB: a tree costs a few times its text
};

// Parse a whole JSON document into a tree.
result<json_value> read_json(std::string_view text, const json_limits& limits = {});

#if LINKSCOPE_DEFINITIONS
LINKSCOPE_FUNC error json_reader::unexpected(const char* message) const noexcept {
  return at_end() ? fail(errc::truncated, i_, message) : fail(errc::malformed, i_, message);
}

LINKSCOPE_FUNC auto json_reader::expect(char c, const char* message) -> result<void> {
  ws();
  if (at_end() || s_[i_] != c) return unexpected(message);
  ++i_;
  return ok();
}

LINKSCOPE_FUNC auto json_reader::value(std::size_t depth) -> result<void> {
  ws();
  if (at_end()) return unexpected("expected a JSON value");
  switch (s_[i_]) {
    case '{':
    case '[': return container(depth);
    case '"': return string(text_mode::skip, nullptr);
    case 't': return literal("true");
    case 'f': return literal("false");
    case 'n': return literal("null");
    case 'N': return literal("NaN");
    case 'I': return literal("Infinity");
    default: return number();
  }
}

LINKSCOPE_FUNC auto json_reader::container(std::size_t depth) -> result<void> {
  if (depth > max_depth_) return fail(errc::too_large, i_, "JSON nested too deeply");
  const bool object = s_[i_] == '{';
  const char close = object ? '}' : ']';
  ++i_;
  ws();
  if (!at_end() && s_[i_] == close) {
    ++i_;
    return ok();
  }
  for (;;) {
    if (object) {
      ws();
      if (at_end() || s_[i_] != '"') return unexpected("expected a member name in a JSON object");
      LINKSCOPE_CHECK(string(text_mode::skip, nullptr));
      LINKSCOPE_CHECK(expect(':', "expected ':' after a member name"));
    }
    LINKSCOPE_CHECK(value(depth + 1));
    ws();
    if (at_end()) return unexpected(object ? "expected ',' or '}' in a JSON object" : "expected ',' or ']' in a JSON array");
    if (s_[i_] == close) {
      ++i_;
      return ok();
    }
    if (s_[i_] != ',') return unexpected(object ? "expected ',' or '}' in a JSON object" : "expected ',' or ']' in a JSON array");
    ++i_;
  }
}

LINKSCOPE_FUNC auto json_reader::literal(std::string_view word) -> result<void> {
  const std::string_view have = s_.substr(i_, word.size());
  if (have == word) {
    i_ += word.size();
    return ok();
  }
  const bool cut = have.size() < word.size() && word.substr(0, have.size()) == have;
  return fail(cut ? errc::truncated : errc::malformed, i_, "bad JSON literal");
}

LINKSCOPE_FUNC auto json_reader::number() -> result<void> {
  const std::size_t start = i_;
  if (s_[i_] == '-') {
    if (s_.size() - i_ > 1 && s_[i_ + 1] == 'I') return literal("-Infinity");
    ++i_;
  }
  if (!digit()) return fail(at_end() ? errc::truncated : errc::malformed, start, "expected a JSON value");
  if (s_[i_] == '0') {
    ++i_;
  } else {
    while (digit()) ++i_;
  }
  if (!at_end() && s_[i_] == '.') {
    const std::size_t dot = i_++;
    if (!digit()) return fail(at_end() ? errc::truncated : errc::malformed, dot, "expected a digit after '.' in a JSON number");
    while (digit()) ++i_;
  }
  if (!at_end() && (s_[i_] == 'e' || s_[i_] == 'E')) {
    const std::size_t e = i_++;
    if (!at_end() && (s_[i_] == '+' || s_[i_] == '-')) ++i_;
    if (!digit()) return fail(at_end() ? errc::truncated : errc::malformed, e, "expected a digit in a JSON exponent");
    while (digit()) ++i_;
  }
  return ok();
}

LINKSCOPE_FUNC auto json_reader::hex_digit(char c) noexcept -> int {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

LINKSCOPE_FUNC auto json_reader::hex4(std::size_t at) const noexcept -> long {
  if (s_.size() - at < 4 || at > s_.size()) return -1;
  long v = 0;
  for (std::size_t k = 0; k < 4; ++k) {
    const int d = hex_digit(s_[at + k]);
    if (d < 0) return -1;
    v = v * 16 + d;
  }
  return v;
}

LINKSCOPE_FUNC void json_reader::append_utf8(std::string& out, std::uint32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xc0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3f)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xe0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3f)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3f)));
  } else {
    out.push_back(static_cast<char>(0xf0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3f)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3f)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3f)));
  }
}

LINKSCOPE_FUNC std::size_t json_reader::utf8_length(bool& surrogate) const noexcept {
  const unsigned b0 = byte(i_);
  std::size_t n = 0;
  unsigned lo = 0x80, hi = 0xbf;  // range of the second byte
  surrogate = false;
  if (b0 >= 0xc2 && b0 <= 0xdf) {
    n = 2;
  } else if (b0 >= 0xe0 && b0 <= 0xef) {
    n = 3;
    if (b0 == 0xe0) lo = 0xa0;
  } else if (b0 >= 0xf0 && b0 <= 0xf4) {
    n = 4;
    if (b0 == 0xf0) lo = 0x90;
    if (b0 == 0xf4) hi = 0x8f;  // nothing above U+10FFFF
  } else {
    return 0;
  }
  if (s_.size() - i_ < n) return 0;
  if (byte(i_ + 1) < lo || byte(i_ + 1) > hi) return 0;
  for (std::size_t k = 2; k < n; ++k)
    if (byte(i_ + k) < 0x80 || byte(i_ + k) > 0xbf) return 0;
  surrogate = b0 == 0xed && byte(i_ + 1) >= 0xa0;
  return n;
}

LINKSCOPE_FUNC auto json_reader::string(text_mode mode, std::string* out) -> result<void> {
  const std::size_t start = i_;
  ++i_;
  for (;;) {
    if (at_end()) return fail(errc::truncated, start, "unterminated JSON string");
    const unsigned c = byte(i_);
    if (c == '"') {
      ++i_;
      return ok();
    }
    if (c < 0x20) return fail(errc::malformed, i_, "control character in a JSON string");
    if (c < 0x80 && c != '\\') {
      const std::size_t run = i_;
      while (i_ < s_.size() && byte(i_) >= 0x20 && byte(i_) < 0x80 && s_[i_] != '"' && s_[i_] != '\\') ++i_;
      if (out != nullptr) out->append(s_.data() + run, i_ - run);
      continue;
    }
    if (c >= 0x80) {
      bool surrogate = false;
      const std::size_t n = utf8_length(surrogate);
      if (n == 0) {
        // A sequence cut by the end of the input is truncated; anything else malformed.
        const bool cut = (c >= 0xc2 && c <= 0xf4) && s_.size() - i_ < (c >= 0xf0 ? 4u : c >= 0xe0 ? 3u : 2u);
        bool prefix_ok = cut;
        for (std::size_t k = i_ + 1; cut && k < s_.size(); ++k) prefix_ok = prefix_ok && byte(k) >= 0x80 && byte(k) <= 0xbf;
        return fail(prefix_ok ? errc::truncated : errc::malformed, i_, "invalid UTF-8 in a JSON string");
      }
      if (surrogate) {
        if (mode == text_mode::value)
          defer(errc::malformed, i_, "UTF-16 surrogate encoded in a JSON string (not valid UTF-8)");
        if (out != nullptr) append_utf8(*out, 0xfffd);
      } else if (out != nullptr) {
        out->append(s_.data() + i_, n);
      }
      i_ += n;
      continue;
    }
    // An escape.
    const std::size_t escape = i_;
    if (s_.size() - i_ < 2) return fail(errc::truncated, start, "unterminated JSON string");
    const char e = s_[i_ + 1];
    i_ += 2;
    char plain = 0;
    switch (e) {
      case '"': plain = '"'; break;
      case '\\': plain = '\\'; break;
      case '/': plain = '/'; break;
      case 'b': plain = '\b'; break;
      case 'f': plain = '\f'; break;
      case 'n': plain = '\n'; break;
      case 'r': plain = '\r'; break;
      case 't': plain = '\t'; break;
      case 'u': break;
      default: return fail(errc::malformed, escape, "bad JSON escape");
    }
    if (e != 'u') {
      if (out != nullptr) out->push_back(plain);
      continue;
    }
    // json.loads wants room for the closing quote after the four digits and
    // reports a \u cut by the end at its 'u'.
    const long unit = s_.size() - i_ > 4 ? hex4(i_) : -1;
    if (unit < 0) {
      return fail(s_.size() - i_ <= 4 && hex_run(i_) ? errc::truncated : errc::malformed, escape + 1,
                  "bad \\u escape in a JSON string");
    }
    i_ += 4;
    std::uint32_t cp = static_cast<std::uint32_t>(unit);
    bool lone = false;
    if (cp >= 0xd800 && cp <= 0xdbff) {
      const long low = s_.size() - i_ > 6 && s_[i_] == '\\' && s_[i_ + 1] == 'u' ? hex4(i_ + 2) : -1;
      if (low >= 0xdc00 && low <= 0xdfff) {
        cp = 0x10000 + ((cp - 0xd800) << 10) + (static_cast<std::uint32_t>(low) - 0xdc00);
        i_ += 6;
      } else {
        lone = true;
      }
    } else if (cp >= 0xdc00 && cp <= 0xdfff) {
      lone = true;
    }
    if (lone) {
      if (mode == text_mode::value) defer(errc::malformed, escape, "lone UTF-16 surrogate in a JSON string (not valid UTF-8)");
      cp = 0xfffd;
    }
    if (out != nullptr) append_utf8(*out, cp);
  }
}

LINKSCOPE_FUNC bool json_reader::hex_run(std::size_t at) const noexcept {
  for (std::size_t k = at; k < s_.size(); ++k)
    if (hex_digit(s_[k]) < 0) return false;
  return true;
}

LINKSCOPE_FUNC const json_value* json_value::find(std::string_view key) const noexcept {
  for (auto it = members.rbegin(); it != members.rend(); ++it)
    if (it->name == key) return &it->value;
  return nullptr;
}

namespace detail {
class json_tree_reader : public json_reader {
 public:
  using json_reader::json_reader;
  result<json_value> run(std::size_t max_bytes) {
    if (s_.size() > max_bytes) return fail(errc::too_large, 0, "JSON document larger than the limit");
    if (s_.substr(0, 3) == "\xef\xbb\xbf") i_ = 3;
    json_value out;
    LINKSCOPE_CHECK(tree(out, 1));
    ws();
    if (i_ != s_.size()) return fail(errc::malformed, i_, "data after the JSON document");
    if (deferred_.code != errc::ok) return deferred_;
    return out;
  }

 private:
  result<void> tree(json_value& out, std::size_t depth) {
    ws();
    if (at_end()) return unexpected("expected a JSON value");
    out.offset = i_;
    const char c = s_[i_];
    if (c == '"') {
      out.type = json_value::kind::string;
      return string(text_mode::value, &out.text);
    }
    if (c == '{' || c == '[') {
      if (depth > max_depth_) return fail(errc::too_large, i_, "JSON nested too deeply");
      const bool object = c == '{';
      out.type = object ? json_value::kind::object : json_value::kind::array;
      const char close = object ? '}' : ']';
      ++i_;
      ws();
      if (!at_end() && s_[i_] == close) {
        ++i_;
        return ok();
      }
      for (;;) {
        if (object) {
          ws();
          if (at_end() || s_[i_] != '"') return unexpected("expected a member name in a JSON object");
          std::string key;
          LINKSCOPE_CHECK(string(text_mode::key, &key));
          LINKSCOPE_CHECK(expect(':', "expected ':' after a member name"));
          out.members.push_back(json_member{std::move(key), json_value{}});
          LINKSCOPE_CHECK(tree(out.members.back().value, depth + 1));
        } else {
          out.items.emplace_back();
          LINKSCOPE_CHECK(tree(out.items.back(), depth + 1));
        }
        ws();
        if (at_end()) return unexpected(object ? "expected ',' or '}' in a JSON object" : "expected ',' or ']' in a JSON array");
        if (s_[i_] == close) {
          ++i_;
          return ok();
        }
        if (s_[i_] != ',') return unexpected(object ? "expected ',' or '}' in a JSON object" : "expected ',' or ']' in a JSON array");
        ++i_;
      }
    }
    const std::size_t start = i_;
    if (c == 't' || c == 'f') {
      out.type = json_value::kind::boolean;
      out.boolean = c == 't';
      return literal(c == 't' ? "true" : "false");
    }
    if (c == 'n') return literal("null");
    out.type = json_value::kind::number;
    LINKSCOPE_CHECK(c == 'N' ? literal("NaN") : c == 'I' ? literal("Infinity") : number());
    out.text.assign(s_.data() + start, i_ - start);
    return ok();
  }
};
}  // namespace detail

LINKSCOPE_FUNC result<json_value> read_json(std::string_view text, const json_limits& limits) {
  return detail::json_tree_reader(text, limits.max_depth).run(limits.max_bytes);
}
#endif  // LINKSCOPE_DEFINITIONS

}  // namespace v0
}  // namespace linkscope
