// What a test does when the machine lacks what it needs. Under CI=true (CI,
// and the test command on a fresh machine, which installs everything) a
// missing tool, runtime, image or right is a failure that says why; elsewhere
// (a developer's machine without, say, strace) the test is skipped. No test
// skips silently under CI.
#ifndef NP_EXEC_TESTS_SUPPORT_CI_H_
#define NP_EXEC_TESTS_SUPPORT_CI_H_

#include <cstdlib>
#include <string>

#include "gtest/gtest.h"

namespace np::testing {

// True when CI=true.
inline bool InCi() {
  const char* ci = std::getenv("CI");
  return ci != nullptr && std::string(ci) == "true";
}

}  // namespace np::testing

// Fails the current test under CI=true, skips it otherwise; `why` is streamed.
#define NP_NEEDS(why)                                                       \
  do {                                                                      \
    if (::np::testing::InCi()) FAIL() << "required under CI=true: " << why; \
    GTEST_SKIP() << why;                                                    \
  } while (0)

#endif  // NP_EXEC_TESTS_SUPPORT_CI_H_
