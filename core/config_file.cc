#include "core/config_file.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <set>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/errors.h"
#include "core/paths.h"

namespace np {
namespace {

absl::Status Unreadable(absl::string_view name, absl::string_view why) {
  return MakeError(absl::StatusCode::kFailedPrecondition, "config-unreadable",
                   absl::StrCat("cannot read ", name, ": ", why),
                   {{"file", name}, {"reason", why}});
}

// Depth of the deepest array or object, counted outside strings. Cheap, and it
// keeps a hostile file from reaching the parser's recursion at all.
int MaxNesting(absl::string_view text) {
  int depth = 0;
  int deepest = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      if (++depth > deepest) deepest = depth;
    } else if (c == '}' || c == ']') {
      --depth;
    }
  }
  return deepest;
}

// Watches the parser's events for a key repeated in one object under the
// top-level `isolation` or `workflow` (or those two themselves repeated).
class DuplicateKeyWatch {
 public:
  void See(nlohmann::json::parse_event_t event, const nlohmann::json& value) {
    using Event = nlohmann::json::parse_event_t;
    switch (event) {
      case Event::object_start:
      case Event::array_start: {
        const bool ours = open_.empty() ? false
                          : open_.size() == 1
                              ? (last_key_ == "isolation" || last_key_ == "workflow")
                              : open_.back().ours;
        open_.push_back({event == Event::object_start,
                         ours,
                         open_.empty() ? std::string() : Join(open_.back().path, last_key_),
                         {}});
        break;
      }
      case Event::object_end:
      case Event::array_end:
        if (!open_.empty()) open_.pop_back();
        break;
      case Event::key: {
        last_key_ = value.get<std::string>();
        if (open_.empty() || !open_.back().object) break;
        Open& object = open_.back();
        const bool counted =
            open_.size() == 1 ? (last_key_ == "isolation" || last_key_ == "workflow") : object.ours;
        if (counted && !object.keys.insert(last_key_).second && duplicate_.empty()) {
          duplicate_ = Join(object.path, last_key_);
        }
        break;
      }
      default:
        break;
    }
  }
  const std::string& duplicate() const { return duplicate_; }

 private:
  struct Open {
    bool object;
    bool ours;
    std::string path;
    std::set<std::string> keys;
  };
  static std::string Join(const std::string& path, const std::string& key) {
    return path.empty() ? key : absl::StrCat(path, ".", key);
  }
  std::vector<Open> open_;
  std::string last_key_;
  std::string duplicate_;
};

bool IsBlank(absl::string_view text) {
  for (char c : text) {
    if (c != ' ' && c != '\t' && c != '\n' && c != '\r') return false;
  }
  return true;
}

}  // namespace

absl::Status NotInProject(absl::string_view cwd) {
  return MakeError(absl::StatusCode::kFailedPrecondition, "not-in-project",
                   absl::StrCat("no .nubos-pilot/ directory in ", cwd,
                                " or any parent; run np-exec inside a nubos-pilot "
                                "project"),
                   {{"startedFrom", cwd}});
}

