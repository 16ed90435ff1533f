// linkscope-nm: list symbols like GNU nm 2.40 (byte for byte for the options
// below), for ELF objects, shared libraries, executables and archives of them.
//
//   linkscope-nm [-D] [-p] [-u] [-g] [-A|-o] [-P] [-S] [-s] [-a]
//                [--defined-only] [--with-symbol-versions] [--json] FILE...
//
// Sorting: nm sorts by name with strcoll() in the LC_COLLATE locale (and
// keeps table order between equal names: glibc's qsort is a merge sort).
// Under LC_ALL=C that is strcmp, which the fast path uses; in any other
// collation locale this tool calls strcoll too, so it matches nm there as well.
#include <algorithm>
#include <clocale>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <linkscope/ar/archive.hpp>
#include <linkscope/ar/armap.hpp>
#include <linkscope/core/mapped_file.hpp>
#include <linkscope/elf/nm.hpp>
#include <linkscope/report/json.hpp>

#include "cli/cli.hpp"

namespace {

using namespace linkscope;
constexpr std::string_view tool = "linkscope-nm";

struct options {
  elf::nm_options nm;
  bool no_sort = false;
  bool print_file_name = false;
  bool posix = false;
  bool print_size = false;
  bool print_armap = false;
  bool with_versions = true;
  bool json = false;
  bool use_strcoll = false;
  std::vector<std::string> files;
};

// A large output buffer written with fwrite. Lines are formatted in place:
// room(n) guarantees n free bytes, then the raw writers append without checks.
class output {
 public:
  output() : buffer_(new char[capacity]) {}
  ~output() { flush(); }
  output(const output&) = delete;
  output& operator=(const output&) = delete;

  void room(std::size_t n) {
    if (capacity - size_ < n) flush();
  }
  void put(char c) {
    room(1);
    buffer_[size_++] = c;
  }
  void put(std::string_view s) {
    if (s.size() > capacity - size_) {
      flush();
      if (s.size() > capacity) {
        std::fwrite(s.data(), 1, s.size(), stdout);
        return;
      }
    }
    std::memcpy(buffer_.get() + size_, s.data(), s.size());
    size_ += s.size();
  }
  // Lower-case hex, zero-padded to `width` digits (0: no padding).
  void hex(u64 v, int width) {
    room(16);
    int digits = 1;
    for (u64 t = v >> 4; t != 0; t >>= 4) ++digits;
    if (digits < width) digits = width;
    static constexpr char pairs[] =
        "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
        "202122232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f"
        "404142434445464748494a4b4c4d4e4f505152535455565758595a5b5c5d5e5f"
        "606162636465666768696a6b6c6d6e6f707172737475767778797a7b7c7d7e7f"
        "808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f"
        "a0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3b4b5b6b7b8b9babbbcbdbebf"
        "c0c1c2c3c4c5c6c7c8c9cacbcccdcecfd0d1d2d3d4d5d6d7d8d9dadbdcdddedf"
        "e0e1e2e3e4e5e6e7e8e9eaebecedeeeff0f1f2f3f4f5f6f7f8f9fafbfcfdfeff";
    char* p = buffer_.get() + size_ + digits;
    int left = digits;
    for (; left >= 2; left -= 2) {
      p -= 2;
      std::memcpy(p, pairs + 2 * (v & 0xff), 2);
      v >>= 8;
    }
    if (left == 1) *--p = "0123456789abcdef"[v & 0xf];
    size_ += static_cast<std::size_t>(digits);
  }
  void spaces(int n) {
    room(static_cast<std::size_t>(n));
    std::memset(buffer_.get() + size_, ' ', static_cast<std::size_t>(n));
    size_ += static_cast<std::size_t>(n);
  }
  void flush() {
    if (size_ != 0) std::fwrite(buffer_.get(), 1, size_, stdout);
    size_ = 0;
  }

