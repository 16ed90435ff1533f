#include <linkscope/linkscope.hpp>

int linkscope_odr_b() {
  linkscope::symbol_table table;
  auto index = linkscope::hash_index::build(table);
  return index.contains("odr") ? 1 : 0;
}
