// linkscope/resolve/prefix_check.hpp — overlinking, overdepending and package
// ownership for every ELF file under a prefix (a conda environment, an unpacked
// package, /usr), as conda-build's post-link check and auditwheel ask it.
//
// For each dynamically linked ELF file F under the prefix, F is treated as ld.so
// treats the object it is asked to trace (ldd F): F first, then a breadth-first
// walk of DT_NEEDED resolved with the ld.so search order of search_path.hpp
// (RPATH chain, LD_LIBRARY_PATH only when given, RUNPATH, ld.so.cache, default
// directories), then the PT_INTERP object. Every dynamic relocation of F that
// names a symbol is bound as under LD_BIND_NOW: the scope is searched in load
// order through each object's own DT_GNU_HASH/DT_HASH table with ld.so's
// check_match (elf/hash_table.hpp), versions included. From the bindings:
//   - a NEEDED entry that resolves nowhere is "missing" (ldd: "not found");
//   - a direct NEEDED that F never binds to is "unused" (ldd -u -r:
//     "Unused direct dependencies", rtld.c's l_used walk);
//   - a symbol bound to an object that is not a direct NEEDED of F is
//     "overlinked": F relies on a transitive dependency (conda-build's
//     overlinking; it breaks as soon as the intermediate library drops it);
//   - a direct NEEDED resolved outside the prefix is "system";
//   - an RPATH/RUNPATH entry that, after $ORIGIN/$LIB/$PLATFORM substitution,
//     points outside the prefix is reported.
// Objects are parsed once and shared between the per-file analyses (a prefix of
// 300 files that all need libc reads libc once); views stay valid as long as the
// checker lives.
//
// Package ownership: conda-meta/*.json in the prefix ({"name": ..., "files":
// [relative paths]}) and dpkg's /var/lib/dpkg/info/*.list (absolute paths, one a
// line; "PKG.list" or "PKG:ARCH.list"). Each needed DSO is attributed to its
// owner. dpkg registers files under the path in the .deb: since the /usr-merge,
// /lib/x86_64-linux-gnu/libc.so.6 is listed but /usr/lib/... is not, so the
// lookup tries the path, its /lib <-> /usr/lib alias, and the canonical path.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <system_error>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "linkscope/core/bytes.hpp"
#include "linkscope/core/error.hpp"
#include "linkscope/core/mapped_file.hpp"
#include "linkscope/elf/dynamic.hpp"
#include "linkscope/elf/file.hpp"
#include "linkscope/elf/hash_table.hpp"
#include "linkscope/elf/relocations.hpp"
#include "linkscope/elf/symbols.hpp"
#include "linkscope/elf/types.hpp"
#include "linkscope/elf/versions.hpp"
#include "linkscope/resolve/dynamic.hpp"
#include "linkscope/resolve/search_path.hpp"

