#include "core/git_identity.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace np {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(GitIdentityTest, ReadsOnlyTheUserSectionsNameAndEmail) {
  const GitIdentity id = ParseGitIdentity(
      "[core]\n\tname = not-me\n[credential]\n\thelper = store\n"
      "[User]\n\tName = Ada Lovelace  # a comment\n\tEMAIL=ada@example.invalid\n"
      "\tsigningkey = ABC\n[url \"https://token@example.invalid/\"]\n\tinsteadOf = x\n");
  EXPECT_EQ(id.name, "Ada Lovelace");
  EXPECT_EQ(id.email, "ada@example.invalid");
  const std::string file = GitIdentityConfig(id);
  EXPECT_THAT(file, HasSubstr("\tname = \"Ada Lovelace\"\n"));
  EXPECT_THAT(file, HasSubstr("\temail = \"ada@example.invalid\"\n"));
  for (const char* other : {"helper", "store", "signingkey", "ABC", "token", "insteadOf", "core"}) {
    EXPECT_THAT(file, Not(HasSubstr(other))) << other;
  }
}

TEST(GitIdentityTest, QuotesEscapesAndTheLastValueWin) {
  GitIdentity id = ParseGitIdentity("[user]\n name = \"Old\"\n");
  id = ParseGitIdentity("[user] name = \"A \\\"B\\\" ; C\" ; comment\n[user]\nemail = e@x ; c\n",
                        id);
  EXPECT_EQ(id.name, "A \"B\" ; C");
  EXPECT_EQ(id.email, "e@x");
  // Written back quoted and escaped: git reads the same value.
  EXPECT_THAT(GitIdentityConfig(id), HasSubstr("name = \"A \\\"B\\\" ; C\"\n"));
  // A later file without the key keeps the earlier value.
  EXPECT_EQ(ParseGitIdentity("[user]\n\temail = f@x\n", id).name, "A \"B\" ; C");
}

TEST(GitIdentityTest, SubsectionsMalformedAndControlValuesAreIgnored) {
  const GitIdentity id = ParseGitIdentity(
      "[user \"work\"]\n\tname = Sub\n[user]\n\tname = \"unterminated\n\temail = a\\nb\n"
      "\temail = \"bad\\q\"\n");
  EXPECT_EQ(id.name, "");
  EXPECT_EQ(id.email, "");
  EXPECT_EQ(GitIdentityConfig(id), "");
  // A value that would end the quoted string and add a section cannot.
  const GitIdentity hostile = ParseGitIdentity("[user]\n\tname = x\\\"\\n[core]\n");
  EXPECT_EQ(hostile.name, "");
}

TEST(GitIdentityTest, TheFileIncludesTheImagesSystemConfigFirst) {
  const std::string file = GitIdentityConfig({"N", ""});
  EXPECT_LT(file.find("path = /etc/gitconfig"), file.find("[user]"));
  EXPECT_THAT(file, Not(HasSubstr("\temail")));
}

}  // namespace
}  // namespace np
