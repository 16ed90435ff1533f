// The resolvers, each next to a physical reference over the same bytes:
//   - dynamic binding (resolve/dynamic.hpp): the LD_BIND_NOW closure of
//     /usr/bin/cmake (or LINKSCOPE_BENCH_PROGRAM); counters bindings/s,
//     lookups/s; reference: a bandwidth pass over every file of the closure;
//   - static extraction (resolve/static.hpp, lld semantics): -u of
//     llvm::outs() and getDefaultTargetTriple() against libLLVMSupport.a +
//     libLLVMDemangle.a (/usr/lib/llvm-14/lib, or LINKSCOPE_AR_DIR);
//     counters members/s, symbols resolved/s; reference: a bandwidth pass over
//     the two archives.
// Inputs that are missing are reported with SkipWithError. One iteration
// of each stays well under a second (CI smoke run: --benchmark_min_time=0).
#include <linkscope/core/mapped_file.hpp>
#include <linkscope/resolve/dynamic.hpp>
#include <linkscope/resolve/link_line.hpp>
#include <linkscope/resolve/static.hpp>

#include <benchmark/benchmark.h>

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


std::string program() {
  const char* p = std::getenv("LINKSCOPE_BENCH_PROGRAM");
  if (p != nullptr) return p;
  return std::filesystem::exists("/usr/bin/cmake") ? "/usr/bin/cmake" : "/bin/ls";
}

void BM_dynamic_bindings(benchmark::State& state) {
  const std::string prog = program();
  resolve::dynamic_options options;
  std::size_t bindings = 0, lookups = 0, objects = 0;
  for (auto _ : state) {
    auto link = resolve::link_dynamic(prog, options);
    if (!link) {
      state.SkipWithError("link_dynamic failed");
      return;
    }
    bindings = link->bindings.size();
    lookups = link->lookups;
    objects = link->objects.size();
    benchmark::DoNotOptimize(link->bindings.data());
  }
  state.counters["objects"] = static_cast<double>(objects);
  state.counters["bindings/s"] = benchmark::Counter(static_cast<double>(bindings), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["lookups/s"] = benchmark::Counter(static_cast<double>(lookups), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_dynamic_bindings)->Unit(benchmark::kMillisecond);

// Reference: one bandwidth pass over the bytes of every file of the closure.
void BM_reference_bandwidth_closure(benchmark::State& state) {
  auto link = resolve::link_dynamic(program(), resolve::dynamic_options{});
  if (!link) {
    state.SkipWithError("link_dynamic failed");
    return;
  }
  std::vector<std::unique_ptr<mapped_file>> files;
  std::uint64_t bytes = 0;
  for (const auto& object : link->objects) {
    if (object.file.empty()) continue;
    auto f = mapped_file::open(object.file);
    if (!f) continue;
    bytes += f->size();
    files.push_back(std::make_unique<mapped_file>(std::move(*f)));
  }
  for (auto _ : state)
    for (const auto& f : files) benchmark::DoNotOptimize(bandwidth_pass(f->bytes().data(), f->size()));
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(bytes));
}
BENCHMARK(BM_reference_bandwidth_closure)->Unit(benchmark::kMillisecond);

std::string llvm_dir() {
  const char* dir = std::getenv("LINKSCOPE_AR_DIR");
  return dir != nullptr ? dir : "/usr/lib/llvm-14/lib";
}

void BM_static_extraction(benchmark::State& state) {
  const std::string dir = llvm_dir();
  if (!std::filesystem::exists(dir + "/libLLVMSupport.a")) {
    state.SkipWithError("no libLLVMSupport.a (llvm-14-dev)");
    return;
  }
  const std::vector<std::string> args = {"-u", "_ZN4llvm4outsEv", "-u", "_ZN4llvm3sys23getDefaultTargetTripleEv",
                                         dir + "/libLLVMSupport.a", dir + "/libLLVMDemangle.a"};
  std::size_t members = 0, resolved = 0;
  for (auto _ : state) {
    resolve::link_diagnostic diag;
    auto line = resolve::read_link_line(args, diag);
    if (!line) {
      state.SkipWithError("read_link_line failed");
      return;
    }
    auto linked = resolve::resolve_static(*line, resolve::static_options{}, diag);
    if (!linked) {
      state.SkipWithError("resolve_static failed");
      return;
    }
    members = linked->extractions.size();
    resolved = linked->symbols_resolved;
    benchmark::DoNotOptimize(linked->extractions.data());
  }
  state.counters["members"] = static_cast<double>(members);
  state.counters["members/s"] = benchmark::Counter(static_cast<double>(members), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["resolved/s"] = benchmark::Counter(static_cast<double>(resolved), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_static_extraction)->Unit(benchmark::kMillisecond);

// Reference: one bandwidth pass over the same two archives.
void BM_reference_bandwidth_archives(benchmark::State& state) {
  const std::string dir = llvm_dir();
  std::vector<std::unique_ptr<mapped_file>> files;
  std::uint64_t bytes = 0;
  for (const char* name : {"/libLLVMSupport.a", "/libLLVMDemangle.a"}) {
    auto f = mapped_file::open(dir + name);
    if (!f) {
      state.SkipWithError("no LLVM archives");
      return;
    }
    bytes += f->size();
    files.push_back(std::make_unique<mapped_file>(std::move(*f)));
  }
  for (auto _ : state)
    for (const auto& f : files) benchmark::DoNotOptimize(bandwidth_pass(f->bytes().data(), f->size()));
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(bytes));
}
BENCHMARK(BM_reference_bandwidth_archives)->Unit(benchmark::kMillisecond);

}  // namespace
