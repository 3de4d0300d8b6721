// Hostile and broken input (issue 6, item 2): one table of cases, each run
// through the built np-exec in a fresh temporary project with a usable fake
// container runtime, so every refusal comes from the input and not from the
// environment. Each case asserts the exact error code of the JSON envelope on
// stderr, the exit status (125 unless the case says otherwise), and that
// nothing ran: the program is a sentinel that leaves a file when it runs, and
// the fake runtime records every call.
//
// After the table: project paths with spaces, colons, commas and quotes,
// which must work on the direct tier and be mounted intact (CSV-quoted) on
// the container tier.
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "core/config_file.h"
#include "core/project_location.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "launcher/protected_placeholders.h"
#include "tests/launcher/fakes.h"
#include "tests/support/ci.h"
#include "tests/support/docker_csv.h"

namespace np::testing {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

// What a case may change before np-exec runs.
struct Ctx {
  const Lab& lab;
  FakeEngine& engine;
  std::vector<std::string> env;
  std::vector<std::string> args = {"--", "sentinel"};
  std::string cwd;         // Default: the lab's project.
  std::string exec_path;   // Default: np-exec itself (else a shim path).
  std::string argv0;       // For shim paths.
  bool as_nobody = false;  // Run np-exec as uid/gid 65534 (needs root).
};

struct Case {
  std::string name;
  std::function<void(Ctx&)> setup;
  std::string code;
  int exit = 125;
  // In the audit log. Command-line errors are not: np-exec stops while
  // parsing its own arguments, before there is a spawn to record.
  bool logged = true;
};

std::ostream& operator<<(std::ostream& os, const Case& c) { return os << c.name; }

// "isolation.container.image: number" -> "IsolationContainerImageNumber".
std::string CamelName(const std::string& text) {
  std::string out;
  bool upper = true;
  for (char c : text) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      out.push_back(upper ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c);
      upper = false;
    } else {
      upper = true;
    }
  }
  return out;
}

// A container-tier config with the given `isolation.container` object.
json ContainerConfig(const json& container) {
  return {{"isolation", {{"tier", "container"}, {"container", container}}}};
}

json WithMount(const json& mount) { return ContainerConfig({{"mounts", json::array({mount})}}); }

std::function<void(Ctx&)> WriteConfig(const json& config) {
  return [config](Ctx& ctx) { ctx.lab.Config(config.dump()); };
}

std::function<void(Ctx&)> WriteRaw(const std::string& text) {
  return [text](Ctx& ctx) { ctx.lab.Config(text); };
}

// As a clone brings it: written without the operator's trust.
std::function<void(Ctx&)> WriteUntrusted(const std::string& text) {
  return [text](Ctx& ctx) { ctx.lab.tmp().Write("proj/.nubos-pilot/config.json", text); };
}

const std::vector<std::pair<std::string, json>>& WrongValues() {
  static const auto* values = new std::vector<std::pair<std::string, json>>{
      {"string", "s"},        {"number", 7},     {"float", 1.5},
      {"bool", true},         {"null", nullptr}, {"array", json::array({"container"})},
      {"object", {{"a", 1}}},
  };
  return *values;
}

// Each key with each JSON type it does not accept.
void AddWrongTypes(std::vector<Case>& cases) {
  struct Key {
    std::string name;
    std::function<json(const json&)> config;
    std::vector<std::string> accepted;  // Types that are valid or get another code.
    std::string code;
  };
  const std::vector<Key> keys = {
      {"isolation",
       [](const json& v) {
         return json{{"isolation", v}};
       },
       {"object"},
       "isolation-invalid-value"},
      // null is the default tier, as in the reference.
      {"isolation.tier",
       [](const json& v) {
         return json{{"isolation", {{"tier", v}}}};
       },
       {"null"},
       "isolation-invalid-tier"},
      {"isolation.container",
       [](const json& v) {
         return json{{"isolation", {{"tier", "container"}, {"container", v}}}};
       },
       {"object"},
       "isolation-invalid-value"},
      {"isolation.container.runtime",
       [](const json& v) {
         return ContainerConfig({{"runtime", v}});
       },
       {},
       "isolation-invalid-runtime"},
      {"isolation.container.image",
       [](const json& v) {
         return ContainerConfig({{"image", v}});
       },
       {"string"},
       "isolation-no-image"},
      {"isolation.container.network",
       [](const json& v) {
         return ContainerConfig({{"network", v}});
       },
       {},
       "isolation-invalid-network"},
      {"isolation.container.user",
       [](const json& v) {
         return ContainerConfig({{"user", v}});
       },
       {"null", "string"},
       "isolation-invalid-value"},
      {"isolation.container.memory",
       [](const json& v) {
         return ContainerConfig({{"memory", v}});
       },
       {"null", "number", "float"},
       "isolation-invalid-value"},
      {"isolation.container.cpus",
       [](const json& v) {
         return ContainerConfig({{"cpus", v}});
       },
       {"null", "number", "float"},
       "isolation-invalid-value"},
      {"isolation.container.mounts",
       [](const json& v) {
         return ContainerConfig({{"mounts", v}});
       },
       {"array"},
       "isolation-invalid-value"},
      {"isolation.container.env",
       [](const json& v) {
         return ContainerConfig({{"env", v}});
       },
       {"array"},
       "isolation-invalid-value"},
      {"isolation.container.env element",
       [](const json& v) {
         return ContainerConfig({{"env", json::array({v})}});
       },
       {"string"},
       "isolation-bad-env-name"},
      {"isolation.container.workdir",
       [](const json& v) {
         return ContainerConfig({{"workdir", v}});
       },
       {"null"},
       "isolation-invalid-value"},
      {"isolation.container.pull",
       [](const json& v) {
         return ContainerConfig({{"pull", v}});
       },
       {},
       "isolation-invalid-value"},
      {"isolation.container.mounts element",
       [](const json& v) { return WithMount(v); },
       {"object"},
       "isolation-bad-mount"},
      // A string source is checked against the host (MountSourceRelative below).
      {"mount.source",
       [](const json& v) {
         return WithMount({{"source", v}, {"target", "/data"}});
       },
       {"string"},
       "isolation-mount-no-source"},
      {"mount.target",
       [](const json& v) {
         return WithMount({{"source", "/usr"}, {"target", v}});
       },
       {},
       "isolation-mount-bad-target"},
      {"mount.mode",
       [](const json& v) {
         return WithMount({{"source", "/usr"}, {"target", "/data"}, {"mode", v}});
       },
       {},
       "isolation-mount-bad-mode"},
      {"workflow",
       [](const json& v) {
         return json{{"workflow", v}};
       },
       {"object"},
       "isolation-invalid-value"},
      {"workflow.worktree_isolation",
       [](const json& v) {
         return json{{"workflow", {{"worktree_isolation", v}}}};
       },
       {"bool"},
       "isolation-invalid-value"},
  };
  for (const Key& key : keys) {
    for (const auto& [type, value] : WrongValues()) {
      if (std::find(key.accepted.begin(), key.accepted.end(), type) != key.accepted.end()) {
        continue;
      }
      cases.push_back({CamelName(key.name + " " + type), WriteConfig(key.config(value)), key.code});
    }
  }
}

