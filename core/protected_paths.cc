#include "core/protected_paths.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstring>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "core/errors.h"
#include "core/git_layout.h"
#include "core/paths.h"

namespace np {
namespace {

// A path of the list: relative, normalised, and whether it names a directory.
struct Entry {
  std::string path;
  bool directory = false;
};

Entry ToEntry(absl::string_view listed) {
  Entry entry;
  entry.directory = absl::EndsWith(listed, "/");
  entry.path = NormalizePath(listed);
  return entry;
}

absl::Status BadProtect(const nlohmann::json& value, absl::string_view why) {
  return MakeError(
      absl::StatusCode::kInvalidArgument, "isolation-protect-bad-path",
      absl::StrCat("isolation.container.protect entry ",
                   value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), " ", why,
                   "; give a path relative to the project, such as "
                   "\"scripts/deploy.sh\" or \".husky/\""),
      {{"key", "isolation.container.protect[]"}, {"value", value}});
}

// The lstat of `relative` below the project: relative to the opened folder
// `project_fd` when there is one, else by its path below `project_real`.
int LstatBelow(int project_fd, absl::string_view project_real, const std::string& relative,
               struct stat* st) {
  if (project_fd >= 0) return fstatat(project_fd, relative.c_str(), st, AT_SYMLINK_NOFOLLOW);
  return lstat(JoinPath(project_real, relative).c_str(), st);
}

absl::Status Unsafe(const std::string& path, absl::string_view what) {
  return MakeError(absl::StatusCode::kFailedPrecondition, "isolation-protected-path-unsafe",
                   absl::StrCat("the protected path ", path, " is ", what,
                                "; np-exec cannot keep it read-only inside the sandbox. Replace "
                                "it with the file or directory itself, or remove it"),
                   {{"path", path}, {"kind", what}});
}

// `path` relative to `root` when inside it (root itself: ""), else nullopt-ish
// false.
bool RelativeInside(absl::string_view path, absl::string_view root, std::string* relative) {
  if (!IsInside(path, root)) return false;
  absl::string_view rest = path.substr(root.size());
  if (!rest.empty() && rest.front() == '/') rest.remove_prefix(1);
  *relative = std::string(rest);
  return true;
}

bool Covers(absl::string_view outer, absl::string_view inner) { return IsInside(inner, outer); }

size_t Depth(absl::string_view relative) {
  return static_cast<size_t>(std::count(relative.begin(), relative.end(), '/'));
}

}  // namespace

const std::vector<ProtectedPathEntry>& GitProtectedTable() {
  static const auto* table = new std::vector<ProtectedPathEntry>{
      {"hooks/", "git runs its hooks on commit, checkout, merge, rebase and push"},
      {"config",
       "git obeys it: core.hooksPath, core.fsmonitor, core.sshCommand, filters and "
       "aliases run commands"},
      {"config.worktree", "git obeys it as config (extensions.worktreeConfig)"},
      {"commondir", "git reads config and hooks from the directory it names"},
      {"info/", "git applies its attributes (filter and diff drivers run commands) and excludes"},
      {"modules/", "submodules' git directories, each with its own config and hooks"},
      {"worktrees/", "linked worktrees' git directories, each with its own config"},
  };
  return *table;
}

const std::vector<ProtectedPathEntry>& ProtectedPathTable() {
  static const auto* table = [] {
    auto* rows = new std::vector<ProtectedPathEntry>{
        {".nubos-pilot/config.json",
         "np-exec reads the tier, mounts and network from it on every spawn"},
        {".nubos-pilot/audit/", "np-exec's audit log: the record of what ran"},
        {".nubos-pilot/bin/", "nubos-pilot's payload, which the host runs with node"},
    };
    // Through these, `.git` itself is covered: a file (a worktree's pointer to
    // its git directory) is in their way and so protected whole; a directory
    // becomes a mount point of its own; absent, it gets a placeholder
    // directory, so no program can `git init` a repository whose config the
    // host's git would later obey.
    for (const ProtectedPathEntry& entry : GitProtectedTable()) {
      rows->push_back({absl::StrCat(".git/", entry.path), entry.runs_it});
    }
    rows->insert(
        rows->end(),
        {
            {".gitmodules", "git clones and updates submodules from it (url, update = !command)"},
            {".claude/", "Claude Code's project settings: hooks, MCP servers, allowed commands"},
            {".mcp.json", "MCP clients (Claude Code and others) start the servers it names"},
            {".gemini/",
             "Gemini CLI's project settings in a trusted workspace: MCP servers, "
             "tool discovery and call commands, custom commands"},
            {".codex/",
             "Codex CLI's project config.toml in a trusted project: MCP servers, "
             "notify command, sandbox and approval policy"},
            {".vscode/",
             "VS Code: tasks that run on folder open, terminal profiles and tool "
             "paths in settings, launch configurations, MCP servers"},
            {".idea/",
             "JetBrains IDEs: run configurations, startup tasks, tool and "
             "interpreter paths"},
            {".cursor/", "Cursor: MCP servers (mcp.json), rules and environment"},
            {".zed/", "Zed: language and context servers in settings.json, tasks.json"},
            {".devcontainer/",
             "Dev Containers: devcontainer.json's initializeCommand runs on "
             "the host, the rest builds the container the editor opens"},
            {".devcontainer.json", "Dev Containers, the same as .devcontainer/devcontainer.json"},
            {".envrc", "direnv runs it in your shell when you enter the directory"},
        });
    return rows;
  }();
  return *table;
}

