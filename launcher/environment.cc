#include "launcher/environment.h"

#include "absl/strings/str_cat.h"
#include "launcher/host.h"

namespace np {
namespace {

absl::string_view NameOf(absl::string_view entry) { return entry.substr(0, entry.find('=')); }

}  // namespace

std::vector<std::string> EditEnvironment(char** envp, const std::vector<std::string>& set,
                                         const std::vector<std::string>& unset) {
  // On the run path before every exec: names of `set` found once, and one
  // allocation for the vector instead of a regrowth every power of two.
  std::vector<absl::string_view> set_names;
  set_names.reserve(set.size());
  for (const std::string& s : set) set_names.push_back(NameOf(s));
  size_t count = 0;
  for (char** entry = envp; entry != nullptr && *entry != nullptr; ++entry) ++count;
  std::vector<std::string> env;
  env.reserve(count + set.size());
  for (char** entry = envp; entry != nullptr && *entry != nullptr; ++entry) {
    const absl::string_view var(*entry);
    const absl::string_view name = NameOf(var);
    bool drop = false;
    for (absl::string_view u : unset) drop = drop || u == name;
    for (absl::string_view n : set_names) drop = drop || n == name;
    if (!drop) env.emplace_back(var);
  }
  env.insert(env.end(), set.begin(), set.end());
  return env;
}

std::vector<std::string> BuildEnvironment(const EnvPlan& plan, char** envp) {
  if (plan.inherit) return EditEnvironment(envp, plan.set, plan.unset);
  std::vector<std::string> env = plan.set;
  for (const std::vector<std::string>* names : {&plan.pass, &plan.forward}) {
    for (const std::string& name : *names) {
      absl::string_view value = GetEnv(envp, name);
      if (value.data() != nullptr) env.push_back(absl::StrCat(name, "=", value));
    }
  }
  return env;
}

}  // namespace np
