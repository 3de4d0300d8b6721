// A temporary directory removed at the end of the test, with helpers to lay
// out projects. Test-only.
#ifndef NP_EXEC_TESTS_SUPPORT_TEMP_DIR_H_
#define NP_EXEC_TESTS_SUPPORT_TEMP_DIR_H_

#include <sys/types.h>

#include <string>

namespace np::testing {

class TempDir {
 public:
  // Created under $TMPDIR (default /tmp) with mkdtemp; resolved to its real path.
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  // Writes `content` to path()/rel (parents created); returns the full path.
  std::string Write(const std::string& rel, const std::string& content, mode_t mode = 0644) const;
  // Creates path()/rel and its parents; returns the full path.
  std::string MakeDir(const std::string& rel) const;
  // path()/rel.
  std::string Path(const std::string& rel) const;

 private:
  std::string path_;
};

// Makes `dir` a nubos-pilot project: dir/.nubos-pilot/ and, when
// `config_json` is not empty, dir/.nubos-pilot/config.json, which the
// operator then trusts (`np-exec trust` in the tests' own state store, see
// BaseEnv), as an operator who configured the project would; tests of trust
// itself pass `trust` false.
void MakeProject(const std::string& dir, const std::string& config_json = "", bool trust = true);

// Runs `np-exec trust` in `project` with BaseEnv(); a config np-exec refuses
// stays untrusted (its spawns are refused for their own reason first).
void TrustProject(const std::string& project);

std::string ReadFile(const std::string& path);
bool FileExists(const std::string& path);

}  // namespace np::testing

#endif  // NP_EXEC_TESTS_SUPPORT_TEMP_DIR_H_
