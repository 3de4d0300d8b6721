#include "core/mounts.h"

#include <sys/stat.h>
#include <unistd.h>

#include <iostream>
#include <string>
#include <vector>

#include "core/errors.h"
#include "gtest/gtest.h"
#include "tests/support/exchanger.h"
#include "tests/support/temp_dir.h"

namespace np {
namespace {

using ::np::testing::Exchanger;
using ::np::testing::TempDir;

// A project with a sibling directory outside it, and a policy for it.
class MountsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    project_ = tmp_.MakeDir("project");
    outside_ = tmp_.MakeDir("outside");
    tmp_.MakeDir("project/src");
    tmp_.MakeDir("project/data");
    tmp_.Write("outside/file.txt", "x");
    absl::StatusOr<MountPolicy> policy = MakeMountPolicy(project_, {});
    ASSERT_TRUE(policy.ok()) << policy.status();
    policy_ = *policy;
  }

  void Link(const std::string& target, const std::string& rel) {
    ASSERT_EQ(symlink(target.c_str(), tmp_.Path(rel).c_str()), 0) << rel;
  }

  absl::StatusOr<ValidatedMount> Validate(const std::string& source, const std::string& target,
                                          bool writable) {
    return ValidateMount(MountSpec{source, target, writable}, policy_);
  }

  TempDir tmp_;
  std::string project_;
  std::string outside_;
  MountPolicy policy_;
};

TEST_F(MountsTest, InsideProjectWritableIsAllowed) {
  absl::StatusOr<ValidatedMount> mount = Validate(project_ + "/data", "/data", true);
  ASSERT_TRUE(mount.ok()) << mount.status();
  EXPECT_EQ(mount->source, project_ + "/data");
  EXPECT_EQ(mount->target, "/data");
  EXPECT_TRUE(mount->writable);
}

TEST_F(MountsTest, OutsideWritableIsRefused) {
  absl::StatusOr<ValidatedMount> mount = Validate(outside_, "/outside", true);
  ASSERT_FALSE(mount.ok());
  EXPECT_EQ(ErrorCode(mount.status()), "isolation-mount-writable-outside-project");
}

TEST_F(MountsTest, OutsideReadOnlyIsAllowed) {
  absl::StatusOr<ValidatedMount> mount = Validate(outside_ + "/file.txt", "/ref/file.txt", false);
  ASSERT_TRUE(mount.ok()) << mount.status();
  EXPECT_EQ(mount->source, outside_ + "/file.txt");
  EXPECT_FALSE(mount->writable);
}

TEST_F(MountsTest, PrefixOnlyMatchIsOutside) {
  const std::string secrets = tmp_.MakeDir("project-secrets");
  absl::StatusOr<ValidatedMount> mount = Validate(secrets, "/secrets", true);
  ASSERT_FALSE(mount.ok());
  EXPECT_EQ(ErrorCode(mount.status()), "isolation-mount-writable-outside-project");
  const std::string projectx = tmp_.MakeDir("projectx");
  mount = Validate(projectx, "/x", true);
  ASSERT_FALSE(mount.ok());
  EXPECT_EQ(ErrorCode(mount.status()), "isolation-mount-writable-outside-project");
}

TEST_F(MountsTest, ControlSurfacesAreRefusedEvenReadOnly) {
  for (const char* source :
       {"/var/run/docker.sock", "/run/docker.sock", "/proc", "/sys", "/dev", "/proc/self",
        "/proc/1/root", "/sys/kernel", "/dev/null", "/dev/shm", "/proc/", "//proc", "/./proc"}) {
    for (bool writable : {false, true}) {
      absl::StatusOr<ValidatedMount> mount = Validate(source, "/mnt/x", writable);
      ASSERT_FALSE(mount.ok()) << source;
      EXPECT_EQ(ErrorCode(mount.status()), "isolation-mount-forbidden-source") << source;
    }
  }
}

