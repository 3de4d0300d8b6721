// The cache of an image's passwd and group in the operator state store
// (issue 17 item 2), as library calls on temporary directories: one copy-out
// per image ID, records that are links, foreign, corrupt or of another ID
// count as none and are replaced, and nothing cached ever bypasses the
// sanitising of core/passwd_view.
#include "launcher/state/account_view.h"

#include <sys/stat.h>
#include <unistd.h>

#include <memory>
#include <string>

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

}  // namespace
}  // namespace np
