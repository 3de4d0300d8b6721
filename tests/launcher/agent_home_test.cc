// The persistent agent home (issue 17 item 1) as library calls on temporary
// directories, attacked as the program inside would: links planted in the
// home to host files and directories, a read-only directory, a FIFO, a
// deep tree; seeds that lead out of the operator's HOME. The host's files
// are checked byte for byte afterwards.
#include "launcher/state/agent_home.h"

#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <iostream>
#include <string>

#include "core/errors.h"
#include "core/settings.h"
#include "gtest/gtest.h"
#include "tests/support/ci.h"
#include "tests/support/exchanger.h"
#include "tests/support/temp_dir.h"

namespace np {
namespace {

using ::np::testing::Exchanger;
using ::np::testing::FileExists;
using ::np::testing::ReadFile;
using ::np::testing::TempDir;

class AgentHomeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    home_ = dir_.MakeDir("operator-home");
    project_ = dir_.MakeDir("operator-home/work/project");
    dir_.Write("operator-home/.claude.json", "{\"seeded\":true}\n", 0600);
    dir_.Write("operator-home/.codex/config.toml", "model = \"x\"\n");
    victim_ = dir_.Write("host/victim.txt", "HOST FILE, NOT TO BE TOUCHED\n", 0644);
    victim_dir_ = dir_.MakeDir("host/victim-dir");
    dir_.Write("host/victim-dir/keep", "keep\n");
    absl::StatusOr<StateStore> store = StateStore::Open(dir_.Path("state/np-exec"), getuid());
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = std::make_unique<StateStore>(*std::move(store));
  }

  HomeSeed Seed(std::vector<std::string> paths) const { return {home_, project_, paths}; }

  // Each host file as it was.
  void ExpectHostUntouched() const {
    EXPECT_EQ(ReadFile(victim_), "HOST FILE, NOT TO BE TOUCHED\n");
    struct stat st;
    ASSERT_EQ(stat(victim_.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0644u);
    EXPECT_EQ(ReadFile(victim_dir_ + "/keep"), "keep\n");
    EXPECT_EQ(ReadFile(home_ + "/.claude.json"), "{\"seeded\":true}\n");
  }

  TempDir dir_;
  std::string home_, project_, victim_, victim_dir_;
  std::unique_ptr<StateStore> store_;
};

TEST_F(AgentHomeTest, CreatedPrivateSeededOnceAndPerProject) {
  absl::StatusOr<AgentHomeLease> a =
      AgentHomeLease::Acquire(*store_, "project-a", Seed({".claude.json", ".codex", ".absent"}));
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->seeded(), (std::vector<std::string>{".claude.json", ".codex"}));
  struct stat st;
  ASSERT_EQ(lstat(a->path().c_str(), &st), 0);
  EXPECT_TRUE(S_ISDIR(st.st_mode));
  EXPECT_EQ(st.st_mode & 07777, 0700u);
  EXPECT_EQ(st.st_uid, getuid());
  EXPECT_EQ(ReadFile(a->path() + "/.claude.json"), "{\"seeded\":true}\n");
  EXPECT_EQ(ReadFile(a->path() + "/.codex/config.toml"), "model = \"x\"\n");
  // A login written by the agent survives; the seed is not copied again.
  dir_.Write("state/np-exec/homes/" + StateStore::FileStem("project-a") + "/.claude.json",
             "{\"logged_in\":true}\n");
  const std::string path = a->path();
  a = absl::StatusOr<AgentHomeLease>(absl::UnknownError("released"));
  absl::StatusOr<AgentHomeLease> again =
      AgentHomeLease::Acquire(*store_, "project-a", Seed({".claude.json"}));
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE(again->seeded().empty());
  EXPECT_EQ(ReadFile(path + "/.claude.json"), "{\"logged_in\":true}\n");
  // Another project has a home of its own.
  absl::StatusOr<AgentHomeLease> b = AgentHomeLease::Acquire(*store_, "project-b", Seed({}));
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_NE(b->path(), path);
  EXPECT_FALSE(FileExists(b->path() + "/.claude.json"));
}

