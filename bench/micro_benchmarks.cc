// Micro-benchmarks of the hot pure paths (conventions.md 10): one BM_<Function>
// per function, inputs built outside the loop, the result kept in a local and
// passed to benchmark::DoNotOptimize. The design target these back is "argv
// build for a typical config (two extra mounts, three env names): at most
// 1 us of pure work" (design.md section 6).
//
// Benchmarks that need files (BM_LoadConfig, BM_ValidateMount and the
// real-filesystem variant of BM_FindRealProgram) build a temporary project
// once, in a fixture directory under $TMPDIR, and remove it at exit.
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "benchmark/benchmark.h"
#include "core/config.h"
#include "core/config_file.h"
#include "core/container_argv.h"
#include "core/mounts.h"
#include "core/resolve_tier.h"
#include "core/settings.h"
#include "shim/find_real_program.h"

namespace np {
namespace {

// A typical project config: the container tier with two extra mounts and
// three forwarded variables, plus keys that belong to the rest of
// nubos-pilot and are ignored.
constexpr char kTypicalConfig[] = R"({
  "project": {"name": "demo", "language": "typescript"},
  "workflow": {"worktree_isolation": false, "auto_commit": true, "review": "required"},
  "models": {"planner": "large", "coder": "medium"},
  "isolation": {
    "tier": "container",
    "container": {
      "runtime": "docker",
      "image": "np-test:local",
      "network": "none",
      "user": null,
      "memory": "2g",
      "cpus": 2,
      "mounts": [
        {"source": "./data", "target": "/data", "mode": "ro"},
        {"source": "./out", "target": "/out", "mode": "rw"}
      ],
      "env": ["ANTHROPIC_API_KEY", "NODE_OPTIONS", "CI"]
    }
  }
}
)";

// A temporary project on disk, made once for the whole run.
class Fixture {
 public:
  static Fixture& Get() {
    static Fixture* fixture = new Fixture();
    return *fixture;
  }
  const std::string& root() const { return root_; }
  const std::string& path_list() const { return path_list_; }

 private:
  Fixture() {
    const char* tmp = getenv("TMPDIR");
    std::string templ =
        std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/np-bench-XXXXXX";
    char* made = mkdtemp(templ.data());
    if (made == nullptr) std::abort();
    char real[4096];
    root_ = realpath(made, real) != nullptr ? real : made;
    mkdir((root_ + "/.nubos-pilot").c_str(), 0755);
    mkdir((root_ + "/data").c_str(), 0755);
    mkdir((root_ + "/out").c_str(), 0755);
    mkdir((root_ + "/src").c_str(), 0755);
    std::ofstream(root_ + "/.nubos-pilot/config.json") << kTypicalConfig;
    // A PATH of 20 directories; the program is only in the last one.
    mkdir((root_ + "/path").c_str(), 0755);
    for (int i = 0; i < 20; ++i) {
      const std::string dir = root_ + "/path/d" + std::to_string(i);
      mkdir(dir.c_str(), 0755);
      if (!path_list_.empty()) path_list_ += ':';
      path_list_ += dir;
    }
    const std::string node = root_ + "/path/d19/node";
    std::ofstream(node) << "#!/bin/sh\n";
    chmod(node.c_str(), 0755);
    std::atexit([] {
      const std::string cmd = "rm -rf '" + Get().root_ + "'";
      if (std::system(cmd.c_str()) != 0) std::fputs("np-bench: cleanup failed\n", stderr);
    });
  }
  std::string root_;
  std::string path_list_;
};

void BM_BuildContainerArgv(benchmark::State& state) {
  ContainerConfig config;
  config.image = "np-test:local";
  config.env = {"ANTHROPIC_API_KEY", "NODE_OPTIONS", "CI"};
  std::vector<ValidatedMount> mounts = {{"/home/dev/proj/data", "/data", false},
                                        {"/home/dev/proj/out", "/out", true}};
  ContainerSpawn spawn;
  spawn.project_root = "/home/dev/proj";
  spawn.cwd = "/home/dev/proj/src";
  spawn.uid = 1000;
  spawn.gid = 1000;
  spawn.name = "np-exec-12345-678901-deadbeef";
  spawn.owner = "12345:678901";
  spawn.env_names = config.env;
  spawn.program = {"node", "agent.js", "--task", "build"};
  for (auto _ : state) {
    absl::StatusOr<std::vector<std::string>> argv = BuildContainerArgv(config, mounts, spawn);
    benchmark::DoNotOptimize(argv);
  }
}
BENCHMARK(BM_BuildContainerArgv);

