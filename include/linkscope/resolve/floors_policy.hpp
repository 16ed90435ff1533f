// linkscope/resolve/floors_policy.hpp — manylinux-style policies over ELF floors.
//
// A policy file is the JSON that auditwheel ships for its manylinux and
// musllinux tags (src/auditwheel/policy/manylinux-policy.json): an array of
//   {"name": "manylinux_2_17", "aliases": ["manylinux2014"], "priority": 80,
//    "symbol_versions": {ARCH: {FAMILY: ["2.2.5", ...]}},
//    "lib_whitelist": ["libc.so.6", ...],
//    "blacklist": {LIBRARY: [SYMBOL, ...]}}
// The rules are auditwheel's:
//   - symbol versions: every version a file needs (its verneed entries; the
//     dynamic loader's own, ld-linux* / ld64.so.1 / ld64.so.2, excluded) is
//     split at its FIRST '_' into family and rest (GLIBCXX_LDBL_3.4 is family
//     GLIBCXX, version LDBL_3.4). For every family the policy lists for the
//     architecture, the file's versions of that family must all be listed:
//     set membership, not an order. Families the policy does not list are not
//     constrained.
//   - blacklist: an undefined symbol of the file named in the blacklist of a
//     library the file needs fails the policy.
//   - whitelist: needed libraries outside it (the loader excluded) are
//     reported, as auditwheel reports the libraries to graft; they do not
//     lower the tag.
//   - x86-64 ISA: a file that needs a level above baseline fails every policy
//     but the generic one (priority 0), as auditwheel's ISA check does for the
//     x86_64 architecture.
// A policy without an entry for the architecture does not apply (auditwheel
// drops it), except the generic "linux" policy (priority 0), which always
// applies and never constrains symbols.
// The best tag of a file is the applicable policy of highest priority that it
// satisfies; the best tag of a set is the lowest of its files' best tags.
#pragma once

#include <algorithm>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "linkscope/core/config.hpp"
#include "linkscope/core/error.hpp"
#include "linkscope/core/json_reader.hpp"
#include "linkscope/elf/types.hpp"
#include "linkscope/resolve/floors.hpp"

