// `np-exec trust` as a library call: the trust round trip, --show's states,
// --revoke, a lowered tier accepted, and bad input refused with its own code.
#include "launcher/verbs_trust.h"

#include <unistd.h>

#include <string>

#include "core/config_file.h"
#include "core/errors.h"
#include "gtest/gtest.h"
#include "tests/support/temp_dir.h"

namespace np {
namespace {

using ::np::testing::TempDir;

class TrustVerbTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<StateStore> store = StateStore::Open(state_.Path("np-exec"), getuid());
    ASSERT_TRUE(store.ok()) << store.status();
    store_.emplace(*std::move(store));
  }

  void Configure(const std::string& json) { ::np::testing::MakeProject(project_.path(), json); }

  TrustSubject Subject() {
    absl::StatusOr<Settings> settings = LoadSettings({project_.path(), "", "", false});
    EXPECT_TRUE(settings.ok()) << settings.status();
    absl::StatusOr<TrustSubject> subject = LoadTrustSubject(*settings);
    EXPECT_TRUE(subject.ok()) << subject.status();
    return subject.ok() ? *subject : TrustSubject{};
  }

  nlohmann::json Run(TrustVerbMode mode) {
    absl::StatusOr<TrustVerbOutput> out = RunTrustVerb(mode, Subject(), *store_, "then");
    EXPECT_TRUE(out.ok()) << out.status();
    return out.ok() ? out->json : nlohmann::json();
  }

  std::string State() { return Run(TrustVerbMode::kShow)["state"].get<std::string>(); }

  TempDir project_;
  TempDir state_;
  std::optional<StateStore> store_;
};

TEST_F(TrustVerbTest, TrustShowAndRevokeRoundTrip) {
  Configure(R"({"isolation": {"tier": "container", "container": {"network": "host",
               "env": ["AWS_SECRET_ACCESS_KEY"], "image": "node:22"}}, "other": 1})");
  EXPECT_EQ(State(), "untrusted");
  nlohmann::json trusted = Run(TrustVerbMode::kTrust);
  EXPECT_EQ(trusted["tier"], "container");
  EXPECT_EQ(trusted["widening"], nlohmann::json::parse(R"([{"key": "isolation.container.env",
                                        "value": ["AWS_SECRET_ACCESS_KEY"]},
                                       {"key": "isolation.container.network", "value": "host"}])"));
  EXPECT_EQ(trusted["record"]["trusted"]["sha256"], trusted["sha256"]);
  EXPECT_EQ(State(), "trusted");
  // Keys outside np-exec's part change freely.
  Configure(R"({"isolation": {"tier": "container", "container": {"network": "host",
               "env": ["AWS_SECRET_ACCESS_KEY"], "image": "node:22"}}, "other": 2})");
  EXPECT_EQ(State(), "trusted");
  // Any change to np-exec's part needs trust again, even a harmless one.
  Configure(R"({"isolation": {"tier": "container", "container": {"network": "host",
               "env": ["AWS_SECRET_ACCESS_KEY"], "image": "node:23"}}})");
  EXPECT_EQ(State(), "changed");
  nlohmann::json revoked = Run(TrustVerbMode::kRevoke);
  EXPECT_EQ(revoked["revoked"], true);
  EXPECT_TRUE(revoked["record"]["trusted"].is_null());
  EXPECT_EQ(State(), "untrusted");
  EXPECT_EQ(Run(TrustVerbMode::kRevoke)["revoked"], false);
}

TEST_F(TrustVerbTest, ALoweredTierIsAcceptedOnlyByTrust) {
  Configure(R"({"isolation": {"tier": "container"}})");
  TrustSubject subject = Subject();
  ASSERT_TRUE(store_
                  ->Update(subject.key,
                           [&](const std::optional<TrustRecord>& r) {
                             TrustInputs inputs;
                             inputs.file_tier = subject.file_tier;
                             return RecordAfterSpawn(r, subject.key, inputs);
                           })
                  .ok());
  EXPECT_EQ(State(), "not-needed");
  Configure(R"({"isolation": {"tier": "direct"}})");
  EXPECT_EQ(State(), "lowered");
  ::unlink(ProjectConfigPath(project_.path()).c_str());
  EXPECT_EQ(State(), "lowered");
  nlohmann::json trusted = Run(TrustVerbMode::kTrust);
  EXPECT_EQ(trusted["tier"], "direct");
  EXPECT_EQ(trusted["record"]["strongest_tier"], "direct");
  EXPECT_EQ(State(), "trusted");
}

