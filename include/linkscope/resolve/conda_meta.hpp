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
// The lexical rules and bounds live in core/json_reader.hpp (json_reader,
// which this record reader derives from).
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
#include "linkscope/core/json_reader.hpp"

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

class conda_meta_parser : public json_reader {
 public:
  conda_meta_parser(std::string_view text, const conda_meta_limits& limits)
      : json_reader(text, limits.max_depth), limits_(limits) {}
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

  conda_meta_limits limits_;
};

}  // namespace detail

LINKSCOPE_FUNC result<conda_meta> read_conda_meta(std::string_view text, const conda_meta_limits& limits) {
  return detail::conda_meta_parser(text, limits).run();
}
#endif  // LINKSCOPE_DEFINITIONS

}  // namespace resolve
}  // namespace v0
}  // namespace linkscope
