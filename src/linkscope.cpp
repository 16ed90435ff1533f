// The compiled library (core/config.hpp): the one translation unit that
// defines every out-of-line (LINKSCOPE_DEFINITIONS) entry point of the
// headers. Built only in compiled mode, where LINKSCOPE_HEADER_ONLY=0.
#define LINKSCOPE_IMPLEMENTATION
#include <linkscope/linkscope.hpp>

#if LINKSCOPE_HEADER_ONLY
#error "src/ is the compiled mode: build it with LINKSCOPE_HEADER_ONLY=0"
#endif

// The format class templates whose member bodies are out of line under
// LINKSCOPE_DEFINITIONS, once for every variant the formats have; the headers
// declare these `extern template`. (The ELF templates, whose bodies every
// translation unit sees, are instantiated in elf_instances.cpp.)
template class ::linkscope::macho::file<::linkscope::macho::macho32le>;
template class ::linkscope::macho::file<::linkscope::macho::macho32be>;
template class ::linkscope::macho::file<::linkscope::macho::macho64le>;
template class ::linkscope::macho::file<::linkscope::macho::macho64be>;
template class ::linkscope::coff::basic_object<::linkscope::coff::symbol16>;
template class ::linkscope::coff::basic_object<::linkscope::coff::symbol32>;

// The ld.so object cache's open, for every ELF variant (its body is out of
// line under LINKSCOPE_DEFINITIONS; resolve/ld_so/image.hpp).
#define LINKSCOPE_CACHE_OPEN(ET)                                                                  \
  template std::shared_ptr<const linkscope::resolve::detail::object_image<ET>>                    \
  linkscope::resolve::object_cache::open<ET>(const std::string&, linkscope::mapped_file*);
LINKSCOPE_CACHE_OPEN(::linkscope::elf::elf32le)
LINKSCOPE_CACHE_OPEN(::linkscope::elf::elf32be)
LINKSCOPE_CACHE_OPEN(::linkscope::elf::elf64le)
LINKSCOPE_CACHE_OPEN(::linkscope::elf::elf64be)
#undef LINKSCOPE_CACHE_OPEN