const std::vector<std::string>& DefaultProtectedPaths() {
  static const auto* paths = [] {
    auto* list = new std::vector<std::string>;
    for (const ProtectedPathEntry& entry : ProtectedPathTable()) {
      list->push_back(entry.path);
    }
    return list;
  }();
  return *paths;
}

const std::vector<std::string>& GitProtectedEntries() {
  static const auto* entries = [] {
    auto* list = new std::vector<std::string>;
    for (const ProtectedPathEntry& entry : GitProtectedTable()) {
      list->push_back(entry.path);
    }
    return list;
  }();
  return *entries;
}

absl::StatusOr<std::vector<std::string>> ParseProtect(const nlohmann::json& value) {
  if (!value.is_array() || value.size() > kMaxProtectEntries) {
    return MakeError(absl::StatusCode::kInvalidArgument, "isolation-invalid-value",
                     absl::StrCat("isolation.container.protect must be an array of at most ",
                                  kMaxProtectEntries, " paths relative to the project"),
                     {{"key", "isolation.container.protect"}});
  }
  std::vector<std::string> paths;
  for (const nlohmann::json& item : value) {
    if (!item.is_string()) {
      return MakeError(absl::StatusCode::kInvalidArgument, "isolation-invalid-value",
                       "isolation.container.protect entries must be strings",
                       {{"key", "isolation.container.protect[]"}, {"value", item}});
    }
    const std::string text = item.get<std::string>();
    if (text.empty()) return BadProtect(item, "is empty");
    if (text.size() > 1024) return BadProtect(item, "is longer than 1024 bytes");
    if (absl::string_view(text).find_first_of(absl::string_view("\0\n\r", 3)) !=
        std::string::npos) {
      return BadProtect(item, "contains a NUL, newline or carriage return");
    }
    if (text.front() == '/') return BadProtect(item, "is absolute");
    if (HasDotDot(text)) return BadProtect(item, "has a \"..\" component");
    Entry entry = ToEntry(text);
    if (entry.path == ".") return BadProtect(item, "names the project itself");
    paths.push_back(entry.directory ? entry.path + "/" : entry.path);
  }
  return paths;
}

absl::StatusOr<std::vector<std::string>> ProtectedList(absl::string_view project_real,
                                                       const std::vector<std::string>& extra,
                                                       const ProjectGit* git_read, int project_fd) {
  absl::Status valid = CheckAbsolutePath(project_real, "invalid-path");
  if (!valid.ok()) return valid;
  std::vector<std::string> list = DefaultProtectedPaths();
  // git follows a `.git` link; np-exec refuses one before reading through it,
  // since the program could retarget it (PlanProtectedBinds says the same).
  const std::string dot_git = JoinPath(project_real, ".git");
  struct stat st;
  if (LstatBelow(project_fd, project_real, ".git", &st) == 0 && S_ISLNK(st.st_mode)) {
    return Unsafe(dot_git, "a symbolic link");
  }
  absl::StatusOr<GitLayout> git = OwnGitLayout(project_real, git_read);
  if (!git.ok()) return git.status();
  if (git->kind == GitLayout::Kind::kFile) {
    // The git and common directories of a worktree or submodule usually lie
    // outside the project, unmounted; when inside, they are as exposed as
    // `.git/` itself.
    for (const std::string* dir : {&git->git_dir, &git->common_dir}) {
      std::string relative;
      if (!RelativeInside(*dir, project_real, &relative) || relative.empty()) continue;
      for (const std::string& entry : GitProtectedEntries()) {
        list.push_back(JoinPath(relative, entry));
      }
    }
  }
  list.insert(list.end(), extra.begin(), extra.end());
  std::vector<std::string> unique;
  for (const std::string& path : list) {
    if (std::find(unique.begin(), unique.end(), path) == unique.end()) unique.push_back(path);
  }
  return unique;
}

