// The cache of an image's passwd and group in the operator state store
// (issue 17 item 2), as library calls on temporary directories: one copy-out
// per image ID, records that are links, foreign, corrupt or of another ID
// count as none and are replaced, and nothing cached ever bypasses the
// sanitising of core/passwd_view.
#include "launcher/state/account_view.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "core/errors.h"
#include "core/passwd_view.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/support/temp_dir.h"

namespace np {
namespace {

using ::np::testing::FileExists;
using ::np::testing::ReadFile;
using ::np::testing::TempDir;

constexpr char kPasswd[] = "root:x:0:0:root:/root:/bin/sh\nnpimg:x:4242:4242::/:/bin/false\n";
constexpr char kGroup[] = "root:x:0:\nnpimg:x:4242:\n";

class ImageAccountCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<StateStore> store = StateStore::Open(dir_.Path("state/np-exec"), getuid());
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = std::make_unique<StateStore>(*std::move(store));
  }

  // A copier that counts its calls and answers `bases`.
  ImageAccountsCopier Copier(std::optional<ImageAccountBases> bases) {
    return [this, bases] {
      ++copies_;
      return bases;
    };
  }

  ImageAccountBases Both() { return {std::string(kPasswd), std::string(kGroup)}; }

  std::string Record(const std::string& hex) const {
    return store_->dir() + "/image-accounts/" + hex + ".json";
  }

  TempDir dir_;
  std::unique_ptr<StateStore> store_;
  int copies_ = 0;
  const std::string hex_ = std::string(64, 'a');
  const std::string id_ = "sha256:" + hex_;
};

