// linkscope/macho/tbd.hpp — text-based stubs (.tbd), TAPI v1 to v4.
//
// Apple's SDKs ship dylibs as YAML stubs that ld64 links against
// (llvm/lib/TextAPI/TextStub.cpp reads and writes them). A file holds one or
// more documents, each opened by a `---` line (v1: `---` or `--- !tapi-tbd-v1`; v2/v3:
// `--- !tapi-tbd-v2` / `-v3`; v4: `--- !tapi-tbd` with `tbd-version: 4`) and
// closed by `...`. The documents after the first are libraries the first
// re-exports ("inlined"). Keys used here:
//   v4:    targets [ARCH-PLATFORM...], install-name, current-version,
//          compatibility-version, parent-umbrella [{targets, umbrella}],
//          allowable-clients [{targets, clients}], reexported-libraries
//          [{targets, libraries}], exports / reexports [{targets, symbols,
//          weak-symbols, thread-local-symbols, objc-classes, objc-eh-types,
//          objc-ivars}], undefineds (ignored)
//   v1-3:  archs, platform, install-name, current-version,
//          compatibility-version, parent-umbrella (a scalar), exports
//          [{archs, symbols, weak-def-symbols, thread-local-symbols,
//          objc-classes, objc-eh-types (v3), objc-ivars, re-exports,
//          allowable-clients (v1: allowed-clients)}], undefineds (ignored)
// Every other key TAPI's mapping takes for that version is accepted and
// not used (uuids, flags, swift-version / swift-abi-version,
// objc-constraint). A key outside the version's set, or a missing required
// one (archs, platform, install-name; v4 tbd-version,
// targets, install-name; a section's archs or targets) is an error at its
// offset, because ld64 refuses such a stub ("unknown key", "missing
// required key"). A repeated key replaces the earlier one, as in ld64.
// v1/v2 write Objective-C class and ivar names with a
// leading underscore that is not part of the name (objc_name).
//
// The reader accepts exactly the YAML these files use: block mappings and
// block sequences by indentation (two spaces), `- ` items that are mappings,
// flow sequences `[ a, 'b', "c" ]` that may span lines, plain and quoted
// scalars without escapes, `#` comment lines. Anything else — a tab, a bad
// indentation, an unterminated quote or flow sequence, an escape, a nesting
// deeper than tbd_max_depth — is an error with the offset of its line.
// Names are views into the text.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "linkscope/core/bytes.hpp"
#include "linkscope/core/config.hpp"
#include "linkscope/core/error.hpp"

