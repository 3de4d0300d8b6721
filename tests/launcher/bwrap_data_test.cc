// The account view handed to bubblewrap as data (launcher/runtime/
// bwrap_data.h): each file in a descriptor of its own holding exactly its
// bytes, and the argv's bind of it rewritten once, or the spawn refused.
#include "launcher/runtime/bwrap_data.h"

#include <fcntl.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "core/errors.h"
#include "gtest/gtest.h"

namespace np {
namespace {

std::string ReadAll(int fd) {
  std::string text;
  char buffer[256];
  ssize_t n;
  while ((n = read(fd, buffer, sizeof(buffer))) > 0) text.append(buffer, static_cast<size_t>(n));
  return text;
}

TEST(BwrapAccountDataTest, EachFileIsADescriptorReadFromItsStart) {
  const AccountFiles files{"root:x:0:0::/root:/bin/sh\n", "root:x:0:\n", ""};
  absl::StatusOr<std::unique_ptr<BwrapAccountData>> data =
      BwrapAccountData::Create(files, "/state/spawns/1-a");
  ASSERT_TRUE(data.ok()) << data.status();
  ASSERT_EQ((*data)->files().size(), 2u) << "no gitconfig file without an identity";
  EXPECT_EQ((*data)->files()[0].source, "/state/spawns/1-a/passwd");
  EXPECT_EQ((*data)->files()[1].source, "/state/spawns/1-a/group");
  EXPECT_EQ(ReadAll((*data)->files()[0].fd), files.passwd);
  EXPECT_EQ(ReadAll((*data)->files()[1].fd), files.group);
  // Sealed: nobody changes what bubblewrap copies, and none is 0, 1 or 2.
  for (const DataFile& file : (*data)->files()) {
    EXPECT_GE(file.fd, 3);
    EXPECT_LT(write(file.fd, "x", 1), 0);
    EXPECT_NE(fcntl(file.fd, F_GET_SEALS) & F_SEAL_WRITE, 0);
  }
}

TEST(BwrapAccountDataTest, NoDescriptorLandsOnAClosedStandardOne) {
  const int saved = dup(0);
  ASSERT_GE(saved, 0);
  ASSERT_EQ(close(0), 0);
  absl::StatusOr<std::unique_ptr<BwrapAccountData>> data =
      BwrapAccountData::Create({"p\n", "g\n", ""}, "/state/spawns/1-a");
  ASSERT_EQ(dup2(saved, 0), 0);
  close(saved);
  ASSERT_TRUE(data.ok()) << data.status();
  for (const DataFile& file : (*data)->files()) EXPECT_GE(file.fd, 3);
}

TEST(BwrapAccountDataTest, TheArgvsBindBecomesData) {
  std::vector<std::string> argv = {"bwrap",     "--ro-bind",  "/usr",        "/usr",
                                   "--ro-bind", "/s/passwd",  "/etc/passwd", "--ro-bind",
                                   "/s/group",  "/etc/group", "--",          "true"};
  std::vector<int> keep = {7};
  ASSERT_TRUE(UseDataFiles(argv, {{"/s/passwd", 41}, {"/s/group", 42}}, keep).ok());
  EXPECT_EQ(argv,
            (std::vector<std::string>{"bwrap", "--ro-bind", "/usr", "/usr", "--perms", "0644",
                                      "--ro-bind-data", "41", "/etc/passwd", "--perms", "0644",
                                      "--ro-bind-data", "42", "/etc/group", "--", "true"}));
  EXPECT_EQ(keep, (std::vector<int>{7, 41, 42}));
}

TEST(BwrapAccountDataTest, AFileTheArgvDoesNotBindOnceRefusesTheSpawn) {
  std::vector<int> keep;
  std::vector<std::string> none = {"bwrap", "--ro-bind", "/s/group", "/etc/group", "--", "true"};
  EXPECT_EQ(ErrorCode(UseDataFiles(none, {{"/s/passwd", 41}}, keep)), "spawn-failed");
  std::vector<std::string> twice = {"bwrap",       "--ro-bind", "/s/passwd",
                                    "/etc/passwd", "--ro-bind", "/s/passwd",
                                    "/x",          "--",        "true"};
  EXPECT_EQ(ErrorCode(UseDataFiles(twice, {{"/s/passwd", 41}}, keep)), "spawn-failed");
  // The program's own arguments (after "--") are never bubblewrap's binds.
  std::vector<std::string> in_program = {"bwrap", "--ro-bind", "/s/passwd", "/etc/passwd", "--",
                                         "echo",  "--ro-bind", "/s/passwd", "/x"};
  ASSERT_TRUE(UseDataFiles(in_program, {{"/s/passwd", 41}}, keep).ok());
  EXPECT_EQ(in_program.back(), "/x");
  EXPECT_EQ(in_program[in_program.size() - 3], "--ro-bind");
  std::vector<std::string> only_program = {"bwrap", "--", "echo", "--ro-bind", "/s/passwd", "/x"};
  EXPECT_EQ(ErrorCode(UseDataFiles(only_program, {{"/s/passwd", 41}}, keep)), "spawn-failed");
  // A writable bind of it is no read-only view: never turned into data.
  std::vector<std::string> writable = {"bwrap", "--bind", "/s/passwd", "/etc/passwd", "--", "true"};
  EXPECT_EQ(ErrorCode(UseDataFiles(writable, {{"/s/passwd", 41}}, keep)), "spawn-failed");
}

}  // namespace
}  // namespace np
