// The documentation holds to itself and to the program: every relative link
// in README.md, CONTRIBUTING.md, ARCHITECTURE.md and docs/*.md names a file
// that exists (and a heading that exists, for a #anchor); every `console`
// block prints what the built np-exec prints today, run in a temporary
// project; docs/configuration.md has a row for every key the parser knows,
// and the agent images' table the packages the Dockerfiles pin;
// the README stays short; no sentence is said in two places.
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/support/process.h"
#include "tests/support/temp_dir.h"

namespace np::testing {
namespace {

// Every Markdown file of the documentation, relative to the source tree.
std::vector<std::string> DocFiles() {
  std::vector<std::string> files = {"README.md", "CONTRIBUTING.md", "ARCHITECTURE.md",
                                    "BENCHMARKS.md"};
  DIR* dir = opendir((SourceDir() + "/docs").c_str());
  EXPECT_NE(dir, nullptr) << "no docs/";
  if (dir == nullptr) return files;
  std::vector<std::string> topics;
  while (dirent* entry = readdir(dir)) {
    const std::string name = entry->d_name;
    if (name.size() > 3 && name.substr(name.size() - 3) == ".md") topics.push_back("docs/" + name);
  }
  closedir(dir);
  std::sort(topics.begin(), topics.end());
  files.insert(files.end(), topics.begin(), topics.end());
  return files;
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) lines.push_back(line);
  return lines;
}

bool IsFence(const std::string& line) {
  return line.rfind("```", 0) == 0 || line.rfind("  ```", 0) == 0;
}

// The lines of `text` outside fenced code blocks, with their line numbers.
std::vector<std::pair<int, std::string>> ProseLines(const std::string& text) {
  std::vector<std::pair<int, std::string>> out;
  bool in_fence = false;
  int number = 0;
  for (const std::string& line : Lines(text)) {
    ++number;
    if (IsFence(line)) {
      in_fence = !in_fence;
      continue;
    }
    if (!in_fence) out.emplace_back(number, line);
  }
  return out;
}

// GitHub's anchor for a heading: lower case, punctuation other than '-' and
// '_' dropped, spaces become '-'.
std::string Slug(const std::string& heading) {
  std::string slug;
  for (unsigned char c : heading) {
    if (std::isalnum(c) || c == '-' || c == '_' || c >= 0x80) {
      slug.push_back(static_cast<char>(std::tolower(c)));
    } else if (c == ' ') {
      slug.push_back('-');
    }
  }
  return slug;
}

std::set<std::string> Anchors(const std::string& text) {
  std::set<std::string> anchors;
  std::map<std::string, int> seen;
  for (const auto& [number, line] : ProseLines(text)) {
    if (line.empty() || line[0] != '#') continue;
    const size_t start = line.find_first_not_of('#');
    if (start == std::string::npos || line[start] != ' ') continue;
    const std::string slug = Slug(line.substr(start + 1));
    const int n = seen[slug]++;
    anchors.insert(n == 0 ? slug : slug + "-" + std::to_string(n));
  }
  return anchors;
}

// `text` without its inline code spans, so `[a](b)` inside backticks is no link.
std::string WithoutCode(const std::string& line) {
  return std::regex_replace(line, std::regex("`[^`]*`"), "``");
}

bool IsRegularFile(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

bool Exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

TEST(DocsTest, EveryRelativeLinkResolves) {
  static const std::regex kLink(R"(\]\(([^)\s]+)\))");
  int links = 0;
  for (const std::string& file : DocFiles()) {
    const std::string text = ReadFile(SourceDir() + "/" + file);
    const std::string dir =
        file.find('/') == std::string::npos ? "" : file.substr(0, file.rfind('/'));
    for (const auto& [number, raw] : ProseLines(text)) {
      const std::string line = WithoutCode(raw);
      for (std::sregex_iterator it(line.begin(), line.end(), kLink), end; it != end; ++it) {
        const std::string target = (*it)[1].str();
        if (target.rfind("http://", 0) == 0 || target.rfind("https://", 0) == 0 ||
            target.rfind("mailto:", 0) == 0) {
          continue;
        }
        ++links;
        const size_t hash = target.find('#');
        const std::string path = target.substr(0, hash);
        const std::string anchor = hash == std::string::npos ? "" : target.substr(hash + 1);
        const std::string where = file + ":" + std::to_string(number) + ": " + target;
        std::string resolved = SourceDir() + "/" + file;
        if (!path.empty()) {
          resolved = SourceDir() + "/" + (dir.empty() ? "" : dir + "/") + path;
          if (!Exists(resolved)) {
            ADD_FAILURE() << where << " names no file";
            continue;
          }
        }
        if (!anchor.empty()) {
          if (!IsRegularFile(resolved)) {
            ADD_FAILURE() << where << " has an anchor into what is not a file";
            continue;
          }
          EXPECT_EQ(Anchors(ReadFile(resolved)).count(anchor), 1u) << where << " names no heading";
        }
      }
    }
  }
  EXPECT_GE(links, 30);  // The README alone links every topic file.
}

// The man page names topic files by their installed path; each exists here.
TEST(DocsTest, TopicFilesTheManPageNamesExist) {
  const std::string man = ReadFile(SourceDir() + "/packaging/np-exec.1");
  static const std::regex kTopic(R"(docs/([a-z-]+\.md))");
  int named = 0;
  for (std::sregex_iterator it(man.begin(), man.end(), kTopic), end; it != end; ++it) {
    ++named;
    EXPECT_TRUE(IsRegularFile(SourceDir() + "/docs/" + (*it)[1].str())) << (*it)[0];
  }
  EXPECT_GE(named, 2);
}

TEST(DocsTest, EveryTopicFileIsLinkedFromTheReadme) {
  const std::string readme = ReadFile(SourceDir() + "/README.md");
  for (const std::string& file : DocFiles()) {
    if (file.rfind("docs/", 0) != 0) continue;
    EXPECT_NE(readme.find("](" + file + ")"), std::string::npos) << file;
  }
}

TEST(DocsTest, TheReadmeIsShort) {
  const size_t lines = Lines(ReadFile(SourceDir() + "/README.md")).size();
  EXPECT_LE(lines, 300u);
}

// A sentence copied from one place to another is said twice: no line of
// prose of 70 characters or more (list markers and surrounding space aside)
// appears twice in the documentation. Tables and code are left out.
TEST(DocsTest, NoLineOfProseIsSaidTwice) {
  std::map<std::string, std::string> first_seen;
  for (const std::string& file : DocFiles()) {
    for (const auto& [number, raw] : ProseLines(ReadFile(SourceDir() + "/" + file))) {
      std::string line = raw;
      line.erase(0, line.find_first_not_of(" \t"));
      if (line.rfind("- ", 0) == 0) line.erase(0, 2);
      while (!line.empty() && line.back() == ' ') line.pop_back();
      if (line.size() < 70 || line[0] == '|' || line[0] == '#') continue;
      const std::string here = file + ":" + std::to_string(number);
      auto [it, inserted] = first_seen.emplace(line, here);
      EXPECT_TRUE(inserted) << here << " repeats " << it->second << ": " << line;
    }
  }
}

// The keys np-exec knows under `path` ("isolation" or "isolation.container"),
// as its own refusal of an unknown key there lists them: the parser's table.
std::vector<std::string> KnownKeys(const std::string& path) {
  TempDir tmp;
  const std::string inner = R"({"zzzz-not-a-key":1})";
  const std::string config = path == "isolation" ? R"({"isolation":)" + inner + "}"
                                                 : R"({"isolation":{"container":)" + inner + "}}";
  tmp.Write("p/.nubos-pilot/config.json", config);
  RunOptions options;
  options.cwd = tmp.Path("p");
  options.env = BaseEnv({"NP_EXEC_ERROR_FORMAT=json"});
  RunResult r = RunProcess({NpExecBin(), "status"}, options);
  nlohmann::json error = nlohmann::json::parse(r.err, nullptr, false);
  std::vector<std::string> keys;
  if (!error.is_object() || !error["details"]["known"].is_array()) {
    ADD_FAILURE() << "no list of known keys: " << r.err;
    return keys;
  }
  for (const auto& key : error["details"]["known"]) {
    if (key.get<std::string>() != "container") keys.push_back(path + "." + key.get<std::string>());
  }
  return keys;
}

// docs/configuration.md's table has a row for every key the parser knows.
TEST(DocsTest, ConfigurationHasEveryKey) {
  std::vector<std::string> keys = KnownKeys("isolation");
  const std::vector<std::string> container = KnownKeys("isolation.container");
  keys.insert(keys.end(), container.begin(), container.end());
  ASSERT_GE(keys.size(), 14u);
  std::string table;
  for (const std::string& line : Lines(ReadFile(SourceDir() + "/docs/configuration.md"))) {
    if (line.rfind("| `", 0) == 0) table += line.substr(0, line.find(" |", 2)) + "\n";
  }
  for (const std::string& key : keys) {
    const std::string last = key.substr(key.rfind('.'));
    const bool named = table.find("`" + key + "`") != std::string::npos ||
                       table.find("`" + last + "`") != std::string::npos;
    EXPECT_TRUE(named) << key << " has no row in docs/configuration.md";
  }
}

// The agent images' table names the package each Dockerfile pins.
TEST(DocsTest, AgentImageTableNamesThePinnedPackages) {
  const std::string doc = ReadFile(SourceDir() + "/docs/agent-images.md");
  for (const char* agent : {"claude", "codex", "gemini"}) {
    std::smatch pinned;
    const std::string dockerfile =
        ReadFile(SourceDir() + "/packaging/images/" + agent + "/Dockerfile");
    ASSERT_TRUE(std::regex_search(dockerfile, pinned, std::regex(R"(\nARG PACKAGE=(\S+))")))
        << agent;
    const std::string row =
        "| `np-agent-" + std::string(agent) + ":local` | `" + pinned[1].str() + "` |";
    EXPECT_NE(doc.find(row), std::string::npos)
        << "docs/agent-images.md lacks the row part " << row;
  }
}

// ---- console examples ---------------------------------------------------

struct Example {
  std::string file;
  int line = 0;  // Of the command.
  std::string command;
  std::vector<std::string> expected;
};

// The console blocks of `file`, each a list of commands with their output.
std::vector<std::vector<Example>> ConsoleBlocks(const std::string& file) {
  std::vector<std::vector<Example>> blocks;
  bool in_console = false, in_other = false;
  size_t fence_indent = 0;  // A block in a list item is indented with its fence.
  int number = 0;
  for (const std::string& raw : Lines(ReadFile(SourceDir() + "/" + file))) {
    ++number;
    const size_t indent = std::min(raw.find_first_not_of(' '), raw.size());
    const std::string line = raw.substr(std::min(indent, in_console ? fence_indent : indent));
    if (in_console) {
      if (line == "```") {
        in_console = false;
      } else if (line.rfind("$ ", 0) == 0) {
        blocks.back().push_back({file, number, line.substr(2), {}});
      } else if (!blocks.back().empty()) {
        blocks.back().back().expected.push_back(line);
      }
      continue;
    }
    if (in_other) {
      if (line.rfind("```", 0) == 0) in_other = false;
      continue;
    }
    if (line == "```console") {
      in_console = true;
      fence_indent = indent;
      blocks.emplace_back();
    } else if (line.rfind("```", 0) == 0) {
      in_other = true;
    }
  }
  return blocks;
}

// `expected` against `actual`: a line "..." matches any number of lines, a
// line ending in "..." any line that starts with what comes before it.
bool Matches(const std::vector<std::string>& expected, size_t e,
             const std::vector<std::string>& actual, size_t a) {
  if (e == expected.size()) return a == actual.size();
  if (expected[e] == "...") {
    for (size_t skip = a; skip <= actual.size(); ++skip) {
      if (Matches(expected, e + 1, actual, skip)) return true;
    }
    return false;
  }
  if (a == actual.size()) return false;
  const std::string& want = expected[e];
  const bool prefix = want.size() > 3 && want.substr(want.size() - 3) == "...";
  const bool same =
      prefix ? actual[a].rfind(want.substr(0, want.size() - 3), 0) == 0 : actual[a] == want;
  return same && Matches(expected, e + 1, actual, a + 1);
}

std::string Join(const std::vector<std::string>& lines) {
  std::string out;
  for (const std::string& line : lines) out += line + "\n";
  return out;
}

std::string ReplaceAll(std::string text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
  return text;
}

// The machine every console block runs on (CONTRIBUTING.md says the same):
// a temporary root standing for "/", HOME /home/me, the project
// /home/me/project with an empty config as the working directory, stand-in
// claude and codex in ~/.npm-global/bin, np-exec in /usr/bin and its
// interposer in /usr/lib/np-exec, as the package installs them.
class ConsoleMachine {
 public:
  ConsoleMachine() {
    home_ = root_.MakeDir("home/me");
    project_ = root_.MakeDir("home/me/project");
    root_.Write("home/me/project/.nubos-pilot/config.json", "");
    for (const char* cli : {"claude", "codex"}) {
      root_.Write(std::string("home/me/.npm-global/bin/") + cli,
                  std::string("#!/bin/sh\necho \"") + cli + " 1.0 (stand-in)\"\n", 0755);
    }
    root_.MakeDir("usr/bin");
    Install(NpExecBin(), "usr/bin/np-exec");
    const std::string preload = BinaryDir() + "/bin/libnp-exec-preload.so";
    if (Exists(preload)) {
      root_.MakeDir("usr/lib/np-exec");
      Install(preload, "usr/lib/np-exec/libnp-exec-preload.so");
    }
  }

  // Runs one command with sh, stderr into stdout; the root's path is removed
  // from what it prints, so paths read as they would on the machine above.
  std::vector<std::string> Run(const std::string& command) {
    RunOptions options;
    options.cwd = project_;
    options.env = BaseEnv({"HOME=" + home_,
                           "PATH=" + home_ + "/.np-exec/shims:" + home_ +
                               "/.npm-global/bin:" + root_.Path("usr/bin") + ":/usr/bin:/bin",
                           "XDG_STATE_HOME=" + home_ + "/.local/state",
                           "XDG_CONFIG_HOME=" + home_ + "/.config", "USER=me", "LOGNAME=me",
                           "DOCKER_HOST=unix://" + root_.Path("no-engine.sock"),
                           "CONTAINER_HOST=unix://" + root_.Path("no-engine.sock")});
    RunResult r = RunProcess({"/bin/sh", "-c", "exec 2>&1\n" + command}, options);
    return Lines(ReplaceAll(r.out, root_.path(), ""));
  }

 private:
  // A hard link when it can be (np-exec is large), else a copy.
  void Install(const std::string& from, const std::string& rel) {
    if (link(from.c_str(), root_.Path(rel).c_str()) == 0) return;
    RunResult copy = RunProcess({"/bin/cp", from, root_.Path(rel)}, {});
    EXPECT_EQ(copy.exit_code, 0) << copy.err;
  }

  TempDir root_;
  std::string home_;
  std::string project_;
};

TEST(DocsTest, EveryConsoleExampleIsWhatNpExecPrints) {
  int commands = 0;
  for (const std::string& file : DocFiles()) {
    for (const std::vector<Example>& block : ConsoleBlocks(file)) {
      ConsoleMachine machine;
      for (const Example& example : block) {
        ++commands;
        const std::vector<std::string> actual = machine.Run(example.command);
        EXPECT_TRUE(Matches(example.expected, 0, actual, 0))
            << example.file << ":" << example.line << ": $ " << example.command
            << "\nthe documentation shows:\n"
            << Join(example.expected) << "np-exec prints:\n"
            << Join(actual);
      }
    }
  }
  EXPECT_GE(commands, 8);
}

}  // namespace
}  // namespace np::testing
