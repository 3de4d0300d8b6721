// Reading a `--mount` value the way docker does, to check what np-exec built.
// Test-only, header-only and free of test-framework dependencies, so the
// fuzzers use it too.
#ifndef NP_EXEC_TESTS_SUPPORT_DOCKER_CSV_H_
#define NP_EXEC_TESTS_SUPPORT_DOCKER_CSV_H_

#include <cstddef>
#include <string>
#include <vector>

namespace np::testing {

// Splits one record as Go's encoding/csv (docker's --mount parser) reads it:
// fields separated by commas, a field in double quotes may hold commas, and ""
// inside quotes is one quote. Returns false on a malformed record.
inline bool ParseCsvRecord(const std::string& record, std::vector<std::string>* fields) {
  fields->clear();
  std::string field;
  size_t i = 0;
  for (;;) {
    field.clear();
    if (i < record.size() && record[i] == '"') {
      ++i;
      for (;;) {
        if (i >= record.size()) return false;
        if (record[i] == '"') {
          if (i + 1 < record.size() && record[i + 1] == '"') {
            field += '"';
            i += 2;
            continue;
          }
          ++i;
          break;
        }
        field += record[i++];
      }
      if (i < record.size() && record[i] != ',') return false;
    } else {
      while (i < record.size() && record[i] != ',') {
        if (record[i] == '"') return false;
        field += record[i++];
      }
    }
    fields->push_back(field);
    if (i >= record.size()) return true;
    ++i;  // The comma.
  }
}

}  // namespace np::testing

#endif  // NP_EXEC_TESTS_SUPPORT_DOCKER_CSV_H_
