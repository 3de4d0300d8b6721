// The warm sandbox's host-side pieces as library calls: the channel's
// messages and descriptors, the scratch mounts the keeper empties, emptying
// without following a link, and the registry's one-spawn-at-a-time claim.
#include <fcntl.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "core/errors.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "launcher/state/state_store.h"
#include "launcher/warm/channel.h"
#include "launcher/warm/registry.h"
#include "launcher/warm/sandbox_reset.h"
#include "tests/support/temp_dir.h"

namespace np::warm {
namespace {

using ::np::testing::TempDir;
using ::testing::ElementsAre;

TEST(WarmChannelTest, AMessageCarriesItsDescriptors) {
  int pair[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair), 0);
  OwnedFd a(pair[0]), b(pair[1]);
  int pipe_fds[2];
  ASSERT_EQ(pipe2(pipe_fds, O_CLOEXEC), 0);
  OwnedFd read_end(pipe_fds[0]), write_end(pipe_fds[1]);
  const std::string big(100000, 'x');
  ASSERT_TRUE(Send(a.get(), {{"op", "spawn"}, {"big", big}}, {write_end.get()}).ok());
  absl::StatusOr<Message> got = Receive(b.get(), 5000);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->body["op"], "spawn");
  EXPECT_EQ(got->body["big"], big);
  ASSERT_EQ(got->fds.size(), 1u);
  // The received descriptor is the pipe's write end, and close-on-exec.
  EXPECT_EQ(fcntl(got->fds[0].get(), F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
  ASSERT_EQ(write(got->fds[0].get(), "k", 1), 1);
  char c = 0;
  ASSERT_EQ(read(read_end.get(), &c, 1), 1);
  EXPECT_EQ(c, 'k');
}

TEST(WarmChannelTest, APeerThatClosesOrSendsGarbageIsCoded) {
  int pair[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair), 0);
  OwnedFd a(pair[0]), b(pair[1]);
  ASSERT_EQ(write(a.get(), "\0\0\0\3abc", 7), 7);
  absl::StatusOr<Message> garbage = Receive(b.get(), 5000);
  EXPECT_EQ(ErrorCode(garbage.status()), "warm-protocol");
  ASSERT_EQ(write(a.get(), "\x7f\0\0\0", 4), 4);
  EXPECT_EQ(ErrorCode(Receive(b.get(), 5000).status()), "warm-protocol") << "too big";
  a.Reset();
  EXPECT_EQ(ErrorCode(Receive(b.get(), 5000).status()), "warm-channel-closed");
  // Nothing within the time: a coded failure, not a hang.
  int quiet[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, quiet), 0);
  OwnedFd c(quiet[0]), d(quiet[1]);
  EXPECT_EQ(ErrorCode(Receive(d.get(), 50).status()), "warm-channel");
}

TEST(ScratchMountsTest, WholeWritableTmpfsAndMqueueOnly) {
  const std::string mountinfo =
      "21 1 0:20 / / ro,nosuid - tmpfs tmpfs ro\n"
      "22 21 0:21 / /tmp rw,nosuid,nodev - tmpfs tmpfs rw\n"
      "23 21 0:22 / /home/np-exec rw - tmpfs tmpfs rw\n"
      "24 21 0:23 / /dev rw,nosuid - tmpfs tmpfs rw\n"
      "25 24 0:24 / /dev/shm rw,nosuid,nodev shared:5 - tmpfs shm rw\n"
      "26 24 0:25 / /dev/mqueue rw - mqueue mqueue rw\n"
      "27 21 0:26 / /proc rw - proc proc rw\n"
      "28 27 0:23 /null /proc/keys rw,nosuid - tmpfs tmpfs rw\n"
      "29 27 0:27 / /proc/acpi ro - tmpfs tmpfs ro\n"
      "30 21 0:28 / /run/np-exec/warm ro - ext4 /dev/vda rw\n"
      "31 21 0:29 / /run/np-exec rw - tmpfs tmpfs rw\n"
      "32 21 0:30 / /var/tmp ro - tmpfs tmpfs rw\n"
      "33 21 0:31 / /with\\040space rw - tmpfs tmpfs rw\n"
      "34 21 0:32 /sub /bound rw - tmpfs tmpfs rw\n"
      "35 21 8:1 / /home/u/proj rw - ext4 /dev/sda1 rw\n";
  EXPECT_THAT(ScratchMounts(mountinfo), ElementsAre("/tmp", "/home/np-exec", "/dev", "/dev/shm",
                                                    "/dev/mqueue", "/with space"));
}

