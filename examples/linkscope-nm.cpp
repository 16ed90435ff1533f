// linkscope-nm: list symbols like GNU nm 2.40 (byte for byte for the options
// below), for ELF objects, shared libraries, executables and archives of them;
// Mach-O files (thin or universal) list as llvm-nm lists them (macho/nm.hpp);
// COFF objects, PE images, import libraries and archives of them list as GNU
// nm 2.40 (binutils-multiarch) lists them (coff/nm.hpp).
//
//   linkscope-nm [-D] [-p] [-u] [-g] [-A|-o] [-P] [-S] [-s] [-a]
//                [--defined-only] [--with-symbol-versions] [--json] FILE...
//
// Sorting: nm sorts by name with strcoll() in the LC_COLLATE locale (and
// keeps table order between equal names: glibc's qsort is a merge sort).
// Under LC_ALL=C that is strcmp, which the fast path uses; so is glibc's
// C.UTF-8 (no collation rules: strcoll is strcmp). In any other collation
// locale this tool calls strcoll too, so it matches nm there as well.
#include <algorithm>
#include <bit>
#include <clocale>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>
#if defined(__GLIBC__)
#include <langinfo.h>
#endif

#include <linkscope/ar/archive.hpp>
#include <linkscope/ar/armap.hpp>
#include <linkscope/coff/nm.hpp>
#include <linkscope/core/mapped_file.hpp>
#include <linkscope/elf/nm.hpp>
#include <linkscope/macho/nm.hpp>
#include <linkscope/report/json.hpp>
#include <linkscope/report/nm.hpp>
#include <linkscope/resolve/file_format.hpp>
#include <linkscope/symbols/demangle.hpp>

#include "cli/cli.hpp"
#include "cli/options.hpp"