void AddBadValues(std::vector<Case>& cases) {
  const std::vector<std::tuple<std::string, json, std::string>> bad = {
      {"tier sandbox", {{"isolation", {{"tier", "sandbox"}}}}, "isolation-invalid-tier"},
      {"tier uppercase", {{"isolation", {{"tier", "Container"}}}}, "isolation-invalid-tier"},
      {"runtime lxc", ContainerConfig({{"runtime", "lxc"}}), "isolation-invalid-runtime"},
      {"image empty", ContainerConfig({{"image", ""}}), "isolation-no-image"},
      {"image flag", ContainerConfig({{"image", "--privileged"}}), "isolation-invalid-image"},
      {"image space", ContainerConfig({{"image", "node 22"}}), "isolation-invalid-image"},
      {"network nat", ContainerConfig({{"network", "nat"}}), "isolation-invalid-network"},
      {"user injection", ContainerConfig({{"user", "0;rm -rf /"}}), "isolation-invalid-value"},
      {"user flag", ContainerConfig({{"user", "--privileged"}}), "isolation-invalid-value"},
      {"memory words", ContainerConfig({{"memory", "lots"}}), "isolation-invalid-value"},
      {"cpus negative", ContainerConfig({{"cpus", -1}}), "isolation-invalid-value"},
      {"cpus zero", ContainerConfig({{"cpus", "0"}}), "isolation-invalid-value"},
      {"workdir relative", ContainerConfig({{"workdir", "work"}}), "isolation-invalid-value"},
      {"workdir root", ContainerConfig({{"workdir", "/"}}), "isolation-invalid-value"},
      {"workdir comma", ContainerConfig({{"workdir", "/a,b"}}), "isolation-invalid-value"},
      {"pull always", ContainerConfig({{"pull", "always"}}), "isolation-invalid-value"},
      {"unknown key under isolation",
       {{"isolation", {{"tire", "container"}}}},
       "isolation-unknown-key"},
      {"unknown key under container", ContainerConfig({{"imag", "node"}}), "isolation-unknown-key"},
      {"unknown key in mount",
       WithMount({{"source", "/usr"}, {"target", "/data"}, {"propagation", "shared"}}),
       "isolation-unknown-key"},
      {"mount mode rwx", WithMount({{"source", "/usr"}, {"target", "/data"}, {"mode", "rwx"}}),
       "isolation-mount-bad-mode"},
      {"mount without source", WithMount({{"target", "/data"}}), "isolation-mount-no-source"},
      {"mount blank source", WithMount({{"source", "  "}, {"target", "/data"}}),
       "isolation-mount-no-source"},
      {"mount source with colon", WithMount({{"source", "/usr:/etc"}, {"target", "/data"}}),
       "isolation-mount-colon-in-path"},
      {"env name with equals", ContainerConfig({{"env", {"API_KEY=secret"}}}),
       "isolation-bad-env-name"},
      {"env name with space", ContainerConfig({{"env", {"API KEY"}}}), "isolation-bad-env-name"},
      {"env name empty", ContainerConfig({{"env", {""}}}), "isolation-bad-env-name"},
      {"env name digit first", ContainerConfig({{"env", {"1X"}}}), "isolation-bad-env-name"},
      {"env name HOME", ContainerConfig({{"env", {"HOME"}}}), "isolation-bad-env-name"},
  };
  for (const auto& [name, config, code] : bad) {
    cases.push_back({CamelName(name), WriteConfig(config), code});
  }
}

