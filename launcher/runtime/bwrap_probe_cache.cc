#include "launcher/runtime/bwrap_probe_cache.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "launcher/state/nofollow_path.h"
#include "launcher/state/state_store.h"
#include "nlohmann/json.hpp"

namespace np {
namespace {

constexpr char kRecord[] = "bwrap-probe.json";
constexpr size_t kMaxRecordSize = 4096;

// A small /proc file's content, or "-" when it is absent.
std::string ReadSetting(const char* path) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "-";
  char buffer[128];
  ssize_t n = read(fd, buffer, sizeof(buffer));
  close(fd);
  return n > 0 ? std::string(buffer, static_cast<size_t>(n)) : "";
}

// The store directory, opened and checked as the caller's; "" when none.
std::string StoreDir(const HostFacts& host) {
  absl::StatusOr<StateStore> store = OpenStateStore(host);
  return store.ok() ? store->dir() : "";
}

}  // namespace

std::string BwrapProbeKey(const std::string& bin, uid_t uid) {
  struct stat st;
  if (bin.empty() || stat(bin.c_str(), &st) != 0) return "";
  return absl::StrCat(bin, "|", st.st_dev, ":", st.st_ino, ":", st.st_mode, ":", st.st_size, ":",
                      st.st_mtim.tv_sec, ".", st.st_mtim.tv_nsec, ":", st.st_ctim.tv_sec, ".",
                      st.st_ctim.tv_nsec, "|",
                      ReadSetting("/proc/sys/kernel/unprivileged_userns_clone"), "|",
                      ReadSetting("/proc/sys/user/max_user_namespaces"), "|",
                      ReadSetting("/proc/sys/kernel/apparmor_restrict_unprivileged_userns"), "|",
                      ReadSetting("/proc/sys/kernel/random/boot_id"), "|", uid);
}

std::optional<std::string> CachedBwrapProbe(const HostFacts& host, const std::string& key) {
  if (key.empty()) return std::nullopt;
  const std::string dir = StoreDir(host);
  if (dir.empty()) return std::nullopt;
  const std::string path = absl::StrCat(dir, "/", kRecord);
  const SmallFile file = ReadSmallFileAt(AT_FDCWD, path.c_str(), kMaxRecordSize);
  const struct stat& st = file.st;
  if (file.error != 0 || !S_ISREG(st.st_mode) || st.st_uid != host.uid || st.st_nlink != 1 ||
      (st.st_mode & 077) != 0 || file.text.size() > kMaxRecordSize) {
    return std::nullopt;
  }
  const nlohmann::json record =
      nlohmann::json::parse(file.text, nullptr, /*allow_exceptions=*/false);
  if (!record.is_object() || !record.contains("key") || !record["key"].is_string() ||
      record["key"].get<std::string>() != key || !record.contains("checked_at") ||
      !record["checked_at"].is_number_integer() || !record.contains("version") ||
      !record["version"].is_string()) {
    return std::nullopt;
  }
  const long long age =
      static_cast<long long>(time(nullptr)) - record["checked_at"].get<long long>();
  if (age < 0 || age > kProbeCacheSeconds) return std::nullopt;
  return record["version"].get<std::string>();
}

void RememberBwrapProbe(const HostFacts& host, const std::string& key, const std::string& version) {
  if (key.empty()) return;
  const std::string dir = StoreDir(host);
  if (dir.empty()) return;
  const std::string text = nlohmann::json{
      {"key", key},
      {"checked_at", static_cast<long long>(time(nullptr))},
      {"version", version}}.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  uint32_t random = 0;
  if (getrandom(&random, sizeof(random), 0) != sizeof(random)) random = 0;
  const std::string tmp = absl::StrCat(dir, "/", kRecord, ".", getpid(), ".", random);
  int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return;
  const bool written = write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  close(fd);
  if (!written || rename(tmp.c_str(), absl::StrCat(dir, "/", kRecord).c_str()) != 0) {
    unlink(tmp.c_str());
  }
}

}  // namespace np
