// linkscope — answers linking questions from the files alone.
//
// The umbrella header: the format layer (<linkscope/formats.hpp>: core,
// symbols, ar, elf, coff) and the resolvers (<linkscope/resolve.hpp>:
// resolve/ and report/). The layers are described in docs/ARCHITECTURE.md.
//
// Header-only by default; see core/config.hpp for the compiled mode
// (CMake target linkscope::compiled, meson -Dheader_only=false).
#pragma once

#define LINKSCOPE_VERSION_MAJOR 0
#define LINKSCOPE_VERSION_MINOR 1
#define LINKSCOPE_VERSION_PATCH 0

#include "linkscope/formats.hpp"

// The nm listings, built on the format readers (not part of formats.hpp).
#include "linkscope/coff/nm.hpp"
#include "linkscope/elf/nm.hpp"
#include "linkscope/macho/nm.hpp"
// What dyld needs of a Mach-O image (the dyld emulator includes it too).
#include "linkscope/macho/linkage.hpp"

#include "linkscope/resolve.hpp"
// The linkscope-nm document, over the nm listings (so not in resolve.hpp).
#include "linkscope/report/nm.hpp"
