// linkscope/core/error.hpp — errors are values, and one diagnostic says where.
//
// Every fallible function in linkscope returns `result<T>`: either a T or an
// `error` that names what went wrong (`errc`), where in the bytes (the offset,
// or `no_offset`) and why (a static message, never allocated). `error` stays
// 16 bytes and trivially copyable, because the format layers (ar/, elf/, coff/,
// macho/) return it from every read and know nothing of paths.
//
// A `diagnostic` is that error plus *which input*: the file (as the caller
// named it), the archive member where there is one, and optionally a line of
// run-time context. It is what the library hands to a user. The resolvers,
// which open paths, produce it; a CLI never has to rediscover which input
// failed. The offset is always in the file that a user can open: for an
// archive member it is the offset in the archive (so `od -A x -j OFFSET lib.a`
// shows the bytes), except for a thin archive's member, which is a file of its
// own. One function formats it for every CLI (report/diagnostic.hpp):
//
//   linkscope-X: FILE: error: MESSAGE (offset 0x...)
//   linkscope-X: lib.a(member.o): error: MESSAGE (offset 0x...)
//
// How a resolver reports problems:
//
//   // 1. It cannot answer at all: fail with a diagnostic naming the input.
//   //    `result<T, diagnostic>` is result<T> with a diagnostic as its error.
//   result<my_report, diagnostic> my_question(const std::vector<std::string>& paths) {
//     for (const std::string& path : paths) {
//       auto file = mapped_file::open(path);
//       if (!file) return diagnostic(file.error(), path);
//       auto elf = elf::file<ET>::open(file->bytes());
//       if (!elf) return diagnostic(elf.error(), path);
//       ...
//       // inside an archive: the member, and an offset in the archive
//       if (!r) return diagnostic(r.error().rebased(member.data_offset), path, member.name);
//     }
//   }
//
//   // 2. It can go on without one input or one part of it (a DSO of the
//   //    closure with a broken .gnu.version_d): record a warning on the
//   //    object or the report, and keep what could be read.
//   struct loaded_object { ...; std::vector<diagnostic> problems; };
//   if (!v) obj.problems.push_back(diagnostic::warning(v.error(), obj.path));
//
// A CLI prints either kind with print_diagnostic(tool, d) (report/diagnostic.hpp). Do not
// format "(offset 0x...)" anywhere else.
//
// LINKSCOPE_TRY(x, expr) unwraps a result inside a function that itself
// returns a result of the same error type, propagating the error unchanged.
// The errc values are documented in docs/errors.md; tests/core/test_errors.cpp
// checks that table against this enum.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <new>
#include <string>
#include <type_traits>
#include <utility>

// LINKSCOPE_TRAP(): stop at once on a programming error (reading the wrong
// alternative of a result). __builtin_trap where the compiler has it, else
// std::abort (MSVC and others).
#if defined(__has_builtin)
#if __has_builtin(__builtin_trap)
#define LINKSCOPE_TRAP() __builtin_trap()
#endif
#endif
#if !defined(LINKSCOPE_TRAP) && (defined(__GNUC__) || defined(__clang__))
#define LINKSCOPE_TRAP() __builtin_trap()
#endif
#if !defined(LINKSCOPE_TRAP)
#define LINKSCOPE_TRAP() std::abort()
#endif

