// The operator state store: round trips, every way a store fails closed, and
// concurrent updaters that must neither lose nor tear a record.
#include "launcher/state/state_store.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "core/errors.h"
#include "gtest/gtest.h"
#include "launcher/state/nofollow_path.h"
#include "tests/support/process.h"
#include "tests/support/temp_dir.h"

namespace np {
namespace {

using ::np::testing::TempDir;

TrustRecord Raised(const std::optional<TrustRecord>& current, Tier tier) {
  TrustRecord next = current.value_or(TrustRecord{});
  if (!current.has_value() || tier > next.strongest) next.strongest = tier;
  return next;
}

std::string RecordPath(const StateStore& store, const std::string& key) {
  return store.dir() + "/" + StateStore::FileStem(key) + ".json";
}

// A small file is read whole, up to one byte past the limit (so a caller sees
// it is too large); a file whose size fstat does not give (/proc) is read to
// its end; a link is never followed.
TEST(ReadSmallFileAtTest, WholeUpToOnePastTheLimitAndNeverALink) {
  TempDir tmp;
  tmp.Write("empty", "");
  tmp.Write("record", std::string(292, 'r'));
  tmp.Write("large", std::string(20000, 'x'));
  const int dir = open(tmp.path().c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  ASSERT_GE(dir, 0);
  SmallFile empty = ReadSmallFileAt(dir, "empty", 100);
  EXPECT_EQ(empty.error, 0);
  EXPECT_EQ(empty.text, "");
  SmallFile record = ReadSmallFileAt(dir, "record", 8192);
  EXPECT_EQ(record.error, 0);
  EXPECT_EQ(record.text, std::string(292, 'r'));
  SmallFile at_limit = ReadSmallFileAt(dir, "record", 292);
  EXPECT_EQ(at_limit.text.size(), 292u);
  SmallFile large = ReadSmallFileAt(dir, "large", 8192);
  EXPECT_EQ(large.error, 0);
  EXPECT_EQ(large.text, std::string(8193, 'x'));
  SmallFile whole = ReadSmallFileAt(dir, "large", 1 << 20);
  EXPECT_EQ(whole.text.size(), 20000u);
  ASSERT_EQ(symlinkat("record", dir, "link"), 0);
  EXPECT_EQ(ReadSmallFileAt(dir, "link", 8192).error, ELOOP);
  EXPECT_EQ(ReadSmallFileAt(dir, "missing", 8192).error, ENOENT);
  close(dir);
  SmallFile status = ReadSmallFileAt(AT_FDCWD, "/proc/self/status", 1 << 20);
  EXPECT_EQ(status.error, 0);
  EXPECT_EQ(status.st.st_size, 0);
  EXPECT_NE(status.text.find("\nPid:"), std::string::npos);
  EXPECT_EQ(status.text.back(), '\n');
}

TEST(StateStoreTest, DirectoryFollowsXdgThenHome) {
  EXPECT_EQ(*StateStoreDir("/x/state", "/home/u"), "/x/state/np-exec");
  EXPECT_EQ(*StateStoreDir("relative", "/home/u"), "/home/u/.local/state/np-exec");
  EXPECT_EQ(*StateStoreDir("", "/home/u/"), "/home/u/.local/state/np-exec");
  EXPECT_EQ(ErrorCode(StateStoreDir("", "").status()), "state-store-unavailable");
  EXPECT_EQ(ErrorCode(StateStoreDir("rel", "also/rel").status()), "state-store-unavailable");
}

TEST(StateStoreTest, RoundTripCreatesAPrivateStore) {
  TempDir dir;
  const std::string path = dir.Path("state/np-exec");
  absl::StatusOr<StateStore> store = StateStore::Open(path, getuid());
  ASSERT_TRUE(store.ok()) << store.status();
  struct stat st;
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0700u);
  absl::StatusOr<std::optional<TrustRecord>> none = store->Read("k");
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_FALSE(none->has_value());
  absl::StatusOr<TrustRecord> written = store->Update("k", [](const std::optional<TrustRecord>& r) {
    TrustRecord next = Raised(r, Tier::kContainer);
    next.trusted_sha256 = std::string(64, 'a');
    next.trusted_tier = Tier::kContainer;
    next.trusted_at = "now";
    return next;
  });
  ASSERT_TRUE(written.ok()) << written.status();
  EXPECT_EQ(written->key, "k");
  absl::StatusOr<std::optional<TrustRecord>> back = store->Read("k");
  ASSERT_TRUE(back.ok() && back->has_value()) << back.status();
  EXPECT_EQ(**back, *written);
  ASSERT_EQ(stat(RecordPath(*store, "k").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  // Other keys are other records.
  EXPECT_FALSE(store->Read("other")->has_value());
}

TEST(StateStoreTest, CorruptAndForeignRecordsAreInvalidNeverMissing) {
  TempDir dir;
  absl::StatusOr<StateStore> store = StateStore::Open(dir.Path("s"), getuid());
  ASSERT_TRUE(store.ok());
  ASSERT_TRUE(store->Update("k", [](auto& r) { return Raised(r, Tier::kContainer); }).ok());
  const std::string record = RecordPath(*store, "k");
  const std::string good = ::np::testing::ReadFile(record);
  auto expect_invalid = [&](const std::string& what) {
    EXPECT_EQ(ErrorCode(store->Read("k").status()), "state-store-invalid") << what;
    EXPECT_EQ(
        ErrorCode(store->Update("k", [](auto& r) { return Raised(r, Tier::kDirect); }).status()),
        "state-store-invalid")
        << what;
  };
  for (const std::string& text :
       {std::string("{"), std::string(""), std::string("[]"), good.substr(0, good.size() / 2),
        std::string(kMaxRecordBytes + 10, ' ')}) {
    dir.Write("s/" + StateStore::FileStem("k") + ".json", text, 0600);
    expect_invalid(text.substr(0, 20));
  }
  // A record copied from another project's file names that project's key.
  dir.Write("s/" + StateStore::FileStem("k") + ".json",
            TrustRecordToJson(TrustRecord{"someone-else", Tier::kDirect, {}, Tier::kDirect, "", {}})
                .dump(),
            0600);
  expect_invalid("another key");
  dir.Write("s/" + StateStore::FileStem("k") + ".json", good, 0600);
  ASSERT_TRUE(store->Read("k").ok());
  ASSERT_EQ(chmod(record.c_str(), 0666), 0);
  expect_invalid("writable by others");
  ASSERT_EQ(chmod(record.c_str(), 0600), 0);
  ASSERT_EQ(link(record.c_str(), dir.Path("hard").c_str()), 0);
  expect_invalid("a second link");
  ASSERT_EQ(unlink(dir.Path("hard").c_str()), 0);
  if (getuid() == 0) {
    ASSERT_EQ(chown(record.c_str(), 12345, 12345), 0);
    expect_invalid("foreign owner");
    ASSERT_EQ(chown(record.c_str(), 0, 0), 0);
  }
  ASSERT_EQ(unlink(record.c_str()), 0);
  dir.Write("elsewhere.json", good, 0600);
  ASSERT_EQ(symlink(dir.Path("elsewhere.json").c_str(), record.c_str()), 0);
  expect_invalid("symbolic link");
}

TEST(StateStoreTest, UnsafeStoreDirectoriesAreRefused) {
  TempDir dir;
  dir.MakeDir("real");
  ASSERT_EQ(chmod(dir.Path("real").c_str(), 0700), 0);
  ASSERT_EQ(symlink(dir.Path("real").c_str(), dir.Path("linked").c_str()), 0);
  EXPECT_EQ(ErrorCode(StateStore::Open(dir.Path("linked"), getuid()).status()),
            "state-store-invalid");
  dir.Write("file", "x");
  EXPECT_EQ(ErrorCode(StateStore::Open(dir.Path("file"), getuid()).status()),
            "state-store-invalid");
  dir.MakeDir("open");
  ASSERT_EQ(chmod(dir.Path("open").c_str(), 0755), 0);
  EXPECT_EQ(ErrorCode(StateStore::Open(dir.Path("open"), getuid()).status()),
            "state-store-invalid");
  EXPECT_EQ(ErrorCode(StateStore::Open(dir.Path("real"), getuid() + 1).status()),
            "state-store-invalid");
  if (getuid() == 0) {
    dir.MakeDir("foreign");
    ASSERT_EQ(chmod(dir.Path("foreign").c_str(), 0700), 0);
    ASSERT_EQ(chown(dir.Path("foreign").c_str(), 12345, 12345), 0);
    EXPECT_EQ(ErrorCode(StateStore::Open(dir.Path("foreign"), 0).status()), "state-store-invalid");
  }
  // A lock file that is a link is refused too.
  absl::StatusOr<StateStore> store = StateStore::Open(dir.Path("real"), getuid());
  ASSERT_TRUE(store.ok());
  ASSERT_EQ(symlink("/etc/passwd", dir.Path("real/evil.lock").c_str()), 0);
  EXPECT_EQ(ErrorCode(store->OpenLockFile("evil").status()), "state-store-invalid");
  EXPECT_EQ(ErrorCode(store->OpenLockFile("a/b").status()), "state-store-invalid");
}

// N processes each bump a counter in the record M times; every bump must land
// and no reader may ever see a torn record.
TEST(StateStoreTest, ConcurrentUpdatersLoseNothing) {
  TempDir dir;
  const std::string path = dir.Path("s");
  ASSERT_TRUE(StateStore::Open(path, getuid()).ok());
  constexpr int kProcesses = 8;
  constexpr int kUpdates = 25;
  std::vector<pid_t> children;
  for (int p = 0; p < kProcesses; ++p) {
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      absl::StatusOr<StateStore> store = StateStore::Open(path, getuid());
      if (!store.ok()) _exit(2);
      for (int i = 0; i < kUpdates; ++i) {
        absl::StatusOr<TrustRecord> r =
            store->Update("k", [p](const std::optional<TrustRecord>& c) {
              TrustRecord next = Raised(c, p % 2 ? Tier::kContainer : Tier::kWorktree);
              int count = 0;
              if (c.has_value() && !absl::SimpleAtoi(c->trusted_at, &count)) count = -100000;
              next.trusted_sha256 = std::string(64, 'e');
              next.trusted_at = absl::StrCat(count + 1);
              return next;
            });
        if (!r.ok()) _exit(3);
        absl::StatusOr<std::optional<TrustRecord>> seen = store->Read("k");
        if (!seen.ok() || !seen->has_value()) _exit(4);
      }
      _exit(0);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  }
  absl::StatusOr<StateStore> store = StateStore::Open(path, getuid());
  ASSERT_TRUE(store.ok());
  absl::StatusOr<std::optional<TrustRecord>> final_record = store->Read("k");
  ASSERT_TRUE(final_record.ok() && final_record->has_value()) << final_record.status();
  EXPECT_EQ((*final_record)->trusted_at, absl::StrCat(kProcesses * kUpdates));
  EXPECT_EQ((*final_record)->strongest, Tier::kContainer);
  // No temporary file is left behind.
  EXPECT_EQ(::np::testing::RunProcess({"/bin/sh", "-c", "ls " + path + " | grep -c tmp"}, {}).out,
            "0\n");
}

// A reader that opened the record just before an updater renamed the next one
// over it holds a file with no name left (st_nlink 0): that is the previous
// complete record, never an invalid one (seen once in CI as a reader's
// "state-store-invalid" after its own successful update).
TEST(StateStoreTest, ReadersRacingARenameSeeARecord) {
  TempDir dir;
  const std::string path = dir.Path("s");
  absl::StatusOr<StateStore> store = StateStore::Open(path, getuid());
  ASSERT_TRUE(store.ok());
  ASSERT_TRUE(
      store
          ->Update("k",
                   [](const std::optional<TrustRecord>& c) { return Raised(c, Tier::kWorktree); })
          .ok());
  pid_t writer = fork();
  ASSERT_GE(writer, 0);
  if (writer == 0) {
    absl::StatusOr<StateStore> own = StateStore::Open(path, getuid());
    for (int i = 0; own.ok(); ++i) {
      (void)own->Update("k", [i](const std::optional<TrustRecord>& c) {
        TrustRecord next = Raised(c, Tier::kWorktree);
        next.trusted_at = absl::StrCat(i);
        return next;
      });
    }
    _exit(2);
  }
  int failures = 0;
  std::string first_failure;
  for (int i = 0; i < 20000; ++i) {
    absl::StatusOr<std::optional<TrustRecord>> seen = store->Read("k");
    if (!seen.ok() || !seen->has_value()) {
      if (failures++ == 0) first_failure = seen.ok() ? "no record" : seen.status().ToString();
    }
  }
  kill(writer, SIGKILL);
  int status = 0;
  waitpid(writer, &status, 0);
  EXPECT_EQ(failures, 0) << first_failure;
}

TEST(StateStoreTest, WorktreesShareOneKeyAndSubprojectsDoNot) {
  TempDir dir;
  dir.Write("main/.git/HEAD", "ref: refs/heads/main\n");
  dir.Write("main/.git/worktrees/wt/commondir", "../..\n");
  dir.Write("wt/.git", "gitdir: " + dir.Path("main/.git/worktrees/wt") + "\n");
  // git's back-link from the worktree's git directory to its `.git` file.
  dir.Write("main/.git/worktrees/wt/gitdir", dir.Path("wt/.git") + "\n");
  dir.MakeDir("main/tools");
  dir.MakeDir("wt/tools");
  dir.MakeDir("plain");
  absl::StatusOr<std::string> main = ProjectStoreKey(dir.Path("main"));
  absl::StatusOr<std::string> wt = ProjectStoreKey(dir.Path("wt"));
  ASSERT_TRUE(main.ok() && wt.ok()) << main.status() << wt.status();
  EXPECT_EQ(*main, *wt);
  EXPECT_EQ(*ProjectStoreKey(dir.Path("main/tools")), *ProjectStoreKey(dir.Path("wt/tools")));
  EXPECT_NE(*ProjectStoreKey(dir.Path("main/tools")), *main);
  absl::StatusOr<std::string> plain = ProjectStoreKey(dir.Path("plain"));
  ASSERT_TRUE(plain.ok());
  EXPECT_NE(*plain, *main);
  EXPECT_NE(plain->find(dir.Path("plain")), std::string::npos);
  dir.Write("broken/.git", "gitdir: /nonexistent\n");
  EXPECT_EQ(ErrorCode(ProjectStoreKey(dir.Path("broken")).status()), "project-git-invalid");
}

// Issue 26, item 7: a `.git` file anyone could have written (an unpacked
// archive) names another repository's git directory, or a worktree's that
// does not point back at it. Keyed by the repository, the project would get
// the other one's trust record and persistent home; it is keyed by its own
// path instead.
TEST(StateStoreTest, AForgedGitFileDoesNotShareAnotherProjectsKey) {
  TempDir dir;
  dir.Write("trusted/.git/HEAD", "ref: refs/heads/main\n");
  dir.Write("trusted/.git/worktrees/wt/commondir", "../..\n");
  dir.Write("trusted/.git/worktrees/wt/gitdir", dir.Path("wt/.git") + "\n");
  dir.Write("wt/.git", "gitdir: " + dir.Path("trusted/.git/worktrees/wt") + "\n");
  const std::string trusted = *ProjectStoreKey(dir.Path("trusted"));
  ASSERT_EQ(*ProjectStoreKey(dir.Path("wt")), trusted) << "a real worktree shares it";
  // The repository's own git directory.
  dir.Write("hostile/.git", "gitdir: " + dir.Path("trusted/.git") + "\n");
  // The real worktree's git directory, which points back at wt, not here.
  dir.Write("hostile2/.git", "gitdir: " + dir.Path("trusted/.git/worktrees/wt") + "\n");
  // A `.git` directory that holds HEAD and a commondir naming the trusted
  // repository (git reads config and objects from there), and a `.git` link
  // to the trusted repository's git directory: neither is the repository's
  // own `.git`.
  dir.Write("hostile3/.git/HEAD", "ref: refs/heads/main\n");
  dir.Write("hostile3/.git/commondir", dir.Path("trusted/.git") + "\n");
  dir.MakeDir("hostile4");
  ASSERT_EQ(symlink(dir.Path("trusted/.git").c_str(), dir.Path("hostile4/.git").c_str()), 0);
  for (const char* name : {"hostile", "hostile2", "hostile3", "hostile4"}) {
    absl::StatusOr<std::string> key = ProjectStoreKey(dir.Path(name));
    ASSERT_TRUE(key.ok()) << key.status();
    EXPECT_NE(*key, trusted) << name;
    EXPECT_NE(key->find(dir.Path(name)), std::string::npos) << *key;
  }
}

}  // namespace
}  // namespace np
