// init: writes a working config for what this machine has (core/init_config.h
// decides; this asks the runtimes and the host, writes the files and trusts
// what it wrote).
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <optional>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/errors.h"
#include "core/init_config.h"
#include "core/mounts.h"
#include "core/paths.h"
#include "core/plan.h"
#include "core/project_location.h"
#include "core/trust_review.h"
#include "launcher/output.h"
#include "launcher/runtime/driver.h"
#include "launcher/state/nofollow_path.h"
#include "launcher/state/state_store.h"
#include "launcher/verbs.h"
#include "launcher/verbs_trust.h"
#include "shim/find_real_program.h"

namespace np {
namespace {

std::string WhyNot(const ProbeResult& probe) {
  std::string why = probe.detail.empty() ? probe.reason : probe.detail;
  if (!probe.fix.empty()) absl::StrAppend(&why, " (", probe.fix, ")");
  return why;
}

// Each runtime, probed as doctor does, and the agent images each engine holds.
std::vector<InitRuntimeState> ProbeRuntimes(const HostFacts& host,
                                            const std::optional<Runtime>& only) {
  std::vector<InitRuntimeState> states;
  for (const RuntimeTraits& traits : AllRuntimes()) {
    if (only.has_value() && traits.runtime != *only) continue;
    const RuntimeDriver& driver = DriverFor(traits.runtime);
    const Endpoint endpoint = driver.Resolve(host);
    const ProbeResult probe = driver.Probe(host, endpoint, ProbeDepth::kFull);
    InitRuntimeState state;
    state.runtime = traits.runtime;
    state.available = probe.available;
    if (!probe.available) state.why_not = WhyNot(probe);
    if (probe.available && traits.uses_image) {
      for (const AgentRecipe& recipe : AgentRecipes()) {
        if (driver.ImagePresent(recipe.image, endpoint, host) == true) {
          state.agent_images.push_back(recipe.name);
        }
      }
    }
    states.push_back(std::move(state));
  }
  return states;
}

// The agent CLIs on the caller's PATH (np-exec's shims skipped), with what a
// bubblewrap sandbox must mount for each; one under /usr needs nothing.
std::vector<HostAgent> FindHostAgents(const HostFacts& host) {
  std::vector<HostAgent> found;
  for (const AgentRecipe& recipe : AgentRecipes()) {
    absl::StatusOr<std::string> path =
        FindRealProgram(recipe.name, host.path, host.cwd, host.self, StatFile);
    if (!path.ok() || !absl::StartsWith(*path, "/")) continue;
    absl::StatusOr<std::string> real = ResolveRealPath(*path, "program-not-found");
    if (!real.ok()) continue;
    HostAgent agent{recipe.name, {}};
    if (!IsInside(*path, "/usr") || !IsInside(*real, "/usr"))
      agent.mounts = FixMounts(*path, *real);
    found.push_back(std::move(agent));
  }
  return found;
}

absl::Status Unsafe(absl::string_view what, absl::string_view why) {
  return MakeError(absl::StatusCode::kFailedPrecondition, "init-unsafe-path",
                   absl::StrCat(what, " ", why,
                                "; np-exec init writes only plain files and "
                                "folders, never through a link; nothing was written"),
                   {{"path", what}});
}

// The files init writes, opened before any is written, relative to the
// working directory's descriptor and never through a link.
struct InitFiles {
  int dir = -1;        // The working directory.
  int state_dir = -1;  // Its .nubos-pilot/ (made when missing).
  int gitignore = -1;  // Its .gitignore (made when missing).
  ~InitFiles() {
    for (int fd : {dir, state_dir, gitignore}) {
      if (fd >= 0) close(fd);
    }
  }
};

absl::Status ConfigExists(const std::string& cwd) {
  return MakeError(absl::StatusCode::kAlreadyExists, "init-config-exists",
                   absl::StrCat(JoinPath(cwd, ".nubos-pilot/config.json"),
                                " is already there and np-exec init never replaces it; review it "
                                "with np-exec trust --show (or remove it and run init again)"),
                   {{"path", JoinPath(cwd, ".nubos-pilot/config.json")}});
}

// Every check comes before the first write: a refused init leaves the folder
// as it was.
absl::Status OpenInitFiles(const std::string& cwd, InitFiles& files) {
  files.dir = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (files.dir < 0) return Unsafe(cwd, absl::StrCat("cannot be opened: ", strerror(errno)));
  const std::string state_path = JoinPath(cwd, ".nubos-pilot");
  const std::string gitignore_path = JoinPath(cwd, ".gitignore");
  // The checks look without following a link; the opens below refuse one
  // again (O_NOFOLLOW), so a swap in between writes nothing through it.
  struct stat st;
  const bool has_state_dir = fstatat(files.dir, ".nubos-pilot", &st, AT_SYMLINK_NOFOLLOW) == 0;
  if (has_state_dir && !S_ISDIR(st.st_mode)) return Unsafe(state_path, "is a link or not a folder");
  if (has_state_dir &&
      fstatat(files.dir, ".nubos-pilot/config.json", &st, AT_SYMLINK_NOFOLLOW) == 0) {
    return ConfigExists(cwd);
  }
  if (fstatat(files.dir, ".gitignore", &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISREG(st.st_mode)) {
    return Unsafe(gitignore_path, "is a link or not a plain file");
  }
  if (!has_state_dir && mkdirat(files.dir, ".nubos-pilot", 0755) != 0 && errno != EEXIST) {
    return Unsafe(state_path, absl::StrCat("cannot be made: ", strerror(errno)));
  }
  files.state_dir = OpenSubdirNoFollow(files.dir, ".nubos-pilot");
  if (files.state_dir < 0) return Unsafe(state_path, "is a link or not a folder");
  files.gitignore = openat(files.dir, ".gitignore",
                           O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, 0644);
  if (files.gitignore < 0 || fstat(files.gitignore, &st) != 0 || !S_ISREG(st.st_mode)) {
    return Unsafe(gitignore_path, "is a link or not a plain file");
  }
  return absl::OkStatus();
}

absl::Status WriteConfig(const InitFiles& files, const std::string& cwd, const std::string& text) {
  const int fd = openat(files.state_dir, "config.json",
                        O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0 && errno == EEXIST) return ConfigExists(cwd);
  const bool ok = fd >= 0 && WriteAll(fd, text) && fsync(fd) == 0;
  if (fd >= 0) close(fd);
  if (!ok) return Unsafe(JoinPath(cwd, ".nubos-pilot/config.json"), "cannot be written");
  return absl::OkStatus();
}

// Adds the audit log to .gitignore unless it is already ignored; true when added.
absl::StatusOr<bool> IgnoreAuditLog(const InitFiles& files, const std::string& cwd) {
  std::string text;
  char buf[4096];
  ssize_t n;
  while ((n = read(files.gitignore, buf, sizeof buf)) > 0 && text.size() < (1 << 20)) {
    text.append(buf, static_cast<size_t>(n));
  }
  if (n < 0) return Unsafe(JoinPath(cwd, ".gitignore"), "cannot be read");
  if (GitignoreCoversAudit(text)) return false;
  if (lseek(files.gitignore, 0, SEEK_END) < 0 ||
      !WriteAll(files.gitignore, GitignoreAuditAddition(text))) {
    return Unsafe(JoinPath(cwd, ".gitignore"), "cannot be written");
  }
  return true;
}

// Trusts what init wrote, judged on one read through the project it made:
// the folder must still be the one written into and the bytes the ones written.
absl::StatusOr<TrustVerbOutput> TrustWritten(const InitFiles& files, const HostFacts& host,
                                             const nlohmann::json& written) {
  const absl::Status changed =
      MakeError(absl::StatusCode::kAborted, "init-config-changed",
                absl::StrCat("the config np-exec init wrote in ", host.cwd,
                             " is not what it reads back (the folder or the file changed "
                             "meanwhile); nothing was trusted: review it with np-exec trust"));
  absl::StatusOr<ProjectLocation> location = LocateProject(files.dir, host.cwd);
  if (!location.ok()) return location.status();
  struct stat st;
  if (fstat(files.dir, &st) != 0 || !location->found() || location->dev != st.st_dev ||
      location->ino != st.st_ino) {
    return changed;
  }
  // What cannot be loaded (the operator file, a file that no longer parses)
  // says so with its own code; nothing is trusted either way.
  absl::StatusOr<Settings> settings =
      LoadSettings({host.cwd, OperatorConfigPath(host), host.env_tier, false, &*location});
  if (!settings.ok()) return settings.status();
  if (settings->raw_config != written) return changed;
  return RunTrustVerbOn(TrustVerbMode::kTrust, *settings, host, {});
}

std::vector<std::string> NextSteps(const InitChoice& choice) {
  std::vector<std::string> next = choice.todo;
  next.push_back("np-exec doctor");
  if (!choice.agents.empty()) {
    next.push_back(absl::StrCat("np-exec shims install ~/.np-exec/shims ",
                                absl::StrJoin(choice.agents, " "),
                                " && export PATH=\"$HOME/.np-exec/shims:$PATH\""));
    next.push_back(absl::StrCat(choice.agents.front(), " --version"));
  } else {
    next.push_back("np-exec -- sh -c 'id; pwd'");
  }
  return next;
}

nlohmann::json RuntimesJson(const std::vector<InitRuntimeState>& states) {
  nlohmann::json out = nlohmann::json::array();
  for (const InitRuntimeState& state : states) {
    out.push_back(
        {{"runtime", RuntimeName(state.runtime)},
         {"available", state.available},
         {"why_not", state.available ? nlohmann::json(nullptr) : nlohmann::json(state.why_not)},
         {"agent_images", state.agent_images}});
  }
  return out;
}

std::string Text(const std::string& cwd, const InitChoice& choice, const std::string& config,
                 bool ignored, const TrustVerbOutput& trusted,
                 const std::vector<InitRuntimeState>& states) {
  std::string text = absl::StrCat("wrote ", JoinPath(cwd, ".nubos-pilot/config.json"), ": ",
                                  RuntimeName(choice.runtime), ", because ", choice.because, "\n");
  for (const InitRuntimeState& state : states) {
    if (!state.available) {
      absl::StrAppend(&text, "  (", TraitsOf(state.runtime).display_name, ": ", state.why_not,
                      ")\n");
    }
  }
  absl::StrAppend(&text, config, "\n");
  absl::StrAppend(&text, ignored ? "added .nubos-pilot/audit/ to .gitignore\n"
                                 : ".gitignore already ignores .nubos-pilot/audit/\n");
  absl::StrAppend(&text, trusted.text, "next:\n");
  for (const std::string& step : NextSteps(choice)) absl::StrAppend(&text, "  ", step, "\n");
  return text;
}

}  // namespace

absl::StatusOr<Outcome> VerbInit(const CommandLine& cl, const HostFacts& host) {
  InitRequest request;
  request.agents = cl.init_agents;
  if (!cl.runtime.empty()) {
    absl::StatusOr<Runtime> runtime = ParseRuntime(cl.runtime);
    if (!runtime.ok()) return runtime.status();
    request.runtime = *runtime;
  }
  absl::Status agents = ValidateInitAgents(request.agents);
  if (!agents.ok()) return agents;
  const std::vector<InitRuntimeState> states = ProbeRuntimes(host, request.runtime);
  absl::StatusOr<InitChoice> choice = ChooseInitConfig(request, states, FindHostAgents(host));
  if (!choice.ok()) return choice.status();
  InitFiles files;
  absl::Status opened = OpenInitFiles(host.cwd, files);
  if (!opened.ok()) return opened;
  const std::string config = choice->config.dump(2);
  absl::Status written = WriteConfig(files, host.cwd, config + "\n");
  if (!written.ok()) return written;
  absl::StatusOr<bool> ignored = IgnoreAuditLog(files, host.cwd);
  if (!ignored.ok()) return ignored.status();
  absl::StatusOr<TrustVerbOutput> trusted = TrustWritten(files, host, choice->config);
  if (!trusted.ok()) return trusted.status();
  if (cl.json) {
    WriteJson({{"project", host.cwd},
               {"config_path", JoinPath(host.cwd, ".nubos-pilot/config.json")},
               {"config", choice->config},
               {"runtime", RuntimeName(choice->runtime)},
               {"because", choice->because},
               {"agents", choice->agents},
               {"runtimes", RuntimesJson(states)},
               {"gitignore", *ignored ? "added" : "already"},
               {"trust", trusted->json},
               {"next", NextSteps(*choice)}});
  } else {
    WriteAll(1, Text(host.cwd, *choice, config, *ignored, *trusted, states));
  }
  return Outcome{0};
}

}  // namespace np
