// Who a container runs as, resolved before it runs (core/container_user.h):
// a project file can never end up as uid 0 or gid 0, however it spells it.
#include "core/container_user.h"

#include <string>

#include "core/errors.h"
#include "gtest/gtest.h"

namespace np {
namespace {

constexpr char kPasswd[] =
    "root:x:0:0:root:/root:/bin/sh\n"
    "toor:x:0:0:root again:/root:/bin/sh\n"
    "node:x:1000:1000::/home/node:/bin/sh\n"
    "staff:x:1001:0::/home/staff:/bin/sh\n"
    "wheeler:x:1002:1002::/home/wheeler:/bin/sh\n"
    "1003:x:0:0:a name that looks like an id:/:/bin/sh\n"
    "broken line\n";
constexpr char kGroup[] =
    "root:x:0:wheeler\n"
    "node:x:1000:\n"
    "wheeler:x:1002:\n"
    "admins:x:0:\n"
    "users:x:100:node,wheeler\n";

std::string Ids(absl::string_view spec, absl::string_view passwd = kPasswd,
                absl::string_view group = kGroup) {
  absl::StatusOr<ContainerUserIds> ids = ResolveContainerUser(spec, passwd, group);
  if (!ids.ok()) return ErrorCode(ids.status());
  return DescribeContainerUser(*ids);
}

TEST(ContainerUserTest, ResolvesAsTheRuntimesDo) {
  EXPECT_EQ(Ids(""), "0:0");
  EXPECT_EQ(Ids("root"), "0:0");
  EXPECT_EQ(Ids("toor"), "0:0");
  EXPECT_EQ(Ids("node"), "1000:1000,groups=100");
  EXPECT_EQ(Ids("1000"), "1000:1000,groups=100");
  EXPECT_EQ(Ids("node:node"), "1000:1000");
  EXPECT_EQ(Ids("node:100"), "1000:100");
  EXPECT_EQ(Ids("staff"), "1001:0");
  EXPECT_EQ(Ids("wheeler"), "1002:1002,groups=0,100");
  // A number matches the uid field only, as runc does: "1003" is uid 1003,
  // whatever an entry named "1003" says.
  EXPECT_EQ(Ids("1003"), "1003:0");
  EXPECT_EQ(Ids("1500:1500"), "1500:1500");
  // No passwd entry and no group: gid 0, as docker and podman run it.
  EXPECT_EQ(Ids("1500"), "1500:0");
  EXPECT_EQ(Ids("1500", "", ""), "1500:0");
  EXPECT_EQ(Ids("1500:admins"), "1500:0");
}

TEST(ContainerUserTest, WhatCannotBeResolvedIsAnError) {
  EXPECT_EQ(Ids("nobody-here"), "isolation-user-unresolved");
  EXPECT_EQ(Ids("node:nogroup"), "isolation-user-unresolved");
  EXPECT_EQ(Ids("node:"), "isolation-user-unresolved");
  EXPECT_EQ(Ids("4294967296"), "isolation-user-unresolved");
  // Without the image's files a name cannot be told apart from root.
  EXPECT_EQ(Ids("node", "", ""), "isolation-user-unresolved");
}

ContainerConfig Config(UserSpec::Kind kind, const std::string& value, bool from_project,
                       Runtime runtime = Runtime::kDocker) {
  ContainerConfig config;
  config.runtime = runtime;
  config.user.kind = kind;
  config.user.value = value;
  config.user_from_project = from_project;
  return config;
}

std::string Check(const ContainerConfig& config, const ImageUserFacts* image) {
  absl::StatusOr<std::optional<ContainerUserIds>> ids = CheckProjectContainerUser(config, image);
  if (!ids.ok()) return ErrorCode(ids.status());
  return ids->has_value() ? DescribeContainerUser(**ids) : "unchecked";
}

// Issue 26, item 1: "image" from a project file runs as the image's user,
// and the local images run as root.
TEST(ContainerUserTest, AProjectFileNeverGetsRootHoweverSpelled) {
  ImageUserFacts image;
  image.passwd = kPasswd;
  image.group = kGroup;
  for (const char* configured : {"", "root", "0", "0:0", "toor", "staff", "wheeler", "1500",
                                 "node:0", "node:admins", "1003"}) {
    image.configured = configured;
    EXPECT_EQ(Check(Config(UserSpec::Kind::kImage, "", true), &image),
              "isolation-user-root-needs-operator")
        << configured;
  }
  for (const char* spec : {"toor", "staff", "wheeler", "1500", "1003", "node:admins", "1500:0"}) {
    EXPECT_EQ(Check(Config(UserSpec::Kind::kExplicit, spec, true), &image),
              "isolation-user-root-needs-operator")
        << spec;
  }
  image.configured = "node";
  EXPECT_EQ(Check(Config(UserSpec::Kind::kImage, "", true), &image), "1000:1000,groups=100");
  EXPECT_EQ(Check(Config(UserSpec::Kind::kExplicit, "1500:1500", true), &image), "1500:1500");
}

TEST(ContainerUserTest, AnImageUserNobodyCouldAskForIsRefused) {
  EXPECT_EQ(Check(Config(UserSpec::Kind::kImage, "", true), nullptr),
            "isolation-user-root-needs-operator");
  ImageUserFacts untold;
  EXPECT_EQ(Check(Config(UserSpec::Kind::kImage, "", true), &untold),
            "isolation-user-root-needs-operator");
  // Numeric ids need no file; a name does.
  EXPECT_EQ(Check(Config(UserSpec::Kind::kExplicit, "1500:1500", true), nullptr), "1500:1500");
  EXPECT_EQ(Check(Config(UserSpec::Kind::kExplicit, "node", true), nullptr),
            "isolation-user-unresolved");
}

TEST(ContainerUserTest, TheOperatorsChoiceAndTheCallerAreNotChecked) {
  ImageUserFacts image;
  image.configured = "";
  EXPECT_EQ(Check(Config(UserSpec::Kind::kImage, "", false), &image), "unchecked");
  EXPECT_EQ(Check(Config(UserSpec::Kind::kCaller, "", true), &image), "unchecked");
  // bubblewrap has no image (its argv refuses any user but the caller's).
  EXPECT_EQ(Check(Config(UserSpec::Kind::kImage, "", true, Runtime::kBwrap), nullptr), "unchecked");
}

}  // namespace
}  // namespace np
