// linkscope/_core.cpp — the pybind11 extension module over the header-only
// library: `import linkscope` (python/linkscope/__init__.py re-exports this).
//
// One translation unit (the build machine may have 2 cores). The rules:
// - The work runs with the GIL released (py::gil_scoped_release): it reads
//   files into plain C++ structs (the library's result structs). Python
//   objects are made afterwards, with the GIL held, and only when asked for.
// - Errors are values in the library; here, at the boundary, a diagnostic
//   becomes linkscope.Error with .code (the errc's name, as docs/errors.md
//   spells it), .offset (int or None), .file and .member (str or None).
// - Every result's to_dict() is the matching CLI's --json document, key for
//   key (tests/python compares them).
// - Hot lists (symbols, bindings) are built from struct sequences made with
//   the C API, not pybind11 class instances: a libtorch program has 150k
//   bindings, and a pybind11 instance costs several times a tuple.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <linkscope/core/error.hpp>
#include <linkscope/core/mapped_file.hpp>
#include <linkscope/coff/nm.hpp>
#include <linkscope/coff/object.hpp>
#include <linkscope/coff/pe.hpp>
#include <linkscope/elf/dynamic.hpp>
#include <linkscope/elf/file.hpp>
#include <linkscope/elf/source.hpp>
#include <linkscope/macho/fat.hpp>
#include <linkscope/macho/file.hpp>
#include <linkscope/macho/symbols.hpp>
#include <linkscope/resolve/absorb.hpp>
#include <linkscope/resolve/check.hpp>
#include <linkscope/resolve/duplicates.hpp>
#include <linkscope/resolve/dyld.hpp>
#include <linkscope/resolve/dynamic.hpp>
#include <linkscope/resolve/file_format.hpp>
#include <linkscope/resolve/floors_set.hpp>
#include <linkscope/resolve/link_line.hpp>
#include <linkscope/resolve/pe_load.hpp>
#include <linkscope/resolve/static.hpp>
#include <linkscope/report/absorbed.hpp>
#include <linkscope/report/check.hpp>
#include <linkscope/report/dupes.hpp>
#include <linkscope/report/floors.hpp>
#include <linkscope/report/ldd.hpp>
#include <linkscope/report/ldd_macho.hpp>
#include <linkscope/report/ldd_pe.hpp>
#include <linkscope/report/why.hpp>

namespace py = pybind11;
namespace ls = linkscope;

namespace {

// ---- errors ---------------------------------------------------------------

PyObject* error_type = nullptr;  // linkscope.Error

// Thrown inside the module only (never by the library); translated into
// linkscope.Error by the registered translator.
struct boundary_error {
  ls::diagnostic d;
};

[[noreturn]] void raise(const ls::diagnostic& d) { throw boundary_error{d}; }
[[noreturn]] void raise(const ls::error& e, const std::string& file, const std::string& member = {}) {
  raise(ls::diagnostic(e, file, member));
}

void set_python_error(const ls::diagnostic& d) {
  // "FILE: MESSAGE (offset 0x...)": describe() is the one offset formatter.
  std::string text = d.where();
  if (!text.empty()) text.append(": ");
  text.append(ls::describe(d.err));
  PyObject* arg = PyUnicode_DecodeUTF8(text.data(), static_cast<Py_ssize_t>(text.size()), "surrogateescape");
  if (!arg) return;  // the conversion set an error of its own
  py::object exc = py::reinterpret_steal<py::object>(PyObject_CallOneArg(error_type, arg));
  Py_DECREF(arg);
  if (!exc) return;
  exc.attr("code") = py::str(ls::name_of(d.code()));
  exc.attr("message") = py::str(d.message());
  exc.attr("offset") = d.has_offset() ? py::object(py::int_(d.offset())) : py::object(py::none());
  exc.attr("file") = d.file.empty() ? py::object(py::none()) : py::object(py::str(d.file));
  exc.attr("member") = d.member.empty() ? py::object(py::none()) : py::object(py::str(d.member));
  PyErr_SetObject(error_type, exc.ptr());
}

// ---- small conversions ----------------------------------------------------

py::str to_py(std::string_view s) {
  // surrogateescape: a name with invalid UTF-8 still round-trips to bytes.
  PyObject* o = PyUnicode_DecodeUTF8(s.data(), static_cast<Py_ssize_t>(s.size()), "surrogateescape");
  if (!o) throw py::error_already_set();
  return py::reinterpret_steal<py::str>(o);
}

PyObject* new_str(std::string_view s) {
  PyObject* o = PyUnicode_DecodeUTF8(s.data(), static_cast<Py_ssize_t>(s.size()), "surrogateescape");
  if (!o) throw py::error_already_set();
  return o;
}

// The document a report/ writer writes, parsed by Python's json module: the
// CLI prints the same writer's text, so to_dict() and --json cannot differ.
// Invalid UTF-8 in names comes back as surrogateescape, as to_py gives it.
template <class Write>
py::dict parse_document(Write&& write) {
  std::string text;
  {
    ls::json_writer w(text);
    write(w);
  }
  return py::module_::import("json").attr("loads")(to_py(text));
}

// ---- struct sequences (fast, named, tuple-like results) --------------------

PyTypeObject* make_structseq(const char* name, const char* doc, std::vector<PyStructSequence_Field>& fields) {
  fields.push_back({nullptr, nullptr});
  PyStructSequence_Desc desc{name, doc, fields.data(), static_cast<int>(fields.size() - 1)};
  PyTypeObject* t = PyStructSequence_NewType(&desc);
  if (!t) throw py::error_already_set();
  return t;
}

std::vector<PyStructSequence_Field> symbol_fields = {
    {"name", "the symbol's name, without a version"},
    {"version", "the version name (GNU symbol versioning), or None"},
    {"binding", "'local', 'global', 'weak' or 'unique' (per format: File.symbols)"},
    {"type", "'notype', 'object', 'func', 'section', 'file', 'common', 'tls', 'ifunc' or 'other'"},
    {"defined", "True when the symbol is defined in this file"},
    {"size", "ELF st_size; a COFF function's or section's size; 0 for Mach-O and PE exports"},
    {"value", "ELF st_value; Mach-O n_value; COFF Value; PE export ImageBase + RVA"},
    {"default_version", "True for name@@VER (the default version), False for name@VER"},
    {"visibility", "'default', 'internal', 'hidden' or 'protected'"},
};
std::vector<PyStructSequence_Field> binding_fields = {
    {"from_", "the object whose relocation refers to the symbol (its ld.so path)"},
    {"to", "the object the symbol binds to"},
    {"symbol", "the symbol's name"},
    {"version", "the version the reference asked for; '' if none"},
};
std::vector<PyStructSequence_Field> undefined_fields = {
    {"from_", "the object whose reference is not satisfied"},
    {"symbol", "the symbol's name"},
    {"version", "the version asked for; '' if none"},
};
PyTypeObject* symbol_type = nullptr;
PyTypeObject* binding_type = nullptr;
PyTypeObject* undefined_type = nullptr;

// Interned strings for the enum values (one object each, shared by every symbol).
struct enum_strings {
  py::object binding[4], kind[9], vis[4];
  enum_strings() {
    for (int i = 0; i < 4; ++i) binding[i] = py::str(ls::to_string(static_cast<ls::binding>(i)));
    for (int i = 0; i < 9; ++i) kind[i] = py::str(ls::to_string(static_cast<ls::symbol_kind>(i)));
    for (int i = 0; i < 4; ++i) vis[i] = py::str(ls::to_string(static_cast<ls::visibility>(i)));
  }
};
enum_strings* enums = nullptr;

// ---- File -----------------------------------------------------------------

const char* machine_name(std::uint16_t m) {
  namespace e = ls::elf;
  switch (m) {
    case e::EM_386: return "i386";
    case e::EM_68K: return "m68k";
    case e::EM_MIPS: return "mips";
    case e::EM_PARISC: return "parisc";
    case e::EM_PPC: return "ppc";
    case e::EM_PPC64: return "ppc64";
    case e::EM_S390: return "s390";
    case e::EM_ARM: return "arm";
    case e::EM_SH: return "sh";
    case e::EM_SPARCV9: return "sparcv9";
    case e::EM_IA_64: return "ia64";
    case e::EM_X86_64: return "x86_64";
    case e::EM_AARCH64: return "aarch64";
    case e::EM_RISCV: return "riscv";
    case e::EM_LOONGARCH: return "loongarch";
  }
  return nullptr;
}

// One symbol, compact (48 bytes: 35k of them for libtorch_cpu fit in 1.7 MB,
// reserved once; the names point into the mapping).
struct symbol_record {
  const char* name;
  const char* version;
  std::uint32_t name_size, version_size;
  std::uint64_t size, value;
  ls::binding bind;
  ls::symbol_kind kind;
  ls::visibility vis;
  ls::version_kind ver;
  bool defined;
};

// The symbols of one table, read once with the GIL released; Python objects
// are made one at a time while iterating (or all at once by names()).
struct symbol_list {
  std::shared_ptr<const ls::mapped_file> bytes;  // the names point into it
  std::vector<symbol_record> symbols;

