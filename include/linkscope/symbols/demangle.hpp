// linkscope/symbols/demangle.hpp — demangle: an Itanium C++ name as `nm -C`
// prints it.
//
// The name is handed to the C++ runtime's demangler (abi::__cxa_demangle).
// A name that does not demangle is returned unchanged, as GNU nm does. A
// version suffix (`name@VER`, `name@@VER`) is kept after the demangled base.
//
// demangle_rust reads the path subset of the Rust v0 mangling (RFC 2603:
// "_R" path, with crate roots C and nested paths N, identifiers with their
// disambiguators) as llvm-nm prints it ("std::panicking::EMPTY_PANIC",
// "{closure#0}", "{shim:vtable#0}"); anything else (generic arguments,
// impls, backreferences, punycode) is left to the caller (nullopt).
#pragma once

#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

#if __has_include(<cxxabi.h>)
#include <cxxabi.h>
#define LINKSCOPE_HAVE_CXXABI 1
#endif

namespace linkscope::symbols {

// The demangled form of `name`, or `name` itself when it is not a mangled
// C++ name.
inline std::string demangle(std::string_view name) {
  std::string out(name);
#if defined(LINKSCOPE_HAVE_CXXABI)
  const std::size_t at = name.find('@');
  const std::string_view base = at == std::string_view::npos ? name : name.substr(0, at);
  if (base.size() < 2 || base[0] != '_' || base[1] != 'Z') return out;
  const std::string mangled(base);
  int status = 0;
  char* d = abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status);
  if (status == 0 && d != nullptr) {
    out = d;
    if (at != std::string_view::npos) out.append(name.substr(at));
  }
  std::free(d);
#endif
  return out;
}

namespace detail {
class rust_path_reader {
 public:
  explicit rust_path_reader(std::string_view s) : s_(s) {}

  // path: C identifier | N namespace path identifier. Printed only when `out`.
  bool path(std::string* out, int depth = 0) {
    if (depth > 64 || at_end()) return false;
    const char tag = s_[pos_++];
    if (tag == 'C') {
      std::string_view name;
      std::uint64_t disambiguator = 0;
      if (!identifier(name, disambiguator)) return false;
      if (out) out->append(name);
      return true;
    }
    if (tag != 'N' || at_end()) return false;
    const char ns = s_[pos_++];
    const bool upper = ns >= 'A' && ns <= 'Z';
    if (!upper && !(ns >= 'a' && ns <= 'z')) return false;
    if (!path(out, depth + 1)) return false;
    std::string_view name;
    std::uint64_t disambiguator = 0;
    if (!identifier(name, disambiguator)) return false;
    if (!out) return true;
    if (upper) {
      out->append("::{");
      out->append(ns == 'C' ? "closure" : ns == 'S' ? "shim" : std::string(1, ns));
      if (!name.empty()) out->append(":").append(name);
      out->append("#").append(std::to_string(disambiguator)).append("}");
    } else if (!name.empty()) {
      out->append("::").append(name);
    }
    return true;
  }
  bool at_end() const noexcept { return pos_ >= s_.size(); }

 private:
  // [s base-62-number] decimal-number [_] bytes
  bool identifier(std::string_view& name, std::uint64_t& disambiguator) {
    disambiguator = 0;
    if (!at_end() && s_[pos_] == 's') {
      ++pos_;
      std::uint64_t v = 0;
      if (!base62(v)) return false;
      disambiguator = v + 1;
    }
    if (at_end() || s_[pos_] == 'u' || s_[pos_] < '0' || s_[pos_] > '9') return false;  // punycode: not read
    std::uint64_t length = 0;
    if (s_[pos_] == '0') {
      ++pos_;
    } else {
      while (!at_end() && s_[pos_] >= '0' && s_[pos_] <= '9') {
        length = length * 10 + static_cast<std::uint64_t>(s_[pos_++] - '0');
        if (length > s_.size()) return false;
      }
    }
    if (!at_end() && s_[pos_] == '_') ++pos_;
    if (length > s_.size() - pos_) return false;
    name = s_.substr(pos_, static_cast<std::size_t>(length));
    pos_ += static_cast<std::size_t>(length);
    return true;
  }
  // "_" is 0; digits 0-9a-zA-Z then "_" is the value + 1.
  bool base62(std::uint64_t& v) {
    v = 0;
    if (!at_end() && s_[pos_] == '_') {
      ++pos_;
      return true;
    }
    while (!at_end() && s_[pos_] != '_') {
      const char c = s_[pos_++];
      std::uint64_t digit = 0;
      if (c >= '0' && c <= '9') digit = static_cast<std::uint64_t>(c - '0');
      else if (c >= 'a' && c <= 'z') digit = 10 + static_cast<std::uint64_t>(c - 'a');
      else if (c >= 'A' && c <= 'Z') digit = 36 + static_cast<std::uint64_t>(c - 'A');
      else return false;
      if (v > (UINT64_MAX - digit) / 62) return false;
      v = v * 62 + digit;
    }
    if (at_end()) return false;
    ++pos_;
    ++v;
    return true;
  }

  std::string_view s_;
  std::size_t pos_ = 0;
};
}  // namespace detail

// A Rust v0 symbol ("_R...") as LLVM's demangler prints it, or nullopt.
inline std::optional<std::string> demangle_rust(std::string_view mangled) {
  if (mangled.size() < 3 || mangled.substr(0, 2) != "_R") return std::nullopt;
  mangled.remove_prefix(2);
  if (mangled[0] >= '0' && mangled[0] <= '9') return std::nullopt;  // an encoding version: none is defined
  detail::rust_path_reader reader(mangled);
  std::string out;
  if (!reader.path(&out)) return std::nullopt;
  if (!reader.at_end() && !reader.path(nullptr)) return std::nullopt;  // the instantiating crate, not printed
  if (!reader.at_end()) return std::nullopt;
  return out;
}

}  // namespace linkscope::symbols