namespace linkscope {
inline namespace v0 {
namespace macho {
namespace tbd {

inline constexpr std::size_t tbd_max_depth = 8;

// One exports/reexports section, for the targets (or archs) it names.
struct symbol_section {
  std::vector<std::string_view> targets;  // v4 targets, or v1-3 archs
  std::vector<std::string_view> symbols, weak_symbols, thread_local_symbols, objc_classes, objc_eh_types, objc_ivars;
  std::vector<std::string_view> reexported_libraries;  // v1-3 re-exports
  std::vector<std::string_view> allowable_clients;     // v1-3
};

struct document {
  unsigned version = 0;  // 1..4
  std::vector<std::string_view> targets;  // v4 targets, or v1-3 archs
  std::string_view platform;              // v1-3
  std::string_view install_name;
  std::string_view current_version = "1.0";        // as written ("1311", "1.2.3")
  std::string_view compatibility_version = "1.0";
  std::vector<std::string_view> parent_umbrella;
  std::vector<std::string_view> allowable_clients;
  std::vector<std::string_view> reexported_libraries;
  std::vector<symbol_section> exports;
  std::vector<symbol_section> reexports;  // v4: symbols re-exported from other libraries
  u64 offset = 0;                         // of the document's `---` line
};

// Every document of a .tbd file, in order (the first is the library itself).
result<std::vector<document>> read(byte_view text);

#if LINKSCOPE_DEFINITIONS
// The reader: compiled mode parses it only in src/.
namespace detail {

struct line {
  u64 offset;   // of the first character
  std::size_t indent;
  std::string_view text;  // after the indentation, trailing spaces removed
};

struct node {
  enum kind_t : u8 { scalar, sequence, mapping } kind = scalar;
  std::string_view value;                                // scalar
  std::vector<node> items;             // sequence items, or a mapping's values
  std::vector<std::string_view> keys;  // mapping keys (keys[i] names items[i])
  u64 offset = 0;
  const node* find(std::string_view key) const noexcept;
};
// The last value of `key`: TAPI's YAML reader lets a repeated key replace
// the earlier one.
inline const node* node::find(std::string_view key) const noexcept {
  for (std::size_t i = keys.size(); i-- > 0;)
    if (keys[i] == key) return &items[i];
  return nullptr;
}

class parser {
 public:
  parser(byte_view text, std::vector<line> lines) : text_(text), lines_(std::move(lines)) {}

  result<node> parse_document() {
    if (lines_.empty()) return node{node::mapping, {}, {}, {}, 0};
    return block(lines_[0].indent, 0);
  }

 private:
  error fail(u64 offset, const char* message) const { return text_.fail(errc::malformed, offset, message); }

  result<node> block(std::size_t indent, std::size_t depth) {
    if (depth > tbd_max_depth) return fail(lines_[pos_].offset, "tbd nesting too deep");
    const line& first = lines_[pos_];
    if (first.text.substr(0, 2) == "- " || first.text == "-") return sequence(indent, depth);
    return mapping(indent, depth);
  }

  result<node> sequence(std::size_t indent, std::size_t depth) {
    node out;
    out.kind = node::sequence;
    out.offset = lines_[pos_].offset;
    while (pos_ < lines_.size() && lines_[pos_].indent == indent &&
           (lines_[pos_].text.substr(0, 2) == "- " || lines_[pos_].text == "-")) {
      line& l = lines_[pos_];
      if (l.text == "-") return fail(l.offset, "empty tbd sequence item");
      // The item's content becomes a line of its own, two columns in.
      std::size_t skip = 2;
      while (skip < l.text.size() && l.text[skip] == ' ') ++skip;
      l.indent += skip;
      l.offset += skip;
      l.text = l.text.substr(skip);
      if (is_mapping_line(l.text)) {
        LINKSCOPE_TRY(item, mapping(l.indent, depth + 1));
        out.items.push_back(std::move(item));
      } else {
        LINKSCOPE_TRY(item, value(l.text, l.offset, depth + 1));
        out.items.push_back(std::move(item));
      }
    }
    if (pos_ < lines_.size() && lines_[pos_].indent > indent) return fail(lines_[pos_].offset, "bad indentation in tbd");
    return out;
  }

  static bool is_mapping_line(std::string_view t) noexcept {
    if (t.empty() || t[0] == '[' || t[0] == '\'' || t[0] == '"') return false;
    const auto colon = t.find(':');
    return colon != std::string_view::npos && (colon + 1 == t.size() || t[colon + 1] == ' ');
  }

  result<node> mapping(std::size_t indent, std::size_t depth) {
    node out;
    out.kind = node::mapping;
    out.offset = lines_[pos_].offset;
    while (pos_ < lines_.size() && lines_[pos_].indent == indent) {
      const line l = lines_[pos_];
      if (!is_mapping_line(l.text)) return fail(l.offset, "expected 'key: value' in tbd");
      const auto colon = l.text.find(':');
      const std::string_view key = l.text.substr(0, colon);
      std::string_view rest = colon + 1 < l.text.size() ? l.text.substr(colon + 2) : std::string_view();
      while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
      const u64 rest_offset = l.offset + (l.text.size() - rest.size());
      if (rest.empty()) {
        ++pos_;
        if (pos_ < lines_.size() && (lines_[pos_].indent > indent ||
                                     (lines_[pos_].indent == indent && lines_[pos_].text.substr(0, 2) == "- "))) {
          LINKSCOPE_TRY(child, block(lines_[pos_].indent, depth + 1));
          out.keys.push_back(key);
          out.items.push_back(std::move(child));
        } else {
          out.keys.push_back(key);
          out.items.push_back(node{node::scalar, {}, {}, {}, l.offset});
        }
      } else {
        LINKSCOPE_TRY(child, value(rest, rest_offset, depth + 1));
        out.keys.push_back(key);
          out.items.push_back(std::move(child));
      }
    }
    if (pos_ < lines_.size() && lines_[pos_].indent > indent) return fail(lines_[pos_].offset, "bad indentation in tbd");
    return out;
  }

  // A value on the current line: a flow sequence (maybe spanning lines) or a scalar.
  result<node> value(std::string_view text, u64 offset, std::size_t depth) {
    if (depth > tbd_max_depth) return fail(offset, "tbd nesting too deep");
    if (text.front() != '[') {
      ++pos_;
      return scalar(text, offset);
    }
    // Scan the raw text from '[' to its ']' (quotes respected), across lines.
    const std::string_view all = text_.chars();
    node out;
    out.kind = node::sequence;
    out.offset = offset;
    u64 at = offset + 1;
    for (;;) {
      while (at < all.size() && (all[at] == ' ' || all[at] == '\n' || all[at] == '\r')) ++at;
      if (at >= all.size()) return fail(offset, "tbd flow sequence not closed");
      if (all[at] == ']') break;
      u64 end = at;
      if (all[at] == '\'' || all[at] == '"') {
        const auto close = all.find(all[at], at + 1);
        if (close == std::string_view::npos) return fail(at, "tbd quoted string not closed");
        end = close + 1;
      } else {
        while (end < all.size() && all[end] != ',' && all[end] != ']' && all[end] != '\n') ++end;
        if (end < all.size() && all[end] == '\n') {
          // a plain item may not run over a line end without a comma
          u64 next = end;
          while (next < all.size() && (all[next] == ' ' || all[next] == '\n' || all[next] == '\r')) ++next;
          if (next < all.size() && all[next] != ',' && all[next] != ']') return fail(at, "tbd flow item without a comma");
        }
      }
      std::string_view item = all.substr(at, end - at);
      while (!item.empty() && (item.back() == ' ' || item.back() == '\r')) item.remove_suffix(1);
      LINKSCOPE_TRY(s, scalar(item, at));
      out.items.push_back(std::move(s));
      at = end;
      while (at < all.size() && (all[at] == ' ' || all[at] == '\n' || all[at] == '\r')) ++at;
      if (at < all.size() && all[at] == ',') {
        ++at;
        continue;
      }
      if (at < all.size() && all[at] == ']') break;
      if (at >= all.size()) return fail(offset, "tbd flow sequence not closed");
      return fail(at, "expected ',' or ']' in tbd flow sequence");
    }
    // Go on after the line that holds the ']'; it must end there.
    while (pos_ < lines_.size() && lines_[pos_].offset + lines_[pos_].text.size() <= at) ++pos_;
    if (pos_ >= lines_.size() || lines_[pos_].offset + lines_[pos_].text.size() != at + 1)
      return fail(at, "text after a tbd flow sequence");
    ++pos_;
    return out;
  }

  result<node> scalar(std::string_view text, u64 offset) const {
    if (text.empty()) return fail(offset, "empty tbd value");
    if (text.front() == '\'' || text.front() == '"') {
      if (text.size() < 2 || text.back() != text.front()) return fail(offset, "tbd quoted string not closed");
      text = text.substr(1, text.size() - 2);
      if (text.find('\\') != std::string_view::npos || text.find('\'') != std::string_view::npos)
        return text_.fail(errc::unsupported, offset, "escapes in tbd strings are not read");
      return node{node::scalar, text, {}, {}, offset + 1};
    }
    return node{node::scalar, text, {}, {}, offset};
  }

  byte_view text_;
  std::vector<line> lines_;
  std::size_t pos_ = 0;
};

inline result<std::vector<std::string_view>> strings(const node* n, byte_view text) {
  std::vector<std::string_view> out;
  if (n == nullptr) return out;
  if (n->kind == node::scalar) {
    if (!n->value.empty()) out.push_back(n->value);
    return out;
  }
  if (n->kind != node::sequence) return text.fail(errc::bad_field, n->offset, "tbd list expected");
  for (const auto& item : n->items) {
    if (item.kind != node::scalar) return text.fail(errc::bad_field, item.offset, "tbd list of names expected");
    out.push_back(item.value);
  }
  return out;
}

inline result<std::string_view> string(const node* n, byte_view text) {
  if (n == nullptr) return std::string_view();
  if (n->kind != node::scalar) return text.fail(errc::bad_field, n->offset, "tbd scalar expected");
  return n->value;
}

// The keys TAPI's YAML mapping takes in one kind of mapping, for one
// version, and which of them it requires. ld64 refuses a stub with a key
// outside the set ("unknown key") or without a required one, so this
// reader does too: otherwise it would list exports from a stub that no
// link can use.
struct key_set {
  std::span<const std::string_view> allowed;
  std::span<const std::string_view> required;
};

// Error messages are static strings, so each required key has its own.
inline const char* missing_key_message(std::string_view key) noexcept {
  if (key == "archs") return "tbd mapping without its required key 'archs'";
  if (key == "targets") return "tbd mapping without its required key 'targets'";
  if (key == "platform") return "tbd document without its required key 'platform'";
  if (key == "install-name") return "tbd document without its required key 'install-name'";
  if (key == "tbd-version") return "tbd document without its required key 'tbd-version'";
  return "tbd mapping without a required key (umbrella, clients, libraries, target or value)";
}

// As TAPI's YAML reader: a missing required key first, at the mapping;
// then an unknown key, at the key. A key given twice is not an error: the
// last one counts (node::find), as ld64.lld-14 and -16 take it.
inline result<void> check_keys(const node& map, const key_set& set, byte_view text) {
  for (std::string_view k : set.required)
    if (map.find(k) == nullptr) return text.fail(errc::bad_field, map.offset, missing_key_message(k));
  const char* const base = text.chars().data();
  for (std::string_view key : map.keys) {
    bool known = false;
    for (std::string_view k : set.allowed) known = known || k == key;
    const u64 at = static_cast<u64>(key.data() - base);
    if (!known) return text.fail(errc::bad_field, at, "unknown key in a tbd mapping of this version");
  }
  return ok();
}

// TAPI's key sets (TextStub.cpp's mappings), per version.
namespace keys {
using sv = std::string_view;
inline constexpr sv archs[] = {"archs"};
inline constexpr sv targets[] = {"targets"};
inline constexpr sv section_v1[] = {"archs",        "allowed-clients", "re-exports",       "symbols",
                                    "objc-classes", "objc-ivars",      "weak-def-symbols", "thread-local-symbols"};
inline constexpr sv section_v2[] = {"archs",        "allowable-clients", "re-exports",       "symbols",
                                    "objc-classes", "objc-ivars",        "weak-def-symbols", "thread-local-symbols"};
inline constexpr sv section_v3[] = {"archs",         "allowable-clients", "re-exports", "symbols", "objc-classes",
                                    "objc-eh-types", "objc-ivars", "weak-def-symbols", "thread-local-symbols"};
inline constexpr sv section_v4[] = {"targets",    "symbols",      "objc-classes",        "objc-eh-types",
                                    "objc-ivars", "weak-symbols", "thread-local-symbols"};
inline constexpr sv undefined_v2[] = {"archs", "symbols", "objc-classes", "objc-ivars", "weak-ref-symbols"};
inline constexpr sv undefined_v3[] = {"archs", "symbols", "objc-classes", "objc-eh-types", "objc-ivars",
                                      "weak-ref-symbols"};
inline constexpr sv document_v1[] = {"archs",           "platform",      "install-name",    "current-version",
                                     "compatibility-version", "swift-version", "objc-constraint", "exports"};
inline constexpr sv document_v2[] = {"archs",           "uuids",           "platform",        "flags",
                                     "install-name",    "current-version", "compatibility-version", "swift-version",
                                     "objc-constraint", "parent-umbrella", "exports",         "undefineds"};
inline constexpr sv document_v3[] = {"archs",           "uuids",           "platform",        "flags",
                                     "install-name",    "current-version", "compatibility-version", "swift-abi-version",
                                     "objc-constraint", "parent-umbrella", "exports",         "undefineds"};
inline constexpr sv document_v4[] = {"tbd-version",       "targets",         "uuids",
                                     "flags",             "install-name",    "current-version",
                                     "compatibility-version", "swift-abi-version", "parent-umbrella",
                                     "allowable-clients", "reexported-libraries", "exports",
                                     "reexports",         "undefineds"};
inline constexpr sv required_v1[] = {"archs", "platform", "install-name"};
inline constexpr sv required_v4[] = {"tbd-version", "targets", "install-name"};
inline constexpr sv umbrella[] = {"targets", "umbrella"};
inline constexpr sv clients[] = {"targets", "clients"};
inline constexpr sv libraries[] = {"targets", "libraries"};
inline constexpr sv uuid[] = {"target", "value"};
}  // namespace keys

// Export sections (v1-3), and every symbol section of v4.
inline key_set section_keys(unsigned version) {
  if (version >= 4) return {keys::section_v4, keys::targets};
  if (version == 3) return {keys::section_v3, keys::archs};
  if (version == 2) return {keys::section_v2, keys::archs};
  return {keys::section_v1, keys::archs};
}

inline key_set document_keys(unsigned version) {
  if (version >= 4) return {keys::document_v4, keys::required_v4};
  if (version == 3) return {keys::document_v3, keys::required_v1};
  if (version == 2) return {keys::document_v2, keys::required_v1};
  return {keys::document_v1, keys::required_v1};
}

// Every item of a list of mappings (a v4 metadata list, undefineds, uuids)
// has only the keys of `keys`. The values are not used here.
inline result<void> check_list(const node* n, const key_set& set, byte_view text) {
  if (n == nullptr || n->kind != node::sequence) return ok();
  for (const auto& item : n->items) {
    if (item.kind != node::mapping) return text.fail(errc::bad_field, item.offset, "tbd mapping expected");
    LINKSCOPE_CHECK(check_keys(item, set, text));
  }
  return ok();
}

inline result<std::vector<symbol_section>> sections(const node* n, byte_view text, unsigned version) {
  std::vector<symbol_section> out;
  if (n == nullptr) return out;
  if (n->kind != node::sequence) return text.fail(errc::bad_field, n->offset, "tbd exports must be a list");
  const key_set allowed = section_keys(version);
  for (const auto& item : n->items) {
    if (item.kind != node::mapping) return text.fail(errc::bad_field, item.offset, "tbd export section must be a mapping");
    LINKSCOPE_CHECK(check_keys(item, allowed, text));
    symbol_section s;
    LINKSCOPE_TRY(targets, strings(item.find(version >= 4 ? "targets" : "archs"), text));
    s.targets = targets;
    LINKSCOPE_TRY(symbols, strings(item.find("symbols"), text));
    s.symbols = symbols;
    LINKSCOPE_TRY(weak, strings(item.find(version >= 4 ? "weak-symbols" : "weak-def-symbols"), text));
    s.weak_symbols = weak;
    LINKSCOPE_TRY(tls, strings(item.find("thread-local-symbols"), text));
    s.thread_local_symbols = tls;
    LINKSCOPE_TRY(classes, strings(item.find("objc-classes"), text));
    s.objc_classes = classes;
    LINKSCOPE_TRY(eh, strings(item.find("objc-eh-types"), text));
    s.objc_eh_types = eh;
    LINKSCOPE_TRY(ivars, strings(item.find("objc-ivars"), text));
    s.objc_ivars = ivars;
    LINKSCOPE_TRY(reexports, strings(item.find("re-exports"), text));
    s.reexported_libraries = reexports;
    LINKSCOPE_TRY(clients, strings(item.find(version == 1 ? "allowed-clients" : "allowable-clients"), text));
    s.allowable_clients = clients;
    out.push_back(std::move(s));
  }
  return out;
}

// v4 lists of {targets, KEY: [...]} (reexported-libraries, allowable-clients, parent-umbrella).
inline result<std::vector<std::string_view>> targeted(const node* n, std::string_view key, byte_view text) {
  std::vector<std::string_view> out;
  if (n == nullptr) return out;
  if (n->kind == node::scalar) return strings(n, text);
  if (n->kind != node::sequence) return text.fail(errc::bad_field, n->offset, "tbd list expected");
  for (const auto& item : n->items) {
    if (item.kind != node::mapping) return text.fail(errc::bad_field, item.offset, "tbd mapping expected");
    LINKSCOPE_TRY(values, strings(item.find(key), text));
    out.insert(out.end(), values.begin(), values.end());
  }
  return out;
}

inline result<document> to_document(const node& root, unsigned tag_version, u64 offset, byte_view text) {
  if (root.kind != node::mapping) return text.fail(errc::bad_field, offset, "tbd document must be a mapping");
  document d;
  d.offset = offset;
  // The tag decides the form, as in TAPI: `--- !tapi-tbd` is v4 whatever
  // its tbd-version says, and tbd-version is a key of v4 only.
  d.version = tag_version;
  if (const node* v = root.find("tbd-version")) {
    u64 version = 0;
    if (v->kind != node::scalar || !parse_ascii_number(v->value, version) || version < 1 || version > 4)
      return text.fail(errc::bad_field, v->offset, "tbd-version is not 1 to 4");
  }
  LINKSCOPE_CHECK(check_keys(root, document_keys(d.version), text));
  if (d.version >= 4) {
    LINKSCOPE_CHECK(check_list(root.find("parent-umbrella"), {keys::umbrella, keys::umbrella}, text));
    LINKSCOPE_CHECK(check_list(root.find("allowable-clients"), {keys::clients, keys::clients}, text));
    LINKSCOPE_CHECK(check_list(root.find("reexported-libraries"), {keys::libraries, keys::libraries}, text));
    LINKSCOPE_CHECK(check_list(root.find("uuids"), {keys::uuid, keys::uuid}, text));
    LINKSCOPE_CHECK(check_list(root.find("undefineds"), section_keys(4), text));
  } else if (d.version >= 2) {
    const key_set undefined = {d.version == 3 ? std::span<const std::string_view>(keys::undefined_v3)
                                              : std::span<const std::string_view>(keys::undefined_v2),
                               keys::archs};
    LINKSCOPE_CHECK(check_list(root.find("undefineds"), undefined, text));
  }
  LINKSCOPE_TRY(install, string(root.find("install-name"), text));
  if (install.empty()) return text.fail(errc::bad_field, offset, "tbd document without install-name");
  d.install_name = install;
  LINKSCOPE_TRY(current, string(root.find("current-version"), text));
  if (!current.empty()) d.current_version = current;
  LINKSCOPE_TRY(compat, string(root.find("compatibility-version"), text));
  if (!compat.empty()) d.compatibility_version = compat;
  LINKSCOPE_TRY(targets, strings(root.find(d.version >= 4 ? "targets" : "archs"), text));
  d.targets = targets;
  LINKSCOPE_TRY(platform, string(root.find("platform"), text));
  d.platform = platform;
  LINKSCOPE_TRY(exports, sections(root.find("exports"), text, d.version));
  d.exports = std::move(exports);
  LINKSCOPE_TRY(reexports, sections(root.find("reexports"), text, d.version));
  d.reexports = std::move(reexports);
  LINKSCOPE_TRY(umbrella, targeted(root.find("parent-umbrella"), "umbrella", text));
  d.parent_umbrella = umbrella;
  LINKSCOPE_TRY(clients, targeted(root.find("allowable-clients"), "clients", text));
  d.allowable_clients = clients;
  LINKSCOPE_TRY(libraries, targeted(root.find("reexported-libraries"), "libraries", text));
  d.reexported_libraries = libraries;
  for (const auto& s : d.exports) {
    d.reexported_libraries.insert(d.reexported_libraries.end(), s.reexported_libraries.begin(), s.reexported_libraries.end());
    d.allowable_clients.insert(d.allowable_clients.end(), s.allowable_clients.begin(), s.allowable_clients.end());
  }
  return d;
}

}  // namespace detail

LINKSCOPE_FUNC result<std::vector<document>> read(byte_view text) {
  std::vector<document> out;
  const std::string_view all = text.chars();
  std::vector<detail::line> lines;
  unsigned tag_version = 0;
  u64 doc_offset = 0;
  bool in_document = false;
  auto finish = [&]() -> result<void> {
    detail::parser p(text, std::move(lines));
    lines.clear();
    LINKSCOPE_TRY(root, p.parse_document());
    LINKSCOPE_TRY(doc, detail::to_document(root, tag_version, doc_offset, text));
    out.push_back(std::move(doc));
    return ok();
  };
  u64 at = 0;
  while (at < all.size()) {
    u64 end = all.find('\n', at);
    if (end == std::string_view::npos) end = all.size();
    std::string_view raw = all.substr(at, end - at);
    if (!raw.empty() && raw.back() == '\r') raw.remove_suffix(1);
    const u64 line_offset = at;
    at = end + 1;
    std::size_t indent = 0;
    while (indent < raw.size() && raw[indent] == ' ') ++indent;
    std::string_view body = raw.substr(indent);
    while (!body.empty() && body.back() == ' ') body.remove_suffix(1);
    if (body.empty() || body.front() == '#') continue;
    if (body.front() == '\t')
      return text.fail(errc::malformed, line_offset, "tab indentation in tbd");
    if (indent == 0 && body.substr(0, 3) == "---") {
      if (in_document) LINKSCOPE_CHECK(finish());
      const std::string_view tag = body.substr(3);
      if (tag.empty()) tag_version = 1;
      else if (tag == " !tapi-tbd-v1") tag_version = 1;
      else if (tag == " !tapi-tbd-v2") tag_version = 2;
      else if (tag == " !tapi-tbd-v3") tag_version = 3;
      else if (tag == " !tapi-tbd") tag_version = 4;
      else return text.fail(errc::unsupported, line_offset, "unknown tbd document tag");
      in_document = true;
      doc_offset = line_offset;
      continue;
    }
    if (indent == 0 && body == "...") {
      if (!in_document) return text.fail(errc::malformed, line_offset, "'...' outside a tbd document");
      LINKSCOPE_CHECK(finish());
      in_document = false;
      continue;
    }
    if (!in_document) return text.fail(errc::malformed, line_offset, "tbd text outside a document");
    lines.push_back({line_offset + indent, indent, body});
  }
  if (in_document) LINKSCOPE_CHECK(finish());
  if (out.empty()) return text.fail(errc::bad_magic, 0, "no tbd document");
  return out;
}
#endif  // LINKSCOPE_DEFINITIONS

// Whether a section (or a document) listing `targets` applies to `arch`
// (x86_64, arm64, ...): v4 targets are ARCH-PLATFORM ("arm64-macos",
// "x86_64-maccatalyst"), v1-3 archs are plain; an empty list applies to all.
inline bool applies_to(const std::vector<std::string_view>& targets, std::string_view arch) noexcept {
  if (targets.empty() || arch.empty()) return true;
  for (std::string_view t : targets) {
    const auto dash = t.find('-');
    if (t.substr(0, dash) == arch) return true;
  }
  return false;
}

// An Objective-C class or ivar name as TAPI reads it: v1 and v2 stubs
// write it with a leading underscore ("_NSObject"), which is not part of
// the name; v3 and v4 write the name itself. ld64.lld-14 links
// _OBJC_CLASS_$_NSObject against a v2 `objc-classes: [ _NSObject ]`.
inline std::string_view objc_name(const document& d, std::string_view written) noexcept {
  return d.version <= 2 && !written.empty() ? written.substr(1) : written;
}

// The symbol names a document exports for `arch`, as ld64 and dyld see
// them: symbols, weak symbols (weak = true), thread-local symbols, the
// re-exported symbols of v4 `reexports`, and the Objective-C names (see
// objc_name) spelled as the objc2 ABI does (_OBJC_CLASS_$_X and _OBJC_METACLASS_$_X per class,
// _OBJC_EHTYPE_$_X, _OBJC_IVAR_$_X). callback(std::string_view name, bool weak);
// the objc names are built in a buffer valid during the call only.
template <class F>
void for_each_exported_name(const document& d, std::string_view arch, F&& callback) {
  std::string buffer;
  auto objc = [&](std::string_view prefix, std::string_view name) {
    buffer.assign(prefix);
    buffer.append(name);
    callback(std::string_view(buffer), false);
  };
  for (const auto* list : {&d.exports, &d.reexports}) {
    for (const symbol_section& s : *list) {
      if (!applies_to(s.targets, arch)) continue;
      for (std::string_view n : s.symbols) callback(n, false);
      for (std::string_view n : s.weak_symbols) callback(n, true);
      for (std::string_view n : s.thread_local_symbols) callback(n, false);
      for (std::string_view n : s.objc_classes) {
        n = objc_name(d, n);
        objc("_OBJC_CLASS_$_", n);
        objc("_OBJC_METACLASS_$_", n);
      }
      for (std::string_view n : s.objc_eh_types) objc("_OBJC_EHTYPE_$_", n);
      for (std::string_view n : s.objc_ivars) objc("_OBJC_IVAR_$_", objc_name(d, n));
    }
  }
}

// A tbd version string ("1311", "1.2.3", "1311.100.3") packed as a Mach-O
// dylib version (xxxx.yy.zz); a component past its field is clamped, as
// TAPI's PackedVersion does. nullopt when it is not digits and dots.
inline std::optional<u32> packed_version_of(std::string_view text) noexcept {
  u32 parts[3] = {0, 0, 0};
  const u32 limits[3] = {0xffff, 0xff, 0xff};
  std::size_t index = 0;
  std::size_t start = 0;
  while (start <= text.size()) {
    const auto dot = text.find('.', start);
    const std::string_view part = text.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
    u64 value = 0;
    if (part.empty() || !parse_ascii_number(part, value)) return std::nullopt;
    if (index < 3) parts[index] = value > limits[index] ? limits[index] : static_cast<u32>(value);
    ++index;
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  return (parts[0] << 16) | (parts[1] << 8) | parts[2];
}

}  // namespace tbd
}  // namespace macho
}  // namespace v0
}  // namespace linkscope