namespace linkscope {
inline namespace v0 {
namespace resolve {

struct floor_policy {
  struct family_versions {
    std::string family;                 // "GLIBC"
    std::vector<std::string> versions;  // "2.17" (sorted)
  };
  struct arch_versions {
    std::string arch;  // "x86_64"
    std::vector<family_versions> families;
  };
  struct blacklist_entry {
    std::string library;
    std::vector<std::string> symbols;  // sorted
  };
  std::string name;
  std::vector<std::string> aliases;
  long long priority = 0;
  std::vector<arch_versions> symbol_versions;
  std::vector<std::string> lib_whitelist;  // sorted
  std::vector<blacklist_entry> blacklist;

  const arch_versions* for_arch(std::string_view arch) const noexcept {
    for (const auto& a : symbol_versions)
      if (a.arch == arch) return &a;
    return nullptr;
  }
};

namespace floors_detail {
error policy_error(const json_value& v, const char* message);

result<std::vector<std::string>> string_list(const json_value& v, const char* message);

result<long long> integer(const json_value& v, const char* message);
}  // namespace floors_detail

// Read a policy file. Errors name the offset of the offending value.
result<std::vector<floor_policy>> read_policies(std::string_view text);

// The architecture name auditwheel uses for an ELF machine ("" when none).
inline std::string_view policy_arch(const elf_floors& f) noexcept {
  switch (f.machine) {
    case elf::EM_X86_64: return f.is64 ? "x86_64" : "";  // x32 has no policy
    case elf::EM_386: return "i686";
    case elf::EM_AARCH64: return "aarch64";
    case elf::EM_PPC64: return f.big_endian ? "ppc64" : "ppc64le";
    case elf::EM_S390: return f.is64 ? "s390x" : "";
    case elf::EM_ARM: return "armv7l";
    case elf::EM_RISCV: return f.is64 ? "riscv64" : "";
    case elf::EM_LOONGARCH: return f.is64 ? "loongarch64" : "";
    default: return "";
  }
}

// The dynamic loader, which auditwheel leaves out of every rule.
inline bool is_dynamic_loader(std::string_view library) noexcept {
  return library.find("ld-linux") != std::string_view::npos || library == "ld64.so.1" || library == "ld64.so.2";
}

// One version a policy does not allow, with the symbols bound to it.
struct policy_excess {
  std::string library;
  std::string version;               // "GLIBC_2.34"
  std::vector<std::string> symbols;
};

struct policy_verdict {
  std::string name;   // "manylinux_2_17"
  std::string tag;    // "manylinux_2_17_x86_64"
  long long priority = 0;
  bool satisfied = false;
  std::vector<policy_excess> above;             // versions outside the policy's lists
  std::vector<std::string> blacklisted;         // "libc.so.6: __cxa_thread_atexit_impl"
  std::vector<std::string> outside_whitelist;   // needed libraries to graft
  bool isa_exceeded = false;
};

struct policy_report {
  std::string arch;                     // "" when the machine has no policy architecture
  std::string best;                     // best tag ("" when no policy applies)
  long long best_priority = -1;
  std::vector<policy_verdict> verdicts; // applicable policies, highest priority first
};

// Evaluate one file against the policies (see the header comment).
policy_report evaluate_policies(const elf_floors& f, const std::vector<floor_policy>& policies);

// The best tag of a set: the lowest best priority among the files (files
// without an applicable policy are left out). Returns the index of that
// file's report, or -1.
long long set_best_policy(const std::vector<const policy_report*>& reports);

#if LINKSCOPE_DEFINITIONS
namespace floors_detail {
LINKSCOPE_FUNC error policy_error(const json_value& v, const char* message) { return error{errc::bad_field, v.offset, message}; }

LINKSCOPE_FUNC result<std::vector<std::string>> string_list(const json_value& v, const char* message) {
  if (!v.is_array()) return policy_error(v, message);
  std::vector<std::string> out;
  for (const auto& item : v.items) {
    if (!item.is_string()) return policy_error(item, message);
    out.push_back(item.text);
  }
  std::sort(out.begin(), out.end());
  return out;
}

LINKSCOPE_FUNC result<long long> integer(const json_value& v, const char* message) {
  if (!v.is_number() || v.text.empty() || v.text.size() > 18) return policy_error(v, message);
  long long n = 0;
  std::size_t i = v.text[0] == '-' ? 1 : 0;
  if (i == v.text.size()) return policy_error(v, message);
  for (; i < v.text.size(); ++i) {
    if (v.text[i] < '0' || v.text[i] > '9') return policy_error(v, message);
    n = n * 10 + (v.text[i] - '0');
  }
  return v.text[0] == '-' ? -n : n;
}
}  // namespace floors_detail

LINKSCOPE_FUNC result<std::vector<floor_policy>> read_policies(std::string_view text) {
  LINKSCOPE_TRY(doc, read_json(text));
  if (!doc.is_array()) return floors_detail::policy_error(doc, "policy file is not a JSON array of policies");
  std::vector<floor_policy> out;
  for (const auto& p : doc.items) {
    if (!p.is_object()) return floors_detail::policy_error(p, "policy is not a JSON object");
    floor_policy policy;
    const json_value* name = p.find("name");
    if (name == nullptr || !name->is_string()) return floors_detail::policy_error(p, "policy without a string \"name\"");
    policy.name = name->text;
    const json_value* priority = p.find("priority");
    if (priority == nullptr) return floors_detail::policy_error(p, "policy without \"priority\"");
    LINKSCOPE_TRY(prio, floors_detail::integer(*priority, "policy \"priority\" is not an integer"));
    policy.priority = prio;
    if (const json_value* aliases = p.find("aliases")) {
      LINKSCOPE_TRY(list, floors_detail::string_list(*aliases, "policy \"aliases\" is not an array of strings"));
      policy.aliases = std::move(list);
    }
    if (const json_value* versions = p.find("symbol_versions")) {
      if (!versions->is_object()) return floors_detail::policy_error(*versions, "policy \"symbol_versions\" is not an object");
      for (const auto& [arch, families] : versions->members) {
        if (!families.is_object()) return floors_detail::policy_error(families, "policy \"symbol_versions\" entry is not an object");
        floor_policy::arch_versions entry{arch, {}};
        for (const auto& [family, list] : families.members) {
          LINKSCOPE_TRY(names, floors_detail::string_list(list, "policy symbol versions are not an array of strings"));
          entry.families.push_back({family, std::move(names)});
        }
        policy.symbol_versions.push_back(std::move(entry));
      }
    }
    if (const json_value* whitelist = p.find("lib_whitelist")) {
      LINKSCOPE_TRY(list, floors_detail::string_list(*whitelist, "policy \"lib_whitelist\" is not an array of strings"));
      policy.lib_whitelist = std::move(list);
    }
    if (const json_value* blacklist = p.find("blacklist")) {
      if (!blacklist->is_object()) return floors_detail::policy_error(*blacklist, "policy \"blacklist\" is not an object");
      for (const auto& [library, list] : blacklist->members) {
        LINKSCOPE_TRY(names, floors_detail::string_list(list, "policy blacklist entry is not an array of strings"));
        policy.blacklist.push_back({library, std::move(names)});
      }
    }
    out.push_back(std::move(policy));
  }
  return out;
}

LINKSCOPE_FUNC policy_report evaluate_policies(const elf_floors& f, const std::vector<floor_policy>& policies) {
  policy_report out;
  out.arch = std::string(policy_arch(f));
  std::vector<const floor_policy*> order;
  for (const auto& p : policies) order.push_back(&p);
  std::stable_sort(order.begin(), order.end(), [](const floor_policy* a, const floor_policy* b) { return a->priority > b->priority; });
  for (const floor_policy* p : order) {
    const bool generic = p->priority == 0 || p->name == "linux";
    const floor_policy::arch_versions* arch = out.arch.empty() ? nullptr : p->for_arch(out.arch);
    if (arch == nullptr && !generic) continue;
    policy_verdict v;
    v.name = p->name;
    v.tag = out.arch.empty() ? p->name : p->name + "_" + out.arch;
    v.priority = p->priority;
    if (arch != nullptr) {
      for (const auto& lib : f.libraries) {
        if (is_dynamic_loader(lib.library)) continue;
        for (const auto& need : lib.versions) {
          const std::size_t us = need.name.find('_');
          const std::string family = need.name.substr(0, us);
          const std::string rest = us == std::string::npos ? std::string() : need.name.substr(us + 1);
          auto fam = std::find_if(arch->families.begin(), arch->families.end(),
                                  [&](const floor_policy::family_versions& fv) { return fv.family == family; });
          if (fam == arch->families.end()) continue;
          if (std::binary_search(fam->versions.begin(), fam->versions.end(), rest)) continue;
          v.above.push_back(policy_excess{lib.library, need.name, need.symbols});
        }
      }
    }
    for (const auto& entry : p->blacklist) {
      if (std::find(f.needed.begin(), f.needed.end(), entry.library) == f.needed.end()) continue;
      for (const auto& symbol : f.undefined)
        if (std::binary_search(entry.symbols.begin(), entry.symbols.end(), symbol))
          v.blacklisted.push_back(entry.library + ": " + symbol);
    }
    if (!generic) {
      for (const auto& lib : f.needed)
        if (!is_dynamic_loader(lib) && !std::binary_search(p->lib_whitelist.begin(), p->lib_whitelist.end(), lib))
          v.outside_whitelist.push_back(lib);
    }
    v.isa_exceeded = !generic && out.arch == "x86_64" && f.x86_isa_level() > 1;
    v.satisfied = v.above.empty() && v.blacklisted.empty() && !v.isa_exceeded;
    if (v.satisfied && v.priority > out.best_priority) {
      out.best_priority = v.priority;
      out.best = v.tag;
    }
    out.verdicts.push_back(std::move(v));
  }
  return out;
}

LINKSCOPE_FUNC long long set_best_policy(const std::vector<const policy_report*>& reports) {
  long long chosen = -1;
  for (std::size_t i = 0; i < reports.size(); ++i) {
    if (reports[i] == nullptr || reports[i]->best.empty()) continue;
    if (chosen < 0 || reports[i]->best_priority < reports[static_cast<std::size_t>(chosen)]->best_priority)
      chosen = static_cast<long long>(i);
  }
  return chosen;
}
#endif  // LINKSCOPE_DEFINITIONS

}  // namespace resolve
}  // namespace v0
}  // namespace linkscope
