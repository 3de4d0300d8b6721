#include "core/mount_pins.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "core/egress_entry.h"
#include "core/errors.h"

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

absl::Status MountNotAsPinned(absl::string_view target) {
  return MakeError(absl::StatusCode::kFailedPrecondition, "isolation-mount-source-unstable",
                   absl::StrCat("what is mounted at ", target,
                                " is not the folder or file np-exec checked on the host: it was "
                                "swapped (renamed, or replaced by a link) between np-exec's check "
                                "and the runtime's mount; the program did not run"),
                   {{"target", target}});
}

}  // namespace np