void AddFileCases(std::vector<Case>& cases) {
  cases.push_back({"DeeplyNested",
                   [](Ctx& ctx) {
                     ctx.lab.Config("{\"other\":" + std::string(100000, '[') +
                                    std::string(100000, ']') + "}");
                   },
                   "config-invalid-json"});
  cases.push_back(
      {"TenMegabytes",
       [](Ctx& ctx) { ctx.lab.Config("{\"other\":\"" + std::string(10 << 20, 'x') + "\"}"); },
       "config-too-large"});
  cases.push_back({"InvalidUtf8", WriteRaw("{\"isolation\":{\"tier\":\"dir\xff\xfe\"}}"),
                   "config-invalid-json"});
  cases.push_back(
      {"InvalidUtf8InIgnoredKey", WriteRaw("{\"other\":\"\xc3\x28\"}"), "config-invalid-json"});
  cases.push_back({"NotJson", WriteRaw("isolation: container\n"), "config-invalid-json"});
  cases.push_back({"TruncatedJson", WriteRaw("{\"isolation\":{\"tier\":"), "config-invalid-json"});
  cases.push_back({"TopLevelArray", WriteRaw("[{\"isolation\":{}}]"), "config-invalid-shape"});
  // Issue 15, item 10: lax outer parsing meant direct without a word.
  cases.push_back({"DuplicateTier",
                   WriteRaw("{\"isolation\":{\"tier\":\"container\",\"tier\":\"direct\"}}"),
                   "config-duplicate-key"});
  cases.push_back({"DuplicateIsolation",
                   WriteRaw("{\"isolation\":{\"tier\":\"container\"},\"isolation\":{}}"),
                   "config-duplicate-key"});
  cases.push_back({"DuplicateNetworkDeep",
                   WriteRaw("{\"isolation\":{\"container\":{\"network\":\"none\","
                            "\"network\":\"host\"}}}"),
                   "config-duplicate-key"});
  // Issue 15, item 3: root inside only from the operator file, trusted or not.
  cases.push_back({"ProjectAsksForUidZero",
                   WriteRaw(R"({"isolation":{"tier":"container","container":{"user":"0:0"}}})"),
                   "isolation-user-root-needs-operator"});
  // Issue 14: a repository's config that widens the container tier, never
  // trusted by the operator (written raw, as a clone brings it).
  for (
      const char* widening :
      {R"({"isolation":{"tier":"container","container":{"network":"host"}}})",
       R"({"isolation":{"tier":"container","container":{"env":["AWS_SECRET_ACCESS_KEY"]}}})",
       R"({"isolation":{"tier":"container","container":{"mounts":[{"source":"/usr/share","target":"/e"}]}}})",
       R"({"isolation":{"tier":"container","container":{"user":"1000:1000"}}})"}) {
    cases.push_back({CamelName(std::string("untrusted ") + widening), WriteUntrusted(widening),
                     "isolation-config-untrusted"});
  }
  cases.push_back({"WrongCaseIsolation", WriteRaw("{\"Isolation\":{\"tier\":\"container\"}}"),
                   "isolation-unknown-key"});
  cases.push_back({"TypoIsolation", WriteRaw("{\"isolaton\":{\"tier\":\"container\"}}"),
                   "isolation-unknown-key"});
  cases.push_back({"TypoWorkflow", WriteRaw("{\"workfow\":{\"worktree_isolation\":true}}"),
                   "isolation-unknown-key"});
  cases.push_back({"TopLevelString", WriteRaw("\"container\""), "config-invalid-shape"});
  cases.push_back({"ConfigIsADirectory",
                   [](Ctx& ctx) { ctx.lab.tmp().MakeDir("proj/.nubos-pilot/config.json"); },
                   "config-not-a-file"});
  cases.push_back(
      {"ConfigIsAFifo",
       [](Ctx& ctx) {
         ASSERT_EQ(mkfifo(ctx.lab.tmp().Path("proj/.nubos-pilot/config.json").c_str(), 0644), 0);
       },
       "config-not-a-file"});
  cases.push_back(
      {"ConfigLinksToDevZero",
       [](Ctx& ctx) {
         ASSERT_EQ(
             symlink("/dev/zero", ctx.lab.tmp().Path("proj/.nubos-pilot/config.json").c_str()), 0);
       },
       "config-not-a-file"});
  cases.push_back({"ConfigDanglingSymlink",
                   [](Ctx& ctx) {
                     ASSERT_EQ(symlink(ctx.lab.tmp().Path("nowhere.json").c_str(),
                                       ctx.lab.tmp().Path("proj/.nubos-pilot/config.json").c_str()),
                               0);
                   },
                   "config-not-a-file"});
  cases.push_back({"ConfigSymlinkLoop",
                   [](Ctx& ctx) {
                     const std::string config = ctx.lab.tmp().Path("proj/.nubos-pilot/config.json");
                     ASSERT_EQ(symlink(config.c_str(), config.c_str()), 0);
                   },
                   "config-not-a-file"});
  cases.push_back({"ConfigUnreadable",
                   [](Ctx& ctx) {
                     ctx.lab.Config(R"({"isolation":{"tier":"container"}})");
                     ASSERT_EQ(
                         chmod(ctx.lab.tmp().Path("proj/.nubos-pilot/config.json").c_str(), 0), 0);
                     ctx.as_nobody = true;
                   },
                   "config-unreadable"});
  cases.push_back(
      {"OperatorConfigInvalid",
       [](Ctx& ctx) { ctx.lab.tmp().Write("scratch/xdg/nubos-pilot/config.json", "{oops"); },
       "config-invalid-json"});
  cases.push_back({"OperatorTierWrongType",
                   [](Ctx& ctx) {
                     ctx.lab.tmp().Write("scratch/xdg/nubos-pilot/config.json",
                                         R"({"isolation":{"tier":2}})");
                   },
                   "isolation-invalid-tier"});
  cases.push_back({"EnvTierBogus", [](Ctx& ctx) { SetEnv(ctx.env, "NP_EXEC_TIER", "none"); },
                   "isolation-invalid-tier"});
}

