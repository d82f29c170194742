// Nothing outside the output directory (issue 33, point 1): output and
// comm-group names are relative paths inside --output_dir, and the removal of
// stale rank files touches only files that stg's earlier run in that
// directory wrote (the ranks its comm-group file lists), never lookalikes.
// CI runs as root, so these runs are runs as root.
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "support/files.h"
#include "support/run_stg.h"
#include "support/temp_dir.h"
#include "support/tiny_model.h"

namespace {

namespace fs = std::filesystem;
using stg_test::read_file;
using stg_test::run_stg;
using stg_test::RunResult;
using stg_test::TempDir;

RunResult run_small(const TempDir& tmp, std::vector<std::string> extra) {
  extra.push_back("--quiet");
  return run_stg(stg_test::tiny_transformer(extra), tmp.path(), tmp.path());
}

// Every file under `dir` (recursively) with its content; directories end in
// '/'.
std::map<std::string, std::string> tree(const fs::path& dir) {
  std::map<std::string, std::string> out;
  if (!fs::exists(dir)) return out;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    const std::string rel = fs::relative(e.path(), dir).string();
    if (e.is_directory())
      out[rel + "/"] = "";
    else
      out[rel] = read_file(e.path());
  }
  return out;
}

// One line on stderr naming `flag`, exit 2, nothing on stdout.
void expect_refused(const RunResult& r, const std::string& flag) {
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_EQ(r.err.rfind("stg: error: " + flag, 0), 0u) << r.err;
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;
  EXPECT_EQ(r.out, "");
}

TEST(OutputDirSafety, AbsoluteAndParentNamesAreRefusedAndNothingIsWritten) {
  TempDir tmp;
  const fs::path outside = tmp.path() / "outside";
  fs::create_directories(outside);
  const std::string o = tmp.sub("inside/o");
  struct Case {
    std::vector<std::string> flags;
    std::string error;
  };
  const std::vector<Case> cases = {
      {{"--output_name", (outside / "workload.%d.et").string()},
       "--output_name '" + (outside / "workload.%d.et").string() + "' is an absolute path"},
      {{"--output_name", "../escape.%d.et"}, "--output_name '../escape.%d.et' has a '..' part"},
      {{"--output_name", "a/../../escape.%d.et"},
       "--output_name 'a/../../escape.%d.et' has a '..' part"},
      {{"--comm_group_file", "../x.json"}, "--comm_group_file '../x.json' has a '..' part"},
      {{"--comm_group_file", (outside / "x.json").string()},
       "--comm_group_file '" + (outside / "x.json").string() + "' is an absolute path"},
      // The comm-group name derived from an absolute --output_name is never
      // reached: the trace name is refused first.
      {{"--output_name", (outside / "victim/syslog.%d").string(), "--allow_any_name"},
       "--output_name '" + (outside / "victim/syslog.%d").string() + "' is an absolute path"},
  };
  for (const Case& c : cases) {
    std::vector<std::string> flags = {"--dp", "2", "--output_dir", o};
    flags.insert(flags.end(), c.flags.begin(), c.flags.end());
    const RunResult r = run_small(tmp, flags);
    SCOPED_TRACE(c.error);
    expect_refused(r, c.error);
    EXPECT_TRUE(tree(outside).empty());
    EXPECT_FALSE(fs::exists(tmp.path() / "inside"));
    EXPECT_FALSE(fs::exists(tmp.path() / "escape.0.et"));
    EXPECT_FALSE(fs::exists(tmp.path() / "x.json"));
  }
  // A name with ".." inside a file name part is an ordinary name.
  const RunResult r =
      run_small(tmp, {"--output_name", "w..%d.et", "--allow_any_name", "--output_dir", o});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(fs::exists(fs::path(o) / "w..0.et"));
}

