// The compiled library (core/config.hpp): the one translation unit that
// defines every out-of-line (LINKSCOPE_DEFINITIONS) entry point of the
// headers. Built only in compiled mode, where LINKSCOPE_HEADER_ONLY=0.
#define LINKSCOPE_IMPLEMENTATION
#include <linkscope/linkscope.hpp>

#if LINKSCOPE_HEADER_ONLY
#error "src/ is the compiled mode: build it with LINKSCOPE_HEADER_ONLY=0"
#endif
