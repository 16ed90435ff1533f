// linkscope/resolve/static.hpp — which archive members a static link pulls
// in, and why, without linking.
//
// Input: a `link_line` (link_line.hpp). Output: every extracted member with the
// reference that pulled it in (file, symbol), the symbols left undefined, the
// duplicate strong definitions and the members never needed. Two semantics:
//
// lld (ld.lld 14, ELF/Symbols.cpp, InputFiles.cpp, Driver.cpp)
//   - Files are parsed in command-line order after the -u symbols are entered.
//     An archive contributes one *lazy* symbol per armap entry, in armap order.
//     Archive members stay available for the whole link: a reference written
//     after the archive still extracts from it.
//   - An object's globals are resolved defined-first, then its undefined
//     symbols in symbol-table order. An undefined reference to a lazy symbol,
//     or a lazy symbol arriving for an undefined one, extracts the member at
//     once and parses it recursively (depth first). The --why-extract row is
//     written *after* that recursion returns, so rows come in post-order; its
//     reference is the file that referenced the symbol first (lazy arriving)
//     or the referencing file (reference arriving).
//   - A weak undefined reference never extracts; a common symbol does not
//     extract (no --fortran-common in lld 14's default); a shared library's
//     definition (dynsym, default version, not hidden) satisfies a reference
//     and stops later archives; a shared library's unversioned undefined
//     symbols are references like any other. COMDAT groups: the first file
//     to define a signature keeps it, later copies' symbols become undefined.
//   - After all files: --defsym right-hand-side symbols, the entry symbol
//     ("--entry"), then --wrap (__real_/__wrap_) may extract more.
// bfd (GNU ld 2.40, bfd/elflink.c elf_link_add_archive_symbols, ld/ldlang.c)
//   - Strictly left to right. An archive is scanned when reached: its armap is
//     walked in order, a member is loaded when an entry names a currently
//     undefined symbol (or a common one the member *defines*), and the walk
//     repeats while loading added new undefined symbols. A group is rescanned
//     until a pass adds no new undefined symbol. --defsym and -u act first.
//   - The -Map "Archive member included to satisfy reference by file
//     (symbol)" list gives, per member, the armap name and the file that first
//     referenced it (bfd_link_hash_entry u.undef.abfd).
//   - An --as-needed shared library that satisfies no regular reference when
//     it is reached is dropped (its symbols never enter the table).
//
// Names are views into the mapped inputs, which the result keeps alive.
//
// The emulation is read in three phases, one file each:
//   static_load.hpp     open the inputs and archives, read their symbols
//   static_extract.hpp  the symbol table and the lld / bfd extraction rules
//   static_report.hpp   the result: files, extractions, undefined, duplicates,
//                       and the --why-extract / -Map texts
// Names are views into the mapped inputs, which the result keeps alive.
// Lookups go through one keyed_index (symbols/index.hpp) and each archive's
// armap; the work is linear in the symbols read.
#pragma once

#include "linkscope/resolve/static_report.hpp"
#include "linkscope/resolve/static_load.hpp"
#include "linkscope/resolve/static_extract.hpp"