TEST_F(TrustVerbTest, BadInputKeepsItsOwnCode) {
  Configure(R"({"isolation": {"tire": "container"}})");
  absl::StatusOr<Settings> settings = LoadSettings({project_.path(), "", "", true});
  EXPECT_EQ(ErrorCode(settings.status()), "isolation-unknown-key");
  Settings outside;
  EXPECT_EQ(ErrorCode(LoadTrustSubject(outside).status()), "not-in-project");
  // A corrupt record is the store's error, never silently replaced.
  Configure(R"({"isolation": {"tier": "container"}})");
  TrustSubject subject = Subject();
  const std::string record = store_->dir() + "/" + StateStore::FileStem(subject.key) + ".json";
  FILE* f = fopen(record.c_str(), "w");
  ASSERT_NE(f, nullptr);
  fputs("{garbage", f);
  fclose(f);
  for (TrustVerbMode mode : {TrustVerbMode::kTrust, TrustVerbMode::kShow, TrustVerbMode::kRevoke}) {
    EXPECT_EQ(ErrorCode(RunTrustVerb(mode, subject, *store_, "now").status()),
              "state-store-invalid");
  }
}

// Before it records, trust shows the change since the content trusted last
// and the risky widenings; asked and declined, it records nothing.
TEST_F(TrustVerbTest, ReviewShowsTheChangeAndADeclineRecordsNothing) {
  Configure(R"({"isolation": {"tier": "container", "container": {"network": "bridge",
               "image": "a:1", "env": ["GITHUB_TOKEN"]}}})");
  TrustReviewContext context;
  context.home = "/home/ann";
  absl::StatusOr<TrustVerbOutput> first =
      RunTrustVerb(TrustVerbMode::kTrust, Subject(), *store_, "then", context);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(first->json["review"]["compared_with"], "nothing trusted before");
  EXPECT_EQ(first->json["review"]["warnings"].size(), 2u) << first->json.dump();
  EXPECT_NE(first->text.find("! forwards GITHUB_TOKEN"), std::string::npos) << first->text;

  Configure(R"({"isolation": {"tier": "container", "container": {"network": "bridge",
               "image": "b:2", "env": ["GITHUB_TOKEN"]}}})");
  std::string asked;
  context.confirm = [&asked](const std::string& review) {
    asked = review;
    return false;
  };
  absl::StatusOr<TrustVerbOutput> declined =
      RunTrustVerb(TrustVerbMode::kTrust, Subject(), *store_, "later", context);
  EXPECT_EQ(ErrorCode(declined.status()), "trust-declined");
  EXPECT_NE(asked.find("isolation.container.image: \"a:1\" -> \"b:2\""), std::string::npos)
      << asked;
  EXPECT_EQ(State(), "changed");  // Nothing was recorded.
  nlohmann::json shown = Run(TrustVerbMode::kShow);
  EXPECT_EQ(shown["review"]["changes"],
            nlohmann::json::parse(R"([{"key": "isolation.container.image", "before": "a:1",
                                       "after": "b:2"}])"));

  context.confirm = [](const std::string&) { return true; };
  absl::StatusOr<TrustVerbOutput> accepted =
      RunTrustVerb(TrustVerbMode::kTrust, Subject(), *store_, "later", context);
  ASSERT_TRUE(accepted.ok()) << accepted.status();
  EXPECT_EQ(State(), "trusted");
  EXPECT_EQ(Run(TrustVerbMode::kShow)["review"]["compared_with"], "the same content");
}

}  // namespace
}  // namespace np
