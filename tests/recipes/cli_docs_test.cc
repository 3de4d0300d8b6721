// The man page (packaging/np-exec.1), `np-exec --help`, `np-exec VERB --help`
// and the bash completion (packaging/np-exec.bash-completion) agree: every
// usage line of --help is in the man SYNOPSIS, every option a verb's help
// names is in the man page and offered by the completion, every exit status
// of --help is in EXIT STATUS, the configuration keys and the tiers' limits
// are all in the man page, and groff renders it without a warning.
#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/support/ci.h"
#include "tests/support/process.h"
#include "tests/support/temp_dir.h"

namespace np::testing {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::UnorderedElementsAre;

const std::vector<std::string> kVerbs = {"status", "describe", "probe", "wrap",
                                         "doctor", "shims",    "which"};

std::string ManPath() { return SourceDir() + "/packaging/np-exec.1"; }
std::string CompletionPath() { return SourceDir() + "/packaging/np-exec.bash-completion"; }

std::string Collapse(const std::string& text) {
  std::string out;
  bool space = false;
  for (char c : text) {
    if (c == ' ' || c == '\t' || c == '\n') {
      space = !out.empty();
    } else {
      if (space) out.push_back(' ');
      space = false;
      out.push_back(c);
    }
  }
  return out;
}

// Roff to plain text: font escapes dropped, \- and \e and \(em resolved.
std::string Unroff(const std::string& line) {
  std::string s = std::regex_replace(line, std::regex(R"(\\f[BIRP])"), "");
  s = std::regex_replace(s, std::regex(R"(\\-)"), "-");
  s = std::regex_replace(s, std::regex(R"(\\\(em)"), "\xE2\x80\x94");
  s = std::regex_replace(s, std::regex(R"(\\&)"), "");
  s = std::regex_replace(s, std::regex(R"(\\e)"), "\\");
  return s;
}

// The man page's sections, as plain text: name -> lines (requests dropped,
// the text of .B/.I/.TP lines kept).
std::map<std::string, std::vector<std::string>> ManSections() {
  std::map<std::string, std::vector<std::string>> sections;
  std::istringstream in(ReadFile(ManPath()));
  std::string line, current;
  while (std::getline(in, line)) {
    if (line.rfind(".SH ", 0) == 0) {
      current = line.substr(4);
      current.erase(std::remove(current.begin(), current.end(), '"'), current.end());
      sections[current];
      continue;
    }
    if (line.rfind(".\\\"", 0) == 0) continue;
    if (line.rfind(".B ", 0) == 0 || line.rfind(".I ", 0) == 0 || line.rfind(".BR ", 0) == 0) {
      line = line.substr(line.find(' ') + 1);
    } else if (!line.empty() && line[0] == '.') {
      continue;
    }
    if (!current.empty()) sections[current].push_back(Unroff(line));
  }
  return sections;
}

std::string SectionText(const std::string& name) {
  auto sections = ManSections();
  std::string text;
  for (const std::string& line : sections[name]) text += line + "\n";
  return Collapse(text);
}

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

RunResult NpExec(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {NpExecBin()};
  argv.insert(argv.end(), args.begin(), args.end());
  RunOptions options;
  options.env = BaseEnv();
  return RunProcess(argv, options);
}

// The usage lines of `np-exec --help`, each without its trailing description.
std::vector<std::string> HelpUsageLines() {
  std::istringstream in(NpExec({"--help"}).out);
  std::string line;
  std::vector<std::string> usage;
  bool in_usage = false;
  while (std::getline(in, line)) {
    if (line == "Usage:") {
      in_usage = true;
      continue;
    }
    if (!in_usage) continue;
    if (line.empty()) break;
    std::string command = line.substr(line.find_first_not_of(' '));
    const size_t gap = command.find("  ");
    if (gap != std::string::npos) command = command.substr(0, gap);
    usage.push_back(Collapse(command));
  }
  return usage;
}

std::set<std::string> OptionsIn(const std::string& text) {
  std::set<std::string> options;
  std::regex option(R"((^|[\s\[|])(--[a-z][a-z-]*))");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), option);
       it != std::sregex_iterator(); ++it) {
    options.insert((*it)[2]);
  }
  return options;
}

// What the completion offers for `words` (the last one being completed).
std::vector<std::string> Complete(const std::vector<std::string>& words) {
  std::string script = "source '" + CompletionPath() + "'\nCOMP_WORDS=(";
  for (const std::string& w : words) script += "'" + w + "' ";
  script += ")\nCOMP_CWORD=" + std::to_string(words.size() - 1) +
            "\n_np_exec\nprintf '%s\\n' \"${COMPREPLY[@]}\"\n";
  RunOptions options;
  options.env = BaseEnv();
  RunResult r = RunProcess({"/bin/bash", "--norc", "--noprofile", "-c", script}, options);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> out;
  std::istringstream in(r.out);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty()) out.push_back(line);
  }
  return out;
}

