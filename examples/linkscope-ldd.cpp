// linkscope-ldd: what ld.so would load for a program and where every symbol
// reference would bind — found from the files alone, without running anything.
//
// The default output is ldd's `\tname => path` lines. ldd's third column, the
// load address, is a property of one run (ASLR), not of the files, so it is
// left out: the lines are `\tname => path`, `\tpath` when the name is the path
// (the interpreter), and `\tname => not found`. The vDSO (linux-vdso.so.1) is
// not a file and is not listed.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <sys/stat.h>

#include <linkscope/report/json.hpp>
#include <linkscope/report/ldd.hpp>
#include <linkscope/resolve/dynamic.hpp>
#include <linkscope/resolve/file_format.hpp>
#include <linkscope/symbols/demangle.hpp>

#include "cli/cli.hpp"
#include "cli/options.hpp"
#include "cli/ldd_macho.hpp"
#include "cli/ldd_pe.hpp"

namespace {

using namespace linkscope;
using namespace linkscope::resolve;

constexpr std::string_view tool = "linkscope-ldd";

constexpr int output_mode = 1;  // the output modes exclude each other

constexpr cli::option_spec option_table[] = {
    {"tree", 0, cli::arg::none, nullptr, "output: the dependency tree, with how each library was found", output_mode},
    {"bindings", 0, cli::arg::none, nullptr, "output: every binding as TSV: from, to, symbol, version", output_mode},
    {"unused", 'u', cli::arg::none, nullptr, "output: unused direct dependencies (like `ldd -u -r`; -u -r is -u, as in ldd)",
     output_mode},
    {"undefined", 'r', cli::arg::none, nullptr, "output: undefined symbols (like the messages of `ldd -r`)"},
    {"interposed", 0, cli::arg::none, nullptr, "output: symbols defined by several loaded objects, the winner first",
     output_mode},
    {"format", 0, cli::arg::required, "dot", "output: the dependency graph for Graphviz", output_mode},
    {"json", 0, cli::arg::none, nullptr, "output: everything as JSON ({\"version\": 1, ...}; several files: one document, {\"version\": 1, \"files\": [...]})", output_mode},
    {"verbose", 'v', cli::arg::none, nullptr, "with the default output: also the version information, as `ldd -v`"},
    {"demangle", 'C', cli::arg::none, nullptr,
     "print C++ symbol names demangled, as c++filt does (--bindings, --undefined, --interposed); --json adds \"demangled\""},
    {"stats", 0, cli::arg::none, nullptr, "also print counts and the index size to stderr"},
    {"root", 0, cli::arg::required, "DIR", "read every file under DIR (the ld.so.cache too)"},
    {"library-path", 0, cli::arg::required, "P", "use P as LD_LIBRARY_PATH"},
    {"no-env", 0, cli::arg::none, nullptr, "ignore LD_LIBRARY_PATH from the environment"},
    {"preload", 0, cli::arg::required, "LIB", "preload LIB (like LD_PRELOAD; may be repeated, or `a:b`)"},
    {"cache", 0, cli::arg::required, "FILE", "read FILE instead of /etc/ld.so.cache"},
    {"no-cache", 0, cli::arg::none, nullptr, "read no ld.so.cache"},
    {"isa-level", 0, cli::arg::required, "N", "x86-64 level for glibc-hwcaps (1..4; default: this CPU)"},
    {"executable", 0, cli::arg::required, "PATH",
     "Mach-O: the main executable, for @executable_path of a bundle or dylib; PE: the host program (its folder is the "
     "application folder), e.g. python.exe for a .pyd"},
    {"arch", 0, cli::arg::required, "ARCH", "Mach-O: the slice of universal files (x86_64, arm64; default: the first)"},
    {"dyld-library-path", 0, cli::arg::required, "P", "Mach-O: DYLD_LIBRARY_PATH"},
    {"dyld-framework-path", 0, cli::arg::required, "P", "Mach-O: DYLD_FRAMEWORK_PATH"},
    {"dyld-fallback-library-path", 0, cli::arg::required, "P", "Mach-O: DYLD_FALLBACK_LIBRARY_PATH"},
    {"dyld-fallback-framework-path", 0, cli::arg::required, "P", "Mach-O: DYLD_FALLBACK_FRAMEWORK_PATH"},
    {"env", 0, cli::arg::none, nullptr,
     "Mach-O: take DYLD_LIBRARY_PATH, DYLD_FRAMEWORK_PATH, DYLD_FALLBACK_LIBRARY_PATH and "
     "DYLD_FALLBACK_FRAMEWORK_PATH from the environment (an option given wins); without it the environment is "
     "never read"},
    {"windows-root", 0, cli::arg::required, "DIR", "PE: System32 of a Windows tree (and its apisetschema.dll)"},
    {"load-mode", 0, cli::arg::required, "MODE", "PE: program (default), altered (LOAD_WITH_ALTERED_SEARCH_PATH) or python"},
    {"path", 0, cli::arg::required, "DIRS", "PE: PATH folders, `;`-separated (may be repeated)"},
    {"dll-dir", 0, cli::arg::required, "DIR", "PE, python mode: an os.add_dll_directory folder (may be repeated)"},
    {"known-dlls", 0, cli::arg::required, "NAMES", "PE: KnownDLLs beyond the built-in Windows 10/11 list (`;`-separated)"},
    {"current-dir", 0, cli::arg::required, "DIR", "PE: the current folder (not searched unless given)"},
};

constexpr cli::tool_spec spec{
    "linkscope-ldd", "[OPTION]... FILE...",
    "Emulate the dynamic loader on FILE without running it: what it loads, where symbols bind.\n"
    "ELF files as ld.so does: the libraries it loads, and where every symbol reference\n"
    "binds (as under LD_BIND_NOW). The default output is ldd's `name => path` lines,\n"
    "without load addresses. Mach-O files get dyld's closure (--root is then a macOS\n"
    "root or an SDK of .tbd stubs). The output options exclude each other.",
    option_table,
    "  linkscope-ldd /usr/bin/python3\n"
    "  linkscope-ldd --tree --root /srv/chroot /srv/chroot/usr/bin/ls\n"
    "  linkscope-ldd -u -r ./app\n"
    "  linkscope-ldd --bindings ./app\n"
    "  linkscope-ldd --format=dot ./app | dot -Tsvg > app.svg\n",
    "library not found, undefined or unused with --undefined/--unused"};

enum class mode { list, tree, bindings, unused, undefined, interposed, dot, json };

std::vector<std::string> split_colons(std::string_view list) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= list.size()) {
    std::size_t end = list.find(':', start);
    if (end == std::string_view::npos) end = list.size();
    if (end > start) out.emplace_back(list.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

void out(std::string_view s) { std::fwrite(s.data(), 1, s.size(), stdout); }

void print_list(const dynamic_link& link) {
  std::string line;
  for (std::size_t i = 1; i < link.objects.size(); ++i) {
    const loaded_object& o = link.objects[i];
    line.assign("\t");
    if (!o.found()) {
      line.append(o.name).append(" => not found\n");
    } else if (o.name == o.path) {
      line.append(o.path).append("\n");
    } else {
      line.append(o.name).append(" => ").append(o.path).append("\n");
    }
    out(line);
  }
}

void print_tree(const dynamic_link& link) {
  // Depth-first over NEEDED, each object expanded once (its first appearance).
  std::vector<char> shown(link.objects.size(), 0);
  std::string line;
  struct item {
    std::uint32_t id;
    std::size_t depth;
    std::string_view name;
  };
  std::vector<item> work{{0, 0, link.objects[0].path}};
  while (!work.empty()) {
    item it = work.back();
    work.pop_back();
    line.assign(2 * it.depth, ' ');
    if (it.id == no_object) {
      line.append(it.name).append(" => not found\n");
      out(line);
      continue;
    }
    const loaded_object& o = link.objects[it.id];
    line.append(it.name);
    if (!o.found()) {
      line.append(" => not found\n");
      out(line);
      continue;
    }
    if (it.depth > 0) line.append(" => ").append(o.path);
    line.append(" [").append(to_string(o.via));
    if (!o.subdir.empty()) line.append(" ").append(o.subdir);
    if (!o.where.empty()) line.append(" of ").append(o.where);
    line.append("]");
    if (shown[it.id]) {
      line.append(" (see above)\n");
      out(line);
      continue;
    }
    shown[it.id] = 1;
    line.push_back('\n');
    out(line);
    for (std::size_t k = o.needed.size(); k-- > 0;) {
      const std::uint32_t dep = k < o.needed_objects.size() ? o.needed_objects[k] : no_object;
      work.push_back({dep, it.depth + 1, o.needed[k]});
    }
  }
}

// One buffer for all the lines (150k bindings for a libtorch test program),
// filled with memcpy and written in 1 MiB pieces.
void print_bindings(const dynamic_link& link, bool demangle) {
  constexpr std::size_t capacity = std::size_t{1} << 20;
  std::unique_ptr<char[]> buffer(new char[capacity]);
  std::size_t used = 0;
  auto put = [&](std::string_view s, char end) {
    if (s.size() + 1 > capacity - used) {
      out(std::string_view(buffer.get(), used));
      used = 0;
      if (s.size() + 1 > capacity) {
        out(s);
        out(std::string_view(&end, 1));
        return;
      }
    }
    if (!s.empty()) std::memcpy(buffer.get() + used, s.data(), s.size());  // an empty view may be null
    used += s.size();
    buffer[used++] = end;
  };
  for (const symbol_binding& b : link.bindings) {
    put(link.objects[b.from].path, '\t');
    put(link.objects[b.to].path, '\t');
    if (demangle)
      put(symbols::demangle(b.symbol), '\t');
    else
      put(b.symbol, '\t');
    put(b.version, '\n');
  }
  out(std::string_view(buffer.get(), used));
}

// ld.so's version check runs before anything is listed or relocated; in trace
// mode it prints each missing (non-weak) version on stdout first.
void print_missing_versions(const dynamic_link& link) {
  std::string line;
  for (const auto& m : link.missing_versions) {
    if (m.weak) continue;
    // ld.so: "PROGRAM: TARGET: version `V' not found (required by OBJECT)".
    line.assign(link.objects[0].path).append(": ");
    line.append(m.target != no_object ? std::string_view(link.objects[m.target].path) : m.file);
    line.append(": version `").append(m.version).append("' not found");
    line.append(" (required by ").append(link.objects[m.from].path).append(")\n");
    out(line);
  }
}

// ldd -v: "Version information:", per loaded object in load order, each of
// its verneed entries and the object that provides it (rtld.c's trace mode).
void print_version_information(const dynamic_link& link) {
  std::string text;
  for (std::size_t i = 0; i < link.objects.size(); ++i) {
    bool first = true;
    for (const auto& v : link.version_needs) {
      if (v.from != i) continue;
      if (text.empty()) text = "\n\tVersion information:\n";
      if (first) text.append("\t").append(link.objects[i].path).append(":\n");
      first = false;
      text.append("\t\t").append(v.file).append(" (").append(v.version).append(") ");
      if (v.weak) text.append("[WEAK] ");
      text.append("=> ").append(v.satisfied ? std::string_view(link.objects[v.target].path) : std::string_view("not found"));
      text.push_back('\n');
    }
  }
  out(text);
}

void print_undefined(const dynamic_link& link, bool demangle) {
  print_missing_versions(link);
  std::string line;
  for (const auto& u : link.undefined) {
    line.assign("undefined symbol: ").append(demangle ? symbols::demangle(u.symbol) : std::string(u.symbol));
    if (!u.version.empty()) line.append(", version ").append(u.version);
    line.append("\t(").append(link.objects[u.from].path).append(")\n");
    out(line);
  }
}

void print_interposed(const dynamic_link& link, bool demangle) {
  std::string line;
  for (const auto& ip : link.interposed) {
    line.assign(demangle ? symbols::demangle(ip.symbol) : std::string(ip.symbol));
    for (std::uint32_t d : ip.definers) line.append("\t").append(link.objects[d].path);
    line.push_back('\n');
    out(line);
  }
}

// The dependency graph of every file given, as one Graphviz digraph: an
// object loaded by several roots is one node (keyed by its path; a library
// that is not found by its name).
class dot_graph {
 public:
  void add(const dynamic_link& link) {
    std::vector<std::size_t> ids(link.objects.size());
    for (std::size_t i = 0; i < link.objects.size(); ++i) {
      const auto& o = link.objects[i];
      ids[i] = node(o.found() ? o.path : o.name + " (not found)", !o.found());
    }
    for (std::size_t i = 0; i < link.objects.size(); ++i)
      for (std::uint32_t d : link.objects[i].needed_objects)
        if (d != no_object) {
          const std::string edge = "  n" + std::to_string(ids[i]) + " -> n" + std::to_string(ids[d]) + ";\n";
          if (std::find(edges_.begin(), edges_.end(), edge) == edges_.end()) edges_.push_back(edge);
        }
  }
  void print() const {
    std::string text = "digraph linkscope_ldd {\n  rankdir=LR;\n  node [shape=box];\n";
    for (std::size_t i = 0; i < nodes_.size(); ++i)
      text += "  n" + std::to_string(i) + " [label=" + quote(nodes_[i]) + (missing_[i] ? ", color=red" : "") + "];\n";
    for (const auto& e : edges_) text += e;
    text += "}\n";
    out(text);
  }

 private:
  static std::string quote(std::string_view s) {
    std::string q = "\"";
    for (char c : s) {
      if (c == '"' || c == '\\') q.push_back('\\');
      q.push_back(c);
    }
    return q + "\"";
  }
  std::size_t node(const std::string& label, bool missing) {
    for (std::size_t i = 0; i < nodes_.size(); ++i)
      if (nodes_[i] == label) return i;
    nodes_.push_back(label);
    missing_.push_back(missing);
    return nodes_.size() - 1;
  }
  std::vector<std::string> nodes_;
  std::vector<bool> missing_;
  std::vector<std::string> edges_;
};

// The document of one file into `w` (an element of the several-file
// document too): report/ldd.hpp's (docs/JSON.md).
void write_json(json_writer& w, const std::string& file, const dynamic_link& link, bool demangle) {
  const std::vector<std::string> realpaths = report::object_realpaths(link);
  report::ldd_json_options o;
  o.realpaths = &realpaths;
  o.demangle = demangle;
  report::write_json(w, file, link, o);
}

void print_json(const std::string& file, const dynamic_link& link, bool demangle) {
  {
    json_writer w(stdout);
    write_json(w, file, link, demangle);
  }
  std::fputc('\n', stdout);
}

// Diagnostics for the closure: missing libraries, skipped candidates, malformed parts.
bool report_problems(const std::string& file, const dynamic_link& link) {
  bool missing = false;
  for (const auto& w : link.warnings) cli::warn(tool, file, w);
  for (const auto& o : link.objects) {
    const std::string& who = o.found() ? o.path : o.name;
    for (const auto& r : o.rejected) cli::warn(tool, file, r.path + ": skipped: " + r.reason);
    for (const auto& w : o.warnings) cli::warn(tool, file, who + ": " + w);
    if (!o.found()) {
      cli::warn(tool, file, o.name + ": not found");
      missing = true;
    }
  }
  return missing;
}

}  // namespace

int main(int argc, char** argv) {
  cli::fast_stdout();
  cli::parsed p;
  if (int rc = cli::parse(spec, argc, argv, p); rc >= 0) return rc;
  mode what = mode::list;
  // -r is ldd's relocation processing: alone it prints the undefined symbols;
  // with -u, ldd prints the unused dependencies only.
  if (p.has("undefined")) {
    for (const char* other : {"tree", "bindings", "interposed", "format", "json"})
      if (p.has(other))
        return cli::usage_error(spec, (std::string("options '--undefined' and '--") + other + "' exclude each other").c_str());
    what = mode::undefined;
  }
  if (p.has("tree")) what = mode::tree;
  if (p.has("bindings")) what = mode::bindings;
  if (p.has("unused")) what = mode::unused;
  if (p.has("interposed")) what = mode::interposed;
  if (p.has("json")) what = mode::json;
  if (p.has("format")) {
    if (p.value("format") != "dot") return cli::usage_error(tool, "unsupported output format '" + p.value("format") + "' (dot)");
    what = mode::dot;
  }
  const bool stats = p.has("stats"), verbose = p.has("verbose"), demangle = p.has("demangle");
  dynamic_options options;
  dyld_options macho_options;  // Mach-O files: the dyld emulator (cli/ldd_macho.hpp)
  if (p.has("no-env")) options.search.use_env = false;
  if (p.has("no-cache")) options.search.use_cache = false;
  if (p.has("root")) {
    options.search.root = p.value("root");
    while (!options.search.root.empty() && options.search.root.back() == '/') options.search.root.pop_back();
  }
  if (p.has("executable")) macho_options.executable = p.value("executable");
  if (p.has("arch")) macho_options.arch = p.value("arch");
  // Each DYLD_* variable: its option, else (with --env) the environment.
  const struct {
    const char* option;
    const char* variable;
    std::vector<std::string>* to;
  } dyld_paths[] = {
      {"dyld-library-path", "DYLD_LIBRARY_PATH", &macho_options.library_path},
      {"dyld-framework-path", "DYLD_FRAMEWORK_PATH", &macho_options.framework_path},
      {"dyld-fallback-library-path", "DYLD_FALLBACK_LIBRARY_PATH", &macho_options.fallback_library_path},
      {"dyld-fallback-framework-path", "DYLD_FALLBACK_FRAMEWORK_PATH", &macho_options.fallback_framework_path},
  };
  for (const auto& d : dyld_paths) {
    if (p.has(d.option)) {
      *d.to = split_colons(p.value(d.option));
    } else if (p.has("env")) {
      if (const char* value = std::getenv(d.variable); value != nullptr && *value != '\0') *d.to = split_colons(value);
    }
  }
  if (p.has("library-path")) options.search.library_path = p.value("library-path");
  if (p.has("cache")) options.search.cache_file = p.value("cache");
  if (p.has("isa-level")) {
    const std::string level = p.value("isa-level");
    if (level.size() != 1 || level[0] < '1' || level[0] > '4') return cli::usage_error(tool, "--isa-level takes 1, 2, 3 or 4");
    options.search.isa_level = level[0] - '0';
  }
  for (const std::string& list : p.values("preload")) {
    // LD_PRELOAD separates with spaces or colons.
    std::size_t start = 0;
    while (start <= list.size()) {
      std::size_t end = list.find_first_of(" :", start);
      if (end == std::string::npos) end = list.size();
      if (end > start) options.preload.emplace_back(list.substr(start, end - start));
      start = end + 1;
    }
  }
  const std::vector<std::string>& files = p.operands;
  if (files.empty()) return cli::usage_error(tool, "missing file operand");
  // A --root that is not a directory is blamed itself, not the input file (issue 15 part 6).
  if (!options.search.root.empty()) {
    struct stat st {};
    if (::stat(options.search.root.c_str(), &st) != 0) {
      cli::report(tool, options.search.root, "--root: no such directory");
      return cli::exit_error;
    }
    if (!S_ISDIR(st.st_mode)) {
      cli::report(tool, options.search.root, "--root: not a directory");
      return cli::exit_error;
    }
  }
  options.bindings = what != mode::list && what != mode::tree && what != mode::dot;

  int status = cli::exit_ok;
  dot_graph graph;  // --format=dot: one graph for every file
  // --json over several files: one document, {"version": 1, "files": [...]},
  // each element the document `--json FILE` prints, or {"file", "error"}
  // for a file that could not be linked (the error is on stderr too).
  std::optional<json_writer> several;
  if (what == mode::json && files.size() > 1) {
    several.emplace(stdout);
    several->begin_object();
    several->key("version").value(1);
    several->key("files").begin_array();
  }
  json_writer* into = several ? &*several : nullptr;
  for (const std::string& file : files) {
    if (files.size() > 1 && what != mode::json && what != mode::bindings && what != mode::dot) {
      std::printf("%s:\n", file.c_str());
    }
    const file_format format = sniff_file(file);
    if (format == file_format::pe) {
      // PE images: the Windows loader (cli/ldd_pe.hpp).
      auto pe_options = cli::winload_options_from(p);
      if (!pe_options) return cli::usage_error(tool, "--load-mode takes program, altered or python");
      const cli::ldd_output pe_what = what == mode::tree ? cli::ldd_output::tree
                                      : what == mode::bindings ? cli::ldd_output::bindings
                                      : what == mode::unused ? cli::ldd_output::unused
                                      : what == mode::undefined ? cli::ldd_output::undefined
                                      : what == mode::dot ? cli::ldd_output::dot
                                      : what == mode::json ? cli::ldd_output::json
                                                           : cli::ldd_output::list;
      const int s = cli::ldd_pe(tool, file, pe_what, *pe_options, into, demangle);
      if (s > status) status = s;
      continue;
    }
    if (format == file_format::macho || format == file_format::macho_universal) {
      macho_options.root = options.search.root;
      const cli::ldd_output macho_what = what == mode::tree ? cli::ldd_output::tree
                                         : what == mode::bindings ? cli::ldd_output::bindings
                                         : what == mode::unused ? cli::ldd_output::unused
                                         : what == mode::undefined ? cli::ldd_output::undefined
                                         : what == mode::dot ? cli::ldd_output::dot
                                         : what == mode::json ? cli::ldd_output::json
                                                              : cli::ldd_output::list;
      const int s = cli::ldd_macho(tool, file, macho_what, macho_options, into, demangle);
      if (s > status) status = s;
      continue;
    }
    // ldd on an ELF file without PT_DYNAMIC (an object, a static executable):
    // "\tnot a dynamic executable" on stderr, exit 1.
    if (what != mode::json) {
      if (auto mapped = mapped_file::open(file)) {
        // Only when the program headers were read: a truncated file is an input error below.
        if (auto id = elf::identify(mapped->bytes()); id && id->segments_read && !id->dynamically_linked()) {
          std::fflush(stdout);
          std::fputs("\tnot a dynamic executable\n", stderr);
          if (status == cli::exit_ok) status = cli::exit_finding;
          continue;
        }
      }
    }
    auto link = link_dynamic(file, options);
    if (!link) {
      cli::report(tool, file, link.error());
      cli::json_error_element(into, what == mode::json, file, link.error());
      status = cli::exit_error;
      continue;
    }
    const bool missing = report_problems(file, *link);
    if (stats) {
      std::fprintf(stderr,
                   "%s: %zu objects, %zu relocations with a symbol, %zu lookups, %zu bindings, "
                   "index: %zu definitions in %zu bytes (%.1f B/definition)\n",
                   file.c_str(), link->objects.size(), link->relocations, link->lookups, link->bindings.size(),
                   link->index_entries, link->index_bytes,
                   link->index_entries ? static_cast<double>(link->index_bytes) / static_cast<double>(link->index_entries) : 0.0);
    }
    if (missing && status == cli::exit_ok) status = cli::exit_finding;
    switch (what) {
      case mode::list:
        print_missing_versions(*link);
        // Nothing loaded besides the file itself (a static-pie, a DSO without
        // NEEDED): ld.so's trace mode says "statically linked".
        if (link->objects.size() == 1) out("\tstatically linked\n");
        print_list(*link);
        if (verbose) print_version_information(*link);
        break;
      case mode::tree: print_tree(*link); break;
      case mode::bindings: print_bindings(*link, demangle); break;
      case mode::unused:
        if (!link->unused.empty()) {
          out("Unused direct dependencies:\n");
          for (std::uint32_t u : link->unused) out("\t" + link->objects[u].path + "\n");
          if (status == cli::exit_ok) status = cli::exit_finding;
        }
        break;
      case mode::undefined:
        print_undefined(*link, demangle);
        if (!link->undefined.empty() && status == cli::exit_ok) status = cli::exit_finding;
        break;
      case mode::interposed: print_interposed(*link, demangle); break;
      case mode::dot: graph.add(*link); break;
      case mode::json:
        if (into)
          write_json(*into, file, *link, demangle);
        else
          print_json(file, *link, demangle);
        break;
    }
  }
  if (several) {
    several->end_array();
    several->end_object();
    several.reset();  // flushes
    std::fputc('\n', stdout);
  }
  if (what == mode::dot) graph.print();
  std::fflush(stdout);
  return status;
}