namespace linkscope {
inline namespace v0 {

// Documented in docs/errors.md (one row per value; tests/core/test_errors.cpp
// checks the table against this enum, to_string and name_of).
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

// The enumerator's own name ("io_error"), for JSON and for the table in
// docs/errors.md.
constexpr const char* name_of(errc code) noexcept {
  switch (code) {
    case errc::ok: return "ok";
    case errc::io_error: return "io_error";
    case errc::not_found: return "not_found";
    case errc::is_directory: return "is_directory";
    case errc::not_regular: return "not_regular";
    case errc::empty_file: return "empty_file";
    case errc::truncated: return "truncated";
    case errc::bad_magic: return "bad_magic";
    case errc::bad_field: return "bad_field";
    case errc::out_of_range: return "out_of_range";
    case errc::overflow: return "overflow";
    case errc::unsupported: return "unsupported";
    case errc::malformed: return "malformed";
    case errc::too_large: return "too_large";
    case errc::usage: return "usage";
  }
  return "unknown";
}

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

// "MESSAGE (offset 0x1a4)": the message (or the errc's name when it is
// empty) and, when there is one, the offset in hex. The one place that writes
// "(offset 0x...)": report/diagnostic.hpp's formatter and the resolvers'
// warnings (a string per problem) both use it.
inline std::string describe(const error& e) {
  std::string out = e.message[0] != '\0' ? e.message : to_string(e.code);
  if (e.has_offset()) {
    static constexpr char digits[] = "0123456789abcdef";
    char buf[16];
    int n = 0;
    std::uint64_t v = e.offset;
    do {
      buf[n++] = digits[v & 0xf];
      v >>= 4;
    } while (v != 0);
    out.append(" (offset 0x");
    while (n > 0) out.push_back(buf[--n]);
    out.push_back(')');
  }
  return out;
}

enum class severity : std::uint8_t { error, warning };

// An error and the input it is about. See the comment at the top.
struct diagnostic {
  ::linkscope::v0::error err;  // code, offset (in `file`), static message
  std::string file;            // the path or argument as the caller wrote it; "" if none
  std::string member;          // archive member name; "" for a plain file
  std::string context;         // optional run-time context ("a.rsp -> b.rsp -> a.rsp"); "" if none
  severity level = severity::error;

  diagnostic() = default;
  diagnostic(::linkscope::v0::error e, std::string file_name, std::string member_name = {})
      : err(e), file(std::move(file_name)), member(std::move(member_name)) {}

  static diagnostic warning(::linkscope::v0::error e, std::string file_name, std::string member_name = {}) {
    diagnostic d(e, std::move(file_name), std::move(member_name));
    d.level = severity::warning;
    return d;
  }

  errc code() const noexcept { return err.code; }
  std::uint64_t offset() const noexcept { return err.offset; }
  bool has_offset() const noexcept { return err.has_offset(); }
  // The static message, or the errc's name when the message is empty.
  const char* message() const noexcept { return err.message[0] != '\0' ? err.message : to_string(err.code); }
  // "file" or "lib.a(member.o)", as linkers and nm name an archive member.
  std::string where() const {
    if (member.empty()) return file;
    std::string out;
    out.reserve(file.size() + member.size() + 2);
    out.append(file).append("(").append(member).append(")");
    return out;
  }
};

// result<T, E>: a T or an E (an `error` by default; a `diagnostic` where a
// resolver names the input). Deliberately small: has_value / operator bool /
// value / operator* / operator-> / error. Accessing the wrong alternative is a
// programming error; it is checked with LINKSCOPE_TRAP, never with an exception.
template <class T, class E = ::linkscope::v0::error>
class [[nodiscard]] result {
  static_assert(!std::is_reference_v<T>, "result<T&> is not supported");
  static_assert(!std::is_same_v<std::remove_cv_t<T>, E>);

 public:
  using value_type = T;
  using error_type = E;

  result(const T& value) : ok_(true) { ::new (static_cast<void*>(&storage_.value)) T(value); }  // NOLINT
  result(T&& value) : ok_(true) { ::new (static_cast<void*>(&storage_.value)) T(std::move(value)); }  // NOLINT
  template <class U, std::enable_if_t<std::is_constructible_v<T, U&&> && !std::is_same_v<std::decay_t<U>, T> &&
                                          !std::is_same_v<std::decay_t<U>, E> &&
                                          !std::is_same_v<std::decay_t<U>, result>,
                                      int> = 0>
  result(U&& value) : ok_(true) {  // NOLINT
    ::new (static_cast<void*>(&storage_.value)) T(std::forward<U>(value));
  }
  result(const E& err) : ok_(false) { ::new (static_cast<void*>(&storage_.err)) E(err); }  // NOLINT
  result(E&& err) noexcept(std::is_nothrow_move_constructible_v<E>) : ok_(false) {  // NOLINT
    ::new (static_cast<void*>(&storage_.err)) E(std::move(err));
  }

  result(const result& other) : ok_(other.ok_) { construct_from(other); }
  result(result&& other) noexcept(std::is_nothrow_move_constructible_v<T> && std::is_nothrow_move_constructible_v<E>)
      : ok_(other.ok_) {
    construct_from(std::move(other));
  }
  result& operator=(const result& other) {
    if (this != &other) {
      destroy();
      ok_ = other.ok_;
      construct_from(other);
    }
    return *this;
  }
  result& operator=(result&& other) noexcept(std::is_nothrow_move_constructible_v<T> &&
                                             std::is_nothrow_move_constructible_v<E>) {
    if (this != &other) {
      destroy();
      ok_ = other.ok_;
      construct_from(std::move(other));
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

  const E& error() const& { check(!ok_); return storage_.err; }

  template <class U>
  T value_or(U&& fallback) const& {
    return ok_ ? storage_.value : static_cast<T>(std::forward<U>(fallback));
  }

 private:
  static void check(bool condition) {
    if (!condition) LINKSCOPE_TRAP();
  }
  template <class R>
  void construct_from(R&& other) {
    if (ok_)
      ::new (static_cast<void*>(&storage_.value)) T(std::forward<R>(other).storage_.value);
    else
      ::new (static_cast<void*>(&storage_.err)) E(std::forward<R>(other).storage_.err);
  }
  void destroy() noexcept {
    if (ok_)
      storage_.value.~T();
    else
      storage_.err.~E();
  }
  union storage {
    storage() noexcept {}
    ~storage() {}
    T value;
    E err;
  } storage_;
  bool ok_;
};

template <class E>
class [[nodiscard]] result<void, E> {
 public:
  using value_type = void;
  using error_type = E;
  result() noexcept = default;
  result(const E& err) : err_(err), ok_(false) {}  // NOLINT
  result(E&& err) noexcept(std::is_nothrow_move_constructible_v<E>) : err_(std::move(err)), ok_(false) {}  // NOLINT
  bool has_value() const noexcept { return ok_; }
  explicit operator bool() const noexcept { return ok_; }
  void value() const {
    if (!ok_) LINKSCOPE_TRAP();
  }
  const E& error() const& {
    if (ok_) LINKSCOPE_TRAP();
    return err_;
  }

 private:
  E err_{};
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
