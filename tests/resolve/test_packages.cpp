// resolve/packages.hpp: package ownership. dpkg's answers are `dpkg -S` of the
// path, else of its /usr-merge alias, else of its realpath (what
// dpkg-shlibdeps does); conda's come from generated conda-meta records.
#include <linkscope/resolve/packages.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "support/fixtures.hpp"

using namespace linkscope;
namespace lt = linkscope_test;

namespace {
// `dpkg -S PATH`'s package, or "".
std::string dpkg_search(const std::string& path) {
  auto r = lt::capture("dpkg -S " + lt::shell_quote(path) + " 2>/dev/null");
  if (r.status != 0 || r.out.empty() || r.out.rfind("diversion", 0) == 0) return {};
  return r.out.substr(0, r.out.find(": "));
}
}  // namespace

TEST_CASE("package names and /usr-merge aliases", "[packages]") {
  CHECK(resolve::package_base_name("libc6:amd64") == "libc6");
  CHECK(resolve::package_base_name("libgoogle-glog0v6") == "libgoogle-glog0v6");
  auto aliases = resolve::detail::usr_merge_aliases("/lib/x86_64-linux-gnu/libc.so.6");
  REQUIRE(aliases.size() == 1);
  CHECK(aliases[0] == "/usr/lib/x86_64-linux-gnu/libc.so.6");
  aliases = resolve::detail::usr_merge_aliases("/usr/lib/x86_64-linux-gnu/libc.so.6");
  REQUIRE(aliases.size() == 1);
  CHECK(aliases[0] == "/lib/x86_64-linux-gnu/libc.so.6");
  CHECK(resolve::detail::usr_merge_aliases("/usr/sbin/ldconfig") == std::vector<std::string>{"/sbin/ldconfig"});
  CHECK(resolve::detail::usr_merge_aliases("/opt/lib/x.so").empty());
  CHECK(resolve::detail::usr_merge_aliases("/library/x").empty());
  CHECK(resolve::detail::path_within("/usr/lib/x", "/usr"));
  CHECK_FALSE(resolve::detail::path_within("/usrx/lib", "/usr"));
  CHECK(resolve::detail::path_within("/x", "/"));
}

TEST_CASE("lexically_normal_path agrees with std::filesystem's lexically_normal", "[packages]") {
  // Every path of up to four elements over these, absolute and relative,
  // with and without a trailing slash: the fast path must give what
  // std::filesystem::path::lexically_normal gives, normal or not.
  const std::vector<std::string> elements = {"", ".", "..", "a", "bc", ".x", "..y", "a.", "...", "d\\e"};
  std::size_t compared = 0;
  std::vector<std::string> paths = {"", "/", "//", ".", "..", "./", "../"};
  std::vector<std::string> level = {""};
  for (int depth = 1; depth <= 4; ++depth) {
    std::vector<std::string> next;
    for (const auto& prefix : level)
      for (const auto& e : elements) next.push_back(depth == 1 ? e : prefix + "/" + e);
    for (const auto& p : next) {
      paths.push_back(p);
      paths.push_back("/" + p);
      paths.push_back(p + "/");
    }
    level = std::move(next);
  }
  for (const auto& p : paths) {
    INFO("path '" << p << "'");
    CHECK(resolve::detail::lexically_normal_path(p) == std::filesystem::path(p).lexically_normal().string());
    ++compared;
  }
  CHECK(compared > 30000);
}

TEST_CASE("canonical_paths gives canonical_or_normal's answer, and realpath -m's where no link dangles", "[packages]") {
  namespace fs = std::filesystem;
  const std::string s = fs::weakly_canonical(lt::scratch_dir("canonical_paths")).string();
  fs::create_directories(s + "/d/e");
  { std::ofstream(s + "/d/f") << "x"; }
  { std::ofstream(s + "/d/e/g") << "x"; }
  fs::create_symlink("f", s + "/d/lf");             // a file symlink, relative
  fs::create_symlink(s + "/d", s + "/ld");          // a folder symlink, absolute
  fs::create_symlink("../d/e", s + "/d/le");        // a folder symlink through ..
  fs::create_symlink("lf", s + "/d/llf");           // a chain
  fs::create_symlink("nowhere", s + "/d/dang");     // dangling
  const std::vector<std::string> resolved = {
      "/", "/tmp", s, s + "/d", s + "/d/f", s + "/ld/f", s + "/ld/lf", s + "/d/llf", s + "/ld/e/g", s + "/d/le/g",
      s + "/ld/le/g", s + "/d/missing", s + "/ld/missing", s + "/ld/missing/x", s + "/d/./f", s + "/d/../d/f",
      s + "/ld/../d/f", s + "/ld//f", s + "/ld/", s + "/d/e/../f", s + "/ld/le/../f", s + "/missing/../d/f"};
  const std::vector<std::string> others = {s + "/d/dang", s + "/ld/dang", s + "/d/dang/x", "d/f", "", "."};
  resolve::detail::canonical_paths paths;
  std::size_t against_realpath = 0;
  for (int round = 0; round < 2; ++round) {  // the second round answers from the folder memo
    for (const auto& p : resolved) {
      INFO("path '" << p << "', round " << round);
      const std::string got = paths(p);
      CHECK(got == resolve::detail::canonical_or_normal(p));
      auto r = lt::capture("realpath -m -- " + lt::shell_quote(p));
      REQUIRE(r.status == 0);
      CHECK(got + "\n" == r.out);
      ++against_realpath;
    }
    for (const auto& p : others) {
      INFO("path '" << p << "', round " << round);
      CHECK(paths(p) == resolve::detail::canonical_or_normal(p));
    }
  }
  CHECK(against_realpath == 2 * resolved.size());
}