void AddMountCases(std::vector<Case>& cases) {
  auto mount = [](std::function<json(Ctx&)> make) {
    return [make](Ctx& ctx) {
      ctx.lab.tmp().MakeDir("proj/data");
      ctx.lab.Config(WithMount(make(ctx)).dump());
    };
  };
  auto ro = [](const std::string& source, const std::string& target = "/data") {
    return json{{"source", source}, {"target", target}, {"mode", "ro"}};
  };
  cases.push_back({"MountSourceWithNul", mount([ro](Ctx& ctx) {
                     return ro(ctx.lab.project() + std::string("/data\0/etc", 10));
                   }),
                   "isolation-mount-bad-source"});
  cases.push_back({"MountSourceWithDotDot",
                   mount([ro](Ctx& ctx) { return ro(ctx.lab.project() + "/data/../../../etc"); }),
                   "isolation-mount-bad-source"});
  cases.push_back({"MountSourceRelative", mount([ro](Ctx&) { return ro("data"); }),
                   "isolation-mount-bad-source"});
  cases.push_back({"MountSourceLinkLoop", mount([ro](Ctx& ctx) {
                     const std::string a = ctx.lab.tmp().Path("loop-a");
                     const std::string b = ctx.lab.tmp().Path("loop-b");
                     EXPECT_EQ(symlink(b.c_str(), a.c_str()), 0);
                     EXPECT_EQ(symlink(a.c_str(), b.c_str()), 0);
                     return ro(a);
                   }),
                   "isolation-mount-bad-source"});
  cases.push_back({"MountSourceDanglingLink", mount([ro](Ctx& ctx) {
                     const std::string link = ctx.lab.tmp().Path("dangling");
                     EXPECT_EQ(symlink("/nonexistent-np-exec/x", link.c_str()), 0);
                     return ro(link);
                   }),
                   "isolation-mount-bad-source"});
  cases.push_back({"MountSourceLinkToProc", mount([ro](Ctx& ctx) {
                     const std::string link = ctx.lab.tmp().Path("proc-link");
                     EXPECT_EQ(symlink("/proc", link.c_str()), 0);
                     return ro(link);
                   }),
                   "isolation-mount-forbidden-source"});
  cases.push_back({"MountSourceLinkIntoProc", mount([ro](Ctx& ctx) {
                     const std::string link = ctx.lab.tmp().Path("proc-self");
                     EXPECT_EQ(symlink("/proc/self/root", link.c_str()), 0);
                     return ro(link);
                   }),
                   "isolation-mount-forbidden-source"});
  cases.push_back({"MountSourceProc", mount([ro](Ctx&) { return ro("/proc"); }),
                   "isolation-mount-forbidden-source"});
  cases.push_back({"MountSourceSys", mount([ro](Ctx&) { return ro("/sys/kernel"); }),
                   "isolation-mount-forbidden-source"});
  cases.push_back({"MountSourceDev", mount([ro](Ctx&) { return ro("/dev"); }),
                   "isolation-mount-forbidden-source"});
  cases.push_back({"MountSourceDockerSocket",
                   mount([ro](Ctx&) { return ro("/var/run/docker.sock"); }),
                   "isolation-mount-forbidden-source"});
  cases.push_back({"MountSourceRunDockerSocket",
                   mount([ro](Ctx&) { return ro("/run/docker.sock"); }),
                   "isolation-mount-forbidden-source"});
  cases.push_back({"MountSourceLinkToDockerSocket", mount([ro](Ctx& ctx) {
                     const std::string link = ctx.lab.tmp().Path("sock-link");
                     EXPECT_EQ(symlink("/var/run/docker.sock", link.c_str()), 0);
                     return ro(link);
                   }),
                   "isolation-mount-forbidden-source"});
  cases.push_back({"MountSourceContainsDockerSocket", mount([ro](Ctx&) { return ro("/var/run"); }),
                   "isolation-mount-forbidden-source"});
  cases.push_back({"MountSourceTheEngineSocketInUse",
                   mount([ro](Ctx& ctx) { return ro(ctx.engine.socket_path()); }),
                   "isolation-mount-forbidden-source"});
  // Races (issue 15 item 2): a source a sandboxed program could swap for a
  // link between np-exec's check and the runtime's mount.
  cases.push_back({"MountSourceInsideTheProject", mount([ro](Ctx& ctx) {
                     ctx.lab.tmp().MakeDir("proj/data");
                     return ro(ctx.lab.tmp().Path("proj/data"));
                   }),
                   "isolation-mount-source-unstable"});
  cases.push_back({"MountSourceBelowAWorldWritableDir", mount([ro](Ctx& ctx) {
                     const std::string open_dir = ctx.lab.tmp().MakeDir("open");
                     EXPECT_EQ(chmod(open_dir.c_str(), 0777), 0);
                     ctx.lab.tmp().MakeDir("open/data");
                     return ro(ctx.lab.tmp().Path("open/data"));
                   }),
                   "isolation-mount-source-unstable"});
  cases.push_back(
      {"MountWritableOutsideProject", mount([](Ctx& ctx) {
         ctx.lab.tmp().MakeDir("outside");
         return json{{"source", ctx.lab.tmp().Path("outside")}, {"target", "/out"}, {"mode", "rw"}};
       }),
       "isolation-mount-writable-outside-project"});
  cases.push_back({"MountWritablePrefixSibling", mount([](Ctx& ctx) {
                     ctx.lab.tmp().MakeDir("proj-secrets");
                     return json{{"source", ctx.lab.tmp().Path("proj-secrets")},
                                 {"target", "/out"},
                                 {"mode", "rw"}};
                   }),
                   "isolation-mount-writable-outside-project"});
  cases.push_back({"MountSourceMissing",
                   mount([ro](Ctx& ctx) { return ro(ctx.lab.project() + "/not-there"); }),
                   "isolation-mount-source-missing"});
  for (const auto& [name, target] : std::vector<std::pair<std::string, std::string>>{
           {"MountTargetRelative", "data"},
           {"MountTargetWithComma", "/data,readonly=false"},
           {"MountTargetWithNewline", "/data\n/etc"},
           {"MountTargetWithQuote", "/da\"ta"},
           {"MountTargetWithDotDot", "/data/../etc"},
           {"MountTargetRoot", "/"},
           {"MountTargetUnderProc", "/proc/sys"},
           {"MountTargetEmpty", ""},
           {"MountTargetIsTmp", "/tmp"},
       }) {
    cases.push_back(
        {name, mount([ro, t = target](Ctx& ctx) { return ro(ctx.lab.project() + "/data", t); }),
         "isolation-mount-bad-target"});
  }
  // The reference's code for a colon, which would shift a -v spec's fields.
  cases.push_back({"MountTargetWithColon",
                   mount([ro](Ctx& ctx) { return ro(ctx.lab.project() + "/data", "/data:rw"); }),
                   "isolation-mount-colon-in-path"});
}

