// The one option parser of the linkscope-* CLIs (issue 15 part 1).
//
// A CLI declares a table of option_spec; the table drives getopt_long's long
// option array, its short option string, the generated --help text and the
// exclusion of output modes. The parsing itself is glibc's getopt_long, the
// parser GNU nm uses, so `--opt=value`, `--opt value`, bundled short flags
// (`-gS`), unique-prefix abbreviations, permutation of operands and `--` behave
// exactly as in nm. Its messages are glibc's own ("unrecognized option
// '--bogus'", "option requires an argument -- 'x'"), printed with argv[0] set
// to the tool name and followed by `Try 'linkscope-X --help' for more
// information.`; the exit code is 2.
//
//   static constexpr cli::option_spec opts[] = {
//     {"json", 0, cli::arg::none, nullptr, "write one JSON document", 1},
//     {"tree", 0, cli::arg::none, nullptr, "print the closure as a tree", 1},
//     {"root", 'r', cli::arg::required, "DIR", "resolve paths under DIR"},
//   };
//   cli::tool_spec spec{"linkscope-x", "[OPTION]... FILE...", "Says things.", opts, "  linkscope-x a.so\n"};
//   cli::parsed p;
//   if (int rc = cli::parse(spec, argc, argv, p); rc >= 0) return rc;
//   if (p.has("json")) ...; for (auto& v : p.values("root")) ...; p.operands
//
// --help and --version are built in. A tool whose classic counterpart also
// takes short forms (nm's -h and -V) lists {"help", 'h', ...} and
// {"version", 'V', ...} in its table: those entries then stand for the
// built-in ones, with their short name and help text.
#pragma once

#include <getopt.h>

#include <cstdio>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#ifndef LINKSCOPE_VERSION_STRING
#define LINKSCOPE_VERSION_STRING "0.1.0"
#endif

namespace linkscope::cli {

enum class arg { none, required, optional };

struct option_spec {
  const char* long_name = nullptr;  // without the dashes; nullptr for a short-only option
  char short_name = 0;              // 0 for a long-only option
  arg argument = arg::none;
  const char* arg_name = nullptr;   // "FILE", shown in --help
  const char* help = "";
  int group = 0;                    // options sharing a non-zero group exclude each other
};

struct tool_spec {
  const char* name;         // "linkscope-ldd"
  const char* usage;        // "[OPTION]... FILE..."
  const char* description;  // one or more lines
  std::span<const option_spec> options;
  const char* examples;     // lines of the EXAMPLES section, each indented two spaces
  const char* finding = nullptr;  // what exit status 1 means for this tool ("duplicates found")
};

struct parsed {
  struct given {
    const option_spec* spec;
    std::string value;
    bool has_value;
  };
  std::vector<given> options;  // in command-line order
  std::vector<std::string> operands;