  void add(const ls::symbol& s) {
    symbols.push_back({s.name.data(), s.version.data(), static_cast<std::uint32_t>(s.name.size()),
                       static_cast<std::uint32_t>(s.version.size()), s.size, s.value, s.bind, s.kind, s.vis, s.ver,
                       s.defined});
  }

  py::object item(std::size_t i) const {
    const symbol_record& s = symbols[i];
    PyObject* t = PyStructSequence_New(symbol_type);
    if (!t) throw py::error_already_set();
    py::object out = py::reinterpret_steal<py::object>(t);
    auto set = [&](int k, PyObject* v) { PyStructSequence_SetItem(t, k, v); };
    auto ref = [](const py::object& o) {
      Py_INCREF(o.ptr());
      return o.ptr();
    };
    set(0, new_str({s.name, s.name_size}));
    if (s.ver == ls::version_kind::none) {
      Py_INCREF(Py_None);
      set(1, Py_None);
    } else {
      set(1, new_str({s.version, s.version_size}));
    }
    set(2, ref(enums->binding[static_cast<int>(s.bind) & 3]));
    set(3, ref(enums->kind[static_cast<int>(s.kind) % 9]));
    set(4, PyBool_FromLong(s.defined));
    set(5, PyLong_FromUnsignedLongLong(s.size));
    set(6, PyLong_FromUnsignedLongLong(s.value));
    set(7, PyBool_FromLong(s.ver == ls::version_kind::default_));
    set(8, ref(enums->vis[static_cast<int>(s.vis) & 3]));
    return out;
  }
};

struct symbol_iterator {
  std::shared_ptr<const symbol_list> list;
  std::size_t next = 0;
};

struct file_info {
  std::string path;
  std::shared_ptr<const ls::mapped_file> bytes;
  ls::byte_view image;  // Mach-O: the slice read (the whole file when thin); else the whole file
  std::string format;
  std::string arch;
  std::string kind;
  int bits = 0;
  std::string endian;
  bool has_dynamic = false;
  std::string soname, rpath, runpath, interp;
  bool has_soname = false, has_rpath = false, has_runpath = false;
  std::vector<std::string> needed;
  std::vector<std::string> rpaths;  // the folders the loader searches, in order (see File.rpaths)
  std::vector<std::string> archs;   // Mach-O universal: every slice's arch
};

void split_colons(std::string_view s, std::vector<std::string>& out) {
  while (!s.empty()) {
    const std::size_t colon = s.find(':');
    out.emplace_back(s.substr(0, colon));
    if (colon == std::string_view::npos) break;
    s.remove_prefix(colon + 1);
  }
}

// Read what File exposes eagerly: the header and the dynamic section.
template <class ET>
void read_elf_info(file_info& info, const ls::elf::file<ET>& f) {
  auto d = ls::elf::dynamic_info<ET>::read(f);
  if (!d) raise(d.error(), info.path);
  info.has_dynamic = d->present();
  if (!d->present()) return;
  auto need = d->for_each_needed([&](std::string_view n) { info.needed.emplace_back(n); });
  if (!need) raise(need.error(), info.path);
  auto take = [&](const ls::result<std::string_view>& s, std::string& out) {
    if (!s) raise(s.error(), info.path);
    out.assign(*s);
  };
  info.has_soname = d->has_soname();
  info.has_rpath = d->has_rpath();
  info.has_runpath = d->has_runpath();
  take(d->soname(), info.soname);
  take(d->rpath(), info.rpath);
  take(d->runpath(), info.runpath);
  // ld.so ignores DT_RPATH when DT_RUNPATH is present.
  split_colons(info.has_runpath ? info.runpath : info.rpath, info.rpaths);
}

void read_elf_file(file_info& info) {
  const ls::byte_view b = info.image;
  auto id = ls::elf::identify(b);
  if (!id) raise(id.error(), info.path);
  info.bits = id->is64() ? 64 : 32;
  info.endian = id->big_endian() ? "big" : "little";
  info.kind = ls::elf::to_string(id->kind);
  const char* a = machine_name(id->machine);
  info.arch = a ? a : "em_" + std::to_string(id->machine);
  auto r = ls::elf::visit_elf(b, [&](const auto& f) -> ls::result<void> {
    read_elf_info(info, f);
    info.interp.assign(f.interpreter());
    return ls::ok();
  });
  if (!r) raise(r.error(), info.path);
}

std::string macho_arch(std::uint32_t cputype, std::uint32_t cpusubtype) {
  const char* a = ls::macho::arch_name(cputype, cpusubtype);
  return *a ? std::string(a) : "cpu_" + std::to_string(cputype);
}

// The Mach-O image `arch` names in `bytes` (a thin image or a universal
// file): of a universal file that slice, or the first with no arch; a thin
// image must be of that arch. `archs` receives a universal file's slices.
ls::byte_view macho_slice(ls::byte_view bytes, const std::string& arch, const std::string& path,
                          std::vector<std::string>* archs = nullptr) {
  if (!ls::macho::is_fat(bytes)) return bytes;
  auto fat = ls::macho::fat_file::open(bytes);
  if (!fat) raise(fat.error(), path);
  if (archs)
    for (const auto& s : fat->slices()) archs->push_back(macho_arch(s.cputype, s.cpusubtype));
  if (arch.empty()) {
    if (fat->slices().empty()) raise(ls::make_error(ls::errc::malformed, 4, "universal file without slices"), path);
    return fat->slices().front().bytes;
  }
  auto slice = fat->find(arch);
  if (!slice) raise(ls::make_error(ls::errc::not_found, ls::no_offset, "no slice of that arch in the universal file"), path + " (" + arch + ")");
  return slice->bytes;
}

// The ELF words for what a Mach-O filetype means, where they coincide.
const char* macho_kind(std::uint32_t filetype) {
  namespace m = ls::macho;
  switch (filetype) {
    case m::MH_OBJECT: return "relocatable";
    case m::MH_EXECUTE: return "executable";
    case m::MH_DYLIB: return "shared";
    case m::MH_BUNDLE: return "bundle";
    case m::MH_CORE: return "core";
    case m::MH_DYLINKER: return "dylinker";
    case m::MH_DYLIB_STUB: return "stub";
    case m::MH_DSYM: return "dsym";
    case m::MH_KEXT_BUNDLE: return "kext";
  }
  return "other";
}

void read_macho_file(file_info& info, const std::string& arch) {
  info.image = macho_slice(info.image, arch, info.path, &info.archs);
  if (!info.archs.empty() && !ls::macho::is_macho(info.image)) {
    // A universal static library: its slices are darwin archives (linkscope-nm lists them).
    info.arch = arch.empty() ? info.archs.front() : arch;
    info.kind = "archive";
    return;
  }
  auto r = ls::macho::visit_macho(info.image, [&](const auto& f) -> ls::result<void> {
    using MT = typename std::decay_t<decltype(f)>::types;
    info.arch = macho_arch(f.cputype(), f.cpusubtype());
    if (!arch.empty() && info.arch != arch)
      return ls::make_error(ls::errc::not_found, 4, "Mach-O image of another arch");
    info.bits = MT::is64 ? 64 : 32;
    info.endian = MT::endianness == std::endian::big ? "big" : "little";
    info.kind = macho_kind(f.filetype());
    LINKSCOPE_TRY(id, f.install_name());
    if (id) {
      info.has_soname = true;
      info.soname.assign(id->name);
    }
    LINKSCOPE_TRY(dylibs, f.dylibs());
    for (const auto& d : dylibs) info.needed.emplace_back(d.name);
    info.has_dynamic = !dylibs.empty() || id;
    LINKSCOPE_TRY(rpaths, f.rpaths());
    for (std::string_view r : rpaths) {
      info.rpath.append(info.rpaths.empty() ? "" : ":").append(r);
      info.rpaths.emplace_back(r);
    }
    info.has_rpath = !rpaths.empty();
    LINKSCOPE_TRY(dylinker, f.strings_of(ls::macho::LC_LOAD_DYLINKER));
    if (!dylinker.empty()) info.interp.assign(dylinker.front());
    return ls::ok();
  });
  if (!r) raise(r.error(), info.path);
}

// The ELF spelling of a COFF machine (the names File.arch uses for ELF).
std::string coff_arch(std::uint16_t machine) {
  namespace m = ls::coff::machine;
  switch (machine) {
    case m::i386: return "i386";
    case m::amd64: return "x86_64";
    case m::armnt: return "arm";
    case m::arm64: return "aarch64";
    case m::arm64ec: return "arm64ec";
    case m::arm64x: return "arm64x";
  }
  return "coff_" + std::to_string(machine);
}

void read_pe_file(file_info& info) {
  auto img = ls::pe::image::parse(info.image);
  if (!img) raise(img.error(), info.path);
  info.arch = coff_arch(img->machine());
  info.bits = img->is_pe32_plus() ? 64 : 32;
  info.endian = "little";
  info.kind = img->is_dll() ? "shared" : "executable";
  auto name = img->export_name();
  if (!name) raise(name.error(), info.path);
  info.has_soname = !name->empty();
  info.soname.assign(*name);
  // The loader's order: the import directory, then the delay-load one.
  for (auto read : {&ls::pe::image::imports, &ls::pe::image::delay_imports}) {
    auto dlls = ((*img).*read)();
    if (!dlls) raise(dlls.error(), info.path);
    for (const auto& d : *dlls) info.needed.emplace_back(d.name);
  }
  info.has_dynamic = !info.needed.empty() || info.has_soname;
}

void read_coff_file(file_info& info) {
  auto r = ls::coff::visit_object(info.image, [&](const auto& obj) {
    info.arch = coff_arch(obj.machine());
    info.bits = obj.machine() == ls::coff::machine::i386 || obj.machine() == ls::coff::machine::armnt ? 32 : 64;
  });
  if (!r) raise(r.error(), info.path);
  info.endian = "little";
  info.kind = "relocatable";
}

std::shared_ptr<file_info> open_file(const std::string& path, const std::optional<std::string>& arch) {
  auto info = std::make_shared<file_info>();
  info->path = path;
  {
    py::gil_scoped_release nogil;
    auto m = ls::mapped_file::open(path);
    if (!m) raise(m.error(), path);
    info->bytes = std::make_shared<const ls::mapped_file>(std::move(*m));
    info->image = info->bytes->bytes();
    info->format = std::string(ls::to_string(ls::sniff_format(info->image)));
    if (arch && info->format != "macho")
      raise(ls::make_error(ls::errc::usage, ls::no_offset, "arch= selects a slice of a Mach-O file only"), path);
    if (info->format == "elf") read_elf_file(*info);
    else if (info->format == "macho") read_macho_file(*info, arch.value_or(""));
    else if (info->format == "pe") read_pe_file(*info);
    else if (info->format == "coff") read_coff_file(*info);
  }
  return info;
}

// Which table symbols() reads; what each means per format is File.symbols's
// docstring (and the .pyi stub).
enum class table_kind { dynamic, static_ };

void read_macho_symbols(const file_info& info, table_kind which, const std::string& arch, symbol_list& list) {
  const ls::byte_view image = arch.empty() ? info.image : macho_slice(info.bytes->bytes(), arch, info.path);
  if (!ls::macho::is_macho(image))
    raise(ls::make_error(ls::errc::unsupported, ls::no_offset, "symbols() reads Mach-O images, not archive slices"),
          info.path);
  auto r = ls::macho::visit_macho(image, [&](const auto& f) -> ls::result<void> {
    if (!arch.empty() && macho_arch(f.cputype(), f.cpusubtype()) != arch)
      return ls::make_error(ls::errc::not_found, 4, "Mach-O image of another arch");
    // An object has no dynamic table (dyld never loads it), as an ELF or COFF relocatable.
    if (which == table_kind::dynamic && f.filetype() == ls::macho::MH_OBJECT) return ls::ok();
    return ls::macho::for_each_macho_symbol(f, 0, [&](const ls::symbol& s) {
      if (which == table_kind::static_ || s.bind != ls::binding::local) list.add(s);
    });
  });
  if (!r) raise(r.error(), info.path);
}

void read_coff_symbols(const file_info& info, table_kind which, symbol_list& list) {
  auto add = [&](const ls::symbol& s) { list.add(s); };
  if (info.format == "coff") {
    if (which == table_kind::dynamic) return;  // an object has none (GNU nm -D: "no symbols")
    auto r = ls::coff::visit_object(info.image, [&](const auto& obj) { return obj.for_each_symbol(add); });
    if (!r) raise(r.error(), info.path);
    if (!*r) raise(r->error(), info.path);
    return;
  }
  auto img = ls::pe::image::parse(info.image);
  if (!img) raise(img.error(), info.path);
  ls::result<void> r = ls::ok();
  if (which == table_kind::dynamic) {
    r = img->for_each_symbol(add);  // exports (a DATA export is an object) and imports
  } else if (img->has_symbol_table()) {
    // The COFF symbol table mingw's ld keeps in an image (GNU nm reads it).
    auto obj = ls::coff::standard_object::parse(info.image, img->coff_header_offset());
    r = obj ? obj->for_each_symbol(add) : ls::result<void>(obj.error());
  }
  if (!r) raise(r.error(), info.path);
}

std::shared_ptr<symbol_list> read_symbols(const file_info& info, const std::string& table,
                                          const std::optional<std::string>& arch) {
  table_kind which;
  if (table == "dynamic")
    which = table_kind::dynamic;
  else if (table == "static")
    which = table_kind::static_;
  else
    raise(ls::make_error(ls::errc::usage, ls::no_offset, "table must be 'dynamic' or 'static'"), info.path);
  if (arch && info.format != "macho")
    raise(ls::make_error(ls::errc::usage, ls::no_offset, "arch= selects a slice of a Mach-O file only"), info.path);
  if (info.format != "elf" && info.format != "macho" && info.format != "pe" && info.format != "coff")
    raise(ls::make_error(ls::errc::unsupported, ls::no_offset, "symbols() reads ELF, Mach-O, PE and COFF files"),
          info.path);
  auto list = std::make_shared<symbol_list>();
  list->bytes = info.bytes;
  {
    py::gil_scoped_release nogil;
    if (info.format == "macho") {
      read_macho_symbols(info, which, arch.value_or(""), *list);
      return list;
    }
    if (info.format != "elf") {
      read_coff_symbols(info, which, *list);
      return list;
    }
    const auto elf_table =
        which == table_kind::dynamic ? ls::elf::symbol_table_kind::dynamic : ls::elf::symbol_table_kind::static_;
    auto r = ls::elf::visit_elf(info.bytes->bytes(), [&](const auto& f) -> ls::result<void> {
      using ET = typename std::decay_t<decltype(f)>::types;
      // One allocation, of the table's own count (no growth, no copies).
      if (which == table_kind::dynamic) {
        LINKSCOPE_TRY(dyn, ls::elf::dynamic_info<ET>::read(f));
        LINKSCOPE_TRY(table, ls::elf::read_dynsym(f, dyn));
        list->symbols.reserve(table.size());
      } else {
        LINKSCOPE_TRY(table, ls::elf::read_symtab(f));
        list->symbols.reserve(table.size());
      }
      return ls::elf::for_each_elf_symbol(f, elf_table, 0, [&](const ls::symbol& s) { list->add(s); });
    });
    if (!r) raise(r.error(), info.path);
  }
  return list;
}

py::object optional_str(bool present, const std::string& s) {
  return present ? py::object(to_py(s)) : py::object(py::none());
}

// ---- ldd ------------------------------------------------------------------

// Which loader linkscope.ldd emulates for a file, as linkscope-ldd dispatches:
// PE images (the Windows loader), Mach-O images and universal files (dyld),
// anything else ld.so (which reports what it cannot read).
enum class ldd_format { elf, macho, pe };

const char* to_string(ldd_format f) {
  return f == ldd_format::pe ? "pe" : f == ldd_format::macho ? "macho" : "elf";
}

// The loader linkscope-ldd picks: the same sniff (resolve/file_format.hpp).
ldd_format ldd_format_of(const std::string& path) {
  const ls::file_format f = ls::sniff_file(path);
  if (f == ls::file_format::pe) return ldd_format::pe;
  if (f == ls::file_format::macho || f == ls::file_format::macho_universal) return ldd_format::macho;
  return ldd_format::elf;
}

struct ldd_result {
  std::string file;
  ldd_format format = ldd_format::elf;
  // ELF: ld.so's answer. PE: the Windows loader's objects and bindings (pe->link, sharing pe's lifetime).
  std::shared_ptr<const ls::resolve::dynamic_link> link;
  std::shared_ptr<const ls::resolve::dyld_link> macho;  // Mach-O: dyld's answer
  std::shared_ptr<const ls::resolve::windows_link> pe;  // PE: the Windows loader's answer
  std::vector<std::string> realpaths;  // ELF: per object, "" when not found (or index 0)
};

// The options of the Mach-O and PE loaders (linkscope-ldd's --executable,
// --arch, --dyld-*, --windows-root, --load-mode, --path, --dll-dir,
// --known-dlls, --current-dir); None leaves the loader's default.
struct ldd_platform_options {
  std::optional<std::string> executable, arch;
  std::optional<std::vector<std::string>> dyld_library_path, dyld_framework_path, dyld_fallback_library_path;
  std::optional<std::string> windows_root, load_mode;
  std::optional<std::vector<std::string>> windows_path, dll_dirs, known_dlls;
  std::optional<std::string> current_dir;
};

void run_ldd_macho(ldd_result& out, const std::string& root, const ldd_platform_options& p, bool bindings) {
  ls::resolve::dyld_options options;
  options.root = root;
  if (p.executable) options.executable = *p.executable;
  if (p.arch) options.arch = *p.arch;
  if (p.dyld_library_path) options.library_path = *p.dyld_library_path;
  if (p.dyld_framework_path) options.framework_path = *p.dyld_framework_path;
  if (p.dyld_fallback_library_path) options.fallback_library_path = *p.dyld_fallback_library_path;
  options.bindings = bindings;
  py::gil_scoped_release nogil;
  auto link = ls::resolve::link_dyld(out.file, options);
  if (!link) raise(link.error(), out.file);
  out.macho = std::make_shared<const ls::resolve::dyld_link>(std::move(*link));
}

void run_ldd_pe(ldd_result& out, const ldd_platform_options& p, bool bindings) {
  ls::resolve::winload_options options;
  if (p.windows_root) options.windows_root = *p.windows_root;
  if (p.executable) options.executable = *p.executable;
  if (p.current_dir) options.current_dir = *p.current_dir;
  if (p.windows_path) options.path = *p.windows_path;
  if (p.dll_dirs) options.dll_dirs = *p.dll_dirs;
  if (p.known_dlls) options.known_dlls = *p.known_dlls;
  if (p.load_mode) {
    if (*p.load_mode == "program") options.mode = ls::resolve::load_mode::program;
    else if (*p.load_mode == "altered") options.mode = ls::resolve::load_mode::altered;
    else if (*p.load_mode == "python") options.mode = ls::resolve::load_mode::python;
    else raise(ls::make_error(ls::errc::usage, ls::no_offset, "load_mode takes program, altered or python"), out.file);
  }
  options.check_imports = bindings;
  py::gil_scoped_release nogil;
  auto w = ls::resolve::load_windows(out.file, options);
  if (!w) raise(w.error());
  auto shared = std::make_shared<const ls::resolve::windows_link>(std::move(*w));
  out.link = std::shared_ptr<const ls::resolve::dynamic_link>(shared, &shared->link);
  out.pe = std::move(shared);
}

std::shared_ptr<ldd_result> run_ldd(const std::string& path, std::optional<std::string> root,
                                    std::vector<std::string> library_path, std::vector<std::string> preload,
                                    std::optional<std::string> cache, bool use_cache, bool env,
                                    std::optional<int> isa_level, bool bindings, ldd_platform_options platform) {
  ls::resolve::dynamic_options options;
  if (root) {
    options.search.root = *root;
    while (!options.search.root.empty() && options.search.root.back() == '/') options.search.root.pop_back();
  }
  auto out = std::make_shared<ldd_result>();
  out->file = path;
  out->format = ldd_format_of(path);
  if (out->format == ldd_format::macho) {
    run_ldd_macho(*out, options.search.root, platform, bindings);
    return out;
  }
  if (out->format == ldd_format::pe) {
    run_ldd_pe(*out, platform, bindings);
    return out;
  }
  if (!library_path.empty()) {
    std::string joined;
    for (std::size_t i = 0; i < library_path.size(); ++i) joined.append(i ? ":" : "").append(library_path[i]);
    options.search.library_path = joined;
  }
  options.search.use_env = env;
  if (cache) options.search.cache_file = *cache;
  options.search.use_cache = use_cache;
  if (isa_level) {
    if (*isa_level < 1 || *isa_level > 4)
      raise(ls::make_error(ls::errc::usage, ls::no_offset, "isa_level takes 1, 2, 3 or 4"), path);
    options.search.isa_level = *isa_level;
  }
  options.preload = std::move(preload);
  options.bindings = bindings;
  {
    py::gil_scoped_release nogil;
    auto link = ls::resolve::link_dynamic(path, options);
    if (!link) raise(link.error(), path);
    auto shared = std::make_shared<ls::resolve::dynamic_link>(std::move(*link));
    out->realpaths = ls::report::object_realpaths(*shared);
    out->link = std::move(shared);
  }
  return out;
}

// One str per object, as the document names it in "from"/"to", made once for
// a conversion of many rows: ELF its path; Mach-O and PE the path, or the
// name when it was not found.
std::vector<py::object> object_names(const ldd_result& r) {
  std::vector<py::object> names;
  if (r.format == ldd_format::macho) {
    for (const auto& o : r.macho->objects) names.push_back(to_py(ls::report::dyld_shown_path(o)));
  } else if (r.format == ldd_format::pe) {
    for (std::size_t i = 0; i < r.link->objects.size(); ++i)
      names.push_back(to_py(ls::report::windows_shown_path(*r.pe, static_cast<std::uint32_t>(i))));
  } else {
    for (const auto& o : r.link->objects) names.push_back(to_py(o.path));
  }
  return names;
}

py::list str_list(const std::vector<std::string_view>& v) {
  py::list out(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) out[i] = to_py(v[i]);
  return out;
}

// The document of `linkscope-ldd --json FILE`: report/ldd.hpp's (ELF),
// report/ldd_macho.hpp's or report/ldd_pe.hpp's, parsed.
py::dict ldd_to_dict(const ldd_result& r, bool demangle) {
  if (r.format == ldd_format::macho) {
    ls::report::ldd_macho_json_options o;
    o.demangle = demangle;
    return parse_document([&](ls::json_writer& w) { ls::report::write_json(w, r.file, *r.macho, o); });
  }
  if (r.format == ldd_format::pe) {
    ls::report::ldd_pe_json_options o;
    o.demangle = demangle;
    return parse_document([&](ls::json_writer& w) { ls::report::write_json(w, r.file, *r.pe, o); });
  }
  ls::report::ldd_json_options o;
  o.realpaths = &r.realpaths;
  o.demangle = demangle;
  return parse_document([&](ls::json_writer& w) { ls::report::write_json(w, r.file, *r.link, o); });
}

py::list ldd_libs(const ldd_result& r) {
  if (r.format != ldd_format::elf) return ldd_to_dict(r, false)["libs"].cast<py::list>();
  const auto& link = *r.link;
  py::list libs;
  for (std::size_t i = 1; i < link.objects.size(); ++i) {
    const auto& o = link.objects[i];
    py::dict d;
    d["name"] = to_py(o.name);
    d["path"] = to_py(o.found() ? std::string_view(o.path) : std::string_view());
    d["realpath"] = to_py(r.realpaths[i]);
    d["found_via"] = py::str(ls::resolve::to_string(o.via));
    if (!o.subdir.empty()) d["subdir"] = to_py(o.subdir);
    if (!o.where.empty()) d["where"] = to_py(o.where);
    d["soname"] = to_py(o.soname);
    d["needed"] = str_list(o.needed);
    d["rpath"] = to_py(o.rpath);
    d["runpath"] = to_py(o.runpath);
    d["preloaded"] = py::bool_(o.preloaded);
    py::list skipped;
    for (const auto& rej : o.rejected) {
      py::dict s;
      s["path"] = to_py(rej.path);
      s["reason"] = to_py(rej.reason);
      skipped.append(s);
    }
    d["skipped"] = skipped;
    py::list warnings;
    for (const auto& w : o.warnings) warnings.append(to_py(w));
    d["warnings"] = warnings;
    libs.append(d);
  }
  return libs;
}

// (name, path or None) per object after the root, in load order.
py::list ldd_closure(const ldd_result& r) {
  py::list out;
  auto add = [&](std::string_view name, bool found, std::string_view path) {
    out.append(py::make_tuple(to_py(name), found ? py::object(to_py(path)) : py::object(py::none())));
  };
  if (r.format == ldd_format::macho) {
    for (std::size_t i = 1; i < r.macho->objects.size(); ++i)
      add(r.macho->objects[i].name, r.macho->objects[i].found(), r.macho->objects[i].path);
    return out;
  }
  for (std::size_t i = 1; i < r.link->objects.size(); ++i) {
    const auto& o = r.link->objects[i];
    // PE: a system DLL assumed (no Windows tree given) has no path, as in the document.
    add(o.name, o.found() && !(r.pe && r.pe->info[i].assumed), o.path);
  }
  return out;
}

py::list ldd_bindings(const ldd_result& r) {
  const auto& bindings = r.format == ldd_format::macho ? r.macho->bindings : r.link->bindings;
  const std::vector<py::object> paths = object_names(r);
  py::object empty = py::str("");
  PyObject* list = PyList_New(static_cast<Py_ssize_t>(bindings.size()));
  if (!list) throw py::error_already_set();
  py::list out = py::reinterpret_steal<py::list>(list);
  Py_ssize_t k = 0;
  for (const auto& b : bindings) {
    PyObject* t = PyStructSequence_New(binding_type);
    if (!t) throw py::error_already_set();
    PyList_SET_ITEM(list, k++, t);  // the list owns it from here
    Py_INCREF(paths[b.from].ptr());
    PyStructSequence_SetItem(t, 0, paths[b.from].ptr());
    Py_INCREF(paths[b.to].ptr());
    PyStructSequence_SetItem(t, 1, paths[b.to].ptr());
    PyStructSequence_SetItem(t, 2, new_str(b.symbol));
    if (b.version.empty()) {
      Py_INCREF(empty.ptr());
      PyStructSequence_SetItem(t, 3, empty.ptr());
    } else {
      PyStructSequence_SetItem(t, 3, new_str(b.version));
    }
  }
  return out;
}

// ELF and Mach-O: each unsatisfied reference. PE: each import no export
// satisfies (missing export, forwarder target missing or in a cycle); a
// missing DLL is in `missing`.
py::list ldd_undefined(const ldd_result& r) {
  const std::vector<py::object> names = object_names(r);
  py::list out;
  auto add = [&](std::uint32_t from, std::string_view symbol, std::string_view version) {
    PyObject* t = PyStructSequence_New(undefined_type);
    if (!t) throw py::error_already_set();
    py::object o = py::reinterpret_steal<py::object>(t);
    Py_INCREF(names[from].ptr());
    PyStructSequence_SetItem(t, 0, names[from].ptr());
    PyStructSequence_SetItem(t, 1, new_str(symbol));
    PyStructSequence_SetItem(t, 2, new_str(version));
    out.append(o);
  };
  if (r.format == ldd_format::pe) {
    for (const auto& f : r.pe->findings)
      if (f.problem != ls::resolve::import_problem::missing_dll) add(f.from, f.symbol, {});
    return out;
  }
  for (const auto& u : r.format == ldd_format::macho ? r.macho->undefined : r.link->undefined)
    add(u.from, u.symbol, u.version);
  return out;
}

// ELF: ldd -u -r's list. Mach-O: the root's dylib commands no import names
// (linkscope-ldd --unused). PE: none (every import is bound by name).
py::list ldd_unused(const ldd_result& r) {
  py::list out;
  if (r.format == ldd_format::macho) {
    for (const auto& u : r.macho->unused)
      if (u.from == 0)
        out.append(to_py(u.to < r.macho->objects.size() ? ls::report::dyld_shown_path(r.macho->objects[u.to])
                                                        : u.install_name));
    return out;
  }
  if (r.format == ldd_format::pe) return out;
  for (std::uint32_t u : r.link->unused) out.append(to_py(r.link->objects[u].path));
  return out;
}

std::string ldd_interp(const ldd_result& r) {
  std::string interp;
  if (r.format != ldd_format::elf) return interp;
  for (const auto& o : r.link->objects)
    if (o.is_interpreter) interp = o.path;
  return interp;
}

py::list ldd_needed(const ldd_result& r) {
  if (r.format != ldd_format::macho) return str_list(r.link->objects[0].needed);
  py::list out;
  for (const auto& d : r.macho->objects[0].dependencies) out.append(to_py(d.install_name));
  return out;
}

// The document's "warnings": ELF, the run's, then "NAME: not found" per
// library that was not found; Mach-O and PE, the run's.
py::list ldd_warnings(const ldd_result& r) {
  py::list out;
  for (const auto& w : r.format == ldd_format::macho ? r.macho->warnings : r.link->warnings) out.append(to_py(w));
  if (r.format != ldd_format::elf) return out;
  for (const auto& o : r.link->objects)
    if (!o.found()) out.append(to_py(o.name + ": not found"));
  return out;
}

// Names of libraries that were not found (PE: an optional ext-ms-* API set
// without host is not missing).
py::list ldd_missing(const ldd_result& r) {
  py::list out;
  if (r.format == ldd_format::macho) {
    for (const auto& o : r.macho->objects)
      if (!o.found()) out.append(to_py(o.name));
    return out;
  }
  for (std::size_t i = 0; i < r.link->objects.size(); ++i)
    if (!r.link->objects[i].found() && !(r.pe && r.pe->info[i].optional_absent)) out.append(to_py(r.link->objects[i].name));
  return out;
}

// ---- dupes, absorbed, why: the CLI's --json document -------------------------


// The document of `linkscope-dupes --json [--closure R] [--abi-only] PATH...`.
py::dict run_dupes(const std::vector<std::string>& paths, std::optional<std::string> closure, bool abi_only,
                   bool thin_confine, bool demangle, const std::string& arch) {
  ls::resolve::duplicates_options options;
  options.thin.confine_to_archive_dir = thin_confine;
  options.arch = arch;
  if (closure) options.closure_root = *closure;
  if (paths.size() < 2 && options.closure_root.empty())
    raise(ls::make_error(ls::errc::usage, ls::no_offset, "give at least two files"), "");
  std::optional<ls::resolve::duplicates_report> report;
  {
    py::gil_scoped_release nogil;
    if (closure) {
      // The closure root must be readable (as linkscope-dupes --closure checks).
      auto root = ls::mapped_file::open(*closure);
      if (!root) raise(root.error(), *closure);
    }
    auto r = ls::resolve::find_duplicates(paths, options);
    if (!r) raise(r.error());
    report = std::move(*r);
  }
  ls::report::dupes_json_options jo;
  jo.abi_only = abi_only;
  jo.demangle = demangle;
  return parse_document([&](ls::json_writer& w) { ls::report::write_json(w, *report, jo); });
}

// The document of `linkscope-absorbed --json S A... [--consumer C]...
// [--cmake-libs LIST --prefix P [--allow-unevaluated]]`.
py::dict run_absorbed(const std::string& shared, std::vector<std::string> archives,
                      const std::vector<std::string>& consumers, bool thin_confine, bool demangle,
                      const std::vector<std::string>& cmake_libs, const std::string& prefix, bool allow_unevaluated,
                      const std::string& arch, const std::string& root) {
  std::vector<ls::resolve::cmake_library> named;
  if (!cmake_libs.empty()) {
    if (prefix.empty()) raise(ls::make_error(ls::errc::usage, ls::no_offset, "cmake_libs needs prefix"), shared);
    std::vector<std::string> entries;  // an element that is itself a CMake list counts as its entries
    for (const auto& e : cmake_libs)
      for (auto& part : ls::resolve::split_cmake_list(e)) entries.push_back(std::move(part));
    named = ls::resolve::read_cmake_libs(entries, prefix, archives);
    std::size_t not_evaluated = 0;
    for (const auto& lib : named) not_evaluated += ls::resolve::unevaluated(lib) ? 1 : 0;
    if (not_evaluated != 0 && !allow_unevaluated)
      raise(ls::make_error(ls::errc::usage, ls::no_offset,
                           "cmake_libs entries can be evaluated only by CMake (targets, generator expressions); "
                           "allow_unevaluated=True accepts them"),
            shared);
  }
  if (archives.empty() && named.empty()) raise(ls::make_error(ls::errc::usage, ls::no_offset, "no archive given"), shared);
  ls::resolve::absorb_options options;
  options.consumers = consumers;
  options.thin.confine_to_archive_dir = thin_confine;
  options.arch = arch;
  options.dyld.root = root;
  std::optional<ls::resolve::absorb_report> report;
  {
    py::gil_scoped_release nogil;
    auto r = ls::resolve::analyze_absorption(shared, archives, options);
    if (!r) raise(r.error());
    report = std::move(*r);
  }
  ls::report::absorbed_json_options jo;
  jo.demangle = demangle;
  jo.cmake_libs = &named;
  return parse_document([&](ls::json_writer& w) { ls::report::write_json(w, *report, jo); });
}

// ---- why: the static link ---------------------------------------------------

[[noreturn]] void raise_link(const ls::resolve::link_diagnostic& diag) {
  ls::diagnostic d(diag.err, diag.subject);
  d.context = diag.detail;
  raise(d);
}

// (document of `linkscope-why --json ARGS`, --why-extract TSV, -Map inclusions)
py::tuple run_why(const std::vector<std::string>& args, const std::string& semantics, bool thin_confine,
                  bool demangle) {
  using namespace ls::resolve;
  static_options options;
  options.thin.confine_to_archive_dir = thin_confine;
  if (semantics == "lld")
    options.semantics = link_semantics::lld;
  else if (semantics == "bfd")
    options.semantics = link_semantics::bfd;
  else
    raise(ls::make_error(ls::errc::usage, ls::no_offset, "semantics must be 'lld' or 'bfd'"), semantics);
  if (args.empty()) raise(ls::make_error(ls::errc::usage, ls::no_offset, "no linker arguments"), "");
  std::optional<static_link_result> linked;
  std::string tsv, includes;
  {
    py::gil_scoped_release nogil;
    link_diagnostic diag;
    // GNU ld also searches its built-in directories for -l; ld.lld only -L.
    locate_options locate;
    if (options.semantics == link_semantics::bfd) locate.default_dirs = gnu_ld_search_dirs();
    auto line = read_link_line(args, diag, locate);
    if (!line) raise_link(diag);
    auto r = resolve_static(*line, options, diag);
    if (!r) raise_link(diag);
    linked = std::move(*r);
    tsv = linked->why_extract_tsv();
    includes = linked->map_includes();
  }
  ls::report::why_json_options jo;
  jo.demangle = demangle;
  py::dict d = parse_document([&](ls::json_writer& w) { ls::report::write_json(w, *linked, jo); });
  return py::make_tuple(d, to_py(tsv), to_py(includes));
}

[[noreturn]] void raise_usage(const char* message, const std::string& argument) {
  raise(ls::make_error(ls::errc::usage, ls::no_offset, message), argument);
}

// ---- check: the whole-prefix check -------------------------------------------

// The document of `linkscope-check --json PREFIX [FILE...]` (stats.milliseconds
// is this call's time).
py::dict run_check(const std::string& prefix, const std::vector<std::string>& files, std::optional<std::string> package,
                   std::optional<std::vector<std::string>> declared, const std::vector<std::string>& allow,
                   const std::vector<std::string>& allow_file, bool default_allow, const std::vector<std::string>& library_path, bool conda, bool dpkg,
                   std::optional<std::string> dpkg_info, bool undefined,
                   const std::vector<std::pair<std::string, std::string>>& max_versions, int jobs,
                   std::optional<std::string> macos_target, std::optional<std::string> windows_target) {
  using namespace ls::resolve;
  prefix_options options;
  // linkscope-check --macos-target and --windows-target (the floors' parsers).
  if (macos_target) {
    options.macos_target = parse_macos_version(*macos_target);
    if (!options.macos_target) raise_usage("macos_target: not a macOS version (e.g. 11.0)", *macos_target);
  }
  if (windows_target) {
    options.windows_target = parse_windows_version(*windows_target);
    if (!options.windows_target) raise_usage("windows_target: not a Windows version (e.g. 6.1)", *windows_target);
  }
  // linkscope-check -j's range, and 0 for one thread per core.
  if (jobs < 0 || jobs > 1024)
    raise(ls::make_error(ls::errc::usage, ls::no_offset, "jobs takes 0 (one per core) to 1024"),
          "jobs=" + std::to_string(jobs));
  options.jobs = static_cast<unsigned>(jobs);
  for (const auto& [family, value] : max_versions) {
    auto limit = make_limit(family, value);
    if (!limit)
      raise(ls::make_error(ls::errc::usage, ls::no_offset, "max_versions: not a numbered version (e.g. 2.17)"),
            family + "=" + value);
    options.floor_limits.push_back(std::move(*limit));
  }
  options.use_conda = conda;
  options.use_dpkg = dpkg;
  options.undefined_is_finding = undefined;
  if (declared) {
    options.check_declared = true;
    options.declared = *declared;
  }
  if (!default_allow) options.clear_allow();
  // linkscope-check --allow-file: each user's list, read as the CLI reads it.
  for (const auto& f : allow_file) {
    auto globs = read_allow_file(f);
    if (!globs) raise(globs.error(), f);
    for (const auto& g : *globs) options.add_allow(g);
  }
  for (const auto& a : allow) options.add_allow(a);
  if (!library_path.empty()) {
    std::string joined;
    for (std::size_t i = 0; i < library_path.size(); ++i) joined.append(i ? ":" : "").append(library_path[i]);
    options.search.library_path = joined;
  }
  if (package) options.package = *package;
  if (dpkg_info) options.dpkg_info_dir = *dpkg_info;
  options.files = files;
  std::optional<prefix_report> report;
  double seconds = 0;
  {
    py::gil_scoped_release nogil;
    for (const auto& f : options.files) {
      auto opened = ls::mapped_file::open(f);
      if (!opened) raise(opened.error(), f);
    }
    const auto start = std::chrono::steady_clock::now();
    auto r = check_prefix(prefix, options);
    seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!r) raise(r.error(), prefix);
    report = std::move(*r);
  }
  return parse_document([&](ls::json_writer& w) { ls::report::write_json(w, *report, {seconds}); });
}

