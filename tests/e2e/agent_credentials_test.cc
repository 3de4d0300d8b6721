// The README's credential recipes with the real agent CLIs: claude, codex and
// gemini, each in its agent image on docker and podman, on the container tier
// with `network: "allowlist"` and the API key kept on the host
// (isolation.container.credentials). There is no internet here, so each CLI's
// base URL points at a loopback TLS server with a test CA of its own (trusted
// on the host side through SSL_CERT_FILE) that records every request and
// answers with an API error, on which each CLI gives up. The requests the CLI
// made arrive with the real key in the header the recipe names; the key is in
// no audit line and in nothing the CLI printed.
//
// What each CLI needs to talk to a base URL rather than its vendor's host:
// claude reads ANTHROPIC_BASE_URL; codex a model provider with that
// base_url (it ignores OPENAI_BASE_URL); gemini GOOGLE_GEMINI_BASE_URL, which
// switches it to a "gateway" auth mode it refuses headless unless its user
// settings select "gemini-api-key" (written into the sandbox's ephemeral
// HOME), and GEMINI_CLI_TRUST_WORKSPACE=true. None of that is needed against
// the real hosts.
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/e2e/e2e_support.h"
#include "tests/egress/loopback_tls.h"

namespace np::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

using Param = std::tuple<std::string, std::string>;  // runtime, agent CLI

constexpr char kKey[] = "sk-e2e-agent-key-5c0f93ad71";

// One agent's recipe: the credential (as in the README's table) and how to
// run it against `base` ("https://localhost:PORT").
struct Recipe {
  nlohmann::json credential;
  std::vector<std::string> forwarded;  // isolation.container.env
  std::vector<std::string> env;        // NAME=VALUE for the caller
  std::vector<std::string> argv;
  std::string expected_header;  // as it must arrive
};

Recipe RecipeFor(const std::string& agent, const std::string& base) {
  if (agent == "claude") {
    return {{{"host", ""}, {"env", "ANTHROPIC_API_KEY"}, {"header", "x-api-key"}},
            {"ANTHROPIC_BASE_URL"},
            {"ANTHROPIC_BASE_URL=" + base},
            {"claude", "-p", "say hi"},
            absl::StrCat("x-api-key: ", kKey)};
  }
  if (agent == "codex") {
    const std::string provider =
        absl::StrCat(R"(model_providers.np={name="np", base_url=")", base,
                     R"(/v1", env_key="OPENAI_API_KEY", wire_api="responses"})");
    return {{{"host", ""},
             {"env", "OPENAI_API_KEY"},
             {"header", "Authorization"},
             {"format", "Bearer {}"}},
            {},
            {},
            {"codex", "exec", "--skip-git-repo-check", "-c", provider, "-c", "model_provider=np",
             "say hi"},
            absl::StrCat("authorization: Bearer ", kKey)};
  }
  return {{{"host", ""}, {"env", "GEMINI_API_KEY"}, {"header", "x-goog-api-key"}},
          {"GOOGLE_GEMINI_BASE_URL", "GEMINI_CLI_TRUST_WORKSPACE"},
          {"GOOGLE_GEMINI_BASE_URL=" + base, "GEMINI_CLI_TRUST_WORKSPACE=true"},
          {"sh", "-c",
           "mkdir -p \"$HOME/.gemini\" && echo "
           "'{\"security\":{\"auth\":{\"selectedType\":\"gemini-api-key\"}}}' > "
           "\"$HOME/.gemini/settings.json\" && exec gemini -p 'say hi'"},
          absl::StrCat("x-goog-api-key: ", kKey)};
}

