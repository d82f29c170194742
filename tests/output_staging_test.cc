// A run never leaves a broken output directory: every file goes to a staging
// directory inside --output_dir and only a complete run moves its files into
// place (removing stale rank files of a full run). A signal (SIGTERM), a
// file-size limit (EFBIG) or another write error removes the staging
// directory, leaves the earlier contents untouched and ends with one line.
// The end-to-end cases run the built stg binary, as tests/e2e_test.cc does.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "stg/io/cancel.h"
#include "stg/io/output_files.h"
#include "support/files.h"
#include "support/run_stg.h"
#include "support/temp_dir.h"

namespace stg {
namespace {

namespace fs = std::filesystem;
using stg_test::read_file;
using stg_test::run_stg;
using stg_test::RunResult;
using stg_test::TempDir;

// ---------------------------------------------------------------------------
// Helpers: a directory's whole content, the binary run in the background.

// Every file under `dir` (hidden ones too), by relative path, with its bytes;
// directories appear as "<path>/" with an empty content.
std::map<std::string, std::string> snapshot(const fs::path& dir) {
  std::map<std::string, std::string> files;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    const std::string rel = fs::relative(e.path(), dir).string();
    if (e.is_directory()) {
      files[rel + "/"] = "";
    } else {
      files[rel] = read_file(e.path());
    }
  }
  return files;
}

// The names in `dir` that start with ".stg-staging-".
std::vector<std::string> staging_dirs(const fs::path& dir) {
  std::vector<std::string> found;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.rfind(".stg-staging-", 0) == 0) found.push_back(name);
  }
  return found;
}

// The exit status, or -signal when the process was killed by a signal.
int exit_code(int wstatus) {
  if (WIFEXITED(wstatus)) return WEXITSTATUS(wstatus);
  if (WIFSIGNALED(wstatus)) return -WTERMSIG(wstatus);
  return -1000;
}

