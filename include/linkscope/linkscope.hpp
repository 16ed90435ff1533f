// linkscope — answers linking questions from the files alone.
//
// The umbrella header: includes every public header of the library. The
// layers (see the project's DESIGN.md) are core -> formats (ar, elf, coff) ->
// symbols -> resolve, with report/ beside them for output.
#pragma once

#define LINKSCOPE_VERSION_MAJOR 0
#define LINKSCOPE_VERSION_MINOR 1
#define LINKSCOPE_VERSION_PATCH 0

#include "linkscope/ar/archive.hpp"
#include "linkscope/ar/armap.hpp"
#include "linkscope/coff/import.hpp"
#include "linkscope/coff/object.hpp"
#include "linkscope/coff/pe.hpp"
#include "linkscope/coff/types.hpp"
#include "linkscope/core/bytes.hpp"
#include "linkscope/core/config.hpp"
#include "linkscope/core/error.hpp"
#include "linkscope/core/hash.hpp"
#include "linkscope/core/mapped_file.hpp"
#include "linkscope/elf/dynamic.hpp"
#include "linkscope/elf/file.hpp"
#include "linkscope/elf/hash_table.hpp"
#include "linkscope/elf/nm.hpp"
#include "linkscope/elf/relocations.hpp"
#include "linkscope/elf/source.hpp"
#include "linkscope/elf/symbols.hpp"
#include "linkscope/elf/types.hpp"
#include "linkscope/elf/versions.hpp"
#include "linkscope/report/json.hpp"
#include "linkscope/resolve/absorb.hpp"
#include "linkscope/resolve/duplicates.hpp"
#include "linkscope/resolve/dynamic.hpp"
#include "linkscope/resolve/ld_so_cache.hpp"
#include "linkscope/resolve/link_line.hpp"
#include "linkscope/resolve/objects.hpp"
#include "linkscope/resolve/prefix_check.hpp"
#include "linkscope/resolve/search_path.hpp"
#include "linkscope/resolve/static.hpp"
#include "linkscope/resolve/windows.hpp"
#include "linkscope/symbols/index.hpp"
#include "linkscope/symbols/symbol.hpp"
#include "linkscope/symbols/table.hpp"
