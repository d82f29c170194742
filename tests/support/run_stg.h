// Running the stg binary (STG_BINARY) with its stdout and stderr captured.
#pragma once

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "files.h"

extern char** environ;

namespace stg_test {

struct RunResult {
  int status = -1;  // exit status, or -1 if the process did not exit normally
  std::string out;
  std::string err;
};

// Runs the stg binary with `args` and stdin from /dev/null; stdout and stderr
// go to stdout.txt and stderr.txt in `log_dir` (so nothing stray appears in
// the working directory). It runs in `cwd`, or in this process's working
// directory if `cwd` is empty.
// Runs `argv_text` (argv[0] a path, not searched in PATH) the same way.
inline RunResult run_program(std::vector<std::string> argv_text,
                             const std::filesystem::path& log_dir,
                             const std::filesystem::path& cwd = {}) {
  const std::filesystem::path out_path = log_dir / "stdout.txt";
  const std::filesystem::path err_path = log_dir / "stderr.txt";
  std::vector<char*> argv;
  for (std::string& a : argv_text) argv.push_back(a.data());
  argv.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0644);
  posix_spawn_file_actions_addopen(&actions, 2, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0644);
  if (!cwd.empty()) posix_spawn_file_actions_addchdir_np(&actions, cwd.c_str());
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) throw std::runtime_error("cannot start " + argv_text[0] + ": " + std::strerror(rc));
  int wstatus = 0;
  if (waitpid(pid, &wstatus, 0) != pid) throw std::runtime_error("waitpid failed");
  RunResult r;
  r.status = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -1;
  r.out = read_file(out_path);
  r.err = read_file(err_path);
  return r;
}

inline RunResult run_stg(const std::vector<std::string>& args, const std::filesystem::path& log_dir,
                         const std::filesystem::path& cwd = {}) {
  std::vector<std::string> argv_text = {STG_BINARY};
  argv_text.insert(argv_text.end(), args.begin(), args.end());
  return run_program(std::move(argv_text), log_dir, cwd);
}

}  // namespace stg_test
