// linkscope-why: which archive members a static link extracts, and why,
// without linking. Takes the linker's own arguments (or @rsp).
//
//   linkscope-why [--semantics=lld|bfd] [--why-extract=FILE] [--chain MEMBER]
//                 [--print-map-includes] [--json] LINKER-ARGS...
#include <chrono>
#include <ctime>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include <linkscope/report/json.hpp>
#include <linkscope/report/json_error.hpp>
#include <linkscope/report/why.hpp>
#include <linkscope/resolve/link_line.hpp>
#include <linkscope/resolve/static.hpp>
#include <linkscope/symbols/demangle.hpp>

#include "cli/cli.hpp"
#include "cli/options.hpp"
#include "cli/progress.hpp"

namespace {

constexpr std::string_view tool = "linkscope-why";

namespace cli = linkscope::cli;

constexpr cli::option_spec option_table[] = {
    {"semantics", 0, cli::arg::required, "lld|bfd",
     "lld: archives stay available everywhere (default); bfd: left to right, groups rescanned (GNU ld)"},
    {"why-extract", 0, cli::arg::required, "FILE", "write ld.lld's --why-extract TSV (mangled names); '-' = stdout"},
    {"chain", 0, cli::arg::required, "MEMBER", "print why MEMBER (e.g. 'lib.a(m.o)') was pulled in, back to the start (repeatable)"},
    {"print-map-includes", 0, cli::arg::none, nullptr, "print GNU ld -Map's \"Archive member included\" section"},
    {"demangle", 0, cli::arg::none, nullptr,
     "print C++ symbol names demangled, as c++filt does (--why-extract as ld.lld does without --no-demangle, "
     "--print-map-includes, --chain, "
     "the undefined and duplicate messages); --json adds \"demangled\""},
    {"json", 0, cli::arg::none, nullptr, "JSON report"},
    {"stats", 0, cli::arg::none, nullptr, "time and symbol counts of the resolution, on stderr"},
    {"quiet", 0, cli::arg::none, nullptr,
     "no progress line on stderr (it is shown only on a terminal: 'linkscope-why: DONE/TOTAL inputs')"},
    {"thin-confine", 0, cli::arg::none, nullptr,
     "refuse thin-archive member paths that are absolute or leave the archive's folder (default: open them as GNU ld does)"},
};

constexpr const char* description =
    "Tell which archive members a static link pulls in and why, without linking.\n"
    "The linker arguments are ld.lld's / GNU ld's (objects, archives, shared libraries,\n"
    "-L, -l, -l:NAME, -Bstatic/-Bdynamic, -static, --start-group/--end-group, -( -),\n"
    "--whole-archive, --as-needed, -u, -e, --defsym, --wrap, --sysroot, @response-files,\n"
    "GNU ld scripts holding GROUP/INPUT/AS_NEEDED). Only this tool's own long options,\n"
    "spelled in full, are taken from the command line; every other argument is the\n"
    "linker's.";

// The description plus the linker options that are accepted and ignored.
std::string full_description() {
  std::string text = description;
  text += "\n\nLinker options accepted and ignored (they do not change which members are extracted):\n";
  std::size_t column = 0;
  for (const char* name : linkscope::resolve::ignored_options()) {
    std::string spelled = "-";
    spelled += name;
    if (spelled.back() == '=') spelled.back() = ' ', spelled += "ARG";
    if (column + spelled.size() + 2 > 78) {
      text += "\n";
      column = 0;
    }
    text += column == 0 ? "  " : " ";
    text += spelled;
    column += spelled.size() + 1 + (column == 0 ? 1 : 0);
  }
  return text;
}
// --demangle on ld.lld's --why-extract TSV (reference, extracted, symbol):
// the symbol column demangled, as ld.lld writes it when not given --no-demangle.
std::string demangle_why_extract(const std::string& tsv) {
  std::string out;
  out.reserve(tsv.size());
  std::size_t start = 0;
  bool header = true;
  while (start < tsv.size()) {
    std::size_t end = tsv.find('\n', start);
    if (end == std::string::npos) end = tsv.size();
    const std::string_view line(tsv.data() + start, end - start);
    const std::size_t tab = line.rfind('\t');
    if (header || tab == std::string_view::npos) {
      out.append(line);
    } else {
      out.append(line.substr(0, tab + 1)).append(linkscope::symbols::demangle(line.substr(tab + 1)));
    }
    header = false;
    if (end < tsv.size()) out.push_back('\n');
    start = end + 1;
  }
  return out;
}

// --demangle on GNU ld's "Archive member included" lines, which end in
// "(symbol)": the symbol demangled (a mangled name holds no parenthesis).
std::string demangle_map_includes(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string_view line(text.data() + start, end - start);
    const std::size_t open = line.rfind('(');
    if (!line.empty() && line.back() == ')' && open != std::string_view::npos) {
      out.append(line.substr(0, open + 1))
          .append(linkscope::symbols::demangle(line.substr(open + 1, line.size() - open - 2)))
          .push_back(')');
    } else {
      out.append(line);
    }
    if (end < text.size()) out.push_back('\n');
    start = end + 1;
  }
  return out;
}