 private:
  static constexpr std::size_t capacity = 1 << 20;
  std::unique_ptr<char[]> buffer_;
  std::size_t size_ = 0;
};

int usage(std::FILE* out) {
  std::fputs(
      "Usage: linkscope-nm [option(s)] [file(s)]\n"
      " List symbols in [file(s)] (a.out by default), like GNU nm 2.40.\n"
      " The options are:\n"
      "  -a, --debug-syms       Display debugger-only symbols\n"
      "  -A, --print-file-name  Print name of the input file before every symbol\n"
      "  -D, --dynamic          Display dynamic symbols instead of normal symbols\n"
      "      --defined-only     Display only defined symbols\n"
      "  -g, --extern-only      Display only external symbols\n"
      "  -o                     Same as -A\n"
      "  -p, --no-sort          Do not sort the symbols\n"
      "  -P, --portability      Same as --format=posix\n"
      "  -f, --format=FORMAT    Use the output format FORMAT (bsd or posix)\n"
      "  -s, --print-armap      Include index for symbols from archive members\n"
      "  -S, --print-size       Print size of defined symbols\n"
      "      --special-syms     Include special symbols in the output\n"
      "  -u, --undefined-only   Display only undefined symbols\n"
      "      --with-symbol-versions     Display version strings after symbol names (default)\n"
      "      --without-symbol-versions  Do not display version strings\n"
      "      --json             Machine-readable output ({\"version\": 1, ...})\n"
      "  -h, --help             Display this information\n"
      "  -V, --version          Display this program's version number\n",
      out);
  return out == stdout ? cli::exit_ok : cli::exit_error;
}

// One listed object (a file or an archive member).
struct object_context {
  std::string_view file;    // the command-line path
  std::string_view member;  // the archive member name, or empty
  bool in_archive = false;
};

class lister {
 public:
  explicit lister(const options& opts) : opts_(opts) {}

  int run() {
    int status = cli::exit_ok;
    const bool per_file = opts_.files.size() > 1;
    for (const std::string& path : opts_.files) {
      if (!list_file(path, per_file)) status = cli::exit_error;
    }
    out_.flush();
    return status;
  }


 private:
  bool list_file(const std::string& path, bool per_file) {
    auto mapped = mapped_file::open(path);
    if (!mapped) {
      out_.flush();
      cli::report(tool, path, mapped.error());
      return false;
    }
    const byte_view bytes = mapped->bytes();
    if (ar::archive::is_archive(bytes)) return list_archive(path, bytes, per_file);
    if (!elf::is_elf(bytes)) {
      out_.flush();
      cli::report(tool, path, "file format not recognized");
      return false;
    }
    if (!opts_.json) {
      if (per_file && !opts_.print_file_name) {
        if (opts_.posix) {
          out_.put(path);
          out_.put(":\n");
        } else {
          out_.put("\n");
          out_.put(path);
          out_.put(":\n");
        }
      }
    }
    object_context ctx{path, {}, false};
    return list_object(ctx, bytes);
  }

