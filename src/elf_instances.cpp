// The compiled library (core/config.hpp): the ELF class templates of
// <linkscope/formats.hpp>, instantiated once for each of the four ELF
// variants. Every other translation unit of compiled mode sees them as
// `extern template` (formats.hpp) and links these.
#include <linkscope/formats.hpp>

#if LINKSCOPE_HEADER_ONLY
#error "src/ is the compiled mode: build it with LINKSCOPE_HEADER_ONLY=0"
#endif

LINKSCOPE_ELF_TEMPLATES(, ::linkscope::elf::elf32le)
LINKSCOPE_ELF_TEMPLATES(, ::linkscope::elf::elf32be)
LINKSCOPE_ELF_TEMPLATES(, ::linkscope::elf::elf64le)
LINKSCOPE_ELF_TEMPLATES(, ::linkscope::elf::elf64be)
