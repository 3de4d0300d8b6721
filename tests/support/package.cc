#include "tests/support/package.h"

#include <filesystem>

#include "gtest/gtest.h"
#include "tests/support/process.h"

namespace np::testing {

std::string BuildDeb(const std::string& out_dir) {
  RunOptions options;
  options.cwd = BinaryDir();
  options.env = BaseEnv({"LANG=C.UTF-8"});
  options.timeout_ms = 300000;
  RunResult r = RunProcess({"/usr/bin/cpack", "-G", "DEB", "-B", out_dir}, options);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  for (const auto& entry : std::filesystem::directory_iterator(out_dir)) {
    if (entry.path().extension() == ".deb") return entry.path().string();
  }
  ADD_FAILURE() << "no .deb in " << out_dir << "\n" << r.out;
  return "";
}

}  // namespace np::testing