TEST(OutputDirSafety, AnEmptyOutputDirIsRefused) {
  TempDir tmp;
  const fs::path work = tmp.path() / "work";  // the run's directory (logs go beside it)
  fs::create_directories(work);
  const RunResult r = run_stg(stg_test::tiny_transformer({"--output_dir", ""}), tmp.path(), work);
  expect_refused(r, "--output_dir must not be empty");
  EXPECT_TRUE(tree(work).empty());
}

// A symbolic link inside the output directory does not take the run's files
// out of it.
TEST(OutputDirSafety, ASubDirectoryLinkedOutsideIsRefused) {
  TempDir tmp;
  const fs::path outside = tmp.path() / "outside";
  const fs::path o = tmp.path() / "o";
  fs::create_directories(outside);
  fs::create_directories(o);
  fs::create_directory_symlink(outside, o / "traces");
  const RunResult r =
      run_small(tmp, {"--output_name", "traces/workload.%d.et", "--output_dir", o.string()});
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("leads outside"), std::string::npos) << r.err;
  EXPECT_TRUE(tree(outside).empty());
  EXPECT_EQ(tree(o).size(), 1u);  // the link alone
}

// (the case) A directory that holds files named like rank files, and
// no earlier run of stg: a run into it removes none of them.
TEST(OutputDirSafety, LookalikeFilesOfNoEarlierRunAreKept) {
  TempDir tmp;
  const fs::path o = tmp.path() / "victim";
  fs::create_directories(o);
  for (int i = 0; i < 6; ++i)
    stg_test::write_file(o / ("syslog." + std::to_string(i)), "log line " + std::to_string(i));
  stg_test::write_file(o / "workload.5.et", "someone's trace");
  const auto before = tree(o);
  RunResult r = run_small(tmp, {"--output_name", "syslog.%d", "--allow_any_name",
                                "--comm_group_file", "groups.json", "--output_dir", o.string()});
  ASSERT_EQ(r.status, 0) << r.err;
  auto after = tree(o);
  // syslog.0 is rank 0's trace now; every other file is as it was.
  EXPECT_NE(after.at("syslog.0"), before.at("syslog.0"));
  for (const auto& [name, content] : before)
    if (name != "syslog.0") EXPECT_EQ(after.at(name), content) << name;
  EXPECT_EQ(after.size(), before.size() + 1);  // + groups.json
  // The default names, a run of 2 ranks beside workload.5.et: kept.
  r = run_small(tmp, {"--dp", "2", "--output_dir", o.string()});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(read_file(o / "workload.5.et"), "someone's trace");
}

// Rank files of stg's own earlier run are stale; a rank file the earlier run
// did not write (its comm-group file does not list that rank) is not.
TEST(OutputDirSafety, OnlyTheEarlierRunsRanksAreStale) {
  TempDir tmp;
  const fs::path o = tmp.path() / "o";
  RunResult r = run_small(tmp, {"--dp", "4", "--output_dir", o.string()});
  ASSERT_EQ(r.status, 0) << r.err;
  stg_test::write_file(o / "workload.4.et", "not from the 4-rank run");
  r = run_stg({"--num_stacks", "1",  "--dmodel",     "64",      "--dff", "128", "--head", "4",
               "--seq",        "16", "--batch",      "4",       "--din", "64",  "--dout", "64",
               "--dp",         "1",  "--output_dir", o.string()},
              tmp.path(), tmp.path());
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("(removed 3 rank files of an earlier run)"), std::string::npos) << r.out;
  const auto after = tree(o);
  EXPECT_EQ(
      after.count("workload.1.et") + after.count("workload.2.et") + after.count("workload.3.et"),
      0u);
  EXPECT_EQ(after.at("workload.4.et"), "not from the 4-rank run");
  // A comm-group file that is not stg's (not groups of ranks): nothing stale.
  r = run_small(tmp, {"--dp", "4", "--output_dir", o.string()});
  ASSERT_EQ(r.status, 0) << r.err;
  stg_test::write_file(o / "workload.json", "{\"ranks\": \"all\"}");
  r = run_small(tmp, {"--dp", "1", "--output_dir", o.string()});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(fs::exists(o / "workload.3.et"));
}

}  // namespace
