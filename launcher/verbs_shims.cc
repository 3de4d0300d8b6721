// shims install: a directory of symlinks to np-exec, for a PATH-prepend;
// shims list: what each shim reaches; shims remove: np-exec's shims only.
#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/errors.h"
#include "core/paths.h"
#include "core/runtime.h"
#include "launcher/host.h"
#include "launcher/output.h"
#include "launcher/shim_dir.h"
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
  absl::Status valid = ValidateShimName(name);
  if (!valid.ok()) return valid;
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
  if (symlink(SelfPath().c_str(), link.c_str()) != 0) {
    return MakeError(absl::StatusCode::kFailedPrecondition, "shim-dir-unwritable",
                     absl::StrCat("cannot create ", link, ": ", strerror(errno)), {{"path", link}});
  }
  return absl::OkStatus();
}

// DIR as given, made absolute against the working directory.
absl::StatusOr<std::string> ShimDir(const CommandLine& cl, const HostFacts& host) {
  const std::string& dir = cl.shims_dir;
  if (dir.empty() || dir.find('\0') != std::string::npos) {
    return MakeError(absl::StatusCode::kInvalidArgument, "usage",
                     absl::StrCat("shims ", cl.shims_action, " needs a directory"));
  }
  return NormalizePath(dir.front() == '/' ? dir : JoinPath(host.cwd, dir));
}

nlohmann::json ShimJson(const Shim& shim) {
  return {{"name", shim.name},
          {"path", shim.path},
          {"program", shim.program.ok() ? nlohmann::json(*shim.program) : nlohmann::json(nullptr)},
          {"error", shim.program.ok() ? nlohmann::json(nullptr)
                                      : nlohmann::json(ErrorCode(shim.program.status()))}};
}

// The container config of a project on docker or podman, which runs its
// programs from images, where a shim's program need not be on the host;
// nullopt elsewhere.
std::optional<ContainerConfig> ImagesOfProject(const HostFacts& host) {
  absl::StatusOr<Settings> settings = LoadHostSettings(host);
  if (!settings.ok() || settings->resolved.tier != Tier::kContainer) return std::nullopt;
  const ContainerConfig& container = settings->config.container;
  const RuntimeTraits& traits = TraitsOf(container.runtime);
  if (!traits.uses_image || traits.program_from_host) return std::nullopt;
  return container;
}

std::string ShimLine(const Shim& shim, const std::string& image) {
  if (shim.program.ok()) return absl::StrCat("  ", shim.name, " -> ", *shim.program, "\n");
  const std::string code = ErrorCode(shim.program.status());
  if (!image.empty() && code == "shim-no-program") {
    return absl::StrCat("  ", shim.name,
                        " -> not on the host's PATH; in this project it runs in the image ", image,
                        "\n");
  }
  return absl::StrCat("  ", shim.name, " -> ",
                      code == "shim-no-program" ? "nothing real behind it on PATH"
                                                : std::string(shim.program.status().message()),
                      " (", code, ")\n");
}

absl::StatusOr<Outcome> ListShimDirs(const CommandLine& cl, const HostFacts& host) {
  std::vector<std::string> dirs;
  if (!cl.shims_dir.empty()) {
    absl::StatusOr<std::string> dir = ShimDir(cl, host);
    if (!dir.ok()) return dir.status();
    dirs.push_back(*dir);
  } else {
    dirs = ShimDirsOnPath(host);
  }
  nlohmann::json out = {{"dirs", nlohmann::json::array()}};
  std::string text;
  const std::optional<ContainerConfig> images = ImagesOfProject(host);
  for (const std::string& dir : dirs) {
    absl::StatusOr<std::vector<Shim>> shims = ListShims(dir, host);
    if (!shims.ok()) return shims.status();
    nlohmann::json entries = nlohmann::json::array();
    absl::StrAppend(&text, dir, shims->empty() ? ": no np-exec shims\n" : ":\n");
    for (const Shim& shim : *shims) {
      nlohmann::json entry = ShimJson(shim);
      const std::string image = images.has_value() ? ImageFor(*images, shim.name) : "";
      if (!image.empty() && !shim.program.ok()) entry["runs_in_image"] = image;
      entries.push_back(std::move(entry));
      absl::StrAppend(&text, ShimLine(shim, image));
    }
    out["dirs"].push_back({{"dir", dir}, {"shims", entries}});
  }
  if (dirs.empty()) text = "no directory on PATH holds an np-exec shim\n";
  if (cl.json) {
    WriteJson(out);
  } else {
    WriteAll(1, text);
  }
  return Outcome{0};
}

