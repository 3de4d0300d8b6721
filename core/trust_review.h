// What `np-exec trust` shows the operator before it records an approval, and
// what a refusal of changed content names: the keys of np-exec's part of the
// config that differ from the content trusted last, and the widenings that
// hand the sandbox something worth a second look (a credential folder, a
// secret-looking variable, the open network, root). Pure.
#ifndef NP_EXEC_CORE_TRUST_REVIEW_H_
#define NP_EXEC_CORE_TRUST_REVIEW_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "core/config.h"
#include "nlohmann/json.hpp"

namespace np {

// One key whose value differs: `before` or `after` is null where the key is
// absent on that side.
struct ConfigChange {
  std::string key;  // Dotted: "isolation.container.image".
  nlohmann::json before;
  nlohmann::json after;
};

// The leaves that differ between two canonical parts (CanonicalPart, trust.h),
// sorted by key. Objects are compared key by key; arrays and scalars whole, so
// one added mount is one change of `isolation.container.mounts`.
std::vector<ConfigChange> ConfigChanges(const nlohmann::json& before, const nlohmann::json& after);

// The dotted keys of ConfigChanges, for a message.
std::vector<std::string> ChangedKeys(const std::vector<ConfigChange>& changes);

// One plain-language warning per risky widening of `container` (validated),
// in config order: a mount of `home` itself or of a folder in it that holds
// credentials or every tool's settings (.ssh, .aws, .config, .gnupg, .kube,
// .docker, .netrc, ...), or of `/` or /etc; a home_seed entry of the same
// kind; a forwarded variable whose name looks like a credential (KEY, TOKEN,
// SECRET, PASSWORD, CREDENTIAL, AUTH, ...); network "bridge" or "host"; a
// user that is the image's own or root. `home` is the operator's HOME.
std::vector<std::string> RiskWarnings(const ContainerConfig& container, absl::string_view home);

}  // namespace np

#endif  // NP_EXEC_CORE_TRUST_REVIEW_H_
