// linkscope/resolve/link_line.hpp — a model of a static linker's command line.
//
// A link is described by the arguments given to ld.lld / GNU ld. This header
// turns them into a `link_line`: the ordered list of inputs (objects,
// archives, shared libraries, each with the -Bstatic / --whole-archive /
// --as-needed / group state in effect where it was written) and the options
// that change symbol resolution (-u, -e, --defsym, --wrap, -shared, -r).
//
// The steps, in the order a linker takes them:
//   1. expand_response_files: every `@file` argument is replaced by the
//      arguments of the file, tokenised with the GNU rules that lld
//      (cl::TokenizeGNUCommandLine) and libiberty (buildargv) share:
//      whitespace separates, '...' and "..." quote, a backslash escapes the
//      next character (inside quotes too). Nested files expand recursively;
//      a file that includes itself, directly or not, is an error.
//   2. parse_link_args: options are recognised as ld.lld spells them (`-x`
//      and `--x` are the same option, values joined with `=` or given as the
//      next argument, short options also joined: `-lfoo`, `-L/dir`). Options
//      that do not change resolution are accepted and listed in
//      `ignored_options()`; any other option is an error that names it.
//   3. locate_inputs: -l names are searched in the -L directories (libNAME.so
//      then libNAME.a per directory, only .a under -Bstatic; -l:NAME is
//      searched verbatim), paths get the sysroot where ld gives it (`=/x`,
//      `$SYSROOT/x`, absolute paths inside scripts that live in the
//      sysroot). A file that starts with neither the ELF nor an ar magic is
//      read as a GNU ld linker script; the scripts this supports hold only
//      GROUP, INPUT, AS_NEEDED (plus OUTPUT_FORMAT / OUTPUT_ARCH / TARGET /
//      SEARCH_DIR, which do not change resolution) — Debian's libc.so and
//      libgcc_s.so are such scripts. Their inputs replace the script in place;
//      GROUP makes them a group (GNU ld rescans it).
//
// Reference: the GNU ld manual ("Command-line Options", "File Commands"), and
// lld's ELF/Options.td, Driver.cpp (createFiles, addLibrary, searchLibrary),
// ScriptParser.cpp (readGroup, readInput, readAsNeeded, addFile).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "linkscope/core/config.hpp"
#include "linkscope/core/error.hpp"
#include "linkscope/core/mapped_file.hpp"
#include "linkscope/elf/file.hpp"
#include "linkscope/resolve/file_format.hpp"

