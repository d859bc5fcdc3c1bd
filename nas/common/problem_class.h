// nas/common/problem_class.h: the NPB problem classes (S, W, A, B, C) and a small table
// type that maps each class a benchmark supports to its parameters, so a kernel writes
// its class table once, as data, and looks it up by the letter given on the command line.
#pragma once

#include <initializer_list>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace nas {

// Parameters of type T for each problem class a benchmark supports.
template <typename T>
class ClassTable {
 public:
  ClassTable(std::initializer_list<std::pair<char, T>> rows) : rows_(rows) {}

  // True when the table has a row for class letter c.
  bool has(char c) const {
    for (const auto& row : rows_)
      if (row.first == c) return true;
    return false;
  }

  // The row of class c; throws std::out_of_range when there is none (check has() first).
  const T& at(char c) const {
    for (const auto& row : rows_)
      if (row.first == c) return row.second;
    throw std::out_of_range(std::string("no parameters for class ") + c);
  }

  // The supported class letters in table order, e.g. "SWAB".
  std::string letters() const {
    std::string out;
    for (const auto& row : rows_) out += row.first;
    return out;
  }

 private:
  std::vector<std::pair<char, T>> rows_;
};

}  // namespace nas