  bool list_archive(const std::string& path, byte_view bytes, bool per_file) {
    auto archive = ar::archive::open(bytes);
    if (!archive) {
      out_.flush();
      cli::report(tool, path, archive.error());
      return false;
    }
    if (!opts_.json && per_file && !opts_.posix) {
      out_.put("\n");
      out_.put(path);
      out_.put(":\n");
    }
    if (opts_.print_armap && !opts_.json) {
      auto map = ar::armap::read(*archive);
      if (!map) {
        out_.flush();
        cli::report(tool, path, map.error());
        return false;
      }
      bool printed = false;
      std::string_view last_name;
      u64 last_offset = ~u64{0};
      auto r = map->for_each([&](const ar::armap_entry& e) -> bool {
        if (!printed) {
          out_.put("\nArchive index:\n");
          printed = true;
        }
        if (e.member_offset != last_offset) {
          auto m = archive->member_at(e.member_offset);
          last_name = m ? m->name : std::string_view();
          last_offset = e.member_offset;
        }
        out_.put(e.name);
        out_.put(" in ");
        out_.put(last_name);
        out_.put("\n");
        return true;
      });
      if (!r) {
        out_.flush();
        cli::report(tool, path, r.error());
        return false;
      }
    }
    bool ok_all = true;
    auto r = archive->for_each_member([&](const ar::member& m) -> bool {
      byte_view data = m.data;
      mapped_file external;
      if (m.external) {
        auto p = ar::thin_member_path(path, m);
        if (!p) {
          ok_all = false;
          return true;
        }
        auto ext = mapped_file::open(*p);
        if (!ext) {
          out_.flush();
          cli::report(tool, *p, ext.error());
          ok_all = false;
          return true;
        }
        external = std::move(*ext);
        data = external.bytes();
      }
      if (!elf::is_elf(data)) {
        out_.flush();
        cli::report(tool, std::string(m.name), "file format not recognized");
        ok_all = false;
        return true;
      }
      if (!opts_.json && !opts_.print_file_name) {
        if (opts_.posix) {
          out_.put(path);
          out_.put("[");
          out_.put(m.name);
          out_.put("]:\n");
        } else {
          out_.put("\n");
          out_.put(m.name);
          out_.put(":\n");
        }
      }
      object_context ctx{path, m.name, true};
      if (!list_object(ctx, data)) ok_all = false;
      return true;
    });
    if (!r) {
      out_.flush();
      cli::report(tool, path, r.error());
      return false;
    }
    return ok_all;
  }

  bool list_object(const object_context& ctx, byte_view bytes) {
    entries_.clear();
    auto listing = elf::nm_symbols(bytes, opts_.nm, entries_);
    std::string display = ctx.in_archive ? std::string(ctx.file) + "(" + std::string(ctx.member) + ")"
                                         : std::string(ctx.file);
    if (!listing) {
      out_.flush();
      cli::report(tool, display, listing.error());
      return false;
    }
    if (listing->no_symbols) {
      out_.flush();
      std::string name(ctx.in_archive ? ctx.member : ctx.file);
      std::fprintf(stderr, "%.*s: %s: no symbols\n", static_cast<int>(tool.size()), tool.data(), name.c_str());
      if (opts_.json) emit_json(ctx, listing->is64);
      return true;
    }
    if (!opts_.no_sort) sort_entries();
    if (opts_.json)
      emit_json(ctx, listing->is64);
    else if (opts_.posix)
      print_posix(ctx);
    else
      print_bsd(ctx, listing->is64);
    return true;
  }

  void sort_entries() {
    if (opts_.use_strcoll) {
      // Names are NUL-terminated in their string tables.
      std::stable_sort(entries_.begin(), entries_.end(), [](const elf::nm_entry& a, const elf::nm_entry& b) {
        if (b.name.empty()) return false;
        if (a.name.empty()) return true;
        return std::strcoll(a.name.data(), b.name.data()) < 0;
      });
    } else {
      // strcmp order, ties in table order. Sort (16-byte big-endian prefix,
      // position) keys: most comparisons of long mangled names end in the
      // prefix; equal prefixes compare the rest of the names.
      keys_.resize(entries_.size());
      for (std::size_t i = 0; i < entries_.size(); ++i) {
        const std::string_view n = entries_[i].name;
        unsigned char bytes[16] = {};
        std::memcpy(bytes, n.data(), n.size() < 16 ? n.size() : 16);
        keys_[i] = key_type{load<u64, std::endian::big>(bytes), load<u64, std::endian::big>(bytes + 8),
                            static_cast<u32>(i)};
      }
      const auto& entries = entries_;
      std::sort(keys_.begin(), keys_.end(), [&entries](const key_type& a, const key_type& b) {
        if (a.high != b.high) return a.high < b.high;
        if (a.low != b.low) return a.low < b.low;
        const std::string_view x = entries[a.position].name, y = entries[b.position].name;
        if (x.size() > 16 || y.size() > 16) {
          const int c = x.substr(x.size() < 16 ? x.size() : 16).compare(y.substr(y.size() < 16 ? y.size() : 16));
          if (c != 0) return c < 0;
        }
        return a.position < b.position;
      });
      sorted_.resize(entries_.size());
      for (std::size_t i = 0; i < keys_.size(); ++i) sorted_[i] = entries_[keys_[i].position];
      entries_.swap(sorted_);
    }
  }

