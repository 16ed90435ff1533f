// fuzz/replay_main.cpp — a plain main() for a fuzz target: runs
// LLVMFuzzerTestOneInput on every file named on the command line, and on every
// regular file below each directory named (sorted, so runs are repeatable).
// This lets compilers without libFuzzer (g++) run the corpus under
// -fsanitize=address,undefined. Exit status: 0 when every input ran, 2 when a
// path could not be read; a sanitizer report aborts the process.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <system_error>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {

bool run_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "replay: cannot read %s\n", path.string().c_str());
    return false;
  }
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // An exactly-sized heap copy, as libFuzzer makes, so that ASan flags the
  // first byte past the end.
  std::unique_ptr<std::uint8_t[]> exact(new std::uint8_t[bytes.empty() ? 1 : bytes.size()]);
  std::copy(bytes.begin(), bytes.end(), exact.get());
  LLVMFuzzerTestOneInput(exact.get(), bytes.size());
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  namespace fs = std::filesystem;
  std::size_t inputs = 0;
  bool ok = true;
  const bool verbose = std::getenv("LINKSCOPE_REPLAY_VERBOSE") != nullptr;
  for (int i = 1; i < argc; ++i) {
    fs::path arg(argv[i]);
    std::error_code ec;
    if (fs::is_directory(arg, ec)) {
      std::vector<fs::path> files;
      for (fs::recursive_directory_iterator it(arg, ec), end; !ec && it != end; it.increment(ec))
        if (it->is_regular_file(ec)) files.push_back(it->path());
      std::sort(files.begin(), files.end());
      for (const fs::path& f : files) {
        if (verbose) std::fprintf(stderr, "replay: %s\n", f.string().c_str());
        ok = run_file(f) && ok;
        ++inputs;
      }
    } else if (fs::exists(arg, ec)) {
      if (verbose) std::fprintf(stderr, "replay: %s\n", arg.string().c_str());
      ok = run_file(arg) && ok;
      ++inputs;
    } else if (verbose) {
      std::fprintf(stderr, "replay: %s: no such file or directory (skipped)\n", argv[i]);
    }
  }
  std::printf("replay: %zu inputs\n", inputs);
  return ok ? 0 : 2;
}