TEST_CASE("conda_owners: records in name order, first owner wins, bad records are warnings", "[packages]") {
  const std::string prefix = lt::scratch_dir("packages") + "/env";
  std::filesystem::create_directories(prefix + "/conda-meta");
  lt::write_file(prefix + "/conda-meta/a-1-0.json", R"({"name": "a", "files": ["lib/liba.so", "lib/./shared.so"]})");
  lt::write_file(prefix + "/conda-meta/b-1-0.json", R"({"files": ["lib/shared.so", "bin/b"], "name": "b"})");
  lt::write_file(prefix + "/conda-meta/c-1-0.json", R"({"name": "c", "files": ["lib/c.so" "lib/d.so"]})");
  lt::write_file(prefix + "/conda-meta/d-1-0.json", R"({"files": ["lib/nameless.so"]})");
  lt::write_file(prefix + "/conda-meta/history", "not a record");
  std::vector<std::string> warnings;
  auto owners = resolve::conda_owners(prefix, &warnings);
  REQUIRE(owners);
  CHECK(owners->size() == 3);
  CHECK((*owners)["lib/liba.so"] == "a");
  CHECK((*owners)["lib/shared.so"] == "a");
  CHECK((*owners)["bin/b"] == "b");
  CHECK(owners->count("lib/c.so") == 0);
  REQUIRE(warnings.size() == 2);
  // c: the missing ',' at byte 35, where json.loads reports "Expecting ',' delimiter".
  CHECK(warnings[0] == prefix + "/conda-meta/c-1-0.json: expected ',' or ']' in a JSON array (offset 0x23)");
  CHECK(warnings[1] == prefix + "/conda-meta/d-1-0.json: no \"name\"");
}

TEST_CASE("dpkg_owners agrees with dpkg -S", "[packages]") {
  if (!lt::have_tool("dpkg") || !std::filesystem::is_directory("/var/lib/dpkg/info")) {
    WARN("no dpkg database");
    return;
  }
  // libc under both spellings, a path nobody owns, and the first shared
  // libraries of the system directory (symlinks among them: alternatives and
  // SONAME links, which dpkg may list only under the realpath).
  std::vector<std::string> paths = {"/lib/x86_64-linux-gnu/libc.so.6", "/usr/lib/x86_64-linux-gnu/libc.so.6",
                                    "/nonexistent/libz.so"};
  std::vector<std::string> system;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/usr/lib/x86_64-linux-gnu", ec))
    if (e.path().filename().string().find(".so.") != std::string::npos) system.push_back(e.path().string());
  std::sort(system.begin(), system.end());
  if (system.size() > 20) system.resize(20);
  paths.insert(paths.end(), system.begin(), system.end());
  const auto owners = resolve::dpkg_owners(paths);
  std::size_t owned = 0;
  for (const auto& p : paths) {
    INFO(p);
    std::string theirs = dpkg_search(p);
    for (const auto& a : resolve::detail::usr_merge_aliases(p))
      if (theirs.empty()) theirs = dpkg_search(a);
    if (theirs.empty() && std::filesystem::exists(p)) theirs = dpkg_search(std::filesystem::canonical(p).string());
    auto it = owners.find(p);
    CHECK((it == owners.end() ? std::string() : it->second.package) == theirs);
    if (it != owners.end()) {
      CHECK(it->second.source == "dpkg");
      CHECK_FALSE(it->second.listed_path.empty());
      ++owned;
    }
  }
  CHECK(owned >= 2);
}
