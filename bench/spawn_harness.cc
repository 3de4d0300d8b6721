// np-spawn-harness: the spawn-overhead harness (design.md section 6).
//
// Runs two or more commands in rounds, one spawn of each per round, with
// posix_spawn + waitpid, and times each spawn from just before posix_spawn to
// just after waitpid returns. Interleaving is the point: on a shared 2-core
// machine the background load drifts over seconds, and a command run in a
// block of its own would carry whatever the drift was at that moment. In a
// round every command sees about the same machine, so the per-round ratio
// (command i / command 1) cancels most of the drift; its median is the number
// to trust. The order inside a round rotates, so no command always runs right
// after the same neighbour (a warm cache, a reaped container).
//
// Usage:
//   np-spawn-harness [--runs N] [--warmup W] [--title TEXT] [--tsv FILE]
//       [--rounds FILE]
//       --cmd LABEL [--cwd DIR] [--env NAME=VALUE]... -- PROGRAM [ARGS...]
//       --cmd LABEL ... -- PROGRAM [ARGS...]
//
// The first --cmd is the baseline every ratio is taken against. --rounds
// appends every timed spawn as "TITLE<TAB>ROUND<TAB>LABEL<TAB>MS", so a script
// can take per-round ratios between any two commands of the same run. PROGRAM is
// resolved on the PATH of that command's environment. In an argument, "{n}"
// is replaced by a number unique to the spawn (for `docker run --name`).
// A command's stdout and stderr go to /dev/null; stdin is /dev/null. A spawn
// that exits non-zero is an error: the harness says which and exits 1, since a
// failing command is fast for the wrong reason.
//
// Besides the wall time, each spawn's CPU time (user + system) and peak
// resident memory come from wait4: both count the command's descendants that
// it waited for (the peak is the largest single process of the tree, as
// /usr/bin/time -v reports it), so a wrapper and what it starts count as one.
// The ratios are reported with their minimum, median and maximum over the
// rounds.
#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

extern char** environ;

namespace {

struct Command {
  std::string label;
  std::string cwd;
  std::vector<std::string> env;  // NAME=VALUE entries, the harness's own edited.
  std::vector<std::string> argv;
  std::vector<double> ms;
  std::vector<double> cpu_ms;  // User + system time of the spawn's tree.
  long max_rss_kb = 0;         // Largest peak RSS of one process of the tree, over all spawns.
  int failures = 0;
  int last_status = 0;
};

struct Options {
  int runs = 30;
  int warmup = 3;
  std::string title;
  std::string tsv;
  std::string rounds;
  std::vector<Command> commands;
};

[[noreturn]] void Usage(const char* why) {
  std::fprintf(stderr,
               "np-spawn-harness: %s\n"
               "usage: np-spawn-harness [--runs N] [--warmup W] [--title TEXT] [--tsv FILE]\n"
               "         --cmd LABEL [--cwd DIR] [--env NAME=VALUE]... -- PROGRAM [ARGS...]\n"
               "         --cmd LABEL ... -- PROGRAM [ARGS...]   (two or more commands)\n",
               why);
  std::exit(2);
}

std::vector<std::string> BaseEnvironment() {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) env.emplace_back(*e);
  return env;
}

void SetEnv(std::vector<std::string>& env, const std::string& entry) {
  const std::string name = entry.substr(0, entry.find('=') + 1);
  for (std::string& e : env) {
    if (e.compare(0, name.size(), name) == 0) {
      e = entry;
      return;
    }
  }
  env.push_back(entry);
}

Options ParseOptions(int argc, char** argv) {
  Options options;
  int i = 1;
  auto next = [&](const char* flag) -> std::string {
    if (i + 1 >= argc) Usage((std::string(flag) + " needs a value").c_str());
    return argv[++i];
  };
  for (; i < argc && std::strcmp(argv[i], "--cmd") != 0; ++i) {
    const std::string a = argv[i];
    if (a == "--runs") {
      options.runs = std::atoi(next("--runs").c_str());
    } else if (a == "--warmup") {
      options.warmup = std::atoi(next("--warmup").c_str());
    } else if (a == "--title") {
      options.title = next("--title");
    } else if (a == "--tsv") {
      options.tsv = next("--tsv");
    } else if (a == "--rounds") {
      options.rounds = next("--rounds");
    } else {
      Usage(("unknown option " + a).c_str());
    }
  }
  while (i < argc) {
    Command c;
    c.label = next("--cmd");
    c.env = BaseEnvironment();
    ++i;
    for (; i < argc && std::strcmp(argv[i], "--") != 0; ++i) {
      const std::string a = argv[i];
      if (a == "--cwd") {
        c.cwd = next("--cwd");
      } else if (a == "--env") {
        const std::string entry = next("--env");
        if (entry.find('=') == std::string::npos) Usage("--env takes NAME=VALUE");
        SetEnv(c.env, entry);
      } else {
        Usage(("unknown command option " + a).c_str());
      }
    }
    if (i >= argc) Usage("a command needs -- PROGRAM");
    ++i;
    for (; i < argc && std::strcmp(argv[i], "--cmd") != 0; ++i) c.argv.emplace_back(argv[i]);
    if (c.argv.empty()) Usage("a command needs a PROGRAM after --");
    options.commands.push_back(std::move(c));
  }
  if (options.commands.size() < 2) Usage("give at least two commands");
  if (options.runs < 1 || options.warmup < 0) Usage("bad --runs or --warmup");
  return options;
}

