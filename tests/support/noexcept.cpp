// The library builds and works with -fno-exceptions -fno-rtti.
#include <linkscope/linkscope.hpp>

int main(int argc, char** argv) {
  auto file = linkscope::mapped_file::open(argc > 1 ? argv[1] : "/nonexistent/linkscope");
  if (file) return 1;  // the default path must not exist
  return file.error().code == linkscope::errc::not_found ? 0 : 1;
}
