// Issue 17 item 2: the caller's account in the sandbox's passwd and group.
#include "core/passwd_view.h"

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

}  // namespace
}  // namespace np