namespace {

// One listed path walked from the project down, component by component:
// where it stops (missing, a placeholder, a file, its end) is a read-only
// node; each existing directory above it is a writable parent to pin.
// `parents` holds the directories an earlier entry of the same pass walked
// through: judged once (`.git/` is above seven entries), one snapshot.
absl::Status WalkProtectedEntry(absl::string_view project_real, int project_fd,
                                const std::string& listed, std::vector<ProtectedBind>& nodes,
                                std::vector<std::string>& parents) {
  const Entry entry = ToEntry(listed);
  if (entry.path.empty() || entry.path == "." || entry.path.front() == '/' ||
      HasDotDot(entry.path)) {
    return BadProtect(nlohmann::json(listed), "is not a relative path inside the project");
  }
  const std::vector<std::string> parts = absl::StrSplit(entry.path, '/');
  std::string prefix;
  for (size_t i = 0; i < parts.size(); ++i) {
    prefix = prefix.empty() ? parts[i] : JoinPath(prefix, parts[i]);
    const bool last = i + 1 == parts.size();
    if (!last && std::find(parents.begin(), parents.end(), prefix) != parents.end()) continue;
    const std::string host_path = JoinPath(project_real, prefix);
    struct stat st;
    if (LstatBelow(project_fd, project_real, prefix, &st) != 0) {
      if (errno != ENOENT) return Unsafe(host_path, absl::StrCat("unreadable: ", strerror(errno)));
      nodes.push_back({prefix, false, true, !last || entry.directory, ""});
      return absl::OkStatus();
    }
    if (S_ISLNK(st.st_mode)) return Unsafe(host_path, "a symbolic link");
    if (IsPlaceholder(st, prefix)) {
      // Another spawn's placeholder (or one a killed np-exec left): keep it
      // as the read-only node; never create anything inside it. Still a
      // placeholder: its spawn may remove it before this one's lock, and
      // this one's re-creates it, so it is bound by path (mount_pins.h).
      nodes.push_back({prefix, false, true, S_ISDIR(st.st_mode), ""});
      return absl::OkStatus();
    }
    if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode)) {
      return Unsafe(host_path, "neither a regular file nor a directory");
    }
    if (S_ISREG(st.st_mode) && st.st_nlink > 1) {
      // A read-only bind protects a name, not the inode: another name of
      // the same file in the writable project (made by an earlier
      // sandbox, before the path was protected) writes it all the same.
      return Unsafe(host_path, absl::StrCat("a file with ", st.st_nlink,
                                            " hard links (another name of it could be written)"));
    }
    if (last || !S_ISDIR(st.st_mode)) {
      // A file where the path wants a directory blocks everything below it
      // for as long as the file stays, so the file is what is protected.
      nodes.push_back({prefix, false, false, S_ISDIR(st.st_mode), ""});
      return absl::OkStatus();
    }
    parents.push_back(prefix);
  }
  return absl::OkStatus();
}

// The binds in the order they are mounted: the parents by depth, then the
// nodes. Nodes named twice are merged (a directory wins: `.git` missing is
// one placeholder directory for every `.git/...` entry), and what an outer
// read-only node already covers is dropped.
std::vector<ProtectedBind> OrderProtectedBinds(const std::vector<ProtectedBind>& nodes,
                                               std::vector<std::string> parents) {
  std::vector<ProtectedBind> merged;
  for (const ProtectedBind& node : nodes) {
    auto same = std::find_if(merged.begin(), merged.end(),
                             [&](const ProtectedBind& m) { return m.relative == node.relative; });
    if (same == merged.end()) {
      merged.push_back(node);
    } else {
      same->directory = same->directory || node.directory;
    }
  }
  auto covered = [&merged](absl::string_view relative, bool strictly) {
    return std::any_of(merged.begin(), merged.end(), [&](const ProtectedBind& node) {
      return Covers(node.relative, relative) && (!strictly || node.relative != relative);
    });
  };
  std::sort(parents.begin(), parents.end(), [](const std::string& a, const std::string& b) {
    return Depth(a) != Depth(b) ? Depth(a) < Depth(b) : a < b;
  });
  parents.erase(std::unique(parents.begin(), parents.end()), parents.end());
  std::vector<ProtectedBind> binds;
  for (const std::string& parent : parents) {
    if (!covered(parent, /*strictly=*/false)) binds.push_back({parent, true, false, true, ""});
  }
  std::sort(merged.begin(), merged.end(),
            [](const ProtectedBind& a, const ProtectedBind& b) { return a.relative < b.relative; });
  for (const ProtectedBind& node : merged) {
    if (!covered(node.relative, /*strictly=*/true)) binds.push_back(node);
  }
  return binds;
}

}  // namespace