// Every name is checked before anything is removed: either all of them are
// np-exec's shims and go, or nothing is touched.
absl::StatusOr<Outcome> RemoveShims(const CommandLine& cl, const HostFacts& host) {
  absl::StatusOr<std::string> dir = ShimDir(cl, host);
  if (!dir.ok()) return dir.status();
  for (const std::string& name : cl.shim_names) {
    absl::Status valid = ValidateShimName(name);
    if (!valid.ok()) return valid;
    const std::string path = JoinPath(*dir, name);
    struct stat st;
    if (lstat(path.c_str(), &st) != 0) {
      return MakeError(absl::StatusCode::kNotFound, "shim-not-found",
                       absl::StrCat(path, " does not exist; np-exec shims list ", *dir,
                                    " shows the shims there"),
                       {{"path", path}});
    }
    if (!IsShim(path, host.self)) {
      return MakeError(absl::StatusCode::kFailedPrecondition, "shim-not-a-shim",
                       absl::StrCat(path,
                                    " is not an np-exec shim (a link to np-exec); np-exec "
                                    "removes only its own shims and left it alone"),
                       {{"path", path}});
    }
  }
  for (const std::string& name : cl.shim_names) {
    const std::string path = JoinPath(*dir, name);
    if (unlink(path.c_str()) != 0 && errno != ENOENT) {
      return MakeError(absl::StatusCode::kFailedPrecondition, "shim-dir-unwritable",
                       absl::StrCat("cannot remove ", path, ": ", strerror(errno)),
                       {{"path", path}});
    }
  }
  if (cl.json) {
    WriteJson({{"dir", *dir}, {"removed", cl.shim_names}});
  } else {
    WriteAll(1, absl::StrCat("removed ", cl.shim_names.size(), " shim(s) from ", *dir, ": ",
                             absl::StrJoin(cl.shim_names, ", "), "\n"));
  }
  return Outcome{0};
}

absl::StatusOr<Outcome> InstallShims(const CommandLine& cl, const HostFacts& host) {
  absl::StatusOr<std::string> absolute = ShimDir(cl, host);
  if (!absolute.ok()) return absolute.status();
  const std::string& dir = *absolute;
  absl::Status made = MakeDirs(dir);
  if (!made.ok()) return made;
  for (const std::string& name : cl.shim_names) {
    absl::Status installed = InstallOne(dir, name, host);
    if (!installed.ok()) return installed;
  }
  nlohmann::json out = {{"dir", dir},
                        {"shims", cl.shim_names},
                        {"target", SelfPath()},
                        {"path_line", absl::StrCat("export PATH=\"", dir, ":$PATH\"")}};
  if (cl.preload) {
    const std::string library = InstalledInterposer();
    if (library.empty()) {
      return MakeError(absl::StatusCode::kNotFound, "preload-not-installed",
                       absl::StrCat("libnp-exec-preload.so is not next to ", SelfPath(),
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

}  // namespace

absl::StatusOr<Outcome> VerbShims(const CommandLine& cl, const HostFacts& host) {
  if (cl.shims_action == "list") return ListShimDirs(cl, host);
  if (cl.shims_action == "remove") return RemoveShims(cl, host);
  return InstallShims(cl, host);
}

}  // namespace np