namespace linkscope {
inline namespace v0 {
namespace resolve {

// An error found while reading the link line: what went wrong (the `error`)
// and which argument or file it is about (`subject`), because "not found"
// alone does not say which -l failed.
struct link_diagnostic {
  error err;
  std::string subject;  // the argument as written, or a file path
  std::string detail;   // optional extra text (the included-from chain ...)
};

struct link_input {
  std::string spec;     // as written: a path, "-lfoo", "-l:libfoo.a"
  std::string path;     // the file found (after locate_inputs), as lld finds it
  std::string bfd_path; // as GNU ld finds it, when that differs (relative names in scripts)
  std::string origin;   // "" for the command line, else the linker script's path
  int group = -1;       // --start-group / GROUP number, -1 outside any group
  bool is_library = false;   // from -l
  bool static_only = false;  // -Bstatic (or -static) was in effect
  bool whole_archive = false;
  bool as_needed = false;
};

struct defsym {
  std::string name;
  std::string expression;
};

struct link_line {
  std::vector<link_input> inputs;
  std::vector<std::string> search_dirs;  // -L, in order (after sysroot rewriting), then locate_options::default_dirs
  std::vector<std::string> undefined;    // -u / --undefined, in order
  std::vector<defsym> defsyms;           // --defsym
  std::vector<std::string> wraps;        // --wrap
  std::vector<std::string> ignored;      // options accepted and ignored, as written
  std::string entry;                     // -e / --entry ("" = default)
  std::string sysroot;
  std::string output;                    // -o (informational)
  int group_count = 0;
  bool shared = false;
  bool relocatable = false;
  bool static_link = false;              // -static / -Bstatic seen before any input
  bool no_inhibit = false;

  // The entry symbol a linker looks for: -e, else _start for executables and
  // shared objects (lld looks it up for both), nothing for -r.
  std::string entry_symbol() const {
    if (!entry.empty()) return entry;
    if (relocatable) return {};
    return "_start";
  }
};

// ---------------------------------------------------------------------------
// Response files

namespace detail {

inline bool read_whole_file(const std::string& path, std::string& out, link_diagnostic& diag,
                            std::string_view argument) {
  auto file = mapped_file::open(path);
  if (!file) {
    if (file.error().code == errc::empty_file) {
      out.clear();
      return true;
    }
    diag = {file.error(), std::string(argument), {}};
    return false;
  }
  out.assign(reinterpret_cast<const char*>(file->data()), file->size());
  return true;
}

inline bool is_rsp_space(char c) noexcept { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

}  // namespace detail

// Split the text of a response file the way GNU tools do. Returns false (an
// unterminated quote) with `bad_offset` set.
bool tokenize_gnu(std::string_view text, std::vector<std::string>& out, std::size_t& bad_offset);

namespace detail {
bool expand_into(std::span<const std::string> args, std::vector<std::string>& out,
                        std::vector<std::string>& stack, link_diagnostic& diag);
}  // namespace detail

// Replace every @file by its arguments (recursively). Paths of nested files
// are taken relative to the current directory, as lld and GNU ld do.
inline result<std::vector<std::string>> expand_response_files(std::span<const std::string> args,
                                                              link_diagnostic& diag) {
  std::vector<std::string> out;
  std::vector<std::string> stack;
  if (!detail::expand_into(args, out, stack, diag)) return diag.err;
  return out;
}

// ---------------------------------------------------------------------------
// Options

// Options accepted and ignored because they do not change which archive
// members are extracted. `=` in a name means the option takes a value (which
// may also be the next argument); the rest are flags. Both -x and --x forms are
// accepted for multi-letter names.
std::span<const char* const> ignored_options();

namespace detail {

// The result of matching one argument against an option spelled `name`
// (without leading dashes).
struct option_match {
  bool matched = false;
  bool has_value = false;
  std::string value;
};

// Split "-x", "--x", "-x=v", "--x=v", "-xv" (single letter, joined) or "-x v".
// `single_joined` allows "-lfoo" style joining (only one-letter options).
option_match match_option(const std::vector<std::string>& args, std::size_t& i, std::string_view name,
                                 bool takes_value);

}  // namespace detail

// Parse linker arguments (already expanded: see expand_response_files).
// Inputs are recorded in order; nothing is opened here.
result<link_line> parse_link_args(const std::vector<std::string>& args, link_diagnostic& diag);

// ---------------------------------------------------------------------------
// Locating inputs and reading GROUP/INPUT scripts

enum class input_format : std::uint8_t { unknown, elf, archive, thin_archive, script };

// What the linker makes of a file: ELF and archives as the one sniff
// (resolve/file_format.hpp) names them (an AIX big archive is not an input GNU
// ld reads), anything else textual is read as a linker script.
inline input_format sniff_link_input(byte_view bytes) noexcept {
  const auto* p = bytes.data();
  const file_format format = sniff_format(bytes);
  if (format == file_format::elf) return input_format::elf;
  if (format == file_format::archive) {
    if (std::memcmp(p, "!<arch>\n", 8) == 0) return input_format::archive;
    if (std::memcmp(p, "!<thin>\n", 8) == 0) return input_format::thin_archive;
    return input_format::unknown;
  }
  // A linker script is text: no NUL and no control character other than
  // white space in the first bytes (bytes of UTF-8 are allowed). Random bytes
  // are an unknown format, as GNU ld says "file format not recognized".
  const std::size_t n = bytes.size() < 512 ? bytes.size() : 512;
  if (n == 0) return input_format::unknown;
  for (std::size_t i = 0; i < n; ++i) {
    const unsigned char c = p[i];
    if (c < 0x20 && c != '\t' && c != '\n' && c != '\v' && c != '\f' && c != '\r') return input_format::unknown;
    if (c == 0x7f) return input_format::unknown;
  }
  return input_format::script;
}

namespace detail {

inline bool input_file_exists(const std::string& path) {
  std::error_code ec;
  return std::filesystem::exists(path, ec) && !std::filesystem::is_directory(path, ec);
}

inline std::string join_search_path(const std::string& dir, std::string_view name) {
  if (dir.empty()) return std::string(name);
  std::string out = dir;
  if (out.back() != '/') out.push_back('/');
  out.append(name);
  return out;
}

// -L=dir and -L$SYSROOT/dir mean dir inside the sysroot.
inline std::string sysroot_dir(const std::string& dir, const std::string& sysroot) {
  if (!dir.empty() && dir[0] == '=') return sysroot + dir.substr(1);
  if (dir.rfind("$SYSROOT", 0) == 0) return sysroot + dir.substr(8);
  return dir;
}

// Tokens of a linker script: identifiers/paths, and the punctuation ( ) , ;
struct script_lexer {
  std::string_view text;
  std::size_t pos = 0;

  // Returns false at the end; `bad` set on an unterminated comment/quote.
  bool next(std::string_view& token, bool& bad) {
    for (;;) {
      while (pos < text.size() && is_rsp_space(text[pos])) ++pos;
      if (pos + 1 < text.size() && text[pos] == '/' && text[pos + 1] == '*') {
        const auto end = text.find("*/", pos + 2);
        if (end == std::string_view::npos) {
          bad = true;
          return false;
        }
        pos = end + 2;
        continue;
      }
      break;
    }
    if (pos >= text.size()) return false;
    const char c = text[pos];
    if (c == '(' || c == ')' || c == ',' || c == ';' || c == '{' || c == '}' || c == '=') {
      token = text.substr(pos++, 1);
      return true;
    }
    if (c == '"') {
      const auto end = text.find('"', pos + 1);
      if (end == std::string_view::npos) {
        bad = true;
        return false;
      }
      token = text.substr(pos + 1, end - pos - 1);
      pos = end + 1;
      return true;
    }
    const std::size_t start = pos;
    while (pos < text.size() && !is_rsp_space(text[pos]) && text[pos] != '(' && text[pos] != ')' && text[pos] != ',' &&
           text[pos] != ';' && !(text[pos] == '/' && pos + 1 < text.size() && text[pos + 1] == '*'))
      ++pos;
    token = text.substr(start, pos - start);
    return true;
  }
};

}  // namespace detail

// GNU ld's built-in library directories: the SEARCH_DIR list of its default
// linker script (`ld --verbose`), as Debian 12's binutils 2.40 has it for
// x86-64 (elf_x86_64). GNU ld searches them after the -L directories; "="
// is the sysroot. ld.lld has none: the compiler driver passes every
// directory as -L, so under lld semantics a bare `-lm` is not found.
inline const std::vector<std::string>& gnu_ld_search_dirs() {
  static const std::vector<std::string> dirs = {
      "=/usr/local/lib/x86_64-linux-gnu", "=/lib/x86_64-linux-gnu", "=/usr/lib/x86_64-linux-gnu",
      "=/usr/lib/x86_64-linux-gnu64",     "=/usr/local/lib64",      "=/lib64",
      "=/usr/lib64",                      "=/usr/local/lib",        "=/lib",
      "=/usr/lib",                        "=/usr/x86_64-linux-gnu/lib64", "=/usr/x86_64-linux-gnu/lib"};
  return dirs;
}

struct locate_options {
  int max_script_depth = 16;
  // Searched for -l after the -L directories (GNU ld: gnu_ld_search_dirs()).
  std::vector<std::string> default_dirs{};
};

class link_line_locator {
 public:
  explicit link_line_locator(link_line& line, link_diagnostic& diag, const locate_options& options = {})
      : line_(line), diag_(diag), options_(options) {}

  // Find every input's file; expand GROUP/INPUT scripts in place.
  result<void> run() {
    for (auto& dir : line_.search_dirs) dir = detail::sysroot_dir(dir, line_.sysroot);
    for (const auto& dir : options_.default_dirs) line_.search_dirs.push_back(detail::sysroot_dir(dir, line_.sysroot));
    std::vector<link_input> out;
    for (auto& in : line_.inputs) LINKSCOPE_CHECK(locate(std::move(in), out, 0));
    line_.inputs = std::move(out);
    return ok();
  }

 private:
  error fail(errc code, const char* message, const std::string& subject, std::string detail = {}) {
    diag_ = {make_error(code, no_offset, message), subject, std::move(detail)};
    return diag_.err;
  }

  // lld's searchLibrary: for each -L dir, libNAME.so (unless static) then libNAME.a.
  bool find_library(const link_input& in, std::string& path) const {
    std::string_view name = std::string_view(in.spec).substr(2);
    if (!name.empty() && name[0] == ':') {
      for (const auto& dir : line_.search_dirs) {
        std::string p = detail::join_search_path(dir, name.substr(1));
        if (detail::input_file_exists(p)) {
          path = std::move(p);
          return true;
        }
      }
      return false;
    }
    for (const auto& dir : line_.search_dirs) {
      if (!in.static_only) {
        std::string so = detail::join_search_path(dir, "lib" + std::string(name) + ".so");
        if (detail::input_file_exists(so)) {
          path = std::move(so);
          return true;
        }
      }
      std::string a = detail::join_search_path(dir, "lib" + std::string(name) + ".a");
      if (detail::input_file_exists(a)) {
        path = std::move(a);
        return true;
      }
    }
    return false;
  }

  result<void> locate(link_input in, std::vector<link_input>& out, int depth) {
    if (in.is_library) {
      if (!find_library(in, in.path)) return fail(errc::not_found, "unable to find library", in.spec);
    } else if (in.path.empty()) {
      in.path = in.spec;
      if (!in.spec.empty() && in.spec[0] == '=' && !line_.sysroot.empty()) in.path = line_.sysroot + in.spec.substr(1);
    }
    auto file = mapped_file::open(in.path);
    if (!file) {
      diag_ = {file.error(), in.spec, {}};
      return file.error();
    }
    const input_format format = sniff_link_input(file->bytes());
    if (format != input_format::script) {
      out.push_back(std::move(in));
      return ok();
    }
    if (depth >= options_.max_script_depth) return fail(errc::malformed, "linker scripts nest too deeply", in.path);
    return read_script(in, file->bytes().chars(), out, depth + 1);
  }

  // GROUP ( a b AS_NEEDED ( c ) -lx ), INPUT ( ... ).
  result<void> read_script(const link_input& script, std::string_view text, std::vector<link_input>& out,
                           int depth) {
    detail::script_lexer lex{text};
    std::string_view token;
    bool bad = false;
    // A script in the sysroot gets its absolute paths prefixed by the sysroot.
    const bool in_sysroot = !line_.sysroot.empty() && script.path.rfind(line_.sysroot, 0) == 0;
    const std::string script_dir = [&] {
      auto slash = script.path.rfind('/');
      return slash == std::string::npos ? std::string() : script.path.substr(0, slash);
    }();
    std::size_t commands = 0;
    while (lex.next(token, bad)) {
      if (token == ";") continue;
      const bool is_group = token == "GROUP";
      const bool is_input = token == "INPUT";
      const bool is_skipped = token == "OUTPUT_FORMAT" || token == "OUTPUT_ARCH" || token == "TARGET" ||
                              token == "SEARCH_DIR";
      // A text file whose first word is no script command (those are upper
      // case: SECTIONS, ENTRY ...) is not a linker script at all: say so,
      // without quoting its contents.
      const bool command_like = std::all_of(token.begin(), token.end(), [](char c) { return (c >= 'A' && c <= 'Z') || c == '_'; });
      if (!is_group && !is_input && !is_skipped && commands == 0 && !command_like)
        return fail(errc::bad_magic, "file format not recognized (not ELF, not an archive, not a GROUP/INPUT linker script)",
                    script.path);
      if (!is_group && !is_input && !is_skipped)
        return fail(errc::unsupported, "linker script command not supported (only GROUP, INPUT, AS_NEEDED)",
                    script.path, std::string(token));
      ++commands;
      if (!lex.next(token, bad) || token != "(")
        return fail(errc::malformed, "expected '(' in linker script", script.path);
      int group = script.group;
      if (is_group && group < 0) group = line_.group_count++;
      int depth_paren = 1;
      bool as_needed = script.as_needed;
      int as_needed_depth = 0;
      while (depth_paren > 0) {
        if (!lex.next(token, bad)) return fail(errc::malformed, "unterminated linker script command", script.path);
        if (token == "(") {
          ++depth_paren;
          continue;
        }
        if (token == ")") {
          if (as_needed_depth == depth_paren) {
            as_needed = script.as_needed;
            as_needed_depth = 0;
          }
          --depth_paren;
          continue;
        }
        if (token == ",") continue;
        if (is_skipped) continue;
        if (token == "AS_NEEDED") {
          if (!lex.next(token, bad) || token != "(")
            return fail(errc::malformed, "expected '(' after AS_NEEDED", script.path);
          ++depth_paren;
          as_needed = true;
          as_needed_depth = depth_paren;
          continue;
        }
        link_input in;
        in.origin = script.path;
        in.group = group;
        in.static_only = script.static_only;
        in.whole_archive = script.whole_archive;
        in.as_needed = as_needed;
        std::string name(token);
        if (name.rfind("-l", 0) == 0) {
          in.spec = name;
          in.is_library = true;
        } else {
          in.spec = name;
          if (name[0] == '/') {
            in.path = in_sysroot ? line_.sysroot + name : name;
          } else if (name[0] == '=') {
            in.path = line_.sysroot + name.substr(1);
          } else {
            // lld: the script's directory, the current directory, then -L.
            std::string p = script_dir.empty() ? std::string() : detail::join_search_path(script_dir, name);
            if (p.empty() || !detail::input_file_exists(p)) p = detail::input_file_exists(name) ? name : std::string();
            if (p.empty()) {
              for (const auto& dir : line_.search_dirs) {
                std::string q = detail::join_search_path(dir, name);
                if (detail::input_file_exists(q)) {
                  p = std::move(q);
                  break;
                }
              }
            }
            if (p.empty()) return fail(errc::not_found, "cannot find input of linker script", name, script.path);
            // GNU ld (ldfile_open_file_search): the script's directory ("."
            // when it has none), the current directory, then -L.
            std::string bfd = detail::join_search_path(script_dir.empty() ? std::string(".") : script_dir, name);
            if (!detail::input_file_exists(bfd)) bfd = detail::input_file_exists(name) ? name : std::string();
            for (std::size_t d = 0; bfd.empty() && d < line_.search_dirs.size(); ++d) {
              std::string q = detail::join_search_path(line_.search_dirs[d], name);
              if (detail::input_file_exists(q)) bfd = std::move(q);
            }
            if (!bfd.empty() && bfd != p) in.bfd_path = std::move(bfd);
            in.path = std::move(p);
          }
        }
        LINKSCOPE_CHECK(locate(std::move(in), out, depth));
      }
    }
    if (bad) return fail(errc::malformed, "unterminated comment or quote in linker script", script.path);
    return ok();
  }

  link_line& line_;
  link_diagnostic& diag_;
  locate_options options_;
};

// Expand response files, parse, and locate every input: the whole front end.
// GNU ld semantics want `options.default_dirs = gnu_ld_search_dirs()`.
inline result<link_line> read_link_line(std::span<const std::string> args, link_diagnostic& diag,
                                        const locate_options& options = {}) {
  LINKSCOPE_TRY(expanded, expand_response_files(args, diag));
  LINKSCOPE_TRY(line, parse_link_args(expanded, diag));
  link_line result_line = std::move(line);
  link_line_locator locator(result_line, diag, options);
  LINKSCOPE_CHECK(locator.run());
  return result_line;
}

#if LINKSCOPE_DEFINITIONS
namespace detail {
LINKSCOPE_FUNC bool expand_into(std::span<const std::string> args, std::vector<std::string>& out,
                        std::vector<std::string>& stack, link_diagnostic& diag) {
  for (const std::string& arg : args) {
    if (arg.size() < 2 || arg[0] != '@') {
      out.push_back(arg);
      continue;
    }
    const std::string path = arg.substr(1);
    if (std::find(stack.begin(), stack.end(), path) != stack.end() || stack.size() >= 64) {
      std::string chain;
      for (const auto& s : stack) chain.append(s).append(" -> ");
      chain.append(path);
      diag = {make_error(errc::malformed, no_offset, "response file includes itself"), arg, chain};
      return false;
    }
    std::string text;
    if (!read_whole_file(path, text, diag, arg)) return false;
    std::vector<std::string> tokens;
    std::size_t bad = 0;
    if (!tokenize_gnu(text, tokens, bad)) {
      diag = {make_error(errc::malformed, bad, "unterminated quote in response file"), arg, {}};
      return false;
    }
    stack.push_back(path);
    if (!expand_into(tokens, out, stack, diag)) return false;
    stack.pop_back();
  }
  return true;
}

LINKSCOPE_FUNC option_match match_option(const std::vector<std::string>& args, std::size_t& i, std::string_view name,
                                 bool takes_value) {
  option_match m;
  std::string_view arg = args[i];
  if (arg.size() < 2 || arg[0] != '-') return m;
  std::string_view body = arg.substr(1);
  const bool double_dash = !body.empty() && body[0] == '-';
  if (double_dash) body.remove_prefix(1);
  if (body.substr(0, name.size()) != name) return m;
  std::string_view rest = body.substr(name.size());
  if (rest.empty()) {
    m.matched = true;
    if (takes_value) {
      if (i + 1 >= args.size()) return m;  // matched, value missing: caller reports
      m.has_value = true;
      m.value = args[++i];
    }
    return m;
  }
  if (!takes_value) return m;
  if (name.size() == 1 && !double_dash) {  // -lfoo, -L/dir, -L=/dir (sysroot), -usym, -O2
    m.matched = m.has_value = true;
    m.value = std::string(rest);
    return m;
  }
  if (rest[0] == '=') {
    m.matched = m.has_value = true;
    m.value = std::string(rest.substr(1));
  }
  return m;
}
}  // namespace detail

LINKSCOPE_FUNC bool tokenize_gnu(std::string_view text, std::vector<std::string>& out, std::size_t& bad_offset) {
  std::size_t i = 0;
  const std::size_t n = text.size();
  while (i < n) {
    while (i < n && detail::is_rsp_space(text[i])) ++i;
    if (i >= n) break;
    std::string token;
    while (i < n && !detail::is_rsp_space(text[i])) {
      const char c = text[i];
      if (c == '\\') {
        if (i + 1 < n) token.push_back(text[i + 1]);
        i += 2;
        continue;
      }
      if (c == '\'' || c == '"') {
        const std::size_t open = i;
        ++i;
        while (i < n && text[i] != c) {
          if (text[i] == '\\' && i + 1 < n) ++i;
          token.push_back(text[i]);
          ++i;
        }
        if (i >= n) {
          bad_offset = open;
          return false;
        }
        ++i;  // closing quote
        continue;
      }
      token.push_back(c);
      ++i;
    }
    out.push_back(std::move(token));
  }
  return true;
}

LINKSCOPE_FUNC std::span<const char* const> ignored_options() {
  static constexpr const char* names[] = {
      // output and its form
      "o=", "O=", "m=", "-oformat=", "-output=", "-hash-style=", "-build-id", "-build-id=", "-eh-frame-hdr",
      "-no-eh-frame-hdr", "pie", "-pie", "-pic-executable", "no-pie", "-no-pie", "-no-pic-executable",
      "dynamic-linker=", "-dynamic-linker=", "-no-dynamic-linker", "z=", "plugin=", "plugin-opt=",
      "-plugin-opt=", "soname=", "h=", "-soname=", "rpath=", "-rpath=", "R=", "rpath-link=", "-rpath-link=",
      "-enable-new-dtags", "-disable-new-dtags", "-export-dynamic", "E", "-no-export-dynamic",
      "-dynamic-list=", "-version-script=", "-compress-debug-sections=", "-gc-sections", "-no-gc-sections",
      "-print-gc-sections", "-icf=", "-strip-all", "s", "-strip-debug", "S", "g", "-discard-all", "x",
      "-discard-locals", "X", "-sort-common", "-sort-section=", "-relax", "-no-relax", "-fatal-warnings",
      "-no-fatal-warnings", "-warn-common", "-no-warn-common", "-warn-backrefs", "-no-warn-backrefs",
      "-warn-once", "-warn-shared-textrel", "-color-diagnostics", "-color-diagnostics=",
      "-no-color-diagnostics", "-verbose", "v", "-version", "-threads=", "-Map=", "Map=", "M",
      "-print-map", "-cref", "-trace", "t", "y=", "-trace-symbol=", "-why-extract=", "-no-demangle",
      "-demangle", "-error-limit=", "-time-trace", "-time-trace-file=", "-lto-O=", "-thinlto-jobs=",
      "-thinlto-cache-dir=", "-allow-shlib-undefined", "-no-allow-shlib-undefined", "-no-undefined",
      "-allow-multiple-definition", "-unresolved-symbols=", "-noinhibit-exec", "-fix-cortex-a53-843419",
      "-pack-dyn-relocs=", "-use-android-relr-tags", "-apply-dynamic-relocs", "-nostdlib", "nostdlib",
      "-no-undefined-version", "-undefined-version", "-emit-relocs", "q", "-Bsymbolic", "Bsymbolic",
      "Bsymbolic-functions", "-Bsymbolic-functions", "-gdb-index", "-no-gdb-index", "-icf-data", "-no-rosegment",
      "-image-base=", "-section-start=", "Ttext=", "Tdata=", "Tbss=", "-Ttext=", "-Tdata=", "-Tbss=",
      "-Ttext-segment=", "-no-omagic", "-omagic", "N", "n", "-nmagic", "-omagic", "-ld-path=", "-eh-frame-hdr",
      "-exclude-libs=", "-reproduce=", "-stats", "-print-memory-usage", "-no-copy-dt-needed-entries",
      "-copy-dt-needed-entries", "-add-needed", "-no-add-needed", "-init=", "init=", "-fini=", "fini=",
      "-mllvm=", "mllvm=", "-lto-partitions=", "-lto-whole-program-visibility", "-save-temps",
      "-disable-verify", "-no-warnings", "w", "-icf=none", "-fortran-common", "-no-fortran-common",
      "-nopie", "-ignore-data-address-equality", "-ignore-function-address-equality",
      "-print-archive-stats=", "-pop-state", "-push-state", "-error-unresolved-symbols", "-warn-unresolved-symbols",
  };
  return std::span<const char* const>(names);
}

LINKSCOPE_FUNC result<link_line> parse_link_args(const std::vector<std::string>& args, link_diagnostic& diag) {
  link_line line;
  bool static_only = false;
  bool whole_archive = false;
  bool as_needed = false;
  int group = -1;
  bool any_input = false;

  auto add_input = [&](std::string spec, bool is_library) {
    link_input in;
    in.spec = std::move(spec);
    in.is_library = is_library;
    in.static_only = static_only;
    in.whole_archive = whole_archive;
    in.as_needed = as_needed;
    in.group = group;
    line.inputs.push_back(std::move(in));
    any_input = true;
  };
  auto fail = [&](errc code, const char* message, const std::string& arg) -> error {
    diag = {make_error(code, no_offset, message), arg, {}};
    return diag.err;
  };

  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg.empty()) continue;
    if (arg[0] != '-' || arg == "-") {
      add_input(arg, false);
      continue;
    }
    if (arg == "-(" || arg == "--start-group" || arg == "-start-group") {
      if (group >= 0) return fail(errc::usage, "nested --start-group", arg);
      group = line.group_count++;
      continue;
    }
    if (arg == "-)" || arg == "--end-group" || arg == "-end-group") {
      if (group < 0) return fail(errc::usage, "--end-group without --start-group", arg);
      group = -1;
      continue;
    }
    // Options with a value that matter.
    struct valued {
      const char* name;
      int what;
    };
    static constexpr valued valued_options[] = {
        {"library", 0}, {"l", 0},  {"library-path", 1}, {"L", 1},     {"undefined", 2}, {"u", 2},
        {"entry", 3},   {"e", 3},  {"defsym", 4},       {"wrap", 5},  {"sysroot", 6},   {"o", 7},
        {"output", 7},  {"T", 8},  {"script", 8},       {"dT", 8},    {"default-script", 8},
    };
    bool handled = false;
    for (const valued& option : valued_options) {
      std::size_t j = i;
      auto m = detail::match_option(args, j, option.name, true);
      if (!m.matched) continue;
      if (!m.has_value) return fail(errc::usage, "option requires an argument", arg);
      i = j;
      handled = true;
      switch (option.what) {
        case 0: add_input("-l" + m.value, true); break;
        case 1: line.search_dirs.push_back(m.value); break;
        case 2: line.undefined.push_back(m.value); break;
        case 3: line.entry = m.value; break;
        case 4: {
          const auto eq = m.value.find('=');
          if (eq == std::string::npos || eq == 0) return fail(errc::usage, "--defsym needs SYMBOL=EXPRESSION", arg);
          line.defsyms.push_back({m.value.substr(0, eq), m.value.substr(eq + 1)});
          break;
        }
        case 5: line.wraps.push_back(m.value); break;
        case 6: line.sysroot = m.value; break;
        case 7: line.output = m.value; break;
        default:
          return fail(errc::unsupported, "linker scripts given with -T are not supported (only GROUP/INPUT scripts as inputs)",
                      arg);
      }
      break;
    }
    if (handled) continue;
    // Flags that matter.
    std::string_view flag = std::string_view(arg).substr(1);
    if (!flag.empty() && flag[0] == '-') flag.remove_prefix(1);
    if (flag == "Bstatic" || flag == "dn" || flag == "non_shared" || flag == "static") {
      static_only = true;
      if (!any_input) line.static_link = true;
      continue;
    }
    if (flag == "Bdynamic" || flag == "dy" || flag == "call_shared") {
      static_only = false;
      continue;
    }
    if (flag == "whole-archive") { whole_archive = true; continue; }
    if (flag == "no-whole-archive") { whole_archive = false; continue; }
    if (flag == "as-needed") { as_needed = true; continue; }
    if (flag == "no-as-needed") { as_needed = false; continue; }
    if (flag == "shared" || flag == "Bshareable") { line.shared = true; continue; }
    if (flag == "r" || flag == "relocatable" || flag == "i") { line.relocatable = true; continue; }
    // Ignored options.
    for (const char* spelled : ignored_options()) {
      std::string_view name = spelled;
      const bool takes_value = name.back() == '=';
      if (takes_value) name.remove_suffix(1);
      if (!name.empty() && name[0] == '-') name.remove_prefix(1);  // listed as "--x": same matching
      std::size_t j = i;
      auto m = detail::match_option(args, j, name, takes_value);
      if (!m.matched) continue;
      if (takes_value && !m.has_value) {
        // "--build-id" is listed both ways: a flag spelling may follow.
        continue;
      }
      for (std::size_t k = i; k <= j; ++k) line.ignored.push_back(args[k]);
      i = j;
      handled = true;
      break;
    }
    if (handled) continue;
    return fail(errc::usage, "unknown option", arg);
  }
  if (group >= 0) return fail(errc::usage, "--start-group without --end-group", "--start-group");
  return line;
}
#endif  // LINKSCOPE_DEFINITIONS

}  // namespace resolve
}  // namespace v0
}  // namespace linkscope
