#include "core/config_json.h"

#include "core/config.h"
#include "gtest/gtest.h"

namespace np {
namespace {

using nlohmann::json;

TEST(ConfigJsonTest, DefaultsUseNullForUnsetValues) {
  json j = ContainerConfigToJson(ContainerConfig{});
  EXPECT_EQ(j["runtime"], "docker");
  EXPECT_EQ(j["image"], "node:22-bookworm-slim");
  EXPECT_EQ(j["network"], "none");
  EXPECT_TRUE(j["user"].is_null());
  EXPECT_TRUE(j["memory"].is_null());
  EXPECT_TRUE(j["cpus"].is_null());
  EXPECT_EQ(j["mounts"], json::array());
  EXPECT_EQ(j["env"], json::array());
  EXPECT_TRUE(j["workdir"].is_null());
  EXPECT_EQ(j["pull"], "never");
}

TEST(ConfigJsonTest, SetValuesAreReported) {
  ContainerConfig c;
  c.runtime = Runtime::kBwrap;
  c.network = Network::kHost;
  c.user = {UserSpec::Kind::kExplicit, "1000:100"};
  c.memory = "1g";
  c.cpus = "0.5";
  c.mounts = {{"/a", "/b", true}, {"/c", "/d", false}};
  c.env = {"TOKEN"};
  c.workdir = "/work";
  c.pull_missing = true;
  json j = ContainerConfigToJson(c);
  EXPECT_EQ(j["runtime"], "bwrap");
  EXPECT_EQ(j["network"], "host");
  EXPECT_EQ(j["user"], "1000:100");
  EXPECT_EQ(j["memory"], "1g");
  EXPECT_EQ(j["cpus"], "0.5");
  EXPECT_EQ(j["mounts"], (json::parse(R"([{"source": "/a", "target": "/b", "mode": "rw"},
                                          {"source": "/c", "target": "/d", "mode": "ro"}])")));
  EXPECT_EQ(j["env"], json({"TOKEN"}));
  EXPECT_EQ(j["workdir"], "/work");
  EXPECT_EQ(j["pull"], "missing");
  c.user = {UserSpec::Kind::kImage, ""};
  EXPECT_EQ(ContainerConfigToJson(c)["user"], "image");
}

// Numbers in the file come back as the numbers they were; strings as strings.
TEST(ConfigJsonTest, LimitsAreEchoedAsWritten) {
  struct Case {
    json memory;
    json cpus;
  };
  for (const Case& c :
       {Case{2147483648, 2}, Case{"2g", "2"}, Case{536870912, 1.5}, Case{"512m", 0.25}}) {
    absl::StatusOr<ProjectConfig> config = ParseProjectConfig(
        json{{"isolation", {{"container", {{"memory", c.memory}, {"cpus", c.cpus}}}}}});
    ASSERT_TRUE(config.ok()) << config.status();
    json j = ContainerConfigToJson(config->container);
    EXPECT_EQ(j["memory"], c.memory);
    EXPECT_EQ(j["memory"].type(), c.memory.type()) << c.memory;
    EXPECT_EQ(j["cpus"], c.cpus);
    EXPECT_EQ(j["cpus"].type(), c.cpus.type()) << c.cpus;
    // The dump is what status prints: 2 stays 2, never "2".
    EXPECT_EQ(j["memory"].dump(), c.memory.dump());
    EXPECT_EQ(j["cpus"].dump(), c.cpus.dump());
  }
}

// A number recorded without its text (a config built in code) is not echoed:
// the text is what the argv carries, and it alone says the limit is set.
TEST(ConfigJsonTest, AsWrittenWithoutTextIsNotEchoed) {
  ContainerConfig c;
  c.cpus_as_written = 2;
  EXPECT_TRUE(ContainerConfigToJson(c)["cpus"].is_null());
}

}  // namespace
}  // namespace np
