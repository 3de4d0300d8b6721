#include "launcher/runtime/bwrap_data.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "core/errors.h"
#include "launcher/runtime/sealed_memfd.h"

namespace np {
namespace {

absl::Status Failed(absl::string_view path, int err) {
  return MakeError(absl::StatusCode::kFailedPrecondition, "account-view-failed",
                   absl::StrCat("cannot hand the sandbox's passwd and group view (", path,
                                ") to bubblewrap: ", strerror(err)),
                   {{"path", path}});
}

}  // namespace

absl::StatusOr<std::unique_ptr<BwrapAccountData>> BwrapAccountData::Create(
    const AccountFiles& files, const std::string& dir) {
  std::unique_ptr<BwrapAccountData> data(new BwrapAccountData());
  const std::pair<std::string, const std::string*> views[] = {
      {AccountPasswdPath(dir), &files.passwd},
      {AccountGroupPath(dir), &files.group},
      {AccountGitConfigPath(dir), &files.gitconfig}};
  for (const auto& [path, text] : views) {
    if (text == &files.gitconfig && text->empty()) continue;
    const int fd = SealedMemfd("np-exec account view", *text);
    if (fd < 0) return Failed(path, errno);
    data->files_.push_back({path, fd});
  }
  return data;
}

BwrapAccountData::~BwrapAccountData() {
  for (const DataFile& file : files_) close(file.fd);
}

absl::Status UseDataFiles(std::vector<std::string>& argv, const std::vector<DataFile>& files,
                          std::vector<int>& keep_fds) {
  for (const DataFile& file : files) {
    // bubblewrap's options end at "--": what follows is the program's argv.
    size_t end = static_cast<size_t>(std::find(argv.begin(), argv.end(), "--") - argv.begin());
    int found = 0;
    for (size_t i = 0; i + 2 < end; ++i) {
      if (argv[i] != "--ro-bind" || argv[i + 1] != file.source) continue;
      const std::string dest = argv[i + 2];
      argv.erase(argv.begin() + static_cast<std::ptrdiff_t>(i),
                 argv.begin() + static_cast<std::ptrdiff_t>(i) + 3);
      argv.insert(argv.begin() + static_cast<std::ptrdiff_t>(i),
                  {"--perms", "0644", "--ro-bind-data", absl::StrCat(file.fd), dest});
      i += 4;
      end += 2;
      ++found;
    }
    if (found != 1) {
      return MakeError(absl::StatusCode::kInternal, "spawn-failed",
                       absl::StrCat("the bubblewrap argv binds ", file.source, " ", found,
                                    " times, not once; nothing ran"));
    }
    keep_fds.push_back(file.fd);
  }
  return absl::OkStatus();
}

}  // namespace np
