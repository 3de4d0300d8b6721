#include "launcher/runtime/podman_secrets.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "core/errors.h"
#include "core/plan.h"
#include "launcher/exec.h"
#include "launcher/host.h"
#include "launcher/subprocess.h"

namespace np {
namespace {

constexpr int kSecretTimeoutMs = 30000;

}  // namespace

std::vector<std::string> ForwardedNamesSet(const std::vector<std::string>& env_names, char** envp) {
  std::vector<std::string> set;
  for (const std::string& name : env_names) {
    // The interposer's variables never reach a runtime client (plan.h).
    const bool interposer =
        std::find(kInterposerVars.begin(), kInterposerVars.end(), name) != kInterposerVars.end();
    // Set, even to "": GetEnv points into the entry (environment.cc).
    if (!interposer && GetEnv(envp, name).data() != nullptr) set.push_back(name);
  }
  return set;
}

std::string PodmanSecretName(const std::string& container, size_t i) {
  return absl::StrCat(container, "-env-", i);
}

absl::StatusOr<std::vector<std::string>> MoveEnvToPodmanSecrets(
    const std::string& bin, const std::vector<std::string>& client_env,
    const std::string& container, const std::vector<std::string>& names,
    std::vector<std::string>& argv) {
  std::vector<std::string> made;
  std::vector<char*> envp = CStrings(client_env);
  for (size_t i = 0; i < names.size(); ++i) {
    const std::string secret = PodmanSecretName(container, i);
    absl::StatusOr<CaptureResult> created = RunAndCapture(
        {bin, "secret", "create", "--env", secret, names[i]}, envp.data(), kSecretTimeoutMs);
    if (!created.ok() || created->timed_out || created->exit_code != 0) {
      RemovePodmanSecrets(bin, client_env, made);
      return MakeError(absl::StatusCode::kUnavailable, "podman-secret-failed",
                       absl::StrCat("podman could not take the forwarded variable ", names[i],
                                    " as a secret (`podman secret create --env`); nothing ran"),
                       {{"name", names[i]}});
    }
    made.push_back(secret);
    for (size_t a = 1; a + 1 < argv.size() && argv[a] != "-w"; ++a) {
      if (argv[a] == "-e" && argv[a + 1] == names[i]) {
        argv[a] = "--secret";
        argv[a + 1] = absl::StrCat(secret, ",type=env,target=", names[i]);
        break;
      }
    }
  }
  return made;
}

void RemovePodmanSecrets(const std::string& bin, const std::vector<std::string>& env,
                         const std::vector<std::string>& secrets) {
  if (secrets.empty()) return;
  std::vector<std::string> argv = {bin, "secret", "rm"};
  argv.insert(argv.end(), secrets.begin(), secrets.end());
  std::vector<char*> envp = CStrings(env);
  (void)RunAndCapture(argv, envp.data(), kSecretTimeoutMs);
}

}  // namespace np
