// linkscope/formats.hpp — the format layer: core, symbols, ar, elf, coff, macho.
//
// Everything that reads one file format, and nothing that resolves a link.
// A program that only reads symbols or walks an archive includes this and
// pays for neither the resolvers nor their standard headers. The nm listings
// (elf/nm.hpp, macho/nm.hpp: a tool's output format built on these readers)
// are not part of it, and neither is macho/linkage.hpp (what dyld needs of an
// image, read for every Mach-O variant: the dyld emulator's input); the
// umbrella <linkscope/linkscope.hpp> includes them all, and a program that
// needs one includes it.
// <linkscope/linkscope.hpp> includes this and <linkscope/resolve.hpp>.
//
// In compiled mode (core/config.hpp) the ELF templates below are explicitly
// instantiated for the four ELF variants in src/, and every translation unit
// of that mode sees the `extern template` declarations at the end of this
// file, so it does not instantiate them again.
#pragma once

#include "linkscope/core/config.hpp"

#include "linkscope/core/bytes.hpp"
#include "linkscope/core/error.hpp"
#include "linkscope/core/hash.hpp"
#include "linkscope/core/json_reader.hpp"
#include "linkscope/core/mapped_file.hpp"

#include "linkscope/symbols/demangle.hpp"
#include "linkscope/symbols/index.hpp"
#include "linkscope/symbols/symbol.hpp"
#include "linkscope/symbols/table.hpp"

#include "linkscope/ar/archive.hpp"
#include "linkscope/ar/armap.hpp"

#include "linkscope/elf/dynamic.hpp"
#include "linkscope/elf/file.hpp"
#include "linkscope/elf/hash_table.hpp"
#include "linkscope/elf/notes.hpp"
#include "linkscope/elf/relocations.hpp"
#include "linkscope/elf/source.hpp"
#include "linkscope/elf/symbols.hpp"
#include "linkscope/elf/types.hpp"
#include "linkscope/elf/versions.hpp"

#include "linkscope/coff/import.hpp"
#include "linkscope/coff/object.hpp"
#include "linkscope/coff/pe.hpp"
#include "linkscope/coff/types.hpp"

#include "linkscope/macho/binds.hpp"
#include "linkscope/macho/exports.hpp"
#include "linkscope/macho/fat.hpp"
#include "linkscope/macho/file.hpp"
#include "linkscope/macho/leb128.hpp"
#include "linkscope/macho/symbols.hpp"
#include "linkscope/macho/tbd.hpp"
#include "linkscope/macho/types.hpp"

// The ELF class templates compiled once per variant in compiled mode.
// LINKSCOPE_ELF_TEMPLATES(P, ET) expands to the explicit instantiation of
// each for ELF variant ET, prefixed by P: `extern` for the declarations
// here, nothing for the definitions in src/elf_instances.cpp.
#define LINKSCOPE_ELF_TEMPLATES(P, ET)                    \
  P template class ::linkscope::elf::file<ET>;            \
  P template class ::linkscope::elf::dynamic_info<ET>;    \
  P template class ::linkscope::elf::hash_table<ET>;      \
  P template class ::linkscope::elf::version_tables<ET>;  \
  P template class ::linkscope::elf::symbol_table_view<ET>;

// Every translation unit of compiled mode, the library's own included (its
// src/elf_instances.cpp follows these declarations with the definitions).
#if LINKSCOPE_EXTERN_TEMPLATES || defined(LINKSCOPE_IMPLEMENTATION)
LINKSCOPE_ELF_TEMPLATES(extern, ::linkscope::elf::elf32le)
LINKSCOPE_ELF_TEMPLATES(extern, ::linkscope::elf::elf32be)
LINKSCOPE_ELF_TEMPLATES(extern, ::linkscope::elf::elf64le)
LINKSCOPE_ELF_TEMPLATES(extern, ::linkscope::elf::elf64be)
#endif