TEST_F(ImageAccountCacheTest, OneCopyOutPerImageId) {
  ImageAccountBases first = CachedImageAccounts(*store_, id_, Copier(Both()));
  EXPECT_EQ(copies_, 1);
  EXPECT_EQ(first.passwd, kPasswd);
  EXPECT_EQ(first.group, kGroup);
  struct stat st;
  ASSERT_EQ(lstat(Record(hex_).c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  ASSERT_EQ(stat((store_->dir() + "/image-accounts").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0700u);
  // The bare hex ID (podman's client) is the same image.
  ImageAccountBases again = CachedImageAccounts(*store_, hex_, Copier(std::nullopt));
  EXPECT_EQ(copies_, 1);
  EXPECT_EQ(again.passwd, kPasswd);
  EXPECT_EQ(again.group, kGroup);
  // Another ID (a tag moved to another image) is copied afresh.
  const std::string other(64, 'b');
  ImageAccountBases moved = CachedImageAccounts(
      *store_, other, Copier(ImageAccountBases{std::string("root:x:0:0::/:/bin/sh\n"), {}}));
  EXPECT_EQ(copies_, 2);
  EXPECT_EQ(moved.passwd, "root:x:0:0::/:/bin/sh\n");
  EXPECT_EQ(moved.group, std::nullopt);
  EXPECT_TRUE(FileExists(Record(other)));
  EXPECT_EQ(CachedImageAccounts(*store_, id_, Copier(std::nullopt)).passwd, kPasswd);
  EXPECT_EQ(copies_, 2);
}

// An image file that cannot serve is remembered as such (no copy-out per
// spawn); an answer that could not be told is not remembered.
TEST_F(ImageAccountCacheTest, UnusableFilesAreCachedUnknownIsNot) {
  EXPECT_EQ(CachedImageAccounts(*store_, id_, Copier(std::nullopt)).passwd, std::nullopt);
  EXPECT_EQ(copies_, 1);
  EXPECT_FALSE(FileExists(Record(hex_)));
  CachedImageAccounts(*store_, id_, Copier(ImageAccountBases{}));
  EXPECT_EQ(copies_, 2);
  ImageAccountBases cached = CachedImageAccounts(*store_, id_, Copier(Both()));
  EXPECT_EQ(copies_, 2);
  EXPECT_EQ(cached.passwd, std::nullopt);
  EXPECT_EQ(cached.group, std::nullopt);
}

// No sha256 ID: nothing could remember it, so no container is made per
// spawn; the minimal base applies.
TEST_F(ImageAccountCacheTest, NoUsableIdMeansNoCopyOut) {
  for (const std::string& id : {std::string(), std::string("sha256:fake"),
                                std::string("../../etc/passwd"), "sha256:" + hex_ + "/x"}) {
    ImageAccountBases bases = CachedImageAccounts(*store_, id, Copier(Both()));
    EXPECT_EQ(bases.passwd, std::nullopt) << id;
  }
  EXPECT_EQ(copies_, 0);
}

// What sits in the record's place, planted or damaged, is no record: it is
// never followed, and the fresh copy replaces it (a link itself, not its
// target).
TEST_F(ImageAccountCacheTest, LinksForeignAndCorruptRecordsAreReplaced) {
  const std::string victim = dir_.Write("victim", "VICTIM\n", 0644);
  ASSERT_EQ(mkdir((store_->dir() + "/image-accounts").c_str(), 0700), 0);
  const std::string forged =
      nlohmann::json(
          {{"image_id", hex_}, {"passwd", "forged:x:0:0::/:/bin/sh\n"}, {"group", nullptr}})
          .dump();
  const std::string outside = dir_.Write("forged.json", forged, 0600);
  ASSERT_EQ(symlink(outside.c_str(), Record(hex_).c_str()), 0);
  ImageAccountBases bases = CachedImageAccounts(*store_, id_, Copier(Both()));
  EXPECT_EQ(copies_, 1);
  EXPECT_EQ(bases.passwd, kPasswd);
  struct stat st;
  ASSERT_EQ(lstat(Record(hex_).c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));
  EXPECT_EQ(ReadFile(outside), forged);

  for (const std::string& damaged :
       {std::string("not json"), std::string("[]"),
        nlohmann::json({{"image_id", std::string(64, 'c')}, {"passwd", kPasswd}, {"group", kGroup}})
            .dump(),
        nlohmann::json({{"image_id", hex_}, {"passwd", kPasswd}}).dump()}) {
    ASSERT_EQ(unlink(Record(hex_).c_str()), 0);
    dir_.Write("state/np-exec/image-accounts/" + hex_ + ".json", damaged, 0600);
    CachedImageAccounts(*store_, id_, Copier(Both()));
    EXPECT_EQ(nlohmann::json::parse(ReadFile(Record(hex_)))["passwd"], kPasswd) << damaged;
  }
  EXPECT_EQ(copies_, 5);
  // Writable by others: not trusted either.
  ASSERT_EQ(chmod(Record(hex_).c_str(), 0666), 0);
  CachedImageAccounts(*store_, id_, Copier(Both()));
  EXPECT_EQ(copies_, 6);
  EXPECT_EQ(ReadFile(victim), "VICTIM\n");
}

// A cache directory that is a link or open to others is not used (and not
// written through); the minimal base applies, without a copy-out.
TEST_F(ImageAccountCacheTest, AnUnsafeCacheDirectoryIsNotUsed) {
  const std::string elsewhere = dir_.MakeDir("elsewhere");
  ASSERT_EQ(symlink(elsewhere.c_str(), (store_->dir() + "/image-accounts").c_str()), 0);
  EXPECT_EQ(CachedImageAccounts(*store_, id_, Copier(Both())).passwd, std::nullopt);
  EXPECT_EQ(copies_, 0);
  EXPECT_FALSE(FileExists(elsewhere + "/" + hex_ + ".json"));
  ASSERT_EQ(unlink((store_->dir() + "/image-accounts").c_str()), 0);
  ASSERT_EQ(mkdir((store_->dir() + "/image-accounts").c_str(), 0777), 0);
  ASSERT_EQ(chmod((store_->dir() + "/image-accounts").c_str(), 0777), 0);
  EXPECT_EQ(CachedImageAccounts(*store_, id_, Copier(Both())).passwd, std::nullopt);
  EXPECT_EQ(copies_, 0);
}

// A record the operator's own account could edit still passes the view's
// sanitising: malformed or injected lines never come out of the cache.
TEST_F(ImageAccountCacheTest, CachedTextsAreSanitisedAgain) {
  dir_.MakeDir("state/np-exec/image-accounts");
  ASSERT_EQ(chmod((store_->dir() + "/image-accounts").c_str(), 0700), 0);
  dir_.Write("state/np-exec/image-accounts/" + hex_ + ".json",
             nlohmann::json({{"image_id", hex_},
                             {"passwd", "ok:x:5:5::/:/bin/sh\nbad\r:x:6:6::/:/bin/sh\nshort:x:1\n"},
                             {"group", 42}})
                 .dump(),
             0600);
  ImageAccountBases bases = CachedImageAccounts(*store_, id_, Copier(Both()));
  EXPECT_EQ(copies_, 0);
  EXPECT_EQ(bases.passwd, "ok:x:5:5::/:/bin/sh\n");
  EXPECT_EQ(bases.group, std::nullopt);
}

// A run-path spawn's view is a link at its planned name to the store's one
// copy of the same files: two spawns with the same files share the copy, the
// link goes with the spawn and the copy stays for the next one.
class SharedAccountViewTest : public ImageAccountCacheTest {
 protected:
  std::string Planned(const std::string& name) const { return store_->dir() + "/spawns/" + name; }
  AccountFiles Files(const std::string& who) const {
    return {"root:x:0:0::/root:/bin/sh\n" + who + ":x:1000:1000::/home/np-exec:/bin/sh\n",
            "root:x:0:\n" + who + ":x:1000:\n", "[user]\n\tname = " + who + "\n"};
  }
};

TEST_F(SharedAccountViewTest, SpawnsWithTheSameFilesShareOneCopy) {
  const AccountFiles files = Files("ada");
  const std::string one = Planned(absl::StrCat(getpid(), "-00000001"));
  const std::string two = Planned(absl::StrCat(getpid(), "-00000002"));
  std::string copy;
  {
    auto first = AccountView::Create(*store_, files, one, AccountViewKind::kShared);
    ASSERT_TRUE(first.ok()) << first.status();
    auto second = AccountView::Create(*store_, files, two, AccountViewKind::kShared);
    ASSERT_TRUE(second.ok()) << second.status();
    struct stat st;
    ASSERT_EQ(lstat(one.c_str(), &st), 0);
    EXPECT_TRUE(S_ISLNK(st.st_mode));
    char a[PATH_MAX];
    char b[PATH_MAX];
    ASSERT_NE(realpath(one.c_str(), a), nullptr);
    ASSERT_NE(realpath(two.c_str(), b), nullptr);
    copy = a;
    EXPECT_EQ(copy, std::string(b));
    EXPECT_EQ(copy.rfind(store_->dir() + "/accounts/v-", 0), 0u) << copy;
    EXPECT_EQ(ReadFile(AccountPasswdPath(one)), files.passwd);
    EXPECT_EQ(ReadFile(AccountGroupPath(two)), files.group);
    EXPECT_EQ(ReadFile(AccountGitConfigPath(one)), files.gitconfig);
    ASSERT_EQ(stat(AccountPasswdPath(one).c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0644u);
  }
  struct stat st;
  EXPECT_NE(lstat(one.c_str(), &st), 0);
  EXPECT_NE(lstat(two.c_str(), &st), 0);
  EXPECT_EQ(ReadFile(copy + "/passwd"), files.passwd);
  // Other files: another copy; no gitconfig when there is no identity.
  AccountFiles other = Files("grace");
  other.gitconfig.clear();
  auto third = AccountView::Create(*store_, other, one, AccountViewKind::kShared);
  ASSERT_TRUE(third.ok()) << third.status();
  EXPECT_EQ(ReadFile(AccountPasswdPath(one)), other.passwd);
  EXPECT_FALSE(FileExists(AccountGitConfigPath(one)));
  EXPECT_EQ(ReadFile(copy + "/passwd"), files.passwd);
}

TEST_F(SharedAccountViewTest, ACopyThatIsNotWhatItsNameSaysIsWrittenAgain) {
  const AccountFiles files = Files("ada");
  const std::string one = Planned(absl::StrCat(getpid(), "-00000001"));
  std::string copy;
  {
    auto view = AccountView::Create(*store_, files, one, AccountViewKind::kShared);
    ASSERT_TRUE(view.ok()) << view.status();
    char real[PATH_MAX];
    ASSERT_NE(realpath(one.c_str(), real), nullptr);
    copy = real;
  }
  // Cut short (as a prune under the open leaves it), then emptied.
  ASSERT_EQ(truncate((copy + "/passwd").c_str(), 3), 0);
  auto again = AccountView::Create(*store_, files, one, AccountViewKind::kShared);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(ReadFile(AccountPasswdPath(one)), files.passwd);
  again->reset();
  // The same size, another byte: read back, it is not the copy its name says.
  std::string changed = files.passwd;
  changed[0] = 'X';
  ASSERT_EQ(unlink((copy + "/passwd").c_str()), 0);
  {
    FILE* f = fopen((copy + "/passwd").c_str(), "w");
    ASSERT_NE(f, nullptr);
    fputs(changed.c_str(), f);
    fclose(f);
  }
  auto same_size = AccountView::Create(*store_, files, one, AccountViewKind::kShared);
  ASSERT_TRUE(same_size.ok()) << same_size.status();
  EXPECT_EQ(ReadFile(AccountPasswdPath(one)), files.passwd);
  same_size->reset();
  ASSERT_EQ(unlink((copy + "/group").c_str()), 0);
  auto third = AccountView::Create(*store_, files, one, AccountViewKind::kShared);
  ASSERT_TRUE(third.ok()) << third.status();
  EXPECT_EQ(ReadFile(AccountGroupPath(one)), files.group);
}

TEST_F(SharedAccountViewTest, ADeadSpawnsLinkGoesAndATakenNameIsRefused) {
  const AccountFiles files = Files("ada");
  ASSERT_EQ(mkdir((store_->dir() + "/spawns").c_str(), 0700), 0);
  // pid_max is at most 2^22: no process has this pid.
  const std::string dead = Planned("99999999-0000abcd");
  ASSERT_EQ(symlink("../accounts/v-0", dead.c_str()), 0);
  const std::string taken = Planned(absl::StrCat(getpid(), "-00000009"));
  ASSERT_EQ(symlink("/etc", taken.c_str()), 0);
  auto refused = AccountView::Create(*store_, files, taken, AccountViewKind::kShared);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(ErrorCode(refused.status()), "account-view-failed");
  struct stat st;
  EXPECT_NE(lstat(dead.c_str(), &st), 0) << "a dead spawn's link stays";
  ASSERT_EQ(lstat(taken.c_str(), &st), 0) << "a refused view removed what it did not make";
  char target[64] = {};
  ASSERT_GT(readlink(taken.c_str(), target, sizeof(target) - 1), 0);
  EXPECT_STREQ(target, "/etc");
}
}  // namespace
}  // namespace np
