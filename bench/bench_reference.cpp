// Physical references for bench_elf, bench_ar and bench_implib: the same
// bytes that those benchmarks parse, walked as fast as the machine can.
// The figure to steer by is (linkscope time) / (reference time).
//   - ELF (libtorch_cpu.so.1.13, else libstdc++.so.6, or LINKSCOPE_ELF_FILE):
//     a strlen pass over .dynstr (one strlen per name, like building the
//     name views) and a bandwidth pass over .dynsym + .dynstr + .gnu.version
//     (memory bandwidth over everything nm -D reads);
//   - archives (/usr/lib/llvm-14/lib/*.a, or LINKSCOPE_AR_DIR): a strlen pass
//     over every armap's name table and a bandwidth pass over the armaps, and a
//     bandwidth pass over the whole archives (what iterating members touches is
//     the 60-byte headers spread over these bytes).
// The files are parsed here with raw little-endian reads on purpose: the
// reference must not depend on the code it measures.
#include <linkscope/core/mapped_file.hpp>

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace {
using namespace linkscope;

// Memory-bandwidth pass: XOR of every 8-byte word (vectorised at -O2).
// (A memchr for a byte would stop early: ELF files start with 0x7f.)
std::uint64_t bandwidth_pass(const void* data, std::size_t size) {
  const auto* p = static_cast<const unsigned char*>(data);
  std::uint64_t acc = 0;
  std::size_t i = 0;
  for (; i + 8 <= size; i += 8) {
    std::uint64_t w;
    std::memcpy(&w, p + i, 8);
    acc ^= w;
  }
  for (; i < size; ++i) acc ^= p[i];
  return acc;
}


template <class T>
T raw(const unsigned char* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

std::uint32_t be32(const unsigned char* p) {
  return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) | p[3];
}

struct region {
  const char* data = nullptr;
  std::size_t size = 0;
};

struct elf_corpus {
  std::unique_ptr<mapped_file> file;
  region dynsym, dynstr, versym;
  std::size_t names = 0;
  elf_corpus() {
    std::vector<std::string> candidates;
    if (const char* p = std::getenv("LINKSCOPE_ELF_FILE")) candidates.emplace_back(p);
    candidates.emplace_back("/usr/lib/x86_64-linux-gnu/libtorch_cpu.so.1.13");
    candidates.emplace_back("/usr/lib/x86_64-linux-gnu/libstdc++.so.6");
    for (const auto& path : candidates) {
      auto f = mapped_file::open(path);
      if (!f) continue;
      file = std::make_unique<mapped_file>(std::move(*f));
      break;
    }
    if (!file || file->size() < 64) return;
    const unsigned char* b = file->bytes().data();
    const std::size_t size = file->size();
    if (std::memcmp(b, "\x7f" "ELF\x02\x01", 6) != 0) return;  // ELF64 little-endian only
    const auto shoff = raw<std::uint64_t>(b + 0x28);
    const auto shnum = raw<std::uint16_t>(b + 0x3c);
    if (shoff > size || shnum > (size - shoff) / 64) return;
    auto section = [&](std::uint32_t i, region& out) {
      const unsigned char* sh = b + shoff + 64 * std::size_t{i};
      const auto off = raw<std::uint64_t>(sh + 0x18), len = raw<std::uint64_t>(sh + 0x20);
      if (off <= size && len <= size - off) out = region{reinterpret_cast<const char*>(b + off), len};
      return raw<std::uint32_t>(sh + 0x28);  // sh_link
    };
    for (std::uint32_t i = 0; i < shnum; ++i) {
      const auto type = raw<std::uint32_t>(b + shoff + 64 * std::size_t{i} + 4);
      if (type == 11) {  // SHT_DYNSYM
        const std::uint32_t link = section(i, dynsym);
        if (link < shnum) section(link, dynstr);
      } else if (type == 0x6fffffff) {  // SHT_GNU_versym
        section(i, versym);
      }
    }
    names = dynsym.size / 24;
  }
};

const elf_corpus& elf() {
  static elf_corpus c;
  return c;
}

void BM_reference_strlen_dynstr(benchmark::State& state) {
  const auto& c = elf();
  if (c.dynstr.size == 0) return state.SkipWithError("no ELF input");
  for (auto _ : state) {
    std::size_t count = 0;
    const char* end = c.dynstr.data + c.dynstr.size;
    for (const char* p = c.dynstr.data; p < end; p += std::strlen(p) + 1) ++count;  // tables end in NUL
    benchmark::DoNotOptimize(count);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * c.dynstr.size));
  state.counters["symbols/s"] = benchmark::Counter(static_cast<double>(c.names), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_reference_strlen_dynstr)->Unit(benchmark::kMillisecond);

void BM_reference_bandwidth_dynsym_dynstr_versym(benchmark::State& state) {
  const auto& c = elf();
  if (c.dynsym.size == 0) return state.SkipWithError("no ELF input");
  for (auto _ : state)
    for (const region& r : {c.dynsym, c.dynstr, c.versym})
      if (r.size != 0) benchmark::DoNotOptimize(bandwidth_pass(r.data, r.size));
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * (c.dynsym.size + c.dynstr.size + c.versym.size)));
  state.counters["symbols/s"] = benchmark::Counter(static_cast<double>(c.names), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_reference_bandwidth_dynsym_dynstr_versym)->Unit(benchmark::kMillisecond);