void AddEnvAndPathCases(std::vector<Case>& cases) {
  for (const auto& [name, list] : std::vector<std::pair<std::string, std::string>>{
           {"EnvFlagWithEquals", "API_KEY=secret"},
           {"EnvFlagWithSpace", "API KEY"},
           // Trimmed and empty items dropped, as in the reference; what is
           // left must still be a name.
           {"EnvFlagSpaceInsideAfterTrim", " API KEY "},
           {"EnvFlagEqualsAfterTrim", "A, B=1 "},
           {"EnvFlagHome", "HOME"},
       }) {
    cases.push_back({name,
                     [l = list](Ctx& ctx) {
                       ctx.args = {"--env", l, "--", "sentinel"};
                     },
                     "isolation-bad-env-name", 125, /*logged=*/false});
  }
  // A program that exists only in the working directory: PATH entries that
  // are empty or relative must never resolve against it. These exit 127, the
  // documented status of a program that is not found, not 125.
  auto only_in_cwd = [](std::function<std::string(Ctx&)> path) {
    return [path](Ctx& ctx) {
      WriteSentinelProgram(ctx.lab.project() + "/evil", ctx.lab.sentinel());
      WriteSentinelProgram(ctx.lab.project() + "/rel/evil", ctx.lab.sentinel());
      SetEnv(ctx.env, "PATH", path(ctx));
      ctx.args = {"--", "evil"};
    };
  };
  cases.push_back({"PathEmptyEntries",
                   only_in_cwd([](Ctx& ctx) { return ":" + ctx.lab.tools() + "::"; }),
                   "program-not-found", 127});
  cases.push_back({"PathOnlyEmpty", only_in_cwd([](Ctx&) { return std::string(""); }),
                   "program-not-found", 127});
  cases.push_back({"PathDotEntry", only_in_cwd([](Ctx& ctx) { return ".:" + ctx.lab.tools(); }),
                   "program-not-found", 127});
  cases.push_back({"PathRelativeEntry",
                   only_in_cwd([](Ctx& ctx) { return "rel:" + ctx.lab.tools(); }),
                   "program-not-found", 127});
  cases.push_back(
      {"PathMissingDirectoriesOnly",
       [](Ctx& ctx) { SetEnv(ctx.env, "PATH", "/nonexistent-np-exec/a:/nonexistent-np-exec/b"); },
       "program-not-found", 127});
  auto shim_loop = [](Ctx& ctx, const std::string& path_tail) {
    for (const char* dir : {"shims-a", "shims-b"}) {
      ctx.lab.tmp().MakeDir(dir);
      EXPECT_EQ(
          symlink(NpExecBin().c_str(), ctx.lab.tmp().Path(std::string(dir) + "/node").c_str()), 0);
    }
    ctx.exec_path = ctx.lab.tmp().Path("shims-a/node");
    ctx.argv0 = "node";
    ctx.args = {"tool.cjs"};
    SetEnv(ctx.env, "PATH",
           ctx.lab.tmp().Path("shims-a") + ":" + ctx.lab.tmp().Path("shims-b") + path_tail);
  };
  cases.push_back(
      {"PathLoopOfShims", [shim_loop](Ctx& ctx) { shim_loop(ctx, ""); }, "shim-no-program", 127});
  cases.push_back({"PathLoopOfShimsThroughALinkedDir",
                   [shim_loop](Ctx& ctx) {
                     shim_loop(ctx, "");
                     const std::string link = ctx.lab.tmp().Path("shims-link");
                     EXPECT_EQ(symlink(ctx.lab.tmp().Path("shims-a").c_str(), link.c_str()), 0);
                     SetEnv(ctx.env, "PATH",
                            link + ":" + ctx.lab.tmp().Path("shims-b") + ":" + link);
                   },
                   "shim-no-program", 127});
  cases.push_back({"PathLoopOfWrappers",
                   [shim_loop](Ctx& ctx) {
                     // A "node" that calls node again, in a child: the depth
                     // marker ends the chain.
                     WriteExecutable(ctx.lab.tmp().Path("wrap/node"),
                                     "#!/bin/sh\nnode \"$@\"\nexit $?\n");
                     shim_loop(ctx, ":" + ctx.lab.tmp().Path("wrap") + ":" + ctx.lab.tools());
                     ctx.args = {"--", "sentinel"};
                   },
                   "recursive-invocation"});
  cases.push_back({"DepthMarkerAtLimit", [](Ctx& ctx) { SetEnv(ctx.env, "NP_EXEC_DEPTH", "16"); },
                   "recursive-invocation"});
  cases.push_back({"DepthMarkerHuge", [](Ctx& ctx) { SetEnv(ctx.env, "NP_EXEC_DEPTH", "1000"); },
                   "recursive-invocation"});
  // A marker that is not a small non-negative number counts as the limit.
  cases.push_back({"DepthMarkerOverflowing",
                   [](Ctx& ctx) { SetEnv(ctx.env, "NP_EXEC_DEPTH", "99999999999999999999"); },
                   "recursive-invocation"});
  cases.push_back({"DepthMarkerNegative", [](Ctx& ctx) { SetEnv(ctx.env, "NP_EXEC_DEPTH", "-5"); },
                   "recursive-invocation"});
  cases.push_back({"DepthMarkerNotANumber",
                   [](Ctx& ctx) { SetEnv(ctx.env, "NP_EXEC_DEPTH", "abc"); },
                   "recursive-invocation"});
}

