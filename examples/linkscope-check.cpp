// linkscope-check — overlinking, overdepending and package ownership for every
// ELF, Mach-O and PE file under a prefix (conda-build's and auditwheel's question).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <linkscope/report/check.hpp>
#include <linkscope/report/json_error.hpp>
#include <linkscope/report/json.hpp>
#include <linkscope/resolve/check.hpp>

#include <linkscope/core/mapped_file.hpp>

#include "cli/cli.hpp"
#include "cli/floor_limits.hpp"
#include "cli/options.hpp"
#include "cli/progress.hpp"

namespace {
constexpr std::string_view tool = "linkscope-check";

namespace cli = linkscope::cli;

constexpr cli::option_spec option_table[] = {
    {"package", 0, cli::arg::required, "NAME", "check only the files PREFIX/conda-meta lists for package NAME"},
    {"declared", 0, cli::arg::required, "PKG,...",
     "declared run dependencies: report packages used but not declared (underlinking) and declared but unused (repeatable)"},
    {"package-dir", 0, cli::arg::required, "NAME=DIR",
     "every file under DIR belongs to package NAME (an unpacked package; asked before conda-meta and dpkg; repeatable)"},
    {"allow", 0, cli::arg::required, "GLOB,...", "add file-name patterns to the allow-lists (repeatable)"},
    {"allow-file", 0, cli::arg::required, "FILE",
     "add the globs FILE lists, one per line, as data/allow/*.txt (repeatable)"},
    {"no-default-allow", 0, cli::arg::none, nullptr,
     "start from empty allow-lists: neither data/allow/*.txt nor the loaders' system classes"},
    {"library-path", 0, cli::arg::required, "PATH", "search PATH as LD_LIBRARY_PATH (the environment is ignored)"},
    {"dpkg-info", 0, cli::arg::required, "DIR", "dpkg database (default /var/lib/dpkg/info)"},
    {"no-dpkg", 0, cli::arg::none, nullptr, "do not read dpkg's package database"},
    {"no-conda", 0, cli::arg::none, nullptr, "do not read PREFIX/conda-meta"},
    {"undefined", 0, cli::arg::none, nullptr, "count unresolved symbols (ldd -r) as findings"},
    {"max-glibc", 0, cli::arg::required, "VER", "a file that needs a GLIBC_ version above VER (2.17, 2.28, ...) is a finding"},
    {"max-glibcxx", 0, cli::arg::required, "VER", "a file that needs a GLIBCXX_ version above VER (3.4.19, ...) is a finding"},
    {"max-version", 0, cli::arg::required, "FAMILY=VER",
     "a file that needs a FAMILY_ version above VER is a finding (CXXABI=1.3.7, OPENSSL=3.0.0; repeatable)"},
    {"macos-target", 0, cli::arg::required, "VER",
     "a Mach-O file whose macOS minimum (LC_BUILD_VERSION minos) is above VER (11.0, ...) is a finding"},
    {"windows-target", 0, cli::arg::required, "VER",
     "a PE file whose Windows floor (OS and subsystem versions) is above VER (6.1, 10.0, ...) is a finding"},
    {"verbose", 'v', cli::arg::none, nullptr,
     "also list every needed DSO and its owner for clean files, and duplicates across packages that no file loads together"},
    {"jobs", 'j', cli::arg::required, "N",
     "link the files on N threads (default: one per core); the output is the same for every N"},
    {"cache-mb", 0, cli::arg::required, "N",
     "keep at most N MiB of mapped libraries across files (default 4096; 0: no limit); the output does not change"},
    {"quiet", 'q', cli::arg::none, nullptr, "no progress line on stderr (it is shown only on a terminal)"},
    {"json", 0, cli::arg::none, nullptr, "machine-readable output"},
};

constexpr cli::tool_spec spec{
    "linkscope-check", "[OPTION]... PREFIX [FILE]...",
    "Check every ELF, Mach-O and PE file of a package: overlinking, overdepending, ownership.\n"
    "For every dynamically linked ELF file under PREFIX (or only the FILEs given),\n"
    "resolves DT_NEEDED as ld.so would and binds every symbol reference, then reports:\n"
    "  missing      a NEEDED entry that resolves nowhere (ldd: not found)\n"
    "  unused       a NEEDED entry the file never binds to (ldd -u -r: overdepending)\n"
    "  overlinked   symbols bound to a library that is only a transitive dependency\n"
    "               (Mach-O: a flat-namespace import; a PE import always names its DLL)\n"
    "  system       a NEEDED library taken from outside the prefix\n"
    "  rpath        an RPATH/RUNPATH entry pointing outside the prefix\n"
    "  floor        a symbol version above --max-glibc/--max-glibcxx/--max-version\n"
    "               (Mach-O, PE: a minimum above --macos-target/--windows-target)\n"
    "and per package: underlinking (used, not declared), overdepending (declared, never\n"
    "bound to: \"statically linked\" when a file holds its archive's or library's code,\n"
    "else unused), and duplicates (strong definitions two packages' libraries export,\n"
    "with the copy loaded first where a file loads both: ld.so takes it for every\n"
    "reference; on Mach-O and PE each import keeps the library it names, so both run).\n"
    "Each needed DSO is attributed to the package owning it (--package-dir, PREFIX/conda-meta/*.json,\n"
    "then dpkg's /var/lib/dpkg/info/*.list): `Needed DSO lib/libfoo.so.1 found in libfoo`.\n"
    "Libraries matching the allow-lists are never findings: ELF's (libc, libm, libpthread,\n"
    "libdl, librt, ld-linux, libstdc++, libgcc_s ...), macOS's (/usr/lib/*,\n"
    "/System/Library/Frameworks/* ...) and Windows' (api-ms-win-*.dll, ucrtbase.dll ...;\n"
    "without regard to case), each for its platform's files, from data/allow/*.txt\n"
    "(installed in share/linkscope/allow). A glob with '/' matches the whole name.\n"
    "Mach-O executables, dylibs and bundles go through the dyld emulator, PE images\n"
    "through the Windows loader (the prefix's conda PATH folders after the application\n"
    "folder): missing, unused (Mach-O), system, undefined (dyld's \"Symbol not found\";\n"
    "PE: DLL!NAME not exported; findings with --undefined) and rpath (LC_RPATH\n"
    "entries and an absolute install name outside the prefix). macOS system libraries\n"
    "and Windows' own DLLs, API sets and C runtimes are allowed.",
    option_table,
    "  linkscope-check $CONDA_PREFIX\n"
    "  linkscope-check --package libfoo --declared zlib,libcurl $CONDA_PREFIX\n"
    "  linkscope-check --json /usr /usr/bin/python3\n"
    "  linkscope-check --max-glibc 2.17 --max-glibcxx 3.4.19 $CONDA_PREFIX\n"
    "  linkscope-check -j 8 --json /usr/lib/x86_64-linux-gnu\n"
    "  linkscope-check --package-dir app=pkgs/app --package-dir zlib=pkgs/zlib --declared zlib pkgs\n",
    "findings"};

// The first eight symbols of a finding, comma-separated ("..." after them).
// The first eight of `symbols`, then ", ..." when there are more (`total`:
// how many there are in all, when the list holds only the first few).
std::string first_symbols(const std::vector<std::string>& symbols, std::size_t total = 0) {
  std::string list;
  for (std::size_t i = 0; i < symbols.size() && i < 8; ++i) list.append(i ? ", " : "").append(symbols[i]);
  if (std::max(total, symbols.size()) > 8) list += ", ...";
  return list;
}

void split_into(std::string_view list, std::vector<std::string>& out) {
  std::size_t start = 0;
  while (start <= list.size()) {
    std::size_t comma = list.find(',', start);
    if (comma == std::string_view::npos) comma = list.size();
    if (comma > start) out.emplace_back(list.substr(start, comma - start));
    start = comma + 1;
  }
}

std::string owner_text(const linkscope::resolve::package_owner& o) {
  if (!o.package.empty()) return o.package;
  if (o.source == "prefix") return "the prefix (no package database)";
  if (o.source == "unknown") return "an unknown package (no package database)";
  return "no package";
}

// An input error as the document (docs/JSON.md: errors stay in the document).
void write_error_json(const linkscope::diagnostic& d) {
  linkscope::json_writer w(stdout);
  linkscope::report::write_error_document(w, d);
  w.newline();
}

void write_json(const linkscope::resolve::prefix_report& r, double seconds, unsigned jobs) {
  linkscope::json_writer w(stdout);
  linkscope::report::write_json(w, r, {seconds, jobs});
  w.newline();
}

void write_text(const linkscope::resolve::prefix_report& r, bool verbose, double seconds) {
  auto shown = [&](const std::string& raw) {
    const std::string path = std::filesystem::path(raw).lexically_normal().string();
    if (path.size() > r.prefix.size() && path.compare(0, r.prefix.size(), r.prefix) == 0 && path[r.prefix.size()] == '/')
      return path.substr(r.prefix.size() + 1);
    return path;
  };
  for (const auto& f : r.files) {
    const char* file = f.relative.c_str();
    for (const auto& w : f.warnings) std::printf("%s: warning: %s\n", file, w.c_str());
    for (const auto& m : f.missing)
      std::printf("%s: missing: %s (not found%s%s)\n", file, m.name.c_str(), m.direct ? "" : ", needed by ",
                  m.direct ? "" : shown(m.needed_by).c_str());
    for (const auto& n : f.needed) {
      if (n.path.empty()) continue;
      if (!n.used)
        std::printf("%s: unused: %s => %s%s\n", file, n.name.c_str(), n.path.c_str(), n.allowed ? " (allowed)" : "");
      if (!n.in_prefix && !n.allowed) std::printf("%s: system: %s => %s\n", file, n.name.c_str(), n.path.c_str());
    }
    for (const auto& o : f.overlinked) {
      if (o.allowed && !verbose) continue;
      std::printf("%s: overlinked: %zu symbol%s from %s (loaded by %s)%s: %s\n", file, o.symbols.size(),
                  o.symbols.size() == 1 ? "" : "s", shown(o.path).c_str(), shown(o.via).c_str(),
                  o.allowed ? " (allowed)" : "", first_symbols(o.symbols).c_str());
    }
    for (const auto& p : f.rpaths)
      if (p.outside)
        std::printf("%s: rpath: %s entry %s points outside the prefix%s%s\n", file, p.tag.c_str(), p.entry.c_str(),
                    p.expanded.empty() || p.expanded == p.entry ? "" : " => ",
                    p.expanded.empty() || p.expanded == p.entry ? "" : p.expanded.c_str());
    for (const auto& v : f.floors)
      for (std::size_t i = 0; i < v.above.size(); ++i)
        std::printf("%s: floor: %s from %s is above %s%s%s\n", file, v.above[i].name.c_str(), v.libraries[i].c_str(),
                    v.max.c_str(), v.above[i].symbols.empty() ? "" : ": ", first_symbols(v.above[i].symbols).c_str());
    if (!f.undefined.empty())
      std::printf("%s: undefined: %zu symbol%s (%s), first %s\n", file, f.undefined.size(),
                  f.undefined.size() == 1 ? "" : "s",
                  f.format == "macho" ? "dyld: Symbol not found" : f.format == "pe" ? "not exported by the DLL" : "ldd -r",
                  f.undefined.front().c_str());
    if (verbose || f.findings != 0) {
      for (const auto& n : f.needed) {
        if (n.path.empty()) continue;
        std::printf("%s: Needed DSO %s found in %s%s\n", file, shown(n.file.empty() ? n.path : n.file).c_str(),
                    owner_text(n.owner).c_str(),
                    n.allowed ? " (allowed)" : "");
      }
    }
  }
  for (const auto& s : r.undeclared) std::printf("underlinking: package %s is used but not declared\n", s.c_str());
  for (const auto& s : r.unused_declared)
    std::printf("overdepending: package %s is declared but never used\n", s.c_str());
  for (const auto& d : r.statically_linked)
    for (const auto& e : d.evidence)
      std::printf("statically linked: package %s is declared and never linked against, but %s holds %zu definition%s of %s: %s\n",
                  d.package.c_str(), e.file.c_str(), e.count, e.count == 1 ? "" : "s", e.copy_of.c_str(),
                  first_symbols(e.symbols, e.count).c_str());
  for (const auto& d : r.duplicates) {
    if (d.winner.empty() && !verbose) continue;  // never loaded together: not a finding
    std::printf("duplicate: %zu symbol%s defined by both %s (%s) and %s (%s)", d.count, d.count == 1 ? "" : "s",
                d.file_a.c_str(), d.package_a.c_str(), d.file_b.c_str(), d.package_b.c_str());
    if (!d.winner.empty()) {
      // ELF: ld.so binds every reference to the first copy. Mach-O and PE:
      // each import binds to the library it names, so both copies run.
      std::string format = "elf";
      for (const auto& f : r.files)
        if (f.relative == d.consumer) format = f.format;
      if (format == "elf")
        std::printf("; ld.so takes %s's in %s", d.winner.c_str(), d.consumer.c_str());
      else
        std::printf("; both are loaded in %s, %s first", d.consumer.c_str(), d.winner.c_str());
    }
    std::printf(": %s\n", first_symbols(d.symbols, d.count).c_str());
  }
  for (const auto& s : r.unowned) std::printf("unowned: Needed DSO %s found in no package\n", s.c_str());
  if (verbose)
    for (const auto& p : r.packages)
      std::printf("package: %s (%s)%s%s: %zu DSO%s\n", p.name.c_str(), p.source.c_str(), p.self ? " self" : "",
                  p.declared ? " declared" : "", p.dsos.size(), p.dsos.size() == 1 ? "" : "s");
  for (const auto& w : r.warnings) std::printf("warning: %s\n", w.c_str());
  std::printf("%zu file%s checked, %zu finding%s", r.files.size(), r.files.size() == 1 ? "" : "s", r.findings,
              r.findings == 1 ? "" : "s");
  if (r.failed != 0) std::printf(", %zu file%s not analysed", r.failed, r.failed == 1 ? "" : "s");
  std::printf(" (%zu objects parsed, %zu lookups, %.3f s)\n", r.objects_parsed, r.lookups, seconds);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace linkscope;
  cli::fast_stdout();
  cli::parsed p;
  if (int rc = cli::parse(spec, argc, argv, p); rc >= 0) return rc;
  const bool json = p.has("json"), verbose = p.has("verbose");
  resolve::prefix_options options;
  std::vector<std::string> extra_allow;
  const bool default_allow = !p.has("no-default-allow");
  if (p.has("no-dpkg")) options.use_dpkg = false;
  if (p.has("no-conda")) options.use_conda = false;
  if (p.has("undefined")) options.undefined_is_finding = true;
  if (p.has("declared")) options.check_declared = true;
  for (const auto& v : p.values("declared")) split_into(v, options.declared);
  for (const auto& v : p.values("allow")) split_into(v, extra_allow);
  if (p.has("library-path")) options.search.library_path = p.value("library-path");
  if (p.has("package")) options.package = p.value("package");
  if (p.has("dpkg-info")) options.dpkg_info_dir = p.value("dpkg-info");
  for (const auto& v : p.values("package-dir")) {
    const std::size_t eq = v.find('=');
    if (eq == 0 || eq == std::string::npos || eq + 1 == v.size())
      return cli::usage_error(spec, "--package-dir takes NAME=DIR");
    options.package_dirs.emplace_back(v.substr(0, eq), v.substr(eq + 1));
  }
  options.jobs = 0;  // one thread per core
  if (p.has("cache-mb")) {
    std::size_t mb = 0;
    if (!cli::parse_whole_number(p.value("cache-mb"), 7, mb) || mb > (std::numeric_limits<std::size_t>::max() >> 20))
      return cli::usage_error(spec, "--cache-mb takes a whole number of MiB (0: no limit)");
    options.cache_limit = mb << 20;
  }
  if (p.has("jobs") && !cli::parse_jobs(p.value("jobs"), options.jobs))
    return cli::usage_error(spec, "-j/--jobs takes a whole number from 1 to 1024");
  if (int rc = cli::read_floor_limits(spec, p, options.floor_limits); rc >= 0) return rc;
  if (int rc = cli::read_platform_targets(spec, p, options.macos_target, options.windows_target); rc >= 0) return rc;
  const std::vector<std::string>& positional = p.operands;
  if (positional.empty()) return cli::usage_error(tool, "missing PREFIX");
  if (!default_allow) options.clear_allow();
  for (const auto& f : p.values("allow-file")) {
    auto globs = resolve::read_allow_file(f);
    if (!globs) {
      cli::report(tool, f, globs.error());
      if (json) write_error_json(linkscope::diagnostic(globs.error(), f));
      return cli::exit_error;
    }
    extra_allow.insert(extra_allow.end(), globs->begin(), globs->end());
  }
  for (const auto& a : extra_allow) options.add_allow(a);
  options.files.assign(positional.begin() + 1, positional.end());
  // A FILE operand that cannot be opened is an input error of the run (exit 2),
  // named in the one diagnostic format, not a warning in the report. Each is
  // checked as mapped_file::open would open it, without reading it, on the
  // run's threads; the first in the order given is reported.
  {
    const std::vector<std::string>& files = options.files;
    std::vector<std::optional<linkscope::error>> problems(files.size());
    std::atomic<std::size_t> next{0};
    auto work = [&] {
      for (std::size_t i = next++; i < files.size(); i = next++)
        if (auto probed = mapped_file::probe(files[i]); !probed) problems[i] = probed.error();
    };
    const unsigned cores = options.jobs != 0 ? options.jobs : std::max(1u, std::thread::hardware_concurrency());
    const unsigned threads = static_cast<unsigned>(std::min<std::size_t>(cores, (files.size() + 63) / 64));
    std::vector<std::thread> helpers;
    for (unsigned t = 1; t < threads; ++t) helpers.emplace_back(work);
    work();
    for (auto& t : helpers) t.join();
    for (std::size_t i = 0; i < files.size(); ++i)
      if (problems[i]) {
        cli::report(tool, files[i], *problems[i]);
        if (json) write_error_json(linkscope::diagnostic(*problems[i], files[i]));
        return cli::exit_error;
      }
  }
  cli::progress_line progress(tool, p.has("quiet"));
  if (progress.on()) options.progress = [&](std::size_t done, std::size_t total) { progress.update(done, total); };
  const auto start = std::chrono::steady_clock::now();
  auto report = resolve::check_prefix(positional[0], options);
  progress.finish();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!report) {
    cli::report(tool, positional[0], report.error());
    if (json) write_error_json(linkscope::diagnostic(report.error(), positional[0]));
    return cli::exit_error;
  }
  // A file that could not be analysed is an error of the run (exit 2), named
  // on stderr in the one diagnostic format; the report still covers the rest.
  for (const auto& f : report->files)
    if (f.failed()) cli::report(tool, linkscope::diagnostic(f.failure, f.path));
  if (json)
    write_json(*report, seconds, options.jobs != 0 ? options.jobs : std::max(1u, std::thread::hardware_concurrency()));
  else
    write_text(*report, verbose, seconds);
  std::fflush(stdout);
  if (report->failed != 0) return cli::exit_error;
  return report->findings != 0 ? cli::exit_finding : cli::exit_ok;
}