TEST(CliDocs, ManPageHasEverySection) {
  auto sections = ManSections();
  for (const char* name : {"NAME", "SYNOPSIS", "DESCRIPTION", "TIERS", "CONFIGURATION",
                           "EXIT STATUS", "ENVIRONMENT", "FILES", "SECURITY", "EXAMPLES"}) {
    EXPECT_TRUE(sections.count(name)) << name;
  }
}

TEST(CliDocs, EveryHelpUsageLineIsInTheManSynopsis) {
  auto sections = ManSections();
  std::set<std::string> synopsis;
  for (const std::string& line : sections["SYNOPSIS"]) synopsis.insert(Collapse(line));
  std::vector<std::string> usage = HelpUsageLines();
  ASSERT_GE(usage.size(), 10u);
  for (const std::string& line : usage) {
    EXPECT_TRUE(synopsis.count(line)) << "not in the man SYNOPSIS: " << line;
  }
  // And nothing in the SYNOPSIS that --help does not list.
  EXPECT_EQ(synopsis.size(), usage.size());
}

TEST(CliDocs, EveryVerbOptionIsInTheManPageAndTheCompletion) {
  const std::string man = Collapse(Unroff(ReadFile(ManPath())));
  for (const std::string& verb : kVerbs) {
    RunResult help = NpExec({verb, "--help"});
    ASSERT_EQ(help.exit_code, 0) << verb;
    std::set<std::string> options = OptionsIn(help.out);
    options.insert("--help");
    std::vector<std::string> words = {"np-exec", verb};
    if (verb == "shims") words.insert(words.end(), {"install", "/tmp"});
    if (verb == "describe") words.push_back("container");
    words.push_back("--");
    std::vector<std::string> offered = Complete(words);
    if (verb == "wrap") {
      // After "wrap --" the program follows; the options come before it.
      words.back() = "-";
      offered = Complete(words);
    }
    for (const std::string& option : options) {
      EXPECT_THAT(man, HasSubstr(option)) << verb << " " << option;
      EXPECT_THAT(offered, Contains(option)) << "completion of " << verb << " lacks " << option;
    }
  }
}

TEST(CliDocs, GeneralOptionsAreCompleted) {
  std::set<std::string> options = OptionsIn(NpExec({"--help"}).out);
  std::vector<std::string> offered = Complete({"np-exec", "-"});
  for (const char* option : {"--help", "--version", "--env"}) {
    EXPECT_TRUE(options.count(option)) << option;
    EXPECT_THAT(offered, Contains(option));
  }
}

TEST(CliDocs, CompletionOffersVerbsTiersAndRuntimes) {
  std::vector<std::string> verbs = Complete({"np-exec", ""});
  for (const std::string& verb : kVerbs) EXPECT_THAT(verbs, Contains(verb));
  EXPECT_THAT(Complete({"np-exec", "describe", ""}),
              UnorderedElementsAre("direct", "worktree", "container"));
  EXPECT_THAT(Complete({"np-exec", "probe", "--runtime", ""}),
              UnorderedElementsAre("docker", "podman", "bwrap"));
  EXPECT_THAT(Complete({"np-exec", "describe", "container", "--runtime", "p"}),
              UnorderedElementsAre("podman"));
  EXPECT_THAT(Complete({"np-exec", "shims", ""}),
              UnorderedElementsAre("install", "list", "remove"));
  // Every tier describe accepts is completed, and no other.
  for (const std::string& tier : Complete({"np-exec", "describe", ""})) {
    EXPECT_EQ(NpExec({"describe", tier, "--json"}).exit_code, 0) << tier;
  }
}

TEST(CliDocs, CompletionOffersFilesAfterDoubleDashAndDirectoriesForShims) {
  TempDir tmp;
  tmp.Write("script.cjs", "");
  tmp.MakeDir("shimdir");
  EXPECT_THAT(Complete({"np-exec", "--", tmp.Path("scr")}), Contains(tmp.Path("script.cjs")));
  EXPECT_THAT(Complete({"np-exec", "wrap", "--", tmp.Path("scr")}),
              Contains(tmp.Path("script.cjs")));
  std::vector<std::string> dirs = Complete({"np-exec", "shims", "install", tmp.Path("sh")});
  EXPECT_THAT(dirs, Contains(tmp.Path("shimdir")));
}