// Issue 15, item 1: docker's own containerd (/run/docker/containerd) is root
// on the host; engine state and the users' session sockets are refused as
// written, whether they exist here or not and whatever realpath could read.
TEST_F(MountsTest, EngineStateAndSessionSocketsAreRefused) {
  for (const char* source :
       {"/run/docker", "/run/docker/containerd", "/run/docker/containerd/containerd.sock",
        "/run/docker/metrics.sock", "/var/run/docker", "/var/lib/docker", "/var/lib/docker/volumes",
        "/run/containerd", "/var/lib/containerd", "/var/lib/containers", "/run/containers",
        "/run/podman", "/run/user", "/run/user/1000/bus", "/run/user/0/ssh-agent.socket",
        // Issue 26, item 3: the system bus, systemd's endpoints, dockerd's
        // key and the lock directories.
        "/run/dbus", "/run/dbus/system_bus_socket", "/var/run/dbus", "/run/systemd",
        "/run/systemd/private", "/run/systemd/notify", "/etc/docker", "/etc/docker/key.json",
        "/run/lock", "/var/lock", "/var/lock/LCK..ttyS0"}) {
    absl::StatusOr<ValidatedMount> mount = Validate(source, "/mnt/x", false);
    ASSERT_FALSE(mount.ok()) << source;
    EXPECT_EQ(ErrorCode(mount.status()), "isolation-mount-forbidden-source") << source;
  }
}

TEST_F(MountsTest, LinksToControlSurfacesAreRefused) {
  int i = 0;
  for (const char* surface : {"/var/run/docker.sock", "/run/docker.sock", "/proc", "/sys", "/dev",
                              "/proc/self", "/dev/null", "/var/run"}) {
    const std::string rel = "outside/link" + std::to_string(i++);
    Link(surface, rel);
    // The same answer whether or not this machine has the surface (a link to
    // a docker socket dangles while no daemon runs): the link is judged by
    // where it points.
    absl::StatusOr<ValidatedMount> mount = Validate(tmp_.Path(rel), "/mnt/x", false);
    ASSERT_FALSE(mount.ok()) << surface;
    EXPECT_EQ(ErrorCode(mount.status()), "isolation-mount-forbidden-source") << surface;
  }
  // A link inside the project to /proc is refused too.
  Link("/proc", "project/proc-link");
  absl::StatusOr<ValidatedMount> mount = Validate(project_ + "/proc-link", "/p", true);
  ASSERT_FALSE(mount.ok());
  EXPECT_EQ(ErrorCode(mount.status()), "isolation-mount-forbidden-source");
  // And a directory holding such a link is a plain directory: only what the
  // mount source itself is or contains by path counts.
}

TEST_F(MountsTest, AncestorsOfControlSurfacesAreRefused) {
  for (const char* source : {"/", "/run", "/var", "/var/run"}) {
    absl::StatusOr<ValidatedMount> mount = Validate(source, "/host", false);
    ASSERT_FALSE(mount.ok()) << source;
    EXPECT_EQ(ErrorCode(mount.status()), "isolation-mount-forbidden-source") << source;
  }
}

TEST_F(MountsTest, LinkInsideProjectPointingOutsideCannotBeWritable) {
  Link(outside_, "project/escape");
  absl::StatusOr<ValidatedMount> rw = Validate(project_ + "/escape", "/escape", true);
  ASSERT_FALSE(rw.ok());
  EXPECT_EQ(ErrorCode(rw.status()), "isolation-mount-writable-outside-project");
  // Through the link to a path that does not exist yet: still outside.
  rw = Validate(project_ + "/escape/new/dir", "/escape", true);
  ASSERT_FALSE(rw.ok());
  EXPECT_EQ(ErrorCode(rw.status()), "isolation-mount-writable-outside-project");
  // Read-only it may be mounted, and the source is the real path.
  absl::StatusOr<ValidatedMount> ro = Validate(project_ + "/escape", "/escape", false);
  ASSERT_TRUE(ro.ok()) << ro.status();
  EXPECT_EQ(ro->source, outside_);
}

