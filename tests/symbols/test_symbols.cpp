// symbols/: the symbol model, symbol_table and hash_index.
#include <linkscope/symbols/index.hpp>
#include <linkscope/symbols/symbol.hpp>
#include <linkscope/symbols/table.hpp>

#include <catch2/catch.hpp>

#include <string>
#include <vector>

using namespace linkscope;

namespace {
// A minimal symbol_source over owned strings.
struct vector_source {
  std::vector<std::string> names;
  std::vector<std::string> versions;
  result<void> for_each_symbol(auto&& f) const {
    for (std::size_t i = 0; i < names.size(); ++i) {
      symbol sym;
      sym.name = names[i];
      sym.version = i < versions.size() ? std::string_view(versions[i]) : std::string_view();
      sym.index = static_cast<std::uint32_t>(i);
      sym.origin = i;
      if (!invoke_symbol_callback(f, sym)) break;
    }
    return ok();
  }
};
static_assert(symbol_source<vector_source>);
}  // namespace

TEST_CASE("hash_index returns every definition, in order", "[symbols][index]") {
  vector_source source;
  source.names = {"foo", "bar", "foo", "baz", "foo"};
  source.versions = {"V1", "", "V2", "", ""};
  auto table = symbol_table::from(source);
  REQUIRE(table);
  REQUIRE(table->size() == 5);
  auto index = hash_index::build(*table);
  CHECK(index.find("foo") == std::vector<symbol_id>{0, 2, 4});
  CHECK(index.find("bar") == std::vector<symbol_id>{1});
  CHECK(index.find("qux").empty());
  CHECK(index.find("foo", "V2") == std::vector<symbol_id>{2});
  CHECK(index.find("foo", "") == std::vector<symbol_id>{4});
  CHECK(index.find_first("baz") == 3);
  CHECK(index.find_first("nope") == no_symbol);
}

TEST_CASE("hash_index stays within 16 bytes per symbol and finds all of 100k", "[symbols][index]") {
  vector_source source;
  for (int i = 0; i < 100000; ++i) source.names.push_back("_ZN4llvm6detail" + std::to_string(i) + "E");
  auto table = symbol_table::from(source);
  REQUIRE(table);
  auto index = hash_index::build(*table);
  CHECK(index.size() == 100000);
  CHECK(index.memory_bytes() <= 16 * index.size());
  std::size_t wrong = 0;
  for (symbol_id id = 0; id < table->size(); ++id) {
    auto ids = index.find(table->name(id));
    if (ids.size() != 1 || ids[0] != id) ++wrong;
  }
  CHECK(wrong == 0);
  CHECK_FALSE(index.contains("_ZN4llvm6detail100000E"));
  // Sizes that are not near a power of two still fit the budget.
  for (int n : {1, 7, 1000, 65537, 131073}) {
    vector_source s;
    for (int i = 0; i < n; ++i) s.names.push_back(std::to_string(i));
    auto t = symbol_table::from(s);
    auto ix = hash_index::build(*t);
    CHECK(ix.memory_bytes() <= 16 * static_cast<std::size_t>(n) + 64);
  }
}

TEST_CASE("symbol_table filters and callbacks may stop early", "[symbols][table]") {
  vector_source source;
  source.names = {"a", "b", "c", "d"};
  auto table = symbol_table::from(source, [](const symbol& s) { return s.name != "b"; });
  REQUIRE(table);
  CHECK(table->size() == 3);
  int seen = 0;
  auto r = source.for_each_symbol([&](const symbol&) { return ++seen < 2; });
  CHECK(r.has_value());
  CHECK(seen == 2);
  auto keep_c = hash_index::build(*table, [](const symbol& s) { return s.name == "c"; });
  CHECK(keep_c.size() == 1);
  CHECK(keep_c.contains("c"));
  CHECK_FALSE(keep_c.contains("a"));
}

TEST_CASE("keyed_index: one entry per key, ids in insertion order, payload per entry", "[symbols][index]") {
  std::vector<std::string> names;
  for (int i = 0; i < 50000; ++i) names.push_back("sym" + std::to_string(i * 7919 % 50021));
  keyed_index<std::string_view, int> map;
  for (std::size_t i = 0; i < names.size(); ++i) {
    auto [id, inserted] = map.insert(names[i]);
    REQUIRE(inserted);
    REQUIRE(id == i);
    map[id] = static_cast<int>(i) * 3;
  }
  CHECK(map.size() == names.size());
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < names.size(); ++i) {
    auto [id, inserted] = map.insert(names[i]);
    if (inserted || id != i || map[id] != static_cast<int>(i) * 3 || map.key(id) != names[i]) ++wrong;
    if (map.find(std::string(names[i])) != i) ++wrong;
  }
  CHECK(wrong == 0);
  CHECK(map.find("sym-1") == map.npos);
  // A payload-less map keeps only keys; the hash may be given.
  keyed_index<std::string_view> keys;
  const auto h = keyed_index<std::string_view>::hash("x");
  CHECK(keys.find("x", h) == keys.npos);
  CHECK(keys.insert("x", h) == std::pair<std::uint32_t, bool>{0, true});
  CHECK(keys.insert("x") == std::pair<std::uint32_t, bool>{0, false});
  CHECK(keys.find("x", h) == 0);
}

TEST_CASE("basic_hash_index keeps equal keys in insertion order across growth", "[symbols][index]") {
  // Keys are small integers with a deliberately poor hasher, so runs are long
  // and wrap around the end of the slot array.
  struct bad_hasher {
    std::uint32_t operator()(std::uint32_t k) const noexcept { return 0xffffff00u + (k & 3u); }
  };
  basic_hash_index<std::uint32_t, bad_hasher> index;
  std::vector<std::uint32_t> key_of_id;
  for (std::uint32_t id = 0; id < 3000; ++id) {
    const std::uint32_t key = id % 5;
    key_of_id.push_back(key);
    index.insert(bad_hasher{}(key), id);
  }
  CHECK(index.size() == 3000);
  auto key_of = [&](std::uint32_t id) { return key_of_id[id]; };
  for (std::uint32_t key = 0; key < 5; ++key) {
    std::vector<std::uint32_t> seen;
    index.for_each(key, bad_hasher{}(key), key_of, [&](std::uint32_t id) { seen.push_back(id); });
    std::vector<std::uint32_t> want;
    for (std::uint32_t id = key; id < 3000; id += 5) want.push_back(id);
    CHECK(seen == want);
    CHECK(index.find(key, key_of) == key);
  }
  CHECK(index.find(7, key_of) == index.npos);
  // insert_unique returns the first id of an existing key.
  CHECK(index.insert_unique(3, bad_hasher{}(3), 9999, key_of) == std::pair<std::uint32_t, bool>{3, false});
}