struct ar_corpus {
  std::vector<std::unique_ptr<mapped_file>> files;
  std::vector<region> armap_names, armaps;
  std::size_t entries = 0;
  std::uint64_t bytes = 0;
  ar_corpus() {
    const char* dir = std::getenv("LINKSCOPE_AR_DIR");
    std::vector<std::string> paths;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(dir != nullptr ? dir : "/usr/lib/llvm-14/lib", ec))
      if (e.path().extension() == ".a") paths.push_back(e.path().string());
    std::sort(paths.begin(), paths.end());
    for (const auto& path : paths) {
      auto f = mapped_file::open(path);
      if (!f) continue;
      auto owned = std::make_unique<mapped_file>(std::move(*f));
      const unsigned char* b = owned->bytes().data();
      const std::size_t size = owned->size();
      // GNU '/' armap as the first member: big-endian count, offsets, names.
      if (size < 8 + 60 + 4 || std::memcmp(b, "!<arch>\n/               ", 24) != 0) continue;
      const std::size_t member_size = std::strtoull(std::string(reinterpret_cast<const char*>(b + 8 + 48), 10).c_str(), nullptr, 10);
      const std::size_t start = 8 + 60;
      if (member_size > size - start || member_size < 4) continue;
      const std::uint32_t count = be32(b + start);
      if (count > (member_size - 4) / 4) continue;
      const std::size_t names_at = start + 4 + 4 * std::size_t{count};
      armaps.push_back(region{reinterpret_cast<const char*>(b + start), member_size});
      armap_names.push_back(region{reinterpret_cast<const char*>(b + names_at), start + member_size - names_at});
      entries += count;
      bytes += size;
      files.push_back(std::move(owned));
    }
  }
};

const ar_corpus& archives() {
  static ar_corpus c;
  return c;
}

void BM_reference_strlen_armap_names(benchmark::State& state) {
  const auto& c = archives();
  if (c.files.empty()) return state.SkipWithError("no archives");
  std::uint64_t bytes = 0;
  for (const region& r : c.armap_names) bytes += r.size;
  for (auto _ : state) {
    std::size_t count = 0;
    for (const region& r : c.armap_names) {
      const char* end = r.data + r.size;
      for (const char* p = r.data; p < end;) {
        const void* nul = std::memchr(p, 0, static_cast<std::size_t>(end - p));
        if (nul == nullptr) break;
        p = static_cast<const char*>(nul) + 1;
        ++count;
      }
    }
    benchmark::DoNotOptimize(count);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * bytes));
  state.counters["entries/s"] = benchmark::Counter(static_cast<double>(c.entries), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_reference_strlen_armap_names)->Unit(benchmark::kMillisecond);

void BM_reference_bandwidth_armaps(benchmark::State& state) {
  const auto& c = archives();
  if (c.files.empty()) return state.SkipWithError("no archives");
  std::uint64_t bytes = 0;
  for (const region& r : c.armaps) bytes += r.size;
  for (auto _ : state)
    for (const region& r : c.armaps) benchmark::DoNotOptimize(bandwidth_pass(r.data, r.size));
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * bytes));
  state.counters["entries/s"] = benchmark::Counter(static_cast<double>(c.entries), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_reference_bandwidth_armaps)->Unit(benchmark::kMillisecond);

void BM_reference_bandwidth_whole_archives(benchmark::State& state) {
  const auto& c = archives();
  if (c.files.empty()) return state.SkipWithError("no archives");
  for (auto _ : state)
    for (const auto& f : c.files) benchmark::DoNotOptimize(bandwidth_pass(f->bytes().data(), f->size()));
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * c.bytes));
}
BENCHMARK(BM_reference_bandwidth_whole_archives)->Unit(benchmark::kMillisecond);

}  // namespace