// LoadSettings as the run path calls it: find the project from a
// subdirectory, one open+read of config.json, parse, validate, resolve.
void BM_LoadConfig(benchmark::State& state) {
  const SettingsInputs inputs{Fixture::Get().root() + "/src", "", "", true};
  for (auto _ : state) {
    absl::StatusOr<Settings> settings = LoadSettings(inputs);
    benchmark::DoNotOptimize(settings);
  }
}
BENCHMARK(BM_LoadConfig);

// Only the parse + validate part, from text already in memory.
void BM_ParseProjectConfig(benchmark::State& state) {
  const std::string text = kTypicalConfig;
  for (auto _ : state) {
    absl::StatusOr<nlohmann::json> json = ParseConfigText(text, "config.json");
    absl::StatusOr<ProjectConfig> config =
        json.ok() ? ParseProjectConfig(*json) : absl::StatusOr<ProjectConfig>(json.status());
    benchmark::DoNotOptimize(config);
  }
}
BENCHMARK(BM_ParseProjectConfig);

// One extra mount inside the project, resolved against the real filesystem
// (realpath of the source and its checks against the forbidden sources).
void BM_ValidateMount(benchmark::State& state) {
  absl::StatusOr<MountPolicy> policy = MakeMountPolicy(Fixture::Get().root(), {});
  if (!policy.ok()) {
    state.SkipWithError("MakeMountPolicy failed");
    return;
  }
  const MountSpec mount{Fixture::Get().root() + "/data", "/data", false};
  for (auto _ : state) {
    absl::StatusOr<ValidatedMount> validated = ValidateMount(mount, *policy);
    benchmark::DoNotOptimize(validated);
  }
}
BENCHMARK(BM_ValidateMount);

// A PATH of 20 directories, the program only in the last: a fake probe (pure
// lookup cost) ...
void BM_FindRealProgram_FakeProbe(benchmark::State& state) {
  const std::string path_list = Fixture::Get().path_list();
  const std::string hit = Fixture::Get().root() + "/path/d19/node";
  const FileProbe probe = [&hit](const std::string& path, NoteCheck) {
    FileFacts facts;
    if (path == hit) {
      facts.exists = facts.regular = facts.executable = true;
      facts.id = FileId{1, 42};
    }
    return facts;
  };
  const FileId self{1, 7};
  for (auto _ : state) {
    absl::StatusOr<std::string> found = FindRealProgram("node", path_list, "/", self, probe);
    benchmark::DoNotOptimize(found);
  }
}
BENCHMARK(BM_FindRealProgram_FakeProbe);

// ... and the real filesystem through StatFile (stat + access per entry), as
// the launcher runs it.
void BM_FindRealProgram_RealFs(benchmark::State& state) {
  const std::string path_list = Fixture::Get().path_list();
  const FileId self{1, 7};
  for (auto _ : state) {
    absl::StatusOr<std::string> found = FindRealProgram("node", path_list, "/", self, StatFile);
    benchmark::DoNotOptimize(found);
  }
}
BENCHMARK(BM_FindRealProgram_RealFs);

void BM_ResolveTier(benchmark::State& state) {
  TierInputs inputs;
  inputs.project = Tier::kDirect;
  inputs.worktree_isolation = true;
  inputs.operator_file = Tier::kWorktree;
  inputs.env = Tier::kContainer;
  for (auto _ : state) {
    benchmark::DoNotOptimize(inputs);
    ResolvedTier resolved = ResolveTier(inputs);
    benchmark::DoNotOptimize(resolved);
  }
}
BENCHMARK(BM_ResolveTier);

}  // namespace
}  // namespace np

BENCHMARK_MAIN();