TEST_F(AgentHomeTest, ResetFollowsNoLinkThePlantedTreeHolds) {
  absl::StatusOr<AgentHomeLease> lease =
      AgentHomeLease::Acquire(*store_, "p", Seed({".claude.json"}));
  ASSERT_TRUE(lease.ok()) << lease.status();
  const std::string home = lease->path();
  lease = absl::StatusOr<AgentHomeLease>(absl::UnknownError("released"));
  // What a hostile program leaves in its home.
  ASSERT_EQ(unlink((home + "/.claude.json").c_str()), 0);
  ASSERT_EQ(symlink(victim_.c_str(), (home + "/.claude.json").c_str()), 0);
  ASSERT_EQ(symlink(victim_dir_.c_str(), (home + "/dir-link").c_str()), 0);
  ASSERT_EQ(symlink((victim_dir_ + "/keep").c_str(), (home + "/file-link").c_str()), 0);
  ASSERT_EQ(symlink(home_.c_str(), (home + "/operator-home").c_str()), 0);
  ASSERT_EQ(mkdir((home + "/locked").c_str(), 0700), 0);
  ASSERT_EQ(symlink(victim_.c_str(), (home + "/locked/inner").c_str()), 0);
  ASSERT_EQ(chmod((home + "/locked").c_str(), 0500), 0);
  ASSERT_EQ(mkfifo((home + "/fifo").c_str(), 0600), 0);
  std::string deep = home;
  for (int i = 0; i < 40; ++i) {
    deep += "/d";
    ASSERT_EQ(mkdir(deep.c_str(), 0700), 0);
  }
  ASSERT_EQ(symlink(victim_.c_str(), (deep + "/bottom").c_str()), 0);

  absl::StatusOr<AgentHomeInfo> info = InspectAgentHome(*store_, "p");
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_TRUE(info->exists);
  absl::StatusOr<bool> removed = ResetAgentHome(*store_, "p");
  ASSERT_TRUE(removed.ok()) << removed.status();
  EXPECT_TRUE(*removed);
  struct stat st;
  EXPECT_NE(lstat(home.c_str(), &st), 0);
  ExpectHostUntouched();
  // Nothing of the home is left under any name.
  EXPECT_EQ(ReadFile(dir_.Path("host/victim.txt")), "HOST FILE, NOT TO BE TOUCHED\n");
  absl::StatusOr<bool> twice = ResetAgentHome(*store_, "p");
  ASSERT_TRUE(twice.ok());
  EXPECT_FALSE(*twice);

  // The re-seed writes a fresh home, never through what was planted.
  absl::StatusOr<AgentHomeLease> fresh =
      AgentHomeLease::Acquire(*store_, "p", Seed({".claude.json"}));
  ASSERT_TRUE(fresh.ok()) << fresh.status();
  ASSERT_EQ(lstat((home + "/.claude.json").c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));
  EXPECT_EQ(ReadFile(home + "/.claude.json"), "{\"seeded\":true}\n");
  ExpectHostUntouched();
}

TEST_F(AgentHomeTest, ALinkInTheHomesPlaceIsRefusedAndResetRemovesOnlyTheLink) {
  ASSERT_TRUE(AgentHomeLease::Acquire(*store_, "other", Seed({})).ok());
  const std::string home = AgentHomePath(store_->dir(), "p");
  ASSERT_EQ(symlink(victim_dir_.c_str(), home.c_str()), 0);
  absl::StatusOr<AgentHomeLease> lease = AgentHomeLease::Acquire(*store_, "p", Seed({}));
  ASSERT_FALSE(lease.ok());
  EXPECT_EQ(ErrorCode(lease.status()), "agent-home-invalid");
  absl::StatusOr<bool> removed = ResetAgentHome(*store_, "p");
  ASSERT_TRUE(removed.ok()) << removed.status();
  ExpectHostUntouched();
  struct stat st;
  EXPECT_EQ(lstat(victim_dir_.c_str(), &st), 0);
  EXPECT_TRUE(AgentHomeLease::Acquire(*store_, "p", Seed({})).ok());
}