// ---- floors: the oldest system each file runs on ------------------------------


// The document of `linkscope-floors --json` with the same limits (each
// argument is the option of the same name; a file that cannot be read is an
// error element of "files", as in the CLI, not an exception).
py::dict run_floors(const std::vector<std::string>& paths,
                    const std::vector<std::pair<std::string, std::string>>& max_versions,
                    std::optional<std::string> max_isa, std::optional<std::string> policy,
                    std::optional<std::string> require_policy, std::optional<std::string> macos_target,
                    const std::vector<std::string>& require_archs, std::optional<std::string> windows_target,
                    const std::vector<std::string>& forbid_crt) {
  using namespace ls::resolve;
  floors_limits limits;
  for (const auto& [family, value] : max_versions) {
    auto limit = make_limit(family, value);
    if (!limit) raise_usage("max_versions: not a numbered version (e.g. 2.17)", family + "=" + value);
    limits.versions.push_back(std::move(*limit));
  }
  if (max_isa) {
    limits.max_isa = parse_x86_isa_level(*max_isa);
    if (limits.max_isa < 0) raise_usage("max_isa: expected baseline, v2, v3 or v4", *max_isa);
  }
  if (policy) {
    auto text = ls::mapped_file::open(*policy);
    if (!text) raise(text.error(), *policy);
    auto read = read_policies(text->bytes().chars());
    if (!read) raise(read.error(), *policy);
    limits.policies = std::move(*read);
  }
  if (require_policy) {
    if (limits.policies.empty()) raise_usage("require_policy needs policy", *require_policy);
    bool known = false;
    for (const auto& pol : limits.policies) known = known || pol.name == *require_policy;
    if (!known) raise_usage("require_policy: no such policy in the policy file", *require_policy);
    limits.required_policy = *require_policy;
  }
  if (macos_target) {
    limits.macos_target = parse_macos_version(*macos_target);
    if (!limits.macos_target) raise_usage("macos_target: not a macOS version (e.g. 11.0)", *macos_target);
  }
  limits.required_archs = require_archs;
  if (windows_target) {
    limits.windows_target = parse_windows_version(*windows_target);
    if (!limits.windows_target) raise_usage("windows_target: not a Windows version (e.g. 6.1)", *windows_target);
  }
  for (const auto& flavour : forbid_crt) {
    if (!is_crt_flavour_name(flavour))
      raise_usage("forbid_crt: expected ucrt, msvcrt, vcredist, debug or mingw", flavour);
    limits.forbidden_crt_flavours.push_back(flavour);
  }
  std::optional<floors_set_report> report;
  {
    py::gil_scoped_release nogil;
    report = floors_of_set(paths, limits);
  }
  return parse_document([&](ls::json_writer& w) { ls::report::write_json(w, *report, limits); });
}

}  // namespace

