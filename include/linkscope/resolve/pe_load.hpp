// linkscope/resolve/pe_load.hpp — the Windows loader, from the files: the DLL
// closure of a PE image, every import checked against the exports of the DLL
// it resolves to, API sets, forwarders and delay-load imports.
//
// The search follows the documented order for desktop applications with
// SafeDllSearchMode on ("Dynamic-link library search order"), as the user
// says the module is loaded (winload_options::mode):
//   program  (a program's own imports)  KnownDLLs, the application folder,
//            System32, the Windows folder, the current folder, PATH
//   altered  (LoadLibraryEx + LOAD_WITH_ALTERED_SEARCH_PATH; Node's .node)
//            KnownDLLs, the loaded module's folder, System32, Windows,
//            current folder, PATH
//   python   (LOAD_LIBRARY_SEARCH_DEFAULT_DIRS | ..._DLL_LOAD_DIR; Python >= 3.8)
//            KnownDLLs, the .pyd's folder, the application folder,
//            os.add_dll_directory folders, System32 — never PATH
// A module already loaded under the same base name is reused (names compare
// case-insensitively, as on Windows; files are looked up case-insensitively
// too). api-ms-win-* / ext-ms-* contracts resolve to their host through the
// API set schema of the root's apisetschema.dll (coff/apiset.hpp), else a
// built-in table; an ext-ms-* contract with no host is absent but optional.
// Imports by name are looked up case-sensitively (the hint only speeds the
// loader up; the answer is the name's), by ordinal against the ordinal base;
// forwarders ("DLL.Name", "DLL.#N") are followed across DLLs and API sets,
// loading the DLL they name, with cycle detection. Delay-load imports are
// resolved the same way but reported apart: they fail only when called.
// A managed image (a CLR header) is marked "managed"; an IL-only one
// (COMIMAGE_FLAGS_ILONLY) stops there: its own import table is not
// processed, it needs mscoree.dll and its _CorExeMain (a program) or
// _CorDllMain (a DLL), as Wine's loader does (fixup_imports_ilonly) and as
// Windows hands such images to the CLR. A mixed-mode image (C++/CLI: a CLR
// header without ILONLY) has its native imports resolved as usual.
//
// The result reuses the ld.so emulator's shapes (ld_so/result.hpp): objects
// in load order with their needed names and who loaded them, bindings
// (from, to, symbol, version = "" or the ordinal) — plus, per object, the
// rule that found it and its class (system, API set, UCRT, VC++ redist,
// debug CRT, msvcrt, application), and the import findings.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "linkscope/coff/apiset.hpp"
#include "linkscope/coff/pe.hpp"
#include "linkscope/core/error.hpp"
#include "linkscope/core/mapped_file.hpp"
#include "linkscope/resolve/ld_so/result.hpp"
#include "linkscope/resolve/windows.hpp"

