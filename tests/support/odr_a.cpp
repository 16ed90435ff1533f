// ODR check: the umbrella header in two TUs of one program must link.
#include <linkscope/linkscope.hpp>

int linkscope_odr_b();

int main() {
  linkscope::symbol_table table;
  linkscope::symbol sym;
  sym.name = "odr";
  table.push_back(sym);
  auto index = linkscope::hash_index::build(table);
  return (index.contains("odr") && linkscope_odr_b() == 0) ? 0 : 1;
}