TEST(EmptyMountTest, RemovesEverythingAndFollowsNoLink) {
  TempDir dir;
  const std::string outside = dir.Write("outside/keep", "keep");
  const std::string scratch = dir.MakeDir("scratch");
  dir.Write("scratch/a", "a");
  dir.Write("scratch/deep/er/b", "b");
  ASSERT_EQ(symlink(dir.Path("outside").c_str(), (scratch + "/link").c_str()), 0);
  ASSERT_EQ(mkfifo((scratch + "/fifo").c_str(), 0600), 0);
  ASSERT_TRUE(EmptyMount(scratch).ok());
  struct stat st;
  EXPECT_EQ(lstat((scratch + "/a").c_str(), &st), -1);
  EXPECT_EQ(lstat((scratch + "/deep").c_str(), &st), -1);
  EXPECT_EQ(lstat((scratch + "/link").c_str(), &st), -1);
  EXPECT_EQ(lstat((scratch + "/fifo").c_str(), &st), -1);
  EXPECT_EQ(lstat(scratch.c_str(), &st), 0) << "the mount point itself stays";
  EXPECT_EQ(lstat(outside.c_str(), &st), 0) << "a link was followed";
}

TEST(WarmRegistryTest, OneSpawnAtATimeAndAGoneHolderIsCleanedUp) {
  TempDir dir;
  absl::StatusOr<StateStore> store = StateStore::Open(dir.Path("state"), geteuid());
  ASSERT_TRUE(store.ok()) << store.status();
  absl::StatusOr<OwnedFd> warm = OpenWarmDir(*store);
  ASSERT_TRUE(warm.ok()) << warm.status();
  const std::string key(64, 'a');
  absl::StatusOr<NewSlot> made = MakeSlot(warm->get(), key, {{"key", key}, {"project", "/p"}});
  ASSERT_TRUE(made.ok()) << made.status();
  // Claimed by the spawn that made it: nobody else gets it.
  EXPECT_FALSE(ClaimIdle(warm->get(), key).has_value());
  made->slot.lock.Reset();
  // Idle and its holder listens: claimed, connected.
  std::optional<Slot> claimed = ClaimIdle(warm->get(), key);
  ASSERT_TRUE(claimed.has_value());
  EXPECT_GE(claimed->connection.get(), 0);
  EXPECT_FALSE(ClaimIdle(warm->get(), key).has_value()) << "claimed twice";
  EXPECT_FALSE(ClaimIdle(warm->get(), std::string(64, 'b')).has_value()) << "another key";
  std::vector<nlohmann::json> listed = ListSandboxes(warm->get());
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0]["busy"], true);
  claimed.reset();
  // The holder is gone (its socket no longer listens): the slot is removed.
  made->listener.Reset();
  EXPECT_FALSE(ClaimIdle(warm->get(), key).has_value());
  EXPECT_TRUE(ListSandboxes(warm->get()).empty());
}

TEST(WarmRegistryTest, RendezvousDirectoriesArePrivateAndRemoved) {
  TempDir dir;
  absl::StatusOr<StateStore> store = StateStore::Open(dir.Path("state"), geteuid());
  ASSERT_TRUE(store.ok());
  absl::StatusOr<std::string> rendezvous = NameRendezvousDir(*store);
  ASSERT_TRUE(rendezvous.ok()) << rendezvous.status();
  struct stat st;
  // Named, not made: a spawn handed to a running sandbox never needs it.
  EXPECT_EQ(lstat(rendezvous->c_str(), &st), -1);
  absl::StatusOr<OwnedFd> warm = OpenWarmDir(*store);
  ASSERT_TRUE(warm.ok());
  ASSERT_TRUE(MakeRendezvousDir(warm->get(), *rendezvous).ok());
  ASSERT_EQ(lstat(rendezvous->c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  { RendezvousDir owned(*rendezvous); }
  EXPECT_EQ(lstat(rendezvous->c_str(), &st), -1);
}

TEST(WarmRegistryTest, AKilledSpawnsRendezvousDirectoryIsSweptByTheNext) {
  TempDir dir;
  absl::StatusOr<StateStore> store = StateStore::Open(dir.Path("state"), geteuid());
  ASSERT_TRUE(store.ok());
  absl::StatusOr<OwnedFd> warm = OpenWarmDir(*store);
  ASSERT_TRUE(warm.ok());
  // A pid no process has (above the kernel's pid_max), and this process's own.
  ASSERT_EQ(mkdirat(warm->get(), "rv-99999999-0badf00d", 0700), 0);
  const std::string mine = "rv-" + std::to_string(getpid()) + "-0badf00d";
  ASSERT_EQ(mkdirat(warm->get(), mine.c_str(), 0700), 0);
  absl::StatusOr<std::string> fresh = NameRendezvousDir(*store);
  ASSERT_TRUE(fresh.ok());
  ASSERT_TRUE(MakeRendezvousDir(warm->get(), *fresh).ok());
  struct stat st;
  EXPECT_NE(fstatat(warm->get(), "rv-99999999-0badf00d", &st, AT_SYMLINK_NOFOLLOW), 0);
  EXPECT_EQ(fstatat(warm->get(), mine.c_str(), &st, AT_SYMLINK_NOFOLLOW), 0) << "a live one";
  RemoveRendezvousDir(*fresh);
}

}  // namespace
}  // namespace np::warm
