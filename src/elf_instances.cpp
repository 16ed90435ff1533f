// The compiled library (core/config.hpp): the ELF class templates of
// <linkscope/formats.hpp>, instantiated once for each of the four ELF
// variants. Every other translation unit of compiled mode sees them as
// `extern template` (formats.hpp) and links these.
#include <linkscope/elf/nm.hpp>
#include <linkscope/formats.hpp>

#if LINKSCOPE_HEADER_ONLY
#error "src/ is the compiled mode: build it with LINKSCOPE_HEADER_ONLY=0"
#endif

LINKSCOPE_ELF_TEMPLATES(, ::linkscope::elf::elf32le)
LINKSCOPE_ELF_TEMPLATES(, ::linkscope::elf::elf32be)
LINKSCOPE_ELF_TEMPLATES(, ::linkscope::elf::elf64le)
LINKSCOPE_ELF_TEMPLATES(, ::linkscope::elf::elf64be)

template class ::linkscope::elf::nm_classifier<::linkscope::elf::elf32le>;
template class ::linkscope::elf::nm_classifier<::linkscope::elf::elf32be>;
template class ::linkscope::elf::nm_classifier<::linkscope::elf::elf64le>;
template class ::linkscope::elf::nm_classifier<::linkscope::elf::elf64be>;