namespace linkscope {
inline namespace v0 {
namespace resolve {

// The system libraries every program may take from the host (glibc's parts,
// the C++ runtime, the vDSO). Patterns are shell globs on the file name.
inline std::vector<std::string> default_allow_list() {
  return {"libc.so*",      "libm.so*",     "libpthread.so*", "libdl.so*",   "librt.so*",
          "ld-linux*.so*", "ld64.so*",     "libstdc++.so*",  "libgcc_s.so*", "libutil.so*",
          "libresolv.so*", "libmvec.so*",  "libanl.so*",     "libnsl.so*",  "libBrokenLocale.so*",
          "libcrypt.so*",  "linux-vdso.so*"};
}

struct prefix_options {
  search_options search = [] {
    search_options s;
    s.use_env = false;  // a package check must not depend on the caller's LD_LIBRARY_PATH
    return s;
  }();
  std::vector<std::string> allow = default_allow_list();
  std::vector<std::string> declared;  // declared run dependencies (package names)
  bool check_declared = false;        // compare used packages with `declared`
  bool use_conda = true;              // read PREFIX/conda-meta/*.json
  bool use_dpkg = true;               // read dpkg_info_dir/*.list
  std::string dpkg_info_dir = "/var/lib/dpkg/info";
  bool undefined_is_finding = false;  // count unresolved non-weak symbols as findings
  std::vector<std::string> files;     // analyse only these (else walk the prefix)
  std::string package;                // analyse the files conda-meta gives this package
};

struct package_owner {
  std::string package;      // "libc6:amd64", "libfoo"; empty when nobody owns it
  std::string source;       // "conda", "dpkg"; "prefix": in the prefix, which has no conda-meta;
                            // "unknown": no database covers it; "": a database covers it, nobody owns it
  std::string listed_path;  // the path under which the database lists it
};

struct needed_entry {
  std::string name;       // the DT_NEEDED string
  std::string path;       // as ld.so spells it; empty when not found
  std::string file;       // the file read on this host
  found_via via = found_via::not_found;
  bool in_prefix = false;
  bool allowed = false;   // matches the allow-list
  bool used = false;      // F binds at least one symbol to it
  std::size_t symbols = 0;  // distinct references of F bound to it
  package_owner owner;
};

struct missing_entry {
  std::string name;       // the NEEDED string that resolved nowhere
  std::string needed_by;  // the object whose DT_NEEDED it is
  bool direct = false;    // a NEEDED of the file itself
};

struct overlink_entry {
  std::string path;       // the transitive dependency bound to
  std::string soname;
  std::string via;        // the object that loaded it
  bool allowed = false;
  std::vector<std::string> symbols;  // name or name@VERSION
};

struct rpath_entry {
  std::string tag;       // "RPATH" or "RUNPATH"
  std::string entry;     // as written
  std::string expanded;  // after $ORIGIN/$LIB/$PLATFORM; empty when not expandable
  bool outside = false;
};

struct file_report {
  std::string path;      // as walked (PREFIX/...)
  std::string relative;  // relative to the prefix
  std::vector<needed_entry> needed;
  std::vector<missing_entry> missing;
  std::vector<overlink_entry> overlinked;
  std::vector<rpath_entry> rpaths;
  std::vector<std::string> undefined;  // unresolved non-weak references (ldd -r)
  std::vector<std::string> warnings;
  std::size_t relocations = 0;
  std::size_t findings = 0;
};

struct package_usage {
  std::string name;
  std::string source;               // conda / dpkg / prefix
  std::vector<std::string> dsos;    // needed DSOs it owns (as displayed)
  bool declared = false;
  bool self = false;                // owns one of the analysed files
  bool allowed_only = false;        // every DSO used from it is allow-listed
};

struct prefix_report {
  std::string prefix;
  std::vector<file_report> files;
  std::vector<package_usage> packages;        // every package a needed DSO came from
  std::vector<std::string> undeclared;        // used, not declared (underlinking)
  std::vector<std::string> unused_declared;   // declared, never used (overdepending)
  std::vector<std::string> unowned;           // needed DSOs no package owns
  bool have_conda = false, have_dpkg = false;
  std::size_t skipped_non_elf = 0, skipped_symlinks = 0, skipped_static = 0;
  std::vector<std::string> warnings;
  std::size_t objects_parsed = 0;             // distinct files parsed (the cache)
  std::size_t lookups = 0;
  std::size_t findings = 0;
};

// Shell glob with '*' and '?' (no classes), as the allow-list uses it.
inline bool glob_match(std::string_view pattern, std::string_view text) noexcept {
  std::size_t p = 0, t = 0, star = std::string_view::npos, mark = 0;
  while (t < text.size()) {
    if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == text[t])) {
      ++p;
      ++t;
    } else if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      mark = t;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      t = ++mark;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

// Package name without dpkg's ":arch" qualifier.
inline std::string_view package_base_name(std::string_view name) noexcept {
  const std::size_t colon = name.find(':');
  return colon == std::string_view::npos ? name : name.substr(0, colon);
}

namespace detail {

inline std::string_view base_name(std::string_view path) noexcept {
  const std::size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

inline std::string canonical_or_normal(const std::string& path) {
  std::error_code ec;
  auto c = std::filesystem::weakly_canonical(path, ec);
  if (ec) return std::filesystem::path(path).lexically_normal().string();
  return c.string();
}

inline bool path_within(std::string_view path, std::string_view dir) noexcept {
  if (dir.empty()) return false;
  if (dir == "/") return !path.empty() && path[0] == '/';
  if (path.size() < dir.size() || path.substr(0, dir.size()) != dir) return false;
  return path.size() == dir.size() || path[dir.size()] == '/';
}

// The /usr-merge aliases of an absolute path (/lib/x <-> /usr/lib/x, bin, sbin, lib64 ...).
inline std::vector<std::string> usr_merge_aliases(const std::string& path) {
  static constexpr std::string_view tops[] = {"/lib/", "/lib32/", "/lib64/", "/libx32/", "/bin/", "/sbin/"};
  std::vector<std::string> out;
  for (std::string_view top : tops) {
    if (path.compare(0, top.size(), top) == 0) out.push_back("/usr" + path);
    if (path.compare(0, 4 + top.size(), std::string("/usr").append(top)) == 0) out.push_back(path.substr(4));
  }
  return out;
}

// Just enough JSON for conda-meta records: the top-level "name" string and
// "files" array of strings; every other value is skipped. Bounded depth.
class conda_meta_reader {
 public:
  explicit conda_meta_reader(std::string_view text) : s_(text) {}

  result<void> read(std::string& name, std::vector<std::string>& files) {
    ws();
    if (!eat('{')) return fail("conda-meta record is not a JSON object");
    ws();
    if (eat('}')) return ok();
    for (;;) {
      ws();
      std::string key;
      LINKSCOPE_CHECK(string(key));
      ws();
      if (!eat(':')) return fail("expected ':' in conda-meta record");
      ws();
      if (key == "name" && peek() == '"') {
        LINKSCOPE_CHECK(string(name));
      } else if (key == "files" && peek() == '[') {
        ++i_;
        ws();
        if (!eat(']')) {
          for (;;) {
            ws();
            std::string f;
            LINKSCOPE_CHECK(string(f));
            files.push_back(std::move(f));
            ws();
            if (eat(']')) break;
            if (!eat(',')) return fail("expected ',' or ']' in conda-meta files");
          }
        }
      } else {
        LINKSCOPE_CHECK(skip(0));
      }
      ws();
      if (eat('}')) return ok();
      if (!eat(',')) return fail("expected ',' or '}' in conda-meta record");
    }
  }

 private:
  result<void> fail(const char* message) const { return error{errc::malformed, i_, message}; }
  char peek() const noexcept { return i_ < s_.size() ? s_[i_] : '\0'; }
  bool eat(char c) noexcept {
    if (peek() != c || i_ >= s_.size()) return false;
    ++i_;
    return true;
  }
  void ws() noexcept {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\n' || s_[i_] == '\r' || s_[i_] == '\t')) ++i_;
  }
  static int hex(char c) noexcept {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  }
  void utf8(std::string& out, std::uint32_t cp) {
    if (cp < 0x80) {
      out.push_back(static_cast<char>(cp));
    } else if (cp < 0x800) {
      out.push_back(static_cast<char>(0xc0 | (cp >> 6)));
      out.push_back(static_cast<char>(0x80 | (cp & 0x3f)));
    } else if (cp < 0x10000) {
      out.push_back(static_cast<char>(0xe0 | (cp >> 12)));
      out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3f)));
      out.push_back(static_cast<char>(0x80 | (cp & 0x3f)));
    } else {
      out.push_back(static_cast<char>(0xf0 | (cp >> 18)));
      out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3f)));
      out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3f)));
      out.push_back(static_cast<char>(0x80 | (cp & 0x3f)));
    }
  }
  result<std::uint32_t> hex4() {
    if (s_.size() - i_ < 4) return error{errc::truncated, i_, "\\u escape runs past the end"};
    std::uint32_t v = 0;
    for (int k = 0; k < 4; ++k) {
      const int d = hex(s_[i_ + k]);
      if (d < 0) return error{errc::malformed, i_, "bad \\u escape"};
      v = v * 16 + static_cast<std::uint32_t>(d);
    }
    i_ += 4;
    return v;
  }
  result<void> string(std::string& out) {
    if (!eat('"')) return fail("expected a JSON string");
    for (;;) {
      if (i_ >= s_.size()) return error{errc::truncated, i_, "unterminated JSON string"};
      const char c = s_[i_++];
      if (c == '"') return ok();
      if (c != '\\') {
        out.push_back(c);
        continue;
      }
      if (i_ >= s_.size()) return error{errc::truncated, i_, "unterminated JSON escape"};
      const char e = s_[i_++];
      switch (e) {
        case '"': out.push_back('"'); break;
        case '\\': out.push_back('\\'); break;
        case '/': out.push_back('/'); break;
        case 'b': out.push_back('\b'); break;
        case 'f': out.push_back('\f'); break;
        case 'n': out.push_back('\n'); break;
        case 'r': out.push_back('\r'); break;
        case 't': out.push_back('\t'); break;
        case 'u': {
          LINKSCOPE_TRY(cp, hex4());
          if (cp >= 0xd800 && cp < 0xdc00 && s_.size() - i_ >= 6 && s_[i_] == '\\' && s_[i_ + 1] == 'u') {
            i_ += 2;
            LINKSCOPE_TRY(low, hex4());
            if (low >= 0xdc00 && low < 0xe000) cp = 0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00);
          }
          utf8(out, cp);
          break;
        }
        default: return error{errc::malformed, i_ - 1, "bad JSON escape"};
      }
    }
  }
  result<void> skip(int depth) {
    if (depth > 256) return fail("conda-meta JSON nested too deeply");
    ws();
    const char c = peek();
    if (c == '"') {
      std::string ignored;
      return string(ignored);
    }
    if (c == '{' || c == '[') {
      const char close = c == '{' ? '}' : ']';
      ++i_;
      ws();
      if (eat(close)) return ok();
      for (;;) {
        ws();
        if (c == '{') {
          std::string ignored;
          LINKSCOPE_CHECK(string(ignored));
          ws();
          if (!eat(':')) return fail("expected ':' in JSON object");
        }
        LINKSCOPE_CHECK(skip(depth + 1));
        ws();
        if (eat(close)) return ok();
        if (!eat(',')) return fail("expected ',' in JSON container");
      }
    }
    // number, true, false, null
    const std::size_t start = i_;
    while (i_ < s_.size() && s_[i_] != ',' && s_[i_] != '}' && s_[i_] != ']' && s_[i_] != ' ' && s_[i_] != '\n' &&
           s_[i_] != '\r' && s_[i_] != '\t')
      ++i_;
    if (i_ == start) return fail("expected a JSON value");
    return ok();
  }

  std::string_view s_;
  std::size_t i_ = 0;
};