class AgentCredentialsTest : public ::testing::TestWithParam<Param> {
 protected:
  void SetUp() override {
    NP_REQUIRE_RUNTIME(runtime());
    RunResult inspect = RunRuntime(runtime(), {"image", "inspect", "--format", "{{.Id}}", image()});
    if (inspect.exit_code != 0) {
      const std::string why =
          absl::StrCat(image(), " is not in ", runtime(), " (bash ", SourceDir(),
                       "/scripts/build-agent-image.sh ", agent(), " builds it): ", inspect.err);
      if (InCi()) FAIL() << why;
      GTEST_SKIP() << why;
    }
    project_ = dir_.MakeDir("project");
    test_ca_ = dir_.path() + "/test-ca.pem";
    server_ = std::make_unique<LoopbackTlsServer>(test_ca_);
    server_->AnswerWith("400 Bad Request",
                        R"({"error":{"type":"invalid_request_error","code":400,"status":)"
                        R"("INVALID_ARGUMENT","message":"np-exec test server"}})");
  }

  const std::string& runtime() const { return std::get<0>(GetParam()); }
  const std::string& agent() const { return std::get<1>(GetParam()); }
  std::string image() const { return "np-agent-" + agent() + ":local"; }

  TempDir dir_;
  std::string project_;
  std::string test_ca_;
  std::unique_ptr<LoopbackTlsServer> server_;
};

TEST_P(AgentCredentialsTest, TheCliSendsAndTheKeyArrivesFromTheHost) {
  const std::string host = absl::StrCat("localhost:", server_->port());
  Recipe recipe = RecipeFor(agent(), "https://" + host);
  recipe.credential["host"] = host;
  MakeProject(project_, ContainerConfig(runtime(), image(),
                                        {{"network", "allowlist"},
                                         {"allow_hosts",
                                          {host, absl::StrCat("127.0.0.1:", server_->port()),
                                           absl::StrCat("[::1]:", server_->port())}},
                                         {"env", recipe.forwarded},
                                         {"credentials", {recipe.credential}}}));
  std::vector<std::string> env = RuntimeEnv(recipe.env);
  env.push_back(absl::StrCat(recipe.credential["env"].get<std::string>(), "=", kKey));
  env.push_back("SSL_CERT_FILE=" + test_ca_);
  std::vector<std::string> argv = {NpExecBin(), "--"};
  argv.insert(argv.end(), recipe.argv.begin(), recipe.argv.end());
  RunResult r = RunProcess(argv, Options(env, 240000, project_));
  EXPECT_THAT(r.out + r.err, Not(HasSubstr(kKey)));

  // The CLI made its request, and every request arrived with the real key.
  const std::vector<std::string> heads = server_->heads();
  ASSERT_FALSE(heads.empty()) << "exit " << r.exit_code << "\n" << r.out << r.err;
  for (const std::string& head : heads) {
    const std::string lower = absl::StrReplaceAll(head, {{"Authorization:", "authorization:"}});
    EXPECT_THAT(lower, HasSubstr(recipe.expected_header + "\r\n")) << head;
  }

  // The audit names the host and the header, never the key.
  int bad = 0;
  int injected = 0;
  for (const nlohmann::json& line : ReadAuditLog(project_, &bad)) {
    EXPECT_THAT(line.dump(), Not(HasSubstr(kKey)));
    if (line.value("event", "") == "egress" && line["egress"].contains("credential")) {
      EXPECT_EQ(line["egress"]["credential"]["header"], recipe.credential["header"]);
      injected += line["egress"]["credential"].value("injected", 0);
    }
  }
  EXPECT_EQ(bad, 0);
  EXPECT_EQ(injected, static_cast<int>(heads.size()));
}

// "docker_claude", ...
std::string ParamName(const ::testing::TestParamInfo<Param>& param) {
  return std::get<0>(param.param) + "_" + std::get<1>(param.param);
}

INSTANTIATE_TEST_SUITE_P(Agents, AgentCredentialsTest,
                         ::testing::Combine(::testing::Values("docker", "podman"),
                                            ::testing::Values("claude", "codex", "gemini")),
                         ParamName);

}  // namespace
}  // namespace np::testing
