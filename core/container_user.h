// Who a container runs as, before it runs: the ids an engine (docker,
// podman) gives the user its `--user` names, or the image's own configured
// user when there is no `--user`, resolved against the image's /etc/passwd
// and /etc/group the way their runtimes resolve it (runc's and crun's user
// lookup): a name is looked up in passwd, a number stands for itself; the
// group, when not named, is the passwd entry's, or 0 when there is none; with
// no group named, every group of the group file that lists the user's name is
// a supplementary group.
//
// A project file may choose the user (`isolation.container.user`: a name, an
// id, or "image", the image's own), but never one that ends up as uid 0 or
// gid 0 however it is spelled: "root", "0", "", "1500" without a group in an
// image with no passwd entry for 1500 (gid 0), a name that is uid 0 in the
// image, a user that the image's group file puts in group 0. In a rootful
// engine uid 0 reads root-only host files through read-only mounts and leaves
// setuid-root binaries in the project; gid 0 reads what group root may. Only
// the operator's file may ask for that. Pure: texts in, ids out.
#ifndef NP_EXEC_CORE_CONTAINER_USER_H_
#define NP_EXEC_CORE_CONTAINER_USER_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/config.h"

namespace np {

// The ids a container's process gets.
struct ContainerUserIds {
  uint32_t uid = 0;
  uint32_t gid = 0;
  std::vector<uint32_t> supplementary;  // From the group file, in its order.
};

// What the launcher learnt of the image a project-chosen user runs in.
struct ImageUserFacts {
  // The image's configured user (its config's `User`: "" is root); nullopt
  // when the engine did not say.
  std::optional<std::string> configured;
  // The image's /etc/passwd and /etc/group (their well-formed lines); empty
  // when the image has none or np-exec could not read them.
  std::string passwd;
  std::string group;
};

// The ids `spec` ("NAME_OR_UID[:GROUP_OR_GID]", or "" for the image's
// default, which is root) gets against `passwd` and `group`. Code
// `isolation-user-unresolved` when a name is not in the file that should
// hold it, or an id is out of range: the engine would refuse to start.
absl::StatusOr<ContainerUserIds> ResolveContainerUser(absl::string_view spec,
                                                      absl::string_view passwd,
                                                      absl::string_view group);

// "uid:gid" (with ",groups=a,b" when there are supplementary groups): what
// `trust` and the refusal name.
std::string DescribeContainerUser(const ContainerUserIds& ids);

// For a container whose user the project file chose (`config.user` not the
// caller's, `config.user_from_project`) on a runtime with images: the ids it
// will get in the image `image` describes. Refuses with
// `isolation-user-root-needs-operator` a uid 0, gid 0 or supplementary group
// 0, and an "image" user when `image` is null or the image's user was not
// told (np-exec cannot tell that it is not root);
// `isolation-user-unresolved` as ResolveContainerUser. OK with nullopt when
// the check does not apply (the caller's own uid:gid, or the operator's
// choice).
absl::StatusOr<std::optional<ContainerUserIds>> CheckProjectContainerUser(
    const ContainerConfig& config, const ImageUserFacts* image);

}  // namespace np

#endif  // NP_EXEC_CORE_CONTAINER_USER_H_
