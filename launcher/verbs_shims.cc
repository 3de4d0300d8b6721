// shims install: a directory of symlinks to np-exec, for a PATH-prepend.
#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>

#include "absl/strings/str_cat.h"
#include "core/errors.h"
#include "core/paths.h"
#include "launcher/output.h"
#include "launcher/verbs.h"

namespace np {
namespace {

absl::Status MakeDirs(const std::string& dir) {
  std::string partial;
  for (size_t i = 1; i <= dir.size(); ++i) {
    if (i != dir.size() && dir[i] != '/') continue;
    partial = dir.substr(0, i);
    if (mkdir(partial.c_str(), 0755) != 0 && errno != EEXIST) {
      return MakeError(absl::StatusCode::kFailedPrecondition, "shim-dir-unwritable",
                       absl::StrCat("cannot create ", partial, ": ", strerror(errno)),
                       {{"dir", partial}});
    }
  }
  return absl::OkStatus();
}

absl::Status InstallOne(const std::string& dir, const std::string& name, const HostFacts& host) {
  if (name.empty() || name.find('/') != std::string::npos || name == "np-exec" || name == "." ||
      name == "..") {
    return MakeError(absl::StatusCode::kInvalidArgument, "shim-bad-name",
                     absl::StrCat("\"", name, "\" cannot be a shim name"), {{"name", name}});
  }
  const std::string link = JoinPath(dir, name);
  struct stat st;
  if (lstat(link.c_str(), &st) == 0) {
    struct stat target;
    if (stat(link.c_str(), &target) == 0 && target.st_dev == host.self.dev &&
        target.st_ino == host.self.ino) {
      return absl::OkStatus();  // Already a shim of this np-exec.
    }
    return MakeError(absl::StatusCode::kAlreadyExists, "shim-exists",
                     absl::StrCat(link,
                                  " exists and is not np-exec; np-exec does not replace "
                                  "it. Remove it or choose another directory"),
                     {{"path", link}});
  }
  if (symlink(host.self_path.c_str(), link.c_str()) != 0) {
    return MakeError(absl::StatusCode::kFailedPrecondition, "shim-dir-unwritable",
                     absl::StrCat("cannot create ", link, ": ", strerror(errno)), {{"path", link}});
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Outcome> VerbShims(const CommandLine& cl, const HostFacts& host) {
  std::string dir = cl.shims_dir;
  if (dir.empty() || dir.find('\0') != std::string::npos) {
    return MakeError(absl::StatusCode::kInvalidArgument, "usage",
                     "shims install needs a directory");
  }
  if (dir.front() != '/') dir = JoinPath(host.cwd, dir);
  dir = NormalizePath(dir);
  absl::Status made = MakeDirs(dir);
  if (!made.ok()) return made;
  for (const std::string& name : cl.shim_names) {
    absl::Status installed = InstallOne(dir, name, host);
    if (!installed.ok()) return installed;
  }
  nlohmann::json out = {{"dir", dir},
                        {"shims", cl.shim_names},
                        {"target", host.self_path},
                        {"path_line", absl::StrCat("export PATH=\"", dir, ":$PATH\"")}};
  if (cl.preload) {
    const std::string library = InstalledInterposer(host);
    if (library.empty()) {
      return MakeError(absl::StatusCode::kNotFound, "preload-not-installed",
                       absl::StrCat("libnp-exec-preload.so is not next to ", host.self_path,
                                    " or in ../lib/np-exec/"));
    }
    out["preload_line"] = absl::StrCat("export LD_PRELOAD=\"", library, "\"");
  }
  if (cl.json) {
    WriteJson(out);
  } else {
    std::string text =
        absl::StrCat("installed ", cl.shim_names.size(), " shim(s) in ", dir,
                     "\nadd them to PATH:\n  ", out["path_line"].get<std::string>(), "\n");
    if (cl.preload) {
      absl::StrAppend(&text, "load the interposer:\n  ", out["preload_line"].get<std::string>(),
                      "\n");
    }
    WriteAll(1, text);
  }
  return Outcome{0};
}

}  // namespace np