TEST(CliDocs, EveryExitStatusOfHelpIsInExitStatus) {
  const std::string help = NpExec({"--help"}).out;
  const size_t start = help.find("Exit status");
  ASSERT_NE(start, std::string::npos);
  const std::string paragraph = help.substr(start);
  const std::string exit_status = SectionText("EXIT STATUS");
  std::regex number(R"(\b(\d+)\b)");
  int seen = 0;
  for (auto it = std::sregex_iterator(paragraph.begin(), paragraph.end(), number);
       it != std::sregex_iterator(); ++it) {
    ++seen;
    EXPECT_TRUE(std::regex_search(exit_status, std::regex("\\b" + (*it)[1].str() + "\\b")))
        << "exit status " << (*it)[1] << " is not in the man page's EXIT STATUS";
  }
  EXPECT_GE(seen, 6);  // 128, 125, 126, 127, 69, 0, 1
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

TEST(CliDocs, ConfigurationListsEveryKey) {
  const std::string config = SectionText("CONFIGURATION");
  for (const char* key :
       {"isolation.tier", "workflow.worktree_isolation", "isolation.container.runtime",
        "isolation.container.image", "isolation.container.network", "isolation.container.user",
        "isolation.container.memory", "isolation.container.cpus", "isolation.container.mounts",
        "isolation.container.env", "isolation.container.workdir", "isolation.container.pull",
        "isolation.interpose"}) {
    EXPECT_THAT(config, HasSubstr(key));
  }
  EXPECT_THAT(config, HasSubstr("\"never\" | \"missing\""));
  // And every key the parser knows, from its own list.
  std::vector<std::string> keys = KnownKeys("isolation");
  const std::vector<std::string> container = KnownKeys("isolation.container");
  keys.insert(keys.end(), container.begin(), container.end());
  ASSERT_GE(keys.size(), 14u);
  for (const std::string& key : keys) EXPECT_THAT(config, HasSubstr(key));
  // Every key `status --json` reports under container is documented.
  TempDir tmp;
  MakeProject(tmp.path());
  RunOptions options;
  options.cwd = tmp.path();
  options.env = BaseEnv({"DOCKER_HOST=unix://" + tmp.Path("none.sock")});
  RunResult status = RunProcess({NpExecBin(), "status", "--json"}, options);
  nlohmann::json parsed = nlohmann::json::parse(status.out, nullptr, false);
  ASSERT_TRUE(parsed.is_object()) << status.out << status.err;
  for (auto& item : parsed["container"].items()) {
    EXPECT_THAT(config, HasSubstr("isolation.container." + item.key()));
  }
}

TEST(CliDocs, EnvironmentAndFilesAreDocumented) {
  const std::string env = SectionText("ENVIRONMENT");
  for (const char* name : {"NP_EXEC_TIER", "XDG_CONFIG_HOME", "DOCKER_HOST", "CONTAINER_HOST",
                           "NP_EXEC_ERROR_FORMAT", "NP_EXEC_DEPTH", "NP_EXEC_PRELOAD",
                           "NP_EXEC_PRELOAD_NAMES", "NP_EXEC_PRELOAD_DISABLE", "TERM"}) {
    EXPECT_THAT(env, HasSubstr(name));
  }
  const std::string files = SectionText("FILES");
  for (const char* path : {".nubos-pilot/config.json", "nubos-pilot/config.json",
                           ".nubos-pilot/audit/np-exec.jsonl"}) {
    EXPECT_THAT(files, HasSubstr(path));
  }
}

// SECURITY states every limit `describe --json` names, for each tier and for
// the bubblewrap runtime (the clause before the first colon or semicolon).
TEST(CliDocs, SecurityNamesWhatEachTierDoesNotProtectAgainst) {
  const std::string security = Lower(SectionText("SECURITY"));
  std::vector<std::vector<std::string>> calls = {
      {"describe", "direct", "--json"},
      {"describe", "worktree", "--json"},
      {"describe", "container", "--json"},
      {"describe", "container", "--json", "--runtime", "bwrap"},
      {"describe", "container", "--json", "--runtime", "podman"}};
  for (const auto& args : calls) {
    RunResult r = NpExec(args);
    nlohmann::json d = nlohmann::json::parse(r.out, nullptr, false);
    ASSERT_TRUE(d.is_object()) << r.out;
    for (const auto& limit : d["does_not_protect_against"]) {
      std::string text = Lower(limit.get<std::string>());
      text = text.substr(0, text.find_first_of(":;"));
      EXPECT_THAT(security, HasSubstr(text)) << args[1];
    }
  }
}

TEST(CliDocs, ManPageRendersWithoutWarnings) {
  if (!FileExists("/usr/bin/groff")) {
    NP_NEEDS("groff is not installed (apt-get install groff-base)");
  }
  RunOptions options;
  options.env = BaseEnv({"LANG=C.UTF-8"});
  RunResult r = RunProcess({"/usr/bin/groff", "-man", "-Tutf8", "-ww", "-z", ManPath()}, options);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_THAT(r.err, IsEmpty());
}

TEST(CliDocs, VersionInManPageMatchesTheBinary) {
  std::string version = NpExec({"--version"}).out;  // "np-exec X.Y.Z\n"
  version = version.substr(0, version.find('\n'));
  EXPECT_THAT(ReadFile(ManPath()), HasSubstr("\"" + version + "\""));
}

}  // namespace
}  // namespace np::testing
