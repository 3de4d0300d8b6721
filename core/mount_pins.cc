#include "core/mount_pins.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "core/egress_entry.h"
#include "core/errors.h"
#include "core/sha256.h"

namespace np {

std::vector<std::string> MountCheckPrefix(const std::vector<MountExpectation>& expected) {
  std::vector<std::string> prefix = {std::string(kEgressSelfTarget), std::string(kMountCheckVerb)};
  prefix.reserve(3 + 3 * expected.size());
  for (const MountExpectation& mount : expected) {
    prefix.insert(prefix.end(),
                  {"--expect", mount.target, absl::StrCat(mount.dev, ":", mount.ino)});
  }
  prefix.emplace_back("--");
  return prefix;
}

std::vector<std::string> RemoteMountCheckPrefix(const std::vector<MountExpectation>& expected,
                                                const RemoteCheck& check,
                                                const std::string& project_target) {
  std::vector<std::string> prefix = {std::string(kEgressSelfTarget),
                                     std::string(kMountCheckVerb),
                                     "--self-build-id",
                                     check.self_build_id,
                                     "--project-nonce",
                                     project_target,
                                     check.nonce_name,
                                     Sha256Hex(check.nonce)};
  for (const MountExpectation& mount : expected) {
    prefix.insert(prefix.end(), {"--expect-ino", mount.target, absl::StrCat(mount.ino)});
  }
  prefix.emplace_back("--");
  return prefix;
}

absl::Status ProjectNotShared(absl::string_view target, absl::string_view found) {
  return MakeError(
      absl::StatusCode::kFailedPrecondition, "isolation-engine-project-not-shared",
      absl::StrCat("the engine's host mounted something else at ", target,
                   " than this host's project (", found,
                   " instead of the check file np-exec wrote for this spawn); the program did not "
                   "run. A remote engine needs the project on storage both hosts see at the same "
                   "path (NFS, a shared volume)"),
      {{"target", target}, {"found", found}});
}

absl::Status RemoteSelfMismatch(absl::string_view found) {
  return MakeError(absl::StatusCode::kFailedPrecondition, "isolation-engine-np-exec-mismatch",
                   absl::StrCat("np-exec's binary on the engine's host, bound at its path here, "
                                "is not this build (",
                                found,
                                "); the program did not run. Install the same np-exec at the same "
                                "path on both hosts"),
                   {{"found", found}});
}

absl::StatusOr<MountExpectation> ParseMountExpectation(absl::string_view target,
                                                       absl::string_view identity) {
  std::vector<absl::string_view> parts = absl::StrSplit(identity, ':');
  MountExpectation mount;
  mount.target = std::string(target);
  if (target.empty() || target.front() != '/' || parts.size() != 2 ||
      !absl::SimpleAtoi(parts[0], &mount.dev) || !absl::SimpleAtoi(parts[1], &mount.ino)) {
    return MakeError(absl::StatusCode::kInvalidArgument, "usage",
                     "mount-check takes --expect TARGET DEV:INO ... -- PROGRAM ARGS...");
  }
  return mount;
}

absl::Status ParseMountCheckOptions(const std::vector<std::string>& args,
                                    std::vector<MountExpectation>& expected,
                                    std::optional<RemoteProjectCheck>& remote) {
  const absl::Status usage =
      MakeError(absl::StatusCode::kInvalidArgument, "usage",
                "mount-check takes --expect TARGET DEV:INO ... -- PROGRAM ARGS..., or "
                "--self-build-id ID --project-nonce TARGET NAME SHA256 --expect-ino TARGET INO ... "
                "-- PROGRAM ARGS...");
  size_t i = 0;
  if (args.size() >= 6 && args[0] == "--self-build-id" && args[2] == "--project-nonce") {
    remote = RemoteProjectCheck{args[1], args[3], args[4], args[5]};
    if (args[1].empty() || args[3].empty() || args[3].front() != '/' || args[4].empty() ||
        args[4].find('/') != std::string::npos || args[5].empty()) {
      return usage;
    }
    i = 6;
  }
  for (; i < args.size(); i += 3) {
    const bool inode_only = args[i] == "--expect-ino";
    if (i + 2 >= args.size() || inode_only != remote.has_value() ||
        (!inode_only && args[i] != "--expect")) {
      return usage;
    }
    MountExpectation mount;
    if (inode_only) {
      mount = {args[i + 1], 0, 0, true};
      if (mount.target.empty() || mount.target.front() != '/' ||
          !absl::SimpleAtoi(args[i + 2], &mount.ino)) {
        return usage;
      }
    } else {
      absl::StatusOr<MountExpectation> parsed = ParseMountExpectation(args[i + 1], args[i + 2]);
      if (!parsed.ok()) return parsed.status();
      mount = *std::move(parsed);
    }
    expected.push_back(std::move(mount));
  }
  return absl::OkStatus();
}

absl::Status MountNotAsPinned(absl::string_view target) {
  return MakeError(absl::StatusCode::kFailedPrecondition, "isolation-mount-source-unstable",
                   absl::StrCat("what is mounted at ", target,
                                " is not the folder or file np-exec checked on the host: it was "
                                "swapped (renamed, or replaced by a link) between np-exec's check "
                                "and the runtime's mount; the program did not run"),
                   {{"target", target}});
}

}  // namespace np
