// A thread that swaps two names in a directory (renameat2 RENAME_EXCHANGE)
// in a loop: another sandbox of the same user changing the tree while
// np-exec looks at it. Each state holds for a moment, or nothing would ever
// see the one it did not start with.
#ifndef NP_EXEC_TESTS_SUPPORT_EXCHANGER_H_
#define NP_EXEC_TESTS_SUPPORT_EXCHANGER_H_

#include <fcntl.h>
#include <linux/fs.h>
#include <stdio.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <random>
#include <string>
#include <thread>

namespace np::testing {

// Exchanges two names in `dir` as fast as it can until stopped; counts the
// exchanges that happened.
class Exchanger {
 public:
  // Each state holds for `min_us` to `max_us` (at random) before the next
  // exchange.
  Exchanger(const std::string& dir, std::string a, std::string b, unsigned min_us = 50,
            unsigned max_us = 1050)
      : a_(std::move(a)),
        b_(std::move(b)),
        min_us_(min_us),
        max_us_(max_us),
        original_min_us_(min_us),
        original_max_us_(max_us) {
    dir_fd_ = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  }
  ~Exchanger() {
    Stop();
    if (dir_fd_ >= 0) close(dir_fd_);
  }
  void Start() {
    thread_ = std::thread([this] {
      while (!stop_.load()) {
        if (renameat2(dir_fd_, a_.c_str(), dir_fd_, b_.c_str(), RENAME_EXCHANGE) == 0) {
          // Both versions must each stay in place for a moment, or nothing
          // would ever see the one it did not start with.
          const long done = exchanges_.fetch_add(1) + 1;
          // An even count: the names are as they were at the start.
          const bool original = done % 2 == 0;
          const unsigned low = original ? original_min_us_.load() : min_us_.load();
          const unsigned high = std::max(low, original ? original_max_us_.load() : max_us_.load());
          usleep(low + static_cast<unsigned>(random_() % (high - low + 1)));
        }
      }
    });
  }
  // Stops and leaves the names as they were at the start.
  void Stop() {
    if (!thread_.joinable()) return;
    stop_.store(true);
    thread_.join();
    if (exchanges_.load() % 2 == 1) {
      renameat2(dir_fd_, a_.c_str(), dir_fd_, b_.c_str(), RENAME_EXCHANGE);
    }
  }
  long exchanges() const { return exchanges_.load(); }
  void SetHold(unsigned min_us, unsigned max_us) {
    max_us_.store(max_us);
    min_us_.store(min_us);
    SetOriginalHold(min_us, max_us);
  }
  // How long the names stay as they were at the start; the exchanged state
  // keeps SetHold's.
  void SetOriginalHold(unsigned min_us, unsigned max_us) {
    original_max_us_.store(max_us);
    original_min_us_.store(min_us);
  }

 private:
  int dir_fd_ = -1;
  std::string a_;
  std::string b_;
  std::atomic<unsigned> min_us_;
  std::atomic<unsigned> max_us_;
  std::atomic<unsigned> original_min_us_{0};
  std::atomic<unsigned> original_max_us_{0};
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::atomic<long> exchanges_{0};
  std::minstd_rand random_{std::random_device()()};
};

}  // namespace np::testing

#endif  // NP_EXEC_TESTS_SUPPORT_EXCHANGER_H_