std::string Substitute(const std::string& arg, long unique) {
  std::string out = arg;
  const std::string n = std::to_string(unique);
  for (size_t at = out.find("{n}"); at != std::string::npos; at = out.find("{n}", at + n.size())) {
    out.replace(at, 3, n);
  }
  return out;
}

double NowMs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

// One spawn; returns the wall time in ms, or a negative value when the spawn
// failed or the command exited non-zero (its status is kept in `c`).
double SpawnOnce(Command& c, long unique) {
  std::vector<std::string> args;
  args.reserve(c.argv.size());
  for (const std::string& a : c.argv) args.push_back(Substitute(a, unique));
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<char*> envp;
  for (std::string& e : c.env) envp.push_back(e.data());
  envp.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  // The working directory is changed by the harness itself around the spawn
  // (posix_spawn_file_actions_addchdir_np needs glibc 2.29; this keeps it
  // portable and costs the same for every command).
  std::string old_cwd;
  if (!c.cwd.empty()) {
    char buffer[4096];
    if (getcwd(buffer, sizeof(buffer)) != nullptr) old_cwd = buffer;
    if (chdir(c.cwd.c_str()) != 0) {
      std::fprintf(stderr, "np-spawn-harness: cannot chdir to %s: %s\n", c.cwd.c_str(),
                   std::strerror(errno));
      std::exit(1);
    }
  }
  // Resolve PROGRAM on the command's own PATH, as execvp would, before the
  // clock starts: the lookup is the harness's cost, not the command's.
  std::string program = args[0];
  if (program.find('/') == std::string::npos) {
    std::string path = "/usr/bin:/bin";
    for (const std::string& e : c.env) {
      if (e.compare(0, 5, "PATH=") == 0) path = e.substr(5);
    }
    size_t start = 0;
    while (start <= path.size()) {
      size_t end = path.find(':', start);
      if (end == std::string::npos) end = path.size();
      const std::string candidate = path.substr(start, end - start) + "/" + args[0];
      if (end > start && access(candidate.c_str(), X_OK) == 0) {
        program = candidate;
        break;
      }
      start = end + 1;
    }
  }

  pid_t pid = 0;
  const double t0 = NowMs();
  int rc = posix_spawn(&pid, program.c_str(), &actions, nullptr, argv.data(), envp.data());
  int status = 0;
  rusage usage{};
  if (rc == 0) {
    while (wait4(pid, &status, 0, &usage) < 0 && errno == EINTR) {
    }
  }
  const double t1 = NowMs();
  posix_spawn_file_actions_destroy(&actions);
  if (!old_cwd.empty() && chdir(old_cwd.c_str()) != 0) std::exit(1);
  if (rc != 0) {
    std::fprintf(stderr, "np-spawn-harness: cannot spawn %s: %s\n", program.c_str(),
                 std::strerror(rc));
    c.last_status = -1;
    return -1;
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    c.last_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return -1;
  }
  auto ms = [](const timeval& tv) {
    return static_cast<double>(tv.tv_sec) * 1e3 + static_cast<double>(tv.tv_usec) / 1e3;
  };
  c.cpu_ms.push_back(ms(usage.ru_utime) + ms(usage.ru_stime));
  c.max_rss_kb = std::max(c.max_rss_kb, usage.ru_maxrss);
  return t1 - t0;
}

double Quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  // Nearest rank on a sorted sample; with an even count the median is the
  // mean of the two middle values.
  if (q == 0.5) {
    const size_t n = v.size();
    return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  }
  size_t rank = static_cast<size_t>(q * static_cast<double>(v.size()) + 0.999999);
  if (rank < 1) rank = 1;
  if (rank > v.size()) rank = v.size();
  return v[rank - 1];
}

}  // namespace

