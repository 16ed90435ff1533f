// A consumer of linkscope: maps its own executable, checks the ELF magic,
// opens it as ELF, reads it as an import library (an out-of-line entry point:
// in compiled mode it links from the library) and indexes a few names. Built
// by scripts/consumer-builds through find_package, add_subdirectory, a meson
// subproject and pkg-config, header-only and compiled, and the single header.
#include <linkscope/linkscope.hpp>

#include <cstdio>
#include <string>

int main(int argc, char** argv) {
  if (argc < 1) return 2;
  auto self = linkscope::mapped_file::open(argv[0]);
  if (!self) {
    std::fprintf(stderr, "consumer: %s\n", self.error().message);
    return 1;
  }
  auto magic = self->bytes().sub(0, 4);
  if (!magic || magic->chars() != std::string_view("\x7f" "ELF", 4)) return 1;
  auto kind = linkscope::elf::identify(self->bytes());
  if (!kind) return 1;
  if (kind->is64() && !kind->big_endian()) {
    auto elf = linkscope::elf::file<linkscope::elf::elf64le>::open(self->bytes());
    if (!elf) return 1;
  }
  // Not a COFF object nor an import member: one member, counted as other.
  auto lib = linkscope::coff::import_library::from_bytes(self->bytes());
  if (!lib || lib->member_count() != 1 || lib->other_members() != 1 || !lib->records().empty()) return 1;
  linkscope::symbol_table table;
  for (const char* name : {"main", "printf", "main"}) {
    linkscope::symbol sym;
    sym.name = name;
    table.push_back(sym);
  }
  auto index = linkscope::hash_index::build(table);
  if (index.find("main").size() != 2 || index.contains("exit")) return 1;
  std::printf("consumer ok: %zu bytes, %zu symbols indexed\n", self->size(), index.size());
  return 0;
}
