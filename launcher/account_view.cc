#include "launcher/account_view.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>

#include "absl/strings/str_cat.h"
#include "core/container_argv.h"
#include "core/errors.h"
#include "core/passwd_view.h"
#include "core/runtime.h"
#include "launcher/egress/session.h"

namespace np {
namespace {

constexpr size_t kMaxAccountFileBytes = 4 << 20;

absl::Status Failed(absl::string_view path, int err) {
  return MakeError(absl::StatusCode::kFailedPrecondition, "account-view-failed",
                   absl::StrCat("cannot write the sandbox's passwd and group view in ", path, ": ",
                                strerror(err)),
                   {{"path", path}});
}

// The host's account file, without following a link in its place; "" when
// it cannot be read.
std::string ReadAccountFile(const char* path) {
  const int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return "";
  std::string text;
  struct stat st;
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
    char buffer[8192];
    ssize_t n;
    while ((n = read(fd, buffer, sizeof(buffer))) > 0 && text.size() < kMaxAccountFileBytes) {
      text.append(buffer, static_cast<size_t>(n));
    }
  }
  close(fd);
  return text.size() < kMaxAccountFileBytes ? text : "";
}

int WriteNew(const std::string& path, const std::string& text) {
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) return errno;
  size_t done = 0;
  int err = 0;
  while (done < text.size()) {
    const ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      err = n < 0 ? errno : EIO;
      break;
    }
    done += static_cast<size_t>(n);
  }
  // The umask may have narrowed it; the uid inside must read it.
  if (err == 0 && fchmod(fd, 0644) != 0) err = errno;
  close(fd);
  return err;
}

}  // namespace

absl::StatusOr<std::unique_ptr<AccountView>> AccountView::Create(
    const HostFacts& host, bool from_host, const std::vector<std::string>& writable_roots) {
  const std::string passwd = ReadAccountFile("/etc/passwd");
  const std::string group = ReadAccountFile("/etc/group");
  const SandboxAccount account = AccountFor(host.uid, host.gid, passwd, group);
  const std::string templ = absl::StrCat(
      egress::PrivateDirBase(host.xdg_runtime_dir, writable_roots), "/np-exec-account-XXXXXX");
  std::vector<char> buffer(templ.begin(), templ.end());
  buffer.push_back('\0');
  if (mkdtemp(buffer.data()) == nullptr) return Failed(templ, errno);
  std::unique_ptr<AccountView> view(new AccountView(buffer.data()));
  // A host file np-exec cannot read leaves the minimal base, never a view
  // without root.
  const absl::string_view passwd_base =
      from_host && !passwd.empty() ? absl::string_view(passwd) : kMinimalPasswd;
  const absl::string_view group_base =
      from_host && !group.empty() ? absl::string_view(group) : kMinimalGroup;
  int err = WriteNew(view->passwd_path(), PasswdView(passwd_base, account, kContainerHome));
  if (err == 0) err = WriteNew(view->group_path(), GroupView(group_base, account));
  if (err != 0) return Failed(view->dir_, err);
  return view;
}

AccountView::~AccountView() {
  unlink(passwd_path().c_str());
  unlink(group_path().c_str());
  rmdir(dir_.c_str());
}

absl::StatusOr<std::unique_ptr<AccountView>> MaybeAccountView(const Settings& settings,
                                                              const HostFacts& host) {
  const ContainerConfig& container = settings.config.container;
  if (settings.resolved.tier != Tier::kContainer || settings.project_root.empty() ||
      container.user.kind != UserSpec::Kind::kCaller) {
    return std::unique_ptr<AccountView>();
  }
  std::vector<std::string> writable = {settings.project_root};
  for (const MountSpec& mount : container.mounts) {
    if (mount.writable) writable.push_back(mount.source);
  }
  return AccountView::Create(host, TraitsOf(container.runtime).program_from_host, writable);
}

}  // namespace np
