// linkscope/macho/exports.hpp — the export trie of a dylib, bundle or executable.
//
// dyld looks exported symbols up in a prefix trie (<mach-o/loader.h>, "The
// symbols exported by a dylib are encoded in a trie"), found through
// LC_DYLD_EXPORTS_TRIE or LC_DYLD_INFO(_ONLY).export_off/export_size. Each
// node, at an offset from the start of the trie, is
//   terminal_size   ULEB128; 0 if no symbol ends here, else the byte size of:
//     flags         ULEB128: kind (EXPORT_SYMBOL_FLAGS_KIND_MASK: regular 0,
//                   thread-local 1, absolute 2), WEAK_DEFINITION 0x4,
//                   REEXPORT 0x8, STUB_AND_RESOLVER 0x10, STATIC_RESOLVER 0x20
//     REEXPORT:     library ordinal ULEB128, then the imported name as a C
//                   string (empty: the same name)
//     else:         the address (image offset) ULEB128, and with
//                   STUB_AND_RESOLVER the resolver's offset ULEB128
//   child_count     one byte, then per child: the edge's characters as a C
//                   string and the child node's offset ULEB128.
// A symbol's name is the concatenation of the edges from the root.
//
// `for_each_export` walks the trie depth-first, in the order llvm-objdump
// --exports-trie prints it. Every read is bounded by the trie; a node
// reached twice (a cycle, or a shared node no linker writes) is an error, so
// the walk does at most one visit per byte of trie; the depth is bounded by
// export_max_depth; the terminal data must fit in its terminal_size.
#pragma once

#include <cstring>
#include <optional>
#include <string>
#include <type_traits>
#include <string_view>
#include <vector>

#include "linkscope/core/bytes.hpp"
#include "linkscope/core/config.hpp"
#include "linkscope/core/error.hpp"
#include "linkscope/macho/leb128.hpp"

