#include "core/settings.h"

#include <string>

#include "core/errors.h"
#include "gtest/gtest.h"
#include "tests/support/temp_dir.h"

namespace np {
namespace {

using ::np::testing::MakeProject;
using ::np::testing::TempDir;

TEST(SettingsTest, NoConfigFileMeansDirectByDefault) {
  TempDir tmp;
  MakeProject(tmp.path());
  absl::StatusOr<Settings> settings = LoadSettings({tmp.path(), "", "", false});
  ASSERT_TRUE(settings.ok()) << settings.status();
  EXPECT_EQ(settings->project_root, tmp.path());
  EXPECT_EQ(settings->resolved.tier, Tier::kDirect);
  EXPECT_EQ(settings->resolved.from, TierSource::kDefault);
  EXPECT_FALSE(HasMilestonesAt(settings->project));
}

TEST(SettingsTest, ProjectFileFromASubdirectory) {
  TempDir tmp;
  MakeProject(tmp.path(), R"({"isolation": {"tier": "container",
                                             "container": {"network": "bridge"}}})");
  const std::string sub = tmp.MakeDir("src/lib");
  absl::StatusOr<Settings> settings = LoadSettings({sub, "", "", false});
  ASSERT_TRUE(settings.ok()) << settings.status();
  EXPECT_EQ(settings->project_root, tmp.path());
  EXPECT_EQ(settings->resolved.tier, Tier::kContainer);
  EXPECT_EQ(settings->resolved.from, TierSource::kConfig);
  EXPECT_EQ(settings->config.container.network, Network::kBridge);
}

TEST(SettingsTest, WorktreeFloor) {
  TempDir tmp;
  MakeProject(tmp.path(), R"({"isolation": {"tier": "direct"},
                              "workflow": {"worktree_isolation": true}})");
  absl::StatusOr<Settings> settings = LoadSettings({tmp.path(), "", "", false});
  ASSERT_TRUE(settings.ok()) << settings.status();
  EXPECT_EQ(settings->resolved.tier, Tier::kWorktree);
  EXPECT_EQ(settings->resolved.from, TierSource::kWorktreeIsolation);
}

TEST(SettingsTest, OperatorFileAndEnvAreFloorsTheProjectCannotLower) {
  TempDir tmp;
  const std::string project = tmp.MakeDir("p");
  MakeProject(project, R"({"isolation": {"tier": "direct"}})");
  const std::string op_container =
      tmp.Write("op/container.json", R"({"isolation": {"tier": "container"}})");
  const std::string op_worktree =
      tmp.Write("op/worktree.json", R"({"isolation": {"tier": "worktree"}, "x": 1})");
  struct Case {
    std::string operator_path;
    std::string env;
    Tier tier;
    TierSource from;
  };
  const Case cases[] = {
      {"", "", Tier::kDirect, TierSource::kConfig},
      {op_container, "", Tier::kContainer, TierSource::kOperator},
      {op_worktree, "", Tier::kWorktree, TierSource::kOperator},
      {"", "container", Tier::kContainer, TierSource::kEnv},
      {op_worktree, "container", Tier::kContainer, TierSource::kEnv},
      {op_container, "worktree", Tier::kContainer, TierSource::kOperator},
      {tmp.Path("op/missing.json"), "", Tier::kDirect, TierSource::kConfig},
  };
  for (const Case& c : cases) {
    absl::StatusOr<Settings> settings = LoadSettings({project, c.operator_path, c.env, false});
    ASSERT_TRUE(settings.ok()) << settings.status();
    EXPECT_EQ(settings->resolved.tier, c.tier) << c.operator_path << " " << c.env;
    EXPECT_EQ(settings->resolved.from, c.from) << c.operator_path << " " << c.env;
  }
}

TEST(SettingsTest, ErrorsAreCoded) {
  TempDir tmp;
  const std::string typo = tmp.MakeDir("typo");
  MakeProject(typo, R"({"isolation": {"tire": "container"}})");
  const std::string broken = tmp.MakeDir("broken");
  MakeProject(broken, "{");
  const std::string dir_config = tmp.MakeDir("dirconfig");
  MakeProject(dir_config);
  tmp.MakeDir("dirconfig/.nubos-pilot/config.json");
  const std::string good = tmp.MakeDir("good");
  MakeProject(good);
  const std::string bad_operator = tmp.Write("op.json", R"({"isolation": {"tier": "none"}})");
  const std::string outside = tmp.MakeDir("outside");
  struct Case {
    SettingsInputs inputs;
    std::string code;
  };
  const Case cases[] = {
      {{typo, "", "", false}, "isolation-unknown-key"},
      {{broken, "", "", false}, "config-invalid-json"},
      {{dir_config, "", "", false}, "config-not-a-file"},
      {{good, bad_operator, "", false}, "isolation-invalid-tier"},
      {{good, tmp.Write("op2.json", "[]"), "", false}, "config-invalid-shape"},
      {{good, "", "sandbox", false}, "isolation-invalid-tier"},
      {{outside, "", "", false}, "not-in-project"},
      {{"relative", "", "", true}, "invalid-path"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<Settings> settings = LoadSettings(c.inputs);
    ASSERT_FALSE(settings.ok()) << c.inputs.cwd;
    EXPECT_EQ(ErrorCode(settings.status()), c.code) << c.inputs.cwd << ": " << settings.status();
  }
}

TEST(SettingsTest, TheOperatorFilesContainerKeysAreTheBaseTheProjectLaysOver) {
  TempDir tmp;
  const std::string op = tmp.Write("op.json", R"({"isolation": {"tier": "container", "container":
                     {"runtime": "bwrap", "env": ["OP_KEY"], "network": "host"}}})");
  const std::string project = tmp.MakeDir("p");
  MakeProject(project, R"({"isolation": {"container": {"env": ["PROJECT_KEY"],
                                                      "network": "none"}}})");
  absl::StatusOr<Settings> settings = LoadSettings({project, op, "", false});
  ASSERT_TRUE(settings.ok()) << settings.status();
  EXPECT_EQ(settings->config.container.runtime, Runtime::kBwrap);
  EXPECT_EQ(settings->config.container.env, (std::vector<std::string>{"OP_KEY", "PROJECT_KEY"}));
  EXPECT_EQ(settings->config.container.network, Network::kNone);
  // Outside a project, the operator's alone.
  absl::StatusOr<Settings> outside = LoadSettings({tmp.MakeDir("out"), op, "", true});
  ASSERT_TRUE(outside.ok());
  EXPECT_EQ(outside->config.container.network, Network::kHost);
  // As strict as the project's.
  const std::string bad = tmp.Write("bad.json", R"({"isolation": {"container": {"imag": "x"}}})");
  absl::StatusOr<Settings> refused = LoadSettings({project, bad, "", false});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(ErrorCode(refused.status()), "isolation-unknown-key");
}

