// linkscope/resolve/search_path.hpp — where ld.so finds a DT_NEEDED name.
//
// The order is glibc's (elf/dl-load.c _dl_map_object, glibc 2.36):
//   a name with a '/' is opened as is, after $ORIGIN/$LIB/$PLATFORM substitution;
//   otherwise
//   1. DT_RPATH of the loading object, then of its loader, and so on up to the main
//      program — only when the loading object has no DT_RUNPATH;
//   2. LD_LIBRARY_PATH (':' or ';' separated; an empty element is the current dir);
//   3. DT_RUNPATH of the loading object only;
//   4. /etc/ld.so.cache (ld_so_cache.hpp), skipped for entries under the default
//      directories when the loader has DF_1_NODEFLIB;
//   5. the trusted default directories (x86-64 Debian: /lib/x86_64-linux-gnu/,
//      /usr/lib/x86_64-linux-gnu/, /lib/, /usr/lib/), unless DF_1_NODEFLIB.
// Every directory of 1, 2, 3 and 5 is tried with the hwcaps subdirectories first:
// glibc-hwcaps/x86-64-v4, -v3, -v2 (those the CPU supports, best first), then the legacy
// subdirectories built from "tls", the platform and the legacy hwcap names (all their
// subsets, e.g. tls/x86_64/x86_64 ... x86_64), then the directory itself.
// A candidate is accepted after the checks of open_verify: ELF magic, class, data,
// OS ABI, e_machine, e_type. A file of the other class or machine is skipped and the
// search goes on; the skip is recorded.
//
// Dynamic string tokens (dl-load.c is_dst/_dl_dst_substitute): $ORIGIN and ${ORIGIN}
// (the directory of the object, *not* symlink-resolved: dirname of cwd + the name it was
// loaded as), $LIB ("lib/x86_64-linux-gnu" on Debian x86-64), $PLATFORM ("x86_64").
// An unknown $FOO stays literal. A sysroot (--root) is prepended to every file opened,
// the cache file included, but paths are reported as ld.so inside the root spells them.
#pragma once

#include <array>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "linkscope/core/bytes.hpp"
#include "linkscope/core/config.hpp"
#include "linkscope/core/error.hpp"
#include "linkscope/core/mapped_file.hpp"
#include "linkscope/elf/file.hpp"
#include "linkscope/resolve/ld_so_cache.hpp"

#if !defined(_WIN32)
#include <cerrno>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#endif
#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>
#define LINKSCOPE_HAVE_CPUID 1
#endif