// One parsed object, shared between analyses. Heap-allocated: the dynamic
// info, the hash table and the version tables point into it.
template <class ET>
struct cached_object {
  std::unique_ptr<mapped_file> mapped;
  elf::file<ET> elf;
  elf::dynamic_info<ET> dyn;
  elf::symbol_table_view<ET> dynsym;
  elf::version_tables<ET> versions;
  elf::hash_table<ET> table;
  std::string file;
  std::string_view soname, rpath, runpath;
  bool has_rpath = false, has_runpath = false, symbolic = false, nodeflib = false;
  bool ok = false, has_table = false;
  std::vector<std::string_view> needed;
  std::vector<std::string> warnings;
  std::uint64_t device = 0, inode = 0;
  std::string interpreter;
};

template <class ET>
std::unique_ptr<cached_object<ET>> parse_object(const std::string& file) {
  auto obj = std::make_unique<cached_object<ET>>();
  obj->file = file;
  auto note = [&](const error& e) {
    std::string w = e.message;
    if (e.has_offset()) {
      char buf[40];
      std::snprintf(buf, sizeof buf, " (offset 0x%llx)", static_cast<unsigned long long>(e.offset));
      w += buf;
    }
    obj->warnings.push_back(std::move(w));
  };
  auto mapped = mapped_file::open(file);
  if (!mapped) {
    note(mapped.error());
    return obj;
  }
  obj->mapped = std::make_unique<mapped_file>(std::move(*mapped));
  obj->device = obj->mapped->device();
  obj->inode = obj->mapped->inode();
  auto f = elf::file<ET>::open(obj->mapped->bytes());
  if (!f) {
    note(f.error());
    return obj;
  }
  obj->elf = *f;
  for (const auto& ph : obj->elf.program_headers()) {
    if (ph.p_type != elf::PT_INTERP) continue;
    auto s = obj->elf.bytes().cstring(ph.p_offset);
    if (s) obj->interpreter = std::string(*s);
  }
  auto dyn = elf::dynamic_info<ET>::read(obj->elf);
  if (!dyn) {
    note(dyn.error());
    return obj;
  }
  obj->dyn = *dyn;
  obj->ok = true;
  const auto& d = obj->dyn;
  if (auto s = d.soname()) obj->soname = *s; else note(s.error());
  obj->has_rpath = d.has_rpath();
  obj->has_runpath = d.has_runpath();
  if (auto s = d.rpath()) obj->rpath = *s; else note(s.error());
  if (auto s = d.runpath()) obj->runpath = *s; else note(s.error());
  obj->symbolic = d.symbolic();
  obj->nodeflib = (d.flags_1() & elf::DF_1_NODEFLIB) != 0;
  if (auto n = d.for_each_needed([&](std::string_view name) { obj->needed.push_back(name); }); !n) note(n.error());
  // The section's count when there are section headers (a GNU hash table with no
  // defined symbols does not tell how many undefined ones precede it), else the
  // count the hash tables imply, as ld.so sees it.
  auto syms = elf::read_dynsym(obj->elf, d);
  if (syms && syms->empty() && obj->elf.section_count() > 0) syms = elf::read_dynsym_from_dynamic(d);
  if (!syms) {
    note(syms.error());
    return obj;
  }
  obj->dynsym = *syms;
  auto versions = elf::version_tables<ET>::read(obj->elf, d, obj->dynsym.size());
  if (!versions) note(versions.error()); else obj->versions = std::move(*versions);
  if (!obj->dynsym.empty()) {
    auto table = elf::hash_table<ET>::open(d, obj->dynsym, obj->versions);
    bool defines = false;  // linkers write degenerate tables when nothing is defined
    for (std::size_t i = 1; i < obj->dynsym.size() && !defines; ++i) defines = obj->dynsym[i].st_shndx != 0;
    if (!table) {
      if (defines) note(table.error());
    } else {
      obj->table = *table;
      obj->has_table = !obj->table.empty();
    }
  }
  return obj;
}

