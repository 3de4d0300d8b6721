// `cmake --install --prefix` into a temporary prefix, and the Debian package:
// `cpack -G DEB` in the build directory, then the .deb
// unpacked into a scratch root (`dpkg -x`) and, as root with CI=true, also
// installed for real (`dpkg -i`) and removed again (`dpkg -r`). From each
// install: `np-exec --version`, `status` in a temporary project and a
// wrapped spawn (`np-exec -- /bin/echo ok`). The control fields and files
// Debian expects: Depends computed for the interposer, the maintainer and
// version of packaging/changelog, the changelog itself, the copyright file and
// the lintian override (scripts/check-package.sh runs lintian and parses the
// copyright file as DEP-5). Label "package".
#include "tests/support/package.h"

#include <unistd.h>

#include <cstdlib>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/support/process.h"
#include "tests/support/temp_dir.h"

namespace np::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

bool CiTrue() {
  const char* ci = getenv("CI");
  return ci != nullptr && std::string(ci) == "true";
}

RunResult RunTool(const std::vector<std::string>& argv, const std::string& cwd = "") {
  RunOptions options;
  options.cwd = cwd;
  options.env = BaseEnv({"LANG=C.UTF-8"});
  options.timeout_ms = 300000;
  return RunProcess(argv, options);
}

std::string Trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

// --version, status in a temporary project, and a wrapped spawn, from the
// np-exec at `np_exec`.
void CheckInstalledNpExec(const std::string& np_exec) {
  RunResult version = RunTool({np_exec, "--version"});
  EXPECT_EQ(version.exit_code, 0) << version.err;
  EXPECT_THAT(version.out, StartsWith("np-exec "));

  TempDir project;
  MakeProject(project.path(), R"({"isolation": {"tier": "direct"}})");
  RunResult status = RunTool({np_exec, "status", "--json"}, project.path());
  ASSERT_EQ(status.exit_code, 0) << status.err;
  nlohmann::json parsed = nlohmann::json::parse(status.out, nullptr, false);
  ASSERT_TRUE(parsed.is_object()) << status.out;
  EXPECT_EQ(parsed["tier"], "direct");
  EXPECT_EQ(parsed["effective_from"], "config");

  RunResult spawn = RunTool({np_exec, "--", "/bin/echo", "ok"}, project.path());
  EXPECT_EQ(spawn.exit_code, 0) << spawn.err;
  EXPECT_EQ(spawn.out, "ok\n");
  const std::string audit = ReadFile(project.Path(".nubos-pilot/audit/np-exec.jsonl"));
  EXPECT_THAT(audit, HasSubstr("\"decision\":\"run\""));
  EXPECT_THAT(audit, HasSubstr("\"program\":\"/bin/echo\""));
}

class PackageTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* tool : {"/usr/bin/cpack", "/usr/bin/dpkg-deb"}) {
      if (!FileExists(tool)) {
        if (CiTrue()) FAIL() << tool << " is missing";
        GTEST_SKIP() << tool << " is missing";
      }
    }
    deb_ = BuildDeb(out_.path());
    ASSERT_FALSE(deb_.empty());
  }

  // The .deb unpacked (`dpkg -x`) into `root`.
  void Unpack(const TempDir& root) {
    RunResult x = RunTool({"/usr/bin/dpkg", "-x", deb_, root.path()});
    EXPECT_EQ(x.exit_code, 0) << x.err;
  }

  std::string Field(const std::string& name) {
    return Trim(RunTool({"/usr/bin/dpkg-deb", "-f", deb_, name}).out);
  }

  TempDir out_;
  std::string deb_;
};

// The signer of packaging/changelog's first entry (` -- NAME <ADDRESS>  DATE`).
std::string ChangelogSigner() {
  std::stringstream lines(ReadFile(SourceDir() + "/packaging/changelog"));
  static const std::regex kTrailer("^ -- (.+ <[^>]+>)  .+$");
  std::string line;
  std::smatch m;
  while (std::getline(lines, line)) {
    if (std::regex_match(line, m, kTrailer)) return m[1].str();
  }
  return "";
}