TEST_F(AgentHomeTest, SeedsLeadingOutOfHomeOrIntoTheProjectAreRefused) {
  ASSERT_EQ(symlink(victim_.c_str(), (home_ + "/.escape").c_str()), 0);
  ASSERT_EQ(symlink(project_.c_str(), (home_ + "/.into-project").c_str()), 0);
  dir_.Write("operator-home/work/project/planted", "from the repository\n");
  for (const char* seed : {".escape", ".into-project", "work/project/planted", "work"}) {
    absl::StatusOr<AgentHomeLease> lease =
        AgentHomeLease::Acquire(*store_, std::string("p-") + seed, Seed({seed}));
    ASSERT_FALSE(lease.ok()) << seed;
    EXPECT_EQ(ErrorCode(lease.status()), "agent-home-seed-refused") << seed;
    // A refused seed leaves no home behind, half-seeded or otherwise.
    struct stat st;
    EXPECT_NE(lstat(AgentHomePath(store_->dir(), std::string("p-") + seed).c_str(), &st), 0);
  }
  ExpectHostUntouched();
  // Nor np-exec's own state (the homes themselves) when it lies in HOME.
  absl::StatusOr<StateStore> in_home = StateStore::Open(home_ + "/.local/state/np-exec", getuid());
  ASSERT_TRUE(in_home.ok()) << in_home.status();
  absl::StatusOr<AgentHomeLease> lease = AgentHomeLease::Acquire(*in_home, "q", Seed({".local"}));
  ASSERT_FALSE(lease.ok());
  EXPECT_EQ(ErrorCode(lease.status()), "agent-home-seed-refused");
}

// Issue 26, item 7: another project's files are its sandboxes' to change. A
// sandbox of the project `other` plants `notes`, a link to ~/.ssh/id_rsa, in
// its own folder; a seed that names it (or goes through a link there) would
// copy the key into this project's home under a name the operator's trust
// review saw as harmless. Refused; a link in HOME itself (a dotfile manager's)
// still seeds.
TEST_F(AgentHomeTest, SeedsInOrThroughAnotherProjectAreRefused) {
  dir_.Write("operator-home/.ssh/id_rsa", "PRIVATE KEY\n", 0600);
  dir_.Write("operator-home/work/other/.nubos-pilot/config.json", "{}\n");
  ASSERT_EQ(symlink((home_ + "/.ssh/id_rsa").c_str(), (home_ + "/work/other/notes").c_str()), 0);
  dir_.MakeDir("operator-home/work/other/dir");
  ASSERT_EQ(symlink((home_ + "/work/other/dir").c_str(), (home_ + "/.via-other").c_str()), 0);
  ASSERT_EQ(symlink((home_ + "/.ssh").c_str(), (home_ + "/work/other/dir/keys").c_str()), 0);
  dir_.Write("operator-home/work/other/plain.json", "{}\n");
  for (const char* seed : {"work/other/notes", "work/other/plain.json", ".via-other/keys/id_rsa"}) {
    absl::StatusOr<AgentHomeLease> lease =
        AgentHomeLease::Acquire(*store_, std::string("o-") + seed, Seed({seed}));
    ASSERT_FALSE(lease.ok()) << seed;
    EXPECT_EQ(ErrorCode(lease.status()), "agent-home-seed-refused") << seed;
    EXPECT_NE(lease.status().message().find("work/other"), std::string::npos)
        << lease.status().message();
    struct stat st;
    EXPECT_NE(lstat(AgentHomePath(store_->dir(), std::string("o-") + seed).c_str(), &st), 0);
  }
  dir_.Write("operator-home/dotfiles/claude.json", "{\"from\":\"dotfiles\"}\n");
  ASSERT_EQ(symlink((home_ + "/dotfiles/claude.json").c_str(), (home_ + "/.stowed").c_str()), 0);
  absl::StatusOr<AgentHomeLease> stowed = AgentHomeLease::Acquire(*store_, "s", Seed({".stowed"}));
  ASSERT_TRUE(stowed.ok()) << stowed.status();
  EXPECT_EQ(ReadFile(stowed->path() + "/.stowed"), "{\"from\":\"dotfiles\"}\n");
  ExpectHostUntouched();
}