// Results of one file's analysis, before ownership is known.
struct file_analysis {
  file_report report;
  bool analysed = false;
};

// The per-ELF-class checker: a cache of parsed objects and one library search
// per machine.
template <class ET>
class prefix_linker {
 public:
  prefix_linker(const prefix_options& options, std::string prefix_canonical)
      : options_(options), prefix_(std::move(prefix_canonical)) {}

  std::size_t objects_parsed() const noexcept { return nodes_.size(); }
  std::size_t lookups() const noexcept { return lookups_; }

  file_report analyse(const std::string& path) {
    file_report out;
    out.path = path;
    scope_.clear();
    by_name_.clear();
    by_node_.clear();
    search_objects_.clear();
    const std::uint32_t main_node = node_for(options_.search.root.empty() || path[0] != '/' ? path
                                                                                            : options_.search.root + path);
    cached_object<ET>& main = *nodes_[main_node];
    for (const auto& w : main.warnings) out.warnings.push_back(w);
    if (!main.ok) return out;
    library_search& search = search_for(main.elf.machine());
    const std::string cwd = search.options().cwd;
    add_entry(main_node, path, path, found_via::main_program, no_object, cwd);
    // Breadth-first over DT_NEEDED, as _dl_map_object_deps.
    std::vector<std::uint32_t> direct;  // per NEEDED of main: scope entry or no_object
    for (std::size_t i = 0; i < scope_.size(); ++i) {
      if (scope_[i].node == no_object) continue;
      const std::uint32_t node = scope_[i].node;
      const std::size_t count = nodes_[node]->needed.size();
      for (std::size_t k = 0; k < count; ++k) {
        const std::string name(nodes_[node]->needed[k]);
        const std::uint32_t e = map(search, name, static_cast<std::uint32_t>(i), cwd);
        if (i == 0) direct.push_back(e);
        if (scope_[e].node == no_object && !scope_[e].reported) {
          scope_[e].reported = true;
          out.missing.push_back({name, scope_[i].path, i == 0});
        }
      }
    }
    // The dynamic linker is always loaded; it joins the scope last when no one needed it.
    std::string interp = main.interpreter;
    if (interp.empty() && main.elf.machine() == 62 && ET::is64) interp = "/lib64/ld-linux-x86-64.so.2";
    if (!interp.empty() && by_name_.find(interp) == by_name_.end()) {
      const std::uint32_t node = node_for(options_.search.root + interp);
      if (nodes_[node]->ok && by_node_.find(node) == by_node_.end())
        add_entry(node, interp, interp, found_via::interpreter, 0, cwd);
    }
    // Bind every relocation of main.
    std::vector<std::vector<std::string>> bound(scope_.size());
    bind_main(main, out, bound);
    // NEEDED entries.
    for (std::size_t k = 0; k < main.needed.size(); ++k) {
      needed_entry n;
      n.name = std::string(main.needed[k]);
      const std::uint32_t e = k < direct.size() ? direct[k] : no_object;
      if (e != no_object && scope_[e].node != no_object) {
        const auto& entry = scope_[e];
        n.path = entry.path;
        n.file = entry.file;
        n.via = entry.via;
        n.in_prefix = path_within(canonical(entry.node), prefix_);
        n.symbols = bound[e].size();
        n.used = n.symbols != 0;
        n.allowed = allowed(n.name) || allowed(base_name(n.path)) || allowed(nodes_[entry.node]->soname);
      } else {
        n.allowed = allowed(n.name);
      }
      out.needed.push_back(std::move(n));
    }
    // Overlinking: bindings to objects that are not direct dependencies.
    std::vector<char> is_direct(scope_.size(), 0);
    is_direct[0] = 1;
    for (std::uint32_t e : direct)
      if (e != no_object) is_direct[e] = 1;
    for (std::size_t e = 0; e < scope_.size(); ++e) {
      if (is_direct[e] || bound[e].empty() || scope_[e].node == no_object) continue;
      overlink_entry o;
      o.path = scope_[e].path;
      o.soname = std::string(nodes_[scope_[e].node]->soname);
      o.via = scope_[e].loader != no_object ? scope_[scope_[e].loader].path : std::string();
      o.allowed = allowed(base_name(o.path)) || allowed(o.soname);
      o.symbols = std::move(bound[e]);
      std::sort(o.symbols.begin(), o.symbols.end());
      out.overlinked.push_back(std::move(o));
    }
    // RPATH / RUNPATH entries.
    const std::string origin = origin_of(path, cwd);
    auto check_paths = [&](std::string_view list, const char* tag) {
      std::size_t start = 0;
      for (;;) {
        const std::size_t colon = list.find(':', start);
        const std::string_view item = list.substr(start, colon == std::string_view::npos ? std::string_view::npos
                                                                                         : colon - start);
        rpath_entry r;
        r.tag = tag;
        r.entry = std::string(item);
        if (item.empty()) {
          r.outside = true;  // ld.so reads an empty entry as the current directory
        } else if (auto expanded = substitute_dst(item, origin, search.options().lib, search.options().platform)) {
          r.expanded = std::filesystem::path(*expanded).lexically_normal().string();
          if (r.expanded.size() > 1 && r.expanded.back() == '/') r.expanded.pop_back();
          r.outside = !path_within(canonical_or_normal(options_.search.root + r.expanded), prefix_);
        } else {
          r.outside = true;
        }
        out.rpaths.push_back(std::move(r));
        if (colon == std::string_view::npos) break;
        start = colon + 1;
      }
    };
    if (main.has_rpath) check_paths(main.rpath, "RPATH");
    if (main.has_runpath) check_paths(main.runpath, "RUNPATH");
    return out;
  }

 private:
  struct scope_entry {
    std::uint32_t node = no_object;  // no_object: a NEEDED that was not found
    std::string path;                // as ld.so spells it
    std::string file;                // as read on this host
    found_via via = found_via::not_found;
    std::uint32_t loader = no_object;
    bool reported = false;
  };

