// macho/exports.hpp: the export trie against llvm-objdump-14 --macho
// --exports-trie on every linked fixture; re-export, resolver and malformed
// tries built here byte by byte (the expected values are the generator's).
#include "linkscope/macho/exports.hpp"

#include <catch2/catch.hpp>

#include <cstdio>
#include <string>
#include <vector>

#include "linkscope/core/mapped_file.hpp"
#include "linkscope/macho/file.hpp"
#include "macho/macho_fixtures.hpp"

using namespace linkscope;
using namespace linkscope_test;

namespace {
const std::string& fixture_dir() {
  static const std::string dir = have_macho_tools() ? make_macho_fixtures("macho_exports") : std::string();
  return dir;
}

std::string hex08(u64 v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%08llX", static_cast<unsigned long long>(v));
  return buf;
}

// llvm-objdump's line for one export.
std::string render(const macho::export_entry& e, u64 base, const std::vector<macho::dylib_ref>& dylibs) {
  std::string out = e.reexport() ? "[re-export] " : hex08(e.address + base) + "  ";
  out += std::string(e.name);
  std::vector<std::string> flags;
  if (e.weak_definition()) flags.push_back("weak_def");
  if (e.kind() == macho::export_kind::thread_local_) flags.push_back("per-thread");
  if (e.kind() == macho::export_kind::absolute) flags.push_back("absolute");
  if (e.stub_and_resolver()) flags.push_back("resolver=" + hex08(e.resolver));
  if (!flags.empty()) {
    out += " [";
    for (std::size_t i = 0; i < flags.size(); ++i) out += (i ? ", " : "") + flags[i];
    out += "]";
  }
  if (e.reexport()) {
    std::string lib = "unknown";
    if (e.library_ordinal >= 1 && e.library_ordinal <= dylibs.size())
      lib = std::string(macho::library_short_name(dylibs[e.library_ordinal - 1].name));
    out += e.import_name.empty() ? " (from " + lib + ")" : " (" + std::string(e.import_name) + " from " + lib + ")";
  }
  return out;
}

std::vector<std::string> objdump_exports(const std::string& path) {
  std::vector<std::string> out;
  bool in = false;
  for (const auto& l : lines(capture("llvm-objdump-14 --macho --exports-trie " + shell_quote(path)).out)) {
    if (l == "Exports trie:") {
      in = true;
      continue;
    }
    if (in && !l.empty()) out.push_back(l);
  }
  return out;
}
}  // namespace

namespace {
// Our rendering of PATH's export trie, lines as llvm-objdump-14 prints them.
std::vector<std::string> our_exports(const std::string& path) {
  auto mapped = mapped_file::open(path);
  REQUIRE(mapped);
  std::vector<std::string> ours;
  auto r = macho::visit_macho(mapped->bytes(), [&](const auto& f) -> result<void> {
    LINKSCOPE_TRY(trie, f.export_trie());
    LINKSCOPE_TRY(dylibs, f.dylibs());
    LINKSCOPE_TRY(segments, f.segments());
    u64 base = 0;  // llvm-objdump adds the vmaddr of the segment that maps the file's start
    for (const auto& s : segments)
      if (static_cast<u64>(s.segment.fileoff) == 0 && static_cast<u64>(s.segment.filesize) != 0) {
        base = s.segment.vmaddr;
        break;
      }
    if (!trie) return ok();
    return macho::for_each_export(*trie, [&](const macho::export_entry& e) { ours.push_back(render(e, base, dylibs)); });
  });
  REQUIRE(r);
  return ours;
}
}  // namespace

// Opt-in (LINKSCOPE_MACHO_REAL, set by scripts/real-parity, which CI runs): the npm files.
TEST_CASE("macho export trie of real files equals llvm-objdump-14", "[macho][real]") {
  for (const auto& path : real_macho_files()) {
    INFO(path);
    const auto ours = our_exports(path);
    const auto expected = objdump_exports(path);
    CHECK(ours.size() == expected.size());
    std::size_t i = 0;
    while (i < ours.size() && i < expected.size() && ours[i] == expected[i]) ++i;
    CHECK((i < ours.size() ? ours[i] : std::string("(end)")) == (i < expected.size() ? expected[i] : std::string("(end)")));
  }
}