TEST_F(PackageTest, ControlFieldsAreDebians) {
  EXPECT_EQ(Field("Package"), "np-exec");
  EXPECT_EQ(Field("Architecture"), Trim(RunTool({"/usr/bin/dpkg", "--print-architecture"}).out));
  // np-exec is static; the interposer links libc, so libc6 at the version
  // dpkg-shlibdeps computes from its symbols.
  if (FileExists(BinaryDir() + "/bin/libnp-exec-preload.so")) {
    if (FileExists("/usr/bin/dpkg-shlibdeps")) {
      EXPECT_THAT(Field("Depends"), ::testing::MatchesRegex(R"(libc6 \(>= [0-9][0-9.]*\))"));
    } else {
      EXPECT_EQ(Field("Depends"), "libc6");
    }
  } else {
    EXPECT_EQ(Field("Depends"), "");
  }
  EXPECT_EQ(Field("Suggests"), "docker.io | podman | bubblewrap");
  // The completion needs bash-completion's loader.
  EXPECT_EQ(Field("Recommends"), "bash-completion");
  const std::string signer = ChangelogSigner();
  ASSERT_THAT(signer, HasSubstr("@"));
  EXPECT_EQ(Field("Maintainer"), signer);
  EXPECT_EQ(Field("Version"),
            Trim(RunTool({NpExecBin(), "--version"}).out).substr(std::string("np-exec ").size()));
  // A synopsis under 80 columns that does not repeat the package's name, then
  // an extended description (lines under 80 columns, each indented by one).
  const std::string description = Field("Description");
  std::stringstream lines(description);
  std::string synopsis, line;
  std::getline(lines, synopsis);
  EXPECT_LT(synopsis.size(), 80u) << synopsis;
  EXPECT_THAT(synopsis, Not(StartsWith("np-exec")));
  EXPECT_THAT(synopsis, HasSubstr("isolation tier"));
  int extended = 0;
  while (std::getline(lines, line)) {
    ++extended;
    EXPECT_LT(line.size(), 80u) << line;
  }
  EXPECT_GE(extended, 3) << description;
}

TEST_F(PackageTest, ShipsChangelogCopyrightAndLintianOverride) {
  TempDir root;
  Unpack(root);
  const std::string doc = root.Path("usr/share/doc/np-exec");
  // A native package's changelog is changelog.gz, compressed at -9.
  ASSERT_TRUE(FileExists(doc + "/changelog.gz"));
  EXPECT_FALSE(FileExists(doc + "/changelog.Debian.gz"));
  RunResult changelog = RunTool({"/bin/gzip", "-dc", doc + "/changelog.gz"});
  ASSERT_EQ(changelog.exit_code, 0) << changelog.err;
  EXPECT_EQ(changelog.out, ReadFile(SourceDir() + "/packaging/changelog"));
  EXPECT_THAT(changelog.out, StartsWith("np-exec (" + Field("Version") + ") "));
  EXPECT_EQ(ReadFile(doc + "/copyright"), ReadFile(SourceDir() + "/packaging/copyright"));
  EXPECT_THAT(ReadFile(doc + "/copyright"), HasSubstr("\nLicense: Expat\n Permission is hereby"));
  EXPECT_THAT(ReadFile(SourceDir() + "/LICENSE"), StartsWith("MIT License\n"));
  EXPECT_THAT(ReadFile(root.Path("usr/share/lintian/overrides/np-exec")),
              HasSubstr("np-exec: statically-linked-binary [usr/bin/np-exec]"));
  // No maintainer scripts: nothing to run at install (no ldconfig for a
  // private library).
  TempDir control;
  ASSERT_EQ(RunTool({"/usr/bin/dpkg-deb", "-e", deb_, control.Path("c")}).exit_code, 0);
  EXPECT_FALSE(FileExists(control.Path("c/postinst")));
  EXPECT_FALSE(FileExists(control.Path("c/postrm")));
}