int main(int argc, char** argv) {
  Options options = ParseOptions(argc, argv);
  std::vector<Command>& cmds = options.commands;
  const size_t k = cmds.size();
  long unique = static_cast<long>(getpid()) * 100000;
  bool failed = false;

  for (int w = 0; w < options.warmup; ++w) {
    for (Command& c : cmds) {
      if (SpawnOnce(c, ++unique) < 0) {
        std::fprintf(stderr, "np-spawn-harness: warm-up of \"%s\" failed (status %d)\n",
                     c.label.c_str(), c.last_status);
        return 1;
      }
    }
  }
  for (Command& c : cmds) c.cpu_ms.clear();
  // ratios[i][r]: command i / command 0 in round r.
  std::vector<std::vector<double>> ratios(k);
  FILE* rounds = options.rounds.empty() ? nullptr : std::fopen(options.rounds.c_str(), "a");
  for (int r = 0; r < options.runs; ++r) {
    std::vector<double> round(k, -1);
    for (size_t j = 0; j < k; ++j) {
      const size_t i = (j + static_cast<size_t>(r)) % k;
      round[i] = SpawnOnce(cmds[i], ++unique);
      if (round[i] < 0) {
        ++cmds[i].failures;
        failed = true;
      } else {
        cmds[i].ms.push_back(round[i]);
      }
    }
    for (size_t i = 1; i < k; ++i) {
      if (round[0] > 0 && round[i] > 0) ratios[i].push_back(round[i] / round[0]);
    }
    for (size_t i = 0; rounds != nullptr && i < k; ++i) {
      std::fprintf(rounds, "%s\t%d\t%s\t%.4f\n", options.title.c_str(), r, cmds[i].label.c_str(),
                   round[i]);
    }
  }
  if (rounds != nullptr) std::fclose(rounds);

  if (!options.title.empty()) std::printf("## %s\n", options.title.c_str());
  std::printf("%-44s %6s %10s %10s %10s %12s %17s %9s %9s\n", "command", "runs", "median ms",
              "p90 ms", "min ms", "ratio (med)", "ratio min..max", "cpu ms", "max KB");
  FILE* tsv = options.tsv.empty() ? nullptr : std::fopen(options.tsv.c_str(), "a");
  for (size_t i = 0; i < k; ++i) {
    const Command& c = cmds[i];
    const double ratio = i == 0 ? 1.0 : Quantile(ratios[i], 0.5);
    const double ratio_min =
        i == 0 || ratios[i].empty() ? 1.0 : *std::min_element(ratios[i].begin(), ratios[i].end());
    const double ratio_max =
        i == 0 || ratios[i].empty() ? 1.0 : *std::max_element(ratios[i].begin(), ratios[i].end());
    std::printf("%-44s %6zu %10.3f %10.3f %10.3f %12.3f %8.3f..%-8.3f %9.3f %9ld\n",
                c.label.c_str(), c.ms.size(), Quantile(c.ms, 0.5), Quantile(c.ms, 0.9),
                c.ms.empty() ? 0 : *std::min_element(c.ms.begin(), c.ms.end()), ratio, ratio_min,
                ratio_max, Quantile(c.cpu_ms, 0.5), c.max_rss_kb);
    // Columns: title, label, baseline, runs, median ms, p90 ms, ratio (median),
    // ratio min, ratio max, median cpu ms, max RSS KB.
    if (tsv != nullptr) {
      std::fprintf(tsv, "%s\t%s\t%s\t%zu\t%.3f\t%.3f\t%.4f\t%.4f\t%.4f\t%.3f\t%ld\n",
                   options.title.c_str(), c.label.c_str(), cmds[0].label.c_str(), c.ms.size(),
                   Quantile(c.ms, 0.5), Quantile(c.ms, 0.9), ratio, ratio_min, ratio_max,
                   Quantile(c.cpu_ms, 0.5), c.max_rss_kb);
    }
    if (c.failures > 0) {
      std::fprintf(stderr, "np-spawn-harness: \"%s\" failed %d of %d runs (last status %d)\n",
                   c.label.c_str(), c.failures, options.runs, c.last_status);
    }
  }
  if (tsv != nullptr) std::fclose(tsv);
  std::printf("(ratio: median over rounds of this command's time / \"%s\" in the same round)\n",
              cmds[0].label.c_str());
  std::fflush(stdout);
  return failed ? 1 : 0;
}