TEST_CASE("macho export trie equals llvm-objdump-14 --exports-trie", "[macho]") {
  LINKSCOPE_MACHO_FIXTURES_OR_RETURN(fixture_dir());
  std::size_t with_exports = 0;
  for (const auto& name : macho_images()) {
    if (name.size() > 2 && name.substr(name.size() - 2) == ".o") continue;
    INFO(name);
    const std::string path = fixture_dir() + "/" + name;
    auto mapped = mapped_file::open(path);
    REQUIRE(mapped);
    std::vector<std::string> ours;
    auto r = macho::visit_macho(mapped->bytes(), [&](const auto& f) -> result<void> {
      LINKSCOPE_TRY(trie, f.export_trie());
      LINKSCOPE_TRY(dylibs, f.dylibs());
      LINKSCOPE_TRY(segments, f.segments());
      u64 base = 0;  // llvm-objdump adds the vmaddr of the segment that maps the file's start
      for (const auto& s : segments)
        if (static_cast<u64>(s.segment.fileoff) == 0 && static_cast<u64>(s.segment.filesize) != 0) {
          base = s.segment.vmaddr;
          break;
        }
      if (!trie) return ok();
      return macho::for_each_export(*trie, [&](const macho::export_entry& e) { ours.push_back(render(e, base, dylibs)); });
    });
    REQUIRE(r);
    const auto expected = objdump_exports(path);
    CHECK(ours == expected);
    if (!expected.empty()) ++with_exports;
  }
  CHECK(with_exports >= 8);
}

namespace {
void uleb(std::string& s, u64 v) {
  do {
    u8 b = v & 0x7f;
    v >>= 7;
    if (v) b |= 0x80;
    s += static_cast<char>(b);
  } while (v);
}
// A trie: root with one child edge "_" -> node A, which has two children
// "re" -> re-export of ordinal 2 as "_other", "res" ... built by hand.
std::string handmade_trie() {
  // node offsets are fixed by construction order below
  std::string root, a, re, rs, ab;
  // terminal nodes
  {
    std::string info;
    uleb(info, macho::EXPORT_SYMBOL_FLAGS_REEXPORT);
    uleb(info, 2);
    info += "_other";
    info += '\0';
    re.clear();
    uleb(re, info.size());
    re += info;
    re += '\0';  // no children
  }
  {
    std::string info;
    uleb(info, macho::EXPORT_SYMBOL_FLAGS_STUB_AND_RESOLVER | macho::EXPORT_SYMBOL_FLAGS_WEAK_DEFINITION);
    uleb(info, 0x1000);
    uleb(info, 0x2000);
    uleb(rs, info.size());
    rs += info;
    rs += '\0';
  }
  {
    std::string info;
    uleb(info, macho::EXPORT_SYMBOL_FLAGS_KIND_ABSOLUTE);
    uleb(info, 0x42);
    uleb(ab, info.size());
    ab += info;
    ab += '\0';
  }
  // layout: root at 0, then A, then re, rs, ab; compute with fixed one-byte offsets
  const std::size_t root_size = 1 + 1 + 2 + 1;  // terminal 0, count 1, "_\0", offset
  // A: terminal 0, count 3, "re\0" off, "rs\0" off, "ab\0" off
  const std::size_t a_size = 1 + 1 + 3 * (3 + 1);
  const std::size_t a_off = root_size, re_off = a_off + a_size, rs_off = re_off + re.size(), ab_off = rs_off + rs.size();
  root += '\0';
  root += '\1';
  root += "_";
  root += '\0';
  uleb(root, a_off);
  a += '\0';
  a += '\3';
  for (auto [edge, off] : {std::pair<const char*, std::size_t>{"re", re_off}, {"rs", rs_off}, {"ab", ab_off}}) {
    a += edge;
    a += '\0';
    uleb(a, off);
  }
  REQUIRE(root.size() == root_size);
  REQUIRE(a.size() == a_size);
  return root + a + re + rs + ab;
}
}  // namespace

