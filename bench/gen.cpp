// linkscope-gen: writes large, valid linking inputs directly (no compiler),
// for the scaling benchmarks (bench/scaling.sh).
//
//   linkscope-gen so N OUT            ELF64 x86-64 shared library, N exported
//                                     versioned symbols (verdef + versym),
//                                     DT_HASH and DT_GNU_HASH, section headers,
//                                     PT_LOAD (R+X, RW) and PT_DYNAMIC
//   linkscope-gen ar N OUT [--per-member K] [--sym64]
//                                     GNU ar archive, N symbols in N/K tiny
//                                     ELF64 relocatable members (default K 4),
//                                     '/' armap ('/SYM64/' with --sym64 or
//                                     when offsets pass 4 GiB)
//   linkscope-gen implib N OUT [--dll NAME]
//                                     COFF short-import library (x86-64) with
//                                     N import members and a '/' armap
//
// Symbol names are gen_sym_<i>. In the .so, i%8==0 is name@VERS_1 (hidden),
// i%8==1 is name@@VERS_1, the rest name@@VERS_2 (VERS_2 inherits VERS_1);
// i%7==0 is STB_WEAK. The hash functions are written here independently of
// the library's (core/hash.hpp) so that the generator checks the reader.
// The files are meant to pass readelf -a, nm -D / nm -s and llvm-nm-14 and
// ld.so's dlopen/dlsym (bench/scaling.sh checks the first ones at 10k).
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace {

using u8 = std::uint8_t;
using u16 = std::uint16_t;
using u32 = std::uint32_t;
using u64 = std::uint64_t;

struct buffer {
  std::vector<char> bytes;
  std::size_t size() const { return bytes.size(); }
  template <class T>
  void put_le(T v) {
    for (std::size_t i = 0; i < sizeof(T); ++i) bytes.push_back(static_cast<char>((static_cast<u64>(v) >> (8 * i)) & 0xff));
  }
  template <class T>
  void put_be(T v) {
    for (std::size_t i = sizeof(T); i-- > 0;) bytes.push_back(static_cast<char>((static_cast<u64>(v) >> (8 * i)) & 0xff));
  }
  template <class T>
  void set_le(std::size_t at, T v) {
    for (std::size_t i = 0; i < sizeof(T); ++i) bytes[at + i] = static_cast<char>((static_cast<u64>(v) >> (8 * i)) & 0xff);
  }
  void put(std::string_view s) { bytes.insert(bytes.end(), s.begin(), s.end()); }
  void put_cstr(std::string_view s) {
    put(s);
    bytes.push_back('\0');
  }
  void zeros(std::size_t n) { bytes.insert(bytes.end(), n, '\0'); }
  void align(std::size_t a, char fill = '\0') {
    while (bytes.size() % a != 0) bytes.push_back(fill);
  }
};

u32 elf_hash(std::string_view name) {  // gABI "Hash Table"
  u32 h = 0;
  for (unsigned char c : name) {
    h = (h << 4) + c;
    u32 g = h & 0xf0000000u;
    if (g != 0) h ^= g >> 24;
    h &= ~g;
  }
  return h;
}

u32 dl_new_hash(std::string_view name) {  // GNU hash: h*33 + c
  u32 h = 5381;
  for (unsigned char c : name) h = h * 33 + c;
  return h;
}

std::string sym_name(u64 i) { return "gen_sym_" + std::to_string(i); }

bool write_file(const char* path, const buffer& b) {
  std::FILE* f = std::fopen(path, "wb");
  if (f == nullptr) return false;
  bool ok = std::fwrite(b.bytes.data(), 1, b.bytes.size(), f) == b.bytes.size();
  return std::fclose(f) == 0 && ok;
}

void put_ehdr(buffer& b, u16 type, u64 phoff, u16 phnum, u64 shoff, u16 shnum, u16 shstrndx) {
  const unsigned char ident[16] = {0x7f, 'E', 'L', 'F', 2, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  b.put(std::string_view(reinterpret_cast<const char*>(ident), 16));
  b.put_le<u16>(type);
  b.put_le<u16>(62);  // EM_X86_64
  b.put_le<u32>(1);
  b.put_le<u64>(0);  // e_entry
  b.put_le<u64>(phoff);
  b.put_le<u64>(shoff);
  b.put_le<u32>(0);
  b.put_le<u16>(64);
  b.put_le<u16>(phnum == 0 ? 0 : 56);
  b.put_le<u16>(phnum);
  b.put_le<u16>(64);
  b.put_le<u16>(shnum);
  b.put_le<u16>(shstrndx);
}

struct shdr {
  u32 name = 0, type = 0;
  u64 flags = 0, addr = 0, offset = 0, size = 0;
  u32 link = 0, info = 0;
  u64 align = 0, entsize = 0;
};

void put_shdr(buffer& b, const shdr& s) {
  b.put_le<u32>(s.name);
  b.put_le<u32>(s.type);
  b.put_le<u64>(s.flags);
  b.put_le<u64>(s.addr);
  b.put_le<u64>(s.offset);
  b.put_le<u64>(s.size);
  b.put_le<u32>(s.link);
  b.put_le<u32>(s.info);
  b.put_le<u64>(s.align);
  b.put_le<u64>(s.entsize);
}

void put_sym(buffer& b, u32 name, u8 info, u8 other, u16 shndx, u64 value, u64 size) {
  b.put_le<u32>(name);
  b.bytes.push_back(static_cast<char>(info));
  b.bytes.push_back(static_cast<char>(other));
  b.put_le<u16>(shndx);
  b.put_le<u64>(value);
  b.put_le<u64>(size);
}

constexpr u32 SHT_PROGBITS = 1, SHT_SYMTAB = 2, SHT_STRTAB = 3, SHT_HASH = 5, SHT_DYNAMIC = 6, SHT_DYNSYM = 11,
              SHT_GNU_HASH = 0x6ffffff6, SHT_GNU_verdef = 0x6ffffffd, SHT_GNU_versym = 0x6fffffff;
constexpr u64 SHF_WRITE = 1, SHF_ALLOC = 2, SHF_EXECINSTR = 4;

// ---------------------------------------------------------------- shared library
int gen_so(u64 n, const char* out) {
  if (n == 0 || n > 0xfffffff0u) return std::fprintf(stderr, "gen so: N must be 1..2^32-16\n"), 2;
  const std::string soname = "libgen" + std::to_string(n) + ".so";
  // Order dynsym by GNU hash bucket (required by .gnu.hash).
  std::vector<std::string> names(n);
  std::vector<u32> ghash(n);
  for (u64 i = 0; i < n; ++i) {
    names[i] = sym_name(i);
    ghash[i] = dl_new_hash(names[i]);
  }
  const u32 nbuckets = static_cast<u32>(std::max<u64>(1, n / 4));
  std::vector<u32> order(n);
  for (u64 i = 0; i < n; ++i) order[i] = static_cast<u32>(i);
  std::stable_sort(order.begin(), order.end(), [&](u32 a, u32 b) { return ghash[a] % nbuckets < ghash[b] % nbuckets; });
  const u64 nsyms = n + 1;

  // .dynstr: "", soname, versions, names (in dynsym order).
  buffer dynstr;
  dynstr.put_cstr("");
  const u32 soname_off = static_cast<u32>(dynstr.size());
  dynstr.put_cstr(soname);
  const u32 v1_off = static_cast<u32>(dynstr.size());
  dynstr.put_cstr("VERS_1");
  const u32 v2_off = static_cast<u32>(dynstr.size());
  dynstr.put_cstr("VERS_2");
  std::vector<u64> name_off(n);
  for (u64 k = 0; k < n; ++k) {
    name_off[k] = dynstr.size();
    dynstr.put_cstr(names[order[k]]);
  }
  if (dynstr.size() > 0xffffffffu) return std::fprintf(stderr, "gen so: string table over 4 GiB\n"), 2;

  // Layout (vaddr == file offset).
  const u64 phnum = 3;
  u64 off = 64 + 56 * phnum;
  auto place = [&](u64 size, u64 align) {
    off = (off + align - 1) / align * align;
    u64 at = off;
    off += size;
    return at;
  };
  const u32 sysv_nbucket = static_cast<u32>(std::max<u64>(1, n / 2) | 1);
  const u64 hash_off = place(4 * (2 + u64{sysv_nbucket} + nsyms), 8);
  u64 bloom_words = 1;
  while (bloom_words < std::max<u64>(1, n * 12 / 64)) bloom_words *= 2;
  const u32 bloom_shift = 26;
  const u64 gnu_off = place(16 + 8 * bloom_words + 4 * u64{nbuckets} + 4 * n, 8);
  const u64 dynsym_off = place(24 * nsyms, 8);
  const u64 dynstr_off = place(dynstr.size(), 1);
  const u64 versym_off = place(2 * nsyms, 2);
  const u64 verdef_size = 3 * 20 + 4 * 8;
  const u64 verdef_off = place(verdef_size, 8);
  const u64 text_size = 64;
  const u64 text_off = place(text_size, 16);
  const u64 text_end = off;
  off = (off + 0xfff) / 0x1000 * 0x1000;
  const u64 ndyn = 11;
  const u64 dynamic_off = place(16 * ndyn, 8);
  const u64 data_end = off;
  const std::string shstrtab_s = std::string("\0.hash\0.gnu.hash\0.dynsym\0.dynstr\0.gnu.version\0.gnu.version_d\0.text\0.dynamic\0.shstrtab\0", 86);
  const u64 shstrtab_off = place(shstrtab_s.size(), 1);
  const u64 shnum = 10;
  const u64 shoff = place(64 * shnum, 8);

  buffer b;
  b.bytes.reserve(off);
  put_ehdr(b, 3, 64, static_cast<u16>(phnum), shoff, static_cast<u16>(shnum), 9);
  auto put_phdr = [&](u32 type, u32 flags, u64 offset, u64 size, u64 align) {
    b.put_le<u32>(type);
    b.put_le<u32>(flags);
    b.put_le<u64>(offset);
    b.put_le<u64>(offset);
    b.put_le<u64>(offset);
    b.put_le<u64>(size);
    b.put_le<u64>(size);
    b.put_le<u64>(align);
  };
  put_phdr(1, 5, 0, text_end, 0x1000);                                  // PT_LOAD R+X
  put_phdr(1, 6, dynamic_off, data_end - dynamic_off, 0x1000);          // PT_LOAD RW
  put_phdr(2, 6, dynamic_off, 16 * ndyn, 8);                            // PT_DYNAMIC
  auto seek = [&](u64 at) { b.zeros(at - b.size()); };

  // .hash: dynsym index k+1 holds order[k].
  seek(hash_off);
  {
    std::vector<u32> bucket(sysv_nbucket, 0), chain(nsyms, 0);
    for (u64 s = nsyms; s-- > 1;) {
      u32 h = elf_hash(names[order[s - 1]]) % sysv_nbucket;
      chain[s] = bucket[h];
      bucket[h] = static_cast<u32>(s);
    }
    b.put_le<u32>(sysv_nbucket);
    b.put_le<u32>(static_cast<u32>(nsyms));
    for (u32 v : bucket) b.put_le<u32>(v);
    for (u32 v : chain) b.put_le<u32>(v);
  }
  // .gnu.hash
  seek(gnu_off);
  {
    std::vector<u64> bloom(bloom_words, 0);
    std::vector<u32> bucket(nbuckets, 0), chain(n, 0);
    for (u64 k = 0; k < n; ++k) {
      u32 h = ghash[order[k]];
      bloom[(h / 64) % bloom_words] |= (u64{1} << (h % 64)) | (u64{1} << ((h >> bloom_shift) % 64));
      u32 bk = h % nbuckets;
      if (bucket[bk] == 0) bucket[bk] = static_cast<u32>(k + 1);
      bool last = k + 1 == n || ghash[order[k + 1]] % nbuckets != bk;
      chain[k] = (h & ~1u) | (last ? 1u : 0u);
    }
    b.put_le<u32>(nbuckets);
    b.put_le<u32>(1);  // symoffset
    b.put_le<u32>(static_cast<u32>(bloom_words));
    b.put_le<u32>(bloom_shift);
    for (u64 w : bloom) b.put_le<u64>(w);
    for (u32 v : bucket) b.put_le<u32>(v);
    for (u32 v : chain) b.put_le<u32>(v);
  }
  // .dynsym
  seek(dynsym_off);
  put_sym(b, 0, 0, 0, 0, 0, 0);
  for (u64 k = 0; k < n; ++k) {
    u64 i = order[k];
    u8 bind = i % 7 == 0 ? 2 : 1;  // WEAK : GLOBAL
    put_sym(b, static_cast<u32>(name_off[k]), static_cast<u8>((bind << 4) | 2 /*FUNC*/), 0, 7, text_off + i % text_size, 1);
  }
  seek(dynstr_off);
  b.put(std::string_view(dynstr.bytes.data(), dynstr.size()));
  // .gnu.version
  seek(versym_off);
  b.put_le<u16>(0);
  for (u64 k = 0; k < n; ++k) {
    u64 i = order[k];
    b.put_le<u16>(i % 8 == 0 ? 0x8002 : i % 8 == 1 ? 2 : 3);
  }
  // .gnu.version_d: BASE (1), VERS_1 (2), VERS_2 (3, parent VERS_1)
  seek(verdef_off);
  auto put_verdef = [&](u16 flags, u16 ndx, u16 cnt, u32 hash, u32 next) {
    b.put_le<u16>(1);
    b.put_le<u16>(flags);
    b.put_le<u16>(ndx);
    b.put_le<u16>(cnt);
    b.put_le<u32>(hash);
    b.put_le<u32>(20);
    b.put_le<u32>(next);
  };
  auto put_verdaux = [&](u32 name, u32 next) {
    b.put_le<u32>(name);
    b.put_le<u32>(next);
  };
  put_verdef(1 /*VER_FLG_BASE*/, 1, 1, elf_hash(soname), 28);
  put_verdaux(soname_off, 0);
  put_verdef(0, 2, 1, elf_hash("VERS_1"), 28);
  put_verdaux(v1_off, 0);
  put_verdef(0, 3, 2, elf_hash("VERS_2"), 0);
  put_verdaux(v2_off, 8);
  put_verdaux(v1_off, 0);
  // .text: int3
  seek(text_off);
  b.bytes.insert(b.bytes.end(), text_size, static_cast<char>(0xcc));
  // .dynamic
  seek(dynamic_off);
  auto dyn = [&](u64 tag, u64 val) {
    b.put_le<u64>(tag);
    b.put_le<u64>(val);
  };
  dyn(14, soname_off);       // DT_SONAME
  dyn(4, hash_off);          // DT_HASH
  dyn(0x6ffffef5, gnu_off);  // DT_GNU_HASH
  dyn(5, dynstr_off);        // DT_STRTAB
  dyn(6, dynsym_off);        // DT_SYMTAB
  dyn(10, dynstr.size());    // DT_STRSZ
  dyn(11, 24);               // DT_SYMENT
  dyn(0x6ffffff0, versym_off);  // DT_VERSYM
  dyn(0x6ffffffc, verdef_off);  // DT_VERDEF
  dyn(0x6ffffffd, 3);           // DT_VERDEFNUM
  dyn(0, 0);
  seek(shstrtab_off);
  b.put(shstrtab_s);
  seek(shoff);
  auto sname = [&](const char* s) { return static_cast<u32>(shstrtab_s.find(std::string_view(s, std::strlen(s) + 1))); };
  put_shdr(b, {});
  put_shdr(b, {sname(".hash"), SHT_HASH, SHF_ALLOC, hash_off, hash_off, 4 * (2 + u64{sysv_nbucket} + nsyms), 3, 0, 8, 4});
  put_shdr(b, {sname(".gnu.hash"), SHT_GNU_HASH, SHF_ALLOC, gnu_off, gnu_off, dynsym_off - gnu_off, 3, 0, 8, 0});
  put_shdr(b, {sname(".dynsym"), SHT_DYNSYM, SHF_ALLOC, dynsym_off, dynsym_off, 24 * nsyms, 4, 1, 8, 24});
  put_shdr(b, {sname(".dynstr"), SHT_STRTAB, SHF_ALLOC, dynstr_off, dynstr_off, dynstr.size(), 0, 0, 1, 0});
  put_shdr(b, {sname(".gnu.version"), SHT_GNU_versym, SHF_ALLOC, versym_off, versym_off, 2 * nsyms, 3, 0, 2, 2});
  put_shdr(b, {sname(".gnu.version_d"), SHT_GNU_verdef, SHF_ALLOC, verdef_off, verdef_off, verdef_size, 4, 3, 8, 0});
  put_shdr(b, {sname(".text"), SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, text_off, text_off, text_size, 0, 0, 16, 0});
  put_shdr(b, {sname(".dynamic"), SHT_DYNAMIC, SHF_ALLOC | SHF_WRITE, dynamic_off, dynamic_off, 16 * ndyn, 4, 0, 8, 16});
  put_shdr(b, {sname(".shstrtab"), SHT_STRTAB, 0, 0, shstrtab_off, shstrtab_s.size(), 0, 0, 1, 0});
  return write_file(out, b) ? 0 : (std::perror(out), 2);
}

// ---------------------------------------------------------------- ar archives
void put_ar_header(buffer& b, std::string_view name, u64 size) {
  char h[61];
  std::snprintf(h, sizeof h, "%-16.16s%-12s%-6s%-6s%-8s%-10llu`\n", std::string(name).c_str(), "0", "0", "0", "644",
                static_cast<unsigned long long>(size));
  b.put(std::string_view(h, 60));
}

// A tiny ELF64 relocatable object: .text, .symtab, .strtab, .shstrtab;
// `count` global functions named gen_sym_<first..first+count-1>.
void put_rel_object(buffer& b, u64 first, u64 count) {
  const std::size_t base = b.size();
  buffer strtab;
  strtab.put_cstr("");
  std::vector<u32> offs;
  for (u64 j = 0; j < count; ++j) {
    offs.push_back(static_cast<u32>(strtab.size()));
    strtab.put_cstr(sym_name(first + j));
  }
  static const std::string shstr = std::string("\0.text\0.symtab\0.strtab\0.shstrtab\0", 33);
  const u64 text_size = 16;
  u64 off = 64;
  const u64 text_off = off;
  off += text_size;
  const u64 symtab_off = off;  // 8-aligned: 64 + 16
  off += 24 * (count + 1);
  const u64 strtab_off = off;
  off += strtab.size();
  const u64 shstr_off = off;
  off += shstr.size();
  off = (off + 7) / 8 * 8;
  const u64 shoff = off;
  put_ehdr(b, 1, 0, 0, shoff, 5, 4);
  b.bytes.insert(b.bytes.end(), text_size, static_cast<char>(0xc3));
  put_sym(b, 0, 0, 0, 0, 0, 0);
  for (u64 j = 0; j < count; ++j) put_sym(b, offs[j], 0x12, 0, 1, j % text_size, 1);
  b.put(std::string_view(strtab.bytes.data(), strtab.size()));
  b.put(shstr);
  b.zeros(base + shoff - b.size());
  put_shdr(b, {});
  put_shdr(b, {1, SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, 0, text_off, text_size, 0, 0, 16, 0});
  put_shdr(b, {7, SHT_SYMTAB, 0, 0, symtab_off, 24 * (count + 1), 3, 1, 8, 24});
  put_shdr(b, {15, SHT_STRTAB, 0, 0, strtab_off, strtab.size(), 0, 0, 1, 0});
  put_shdr(b, {23, SHT_STRTAB, 0, 0, shstr_off, shstr.size(), 0, 0, 1, 0});
}

// The members are built first (offsets relative to the end of the armap),
// then the armap, whose size is known from the names, is put in front.
int write_archive(const char* out, const buffer& members, const std::vector<std::pair<std::string, u64>>& armap, bool sym64) {
  u64 names_size = 0;
  for (const auto& [name, member] : armap) names_size += name.size() + 1;
  auto map_size = [&](bool wide) {
    u64 s = (wide ? 8 : 4) * (1 + armap.size()) + names_size;
    return s + (s & 1);
  };
  u64 start = 8 + 60 + map_size(sym64);
  if (!sym64 && start + members.size() > 0xffffffffu) {
    sym64 = true;
    start = 8 + 60 + map_size(true);
  }
  buffer b;
  b.bytes.reserve(start + members.size());
  b.put("!<arch>\n");
  put_ar_header(b, sym64 ? "/SYM64/" : "/", map_size(sym64));
  if (sym64) b.put_be<u64>(armap.size()); else b.put_be<u32>(static_cast<u32>(armap.size()));
  for (const auto& [name, member] : armap) {
    if (sym64) b.put_be<u64>(start + member); else b.put_be<u32>(static_cast<u32>(start + member));
  }
  for (const auto& [name, member] : armap) b.put_cstr(name);
  b.align(2);
  b.put(std::string_view(members.bytes.data(), members.size()));
  return write_file(out, b) ? 0 : (std::perror(out), 2);
}

int gen_ar(u64 n, u64 per_member, bool sym64, const char* out) {
  if (n == 0 || per_member == 0) return std::fprintf(stderr, "gen ar: N and K must be positive\n"), 2;
  buffer members;
  std::vector<std::pair<std::string, u64>> armap;
  armap.reserve(n);
  for (u64 first = 0, m = 0; first < n; first += per_member, ++m) {
    const u64 count = std::min(per_member, n - first);
    const u64 at = members.size();
    buffer object;
    put_rel_object(object, first, count);
    put_ar_header(members, "m" + std::to_string(m) + ".o/", object.size());
    members.put(std::string_view(object.bytes.data(), object.size()));
    members.align(2, '\n');
    for (u64 j = 0; j < count; ++j) armap.emplace_back(sym_name(first + j), at);
  }
  return write_archive(out, members, armap, sym64);
}

// COFF short import members (IMPORT_OBJECT_HEADER, PE/COFF spec "Import
// Library Format"): code imports by name; the armap holds __imp_NAME and NAME.
int gen_implib(u64 n, const std::string& dll, const char* out) {
  if (n == 0) return std::fprintf(stderr, "gen implib: N must be positive\n"), 2;
  if (dll.size() > 15) return std::fprintf(stderr, "gen implib: DLL name must fit a 16-byte member name\n"), 2;
  buffer members;
  std::vector<std::pair<std::string, u64>> armap;
  armap.reserve(2 * n + 3);
  // The three COFF objects that llvm-dlltool puts first: the import
  // descriptor (.idata$2, the 20-byte directory entry with its relocations
  // left out, and .idata$6, the DLL name), __NULL_IMPORT_DESCRIPTOR
  // (.idata$3) and the null thunk (.idata$5/.idata$4). dlltool -I reads the
  // DLL name from .idata$6 when a member defines __NULL_IMPORT_DESCRIPTOR.
  struct section_spec {
    std::string_view name;
    std::string data;
    u32 flags;
  };
  auto coff_member = [&](const std::vector<section_spec>& sections, const std::string& symbol) {
    buffer object;
    u32 at = static_cast<u32>(20 + 40 * sections.size());
    u32 data_size = 0;
    for (const auto& sec : sections) data_size += static_cast<u32>(sec.data.size());
    object.put_le<u16>(0x8664);
    object.put_le<u16>(static_cast<u16>(sections.size()));
    object.put_le<u32>(0);
    object.put_le<u32>(at + data_size);  // symbol table
    object.put_le<u32>(1);
    object.put_le<u32>(0);  // optional header size, characteristics
    for (const auto& sec : sections) {
      object.put(sec.name);
      object.zeros(8 - sec.name.size());
      object.put_le<u32>(0);
      object.put_le<u32>(0);
      object.put_le<u32>(static_cast<u32>(sec.data.size()));
      object.put_le<u32>(at);
      object.zeros(12);  // relocations, line numbers and their counts
      object.put_le<u32>(sec.flags);
      at += static_cast<u32>(sec.data.size());
    }
    for (const auto& sec : sections) object.put(sec.data);
    object.put_le<u32>(0);  // name in the string table at offset 4
    object.put_le<u32>(4);
    object.put_le<u32>(0);  // value
    object.put_le<u16>(1);  // first section
    object.put_le<u16>(0);
    object.bytes.push_back(2);  // IMAGE_SYM_CLASS_EXTERNAL
    object.bytes.push_back(0);
    object.put_le<u32>(static_cast<u32>(4 + symbol.size() + 1));
    object.put_cstr(symbol);
    armap.emplace_back(symbol, members.size());
    put_ar_header(members, dll + "/", object.size());
    members.put(std::string_view(object.bytes.data(), object.size()));
    members.align(2, '\n');
  };
  const std::string stem = dll.substr(0, dll.find('.'));
  std::string dll_name = dll;
  dll_name.push_back('\0');
  if (dll_name.size() % 2 != 0) dll_name.push_back('\0');
  coff_member({{".idata$2", std::string(20, '\0'), 0xc0300040u}, {".idata$6", dll_name, 0xc0200040u}},
              "__IMPORT_DESCRIPTOR_" + stem);
  coff_member({{".idata$3", std::string(20, '\0'), 0xc0300040u}}, "__NULL_IMPORT_DESCRIPTOR");
  coff_member({{".idata$5", std::string(8, '\0'), 0xc0400040u}, {".idata$4", std::string(8, '\0'), 0xc0400040u}},
              "\x7f" + stem + "_NULL_THUNK_DATA");
  for (u64 i = 0; i < n; ++i) {
    const std::string name = sym_name(i);
    const u64 at = members.size();
    const u32 data_size = static_cast<u32>(name.size() + 1 + dll.size() + 1);
    put_ar_header(members, dll + "/", 20 + data_size);
    members.put_le<u16>(0);       // Sig1: IMAGE_FILE_MACHINE_UNKNOWN
    members.put_le<u16>(0xffff);  // Sig2
    members.put_le<u16>(0);       // Version
    members.put_le<u16>(0x8664);  // Machine
    members.put_le<u32>(0);       // TimeDateStamp
    members.put_le<u32>(data_size);
    members.put_le<u16>(static_cast<u16>(i & 0xffff));  // hint
    members.put_le<u16>(0 | (1 << 2));                 // IMPORT_CODE, IMPORT_NAME
    members.put_cstr(name);
    members.put_cstr(dll);
    members.align(2, '\n');
    armap.emplace_back("__imp_" + name, at);
    armap.emplace_back(name, at);
  }
  return write_archive(out, members, armap, false);
}

int usage() {
  std::fprintf(stderr,
               "usage: linkscope-gen so N OUT\n"
               "       linkscope-gen ar N OUT [--per-member K] [--sym64]\n"
               "       linkscope-gen implib N OUT [--dll NAME]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) return usage();
  const std::string kind = argv[1];
  char* end = nullptr;
  const u64 n = std::strtoull(argv[2], &end, 10);
  if (end == argv[2] || *end != '\0') return usage();
  const char* out = argv[3];
  u64 per_member = 4;
  bool sym64 = false;
  std::string dll = "gen.dll";
  for (int i = 4; i < argc; ++i) {
    std::string_view a = argv[i];
    if (a == "--per-member" && i + 1 < argc) per_member = std::strtoull(argv[++i], nullptr, 10);
    else if (a == "--sym64") sym64 = true;
    else if (a == "--dll" && i + 1 < argc) dll = argv[++i];
    else return usage();
  }
  if (kind == "so") return gen_so(n, out);
  if (kind == "ar") return gen_ar(n, per_member, sym64, out);
  if (kind == "implib") return gen_implib(n, dll, out);
  return usage();
}
