// --astra_sim DIR: the network yml (dimensions >= 2 that multiply to the
// rank count, at least two unless the count is prime), the system json (one
// implementation per dimension for each collective), the remote-memory json
// and run.sh, which is run here against a stand-in for ASTRA-sim that checks
// its arguments and prints "finished" lines.
#include <sys/stat.h>

#include <cstdint>
#include <filesystem>
#include <regex>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "support/files.h"
#include "support/run_stg.h"
#include "support/temp_dir.h"

namespace {

namespace fs = std::filesystem;
using stg_test::read_file;
using stg_test::run_program;
using stg_test::run_stg;
using stg_test::RunResult;
using stg_test::TempDir;

const std::vector<std::string> kSmall = {"--num_stacks", "2",  "--dmodel", "64", "--dff",   "128",
                                         "--head",       "4",  "--seq",    "16", "--batch", "8",
                                         "--din",        "64", "--dout",   "64", "--quiet"};

RunResult run_small(const TempDir& tmp, std::vector<std::string> extra) {
  std::vector<std::string> args = kSmall;
  args.insert(args.end(), extra.begin(), extra.end());
  return run_stg(args, tmp.path(), tmp.path());
}

// The numbers of a "key: [ a, b ]" line of the network yml.
std::vector<std::string> yaml_list(const std::string& yml, const std::string& key) {
  const std::regex line("(^|\n)" + key + ": \\[ ([^\\]]*) \\]\n");
  std::smatch m;
  if (!std::regex_search(yml, m, line)) return {};
  std::vector<std::string> out;
  const std::string items = m[2];
  size_t start = 0;
  for (;;) {
    const size_t comma = items.find(", ", start);
    out.push_back(
        items.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) return out;
    start = comma + 2;
  }
}

int64_t product(const std::vector<std::string>& dims) {
  int64_t p = 1;
  for (const std::string& d : dims) p *= std::stoll(d);
  return p;
}

bool is_prime(int64_t n) {
  for (int64_t d = 2; d * d <= n; ++d)
    if (n % d == 0) return false;
  return n >= 2;
}

struct Plan {
  std::vector<std::string> flags;
  int64_t ranks;  // the product of the degrees, by hand
};

TEST(AstraSimInputs, NetworkMultipliesToTheRankCount) {
  TempDir tmp;
  const std::vector<Plan> plans = {
      {{"--dp", "2", "--tp", "2", "--pp", "2"}, 8},
      {{"--dp", "16"}, 16},
      {{"--dp", "2", "--pp", "2"}, 4},
      {{"--dp", "7", "--batch", "7"}, 7},
      {{"--dp", "3", "--sp", "2", "--tp", "2", "--pp", "2", "--batch", "6"}, 24},
      {{"--dp", "2"}, 2},
  };
  int i = 0;
  for (const Plan& p : plans) {
    const std::string dir = tmp.sub("run" + std::to_string(i++));
    std::vector<std::string> flags = p.flags;
    flags.insert(flags.end(), {"--astra_sim", dir});
    const RunResult r = run_small(tmp, flags);
    ASSERT_EQ(r.status, 0) << r.err;
    const std::string yml = read_file(dir + "/network.yml");
    const auto npus = yaml_list(yml, "npus_count");
    ASSERT_FALSE(npus.empty()) << yml;
    EXPECT_EQ(product(npus), p.ranks) << yml;
    for (const std::string& d : npus) EXPECT_GE(std::stoll(d), 2) << yml;
    // ASTRA-sim's exit-time double free: two dimensions unless that is impossible.
    EXPECT_EQ(npus.size() >= 2, !is_prime(p.ranks)) << yml;
    EXPECT_EQ(yaml_list(yml, "topology").size(), npus.size());
    EXPECT_EQ(yaml_list(yml, "bandwidth").size(), npus.size());
    EXPECT_EQ(yaml_list(yml, "latency").size(), npus.size());
    // One trace per NPU, none more.
    for (int64_t rank = 0; rank < p.ranks; ++rank)
      EXPECT_TRUE(fs::exists(dir + "/workload." + std::to_string(rank) + ".et")) << rank;
    EXPECT_FALSE(fs::exists(dir + "/workload." + std::to_string(p.ranks) + ".et"));
    // One implementation per dimension for each collective.
    const std::string system = read_file(dir + "/system.json");
    std::string rings;
    for (size_t d = 0; d < npus.size(); ++d) rings += (d ? ", \"ring\"" : "\"ring\"");
    for (const char* coll : {"all-reduce", "all-gather", "reduce-scatter", "all-to-all"})
      EXPECT_NE(system.find("\"" + std::string(coll) + "-implementation\": [" + rings + "]"),
                std::string::npos)
          << coll << "\n"
          << system;
    EXPECT_NE(system.find("\"peak-perf\": 989\n"), std::string::npos) << system;
    EXPECT_NE(system.find("\"local-mem-bw\": 3350,"), std::string::npos) << system;
    EXPECT_NE(read_file(dir + "/memory.json").find("\"NO_MEMORY_EXPANSION\""), std::string::npos);
  }
}

TEST(AstraSimInputs, DefaultDimensionsAndBandwidths) {
  TempDir tmp;
  // dp 2, tp 2, pp 2: one dimension per axis, in rank order, all in one node.
  ASSERT_EQ(
      run_small(tmp, {"--dp", "2", "--tp", "2", "--pp", "2", "--astra_sim", tmp.sub("a")}).status,
      0);
  std::string yml = read_file(tmp.sub("a") + "/network.yml");
  EXPECT_EQ(yaml_list(yml, "npus_count"), (std::vector<std::string>{"2", "2", "2"}));
  EXPECT_EQ(yaml_list(yml, "bandwidth"), (std::vector<std::string>{"400.0", "400.0", "400.0"}));
  // dp 16 alone: split into a node of 8 and 2 nodes.
  ASSERT_EQ(run_small(tmp, {"--dp", "16", "--astra_sim", tmp.sub("b")}).status, 0);
  yml = read_file(tmp.sub("b") + "/network.yml");
  EXPECT_EQ(yaml_list(yml, "npus_count"), (std::vector<std::string>{"8", "2"}));
  EXPECT_EQ(yaml_list(yml, "bandwidth"), (std::vector<std::string>{"400.0", "50.0"}));
  // dp 4, tp 4 on nodes of 8: Megatron-LM's order (tp, cp, ep, dp, pp)
  // puts a tp group of 4 and 2 of dp's 4 in a node, so dp splits into 2
  // inside (varying faster) and 2 across; tp is inside.
  ASSERT_EQ(run_small(tmp, {"--dp", "4", "--tp", "4", "--astra_sim", tmp.sub("c")}).status, 0);
  yml = read_file(tmp.sub("c") + "/network.yml");
  EXPECT_EQ(yaml_list(yml, "npus_count"), (std::vector<std::string>{"2", "2", "4"}));
  EXPECT_EQ(yaml_list(yml, "bandwidth"),
            (std::vector<std::string>{"400.0", "50.0", "400.0"}));
  // dp 12, tp 8, pp 2 (GPT-3's layout on 192 GPUs): tp fills a node even
  // though dp varies faster in rank numbers; dp and pp run across nodes.
  ASSERT_EQ(run_small(tmp, {"--dp", "12", "--tp", "8", "--pp", "2", "--batch", "12",
                            "--astra_sim", tmp.sub("e")})
                .status,
            0);
  yml = read_file(tmp.sub("e") + "/network.yml");
  EXPECT_EQ(yaml_list(yml, "npus_count"), (std::vector<std::string>{"12", "8", "2"}));
  EXPECT_EQ(yaml_list(yml, "bandwidth"), (std::vector<std::string>{"50.0", "400.0", "50.0"}));
  // --network_dims replaces them.
  ASSERT_EQ(run_small(tmp, {"--dp", "4", "--tp", "4", "--network_dims", "2,2,4", "--astra_sim",
                            tmp.sub("d")})
                .status,
            0);
  yml = read_file(tmp.sub("d") + "/network.yml");
  EXPECT_EQ(yaml_list(yml, "npus_count"), (std::vector<std::string>{"2", "2", "4"}));
}

TEST(AstraSimInputs, BadRequestsAreRefusedBeforeWriting) {
  TempDir tmp;
  const std::string o = tmp.sub("o");
  struct Case {
    std::vector<std::string> flags;
    std::string message;  // the start of the error
  };
  const std::vector<Case> cases = {
      {{"--dp", "8", "--network_dims", "2,3", "--astra_sim", o},
       "--network_dims '2,3' has 6 NPUs but the run has 8 ranks"},
      {{"--dp", "8", "--network_dims", "1,8", "--astra_sim", o},
       "--network_dims '1,8' is not a list of dimensions"},
      {{"--dp", "8", "--network_dims", "8", "--astra_sim", o},
       "--network_dims '8' is one dimension: give at least two (e.g. [4, 2])"},
      {{"--dp", "8", "--network_dims", "2,x", "--astra_sim", o},
       "--network_dims '2,x' is not a list of dimensions"},
      {{"--dp", "8", "--network_dims", "2,4", "--output_dir", o},
       "--network_dims describes the network of --astra_sim"},
      {{"--astra_sim", o}, "--astra_sim needs at least 2 ranks"},
      {{"--dp", "2", "--chakra_schema_version", "json", "--astra_sim", o},
       "--astra_sim needs --chakra_schema_version v0.0.4"},
      {{"--dp", "2", "--output_name", "w_%d.et", "--allow_any_name", "--astra_sim", o},
       "--astra_sim needs traces ASTRA-sim can open"},
      {{"--dp", "2", "--output_dir", tmp.sub("other"), "--astra_sim", o},
       "--astra_sim " + o + " writes the traces there"},
      {{"--dp", "2", "--comm_group_file", "system.json", "--astra_sim", o},
       "--comm_group_file 'system.json' is a file of --astra_sim"},
      {{"--dp", "2", "--astra_sim", tmp.sub("empty_runs")},
       "--astra_sim: ASTRA-sim ignores a comm-group file whose path contains 'empty'"},
  };
  for (const Case& c : cases) {
    const RunResult r = run_small(tmp, c.flags);
    EXPECT_EQ(r.status, 2) << c.message;
    EXPECT_EQ(r.err.rfind("stg: error: " + c.message, 0), 0u) << r.err;
    EXPECT_FALSE(fs::exists(o));
    EXPECT_FALSE(fs::exists(tmp.sub("other")));
    EXPECT_FALSE(fs::exists(tmp.sub("empty_runs")));
  }
}

TEST(AstraSimInputs, OnlyShardZeroWritesThem) {
  TempDir tmp;
  const std::string o = tmp.sub("o");
  RunResult r =
      run_small(tmp, {"--dp", "4", "--units", "physical", "--shard", "1/2", "--astra_sim", o});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_FALSE(fs::exists(o + "/network.yml"));
  EXPECT_FALSE(fs::exists(o + "/run.sh"));
  r = run_small(tmp, {"--dp", "4", "--units", "physical", "--shard", "0/2", "--astra_sim", o});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");  // physical units: no note
  for (const char* f : {"network.yml", "system.json", "memory.json", "run.sh", "workload.json"})
    EXPECT_TRUE(fs::exists(o + "/" + f)) << f;
}

TEST(AstraSimInputs, ElementUnitsAreNoted) {
  TempDir tmp;
  const RunResult r = run_small(tmp, {"--dp", "2", "--astra_sim", tmp.sub("o")});
  ASSERT_EQ(r.status, 0);
  EXPECT_NE(r.err.find("stg: note: --astra_sim: these traces count elements"), std::string::npos)
      << r.err;
}

// A stage whose first compute node runs in 0 ns at the written roofline
// (ASTRA-sim aborts at time 0 on it): noted when the traces are written, on
// the stages `stg validate` warns W1 about.
TEST(AstraSimInputs, ZeroTimeFirstNodesAreNoted) {
  TempDir tmp;
  const std::string o = tmp.sub("o");
  RunResult r = run_stg(
      {"--model_type", "llama", "--num_stacks", "2", "--dmodel", "256",         "--dff", "512",
       "--head",       "4",     "--kvhead",     "4", "--dvocal", "4",           "--seq", "32",
       "--batch",      "1",     "--sp",         "4", "--quiet",  "--astra_sim", o},
      tmp.path(), tmp.path());
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("stg: note: --astra_sim: the ranks of stage(s) 0 start with a compute node "
                       "that runs in 0 ns"),
            std::string::npos)
      << r.err;
  const RunResult v = run_stg({"validate", o}, tmp.path(), tmp.path());
  EXPECT_EQ(v.status, 0) << v.out;
  EXPECT_NE(v.out.find("W1 rank 0: compute node"), std::string::npos) << v.out;
  // Dimensions whose first nodes take time: no such note.
  r = run_small(tmp, {"--dp", "2", "--astra_sim", tmp.sub("p")});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err.find("0 ns"), std::string::npos) << r.err;
}