PYBIND11_MODULE(_core, m) {
  m.doc() = "linkscope's C++ core (use the linkscope package, which re-exports it).";

  error_type = PyErr_NewExceptionWithDoc(
      "linkscope.Error",
      "A file linkscope could not read, or a bad argument.\n\n"
      "Attributes: code (str, the error kind as docs/errors.md names it, e.g. 'bad_magic', "
      "'truncated', 'not_found'), message (str), offset (int or None: the byte offset in the file), "
      "file (str or None), member (str or None: the archive member).",
      PyExc_Exception, nullptr);
  if (!error_type) throw py::error_already_set();
  m.attr("Error") = py::handle(error_type);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const boundary_error& e) {
      set_python_error(e.d);
    }
  });

  symbol_type = make_structseq("linkscope.Symbol", "One symbol of a file's symbol table.", symbol_fields);
  binding_type = make_structseq("linkscope.Binding", "One binding: where ld.so binds a symbol reference.", binding_fields);
  undefined_type = make_structseq("linkscope.Undefined", "A symbol reference that nothing in the closure defines.", undefined_fields);
  m.attr("Symbol") = py::handle(reinterpret_cast<PyObject*>(symbol_type));
  m.attr("Binding") = py::handle(reinterpret_cast<PyObject*>(binding_type));
  m.attr("Undefined") = py::handle(reinterpret_cast<PyObject*>(undefined_type));
  enums = new enum_strings();  // lives as long as the process (the module is never unloaded)

  py::class_<symbol_iterator>(m, "SymbolIterator")
      .def("__iter__", [](py::object self) { return self; })
      .def("__next__", [](symbol_iterator& it) -> py::object {
        if (it.next >= it.list->symbols.size()) throw py::stop_iteration();
        return it.list->item(it.next++);
      });

  py::class_<symbol_list, std::shared_ptr<symbol_list>>(m, "SymbolList", R"doc(
The symbols of one table, in table order (entry 0, the null symbol, left out).

The table is read once, in C++, when symbols() is called; each Symbol is made
when iteration or indexing reaches it. names() gives every name at once.)doc")
      .def("__len__", [](const symbol_list& l) { return l.symbols.size(); })
      .def("__iter__", [](std::shared_ptr<symbol_list> l) { return symbol_iterator{std::move(l), 0}; })
      .def("__getitem__", [](const symbol_list& l, Py_ssize_t i) {
        const auto n = static_cast<Py_ssize_t>(l.symbols.size());
        if (i < 0) i += n;
        if (i < 0 || i >= n) throw py::index_error("symbol index out of range");
        return l.item(static_cast<std::size_t>(i));
      })
      .def("names", [](const symbol_list& l) {
        PyObject* list = PyList_New(static_cast<Py_ssize_t>(l.symbols.size()));
        if (!list) throw py::error_already_set();
        py::list out = py::reinterpret_steal<py::list>(list);
        for (std::size_t i = 0; i < l.symbols.size(); ++i)
          PyList_SET_ITEM(list, static_cast<Py_ssize_t>(i), new_str({l.symbols[i].name, l.symbols[i].name_size}));
        return out;
      }, "Every symbol's name (without version), as a list of str, in table order.");

  py::class_<file_info, std::shared_ptr<file_info>>(m, "File", R"doc(
An opened file (linkscope.open): its format, architecture and kind, and what
its loader reads of it: ELF the dynamic section, Mach-O the load commands (of
one slice of a universal file), PE the import and export directories. The file
stays mapped while the File or a SymbolList made from it is alive.)doc")
      .def_property_readonly("path", [](const file_info& f) { return to_py(f.path); })
      .def_property_readonly("format", [](const file_info& f) { return f.format; },
                             "'elf', 'macho', 'pe', 'coff' (a COFF object), 'archive', 'tbd' or 'unknown'.")
      .def_property_readonly("arch", [](const file_info& f) { return optional_str(!f.arch.empty(), f.arch); },
                             "The machine: ELF and PE/COFF 'x86_64', 'aarch64', 'i386', ... (or 'em_N', "
                             "'coff_N'); Mach-O as lipo names it ('x86_64', 'arm64', ...; the slice read of a "
                             "universal file); or None.")
      .def_property_readonly("archs", [](const file_info& f) { return f.archs; },
                             "Mach-O universal file: every slice's arch, in file order; [] otherwise.")
      .def_property_readonly("kind", [](const file_info& f) { return optional_str(!f.kind.empty(), f.kind); },
                             "'relocatable', 'executable', 'pie' (ELF), 'shared' (ELF DSO, Mach-O dylib, PE DLL), "
                             "'core', 'bundle' (Mach-O), 'dsym', 'dylinker', 'kext', 'stub' (Mach-O), 'archive' "
                             "(a universal file's static-library slice) or 'other'; None for other formats.")
      .def_property_readonly("bits", [](const file_info& f) { return f.bits; })
      .def_property_readonly("endian", [](const file_info& f) { return optional_str(!f.endian.empty(), f.endian); })
      .def_property_readonly("needed", [](const file_info& f) { return f.needed; },
                             "The libraries the loader loads first, in order: ELF DT_NEEDED; Mach-O the install "
                             "names of the dylib load commands (LC_LOAD_DYLIB, weak, re-export, upward, lazy); PE "
                             "the import directory's DLL names, then the delay-load directory's.")
      .def_property_readonly("soname", [](const file_info& f) { return optional_str(f.has_soname, f.soname); },
                             "ELF DT_SONAME; Mach-O the install name (LC_ID_DYLIB); PE the DLL name of the export "
                             "directory; or None.")
      .def_property_readonly("rpath", [](const file_info& f) { return optional_str(f.has_rpath, f.rpath); },
                             "ELF DT_RPATH as written (':'-separated, $ORIGIN unexpanded); Mach-O the LC_RPATH "
                             "entries joined with ':' (see rpaths); or None.")
      .def_property_readonly("rpaths", [](const file_info& f) { return f.rpaths; },
                             "The run-path folders the loader searches, in order, unexpanded: ELF DT_RUNPATH's "
                             "entries, or DT_RPATH's when there is no DT_RUNPATH (ld.so ignores DT_RPATH then); "
                             "Mach-O the LC_RPATH entries; [] for PE (Windows has none).")
      .def_property_readonly("runpath", [](const file_info& f) { return optional_str(f.has_runpath, f.runpath); },
                             "ELF DT_RUNPATH as written, or None.")
      .def_property_readonly("interp", [](const file_info& f) { return optional_str(!f.interp.empty(), f.interp); },
                             "ELF PT_INTERP; Mach-O LC_LOAD_DYLINKER (/usr/lib/dyld); or None.")
      .def("symbols",
           [](const file_info& f, const std::string& table, std::optional<std::string> arch) {
             return read_symbols(f, table, arch);
           },
           py::arg("table") = "dynamic", py::kw_only(), py::arg("arch") = py::none(), R"doc(
The symbols of one table as a SymbolList: 'dynamic' (the default) or 'static'.

ELF: .dynsym (with versions) or .symtab.
Mach-O (one slice: arch=, else the File's): 'static' is every LC_SYMTAB nlist
  entry but the stabs (llvm-nm's list); 'dynamic' those with N_EXT, what dyld
  sees: the image's external definitions and its imports (llvm-nm -g); an
  object (MH_OBJECT) has none.
PE image: 'dynamic' is the export table (named exports, defined, value
  ImageBase + RVA, 0 for a forwarder), then the named imports of the import and
  delay-load directories (undefined); exports and imports by ordinal alone are
  left out. 'static' is the COFF symbol table mingw's ld keeps (GNU nm's list;
  empty when stripped, as MSVC images are).
COFF object: 'static' is its symbol table; 'dynamic' is empty (an object has
  none; GNU nm -D says "no symbols").

Symbol.binding: 'local' (ELF STB_LOCAL; Mach-O no N_EXT; COFF STATIC, LABEL,
  FILE ... storage classes), 'global' (ELF STB_GLOBAL; Mach-O N_EXT; COFF
  EXTERNAL; PE every export and import), 'weak' (ELF STB_WEAK; Mach-O N_EXT
  with N_WEAK_DEF or N_WEAK_REF; COFF WEAK_EXTERNAL) or 'unique' (ELF only).
Symbol.type: 'func' (ELF STT_FUNC; Mach-O a section with instructions; COFF a
  function type or code section; PE an export in a code section or a
  forwarder), 'object' (data; PE a DATA export),
  'tls' (ELF STT_TLS; Mach-O thread-local variables), 'common', 'section',
  'file', 'ifunc', 'notype' (undefined Mach-O/COFF symbols and the like) or
  'other' (Mach-O N_INDR ...).
Symbol.visibility: 'hidden' is also a Mach-O private extern (N_PEXT).
Symbol.version is None and size 0 outside ELF, but a COFF function's or
  section's size.)doc")
      .def("to_dict", [](const file_info& f) {
        py::dict d;
        d["version"] = 1;
        d["file"] = to_py(f.path);
        d["format"] = f.format;
        d["arch"] = optional_str(!f.arch.empty(), f.arch);
        d["kind"] = optional_str(!f.kind.empty(), f.kind);
        d["bits"] = f.bits;
        d["interp"] = to_py(f.interp);
        d["needed"] = f.needed;
        d["soname"] = to_py(f.soname);
        d["rpath"] = to_py(f.rpath);
        d["runpath"] = to_py(f.runpath);
        return d;
      }, "The header facts as a dict (keys as linkscope-ldd --json names them for the main file).")
      .def("__repr__", [](const file_info& f) {
        return "<linkscope.File " + f.path + " " + f.format + (f.arch.empty() ? "" : " " + f.arch) +
               (f.kind.empty() ? "" : " " + f.kind) + ">";
      });

  m.def("open", &open_file, py::arg("path"), py::kw_only(), py::arg("arch") = py::none(), R"doc(
Open `path` (mapped read-only) and identify it. arch: the slice of a Mach-O
universal file ('x86_64', 'arm64', ...; default: the first slice; a thin
Mach-O file must be of that arch). Raises linkscope.Error when the file cannot
be read, its headers, dynamic section, load commands or import/export
directories are malformed, the slice is not there (code 'not_found'), or arch=
is given for another format (code 'usage').)doc");

  py::class_<ldd_result, std::shared_ptr<ldd_result>>(m, "LddResult", R"doc(
What the platform's loader would do with a program, found from the files alone
(linkscope.ldd): ld.so for ELF, dyld for Mach-O, the Windows loader for PE.
to_dict() is the document of `linkscope-ldd --json FILE`.)doc")
      .def_property_readonly("file", [](const ldd_result& r) { return to_py(r.file); })
      .def_property_readonly("format", [](const ldd_result& r) { return py::str(to_string(r.format)); },
                             "'elf', 'macho' or 'pe': which loader answered.")
      .def_property_readonly("interp", [](const ldd_result& r) { return to_py(ldd_interp(r)); },
                             "ELF: the program interpreter; '' for Mach-O and PE.")
      .def_property_readonly("needed", &ldd_needed,
                             "The root's direct dependencies: DT_NEEDED, the Mach-O dylib load commands' install "
                             "names, or the PE import (and delay-load) DLL names.")
      .def_property_readonly("rpath", [](const ldd_result& r) {
        return to_py(r.format == ldd_format::elf ? r.link->objects[0].rpath : std::string_view());
      }, "ELF: DT_RPATH; '' for Mach-O and PE.")
      .def_property_readonly("runpath", [](const ldd_result& r) {
        return to_py(r.format == ldd_format::elf ? r.link->objects[0].runpath : std::string_view());
      }, "ELF: DT_RUNPATH; '' for Mach-O and PE.")
      .def_property_readonly("libs", &ldd_libs,
                             "The closure after the program, in load order: one dict per object, as to_dict()['libs'] "
                             "(ELF: name, path, realpath, found_via, soname, needed, rpath, runpath, ...).")
      .def_property_readonly("closure", &ldd_closure,
                             "(name, path or None) per loaded object after the program: ldd's `name => path` lines.")
      .def_property_readonly("bindings", &ldd_bindings,
                             "Every binding as a Binding(from_, to, symbol, version), as LD_DEBUG=bindings "
                             "under LD_BIND_NOW (the rows of linkscope-ldd --bindings).")
      .def_property_readonly("undefined", &ldd_undefined,
                             "Undefined(from_, symbol, version) per unsatisfied reference (ldd -r; dyld's \"Symbol "
                             "not found\"; PE: a missing export or forwarder target).")
      .def_property_readonly("unused", &ldd_unused, "Direct dependencies the program never binds to (ldd -u -r).")
      .def_property_readonly("warnings", &ldd_warnings)
      .def_property_readonly("missing", &ldd_missing, "Names of libraries that were not found.")
      .def("to_dict", &ldd_to_dict, py::arg("demangle") = false,
           "The document of `linkscope-ldd --json FILE` (demangle=True: of `--json --demangle`, a \"demangled\" "
           "beside each C++ symbol).")
      .def("__repr__", [](const ldd_result& r) {
        const std::size_t objects = r.format == ldd_format::macho ? r.macho->objects.size() : r.link->objects.size();
        const std::size_t bindings = r.format == ldd_format::macho ? r.macho->bindings.size() : r.link->bindings.size();
        return "<linkscope.LddResult " + r.file + " (" + to_string(r.format) + "): " + std::to_string(objects) +
               " objects, " + std::to_string(bindings) + " bindings>";
      });

  m.def("dupes", &run_dupes, py::arg("paths"), py::kw_only(), py::arg("closure") = py::none(),
        py::arg("abi_only") = false, py::arg("thin_confine") = false, py::arg("demangle") = false, py::arg("arch") = "",
        "The document of linkscope-dupes --json (use linkscope.dupes, which wraps it).");
  m.def("absorbed", &run_absorbed, py::arg("shared"), py::arg("archives"), py::kw_only(),
        py::arg("consumers") = std::vector<std::string>{}, py::arg("thin_confine") = false,
        py::arg("demangle") = false, py::arg("cmake_libs") = std::vector<std::string>{}, py::arg("prefix") = "",
        py::arg("allow_unevaluated") = false, py::arg("arch") = "", py::arg("root") = "",
        "The document of linkscope-absorbed --json (use linkscope.absorbed, which wraps it).");
  m.def("why", &run_why, py::arg("args"), py::kw_only(), py::arg("semantics") = "lld",
        py::arg("thin_confine") = false, py::arg("demangle") = false,
        "(linkscope-why --json document, --why-extract TSV, -Map inclusions) (use linkscope.why).");
  m.def("check", &run_check, py::arg("prefix"), py::arg("files") = std::vector<std::string>{}, py::kw_only(),
        py::arg("package") = py::none(), py::arg("declared") = py::none(),
        py::arg("allow") = std::vector<std::string>{}, py::arg("allow_file") = std::vector<std::string>{},
        py::arg("default_allow") = true, py::arg("library_path") = std::vector<std::string>{}, py::arg("conda") = true, py::arg("dpkg") = true,
        py::arg("dpkg_info") = py::none(), py::arg("undefined") = false,
        py::arg("max_versions") = std::vector<std::pair<std::string, std::string>>{}, py::arg("jobs") = 1,
        py::arg("macos_target") = py::none(), py::arg("windows_target") = py::none(),
        "The document of linkscope-check --json (use linkscope.check, which wraps it).");
  m.def("floors", &run_floors, py::arg("paths"), py::kw_only(),
        py::arg("max_versions") = std::vector<std::pair<std::string, std::string>>{}, py::arg("max_isa") = py::none(),
        py::arg("policy") = py::none(), py::arg("require_policy") = py::none(), py::arg("macos_target") = py::none(),
        py::arg("require_archs") = std::vector<std::string>{}, py::arg("windows_target") = py::none(),
        py::arg("forbid_crt") = std::vector<std::string>{},
        "The document of linkscope-floors --json (use linkscope.floors, which wraps it).");
  m.def("ldd",
        [](const std::string& path, std::optional<std::string> root, std::vector<std::string> library_path,
           std::vector<std::string> preload, std::optional<std::string> cache, bool use_cache, bool env,
           std::optional<int> isa_level, bool bindings, std::optional<std::string> executable,
           std::optional<std::string> arch, std::optional<std::vector<std::string>> dyld_library_path,
           std::optional<std::vector<std::string>> dyld_framework_path,
           std::optional<std::vector<std::string>> dyld_fallback_library_path,
           std::optional<std::string> windows_root, std::optional<std::string> load_mode,
           std::optional<std::vector<std::string>> windows_path, std::optional<std::vector<std::string>> dll_dirs,
           std::optional<std::vector<std::string>> known_dlls, std::optional<std::string> current_dir) {
          ldd_platform_options p{std::move(executable), std::move(arch), std::move(dyld_library_path),
                                 std::move(dyld_framework_path), std::move(dyld_fallback_library_path),
                                 std::move(windows_root), std::move(load_mode), std::move(windows_path),
                                 std::move(dll_dirs), std::move(known_dlls), std::move(current_dir)};
          return run_ldd(path, std::move(root), std::move(library_path), std::move(preload), std::move(cache),
                         use_cache, env, isa_level, bindings, std::move(p));
        },
        py::arg("path"), py::kw_only(), py::arg("root") = py::none(),
        py::arg("library_path") = std::vector<std::string>{}, py::arg("preload") = std::vector<std::string>{},
        py::arg("cache") = py::none(), py::arg("use_cache") = true, py::arg("env") = false,
        py::arg("isa_level") = py::none(), py::arg("bindings") = true, py::arg("executable") = py::none(),
        py::arg("arch") = py::none(), py::arg("dyld_library_path") = py::none(),
        py::arg("dyld_framework_path") = py::none(), py::arg("dyld_fallback_library_path") = py::none(),
        py::arg("windows_root") = py::none(), py::arg("load_mode") = py::none(), py::arg("windows_path") = py::none(),
        py::arg("dll_dirs") = py::none(), py::arg("known_dlls") = py::none(), py::arg("current_dir") = py::none(),
        R"doc(
Emulate the loader of `path`'s platform without running it, as linkscope-ldd
does: ld.so (glibc 2.36) for ELF, dyld for Mach-O (thin or universal), the
Windows loader for PE (.exe, .dll, .pyd, .node). Options of another platform
are ignored.

root: ELF: read every file under this sysroot (the ld.so.cache too); Mach-O:
  the macOS root or SDK (of .tbd stubs) install names are looked up under.
library_path: ELF: folders, as LD_LIBRARY_PATH would give them.
preload: ELF: libraries, as LD_PRELOAD.
cache: ELF: an ld.so.cache to read instead of /etc/ld.so.cache; use_cache=False: none.
env: ELF: also read LD_LIBRARY_PATH from os.environ (off: results depend on the arguments only).
isa_level: ELF: x86-64 level 1..4 for glibc-hwcaps (default: this CPU).
bindings: resolve every relocation or import (False: only the closure; PE:
  imports are not checked against exports).
executable: Mach-O: the main executable, for @executable_path of a bundle or
  dylib; PE: the host program (its folder is the application folder).
arch: Mach-O: the slice of universal files (x86_64, arm64; default: the first).
dyld_library_path, dyld_framework_path, dyld_fallback_library_path: Mach-O:
  folders, as DYLD_LIBRARY_PATH, DYLD_FRAMEWORK_PATH, DYLD_FALLBACK_LIBRARY_PATH.
windows_root: PE: System32 of a Windows tree (and its apisetschema.dll).
load_mode: PE: 'program' (default), 'altered' (LOAD_WITH_ALTERED_SEARCH_PATH) or 'python'.
windows_path: PE: the PATH folders, in order (linkscope-ldd --path).
dll_dirs: PE, python mode: os.add_dll_directory folders.
known_dlls: PE: KnownDLLs beyond the built-in Windows 10/11 list.
current_dir: PE: the current folder (not searched unless given).)doc");
}