void AddProjectPathCases(std::vector<Case>& cases) {
  auto project_at = [](const std::string& rel, const json& config) {
    return [rel, config](Ctx& ctx) {
      const std::string dir = ctx.lab.tmp().MakeDir(rel);
      MakeProject(dir, config.dump());
      ctx.cwd = dir;
    };
  };
  cases.push_back({"ProjectPathWithNewlineOnDocker",
                   project_at("new\nline", ContainerConfig(json::object())),
                   "isolation-project-path-unsupported"});
  cases.push_back({"ProjectPathWithCarriageReturnOnDocker",
                   project_at("carriage\rreturn", ContainerConfig(json::object())),
                   "isolation-project-path-unsupported"});
  cases.push_back({"ProjectPathWithCommaOnPodman",
                   [project_at](Ctx& ctx) {
                     project_at("a,b", ContainerConfig({{"runtime", "podman"}}))(ctx);
                     WriteFakeRuntime(ctx.lab.fakes(), "podman");
                     SetEnv(ctx.env, "CONTAINER_HOST", ctx.engine.docker_host());
                   },
                   "isolation-project-path-unsupported"});
}

// Issue 14: protected paths that cannot be kept read-only, writable mounts
// that would reach one, and a state store that cannot be trusted. Each
// refuses the container tier before any runtime starts.
void WriteText(const std::string& path, const std::string& text) {
  FILE* f = fopen(path.c_str(), "w");
  ASSERT_NE(f, nullptr) << path;
  fputs(text.c_str(), f);
  fclose(f);
}

void AddProtectedPathCases(std::vector<Case>& cases) {
  auto linked = [](const std::string& rel, const std::string& target) {
    return [rel, target](Ctx& ctx) {
      ctx.lab.Config(ContainerConfig(json::object()).dump());
      ASSERT_EQ(mkdir((ctx.lab.project() + "/.git").c_str(), 0755), 0);
      const std::string path = ctx.lab.project() + "/" + rel;
      ASSERT_EQ(symlink(target.c_str(), path.c_str()), 0) << path;
    };
  };
  cases.push_back({"ProtectedEnvrcIsALink", linked(".envrc", "/etc/passwd"),
                   "isolation-protected-path-unsafe"});
  cases.push_back({"ProtectedGitHooksIsALink", linked(".git/hooks", "/tmp"),
                   "isolation-protected-path-unsafe"});
  cases.push_back(
      {"ProtectedConfigDirIsALink", linked(".claude", "/root"), "isolation-protected-path-unsafe"});
  cases.push_back({"ProtectedGitIsALink",
                   [](Ctx& ctx) {
                     ctx.lab.Config(ContainerConfig(json::object()).dump());
                     const std::string other = ctx.lab.tmp().MakeDir("elsewhere/.git");
                     const std::string path = ctx.lab.project() + "/.git";
                     ASSERT_EQ(symlink(other.c_str(), path.c_str()), 0);
                   },
                   "isolation-protected-path-unsafe"});
  cases.push_back({"GitFileIsGarbage",
                   [](Ctx& ctx) {
                     ctx.lab.Config(ContainerConfig(json::object()).dump());
                     WriteText(ctx.lab.project() + "/.git", "not a gitdir line\n");
                   },
                   "project-git-invalid"});
  cases.push_back(
      {"WritableMountOfTheGitDirectory",
       [](Ctx& ctx) {
         ASSERT_EQ(mkdir((ctx.lab.project() + "/.git").c_str(), 0755), 0);
         WriteText(ctx.lab.project() + "/.git/config", "[core]\n");
         ctx.lab.Config(
             WithMount({{"source", ctx.lab.project() + "/.git"}, {"target", "/g"}, {"mode", "rw"}})
                 .dump());
       },
       "isolation-mount-protected-source"});
  cases.push_back(
      {"WritableMountOfTheWholeProject",
       [](Ctx& ctx) {
         ctx.lab.Config(
             WithMount({{"source", ctx.lab.project()}, {"target", "/again"}, {"mode", "rw"}})
                 .dump());
       },
       "isolation-mount-protected-source"});
  auto store = [](const std::function<void(const std::string&)>& spoil) {
    return [spoil](Ctx& ctx) {
      ctx.lab.Config(ContainerConfig(json::object()).dump());
      const std::string xdg = ctx.lab.tmp().MakeDir("xdg");
      SetEnv(ctx.env, "XDG_STATE_HOME", xdg);
      spoil(xdg + "/np-exec");
    };
  };
  cases.push_back({"StateStoreOpenToOthers", store([](const std::string& dir) {
                     ASSERT_EQ(mkdir(dir.c_str(), 0700), 0);
                     ASSERT_EQ(chmod(dir.c_str(), 0777), 0);
                   }),
                   "state-store-invalid"});
  cases.push_back({"StateStoreIsALink", store([](const std::string& dir) {
                     ASSERT_EQ(symlink("/tmp", dir.c_str()), 0);
                   }),
                   "state-store-invalid"});
  cases.push_back({"StateStoreIsAFile", store([](const std::string& dir) {
                     FILE* f = fopen(dir.c_str(), "w");
                     ASSERT_NE(f, nullptr);
                     fclose(f);
                   }),
                   "state-store-invalid"});
  cases.push_back({"StateStoreSpawnLockIsALink",
                   [](Ctx& ctx) {
                     ctx.lab.Config(ContainerConfig(json::object()).dump());
                     const std::string dir = ctx.lab.tmp().MakeDir("xdg/np-exec");
                     ASSERT_EQ(chmod(dir.c_str(), 0700), 0);
                     SetEnv(ctx.env, "XDG_STATE_HOME", ctx.lab.tmp().Path("xdg"));
                     char real[PATH_MAX];
                     ASSERT_NE(realpath(ctx.lab.project().c_str(), real), nullptr);
                     const std::string lock = dir + "/" + SpawnLockName(real) + ".lock";
                     ASSERT_EQ(symlink("/etc/passwd", lock.c_str()), 0);
                   },
                   "state-store-invalid"});
}

