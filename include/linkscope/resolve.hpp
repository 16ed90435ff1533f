// linkscope/resolve.hpp — the resolvers and their reports.
//
// The link-time questions (static resolution, link lines, duplicates,
// absorption, Windows imports) and the run-time ones (the ld.so emulator,
// its search path and cache, prefix checks), plus report/ for output. They
// build on the format layer (<linkscope/formats.hpp>); each header includes
// the format headers it needs. <linkscope/linkscope.hpp> includes both.
//
// In compiled mode (core/config.hpp) the resolvers' entry points are
// declarations here and definitions in src/linkscope.cpp.
#pragma once

#include "linkscope/core/config.hpp"


#include "linkscope/resolve/absorb.hpp"
#include "linkscope/resolve/cmake_libs.hpp"
#include "linkscope/resolve/check.hpp"
#include "linkscope/resolve/conda_meta.hpp"
#include "linkscope/resolve/duplicates.hpp"
#include "linkscope/resolve/dyld.hpp"
#include "linkscope/resolve/floors.hpp"
#include "linkscope/resolve/floors_macho.hpp"
#include "linkscope/resolve/floors_pe.hpp"
#include "linkscope/resolve/floors_policy.hpp"
#include "linkscope/resolve/floors_set.hpp"
#include "linkscope/resolve/dynamic.hpp"
#include "linkscope/resolve/ld_so/image.hpp"
#include "linkscope/resolve/ld_so/result.hpp"
#include "linkscope/resolve/ld_so_cache.hpp"
#include "linkscope/resolve/link_line.hpp"
#include "linkscope/resolve/objects.hpp"
#include "linkscope/resolve/package_findings.hpp"
#include "linkscope/resolve/packages.hpp"
#include "linkscope/resolve/prefix_check.hpp"
#include "linkscope/resolve/search_path.hpp"
#include "linkscope/resolve/static.hpp"
#include "linkscope/resolve/static_extract.hpp"
#include "linkscope/resolve/static_load.hpp"
#include "linkscope/resolve/static_report.hpp"
#include "linkscope/resolve/pe_load.hpp"
#include "linkscope/resolve/windows.hpp"

// The ld.so emulator's phases: implementation, parsed only where the
// definitions are (header-only mode, and src/ in compiled mode).
// report/: the one diagnostic formatter, the JSON writer and each CLI's --json document.
#include "linkscope/report/diagnostic.hpp"
#include "linkscope/report/json.hpp"
#include "linkscope/report/json_error.hpp"
#include "linkscope/report/absorbed.hpp"
#include "linkscope/report/ar.hpp"
#include "linkscope/report/check.hpp"
#include "linkscope/report/dupes.hpp"
#include "linkscope/report/floors.hpp"
#include "linkscope/report/ldd.hpp"
#include "linkscope/report/ldd_macho.hpp"
#include "linkscope/report/ldd_pe.hpp"
#include "linkscope/report/why.hpp"

#if LINKSCOPE_DEFINITIONS
#include "linkscope/resolve/ld_so/bind.hpp"
#include "linkscope/resolve/ld_so/load.hpp"
#endif
