// linkscope-ar: list archive members (like `ar t` / `ar tv`), print the
// archive index (like the "Archive index:" part of `nm -s`), and find which
// member defines a symbol (through hash_index).
#include <cstdio>
#include <cstring>
#include <ctime>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <linkscope/ar/archive.hpp>
#include <linkscope/ar/armap.hpp>
#include <linkscope/core/mapped_file.hpp>
#include <linkscope/report/ar.hpp>
#include <linkscope/report/json.hpp>
#include <linkscope/symbols/index.hpp>
#include <linkscope/symbols/table.hpp>

#include "cli/cli.hpp"
#include "cli/options.hpp"

namespace {

constexpr std::string_view tool = "linkscope-ar";

namespace cli = linkscope::cli;

constexpr cli::option_spec options[] = {
    {nullptr, 't', cli::arg::none, nullptr, "list the members (like `ar t`; also the operation word t)", 1},
    {nullptr, 'v', cli::arg::none, nullptr, "with -t: list verbosely (like `ar tv`; also the word tv)"},
    {"print-armap", 's', cli::arg::none, nullptr, "print the archive index (like the \"Archive index:\" part of `nm -s`)", 1},
    {"find", 0, cli::arg::required, "SYMBOL", "print the member(s) whose armap entry defines SYMBOL (exit 1 when none)", 1},
    {"json", 0, cli::arg::none, nullptr,
     "write one JSON document instead of text (several archives: {\"version\": 1, \"archives\": [...]})"},
    {"thin-confine", 0, cli::arg::none, nullptr, "do not follow thin-archive member paths that are absolute or leave the archive's folder"},
};

constexpr cli::tool_spec spec{
    "linkscope-ar", "[OPTION]... OPERATION ARCHIVE...",
    "Read Unix ar archives (GNU, BSD, thin, COFF .lib, AIX big) without extracting them.\n"
    "OPERATION is t, tv, -t, -tv, --print-armap or --find SYMBOL. With several archives,\n"
    "each listing is headed by a line `ARCHIVE:`, as nm does.",
    options,
    "  linkscope-ar t /usr/lib/x86_64-linux-gnu/libc.a\n"
    "  linkscope-ar --find printf /usr/lib/x86_64-linux-gnu/libc.a\n"};

enum class operation { none, list, list_verbose, print_armap, find };

// rwxrwxrwx with set-id and sticky bits (like GNU ar's mode_string, minus the type).
void mode_string(std::uint64_t mode, char out[10]) {
  const char* rwx = "rwxrwxrwx";
  for (int i = 0; i < 9; ++i) out[i] = (mode & (1u << (8 - i))) ? rwx[i] : '-';
  if (mode & 04000) out[2] = (mode & 0100) ? 's' : 'S';
  if (mode & 02000) out[5] = (mode & 0010) ? 's' : 'S';
  if (mode & 01000) out[8] = (mode & 0001) ? 't' : 'T';
  out[9] = '\0';
}

// "Jan  1 00:00 1970": ctime()'s fields 4..15 and 20..23, in local time.
std::string ar_time(std::uint64_t date) {
  static const char* const months[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                       "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  std::time_t when = static_cast<std::time_t>(date);
  std::tm tm{};
  if (localtime_r(&when, &tm) == nullptr || tm.tm_year + 1900 > 9999) return "<time data corrupt>";
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%s %2d %02d:%02d %d", months[tm.tm_mon], tm.tm_mday, tm.tm_hour, tm.tm_min,
                tm.tm_year + 1900);
  return buf;
}

struct context {
  std::string path;
  linkscope::ar::archive archive;
  bool in_list = false;  // --json over several archives: one element of "archives"
  // Member display names by header offset (thin members get the archive's folder).
  std::unordered_map<std::uint64_t, std::string> names;

  // Archives that thin members nest into ("/N:M" names), opened once each.
  struct nested_archive {
    linkscope::mapped_file file;
    linkscope::ar::archive archive;
  };
  std::unordered_map<std::string, std::unique_ptr<nested_archive>> nested;

  linkscope::ar::thin_options thin;  // --thin-confine