// A stand-in for ASTRA-sim: checks that every file it is given exists (the
// workload prefix through rank 0's trace), then prints a "finished" line for
// the first `finished` of the ranks.
std::string fake_astra_sim(const TempDir& tmp, int finished) {
  const std::string path =
      tmp.write("fake_astra_sim_" + std::to_string(finished),
                "#!/usr/bin/env bash\n"
                "for a in \"$@\"; do\n"
                "  v=\"${a#*=}\"\n"
                "  case \"$a\" in\n"
                "    --workload-configuration=*) [[ -f \"$v.0.et\" && \"$v\" = /* ]] || exit 9 ;;\n"
                "    --logging-folder=*) [[ -d \"$v\" ]] || exit 9 ;;\n"
                "    --*) [[ -f \"$v\" && \"$v\" = /* ]] || exit 9 ;;\n"
                "  esac\n"
                "done\n"
                "[[ $# -eq 6 ]] || exit 9\n"
                "for ((r = 0; r < " +
                    std::to_string(finished) +
                    "; ++r)); do echo \"[workload] [info] sys[$r] finished, 10 cycles\"; done\n");
  ::chmod(path.c_str(), 0755);
  return path;
}

TEST(AstraSimInputs, RunScriptCountsFinishedRanks) {
  TempDir tmp;
  const std::string o = tmp.sub("o");
  ASSERT_EQ(run_small(tmp, {"--dp", "2", "--tp", "2", "--units", "physical", "--output_name",
                            "traces/w.%d.et", "--astra_sim", o})
                .status,
            0);
  // From another working directory: run.sh finds its files by absolute path.
  RunResult r = run_program({"/bin/bash", o + "/run.sh", fake_astra_sim(tmp, 4)}, tmp.path(), "/");
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(
      r.out.find("run.sh: 4 of 4 ranks finished, 0 [critical] lines, ASTRA-sim exit status 0"),
      std::string::npos)
      << r.out;
  EXPECT_TRUE(fs::exists(o + "/log/stdout.txt"));
  // A deadlock: ASTRA-sim exits with 0, run.sh does not.
  r = run_program({"/bin/bash", o + "/run.sh", fake_astra_sim(tmp, 3)}, tmp.path(), "/");
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("run.sh: 3 of 4 ranks finished"), std::string::npos) << r.out;
  // Executable, and a binary's relative path is taken from where run.sh is
  // called (run.sh works in log/).
  struct stat st {};
  ASSERT_EQ(::stat((o + "/run.sh").c_str(), &st), 0);
  EXPECT_TRUE(st.st_mode & S_IXUSR);
  const std::string fake = fake_astra_sim(tmp, 4);
  const std::string relative = "./" + fs::relative(fake, tmp.path()).string();
  r = run_program({o + "/run.sh", relative}, tmp.path(), tmp.path());
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  // A binary that is not there: exit 2, the last run's log left as it was.
  r = run_program({o + "/run.sh", "no/such/astra_sim"}, tmp.path(), tmp.path());
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("run.sh: no ASTRA-sim binary no/such/astra_sim"), std::string::npos)
      << r.err;
  EXPECT_TRUE(fs::exists(o + "/log/stdout.txt"));
  // Moved under a path with "empty" in it: refused.
  fs::rename(o, tmp.sub("empty_dir"));
  r = run_program({"/bin/bash", tmp.sub("empty_dir") + "/run.sh", fake_astra_sim(tmp, 4)},
                  tmp.path(), "/");
  EXPECT_EQ(r.status, 2) << r.out << r.err;
}

}  // namespace