// A persistent home is its sandbox's to write: a link it plants there
// (`notes` -> ~/.ssh/id_rsa), reached through a link of the operator's that
// leads into the home, is refused like one in another project. Before, the
// key was copied into the new home.
TEST_F(AgentHomeTest, ASeedThroughALinkInTheStateStoreIsRefused) {
  dir_.Write("operator-home/.ssh/id_rsa", "PRIVATE KEY\n", 0600);
  absl::StatusOr<AgentHomeLease> planter = AgentHomeLease::Acquire(*store_, "planter", Seed({}));
  ASSERT_TRUE(planter.ok()) << planter.status();
  const std::string planted = planter->path() + "/notes";
  ASSERT_EQ(symlink((home_ + "/.ssh/id_rsa").c_str(), planted.c_str()), 0);
  ASSERT_EQ(symlink(planter->path().c_str(), (home_ + "/.agent-home").c_str()), 0);
  absl::StatusOr<AgentHomeLease> lease =
      AgentHomeLease::Acquire(*store_, "victim", Seed({".agent-home/notes"}));
  ASSERT_FALSE(lease.ok());
  EXPECT_EQ(ErrorCode(lease.status()), "agent-home-seed-refused");
  EXPECT_NE(lease.status().message().find(planted), std::string::npos) << lease.status().message();
  struct stat st;
  EXPECT_NE(lstat(AgentHomePath(store_->dir(), "victim").c_str(), &st), 0);
}

// The same, with the state store named through a link (a HOME or
// XDG_STATE_HOME behind a symbolic link), and with the store in HOME and the
// seed naming the planted link itself: the store is judged by its real path
// too, and a seed that lies in it is refused like one through it.
TEST_F(AgentHomeTest, ASeedInTheStateStoreIsRefusedHoweverTheStoreIsNamed) {
  dir_.Write("operator-home/.ssh/id_rsa", "PRIVATE KEY\n", 0600);
  ASSERT_EQ(symlink(dir_.Path("state").c_str(), dir_.Path("state-link").c_str()), 0);
  absl::StatusOr<StateStore> linked = StateStore::Open(dir_.Path("state-link/np-exec"), getuid());
  ASSERT_TRUE(linked.ok()) << linked.status();
  absl::StatusOr<AgentHomeLease> planter = AgentHomeLease::Acquire(*linked, "planter", Seed({}));
  ASSERT_TRUE(planter.ok()) << planter.status();
  ASSERT_EQ(symlink((home_ + "/.ssh/id_rsa").c_str(), (planter->path() + "/notes").c_str()), 0);
  ASSERT_EQ(symlink(dir_.Path("state/np-exec/homes").c_str(), (home_ + "/.homes").c_str()), 0);
  const std::string through = ".homes/" + StateStore::FileStem("planter") + "/notes";
  absl::StatusOr<AgentHomeLease> lease =
      AgentHomeLease::Acquire(*linked, "victim", Seed({through}));
  ASSERT_FALSE(lease.ok());
  EXPECT_EQ(ErrorCode(lease.status()), "agent-home-seed-refused");

  absl::StatusOr<StateStore> in_home = StateStore::Open(home_ + "/.local/state/np-exec", getuid());
  ASSERT_TRUE(in_home.ok()) << in_home.status();
  absl::StatusOr<AgentHomeLease> other = AgentHomeLease::Acquire(*in_home, "other", Seed({}));
  ASSERT_TRUE(other.ok()) << other.status();
  ASSERT_EQ(symlink((home_ + "/.ssh/id_rsa").c_str(), (other->path() + "/.claude.json").c_str()),
            0);
  const std::string named =
      ".local/state/np-exec/homes/" + StateStore::FileStem("other") + "/.claude.json";
  absl::StatusOr<AgentHomeLease> shared =
      AgentHomeLease::Acquire(*in_home, "sharing", Seed({named}));
  ASSERT_FALSE(shared.ok());
  EXPECT_EQ(ErrorCode(shared.status()), "agent-home-seed-refused");
  EXPECT_NE(shared.status().message().find("np-exec's own state"), std::string::npos)
      << shared.status().message();
}

