#include "fuzz/fuzz_invariants.h"

#include <limits.h>
#include <stdlib.h>
#include <sys/random.h>

#include <cstdio>
#include <map>

#include "absl/strings/str_split.h"
#include "core/config.h"
#include "tests/support/docker_csv.h"

namespace np::fuzz {
namespace {

// Written here rather than taken from core/, so a bug there cannot hide
// itself from the check.
bool Inside(const std::string& path, const std::string& root) {
  if (root == "/") return !path.empty() && path[0] == '/';
  return path == root || (path.size() > root.size() && path.compare(0, root.size(), root) == 0 &&
                          path[root.size()] == '/');
}

bool Has(const std::vector<std::string>& v, const std::string& s) {
  for (const std::string& x : v) {
    if (x == s) return true;
  }
  return false;
}

bool HasPair(const std::vector<std::string>& v, const std::string& a, const std::string& b) {
  for (size_t i = 0; i + 1 < v.size(); ++i) {
    if (v[i] == a && v[i + 1] == b) return true;
  }
  return false;
}

struct Bind {
  std::string source;
  std::string target;
  bool writable = true;
};

// Reads one --mount value back the way the runtime will.
bool ParseMount(Runtime runtime, const std::string& value, Bind* bind) {
  std::vector<std::string> fields;
  if (runtime == Runtime::kDocker) {
    if (!np::testing::ParseCsvRecord(value, &fields)) return false;
  } else {
    fields = absl::StrSplit(value, ',');
  }
  int sources = 0;
  int targets = 0;
  for (const std::string& field : fields) {
    if (field == "type=bind") continue;
    if (field == "readonly") {
      bind->writable = false;
    } else if (field.rfind("source=", 0) == 0) {
      bind->source = field.substr(7);
      ++sources;
    } else if (field.rfind("target=", 0) == 0) {
      bind->target = field.substr(7);
      ++targets;
    } else {
      return false;  // A field the builder never writes: something shifted.
    }
  }
  return sources == 1 && targets == 1 && fields.size() >= 3 && fields[0] == "type=bind";
}

// Byte-by-byte and without coverage instrumentation: were this comparison
// traced (std::string::find reaches memcmp, which libFuzzer hooks), the fuzzer
// would learn the sentinel from it and feed it back as a program argument of
// its own, which is not a leak.
__attribute__((no_sanitize("coverage"))) bool Contains(const std::string& haystack,
                                                       const std::string& needle) {
  if (needle.size() > haystack.size()) return false;
  for (size_t i = 0; i + needle.size() <= haystack.size(); ++i) {
    size_t j = 0;
    while (j < needle.size() && haystack[i + j] == needle[j]) ++j;
    if (j == needle.size()) return true;
  }
  return false;
}

void CheckNoSentinel(const std::vector<std::string>& argv) {
  for (const std::string& arg : argv) {
    for (const std::string& name : SentinelNames()) {
      if (Contains(arg, SentinelValue(name))) Broken("env value in argv", argv);
    }
  }
}

}  // namespace

const std::vector<std::string>& SentinelNames() {
  static const auto* names =
      new std::vector<std::string>{"API_KEY", "GITHUB_TOKEN", "AWS_SECRET_ACCESS_KEY", "_X"};
  return *names;
}

const std::string& SentinelValue(const std::string& name) {
  static auto* values = new std::map<std::string, std::string>();
  auto it = values->find(name);
  if (it == values->end()) {
    // Random per process, so neither the corpus nor a dictionary can hold it.
    unsigned char random[12];
    if (getrandom(random, sizeof(random), 0) != static_cast<ssize_t>(sizeof(random))) abort();
    std::string value = "npfz";
    for (unsigned char byte : random) {
      value.push_back("0123456789abcdef"[byte >> 4]);
      value.push_back("0123456789abcdef"[byte & 15]);
    }
    it = values->emplace(name, value).first;
  }
  return it->second;
}

void SetSentinels() {
  for (const std::string& name : SentinelNames()) {
    setenv(name.c_str(), SentinelValue(name).c_str(), 1);
  }
}

void Broken(const std::string& what, const std::vector<std::string>& argv) {
  fprintf(stderr, "INVARIANT BROKEN: %s\nargv:", what.c_str());
  for (const std::string& arg : argv) fprintf(stderr, " [%s]", arg.c_str());
  fprintf(stderr, "\n");
  abort();
}

void CheckContainerArgv(const ContainerConfig& config, const ContainerSpawn& spawn,
                        const std::vector<std::string>& argv) {
  if (argv.size() < spawn.program.size() + 3) Broken("argv too short", argv);
  if (argv[0] != std::string(RuntimeName(config.runtime)) || argv[1] != "run") {
    Broken("not <runtime> run", argv);
  }
  const size_t image_at = argv.size() - spawn.program.size() - 1;
  if (argv[image_at] != config.image) Broken("image not right before the program", argv);
  for (size_t i = 0; i < spawn.program.size(); ++i) {
    if (argv[image_at + 1 + i] != spawn.program[i]) Broken("program not intact", argv);
  }
  const std::vector<std::string> flags(argv.begin(), argv.begin() + image_at);
  for (const char* flag : {"--rm", "-i", "--init", "--read-only"}) {
    if (!Has(flags, flag)) Broken(std::string("missing ") + flag, argv);
  }
  if (!HasPair(flags, "--network", std::string(NetworkName(config.network)))) {
    Broken("missing --network", argv);
  }
  if (!HasPair(flags, "--cap-drop", "ALL")) Broken("missing --cap-drop ALL", argv);
  if (!HasPair(flags, "--security-opt", "no-new-privileges")) {
    Broken("missing no-new-privileges", argv);
  }
  int networks = 0;
  bool project_seen = false;
  for (size_t i = 0; i < flags.size(); ++i) {
    const std::string& f = flags[i];
    if (f == "--privileged" || f == "--cap-add" || f == "-v" || f == "--volume" ||
        f.rfind("--env", 0) == 0 || f.rfind("--network=", 0) == 0) {
      Broken("forbidden flag " + f, argv);
    }
    if (f == "--network") ++networks;
    if (i + 1 >= flags.size()) continue;
    const std::string& next = flags[i + 1];
    if (f == "--network" || f == "--cap-drop" || f == "--security-opt" || f == "--name" ||
        f == "--label" || f == "-w") {
      ++i;  // Its value, which is not a flag whatever it looks like.
    } else if (f == "-e") {
      if (next != "HOME=/home/np-exec" && !ValidateEnvName(next).ok()) {
        Broken("-e carries more than a name: " + next, argv);
      }
      ++i;
    } else if (f == "--mount") {
      Bind bind;
      if (!ParseMount(config.runtime, next, &bind)) Broken("unparseable --mount " + next, argv);
      if (!project_seen) {
        project_seen = true;
        if (bind.source != spawn.project_root || bind.target != ProjectTarget(config, spawn) ||
            !bind.writable) {
          Broken("project mounted elsewhere: " + next, argv);
        }
      } else if (bind.writable && !Inside(bind.source, spawn.project_root)) {
        Broken("writable mount outside the project: " + next, argv);
      }
      ++i;
    } else if (f == "--tmpfs") {
      if (next != "/tmp:rw,nosuid,nodev,size=256m" &&
          next != "/home/np-exec:rw,nosuid,nodev,size=64m,mode=1777") {
        Broken("unexpected tmpfs " + next, argv);
      }
      ++i;
    }
  }
  if (networks != 1) Broken("--network not exactly once", argv);
  if (!project_seen) Broken("project not mounted", argv);
  CheckNoSentinel(argv);
}

void CheckBwrapArgv(const ContainerConfig& config, const ContainerSpawn& spawn,
                    const std::vector<std::string>& argv) {
  if (argv.empty() || argv[0] != "bwrap") Broken("not bwrap", argv);
  if (argv.size() < spawn.program.size() + 1) Broken("argv too short", argv);
  const size_t dashes = argv.size() - spawn.program.size() - 1;
  if (argv[dashes] != "--") Broken("-- not right before the program", argv);
  for (size_t i = 0; i < spawn.program.size(); ++i) {
    if (argv[dashes + 1 + i] != spawn.program[i]) Broken("program not intact", argv);
  }
  const std::vector<std::string> options(argv.begin(), argv.begin() + dashes);
  for (const char* flag :
       {"--unshare-user", "--unshare-pid", "--unshare-ipc", "--die-with-parent", "--new-session"}) {
    if (!Has(options, flag)) Broken(std::string("missing ") + flag, argv);
  }
  if (Has(options, "--unshare-net") != (config.network != Network::kHost)) {
    Broken("--unshare-net does not match the network setting", argv);
  }
  if (!HasPair(options, "--cap-drop", "ALL")) Broken("missing --cap-drop ALL", argv);
  if (!HasPair(options, "--remount-ro", "/")) Broken("missing --remount-ro /", argv);
  bool project_bound = false;
  for (size_t i = 0; i < options.size(); ++i) {
    const std::string& f = options[i];
    if (f == "--setenv" || f == "--dev-bind" || f == "--bind-try" || f == "--share-net" ||
        f == "--cap-add") {
      Broken("forbidden option " + f, argv);
    }
    if (f == "--bind" && i + 2 < options.size()) {
      if (options[i + 1] == spawn.project_root) project_bound = true;
      if (!Inside(options[i + 1], spawn.project_root)) {
        Broken("writable bind outside the project: " + options[i + 1], argv);
      }
      i += 2;
    } else if ((f == "--ro-bind" || f == "--ro-bind-try") && i + 2 < options.size()) {
      // np-exec's own layout comes before the project's --bind; after it are
      // the operator's extra mounts, where a read-only /etc is allowed.
      if (options[i + 1] == "/etc" && !project_bound) Broken("the whole /etc", argv);
      i += 2;
    }
  }
  for (const std::string& arg : options) {
    for (const std::string& name : SentinelNames()) {
      if (arg.rfind(name + "=", 0) == 0) Broken("NAME=value in argv", argv);
    }
  }
  CheckNoSentinel(argv);
}

namespace {

std::string Real(const std::string& path) {
  char buffer[PATH_MAX];
  std::string current = path;
  std::string rest;
  while (!current.empty()) {
    if (realpath(current.c_str(), buffer) != nullptr) {
      std::string real = buffer;
      if (rest.empty()) return real;
      return real == "/" ? "/" + rest : real + "/" + rest;
    }
    size_t slash = current.rfind('/');
    if (slash == std::string::npos) return path;
    std::string name = current.substr(slash + 1);
    rest = rest.empty() ? name : name + "/" + rest;
    current.resize(slash == 0 ? 1 : slash);
    if (current == "/" && realpath("/", buffer) == nullptr) break;
  }
  return path;
}

}  // namespace

bool TouchesControlSurface(const std::string& source) {
  const std::string real = Real(source);
  for (const char* surface : {"/var/run/docker.sock", "/run/docker.sock", "/proc", "/sys", "/dev",
                              "/run/podman/podman.sock", "/run/containerd/containerd.sock"}) {
    for (const std::string& s : {std::string(surface), Real(surface)}) {
      if (Inside(real, s) || Inside(s, real) || Inside(source, s) || Inside(s, source)) {
        return true;
      }
    }
  }
  return false;
}

bool ResolvesInside(const std::string& path, const std::string& project_real) {
  return Inside(Real(path), project_real);
}

}  // namespace np::fuzz
