// linkscope/core/config.hpp — the two build modes.
//
// Header-only (the default, LINKSCOPE_HEADER_ONLY=1): every function is
// defined in the headers, `inline`, and a program needs nothing but the
// include path (the CMake target linkscope::linkscope, meson's
// dependency('linkscope'), the single header).
//
// Compiled (LINKSCOPE_HEADER_ONLY=0; CMake -DLINKSCOPE_HEADER_ONLY=OFF gives
// the target linkscope::compiled, meson -Dheader_only=false): as {fmt} and
// simdjson do it, the heavy entry points (the resolvers, the CLIs' analyses)
// and the templates over the four ELF variants (and macho::file over the
// four Mach-O variants, coff::basic_object over its two symbol records) are
// compiled once, in src/.
// A consumer's translation units see only their declarations and
// `extern template` declarations, so they neither parse nor instantiate the
// bodies.
//
// A header writes a heavy non-template entry point like this:
//
//   result<dynamic_link> link_dynamic(const std::string& program,
//                                     const dynamic_options& options = {});
//   #if LINKSCOPE_DEFINITIONS
//   LINKSCOPE_FUNC result<dynamic_link> link_dynamic(const std::string& program,
//                                                    const dynamic_options& options) { ... }
//   #endif
//
// src/ defines LINKSCOPE_IMPLEMENTATION before it includes the headers, in
// exactly one translation unit per header group, so each out-of-line
// definition exists once.
#pragma once

#ifndef LINKSCOPE_HEADER_ONLY
#define LINKSCOPE_HEADER_ONLY 1
#endif

#if LINKSCOPE_HEADER_ONLY
#define LINKSCOPE_FUNC inline
#define LINKSCOPE_DEFINITIONS 1
#define LINKSCOPE_EXTERN_TEMPLATES 0
#elif defined(LINKSCOPE_IMPLEMENTATION)
#define LINKSCOPE_FUNC
#define LINKSCOPE_DEFINITIONS 1
#define LINKSCOPE_EXTERN_TEMPLATES 0
#else
#define LINKSCOPE_FUNC
#define LINKSCOPE_DEFINITIONS 0
#define LINKSCOPE_EXTERN_TEMPLATES 1
#endif