  library_search& search_for(std::uint16_t machine) {
    auto it = searches_.find(machine);
    if (it != searches_.end()) return *it->second;
    search_options s = options_.search;
    s.target.elf_class = ET::is64 ? 2 : 1;
    s.target.elf_data = ET::endianness == std::endian::little ? 1 : 2;
    s.target.machine = machine;
    auto inserted = searches_.emplace(machine, std::make_unique<library_search>(s));
    return *inserted.first->second;
  }

  const std::string& canonical(std::uint32_t node) {
    auto it = canonical_.find(node);
    if (it != canonical_.end()) return it->second;
    return canonical_.emplace(node, canonical_or_normal(nodes_[node]->file)).first->second;
  }

  bool allowed(std::string_view name) const {
    if (name.empty()) return false;
    for (const auto& p : options_.allow)
      if (glob_match(p, name)) return true;
    return false;
  }

  // The cached object for a host file: by path, then by device/inode.
  std::uint32_t node_for(const std::string& file) {
    auto it = by_file_.find(file);
    if (it != by_file_.end()) return it->second;
    auto obj = parse_object<ET>(file);
    if (obj->mapped) {
      auto same = by_inode_.find({obj->device, obj->inode});
      if (same != by_inode_.end()) {
        by_file_.emplace(file, same->second);
        return same->second;
      }
    }
    const std::uint32_t id = static_cast<std::uint32_t>(nodes_.size());
    if (obj->mapped) by_inode_.emplace(std::make_pair(obj->device, obj->inode), id);
    nodes_.push_back(std::move(obj));
    by_file_.emplace(file, id);
    return id;
  }

  std::uint32_t add_entry(std::uint32_t node, const std::string& path, const std::string& name, found_via via,
                          std::uint32_t loader, const std::string& cwd) {
    const std::uint32_t e = static_cast<std::uint32_t>(scope_.size());
    scope_.push_back({node, path, options_.search.root + path, via, loader, false});
    auto so = std::make_unique<search_object>();
    const cached_object<ET>& obj = *nodes_[node];
    so->name = path;
    so->origin = origin_of(path, cwd);
    so->has_rpath = obj.has_rpath;
    so->has_runpath = obj.has_runpath;
    so->rpath = obj.rpath;
    so->runpath = obj.runpath;
    so->nodeflib = obj.nodeflib;
    so->is_main = e == 0;
    so->loader = loader != no_object ? search_objects_[loader].get() : nullptr;
    search_objects_.push_back(std::move(so));
    by_name_.emplace(path, e);
    by_name_.emplace(name, e);
    if (!obj.soname.empty()) by_name_.emplace(std::string(obj.soname), e);
    by_node_.emplace(node, e);
    return e;
  }

  // _dl_map_object: an already loaded name, else the search.
  std::uint32_t map(library_search& search, const std::string& name, std::uint32_t loader, const std::string& cwd) {
    auto it = by_name_.find(name);
    if (it != by_name_.end()) return it->second;
    found_library found = search.find(name, search_objects_[loader].get(), *search_objects_[0]);
    if (!found.found()) {
      const std::uint32_t e = static_cast<std::uint32_t>(scope_.size());
      scope_.push_back({no_object, name, std::string(), found_via::not_found, loader, false});
      search_objects_.push_back(std::make_unique<search_object>());
      by_name_.emplace(name, e);
      return e;
    }
    const std::uint32_t node = node_for(found.file);
    auto same = by_node_.find(node);
    if (same != by_node_.end()) {
      by_name_.emplace(name, same->second);
      return same->second;
    }
    return add_entry(node, found.path, name, found.via, loader, cwd);
  }

  // The first object in scope order that defines `name` for this request.
  std::uint32_t lookup(std::string_view name, const elf::version_request* want, int type_class, bool symbolic) {
    ++lookups_;
    elf::lookup_options opts;
    opts.version = want;
    opts.type_class = type_class;
    auto try_entry = [&](std::size_t e) -> bool {
      const scope_entry& entry = scope_[e];
      if (entry.node == no_object) return false;
      const cached_object<ET>& obj = *nodes_[entry.node];
      if (!obj.has_table) return false;
      if ((type_class & elf::rtype_class_copy) && e == 0) return false;
      auto r = obj.table.lookup(name, opts);
      return r && r->found;
    };
    if (symbolic && try_entry(0)) return 0;
    for (std::size_t e = 0; e < scope_.size(); ++e)
      if (try_entry(e)) return static_cast<std::uint32_t>(e);
    return no_object;
  }

  void bind_main(const cached_object<ET>& main, file_report& out, std::vector<std::vector<std::string>>& bound) {
    using Sym = typename ET::Sym;
    const std::uint16_t machine = main.elf.machine();
    std::vector<std::uint8_t> done(main.dynsym.size(), 0);
    std::set<std::string> undefined;
    auto r = elf::for_each_dynamic_relocation(
        main.dyn,
        [&](const elf::dynamic_relocation& rel) {
          if (rel.symbol == 0 || rel.symbol >= main.dynsym.size()) return;
          const int type_class = resolve::detail::reloc_type_class(machine, rel.type);
          if (type_class < 0) return;
          ++out.relocations;
          const std::uint8_t bit = static_cast<std::uint8_t>(1u << type_class);
          if (done[rel.symbol] & bit) return;
          const bool first_time = done[rel.symbol] == 0;
          done[rel.symbol] |= bit;
          const Sym ref = main.dynsym[rel.symbol];
          const unsigned bind = ref.st_info >> 4;
          const unsigned vis = ref.st_other & 3;
          if (bind == elf::STB_LOCAL || vis == elf::STV_HIDDEN || vis == elf::STV_INTERNAL) return;
          auto name = main.dynsym.name(rel.symbol);
          if (!name || name->empty()) return;
          elf::version_request request;
          const elf::version_request* want = nullptr;
          if (main.versions.present()) {
            const u16 raw = main.versions.raw(rel.symbol);
            const elf::version_entry v = main.versions.entry(static_cast<u16>(raw & 0x7fff));
            if (v.hash != 0 && (v.defined || v.needed) && (raw & 0x7fff) > 1) {
              request.name = v.name;
              request.hash = v.hash;
              want = &request;
            }
          }
          std::uint32_t def = lookup(*name, want, type_class, main.symbolic);
          std::string label(*name);
          if (want != nullptr) label.append("@").append(want->name);
          if (def == no_object) {
            if (bind != elf::STB_WEAK) undefined.insert(label);
            return;
          }
          if (vis == elf::STV_PROTECTED) def = 0;
          if (!first_time && def != 0) {
            // Same symbol, other class: record once per target.
            auto& v = bound[def];
            if (std::find(v.begin(), v.end(), label) != v.end()) return;
          }
          if (def != 0) bound[def].push_back(std::move(label));
        },
        main.dynsym.size());
    if (!r) out.warnings.push_back(std::string("relocations: ") + r.error().message);
    out.undefined.assign(undefined.begin(), undefined.end());
  }

