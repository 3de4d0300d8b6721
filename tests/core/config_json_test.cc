#include "core/config_json.h"

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

}  // namespace
}  // namespace np
