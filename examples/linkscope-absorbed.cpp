// linkscope-absorbed — does a consumer of S.so still need A.a at link time?
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#if !defined(_WIN32)
#include <stdlib.h>  // mkdtemp
#endif

#include <linkscope/report/absorbed.hpp>
#include <linkscope/report/json.hpp>
#include <linkscope/report/json_error.hpp>
#include <linkscope/resolve/absorb.hpp>
#include <linkscope/resolve/cmake_libs.hpp>
#include <linkscope/symbols/demangle.hpp>

#include "cli/cli.hpp"
#include "cli/options.hpp"

namespace {
constexpr std::string_view tool = "linkscope-absorbed";

namespace cli = linkscope::cli;

constexpr cli::option_spec options[] = {
    {"consumer", 0, cli::arg::required, "FILE", "an object, archive or DSO that links against S (repeatable)"},
    {"cmake-libs", 0, cli::arg::required, "LIST",
     "library names as a CMake config lists them (';'-separated); each is looked up under --prefix as find_library would"},
    {"cmake-package", 0, cli::arg::required, "NAME",
     "evaluate the installed CMake package NAME with cmake itself (find_package(NAME) in a generated probe project) "
     "and judge every library of its resolved link interface as --cmake-libs does, and each entry of its imported "
     "shared libraries' IMPORTED_LINK_DEPENDENT_LIBRARIES (needed when the link finds that DT_NEEDED library only "
     "through it, or not at all)"},
    {"prefix", 0, cli::arg::required, "DIR",
     "install prefix for --cmake-libs (lib/, lib64/, lib/<multiarch>/); for --cmake-package, CMAKE_PREFIX_PATH"},
    {"allow-unevaluated", 0, cli::arg::none, nullptr,
     "accept --cmake-libs entries that only CMake can evaluate (targets, generator expressions) instead of exit 2"},
    {"arch", 0, cli::arg::required, "ARCH",
     "Mach-O: the slice of a universal S (and of universal archives) to judge, as lipo names it (x86_64, arm64); "
     "default: S's first slice"},
    {"root", 0, cli::arg::required, "DIR",
     "Mach-O: the macOS root or SDK folder (with .tbd stubs) where S's absolute install names are found, as "
     "linkscope-ldd --root"},
    {"members", 0, cli::arg::none, nullptr, "list every member, not only the verdicts"},
    {"thin-confine", 0, cli::arg::none, nullptr,
     "refuse thin-archive member paths that are absolute or leave the archive's folder (default: open them as GNU ar/nm do)"},
    {"demangle", 'C', cli::arg::none, nullptr,
     "print C++ symbol names demangled, as c++filt does; --json adds \"demangled\" maps beside the symbol lists"},
    {"json", 0, cli::arg::none, nullptr, "machine-readable output"},
};

constexpr cli::tool_spec spec{
    "linkscope-absorbed", "[OPTION]... S.so A.a...\n  or:  linkscope-absorbed [OPTION]... --cmake-libs LIST --prefix PREFIX S.so\n"
    "  or:  linkscope-absorbed [OPTION]... --cmake-package NAME [--prefix PREFIX] S.so",
    "Say whether consumers of a shared library still need static archives at link time.\n"
    "For each static archive A, whether a consumer of the shared library S still\n"
    "needs A at link time, from the files alone. For each member of A:\n"
    "  re-exported  S exports some of its definitions (consumers get them from S;\n"
    "               linking A as well duplicates them: an ODR risk)\n"
    "  hidden       its definitions are in S but not exported\n"
    "  absorbed     its definitions are in S as globals that S does not export\n"
    "  required     S (or a --consumer) has undefined symbols that only A defines\n"
    "  unused       none of the above\n"
    "Verdict per archive: needed, re-exported, not-needed or unrelated.\n"
    "S may be an ELF shared library or executable, a Mach-O dylib, bundle or\n"
    "executable (A: an archive of Mach-O objects), or a PE DLL or EXE (A: a\n"
    "static .lib/.a of COFF objects; only exported names are re-exported).",
    options,
    "  linkscope-absorbed libtorch_cpu.so libkineto.a\n"
    "  linkscope-absorbed --members --consumer main.o libfoo.so libbar.a\n"
    "  linkscope-absorbed --arch arm64 libtorch_cpu.dylib libkineto.a\n"
    "  linkscope-absorbed --cmake-libs 'kineto;fmt' --prefix /usr libtorch_cpu.so\n"
    "  linkscope-absorbed --cmake-package Torch /usr/lib/x86_64-linux-gnu/libtorch_cpu.so\n",
    "some archive is needed"};

// Up to `max` symbols, ", "-separated; demangled with --demangle.
std::string join(const std::vector<std::string>& items, std::size_t max, bool demangle) {
  std::string out;
  for (std::size_t i = 0; i < items.size() && i < max; ++i) {
    if (i != 0) out += ", ";
    out += demangle ? linkscope::symbols::demangle(items[i]) : items[i];
  }
  if (items.size() > max) out += ", ...";
  return out;
}

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// --cmake-package NAME: CMake itself evaluates the installed package config.
// A generated probe project calls find_package(NAME) and links an executable
// to what the package offers (NAME_LIBRARIES or <UPPER>_LIBRARIES when the
// config sets it, else every imported library target it defines); the link
// command CMake writes (CMakeFiles/<target>.dir/link.txt) is the package's
// resolved link interface, in the order a consumer links it. Its library
// entries come back as --cmake-libs entries: paths, -l and -Wl,... words
// (a path inside -Wl,--no-as-needed,PATH is taken out as its own entry).
// Errors (no cmake, a failing find_package) are messages for exit 2.
// `dependents` gets the IMPORTED_LINK_DEPENDENT_LIBRARIES entries of the
// package's imported shared libraries, once each: {FILE, ENTRY, ENTRY'S FILE
// when CMake knows ENTRY as a target}.
struct link_dependent {
  std::string file, entry, location;
};
bool cmake_link_interface(const std::string& package, const std::string& prefix, std::vector<std::string>& entries,
                          std::vector<link_dependent>& dependents, std::string& message) {
  namespace fs = std::filesystem;
  for (char c : package)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.')) {
      message = "--cmake-package: not a package name: " + package;
      return false;
    }
  std::error_code ec;
  std::string pattern = (fs::temp_directory_path(ec) / "linkscope-cmake.XXXXXX").string();
#if defined(_WIN32)
  if (true) {
#else
  if (::mkdtemp(pattern.data()) == nullptr) {
#endif
    message = "--cmake-package: cannot make a temporary folder";
    return false;
  }
  const fs::path dir = pattern;
  std::string upper = package;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  {
    std::FILE* f = std::fopen((dir / "CMakeLists.txt").c_str(), "w");
    if (f == nullptr) {
      message = "--cmake-package: cannot write the probe project";
      fs::remove_all(dir);
      return false;
    }
    std::fprintf(f,
                 "cmake_minimum_required(VERSION 3.21)\n"
                 "project(linkscope_probe C CXX)\n"
                 "find_package(%s REQUIRED)\n"
                 "file(WRITE ${CMAKE_BINARY_DIR}/probe.c \"int main(void) { return 0; }\\n\")\n"
                 "add_executable(linkscope_probe ${CMAKE_BINARY_DIR}/probe.c)\n"
                 "if(DEFINED %s_LIBRARIES)\n  set(_ls_libs ${%s_LIBRARIES})\n"
                 "elseif(DEFINED %s_LIBRARIES)\n  set(_ls_libs ${%s_LIBRARIES})\n"
                 "else()\n  set(_ls_libs)\n"
                 "  get_directory_property(_ls_targets IMPORTED_TARGETS)\n"
                 "  foreach(_t IN LISTS _ls_targets)\n"
                 "    get_target_property(_type ${_t} TYPE)\n"
                 "    if(_type MATCHES \"LIBRARY$\")\n      list(APPEND _ls_libs ${_t})\n    endif()\n"
                 "  endforeach()\n"
                 "endif()\n"
                 "target_link_libraries(linkscope_probe PRIVATE ${_ls_libs})\n"
                 // Each imported shared library's IMPORTED_LINK_DEPENDENT_LIBRARIES
                 // (every configuration): FILE<TAB>ENTRY<TAB>ENTRY'S FILE when a target.
                 "file(WRITE ${CMAKE_BINARY_DIR}/dependent.txt \"\")\n"
                 "get_directory_property(_ls_all IMPORTED_TARGETS)\n"
                 "foreach(_t IN LISTS _ls_all)\n"
                 "  get_target_property(_type ${_t} TYPE)\n"
                 "  if(NOT _type STREQUAL \"SHARED_LIBRARY\")\n    continue()\n  endif()\n"
                 "  get_target_property(_cfgs ${_t} IMPORTED_CONFIGURATIONS)\n"
                 "  if(NOT _cfgs)\n    set(_cfgs \"\")\n  endif()\n"
                 "  foreach(_c IN ITEMS NOCONFIG ${_cfgs})\n"
                 "    set(_sfx \"_${_c}\")\n"
                 "    if(_c STREQUAL \"NOCONFIG\")\n      set(_sfx \"\")\n    endif()\n"
                 "    get_target_property(_loc ${_t} IMPORTED_LOCATION${_sfx})\n"
                 "    if(NOT _loc)\n      get_target_property(_loc ${_t} IMPORTED_LOCATION)\n    endif()\n"
                 "    get_target_property(_deps ${_t} IMPORTED_LINK_DEPENDENT_LIBRARIES${_sfx})\n"
                 "    if(NOT _loc OR NOT _deps)\n      continue()\n    endif()\n"
                 "    foreach(_d IN LISTS _deps)\n"
                 "      set(_dloc \"\")\n"
                 "      if(TARGET ${_d})\n        get_target_property(_dloc ${_d} LOCATION)\n      endif()\n"
                 "      file(APPEND ${CMAKE_BINARY_DIR}/dependent.txt \"${_loc}\\t${_d}\\t${_dloc}\\n\")\n"
                 "    endforeach()\n"
                 "  endforeach()\n"
                 "endforeach()\n",
                 package.c_str(), package.c_str(), package.c_str(), upper.c_str(), upper.c_str());
    std::fclose(f);
  }
  const fs::path build = dir / "build";
  const std::string log = (dir / "cmake.log").string();
  std::string command = "cmake -S " + shell_quote(dir.string()) + " -B " + shell_quote(build.string()) +
                        " -G 'Unix Makefiles'";
  if (!prefix.empty()) command += " -DCMAKE_PREFIX_PATH=" + shell_quote(prefix);
  command += " >" + shell_quote(log) + " 2>&1";
  const int rc = std::system(command.c_str());
  const std::string link_txt = (build / "CMakeFiles" / "linkscope_probe.dir" / "link.txt").string();
  auto link = linkscope::mapped_file::open(link_txt);
  if (rc != 0 || !link) {
    std::string tail;
    if (auto l = linkscope::mapped_file::open(log)) {
      const std::string_view text = l->bytes().chars();
      tail = std::string(text.substr(text.size() > 1500 ? text.size() - 1500 : 0));
    }
    message = "--cmake-package " + package + ": CMake could not evaluate it" +
              (rc == -1 || rc == 127 * 256 ? std::string(" (is cmake installed?)") : std::string()) +
              (tail.empty() ? std::string() : ":\n" + tail);
    fs::remove_all(dir);
    return false;
  }
  const bool linked = linkscope::resolve::link_command_libraries(link->bytes().chars(), entries);
  if (auto dep = linkscope::mapped_file::open((build / "dependent.txt").string())) {
    std::set<std::pair<std::string, std::string>> seen;
    for (const std::string& line : linkscope::resolve::split_cmake_list(dep->bytes().chars(), '\n')) {
      const auto tab1 = line.find('\t'), tab2 = line.find('\t', tab1 == std::string::npos ? tab1 : tab1 + 1);
      if (tab1 == std::string::npos || tab2 == std::string::npos) continue;
      link_dependent d{line.substr(0, tab1), line.substr(tab1 + 1, tab2 - tab1 - 1), line.substr(tab2 + 1)};
      if (d.entry.empty() || !seen.emplace(d.file, d.entry).second) continue;
      dependents.push_back(std::move(d));
    }
  }
  fs::remove_all(dir);
  if (!linked) {
    message = "--cmake-package " + package + ": no link command in " + link_txt;
    return false;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace linkscope;
  cli::fast_stdout();
  cli::parsed p;
  if (int rc = cli::parse(spec, argc, argv, p); rc >= 0) return rc;
  const bool json = p.has("json"), list_members = p.has("members");
  const bool demangle = p.has("demangle");
  const std::string cmake_libs = p.value("cmake-libs"), prefix = p.value("prefix");
  const std::string cmake_package = p.value("cmake-package");
  resolve::absorb_options options;
  options.thin.confine_to_archive_dir = p.has("thin-confine");
  options.arch = p.value("arch");
  options.dyld.root = p.value("root");
  options.consumers = p.values("consumer");
  const std::vector<std::string>& positional = p.operands;
  if (positional.empty()) return cli::usage_error(tool, "missing S.so");
  const std::string shared = positional[0];

  // --cmake-libs / --cmake-package: each entry of the list (or of CMake's
  // link line) is classified; the archives among them are judged with the rest.
  std::vector<resolve::cmake_library> named;
  std::vector<std::string> archives(positional.begin() + 1, positional.end());
  if (!cmake_package.empty()) {
    if (!cmake_libs.empty()) return cli::usage_error(tool, "--cmake-libs and --cmake-package exclude each other");
    std::vector<std::string> entries;
    std::vector<link_dependent> dependents;
    std::string message;
    if (!cmake_link_interface(cmake_package, prefix, entries, dependents, message)) {
      std::fprintf(stderr, "%s: %s\n", tool.data(), message.c_str());
      return cli::exit_error;
    }
    named = resolve::read_cmake_libs(entries, prefix, archives);
    for (const link_dependent& d : dependents)
      named.push_back(resolve::classify_link_dependent(d.entry, d.file, d.location));
  } else if (!cmake_libs.empty()) {
    if (prefix.empty()) return cli::usage_error(tool, "--cmake-libs needs --prefix");
    named = resolve::read_cmake_libs(resolve::split_cmake_list(cmake_libs), prefix, archives);
  }

  // Nothing to judge is a usage error, not a clean answer (issue 15 part 6).
  if (archives.empty() && named.empty() && cmake_package.empty())
    return cli::usage_error(tool, "no archive given (S.so A.a..., --cmake-libs or --cmake-package)");
  auto result = resolve::analyze_absorption(shared, archives, options);
  if (!result) {
    cli::report(tool, result.error());  // names the input that failed
    if (json) {
      json_writer w(stdout);
      report::write_error_document(w, result.error());
      w.newline();
    }
    return cli::exit_error;
  }
  bool needed = result->any_needed();
  for (const auto& lib : named)
    if (lib.note == "link-dependent" && std::string_view(resolve::dependent_verdict(lib)) == "needed") needed = true;
  std::size_t not_evaluated = 0;
  for (const auto& lib : named) not_evaluated += resolve::unevaluated(lib) ? 1 : 0;
  // An entry only CMake can evaluate is never a silent verdict (issue 15).
  const bool refuse = not_evaluated != 0 && !p.has("allow-unevaluated");
  const int status = refuse ? cli::exit_error : needed ? cli::exit_finding : cli::exit_ok;
  auto say_unevaluated = [&] {
    if (refuse)
      std::fprintf(stderr, "%s: %zu --cmake-libs %s can be evaluated only by CMake (targets, generator expressions); "
                   "--allow-unevaluated accepts %s\n",
                   tool.data(), not_evaluated, not_evaluated == 1 ? "entry" : "entries",
                   not_evaluated == 1 ? "it" : "them");
  };

  if (json) {
    // The document is report/absorbed.hpp's (docs/JSON.md).
    report::absorbed_json_options jo;
    jo.demangle = demangle;
    jo.cmake_libs = &named;
    json_writer w(stdout);
    report::write_json(w, *result, jo);
    w.newline();
    w.flush();
    say_unevaluated();
    return status;
  }

  // Each platform names its own symbol table.
  const bool macho = result->format == "macho", pe = result->format == "pe";
  const char* table = macho ? "an nlist symbol table" : pe ? "a COFF symbol table" : ".symtab";
  std::printf("%s%s%s: %s %s%s\n", result->shared.c_str(), macho ? " " : "",
              macho ? ("[" + result->arch + "]").c_str() : "", result->shared_has_symtab ? "has" : "stripped (no",
              table, result->shared_has_symtab ? " (hidden definitions are visible)" : ": hidden definitions cannot be seen)");
  for (const auto& a : result->archives) {
    std::printf("%s: %s", a.path.c_str(), to_string(a.verdict));
    switch (a.verdict) {
      case resolve::archive_verdict::needed: std::printf(" (consumers must link it: %s)", join(a.evidence, 8, demangle).c_str()); break;
      case resolve::archive_verdict::re_exported:
        std::printf(" (S already exports: %s; linking it too duplicates them)", join(a.evidence, 8, demangle).c_str());
        break;
      case resolve::archive_verdict::not_needed: std::printf(" (absorbed into S, not exported: %s)", join(a.evidence, 8, demangle).c_str()); break;
      case resolve::archive_verdict::unrelated: std::printf(" (no member is in S or needed by it)"); break;
    }
    std::printf("\n");
    if (list_members)
      for (const auto& m : a.members)
        std::printf("  %s(%s): %s%s%s\n", a.path.c_str(), m.name.c_str(), to_string(m.status), m.symbols.empty() ? "" : ": ",
                    join(m.symbols, 6, demangle).c_str());
    for (const auto& s : a.skipped) cli::warn(tool, a.path + "(" + s.name + ")", s.why.message);
  }
  for (const auto& lib : named) {
    if (lib.note.empty()) continue;
    if (lib.note == "not-found") {
      const std::string where = lib.name.find('/') != std::string::npos ? "" : " under " + prefix;
      if (result->shared_unresolved == 0 && result->missing_needed.empty())
        std::printf("%s: not found%s: not-needed (every undefined symbol of S is defined by its NEEDED libraries)\n",
                    lib.name.c_str(), where.c_str());
      else
        std::printf("%s: not found%s: unknown (S has %zu undefined symbols that its NEEDED libraries do not define)\n",
                    lib.name.c_str(), where.c_str(), result->shared_unresolved);
    } else if (lib.note == "cmake-target") {
      std::printf("%s: a CMake target: only CMake can evaluate it (not evaluated)\n", lib.name.c_str());
    } else if (lib.note == "generator-expression") {
      std::printf("%s: a generator expression: only CMake can evaluate it (not evaluated)\n", lib.name.c_str());
    } else if (lib.note == "flag") {
      std::printf("%s: a linker flag, not a library: nothing to check\n", lib.name.c_str());
    } else if (lib.note == "link-dependent") {
      const std::string of = std::filesystem::path(lib.dependent_of).filename().string();
      std::printf("%s: a dependent library of %s (IMPORTED_LINK_DEPENDENT_LIBRARIES", lib.name.c_str(), of.c_str());
      if (lib.soname.empty() && sniff_file(lib.dependent_of) != file_format::elf)
        std::printf("), and that is no ELF file: not-needed (only an ELF link looks up a shared library's own "
                    "dependencies)\n");
      else if (lib.soname.empty())
        std::printf("), not among its DT_NEEDED: not-needed (the link never looks for it)\n");
      else if (lib.found_by == "search")
        std::printf("; DT_NEEDED %s, the linker finds %s by itself): not-needed\n", lib.soname.c_str(), lib.path.c_str());
      else if (lib.found_by == "rpath-link")
        std::printf("; DT_NEEDED %s, found only through this entry's -rpath-link to %s): needed\n", lib.soname.c_str(),
                    lib.path.c_str());
      else
        std::printf("; DT_NEEDED %s, which the linker cannot find): needed (a consumer's link fails)\n",
                    lib.soname.c_str());
    } else if (lib.note == "debug-only") {
      std::printf("%s: for the debug configuration only: a release consumer does not link it\n", lib.name.c_str());
    } else {
      std::printf("%s: shared library %s: consumers link it like any DSO\n", lib.name.c_str(), lib.path.c_str());
    }
  }
  std::fflush(stdout);
  say_unevaluated();
  return status;
}