namespace {

using namespace linkscope;
constexpr std::string_view tool = "linkscope-nm";

// The targets binutils-multiarch 2.40's nm names under "supported targets".
// Only the generic ELF ones change a listing (elf::nm_options::target); the
// others name a backend linkscope-nm already emulates, or a format it does
// not read.
bool known_target(std::string_view name) {
  static constexpr std::string_view targets[] = {
      "elf64-x86-64", "elf32-i386", "elf32-iamcu", "elf32-x86-64", "pei-i386", "pe-x86-64", "pei-x86-64",
      "elf64-little", "elf64-big", "elf32-little", "elf32-big", "elf64-littleaarch64", "elf64-bigaarch64",
      "elf32-littleaarch64", "elf32-bigaarch64", "elf32-littlearm", "elf32-bigarm", "pei-aarch64-little",
      "pe-aarch64-little", "elf64-alpha", "ecoff-littlealpha", "elf32-littlearm-fdpic", "elf32-bigarm-fdpic",
      "elf32-hppa-linux", "elf32-hppa", "elf64-ia64-little", "elf64-ia64-big", "pei-ia64", "elf32-m32r-linux",
      "elf32-m32rle-linux", "elf32-m68k", "elf32-tradbigmips", "elf32-tradlittlemips", "ecoff-bigmips",
      "ecoff-littlemips", "elf32-ntradbigmips", "elf64-tradbigmips", "elf32-ntradlittlemips", "elf64-tradlittlemips",
      "elf32-powerpc", "aixcoff-rs6000", "elf32-powerpcle", "ppcboot", "elf64-powerpc", "elf64-powerpcle",
      "aixcoff64-rs6000", "aix5coff64-rs6000", "elf64-littleriscv", "elf32-littleriscv", "elf32-bigriscv",
      "elf64-bigriscv", "elf32-s390", "elf64-s390", "elf32-sh-linux", "elf32-shbig-linux", "elf32-sh-fdpic",
      "elf32-shbig-fdpic", "elf32-sparc", "elf64-sparc", "pe-bigobj-x86-64", "pe-i386", "pdb", "srec",
      "symbolsrec", "verilog", "tekhex", "binary", "ihex", "plugin"};
  for (std::string_view t : targets)
    if (t == name) return true;
  return false;
}

struct options {
  elf::nm_options nm;
  bool no_sort = false;
  bool print_file_name = false;
  bool posix = false;
  bool print_size = false;
  bool print_armap = false;
  bool with_versions = true;
  bool json = false;
  bool demangle = false;  // -C, --demangle
  bool use_strcoll = false;
  ar::thin_options thin;  // --thin-confine
  std::vector<std::string> archs;  // --arch=ARCH[,ARCH]|all: the slices of a universal Mach-O file (llvm-nm's option)
  // Mach-O only (llvm-nm's options; GNU nm's ELF listing does not take them):
  macho::nm_format format = macho::nm_format::bsd;  // -P/-f, -m, -j: the last one given
  bool numeric_sort = false;  // -n
  bool reverse_sort = false;  // -r
  std::string macho_only;     // the first Mach-O-only option given, for the ELF error
  // COFF (GNU nm's own options, which the ELF and Mach-O listings do not take):
  coff::nm_format coff_format = coff::nm_format::bsd;  // -P/-f, -j: the last one given
  bool size_sort = false;     // --size-sort
  int radix = 16;             // -t d|o|x
  std::string coff_only;      // the first COFF-only option given, for the ELF and Mach-O error
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
    if (!s.empty()) std::memcpy(buffer_.get() + size_, s.data(), s.size());  // an empty view may be null
    size_ += s.size();
  }
  // Lower-case hex, zero-padded to `width` digits (0: no padding).
  void hex(u64 v, int width) {
    room(16);
    char* p = buffer_.get() + size_;
    if (width == 16) {  // 64-bit objects: always 16 digits
      hex16(p, v);
      size_ += 16;
      return;
    }
    int digits = v == 0 ? 1 : (64 - std::countl_zero(v) + 3) / 4;
    if (digits < width) digits = width;
    char digits16[16];
    hex8(digits16, static_cast<u32>(v >> 32));
    hex8(digits16 + 8, static_cast<u32>(v));
    std::memcpy(p, digits16 + 16 - digits, static_cast<std::size_t>(digits));
    size_ += static_cast<std::size_t>(digits);
  }
  static void hex16(char* p, u64 v) noexcept {
    hex8(p, static_cast<u32>(v >> 32));
    hex8(p + 8, static_cast<u32>(v));
  }
  static u64 bswap(u64 x) noexcept {
#if defined(__GNUC__) || defined(__clang__)
    return __builtin_bswap64(x);
#else
    u64 r = 0;
    for (int i = 0; i < 8; ++i, x >>= 8) r = (r << 8) | (x & 0xff);
    return r;
#endif
  }
  // 8 lower-case hex digits of v: spread the nibbles into bytes, then map
  // 0..9 to '0'..'9' and 10..15 to 'a'..'f' in all eight bytes at once.
  static void hex8(char* p, u32 v) noexcept {
    u64 x = v;
    x = (x | (x << 16)) & 0x0000ffff0000ffffull;
    x = (x | (x << 8)) & 0x00ff00ff00ff00ffull;
    x = (x | (x << 4)) & 0x0f0f0f0f0f0f0f0full;  // byte i holds nibble i (from the low end)
    const u64 letters = ((x + 0x0606060606060606ull) >> 4) & 0x0101010101010101ull;  // 1 where nibble >= 10
    x += 0x3030303030303030ull + letters * ('a' - '0' - 10);
    if constexpr (std::endian::native == std::endian::little) x = bswap(x);  // most significant digit first
    std::memcpy(p, &x, 8);
  }
  // n bytes to fill in place (n <= capacity).
  char* claim(std::size_t n) {
    room(n);
    char* p = buffer_.get() + size_;
    size_ += n;
    return p;
  }
  static constexpr std::size_t max_claim = std::size_t{1} << 15;
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
  static constexpr std::size_t capacity = 1 << 16;
  std::unique_ptr<char[]> buffer_;
  std::size_t size_ = 0;
};