namespace linkscope {
inline namespace v0 {
namespace macho {

inline constexpr u64 EXPORT_SYMBOL_FLAGS_KIND_MASK = 0x03, EXPORT_SYMBOL_FLAGS_KIND_REGULAR = 0x00,
                     EXPORT_SYMBOL_FLAGS_KIND_THREAD_LOCAL = 0x01, EXPORT_SYMBOL_FLAGS_KIND_ABSOLUTE = 0x02,
                     EXPORT_SYMBOL_FLAGS_WEAK_DEFINITION = 0x04, EXPORT_SYMBOL_FLAGS_REEXPORT = 0x08,
                     EXPORT_SYMBOL_FLAGS_STUB_AND_RESOLVER = 0x10, EXPORT_SYMBOL_FLAGS_STATIC_RESOLVER = 0x20;
inline constexpr std::size_t export_max_depth = 4096;

enum class export_kind : u8 { regular, thread_local_, absolute, unknown };

struct export_entry {
  std::string_view name;         // valid during the callback only (the walk's buffer)
  u64 flags = 0;
  u64 address = 0;               // not for re-exports
  u64 resolver = 0;              // STUB_AND_RESOLVER: the resolver; address is then the stub
  u64 library_ordinal = 0;       // REEXPORT: the dylib (1-based, as a bind's ordinal)
  std::string_view import_name;  // REEXPORT: the name in that dylib (empty: the same name)
  u64 node_offset = 0;           // of the terminal node in the trie

  export_kind kind() const noexcept {
    switch (flags & EXPORT_SYMBOL_FLAGS_KIND_MASK) {
      case EXPORT_SYMBOL_FLAGS_KIND_REGULAR: return export_kind::regular;
      case EXPORT_SYMBOL_FLAGS_KIND_THREAD_LOCAL: return export_kind::thread_local_;
      case EXPORT_SYMBOL_FLAGS_KIND_ABSOLUTE: return export_kind::absolute;
      default: return export_kind::unknown;
    }
  }
  bool weak_definition() const noexcept { return (flags & EXPORT_SYMBOL_FLAGS_WEAK_DEFINITION) != 0; }
  bool reexport() const noexcept { return (flags & EXPORT_SYMBOL_FLAGS_REEXPORT) != 0; }
  bool stub_and_resolver() const noexcept { return (flags & EXPORT_SYMBOL_FLAGS_STUB_AND_RESOLVER) != 0; }
  bool static_resolver() const noexcept { return (flags & EXPORT_SYMBOL_FLAGS_STATIC_RESOLVER) != 0; }
  // The name to look up in the re-exported library.
  std::string_view target_name() const noexcept { return import_name.empty() ? name : import_name; }
};

namespace detail {
// A C string inside `bytes` at `offset`; advances past its NUL.
result<std::string_view> trie_string(byte_view bytes, u64& offset, const char* what) noexcept;
// The terminal data of the node at `node_offset`, read from `at` inside
// `info` (the trie cut at the end of the terminal data).
result<export_entry> read_terminal(byte_view info, u64 node_offset, u64 at) noexcept;
}  // namespace detail

#if LINKSCOPE_DEFINITIONS
namespace detail {
LINKSCOPE_FUNC result<std::string_view> trie_string(byte_view bytes, u64& offset, const char* what) noexcept {
  if (offset >= bytes.size()) return bytes.fail(errc::truncated, offset, what);
  const void* nul = std::memchr(bytes.data() + offset, 0, bytes.size() - static_cast<std::size_t>(offset));
  if (nul == nullptr) return bytes.fail(errc::malformed, offset, what);
  const char* first = reinterpret_cast<const char*>(bytes.data() + offset);
  const auto len = static_cast<std::size_t>(static_cast<const char*>(nul) - first);
  offset += len + 1;
  return std::string_view(first, len);
}

LINKSCOPE_FUNC result<export_entry> read_terminal(byte_view info, u64 node_offset, u64 at) noexcept {
  export_entry e;
  e.node_offset = node_offset;
  LINKSCOPE_TRY(flags, read_uleb128(info, at));
  e.flags = flags;
  if (e.reexport()) {
    LINKSCOPE_TRY(ordinal, read_uleb128(info, at));
    e.library_ordinal = ordinal;
    LINKSCOPE_TRY(imported, trie_string(info, at, "export trie re-export name not terminated in its node"));
    e.import_name = imported;
  } else {
    LINKSCOPE_TRY(address, read_uleb128(info, at));
    e.address = address;
    if (e.stub_and_resolver()) {
      LINKSCOPE_TRY(resolver, read_uleb128(info, at));
      e.resolver = resolver;
    }
  }
  return e;
}
}  // namespace detail
#endif  // LINKSCOPE_DEFINITIONS

// Look one name up as dyld does (trieWalk): from the root, follow the child
// whose edge is a prefix of what is left of the name. Each step consumes at
// least one character (an empty edge never matches), so the walk takes at
// most name.size() + 1 steps. The entry's `name` is `name`. nullopt when the
// name is not exported; an error when a node on the way is malformed.
result<std::optional<export_entry>> find_export(byte_view trie, std::string_view name);

#if LINKSCOPE_DEFINITIONS
LINKSCOPE_FUNC result<std::optional<export_entry>> find_export(byte_view trie, std::string_view name) {
  using found = std::optional<export_entry>;
  if (trie.empty()) return found();
  u64 node = 0;
  std::size_t matched = 0;
  for (std::size_t step = 0;; ++step) {
    if (step > name.size() || step >= export_max_depth) return trie.fail(errc::too_large, node, "export trie too deep");
    if (node >= trie.size()) return trie.fail(errc::out_of_range, node, "export trie node past end of trie");
    u64 at = node;
    LINKSCOPE_TRY(terminal_size, read_uleb128(trie, at));
    if (!trie.contains(at, terminal_size))
      return trie.fail(errc::truncated, node, "export trie terminal info past end of trie");
    const u64 children_at = at + terminal_size;
    if (matched == name.size()) {
      if (terminal_size == 0) return found();
      LINKSCOPE_TRY(e, detail::read_terminal(trie.sub_unchecked(0, children_at), node, at));
      e.name = name;
      return found(e);
    }
    if (children_at >= trie.size()) return trie.fail(errc::truncated, children_at, "export trie child count past end of trie");
    u64 count = trie.data()[children_at];
    u64 child_at = children_at + 1;
    u64 next = 0;
    std::size_t edge_size = 0;
    const std::string_view rest = name.substr(matched);
    while (count-- > 0) {
      LINKSCOPE_TRY(edge, detail::trie_string(trie, child_at, "export trie edge not terminated"));
      LINKSCOPE_TRY(child, read_uleb128(trie, child_at));
      if (!edge.empty() && rest.substr(0, edge.size()) == edge) {
        if (child == 0) return trie.fail(errc::malformed, child_at, "export trie child points at the root");
        next = child;
        edge_size = edge.size();
        break;
      }
    }
    if (next == 0) return found();
    matched += edge_size;
    node = next;
  }
}
#endif  // LINKSCOPE_DEFINITIONS

// Visit every exported symbol, a node after its children (llvm-objdump's order):
// callback(const export_entry&) -> void or bool (false stops).
template <class F>
result<void> for_each_export(byte_view trie, F&& callback) {
  if (trie.empty()) return ok();
  struct frame {
    u64 children;      // offset of the next child record to read
    u64 remaining;     // children left
    std::size_t name;  // name length at this node
    bool terminal;     // the node exports a symbol, reported after its children
    export_entry entry;
  };
  std::vector<frame> stack;
  std::vector<bool> visited(trie.size(), false);
  std::string name;
  // Enter node `offset`: report its terminal, push its children.
  auto enter = [&](u64 offset) -> result<bool> {
    if (offset >= trie.size()) return trie.fail(errc::out_of_range, offset, "export trie node past end of trie");
    if (visited[static_cast<std::size_t>(offset)])
      return trie.fail(errc::malformed, offset, "export trie node reached twice (cycle)");
    visited[static_cast<std::size_t>(offset)] = true;
    if (stack.size() >= export_max_depth) return trie.fail(errc::too_large, offset, "export trie too deep");
    u64 at = offset;
    LINKSCOPE_TRY(terminal_size, read_uleb128(trie, at));
    const u64 terminal_start = at;
    if (!trie.contains(terminal_start, terminal_size))
      return trie.fail(errc::truncated, offset, "export trie terminal info past end of trie");
    const u64 children_at = terminal_start + terminal_size;
    if (terminal_size != 0) {
      const byte_view info = trie.sub_unchecked(0, children_at);  // terminal data may not run past its size
      LINKSCOPE_TRY(e, detail::read_terminal(info, offset, at));
      if (children_at >= trie.size()) return trie.fail(errc::truncated, children_at, "export trie child count past end of trie");
      stack.push_back({children_at + 1, trie.data()[children_at], name.size(), true, e});
      return true;
    }
    if (children_at >= trie.size()) return trie.fail(errc::truncated, children_at, "export trie child count past end of trie");
    const u8 count = trie.data()[children_at];
    stack.push_back({children_at + 1, count, name.size(), false, {}});
    return true;
  };
  LINKSCOPE_CHECK(enter(0));
  while (!stack.empty()) {
    frame& top = stack.back();
    if (top.remaining == 0) {
      // A terminal node is reported after its children, as llvm-objdump
      // (LLVM's ExportEntry iterator) lists them: _f_s before _f_.
      if (top.terminal) {
        name.resize(top.name);
        export_entry e = top.entry;
        e.name = name;
        bool go_on = true;
        if constexpr (std::is_same_v<std::invoke_result_t<F&, const export_entry&>, bool>)
          go_on = callback(e);
        else
          callback(e);
        if (!go_on) return ok();
      }
      stack.pop_back();
      continue;
    }
    --top.remaining;
    u64 at = top.children;
    name.resize(top.name);
    LINKSCOPE_TRY(edge, detail::trie_string(trie, at, "export trie edge not terminated"));
    LINKSCOPE_TRY(child, read_uleb128(trie, at));
    top.children = at;
    if (child == 0) return trie.fail(errc::malformed, at, "export trie child points at the root");
    name.append(edge);
    LINKSCOPE_TRY(more, enter(child));
    if (!more) return ok();
  }
  return ok();
}

}  // namespace macho
}  // namespace v0
}  // namespace linkscope