// The seed's real path and the links on its way are two looks. A sandbox of
// the project `other` swaps `keys` in its folder between a link to ~/.ssh and
// a plain folder holding a harmless id_rsa: before, a seed that saw the link
// on its first look (the key) and the folder on its second (no link in a
// project on the way) copied the key. Now the two must agree.
TEST_F(AgentHomeTest, ALinkSwappedBetweenTheTwoLooksNeverSeedsAKey) {
  dir_.Write("operator-home/.ssh/id_rsa", "PRIVATE KEY\n", 0600);
  dir_.Write("operator-home/work/other/.nubos-pilot/config.json", "{}\n");
  dir_.Write("operator-home/work/other/dir/plain/id_rsa", "harmless\n");
  ASSERT_EQ(symlink((home_ + "/.ssh").c_str(), (home_ + "/work/other/dir/keys").c_str()), 0);
  ASSERT_EQ(symlink((home_ + "/work/other/dir").c_str(), (home_ + "/.via-other").c_str()), 0);
  Exchanger exchanger(home_ + "/work/other/dir", "keys", "plain", 0, 200);
  exchanger.Start();
  int refused = 0;
  for (int i = 0; i < 600; ++i) {
    const std::string key = "race-" + std::to_string(i);
    absl::StatusOr<AgentHomeLease> lease =
        AgentHomeLease::Acquire(*store_, key, Seed({".via-other/keys/id_rsa"}));
    if (!lease.ok()) {
      ++refused;
      continue;
    }
    const std::string copied = lease->path() + "/.via-other/keys/id_rsa";
    EXPECT_NE(ReadFile(copied), "PRIVATE KEY\n") << "the key was seeded on round " << i;
  }
  exchanger.Stop();
  EXPECT_GT(exchanger.exchanges(), 0);
  std::cout << "refused " << refused << " of 600\n";
}

// The home a spawn gets is keyed by the settings' one look at the project
// (the opened folder's path and its git as read then), never by resolving
// the project's path again: a link swapped in for the folder afterwards (by
// a program in an enclosing project's sandbox) would name another project's
// home, with its logins, for this spawn.
TEST_F(AgentHomeTest, TheHomesKeyIsTheOpenedProjectsNeverWhereALinkPointsLater) {
  dir_.Write("operator-home/work/project/.nubos-pilot/config.json",
             "{\"isolation\":{\"tier\":\"container\",\"container\":{\"home\":\"persistent\"}}}");
  dir_.Write("operator-home/work/other/.nubos-pilot/config.json", "{}");
  absl::StatusOr<Settings> settings = LoadSettings({project_, "", "", false});
  ASSERT_TRUE(settings.ok()) << settings.status();
  const std::string state = dir_.Path("state");
  const std::string planned = PlannedAgentHome(*settings, state, home_);
  ASSERT_FALSE(planned.empty());
  ASSERT_EQ(rename(project_.c_str(), (project_ + "-away").c_str()), 0);
  ASSERT_EQ(symlink((home_ + "/work/other").c_str(), project_.c_str()), 0);
  EXPECT_EQ(PlannedAgentHome(*settings, state, home_), planned);
  absl::StatusOr<std::optional<AgentHomeLease>> lease =
      AcquireHomeForSpawn(*settings, state, home_, getuid());
  ASSERT_TRUE(lease.ok()) << lease.status();
  ASSERT_TRUE(lease->has_value());
  EXPECT_EQ((*lease)->path(), planned);
}