// The stg binary started in the background, stdout and stderr going to
// stdout.txt and stderr.txt in `log_dir`; with `file_size_limit` the child
// runs under RLIMIT_FSIZE of that many bytes. SIGINT, SIGTERM and SIGHUP
// start with their default action whatever this process inherited.
class Child {
 public:
  Child(const std::vector<std::string>& args, const fs::path& log_dir,
        std::optional<rlim_t> file_size_limit = std::nullopt)
      : log_dir_(log_dir) {
    std::vector<std::string> text = {STG_BINARY};
    text.insert(text.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (std::string& a : text) argv.push_back(a.data());
    argv.push_back(nullptr);
    const std::string out = (log_dir / "stdout.txt").string();
    const std::string err = (log_dir / "stderr.txt").string();
    pid_ = ::fork();
    if (pid_ < 0) throw std::runtime_error("fork failed");
    if (pid_ == 0) {
      // Only async-signal-safe calls between fork and exec.
      const int in_fd = ::open("/dev/null", O_RDONLY);
      const int out_fd = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      const int err_fd = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (in_fd < 0 || out_fd < 0 || err_fd < 0) ::_exit(126);
      ::dup2(in_fd, 0);
      ::dup2(out_fd, 1);
      ::dup2(err_fd, 2);
      for (int s : {SIGINT, SIGTERM, SIGHUP, SIGXFSZ}) ::signal(s, SIG_DFL);
      sigset_t none;
      sigemptyset(&none);
      ::sigprocmask(SIG_SETMASK, &none, nullptr);
      if (file_size_limit) {
        const struct rlimit limit = {*file_size_limit, *file_size_limit};
        if (::setrlimit(RLIMIT_FSIZE, &limit) != 0) ::_exit(125);
      }
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
  }
  ~Child() {
    if (!status_) {
      ::kill(pid_, SIGKILL);
      int wstatus = 0;
      ::waitpid(pid_, &wstatus, 0);
    }
  }
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  pid_t pid() const { return pid_; }
  // The exit code (exit_code()) if the child has ended, without waiting.
  std::optional<int> poll() {
    if (status_) return status_;
    int wstatus = 0;
    if (::waitpid(pid_, &wstatus, WNOHANG) == pid_) status_ = exit_code(wstatus);
    return status_;
  }
  // Waits up to `timeout` for the end; the exit code, or nothing on timeout.
  std::optional<int> wait(std::chrono::seconds timeout) {
    const auto until = std::chrono::steady_clock::now() + timeout;
    while (!poll() && std::chrono::steady_clock::now() < until)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    return status_;
  }
  std::string out() const { return read_file(log_dir_ / "stdout.txt"); }
  std::string err() const { return read_file(log_dir_ / "stderr.txt"); }

 private:
  fs::path log_dir_;
  pid_t pid_ = -1;
  std::optional<int> status_;
};

// Polls `condition` every 20 ms for up to `timeout`; true once it holds.
bool eventually(const std::function<bool()>& condition, std::chrono::seconds timeout) {
  const auto until = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    if (condition()) return true;
    if (std::chrono::steady_clock::now() >= until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

// The words of `text`, split at spaces.
std::vector<std::string> words(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

// The seed transformer, small: 8 ranks with --dp 2 --tp 2 --pp 2.
std::vector<std::string> small(std::vector<std::string> more) {
  std::vector<std::string> args = words(
      "--num_stacks 2 --dmodel 1024 --dff 4096 --head 16 --seq 512 --batch 8 --din 1024 "
      "--dout 1024");
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

// Earlier contents of an output directory, to check that a failed run leaves
// them alone (an old trace and comm-group file among them).
void populate(const fs::path& dir) {
  fs::create_directories(dir / "notes");
  stg_test::write_file(dir / "keep.txt", "earlier contents\n");
  stg_test::write_file(dir / "workload.0.et", "an earlier rank 0");
  stg_test::write_file(dir / "workload.9.et", "an earlier rank 9");
  stg_test::write_file(dir / "workload.json", "{}");
  stg_test::write_file(dir / "notes" / "a.txt", "a");
}

int count_lines(const std::string& text) {
  return static_cast<int>(std::count(text.begin(), text.end(), '\n'));
}

// ---------------------------------------------------------------------------
// The library: rank-file names, staging, commit, abort.

TEST(OutputStaging, MatchRankReadsBackWhatExpandRankWrites) {
  for (const std::string pattern : {"workload.%d.et", "t%d", "%d.et", "a%%b.%d.et", "sub/x.%d"}) {
    for (int64_t rank : {0, 7, 10, 65535}) {
      EXPECT_EQ(io::match_rank(pattern, io::expand_rank(pattern, rank)), rank) << pattern;
    }
  }
  EXPECT_EQ(io::match_rank("workload.%d.et", "workload.007.et"), std::nullopt);
  EXPECT_EQ(io::match_rank("workload.%d.et", "workload..et"), std::nullopt);
  EXPECT_EQ(io::match_rank("workload.%d.et", "workload.-1.et"), std::nullopt);
  EXPECT_EQ(io::match_rank("workload.%d.et", "workload.1x.et"), std::nullopt);
  EXPECT_EQ(io::match_rank("workload.%d.et", "workload.1.et.bak"), std::nullopt);
  EXPECT_EQ(io::match_rank("workload.%d.et", "workload.json"), std::nullopt);
  EXPECT_EQ(io::match_rank("a%%b.%d.et", "a%b.3.et"), 3);
  EXPECT_EQ(io::match_rank("a%%b.%d.et", "a%%b.3.et"), std::nullopt);
}

TEST(OutputStaging, NothingIsInPlaceBeforeCommit) {
  TempDir tmp;
  const fs::path dir = tmp.path() / "out";
  {
    io::OutputFiles files(dir.string());
    files.prepare();
    ASSERT_TRUE(fs::is_directory(files.staging_dir()));
    EXPECT_EQ(fs::path(files.staging_dir()).parent_path(), dir);
    files.write("a.txt", "A");
    files.write("b.txt", std::string(3 << 20, 'b'));  // several chunks
    EXPECT_FALSE(fs::exists(dir / "a.txt"));
    files.commit();
    EXPECT_FALSE(fs::exists(files.staging_dir()));
  }
  EXPECT_EQ(snapshot(dir), (std::map<std::string, std::string>{
                               {"a.txt", "A"}, {"b.txt", std::string(3 << 20, 'b')}}));
}

TEST(OutputStaging, AbortLeavesTheDirectoryAsItWas) {
  TempDir tmp;
  const fs::path dir = tmp.path() / "out";
  populate(dir);
  const auto before = snapshot(dir);
  io::OutputFiles files(dir.string());
  files.prepare();
  files.write("workload.0.et", "new");
  EXPECT_EQ(files.abort(), ": nothing was written to " + dir.string());
  EXPECT_EQ(snapshot(dir), before);
  // A directory the run created goes again.
  const fs::path fresh = tmp.path() / "fresh" / "deeper";
  {
    io::OutputFiles more(fresh.string());
    more.prepare();
    more.write("x", "x");
  }  // destroyed without commit()
  EXPECT_FALSE(fs::exists(tmp.path() / "fresh"));
}

TEST(OutputStaging, AStopRequestEndsTheWrites) {
  TempDir tmp;
  const fs::path dir = tmp.path() / "out";
  populate(dir);
  const auto before = snapshot(dir);
  io::OutputFiles files(dir.string());
  files.prepare();
  files.write("workload.0.et", "new");
  io::request_stop(SIGTERM);
  io::request_stop(SIGINT);  // the first signal is the one reported
  try {
    files.write("workload.1.et", "new");
    ADD_FAILURE() << "no Interrupted";
  } catch (io::Interrupted& e) {
    EXPECT_EQ(e.signal(), SIGTERM);
    e.append(files.abort());
    EXPECT_EQ(std::string(e.what()),
              "interrupted by SIGTERM: nothing was written to " + dir.string());
  }
  io::stop_signal = 0;
  EXPECT_EQ(snapshot(dir), before);
}

// A stop after many staged bytes (here: any) ends at once; the staged files
// and the directories the run created go in the background, and soon the
// directory is as it was.
TEST(OutputStaging, AStopAfterManyBytesRemovesThemInTheBackground) {
  TempDir tmp;
  const fs::path dir = tmp.path() / "out";
  populate(dir);
  const auto before = snapshot(dir);
  for (const fs::path& where : {dir, tmp.path() / "fresh" / "deeper"}) {
    io::OutputFiles files(where.string(), /*detach_bytes=*/1);
    files.prepare();
    files.write("workload.0.et", std::string(4096, 'x'));
    io::request_stop(SIGTERM);
    const std::string said = files.abort();
    io::stop_signal = 0;
    EXPECT_EQ(said, ": nothing was written to " + where.string() +
                        " (its 0 MiB of unfinished files are being removed in the background)");
  }
  EXPECT_TRUE(eventually([&] { return staging_dirs(dir).empty(); }, std::chrono::seconds(30)));
  EXPECT_TRUE(
      eventually([&] { return !fs::exists(tmp.path() / "fresh"); }, std::chrono::seconds(30)));
  EXPECT_EQ(snapshot(dir), before);
}

TEST(OutputStaging, CommitRemovesStaleRankFilesOnlyWhenAsked) {
  TempDir tmp;
  const fs::path dir = tmp.path() / "out";
  populate(dir);  // workload.0.et, workload.9.et, ...
  stg_test::write_file(dir / "workload.2.et", "old 2");
  stg_test::write_file(dir / "workload.09.et", "not a name %d writes");
  fs::create_directories(dir / "workload.5.et");  // a directory: left alone
  {
    io::OutputFiles files(dir.string());
    files.prepare();
    files.write("workload.0.et", "new 0");
    files.write("workload.1.et", "new 1");
    files.commit();  // a part of a run: nothing stale
  }
  EXPECT_EQ(read_file(dir / "workload.2.et"), "old 2");
  EXPECT_TRUE(fs::exists(dir / "workload.9.et"));
  {
    io::OutputFiles files(dir.string());
    files.prepare();
    files.write("workload.0.et", "new 0");
    files.write("workload.1.et", "new 1");
    files.commit(io::RankFiles{"workload.%d.et", 2, 10});
  }
  const auto after = snapshot(dir);
  EXPECT_EQ(after.count("workload.2.et"), 0u);
  EXPECT_EQ(after.count("workload.9.et"), 0u);
  EXPECT_EQ(after.at("workload.0.et"), "new 0");
  EXPECT_EQ(after.at("workload.1.et"), "new 1");
  EXPECT_EQ(after.at("workload.09.et"), "not a name %d writes");
  EXPECT_EQ(after.count("workload.5.et/"), 1u);
  EXPECT_EQ(after.at("keep.txt"), "earlier contents\n");
  EXPECT_EQ(after.at("workload.json"), "{}");
}

// ---------------------------------------------------------------------------
// The stg binary.

// (1) SIGINT, SIGTERM or SIGHUP while the rank files are being written: exit
// 128 + the signal, one line, no staging directory, the directory as before.
class OutputStagingSignal : public ::testing::TestWithParam<int> {};

TEST_P(OutputStagingSignal, MidRunLeavesTheDirectoryUntouched) {
  const int signal = GetParam();
  TempDir tmp;
  const fs::path dir = tmp.path() / "out";
  populate(dir);
  const auto before = snapshot(dir);
  // 8192 ranks of 32 micro-batches (~0.16 MB each in v0.0.1): seconds of
  // writing, far longer than the 20 ms between two looks.
  std::vector<std::string> args = words(
      "--model_type gpt --dp 1024 --tp 2 --pp 4 --num_stacks 8 --batch 32768 --micro_batch 1024 "
      "--chakra_schema_version v0.0.1 --threads 2 --output_dir");
  args.push_back(dir.string());
  Child stg(args, tmp.path());
  // Mid-run: the staging directory holds the comm-group file and rank files.
  auto writing = [&] {
    for (const std::string& s : staging_dirs(dir)) {
      std::error_code ec;
      int n = 0;
      for (fs::directory_iterator it(dir / s, ec), end; !ec && it != end; it.increment(ec)) ++n;
      if (n >= 3) return true;
    }
    return false;
  };
  ASSERT_TRUE(eventually([&] { return writing() || stg.poll(); }, std::chrono::seconds(300)))
      << "stg did not start writing";
  ASSERT_FALSE(stg.poll()) << "stg ended before it was signalled: " << stg.err();
  ASSERT_EQ(::kill(stg.pid(), signal), 0);
  const std::optional<int> status = stg.wait(std::chrono::seconds(300));
  ASSERT_TRUE(status) << "stg did not stop after the signal";
  EXPECT_EQ(*status, 128 + signal);
  EXPECT_EQ(stg.err(), "stg: error: interrupted by " + io::signal_name(signal) +
                           ": nothing was written to " + dir.string() + "\n");
  EXPECT_EQ(stg.out(), "");
  EXPECT_TRUE(staging_dirs(dir).empty());
  EXPECT_EQ(snapshot(dir), before);
}

INSTANTIATE_TEST_SUITE_P(Signals, OutputStagingSignal, ::testing::Values(SIGTERM, SIGINT, SIGHUP),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return io::signal_name(info.param).substr(3);
                         });

// (2) A file-size limit: SIGXFSZ is ignored, the write fails with EFBIG; exit
// 1, one line naming the file and the reason, the directory as before.
TEST(OutputStaging, FileSizeLimitLeavesTheDirectoryUntouched) {
  TempDir tmp;
  const fs::path dir = tmp.path() / "out";
  populate(dir);
  const auto before = snapshot(dir);
  Child stg(small({"--dp", "2", "--tp", "2", "--pp", "2", "--output_dir", dir.string()}),
            tmp.path(), rlim_t{16 << 10});
  const std::optional<int> status = stg.wait(std::chrono::seconds(300));
  ASSERT_TRUE(status) << "stg did not end";
  EXPECT_EQ(*status, 1) << stg.err();
  const std::string err = stg.err();
  EXPECT_EQ(count_lines(err), 1) << err;
  EXPECT_EQ(err.rfind("stg: error: cannot write '" + dir.string() + "/workload.", 0), 0u) << err;
  EXPECT_NE(err.find("': File too large: nothing was written to " + dir.string() + "\n"),
            std::string::npos)
      << err;
  EXPECT_TRUE(staging_dirs(dir).empty());
  EXPECT_EQ(snapshot(dir), before);

  // An output directory the run had to create is gone again.
  const fs::path fresh = tmp.path() / "fresh" / "out";
  Child again(small({"--dp", "2", "--tp", "2", "--pp", "2", "--output_dir", fresh.string()}),
              tmp.path(), rlim_t{16 << 10});
  ASSERT_EQ(again.wait(std::chrono::seconds(300)), 1) << again.err();
  EXPECT_FALSE(fs::exists(tmp.path() / "fresh"));
}

// (3) A 16-rank run, then a 4-rank run into the same directory: ranks 0-3 and
// the new comm-group file, nothing stale, and stg validate passes.
TEST(OutputStaging, AFullRunRemovesStaleRankFiles) {
  TempDir tmp;
  const fs::path dir = tmp.path() / "out";
  fs::create_directories(dir);
  stg_test::write_file(dir / "keep.txt", "earlier contents\n");
  stg_test::write_file(dir / "workload.16.et.bak", "not a rank file");
  RunResult r = run_stg(
      small({"--dp", "4", "--tp", "2", "--pp", "2", "--quiet", "--output_dir", dir.string()}),
      tmp.path());
  ASSERT_EQ(r.status, 0) << r.err;
  ASSERT_TRUE(fs::exists(dir / "workload.15.et"));
  r = run_stg(small({"--dp", "2", "--tp", "2", "--quiet", "--output_dir", dir.string()}),
              tmp.path());
  ASSERT_EQ(r.status, 0) << r.err;
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"keep.txt", "workload.0.et", "workload.1.et",
                                             "workload.16.et.bak", "workload.2.et", "workload.3.et",
                                             "workload.json"}));
  // The comm-group file is the 4-rank run's.
  const fs::path fresh = tmp.path() / "fresh";
  r = run_stg(small({"--dp", "2", "--tp", "2", "--quiet", "--output_dir", fresh.string()}),
              tmp.path());
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(read_file(dir / "workload.json"), read_file(fresh / "workload.json"));
  EXPECT_EQ(read_file(dir / "workload.3.et"), read_file(fresh / "workload.3.et"));
  fs::remove(dir / "keep.txt");
  fs::remove(dir / "workload.16.et.bak");
  r = run_stg({"validate", dir.string()}, tmp.path());
  EXPECT_EQ(r.status, 0) << r.out << r.err;
}

// (3b) A part of a run (--ranks A-B) replaces its own files and leaves every
// other rank's file alone, stale or not.
TEST(OutputStaging, APartialRunLeavesOtherRanksFiles) {
  TempDir tmp;
  const fs::path dir = tmp.path() / "out";
  RunResult r = run_stg(
      small({"--dp", "4", "--tp", "2", "--pp", "2", "--quiet", "--output_dir", dir.string()}),
      tmp.path());
  ASSERT_EQ(r.status, 0) << r.err;
  const auto before = snapshot(dir);
  ASSERT_EQ(before.size(), 17u);
  r = run_stg(
      small({"--dp", "2", "--tp", "2", "--ranks", "0-1", "--quiet", "--output_dir", dir.string()}),
      tmp.path());
  ASSERT_EQ(r.status, 0) << r.err;
  const auto after = snapshot(dir);
  ASSERT_EQ(after.size(), 17u);
  for (const auto& [name, content] : before) {
    ASSERT_EQ(after.count(name), 1u) << name;
    const bool replaced =
        name == "workload.0.et" || name == "workload.1.et" || name == "workload.json";
    if (replaced) {
      EXPECT_NE(after.at(name), content) << name;
    } else {
      EXPECT_EQ(after.at(name), content) << name;
    }
  }
}

// (4) A successful run leaves its files (the --dump_after spreadsheet among
// them) and no staging directory.
TEST(OutputStaging, ASuccessfulRunLeavesNoStagingDirectory) {
  TempDir tmp;
  const fs::path dir = tmp.path() / "out";
  const RunResult r = run_stg(small({"--dp", "2", "--tp", "2", "--pp", "2", "--dump_after",
                                     "insert-collectives", "--output_dir", dir.string()}),
                              tmp.path());
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
  // The step summary (a heading, the columns, a line per stage), then the
  // line of what was written.
  EXPECT_EQ(count_lines(r.out), 5) << r.out;
  EXPECT_NE(r.out.find("\nstg: 8 ranks, 10 files, "), std::string::npos) << r.out;
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  std::vector<std::string> expected = {"insert-collectives.csv", "workload.json"};
  for (int rank = 0; rank < 8; ++rank)
    expected.push_back("workload." + std::to_string(rank) + ".et");
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(names, expected);
}

}  // namespace
}  // namespace stg
