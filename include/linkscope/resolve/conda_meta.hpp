// linkscope/resolve/conda_meta.hpp — a conda environment's package records,
// PREFIX/conda-meta/NAME-VERSION-BUILD.json, read as untrusted input.
//
// conda writes one JSON object (RFC 8259) per installed package with Python's
// json module. linkscope reads four members of it and skips the rest
// ("paths_data", "link", "channel", ...), validating everything it skips:
//   "name"     string            the package name
//   "version"  string
//   "depends"  array of strings  run dependencies ("libzlib >=1.2.13,<2.0a0")
//   "files"    array of strings  paths relative to the prefix ("lib/libz.so.1")
// A member given twice takes its last value, as json.loads does.
//
// The reader accepts what `json.loads(bytes)` of /usr/bin/python3 accepts and
// decodes the four members to the UTF-8 of the str values it returns:
//   - UTF-8 only, with an optional leading BOM; every byte sequence is
//     validated (no overlongs, nothing above U+10FFFF); input that starts like
//     UTF-16 or UTF-32 is refused (errc::unsupported), where Python would
//     decode it;
//   - strings: no raw control character below U+0020; the escapes
//     \" \\ \/ \b \f \n \r \t \uXXXX, a \uD8xx\uDCxx pair joined into one code
//     point; a lone surrogate (an escape, or ED A0..BF xx, which json.loads
//     decodes with 'surrogatepass') in a value that is kept is an error
//     (Python keeps it in a str that cannot be encoded as UTF-8), elsewhere it
//     is accepted;
//   - numbers as in RFC 8259 plus Python's NaN, Infinity and -Infinity, never
//     converted (Python also refuses integers of more than 4300 digits);
//   - whitespace is space, tab, CR and LF; nothing may follow the object.
// Errors come in json.loads's order: a JSON syntax error first, wherever it
// is, at the offset json.loads reports; then the first member of the wrong
// type or kept string that cannot be UTF-8.
// Bounds: nesting deeper than `max_depth` (default 512; Python's recursion
// limit stops near 1000) and input larger than `max_bytes` are refused before
// any work; every decoded string is a copy of fewer bytes than the input, and
// skipped values allocate nothing. Every error carries the byte offset where
// the input went wrong.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "linkscope/core/config.hpp"
#include "linkscope/core/error.hpp"

