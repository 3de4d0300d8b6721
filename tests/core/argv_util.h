// Small helpers for asserting on argument vectors. Test-only.
#ifndef NP_EXEC_TESTS_CORE_ARGV_UTIL_H_
#define NP_EXEC_TESTS_CORE_ARGV_UTIL_H_

#include <cstddef>
#include <string>
#include <vector>

#include "tests/support/docker_csv.h"

namespace np::testing {

// Index of the first element equal to `value`, or -1.
inline long IndexOf(const std::vector<std::string>& argv, const std::string& value,
                    size_t from = 0) {
  for (size_t i = from; i < argv.size(); ++i) {
    if (argv[i] == value) return static_cast<long>(i);
  }
  return -1;
}

inline bool Contains(const std::vector<std::string>& argv, const std::string& value) {
  return IndexOf(argv, value) >= 0;
}

// Index of the first place where `seq` appears as consecutive elements, or -1.
inline long IndexOfSequence(const std::vector<std::string>& argv,
                            const std::vector<std::string>& seq) {
  if (seq.empty() || argv.size() < seq.size()) return -1;
  for (size_t i = 0; i + seq.size() <= argv.size(); ++i) {
    bool match = true;
    for (size_t j = 0; j < seq.size() && match; ++j) match = argv[i + j] == seq[j];
    if (match) return static_cast<long>(i);
  }
  return -1;
}

inline bool HasSequence(const std::vector<std::string>& argv, const std::vector<std::string>& seq) {
  return IndexOfSequence(argv, seq) >= 0;
}

// True when some element starts with `prefix`.
inline bool AnyStartsWith(const std::vector<std::string>& argv, const std::string& prefix) {
  for (const std::string& arg : argv) {
    if (arg.compare(0, prefix.size(), prefix) == 0) return true;
  }
  return false;
}

// True when some element contains `needle`.
inline bool AnyContains(const std::vector<std::string>& argv, const std::string& needle) {
  for (const std::string& arg : argv) {
    if (arg.find(needle) != std::string::npos) return true;
  }
  return false;
}

}  // namespace np::testing

#endif  // NP_EXEC_TESTS_CORE_ARGV_UTIL_H_