// With --json, a run that fails on an input still writes one document.
void print_error_document(const linkscope::diagnostic& d) {
  linkscope::json_writer w(stdout);
  linkscope::report::write_error_document(w, d);
  w.newline();
}
}  // namespace

int main(int argc, char** argv) {
  using namespace linkscope;
  using namespace linkscope::resolve;
  cli::fast_stdout();
  static_options options;
  const std::string help = full_description();
  const cli::tool_spec spec{"linkscope-why", "[OPTION]... LINKER-ARGUMENTS...", help.c_str(), option_table,
                            "  linkscope-why --why-extract=- main.o -L/usr/lib/x86_64-linux-gnu -lz -lc\n"
                            "  linkscope-why --semantics=bfd --print-map-includes main.o libfoo.a libbar.a\n"
                            "  linkscope-why --chain 'libfoo.a(x.o)' main.o libfoo.a\n"
                            "  linkscope-why --json @link.rsp\n",
                            "undefined symbols or duplicate definitions remain"};
  cli::parsed p;
  if (int rc = cli::parse_passthrough(spec, argc, argv, p); rc >= 0) return rc;
  const std::string why_extract = p.value("why-extract");
  const std::vector<std::string> chains = p.values("chain");
  const bool json = p.has("json"), map_includes = p.has("print-map-includes"), stats = p.has("stats");
  const bool demangle = p.has("demangle");
  const auto shown = [demangle](std::string_view symbol) {
    return demangle ? symbols::demangle(symbol) : std::string(symbol);
  };
  options.thin.confine_to_archive_dir = p.has("thin-confine");
  if (p.has("semantics")) {
    const std::string v = p.value("semantics");
    if (v == "lld")
      options.semantics = link_semantics::lld;
    else if (v == "bfd")
      options.semantics = link_semantics::bfd;
    else
      return cli::usage_error(tool, "unknown semantics '" + v + "' (lld or bfd)");
  }
  if (p.has("why-extract") && why_extract.empty()) return cli::usage_error(tool, "--why-extract needs a file name");
  const std::vector<std::string>& link_args = p.operands;
  if (link_args.empty()) return cli::usage_error(tool, "no linker arguments");

  link_diagnostic diag;
  // GNU ld also searches its built-in directories for -l; ld.lld only -L.
  locate_options locate;
  if (options.semantics == link_semantics::bfd) locate.default_dirs = gnu_ld_search_dirs();
  auto line = read_link_line(link_args, diag, locate);
  if (!line) {
    // An option neither this tool nor the linker knows: the usage error GNU tools print.
    if (diag.err.code == errc::usage && std::strcmp(diag.err.message, "unknown option") == 0)
      return cli::usage_error(tool, "unrecognized option '" + diag.subject + "'");
    cli::report(tool, diag.subject, diag.err);
    if (!diag.detail.empty()) std::fprintf(stderr, "%s: note: %s\n", tool.data(), diag.detail.c_str());
    if (json) print_error_document(diagnostic(diag.err, diag.subject));
    return cli::exit_error;
  }
  const auto started = std::chrono::steady_clock::now();
  const std::clock_t cpu_started = std::clock();
  // The inputs read so far, on a terminal (a link of many archives takes seconds).
  cli::progress_line progress(tool, p.has("quiet"));
  if (progress.on())
    options.progress = [&progress](std::size_t done, std::size_t total) { progress.update(done, total, "inputs"); };
  auto linked = resolve_static(*line, options, diag);
  progress.finish();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  const double cpu_seconds = static_cast<double>(std::clock() - cpu_started) / CLOCKS_PER_SEC;
  if (!linked) {
    cli::report(tool, diag.subject, diag.err);
    if (!diag.detail.empty()) std::fprintf(stderr, "%s: note: %s\n", tool.data(), diag.detail.c_str());
    if (json) print_error_document(diagnostic(diag.err, diag.subject));
    return cli::exit_error;
  }
  const static_link_result& r = *linked;
  if (stats) {
    std::size_t members = 0;
    for (const link_file& f : r.files)
      if (f.role == file_role::member && f.reason != ~0u) ++members;
    std::fprintf(stderr,
                 "%s: resolution (read + extract): %.1f ms wall, %.1f ms cpu; %zu symbol resolutions "
                 "(%.2f M/s wall, %.2f M/s cpu); %zu members extracted, %zu archives, %zu inputs\n",
                 tool.data(), seconds * 1e3, cpu_seconds * 1e3, r.symbols_resolved,
                 r.symbols_resolved / seconds / 1e6, cpu_seconds > 0 ? r.symbols_resolved / cpu_seconds / 1e6 : 0.0,
                 members, r.archives, line->inputs.size());
  }

  if (!why_extract.empty()) {
    const std::string tsv = demangle ? demangle_why_extract(r.why_extract_tsv()) : r.why_extract_tsv();
    if (why_extract == "-") {
      std::fwrite(tsv.data(), 1, tsv.size(), stdout);
    } else {
      std::FILE* out = std::fopen(why_extract.c_str(), "wb");
      if (out == nullptr) {
        cli::report(tool, why_extract, "cannot open for writing");
        return cli::exit_error;
      }
      std::fwrite(tsv.data(), 1, tsv.size(), out);
      std::fclose(out);
    }
  }
  if (map_includes) {
    const std::string text = demangle ? demangle_map_includes(r.map_includes()) : r.map_includes();
    std::fwrite(text.data(), 1, text.size(), stdout);
  }
  int status = r.undefined.empty() && r.duplicates.empty() ? cli::exit_ok : cli::exit_finding;

  for (const std::string& member : chains) {
    const file_id id = r.find_file(member);
    if (id == no_file || r.files[id].role != file_role::member) {
      cli::report(tool, member, "no such archive member in this link");
      return cli::exit_error;
    }
    if (r.files[id].reason == ~0u) {
      std::printf("%s was not extracted\n", r.files[id].name.c_str());
      continue;
    }
    const auto chain = r.chain(id);
    for (std::size_t k = 0; k < chain.size(); ++k) {
      const link_file& f = r.files[chain[k]];
      std::printf("%*s%s", static_cast<int>(2 * k), "", f.name.c_str());
      if (f.reason != ~0u) {
        const extraction& e = r.extractions[f.reason];
        std::printf("  <- %s", shown(e.symbol).c_str());
        if (e.reference == no_file) std::printf(" (%s)", e.reference_label.c_str());
      } else if (f.role != file_role::member) {
        std::printf("  (command line)");
      }
      std::printf("\n");
    }
  }

  if (json) {
    // The document is report/why.hpp's (docs/JSON.md).
    json_writer w(stdout);
    report::write_json(w, r, report::why_json_options{demangle});
    w.newline();
    w.flush();
  } else if (why_extract.empty() && !map_includes && chains.empty()) {
    std::size_t members = 0;
    for (const link_file& f : r.files)
      if (f.role == file_role::member && f.reason != ~0u) ++members;
    std::printf("%zu members extracted from %zu archives (%s semantics); %zu undefined, %zu duplicate, %zu unused members\n",
                members, r.archives, to_string(r.semantics), r.undefined.size(), r.duplicates.size(),
                r.unused_members.size());
  }
  for (const undefined_symbol& u : r.undefined) {
    std::fprintf(stderr, "%s: undefined symbol: %s (referenced by %s)\n", tool.data(), shown(u.name).c_str(),
                 u.first_reference == no_file ? "<internal>" : r.files[u.first_reference].name.c_str());
  }
  for (const duplicate_definition& d : r.duplicates) {
    std::fprintf(stderr, "%s: duplicate symbol: %s (in %s and %s)\n", tool.data(), shown(d.name).c_str(),
                 d.first == no_file ? "<internal>" : r.files[d.first].name.c_str(),
                 d.second == no_file ? "<internal>" : r.files[d.second].name.c_str());
  }
  return status;
}
