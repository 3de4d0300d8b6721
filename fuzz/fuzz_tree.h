// A fixed directory tree the fuzzers validate mounts against, at a fixed
// path so seed inputs can name its entries: /tmp/np-fuzz-tree/{project,
// outside, home} with links from the project to outside, to /proc, to the
// engine socket, a loop and a dangling link. Fuzzing only.
#ifndef NP_EXEC_FUZZ_FUZZ_TREE_H_
#define NP_EXEC_FUZZ_FUZZ_TREE_H_

#include <sys/stat.h>
#include <unistd.h>

#include <string>
#include <vector>

namespace np::fuzz {

inline constexpr const char* kTree = "/tmp/np-fuzz-tree";

inline std::string TreePath(const std::string& rel) { return std::string(kTree) + "/" + rel; }

// Creates the tree (idempotent) and returns the project's path.
inline std::string MakeTree() {
  for (const char* dir : {"", "project", "project/.nubos-pilot", "project/data", "project/src",
                          "project/a,b:c d", "outside", "outside/sub", "home"}) {
    mkdir(TreePath(dir).c_str(), 0755);
  }
  struct Link {
    const char* target;
    const char* rel;
  };
  for (const Link& link :
       {Link{"../../outside", "project/data/escape"}, Link{"/proc", "project/proc"},
        Link{"/run/docker.sock", "project/sock"}, Link{"/var/run", "project/varrun"},
        Link{"loop2", "project/loop1"}, Link{"loop1", "project/loop2"},
        Link{"/nonexistent/np-fuzz", "project/dangling"}, Link{"project", "plink"}}) {
    symlink(link.target, TreePath(link.rel).c_str());
  }
  return TreePath("project");
}

// Mount sources worth trying: inside, outside, links, control surfaces.
inline const std::vector<std::string>& SourcePool() {
  static const auto* pool = new std::vector<std::string>{TreePath("project/data"),
                                                         TreePath("project/src"),
                                                         TreePath("project/a,b:c d"),
                                                         TreePath("project/data/escape"),
                                                         TreePath("project/data/escape/sub"),
                                                         TreePath("project/data/escape/new"),
                                                         TreePath("project/proc"),
                                                         TreePath("project/sock"),
                                                         TreePath("project/varrun"),
                                                         TreePath("project/loop1"),
                                                         TreePath("project/dangling"),
                                                         TreePath("project"),
                                                         TreePath("plink/data"),
                                                         TreePath("outside"),
                                                         TreePath("home"),
                                                         TreePath("project-secrets"),
                                                         TreePath("project/../outside"),
                                                         "/",
                                                         "/proc",
                                                         "/proc/self",
                                                         "/sys",
                                                         "/dev",
                                                         "/dev/null",
                                                         "/run",
                                                         "/var/run/docker.sock",
                                                         "/run/docker.sock",
                                                         "/tmp",
                                                         "/usr/lib",
                                                         "/etc"};
  return *pool;
}

}  // namespace np::fuzz

#endif  // NP_EXEC_FUZZ_FUZZ_TREE_H_
