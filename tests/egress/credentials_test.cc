// isolation.container.credentials: parsing, the checks against allow_hosts
// and the forwarded names, the placeholder and the sandbox's variables, and
// the key as a widening one in the trust review.
#include "core/credentials.h"

#include "core/config.h"
#include "core/config_json.h"
#include "core/errors.h"
#include "core/trust.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace np {
namespace {

using ::nlohmann::json;
using ::testing::Contains;
using ::testing::ElementsAre;

json Entry(const std::string& host, const std::string& env, const std::string& header) {
  return {{"host", host}, {"env", env}, {"header", header}};
}

TEST(CredentialsTest, ParsesTheThreeAgentRecipes) {
  json value = json::array(
      {Entry("api.anthropic.com", "ANTHROPIC_API_KEY", "x-api-key"),
       Entry("API.OpenAI.com.", "OPENAI_API_KEY", "Authorization"),
       Entry("generativelanguage.googleapis.com:8443", "GEMINI_API_KEY", "x-goog-api-key")});
  value[1]["format"] = "Bearer {}";
  absl::StatusOr<std::vector<Credential>> parsed = ParseCredentials(value);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  ASSERT_EQ(parsed->size(), 3u);
  EXPECT_EQ((*parsed)[0].host, "api.anthropic.com");
  EXPECT_EQ((*parsed)[0].port, 443);
  EXPECT_EQ((*parsed)[0].format, "{}");
  EXPECT_EQ((*parsed)[1].host, "api.openai.com");
  EXPECT_EQ((*parsed)[1].format, "Bearer {}");
  EXPECT_EQ((*parsed)[2].port, 8443);
  EXPECT_EQ(CredentialsToJson(*parsed)[2]["host"], "generativelanguage.googleapis.com:8443");
  EXPECT_EQ(CredentialsToJson(*parsed)[1]["format"], "Bearer {}");
}

TEST(CredentialsTest, RefusesMalformedEntriesWithTheirCode) {
  const json kBad[] = {
      json::object(),  // not an array
      json::array({"api.anthropic.com"}),
      json::array({{{"host", "api.anthropic.com"}, {"env", "K"}}}),  // no header
      json::array({{{"host", "a.com"}, {"env", "K"}, {"header", "x"}, {"extra", 1}}}),
      json::array({Entry("*.anthropic.com", "K", "x-api-key")}),
      json::array({Entry("127.0.0.1", "K", "x-api-key")}),
      json::array({Entry("[::1]", "K", "x-api-key")}),
      json::array({Entry("https://api.anthropic.com", "K", "x-api-key")}),
      json::array({Entry("api.anthropic.com:0", "K", "x-api-key")}),
      json::array({Entry("bücher.de", "K", "x-api-key")}),
      json::array({Entry("a.com", "1K", "x-api-key")}),
      json::array({Entry("a.com", "K=V", "x-api-key")}),
      json::array({Entry("a.com", "HTTPS_PROXY", "x-api-key")}),
      json::array({Entry("a.com", "SSL_CERT_FILE", "x-api-key")}),
      json::array({Entry("a.com", "NP_EXEC_DEPTH", "x-api-key")}),
      json::array({Entry("a.com", "K", "x api key")}),
      json::array({Entry("a.com", "K", "x-api-key:")}),
      json::array({Entry("a.com", "K", "Host")}),
      json::array({Entry("a.com", "K", "content-length")}),
      json::array({Entry("a.com", "K", "Transfer-Encoding")}),
      json::array({Entry("a.com", "K", "x-api-key"), Entry("A.com", "L", "y")}),
  };
  for (const json& value : kBad) {
    absl::StatusOr<std::vector<Credential>> parsed = ParseCredentials(value);
    EXPECT_EQ(ErrorCode(parsed.status()), "isolation-invalid-credentials") << value.dump();
  }
  for (const char* format : {"Bearer", "{}{}", "Bearer {}\r\nX: {", "Bearer\t{}"}) {
    json value = json::array({Entry("a.com", "K", "Authorization")});
    value[0]["format"] = format;
    EXPECT_EQ(ErrorCode(ParseCredentials(value).status()), "isolation-invalid-credentials")
        << format;
  }
  json nul = json::array({Entry(std::string("a.com\0b", 7), "K", "x")});
  EXPECT_EQ(ErrorCode(ParseCredentials(nul).status()), "isolation-invalid-credentials");
}

json Config(const json& container) {
  return {{"isolation", {{"tier", "container"}, {"container", container}}}};
}

TEST(CredentialsTest, TheHostMustBeOnAllowHosts) {
  json container = {
      {"network", "allowlist"},
      {"allow_hosts", {"api.anthropic.com"}},
      {"credentials", {Entry("api.anthropic.com", "ANTHROPIC_API_KEY", "x-api-key")}}};
  absl::StatusOr<ProjectConfig> ok = ParseProjectConfig(Config(container));
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_THAT(
      ok->container.credentials,
      ElementsAre(Credential{"api.anthropic.com", 443, "ANTHROPIC_API_KEY", "x-api-key", "{}"}));
  EXPECT_EQ(ContainerConfigToJson(ok->container)["credentials"][0]["header"], "x-api-key");

  container["allow_hosts"] = {"api.openai.com"};
  EXPECT_EQ(ErrorCode(ParseProjectConfig(Config(container)).status()),
            "isolation-credential-host-not-allowed");
  container["allow_hosts"] = {"api.anthropic.com:8443"};
  EXPECT_EQ(ErrorCode(ParseProjectConfig(Config(container)).status()),
            "isolation-credential-host-not-allowed");
  container["allow_hosts"] = {"*.anthropic.com"};
  EXPECT_TRUE(ParseProjectConfig(Config(container)).ok());
}

TEST(CredentialsTest, OtherNetworksRefuseTheKey) {
  json container = {
      {"network", "none"},
      {"credentials", {Entry("api.anthropic.com", "ANTHROPIC_API_KEY", "x-api-key")}}};
  EXPECT_EQ(ErrorCode(ParseProjectConfig(Config(container)).status()),
            "isolation-credentials-without-allowlist");
  container["credentials"] = json::array();
  EXPECT_TRUE(ParseProjectConfig(Config(container)).ok());
}

TEST(CredentialsTest, TheOperatorFileMayCarryThemForEveryProject) {
  ContainerConfig base;
  json operator_file =
      Config({{"network", "allowlist"},
              {"allow_hosts", {"api.openai.com"}},
              {"credentials", {Entry("api.openai.com", "OPENAI_API_KEY", "Authorization")}}});
  ASSERT_TRUE(ParseOperatorContainer(operator_file, base).ok());
  ASSERT_EQ(base.credentials.size(), 1u);
  // A project whose list names the host gets them; one that lists another
  // host only is told that the credential's host is missing.
  absl::StatusOr<ProjectConfig> project = ParseProjectConfig(
      Config({{"network", "allowlist"}, {"allow_hosts", {"api.openai.com", "example.com"}}}), base);
  ASSERT_TRUE(project.ok()) << project.status();
  EXPECT_EQ(project->container.credentials.size(), 1u);
  EXPECT_EQ(
      ErrorCode(ParseProjectConfig(
                    Config({{"network", "allowlist"}, {"allow_hosts", {"example.com"}}}), base)
                    .status()),
      "isolation-credential-host-not-allowed");
}

TEST(CredentialsTest, AProjectsCredentialsNeedTrust) {
  json project = Config({{"network", "allowlist"},
                         {"allow_hosts", {"api.anthropic.com"}},
                         {"credentials", {Entry("api.anthropic.com", "K", "x-api-key")}}});
  EXPECT_THAT(WideningKeys(project), Contains("isolation.container.credentials"));
}

TEST(CredentialsTest, TheVariableIsNeverAlsoForwarded) {
  std::vector<Credential> credentials = {{"a.com", 443, "ANTHROPIC_API_KEY", "x-api-key", "{}"}};
  EXPECT_TRUE(CheckCredentialsNotForwarded(credentials, {"OTHER"}).ok());
  EXPECT_EQ(ErrorCode(CheckCredentialsNotForwarded(credentials, {"OTHER", "ANTHROPIC_API_KEY"})),
            "isolation-credential-env-forwarded");
}

TEST(CredentialsTest, TheSandboxSeesPlaceholdersAndTheCaPathsOnly) {
  EXPECT_TRUE(CredentialSandboxEnvironment({}).empty());
  std::vector<Credential> credentials = {{"a.com", 443, "ANTHROPIC_API_KEY", "x-api-key", "{}"},
                                         {"b.com", 443, "ANTHROPIC_API_KEY", "x-other", "{}"}};
  EXPECT_THAT(CredentialSandboxEnvironment(credentials),
              ElementsAre("ANTHROPIC_API_KEY=np-exec-credential-placeholder:ANTHROPIC_API_KEY",
                          "NODE_EXTRA_CA_CERTS=/run/np-exec/session-ca.pem",
                          "SSL_CERT_FILE=/run/np-exec/ca-bundle.pem",
                          "REQUESTS_CA_BUNDLE=/run/np-exec/ca-bundle.pem",
                          "CURL_CA_BUNDLE=/run/np-exec/ca-bundle.pem",
                          "GIT_SSL_CAINFO=/run/np-exec/ca-bundle.pem"));
  EXPECT_EQ(FormatCredential("Bearer {}", "sk-1"), "Bearer sk-1");
  EXPECT_EQ(FormatCredential("{}", "sk-1"), "sk-1");
}

}  // namespace
}  // namespace np