  static bool same(const option_spec* s, std::string_view key) {
    if (s->long_name && key == s->long_name) return true;
    return key.size() == 1 && s->short_name && key[0] == s->short_name;
  }
  // key is the long name, or the one-character short name.
  [[nodiscard]] bool has(std::string_view key) const {
    for (const auto& g : options)
      if (same(g.spec, key)) return true;
    return false;
  }
  [[nodiscard]] std::size_t count(std::string_view key) const {
    std::size_t n = 0;
    for (const auto& g : options) n += same(g.spec, key) ? 1 : 0;
    return n;
  }
  // The last value given (empty when absent).
  [[nodiscard]] std::string value(std::string_view key, std::string fallback = {}) const {
    for (auto it = options.rbegin(); it != options.rend(); ++it)
      if (same(it->spec, key) && it->has_value) return it->value;
    return fallback;
  }
  [[nodiscard]] std::vector<std::string> values(std::string_view key) const {
    std::vector<std::string> out;
    for (const auto& g : options)
      if (same(g.spec, key) && g.has_value) out.push_back(g.value);
    return out;
  }
};

namespace detail {
inline std::string option_display(const option_spec& s) {
  if (s.long_name) return std::string("--") + s.long_name;
  return std::string("-") + s.short_name;
}

// A table entry named "help" or "version" replaces the built-in option.
inline bool is_builtin(const option_spec& s, const char* name) {
  return s.long_name != nullptr && std::strcmp(s.long_name, name) == 0;
}
inline bool table_has(const tool_spec& t, const char* name) {
  for (const auto& o : t.options)
    if (is_builtin(o, name)) return true;
  return false;
}
}  // namespace detail

inline void print_try(const tool_spec& t) { std::fprintf(stderr, "Try '%s --help' for more information.\n", t.name); }

namespace detail {
// Appends `text` to `out` in lines of at most `width` columns, every line
// after the first indented by `indent` spaces (words longer than a line stay whole).
inline void wrap(std::string& out, std::string_view text, std::size_t column, std::size_t indent, std::size_t width = 79) {
  bool first_word = true;
  while (!text.empty()) {
    const std::size_t space = text.find(' ');
    const std::string_view word = text.substr(0, space);
    text = space == std::string_view::npos ? std::string_view() : text.substr(space + 1);
    if (word.empty()) continue;
    if (!first_word && column + 1 + word.size() > width) {
      out += '\n';
      out.append(indent, ' ');
      column = indent;
    } else if (!first_word) {
      out += ' ';
      ++column;
    }
    out.append(word);
    column += word.size();
    first_word = false;
  }
}
}  // namespace detail

// The --help text, laid out as GNU tools do so that help2man turns it into a
// man page: "Usage:" (SYNOPSIS), the description (its first line is the
// summary the man page's NAME shows), "Options:" (OPTIONS, each help text
// wrapped under column 28), "Exit status:" and "Examples:" (EXAMPLES, each
// command shown as "  $ linkscope-X ...", which help2man sets verbatim).
inline std::string help_text(const tool_spec& t) {
  constexpr std::size_t column = 28;
  std::string out = std::string("Usage: ") + t.name + " " + t.usage + "\n" + t.description + "\n\nOptions:\n";
  auto line = [&](char s, const char* l, arg a, const char* an, const char* help) {
    std::string left = "  ";
    left += s ? std::string("-") + s + (l ? ", " : "") : std::string(l ? "    " : "");
    if (l) left += std::string("--") + l;
    if (a == arg::required) left += std::string(l ? "=" : " ") + (an ? an : "ARG");
    if (a == arg::optional) left += std::string(l ? "[=" : "[") + (an ? an : "ARG") + "]";
    if (left.size() + 2 <= column) left.resize(column, ' ');
    else left += "\n" + std::string(column, ' ');
    out += left;
    detail::wrap(out, help, column, column);
    out += '\n';
  };
  for (const auto& o : t.options) line(o.short_name, o.long_name, o.argument, o.arg_name, o.help);
  if (!detail::table_has(t, "help")) line(0, "help", arg::none, nullptr, "display this help and exit");
  if (!detail::table_has(t, "version")) line(0, "version", arg::none, nullptr, "output version information and exit");
  out += "\nExit status:\n  0   ok\n  1   a finding";
  if (t.finding != nullptr) {
    out += " (";
    detail::wrap(out, t.finding, 17, 6);
    out += ')';
  }
  out += "\n  2   a usage or input error\n";
  out += "\nExamples:\n";
  // Each command line gets help2man's "$ " marker; other lines stay as written.
  const std::string command = std::string("  ") + t.name;
  std::string_view ex = t.examples;
  while (!ex.empty()) {
    const std::size_t nl = ex.find('\n');
    const std::string_view l = ex.substr(0, nl);
    ex = nl == std::string_view::npos ? std::string_view() : ex.substr(nl + 1);
    if (l.substr(0, command.size()) == command) out.append("  $ ").append(l.substr(2));
    else out.append(l);
    out += '\n';
  }
  return out;
}

// Parses argv. Returns -1 when the tool should go on, otherwise the exit code
// (0 after --help/--version, 2 after a usage error, already reported).
inline int parse(const tool_spec& t, int argc, char** argv, parsed& out) {
  constexpr int help_val = 0x10000, version_val = 0x10001, long_base = 0x1000;
  std::vector<option> longs;
  std::string shorts;
  for (std::size_t i = 0; i < t.options.size(); ++i) {
    const auto& o = t.options[i];
    const int has = o.argument == arg::none ? no_argument : o.argument == arg::required ? required_argument : optional_argument;
    if (o.long_name) longs.push_back(option{o.long_name, has, nullptr, o.short_name ? o.short_name : long_base + static_cast<int>(i)});
    if (o.short_name) {
      shorts += o.short_name;
      if (o.argument != arg::none) shorts += ':';
      if (o.argument == arg::optional) shorts += ':';
    }
  }
  if (!detail::table_has(t, "help")) longs.push_back(option{"help", no_argument, nullptr, help_val});
  if (!detail::table_has(t, "version")) longs.push_back(option{"version", no_argument, nullptr, version_val});
  longs.push_back(option{nullptr, 0, nullptr, 0});

  // getopt_long permutes its argv and names the program by argv[0].
  std::vector<char*> args(argv, argv + argc);
  std::string name = t.name;
  if (args.empty()) args.push_back(name.data());
  else args[0] = name.data();
  args.push_back(nullptr);
  const int n = static_cast<int>(args.size()) - 1;

  optind = 0;  // glibc: full re-initialisation
  opterr = 1;
  std::vector<const option_spec*> group_first;
  for (;;) {
    const int c = getopt_long(n, args.data(), shorts.c_str(), longs.data(), nullptr);
    if (c == -1) break;
    if (c == '?' || c == ':') {
      print_try(t);
      return 2;
    }
    if (c == help_val) {
      std::fputs(help_text(t).c_str(), stdout);
      return 0;
    }
    if (c == version_val) {
      std::printf("%s (linkscope) %s\n", t.name, LINKSCOPE_VERSION_STRING);
      return 0;
    }
    const option_spec* spec = nullptr;
    if (c >= long_base && c < long_base + static_cast<int>(t.options.size())) spec = &t.options[static_cast<std::size_t>(c - long_base)];
    else
      for (const auto& o : t.options)
        if (o.short_name && o.short_name == c) spec = &o;
    if (!spec) {
      print_try(t);
      return 2;
    }
    if (detail::is_builtin(*spec, "help")) {
      std::fputs(help_text(t).c_str(), stdout);
      return 0;
    }
    if (detail::is_builtin(*spec, "version")) {
      std::printf("%s (linkscope) %s\n", t.name, LINKSCOPE_VERSION_STRING);
      return 0;
    }
    if (spec->group) {
      for (const auto* g : group_first)
        if (g->group == spec->group && g != spec) {
          std::fprintf(stderr, "%s: options '%s' and '%s' exclude each other\n", t.name, detail::option_display(*g).c_str(),
                       detail::option_display(*spec).c_str());
          print_try(t);
          return 2;
        }
      group_first.push_back(spec);
    }
    out.options.push_back(parsed::given{spec, optarg ? std::string(optarg) : std::string(), optarg != nullptr});
  }
  for (int i = optind; i < n; ++i) out.operands.emplace_back(args[static_cast<std::size_t>(i)]);
  return -1;
}

// For a tool whose operands are another program's command line
// (linkscope-why takes the linker's arguments): only the table's long options
// spelled in full (--name, --name=value, or --name value for an option with a
// required argument), --help, --version and `-help` (ld.lld's spelling) are
// the tool's own, parsed by parse() with its messages and exclusions; every
// other argument, whatever its dashes, is an operand, kept in order. No
// abbreviations and no short options: the other program owns those.
inline int parse_passthrough(const tool_spec& t, int argc, char** argv, parsed& out) {
  std::vector<char*> own;
  std::vector<std::string> passed;
  static char help_spelling[] = "--help";
  own.push_back(argc > 0 ? argv[0] : nullptr);
  auto own_option = [&](std::string_view a, const option_spec*& spec) {
    spec = nullptr;
    if (a.size() < 3 || a.substr(0, 2) != "--") return false;
    const std::string_view name = a.substr(2, a.find('=') == std::string_view::npos ? std::string_view::npos : a.find('=') - 2);
    if (name == "help" || name == "version") return true;
    for (const auto& o : t.options)
      if (o.long_name && name == o.long_name) {
        spec = &o;
        return true;
      }
    return false;
  };
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    const option_spec* spec = nullptr;
    if (a == "-help") {
      own.push_back(help_spelling);
    } else if (own_option(a, spec)) {
      own.push_back(argv[i]);
      // "--name value": the value travels with its option.
      if (spec && spec->argument == arg::required && a.find('=') == std::string_view::npos && i + 1 < argc) own.push_back(argv[++i]);
    } else {
      passed.emplace_back(a);
    }
  }
  if (int rc = parse(t, static_cast<int>(own.size()), own.data(), out); rc >= 0) return rc;
  out.operands.insert(out.operands.begin(), passed.begin(), passed.end());
  return -1;
}

// A usage error found after parsing (a missing operand ...): message + Try line, exit 2.
inline int usage_error(const tool_spec& t, const char* message) {
  std::fprintf(stderr, "%s: %s\n", t.name, message);
  print_try(t);
  return 2;
}

}  // namespace linkscope::cli
