// linkscope/symbols/table.hpp — symbol sources and the flat symbol table.
//
// A *symbol source* is any view that can enumerate its symbols as `symbol`
// values: an armap, an ELF file's .symtab/.dynsym, a COFF object, an import
// library. The contract is one member function:
//
//   result<void> for_each_symbol(F&& f) const;   // f(const symbol&) -> void or bool (false stops)
//
// `symbol_table` collects one or more sources into a flat array with dense ids
// (0..size-1). Names stay views into the sources' bytes. Duplicates are kept:
// deciding which definition wins is the resolvers' job, not the table's.
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <span>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "linkscope/core/error.hpp"
#include "linkscope/symbols/symbol.hpp"

namespace linkscope {
inline namespace v0 {

namespace detail {
struct symbol_sink {
  void operator()(const symbol&) const noexcept {}
};
}  // namespace detail

template <class S>
concept symbol_source = requires(const S& source, detail::symbol_sink sink) {
  { source.for_each_symbol(sink) } -> std::same_as<result<void>>;
};

// Call f(sym) and report whether iteration should go on (f may return void or bool).
template <class F>
constexpr bool invoke_symbol_callback(F& f, const symbol& sym) {
  if constexpr (std::is_same_v<std::invoke_result_t<F&, const symbol&>, bool>)
    return f(sym);
  else {
    f(sym);
    return true;
  }
}

using symbol_id = std::uint32_t;
inline constexpr symbol_id no_symbol = ~symbol_id{0};

class symbol_table {
 public:
  symbol_table() = default;

  // Collect every symbol of `source`; `filter(sym)` may drop some.
  template <symbol_source S, class Filter>
  static result<symbol_table> from(const S& source, Filter&& filter) {
    symbol_table table;
    LINKSCOPE_CHECK(table.append(source, std::forward<Filter>(filter)));
    return table;
  }
  template <symbol_source S>
  static result<symbol_table> from(const S& source) {
    return from(source, [](const symbol&) { return true; });
  }

  template <symbol_source S, class Filter>
  result<void> append(const S& source, Filter&& filter) {
    // Sources that know their count (armap) size the table once: growing by
    // doubling writes about twice the final bytes, and fresh pages are what
    // a 10M-symbol load spends its time on (clear_page: 46% of the profile).
    if constexpr (requires { source.size(); })
      symbols_.reserve(symbols_.size() + static_cast<std::size_t>(source.size()));
    return source.for_each_symbol([&](const symbol& sym) {
      if (filter(sym)) symbols_.push_back(sym);
    });
  }
  template <symbol_source S>
  result<void> append(const S& source) {
    return append(source, [](const symbol&) { return true; });
  }
  void push_back(const symbol& sym) { symbols_.push_back(sym); }
  void reserve(std::size_t n) { symbols_.reserve(n); }

  std::size_t size() const noexcept { return symbols_.size(); }
  bool empty() const noexcept { return symbols_.empty(); }
  const symbol& operator[](symbol_id id) const noexcept { return symbols_[id]; }
  std::string_view name(symbol_id id) const noexcept { return symbols_[id].name; }
  std::string_view version(symbol_id id) const noexcept { return symbols_[id].version; }
  std::span<const symbol> symbols() const noexcept { return symbols_; }
  auto begin() const noexcept { return symbols_.begin(); }
  auto end() const noexcept { return symbols_.end(); }

 private:
  // The symbols, in a realloc'd array rather than a std::vector: `symbol` is
  // trivially copyable, and growing a large array with realloc moves its
  // pages (mremap) instead of copying them into fresh ones. A 10M-symbol load
  // (800 MB of records) otherwise writes about 2.3 GB of new pages while
  // doubling, and on a VM fresh pages are most of the cost (clear_page: 46%
  // of the profile of linkscope-index-time at 10M).
  class storage {
   public:
    static_assert(std::is_trivially_copyable_v<symbol> && std::is_trivially_destructible_v<symbol>);
    storage() = default;
    storage(const storage& other) { assign(other); }
    storage(storage&& other) noexcept
        : data_(std::exchange(other.data_, nullptr)),
          size_(std::exchange(other.size_, 0)),
          capacity_(std::exchange(other.capacity_, 0)) {}
    storage& operator=(const storage& other) {
      if (this != &other) {
        size_ = 0;
        assign(other);
      }
      return *this;
    }
    storage& operator=(storage&& other) noexcept {
      if (this != &other) {
        std::free(data_);
        data_ = std::exchange(other.data_, nullptr);
        size_ = std::exchange(other.size_, 0);
        capacity_ = std::exchange(other.capacity_, 0);
      }
      return *this;
    }
    ~storage() { std::free(data_); }

    void reserve(std::size_t n) {
      if (n <= capacity_) return;
      void* grown = std::realloc(static_cast<void*>(data_), n * sizeof(symbol));
      if (grown == nullptr) std::abort();  // like operator new without exceptions
      data_ = static_cast<symbol*>(grown);
      capacity_ = n;
    }
    void push_back(const symbol& sym) {
      if (size_ == capacity_) reserve(capacity_ < 16 ? 16 : 2 * capacity_);
      std::memcpy(static_cast<void*>(data_ + size_), &sym, sizeof(symbol));
      ++size_;
    }
    std::size_t size() const noexcept { return size_; }
    bool empty() const noexcept { return size_ == 0; }
    const symbol& operator[](std::size_t i) const noexcept { return data_[i]; }
    const symbol* begin() const noexcept { return data_; }
    const symbol* end() const noexcept { return data_ + size_; }
    operator std::span<const symbol>() const noexcept { return {data_, size_}; }  // NOLINT(google-explicit-constructor)

   private:
    void assign(const storage& other) {
      reserve(other.size_);
      if (other.size_ != 0) std::memcpy(static_cast<void*>(data_), other.data_, other.size_ * sizeof(symbol));
      size_ = other.size_;
    }
    symbol* data_ = nullptr;
    std::size_t size_ = 0;
    std::size_t capacity_ = 0;
  };
  storage symbols_;
};

}  // namespace v0
}  // namespace linkscope
