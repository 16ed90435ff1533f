// linkscope/report/json.hpp — a small streaming JSON writer.
//
// No DOM: values are written as they are produced, to any sink with
// `append(const char*, size_t)` semantics (std::string by default, or a
// FILE*). Commas and nesting are tracked on a small stack; strings are escaped
// per RFC 8259: control characters (and DEL) as \u00XX, valid UTF-8 (RFC 3629:
// shortest form, no surrogates, at most U+10FFFF) passed through as it is.
// Names read from binaries may hold any bytes, and a document must stay UTF-8
// (RFC 8259 section 8.1): a byte that does not start a valid sequence is
// written as the lone surrogate \udcXX (XX the byte), the "surrogateescape"
// convention of Python (PEP 383), so a reader gets the exact bytes back, e.g.
// json.loads(doc)["name"].encode("utf-8", "surrogateescape").
//
//   json_writer w(out);
//   w.begin_object(); w.key("version"); w.value(1); w.end_object();
#pragma once

#include <charconv>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "linkscope/core/config.hpp"

namespace linkscope {
inline namespace v0 {

class json_writer {
 public:
  explicit json_writer(std::string& out) : out_(&out) {}
  explicit json_writer(std::FILE* file) : file_(file) {}
  json_writer(const json_writer&) = delete;
  json_writer& operator=(const json_writer&) = delete;
  ~json_writer() { flush(); }

  json_writer& begin_object() { return open('{'); }
  json_writer& end_object() { return close('}'); }
  json_writer& begin_array() { return open('['); }
  json_writer& end_array() { return close(']'); }

  json_writer& key(std::string_view name) {
    separate();
    write_string(name);
    put(':');
    after_key_ = true;
    return *this;
  }

  json_writer& value(std::string_view s) {
    separate();
    write_string(s);
    return *this;
  }
  json_writer& value(const char* s) { return value(std::string_view(s)); }
  json_writer& value(const std::string& s) { return value(std::string_view(s)); }
  json_writer& value(bool b) {
    separate();
    write(b ? "true" : "false");
    return *this;
  }
  json_writer& value(std::nullptr_t) {
    separate();
    write("null");
    return *this;
  }
  template <class Int, std::enable_if_t<std::is_integral_v<Int> && !std::is_same_v<Int, bool>, int> = 0>
  json_writer& value(Int n) {
    separate();
    char buf[24];
    auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), n);
    (void)ec;
    write(std::string_view(buf, static_cast<std::size_t>(end - buf)));
    return *this;
  }

  // A value written already, as JSON, by another writer (one whole value:
  // an object, an array, a string, a number or a literal).
  json_writer& raw_value(std::string_view json) {
    separate();
    write(json);
    return *this;
  }

  // key + value in one call.
  template <class V>
  json_writer& field(std::string_view name, const V& v) {
    key(name);
    return value(v);
  }

  // Write a string with a printf-free hex representation, e.g. "0x1a2b".
  json_writer& hex(std::uint64_t n);

  void flush() {
    if (file_ != nullptr && !buffer_.empty()) {
      std::fwrite(buffer_.data(), 1, buffer_.size(), file_);
      buffer_.clear();
    }
  }
  // Finish the document with a newline (CLIs print one object per run).
  void newline() { put('\n'); }

 private:
  json_writer& open(char c);
  json_writer& close(char c);
  void separate();
  void write_string(std::string_view s);
  // "\\uHHLL" into buf (7 bytes with the NUL).
  static void escape_unit(char* buf, char h1, char h2, unsigned char low) noexcept;
  // Length of the valid UTF-8 sequence at s[i] (s[i] >= 0x80), or 0.
  static std::size_t utf8_length(std::string_view s, std::size_t i) noexcept;
  void put(char c) { write(std::string_view(&c, 1)); }
  void write(std::string_view s) {
    if (out_ != nullptr) {
      out_->append(s);
    } else {
      buffer_.append(s);
      if (buffer_.size() >= 1 << 16) flush();
    }
  }

  std::string* out_ = nullptr;
  std::FILE* file_ = nullptr;
  std::string buffer_;
  std::vector<bool> first_;
  bool after_key_ = false;
};

