// linkscope-dupes — strong definitions of the same symbol in several files.
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include <linkscope/report/json.hpp>
#include <linkscope/resolve/duplicates.hpp>

#include "cli/cli.hpp"

namespace {
constexpr std::string_view tool = "linkscope-dupes";

void print_help() {
  std::fputs(
      "Usage: linkscope-dupes [OPTIONS] FILE...\n"
      "\n"
      "Lists the symbols with a strong definition in more than one of the FILEs\n"
      "(shared libraries, objects, archives: each archive member counts apart).\n"
      "For each: the definition ld.so uses at run time (global scope order of the\n"
      "closure of the first DSO or executable given), the one a link takes, and\n"
      "whether versions or sizes differ (a data symbol of another size is an ABI break).\n"
      "\n"
      "Options:\n"
      "  --closure FILE   DSO or executable whose closure gives the run-time order\n"
      "  --abi-only       list only size mismatches of data symbols\n"
      "  --thin-confine   refuse thin-archive member paths that are absolute or leave\n"
      "                   the archive's folder (default: open them as GNU ar/nm do)\n"
      "  --json           machine-readable output\n"
      "  --help, --version\n"
      "\n"
      "Exit status: 0 no duplicates, 1 duplicates found, 2 error.\n",
      stdout);
}
}  // namespace

int main(int argc, char** argv) {
  using namespace linkscope;
  cli::fast_stdout();
  bool json = false, abi_only = false;
  resolve::duplicates_options options;
  std::vector<std::string> paths;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      print_help();
      return cli::exit_ok;
    }
    if (arg == "--version") return cli::print_version(tool);
    if (arg == "--json")
      json = true;
    else if (arg == "--abi-only")
      abi_only = true;
    else if (arg == "--thin-confine")
      options.thin.confine_to_archive_dir = true;
    else if (const char* v = cli::option_value(argc, argv, i, "--closure"))
      options.closure_root = v;
    else if (arg.size() > 1 && arg[0] == '-')
      return cli::usage_error(tool, "unknown option '" + std::string(arg) + "'");
    else
      paths.emplace_back(arg);
  }
  if (paths.size() < 2 && options.closure_root.empty()) return cli::usage_error(tool, "give at least two files");
  auto report = resolve::find_duplicates(paths, options);
  if (!report) {
    cli::report(tool, report.error());  // names the file (and member) that failed
    return cli::exit_error;
  }
  std::size_t shown = 0;
  auto site_label = [](const resolve::definition_site& s) {
    std::string label = s.file;
    if (!s.version.empty()) label += "@" + s.version;
    return label;
  };
  if (json) {
    json_writer w(stdout);
    w.begin_object().field("version", 1);
    w.key("closure_order").begin_array();
    for (const auto& o : report->closure_order) w.value(o);
    w.end_array().key("duplicates").begin_array();
    for (const auto& d : report->duplicates) {
      if (abi_only && !d.abi_break) continue;
      ++shown;
      w.begin_object().field("symbol", d.name);
      w.field("runtime_winner", d.runtime_winner < d.sites.size() ? d.sites[d.runtime_winner].file : std::string());
      w.field("link_winner", d.sites[d.link_winner].file);
      w.field("versions_differ", d.versions_differ).field("sizes_differ", d.sizes_differ).field("abi_break", d.abi_break);
      w.key("definitions").begin_array();
      for (const auto& s : d.sites)
        w.begin_object().field("file", s.file).field("version", s.version).field("size", s.size).field("kind", to_string(s.kind)).end_object();
      w.end_array().end_object();
    }
    w.end_array().end_object().newline();
    w.flush();
  } else {
    for (const auto& d : report->duplicates) {
      if (abi_only && !d.abi_break) continue;
      ++shown;
      std::printf("%s%s\n", d.name.c_str(), d.abi_break ? "  [ABI break: data sizes differ]" : d.sizes_differ ? "  [sizes differ]" : "");
      for (std::size_t i = 0; i < d.sites.size(); ++i) {
        const auto& s = d.sites[i];
        std::printf("  %-60s size %-6llu %s%s%s\n", site_label(s).c_str(), static_cast<unsigned long long>(s.size), to_string(s.kind),
                    i == d.runtime_winner ? "  <- ld.so binds here" : "", i == d.link_winner ? "  <- a link takes this" : "");
      }
    }
    std::printf("%zu duplicate symbol%s\n", shown, shown == 1 ? "" : "s");
  }
  for (const auto& s : report->skipped) cli::warn(tool, s.name, s.why.message);
  std::fflush(stdout);
  return shown > 0 ? cli::exit_finding : cli::exit_ok;
}