// Issue 15, item 3: uid 0 comes only from the operator file.
TEST(SettingsTest, RootInsideTheContainerOnlyFromTheOperatorFile) {
  TempDir tmp;
  for (const char* user : {"0", "0:0", "root", "root:root", "1000:0", "00", "root:1000"}) {
    const std::string project = tmp.MakeDir(std::string("p-") + user);
    MakeProject(project,
                std::string(R"({"isolation": {"container": {"user": ")") + user + R"("}}})",
                /*trust=*/false);
    absl::StatusOr<Settings> settings = LoadSettings({project, "", "", false});
    ASSERT_FALSE(settings.ok()) << user;
    EXPECT_EQ(ErrorCode(settings.status()), "isolation-user-root-needs-operator") << user;
  }
  const std::string project = tmp.MakeDir("ok");
  MakeProject(project, R"({"isolation": {"container": {"user": "1000:1000"}}})", false);
  EXPECT_TRUE(LoadSettings({project, "", "", false}).ok());
  // The operator's own file may.
  const std::string op = tmp.Write("op.json", R"({"isolation": {"container": {"user": "0:0"}}})");
  const std::string plain = tmp.MakeDir("plain");
  MakeProject(plain, "", false);
  absl::StatusOr<Settings> settings = LoadSettings({plain, op, "", false});
  ASSERT_TRUE(settings.ok()) << settings.status();
  EXPECT_EQ(settings->config.container.user.value, "0:0");
}

// Issue 26, item 1: whether the project chose who runs (its own `user`, or
// the image while the user is the image's), which the spawn then resolves in
// the image (core/container_user.h); the operator's own choice is not.
TEST(SettingsTest, AUserTheProjectChoseIsMarkedForTheImageCheck) {
  TempDir tmp;
  struct Case {
    const char* project;
    const char* op;
    bool from_project;
  };
  const Case cases[] = {
      {R"({"isolation": {"container": {"user": "image"}}})", "", true},
      {R"({"isolation": {"container": {"user": "1000"}}})", "", true},
      {R"({"isolation": {"container": {"user": null}}})", "", false},
      {"", R"({"isolation": {"container": {"user": "image"}}})", false},
      {R"({"isolation": {"container": {"image": "x:1"}}})",
       R"({"isolation": {"container": {"user": "image"}}})", true},
      {R"({"isolation": {"container": {"image": "x:1"}}})",
       R"({"isolation": {"container": {"user": "1000"}}})", false},
      {R"({"isolation": {"container": {"user": null}}})",
       R"({"isolation": {"container": {"user": "image"}}})", false},
  };
  int i = 0;
  for (const Case& c : cases) {
    const std::string project = tmp.MakeDir("p" + std::to_string(i));
    MakeProject(project, c.project, /*trust=*/false);
    const std::string op = *c.op == '\0' ? "" : tmp.Write("op" + std::to_string(i) + ".json", c.op);
    ++i;
    absl::StatusOr<Settings> settings = LoadSettings({project, op, "", false});
    ASSERT_TRUE(settings.ok()) << settings.status();
    EXPECT_EQ(settings->config.container.user_from_project, c.from_project)
        << c.project << " / " << c.op;
  }
}

TEST(SettingsTest, OutsideAProjectWhenAllowed) {
  TempDir tmp;
  const std::string op = tmp.Write("op.json", R"({"isolation": {"tier": "worktree"}})");
  const std::string outside = tmp.MakeDir("outside");
  absl::StatusOr<Settings> settings = LoadSettings({outside, op, "", true});
  ASSERT_TRUE(settings.ok()) << settings.status();
  EXPECT_TRUE(settings->project_root.empty());
  EXPECT_EQ(settings->resolved.tier, Tier::kWorktree);
  EXPECT_EQ(settings->resolved.from, TierSource::kOperator);
}

TEST(SettingsTest, MilestonesDirectoryIsDetected) {
  TempDir tmp;
  MakeProject(tmp.path());
  tmp.MakeDir(".nubos-pilot/milestones");
  absl::StatusOr<Settings> settings = LoadSettings({tmp.path(), "", "", false});
  ASSERT_TRUE(settings.ok());
  EXPECT_TRUE(HasMilestonesAt(settings->project));

  TempDir file_only;
  MakeProject(file_only.path());
  file_only.Write(".nubos-pilot/milestones", "");  // A file, not the directory.
  settings = LoadSettings({file_only.path(), "", "", false});
  ASSERT_TRUE(settings.ok());
  EXPECT_FALSE(HasMilestonesAt(settings->project));
}

}  // namespace
}  // namespace np
