#include "weft/harness/process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <system_error>
#include <utility>

extern char** environ;

namespace weft::harness {
namespace {

bool same_name(const char* entry, const std::string& assignment) {
  const std::size_t eq = assignment.find('=');
  return eq != std::string::npos && std::strncmp(entry, assignment.c_str(), eq + 1) == 0;
}

std::vector<std::string> child_environment(const SpawnOptions& o) {
  std::vector<std::string> assignments = o.env;
  if (o.preload) assignments.push_back("LD_PRELOAD=");
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    bool replaced = false;
    for (const auto& a : assignments) replaced = replaced || same_name(*e, a);
    if (!replaced) env.emplace_back(*e);
  }
  env.insert(env.end(), o.env.begin(), o.env.end());
  if (o.preload && !o.preload->empty()) env.push_back("LD_PRELOAD=" + *o.preload);
  return env;
}

// Closes a pipe's ends on every path out of spawn().
struct Pipe {
  int fd[2] = {-1, -1};
  Pipe() {
    if (pipe2(fd, O_CLOEXEC) != 0) throw std::system_error(errno, std::generic_category(), "weft: pipe");
  }
  Pipe(const Pipe&) = delete;
  Pipe& operator=(const Pipe&) = delete;
  ~Pipe() {
    for (int f : fd)
      if (f >= 0) close(f);
  }
  int take_read() noexcept { return std::exchange(fd[0], -1); }
  void close_write() noexcept {
    if (fd[1] >= 0) close(std::exchange(fd[1], -1));
  }
};

class FileActions {
 public:
  FileActions() { posix_spawn_file_actions_init(&fa_); }
  FileActions(const FileActions&) = delete;
  FileActions& operator=(const FileActions&) = delete;
  ~FileActions() { posix_spawn_file_actions_destroy(&fa_); }
  posix_spawn_file_actions_t* get() noexcept { return &fa_; }

 private:
  posix_spawn_file_actions_t fa_;
};

}  // namespace

std::string ChildResult::describe() const {
  if (hung) return "killed after its time limit (hung)";
  if (signal != 0) return "killed by signal " + std::to_string(signal);
  return "exited with status " + std::to_string(status);
}

ChildResult spawn(const std::vector<std::string>& argv, const SpawnOptions& options) {
  if (argv.empty()) throw std::invalid_argument("weft: spawn with an empty argv");
  std::vector<std::string> args = argv;
  std::vector<std::string> env = child_environment(options);
  std::vector<char*> argp, envp;
  for (auto& a : args) argp.push_back(a.data());
  argp.push_back(nullptr);
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);

  Pipe out, err;
  FileActions fa;
  posix_spawn_file_actions_addopen(fa.get(), STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(fa.get(), out.fd[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(fa.get(), options.merge_stderr ? out.fd[1] : err.fd[1], STDERR_FILENO);
  pid_t pid = 0;
  // glibc's posix_spawn reports a failed exec (ENOENT, EACCES) as its result.
  const int rc = posix_spawn(&pid, argp[0], fa.get(), nullptr, argp.data(), envp.data());
  if (rc != 0) throw std::system_error(rc, std::generic_category(), "weft: cannot start " + argv[0]);
  out.close_write();
  err.close_write();

  ChildResult r;
  std::array<pollfd, 2> fds = {{{out.take_read(), POLLIN, 0}, {err.take_read(), POLLIN, 0}}};
  std::array<std::string*, 2> sinks = {&r.out, &r.err};
  int open_fds = 2;
  const auto deadline = options.timeout ? std::chrono::steady_clock::now() + *options.timeout
                                        : std::chrono::steady_clock::time_point::max();
  std::array<char, 65536> buf;
  while (open_fds > 0) {
    int wait_ms = -1;
    if (options.timeout) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) {
        r.hung = true;
        kill(pid, SIGKILL);
        break;
      }
      wait_ms = static_cast<int>(left.count());
    }
    if (poll(fds.data(), fds.size(), wait_ms) < 0) {
      if (errno == EINTR) continue;
      kill(pid, SIGKILL);
      break;
    }
    for (std::size_t i = 0; i < fds.size(); ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      const ssize_t n = read(fds[i].fd, buf.data(), buf.size());
      if (n > 0) {
        sinks[i]->append(buf.data(), static_cast<std::size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      }
    }
  }
  for (const pollfd& p : fds)
    if (p.fd >= 0) close(p.fd);
  // Both pipes are closed or the child was killed: it has exited or will
  // at once, so this wait cannot hang.
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) r.status = WEXITSTATUS(status);
  else if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
  return r;
}

std::string last_line(const std::string& text) {
  std::size_t end = text.size();
  while (end > 0) {
    const std::size_t nl = text.rfind('\n', end - 1);
    const std::size_t start = nl == std::string::npos ? 0 : nl + 1;
    if (start < end) return text.substr(start, end - start);
    if (nl == std::string::npos) break;
    end = nl;
  }
  return {};
}

}  // namespace weft::harness
