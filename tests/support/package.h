// The Debian package of the build under test, for the tests that install it:
// `cpack -G DEB` in the build directory. Test-only; spawns processes.
#ifndef NP_EXEC_TESTS_SUPPORT_PACKAGE_H_
#define NP_EXEC_TESTS_SUPPORT_PACKAGE_H_

#include <string>

namespace np::testing {

// Builds the .deb into `out_dir` and returns its path; "" (with a test
// failure added) when cpack fails or makes none.
std::string BuildDeb(const std::string& out_dir);

}  // namespace np::testing

#endif  // NP_EXEC_TESTS_SUPPORT_PACKAGE_H_
