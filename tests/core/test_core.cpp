// core/: bytes, error, mapped_file, hash.
#include <linkscope/core/bytes.hpp>
#include <linkscope/core/error.hpp>
#include <linkscope/core/hash.hpp>
#include <linkscope/core/mapped_file.hpp>

#include <catch2/catch.hpp>

#include <string>
#include <sys/stat.h>
#include <unistd.h>

#include "support/fixtures.hpp"

using namespace linkscope;
namespace lt = linkscope_test;

TEST_CASE("endian integers decode both byte orders", "[core][bytes]") {
  const unsigned char raw[8] = {0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08};
  CHECK(load<u32, std::endian::little>(raw) == 0x04030201u);
  CHECK(load<u32, std::endian::big>(raw) == 0x01020304u);
  CHECK(load<u64, std::endian::big>(raw) == 0x0102030405060708ull);
  CHECK(load<u16, std::endian::little>(raw + 6) == 0x0807u);
  be<u32> field{};
  field.set(0xdeadbeef);
  CHECK(field.raw[0] == 0xde);
  CHECK(field.raw[3] == 0xef);
  CHECK(field.value() == 0xdeadbeefu);
}

TEST_CASE("byte_view reads are bounds checked without overflow", "[core][bytes]") {
  const unsigned char raw[10] = {'a', 'b', 0, 'c', 'd', 1, 2, 3, 4, 5};
  byte_view view(raw, sizeof(raw), 100);
  CHECK(view.cstring(0).value() == "ab");
  auto unterminated = view.cstring(3);
  REQUIRE_FALSE(unterminated);
  CHECK(unterminated.error().code == errc::malformed);
  CHECK(unterminated.error().offset == 103);  // base + offset
  CHECK_FALSE(view.cstring(10));

  auto rec = view.read<le<u32>>(7);
  REQUIRE_FALSE(rec);  // 7 + 4 > 10
  CHECK(rec.error().code == errc::truncated);
  CHECK(view.read<le<u32>>(5).value().value() == 0x04030201u);

  // offset + len would wrap around: must fail, not pass.
  CHECK_FALSE(view.sub(~u64{0} - 2, 8));
  CHECK_FALSE(view.sub(4, ~u64{0}));
  CHECK_FALSE(view.array<le<u32>>(0, u64{1} << 62));
  auto arr = view.array<le<u16>>(0, 5);
  REQUIRE(arr);
  CHECK(arr->size() == 5);
  CHECK((*arr)[4].value() == 0x0504u);
  auto strided = view.array<u8>(0, 4, 3);  // stride larger than the record
  REQUIRE(strided);
  CHECK((*strided)[3] == 5);  // raw[9]
  CHECK_FALSE(view.array<le<u32>>(0, 2, 2));  // stride smaller than the record
}

TEST_CASE("ASCII numeric fields parse strictly", "[core][bytes]") {
  u64 v = 99;
  CHECK(parse_ascii_number("1234      ", v));
  CHECK(v == 1234);
  CHECK(parse_ascii_number("  644 ", v, 8));
  CHECK(v == 0644);
  CHECK_FALSE(parse_ascii_number("12a4", v));
  CHECK_FALSE(parse_ascii_number("-1", v));
  CHECK_FALSE(parse_ascii_number("99999999999999999999999", v));
  CHECK_FALSE(parse_ascii_number("    ", v));
  CHECK(parse_ascii_number("    ", v, 10, true));
  CHECK(v == 0);
}

TEST_CASE("result<T> carries values and errors", "[core][error]") {
  auto good = [](int x) -> result<std::string> { return std::string(static_cast<std::size_t>(x), 'x'); };
  auto bad = []() -> result<std::string> { return make_error(errc::truncated, 42, "short"); };
  auto chain = [&](bool fail) -> result<std::size_t> {
    LINKSCOPE_TRY(s, fail ? bad() : good(3));
    return s.size();
  };
  CHECK(chain(false).value() == 3);
  auto e = chain(true);
  REQUIRE_FALSE(e);
  CHECK(e.error().code == errc::truncated);
  CHECK(e.error().offset == 42);
  CHECK(std::string(e.error().message) == "short");
  CHECK(e.error().rebased(8).offset == 50);
  result<void> v = ok();
  CHECK(v.has_value());
}

TEST_CASE("hashes match the ELF definitions", "[core][hash]") {
  // Values from the gABI/GNU hash definitions (also static_asserted in the header).
  CHECK(gnu_hash("") == 5381u);
  CHECK(sysv_hash("") == 0u);
  CHECK(gnu_hash("printf") == 0x156b2bb8u);
  CHECK(sysv_hash("printf") == 0x077905a6u);
  CHECK(index_hash("printf") != index_hash("printg"));
  CHECK(index_hash("_ZN4llvm12function_refIFvvEE") == index_hash(std::string("_ZN4llvm12function_refIFvvEE")));
}

TEST_CASE("mapped_file refuses what is not a regular non-empty file", "[core][mmap]") {
  std::string dir = lt::scratch_dir("core_mmap");
  auto missing = mapped_file::open(dir + "/missing");
  REQUIRE_FALSE(missing);
  CHECK(missing.error().code == errc::not_found);

  auto directory = mapped_file::open(dir);
  REQUIRE_FALSE(directory);
  CHECK(directory.error().code == errc::is_directory);

  lt::write_file(dir + "/empty", "");
  auto empty = mapped_file::open(dir + "/empty");
  REQUIRE_FALSE(empty);
  CHECK(empty.error().code == errc::empty_file);

  std::string fifo = dir + "/fifo";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  auto pipe = mapped_file::open(fifo);  // must not block
  REQUIRE_FALSE(pipe);
  CHECK(pipe.error().code == errc::not_regular);

  if (::geteuid() != 0) {  // root reads anything
    lt::write_file(dir + "/secret", "x");
    ::chmod((dir + "/secret").c_str(), 0);
    auto secret = mapped_file::open(dir + "/secret");
    CHECK_FALSE(secret);
  }

  std::string small(100, 's');
  lt::write_file(dir + "/small", small);
  auto small_file = mapped_file::open(dir + "/small");
  REQUIRE(small_file);
  CHECK_FALSE(small_file->is_mapped());
  CHECK(small_file->bytes().chars() == small);

  std::string big(mapped_file::mmap_threshold * 2, 'b');
  big[12345] = 'Q';
  lt::write_file(dir + "/big", big);
  auto big_file = mapped_file::open(dir + "/big");
  REQUIRE(big_file);
  CHECK(big_file->is_mapped());
  CHECK(big_file->size() == big.size());
  CHECK(big_file->bytes().chars()[12345] == 'Q');
  auto forced = mapped_file::open(dir + "/big", true);
  REQUIRE(forced);
  CHECK_FALSE(forced->is_mapped());
  CHECK(forced->bytes().chars() == big);

  // Identity (device, inode) is the same through a symlink.
  std::filesystem::create_symlink(dir + "/big", dir + "/link");
  auto via_link = mapped_file::open(dir + "/link");
  REQUIRE(via_link);
  CHECK(via_link->inode() == big_file->inode());
  CHECK(via_link->device() == big_file->device());
}