  const prefix_options& options_;
  std::string prefix_;
  std::vector<std::unique_ptr<cached_object<ET>>> nodes_;
  std::unordered_map<std::string, std::uint32_t> by_file_;
  struct pair_hash {
    std::size_t operator()(const std::pair<std::uint64_t, std::uint64_t>& p) const noexcept {
      return std::hash<std::uint64_t>()(p.first * 0x9E3779B97F4A7C15ull ^ p.second);
    }
  };
  std::unordered_map<std::pair<std::uint64_t, std::uint64_t>, std::uint32_t, pair_hash> by_inode_;
  std::unordered_map<std::uint32_t, std::string> canonical_;
  std::map<std::uint16_t, std::unique_ptr<library_search>> searches_;
  std::vector<scope_entry> scope_;
  std::unordered_map<std::string, std::uint32_t> by_name_;
  std::unordered_map<std::uint32_t, std::uint32_t> by_node_;
  std::vector<std::unique_ptr<search_object>> search_objects_;
  std::size_t lookups_ = 0;
};

// 0 = not ELF, 1 = dynamically linked ELF (ET_EXEC/ET_DYN with PT_DYNAMIC),
// 2 = other ELF (relocatable objects, static executables, cores).
template <class D = void>
int sniff_elf(linkscope::detail::deferred<byte_view, D> bytes) {
  if (!elf::is_elf(bytes)) return 0;
  auto kind = elf::visit_elf(bytes, [](const auto& f) -> result<int> {
    if (f.type() != elf::ET_EXEC && f.type() != elf::ET_DYN) return 2;
    for (const auto& ph : f.program_headers())
      if (ph.p_type == elf::PT_DYNAMIC) return 1;
    return 2;
  });
  return kind ? *kind : 2;
}

}  // namespace detail

// Owners of absolute paths from dpkg's database (info_dir/*.list). Each path is
// tried as given, through its /usr-merge aliases, then as its canonical path;
// `listed_path` says which spelling the database has.
template <class D = void>
std::unordered_map<std::string, package_owner> dpkg_owners(
    linkscope::detail::deferred<const std::vector<std::string>&, D> paths,
    const std::string& info_dir = "/var/lib/dpkg/info") {
  std::unordered_map<std::string, package_owner> out;
  // candidate spelling -> the paths asking for it, in order of preference
  // Keys view strings kept in `spellings` (a deque: stable addresses), so that the
  // 150k lines of a typical database are looked up without allocating.
  std::deque<std::string> spellings;
  std::unordered_map<std::string_view, std::vector<std::pair<std::string, int>>> wanted;
  for (const auto& p : paths) {
    int rank = 0;
    auto want = [&](const std::string& c) {
      auto it = wanted.find(c);
      if (it == wanted.end()) it = wanted.emplace(spellings.emplace_back(c), std::vector<std::pair<std::string, int>>{}).first;
      it->second.push_back({p, rank++});
    };
    const std::string normal = std::filesystem::path(p).lexically_normal().string();
    want(normal);
    for (const auto& a : detail::usr_merge_aliases(normal)) want(a);
    const std::string canonical = detail::canonical_or_normal(p);
    if (canonical != normal) {
      want(canonical);
      for (const auto& a : detail::usr_merge_aliases(canonical)) want(a);
    }
  }
  std::unordered_map<std::string, int> best;
  std::error_code ec;
  std::vector<std::filesystem::path> lists;
  for (std::filesystem::directory_iterator it(info_dir, ec), end; !ec && it != end; it.increment(ec)) {
    const auto& entry = it->path();
    if (entry.extension() == ".list") lists.push_back(entry);
  }
  std::sort(lists.begin(), lists.end());
  for (const auto& list : lists) {
    auto file = mapped_file::open(list.string());
    if (!file) continue;
    const std::string package = list.stem().string();
    const std::string_view text(reinterpret_cast<const char*>(file->bytes().data()), file->bytes().size());
    std::size_t start = 0;
    while (start < text.size()) {
      std::size_t nl = text.find('\n', start);
      if (nl == std::string_view::npos) nl = text.size();
      std::string_view line = text.substr(start, nl - start);
      start = nl + 1;
      if (line.empty()) continue;
      auto w = wanted.find(line);
      if (w == wanted.end()) continue;
      for (const auto& [path, rank] : w->second) {
        auto b = best.find(path);
        if (b != best.end() && b->second <= rank) continue;
        best[path] = rank;
        out[path] = package_owner{package, "dpkg", std::string(line)};
      }
    }
  }
  return out;
}

// conda-meta/*.json of a prefix: relative path -> package name.
template <class D = void>
result<std::unordered_map<std::string, std::string>> conda_owners(
    linkscope::detail::deferred<const std::string&, D> prefix, std::vector<std::string>* warnings = nullptr) {
  std::unordered_map<std::string, std::string> out;
  std::error_code ec;
  std::vector<std::filesystem::path> records;
  for (std::filesystem::directory_iterator it(prefix + "/conda-meta", ec), end; !ec && it != end; it.increment(ec))
    if (it->path().extension() == ".json") records.push_back(it->path());
  std::sort(records.begin(), records.end());
  for (const auto& record : records) {
    auto file = mapped_file::open(record.string());
    if (!file) {
      if (warnings) warnings->push_back(record.string() + ": " + file.error().message);
      continue;
    }
    const std::string_view text(reinterpret_cast<const char*>(file->bytes().data()), file->bytes().size());
    std::string name;
    std::vector<std::string> files;
    detail::conda_meta_reader reader(text);
    if (auto r = reader.read(name, files); !r) {
      if (warnings) {
        char buf[40];
        std::snprintf(buf, sizeof buf, " (offset 0x%llx)", static_cast<unsigned long long>(r.error().offset));
        warnings->push_back(record.string() + ": " + r.error().message + buf);
      }
      continue;
    }
    if (name.empty()) {
      if (warnings) warnings->push_back(record.string() + ": no \"name\"");
      continue;
    }
    for (auto& f : files) out.emplace(std::filesystem::path(f).lexically_normal().string(), name);
  }
  return out;
}

