// Invariants every argv np-exec builds must keep, whatever the input. Each
// check aborts (so libFuzzer records a crash) with a line saying which broke.
// Fuzzing only.
#ifndef NP_EXEC_FUZZ_FUZZ_INVARIANTS_H_
#define NP_EXEC_FUZZ_FUZZ_INVARIANTS_H_

#include <string>
#include <vector>

#include "core/config.h"
#include "core/container_argv.h"

namespace np::fuzz {

// Forwarded variables the fuzzers use, each set in the process environment to
// a sentinel value at start, so an argv that ever carried a value is caught.
const std::vector<std::string>& SentinelNames();
const std::string& SentinelValue(const std::string& name);
void SetSentinels();

[[noreturn]] void Broken(const std::string& what, const std::vector<std::string>& argv);

// docker/podman: run --rm -i --init --network N --cap-drop ALL --security-opt
// no-new-privileges --read-only before the image; -e NAME only; the project
// mounted as given; every writable bind inside the project.
void CheckContainerArgv(const ContainerConfig& config, const ContainerSpawn& spawn,
                        const std::vector<std::string>& argv);

// bwrap: namespaces, --unshare-net unless host, --cap-drop ALL,
// --die-with-parent, --remount-ro /; no value or name=value of a forwarded
// variable; every --bind inside the project.
void CheckBwrapArgv(const ContainerConfig& config, const ContainerSpawn& spawn,
                    const std::vector<std::string>& argv);

// Independent of core: the real path of `source` (deepest existing ancestor)
// is not, is not under and does not contain a control surface.
bool TouchesControlSurface(const std::string& source);

// Independent of core: `path` resolves inside `project_real`.
bool ResolvesInside(const std::string& path, const std::string& project_real);

}  // namespace np::fuzz

#endif  // NP_EXEC_FUZZ_FUZZ_INVARIANTS_H_
