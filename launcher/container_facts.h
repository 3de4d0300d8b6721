// The host facts a container plan needs, read the same way for a run, for
// `wrap` and for `doctor --deep`, so all three plan the same argv. Reads the
// environment's facts (already in HostFacts), the filesystem and randomness.
#ifndef NP_EXEC_LAUNCHER_CONTAINER_FACTS_H_
#define NP_EXEC_LAUNCHER_CONTAINER_FACTS_H_

#include <string>

#include "absl/strings/string_view.h"
#include "core/plan.h"
#include "launcher/host.h"
#include "launcher/probe.h"

namespace np {

// Podman's --init binary: a static tini when the host has one (podman's own
// catatonit reports a program that is not found as 1, not 127), else "" for
// podman's default.
std::string PodmanInitPath();

// SpawnFacts for the container tier: `cwd`, the caller's real home (the
// project may not contain it), uid:gid, the terminals, a unique container name
// "<name_prefix>-<pid>-<random>", the owner label value (empty: none, for a
// plan np-exec will not run itself), the engine socket as a forbidden mount
// source, and podman's init.
SpawnFacts ContainerFacts(const HostFacts& host, const std::string& cwd, Runtime runtime,
                          const Endpoint& endpoint, absl::string_view name_prefix,
                          std::string owner);

}  // namespace np

#endif  // NP_EXEC_LAUNCHER_CONTAINER_FACTS_H_
