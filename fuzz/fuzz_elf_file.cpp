// Fuzz target: elf::file — the ELF header, extended numbering, section and
// program header tables, section names, contents and string tables, section
// lookup by type and name, vaddr -> offset through PT_LOAD.
#include <cstddef>
#include <cstdint>

#include "fuzz_common.hpp"
#include "linkscope/elf/file.hpp"

using namespace linkscope;
using linkscope_fuzz::sink;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const byte_view bytes = linkscope_fuzz::as_bytes(data, size);
  sink(static_cast<std::uint64_t>(elf::is_elf(bytes)));
  auto r = elf::visit_elf(bytes, [](const auto& f) -> result<void> {
    using ET = typename std::decay_t<decltype(f)>::types;
    sink(std::uint64_t{f.type()} + f.machine() + f.osabi() + f.section_count() + f.shstrndx());
    std::size_t i = 0;
    for (const auto& sh : f.section_headers()) {
      linkscope_fuzz::sink_result(f.section_name(sh));
      linkscope_fuzz::sink_result(f.section_data(sh), [](byte_view d) { sink(d); });
      linkscope_fuzz::sink_result(f.template table<typename ET::Sym>(sh, true),
                                  [](const auto& t) { sink(t.size()); });
      if (static_cast<u32>(sh.sh_type) == elf::SHT_STRTAB)
        linkscope_fuzz::sink_result(f.string_table(i), [](byte_view d) { sink(d); });
      sink(f.section_header_offset(i));
      ++i;
    }
    linkscope_fuzz::sink_result(f.section(f.section_count()), [](const auto&) {});
    linkscope_fuzz::sink_result(f.string_table(~u64{0}), [](byte_view d) { sink(d); });
    for (u32 type : {elf::SHT_SYMTAB, elf::SHT_DYNSYM, elf::SHT_STRTAB, elf::SHT_DYNAMIC})
      if (auto found = f.find_section(type)) sink(found->first);
    for (const char* name : {".text", ".dynsym", ".gnu.version_d", ".shstrtab"})
      if (auto found = f.find_section(std::string_view(name))) sink(found->first);
    for (const auto& ph : f.program_headers()) {
      sink(static_cast<u64>(ph.p_type));
      linkscope_fuzz::sink_result(f.vaddr_to_offset(ph.p_vaddr, 1, 0));
      linkscope_fuzz::sink_result(f.vaddr_to_offset(ph.p_vaddr + ph.p_filesz, 0, 0));
      linkscope_fuzz::sink_result(f.vaddr_to_offset(ph.p_vaddr, ph.p_filesz, 0));
    }
    for (u32 type : {elf::PT_LOAD, elf::PT_DYNAMIC, elf::PT_INTERP})
      if (auto seg = f.find_segment(type)) sink(static_cast<u64>(seg->p_offset));
    return {};
  });
  linkscope_fuzz::sink_result(r);
  return 0;
}