absl::StatusOr<std::vector<ProtectedBind>> PlanProtectedBinds(
    absl::string_view project_real, const std::vector<std::string>& protected_list,
    int project_fd) {
  absl::Status valid = CheckAbsolutePath(project_real, "invalid-path");
  if (!valid.ok()) return valid;
  std::vector<ProtectedBind> nodes;  // Read-only.
  std::vector<std::string> parents;  // Existing directories to pin.
  for (const std::string& listed : protected_list) {
    absl::Status walked = WalkProtectedEntry(project_real, project_fd, listed, nodes, parents);
    if (!walked.ok()) return walked;
  }
  return OrderProtectedBinds(nodes, std::move(parents));
}

absl::StatusOr<std::vector<ProtectedBind>> ProtectedBindsForSpawn(
    absl::string_view project_real, const std::vector<std::string>& extra,
    const std::vector<ValidatedMount>& mounts, const ProjectGit* git, int project_fd) {
  absl::StatusOr<std::vector<std::string>> list =
      ProtectedList(project_real, extra, git, project_fd);
  if (!list.ok()) return list.status();
  absl::StatusOr<std::vector<ProtectedBind>> binds =
      PlanProtectedBinds(project_real, *list, project_fd);
  if (!binds.ok()) return binds.status();
  absl::Status clear = CheckMountsAvoidProtected(mounts, project_real, *binds);
  if (!clear.ok()) return clear;
  return binds;
}

std::string BindHostPath(absl::string_view project_real, const ProtectedBind& bind) {
  return JoinPath(bind.root.empty() ? project_real : absl::string_view(bind.root), bind.relative);
}

absl::string_view PlaceholderContent(absl::string_view relative) {
  return BaseName(relative) == "commondir" ? ".\n" : "";
}

PlaceholderKind PlaceholderKindOf(const ProtectedBind& bind) {
  if (bind.directory) return PlaceholderKind::kDirectory;
  if (!bind.root.empty() || bind.relative == ".nubos-pilot/config.json") {
    return PlaceholderKind::kFile;
  }
  for (absl::string_view part : absl::StrSplit(bind.relative, '/')) {
    if (part == ".git") return PlaceholderKind::kFile;
  }
  return PlaceholderKind::kSocket;
}

bool IsPlaceholder(const struct stat& st, absl::string_view relative) {
  const unsigned mode = st.st_mode & 07777;
  if (S_ISSOCK(st.st_mode)) return mode == kPlaceholderSocketMode;
  if (S_ISREG(st.st_mode)) {
    return mode == kPlaceholderFileMode &&
           static_cast<size_t>(st.st_size) == PlaceholderContent(relative).size();
  }
  return S_ISDIR(st.st_mode) && mode == kPlaceholderDirMode && st.st_nlink == 2;
}

absl::Status ValidateProtectedBind(const ProtectedBind& bind) {
  const std::string& path = bind.relative;
  if (path.empty() || path.front() == '/' || HasDotDot(path) || path.size() > kMaxPathBytes ||
      absl::string_view(path).find_first_of(absl::string_view("\0\n\r", 3)) != std::string::npos ||
      NormalizePath(path) != path || path == ".") {
    return MakeError(absl::StatusCode::kInvalidArgument, "isolation-protected-path-unsafe",
                     absl::StrCat("protected bind \"", path,
                                  "\" is not a clean relative path inside the project"),
                     {{"path", path}});
  }
  return absl::OkStatus();
}

absl::Status CheckMountsAvoidProtected(const std::vector<ValidatedMount>& mounts,
                                       absl::string_view project_real,
                                       const std::vector<ProtectedBind>& binds) {
  for (const ValidatedMount& mount : mounts) {
    if (!mount.writable) continue;
    for (const ProtectedBind& bind : binds) {
      if (bind.writable) continue;
      const std::string host_path = BindHostPath(project_real, bind);
      if (IsInside(mount.source, host_path) || IsInside(host_path, mount.source)) {
        return MakeError(absl::StatusCode::kPermissionDenied, "isolation-mount-protected-source",
                         absl::StrCat("the writable mount of ", mount.source,
                                      " would expose the protected ", host_path,
                                      " read-write; mount it with \"mode\": \"ro\" or mount a "
                                      "directory that does not hold protected paths"),
                         {{"source", mount.source}, {"protected", host_path}});
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace np