  void put_name(const elf::nm_entry& e) {
    std::string_view name = e.name;
    if (!opts_.with_versions) {
      const std::size_t at = name.find('@');
      if (at != std::string_view::npos) name = name.substr(0, at);
    }
    out_.put(name);
    if (opts_.with_versions && !e.version.empty()) {
      out_.put(e.ver == version_kind::default_ ? "@@" : "@");
      out_.put(e.version);
    }
  }

  void print_bsd(const object_context& ctx, bool is64) {
    const int width = is64 ? 16 : 8;
    for (const elf::nm_entry& e : entries_) {
      if (opts_.print_file_name) {
        if (ctx.in_archive) {
          out_.put(ctx.file);
          out_.put(':');
        }
        out_.put(ctx.in_archive ? ctx.member : ctx.file);
        out_.put(':');
      }
      if (e.undefined()) {
        out_.spaces(width);
      } else {
        out_.hex(e.value, width);
        if (opts_.print_size && e.size != 0) {
          out_.put(' ');
          out_.hex(e.size, width);
        }
      }
      out_.put(' ');
      out_.put(e.type);
      out_.put(' ');
      put_name(e);
      out_.put('\n');
    }
  }

  void print_posix(const object_context& ctx) {
    for (const elf::nm_entry& e : entries_) {
      if (opts_.print_file_name) {
        if (ctx.in_archive) {
          out_.put(ctx.file);
          out_.put('[');
          out_.put(ctx.member);
          out_.put("]: ");
        } else {
          out_.put(ctx.file);
          out_.put(": ");
        }
      }
      put_name(e);
      out_.put(' ');
      out_.put(e.type);
      out_.put(' ');
      if (e.undefined()) {
        out_.spaces(8);
      } else {
        out_.hex(e.value, 0);
        out_.put(' ');
        if (e.size != 0) out_.hex(e.size, 0);
      }
      out_.put('\n');
    }
  }

  void emit_json(const object_context& ctx, bool is64) {
    if (!json_started_) {
      json_.begin_object();
      json_.field("version", 1);
      json_.key("objects").begin_array();
      json_started_ = true;
    }
    json_.begin_object();
    json_.field("file", ctx.file);
    if (ctx.in_archive) json_.field("member", ctx.member);
    json_.field("bits", is64 ? 64 : 32);
    json_.key("symbols").begin_array();
    for (const elf::nm_entry& e : entries_) {
      json_.begin_object();
      json_.field("name", e.name);
      if (!e.version.empty()) {
        json_.field("version", e.version);
        json_.field("default_version", e.ver == version_kind::default_);
      }
      json_.field("type", std::string_view(&e.type, 1));
      json_.field("defined", !e.undefined());
      if (!e.undefined()) {
        json_.key("value").hex(e.value);
        json_.field("size", e.size);
      }
      json_.end_object();
    }
    json_.end_array();
    json_.end_object();
  }

 public:
  void close_json() {
    if (!opts_.json) return;
    if (!json_started_) {
      json_.begin_object();
      json_.field("version", 1);
      json_.key("objects").begin_array();
      json_started_ = true;
    }
    json_.end_array();
    json_.end_object();
    json_.newline();
    json_.flush();
  }

