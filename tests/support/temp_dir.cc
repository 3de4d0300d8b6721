#include "tests/support/temp_dir.h"

#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "tests/support/process.h"

namespace np::testing {

TempDir::TempDir() {
  const char* tmp = getenv("TMPDIR");
  std::string pattern = std::string(tmp != nullptr && *tmp ? tmp : "/tmp") + "/np-exec-test-XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  char real[PATH_MAX];
  path_ = realpath(pattern.c_str(), real) != nullptr ? real : pattern;
  chmod(path_.c_str(), 0755);
}

TempDir::~TempDir() {
  std::error_code ignored;
  // Tests may leave read-only or root-owned files; make them removable first.
  for (auto it = std::filesystem::recursive_directory_iterator(
           path_, std::filesystem::directory_options::skip_permission_denied, ignored);
       it != std::filesystem::recursive_directory_iterator(); it.increment(ignored)) {
    if (!it->is_symlink(ignored)) {
      std::filesystem::permissions(it->path(), std::filesystem::perms::owner_all,
                                   std::filesystem::perm_options::add, ignored);
    }
  }
  std::filesystem::remove_all(path_, ignored);
}

std::string TempDir::Path(const std::string& rel) const { return path_ + "/" + rel; }

std::string TempDir::MakeDir(const std::string& rel) const {
  std::string full = Path(rel);
  std::filesystem::create_directories(full);
  return full;
}

std::string TempDir::Write(const std::string& rel, const std::string& content, mode_t mode) const {
  std::string full = Path(rel);
  std::filesystem::create_directories(std::filesystem::path(full).parent_path());
  {
    std::ofstream file(full, std::ios::binary | std::ios::trunc);
    file << content;
  }
  chmod(full.c_str(), mode);
  return full;
}

void MakeProject(const std::string& dir, const std::string& config_json, bool trust) {
  std::filesystem::create_directories(dir + "/.nubos-pilot");
  if (!config_json.empty()) {
    {
      std::ofstream file(dir + "/.nubos-pilot/config.json", std::ios::trunc);
      file << config_json;
    }
    if (trust) TrustProject(dir);
  }
}

void TrustProject(const std::string& project) {
  RunOptions options;
  options.env = BaseEnv();
  options.cwd = project;
  options.timeout_ms = 30000;
  RunResult r = RunProcess({NpExecBin(), "trust"}, options);
  // A config np-exec refuses stays untrusted; anything else is worth seeing.
  if (r.exit_code != 0) fprintf(stderr, "np-exec trust in %s: %s", project.c_str(), r.err.c_str());
}

std::string ReadFile(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  std::stringstream buffer;
  buffer << file.rdbuf();
  return buffer.str();
}

bool FileExists(const std::string& path) {
  struct stat st;
  return lstat(path.c_str(), &st) == 0;
}

}  // namespace np::testing
