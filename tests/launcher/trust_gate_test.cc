// The run path's trust and ratchet gate over a real store: widening refused
// until trusted, the ratchet after the config is edited and after it is
// deleted, the operator floor that keeps a tier, and a broken store.
#include "launcher/trust_gate.h"

#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include "core/config_file.h"
#include "core/errors.h"
#include "gtest/gtest.h"
#include "tests/support/temp_dir.h"

namespace np {
namespace {

using ::np::testing::TempDir;

class TrustGateTest : public ::testing::Test {
 protected:
  void Configure(const std::string& json) { ::np::testing::MakeProject(project_.path(), json); }

  absl::StatusOr<TrustGate> Evaluate(const std::string& env_tier = "") {
    absl::StatusOr<Settings> settings = LoadSettings({project_.path(), "", env_tier, true});
    EXPECT_TRUE(settings.ok()) << settings.status();
    if (!settings.ok()) return settings.status();
    return EvaluateTrust(*settings, state_.Path("xdg"), "/nonexistent-home", getuid());
  }

  // Runs the gate like the run path: refuse, or record the spawn.
  std::string Spawn(const std::string& env_tier = "") {
    absl::StatusOr<TrustGate> gate = Evaluate(env_tier);
    if (!gate.ok()) return ErrorCode(gate.status());
    if (!gate->decision.status.ok()) return ErrorCode(gate->decision.status);
    absl::Status recorded = RecordSpawnRan(*gate, getuid());
    return recorded.ok() ? "ran" : ErrorCode(recorded);
  }

  void Trust() {
    absl::StatusOr<Settings> settings = LoadSettings({project_.path(), "", "", true});
    ASSERT_TRUE(settings.ok());
    absl::StatusOr<TrustSubject> subject = LoadTrustSubject(*settings);
    ASSERT_TRUE(subject.ok()) << subject.status();
    absl::StatusOr<StateStore> store = StateStore::Open(state_.Path("xdg/np-exec"), getuid());
    ASSERT_TRUE(store.ok()) << store.status();
    ASSERT_TRUE(RunTrustVerb(TrustVerbMode::kTrust, *subject, *store, "now").ok());
  }

  TempDir project_;
  TempDir state_;
};

TEST_F(TrustGateTest, OutsideAProjectTouchesNoStore) {
  Settings settings;
  absl::StatusOr<TrustGate> gate = EvaluateTrust(settings, state_.Path("xdg"), "", getuid());
  ASSERT_TRUE(gate.ok()) << gate.status();
  EXPECT_FALSE(gate->in_project);
  EXPECT_TRUE(gate->decision.status.ok());
  EXPECT_FALSE(::np::testing::FileExists(state_.Path("xdg")));
  EXPECT_TRUE(RecordSpawnRan(*gate, getuid()).ok());
}

TEST_F(TrustGateTest, WideningRunsOnlyOnceTrustedAndAgainAfterAChange) {
  Configure(R"({"isolation": {"tier": "container", "container": {"network": "host"}}})");
  EXPECT_EQ(Spawn(), "isolation-config-untrusted");
  Trust();
  EXPECT_EQ(Spawn(), "ran");
  EXPECT_EQ(TrustStatusJson(*Evaluate())["state"], "trusted");
  Configure(R"({"isolation": {"tier": "container", "container": {"network": "host",
               "mounts": [{"source": "/root/.ssh", "target": "/s"}]}}})");
  EXPECT_EQ(Spawn(), "isolation-config-untrusted");
  EXPECT_EQ(TrustStatusJson(*Evaluate())["state"], "changed");
  // Without widening keys no trust is needed, whatever else changes.
  Configure(R"({"isolation": {"tier": "container", "container": {"image": "x:1"}}})");
  EXPECT_EQ(Spawn(), "ran");
}

// A repository's project keeps its ratchet under its repository's key and
// under its path: a sandboxed program that removes `.git/HEAD` (writable
// inside, so git works) makes the `.git` read as no repository, which changes
// the store key. Neither the project itself nor a project it then makes below
// itself may ask for less than the tier the project ran on.
TEST_F(TrustGateTest, TheRatchetHoldsWhenTheRepositoryIsMadeToReadAsNone) {
  ::np::testing::MakeProject(project_.path(), R"({"isolation": {"tier": "container"}})");
  project_.Write(".git/HEAD", "ref: refs/heads/main\n");
  project_.MakeDir(".git/objects");
  EXPECT_EQ(Spawn(), "ran");
  ASSERT_EQ(unlink(project_.Path(".git/HEAD").c_str()), 0);
  Configure(R"({"isolation": {"tier": "direct"}})");
  EXPECT_EQ(Spawn(), "isolation-tier-lowered");
  const std::string nested = project_.Path("sub");
  ::np::testing::MakeProject(nested, R"({"isolation": {"tier": "direct"}})");
  absl::StatusOr<Settings> settings = LoadSettings({nested, "", "", false});
  ASSERT_TRUE(settings.ok()) << settings.status();
  absl::StatusOr<TrustGate> gate =
      EvaluateTrust(*settings, state_.Path("xdg"), "/nonexistent-home", getuid());
  ASSERT_TRUE(gate.ok()) << gate.status();
  EXPECT_EQ(ErrorCode(gate->decision.status), "isolation-tier-lowered");
}

TEST_F(TrustGateTest, TheRatchetHoldsAfterAnEditAndAfterDeletion) {
  Configure(R"({"isolation": {"tier": "container"}})");
  EXPECT_EQ(Spawn(), "ran");
  EXPECT_EQ(TrustStatusJson(*Evaluate())["recorded_tier"], "container");
  Configure(R"({"isolation": {"tier": "direct"}})");
  EXPECT_EQ(Spawn(), "isolation-tier-lowered");
  EXPECT_EQ(TrustStatusJson(*Evaluate())["state"], "lowered");
  ASSERT_EQ(unlink(ProjectConfigPath(project_.path()).c_str()), 0);
  EXPECT_EQ(Spawn(), "isolation-tier-lowered");
  // The operator's floor keeps the tier: nothing is downgraded, nothing refused.
  EXPECT_EQ(Spawn("container"), "ran");
  Trust();
  EXPECT_EQ(Spawn(), "ran");
  EXPECT_EQ(TrustStatusJson(*Evaluate())["recorded_tier"], "direct");
}

TEST_F(TrustGateTest, ABrokenStoreRefuses) {
  Configure(R"({"isolation": {"tier": "container"}})");
  EXPECT_EQ(Spawn(), "ran");
  ASSERT_EQ(chmod(state_.Path("xdg/np-exec").c_str(), 0755), 0);
  EXPECT_EQ(Spawn(), "state-store-invalid");
  ASSERT_EQ(chmod(state_.Path("xdg/np-exec").c_str(), 0700), 0);
  absl::StatusOr<TrustGate> gate = Evaluate();
  ASSERT_TRUE(gate.ok());
  const std::string record =
      state_.Path("xdg/np-exec/" + StateStore::FileStem(gate->subject.key) + ".json");
  state_.Write("xdg/np-exec/" + StateStore::FileStem(gate->subject.key) + ".json", "{", 0600);
  EXPECT_EQ(Spawn(), "state-store-invalid");
  ASSERT_EQ(unlink(record.c_str()), 0);
  ASSERT_EQ(symlink("/etc/passwd", record.c_str()), 0);
  EXPECT_EQ(Spawn(), "state-store-invalid");
}

}  // namespace
}  // namespace np