// Issue 15 items 5 and 6: a runtime planted in the project, and a bubblewrap
// mount target through a project symlink.
void AddPlantedCases(std::vector<Case>& cases) {
  for (const char* runtime : {"docker", "podman", "bwrap"}) {
    const std::string name = runtime;
    cases.push_back({CamelName("planted " + name + " in node_modules bin"),
                     [name](Ctx& ctx) {
                       ctx.lab.Config(ContainerConfig({{"runtime", name}}).dump());
                       // The planted runtime would run the sentinel.
                       const std::string planted = ctx.lab.project() + "/node_modules/.bin";
                       WriteSentinelProgram(planted + "/" + name, ctx.lab.sentinel());
                       const std::string path = planted + ":" + ctx.lab.FakePath();
                       SetEnv(ctx.env, "PATH", path);
                       // The fakes directory holds a docker: only the planted one may be
                       // left for this runtime.
                       unlink((ctx.lab.fakes() + "/" + name).c_str());
                     },
                     "isolation-runtime-untrusted", 69});
  }
  cases.push_back(
      {"BwrapMountTargetThroughAProjectLink",
       [](Ctx& ctx) {
         ctx.lab.tmp().MakeDir("outside");
         ASSERT_EQ(symlink("../outside", (ctx.lab.project() + "/x").c_str()), 0);
         WriteFakeRuntime(ctx.lab.fakes(), "bwrap");
         json mount = {{"source", "/usr/share"}, {"target", ctx.lab.project() + "/x/mnt"}};
         ctx.lab.Config(ContainerConfig({{"runtime", "bwrap"}, {"mounts", {mount}}}).dump());
       },
       "isolation-mount-target-symlink"});
}

std::vector<Case> AllCases() {
  std::vector<Case> cases;
  AddWrongTypes(cases);
  AddBadValues(cases);
  AddFileCases(cases);
  AddMountCases(cases);
  AddEnvAndPathCases(cases);
  AddProjectPathCases(cases);
  AddProtectedPathCases(cases);
  AddPlantedCases(cases);
  return cases;
}

class HostileInputTest : public ::testing::TestWithParam<Case> {};