std::vector<std::string> ProjectsAtOrAbove(absl::string_view path) {
  std::vector<std::string> projects;
  for (std::string dir(path);;) {
    const std::string state = dir == "/" ? "/.nubos-pilot" : absl::StrCat(dir, "/.nubos-pilot");
    struct stat st;
    if (lstat(state.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) projects.push_back(dir);
    const size_t slash = dir.rfind('/');
    if (dir == "/" || slash == std::string::npos) break;
    dir.resize(slash == 0 ? 1 : slash);
  }
  return projects;
}

std::string ProjectConfigPath(absl::string_view project_root) {
  return project_root == "/" ? std::string("/.nubos-pilot/config.json")
                             : absl::StrCat(project_root, "/.nubos-pilot/config.json");
}

absl::StatusOr<nlohmann::json> ReadConfigOpen(int fd, absl::string_view name) {
  struct stat st;
  if (fstat(fd, &st) != 0) {
    const int err = errno;
    return Unreadable(name, strerror(err));
  }
  if (!S_ISREG(st.st_mode)) {
    const char* kind = S_ISDIR(st.st_mode) ? "directory" : "other";
    return MakeError(absl::StatusCode::kFailedPrecondition, "config-not-a-file",
                     absl::StrCat(name, " is not a regular file (", kind, ")"),
                     {{"file", name}, {"kind", kind}});
  }
  if (static_cast<size_t>(st.st_size) > kMaxConfigBytes) {
    return MakeError(
        absl::StatusCode::kInvalidArgument, "config-too-large",
        absl::StrCat(name, " is ", st.st_size, " bytes; the limit is ", kMaxConfigBytes),
        {{"file", name}, {"bytes", st.st_size}, {"limit", kMaxConfigBytes}});
  }
  std::string text(static_cast<size_t>(st.st_size), '\0');
  size_t got = 0;
  while (got < text.size()) {
    ssize_t n = read(fd, text.data() + got, text.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      return Unreadable(name, strerror(err));
    }
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  text.resize(got);
  return ParseConfigText(text, name);
}

absl::StatusOr<nlohmann::json> ReadConfigDescriptor(int fd, absl::string_view name) {
  absl::StatusOr<nlohmann::json> json = ReadConfigOpen(fd, name);
  close(fd);
  return json;
}

absl::StatusOr<nlohmann::json> ReadConfigFile(absl::string_view path) {
  const std::string name = BaseName(path);
  if (path.find('\0') != absl::string_view::npos) {
    return MakeError(absl::StatusCode::kInvalidArgument, "invalid-path",
                     "config path contains a NUL byte", {{"file", name}});
  }
  const std::string p(path);
  // O_NONBLOCK so that a FIFO planted as config.json cannot block every spawn.
  int fd = open(p.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) {
    const int err = errno;
    struct stat lst;
    if (err == ENOENT && lstat(p.c_str(), &lst) != 0) {
      return nlohmann::json::object();  // No file: defaults.
    }
    if (err == ENOENT || err == ELOOP) {
      return Unreadable(name, "it is a symbolic link that leads nowhere");
    }
    return Unreadable(name, strerror(err));
  }
  return ReadConfigDescriptor(fd, name);
}

absl::Status ProjectConfigLinkError(absl::string_view name) {
  return MakeError(absl::StatusCode::kFailedPrecondition, "config-not-a-file",
                   absl::StrCat("the project's ", name,
                                " is a symbolic link; np-exec reads a project's config only "
                                "from the project itself. Replace the link with the ",
                                name == ".nubos-pilot" ? "directory" : "file"),
                   {{"file", name}, {"kind", "symbolic link"}});
}

absl::StatusOr<nlohmann::json> ParseConfigText(absl::string_view text, absl::string_view name) {
  while (text.size() >= 3 && text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
  if (IsBlank(text)) return nlohmann::json::object();
  // The parser takes a NUL byte for the end of input and would silently
  // ignore everything after it; no valid JSON holds a raw NUL.
  if (text.find('\0') != absl::string_view::npos) {
    return MakeError(absl::StatusCode::kInvalidArgument, "config-invalid-json",
                     absl::StrCat(name, " is not valid JSON: it contains a NUL byte"),
                     {{"file", name}});
  }
  if (text.size() > kMaxConfigBytes) {
    return MakeError(absl::StatusCode::kInvalidArgument, "config-too-large",
                     absl::StrCat(name, " is larger than ", kMaxConfigBytes, " bytes"),
                     {{"file", name}, {"limit", kMaxConfigBytes}});
  }
  if (MaxNesting(text) > kMaxConfigDepth) {
    return MakeError(absl::StatusCode::kInvalidArgument, "config-invalid-json",
                     absl::StrCat(name, " nests deeper than ", kMaxConfigDepth, " levels"),
                     {{"file", name}, {"limit", kMaxConfigDepth}});
  }
  // The one place JSON is parsed with exceptions: the parser's message names
  // the line and column, which is what a person fixing the file needs.
  // Duplicate keys under np-exec's part (`isolation`, `workflow`) are errors:
  // the parser would silently keep the last, and a reviewer reading the first
  // would see another configuration than the one np-exec runs.
  DuplicateKeyWatch watch;
  nlohmann::json parsed;
  try {
    parsed = nlohmann::json::parse(
        text.begin(), text.end(),
        [&watch](int /*depth*/, nlohmann::json::parse_event_t event, nlohmann::json& value) {
          watch.See(event, value);
          return true;
        });
  } catch (const nlohmann::json::exception& e) {
    return MakeError(absl::StatusCode::kInvalidArgument, "config-invalid-json",
                     absl::StrCat(name, " is not valid JSON: ", e.what()), {{"file", name}});
  }
  if (!watch.duplicate().empty()) {
    return MakeError(absl::StatusCode::kInvalidArgument, "config-duplicate-key",
                     absl::StrCat(name, " sets ", watch.duplicate(),
                                  " twice; np-exec's part of the config must say each key once"),
                     {{"file", name}, {"key", watch.duplicate()}});
  }
  if (!parsed.is_object()) {
    return MakeError(
        absl::StatusCode::kInvalidArgument, "config-invalid-shape",
        absl::StrCat(name, " must hold a JSON object at the top level, not ", parsed.type_name()),
        {{"file", name}, {"type", parsed.type_name()}});
  }
  return parsed;
}

}  // namespace np
