// linkscope-dupes — strong definitions of the same symbol in several files.
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include <linkscope/report/dupes.hpp>
#include <linkscope/report/json.hpp>
#include <linkscope/report/json_error.hpp>
#include <linkscope/resolve/duplicates.hpp>
#include <linkscope/symbols/demangle.hpp>

#include <linkscope/core/mapped_file.hpp>

#include "cli/cli.hpp"
#include "cli/options.hpp"

namespace {
constexpr std::string_view tool = "linkscope-dupes";

namespace cli = linkscope::cli;

constexpr cli::option_spec options[] = {
    {"closure", 0, cli::arg::required, "FILE",
     "DSO or executable whose closure gives the run-time order (Mach-O, PE: an importer whose bindings are listed)"},
    {"arch", 0, cli::arg::required, "ARCH", "Mach-O: the slice of universal files (x86_64, arm64); default: the first"},
    {"abi-only", 0, cli::arg::none, nullptr, "list only size mismatches of data symbols"},
    {"thin-confine", 0, cli::arg::none, nullptr,
     "refuse thin-archive member paths that are absolute or leave the archive's folder (default: open them as GNU ar/nm do)"},
    {"demangle", 'C', cli::arg::none, nullptr, "print C++ symbol names demangled, as c++filt does; --json adds \"demangled\""},
    {"json", 0, cli::arg::none, nullptr, "machine-readable output"},
};

constexpr cli::tool_spec spec{
    "linkscope-dupes", "[OPTION]... FILE...",
    "Find symbols defined in more than one file, and which definition wins.\n"
    "Lists the symbols with a strong definition in more than one of the FILEs\n"
    "(shared libraries, objects, archives: each archive member counts apart).\n"
    "For each: the definition ld.so uses at run time (global scope order of the\n"
    "closure of the first DSO or executable given), the one a link takes, and\n"
    "whether versions or sizes differ (a data symbol of another size is an ABI break).\n"
    "Mach-O dylibs and PE DLLs (and archives of their objects) count too. There,\n"
    "each import names its dylib or DLL, so no copy wins for everyone: the report\n"
    "says which copy each importing image given (or --closure) binds to.",
    options,
    "  linkscope-dupes libfmt.so libvendor.so\n"
    "  linkscope-dupes app libfmt.dylib libvendor.dylib\n"
    "  linkscope-dupes --closure /usr/bin/python3 /usr/bin/python3 /lib/x86_64-linux-gnu/libc.so.6\n",
    "duplicates found"};
// With --json, a run that fails on an input still writes one document.
void print_error_document(const linkscope::diagnostic& d) {
  linkscope::json_writer w(stdout);
  linkscope::report::write_error_document(w, d);
  w.newline();
}
}  // namespace

int main(int argc, char** argv) {
  using namespace linkscope;
  cli::fast_stdout();
  cli::parsed p;
  if (int rc = cli::parse(spec, argc, argv, p); rc >= 0) return rc;
  const bool json = p.has("json"), abi_only = p.has("abi-only"), demangle = p.has("demangle");
  resolve::duplicates_options options;
  options.thin.confine_to_archive_dir = p.has("thin-confine");
  options.closure_root = p.value("closure");
  options.arch = p.value("arch");
  std::vector<std::string> paths = p.operands;
  if (p.has("closure")) {
    // The closure root must be readable: a missing one is an error, not an empty order.
    auto root = mapped_file::open(options.closure_root);
    if (!root) {
      cli::report(tool, options.closure_root, root.error());
      if (json) print_error_document(diagnostic(root.error(), options.closure_root));
      return cli::exit_error;
    }
  }
  if (paths.size() < 2 && options.closure_root.empty()) return cli::usage_error(tool, "give at least two files");
  auto result = resolve::find_duplicates(paths, options);
  if (!result) {
    cli::report(tool, result.error());  // names the file (and member) that failed
    if (json) print_error_document(result.error());
    return cli::exit_error;
  }
  std::size_t shown = 0;
  // The version after the kind, as nm -D spells it (@@ for the default
  // version), never glued to the file name.
  auto version_label = [](const resolve::definition_site& s) {
    if (s.version.empty()) return std::string();
    return (s.default_version ? "  @@" : "  @") + s.version;
  };
  if (json) {
    // The document is report/dupes.hpp's (docs/JSON.md).
    const report::dupes_json_options jo{abi_only, demangle};
    shown = report::dupes_shown(*result, jo);
    json_writer w(stdout);
    report::write_json(w, *result, jo);
    w.newline();
    w.flush();
  } else {
    for (const auto& d : result->duplicates) {
      if (abi_only && !d.abi_break) continue;
      ++shown;
      std::printf("%s%s\n", demangle ? symbols::demangle(d.name).c_str() : d.name.c_str(), d.abi_break ? "  [ABI break: data sizes differ]" : d.sizes_differ ? "  [sizes differ]" : "");
      for (std::size_t i = 0; i < d.sites.size(); ++i) {
        const auto& s = d.sites[i];
        std::printf("  %-60s size %-6llu %s%s%s%s\n", s.file.c_str(), static_cast<unsigned long long>(s.size),
                    to_string(s.kind), version_label(s).c_str(), i == d.runtime_winner ? "  <- ld.so binds here" : "", i == d.link_winner ? "  <- a link takes this" : "");
      }
      // Mach-O and PE: each import names its dylib or DLL.
      for (const auto& b : d.importers)
        std::printf("  %s binds to %s%s\n", b.importer.c_str(), d.sites[b.site].file.c_str(),
                    b.flat ? " (flat namespace)" : "");
    }
    std::printf("%zu duplicate symbol%s\n", shown, shown == 1 ? "" : "s");
  }
  for (const auto& s : result->skipped) cli::warn(tool, s.name, s.why.message);
  std::fflush(stdout);
  return shown > 0 ? cli::exit_finding : cli::exit_ok;
}
