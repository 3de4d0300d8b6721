// What `np-exec trust` shows before it approves: the changes since the
// content trusted last, key by key, and the widenings worth a second look.
#include "core/trust_review.h"

#include <string>
#include <vector>

#include "core/config.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace np {
namespace {

using nlohmann::json;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

TEST(TrustReviewTest, ChangesAreNamedKeyByKey) {
  const json before = json::parse(R"({"isolation": {"tier": "container", "container":
      {"image": "a:1", "network": "bridge", "env": ["A"], "home": "persistent"}}})");
  const json after = json::parse(R"({"isolation": {"tier": "container", "container":
      {"image": "b:2", "network": "bridge", "env": ["A", "B"], "mounts": []}},
      "workflow": {"worktree_isolation": true}})");
  std::vector<ConfigChange> changes = ConfigChanges(before, after);
  EXPECT_THAT(ChangedKeys(changes),
              ElementsAre("isolation.container.env", "isolation.container.home",
                          "isolation.container.image", "isolation.container.mounts",
                          "workflow.worktree_isolation"));
  EXPECT_EQ(changes[0].before, json({"A"}));
  EXPECT_EQ(changes[0].after, json({"A", "B"}));
  EXPECT_EQ(changes[1].after, nullptr);   // Removed.
  EXPECT_EQ(changes[3].before, nullptr);  // Added.
  EXPECT_THAT(ConfigChanges(before, before), IsEmpty());
  // An empty object added is still a change.
  EXPECT_THAT(ChangedKeys(ConfigChanges(json::object(), json::parse(R"({"isolation": {}})"))),
              ElementsAre("isolation"));
  // A value that turns from an object into a scalar is one change.
  EXPECT_THAT(ChangedKeys(ConfigChanges(before, json::parse(R"({"isolation": 1})"))),
              ElementsAre("isolation"));
}

TEST(TrustReviewTest, CredentialFoldersTheOpenNetworkAndRootAreWarnedOf) {
  ContainerConfig c;
  c.mounts = {{"/home/ann/.ssh", "/ssh", false},
              {"/home/ann/.aws/credentials", "/aws", false},
              {"/home/ann", "/h", true},
              {"/home", "/all", false},
              {"/etc", "/etc2", false},
              {"/", "/host", false},
              {"/home/ann/src/lib", "/lib", false}};
  c.env = {"GITHUB_TOKEN", "AWS_SECRET_ACCESS_KEY", "ANTHROPIC_API_KEY", "LANG", "TERM"};
  c.network = Network::kHost;
  c.user.kind = UserSpec::Kind::kExplicit;
  c.user.value = "0:1000";
  std::vector<std::string> warnings = RiskWarnings(c, "/home/ann");
  ASSERT_EQ(warnings.size(), 11u) << ::testing::PrintToString(warnings);
  EXPECT_THAT(warnings[0], HasSubstr("mounts \"/home/ann/.ssh\": ~/.ssh"));
  EXPECT_THAT(warnings[1], HasSubstr("~/.aws"));
  EXPECT_THAT(warnings[2], HasSubstr("\"/home/ann\" read-write: your whole home folder"));
  EXPECT_THAT(warnings[2], HasSubstr("and change it"));
  EXPECT_THAT(warnings[3], HasSubstr("holds your home folder"));
  EXPECT_THAT(warnings[4], HasSubstr("system settings"));
  EXPECT_THAT(warnings[5], HasSubstr("the whole host file system"));
  EXPECT_THAT(warnings[6], HasSubstr("forwards GITHUB_TOKEN"));
  EXPECT_THAT(warnings[7], HasSubstr("AWS_SECRET_ACCESS_KEY"));
  EXPECT_THAT(warnings[8], HasSubstr("ANTHROPIC_API_KEY"));
  EXPECT_THAT(warnings[9], HasSubstr("network \"host\""));
  EXPECT_THAT(warnings[10], HasSubstr("runs as root"));

  // A path's terminal escapes are never printed as they are.
  ContainerConfig escapes;
  escapes.mounts = {{"/home/ann/.ssh/\x1b[2K\x1b[1A", "/x", false}};
  warnings = RiskWarnings(escapes, "/home/ann");
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0].find('\x1b'), std::string::npos) << warnings[0];
  EXPECT_THAT(warnings[0], HasSubstr("\\u001b[2K"));

  ContainerConfig quiet;
  quiet.mounts = {{"/home/ann/src/lib", "/lib", false}, {"/home/annex/.ssh", "/x", false}};
  quiet.env = {"LANG", "NODE_OPTIONS"};
  quiet.user.kind = UserSpec::Kind::kExplicit;
  quiet.user.value = "1000:1000";
  EXPECT_THAT(RiskWarnings(quiet, "/home/ann"), IsEmpty());

  // A credential a repository names goes to its host: said, with the host
  // quoted (it may hold a terminal escape).
  ContainerConfig sends;
  sends.credentials = {{"collector.example", 443, "GITHUB_TOKEN", "x-token", "{}"}};
  const std::vector<std::string> sent = RiskWarnings(sends, "/home/ann");
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_THAT(sent[0], HasSubstr("sends $GITHUB_TOKEN from your environment to "
                                 "\"collector.example\" in the header \"x-token\""));

  ContainerConfig other;
  other.network = Network::kBridge;
  other.user.kind = UserSpec::Kind::kImage;
  other.persistent_home = true;
  other.home_seed = {".claude.json", ".ssh/id_ed25519"};
  warnings = RiskWarnings(other, "/home/ann");
  ASSERT_EQ(warnings.size(), 3u) << ::testing::PrintToString(warnings);
  EXPECT_THAT(warnings[0], HasSubstr("copies ~/.ssh/id_ed25519 into the persistent home"));
  EXPECT_THAT(warnings[1], HasSubstr("network \"bridge\""));
  EXPECT_THAT(warnings[2], HasSubstr("the image's own user"));
  // root's home is named as such when it is not the caller's.
  ContainerConfig root_mount;
  root_mount.mounts = {{"/root/.ssh", "/ssh", false}};
  EXPECT_THAT(RiskWarnings(root_mount, "/home/ann"), ElementsAre(HasSubstr("root's home folder")));
  EXPECT_THAT(RiskWarnings(root_mount, "/root"), ElementsAre(HasSubstr("~/.ssh")));
}

}  // namespace
}  // namespace np