namespace linkscope {
inline namespace v0 {
namespace resolve {

// How a library was found.
enum class found_via : std::uint8_t {
  not_found,
  path,             // the name had a '/': opened directly
  rpath,            // DT_RPATH (of the loader or one of its loaders)
  ld_library_path,  // LD_LIBRARY_PATH
  runpath,          // DT_RUNPATH of the loader
  cache,            // ld.so.cache
  default_dirs,     // the trusted default directories
  main_program,     // the program itself
  interpreter,      // PT_INTERP
  loaded,           // already loaded under this name or SONAME (or same file)
};

constexpr const char* to_string(found_via v) noexcept {
  switch (v) {
    case found_via::not_found: return "not-found";
    case found_via::path: return "path";
    case found_via::rpath: return "rpath";
    case found_via::ld_library_path: return "ld-library-path";
    case found_via::runpath: return "runpath";
    case found_via::cache: return "ld.so.cache";
    case found_via::default_dirs: return "default";
    case found_via::main_program: return "main";
    case found_via::interpreter: return "interpreter";
    case found_via::loaded: return "loaded";
  }
  return "?";
}

// What an ld.so would be: the ELF kind it loads and its compiled-in constants.
struct loader_target {
  unsigned char elf_class = 2;  // ELFCLASS64
  unsigned char elf_data = 1;   // ELFDATA2LSB
  std::uint16_t machine = 62;   // EM_X86_64
};

struct search_options {
  std::string root;                          // sysroot; "" = the host
  std::optional<std::string> library_path;   // LD_LIBRARY_PATH given explicitly
  bool use_env = true;                       // else read LD_LIBRARY_PATH from the environment
  std::string cache_file = "/etc/ld.so.cache";
  bool use_cache = true;
  std::string lib = "lib/x86_64-linux-gnu";  // $LIB
  std::string platform = "x86_64";           // $PLATFORM (AT_PLATFORM)
  std::vector<std::string> system_dirs = {"/lib/x86_64-linux-gnu/", "/usr/lib/x86_64-linux-gnu/", "/lib/",
                                          "/usr/lib/"};
  int isa_level = -1;                        // x86-64 ISA level 1..4; -1 = detect with cpuid
  std::vector<std::string> legacy_hwcaps = {"x86_64"};  // dl_hwcap names (Intel CPUs may add avx512_1)
  bool legacy_subdirs = true;                // glibc < 2.37 also searches tls/, platform/ ...
  std::string cwd;                           // for relative names; "" = getcwd()
  loader_target target;
};

namespace detail {
inline int read_x86_isa_level() noexcept {
#if defined(LINKSCOPE_HAVE_CPUID)
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid(1, &a, &b, &c, &d)) return 1;
  const unsigned c1 = c;
  unsigned ext_c = 0;
  if (__get_cpuid(0x80000001u, &a, &b, &c, &d)) ext_c = c;
  unsigned b7 = 0;
  if (__get_cpuid_max(0, nullptr) >= 7) {
    __cpuid_count(7, 0, a, b, c, d);
    b7 = b;
  }
  unsigned long long xcr0 = 0;
  if (c1 & (1u << 27)) {  // OSXSAVE
    unsigned lo = 0, hi = 0;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    xcr0 = (static_cast<unsigned long long>(hi) << 32) | lo;
  }
  const bool v2 = (c1 & (1u << 0)) && (c1 & (1u << 9)) && (c1 & (1u << 13)) && (c1 & (1u << 19)) &&
                  (c1 & (1u << 20)) && (c1 & (1u << 23)) && (ext_c & 1u);
  if (!v2) return 1;
  const bool ymm = (xcr0 & 6) == 6;
  const bool v3 = ymm && (c1 & (1u << 28)) && (c1 & (1u << 12)) && (c1 & (1u << 29)) && (c1 & (1u << 22)) &&
                  (b7 & (1u << 3)) && (b7 & (1u << 5)) && (b7 & (1u << 8)) && (ext_c & (1u << 5));
  if (!v3) return 2;
  const bool zmm = (xcr0 & 0xe6) == 0xe6;
  const bool v4 = zmm && (b7 & (1u << 16)) && (b7 & (1u << 17)) && (b7 & (1u << 28)) && (b7 & (1u << 30)) &&
                  (b7 & (1u << 31));
  return v4 ? 4 : 3;
#else
  return 0;
#endif
}
}  // namespace detail

// x86-64 micro-architecture level of this CPU (1 = baseline ... 4 = x86-64-v4), as
// glibc's sysdeps/x86/get-isa-level.h computes it; 0 when not on x86. Read
// once per process: cpuid traps to the hypervisor on a virtual machine, and
// a package check asks once per root.
inline int detect_x86_isa_level() noexcept {
  static const int level = detail::read_x86_isa_level();
  return level;
}

namespace detail {
// What a library search derives from its options before any lookup: the ISA
// level, the glibc-hwcaps names and every subdirectory tried in each folder
// (best first; "" is the folder itself). The same for every root of a run,
// so it is made once per distinct set of inputs (search_setup_for).
struct search_setup {
  int isa_level = 0;
  std::vector<std::string> hwcaps_names;
  std::vector<std::string> subdirs;
  std::uint32_t id = 0;  // distinct per distinct setup in this process
};

inline std::shared_ptr<search_setup> make_search_setup(const search_options& o, const loader_target& target,
                                                      int isa_level) {
  auto out = std::make_shared<search_setup>();
  out->isa_level = isa_level;
  if (target.machine == 62 && target.elf_class == 2) {
    for (int level = 4; level >= 2; --level)
      if (isa_level >= level) {
        out->hwcaps_names.push_back("x86-64-v" + std::to_string(level));
        out->subdirs.push_back("glibc-hwcaps/x86-64-v" + std::to_string(level) + "/");
      }
  }
  if (o.legacy_subdirs) {
    // _dl_important_hwcaps (glibc < 2.37): the components are the legacy hwcap names,
    // the platform, and "tls"; every subset is tried, largest combinations first.
    std::vector<std::string> parts;
    parts.push_back("tls");
    for (const auto& h : o.legacy_hwcaps) parts.push_back(h);
    if (!o.platform.empty()) parts.push_back(o.platform);
    const std::size_t n = parts.size();
    if (n < 16) {
      // Bit i of the mask selects parts[i]; ld.so orders subsets by descending mask
      // with "tls" as the most significant component.
      for (std::size_t mask = (std::size_t{1} << n) - 1; mask > 0; --mask) {
        std::string sub;
        for (std::size_t i = 0; i < n; ++i)
          if (mask & (std::size_t{1} << (n - 1 - i))) sub += parts[i] + "/";
        out->subdirs.push_back(sub);
      }
    }
  }
  out->subdirs.push_back("");
  return out;
}

// The setup for `o`, shared with every earlier search of the same inputs
// (target class and machine, ISA level, legacy subdirectories, hwcap names,
// platform). At most 64 distinct setups are kept; past that each search
// makes its own.
inline std::shared_ptr<const search_setup> search_setup_for(const search_options& o, const loader_target& target) {
  const int isa_level = o.isa_level >= 0 ? o.isa_level : detect_x86_isa_level();
  const bool hwcaps = target.machine == 62 && target.elf_class == 2;
  struct memo_entry {
    bool hwcaps, legacy;
    int isa_level;
    std::vector<std::string> legacy_hwcaps;
    std::string platform;
    std::shared_ptr<const search_setup> setup;
  };
  static std::mutex lock;
  static std::vector<memo_entry> memo;
  std::lock_guard<std::mutex> hold(lock);
  for (const memo_entry& e : memo)
    if (e.hwcaps == hwcaps && e.legacy == o.legacy_subdirs && e.isa_level == isa_level &&
        (!o.legacy_subdirs || (e.legacy_hwcaps == o.legacy_hwcaps && e.platform == o.platform)))
      return e.setup;
  auto made = make_search_setup(o, target, isa_level);
  // Not memoised (the memo is full): its listings are not shared either.
  made->id = memo.size() < 64 ? static_cast<std::uint32_t>(memo.size()) : ~std::uint32_t{0};
  if (memo.size() < 64) memo.push_back({hwcaps, o.legacy_subdirs, isa_level, o.legacy_hwcaps, o.platform, made});
  return made;
}
}  // namespace detail

// $ORIGIN of an object loaded as `name` (dl-object.c): the directory part of
// cwd/name (or of name when absolute), without resolving symlinks.
inline std::string origin_of(std::string_view name, std::string_view cwd) {
  std::string full;
  if (!name.empty() && name[0] == '/') {
    full.assign(name);
  } else {
    full.assign(cwd);
    if (full.empty() || full.back() != '/') full.push_back('/');
    full.append(name);
  }
  std::size_t slash = full.rfind('/');
  if (slash == 0) return "/";
  full.resize(slash);
  return full;
}

// A loaded object as the search sees it.
struct search_object {
  std::string name;      // l_name: how ld.so spells its path
  // $ORIGIN; with origin_pending, made from name and origin_cwd on first use
  // (library_search::origin), as most objects never need it.
  mutable std::string origin;
  std::string_view origin_cwd;
  mutable bool origin_pending = false;
  bool has_rpath = false;
  bool has_runpath = false;
  std::string_view rpath;    // DT_RPATH string (views into the object's bytes)
  std::string_view runpath;  // DT_RUNPATH string
  bool nodeflib = false;     // DF_1_NODEFLIB
  bool is_main = false;      // the main program ignores its DT_RPATH when it has DT_RUNPATH
  const search_object* loader = nullptr;  // the object that caused this one to load

  // Decomposed paths, filled on first use (cache_rpath), and the nearest proper
  // loader whose DT_RPATH is used: the RPATH walk skips the loaders without one, so
  // a deep chain of objects costs O(depth) once instead of O(depth) per search.
  mutable bool rpath_done = false, runpath_done = false, rpath_parent_done = false;
  mutable const search_object* rpath_parent = nullptr;
  mutable std::vector<std::string> rpath_dirs, runpath_dirs;
};

// One candidate that was rejected, with the reason.
struct rejected_candidate {
  std::string path;
  const char* reason = "";
};

struct found_library {
  std::string path;            // as ld.so spells it (l_name)
  std::string file;            // what was opened on this host (root + path)
  found_via via = found_via::not_found;
  std::string subdir;          // "glibc-hwcaps/x86-64-v3/", "tls/x86_64/" ... or empty
  std::string where;           // for rpath/runpath: the object whose tag supplied the dir
  std::vector<rejected_candidate> rejected;  // wrong class/machine, bad ELF, symlink loops
  bool found() const noexcept { return via != found_via::not_found; }
};

enum class candidate_status : std::uint8_t { ok, absent, other_class, other_machine, bad_file, loop };

// What the file system answered to the library search, shared by every root
// of a run (object_cache holds one; library_search::share_probes): whether a
// folder exists, and what a candidate file is (open_verify's verdict). ld.so
// asks the same folders and candidates for every program, so a run of many
// roots would otherwise stat and open them once per root. The file system is
// taken not to change during a run (as object_cache takes the files it maps).
// Thread-safe: sixteen shards, each behind its own lock.
class search_probes {
 public:
  // Defined below the class, under LINKSCOPE_DEFINITIONS.
  std::optional<candidate_status> file(const std::string& host) const;
  void set_file(const std::string& host, candidate_status status);
  std::optional<bool> directory(const std::string& host) const;
  void set_directory(const std::string& host, bool exists);
  // Which of a search setup's subdirectories exist in a folder (key: the
  // folder's host path, NUL, the setup's id; library_search::existing_subdirs).
  std::optional<std::vector<std::uint32_t>> listing(const std::string& key) const;
  void set_listing(const std::string& key, const std::vector<std::uint32_t>& found);

 private:
  struct shard {
    mutable std::mutex lock;
    std::unordered_map<std::string, std::uint8_t> files, dirs;
    std::unordered_map<std::string, std::vector<std::uint32_t>> listings;
  };
  const shard& at(const std::string& key) const;
  std::optional<candidate_status> find(const std::string& key, bool dir) const;
  void store(const std::string& key, bool dir, std::uint8_t value);
  std::array<shard, 16> shards_;
};

#if LINKSCOPE_DEFINITIONS
LINKSCOPE_FUNC std::optional<candidate_status> search_probes::file(const std::string& host) const {
  return find(host, false);
}
LINKSCOPE_FUNC void search_probes::set_file(const std::string& host, candidate_status status) {
  store(host, false, static_cast<std::uint8_t>(status));
}
LINKSCOPE_FUNC std::optional<bool> search_probes::directory(const std::string& host) const {
  auto v = find(host, true);
  if (!v) return std::nullopt;
  return *v != candidate_status::absent;
}
LINKSCOPE_FUNC void search_probes::set_directory(const std::string& host, bool exists) {
  store(host, true, static_cast<std::uint8_t>(exists ? candidate_status::ok : candidate_status::absent));
}
LINKSCOPE_FUNC std::optional<std::vector<std::uint32_t>> search_probes::listing(const std::string& key) const {
  const shard& s = at(key);
  std::lock_guard<std::mutex> hold(s.lock);
  auto it = s.listings.find(key);
  if (it == s.listings.end()) return std::nullopt;
  return it->second;
}
LINKSCOPE_FUNC void search_probes::set_listing(const std::string& key, const std::vector<std::uint32_t>& found) {
  shard& s = const_cast<shard&>(at(key));
  std::lock_guard<std::mutex> hold(s.lock);
  s.listings.emplace(key, found);
}
LINKSCOPE_FUNC const search_probes::shard& search_probes::at(const std::string& key) const {
  return shards_[std::hash<std::string>{}(key) % shards_.size()];
}
LINKSCOPE_FUNC std::optional<candidate_status> search_probes::find(const std::string& key, bool dir) const {
  const shard& s = at(key);
  std::lock_guard<std::mutex> hold(s.lock);
  const auto& map = dir ? s.dirs : s.files;
  auto it = map.find(key);
  if (it == map.end()) return std::nullopt;
  return static_cast<candidate_status>(it->second);
}
LINKSCOPE_FUNC void search_probes::store(const std::string& key, bool dir, std::uint8_t value) {
  shard& s = const_cast<shard&>(at(key));
  std::lock_guard<std::mutex> hold(s.lock);
  (dir ? s.dirs : s.files).emplace(key, value);
}
#endif  // LINKSCOPE_DEFINITIONS

namespace detail {
inline std::string getcwd_string() {
#if !defined(_WIN32)
  std::string buf(4096, '\0');
  if (::getcwd(buf.data(), buf.size()) != nullptr) {
    buf.resize(std::char_traits<char>::length(buf.c_str()));
    return buf;
  }
#endif
  return ".";
}

// is_dst(): length of the DST after '$' (including braces), 0 when not `ref`.
inline std::size_t dst_length(std::string_view input, std::string_view ref) noexcept {
  bool curly = false;
  if (!input.empty() && input[0] == '{') {
    curly = true;
    input.remove_prefix(1);
  }
  if (input.substr(0, ref.size()) != ref) return 0;
  const char next = input.size() > ref.size() ? input[ref.size()] : '\0';
  if (curly && next != '}') return 0;
  if ((next >= 'A' && next <= 'Z') || (next >= 'a' && next <= 'z') || (next >= '0' && next <= '9') || next == '_')
    return 0;
  return curly ? ref.size() + 2 : ref.size();
}
}  // namespace detail

// _dl_dst_substitute for one path element. Returns nullopt when a known DST has no
// value (the element is dropped, as ld.so drops it).
inline std::optional<std::string> substitute_dst(std::string_view input, std::string_view origin,
                                                 std::string_view lib, std::string_view platform) {
  std::string out;
  out.reserve(input.size() + origin.size());
  for (std::size_t i = 0; i < input.size();) {
    if (input[i] != '$') {
      out.push_back(input[i++]);
      continue;
    }
    std::string_view rest = input.substr(i + 1);
    std::size_t len = 0;
    std::string_view repl;
    bool known = true;
    if ((len = detail::dst_length(rest, "ORIGIN")) != 0)
      repl = origin;
    else if ((len = detail::dst_length(rest, "PLATFORM")) != 0)
      repl = platform;
    else if ((len = detail::dst_length(rest, "LIB")) != 0)
      repl = lib;
    else
      known = false;
    if (!known) {
      out.push_back('$');
      ++i;
      continue;
    }
    if (repl.empty()) return std::nullopt;
    out.append(repl);
    i += 1 + len;
  }
  return out;
}

// Split a path list (fillin_rpath): DSTs expanded, trailing slashes normalised to one,
// empty elements kept as "" (the current directory), duplicates dropped.
inline std::vector<std::string> decompose_path_list(std::string_view list, std::string_view separators,
                                                    std::string_view origin, std::string_view lib,
                                                    std::string_view platform) {
  std::vector<std::string> dirs;
  std::size_t start = 0;
  for (;;) {
    std::size_t end = list.find_first_of(separators, start);
    std::string_view element = list.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
    std::string dir;
    bool keep = true;
    if (!element.empty()) {
      auto expanded = substitute_dst(element, origin, lib, platform);
      if (!expanded || expanded->empty()) {
        keep = false;
      } else {
        dir = std::move(*expanded);
        while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
        if (dir.back() != '/') dir.push_back('/');
      }
    }
    if (keep) {
      bool seen = false;
      for (const auto& d : dirs) seen = seen || d == dir;
      if (!seen) dirs.push_back(std::move(dir));
    }
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  return dirs;
}

// The library search of one ld.so run. Not thread-safe (it caches directory lookups).
class library_search {
 public:
  explicit library_search(search_options options) : own_(std::move(options)), target_(own_->target) { init(); }
  // The same search for objects of `target` (options.target is not read).
  library_search(search_options options, const loader_target& target) : own_(std::move(options)), target_(target) {
    own_->target = target;
    init();
  }
  // The same, reading `options` where it is instead of copying it: it must
  // outlive the search (the ld.so emulator's, one per root, whose
  // dynamic_options outlive it).
  struct borrow_options {};
  library_search(const search_options& options, const loader_target& target, borrow_options)
      : borrowed_(&options), target_(target) {
    init();
  }

 private:
  void init() {
    if (options().cwd.empty()) {
      if (borrowed_ != nullptr) {
        own_ = *borrowed_;
        own_->target = target_;
        borrowed_ = nullptr;
      }
      own_->cwd = detail::getcwd_string();
    }
    setup_ = detail::search_setup_for(options(), target_);
    if (options().library_path) {
      library_path_ = *options().library_path;
      have_library_path_ = true;
    } else if (options().use_env) {
      if (const char* env = std::getenv("LD_LIBRARY_PATH")) {
        library_path_ = env;
        have_library_path_ = true;
      }
    }
  }

 public:
  // The options (their `target` is the searched objects' only when the search
  // copied them; target() always is).
  const search_options& options() const noexcept { return borrowed_ != nullptr ? *borrowed_ : *own_; }
  const loader_target& target() const noexcept { return target_; }
  int isa_level() const noexcept { return setup_->isa_level; }
  // Subdirectories tried in every directory, best first ("" = the directory itself).
  const std::vector<std::string>& subdirs() const noexcept { return setup_->subdirs; }
  const std::vector<std::string>& library_path_dirs(const search_object& main) {
    if (!library_path_done_) {
      library_path_done_ = true;
      if (have_library_path_)
        library_path_dirs_ = decompose_path_list(library_path_, ":;", origin(main), options().lib, options().platform);
    }
    return library_path_dirs_;
  }

  // The ld.so.cache, loaded on first use; warnings (missing or broken) are recorded.
  const ld_so_cache* cache() {
    if (!cache_loaded_) {
      cache_loaded_ = true;
      if (options().use_cache) {
        if (!cache_file_) cache_file_ = ld_so_cache_file::load(cache_path());
        lookup_.expected_flags = expected_cache_flags();
        lookup_.also_accept_elf = lookup_.expected_flags == cache_flags::elf_libc6;
        for (const auto& h : setup_->hwcaps_names) lookup_.hwcaps_subdirs.push_back(h);
        lookup_.isa_level_bits = setup_->isa_level > 0 ? (1u << setup_->isa_level) - 1 : 1u;
      }
    }
    return options().use_cache && cache_file_ ? cache_file_->cache.get() : nullptr;
  }
  std::optional<error> cache_error() const {
    return options().use_cache && cache_loaded_ && cache_file_ ? cache_file_->failure : std::nullopt;
  }
  // The ld.so.cache file this search reads (under options().root).
  std::string cache_path() const { return options().root + options().cache_file; }
  // Read the ld.so.cache from `file` (already loaded from cache_path()) instead
  // of loading it again: a run of many roots shares one.
  void share_cache(std::shared_ptr<const ld_so_cache_file> file) { cache_file_ = std::move(file); }

  // Answer the file system questions from `probes` (shared with other
  // searches of the run) and record new answers there.
  void share_probes(search_probes* probes) noexcept { probes_ = probes; }

  // Check a candidate as open_verify does (header only; nothing is mapped).
  candidate_status verify(const std::string& file) const {
    if (probes_ == nullptr) return verify_uncached(file);
    // The verdict depends on the target (class, data, machine): part of the
    // key, built in a buffer the search keeps (no allocation per candidate).
    std::string& key = key_buffer_;
    key.assign(file);
    const auto& t = target_;
    key.push_back('\0');
    key.push_back(static_cast<char>(t.elf_class));
    key.push_back(static_cast<char>(t.elf_data));
    key.push_back(static_cast<char>(t.machine & 0xff));
    key.push_back(static_cast<char>(t.machine >> 8));
    if (auto known = probes_->file(key)) return *known;
    const candidate_status status = verify_uncached(file);
    probes_->set_file(key, status);
    return status;
  }

 private:
  candidate_status verify_uncached(const std::string& file) const {
#if defined(_WIN32)
    auto mapped = mapped_file::open(file);
    if (!mapped) return mapped.error().code == errc::not_found ? candidate_status::absent : candidate_status::bad_file;
    return classify(mapped->data(), mapped->size());
#else
    int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0) return errno == ELOOP ? candidate_status::loop : candidate_status::absent;
    struct ::stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
      ::close(fd);
      return candidate_status::absent;
    }
    unsigned char header[64] = {};
    ssize_t got = ::read(fd, header, sizeof header);
    ::close(fd);
    return classify(header, got < 0 ? 0 : static_cast<std::size_t>(got));
#endif
  }

 public:
  // Find `name` for `loader` (nullptr for preloads of a program without one).
  found_library find(std::string_view name, const search_object* loader, const search_object& main) {
    found_library out;
    if (name.find('/') != std::string_view::npos) {
      std::string path(name);
      if (loader != nullptr) {
        auto expanded = substitute_dst(name, loader->origin, options().lib, options().platform);
        if (!expanded) return out;
        path = std::move(*expanded);
      }
      if (try_file(path, out)) out.via = found_via::path;
      return out;
    }
    const search_object* nodeflib_owner = loader != nullptr ? loader : &main;
    // 1. RPATH chain, unless the loader has RUNPATH.
    if (loader == nullptr || !loader->has_runpath) {
      bool did_main = false;
      const search_object* first = loader != nullptr && uses_rpath(*loader) ? loader : next_rpath(loader);
      for (const search_object* l = first; l != nullptr; l = next_rpath(l)) {
        const auto& dirs = rpath_dirs(*l);
        if (dirs.empty()) continue;
        if (search_dirs(dirs, name, out)) {
          out.via = found_via::rpath;
          out.where = l->name;
          return out;
        }
        did_main = did_main || l == &main;
      }
      if (!did_main) {
        const auto& dirs = rpath_dirs(main);
        if (!dirs.empty() && search_dirs(dirs, name, out)) {
          out.via = found_via::rpath;
          out.where = main.name;
          return out;
        }
      }
    }
    // 2. LD_LIBRARY_PATH.
    if (search_dirs(library_path_dirs(main), name, out)) {
      out.via = found_via::ld_library_path;
      return out;
    }
    // 3. The loader's RUNPATH.
    if (loader != nullptr) {
      const auto& dirs = runpath_dirs(*loader);
      if (!dirs.empty() && search_dirs(dirs, name, out)) {
        out.via = found_via::runpath;
        out.where = loader->name;
        return out;
      }
    }
    // 4. ld.so.cache.
    if (const ld_so_cache* c = cache()) {
      std::string_view cached = c->lookup(name, lookup_);
      if (!cached.empty() && nodeflib_owner->nodeflib) {
        for (const auto& dir : options().system_dirs)
          if (cached.substr(0, dir.size()) == dir) cached = {};
      }
      if (!cached.empty() && try_file(std::string(cached), out)) {
        out.via = found_via::cache;
        return out;
      }
    }
    // 5. Default directories.
    if (!nodeflib_owner->nodeflib && search_dirs(options().system_dirs, name, out)) {
      out.via = found_via::default_dirs;
      return out;
    }
    return out;
  }

 private:
  std::int32_t expected_cache_flags() const noexcept {
    const auto& t = target_;
    if (t.machine == 62) return t.elf_class == 2 ? 0x0303 : 0x0803;  // x86-64 / x32
    if (t.machine == 183) return 0x0a03;                             // AArch64
    if (t.machine == 3) return 0x0003;                               // i386: 3 (or 1)
    return 0x0003;
  }

  candidate_status classify(const unsigned char* h, std::size_t size) const noexcept {
    auto id = elf::identify(byte_view(h, size));
    if (!id) return candidate_status::bad_file;
    if (id->elf_class != target_.elf_class) return candidate_status::other_class;
    if (id->data != target_.elf_data || id->version != 1) return candidate_status::bad_file;
    if (id->osabi != 0 && id->osabi != 3) return candidate_status::bad_file;  // ELFOSABI_SYSV / GNU
    if (id->machine != target_.machine) return candidate_status::other_machine;
    if (!id->loadable()) return candidate_status::bad_file;
    return candidate_status::ok;
  }

  bool try_file(const std::string& path, found_library& out) {
    const bool rooted = !options().root.empty();
    if (rooted) file_buffer_.assign(options().root).append(path);
    switch (verify(rooted ? file_buffer_ : path)) {
      case candidate_status::ok:
        out.path = path;
        out.file = rooted ? file_buffer_ : path;
        return true;
      case candidate_status::absent: return false;
      case candidate_status::other_class: out.rejected.push_back({path, "wrong ELF class"}); return false;
      case candidate_status::other_machine: out.rejected.push_back({path, "wrong machine"}); return false;
      case candidate_status::bad_file: out.rejected.push_back({path, "not a loadable ELF file"}); return false;
      case candidate_status::loop: out.rejected.push_back({path, "too many levels of symbolic links"}); return false;
    }
    return false;
  }

  bool directory_exists(const std::string& dir) {
    auto it = dir_exists_.find(dir);
    if (it != dir_exists_.end()) return it->second;
    bool exists = true;
#if !defined(_WIN32)
    const std::string host = options().root + (dir.empty() ? std::string(".") : dir);
    // "." (an empty element) depends on the search's cwd: never shared.
    const bool shared = probes_ != nullptr && !dir.empty() && host[0] == '/';
    if (auto known = shared ? probes_->directory(host) : std::nullopt) {
      exists = *known;
    } else {
      struct ::stat st {};
      exists = ::stat(host.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
      if (shared) probes_->set_directory(host, exists);
    }
#endif
    dir_exists_.emplace(dir, exists);
    return exists;
  }

  // The subdirectories of `dir` that exist (indices into subdirs(), best
  // first): asked once per folder per search, not once per name, and once
  // per folder per run when the probes are shared.
  const std::vector<std::uint32_t>& existing_subdirs(const std::string& dir) {
    auto it = existing_.find(dir);
    if (it != existing_.end()) return it->second;
    const auto& subdirs = setup_->subdirs;
    // "." (an empty element) depends on the search's cwd: never shared.
    const bool shared = probes_ != nullptr && setup_->id != ~std::uint32_t{0} && !dir.empty() &&
                        (options().root.empty() ? dir[0] : options().root[0]) == '/';
    std::string key;
    if (shared) {
      key = options().root + dir;
      key.push_back('\0');
      key.append(std::to_string(setup_->id));
      if (auto known = probes_->listing(key)) return existing_.emplace(dir, std::move(*known)).first->second;
    }
    std::vector<std::uint32_t> found;
    for (std::size_t k = 0; k < subdirs.size(); ++k)
      if (directory_exists(dir + subdirs[k])) found.push_back(static_cast<std::uint32_t>(k));
    if (shared) probes_->set_listing(key, found);
    return existing_.emplace(dir, std::move(found)).first->second;
  }

  bool search_dirs(const std::vector<std::string>& dirs, std::string_view name, found_library& out) {
    std::string& path = path_buffer_;
    for (const auto& dir : dirs) {
      for (const std::uint32_t k : existing_subdirs(dir)) {
        const std::string& sub = setup_->subdirs[k];
        path.assign(dir).append(sub).append(name);
        if (try_file(path, out)) {
          out.subdir = sub;
          return true;
        }
        // open_path gives up on the whole list when open() fails with anything but
        // ENOENT/EACCES (a symlink loop: ELOOP); the next source is tried.
        if (!out.rejected.empty() && out.rejected.back().path == path &&
            out.rejected.back().reason == std::string_view("too many levels of symbolic links"))
          return false;
      }
    }
    return false;
  }

  static const std::string& origin(const search_object& o) {
    if (o.origin_pending) {
      o.origin = origin_of(o.name, o.origin_cwd);
      o.origin_pending = false;
    }
    return o.origin;
  }
  static bool uses_rpath(const search_object& o) noexcept { return o.has_rpath && !(o.is_main && o.has_runpath); }
  // Nearest proper loader of `o` whose RPATH counts (memoised; parents are searched
  // before their children, so the recursion is shallow).
  static const search_object* next_rpath(const search_object* o) noexcept {
    if (o == nullptr) return nullptr;
    if (!o->rpath_parent_done) {
      o->rpath_parent_done = true;
      const search_object* l = o->loader;
      o->rpath_parent = l == nullptr ? nullptr : (uses_rpath(*l) ? l : next_rpath(l));
    }
    return o->rpath_parent;
  }

  const std::vector<std::string>& rpath_dirs(const search_object& o) const {
    if (!o.rpath_done) {
      o.rpath_done = true;
      if (uses_rpath(o))
        o.rpath_dirs = decompose_path_list(o.rpath, ":", origin(o), options().lib, options().platform);
    }
    return o.rpath_dirs;
  }
  const std::vector<std::string>& runpath_dirs(const search_object& o) const {
    if (!o.runpath_done) {
      o.runpath_done = true;
      if (o.has_runpath)
        o.runpath_dirs = decompose_path_list(o.runpath, ":", origin(o), options().lib, options().platform);
    }
    return o.runpath_dirs;
  }

  std::optional<search_options> own_;         // the options, unless borrowed
  const search_options* borrowed_ = nullptr;  // or where they are
  loader_target target_;
  std::shared_ptr<const detail::search_setup> setup_;
  std::string library_path_;
  bool have_library_path_ = false;
  bool library_path_done_ = false;
  std::vector<std::string> library_path_dirs_;
  bool cache_loaded_ = false;
  std::shared_ptr<const ld_so_cache_file> cache_file_;
  cache_lookup_options lookup_;
  std::unordered_map<std::string, bool> dir_exists_;
  std::unordered_map<std::string, std::vector<std::uint32_t>> existing_;
  search_probes* probes_ = nullptr;
  // Scratch strings reused by every candidate (their capacity stays).
  mutable std::string key_buffer_;
  std::string file_buffer_, path_buffer_;
};

}  // namespace resolve
}  // namespace v0
}  // namespace linkscope
