#include "core/tier.h"

#include "absl/strings/str_cat.h"
#include "core/errors.h"

namespace np {
namespace {

// Every tier names what it does not protect against; these three hold for all
// of them, container included (ADR-0029, "Tier guarantees are data").
constexpr const char* kNeverReviews =
    "isolation bounds blast radius without reviewing anything: a harmful plan "
    "still runs, only with less reach";

std::vector<std::string> CommonLimits() {
  return {
      "container escape: a kernel or runtime vulnerability crosses any "
      "container boundary",
      "anything reachable through a mount or network the operator enabled",
      kNeverReviews,
  };
}

}  // namespace

absl::string_view TierName(Tier tier) {
  switch (tier) {
    case Tier::kDirect:
      return "direct";
    case Tier::kWorktree:
      return "worktree";
    case Tier::kContainer:
      return "container";
  }
  return "direct";
}

absl::StatusOr<Tier> ParseTier(absl::string_view name) {
  if (name == "direct") return Tier::kDirect;
  if (name == "worktree") return Tier::kWorktree;
  if (name == "container") return Tier::kContainer;
  return MakeError(
      absl::StatusCode::kInvalidArgument, "isolation-unknown-tier",
      absl::StrCat("unknown tier \"", name, "\"; expected direct, worktree or container"),
      {{"tier", name}, {"expected", {"direct", "worktree", "container"}}});
}

namespace {

TierDescription DirectDescription() {
  return {
      Tier::kDirect,
      false,
      false,
      false,
      "No isolation from nubos-pilot. The agent has whatever the host CLI "
      "grants - normally your entire account: every file, every "
      "credential, the network.",
      "You wrote or reviewed the plan yourself and accept that the agent "
      "acts with your account's rights.",
      {
          "anything: the program runs with your account's full rights, "
          "including your home directory, credentials and the network",
          "parallel slices writing over each other's working tree",
          kNeverReviews,
      },
  };
}

TierDescription WorktreeDescription() {
  return {
      Tier::kWorktree,
      true,
      false,
      false,
      "Version isolation only (ADR-0008): parallel slices work in their own "
      "git worktrees and cannot corrupt each other. Rights are unchanged "
      "from direct.",
      "Plans run slices in parallel and you trust them with your account's "
      "rights.",
      {
          "anything a program with your account's rights can do: a git "
          "worktree grants the same filesystem rights as the parent "
          "checkout",
          "reads of your home directory and credentials, and the network",
          "git state shared between worktrees (stash, config, hooks)",
          kNeverReviews,
      },
  };
}

TierDescription ContainerDescription(Runtime runtime) {
  TierDescription d{
      Tier::kContainer,
      true,
      true,
      true,
      "Rights isolation. The project directory is mounted, nothing else; no "
      "network by default; all capabilities dropped, no new privileges, a "
      "read-only root.",
      "The plan was generated, shared through a repository or produced by a "
      "model you do not control, and the agent should reach only the project.",
      CommonLimits(),
  };
  d.does_not_protect_against.push_back(
      "changes to the project itself: it is mounted read-write, so the agent can "
      "rewrite anything in it, including .git and build scripts you later run "
      "outside the container");
  const RuntimeTraits& traits = TraitsOf(runtime);
  absl::StrAppend(&d.summary, traits.summary_note);
  for (absl::string_view limit : traits.limits) d.does_not_protect_against.emplace_back(limit);
  return d;
}

}  // namespace

TierDescription DescribeTier(Tier tier, Runtime runtime) {
  switch (tier) {
    case Tier::kDirect:
      return DirectDescription();
    case Tier::kWorktree:
      return WorktreeDescription();
    case Tier::kContainer:
      break;
  }
  return ContainerDescription(runtime);
}

nlohmann::json DescriptionToJson(const TierDescription& description) {
  return {
      {"tier", TierName(description.tier)},
      {"isolates_versions", description.isolates_versions},
      {"isolates_rights", description.isolates_rights},
      {"network_restricted", description.network_restricted},
      {"summary", description.summary},
      {"use_when", description.use_when},
      {"does_not_protect_against", description.does_not_protect_against},
  };
}

}  // namespace np
