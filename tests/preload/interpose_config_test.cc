// isolation.interpose: the project's extra program names reach the
// interposer of the program's descendants, and only ever add to what it wraps.
#include "core/config.h"
#include "core/errors.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/process.h"
#include "tests/support/temp_dir.h"

namespace np {
namespace {

using ::np::testing::BaseEnv;
using ::np::testing::MakeProject;
using ::np::testing::NpExecBin;
using ::np::testing::RunOptions;
using ::np::testing::RunProcess;
using ::np::testing::RunResult;
using ::np::testing::TempDir;

TEST(InterposeConfigTest, ParsesNames) {
  absl::StatusOr<ProjectConfig> config = ParseProjectConfig(
      nlohmann::json::parse(R"({"isolation": {"interpose": ["nodejs", "claude"]}})"));
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_THAT(config->interpose, ::testing::ElementsAre("nodejs", "claude"));
}

TEST(InterposeConfigTest, RefusesWhatCannotBeAFileName) {
  for (const char* value :
       {R"("node")", R"([""])", R"(["a,b"])", R"(["a/b"])", R"([".."])", R"([1])", R"([null])"}) {
    absl::StatusOr<ProjectConfig> config = ParseProjectConfig(
        nlohmann::json::parse(std::string(R"({"isolation": {"interpose": )") + value + "}}"));
    ASSERT_FALSE(config.ok()) << value;
    EXPECT_EQ(ErrorCode(config.status()), "isolation-invalid-value") << value;
  }
}

RunResult PrintNames(const TempDir& dir, const std::vector<std::string>& extra_env) {
  RunOptions options;
  options.cwd = dir.path();
  options.env = BaseEnv(extra_env);
  return RunProcess({NpExecBin(), "--", "/bin/sh", "-c", "echo \"$NP_EXEC_PRELOAD_NAMES\""},
                    options);
}

TEST(InterposeConfigTest, ProjectNamesAreAddedToTheDefault) {
  TempDir dir;
  MakeProject(dir.path(), R"({"isolation": {"interpose": ["nodejs", "claude"]}})");
  RunResult result = PrintNames(dir, {});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out, "node,nodejs,claude\n");
}

TEST(InterposeConfigTest, ProjectNamesOnlyAddToTheOperatorsList) {
  TempDir dir;
  MakeProject(dir.path(), R"({"isolation": {"interpose": ["claude", "deno"]}})");
  RunResult result = PrintNames(dir, {"NP_EXEC_PRELOAD_NAMES=deno,bun"});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out, "deno,bun,claude\n");
}

TEST(InterposeConfigTest, WithoutTheKeyTheEnvironmentIsLeftAlone) {
  TempDir dir;
  MakeProject(dir.path(), "{}");
  EXPECT_EQ(PrintNames(dir, {}).out, "\n");
  EXPECT_EQ(PrintNames(dir, {"NP_EXEC_PRELOAD_NAMES=bun"}).out, "bun\n");
}

}  // namespace
}  // namespace np
