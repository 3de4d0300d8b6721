#include "shim/find_real_program.h"

#include <sys/stat.h>

#include <filesystem>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/errors.h"
#include "gtest/gtest.h"
#include "tests/support/process.h"
#include "tests/support/temp_dir.h"

namespace np {
namespace {

constexpr FileId kSelf{10, 1};

// A fake filesystem: each path is a regular file with an identity, executable
// or not. Symlinks are modelled as two paths sharing one identity, which is
// what stat(2) reports for them. Paths are looked up as the kernel would see
// them, cut at the first NUL byte.
struct FakeFs {
  std::map<std::string, FileFacts> files;

  FakeFs& Exec(const std::string& path, FileId id) {
    files[path] = FileFacts{true, true, true, id};
    return *this;
  }
  FakeFs& NonExec(const std::string& path, FileId id) {
    files[path] = FileFacts{true, true, false, id};
    return *this;
  }
  // Another np-exec: its own identity, but it carries np-exec's note.
  FakeFs& Copy(const std::string& path, FileId id) {
    files[path] = FileFacts{true, true, true, id, true};
    return *this;
  }
  FakeFs& Dir(const std::string& path, FileId id) {
    files[path] = FileFacts{true, false, false, id};
    return *this;
  }
  FileProbe Probe() const {
    return [files = files](const std::string& path, NoteCheck) {
      auto it = files.find(std::string(path.c_str()));
      return it == files.end() ? FileFacts{} : it->second;
    };
  }
};

struct Case {
  std::string name;
  FakeFs fs;
  std::string program;
  std::string path_list;
  std::string expected;  // The path found, or an error code.
  bool error;
};

TEST(FindRealProgramTest, Table) {
  const std::vector<Case> cases = {
      {"FirstMatchWins", FakeFs().Exec("/a/node", {1, 1}).Exec("/b/node", {1, 2}), "node", "/a:/b",
       "/a/node", false},
      {"SelfIsSkippedByIdentity", FakeFs().Exec("/shims/node", kSelf).Exec("/usr/bin/node", {1, 3}),
       "node", "/shims:/usr/bin", "/usr/bin/node", false},
      {"SelfUnderAnotherNameIsStillSelf",
       FakeFs()
           .Exec("/shims/node", kSelf)
           .Exec("/opt/np/bin/node", kSelf)
           .Exec("/usr/bin/node", {1, 3}),
       "node", "/shims:/opt/np/bin:/usr/bin", "/usr/bin/node", false},
      {"SymlinkedPathEntryToTheShimDir",
       // /link-to-shims is a symlink to /shims: same identity for its node.
       FakeFs()
           .Exec("/shims/node", kSelf)
           .Exec("/link-to-shims/node", kSelf)
           .Exec("/usr/bin/node", {1, 3}),
       "node", "/link-to-shims:/shims:/usr/bin", "/usr/bin/node", false},
      {"TwoShimDirs",
       FakeFs()
           .Exec("/shims1/node", kSelf)
           .Exec("/shims2/node", kSelf)
           .Exec("/usr/bin/node", {1, 3}),
       "node", "/shims1:/shims2:/usr/bin", "/usr/bin/node", false},
      {"SameNameDifferentFileIsNotSelf",
       // A real program that happens to be named like the shim is not skipped.
       FakeFs().Exec("/shims/node", {10, 2}).Exec("/usr/bin/node", {1, 3}), "node",
       "/shims:/usr/bin", "/shims/node", false},
      // Copies and other installations of np-exec are skipped by content.
      {"CopyOfNpExecIsSkipped", FakeFs().Copy("/copy/node", {2, 7}).Exec("/usr/bin/node", {1, 3}),
       "node", "/copy:/usr/bin", "/usr/bin/node", false},
      {"SecondInstallationBehindTheFirst",
       // The .deb's shim dir, then a cmake --install one, then the real node.
       FakeFs()
           .Exec("/usr/lib/np-exec/shims/node", kSelf)
           .Copy("/usr/local/lib/np-exec/shims/node", {3, 9})
           .Exec("/usr/bin/node", {1, 3}),
       "node", "/usr/lib/np-exec/shims:/usr/local/lib/np-exec/shims:/usr/bin", "/usr/bin/node",
       false},
      {"CopiesSelfAndLinksInterleaved",
       FakeFs()
           .Copy("/a/node", {2, 1})
           .Exec("/b/node", kSelf)
           .Copy("/c/node", {2, 2})
           .Exec("/d/node", {1, 4}),
       "node", "/a:/b:/c:/d", "/d/node", false},
      {"OnlyCopiesIsAShimWithNoProgram", FakeFs().Copy("/a/node", {2, 1}).Copy("/b/node", {2, 2}),
       "node", "/a:/b", "shim-no-program", true},
      {"SelfAndCopiesOnlyIsAShimWithNoProgram",
       FakeFs().Exec("/shims/node", kSelf).Copy("/copy/node", {2, 1}), "node", "/shims:/copy",
       "shim-no-program", true},
      {"CopyThenNonExecutableIsNotExecutable",
       FakeFs().Copy("/a/node", {2, 1}).NonExec("/b/node", {1, 1}), "node", "/a:/b",
       "program-not-executable", true},
      {"CopyThenNothingElseIsAShimWithNoProgram",
       FakeFs().Copy("/a/node", {2, 1}).Dir("/b/node", {1, 1}), "node", "/a:/b", "shim-no-program",
       true},
      // A path names one file: another np-exec named by path is a program.
      {"CopyByPathIsAProgram", FakeFs().Copy("/opt/np-exec", {2, 1}), "/opt/np-exec", "/usr/bin",
       "/opt/np-exec", false},
      {"NonExecutableMatchOnly", FakeFs().NonExec("/a/node", {1, 1}), "node", "/a",
       "program-not-executable", true},
      {"NonExecutableSkippedForALaterExecutable",
       FakeFs().NonExec("/a/node", {1, 1}).Exec("/b/node", {1, 2}), "node", "/a:/b", "/b/node",
       false},
      {"DirectoryIsNotAMatch", FakeFs().Dir("/a/node", {1, 1}).Exec("/b/node", {1, 2}), "node",
       "/a:/b", "/b/node", false},
      {"DirectoryOnlyIsNotFound", FakeFs().Dir("/a/node", {1, 1}), "node", "/a",
       "program-not-found", true},
      {"OnlySelf", FakeFs().Exec("/shims/node", kSelf), "node", "/shims", "shim-no-program", true},
      {"OnlySelfTwice", FakeFs().Exec("/shims/node", kSelf).Exec("/s2/node", kSelf), "node",
       "/shims:/s2", "shim-no-program", true},
      {"NotFound", FakeFs().Exec("/usr/bin/python", {1, 1}), "node", "/usr/bin",
       "program-not-found", true},
      {"EmptyPath", FakeFs(), "node", "", "program-not-found", true},
      {"EmptyEntriesSkipped",
       // An empty entry means the working directory to a shell; never here.
       FakeFs().Exec("node", {1, 1}).Exec("/node", {1, 9}).Exec("/usr/bin/node", {1, 2}), "node",
       "::/usr/bin:", "/usr/bin/node", false},
      {"RelativeEntriesSkipped",
       FakeFs().Exec("bin/node", {1, 1}).Exec("./node", {1, 1}).Exec("/usr/bin/node", {1, 2}),
       "node", "bin:.:./x:/usr/bin", "/usr/bin/node", false},
      {"OnlyRelativeEntries", FakeFs().Exec("bin/node", {1, 1}).Exec("./node", {1, 1}), "node",
       "bin:.", "program-not-found", true},
      {"TrailingSlashInEntry", FakeFs().Exec("/usr/bin/node", {1, 2}), "node", "/usr/bin/",
       "/usr/bin/node", false},
      {"AbsoluteName", FakeFs().Exec("/opt/node", {1, 4}), "/opt/node", "/usr/bin", "/opt/node",
       false},
      {"AbsoluteNameIsSelf", FakeFs().Exec("/shims/node", kSelf), "/shims/node", "/usr/bin",
       "recursive-invocation", true},
      {"AbsoluteNameMissing", FakeFs(), "/opt/node", "/usr/bin", "program-not-found", true},
      {"AbsoluteNameNotExecutable", FakeFs().NonExec("/opt/node", {1, 4}), "/opt/node", "/usr/bin",
       "program-not-executable", true},
      {"RelativeNameWithSlashUsesCwd", FakeFs().Exec("/work/bin/node", {1, 5}), "bin/node",
       "/usr/bin", "bin/node", false},
      {"RelativeNameWithSlashMissing", FakeFs().Exec("/usr/bin/node", {1, 5}), "bin/node",
       "/usr/bin", "program-not-found", true},
      {"DotSlashNameIsSelf", FakeFs().Exec("/work/./node", kSelf), "./node", "/usr/bin",
       "recursive-invocation", true},
      {"EmptyName", FakeFs(), "", "/usr/bin", "invalid-program", true},
      {"NulInName", FakeFs().Exec("/usr/bin/node", {1, 1}), std::string("node\0x", 6), "/usr/bin",
       "invalid-program", true},
      {"TooLongName", FakeFs(), std::string(5000, 'n'), "/usr/bin", "invalid-program", true},
      {"NulInPathEntrySkipped",
       // Probed as "/usr/bin/node" (cut at the NUL) but returned with the NUL:
       // the entry must be skipped, not matched.
       FakeFs().Exec("/usr/bin/node", {1, 1}), "node", std::string("/usr/bin/node\0x", 15),
       "program-not-found", true},
      {"TooLongPathEntrySkipped", FakeFs(), "node", "/" + std::string(5000, 'd') + ":/usr/bin",
       "program-not-found", true},
  };
  for (const Case& c : cases) {
    absl::StatusOr<std::string> found =
        FindRealProgram(c.program, c.path_list, "/work", kSelf, c.fs.Probe());
    if (c.error) {
      ASSERT_FALSE(found.ok()) << c.name << " found " << (found.ok() ? *found : "");
      EXPECT_EQ(ErrorCode(found.status()), c.expected) << c.name;
    } else {
      ASSERT_TRUE(found.ok()) << c.name << ": " << found.status();
      EXPECT_EQ(*found, c.expected) << c.name;
    }
  }
}

TEST(FindRealProgramTest, CanonicalCodes) {
  FakeFs fs;
  fs.NonExec("/a/x", {1, 1}).Exec("/s/self", kSelf);
  EXPECT_EQ(FindRealProgram("y", "/a", "/", kSelf, fs.Probe()).status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(FindRealProgram("x", "/a", "/", kSelf, fs.Probe()).status().code(),
            absl::StatusCode::kPermissionDenied);
}

TEST(FindRealProgramTest, StatFileReadsTheNoteOfExecutablesOnly) {
  EXPECT_FALSE(StatFile("/bin/sh").np_exec);
  const FileFacts self = StatFile(testing::NpExecBin());
  EXPECT_TRUE(self.executable);
  EXPECT_TRUE(self.np_exec);
  // The same bytes without the execute bit are not a candidate to skip.
  testing::TempDir dir;
  const std::string plain = dir.Path("np-exec-data");
  std::filesystem::copy_file(testing::NpExecBin(), plain);
  ASSERT_EQ(chmod(plain.c_str(), 0644), 0);
  FileFacts data = StatFile(plain);
  EXPECT_TRUE(data.regular);
  EXPECT_FALSE(data.np_exec);
  // Asked not to, it reads no note: np-exec itself is then only an executable.
  const FileFacts unread = StatFile(testing::NpExecBin(), NoteCheck::kSkip);
  EXPECT_TRUE(unread.executable);
  EXPECT_EQ(unread.id, self.id);
  EXPECT_FALSE(unread.np_exec);
}

// A name with a slash names one file, where only `self` is refused: its note
// is never asked for. Along PATH every candidate's is.
TEST(FindRealProgramTest, OnlyALookupAlongPathAsksForTheNote) {
  std::vector<std::pair<std::string, NoteCheck>> asked;
  const FileProbe probe = [&asked](const std::string& path, NoteCheck note) {
    asked.emplace_back(path, note);
    return FileFacts{true, true, true, {1, 9}};
  };
  ASSERT_TRUE(FindRealProgram("/usr/bin/node", "/a:/b", "/", kSelf, probe).ok());
  ASSERT_TRUE(FindRealProgram("./node", "/a:/b", "/work", kSelf, probe).ok());
  ASSERT_TRUE(FindRealProgram("node", "/a:/b", "/", kSelf, probe).ok());
  const std::vector<std::pair<std::string, NoteCheck>> expected = {
      {"/usr/bin/node", NoteCheck::kSkip},
      {"/work/./node", NoteCheck::kSkip},
      {"/a/node", NoteCheck::kRead}};
  EXPECT_EQ(asked, expected);
}

TEST(FindRealProgramTest, StatFileOnTheRealFilesystem) {
  FileFacts sh = StatFile("/bin/sh");
  EXPECT_TRUE(sh.exists);
  EXPECT_TRUE(sh.regular);
  EXPECT_TRUE(sh.executable);
  FileFacts dir = StatFile("/");
  EXPECT_TRUE(dir.exists);
  EXPECT_FALSE(dir.regular);
  EXPECT_FALSE(dir.executable);
  EXPECT_FALSE(StatFile("/no/such/file/anywhere").exists);
  // /bin/sh through /bin and through /usr/bin (merged /usr) or not: the
  // identity is the same whenever both name one file.
  FileFacts again = StatFile("/bin/sh");
  EXPECT_EQ(sh.id, again.id);
}

}  // namespace
}  // namespace np