  std::string display_name(const linkscope::ar::member& m) {
    if (!archive.is_thin()) return std::string(m.name);
    auto path_or = linkscope::ar::thin_member_path(path, m, thin);
    if (!path_or) {
      // Refused (--thin-confine) or unnamed: the name as stored, nothing opened.
      linkscope::cli::warn(tool, path, std::string(path_or.error().message) + ": " + std::string(m.name));
      return std::string(m.name);
    }
    if (!m.nested) return *path_or;
    // GNU ar names a nested member by its name inside the nested archive.
    auto it = nested.find(*path_or);
    if (it == nested.end()) {
      auto opened = std::make_unique<nested_archive>();
      auto file = linkscope::mapped_file::open(*path_or);
      if (file) {
        opened->file = std::move(*file);
        auto a = linkscope::ar::archive::open(opened->file.bytes());
        if (a) opened->archive = *a;
      }
      it = nested.emplace(*path_or, std::move(opened)).first;
    }
    auto inner = it->second->archive.member_at(m.nested_offset);
    return inner ? std::string(inner->name) : *path_or;
  }
  linkscope::result<std::string_view> name_at(std::uint64_t offset) {
    // A regular archive's names are views into the mapping: no copy, no cache
    // (the armap visits each member in one run, and member_at is O(1)).
    if (!archive.is_thin()) {
      LINKSCOPE_TRY(m, archive.member_at(offset));
      return m.name;
    }
    auto it = names.find(offset);
    if (it != names.end()) return std::string_view(it->second);
    LINKSCOPE_TRY(m, archive.member_at(offset));
    auto inserted = names.emplace(offset, display_name(m));
    return std::string_view(inserted.first->second);
  }
};

// The head of one archive's JSON object (report/ar.hpp).
void begin_json(linkscope::json_writer& writer, const context& ctx) {
  linkscope::report::begin_ar_archive(writer, ctx.path, ctx.archive.kind(), ctx.in_list);
}
// The end of it: the closing brace, and the newline of a document of its own.
void end_json(linkscope::json_writer& writer, std::string& out, const context& ctx) {
  linkscope::report::end_ar_archive(writer);
  if (!ctx.in_list) out.push_back('\n');
}

// A failure of the run on this archive: the diagnostic on stderr and, with
// --json, what stands for the archive in the document — an element of
// "archives" ({file, error, offset}) or, alone, the error document. Exit 2.
int fail(const context& ctx, const linkscope::error& err, bool json) {
  linkscope::cli::report(tool, ctx.path, err);
  if (json) {
    std::string out;
    linkscope::json_writer writer(out);
    linkscope::report::write_ar_error(writer, linkscope::diagnostic(err, ctx.path), ctx.in_list);
    if (!ctx.in_list) out.push_back('\n');
    std::fwrite(out.data(), 1, out.size(), stdout);
  }
  return linkscope::cli::exit_error;
}

int list(context& ctx, bool verbose, bool json) {
  std::string out;
  out.reserve(4096);
  linkscope::json_writer writer(out);
  if (json) {
    begin_json(writer, ctx);
    linkscope::report::begin_ar_members(writer);
  }
  for (const auto& m : ctx.archive.members()) {
    if (!m) {
      if (json) {
        linkscope::report::end_ar_members(writer, &m.error());
        end_json(writer, out, ctx);
      }
      std::fwrite(out.data(), 1, out.size(), stdout);
      std::fflush(stdout);
      linkscope::cli::report(tool, ctx.path, m.error());
      return linkscope::cli::exit_error;
    }
    std::string name = ctx.display_name(*m);
    if (json) {
      linkscope::report::write_ar_member(writer, ctx.path, name, *m);
      continue;
    }
    if (verbose) {
      char mode[10];
      mode_string(m->mode, mode);
      char buf[128];
      std::snprintf(buf, sizeof(buf), "%s %llu/%llu %6llu %s ", mode, static_cast<unsigned long long>(m->uid),
                    static_cast<unsigned long long>(m->gid), static_cast<unsigned long long>(m->size),
                    ar_time(m->date).c_str());
      out.append(buf);
    }
    out.append(name).push_back('\n');
    if (out.size() > (1u << 16)) {
      std::fwrite(out.data(), 1, out.size(), stdout);
      out.clear();
    }
  }
  if (json) {
    linkscope::report::end_ar_members(writer);
    end_json(writer, out, ctx);
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
  return linkscope::cli::exit_ok;
}

int print_armap(context& ctx, bool json) {
  auto map = linkscope::ar::armap::read(ctx.archive);
  if (!map) return fail(ctx, map.error(), json);
  // Written in 1 MiB pieces: at 10M entries the whole listing would be ~400 MB.
  constexpr std::size_t piece = std::size_t{1} << 20;
  std::string out;
  out.reserve(piece + 4096);
  linkscope::json_writer writer(out);
  if (json) {
    begin_json(writer, ctx);
    linkscope::report::begin_ar_armap(writer, *map);
  } else if (map->part_count() > 0) {
    out.append("Archive index:\n");
  }
  std::uint64_t last_offset = ~std::uint64_t{0};
  std::string_view last_name;
  linkscope::error failure{};
  auto visited = map->for_each([&](const linkscope::ar::armap_entry& e) {
    if (e.member_offset != last_offset) {
      auto name = ctx.name_at(e.member_offset);
      if (!name) {
        failure = name.error();
        return false;
      }
      last_offset = e.member_offset;
      last_name = *name;
    }
    if (json) {
      linkscope::report::write_ar_armap_entry(writer, ctx.path, last_name, e);
    } else {
      out.append(e.name).append(" in ").append(last_name).push_back('\n');
    }
    if (out.size() >= piece) {
      std::fwrite(out.data(), 1, out.size(), stdout);
      out.clear();
    }
    return true;
  });
  if (!visited) failure = visited.error();
  if (json) {
    linkscope::report::end_ar_armap(writer);
    end_json(writer, out, ctx);
  } else if (map->part_count() > 0) {
    out.push_back('\n');
  }
  if (failure.code != linkscope::errc::ok) return fail(ctx, failure, json);
  std::fwrite(out.data(), 1, out.size(), stdout);
  return linkscope::cli::exit_ok;
}

int find(context& ctx, std::string_view symbol_name, bool json) {
  auto map = linkscope::ar::armap::read(ctx.archive);
  if (!map) return fail(ctx, map.error(), json);
  // One question, one pass: scan the armap's names in place (no symbol
  // table, no index: at 10M entries those cost 12 s and 1.4 GB; the scan
  // costs one string compare per entry). Matches come in armap order.
  std::vector<linkscope::ar::armap_entry> matches;
  auto scanned = map->for_each([&](const linkscope::ar::armap_entry& e) {
    if (e.name == symbol_name) matches.push_back(e);
  });
  if (!scanned) return fail(ctx, scanned.error(), json);
  std::string out;
  linkscope::json_writer writer(out);
  if (json) {
    begin_json(writer, ctx);
    linkscope::report::begin_ar_find(writer, symbol_name);
  }
  std::size_t found = 0;
  for (const linkscope::ar::armap_entry& entry : matches) {
    auto name = ctx.name_at(entry.member_offset);
    if (!name) return fail(ctx, name.error(), json);
    ++found;
    if (json) {
      linkscope::report::write_ar_definition(writer, ctx.path, *name, entry);
    } else {
      out.append(symbol_name).append(" in ").append(*name).push_back('\n');
    }
  }
  if (json) {
    linkscope::report::end_ar_find(writer);
    end_json(writer, out, ctx);
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
  return found > 0 ? linkscope::cli::exit_ok : linkscope::cli::exit_finding;
}


int run(const std::string& path, operation op, bool json, bool in_list, const linkscope::ar::thin_options& thin,
        std::string_view symbol_name) {
  context ctx;
  ctx.path = path;
  ctx.thin = thin;
  ctx.in_list = in_list;
  auto file = linkscope::mapped_file::open(ctx.path);
  if (!file) return fail(ctx, file.error(), json);
  auto archive = linkscope::ar::archive::open(file->bytes());
  if (!archive) return fail(ctx, archive.error(), json);
  ctx.archive = *archive;
  switch (op) {
    case operation::list: return list(ctx, false, json);
    case operation::list_verbose: return list(ctx, true, json);
    case operation::print_armap: return print_armap(ctx, json);
    case operation::find: return find(ctx, symbol_name, json);
    case operation::none: break;
  }
  return linkscope::cli::exit_ok;
}

}  // namespace

int main(int argc, char** argv) {
  linkscope::cli::fast_stdout();
  cli::parsed p;
  if (int rc = cli::parse(spec, argc, argv, p); rc >= 0) return rc;
  operation op = operation::none;
  if (p.has("t")) op = p.has("v") ? operation::list_verbose : operation::list;
  if (p.has("print-armap")) op = operation::print_armap;
  if (p.has("find")) op = operation::find;
  std::vector<std::string> files = p.operands;
  if (op == operation::none && !files.empty() && (files[0] == "t" || files[0] == "tv" || files[0] == "vt")) {
    op = files[0] == "t" ? operation::list : operation::list_verbose;
    files.erase(files.begin());
  }
  if (op == operation::none) return cli::usage_error(spec, "no operation given (t, tv, --print-armap, --find)");
  if (files.empty()) return cli::usage_error(spec, "no archive given");
  const bool json = p.has("json");
  // --json over several archives: one document, {"version": 1, "archives": [...]}.
  const bool json_list = json && files.size() > 1;
  linkscope::ar::thin_options thin;
  thin.confine_to_archive_dir = p.has("thin-confine");
  const std::string symbol_name = p.value("find");
  int status = linkscope::cli::exit_ok;
  // The frame of the document over several archives; each archive's element
  // is written by a writer of its own (run), so the ',' between them is ours.
  std::string frame;
  linkscope::json_writer list_writer(frame);
  if (json_list) {
    linkscope::report::begin_ar_archives(list_writer);
    std::fwrite(frame.data(), 1, frame.size(), stdout);
    frame.clear();
  }
  for (const auto& path : files) {
    if (json_list) {
      if (&path != &files.front()) std::fputc(',', stdout);
    } else if (files.size() > 1) {
      std::printf("\n%s:\n", path.c_str());
    }
    int rc = run(path, op, json, json_list, thin, symbol_name);
    std::fflush(stdout);
    if (rc > status) status = rc;
  }
  if (json_list) {
    linkscope::report::end_ar_archives(list_writer);
    frame.push_back('\n');
    std::fwrite(frame.data(), 1, frame.size(), stdout);
  }
  return status;
}
