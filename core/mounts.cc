#include "core/mounts.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "core/config_file.h"
#include "core/errors.h"
#include "core/paths.h"
#include "core/runtime.h"

namespace np {
namespace {

absl::Status BadSource(absl::string_view code, absl::string_view path, absl::string_view why) {
  return MakeError(absl::StatusCode::kInvalidArgument, code,
                   absl::StrCat("mount source \"", path, "\" ", why), {{"source", path}});
}

// realpath(3) of an existing path; ENOENT is reported through `missing`.
absl::StatusOr<std::string> RealPathOf(const std::string& path, absl::string_view code,
                                       bool* missing) {
  char buffer[PATH_MAX];
  if (realpath(path.c_str(), buffer) != nullptr) return std::string(buffer);
  const int err = errno;
  if (err == ENOENT || err == ENOTDIR) {
    struct stat st;
    // The path itself exists as a link whose target does not: following it
    // later could land anywhere, so it is refused rather than guessed.
    if (lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) {
      return BadSource(code, path, "is a symbolic link that leads nowhere");
    }
    *missing = true;
    return std::string();
  }
  if (err == ELOOP) return BadSource(code, path, "is a symbolic link loop");
  return BadSource(code, path, absl::StrCat("cannot be resolved: ", strerror(err)));
}

// Where the symlink `path` points, made absolute and normalised without
// following anything further; "" when `path` is not a symlink.
std::string LinkTargetAsWritten(const std::string& path) {
  struct stat st;
  if (path.empty() || path.front() != '/' || lstat(path.c_str(), &st) != 0 ||
      !S_ISLNK(st.st_mode)) {
    return "";
  }
  char buffer[PATH_MAX];
  ssize_t n = readlink(path.c_str(), buffer, sizeof(buffer) - 1);
  if (n <= 0) return "";
  std::string target(buffer, static_cast<size_t>(n));
  if (target.front() != '/') target = JoinPath(path.substr(0, path.rfind('/')), target);
  return HasDotDot(target) ? "" : NormalizePath(target);
}

}  // namespace

std::vector<std::string> LinksOnTheWay(absl::string_view path, std::string* reached) {
  std::vector<std::string> links;
  if (reached != nullptr) reached->clear();
  if (path.empty() || path.front() != '/') return links;
  std::vector<std::string> rest = absl::StrSplit(path, '/', absl::SkipEmpty());
  std::reverse(rest.begin(), rest.end());  // the next component at the back
  std::string current = "/";
  int followed = 0;
  while (!rest.empty()) {
    const std::string part = std::move(rest.back());
    rest.pop_back();
    if (part == ".") continue;
    if (part == "..") {
      current = ParentPath(current);
      continue;
    }
    const std::string next = JoinPath(current, part);
    struct stat st;
    if (lstat(next.c_str(), &st) != 0) return links;
    if (!S_ISLNK(st.st_mode)) {
      current = next;
      continue;
    }
    char buffer[PATH_MAX];
    const ssize_t n = readlink(next.c_str(), buffer, sizeof(buffer) - 1);
    if (n <= 0 || ++followed > 40) return links;
    links.push_back(next);
    const absl::string_view target(buffer, static_cast<size_t>(n));
    if (target.front() == '/') current = "/";
    std::vector<std::string> parts = absl::StrSplit(target, '/', absl::SkipEmpty());
    rest.insert(rest.end(), parts.rbegin(), parts.rend());
  }
  if (reached != nullptr) *reached = current;
  return links;
}

std::vector<std::string> DefaultForbiddenSources() {
  // Every runtime's engine endpoints and state at their default places
  // (core/runtime.cc), whichever runtime the spawn uses: an engine reached
  // from inside starts privileged containers. /run/user holds the users'
  // session endpoints (the session bus, ssh-agent, rootless podman). The
  // system bus (/run/dbus) asks systemd to start units as root, /run/systemd
  // holds its private and notify endpoints, the lock directories the host's
  // serial and package tools coordinate by. Whatever else under /run holds
  // sockets is found by walking it (core/socket_walk.h), not listed.
  std::vector<std::string> sources;
  for (const RuntimeTraits& row : AllRuntimes()) {
    for (absl::string_view path : row.host_control_paths) sources.emplace_back(path);
  }
  for (const char* path : {"/run/user", "/run/dbus", "/run/systemd", "/run/lock", "/var/lock",
                           "/proc", "/sys", "/dev"}) {
    sources.emplace_back(path);
  }
  return sources;
}

absl::StatusOr<std::string> ResolveRealPath(absl::string_view path, absl::string_view code) {
  absl::Status valid = CheckAbsolutePath(path, code);
  if (!valid.ok()) return valid;
  if (HasDotDot(path)) {
    return BadSource(code, path, "has a \"..\" component; give the path without it");
  }
  std::string current = NormalizePath(path);
  std::string rest;
  for (;;) {
    bool missing = false;
    absl::StatusOr<std::string> real = RealPathOf(current, code, &missing);
    if (!real.ok()) return real.status();
    if (!missing) return rest.empty() ? *real : JoinPath(*real, rest);
    // Not there yet: resolve the parent and keep the missing tail as written.
    size_t slash = current.rfind('/');
    std::string name = current.substr(slash + 1);
    rest = rest.empty() ? name : JoinPath(name, rest);
    current.resize(slash == 0 ? 1 : slash);
  }
}

absl::StatusOr<MountPolicy> MakeMountPolicy(absl::string_view project_root,
                                            const std::vector<std::string>& extra_forbidden) {
  MountPolicy policy;
  absl::StatusOr<std::string> project = ResolveRealPath(project_root, "invalid-path");
  if (!project.ok()) return project.status();
  policy.project_real = *std::move(project);
  // The extra entries (the engine endpoint named by DOCKER_HOST, say) are compared
  // by path: one that is not a clean absolute path would protect nothing.
  for (const std::string& extra : extra_forbidden) {
    absl::Status absolute = CheckAbsolutePath(extra, "invalid-path");
    if (!absolute.ok()) return absolute;
    if (HasDotDot(extra)) {
      return MakeError(absl::StatusCode::kInvalidArgument, "invalid-path",
                       absl::StrCat("forbidden mount source ", extra,
                                    " has a \"..\" component; name it without one"),
                       {{"path", extra}});
    }
  }
  std::vector<std::string> sources = DefaultForbiddenSources();
  sources.insert(sources.end(), extra_forbidden.begin(), extra_forbidden.end());
  // The sources share their parents (/run, /var/lib): each parent is
  // resolved once, then only the last component is looked at; a last
  // component that is a link is resolved in full. The same answer as
  // ResolveRealPath of each (every host fact read once).
  std::map<std::string, std::string> parents;  // Normalised parent -> real path ("": none).
  for (const std::string& source : sources) {
    const std::string normal = NormalizePath(source);
    policy.forbidden.push_back(normal);
    const size_t slash = normal.rfind('/');
    const std::string parent = slash == 0 ? "/" : normal.substr(0, slash);
    auto known = parents.find(parent);
    if (known == parents.end()) {
      absl::StatusOr<std::string> real = ResolveRealPath(parent, "invalid-path");
      known = parents.emplace(parent, real.ok() ? *real : "").first;
    }
    absl::StatusOr<std::string> real = std::string();
    struct stat st;
    const std::string candidate =
        known->second.empty() ? "" : JoinPath(known->second, normal.substr(slash + 1));
    if (candidate.empty() || (lstat(candidate.c_str(), &st) == 0 && S_ISLNK(st.st_mode))) {
      real = ResolveRealPath(source, "invalid-path");
    } else {
      real = candidate;
    }
    if (real.ok() && *real != normal) policy.forbidden.push_back(*real);
  }
  return policy;
}

bool TouchesForbidden(absl::string_view real_path, const MountPolicy& policy) {
  for (const std::string& forbidden : policy.forbidden) {
    if (IsInside(real_path, forbidden) || IsInside(forbidden, real_path)) return true;
  }
  return false;
}

namespace {

// `validated` with the links its configured source goes through, judged: a
// second walk that does not reach the real path judged (a link swapped in
// or out meanwhile) is unstable; a link lying in a forbidden place (a
// persistent home of the state store, /run/user) is that place's to change.
absl::StatusOr<ValidatedMount> WithLinksOnTheWay(const MountSpec& mount, const MountPolicy& policy,
                                                 ValidatedMount validated) {
  std::string reached;
  validated.links = LinksOnTheWay(NormalizePath(mount.source), &reached);
  if (reached != validated.source) {
    return MakeError(
        absl::StatusCode::kPermissionDenied, "isolation-mount-source-unstable",
        absl::StrCat("mount source \"", mount.source, "\" resolved to ", validated.source,
                     ", and to ", reached.empty() ? "nothing" : reached,
                     " a moment later: something is changing it. Nothing ran"),
        {{"source", mount.source}, {"real_source", validated.source}});
  }
  for (const std::string& link : validated.links) {
    const std::string where = ParentPath(link);
    for (const std::string& forbidden : policy.forbidden) {
      if (!IsInside(where, forbidden)) continue;
      return MakeError(
          absl::StatusCode::kPermissionDenied, "isolation-mount-forbidden-source",
          absl::StrCat("mount source \"", mount.source, "\" is reached through the link ", link,
                       ", which lies in ", forbidden,
                       ", a place np-exec never mounts (a sandbox may write there); it is "
                       "refused even read-only"),
          {{"source", mount.source}, {"link", link}});
    }
  }
  return validated;
}

}  // namespace

absl::StatusOr<ValidatedMount> ValidateMount(const MountSpec& mount, const MountPolicy& policy) {
  constexpr absl::string_view kBadSource = "isolation-mount-bad-source";
  auto forbidden = [&mount](absl::string_view real) {
    return MakeError(absl::StatusCode::kPermissionDenied, "isolation-mount-forbidden-source",
                     absl::StrCat("mount source \"", mount.source, "\" (", real,
                                  ") is or contains a host control surface (the engine "
                                  "socket, /proc, /sys or /dev) or np-exec's state store "
                                  "(every project's home); it is refused even read-only, "
                                  "because read-only does not contain a socket or a secret"),
                     {{"source", mount.source}, {"real_source", real}});
  };
  // Checked on the path as written first, so a path under /proc that cannot
  // be resolved (such as /proc/1/root) gets the same answer as /proc itself.
  if (CheckAbsolutePath(mount.source, kBadSource).ok() && !HasDotDot(mount.source) &&
      TouchesForbidden(NormalizePath(mount.source), policy)) {
    return forbidden(NormalizePath(mount.source));
  }
  // And on where a link named as the source points, as written: a link to the
  // engine endpoint dangles while the daemon is down, and is still that link.
  const std::string link_target = LinkTargetAsWritten(mount.source);
  if (!link_target.empty() && TouchesForbidden(link_target, policy)) {
    return forbidden(link_target);
  }
  absl::StatusOr<std::string> source = ResolveRealPath(mount.source, kBadSource);
  if (!source.ok()) return source.status();
  if (TouchesForbidden(*source, policy)) return forbidden(*source);
  if (mount.writable && !IsInside(*source, policy.project_real)) {
    return MakeError(
        absl::StatusCode::kPermissionDenied, "isolation-mount-writable-outside-project",
        absl::StrCat("mount source \"", mount.source, "\" (", *source, ") is outside the project ",
                     policy.project_real,
                     " and asks to be writable; that reopens the hole the container tier "
                     "closes. Mount it with \"mode\": \"ro\", or move it into the project"),
        {{"source", mount.source}, {"real_source", *source}, {"project", policy.project_real}});
  }
  struct stat st;
  if (stat(source->c_str(), &st) != 0) {
    return MakeError(absl::StatusCode::kNotFound, "isolation-mount-source-missing",
                     absl::StrCat("mount source \"", mount.source, "\" does not exist"),
                     {{"source", mount.source}});
  }
  constexpr absl::string_view kBadTarget = "isolation-mount-bad-target";
  absl::Status target_ok = CheckAbsolutePath(mount.target, kBadTarget);
  if (!target_ok.ok()) return target_ok;
  const std::string target = NormalizePath(mount.target);
  if (HasDotDot(mount.target) || target == "/" ||
      mount.target.find_first_of(",\"\n\r:") != std::string::npos || IsInside(target, "/proc") ||
      IsInside(target, "/sys") || IsInside(target, "/dev")) {
    return MakeError(absl::StatusCode::kInvalidArgument, kBadTarget,
                     absl::StrCat("mount target \"", mount.target,
                                  "\" must be an absolute path inside the container, not /, "
                                  "not under /proc, /sys or /dev, without \"..\" and without "
                                  "commas, colons, quotes or newlines"),
                     {{"target", mount.target}});
  }
  return WithLinksOnTheWay(mount, policy,
                           ValidatedMount{*std::move(source), target, mount.writable});
}

namespace {

// Why `path` (absolute, normalised) could be renamed or replaced by someone
// other than the caller and root, or "": it lies in a project (whose
// sandboxed programs can rename what is in it) or below a directory another
// user can write in.
// A link is judged by the directory that holds it (`is_link`): that is where
// it can be replaced, whatever it points at.
std::string ReplaceableBy(const std::string& path, bool is_link, uint32_t uid, uint32_t gid) {
  const std::vector<std::string> projects = ProjectsAtOrAbove(is_link ? ParentPath(path) : path);
  if (!projects.empty()) {
    return absl::StrCat("lies inside the project ", projects.front(),
                        ", whose sandboxed programs can rename what is in it");
  }
  std::string child = path;
  for (std::string dir = path;;) {
    if (dir != path) {
      struct stat st;
      struct stat entry;
      if (lstat(dir.c_str(), &st) != 0 || lstat(child.c_str(), &entry) != 0) {
        return absl::StrCat("has a component (", dir, ") np-exec cannot examine");
      }
      // The caller's own group (a user private group) and root's are not
      // "someone else"; any other group may hold other users.
      const bool others = (st.st_mode & S_IWOTH) != 0 ||
                          ((st.st_mode & S_IWGRP) != 0 && st.st_gid != gid && st.st_gid != 0);
      const bool owners_only =
          (st.st_mode & S_ISVTX) != 0 && (entry.st_uid == uid || entry.st_uid == 0);
      if ((st.st_uid != uid && st.st_uid != 0) || (others && !owners_only)) {
        return absl::StrCat("lies below ", dir, ", which another user can write in");
      }
    }
    if (dir == "/") break;
    child = dir;
    dir = ParentPath(dir);
  }
  return "";
}

}  // namespace

absl::Status CheckMountSourceStable(const ValidatedMount& mount, uint32_t uid, uint32_t gid) {
  // A writable source must lie inside the project (ValidateMount), where it
  // is always replaceable: the message says where it is writable already.
  const absl::string_view fix =
      mount.writable ? "It is writable inside the sandbox already, at its own path below the "
                       "project: use that path (or `workdir`) instead of a \"rw\" mount"
                     : "Mount a directory outside every project that only you and root can "
                       "rename";
  auto unstable = [&mount, fix](absl::string_view why) {
    return MakeError(absl::StatusCode::kPermissionDenied, "isolation-mount-source-unstable",
                     absl::StrCat("mount source ", mount.source, " ", why,
                                  ", so it could be swapped for a link between np-exec's check "
                                  "and the runtime's mount. ",
                                  fix),
                     {{"source", mount.source}});
  };
  const std::string why = ReplaceableBy(mount.source, /*is_link=*/false, uid, gid);
  if (!why.empty()) return unstable(why);
  // A link on the way is as much a part of the source as its directories: one
  // in another project (planted there by that project's sandbox) or where
  // another user can write decides what the configured path reaches.
  for (const std::string& link : mount.links) {
    const std::string link_why = ReplaceableBy(link, /*is_link=*/true, uid, gid);
    if (!link_why.empty()) {
      return unstable(absl::StrCat("is reached through the link ", link, ", which ", link_why));
    }
  }
  return absl::OkStatus();
}

absl::Status ValidateProjectMount(const MountPolicy& policy, absl::string_view home_real) {
  if (!home_real.empty()) {
    absl::Status absolute = CheckAbsolutePath(home_real, "invalid-path");
    if (!absolute.ok()) return absolute;
  }
  if (TouchesForbidden(policy.project_real, policy)) {
    return MakeError(absl::StatusCode::kPermissionDenied, "isolation-mount-forbidden-source",
                     absl::StrCat("the project root ", policy.project_real,
                                  " is or contains a host control surface and cannot be "
                                  "mounted into a container"),
                     {{"project", policy.project_real}});
  }
  if (!home_real.empty() && IsInside(home_real, policy.project_real)) {
    return MakeError(absl::StatusCode::kPermissionDenied, "isolation-project-too-broad",
                     absl::StrCat("the project root ", policy.project_real,
                                  " is your home directory or contains it; mounting it would "
                                  "hand the container every credential under ",
                                  home_real, ". Put .nubos-pilot/ in the project's own folder"),
                     {{"project", policy.project_real}, {"home", home_real}});
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<ValidatedMount>> ValidateMounts(
    const std::vector<MountSpec>& mounts, const MountPolicy& policy,
    const std::vector<std::string>& reserved_targets) {
  std::vector<ValidatedMount> validated;
  validated.reserve(mounts.size());
  std::vector<std::string> taken = reserved_targets;
  for (const MountSpec& mount : mounts) {
    absl::StatusOr<ValidatedMount> checked = ValidateMount(mount, policy);
    if (!checked.ok()) return checked.status();
    for (const std::string& used : taken) {
      if (used == checked->target) {
        return MakeError(
            absl::StatusCode::kInvalidArgument, "isolation-mount-bad-target",
            absl::StrCat("mount target \"", checked->target, "\" is already used by another mount"),
            {{"target", checked->target}});
      }
    }
    taken.push_back(checked->target);
    validated.push_back(*std::move(checked));
  }
  return validated;
}

}  // namespace np
