// linkscope/core/bytes.hpp — endian-typed integers and checked reads.
//
// On-disk records are declared as structs of `le<T>` / `be<T>` members. Each
// member is a byte array (alignment 1), so a record has exactly the size the
// spec gives and can be copied out of any offset with memcpy; nothing is ever
// read through a cast pointer. Reading a member converts from the file's byte
// order to the host's.
//
// `byte_view` wraps the bytes of a file (or of a member inside an archive) and
// hands out records, sub-views, C strings and typed arrays only after an
// overflow-safe bounds check: `offset <= size && len <= size - offset`. A
// failed check is an `error` carrying the offset where the read was attempted.
#pragma once

#include <bit>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string_view>
#include <type_traits>

#include "linkscope/core/error.hpp"

namespace linkscope {
inline namespace v0 {

using u8 = std::uint8_t;
using u16 = std::uint16_t;
using u32 = std::uint32_t;
using u64 = std::uint64_t;
using i32 = std::int32_t;
using i64 = std::int64_t;

namespace detail {
template <class T>
constexpr T byteswap(T value) noexcept {
  static_assert(std::is_integral_v<T>);
  if constexpr (sizeof(T) == 1) {
    return value;
  } else {
    using U = std::make_unsigned_t<T>;
    U in = static_cast<U>(value);
    U out = 0;
    for (std::size_t i = 0; i < sizeof(T); ++i) {
      out = static_cast<U>((out << 8) | (in & 0xffu));
      in = static_cast<U>(in >> 8);
    }
    return static_cast<T>(out);
  }
}
}  // namespace detail

// An integer stored in byte order E, alignment 1.
template <class T, std::endian E>
struct endian_int {
  static_assert(std::is_integral_v<T>);
  unsigned char raw[sizeof(T)];

  constexpr T value() const noexcept {
    T host{};
    std::memcpy(&host, raw, sizeof(T));
    if constexpr (E != std::endian::native) host = detail::byteswap(host);
    return host;
  }
  constexpr operator T() const noexcept { return value(); }  // NOLINT(google-explicit-constructor)
  constexpr void set(T host) noexcept {
    if constexpr (E != std::endian::native) host = detail::byteswap(host);
    std::memcpy(raw, &host, sizeof(T));
  }
};

template <class T>
using le = endian_int<T, std::endian::little>;
template <class T>
using be = endian_int<T, std::endian::big>;
template <class T, std::endian E>
using endian = endian_int<T, E>;

static_assert(sizeof(le<u32>) == 4 && alignof(le<u64>) == 1);

// Read an integer of byte order E from raw bytes (no bounds check: callers use
// byte_view for that).
template <class T, std::endian E>
inline T load(const unsigned char* p) noexcept {
  endian_int<T, E> v;
  std::memcpy(v.raw, p, sizeof(T));
  return v.value();
}

// True if [offset, offset+len) fits in `size`, without overflow.
constexpr bool fits(u64 offset, u64 len, u64 size) noexcept {
  return offset <= size && len <= size - offset;
}

// Checked multiply for table sizes (count * entsize); false on overflow.
constexpr bool checked_mul(u64 a, u64 b, u64& out) noexcept {
  if (a != 0 && b > ~u64{0} / a) return false;
  out = a * b;
  return true;
}
constexpr bool checked_add(u64 a, u64 b, u64& out) noexcept {
  if (b > ~u64{0} - a) return false;
  out = a + b;
  return true;
}

// A typed, lazily-decoded array of trivially copyable records of size
// sizeof(T) (or a larger stride, for ELF entsize > sizeof(T)).
template <class T>
class record_array {
  static_assert(std::is_trivially_copyable_v<T>);

 public:
  record_array() = default;
  record_array(const unsigned char* data, std::size_t count, std::size_t stride = sizeof(T)) noexcept
      : data_(data), count_(count), stride_(stride) {}

  std::size_t size() const noexcept { return count_; }
  bool empty() const noexcept { return count_ == 0; }
  std::size_t stride() const noexcept { return stride_; }
  // The records from `first` on (none when first >= size()).
  record_array drop_front(std::size_t first) const noexcept {
    if (first >= count_) return record_array(data_, 0, stride_);
    return record_array(data_ + first * stride_, count_ - first, stride_);
  }
  T operator[](std::size_t i) const noexcept {
    T rec;
    std::memcpy(&rec, data_ + i * stride_, sizeof(T));
    return rec;
  }

  class iterator {
   public:
    using value_type = T;
    using difference_type = std::ptrdiff_t;
    iterator() = default;
    iterator(const record_array* a, std::size_t i) : array_(a), index_(i) {}
    T operator*() const { return (*array_)[index_]; }
    iterator& operator++() { ++index_; return *this; }
    iterator operator++(int) { auto t = *this; ++index_; return t; }
    bool operator==(const iterator& o) const { return index_ == o.index_; }

   private:
    const record_array* array_ = nullptr;
    std::size_t index_ = 0;
  };
  iterator begin() const { return {this, 0}; }
  iterator end() const { return {this, count_}; }

 private:
  const unsigned char* data_ = nullptr;
  std::size_t count_ = 0;
  std::size_t stride_ = sizeof(T);
};

// A non-owning view of bytes with a base offset, so that errors inside a
// member report the offset in the whole file.
class byte_view {
 public:
  constexpr byte_view() = default;
  constexpr byte_view(const unsigned char* data, std::size_t size, u64 base = 0) noexcept
      : data_(data), size_(size), base_(base) {}
  explicit byte_view(std::span<const unsigned char> s, u64 base = 0) noexcept
      : data_(s.data()), size_(s.size()), base_(base) {}
  explicit byte_view(std::string_view s, u64 base = 0) noexcept
      : data_(reinterpret_cast<const unsigned char*>(s.data())), size_(s.size()), base_(base) {}

  constexpr const unsigned char* data() const noexcept { return data_; }
  constexpr std::size_t size() const noexcept { return size_; }
  constexpr bool empty() const noexcept { return size_ == 0; }
  // Offset of data()[0] in the outermost file (for error messages).
  constexpr u64 base() const noexcept { return base_; }
  std::span<const unsigned char> span() const noexcept { return {data_, size_}; }
  std::string_view chars() const noexcept { return {reinterpret_cast<const char*>(data_), size_}; }

  bool contains(u64 offset, u64 len) const noexcept { return fits(offset, len, size_); }

  error fail(errc code, u64 offset, const char* message) const noexcept {
    return error{code, base_ + offset, message};
  }

  result<byte_view> sub(u64 offset, u64 len, const char* what = "range past end of data") const noexcept {
    if (!fits(offset, len, size_)) return fail(errc::truncated, offset, what);
    return byte_view(data_ + offset, static_cast<std::size_t>(len), base_ + offset);
  }
  // Unchecked sub-view: the caller has already validated the range.
  byte_view sub_unchecked(u64 offset, u64 len) const noexcept {
    return byte_view(data_ + offset, static_cast<std::size_t>(len), base_ + offset);
  }

  template <class T>
  result<T> read(u64 offset, const char* what = "record past end of data") const noexcept {
    static_assert(std::is_trivially_copyable_v<T>);
    if (!fits(offset, sizeof(T), size_)) return fail(errc::truncated, offset, what);
    T rec;
    std::memcpy(&rec, data_ + offset, sizeof(T));
    return rec;
  }
  // Read without a check; only after contains(offset, sizeof(T)).
  template <class T>
  T read_unchecked(u64 offset) const noexcept {
    T rec;
    std::memcpy(&rec, data_ + offset, sizeof(T));
    return rec;
  }

  template <class T>
  result<record_array<T>> array(u64 offset, u64 count, u64 stride = sizeof(T),
                                const char* what = "table past end of data") const noexcept {
    if (stride < sizeof(T) && count > 0) return fail(errc::bad_field, offset, "entry size smaller than record");
    u64 bytes = 0;
    if (!checked_mul(count, stride, bytes)) return fail(errc::overflow, offset, "table size overflows");
    if (count > 0 && stride > sizeof(T)) bytes = bytes - stride + sizeof(T);  // last entry needs only sizeof(T)
    if (!fits(offset, bytes, size_)) return fail(errc::truncated, offset, what);
    return record_array<T>(data_ + offset, static_cast<std::size_t>(count), static_cast<std::size_t>(stride));
  }

  // NUL-terminated string starting at `offset`; the NUL must lie inside the view.
  result<std::string_view> cstring(u64 offset, const char* what = "string not terminated") const noexcept {
    if (offset >= size_) return fail(errc::out_of_range, offset, "string offset past end of table");
    const void* nul = std::memchr(data_ + offset, 0, size_ - static_cast<std::size_t>(offset));
    if (nul == nullptr) return fail(errc::malformed, offset, what);
    return std::string_view(reinterpret_cast<const char*>(data_ + offset),
                            static_cast<std::size_t>(static_cast<const unsigned char*>(nul) - (data_ + offset)));
  }

 private:
  const unsigned char* data_ = nullptr;
  std::size_t size_ = 0;
  u64 base_ = 0;
};

// Parse a decimal or other-radix unsigned number from a fixed-width ASCII
// field padded with spaces (ar headers). Leading/trailing spaces are trimmed;
// an empty field is 0 only when `empty_is_zero`. Junk or overflow -> false.
inline bool parse_ascii_number(std::string_view field, u64& out, int radix = 10, bool empty_is_zero = false) noexcept {
  std::size_t begin = 0;
  std::size_t end = field.size();
  while (begin < end && field[begin] == ' ') ++begin;
  while (end > begin && (field[end - 1] == ' ' || field[end - 1] == '\0')) --end;
  if (begin == end) {
    out = 0;
    return empty_is_zero;
  }
  const char* first = field.data() + begin;
  const char* last = field.data() + end;
  u64 value = 0;
  auto [ptr, ec] = std::from_chars(first, last, value, radix);
  if (ec != std::errc{} || ptr != last) return false;
  out = value;
  return true;
}

}  // namespace v0
}  // namespace linkscope
