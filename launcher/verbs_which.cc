// which NAME: what a shim runs, through which PATH entry, and on which tier
// a spawn of it would run here.
#include "absl/strings/str_cat.h"
#include "core/errors.h"
#include "core/runtime.h"
#include "core/settings.h"
#include "core/tier.h"
#include "launcher/output.h"
#include "launcher/shim_dir.h"
#include "launcher/verbs.h"
#include "shim/find_real_program.h"

namespace np {
namespace {

// Where a spawn of NAME runs on the effective tier, in one sentence.
std::string WhereItRuns(const Settings& settings, const std::string& name) {
  const Tier tier = settings.resolved.tier;
  if (tier != Tier::kContainer) {
    return "runs in place, with the rights of your account";
  }
  const ContainerConfig& container = settings.config.container;
  if (TraitsOf(container.runtime).uses_image) {
    return absl::StrCat("runs in a ", RuntimeName(container.runtime), " container of image ",
                        container.image, ", where ", name, " is looked up on the image's PATH");
  }
  return absl::StrCat("runs in a ", RuntimeName(container.runtime),
                      " sandbox, at its host path when the sandbox shows it");
}

// `which` without --json: the shim PATH finds first, the host's program,
// and what np-exec does with the name here.
std::string WhichText(const std::string& name, const std::optional<PathMatch>& first,
                      const absl::StatusOr<std::string>& program, const Settings& settings) {
  std::string text;
  if (!first.has_value()) {
    text = absl::StrCat(name, ": not on PATH\n");
  } else if (first->shim) {
    text = absl::StrCat(name, ": np-exec shim ", first->path, " (PATH entry ", first->dir, ")\n");
  } else {
    text = absl::StrCat(name, ": not an np-exec shim; PATH finds ", first->path,
                        " first, which runs without np-exec\n");
  }
  absl::StrAppend(&text, "  real program on the host: ",
                  program.ok() ? absl::StrCat(*program, " (PATH entry ", DirOf(*program), ")")
                               : absl::StrCat("none (", ErrorCode(program.status()), ")"),
                  "\n");
  absl::StrAppend(&text, "  through np-exec here: tier ", TierName(settings.resolved.tier),
                  " (from ", TierSourceName(settings.resolved.from), "); it ",
                  WhereItRuns(settings, name), "\n");
  return text;
}

}  // namespace

absl::StatusOr<Outcome> VerbWhich(const CommandLine& cl, const HostFacts& host) {
  const std::string& name = cl.which_name;
  absl::Status valid = ValidateShimName(name);
  if (!valid.ok()) return valid;
  absl::StatusOr<Settings> settings = LoadHostSettings(host);
  if (!settings.ok()) return settings.status();
  // The image this name runs in (`images`).
  settings->config.container.image = ImageFor(settings->config.container, name);
  const std::optional<PathMatch> first = FirstOnPath(name, host);
  const absl::StatusOr<std::string> program =
      FindRealProgram(name, host.path, host.cwd, host.self, StatFile);
  const Tier tier = settings->resolved.tier;
  // On docker and podman the name is looked up inside the image, not here.
  const bool inside_image =
      tier == Tier::kContainer && TraitsOf(settings->config.container.runtime).uses_image;

  nlohmann::json out = {
      {"name", name},
      {"shim", first.has_value() && first->shim
                   ? nlohmann::json({{"path", first->path}, {"path_entry", first->dir}})
                   : nlohmann::json(nullptr)},
      {"first_on_path", first.has_value() ? nlohmann::json(first->path) : nlohmann::json(nullptr)},
      {"program", program.ok() ? nlohmann::json(*program) : nlohmann::json(nullptr)},
      {"program_path_entry",
       program.ok() ? nlohmann::json(DirOf(*program)) : nlohmann::json(nullptr)},
      {"error",
       program.ok() ? nlohmann::json(nullptr) : nlohmann::json(ErrorCode(program.status()))},
      {"tier", TierName(tier)},
      {"effective_from", TierSourceName(settings->resolved.from)},
      {"runtime", tier == Tier::kContainer
                      ? nlohmann::json(RuntimeName(settings->config.container.runtime))
                      : nlohmann::json(nullptr)},
      {"image",
       inside_image ? nlohmann::json(settings->config.container.image) : nlohmann::json(nullptr)},
  };
  if (cl.json) {
    WriteJson(out);
  } else {
    WriteAll(1, WhichText(name, first, program, *settings));
  }
  // The report is on stdout either way. When a spawn here needs the host's
  // program (every tier but a container with an image) and there is none,
  // the error line says why and the exit status is 1.
  if (!program.ok() && !inside_image) return program.status();
  return Outcome{0};
}

}  // namespace np