// The options, in GNU nm 2.40's --help order; the same letters and long names.
constexpr cli::option_spec option_table[] = {
    {"debug-syms", 'a', cli::arg::none, nullptr, "Display debugger-only symbols"},
    {"print-file-name", 'A', cli::arg::none, nullptr, "Print name of the input file before every symbol"},
    {"demangle", 'C', cli::arg::none, nullptr, "Decode low-level symbol names into user-level names"},
    {"no-demangle", 0, cli::arg::none, nullptr, "Do not demangle low-level symbol names"},
    {"dynamic", 'D', cli::arg::none, nullptr, "Display dynamic symbols instead of normal symbols"},
    {"format", 'f', cli::arg::required, "FORMAT",
     "Use the output format FORMAT (bsd or posix; Mach-O also darwin, just-symbols)"},
    {"extern-only", 'g', cli::arg::none, nullptr, "Display only external symbols"},
    {"just-symbols", 'j', cli::arg::none, nullptr, "Mach-O: print the symbol names only (as llvm-nm -j)"},
    {nullptr, 'm', cli::arg::none, nullptr, "Mach-O: print the type spelled out (llvm-nm --format=darwin)"},
    {"numeric-sort", 'n', cli::arg::none, nullptr, "Mach-O: sort by address, the undefined first (as llvm-nm)"},
    {nullptr, 'o', cli::arg::none, nullptr, "Same as -A"},
    {"no-sort", 'p', cli::arg::none, nullptr, "Do not sort the symbols"},
    {"portability", 'P', cli::arg::none, nullptr, "Same as --format=posix"},
    {"reverse-sort", 'r', cli::arg::none, nullptr, "Mach-O: reverse the sort order (as llvm-nm)"},
    {"print-size", 'S', cli::arg::none, nullptr, "Print size of defined symbols"},
    {"print-armap", 's', cli::arg::none, nullptr, "Include index for symbols from archive members"},
    {"special-syms", 0, cli::arg::none, nullptr, "Include special symbols in the output"},
    {"target", 0, cli::arg::required, "BFDNAME",
     "Specify the target object format as BFDNAME (elf32-little, elf32-big, elf64-little, elf64-big: the generic ELF "
     "backend for the files of that class and byte order, which shows mapping symbols and local labels)"},
    {"undefined-only", 'u', cli::arg::none, nullptr, "Display only undefined symbols"},
    {"defined-only", 'U', cli::arg::none, nullptr, "Display only defined symbols"},
    {"with-symbol-versions", 0, cli::arg::none, nullptr, "Display version strings after symbol names (default)"},
    {"without-symbol-versions", 0, cli::arg::none, nullptr, "Do not display version strings"},
    {"arch", 0, cli::arg::required, "ARCH|all", "Mach-O universal files: the slices to list (as llvm-nm; repeatable)"},
    {"size-sort", 0, cli::arg::none, nullptr, "COFF/PE: sort symbols by size (the size nm infers)"},
    {"radix", 't', cli::arg::required, "RADIX", "COFF/PE: radix (d, o, x) for printing symbol values"},
    {nullptr, 'v', cli::arg::none, nullptr, "Same as -n"},
    {"json", 0, cli::arg::none, nullptr, "Machine-readable output ({\"version\": 1, ...})"},
    {"thin-confine", 0, cli::arg::none, nullptr,
     "Refuse thin-archive member paths that are absolute or leave the archive's folder"},
    {"help", 'h', cli::arg::none, nullptr, "Display this information"},
    {"version", 'V', cli::arg::none, nullptr, "Display this program's version number"},
};

constexpr cli::tool_spec spec{
    "linkscope-nm", "[OPTION]... [FILE]...",
    "List symbols in FILEs (a.out by default), like GNU nm 2.40.\n"
    "ELF objects, shared libraries, executables and archives of them list byte for\n"
    "byte as GNU nm lists them; Mach-O files (thin or universal) as llvm-nm does.\n"
    "Options that contradict each other take the last one given, as in nm\n"
    "(-u and --defined-only, -C and --no-demangle, -P and --format).",
    option_table,
    "  linkscope-nm -D /usr/lib/x86_64-linux-gnu/libc.so.6\n"
    "  linkscope-nm -C -g --defined-only libfoo.a\n"
    "  linkscope-nm -A -P -S *.o\n"
    "  linkscope-nm --json -D libz.so.1\n"};

// One listed object (a file or an archive member).
struct object_context {
  std::string_view file;    // the command-line path
  std::string_view member;  // the archive member name, or empty
  bool in_archive = false;
};

class lister {
  struct key_type {
    u64 word;      // name bytes [depth / 8 * 8, + 8), big-endian, NUL-padded (key_at)
    u32 position;  // index into entries_
    u32 unused;
  };
  struct sort_range {
    std::size_t begin, end;  // keys_[begin, end) share their first `depth` name bytes
    std::size_t depth;
  };
 public:
  explicit lister(const options& opts) : opts_(opts) {}