 private:
  const options& opts_;
  output out_;
  struct key_type {
    u64 high;  // name bytes 0..7, big-endian, NUL-padded
    u64 low;   // name bytes 8..15
    u32 position;
  };
  std::vector<elf::nm_entry> entries_;
  std::vector<elf::nm_entry> sorted_;
  std::vector<key_type> keys_;
  json_writer json_{stdout};
  bool json_started_ = false;
};

}  // namespace

int main(int argc, char** argv) {
  options opts;
  bool end_of_options = false;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (end_of_options || arg.empty() || arg[0] != '-' || arg == "-") {
      opts.files.emplace_back(arg);
      continue;
    }
    if (arg == "--") {
      end_of_options = true;
      continue;
    }
    if (arg.substr(0, 2) == "--") {
      if (arg == "--help") return usage(stdout);
      if (arg == "--version") return cli::print_version(tool);
      if (arg == "--dynamic") opts.nm.dynamic = true;
      else if (arg == "--no-sort") opts.no_sort = true;
      else if (arg == "--undefined-only") opts.nm.undefined_only = true, opts.nm.defined_only = false;
      else if (arg == "--extern-only") opts.nm.external_only = true;
      else if (arg == "--print-file-name") opts.print_file_name = true;
      else if (arg == "--portability") opts.posix = true;
      else if (arg == "--print-size") opts.print_size = true;
      else if (arg == "--print-armap") opts.print_armap = true;
      else if (arg == "--defined-only") opts.nm.defined_only = true, opts.nm.undefined_only = false;  // last wins, as nm
      else if (arg == "--debug-syms") opts.nm.debug_syms = true;
      else if (arg == "--special-syms") opts.nm.special_syms = true;
      else if (arg == "--with-symbol-versions") opts.with_versions = true;
      else if (arg == "--without-symbol-versions") opts.with_versions = false;
      else if (arg == "--json") opts.json = true;
      else if (const char* v = cli::option_value(argc, argv, i, "--format")) {
        std::string_view f = v;
        if (f == "posix" || f == "p" || f == "P") opts.posix = true;
        else if (f == "bsd" || f == "b" || f == "B") opts.posix = false;
        else return cli::usage_error(tool, "unsupported output format: " + std::string(f));
      } else {
        return cli::usage_error(tool, "unrecognized option '" + std::string(arg) + "'");
      }
      continue;
    }
    for (std::size_t k = 1; k < arg.size(); ++k) {
      switch (arg[k]) {
        case 'D': opts.nm.dynamic = true; break;
        case 'p': opts.no_sort = true; break;
        case 'u': opts.nm.undefined_only = true, opts.nm.defined_only = false; break;
        case 'g': opts.nm.external_only = true; break;
        case 'A':
        case 'o': opts.print_file_name = true; break;
        case 'P': opts.posix = true; break;
        case 'S': opts.print_size = true; break;
        case 's': opts.print_armap = true; break;
        case 'a': opts.nm.debug_syms = true; break;
        case 'h': return usage(stdout);
        case 'V': return cli::print_version(tool);
        case 'f': {
          std::string_view f = k + 1 < arg.size() ? arg.substr(k + 1) : (i + 1 < argc ? std::string_view(argv[++i]) : "");
          if (f == "posix" || f == "p" || f == "P") opts.posix = true;
          else if (f == "bsd" || f == "b" || f == "B") opts.posix = false;
          else return cli::usage_error(tool, "unsupported output format: " + std::string(f));
          k = arg.size();
          break;
        }
        default: return cli::usage_error(tool, std::string("invalid option -- '") + arg[k] + "'");
      }
    }
  }
  if (opts.files.empty()) opts.files.emplace_back("a.out");
  // nm sorts with strcoll in the user's LC_COLLATE; C and POSIX mean strcmp.
  const char* collate = std::setlocale(LC_COLLATE, "");
  opts.use_strcoll = collate != nullptr && std::strcmp(collate, "C") != 0 && std::strcmp(collate, "POSIX") != 0;
  lister l(opts);
  int status = l.run();
  l.close_json();
  return status;
}