TEST_F(PackageTest, UnpackedIntoAScratchRootItRuns) {
  TempDir root;
  Unpack(root);
  const std::string usr = root.Path("usr");
  EXPECT_TRUE(FileExists(usr + "/bin/np-exec"));
  EXPECT_TRUE(FileExists(usr + "/share/man/man1/np-exec.1.gz") ||
              FileExists(usr + "/share/man/man1/np-exec.1"));
  EXPECT_TRUE(FileExists(usr + "/share/bash-completion/completions/np-exec"));
  EXPECT_TRUE(FileExists(usr + "/share/doc/np-exec/copyright"));
  const bool preload_built = FileExists(BinaryDir() + "/bin/libnp-exec-preload.so");
  EXPECT_EQ(FileExists(usr + "/lib/np-exec/libnp-exec-preload.so"), preload_built);
  CheckInstalledNpExec(usr + "/bin/np-exec");

  // The installed layout is the one np-exec and the interposer look for.
  if (preload_built) {
    TempDir shims;
    RunResult r =
        RunTool({usr + "/bin/np-exec", "shims", "install", shims.Path("s"), "--preload", "--json"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_THAT(r.out, HasSubstr(usr + "/lib/np-exec/libnp-exec-preload.so"));
  }
  // The completion loads and registers itself.
  RunResult complete = RunTool({"/bin/bash", "--norc", "-c",
                                "source '" + usr +
                                    "/share/bash-completion/completions/np-exec' && "
                                    "complete -p np-exec"});
  EXPECT_EQ(complete.exit_code, 0) << complete.err;
  EXPECT_THAT(complete.out, HasSubstr("_np_exec"));
}

// Issue 7.1: `cmake --install BUILD --prefix P` puts np-exec, its man page,
// its bash completion (and the interposer, when built) under P, and the
// installed np-exec runs.
TEST(CmakeInstallTest, PutsEverythingUnderThePrefixAndRuns) {
  if (!FileExists("/usr/bin/cmake")) {
    if (CiTrue()) FAIL() << "/usr/bin/cmake is missing";
    GTEST_SKIP() << "/usr/bin/cmake is missing";
  }
  TempDir prefix;
  RunResult r = RunTool({"/usr/bin/cmake", "--install", BinaryDir(), "--prefix", prefix.Path("p")});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const std::string p = prefix.Path("p");
  EXPECT_TRUE(FileExists(p + "/bin/np-exec"));
  EXPECT_TRUE(FileExists(p + "/share/man/man1/np-exec.1.gz") ||
              FileExists(p + "/share/man/man1/np-exec.1"));
  EXPECT_TRUE(FileExists(p + "/share/bash-completion/completions/np-exec"));
  EXPECT_EQ(FileExists(p + "/lib/np-exec/libnp-exec-preload.so"),
            FileExists(BinaryDir() + "/bin/libnp-exec-preload.so"));
  CheckInstalledNpExec(p + "/bin/np-exec");
}

TEST_F(PackageTest, InstalledForRealWithDpkgAsRootInCi) {
  if (geteuid() != 0 || !CiTrue()) GTEST_SKIP() << "only as root with CI=true";
  // Never disturb an np-exec the machine already has from elsewhere.
  if (RunTool({"/usr/bin/dpkg", "-s", "np-exec"}).exit_code == 0 ||
      FileExists("/usr/bin/np-exec")) {
    GTEST_SKIP() << "np-exec is already installed on this machine";
  }
  RunResult install = RunTool({"/usr/bin/dpkg", "-i", deb_});
  ASSERT_EQ(install.exit_code, 0) << install.out << install.err;
  CheckInstalledNpExec("/usr/bin/np-exec");
  if (FileExists("/usr/bin/man")) {
    EXPECT_THAT(RunTool({"/usr/bin/man", "-w", "np-exec"}).out, HasSubstr("np-exec.1"));
  }
  RunResult remove = RunTool({"/usr/bin/dpkg", "-r", "np-exec"});
  EXPECT_EQ(remove.exit_code, 0) << remove.err;
  EXPECT_FALSE(FileExists("/usr/bin/np-exec"));
}

}  // namespace
}  // namespace np::testing
