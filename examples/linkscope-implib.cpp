// linkscope-implib: which DLL(s) an import library stands for (like
// `dlltool -I`), its import records, a PE image's imports/exports, and which
// import libraries a Windows link needs (--needs).
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include <linkscope/ar/archive.hpp>
#include <linkscope/coff/import.hpp>
#include <linkscope/coff/object.hpp>
#include <linkscope/coff/pe.hpp>
#include <linkscope/core/mapped_file.hpp>
#include <linkscope/report/json.hpp>
#include <linkscope/report/json_error.hpp>
#include <linkscope/resolve/windows.hpp>
#include <linkscope/symbols/demangle.hpp>

#include "cli/cli.hpp"
#include "cli/options.hpp"

namespace {

constexpr std::string_view tool = "linkscope-implib";

namespace cli = linkscope::cli;

// --demangle: C++ names (mingw's are Itanium) printed as c++filt prints them;
// a C name, an ordinal or an MSVC-decorated name is kept.
bool demangle_names = false;
std::string shown_symbol(std::string_view name) {
  return demangle_names ? linkscope::symbols::demangle(name) : std::string(name);
}
// --json --demangle: "demangled" beside "symbol", where it differs.
void write_demangled_field(linkscope::json_writer& w, std::string_view name) {
  if (!demangle_names) return;
  if (std::string d = linkscope::symbols::demangle(name); d != name) w.field("demangled", d);
}

constexpr cli::option_spec options[] = {
    {"strict", 0, cli::arg::none, nullptr, "fail when a library names two or more DLLs (dlltool --identify-strict)"},
    {"identify-strict", 0, cli::arg::none, nullptr, "same as --strict"},
    {"dlltool-compat", 0, cli::arg::none, nullptr, "read only the members GNU dlltool (x86-64 mingw) reads: i386/x86-64"},
    {"symbols", 0, cli::arg::none, nullptr, "TSV rows: dll, symbol, import_name, ordinal, hint, kind, name_type", 1},
    {"pe", 0, cli::arg::required, "FILE",
     "list a PE image's imports, delay-load imports and exports (with --needs: a consumer)"},
    {"needs", 0, cli::arg::none, nullptr,
     "with --consumer: which LIB satisfies each undefined symbol, the minimal set of LIBs (direct DLLs only) and "
     "what stays unresolved; a PE image as consumer: check each imported DLL against LIBs",
     1},
    {"consumer", 0, cli::arg::required, "FILE", "a COFF object, an archive of objects, or a PE image (repeatable)"},
    {"demangle", 'C', cli::arg::none, nullptr,
     "print C++ symbol names demangled, as c++filt does (--symbols, --needs); --json adds \"demangled\""},
    {"json", 0, cli::arg::none, nullptr, "one JSON object (\"version\": 1)"},
};

constexpr cli::tool_spec spec{
    "linkscope-implib", "[OPTION]... LIB...",
    "Name the DLLs behind Windows import libraries and check Windows links.\n"
    "Prints the DLL name(s) an import library (.lib, .a, .dll.a) stands for, one per\n"
    "line, in the order `dlltool -I` prints them; with --symbols its import records;\n"
    "with --pe a PE image's imports and exports; with --needs which import libraries\n"
    "a Windows link needs.",
    options,
    "  linkscope-implib libkernel32.a\n"
    "  linkscope-implib --symbols --json foo.lib\n"
    "  linkscope-implib --pe app.exe\n"
    "  linkscope-implib --needs --consumer main.obj libfoo.dll.a libbar.dll.a\n",
    "no DLL found, several under --strict, unresolved symbols or uncovered imports"};

void put(std::string& out, std::string_view s) { out.append(s); }
void put_u(std::string& out, unsigned long long v) { out.append(std::to_string(v)); }
void flush(std::string& out) {
  std::fwrite(out.data(), 1, out.size(), stdout);
  out.clear();
}

struct loaded_library {
  std::string path;
  linkscope::mapped_file file;
  linkscope::coff::import_library library;
};

linkscope::result<linkscope::coff::import_library> load_library(const linkscope::mapped_file& file) {
  return linkscope::coff::import_library::from_bytes(file.bytes());
}

// An archive member as docs/JSON.md names it: `lib.a(member.o)`.
std::string member_label(std::string_view library, std::string_view member) {
  std::string out(library);
  out.append("(").append(member).append(")");
  return out;
}

// An input the run cannot use: the diagnostic on stderr and, with --json, the
// error document on stdout (docs/JSON.md: errors stay in the document). Exit 2.
int input_error(const std::string& path, const linkscope::error& e, bool json) {
  cli::report(tool, path, e);
  if (json) {
    linkscope::json_writer w(stdout);
    linkscope::report::write_error_document(w, linkscope::diagnostic(e, path));
    w.newline();
  }
  return cli::exit_error;
}

void write_record_json(linkscope::json_writer& w, const linkscope::coff::import_record& r, std::string_view library) {
  w.begin_object();
  w.field("dll", r.dll);
  w.field("symbol", r.symbol);
  write_demangled_field(w, r.symbol);
  w.field("import_name", r.import_name);
  w.key("ordinal");
  if (r.ordinal) w.value(*r.ordinal); else w.value(nullptr);
  w.field("hint", r.hint);
  w.field("kind", linkscope::to_string(r.kind));
  w.field("name_type", linkscope::to_string(r.name_type));
  w.field("machine", linkscope::coff::machine_name(r.machine));
  w.field("format", r.format == linkscope::coff::import_format::short_ ? "short" : "long");
  if (!r.member_name.empty()) w.field("member", member_label(library, r.member_name));
  w.end_object();
}

int run_pe(const std::string& path, bool json) {
  using namespace linkscope;
  auto file = mapped_file::open(path);
  if (!file) return input_error(path, file.error(), json);
  auto image = pe::image::parse(file->bytes());
  if (!image) return input_error(path, image.error(), json);
  auto name = image->export_name();
  auto exports = image->exports();
  auto imports = image->imports();
  auto delayed = image->delay_imports();
  for (const error* e : {name ? nullptr : &name.error(), exports ? nullptr : &exports.error(),
                         imports ? nullptr : &imports.error(), delayed ? nullptr : &delayed.error()}) {
    if (e != nullptr) return input_error(path, *e, json);
  }
  std::string out;
  if (json) {
    json_writer w(out);
    w.begin_object();
    w.field("version", 1);
    w.field("file", path);
    w.field("format", image->is_pe32_plus() ? "pe32+" : "pe32");
    w.field("machine", coff::machine_name(image->machine()));
    w.field("dll_name", *name);
    w.key("imports").begin_array();
    for (const auto* list : {&*imports, &*delayed}) {
      for (const pe::imported_dll& dll : *list) {
        w.begin_object();
        w.field("dll", dll.name);
        w.field("delay_load", dll.delay_load);
        w.key("functions").begin_array();
        for (const pe::imported_function& fn : dll.functions) {
          w.begin_object();
          w.field("name", fn.name);
          w.key("ordinal");
          if (fn.ordinal) w.value(*fn.ordinal); else w.value(nullptr);
          w.field("hint", fn.hint);
          w.end_object();
        }
        w.end_array();
        w.end_object();
      }
    }
    w.end_array();
    w.key("exports").begin_array();
    for (const pe::export_entry& e : *exports) {
      w.begin_object();
      w.field("ordinal", e.ordinal);
      w.field("name", e.name);
      w.field("rva", e.rva);
      w.field("forwarder", e.forwarder);
      w.end_object();
    }
    w.end_array();
    w.end_object();
    w.newline();
    flush(out);
    return cli::exit_ok;
  }
  // TSV: import|delay-import, dll, name, ordinal, hint; export, ordinal, name, rva, forwarder.
  for (const auto* list : {&*imports, &*delayed}) {
    for (const pe::imported_dll& dll : *list) {
      for (const pe::imported_function& fn : dll.functions) {
        put(out, dll.delay_load ? "delay-import\t" : "import\t");
        put(out, dll.name); put(out, "\t"); put(out, fn.name); put(out, "\t");
        if (fn.ordinal) put_u(out, *fn.ordinal);
        put(out, "\t"); put_u(out, fn.hint); put(out, "\n");
      }
      if (dll.functions.empty()) { put(out, dll.delay_load ? "delay-import\t" : "import\t"); put(out, dll.name); put(out, "\t\t\t\n"); }
    }
  }
  for (const pe::export_entry& e : *exports) {
    put(out, "export\t"); put_u(out, e.ordinal); put(out, "\t"); put(out, e.name); put(out, "\t");
    char buf[16];
    std::snprintf(buf, sizeof buf, "0x%x", e.rva);
    put(out, buf); put(out, "\t"); put(out, e.forwarder); put(out, "\n");
  }
  flush(out);
  return cli::exit_ok;
}

int run_needs(const std::vector<std::string>& consumers, std::vector<loaded_library>& libs, bool json) {
  using namespace linkscope;
  std::vector<const coff::import_library*> lib_ptrs;
  for (auto& l : libs) lib_ptrs.push_back(&l.library);
  resolve::windows_consumer consumer;
  std::vector<mapped_file> keep;
  std::vector<std::string> images;
  for (const std::string& path : consumers) {
    auto file = mapped_file::open(path);
    if (!file) return input_error(path, file.error(), json);
    const byte_view bytes = file->bytes();
    if (pe::image::is_pe(bytes)) {
      images.push_back(path);
      continue;
    }
    if (ar::archive::is_archive(bytes)) {
      auto archive = ar::archive::open(bytes);
      if (!archive) return input_error(path, archive.error(), json);
      error failure{};
      auto r = archive->for_each_member([&](const ar::member& m) -> bool {
        if (m.external || coff::is_short_import(m.data)) return true;
        auto obj = coff::object::parse(m.data);
        if (!obj) return true;  // not a COFF object: not part of a Windows link
        auto added = consumer.add(*obj);
        if (!added) { failure = added.error(); return false; }
        return true;
      });
      if (!r) return input_error(path, r.error(), json);
      if (failure.code != errc::ok) return input_error(path, failure, json);
    } else {
      auto obj = coff::object::parse(bytes);
      if (!obj) return input_error(path, obj.error(), json);
      auto added = consumer.add(*obj);
      if (!added) return input_error(path, added.error(), json);
    }
    keep.push_back(std::move(*file));
  }
  int status = cli::exit_ok;
  std::string out;
  json_writer w(out);
  if (json) { w.begin_object(); w.field("version", 1); }
  const bool have_objects = !consumer.undefined.empty() || !consumer.defined.empty() || images.empty();
  if (have_objects) {
    const resolve::windows_needs needs = resolve::resolve_windows_link(consumer, lib_ptrs);
    if (!needs.ok()) status = cli::exit_finding;
    if (json) {
      w.key("resolved").begin_array();
      for (const auto& r : needs.resolved) {
        w.begin_object();
        w.field("symbol", r.symbol);
        write_demangled_field(w, r.symbol);
        w.field("library", libs[r.library].path);
        if (!r.member_name.empty()) w.field("member", member_label(libs[r.library].path, r.member_name));
        w.field("dll", r.dll);
        w.field("kind", r.record ? to_string(r.record->kind) : "static");
        w.end_object();
      }
      w.end_array();
      w.key("needed_libraries").begin_array();
      for (std::size_t l : needs.needed_libraries) w.value(libs[l].path);
      w.end_array();
      w.key("dlls").begin_array();
      for (std::string_view d : needs.dlls) w.value(d);
      w.end_array();
      w.key("unresolved").begin_array();
      for (std::string_view s : needs.unresolved) w.value(s);
      w.end_array();
    } else {
      for (const auto& r : needs.resolved) {
        put(out, "resolved\t"); put(out, shown_symbol(r.symbol)); put(out, "\t"); put(out, libs[r.library].path); put(out, "\t");
        put(out, r.record ? r.dll : std::string_view("(static)")); put(out, "\n");
      }
      for (std::size_t l : needs.needed_libraries) {
        put(out, "needed\t"); put(out, libs[l].path); put(out, "\t");
        bool first = true;
        for (const auto& r : needs.resolved) {
          if (r.library != l || r.dll.empty()) continue;
          // list each DLL once per library
          bool dup = false;
          for (const auto& q : needs.resolved) {
            if (&q == &r) break;
            dup = dup || (q.library == l && q.dll == r.dll);
          }
          if (dup) continue;
          if (!first) put(out, ",");
          put(out, r.dll);
          first = false;
        }
        put(out, "\n");
      }
      for (std::string_view s : needs.unresolved) { put(out, "unresolved\t"); put(out, shown_symbol(s)); put(out, "\n"); }
    }
  }
  if (!images.empty()) {
    if (json) w.key("images").begin_array();
    for (const std::string& path : images) {
      auto file = mapped_file::open(path);
      if (!file) return input_error(path, file.error(), json);
      auto image = pe::image::parse(file->bytes());
      if (!image) return input_error(path, image.error(), json);
      auto checks = resolve::check_image_imports(*image, lib_ptrs);
      if (!checks) return input_error(path, checks.error(), json);
      if (json) { w.begin_object(); w.field("file", path); w.key("dlls").begin_array(); }
      for (const auto& c : *checks) {
        if (!c.covered()) status = cli::exit_finding;
        if (json) {
          w.begin_object();
          w.field("dll", c.dll);
          w.field("delay_load", c.delay_load);
          w.key("libraries").begin_array();
          for (std::size_t l : c.libraries) w.value(libs[l].path);
          w.end_array();
          w.key("missing").begin_array();
          for (const std::string& m : c.missing_functions) w.value(m);
          w.end_array();
          w.end_object();
          continue;
        }
        put(out, c.delay_load ? "delay-dll\t" : "dll\t"); put(out, c.dll); put(out, "\t");
        if (c.libraries.empty()) put(out, "-");
        for (std::size_t i = 0; i < c.libraries.size(); ++i) {
          if (i) put(out, ",");
          put(out, libs[c.libraries[i]].path);
        }
        put(out, "\t");
        put(out, c.libraries.empty() ? "no-import-library" : c.missing_functions.empty() ? "ok" : "missing-functions");
        put(out, "\n");
        for (const std::string& m : c.missing_functions) { put(out, "missing\t"); put(out, c.dll); put(out, "\t"); put(out, m); put(out, "\n"); }
      }
      if (json) { w.end_array(); w.end_object(); }
    }
    if (json) w.end_array();
  }
  if (json) { w.end_object(); w.newline(); }
  flush(out);
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace linkscope;
  cli::fast_stdout();
  cli::parsed p;
  if (int rc = cli::parse(spec, argc, argv, p); rc >= 0) return rc;
  const bool strict = p.has("strict") || p.has("identify-strict"), compat = p.has("dlltool-compat");
  const bool symbols = p.has("symbols"), json = p.has("json"), needs = p.has("needs");
  demangle_names = p.has("demangle");
  const std::string pe_path = p.value("pe");
  std::vector<std::string> consumers = p.values("consumer");
  const std::vector<std::string>& inputs = p.operands;
  // --pe alone lists an image: another output mode than --symbols.
  if (p.has("pe") && symbols) return cli::usage_error(spec, "options '--symbols' and '--pe' exclude each other");
  if (p.has("pe") && !needs) return run_pe(pe_path, json);
  if (p.has("pe")) consumers.push_back(pe_path);
  if (needs && consumers.empty()) return cli::usage_error(tool, "--needs requires --consumer FILE");
  if (inputs.empty()) return cli::usage_error(tool, "no import library given");

  std::vector<loaded_library> libs;
  libs.reserve(inputs.size());
  for (const std::string& path : inputs) {
    auto file = mapped_file::open(path);
    if (!file) return input_error(path, file.error(), json);
    loaded_library l;
    l.path = path;
    l.file = std::move(*file);
    auto lib = load_library(l.file);
    if (!lib) return input_error(path, lib.error(), json);
    l.library = std::move(*lib);
    libs.push_back(std::move(l));
  }
  if (needs) return run_needs(consumers, libs, json);

  int status = cli::exit_ok;
  std::string out;
  json_writer w(out);
  if (json) { w.begin_object(); w.field("version", 1); w.key("libraries").begin_array(); }
  for (const loaded_library& l : libs) {
    const auto dlls = l.library.identify_dlls(compat);
    bool input_error = false;
    const char* problem = nullptr;  // why no DLL name is given (also "error" in --json)
    if (dlls.empty() && !ar::archive::open(l.file.bytes())) {
      // Not an archive at all: an input error (exit 2), as dlltool -I says "is not a library".
      problem = "is not a library (not an archive)";
      input_error = true;
    } else if (dlls.empty()) {
      problem = "unable to determine dll name (not an import library?)";
    } else if (strict && dlls.size() > 1) {
      problem = "import library specifies two or more dlls";
    }
    const bool failed = problem != nullptr;
    if (failed) cli::report(tool, l.path, problem);
    if (failed && status != cli::exit_error) status = input_error ? cli::exit_error : cli::exit_finding;
    if (json) {
      w.begin_object();
      w.field("file", l.path);
      w.key("dlls").begin_array();
      if (!(strict && dlls.size() > 1)) for (std::string_view d : dlls) w.value(d);
      w.end_array();
      if (failed) w.field("error", problem);
      if (symbols) {
        w.key("records").begin_array();
        for (const auto& r : l.library.records()) write_record_json(w, r, l.path);
        w.end_array();
      }
      w.end_object();
      continue;
    }
    if (symbols) {
      for (const auto& r : l.library.records()) {
        put(out, r.dll); put(out, "\t"); put(out, shown_symbol(r.symbol)); put(out, "\t");
        put(out, shown_symbol(r.import_name)); put(out, "\t");
        if (r.ordinal) put_u(out, *r.ordinal);
        put(out, "\t"); put_u(out, r.hint); put(out, "\t"); put(out, to_string(r.kind)); put(out, "\t");
        put(out, to_string(r.name_type)); put(out, "\n");
      }
      continue;
    }
    if (failed) continue;
    for (std::string_view d : dlls) {
      if (libs.size() > 1) { put(out, l.path); put(out, "\t"); }
      put(out, d); put(out, "\n");
    }
  }
  if (json) { w.end_array(); w.end_object(); w.newline(); }
  flush(out);
  return status;
}
