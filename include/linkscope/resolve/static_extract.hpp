// linkscope/resolve/static_extract.hpp — the extraction phase of the static
// link emulation (resolve/static.hpp): the symbol table of the link and the
// rules by which ld.lld 14 and GNU ld 2.40 pull archive members into it.
//
// The symbol table is one keyed_index (symbols/index.hpp) from name to
// sym_entry: every name is hashed once per occurrence, and names are compared
// only on a hash match.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "linkscope/core/config.hpp"
#include "linkscope/core/error.hpp"
#include "linkscope/elf/file.hpp"
#include "linkscope/elf/types.hpp"
#include "linkscope/resolve/link_line.hpp"
#include "linkscope/resolve/static_load.hpp"
#include "linkscope/resolve/static_report.hpp"
#include "linkscope/symbols/index.hpp"

namespace linkscope {
inline namespace v0 {
namespace resolve {

// Run a static link over `line`. On error, `diag` names the input.
result<static_link_result> resolve_static(const link_line& line, static_options options, link_diagnostic& diag);

#if LINKSCOPE_DEFINITIONS
namespace detail {

// The static-link emulator. One object runs one link.
class static_linker : static_loader {
 public:
  static_linker(const link_line& line, static_options options, link_diagnostic& diag)
      : static_loader(line, options, diag) {}

  result<static_link_result> run() {
    if (options_.semantics == link_semantics::lld)
      LINKSCOPE_CHECK(run_lld());
    else
      LINKSCOPE_CHECK(run_bfd());
    finish();
    return std::move(result_);
  }

 private:
  // ---- shared state --------------------------------------------------------
  enum class sym_kind : std::uint8_t { placeholder, undefined, lazy, defined, common, shared };
  // One name of the link; the name itself is symbols_.key(id).
  struct sym_entry {
    file_id file = no_file;        // owner: referencing / defining file; lazy: the archive's file id
    std::uint32_t archive = 0;     // lazy: index into archives_
    std::uint64_t member = 0;      // lazy: member header offset
    sym_kind kind = sym_kind::placeholder;
    std::uint8_t binding = elf::STB_GLOBAL;
    std::uint8_t visibility = elf::STV_DEFAULT;
    bool referenced = false;       // lld: some object referenced it
    bool ref_regular = false;      // referenced by a regular object (not -u / DSO)
    bool absolute = false;
    bool ever_undefined = false;   // bfd: entered the undefs list
    std::uint64_t value = 0;
  };

  std::uint32_t symbol(std::string_view name) { return symbols_.insert(name).first; }

  // ---- lld -----------------------------------------------------------------

  result<void> run_lld() {
    // -u before any file: an Undefined without a file ("<internal>").
    for (const std::string& name : line_.undefined) {
      const std::uint32_t s = symbol(name);
      LINKSCOPE_CHECK(lld_undefined(s, no_file, elf::STB_GLOBAL, elf::STV_DEFAULT, false));
      symbols_[s].referenced = true;
    }
    for (std::uint32_t i = 0; i < line_.inputs.size(); ++i) {
      LINKSCOPE_CHECK(lld_input(i));
      progress(i + 1);
    }
    // Symbols named by --defsym expressions (lld: script->referencedSymbols).
    for (const defsym& d : line_.defsyms)
      for (std::string_view name : expression_symbols(d.expression))
        LINKSCOPE_CHECK(lld_undefined(symbol(name), no_file, elf::STB_GLOBAL, elf::STV_DEFAULT, false));
    // The entry symbol, if some file mentions it.
    const std::string entry = line_.entry_symbol();
    if (!entry.empty()) {
      const std::uint32_t s = symbols_.find(entry);
      if (s != symbols_.npos && symbols_[s].kind == sym_kind::lazy) {
        LINKSCOPE_CHECK(lld_extract(s));
        lld_record(s, no_file, "--entry");
      }
    }
    // --defsym symbols are defined from here on (after the files: lld's
    // script symbols do not stop an extraction, they only satisfy references).
    for (const defsym& d : line_.defsyms) {
      sym_entry& e = symbols_[symbol(d.name)];
      if (e.kind == sym_kind::undefined || e.kind == sym_kind::placeholder || e.kind == sym_kind::lazy) {
        e.kind = sym_kind::defined;
        e.file = no_file;
      }
    }
    // --wrap: __real_X and __wrap_X become references when X exists.
    std::vector<std::string_view> seen;
    for (const std::string& name : line_.wraps) {
      bool dup = false;
      for (auto v : seen) dup = dup || v == name;
      if (dup) continue;
      seen.push_back(name);
      const std::uint32_t s = symbols_.find(name);
      if (s == symbols_.npos) continue;
      const std::uint8_t bind = symbols_[s].binding;
      result_.made_names->push_back("__real_" + name);
      result_.made_names->push_back("__wrap_" + name);
      LINKSCOPE_CHECK(lld_undefined(symbol((*result_.made_names)[result_.made_names->size() - 2]), no_file, elf::STB_GLOBAL, elf::STV_DEFAULT, false));
      LINKSCOPE_CHECK(lld_undefined(symbol(result_.made_names->back()), no_file, bind, elf::STV_DEFAULT, false));
    }
    return ok();
  }

  result<void> lld_input(std::uint32_t index) {
    const link_input& in = line_.inputs[index];
    LINKSCOPE_TRY(bytes, open_input(in.path, in.spec));
    const input_format format = sniff_link_input(bytes->bytes());
    if (format == input_format::archive || format == input_format::thin_archive) {
      LINKSCOPE_TRY(a, open_archive(index, bytes));
      if (in.whole_archive) {
        // Every member, in order, as if given on the command line.
        std::vector<std::uint64_t> offsets;
        auto r = archives_[a].archive.for_each_member([&](const ar::member& m) { offsets.push_back(m.header_offset); });
        if (!r) return fail(r.error(), in.path);
        for (std::uint64_t off : offsets) {
          byte_view data;
          LINKSCOPE_TRY(id, new_member(a, off, true, data));
          record(id, no_file, "--whole-archive", "--whole-archive");
          LINKSCOPE_CHECK(lld_object(id, data));
        }
        archives_[a].parsed = true;
        return ok();
      }
      // One lazy symbol per armap entry, in armap order.
      for (std::size_t e = 0; e < archives_[a].entries.size(); ++e) {
        const ar::armap_entry entry = archives_[a].entries[e];
        LINKSCOPE_CHECK(lld_lazy(symbol(entry.name), a, entry.member_offset));
      }
      archives_[a].parsed = true;
      return ok();
    }
    if (format != input_format::elf)
      return fail(make_error(errc::bad_magic, 0, "unknown file type (not ELF, not an archive)"), in.spec);
    link_file f;
    f.name = in.path;
    f.bfd_name = f.name;
    f.input = index;
    const auto identity = elf::identify(bytes->bytes());
    if (!identity) return fail(identity.error(), in.spec);
    if (identity->type == elf::ET_DYN) {  // a shared library or a PIE: its .dynsym
      f.role = file_role::shared;
      const file_id id = add_file(std::move(f));
      return lld_shared(id, bytes->bytes());
    }
    f.role = file_role::object;
    const file_id id = add_file(std::move(f));
    return lld_object(id, bytes->bytes());
  }

  result<void> lld_shared(file_id id, byte_view bytes) {
    std::string_view soname;
    LINKSCOPE_CHECK(read_shared(id, bytes, soname));
    std::string key = soname.empty() ? result_.files[id].name : std::string(soname);
    if (soname.empty()) {
      // lld's default soname: the file name for -l, else the path.
      const link_input& in = line_.inputs[result_.files[id].input];
      if (in.is_library) key = key.substr(key.rfind('/') + 1);
    }
    for (const auto& s : sonames_)
      if (s == key) return ok();
    sonames_.push_back(std::move(key));
    std::vector<input_symbol> syms = std::move(scratch_);
    for (const input_symbol& s : syms) {
      const std::uint32_t sym = symbol(s.name);
      ++result_.symbols_resolved;
      if (s.kind == input_symbol::undefined) {
        LINKSCOPE_CHECK(lld_undefined(sym, id, s.binding, s.visibility, true));
        continue;
      }
      sym_entry& e = symbols_[sym];
      if (e.kind == sym_kind::placeholder) {
        e.kind = sym_kind::shared;
        e.file = id;
        e.binding = s.binding;
        continue;
      }
      if (e.kind == sym_kind::common) continue;
      if (e.visibility == elf::STV_DEFAULT && (e.kind == sym_kind::undefined || e.kind == sym_kind::lazy)) {
        e.kind = sym_kind::shared;  // binding kept
        e.file = id;
      }
    }
    scratch_ = std::move(syms);
    return ok();
  }

  result<void> lld_object(file_id id, byte_view bytes) {
    LINKSCOPE_CHECK(read_object(id, bytes, true));
    // The object's symbols stay in a vector of their own: extraction recurses.
    std::vector<input_symbol> syms = std::move(scratch_);
    scratch_ = {};
    std::vector<std::uint32_t> undefineds;
    std::vector<std::uint32_t> ids(syms.size());
    for (std::size_t i = 0; i < syms.size(); ++i) ids[i] = symbol(syms[i].name);
    for (std::size_t i = 0; i < syms.size(); ++i) {
      const input_symbol& s = syms[i];
      const std::uint32_t sym = ids[i];
      ++result_.symbols_resolved;
      sym_entry& e = symbols_[sym];
      if (s.visibility != elf::STV_DEFAULT && (e.visibility == elf::STV_DEFAULT || s.visibility < e.visibility))
        e.visibility = s.visibility;
      switch (s.kind) {
        case input_symbol::undefined:
          undefineds.push_back(static_cast<std::uint32_t>(i));
          break;
        case input_symbol::common:
          lld_common(sym, id);
          break;
        case input_symbol::discarded: {
          // Defined in a discarded COMDAT copy: an undefined reference.
          if (e.kind == sym_kind::lazy && !archives_[e.archive].parsed) {
            e.kind = sym_kind::undefined;
            e.file = id;
            e.binding = s.binding;
          } else {
            LINKSCOPE_CHECK(lld_undefined(sym, id, s.binding, s.visibility, false, true));
          }
          break;
        }
        default:
          lld_defined(sym, id, s);
          break;
      }
    }
    for (std::uint32_t i : undefineds) {
      const input_symbol& s = syms[i];
      LINKSCOPE_CHECK(lld_undefined(ids[i], id, s.binding, s.visibility, false));
      symbols_[ids[i]].referenced = true;
      symbols_[ids[i]].ref_regular = true;
    }
    return ok();
  }

  void lld_defined(std::uint32_t sym, file_id id, const input_symbol& s) {
    sym_entry& e = symbols_[sym];
    const bool abs = s.kind == input_symbol::absolute;
    auto take = [&] {
      e.kind = sym_kind::defined;
      e.file = id;
      e.binding = s.binding;
      e.absolute = abs;
      e.value = s.value;
    };
    if (e.kind != sym_kind::defined && e.kind != sym_kind::common) return take();
    if (s.binding == elf::STB_WEAK) return;
    if (e.binding == elf::STB_WEAK) return take();
    if (e.kind == sym_kind::common) return take();
    if (e.absolute && abs && e.value == s.value && s.binding == elf::STB_GLOBAL) return;
    result_.duplicates.push_back({symbols_.key(sym), e.file, id});
  }

  void lld_common(std::uint32_t sym, file_id id) {
    sym_entry& e = symbols_[sym];
    if (e.kind != sym_kind::defined && e.kind != sym_kind::common) {
      e.kind = sym_kind::common;
      e.file = id;
      e.binding = elf::STB_GLOBAL;
      return;
    }
    // A defined symbol (even weak? no: a weak definition loses to a common) wins.
    if (e.kind == sym_kind::defined && e.binding == elf::STB_WEAK) {
      e.kind = sym_kind::common;
      e.file = id;
      e.binding = elf::STB_GLOBAL;
    }
  }

  result<void> lld_undefined(std::uint32_t sym, file_id id, std::uint8_t binding, std::uint8_t vis, bool from_shared,
                             bool discarded = false) {
    sym_entry& e = symbols_[sym];
    if (e.kind == sym_kind::placeholder) {
      e.kind = sym_kind::undefined;
      e.file = id;
      e.binding = binding;
      return ok();
    }
    if ((e.kind == sym_kind::shared && vis != elf::STV_DEFAULT) ||
        (e.kind == sym_kind::undefined && binding != elf::STB_WEAK && discarded)) {
      e.kind = sym_kind::undefined;
      e.file = id;
      e.binding = binding;
      return ok();
    }
    if (e.kind == sym_kind::lazy) {
      if (binding == elf::STB_WEAK) {
        e.binding = elf::STB_WEAK;
        return ok();
      }
      LINKSCOPE_CHECK(lld_extract(sym));
      lld_record(sym, id, {});
      return ok();
    }
    if (from_shared) return ok();
    if (e.kind == sym_kind::undefined || e.kind == sym_kind::shared) {
      if (binding != elf::STB_WEAK || !e.referenced) e.binding = binding;
    }
    return ok();
  }

  result<void> lld_lazy(std::uint32_t sym, std::uint32_t archive, std::uint64_t member) {
    ++result_.symbols_resolved;
    sym_entry& e = symbols_[sym];
    if (e.kind == sym_kind::placeholder) {
      e.kind = sym_kind::lazy;
      e.file = archives_[archive].file;
      e.archive = archive;
      e.member = member;
      e.binding = elf::STB_GLOBAL;
      return ok();
    }
    if (e.kind != sym_kind::undefined) return ok();
    if (e.binding == elf::STB_WEAK) {
      e.kind = sym_kind::lazy;
      e.file = archives_[archive].file;
      e.archive = archive;
      e.member = member;
      return ok();
    }
    // lld extracts while the symbol is still Undefined.
    const file_id old = e.file;
    LINKSCOPE_CHECK(lld_extract(archive, member));
    lld_record(sym, old, {});
    return ok();
  }

  // Extract the member behind lazy symbol `sym` (once per member).
  result<void> lld_extract(std::uint32_t sym) { return lld_extract(symbols_[sym].archive, symbols_[sym].member); }
  result<void> lld_extract(std::uint32_t a, std::uint64_t member) {
    if (archives_[a].loaded.count(member) != 0) return ok();
    byte_view data;
    LINKSCOPE_TRY(id, new_member(a, member, false, data));
    return lld_object(id, data);
  }

  // --why-extract row: (reference, the symbol's file now, symbol).
  void lld_record(std::uint32_t sym, file_id reference, std::string label) {
    const sym_entry& e = symbols_[sym];
    file_id extracted = e.file;
    if (e.kind == sym_kind::lazy || extracted == no_file || result_.files[extracted].role != file_role::member)
      return;  // the member did not define it (lld would print an odd row; linkscope prints none)
    if (result_.files[extracted].role == file_role::member && result_.files[extracted].reason == ~0u) {
      record(extracted, reference, reference == no_file ? (label.empty() ? "<internal>" : label) : std::string(),
             symbols_.key(sym));
    } else {
      // The row still appears (lld writes one per extraction); the member
      // keeps its first reason for the why-chain.
      extraction x;
      x.member = extracted;
      x.reference = reference;
      x.reference_label = reference == no_file ? (label.empty() ? "<internal>" : label) : std::string();
      x.symbol = symbols_.key(sym);
      result_.extractions.push_back(std::move(x));
    }
  }

  // ---- bfd -----------------------------------------------------------------

  result<void> run_bfd() {
    // --defsym first: the symbol is defined, its expression's symbols are references.
    for (const defsym& d : line_.defsyms) {
      for (std::string_view name : expression_symbols(d.expression)) bfd_reference(symbol(name), no_file, elf::STB_GLOBAL, false);
      sym_entry& e = symbols_[symbol(d.name)];
      e.kind = sym_kind::defined;
      e.file = no_file;
      e.binding = elf::STB_GLOBAL;
    }
    for (const std::string& name : line_.undefined) bfd_reference(symbol(name), no_file, elf::STB_GLOBAL, false);
    if (!line_.entry.empty()) bfd_reference(symbol(line_.entry), no_file, elf::STB_GLOBAL, false);
    std::uint32_t i = 0;
    while (i < line_.inputs.size()) {
      const int group = line_.inputs[i].group;
      if (group < 0) {
        LINKSCOPE_CHECK(bfd_input(i, false));
        progress(++i);
        continue;
      }
      std::uint32_t end = i;
      while (end < line_.inputs.size() && line_.inputs[end].group == group) ++end;
      bool first = true;
      for (;;) {
        const std::size_t before = undefs_;
        for (std::uint32_t k = i; k < end; ++k) LINKSCOPE_CHECK(bfd_input(k, !first));
        first = false;
        if (undefs_ == before) break;
      }
      i = end;
      progress(i);
    }
    return ok();
  }

  // `done` of the link line's inputs are read (options_.progress).
  void progress(std::size_t done) const {
    if (options_.progress) options_.progress(done, line_.inputs.size());
  }

  std::string_view bfd_wrapped(std::string_view name, bool undefined) {
    if (!undefined || line_.wraps.empty()) return name;
    for (const std::string& w : line_.wraps) {
      if (name == w) {
        result_.made_names->push_back("__wrap_" + w);
        return result_.made_names->back();
      }
      if (name.size() == w.size() + 7 && name.substr(0, 7) == "__real_" && name.substr(7) == w) return w;
    }
    return name;
  }

  void bfd_reference(std::uint32_t sym, file_id id, std::uint8_t binding, bool regular) {
    sym_entry& e = symbols_[sym];
    if (regular) {
      e.ref_regular = true;
      if (binding != elf::STB_WEAK) e.referenced = true;
    }
    if (e.kind == sym_kind::placeholder) {
      e.kind = sym_kind::undefined;
      e.file = id;
      e.binding = binding;
      if (binding != elf::STB_WEAK) {
        e.ever_undefined = true;
        ++undefs_;
      }
      return;
    }
    if (e.kind == sym_kind::undefined && e.binding == elf::STB_WEAK && binding != elf::STB_WEAK) {
      e.binding = binding;
      e.file = id;
      if (!e.ever_undefined) {
        e.ever_undefined = true;
        ++undefs_;
      }
    }
  }

  void bfd_define(std::uint32_t sym, file_id id, const input_symbol& s) {
    sym_entry& e = symbols_[sym];
    const bool weak = s.binding == elf::STB_WEAK;
    if (s.kind == input_symbol::common) {
      if (e.kind == sym_kind::placeholder || e.kind == sym_kind::undefined ||
          (e.kind == sym_kind::defined && e.binding == elf::STB_WEAK) || e.kind == sym_kind::shared) {
        e.kind = sym_kind::common;
        e.file = id;
        e.binding = elf::STB_GLOBAL;
      }
      return;
    }
    switch (e.kind) {
      case sym_kind::placeholder:
      case sym_kind::undefined:
      case sym_kind::shared:
      case sym_kind::lazy:
        break;
      case sym_kind::common:
        if (weak) return;
        break;
      case sym_kind::defined:
        if (weak) return;
        if (e.binding != elf::STB_WEAK) {
          if (!(e.absolute && s.kind == input_symbol::absolute && e.value == s.value))
            result_.duplicates.push_back({symbols_.key(sym), e.file, id});
          return;
        }
        break;
    }
    e.kind = sym_kind::defined;
    e.file = id;
    e.binding = s.binding;
    e.absolute = s.kind == input_symbol::absolute;
    e.value = s.value;
  }

  result<void> bfd_object(file_id id, byte_view bytes) {
    LINKSCOPE_CHECK(read_object(id, bytes, false));
    for (const input_symbol& s : scratch_) {
      ++result_.symbols_resolved;
      if (s.kind == input_symbol::undefined) {
        bfd_reference(symbol(bfd_wrapped(s.name, true)), id, s.binding, true);
      } else {
        bfd_define(symbol(s.name), id, s);
      }
    }
    return ok();
  }

  result<void> bfd_shared(file_id id, byte_view bytes, bool as_needed) {
    std::string_view soname;
    LINKSCOPE_CHECK(read_shared(id, bytes, soname));
    if (as_needed) {
      bool needed = false;
      for (const input_symbol& s : scratch_) {
        if (s.kind == input_symbol::undefined) continue;
        const std::uint32_t sym = symbols_.find(s.name);
        if (sym == symbols_.npos) continue;
        const sym_entry& e = symbols_[sym];
        if ((e.kind == sym_kind::undefined || e.kind == sym_kind::shared) && e.referenced) {
          needed = true;
          break;
        }
      }
      if (!needed) return ok();
    }
    for (const input_symbol& s : scratch_) {
      ++result_.symbols_resolved;
      const std::uint32_t sym = symbol(s.name);
      if (s.kind == input_symbol::undefined) {
        bfd_reference(sym, id, s.binding, false);
        continue;
      }
      sym_entry& e = symbols_[sym];
      if (e.kind == sym_kind::placeholder || e.kind == sym_kind::undefined) {
        e.kind = sym_kind::shared;
        e.file = id;
        e.binding = s.binding;
      }
    }
    return ok();
  }

  // Whether member `offset` of archive `a` defines `name` (not as common).
  result<bool> bfd_member_defines(std::uint32_t a, std::uint64_t offset, std::string_view name) {
    auto m = archives_[a].archive.member_at(offset);
    if (!m) return fail(m.error(), archives_[a].path);
    LINKSCOPE_TRY(data, member_bytes(archives_[a], *m));
    std::vector<input_symbol> syms;
    std::vector<std::uint8_t> discarded;
    auto r = elf::visit_elf(data, [&](const auto& f) -> result<void> {
      return read_object_symbols(f, nullptr, syms, discarded);
    });
    if (!r) return false;
    for (const auto& s : syms)
      if (s.name == name && (s.kind == input_symbol::defined || s.kind == input_symbol::absolute))
        return true;
    return false;
  }

  result<void> bfd_archive(std::uint32_t a) {
    archive_state& st = archives_[a];
    if (line_.inputs[st.input].whole_archive) {
      if (st.parsed) return ok();
      st.parsed = true;
      std::vector<std::uint64_t> offsets;
      auto r = st.archive.for_each_member([&](const ar::member& m) { offsets.push_back(m.header_offset); });
      if (!r) return fail(r.error(), st.path);
      for (std::uint64_t off : offsets) {
        byte_view data;
        LINKSCOPE_TRY(id, new_member(a, off, true, data));
        record(id, no_file, "--whole-archive", "--whole-archive");
        LINKSCOPE_CHECK(bfd_object(id, data));
      }
      return ok();
    }
    st.parsed = true;
    const std::size_t count = st.entries.size();
    std::vector<std::uint8_t> included(count, 0);
    bool loop = true;
    while (loop) {
      loop = false;
      std::uint64_t last = ~std::uint64_t{0};
      for (std::size_t i = 0; i < count; ++i) {
        const ar::armap_entry entry = archives_[a].entries[i];
        if (entry.member_offset == last) {
          included[i] = 1;
          continue;
        }
        if (included[i]) continue;
        const std::uint32_t sym = symbols_.find(entry.name);
        if (sym == symbols_.npos) continue;
        const sym_entry& e = symbols_[sym];
        if (e.kind == sym_kind::common) {
          LINKSCOPE_TRY(defines, bfd_member_defines(a, entry.member_offset, entry.name));
          if (!defines) continue;
        } else if (e.kind != sym_kind::undefined || e.binding == elf::STB_WEAK) {
          if (!(e.kind == sym_kind::undefined && e.binding == elf::STB_WEAK)) included[i] = 1;
          continue;
        }
        if (archives_[a].loaded.count(entry.member_offset) != 0) continue;
        const file_id reference = e.file;
        const std::size_t undefs_before = undefs_;
        byte_view data;
        LINKSCOPE_TRY(id, new_member(a, entry.member_offset, false, data));
        record(id, reference, {}, entry.name);
        LINKSCOPE_CHECK(bfd_object(id, data));
        if (undefs_ != undefs_before) loop = true;
        std::size_t mark = i;
        for (;;) {
          included[mark] = 1;
          if (mark == 0) break;
          --mark;
          if (archives_[a].entries[mark].member_offset != entry.member_offset) break;
        }
        last = entry.member_offset;
      }
    }
    return ok();
  }

  result<void> bfd_input(std::uint32_t index, bool rescan) {
    const link_input& in = line_.inputs[index];
    auto opened = opened_.find(index);
    if (rescan) {
      if (opened != opened_.end() && opened->second.first == 1) return bfd_archive(opened->second.second);
      return ok();
    }
    LINKSCOPE_TRY(bytes, open_input(input_path(in), in.spec));
    const input_format format = sniff_link_input(bytes->bytes());
    if (format == input_format::archive || format == input_format::thin_archive) {
      LINKSCOPE_TRY(a, open_archive(index, bytes));
      opened_.emplace(index, std::make_pair(1, a));
      return bfd_archive(a);
    }
    if (format != input_format::elf)
      return fail(make_error(errc::bad_magic, 0, "unknown file type (not ELF, not an archive)"), in.spec);
    opened_.emplace(index, std::make_pair(0, 0u));
    link_file f;
    f.name = input_path(in);
    f.bfd_name = f.name;
    f.input = index;
    const auto identity = elf::identify(bytes->bytes());
    if (!identity) return fail(identity.error(), in.spec);
    if (identity->type == elf::ET_DYN) {  // a shared library or a PIE: its .dynsym
      f.role = file_role::shared;
      const file_id id = add_file(std::move(f));
      return bfd_shared(id, bytes->bytes(), in.as_needed);
    }
    f.role = file_role::object;
    const file_id id = add_file(std::move(f));
    return bfd_object(id, bytes->bytes());
  }

  // ---- results -------------------------------------------------------------

  // Symbols the linker itself defines when they are referenced (lld
  // addReservedSymbols, Writer.cpp; GNU ld's default script): not undefined.
  static bool linker_defined(std::string_view name) noexcept {
    static constexpr std::string_view names[] = {
        "_GLOBAL_OFFSET_TABLE_", "_DYNAMIC", "__ehdr_start", "__executable_start", "_end", "end", "_etext",
        "etext", "_edata", "edata", "__bss_start", "__init_array_start", "__init_array_end",
        "__fini_array_start", "__fini_array_end", "__preinit_array_start", "__preinit_array_end",
        "__rela_iplt_start", "__rela_iplt_end", "__rel_iplt_start", "__rel_iplt_end", "__global_pointer$",
        "_TLS_MODULE_BASE_", "_PROCEDURE_LINKAGE_TABLE_", "__GNU_EH_FRAME_HDR", "__dso_handle"};
    for (std::string_view n : names)
      if (n == name) return true;
    // __start_SEC / __stop_SEC for C-identifier section names.
    return name.rfind("__start_", 0) == 0 || name.rfind("__stop_", 0) == 0;
  }

  void finish() {
    for (std::uint32_t i = 0; i < symbols_.size(); ++i) {
      const sym_entry& e = symbols_[i];
      if (e.kind == sym_kind::undefined && e.binding != elf::STB_WEAK && e.ref_regular && !linker_defined(symbols_.key(i)))
        result_.undefined.push_back({symbols_.key(i), e.file});
    }
    // Members never loaded, in archive order.
    for (archive_state& st : archives_) {
      auto r = st.archive.for_each_member([&](const ar::member& m) {
        if (st.loaded.count(m.header_offset) != 0) return;
        link_file f;
        f.name = st.path + "(" + std::string(m.name) + ")";
        f.bfd_name = f.name;
        f.input = st.input;
        f.member_offset = m.header_offset;
        f.archive = st.file;
        f.role = file_role::member;
        result_.unused_members.push_back(add_file(std::move(f)));
      });
      (void)r;  // a malformed tail only shortens the unused list
    }
  }

  keyed_index<std::string_view, sym_entry> symbols_;
  std::vector<std::string> sonames_;
  std::unordered_map<std::uint32_t, std::pair<int, std::uint32_t>> opened_;
  std::size_t undefs_ = 0;
};

}  // namespace detail

LINKSCOPE_FUNC result<static_link_result> resolve_static(const link_line& line, static_options options,
                                                         link_diagnostic& diag) {
  detail::static_linker linker(line, options, diag);
  return linker.run();
}
#endif  // LINKSCOPE_DEFINITIONS

}  // namespace resolve
}  // namespace v0
}  // namespace linkscope