namespace detail {

// The ELF files to analyse under `prefix`: regular files first, then symlinks
// whose target is not one of them (nor another symlink's); directory symlinks
// are not followed, so loops cannot happen.
template <class D>
std::vector<std::string> walk_prefix(linkscope::detail::deferred<const std::string&, D> prefix, prefix_report& report) {
  namespace fs = std::filesystem;
  std::vector<std::string> regular, links;
  std::error_code ec;
  fs::recursive_directory_iterator it(prefix, fs::directory_options::skip_permission_denied, ec), end;
  if (ec) {
    report.warnings.push_back(prefix + ": " + ec.message());
    return {};
  }
  for (; it != end; it.increment(ec)) {
    if (ec) {
      report.warnings.push_back(ec.message());
      ec.clear();
      continue;
    }
    const fs::directory_entry& entry = *it;
    std::error_code e2;
    if (entry.is_symlink(e2)) {
      if (entry.is_regular_file(e2)) links.push_back(entry.path().string());
      else if (e2) report.warnings.push_back(entry.path().string() + ": " + e2.message());
      continue;
    }
    if (entry.is_regular_file(e2)) regular.push_back(entry.path().string());
  }
  std::sort(regular.begin(), regular.end());
  std::sort(links.begin(), links.end());
  std::vector<std::string> out;
  std::set<std::pair<std::uint64_t, std::uint64_t>> seen;
  auto consider = [&](const std::string& path, bool link) {
    // Most files of a prefix are not ELF: look at the magic before mapping anything.
    {
      char magic[4] = {};
      std::FILE* in = std::fopen(path.c_str(), "rb");
      const bool read = in != nullptr && std::fread(magic, 1, 4, in) == 4;
      if (in != nullptr) std::fclose(in);
      if (!read || magic[0] != 0x7f || magic[1] != 'E' || magic[2] != 'L' || magic[3] != 'F') {
        ++report.skipped_non_elf;
        return;
      }
    }
    auto mapped = mapped_file::open(path);
    if (!mapped) {
      report.warnings.push_back(path + ": " + mapped.error().message);
      return;
    }
    const int kind = sniff_elf<D>(mapped->bytes());
    if (kind == 0) {
      ++report.skipped_non_elf;
      return;
    }
    if (!seen.insert({mapped->device(), mapped->inode()}).second) {
      if (link) ++report.skipped_symlinks;
      return;
    }
    if (kind != 1) {
      ++report.skipped_static;
      return;
    }
    out.push_back(path);
  };
  for (const auto& p : regular) consider(p, false);
  for (const auto& p : links) consider(p, true);
  return out;
}

}  // namespace detail