TEST_F(MountsTest, SymlinkedProjectIsResolvedToItsRealPath) {
  Link(project_, "plink");
  absl::StatusOr<MountPolicy> policy = MakeMountPolicy(tmp_.Path("plink"), {});
  ASSERT_TRUE(policy.ok()) << policy.status();
  EXPECT_EQ(policy->project_real, project_);
  absl::StatusOr<ValidatedMount> mount =
      ValidateMount(MountSpec{tmp_.Path("plink/data"), "/data", true}, *policy);
  ASSERT_TRUE(mount.ok()) << mount.status();
  EXPECT_EQ(mount->source, project_ + "/data");
}

TEST_F(MountsTest, ResolveRealPathThroughDeepestExistingAncestor) {
  Link(project_, "plink");
  struct Case {
    std::string path;
    std::string real;
  };
  const std::vector<Case> cases = {
      {project_, project_},
      {project_ + "/", project_},
      {project_ + "//src/./", project_ + "/src"},
      {project_ + "/new", project_ + "/new"},
      {project_ + "/new/deeper/file", project_ + "/new/deeper/file"},
      {tmp_.Path("plink/new/x"), project_ + "/new/x"},
      {tmp_.Path("plink"), project_},
      {"/", "/"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<std::string> real = ResolveRealPath(c.path, "code");
    ASSERT_TRUE(real.ok()) << c.path << ": " << real.status();
    EXPECT_EQ(*real, c.real) << c.path;
  }
}

TEST_F(MountsTest, NotYetExistingSourceIsMissingAfterResolution) {
  absl::StatusOr<ValidatedMount> mount = Validate(project_ + "/later", "/later", true);
  ASSERT_FALSE(mount.ok());
  EXPECT_EQ(ErrorCode(mount.status()), "isolation-mount-source-missing");
}

TEST_F(MountsTest, BadSourcesAreCoded) {
  Link(tmp_.Path("loop-b"), "loop-a");
  Link(tmp_.Path("loop-a"), "loop-b");
  Link(tmp_.Path("nowhere"), "dangling");
  Link("/no/such/place/at/all", "project/dangling-in-project");
  struct Case {
    std::string source;
    bool writable;
  };
  const std::vector<Case> cases = {
      {tmp_.Path("loop-a"), false},
      {tmp_.Path("loop-a/child"), false},
      {tmp_.Path("dangling"), false},
      {tmp_.Path("dangling/child"), true},
      {project_ + "/dangling-in-project", true},
      {project_ + "/../outside", false},
      {project_ + "/src/..", true},
      {"..", false},
      {"relative/path", false},
      {"project/src", true},
      {"", false},
      {"~/data", false},
  };
  for (const Case& c : cases) {
    absl::StatusOr<ValidatedMount> mount = Validate(c.source, "/mnt/x", c.writable);
    ASSERT_FALSE(mount.ok()) << c.source;
    EXPECT_EQ(ErrorCode(mount.status()), "isolation-mount-bad-source") << c.source;
    absl::StatusOr<std::string> real = ResolveRealPath(c.source, "my-code");
    ASSERT_FALSE(real.ok()) << c.source;
    EXPECT_EQ(ErrorCode(real.status()), "my-code") << c.source;
  }
}

TEST_F(MountsTest, BadTargetsAreCoded) {
  for (const std::string& target :
       {std::string("relative"), std::string(""), std::string("data"), std::string("/"),
        std::string("//"), std::string("/a/../b"), std::string("/a,b"), std::string("/a:b"),
        std::string("/a\"b"), std::string("/a\nb"), std::string("/a\rb"), std::string("/proc/x"),
        std::string("/proc"), std::string("/sys/fs"), std::string("/dev/x"),
        std::string("/a,readonly=false"), std::string("/data,source=/etc")}) {
    absl::StatusOr<ValidatedMount> mount = Validate(project_ + "/data", target, false);
    ASSERT_FALSE(mount.ok()) << target;
    EXPECT_EQ(ErrorCode(mount.status()), "isolation-mount-bad-target") << target;
  }
}

TEST_F(MountsTest, TargetIsNormalised) {
  absl::StatusOr<ValidatedMount> mount = Validate(project_ + "/data", "//mnt/./data/", false);
  ASSERT_TRUE(mount.ok()) << mount.status();
  EXPECT_EQ(mount->target, "/mnt/data");
}

TEST_F(MountsTest, SourcesWithSeparatorCharactersAreResolvedNotSplit) {
  // The mount syntax is the argv builder's concern; validation keeps the name.
  const std::string odd = tmp_.MakeDir("outside/a,b:c d");
  absl::StatusOr<ValidatedMount> mount = Validate(odd, "/odd", false);
  ASSERT_TRUE(mount.ok()) << mount.status();
  EXPECT_EQ(mount->source, odd);
}

TEST_F(MountsTest, DuplicateTargetsAreRefused) {
  const std::vector<std::string> reserved = {project_, "/tmp", "/home/np-exec"};
  struct Case {
    std::vector<MountSpec> mounts;
    bool ok;
  };
  const std::vector<Case> cases = {
      {{{project_ + "/data", "/a", false}, {project_ + "/src", "/b", false}}, true},
      {{{project_ + "/data", "/a", false}, {project_ + "/src", "/a", false}}, false},
      {{{project_ + "/data", "/a", false}, {project_ + "/src", "//a/", false}}, false},
      {{{project_ + "/data", "/tmp", false}}, false},
      {{{project_ + "/data", "/home/np-exec", true}}, false},
      {{{outside_, project_, false}}, false},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    absl::StatusOr<std::vector<ValidatedMount>> mounts =
        ValidateMounts(cases[i].mounts, policy_, reserved);
    EXPECT_EQ(mounts.ok(), cases[i].ok) << "case " << i;
    if (!cases[i].ok) {
      EXPECT_EQ(ErrorCode(mounts.status()), "isolation-mount-bad-target") << "case " << i;
    }
  }
}

TEST_F(MountsTest, ValidateMountsStopsAtTheFirstBadMount) {
  std::vector<MountSpec> mounts = {{project_ + "/data", "/a", true}, {outside_, "/b", true}};
  absl::StatusOr<std::vector<ValidatedMount>> validated = ValidateMounts(mounts, policy_, {});
  ASSERT_FALSE(validated.ok());
  EXPECT_EQ(ErrorCode(validated.status()), "isolation-mount-writable-outside-project");
  validated = ValidateMounts({}, policy_, {});
  ASSERT_TRUE(validated.ok());
  EXPECT_TRUE(validated->empty());
}

TEST_F(MountsTest, ExtraForbiddenSourcesAreRefused) {
  const std::string sock_dir = tmp_.MakeDir("engine");
  const std::string sock = tmp_.Write("engine/docker.sock", "");
  absl::StatusOr<MountPolicy> policy = MakeMountPolicy(project_, {sock});
  ASSERT_TRUE(policy.ok());
  for (const std::string& source : {sock, sock_dir}) {
    absl::StatusOr<ValidatedMount> mount = ValidateMount(MountSpec{source, "/s", false}, *policy);
    ASSERT_FALSE(mount.ok()) << source;
    EXPECT_EQ(ErrorCode(mount.status()), "isolation-mount-forbidden-source") << source;
  }
  // A link to the extra socket is refused by its real path.
  Link(sock, "outside/sock-link");
  absl::StatusOr<ValidatedMount> mount =
      ValidateMount(MountSpec{tmp_.Path("outside/sock-link"), "/s", false}, *policy);
  ASSERT_FALSE(mount.ok());
  EXPECT_EQ(ErrorCode(mount.status()), "isolation-mount-forbidden-source");
}

// A forbidden entry compared by path must be one: a relative one would
// protect nothing, so the policy is refused rather than built without it.
TEST_F(MountsTest, ExtraForbiddenThatIsNotAnAbsolutePathIsRefused) {
  for (const std::string& bad : {std::string("docker.sock"), std::string("./run/docker.sock"),
                                 std::string("/run/user/1000/../1000/docker.sock")}) {
    absl::StatusOr<MountPolicy> policy = MakeMountPolicy(project_, {bad});
    ASSERT_FALSE(policy.ok()) << bad;
    EXPECT_EQ(ErrorCode(policy.status()), "invalid-path") << bad;
  }
  absl::Status home = ValidateProjectMount(policy_, "relative/home");
  EXPECT_EQ(ErrorCode(home), "invalid-path");
}

TEST_F(MountsTest, PolicyHoldsDefaultsAndTheirRealPaths) {
  for (const char* surface :
       {"/var/run/docker.sock", "/run/docker.sock", "/proc", "/sys", "/dev"}) {
    bool found = false;
    for (const std::string& f : DefaultForbiddenSources()) found = found || f == surface;
    EXPECT_TRUE(found) << surface;
    EXPECT_TRUE(TouchesForbidden(surface, policy_)) << surface;
  }
  EXPECT_TRUE(TouchesForbidden("/", policy_));
  EXPECT_TRUE(TouchesForbidden("/proc/self/environ", policy_));
  EXPECT_FALSE(TouchesForbidden(project_, policy_));
  EXPECT_FALSE(TouchesForbidden("/usr/lib", policy_));
  EXPECT_FALSE(TouchesForbidden("/procfs", policy_));
  EXPECT_FALSE(TouchesForbidden("/devices", policy_));
}

TEST_F(MountsTest, ProjectMountChecks) {
  struct Case {
    std::string project;
    std::string home;
    std::string code;  // "" for OK.
  };
  const std::string home = tmp_.MakeDir("home/user");
  const std::string in_home = tmp_.MakeDir("home/user/code/app");
  const std::vector<Case> cases = {
      {in_home, home, ""},
      {in_home, "", ""},
      {project_, home, ""},
      {home, home, "isolation-project-too-broad"},
      {tmp_.Path("home"), home, "isolation-project-too-broad"},
      {tmp_.path(), home, "isolation-project-too-broad"},
      {"/", home, "isolation-mount-forbidden-source"},
      {"/", "", "isolation-mount-forbidden-source"},
      {"/run", "", "isolation-mount-forbidden-source"},
      {"/dev/shm", "", "isolation-mount-forbidden-source"},
      {"/proc", "", "isolation-mount-forbidden-source"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<MountPolicy> policy = MakeMountPolicy(c.project, {});
    ASSERT_TRUE(policy.ok()) << c.project;
    absl::Status status = ValidateProjectMount(*policy, c.home);
    EXPECT_EQ(ErrorCode(status), c.code) << c.project << " home=" << c.home;
  }
  // home-as-project reached through a symlink is still home.
  Link(home, "home-link");
  absl::StatusOr<MountPolicy> policy = MakeMountPolicy(tmp_.Path("home-link"), {});
  ASSERT_TRUE(policy.ok());
  EXPECT_EQ(ErrorCode(ValidateProjectMount(*policy, home)), "isolation-project-too-broad");
}

TEST_F(MountsTest, MakeMountPolicyRefusesBadProjectPaths) {
  for (const std::string& root :
       {std::string("relative"), std::string(""), project_ + "/../outside"}) {
    absl::StatusOr<MountPolicy> policy = MakeMountPolicy(root, {});
    ASSERT_FALSE(policy.ok()) << root;
    EXPECT_EQ(ErrorCode(policy.status()), "invalid-path") << root;
  }
}

// A source is mounted by path, which the runtime resolves again: one that a
// sandboxed program or another user could swap for a link meanwhile is refused.
TEST_F(MountsTest, ASourceSomeoneCouldSwapIsUnstable) {
  const uid_t uid = getuid();
  const gid_t gid = getgid();
  auto stable = [&](const std::string& source) {
    return CheckMountSourceStable(ValidatedMount{source, "/x", false}, uid, gid);
  };
  // Outside every project, in directories only the caller (and root) write.
  EXPECT_TRUE(stable(outside_).ok()) << stable(outside_);
  // Inside a project: this one, or another.
  tmp_.MakeDir("project/.nubos-pilot");
  EXPECT_EQ(ErrorCode(stable(project_ + "/data")), "isolation-mount-source-unstable");
  EXPECT_EQ(ErrorCode(stable(project_)), "isolation-mount-source-unstable");
  // A writable mount (whose source must be in the project) is told where the
  // folder is writable already.
  const absl::Status rw =
      CheckMountSourceStable(ValidatedMount{project_ + "/data", "/x", true}, uid, gid);
  EXPECT_EQ(ErrorCode(rw), "isolation-mount-source-unstable");
  EXPECT_NE(rw.message().find("at its own path below the project"), absl::string_view::npos) << rw;
  tmp_.MakeDir("outside/.nubos-pilot");
  EXPECT_EQ(ErrorCode(stable(outside_)), "isolation-mount-source-unstable");
  // Below a directory others may write in, not sticky.
  const std::string open_dir = tmp_.MakeDir("open");
  tmp_.MakeDir("open/data");
  ASSERT_EQ(chmod(open_dir.c_str(), 0777), 0);
  EXPECT_EQ(ErrorCode(stable(open_dir + "/data")), "isolation-mount-source-unstable");
  // Sticky (as /tmp): others cannot rename the caller's entry.
  ASSERT_EQ(chmod(open_dir.c_str(), 01777), 0);
  EXPECT_TRUE(stable(open_dir + "/data").ok());
  // Group-writable by the caller's own group is the caller's; by another
  // group it is not.
  ASSERT_EQ(chmod(open_dir.c_str(), 0775), 0);
  EXPECT_TRUE(stable(open_dir + "/data").ok());
  if (geteuid() == 0) {
    ASSERT_EQ(chown(open_dir.c_str(), uid, 4242), 0);
    EXPECT_EQ(ErrorCode(stable(open_dir + "/data")), "isolation-mount-source-unstable");
    EXPECT_TRUE(
        CheckMountSourceStable(ValidatedMount{open_dir + "/data", "/x", false}, uid, 4242).ok());
  }
}

// Issue 26, item 7: a source named through a link that lies in another
// project (a sandbox of that project planted it) reaches whatever the link
// says; the operator's review saw only the harmless name. Refused, with each
// link met on the way; a link outside every project still mounts.
TEST_F(MountsTest, ASourceReachedThroughALinkInAProjectIsUnstable) {
  const std::string other = tmp_.MakeDir("other");
  tmp_.MakeDir("other/.nubos-pilot");
  tmp_.Write("outside/secrets/key", "PRIVATE\n");
  Link(outside_ + "/secrets", "other/notes");
  Link(other, "via-other");
  for (const std::string& named : {other + "/notes", tmp_.Path("via-other/notes/key")}) {
    absl::StatusOr<ValidatedMount> mount = Validate(named, "/notes", false);
    ASSERT_TRUE(mount.ok()) << mount.status();
    EXPECT_EQ(mount->links.back(), other + "/notes") << named;
    absl::Status stable = CheckMountSourceStable(*mount, getuid(), getgid());
    EXPECT_EQ(ErrorCode(stable), "isolation-mount-source-unstable") << named;
    EXPECT_NE(stable.message().find("through the link " + other + "/notes"), std::string::npos)
        << stable.message();
  }
  Link(outside_ + "/secrets", "stowed");
  absl::StatusOr<ValidatedMount> stowed = Validate(tmp_.Path("stowed"), "/s", false);
  ASSERT_TRUE(stowed.ok()) << stowed.status();
  EXPECT_EQ(stowed->links, std::vector<std::string>{tmp_.Path("stowed")});
  EXPECT_TRUE(CheckMountSourceStable(*stowed, getuid(), getgid()).ok());
}

// The real path and the links on the way are two looks. A sandbox of the
// project `other` swaps its `notes` between a link to a secret outside every
// project and a plain folder, as fast as it can: before, a check that saw
// the link on its first look (the real path: the secret) and the folder on
// its second (no link on the way) passed, and the secret was mounted. Now
// the second walk's end must be the real path judged.
TEST_F(MountsTest, ALinkSwappedBetweenTheTwoLooksIsNeverMounted) {
  const std::string other = tmp_.MakeDir("other");
  tmp_.MakeDir("other/.nubos-pilot");
  tmp_.MakeDir("other/plain");
  tmp_.Write("outside/secrets/key", "PRIVATE\n");
  Link(outside_ + "/secrets", "other/notes");
  const std::string secrets = outside_ + "/secrets";
  Exchanger exchanger(other, "notes", "plain", 0, 200);
  exchanger.Start();
  int mounted = 0;
  int changed = 0;
  for (int i = 0; i < 4000; ++i) {
    absl::StatusOr<ValidatedMount> mount = Validate(other + "/notes", "/notes", false);
    if (!mount.ok()) {
      changed += ErrorCode(mount.status()) == "isolation-mount-source-unstable" ? 1 : 0;
      continue;
    }
    if (CheckMountSourceStable(*mount, getuid(), getgid()).ok()) {
      ++mounted;
      EXPECT_NE(mount->source, secrets) << "the secret passed every check";
    }
  }
  exchanger.Stop();
  EXPECT_EQ(mounted, 0);
  EXPECT_GT(exchanger.exchanges(), 0);
  // Not asserted (a scheduler may never interleave them), only shown.
  std::cout << "seen changing between the two looks: " << changed << " of 4000\n";
}

// np-exec's state store is never mounted, and neither is what a link in it
// leads to: a sandbox writes into its persistent home there, so a link it
// plants (`notes` -> the secret) is reached through a link of the
// operator's that leads into the home. Before, only the real path (the
// secret, outside the store) was judged, and it passed.
TEST_F(MountsTest, ASourceReachedThroughALinkInAForbiddenPlaceIsRefused) {
  const std::string store = tmp_.MakeDir("state/np-exec/homes/abc");
  tmp_.Write("outside/secrets/key", "PRIVATE\n");
  Link(outside_ + "/secrets", "state/np-exec/homes/abc/notes");
  Link(store, "outside/agent-home");
  absl::StatusOr<MountPolicy> policy = MakeMountPolicy(project_, {tmp_.Path("state/np-exec")});
  ASSERT_TRUE(policy.ok()) << policy.status();
  absl::StatusOr<ValidatedMount> mount =
      ValidateMount(MountSpec{outside_ + "/agent-home/notes", "/n", false}, *policy);
  ASSERT_FALSE(mount.ok());
  EXPECT_EQ(ErrorCode(mount.status()), "isolation-mount-forbidden-source");
  EXPECT_NE(mount.status().message().find(store + "/notes"), std::string::npos)
      << mount.status().message();
}

TEST(LinksOnTheWayTest, EachLinkFollowedInOrderRelativeAndAbsolute) {
  TempDir tmp;
  tmp.MakeDir("a/b");
  ASSERT_EQ(symlink("a", tmp.Path("rel").c_str()), 0);
  ASSERT_EQ(symlink(tmp.Path("rel").c_str(), tmp.Path("abs").c_str()), 0);
  ASSERT_EQ(symlink("../a/b", tmp.Path("a/up").c_str()), 0);
  EXPECT_EQ(LinksOnTheWay(tmp.Path("abs/up/missing")),
            (std::vector<std::string>{tmp.Path("abs"), tmp.Path("rel"), tmp.Path("a/up")}));
  EXPECT_TRUE(LinksOnTheWay(tmp.Path("a/b")).empty());
  ASSERT_EQ(symlink("loop", tmp.Path("loop").c_str()), 0);
  EXPECT_EQ(LinksOnTheWay(tmp.Path("loop")).size(), 40u);
  // Where the walk ends: the real path, or "" where it stopped.
  std::string reached = "x";
  LinksOnTheWay(tmp.Path("abs/up"), &reached);
  absl::StatusOr<std::string> real = ResolveRealPath(tmp.Path("a/b"), "invalid-path");
  ASSERT_TRUE(real.ok());
  EXPECT_EQ(reached, *real);
  LinksOnTheWay(tmp.Path("abs/up/missing"), &reached);
  EXPECT_EQ(reached, "");
  LinksOnTheWay(tmp.Path("loop"), &reached);
  EXPECT_EQ(reached, "");
}

}  // namespace
}  // namespace np
