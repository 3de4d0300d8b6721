#include "core/warm.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "core/errors.h"
#include "core/sha256.h"

namespace np {
namespace {

using nlohmann::json;

bool HasNul(absl::string_view text) { return text.find('\0') != absl::string_view::npos; }

absl::StatusOr<std::vector<std::string>> Strings(const json& object, const char* key) {
  auto it = object.find(key);
  if (it == object.end() || !it->is_array())
    return WarmProtocolError(absl::StrCat(key, " is missing"));
  std::vector<std::string> out;
  out.reserve(it->size());
  for (const json& entry : *it) {
    if (!entry.is_string()) return WarmProtocolError(absl::StrCat(key, " holds a non-string"));
    std::string text = entry.get<std::string>();
    if (HasNul(text)) return WarmProtocolError(absl::StrCat(key, " holds a NUL byte"));
    out.push_back(std::move(text));
  }
  return out;
}

}  // namespace

absl::Status WarmProtocolError(absl::string_view why) {
  return MakeError(absl::StatusCode::kDataLoss, "warm-protocol",
                   absl::StrCat("a warm sandbox's message is malformed: ", why));
}

std::string WarmColdReason(bool local_engine, bool allowlist, bool persistent_home,
                           bool has_rendezvous) {
  if (!has_rendezvous) return std::string(kWarmColdPrinted);
  if (!local_engine) return std::string(kWarmColdRemote);
  if (allowlist) return std::string(kWarmColdAllowlist);
  if (persistent_home) return std::string(kWarmColdPersistentHome);
  return "";
}

std::string WarmImageColdReason(const std::optional<std::vector<std::string>>& volumes) {
  if (!volumes.has_value()) return std::string(kWarmColdImageUnknown);
  if (!volumes->empty()) return std::string(kWarmColdImageVolumes);
  return "";
}

json WarmRequestToJson(const WarmRequest& request) {
  return {{"argv", request.argv}, {"cwd", request.cwd}, {"env", request.env}};
}

absl::StatusOr<WarmRequest> WarmRequestFromJson(const json& object) {
  if (!object.is_object()) return WarmProtocolError("not an object");
  WarmRequest request;
  absl::StatusOr<std::vector<std::string>> argv = Strings(object, "argv");
  if (!argv.ok()) return argv.status();
  if (argv->empty() || argv->front().empty()) return WarmProtocolError("argv is empty");
  request.argv = *std::move(argv);
  absl::StatusOr<std::vector<std::string>> env = Strings(object, "env");
  if (!env.ok()) return env.status();
  for (const std::string& entry : *env) {
    const size_t eq = entry.find('=');
    if (eq == std::string::npos || eq == 0)
      return WarmProtocolError("an env entry is not NAME=value");
  }
  request.env = *std::move(env);
  auto cwd = object.find("cwd");
  if (cwd == object.end() || !cwd->is_string()) return WarmProtocolError("cwd is missing");
  request.cwd = cwd->get<std::string>();
  if (request.cwd.empty() || request.cwd.front() != '/' || HasNul(request.cwd)) {
    return WarmProtocolError("cwd is not an absolute path");
  }
  return request;
}

json WarmResultToJson(const WarmResult& result) {
  return {{"exit_code", result.exit_code}, {"signal", result.signal}};
}

absl::StatusOr<WarmResult> WarmResultFromJson(const json& object) {
  if (!object.is_object()) return WarmProtocolError("the result is not an object");
  auto code = object.find("exit_code");
  auto signal = object.find("signal");
  if (code == object.end() || !code->is_number_integer() || signal == object.end() ||
      !signal->is_number_integer()) {
    return WarmProtocolError("the result has no exit_code or signal");
  }
  WarmResult result{code->get<int>(), signal->get<int>()};
  if (result.exit_code < 0 || result.exit_code > 255 || result.signal < 0 || result.signal > 64) {
    return WarmProtocolError("the result is out of range");
  }
  return result;
}

std::string WarmKeyMaterial(const std::vector<std::string>& argv,
                            const std::function<std::string(int fd)>& fd_identity,
                            absl::string_view per_spawn_dir,
                            const std::vector<std::string>& per_spawn,
                            const std::vector<std::string>& parts) {
  std::string material;
  auto add = [&material](absl::string_view text) {
    absl::StrAppend(&material, text.size(), ":", text, "\n");
  };
  // Per-spawn paths and names appear whole or inside an option's value
  // (docker's --mount type=bind,source=...).
  std::vector<std::pair<std::string, std::string>> marks;
  if (!per_spawn_dir.empty()) marks.emplace_back(per_spawn_dir, "<spawn-files>");
  for (size_t i = 0; i < per_spawn.size(); ++i) {
    if (!per_spawn[i].empty()) marks.emplace_back(per_spawn[i], absl::StrCat("<spawn-", i, ">"));
  }
  bool options = true;
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string& arg = argv[i];
    int fd = -1;
    if (options && i > 0 && (argv[i - 1] == "--bind-fd" || argv[i - 1] == "--ro-bind-fd") &&
        absl::SimpleAtoi(arg, &fd)) {
      add(absl::StrCat("fd:", fd_identity(fd)));
      continue;
    }
    if (arg == "--") options = false;
    add(absl::StrReplaceAll(arg, marks));
  }
  add("--parts--");
  for (const std::string& part : parts) add(part);
  return material;
}

std::string WarmKey(absl::string_view material) { return Sha256Hex(material); }

}  // namespace np