// Inside a seeded directory links are left out, so a link in the operator's
// HOME to a file elsewhere is never copied in.
TEST_F(AgentHomeTest, SeedDirectoryCopiesNoLinkOrSpecialFile) {
  ASSERT_EQ(symlink(victim_.c_str(), (home_ + "/.codex/secret-link").c_str()), 0);
  ASSERT_EQ(mkfifo((home_ + "/.codex/fifo").c_str(), 0600), 0);
  absl::StatusOr<AgentHomeLease> lease = AgentHomeLease::Acquire(*store_, "p", Seed({".codex"}));
  ASSERT_TRUE(lease.ok()) << lease.status();
  EXPECT_EQ(ReadFile(lease->path() + "/.codex/config.toml"), "model = \"x\"\n");
  struct stat st;
  EXPECT_NE(lstat((lease->path() + "/.codex/secret-link").c_str(), &st), 0);
  EXPECT_NE(lstat((lease->path() + "/.codex/fifo").c_str(), &st), 0);
}

// A device node is never even opened (opening one can act on it): skipped
// inside a seeded directory, refused as a seed of its own.
TEST_F(AgentHomeTest, DeviceNodesAreNeverOpened) {
  if (mknod((home_ + "/.codex/null").c_str(), S_IFCHR | 0600, makedev(1, 3)) != 0 ||
      mknod((home_ + "/.device").c_str(), S_IFCHR | 0600, makedev(1, 3)) != 0) {
    NP_NEEDS("cannot make a device node here (needs root)");
  }
  absl::StatusOr<AgentHomeLease> lease = AgentHomeLease::Acquire(*store_, "p", Seed({".codex"}));
  ASSERT_TRUE(lease.ok()) << lease.status();
  struct stat st;
  EXPECT_NE(lstat((lease->path() + "/.codex/null").c_str(), &st), 0);
  absl::StatusOr<AgentHomeLease> device = AgentHomeLease::Acquire(*store_, "q", Seed({".device"}));
  ASSERT_FALSE(device.ok());
  EXPECT_EQ(ErrorCode(device.status()), "agent-home-seed-refused");
}

// A creation or reset killed half-way leaves a directory beside the home;
// reset removes those too (an old home still holds its logins).
TEST_F(AgentHomeTest, ResetRemovesWhatAKilledCreationOrResetLeft) {
  // The homes directory as np-exec makes it (0700).
  ASSERT_TRUE(AgentHomeLease::Acquire(*store_, "another", Seed({})).ok());
  const std::string stem = StateStore::FileStem("p");
  const std::string old_home = dir_.MakeDir("state/np-exec/homes/" + stem + ".old-1-00000000");
  dir_.Write("state/np-exec/homes/" + stem + ".old-1-00000000/.claude.json", "token\n");
  ASSERT_EQ(symlink(victim_.c_str(), (old_home + "/link").c_str()), 0);
  const std::string half = dir_.MakeDir("state/np-exec/homes/" + stem + ".new-2-00000000");
  const std::string other = dir_.MakeDir("state/np-exec/homes/other.old-3-00000000");
  absl::StatusOr<bool> removed = ResetAgentHome(*store_, "p");
  ASSERT_TRUE(removed.ok()) << removed.status();
  EXPECT_FALSE(*removed);  // There was no home itself.
  EXPECT_FALSE(FileExists(old_home));
  EXPECT_FALSE(FileExists(half));
  EXPECT_TRUE(FileExists(other));
  ExpectHostUntouched();
}

TEST_F(AgentHomeTest, ResetRefusesWhileASpawnHoldsTheHome) {
  absl::StatusOr<AgentHomeLease> lease = AgentHomeLease::Acquire(*store_, "p", Seed({}));
  ASSERT_TRUE(lease.ok()) << lease.status();
  absl::StatusOr<bool> removed = ResetAgentHome(*store_, "p");
  ASSERT_FALSE(removed.ok());
  EXPECT_EQ(ErrorCode(removed.status()), "agent-home-in-use");
  EXPECT_TRUE(FileExists(lease->path()));
  const std::string path = lease->path();
  lease = absl::StatusOr<AgentHomeLease>(absl::UnknownError("released"));
  removed = ResetAgentHome(*store_, "p");
  ASSERT_TRUE(removed.ok()) << removed.status();
  EXPECT_FALSE(FileExists(path));
}

}  // namespace
}  // namespace np
