// linkscope/core/error.hpp — errors are values.
//
// Every fallible function in linkscope returns `result<T>`: either a T or an
// `error` that names what went wrong (`errc`), where (the byte offset in the
// file being read, or `no_offset`) and why (a static message, never
// allocated). Nothing here throws, so the library works with -fno-exceptions.
//
//   auto r = ar::archive::open(bytes);
//   if (!r) report(r.error().message, r.error().offset);
//
// LINKSCOPE_TRY(x, expr) unwraps a result inside a function that itself
// returns a result, propagating the error unchanged.
#pragma once

#include <cstdint>
#include <new>
#include <type_traits>
#include <utility>

namespace linkscope {
inline namespace v0 {

enum class errc : std::uint8_t {
  ok = 0,
  io_error,       // open/stat/mmap/read failed
  not_found,      // a path, symbol or member that is not there
  is_directory,   // a path names a directory
  not_regular,    // FIFO, socket, device: we only read regular files
  empty_file,     // zero bytes: no format is empty
  truncated,      // a record or table runs past the end of the bytes
  bad_magic,      // the file is not of the expected format
  bad_field,      // a header field holds junk (non-digits, bad enum value)
  out_of_range,   // an index or offset points outside its table
  overflow,       // an arithmetic overflow in offset + size
  unsupported,    // a valid variant that linkscope does not read
  malformed,      // structurally inconsistent (cycles, overlaps, no NUL)
  too_large,      // a count that exceeds what the bytes could hold
  usage,          // a caller error (bad option, bad argument)
};

constexpr const char* to_string(errc code) noexcept {
  switch (code) {
    case errc::ok: return "ok";
    case errc::io_error: return "i/o error";
    case errc::not_found: return "not found";
    case errc::is_directory: return "is a directory";
    case errc::not_regular: return "not a regular file";
    case errc::empty_file: return "empty file";
    case errc::truncated: return "truncated";
    case errc::bad_magic: return "bad magic";
    case errc::bad_field: return "bad field";
    case errc::out_of_range: return "out of range";
    case errc::overflow: return "overflow";
    case errc::unsupported: return "unsupported";
    case errc::malformed: return "malformed";
    case errc::too_large: return "too large";
    case errc::usage: return "usage";
  }
  return "unknown";
}

namespace detail {
// `deferred<T, D>` is T, spelled so that it depends on D. An inline entry point
// whose body would force heavy instantiation (visit_elf over four ELF
// variants, sorts, big lambdas) is declared
//   template <class D = void> R f(linkscope::detail::deferred<byte_view, D> bytes, ...)
// Calls are unchanged (D is never deduced, so conversions still apply), but
// the body and everything it instantiates is compiled only in a translation
// unit that calls it. A bare `template <class = void>` is not enough: clang
// instantiates the callees of non-dependent expressions in a template when it
// parses the definition, so some parameter type has to depend on D.
template <class T, class D>
struct deferred_type {
  using type = T;
};
template <class T, class D>
using deferred = typename deferred_type<T, D>::type;
}  // namespace detail

inline constexpr std::uint64_t no_offset = ~std::uint64_t{0};

struct error {
  errc code = errc::ok;
  std::uint64_t offset = no_offset;  // byte offset in the input, or no_offset
  const char* message = "";          // static storage, never freed

  constexpr bool has_offset() const noexcept { return offset != no_offset; }
  // Same error, offset moved by `base` (a member's offset inside its archive).
  constexpr error rebased(std::uint64_t base) const noexcept {
    return error{code, has_offset() ? offset + base : offset, message};
  }
};

constexpr error make_error(errc code, std::uint64_t offset, const char* message) noexcept {
  return error{code, offset, message};
}

// result<T>: a T or an error. Deliberately small: has_value / operator bool /
// value / operator* / operator-> / error. Accessing the wrong alternative is a
// programming error; it is checked with a trap, never with an exception.
template <class T>
class [[nodiscard]] result {
  static_assert(!std::is_reference_v<T>, "result<T&> is not supported");
  static_assert(!std::is_same_v<std::remove_cv_t<T>, ::linkscope::v0::error>);

 public:
  using value_type = T;

  result(const T& value) : ok_(true) { ::new (static_cast<void*>(&storage_.value)) T(value); }  // NOLINT
  result(T&& value) : ok_(true) { ::new (static_cast<void*>(&storage_.value)) T(std::move(value)); }  // NOLINT
  template <class U, std::enable_if_t<std::is_constructible_v<T, U&&> && !std::is_same_v<std::decay_t<U>, T> &&
                                          !std::is_same_v<std::decay_t<U>, ::linkscope::v0::error> &&
                                          !std::is_same_v<std::decay_t<U>, result>,
                                      int> = 0>
  result(U&& value) : ok_(true) {  // NOLINT
    ::new (static_cast<void*>(&storage_.value)) T(std::forward<U>(value));
  }
  result(::linkscope::v0::error err) noexcept : ok_(false) { storage_.err = err; }  // NOLINT

  result(const result& other) : ok_(other.ok_) {
    if (ok_)
      ::new (static_cast<void*>(&storage_.value)) T(other.storage_.value);
    else
      storage_.err = other.storage_.err;
  }
  result(result&& other) noexcept(std::is_nothrow_move_constructible_v<T>) : ok_(other.ok_) {
    if (ok_)
      ::new (static_cast<void*>(&storage_.value)) T(std::move(other.storage_.value));
    else
      storage_.err = other.storage_.err;
  }
  result& operator=(const result& other) {
    if (this != &other) {
      destroy();
      ok_ = other.ok_;
      if (ok_)
        ::new (static_cast<void*>(&storage_.value)) T(other.storage_.value);
      else
        storage_.err = other.storage_.err;
    }
    return *this;
  }
  result& operator=(result&& other) noexcept(std::is_nothrow_move_constructible_v<T>) {
    if (this != &other) {
      destroy();
      ok_ = other.ok_;
      if (ok_)
        ::new (static_cast<void*>(&storage_.value)) T(std::move(other.storage_.value));
      else
        storage_.err = other.storage_.err;
    }
    return *this;
  }
  ~result() { destroy(); }

  bool has_value() const noexcept { return ok_; }
  explicit operator bool() const noexcept { return ok_; }

  T& value() & { check(ok_); return storage_.value; }
  const T& value() const& { check(ok_); return storage_.value; }
  T&& value() && { check(ok_); return std::move(storage_.value); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  const ::linkscope::v0::error& error() const& { check(!ok_); return storage_.err; }

  template <class U>
  T value_or(U&& fallback) const& {
    return ok_ ? storage_.value : static_cast<T>(std::forward<U>(fallback));
  }

 private:
  static void check(bool condition) {
    if (!condition) __builtin_trap();
  }
  void destroy() noexcept {
    if (ok_) storage_.value.~T();
  }
  union storage {
    storage() noexcept : err() {}
    ~storage() {}
    T value;
    ::linkscope::v0::error err;
  } storage_;
  bool ok_;
};

template <>
class [[nodiscard]] result<void> {
 public:
  using value_type = void;
  result() noexcept = default;
  result(::linkscope::v0::error err) noexcept : err_(err), ok_(false) {}  // NOLINT
  bool has_value() const noexcept { return ok_; }
  explicit operator bool() const noexcept { return ok_; }
  void value() const {
    if (!ok_) __builtin_trap();
  }
  const ::linkscope::v0::error& error() const& {
    if (ok_) __builtin_trap();
    return err_;
  }

 private:
  ::linkscope::v0::error err_{};
  bool ok_ = true;
};

inline result<void> ok() noexcept { return {}; }

}  // namespace v0
}  // namespace linkscope

#define LINKSCOPE_CONCAT_IMPL_(a, b) a##b
#define LINKSCOPE_CONCAT_(a, b) LINKSCOPE_CONCAT_IMPL_(a, b)

// Unwrap a result<T> into `var` or return its error from the enclosing function.
#define LINKSCOPE_TRY(var, expr)                                              \
  auto LINKSCOPE_CONCAT_(linkscope_try_, __LINE__) = (expr);                  \
  if (!LINKSCOPE_CONCAT_(linkscope_try_, __LINE__))                           \
    return LINKSCOPE_CONCAT_(linkscope_try_, __LINE__).error();               \
  auto&& var = *std::move(LINKSCOPE_CONCAT_(linkscope_try_, __LINE__))

// Propagate the error of a result<void> (or any result whose value is unused).
#define LINKSCOPE_CHECK(expr)                                                 \
  do {                                                                        \
    auto linkscope_check_r_ = (expr);                                         \
    if (!linkscope_check_r_) return linkscope_check_r_.error();               \
  } while (0)