TEST_CASE("macho export trie: re-export, resolver, absolute, as encoded", "[macho]") {
  const std::string trie = handmade_trie();
  std::vector<macho::export_entry> seen;
  std::vector<std::string> names;
  auto r = macho::for_each_export(byte_view(std::string_view(trie)), [&](const macho::export_entry& e) {
    seen.push_back(e);
    names.emplace_back(e.name);
  });
  REQUIRE(r);
  REQUIRE(names == std::vector<std::string>{"_re", "_rs", "_ab"});
  CHECK(seen[0].reexport());
  CHECK(seen[0].library_ordinal == 2);
  CHECK(seen[0].import_name == "_other");
  CHECK(seen[0].target_name() == "_other");
  CHECK(seen[1].stub_and_resolver());
  CHECK(seen[1].weak_definition());
  CHECK(seen[1].address == 0x1000);
  CHECK(seen[1].resolver == 0x2000);
  CHECK(seen[2].kind() == macho::export_kind::absolute);
  CHECK(seen[2].address == 0x42);
}

TEST_CASE("macho export trie: cycles, overflows and overruns are errors with offsets", "[macho]") {
  auto walk = [](const std::string& s) {
    return macho::for_each_export(byte_view(std::string_view(s)), [](const macho::export_entry&) {});
  };
  // root -> "a" -> node 5 -> "b" -> node 5 again: a cycle
  std::string cyc = std::string("\0\1a\0\5", 5) + std::string("\0\1b\0\5", 5);
  auto r1 = walk(cyc);
  REQUIRE_FALSE(r1);
  CHECK(r1.error().code == errc::malformed);
  CHECK(r1.error().offset == 5);
  // a child pointing at the root
  auto r2 = walk(std::string("\0\1a\0\0", 5));
  REQUIRE_FALSE(r2);
  CHECK(r2.error().code == errc::malformed);
  // a ULEB128 over 64 bits (terminal size)
  auto r3 = walk(std::string(11, '\xff') + std::string("\1", 1));
  REQUIRE_FALSE(r3);
  CHECK(r3.error().code == errc::overflow);
  CHECK(r3.error().offset == 0);
  // terminal size past the end
  auto r4 = walk(std::string("\x40\0", 2));
  REQUIRE_FALSE(r4);
  CHECK(r4.error().code == errc::truncated);
  // child offset past the end
  auto r5 = walk(std::string("\0\1a\0\x7f", 5));
  REQUIRE_FALSE(r5);
  CHECK(r5.error().code == errc::out_of_range);
  CHECK(r5.error().offset == 0x7f);
  // terminal data longer than its terminal size: the address runs past it
  auto r6 = walk(std::string("\1\0\x80\x80\0", 5));
  REQUIRE_FALSE(r6);
  // an edge without its NUL
  auto r7 = walk(std::string("\0\1abc", 5));
  REQUIRE_FALSE(r7);
  CHECK(r7.error().code == errc::malformed);
  // a chain deeper than export_max_depth is refused, not recursed
  std::string deep;
  for (std::size_t i = 0; i < macho::export_max_depth + 10; ++i) {
    const std::size_t next = deep.size() + 7;
    deep += std::string("\0\1a\0", 4);
    std::string off;
    uleb(off, next);
    off.resize(3, '\0');
    // pad the ULEB128 to 3 bytes so every node is 7 bytes long
    off[0] = static_cast<char>((next & 0x7f) | 0x80);
    off[1] = static_cast<char>(((next >> 7) & 0x7f) | 0x80);
    off[2] = static_cast<char>((next >> 14) & 0x7f);
    deep += off;
  }
  auto r8 = walk(deep);
  REQUIRE_FALSE(r8);
  CHECK(r8.error().code != errc::ok);
}