  int run() {
    int status = cli::exit_ok;
    const bool per_file = opts_.files.size() > 1;
    if (opts_.json) report::begin_nm_document(json_);
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
      if (opts_.json) report::write_nm_error(json_, path, {}, mapped.error());
      return false;
    }
    const byte_view bytes = mapped->bytes();
    // One sniff (resolve/file_format.hpp); an archive by its first member.
    const file_format format = sniff_format(bytes);
    const file_format members = format == file_format::archive ? archive_members(bytes) : file_format::unknown;
    if (format == file_format::macho || format == file_format::macho_universal || members == file_format::macho)
      return list_macho(path, bytes, per_file);
    // COFF, PE images of a machine GNU nm reads, and import libraries.
    if (format == file_format::coff || (format == file_format::pe && coff::is_nm_coff(bytes)) ||
        members == file_format::coff)
      return list_coff(path, bytes, per_file);
    if (!opts_.coff_only.empty()) {
      out_.flush();
      cli::report(tool, path, "--size-sort, -t and --format=sysv are supported for COFF and PE files only");
      return false;
    }
    if (!opts_.macho_only.empty()) {
      // GNU nm's ELF listing here knows no llvm-nm option: say so rather than ignore it.
      out_.flush();
      cli::report(tool, path, "-j, -m, -n, -r and --format=darwin|just-symbols are supported for Mach-O files only");
      return false;
    }
    if (format == file_format::archive) return list_archive(path, bytes, per_file);
    if (format != file_format::elf) {
      out_.flush();
      cli::report(tool, path, "file format not recognized");
      if (opts_.json)
        report::write_nm_error(json_, path, {}, make_error(errc::bad_magic, no_offset, "file format not recognized"));
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

  // The selection, order and decoration options that the Mach-O and COFF
  // listings take alike (each also has its own format and extras).
  template <class Options>
  void common_options(Options& options, bool per_file) const {
    options.undefined_only = opts_.nm.undefined_only;
    options.external_only = opts_.nm.external_only;
    options.defined_only = opts_.nm.defined_only;
    options.debug_syms = opts_.nm.debug_syms;
    options.dynamic = opts_.nm.dynamic;
    options.no_sort = opts_.no_sort;
    options.numeric_sort = opts_.numeric_sort;
    options.reverse_sort = opts_.reverse_sort;
    options.print_file_name = opts_.print_file_name;
    options.print_size = opts_.print_size;
    options.demangle = opts_.demangle;
    options.print_armap = opts_.print_armap;
    options.multiple_files = per_file;
  }

  // Mach-O (thin, universal, or a darwin archive of objects) lists as llvm-nm
  // does, nm on macOS (macho/nm.hpp).
  // Out of line and cold: the ELF listing of the same unit stays inlined as it was.
#if defined(__GNUC__)
  __attribute__((cold, noinline))
#endif
  bool list_macho(const std::string& path, byte_view bytes, bool per_file) {
    if (!opts_.coff_only.empty()) {
      // llvm-nm-14's Mach-O listing (the oracle there) has no such option.
      out_.flush();
      cli::report(tool, path, "--size-sort, -t and --format=sysv are supported for COFF and PE files only");
      return false;
    }
    macho::nm_options options;
    options.format = opts_.format;
    common_options(options, per_file);
    for (const std::string& a : opts_.archs) options.archs.push_back(a);
    if (opts_.json) {
      std::vector<macho::nm_object> objects;
      std::vector<macho::nm_problem> problems;
      auto listed = macho::nm_file_objects(bytes, path, options, objects, &problems);
      for (const auto& object : objects) report::write_nm_object(json_, object);
      for (const auto& problem : problems) cli::report(tool, problem.where, problem.what);
      if (!listed) {
        cli::report(tool, path, listed.error());
        report::write_nm_error(json_, path, {}, listed.error());
        return false;
      }
      return problems.empty();
    }
    if (opts_.print_size && !size_warned_) {
      out_.flush();
      cli::warn(tool, {}, "sizes with --print-size for Mach-O files are always zero.");
      size_warned_ = true;
    }
    std::string text;
    std::vector<macho::nm_problem> problems;
    auto listed = macho::nm_file(bytes, path, options, text, &problems);
    out_.put(text);
    out_.flush();
    for (const auto& problem : problems) cli::report(tool, problem.where, problem.what);
    if (!listed) {
      cli::report(tool, path, listed.error());
      return false;
    }
    return problems.empty();
  }

  // COFF objects, PE images, import libraries and archives of them list as
  // GNU nm does (coff/nm.hpp). Out of line and cold, as list_macho.
#if defined(__GNUC__)
  __attribute__((cold, noinline))
#endif
  bool list_coff(const std::string& path, byte_view bytes, bool per_file) {
    coff::nm_options options;
    options.format = opts_.coff_format;
    common_options(options, per_file);
    options.size_sort = opts_.size_sort;
    options.use_strcoll = opts_.use_strcoll;
    options.radix = opts_.radix;
    std::vector<coff::nm_problem> problems;
    bool ok_all = true;
    auto report_problems = [&] {
      for (const auto& problem : problems) {
        if (!problem.fatal) {
          std::fprintf(stderr, "%.*s: %s: %s\n", static_cast<int>(tool.size()), tool.data(), problem.where.c_str(),
                       problem.what.message);
          continue;
        }
        cli::report(tool, problem.where, problem.what);
        ok_all = false;
      }
    };
    if (opts_.json) {
      std::vector<coff::nm_object> objects;
      auto listed = coff::nm_file_objects(bytes, path, options, objects, &problems);
      for (const auto& object : objects) report::write_nm_object(json_, object);
      report_problems();
      if (!listed) {
        report::write_nm_error(json_, path, {}, listed.error());
        cli::report(tool, path, listed.error());
        return false;
      }
      return ok_all;
    }
    std::string text;
    auto listed = coff::nm_file(bytes, path, options, text, &problems);
    out_.put(text);
    out_.flush();
    report_problems();
    if (!listed) {
      cli::report(tool, path, listed.error());
      return false;
    }
    return ok_all;
  }

  bool list_archive(const std::string& path, byte_view bytes, bool per_file) {
    auto archive = ar::archive::open(bytes);
    if (!archive) {
      out_.flush();
      cli::report(tool, path, archive.error());
      if (opts_.json) report::write_nm_error(json_, path, {}, archive.error());
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
      // GNU nm names a thin archive's member by the path it opens.
      std::string thin_path;
      std::string_view shown = m.name;
      if (m.external) {
        auto p = ar::thin_member_path(path, m, opts_.thin);
        if (!p) {
          out_.flush();
          cli::report(tool, path + "(" + std::string(m.name) + ")", p.error());
          if (opts_.json) report::write_nm_error(json_, path, m.name, p.error());
          ok_all = false;
          return true;
        }
        auto ext = mapped_file::open(*p);
        if (!ext) {
          out_.flush();
          cli::report(tool, *p, ext.error());
          if (opts_.json) report::write_nm_error(json_, path, m.name, ext.error());
          ok_all = false;
          return true;
        }
        external = std::move(*ext);
        data = external.bytes();
        thin_path = std::move(*p);
        shown = thin_path;
      }
      if (!elf::is_elf(data)) {
        out_.flush();
        cli::report(tool, std::string(shown), "file format not recognized");
        if (opts_.json)
          report::write_nm_error(json_, path, shown, make_error(errc::bad_magic, no_offset, "file format not recognized"));
        ok_all = false;
        return true;
      }
      if (!opts_.json && !opts_.print_file_name) {
        if (opts_.posix) {
          out_.put(path);
          out_.put("[");
          out_.put(shown);
          out_.put("]:\n");
        } else {
          out_.put("\n");
          out_.put(shown);
          out_.put(":\n");
        }
      }
      object_context ctx{path, shown, true};
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
    sorted_ = false;
    auto listing = elf::nm_symbols(bytes, opts_.nm, entries_);
    const std::string_view member = ctx.in_archive ? ctx.member : std::string_view();
    if (!listing) {
      out_.flush();
      cli::report(tool, ctx.in_archive ? report::member_label(ctx.file, ctx.member) : std::string(ctx.file),
                  listing.error());
      if (opts_.json) report::write_nm_error(json_, ctx.file, member, listing.error());
      return false;
    }
    if (listing->no_symbols) {
      out_.flush();
      std::string name(ctx.in_archive ? ctx.member : ctx.file);
      std::fprintf(stderr, "%.*s: %s: no symbols\n", static_cast<int>(tool.size()), tool.data(), name.c_str());
      if (opts_.json) report::write_nm_object(json_, ctx.file, member, *listing, entries_);
      return true;
    }
    if (!opts_.no_sort) sort_entries();
    if (opts_.json)
      report::write_nm_object(json_, ctx.file, member, *listing, listed());
    else if (opts_.posix)
      print_posix(ctx);
    else
      print_bsd(ctx, listing->is64);
    return true;
  }

  // The entries in listing order (--json): entries_ itself when not sorted.
  std::span<const elf::nm_entry> listed() {
    if (!sorted_) return entries_;
    ordered_.clear();
    ordered_.reserve(entries_.size());
    for (std::size_t k = 0; k < entries_.size(); ++k) ordered_.push_back(entry(k));
    return ordered_;
  }

  // The listing order: positions into entries_ (identity when not sorted).
  const elf::nm_entry& entry(std::size_t k) const noexcept {
    return sorted_ ? entries_[keys_[k].position] : entries_[k];
  }
  // In sorted order the entries and their names are scattered: fetch the
  // entry 16 lines ahead and its name 8 lines ahead, so that the misses overlap.
  void prefetch_ahead(std::size_t k) const noexcept {
    if (!sorted_) return;
    if (k + 16 < keys_.size()) prefetch(&entries_[keys_[k + 16].position]);
    if (k + 8 < keys_.size()) {
      const std::string_view name = entries_[keys_[k + 8].position].name;
      if (!name.empty()) prefetch(name.data());
    }
  }

  // 8 name bytes from `depth`, big-endian, NUL-padded: comparing keys as
  // integers compares those bytes as strcmp does (names hold no NUL).
  static u64 key_at(std::string_view name, std::size_t depth) noexcept {
    if (name.size() >= depth + 8) return load<u64, std::endian::big>(reinterpret_cast<const unsigned char*>(name.data() + depth));
    unsigned char bytes[8] = {};
    if (name.size() > depth) std::memcpy(bytes, name.data() + depth, name.size() - depth);
    return load<u64, std::endian::big>(bytes);
  }

  void sort_entries() {
    sorted_ = true;
    const std::size_t n = entries_.size();
    if (keys_.capacity() < n) {
      keys_.reserve(n);
      elf::detail::populate_for_write(keys_.data(), n * sizeof(key_type));
    }
    keys_.resize(n);
    constexpr std::size_t ahead = 8;
    for (std::size_t i = 0; i < n; ++i) {
      if (i + ahead < n && !entries_[i + ahead].name.empty()) prefetch(entries_[i + ahead].name.data());
      keys_[i] = key_type{key_at(entries_[i].name, 0), static_cast<u32>(i), 0};
    }
    if (opts_.use_strcoll) {
      // Names are NUL-terminated in their string tables.
      const auto& entries = entries_;
      std::stable_sort(keys_.begin(), keys_.end(), [&entries](const key_type& ka, const key_type& kb) {
        const std::string_view a = entries[ka.position].name, b = entries[kb.position].name;
        if (b.empty()) return false;
        if (a.empty()) return true;
        return std::strcoll(a.data(), b.data()) < 0;
      });
      return;
    }
    sort_bytewise();
  }

  // strcmp order, ties in table order (nm's merge sort is stable).
  //
  // An MSD radix sort over the name bytes. Keys carry 8 name bytes (the
  // word at depth / 8 * 8) and the entry's position; a range of keys shares
  // its first `depth` bytes. A range is distributed by byte `depth` with a
  // stable counting pass (so every range stays in table order, which is the
  // tie order); a byte all keys share costs one counting pass and no moves
  // (long common prefixes such as "_ZN2at6native"); a NUL byte ends the
  // names, so that bucket is done. Small ranges are sorted by (word,
  // position) and runs of equal words refined at the next word. Names are
  // read once per 8 bytes of depth, with prefetch: they are scattered over
  // the string table.
  void sort_bytewise() {
    const std::size_t n = keys_.size();
    if (buffer_.capacity() < n) {
      buffer_.reserve(n);
      elf::detail::populate_for_write(buffer_.data(), n * sizeof(key_type));
    }
    buffer_.resize(n);
    std::vector<sort_range>& work = work_;
    work.clear();
    if (n > 1) work.push_back({0, n, 0});
    while (!work.empty()) {
      sort_range r = work.back();
      work.pop_back();
      key_type* first = keys_.data() + r.begin;
      const std::size_t size = r.end - r.begin;
      if (r.depth % 8 == 0 && r.depth != 0) load_words(first, size, r.depth);
      if (size <= 64) {
        sort_small(r);
        continue;
      }
      for (;;) {
        // Skip the bytes every key shares: the first set bit of the OR of
        // all differences from the first word.
        const u64 w0 = first[0].word;
        u64 diff = 0;
        for (std::size_t i = 1; i < size; ++i) diff |= first[i].word ^ w0;
        if (diff == 0) {
          if ((w0 & 0xff) == 0) break;  // every name ends in this word: all equal, in table order
          r.depth = (r.depth / 8 + 1) * 8;
          load_words(first, size, r.depth);
          continue;
        }
        r.depth = r.depth / 8 * 8 + static_cast<std::size_t>(std::countl_zero(diff)) / 8;
        const unsigned shift = 56 - 8 * static_cast<unsigned>(r.depth % 8);
        std::size_t count[256] = {};
        for (std::size_t i = 0; i < size; ++i) ++count[(first[i].word >> shift) & 0xff];
        std::size_t start[256];
        std::size_t total = 0;
        for (std::size_t b = 0; b < 256; ++b) {
          start[b] = total;
          total += count[b];
        }
        key_type* out = buffer_.data();
        for (std::size_t i = 0; i < size; ++i) out[start[(first[i].word >> shift) & 0xff]++] = first[i];
        std::memcpy(static_cast<void*>(first), out, size * sizeof(key_type));
        // Bucket 0: the names end before this byte (all equal, done).
        for (std::size_t b = 1; b < 256; ++b) {
          if (count[b] < 2) continue;
          const std::size_t end = r.begin + start[b];
          work.push_back({end - count[b], end, r.depth + 1});
        }
        break;
      }
    }
  }

  void load_words(key_type* first, std::size_t size, std::size_t depth) noexcept {
    constexpr std::size_t ahead = 8;
    for (std::size_t i = 0; i < size; ++i) {
      if (i + ahead < size) {
        const std::string_view next = entries_[first[i + ahead].position].name;
        if (next.size() > depth) prefetch(next.data() + depth);
      }
      first[i].word = key_at(entries_[first[i].position].name, depth);
    }
  }

  // A small range whose words are loaded for depth / 8: sort by (word,
  // position); runs of equal words that do not end the names continue at
  // the next word.
  void sort_small(const sort_range& r) {
    key_type* first = keys_.data() + r.begin;
    key_type* last = keys_.data() + r.end;
    std::sort(first, last, [](const key_type& a, const key_type& b) {
      return a.word != b.word ? a.word < b.word : a.position < b.position;
    });
    const std::size_t next_word = (r.depth / 8 + 1) * 8;
    for (key_type* run = first; run != last;) {
      key_type* next = run + 1;
      while (next != last && next->word == run->word) ++next;
      if (next - run > 1 && (run->word & 0xff) != 0)
        work_.push_back({static_cast<std::size_t>(run - keys_.data()), static_cast<std::size_t>(next - keys_.data()),
                         next_word});
      run = next;
    }
  }

  static void prefetch([[maybe_unused]] const void* p) noexcept {
#if defined(__GNUC__) || defined(__clang__)
    __builtin_prefetch(p, 0, 0);
#endif
  }

  void put_name(const elf::nm_entry& e) {
    std::string_view name = e.name;
    if (!opts_.with_versions) {
      const std::size_t at = name.find('@');
      if (at != std::string_view::npos) name = name.substr(0, at);
    }
    if (opts_.demangle) out_.put(symbols::demangle(name));
    else out_.put(name);
    if (opts_.with_versions && !e.version.empty()) {
      out_.put(e.ver == version_kind::default_ ? "@@" : "@");
      out_.put(e.version);
    }
  }

  void print_bsd(const object_context& ctx, bool is64) {
    const int width = is64 ? 16 : 8;
    // The common case (`nm` / `nm -D` of a 64-bit object): each line is
    // formatted in place with one bounds check.
    const bool plain = is64 && !opts_.print_file_name && !opts_.print_size && opts_.with_versions && !opts_.demangle;
    for (std::size_t k = 0; k < entries_.size(); ++k) {
      prefetch_ahead(k);
      const elf::nm_entry& e = entry(k);
      if (plain) {
        const std::size_t at = e.version.empty() ? 0 : (e.ver == version_kind::default_ ? 2 : 1);
        const std::size_t length = 16 + 3 + e.name.size() + at + e.version.size() + 1;
        if (length <= output::max_claim) {
          char* p = out_.claim(length);
          if (e.undefined()) std::memset(p, ' ', 16);
          else output::hex16(p, e.value);
          p[16] = ' ';
          p[17] = e.type;
          p[18] = ' ';
          p += 19;
          if (!e.name.empty()) std::memcpy(p, e.name.data(), e.name.size());
          p += e.name.size();
          if (at != 0) {
            p[0] = '@';
            p[at - 1] = '@';
            p += at;
            std::memcpy(p, e.version.data(), e.version.size());
            p += e.version.size();
          }
          *p = '\n';
          continue;
        }
      }
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
    for (std::size_t k = 0; k < entries_.size(); ++k) {
      prefetch_ahead(k);
      const elf::nm_entry& e = entry(k);
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

 public:
  void close_json() {
    if (!opts_.json) return;
    report::end_nm_document(json_);
    json_.newline();
    json_.flush();
  }

 private:
  const options& opts_;
  output out_;
  std::vector<elf::nm_entry> entries_;
  std::vector<key_type> keys_;
  std::vector<key_type> buffer_;
  std::vector<sort_range> work_;
  bool sorted_ = false;
  bool size_warned_ = false;
  std::vector<elf::nm_entry> ordered_;  // --json: the entries in listing order
  json_writer json_{stdout};
};

}  // namespace

int main(int argc, char** argv) {
  options opts;
  cli::parsed p;
  if (int rc = cli::parse(spec, argc, argv, p); rc >= 0) return rc;
  // In command-line order: where options contradict each other, nm takes the last.
  for (const auto& given : p.options) {
    const cli::option_spec& o = *given.spec;
    switch (o.short_name) {
      case 'a': opts.nm.debug_syms = true; continue;
      case 'A':
      case 'o': opts.print_file_name = true; continue;
      case 'C': opts.demangle = true; continue;
      case 'D': opts.nm.dynamic = true; continue;
      case 'g': opts.nm.external_only = true; continue;
      case 'p': opts.no_sort = true; continue;
      case 'P': opts.posix = true, opts.format = macho::nm_format::posix, opts.coff_format = coff::nm_format::posix; continue;
      case 'm':
        opts.posix = false, opts.format = macho::nm_format::darwin, opts.coff_format = coff::nm_format::bsd;
        if (opts.macho_only.empty()) opts.macho_only = "-m";
        continue;
      case 'j':
        opts.posix = false, opts.format = macho::nm_format::just_symbols, opts.coff_format = coff::nm_format::just_symbols;
        if (opts.macho_only.empty()) opts.macho_only = "-j";
        continue;
      case 'n':
      case 'v':
        opts.numeric_sort = true;
        if (opts.macho_only.empty()) opts.macho_only = "-n";
        continue;
      case 'r':
        opts.reverse_sort = true;
        if (opts.macho_only.empty()) opts.macho_only = "-r";
        continue;
      case 'S': opts.print_size = true; continue;
      case 's': opts.print_armap = true; continue;
      case 'u': opts.nm.undefined_only = true, opts.nm.defined_only = false; continue;
      case 't': {
        const std::string& r = given.value;
        if (r == "d") opts.radix = 10;
        else if (r == "o") opts.radix = 8;
        else if (r == "x") opts.radix = 16;
        else return cli::usage_error(tool, r + ": invalid radix");
        if (opts.coff_only.empty()) opts.coff_only = "-t";
        continue;
      }
      case 'U': opts.nm.defined_only = true, opts.nm.undefined_only = false; continue;
      case 'f': {
        const std::string& f = given.value;
        if (f == "posix" || f == "p" || f == "P")
          opts.posix = true, opts.format = macho::nm_format::posix, opts.coff_format = coff::nm_format::posix;
        else if (f == "bsd" || f == "b" || f == "B")
          opts.posix = false, opts.format = macho::nm_format::bsd, opts.coff_format = coff::nm_format::bsd;
        else if (f == "sysv" || f == "s" || f == "S") {
          opts.posix = false, opts.format = macho::nm_format::bsd, opts.coff_format = coff::nm_format::sysv;
          if (opts.coff_only.empty()) opts.coff_only = "--format=sysv";
        } else if (f == "darwin" || f == "just-symbols") {
          opts.posix = false;
          opts.format = f == "darwin" ? macho::nm_format::darwin : macho::nm_format::just_symbols;
          opts.coff_format = f == "darwin" ? coff::nm_format::bsd : coff::nm_format::just_symbols;
          if (opts.macho_only.empty()) opts.macho_only = "--format=" + f;
        } else return cli::usage_error(tool, "unsupported output format: " + f);
        continue;
      }
      default: break;
    }
    const std::string_view name = o.long_name;
    if (name == "no-demangle") opts.demangle = false;
    else if (name == "special-syms") opts.nm.special_syms = true;
    else if (name == "with-symbol-versions") opts.with_versions = true;
    else if (name == "without-symbol-versions") opts.with_versions = false;
    else if (name == "arch") {
      // --arch=A,B as llvm-nm splits it
      std::string_view v = given.value;
      while (!v.empty()) {
        const auto comma = v.find(',');
        if (comma != 0) opts.archs.emplace_back(v.substr(0, comma));
        if (comma == std::string_view::npos) break;
        v.remove_prefix(comma + 1);
      }
    }
    else if (name == "target") {
      if (!known_target(given.value)) {
        const std::string message = "--target: invalid bfd target '" + given.value + "'";
        return cli::usage_error(spec, message.c_str());
      }
      opts.nm.target = elf::generic_target_named(given.value);
    }
    else if (name == "size-sort") {
      opts.size_sort = true;
      if (opts.coff_only.empty()) opts.coff_only = "--size-sort";
    }
    else if (name == "json") opts.json = true;
    else if (name == "thin-confine") opts.thin.confine_to_archive_dir = true;
  }
  // --json is an output format of its own: with a text format it is a usage error.
  if (opts.json && (p.has("portability") || p.has("format") || opts.format != macho::nm_format::bsd))
    return cli::usage_error(spec, p.has("format") ? "options '--json' and '--format' exclude each other"
                                                   : "options '--json' and '--portability' exclude each other");
  opts.files = std::move(p.operands);
  if (opts.files.empty()) opts.files.emplace_back("a.out");
  // nm sorts with strcoll in the user's LC_COLLATE; C and POSIX mean strcmp.
  const char* collate = std::setlocale(LC_COLLATE, "");
  opts.use_strcoll = collate != nullptr && std::strcmp(collate, "C") != 0 && std::strcmp(collate, "POSIX") != 0;
#if defined(__GLIBC__)
  // glibc's strcoll is strcmp, byte for byte, when the locale's LC_COLLATE
  // has no collation rules (string/strcoll_l.c: `if (nrules == 0) return
  // STRCMP (s1, s2);`). That is the case for C.UTF-8 (glibc >= 2.35,
  // `codepoint_collation`) and any locale built the same way. The rule count
  // is a 32-bit word in the item's union: take those bytes of the pointer.
  if (opts.use_strcoll) {
    const auto word = reinterpret_cast<std::uintptr_t>(nl_langinfo(_NL_COLLATE_NRULES));
    const auto nrules = static_cast<std::uint32_t>(
        std::endian::native == std::endian::little ? word : word >> (8 * (sizeof word - sizeof(std::uint32_t))));
    if (nrules == 0) opts.use_strcoll = false;
  }
#endif
  lister l(opts);
  int status = l.run();
  l.close_json();
  return status;
}
