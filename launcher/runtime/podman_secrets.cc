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

absl::StatusOr<std::vector<std::string>> CreatePodmanSecrets(
    const std::string& bin, const std::vector<std::string>& client_env,
    const std::vector<EnvSecret>& secrets) {
  std::vector<std::string> made;
  std::vector<char*> envp = CStrings(client_env);
  for (const EnvSecret& secret : secrets) {
    absl::StatusOr<CaptureResult> created =
        RunAndCapture({bin, "secret", "create", "--env", secret.secret, secret.name}, envp.data(),
                      kSecretTimeoutMs);
    if (!created.ok() || created->timed_out || created->exit_code != 0) {
      RemovePodmanSecrets(bin, client_env, made);
      return MakeError(absl::StatusCode::kUnavailable, "podman-secret-failed",
                       absl::StrCat("podman could not take the forwarded variable ", secret.name,
                                    " as a secret (`podman secret create --env`); nothing ran"),
                       {{"name", secret.name}});
    }
    made.push_back(secret.secret);
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