// Check every dynamically linked ELF file under `prefix` (or options.files).
// (A template only so that a translation unit that does not call it does not
// compile it: D is never given.)
template <class D = void>
result<prefix_report> check_prefix(linkscope::detail::deferred<const std::string&, D> prefix_arg,
                                   const prefix_options& options = {}) {
  namespace fs = std::filesystem;
  prefix_report report;
  std::error_code ec;
  fs::path absolute = fs::absolute(prefix_arg, ec);
  if (ec) return make_error(errc::not_found, no_offset, "cannot make the prefix absolute");
  std::string prefix = absolute.lexically_normal().string();
  while (prefix.size() > 1 && prefix.back() == '/') prefix.pop_back();
  if (!fs::is_directory(prefix, ec)) return make_error(errc::not_found, no_offset, "prefix is not a directory");
  report.prefix = prefix;
  const std::string prefix_canonical = detail::canonical_or_normal(prefix);

  std::vector<std::string> files;
  std::vector<std::string> explicit_files = options.files;
  if (!options.package.empty()) {
    auto owners = conda_owners<D>(prefix, &report.warnings);
    if (!owners) return owners.error();
    for (const auto& [rel, name] : *owners) {
      if (name != options.package) continue;
      std::error_code e2;
      if (!fs::is_regular_file(prefix + "/" + rel, e2)) continue;  // follows symlinks
      auto mapped = mapped_file::open(prefix + "/" + rel);
      if (mapped && detail::sniff_elf<D>(mapped->bytes()) == 1) explicit_files.push_back(prefix + "/" + rel);
    }
    if (explicit_files.empty()) return make_error(errc::not_found, no_offset, "conda-meta lists no ELF file of that package");
    std::sort(explicit_files.begin(), explicit_files.end());
  }
  if (!explicit_files.empty()) {
    std::set<std::pair<std::uint64_t, std::uint64_t>> seen;
    for (const auto& f : explicit_files) {
      const std::string p = fs::absolute(f, ec).lexically_normal().string();
      auto mapped = mapped_file::open(p);
      if (mapped && !seen.insert({mapped->device(), mapped->inode()}).second) {
        ++report.skipped_symlinks;
        continue;
      }
      files.push_back(p);
    }
  } else {
    files = detail::walk_prefix<D>(prefix, report);
  }

  detail::prefix_linker<linkscope::detail::deferred<elf::elf64le, D>> l64le(options, prefix_canonical);
  detail::prefix_linker<linkscope::detail::deferred<elf::elf64be, D>> l64be(options, prefix_canonical);
  detail::prefix_linker<linkscope::detail::deferred<elf::elf32le, D>> l32le(options, prefix_canonical);
  detail::prefix_linker<linkscope::detail::deferred<elf::elf32be, D>> l32be(options, prefix_canonical);
  for (const auto& f : files) {
    file_report fr;
    auto mapped = mapped_file::open(f);
    if (!mapped) {
      fr.path = f;
      fr.warnings.push_back(std::string("cannot read: ") + mapped.error().message);
    } else {
      auto kind = elf::identify_elf(mapped->bytes());
      if (!kind) {
        fr.path = f;
        fr.warnings.push_back(std::string("not ELF: ") + kind.error().message);
      } else if (kind->is64) {
        fr = kind->big_endian ? l64be.analyse(f) : l64le.analyse(f);
      } else {
        fr = kind->big_endian ? l32be.analyse(f) : l32le.analyse(f);
      }
    }
    fr.relative = detail::path_within(f, prefix) ? f.substr(prefix.size() == 1 ? 1 : prefix.size() + 1) : f;
    report.files.push_back(std::move(fr));
  }
  report.objects_parsed = l64le.objects_parsed() + l64be.objects_parsed() + l32le.objects_parsed() + l32be.objects_parsed();
  report.lookups = l64le.lookups() + l64be.lookups() + l32le.lookups() + l32be.lookups();

  // Ownership of every needed DSO and of the analysed files.
  std::unordered_map<std::string, std::string> conda;
  if (options.use_conda) {
    std::error_code e2;
    if (fs::is_directory(prefix + "/conda-meta", e2)) {
      report.have_conda = true;
      auto owners = conda_owners<D>(prefix, &report.warnings);
      if (owners) conda = std::move(*owners);
    }
  }
  std::vector<std::string> dpkg_paths;
  auto display = [&](const std::string& path) {
    const std::string normal = fs::path(path).lexically_normal().string();
    if (detail::path_within(normal, prefix)) return normal.substr(prefix.size() == 1 ? 1 : prefix.size() + 1);
    return normal;
  };
  auto conda_lookup = [&](const std::string& path) -> std::optional<package_owner> {
    if (conda.empty()) return std::nullopt;
    for (const std::string& candidate : {fs::path(path).lexically_normal().string(), detail::canonical_or_normal(path)}) {
      if (!detail::path_within(candidate, prefix) && !detail::path_within(candidate, prefix_canonical)) continue;
      const std::string& base = detail::path_within(candidate, prefix) ? prefix : prefix_canonical;
      const std::string rel = candidate.substr(base.size() == 1 ? 1 : base.size() + 1);
      auto it = conda.find(rel);
      if (it != conda.end()) return package_owner{it->second, "conda", rel};
    }
    return std::nullopt;
  };
  if (options.use_dpkg) {
    std::error_code e2;
    if (fs::is_directory(options.dpkg_info_dir, e2)) {
      report.have_dpkg = true;
      for (const auto& fr : report.files) {
        dpkg_paths.push_back(fr.path);
        for (const auto& n : fr.needed)
          if (!n.path.empty()) dpkg_paths.push_back(n.file);
      }
    }
  }
  std::unordered_map<std::string, package_owner> dpkg;
  if (report.have_dpkg) dpkg = dpkg_owners<D>(dpkg_paths, options.dpkg_info_dir);
  auto owner_of = [&](const std::string& file, bool in_prefix) -> package_owner {
    if (in_prefix) {
      if (auto c = conda_lookup(file)) return *c;
    }
    auto d = dpkg.find(file);
    if (d != dpkg.end()) return d->second;
    if (in_prefix && !report.have_conda) return package_owner{"", "prefix", display(file)};
    // Nobody owns it only when a database that could have listed it was read.
    if (in_prefix ? report.have_conda : report.have_dpkg) return {};
    return package_owner{"", "unknown", ""};
  };
  std::set<std::string> self;
  for (const auto& fr : report.files) {
    const package_owner o = owner_of(fr.path, true);
    if (!o.package.empty()) self.insert(o.package);
  }
  std::map<std::string, package_usage> used;
  std::set<std::string> unowned;
  for (auto& fr : report.files) {
    for (auto& n : fr.needed) {
      if (n.path.empty()) continue;
      n.owner = owner_of(n.file, n.in_prefix);
      const std::string shown = display(n.file);
      if (n.owner.package.empty()) {
        if (n.owner.source.empty() && !n.allowed) unowned.insert(shown);
        continue;
      }
      auto [it, fresh] = used.emplace(n.owner.package, package_usage{});
      package_usage& u = it->second;
      if (fresh) {
        u.name = n.owner.package;
        u.source = n.owner.source;
        u.self = self.count(n.owner.package) != 0;
        u.allowed_only = true;
      }
      if (std::find(u.dsos.begin(), u.dsos.end(), shown) == u.dsos.end()) u.dsos.push_back(shown);
      u.allowed_only = u.allowed_only && n.allowed;
    }
  }
  std::set<std::string> declared_base;
  for (const auto& d : options.declared) declared_base.insert(std::string(package_base_name(d)));
  for (auto& [name, u] : used) {
    u.declared = declared_base.count(std::string(package_base_name(name))) != 0;
    std::sort(u.dsos.begin(), u.dsos.end());
    if (options.check_declared && !u.declared && !u.self && !u.allowed_only) report.undeclared.push_back(name);
    report.packages.push_back(u);
  }
  if (options.check_declared) {
    for (const auto& d : options.declared) {
      bool hit = false;
      for (const auto& [name, u] : used) hit = hit || package_base_name(name) == package_base_name(d);
      if (!hit) report.unused_declared.push_back(d);
    }
  }
  report.unowned.assign(unowned.begin(), unowned.end());

  // Findings.
  for (auto& fr : report.files) {
    std::size_t n = fr.missing.size();
    for (const auto& e : fr.needed) {
      if (e.path.empty()) continue;
      if (!e.used && !e.allowed) ++n;
      if (!e.in_prefix && !e.allowed) ++n;
    }
    for (const auto& o : fr.overlinked)
      if (!o.allowed) ++n;
    for (const auto& r : fr.rpaths)
      if (r.outside) ++n;
    if (options.undefined_is_finding) n += fr.undefined.size();
    fr.findings = n;
    report.findings += n;
  }
  report.findings += report.undeclared.size() + report.unused_declared.size() + report.unowned.size();
  return report;
}

}  // namespace resolve
}  // namespace v0
}  // namespace linkscope
