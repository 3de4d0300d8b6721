// Issue 17 item 2: the caller's account in the sandbox's passwd and group.
#include "core/passwd_view.h"

#include <optional>
#include <string>

#include "gtest/gtest.h"

namespace np {
namespace {

constexpr char kHostPasswd[] =
    "root:x:0:0:root:/root:/bin/bash\n"
    "daemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\n"
    "node:x:1000:1000::/home/node:/bin/bash\n"
    "alice:x:1001:1001:Alice:/home/alice:/bin/bash\n";
constexpr char kHostGroup[] = "root:x:0:\ndaemon:x:1:\nnode:x:1000:\nalice:x:1001:\n";

TEST(PasswdViewTest, CallerIsNamedAsTheHostNamesThem) {
  const SandboxAccount account = AccountFor(1001, 1001, kHostPasswd, kHostGroup);
  EXPECT_EQ(account.user, "alice");
  EXPECT_EQ(account.group, "alice");
  EXPECT_EQ(PasswdView(kMinimalPasswd, account, "/home/np-exec"),
            "root:x:0:0:root:/root:/bin/sh\n"
            "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n"
            "alice:x:1001:1001:alice:/home/np-exec:/bin/sh\n");
  EXPECT_EQ(GroupView(kMinimalGroup, account), "root:x:0:\nnogroup:x:65534:\nalice:x:1001:alice\n");
}

TEST(PasswdViewTest, BaseEntriesOfTheCallersUidOrNameAreReplaced) {
  const SandboxAccount account = AccountFor(1000, 1000, "node:x:1000:1000::/h:/bin/sh\n", "");
  EXPECT_EQ(account.user, "node");
  EXPECT_EQ(account.group, "np-exec");
  const std::string view = PasswdView(kHostPasswd, account, "/home/np-exec");
  EXPECT_EQ(view,
            "root:x:0:0:root:/root:/bin/bash\n"
            "daemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\n"
            "alice:x:1001:1001:Alice:/home/alice:/bin/bash\n"
            "node:x:1000:1000:node:/home/np-exec:/bin/sh\n");
  EXPECT_EQ(GroupView(kHostGroup, account),
            "root:x:0:\ndaemon:x:1:\nalice:x:1001:\nnp-exec:x:1000:node\n");
}

TEST(PasswdViewTest, RootCallerGetsTheSandboxHome) {
  const SandboxAccount account = AccountFor(0, 0, "", "");
  EXPECT_EQ(account.user, "root");
  EXPECT_EQ(PasswdView(kMinimalPasswd, account, "/home/np-exec"),
            "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n"
            "root:x:0:0:root:/home/np-exec:/bin/sh\n");
}

// A name that could break the file's format (or read as another field) is
// never copied in; malformed base lines are dropped.
TEST(PasswdViewTest, HostileNamesAndLinesNeverShiftAField) {
  for (const char* name : {"a:b", "evil\nroot::0:0::/:/bin/sh", "-rf", "", "x y",
                           "waytoolongnamewaytoolongnamewaytoolong"}) {
    const std::string passwd = std::string(name) + ":x:1000:1000::/h:/bin/sh\n";
    const SandboxAccount account = AccountFor(1000, 1000, passwd, "");
    EXPECT_EQ(account.user.find_first_of(":\n "), std::string::npos) << name;
  }
  EXPECT_EQ(SafeAccountName("evil:0", "np-exec"), "np-exec");
  const SandboxAccount account = AccountFor(1000, 1000, "", "");
  EXPECT_EQ(account.user, "np-exec");
  EXPECT_EQ(PasswdView("broken line\nx:y\nok:x:5:5::/:/bin/sh\nbad:x:notanumber:1::/:/\n"
                       "cr:x:6:6::/:/bin/sh\r\n",
                       account, "/home/np-exec"),
            "ok:x:5:5::/:/bin/sh\nnp-exec:x:1000:1000:np-exec:/home/np-exec:/bin/sh\n");
}

TEST(PasswdViewTest, NameOfIdReadsTheThirdField) {
  EXPECT_EQ(AccountNameOfId(kHostPasswd, 1), "daemon");
  EXPECT_EQ(AccountNameOfId(kHostGroup, 1001), "alice");
  EXPECT_EQ(AccountNameOfId(kHostPasswd, 4242), "");
}

// On docker and podman the base is the image's own file: its well-formed
// lines, or nothing (the minimal base) when it has none or is too large.
TEST(PasswdViewTest, ImageBaseKeepsWellFormedLinesOnly) {
  constexpr char kImage[] =
      "root:x:0:0:root:/root:/bin/sh\n"
      "# a comment\n"
      "node:x:1000:1000::/home/node:/bin/bash\n"
      "extra:x:7:7::/:/bin/sh:field\n"
      "short:x:8:8::/\n"
      "nul:x:9:9::/:/bin/sh\0tail\n"
      "cr:x:10:10::/:/bin/sh\r\n";
  const std::optional<std::string> base =
      ImageAccountBase(std::string(kImage, sizeof(kImage) - 1), AccountFile::kPasswd);
  ASSERT_TRUE(base.has_value());
  EXPECT_EQ(*base, "root:x:0:0:root:/root:/bin/sh\nnode:x:1000:1000::/home/node:/bin/bash\n");
  EXPECT_EQ(ImageAccountBase("root:x:0:\nnode:x:1000:\nbad:x:1\n", AccountFile::kGroup),
            "root:x:0:\nnode:x:1000:\n");
  // A passwd file is no group file, nor the other way round.
  EXPECT_EQ(ImageAccountBase("root:x:0:\n", AccountFile::kPasswd), std::nullopt);
  EXPECT_EQ(ImageAccountBase("root:x:0:0:root:/root:/bin/sh\n", AccountFile::kGroup), std::nullopt);
  for (const std::string& unusable : {std::string(), std::string("\n\n"),
                                      std::string("\x7f"
                                                  "ELF\x02\x01\x01"),
                                      std::string("<html>not a passwd</html>\n")}) {
    EXPECT_EQ(ImageAccountBase(unusable, AccountFile::kPasswd), std::nullopt) << unusable;
  }
  std::string big;
  while (big.size() <= kMaxImageAccountBytes) big += "u:x:1:1::/:/bin/sh\n";
  EXPECT_EQ(ImageAccountBase(big, AccountFile::kPasswd), std::nullopt);
  EXPECT_TRUE(ImageAccountBase(big.substr(0, kMaxImageAccountBytes - kMaxImageAccountBytes % 19),
                               AccountFile::kPasswd)
                  .has_value());
}

// Whatever the image's files hold, the caller's own line is np-exec's alone
// and last: image lines with the caller's uid or name are gone, and no image
// byte reaches a field of it.
TEST(PasswdViewTest, ImageContentNeverReachesTheCallersLine) {
  const SandboxAccount account =
      AccountFor(1000, 1000, "alice:x:1000:1000::/h:/bin/sh\n", "alice:x:1000:\n");
  const std::string image =
      "root:x:0:0:root:/root:/bin/sh\n"
      "alice:x:0:0:root twin:/root:/bin/sh\n"
      "node:x:1000:1000::/home/node:/bin/bash\n"
      "npimg:x:4242:4242:np img:/var/npimg:/bin/false\n"
      "evil:x:5:5::/:/bin/sh\nalice:x:0:0::/:/bin/sh\n";
  const std::optional<std::string> base = ImageAccountBase(image, AccountFile::kPasswd);
  ASSERT_TRUE(base.has_value());
  EXPECT_EQ(PasswdView(*base, account, "/home/np-exec"),
            "root:x:0:0:root:/root:/bin/sh\n"
            "npimg:x:4242:4242:np img:/var/npimg:/bin/false\n"
            "evil:x:5:5::/:/bin/sh\n"
            "alice:x:1000:1000:alice:/home/np-exec:/bin/sh\n");
  const std::optional<std::string> group = ImageAccountBase(
      "root:x:0:\nalice:x:12:\nnode:x:1000:\nnpimg:x:4242:\n", AccountFile::kGroup);
  ASSERT_TRUE(group.has_value());
  EXPECT_EQ(GroupView(*group, account), "root:x:0:\nnpimg:x:4242:\nalice:x:1000:alice\n");
}

}  // namespace
}  // namespace np