#if LINKSCOPE_DEFINITIONS
LINKSCOPE_FUNC json_writer& json_writer::hex(std::uint64_t n) {
  char buf[20] = {'0', 'x'};
  auto [end, ec] = std::to_chars(buf + 2, buf + sizeof(buf), n, 16);
  (void)ec;
  return value(std::string_view(buf, static_cast<std::size_t>(end - buf)));
}

LINKSCOPE_FUNC json_writer& json_writer::open(char c) {
  separate();
  put(c);
  first_.push_back(true);
  return *this;
}

LINKSCOPE_FUNC json_writer& json_writer::close(char c) {
  if (!first_.empty()) first_.pop_back();
  put(c);
  return *this;
}

LINKSCOPE_FUNC void json_writer::separate() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (!first_.empty()) {
    if (!first_.back()) put(',');
    first_.back() = false;
  }
}

LINKSCOPE_FUNC void json_writer::write_string(std::string_view s) {
  put('"');
  // The printable ASCII prefix that needs no escape goes out as one run (most
  // strings are all of it); the rest is looked at byte by byte.
  std::size_t plain = 0;
  while (plain < s.size()) {
    const auto c = static_cast<unsigned char>(s[plain]);
    if (c < 0x20 || c >= 0x7f || c == '"' || c == '\\') break;
    ++plain;
  }
  std::size_t run = plain;
  for (std::size_t i = plain; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    const char* esc = nullptr;
    char ubuf[7];
    switch (c) {
      case '"': esc = "\\\""; break;
      case '\\': esc = "\\\\"; break;
      case '\n': esc = "\\n"; break;
      case '\r': esc = "\\r"; break;
      case '\t': esc = "\\t"; break;
      case '\b': esc = "\\b"; break;
      case '\f': esc = "\\f"; break;
      default:
        if (c < 0x20 || c == 0x7f) {
          escape_unit(ubuf, '0', '0', c);
          esc = ubuf;
        } else if (c >= 0x80) {
          const std::size_t n = utf8_length(s, i);
          if (n == 0) {
            escape_unit(ubuf, 'd', 'c', c);  // surrogateescape
            esc = ubuf;
          } else {
            run += n;
            i += n - 1;
            continue;
          }
        }
    }
    if (esc != nullptr) {
      write(s.substr(i - run, run));
      run = 0;
      write(esc);
    } else {
      ++run;
    }
  }
  write(s.substr(s.size() - run, run));
  put('"');
}

LINKSCOPE_FUNC void json_writer::escape_unit(char* buf, char h1, char h2, unsigned char low) noexcept {
  static constexpr char digits[] = "0123456789abcdef";
  buf[0] = '\\';
  buf[1] = 'u';
  buf[2] = h1;
  buf[3] = h2;
  buf[4] = digits[low / 16];
  buf[5] = digits[low % 16];
  buf[6] = 0;
}

LINKSCOPE_FUNC std::size_t json_writer::utf8_length(std::string_view s, std::size_t i) noexcept {
  const auto at = [&](std::size_t k) { return static_cast<unsigned char>(s[i + k]); };
  const std::size_t left = s.size() - i;
  const unsigned char c = at(0);
  std::size_t n = 0;
  unsigned char lo = 0x80, hi = 0xbf;  // the range of the second byte
  if (c >= 0xc2 && c <= 0xdf) {
    n = 2;
  } else if (c >= 0xe0 && c <= 0xef) {
    n = 3;
    if (c == 0xe0) lo = 0xa0;       // no overlong forms
    else if (c == 0xed) hi = 0x9f;  // no surrogates
  } else if (c >= 0xf0 && c <= 0xf4) {
    n = 4;
    if (c == 0xf0) lo = 0x90;       // no overlong forms
    else if (c == 0xf4) hi = 0x8f;  // nothing past U+10FFFF
  } else {
    return 0;
  }
  if (left < n || at(1) < lo || at(1) > hi) return 0;
  for (std::size_t k = 2; k < n; ++k)
    if (at(k) < 0x80 || at(k) > 0xbf) return 0;
  return n;
}

#endif  // LINKSCOPE_DEFINITIONS

}  // namespace v0
}  // namespace linkscope