TEST_P(HostileInputTest, RefusedWithItsCodeAndNothingRuns) {
  const Case& c = GetParam();
  Lab lab;
  lab.FakeDocker();
  FakeEngine engine(lab.tmp().Path("engine.sock"));
  Ctx ctx{lab, engine, lab.Env(engine.docker_host()), {"--", "sentinel"}, "", "", "", false};
  c.setup(ctx);
  if (::testing::Test::HasFatalFailure()) return;
  if (ctx.as_nobody) {
    if (!IsRoot() || access("/usr/bin/setpriv", X_OK) != 0) {
      NP_NEEDS("needs root and setpriv to run np-exec as an unprivileged user");
    }
    // Only the file under test is closed to nobody; the sentinel could be
    // written if the program ran.
    ASSERT_EQ(chmod(lab.tmp().path().c_str(), 0777), 0);
  }
  std::vector<std::string> argv = {ctx.exec_path.empty() ? NpExecBin() : ctx.exec_path};
  argv.insert(argv.end(), ctx.args.begin(), ctx.args.end());
  if (ctx.as_nobody) argv = AsNobody(argv);
  RunOptions options;
  options.cwd = ctx.cwd.empty() ? lab.project() : ctx.cwd;
  options.env = ctx.env;
  options.argv0 = ctx.argv0;
  options.timeout_ms = 20000;
  RunResult r = RunProcess(argv, options);
  EXPECT_FALSE(r.timed_out) << "np-exec hung";
  EXPECT_EQ(ErrorCodeOf(r.err), c.code) << r.err;
  EXPECT_EQ(r.exit_code, c.exit) << r.err;
  EXPECT_FALSE(FileExists(lab.sentinel())) << "the program ran";
  EXPECT_FALSE(lab.Invoked("docker")) << ReadFile(lab.fakes() + "/docker.calls");
  EXPECT_FALSE(lab.Invoked("podman")) << ReadFile(lab.fakes() + "/podman.calls");
  EXPECT_TRUE(r.out.empty()) << r.out;

  // The refusal is in the audit log of the project the spawn was asked from
  // (issue 6.5), with its code. An unprivileged caller that cannot write the
  // log is told so on a line of its own, ahead of the refusal.
  int lines_expected = 1;
  absl::StatusOr<ProjectLocation> located = LocateProjectFrom(options.cwd);
  absl::StatusOr<std::string> root = located.ok() && located->found()
                                         ? absl::StatusOr<std::string>(located->root)
                                         : absl::NotFoundError("outside any project");
  const std::string log = root.ok() ? *root + "/.nubos-pilot/audit/np-exec.jsonl" : std::string();
  if (!c.logged) {
    EXPECT_TRUE(log.empty() || !FileExists(log)) << ReadFile(log);
  } else if (root.ok() && ctx.as_nobody) {
    EXPECT_THAT(r.err, HasSubstr("audit-log-unwritable"));
    lines_expected = 2;
  } else if (root.ok()) {
    // The last line is the refusal; a chain of wrappers (PathLoopOfWrappers)
    // logged its runs before it.
    std::vector<json> records = ReadJsonLines(log);
    ASSERT_FALSE(records.empty()) << r.err;
    const json& last = records.back();
    EXPECT_EQ(last.value("decision", ""), "refused") << last.dump();
    EXPECT_EQ(last.value("code", ""), c.code) << last.dump();
    EXPECT_FALSE(last.value("program", "").empty()) << last.dump();
    EXPECT_THAT(last.value("argv_digest", ""), ::testing::MatchesRegex("sha256:[0-9a-f]{64}"))
        << last.dump();
    for (size_t i = 0; i + 1 < records.size(); ++i) {
      EXPECT_EQ(records[i].value("decision", ""), "run") << records[i].dump();
    }
  }
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), lines_expected) << r.err;
}

INSTANTIATE_TEST_SUITE_P(Table, HostileInputTest, ::testing::ValuesIn(AllCases()),
                         [](const ::testing::TestParamInfo<Case>& param) {
                           return param.param.name;
                         });

TEST(HostileTableTest, HasAtLeastFortyCases) { EXPECT_GE(AllCases().size(), 40u); }

// ---------------------------------------------------------------- awkward
// project paths that must work

class AwkwardProjectPathTest : public ::testing::TestWithParam<std::string> {};

TEST_P(AwkwardProjectPathTest, WorksOnDirect) {
  Lab lab;
  const std::string dir = lab.tmp().MakeDir(GetParam());
  MakeProject(dir);
  RunResult r = lab.Run({"--", "sh", "-c", "pwd; echo \"$1\"", "sh", "arg, with: all"}, lab.Env(),
                        dir + "/.nubos-pilot");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, dir + "/.nubos-pilot\narg, with: all\n");
  RunResult status = lab.Run({"status", "--json"}, lab.Env(), dir);
  EXPECT_EQ(ParseJson(status.out)["project_root"], dir);
}

TEST_P(AwkwardProjectPathTest, MountedIntactOnDocker) {
  Lab lab;
  lab.FakeDocker();
  FakeEngine engine(lab.tmp().Path("engine.sock"));
  const std::string dir = lab.tmp().MakeDir(GetParam());
  MakeProject(dir, ContainerConfig(json::object()).dump());
  const std::string sub = lab.tmp().MakeDir(GetParam() + "/sub dir");
  RunResult r = lab.Run({"--", "node", "x.cjs"}, lab.Env(engine.docker_host()), sub);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> ran = ReadNulSeparated(lab.fakes() + "/docker.argv");
  auto mount = std::find(ran.begin(), ran.end(), "--mount");
  ASSERT_NE(mount, ran.end());
  ASSERT_NE(mount + 1, ran.end());
  std::vector<std::string> fields;
  ASSERT_TRUE(ParseCsvRecord(*(mount + 1), &fields)) << *(mount + 1);
  EXPECT_EQ(fields, (std::vector<std::string>{"type=bind", "source=" + dir, "target=" + dir}))
      << *(mount + 1);
  auto workdir = std::find(ran.begin(), ran.end(), "-w");
  ASSERT_NE(workdir, ran.end());
  EXPECT_EQ(*(workdir + 1), sub);
  // And the audit log records the same paths, intact.
  std::vector<json> lines = ReadJsonLines(dir + "/.nubos-pilot/audit/np-exec.jsonl");
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines.front()["mounts"][0]["source"], dir);
}

INSTANTIATE_TEST_SUITE_P(Paths, AwkwardProjectPathTest,
                         ::testing::Values("with space", "with:colon", "with,comma",
                                           "all of, them: here", "quote\"d", "com,ma\"quo\"te"),
                         [](const ::testing::TestParamInfo<std::string>& param) {
                           return "Path" + std::to_string(param.index);
                         });

}  // namespace
}  // namespace np::testing
