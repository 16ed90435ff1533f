// linkscope/resolve/dynamic.hpp — ld.so emulation: what a program would load and
// where every symbol reference would bind, computed from the files alone.
//
// Nothing is executed, dlopened or mapped as code. The emulation follows
// glibc 2.36, in three phases, one file each:
//   ld_so/load.hpp   the closure: main, preloads, BFS over DT_NEEDED through the
//                    library search (search_path.hpp, ld_so_cache.hpp); the
//                    version check of dl-version.c
//   ld_so/bind.hpp   every relocation's symbol looked up as _dl_lookup_symbol_x
//                    does, under LD_BIND_NOW; ldd -u; interposed names
//   load.hpp's report()  the result in load order (ld_so/result.hpp)
// Every object is read once through elf/ into an object image
// (ld_so/image.hpp), taken from an object_cache: pass one cache to
// link_dynamic for every root of a run and each file is mapped and parsed
// once per run (see ld_so/image.hpp, "Loader cache API").
#pragma once

#include <string>

#include "linkscope/core/config.hpp"
#include "linkscope/core/error.hpp"
#include "linkscope/core/mapped_file.hpp"
#include "linkscope/elf/file.hpp"
#include "linkscope/resolve/ld_so/image.hpp"
#include "linkscope/resolve/ld_so/result.hpp"
#include "linkscope/resolve/search_path.hpp"
// The phases are the implementation: a TU of compiled mode that only calls
// link_dynamic sees the declarations below and never parses them.
#if LINKSCOPE_DEFINITIONS
#include "linkscope/resolve/ld_so/bind.hpp"
#include "linkscope/resolve/ld_so/load.hpp"
#endif

namespace linkscope {
inline namespace v0 {
namespace resolve {
#if LINKSCOPE_DEFINITIONS
namespace detail {

// The pipeline for one root of ELF variant ET.
template <class ET>
result<void> link_with(const std::string& program, const dynamic_options& options, object_cache& cache,
                       dynamic_link& out, mapped_file* preopened) {
  loaded_object main;
  main.name = program;
  main.file = options.search.root.empty() || program.empty() || program[0] != '/' ? program
                                                                                  : options.search.root + program;
  auto img = cache.template open<ET>(main.file, preopened);
  if (!img->ok) {
    if (!img->readable) return make_error(errc::not_found, no_offset, "cannot read the program");

    auto f = elf::file<ET>::open(img->mapped->bytes());
    if (!f) return f.error();
    auto d = elf::dynamic_info<ET>::read(*f);
    if (!d) return d.error();
  }
  loader_target target = options.search.target;
  target.elf_class = ET::is64 ? elf::elfclass64 : elf::elfclass32;
  target.elf_data = ET::endianness == std::endian::little ? elf::elfdata2lsb : elf::elfdata2msb;
  target.machine = img->machine;
  binder<ET> l(options, out, cache, target);
  // The closure: main, preloads, then breadth-first over DT_NEEDED.
  l.load(program, std::move(img), std::move(main));
  // dl-version.c: every needed version is defined where it is needed from.
  if (options.versions) l.check_versions();
  // Every relocation's symbol, as under LD_BIND_NOW.
  if (options.bindings) l.bind();
  // Objects in load order; the mappings stay with the result.
  l.report();
  return ok();
}

}  // namespace detail
#endif  // LINKSCOPE_DEFINITIONS

// Emulate ld.so for `program` (spelled as on ld.so's command line; ldd adds "./"
// to a bare name). Errors are only for an unreadable or non-ELF program; every
// problem further down the closure is recorded on the objects and in warnings.
// With `cache`, the objects come from (and stay in) it: one cache for all the
// roots of a run reads each file once.
result<dynamic_link> link_dynamic(const std::string& program, const dynamic_options& options = {});
// `opened`, when given, is the program's file already open (its host path
// as link_dynamic would spell it: the root + the program, with "./" before a
// bare name); the cache takes it unless it holds the program already.
result<dynamic_link> link_dynamic(const std::string& program, const dynamic_options& options, object_cache& cache,
                                  mapped_file* opened = nullptr);

#if LINKSCOPE_DEFINITIONS
LINKSCOPE_FUNC result<dynamic_link> link_dynamic(const std::string& program_arg, const dynamic_options& options,
                                                 object_cache& cache, mapped_file* opened) {
  std::string program = program_arg;
  if (program.find('/') == std::string::npos) program = "./" + program;
  const std::string file = options.search.root.empty() || program[0] != '/' ? program : options.search.root + program;
  dynamic_link out;
  result<void> r = ok();
  // A program the cache already holds, parsed: no need to open it again.
  const int known = cache.parsed_class_of(file);
  if (known >= 0) {
    switch (known) {
      case 0: r = detail::link_with<elf::elf64le>(program, options, cache, out, nullptr); break;
      case 1: r = detail::link_with<elf::elf64be>(program, options, cache, out, nullptr); break;
      case 2: r = detail::link_with<elf::elf32le>(program, options, cache, out, nullptr); break;
      default: r = detail::link_with<elf::elf32be>(program, options, cache, out, nullptr); break;
    }
    if (!r) return r.error();
    return out;
  }
  auto mapped = opened != nullptr ? result<mapped_file>(std::move(*opened)) : mapped_file::open(file);
  if (!mapped) return mapped.error();
  auto kind = elf::identify(mapped->bytes());
  if (!kind) return kind.error();
  // The cache takes this mapping when it does not know the file yet.
  mapped_file* pre = &*mapped;
  if (kind->is64())
    r = kind->big_endian() ? detail::link_with<elf::elf64be>(program, options, cache, out, pre)
                           : detail::link_with<elf::elf64le>(program, options, cache, out, pre);
  else
    r = kind->big_endian() ? detail::link_with<elf::elf32be>(program, options, cache, out, pre)
                           : detail::link_with<elf::elf32le>(program, options, cache, out, pre);
  if (!r) return r.error();
  return out;
}

LINKSCOPE_FUNC result<dynamic_link> link_dynamic(const std::string& program, const dynamic_options& options) {
  object_cache cache;
  return link_dynamic(program, options, cache);
}
#endif

}  // namespace resolve
}  // namespace v0
}  // namespace linkscope