namespace linkscope {
inline namespace v0 {
namespace resolve {

struct conda_meta_limits {
  std::size_t max_depth = 512;                   // arrays and objects, the record itself is depth 1
  std::size_t max_bytes = std::size_t{1} << 28;  // 256 MiB (the largest real records are a few MB)
};

struct conda_meta {
  std::string name;
  std::string version;
  std::vector<std::string> depends;
  std::vector<std::string> files;
  bool has_name = false;  // "name" was present (it may be the empty string)
};

// Read one conda-meta record. The text is not kept: the result owns its strings.
result<conda_meta> read_conda_meta(std::string_view text, const conda_meta_limits& limits = {});

#if LINKSCOPE_DEFINITIONS
namespace detail {

class conda_meta_parser {
 public:
  conda_meta_parser(std::string_view text, const conda_meta_limits& limits) : s_(text), limits_(limits) {}

  result<conda_meta> run() {
    conda_meta out;
    if (s_.size() > limits_.max_bytes) return fail(errc::too_large, 0, "conda-meta record larger than the limit");
    if (s_.size() >= 2 && (s_[0] == '\0' || s_[1] == '\0' || byte(0) == 0xfe || byte(0) == 0xff))
      return fail(errc::unsupported, 0, "conda-meta record is UTF-16 or UTF-32, not UTF-8");
    if (s_.substr(0, 3) == "\xef\xbb\xbf") i_ = 3;  // json.loads(bytes) reads a UTF-8 BOM as utf-8-sig
    ws();
    if (i_ >= s_.size()) return fail(errc::truncated, i_, "conda-meta record is empty");
    if (s_[i_] != '{') {
      const std::size_t at = i_;
      LINKSCOPE_CHECK(value(1));  // syntax errors come first, as in json.loads
      ws();
      if (i_ != s_.size()) return fail(errc::malformed, i_, "data after the conda-meta record");
      return fail(errc::malformed, at, "conda-meta record is not a JSON object");
    }
    LINKSCOPE_CHECK(record(out));
    ws();
    if (i_ != s_.size()) return fail(errc::malformed, i_, "data after the conda-meta record");
    if (deferred_.code != errc::ok) return deferred_;
    return out;
  }

 private:
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
  error unexpected(const char* message) const noexcept {
    return at_end() ? fail(errc::truncated, i_, message) : fail(errc::malformed, i_, message);
  }
  result<void> expect(char c, const char* message) {
    ws();
    if (at_end() || s_[i_] != c) return unexpected(message);
    ++i_;
    return ok();
  }

  // The top-level object: keys decoded, the four members kept.
  result<void> record(conda_meta& out) {
    ++i_;  // '{'
    ws();
    if (!at_end() && s_[i_] == '}') {
      ++i_;
      return ok();
    }
    std::string key;
    for (;;) {
      ws();
      if (at_end() || s_[i_] != '"') return unexpected("expected a member name in the conda-meta record");
      key.clear();
      LINKSCOPE_CHECK(string(text_mode::key, &key));
      LINKSCOPE_CHECK(expect(':', "expected ':' after a member name"));
      ws();
      if (key == "name" || key == "version") {
        std::string& field = key == "name" ? out.name : out.version;
        if (at_end() || s_[i_] != '"') {
          if (!at_end() && s_[i_] != '"')
            defer(errc::bad_field, i_, key == "name" ? "conda-meta \"name\" is not a string"
                                                     : "conda-meta \"version\" is not a string");
          LINKSCOPE_CHECK(value(2));
        } else {
          field.clear();
          LINKSCOPE_CHECK(string(text_mode::value, &field));
          if (key == "name") out.has_name = true;
        }
      } else if (key == "files" || key == "depends") {
        LINKSCOPE_CHECK(string_array(key == "files" ? out.files : out.depends));
      } else {
        LINKSCOPE_CHECK(value(2));
      }
      ws();
      if (at_end()) return unexpected("expected ',' or '}' in the conda-meta record");
      if (s_[i_] == '}') {
        ++i_;
        return ok();
      }
      if (s_[i_] != ',') return unexpected("expected ',' or '}' in the conda-meta record");
      ++i_;
    }
  }

  result<void> string_array(std::vector<std::string>& out) {
    if (at_end()) return unexpected("expected a JSON value");
    if (s_[i_] != '[') {
      defer(errc::bad_field, i_, "conda-meta \"files\" or \"depends\" is not an array");
      return value(2);
    }
    out.clear();
    ++i_;
    ws();
    if (!at_end() && s_[i_] == ']') {
      ++i_;
      return ok();
    }
    for (;;) {
      ws();
      if (at_end()) return unexpected("expected a JSON value");
      if (s_[i_] != '"') {
        defer(errc::bad_field, i_, "conda-meta \"files\" or \"depends\" holds a non-string");
        LINKSCOPE_CHECK(value(3));
      } else {
        std::string item;
        LINKSCOPE_CHECK(string(text_mode::value, &item));
        out.push_back(std::move(item));
      }
      ws();
      if (at_end()) return unexpected("expected ',' or ']' in a JSON array");
      if (s_[i_] == ']') {
        ++i_;
        return ok();
      }
      if (s_[i_] != ',') return unexpected("expected ',' or ']' in a JSON array");
      ++i_;
    }
  }

  // Any JSON value, validated and skipped. `depth` is the nesting of a
  // container that starts here.
  result<void> value(std::size_t depth) {
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

  result<void> container(std::size_t depth) {
    if (depth > limits_.max_depth) return fail(errc::too_large, i_, "JSON nested too deeply");
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

  // A literal is reported where it starts, as json.loads does.
  result<void> literal(std::string_view word) {
    const std::string_view have = s_.substr(i_, word.size());
    if (have == word) {
      i_ += word.size();
      return ok();
    }
    const bool cut = have.size() < word.size() && word.substr(0, have.size()) == have;
    return fail(cut ? errc::truncated : errc::malformed, i_, "bad JSON literal");
  }

  bool digit() const noexcept { return !at_end() && s_[i_] >= '0' && s_[i_] <= '9'; }

  // -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?, or -Infinity. A '.' or an
  // exponent without digits is reported at the '.' or 'e' (json.loads stops
  // the number before it).
  result<void> number() {
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

  static int hex_digit(char c) noexcept {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  }
  // Four hex digits at `at`; -1 when they are not there.
  long hex4(std::size_t at) const noexcept {
    if (s_.size() - at < 4 || at > s_.size()) return -1;
    long v = 0;
    for (std::size_t k = 0; k < 4; ++k) {
      const int d = hex_digit(s_[at + k]);
      if (d < 0) return -1;
      v = v * 16 + d;
    }
    return v;
  }

  static void append_utf8(std::string& out, std::uint32_t cp) {
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

  // Length of the UTF-8 sequence at i_ (Unicode 15, table 3-7), 0 if none.
  // `surrogate` is set for ED A0..BF xx, a UTF-16 surrogate encoded as UTF-8,
  // which json.loads(bytes) decodes ('surrogatepass') into a lone surrogate.
  std::size_t utf8_length(bool& surrogate) const noexcept {
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

  // A string at '"'. `out` receives the decoded UTF-8 unless mode is skip. A
  // lone surrogate escape is an error in a kept value, U+FFFD in a key (it can
  // then match no member linkscope reads), and only validated when skipped.
  result<void> string(text_mode mode, std::string* out) {
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
  // Whether the bytes from `at` to the end are all hex digits (a \u cut short).
  bool hex_run(std::size_t at) const noexcept {
    for (std::size_t k = at; k < s_.size(); ++k)
      if (hex_digit(s_[k]) < 0) return false;
    return true;
  }

  std::string_view s_;
  conda_meta_limits limits_;
  std::size_t i_ = 0;
  error deferred_;
};

}  // namespace detail

LINKSCOPE_FUNC result<conda_meta> read_conda_meta(std::string_view text, const conda_meta_limits& limits) {
  return detail::conda_meta_parser(text, limits).run();
}
#endif  // LINKSCOPE_DEFINITIONS

}  // namespace resolve
}  // namespace v0
}  // namespace linkscope