namespace linkscope {
inline namespace v0 {
namespace resolve {

enum class load_mode : std::uint8_t { program, altered, python };

// The rule that found a DLL.
enum class dll_rule : std::uint8_t {
  not_found,
  main,          // the root image
  executable,    // the host program given as --executable (a .node importing node.exe)
  loaded,        // already loaded under this base name
  known_dlls,    // a KnownDLL (from System32)
  api_set,       // an API set contract (the object stands for its host)
  app_dir,       // the application's folder
  module_dir,    // the loaded module's folder (altered, python)
  dll_dir,       // an os.add_dll_directory / AddDllDirectory folder
  system32,      // System32 (--windows-root)
  windows_dir,   // the Windows folder
  current_dir,   // the current folder
  path,          // a PATH folder
  system_list,   // not on disk here, but a system DLL on every Windows (built-in list)
};

constexpr const char* to_string(dll_rule r) noexcept {
  switch (r) {
    case dll_rule::not_found: return "not-found";
    case dll_rule::main: return "main";
    case dll_rule::executable: return "executable";
    case dll_rule::loaded: return "loaded";
    case dll_rule::known_dlls: return "known-dlls";
    case dll_rule::api_set: return "api-set";
    case dll_rule::app_dir: return "application-folder";
    case dll_rule::module_dir: return "module-folder";
    case dll_rule::dll_dir: return "dll-directory";
    case dll_rule::system32: return "system32";
    case dll_rule::windows_dir: return "windows-folder";
    case dll_rule::current_dir: return "current-folder";
    case dll_rule::path: return "path";
    case dll_rule::system_list: return "system-list";
  }
  return "?";
}

enum class dll_class : std::uint8_t { main, application, system, api_set, ucrt, vc_redist, debug_crt, msvcrt };

constexpr const char* to_string(dll_class c) noexcept {
  switch (c) {
    case dll_class::main: return "main";
    case dll_class::application: return "application";
    case dll_class::system: return "system";
    case dll_class::api_set: return "api-set";
    case dll_class::ucrt: return "ucrt";
    case dll_class::vc_redist: return "vc-redist";
    case dll_class::debug_crt: return "debug-crt";
    case dll_class::msvcrt: return "msvcrt";
  }
  return "?";
}

struct winload_options {
  load_mode mode = load_mode::program;
  std::string executable;              // the host program (its folder is the application folder)
  std::string windows_root;            // System32; "" = no Windows tree (system DLLs assumed)
  std::string windows_dir;             // "" = the parent of windows_root
  std::string current_dir;             // "" = not searched
  std::vector<std::string> path;       // PATH folders, in order
  std::vector<std::string> dll_dirs;   // python: os.add_dll_directory folders
  std::vector<std::string> known_dlls;  // added to the built-in Windows 10/11 list
  bool check_imports = true;           // every import against the exports it binds to
};

// Per object of windows_link::link.objects (same index).
struct winload_object {
  dll_rule rule = dll_rule::not_found;
  dll_class kind = dll_class::application;
  std::uint32_t host = no_object;   // API set: the object of its host DLL
  bool optional_absent = false;     // ext-ms-* that no API set schema was given to look up
  bool delay_only = false;          // reached only through delay-load imports
  bool assumed = false;             // a system DLL not read (no Windows tree given)
  bool managed = false;             // has a CLR header
  bool il_only = false;             // ... flagged COMIMAGE_FLAGS_ILONLY: its imports are not the loader's
                                    // business; it needs mscoree.dll (_CorExeMain / _CorDllMain) only
  std::uint16_t machine = 0;
  std::vector<bool> needed_delay;   // per needed entry: a delay-load import
  std::vector<std::uint32_t> forwards_to;  // objects its exports forward to (loaded for them)
  std::vector<std::string> assemblies;     // side-by-side: "NAME VERSION" per manifest dependentAssembly
};

enum class import_problem : std::uint8_t { missing_dll, missing_export, forwarder_missing, forwarder_cycle };

constexpr const char* to_string(import_problem p) noexcept {
  switch (p) {
    case import_problem::missing_dll: return "missing-dll";
    case import_problem::missing_export: return "missing-export";
    case import_problem::forwarder_missing: return "forwarder-target-missing";
    case import_problem::forwarder_cycle: return "forwarder-cycle";
  }
  return "?";
}

struct import_finding {
  import_problem problem = import_problem::missing_export;
  std::uint32_t from = 0;            // the importing object
  std::uint32_t dll = no_object;     // the object the import names (if loaded)
  std::string dll_name;              // as the import names it
  std::string symbol;                // the name, or "#N"
  bool delay = false;                // a delay-load import: fails only when called
  std::string detail;                // the forwarder chain, for forwarder findings
  // forwarder-cycle: the object whose export starts the cycle, and that
  // export as an error naming its file and the file offset of its export
  // address table entry (errc::malformed); errc::ok otherwise.
  std::uint32_t cycle_at = no_object;
  diagnostic cycle;
};

struct windows_link {
  dynamic_link link;                      // objects, bindings, files (same shapes as ld.so)
  std::vector<winload_object> info;       // per object
  std::vector<import_finding> findings;   // missing DLLs, exports, forwarder targets
  std::deque<std::string> strings;        // storage for "#N" binding names
  bool root_managed = false;             // the root has a CLR header
  bool root_il_only = false;             // ... and is IL-only: the loader stopped at mscoree.dll

  // A finding that stops the program from starting (delay-load ones do not;
  // a missing export becomes a stub that fails when called, as in Wine, but
  // Windows refuses to start: it counts).
  bool any_problem(bool with_delay = false) const noexcept {
    for (const auto& f : findings)
      if (with_delay || !f.delay) return true;
    return false;
  }
};

// Classify a DLL name (any case) that `rule` found.
dll_class classify_dll(std::string_view name, dll_rule rule);
// The built-in host of an API set contract when no schema is given: "" when
// unknown.
std::string builtin_apiset_host(std::string_view contract);
// True if `name` is on the built-in Windows 10/11 KnownDLLs list.
bool builtin_known_dll(std::string_view name);

namespace winload_detail {
struct pe_file;      // one PE file as read: mapping, image, imports, manifest, export index
struct system_tree;  // one System32 folder's API set schema
using dir_listing = std::unordered_map<std::string, std::string>;  // lower-case name -> name on disk
}  // namespace winload_detail

// What the Windows loader reads, shared by every root of a run, as
// object_cache is for ld.so and dyld_cache for dyld: each PE file is mapped
// and parsed once (its imports and manifest at once, its export index on the
// first lookup), each folder is listed once, and each Windows tree's API set
// schema is read once, however many roots load them. Thread-safe: threads
// may share one cache. The files must not change while it lives.
class winload_cache {
 public:
  winload_cache() = default;
  winload_cache(const winload_cache&) = delete;
  winload_cache& operator=(const winload_cache&) = delete;

  // Distinct PE files mapped and parsed, and opens answered from the cache.
  std::size_t files() const {
    std::lock_guard<std::mutex> hold(lock_);
    return files_;
  }
  std::size_t hits() const {
    std::lock_guard<std::mutex> hold(lock_);
    return hits_;
  }

  // The file at host path `path`; one that cannot be read or is no PE image
  // has its `failure` set (and is cached too).
  std::shared_ptr<const winload_detail::pe_file> open(const std::string& path);
  // The entries of folder `dir` ("" is the current folder).
  std::shared_ptr<const winload_detail::dir_listing> listing(const std::string& dir);
  // The API set schema of the System32 folder `system32`.
  std::shared_ptr<const winload_detail::system_tree> tree(const std::string& system32);

 private:
  mutable std::mutex lock_;
  std::unordered_map<std::string, std::shared_ptr<const winload_detail::pe_file>> by_path_;
  std::map<std::pair<std::uint64_t, std::uint64_t>, std::shared_ptr<const winload_detail::pe_file>> by_file_;
  std::unordered_map<std::string, std::shared_ptr<const winload_detail::dir_listing>> dirs_;
  std::unordered_map<std::string, std::shared_ptr<const winload_detail::system_tree>> trees_;
  std::size_t files_ = 0;
  std::size_t hits_ = 0;
};

// Emulate the Windows loader for `file` (a .exe, .dll, .pyd or .node).
// Errors only for an unreadable or non-PE root; problems further down are
// findings and warnings. With `cache`, what it reads is shared with every
// other root loaded through the same cache.
result<windows_link, diagnostic> load_windows(const std::string& file, const winload_options& options,
                                              winload_cache& cache);
result<windows_link, diagnostic> load_windows(const std::string& file, const winload_options& options = {});

}  // namespace resolve
}  // namespace v0
}  // namespace linkscope

#if LINKSCOPE_DEFINITIONS
#include "linkscope/resolve/winload/load.hpp"
#endif
