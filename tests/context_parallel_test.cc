// Context parallelism (--cp, --cp_algo; docs/context_parallelism.md) against
// hand formulas written here, never stg's own functions: the traces of a
// tiny llama (grouped-query attention) and gpt are generated and read back,
// each send, receive and collective is classified by this file's own
// arithmetic of the rank layout (rank = ((stage*CP + cp)*TP + tp)*DP + dp),
// and the counts are compared with:
//   - ring: per attention op per micro-batch, 2·(cp-1) K/V chunk messages
//     forward to the next rank of the cp ring, and backward 2·(cp-1) again
//     plus 2·(cp-1) dK/dV accumulators, each b·(s/cp)·d·(g/t) elements;
//     every send has its receive (same tag, src, dst), tags unique;
//   - ulysses: 4 all-to-alls over cp forward (Q, K, V, O) and 4 backward
//     (dO, dQ, dK, dV) of Q- or K/V-shaped sequence chunks;
//   - allgather: 2 all-gathers of the K/V chunk forward and 2
//     reduce-scatters backward, of all query heads' gradients in reference
//     mode (the reference's), of the KV heads' under --framework megatron;
//   - total FLOPs the same for the three (with and without the causal
//     saving);
//   - the refusals: --sp and --cp with different values, Ulysses with cp
//     not dividing the KV heads per tp rank, --cp_algo for the seed model.
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "stg/generate.h"
#include "stg/options.h"
#include "stg/tools/trace_reader.h"
#include "stg/tools/trace_set.h"
#include "support/files.h"
#include "support/run_stg.h"
#include "support/temp_dir.h"

namespace stg::context_parallel {
namespace {

using tools::NodeKind;

struct Config {
  std::string name;
  std::string kind = "llama";
  CpAlgo algo = CpAlgo::kRing;
  int64_t l = 2, h = 256, f = 512, a = 8, g = 4, s = 64, V = 1024;
  int64_t B = 4, m = 1;  // global batch, micro-batches
  int64_t dp = 1, tp = 1, cp = 2, pp = 1;
  bool megatron = false, causal = false, tpsp = true;
  int64_t ranks() const { return dp * tp * cp * pp; }
  int64_t b() const { return B / (m * dp); }
  int64_t kv_heads() const { return kind == "gpt" ? a : g; }
};

Options options_of(const Config& c, const std::string& dir) {
  Options o;
  o.output_dir = dir;
  o.model = c.kind;
  if (c.megatron) o.framework = "megatron";
  o.num_stacks = c.l;
  o.dmodel = c.h;
  o.dff = c.f;
  o.head = c.a;
  if (c.kind != "gpt") o.component_flags["--kvhead"] = c.g;
  o.seq = c.s;
  o.dvocal = c.V;
  o.batch = c.B;
  o.micro_batch = c.B / c.m;
  o.degree["dp"] = c.dp;
  o.degree["tp"] = c.tp;
  o.degree["sp"] = c.cp;
  o.degree["pp"] = c.pp;
  o.tpsp = c.tpsp;
  o.cp_algo = c.algo;
  if (c.causal) o.causal_saving = true;
  if (c.pp > 1) o.pipeline_schedule = lower::Schedule::k1F1B;
  o.threads = 2;
  return o;
}

int64_t cp_of(const Config& c, int64_t rank) { return rank / (c.dp * c.tp) % c.cp; }
// The rank `k` steps along the cp ring (with wrap-around).
int64_t cp_neighbour(const Config& c, int64_t rank, int64_t k) {
  const int64_t here = cp_of(c, rank), to = ((here + k) % c.cp + c.cp) % c.cp;
  return rank + (to - here) * c.dp * c.tp;
}
// A group whose members differ only in the cp coordinate.
bool is_cp_group(const Config& c, const std::vector<int64_t>& members) {
  if (static_cast<int64_t>(members.size()) != c.cp) return false;
  for (int64_t r : members)
    if (r - cp_of(c, r) * c.dp * c.tp != members[0] - cp_of(c, members[0]) * c.dp * c.tp)
      return false;
  return true;
}

struct Traffic {
  int64_t count = 0, bytes = 0;
  void add(int64_t b) {
    ++count;
    bytes += b;
  }
};

struct RankSums {
  int64_t flops = 0;
  std::map<int, Traffic> cp_colls;  // by comm_type
  Traffic to_next, from_previous;   // sends to the next cp rank, receives from the previous
  Traffic other_p2p;
  std::map<int64_t, int64_t> sizes_sent;  // message size -> count
};

struct Traces {
  std::vector<RankSums> ranks;
  std::multiset<std::tuple<int64_t, int64_t, int64_t>> sends, recvs;  // (src, dst, tag)
  int64_t total_flops() const {
    int64_t t = 0;
    for (const RankSums& r : ranks) t += r.flops;
    return t;
  }
};

Traces generate_and_read(const Config& c) {
  stg_test::TempDir tmp({.prefix = "stg_cp", .tag = c.name, .keep_on_failure = true});
  const std::string dir = (tmp.path() / "out").string();
  Traces run;
  try {
    generate(options_of(c, dir));
  } catch (const std::exception& e) {
    ADD_FAILURE() << c.name << ": generate failed: " << e.what();
    return run;
  }
  tools::TraceSet set;
  if (!set.open(dir) || !set.read_comm_groups()) {
    ADD_FAILURE() << set.error();
    return run;
  }
  std::set<std::string> cp_groups;
  for (const auto& [id, members] : set.comm_groups().groups)
    if (is_cp_group(c, members)) cp_groups.insert(id);
  run.ranks.resize(c.ranks());
  for (const auto& [rank, path] : set.rank_files()) {
    RankSums& sums = run.ranks.at(rank);
    std::vector<tools::TraceNode> nodes;
    tools::TraceFormat format;
    std::string error;
    if (!tools::read_trace(path, nodes, format, error)) {
      ADD_FAILURE() << error;
      continue;
    }
    for (const tools::TraceNode& n : nodes) {
      const int64_t size = n.comm_size.value_or(0);
      if (n.kind == NodeKind::kComp) {
        sums.flops += n.num_ops.value_or(0);
      } else if (n.kind == NodeKind::kColl) {
        if (cp_groups.count(n.group.value_or("")))
          sums.cp_colls[n.comm_type.value_or(-1)].add(size);
      } else if (n.kind == NodeKind::kSend) {
        const int64_t dst = n.comm_dst.value_or(-1);
        run.sends.insert({rank, dst, n.comm_tag.value_or(-1)});
        if (dst == cp_neighbour(c, rank, 1) && dst != rank) {
          sums.to_next.add(size);
          ++sums.sizes_sent[size];
        } else {
          sums.other_p2p.add(size);
        }
      } else if (n.kind == NodeKind::kRecv) {
        const int64_t src = n.comm_src.value_or(-1);
        run.recvs.insert({src, rank, n.comm_tag.value_or(-1)});
        if (src == cp_neighbour(c, rank, -1) && src != rank)
          sums.from_previous.add(size);
        else
          sums.other_p2p.add(size);
      }
    }
  }
  return run;
}

constexpr int kAllGather = 2, kReduceScatter = 7, kAllToAll = 6;  // Chakra v0.0.4

// Elements of one rank's sequence chunk of Q (all the tp rank's heads) and
// of K or V (its KV heads).
int64_t q_chunk(const Config& c) { return c.b() * (c.s / c.cp) * (c.h / c.a) * (c.a / c.tp); }
int64_t kv_chunk(const Config& c) {
  return c.b() * (c.s / c.cp) * (c.h / c.a) * (c.kv_heads() / c.tp);
}

TEST(ContextParallel, RingPassesKvChunksRoundTheRing) {
  for (int64_t cp : {2, 4}) {
    for (int64_t m : {1, 2}) {
      for (const std::string kind : {"llama", "gpt"}) {
        Config c;
        c.name = "ring_" + kind + "_cp" + std::to_string(cp) + "_mb" + std::to_string(m);
        c.kind = kind;
        c.cp = cp;
        c.m = m;
        c.dp = 2;
        c.B = 8;
        const Traces run = generate_and_read(c);
        ASSERT_EQ(static_cast<int64_t>(run.ranks.size()), c.ranks());
        // Forward 2(cp-1) K/V hops; backward 2(cp-1) K/V hops and 2(cp-1)
        // dK/dV accumulator hops; per block, per micro-batch.
        const int64_t messages = c.l * c.m * (2 * (cp - 1) + 4 * (cp - 1));
        for (int64_t r = 0; r < c.ranks(); ++r) {
          const RankSums& x = run.ranks[r];
          EXPECT_EQ(x.to_next.count, messages) << c.name << " rank " << r;
          EXPECT_EQ(x.to_next.bytes, messages * kv_chunk(c)) << c.name << " rank " << r;
          EXPECT_EQ(x.from_previous.count, messages) << c.name << " rank " << r;
          EXPECT_EQ(x.other_p2p.count, 0) << c.name << " rank " << r;
          // No gathers or scatters of K/V over cp any more.
          EXPECT_EQ(x.cp_colls.count(kAllGather), 0u) << c.name;
          EXPECT_EQ(x.cp_colls.count(kReduceScatter), 0u) << c.name;
        }
        EXPECT_EQ(run.sends, run.recvs) << c.name;
        for (const auto& link : run.sends) EXPECT_EQ(run.sends.count(link), 1u) << c.name;
      }
    }
  }
}

TEST(ContextParallel, UlyssesDoesFourAllToAllsEachWay) {
  for (int64_t cp : {2, 4}) {
    for (int64_t tp : {1, 2}) {
      Config c;
      c.name = "ulysses_cp" + std::to_string(cp) + "_tp" + std::to_string(tp);
      c.algo = CpAlgo::kUlysses;
      c.cp = cp;
      c.tp = tp;
      c.g = 8;  // g/tp divisible by cp
      c.m = 2;
      const Traces run = generate_and_read(c);
      ASSERT_EQ(static_cast<int64_t>(run.ranks.size()), c.ranks());
      for (int64_t r = 0; r < c.ranks(); ++r) {
        const auto& colls = run.ranks[r].cp_colls;
        ASSERT_TRUE(colls.count(kAllToAll)) << c.name;
        // Forward Q, K, V in, O out; backward dO in, dQ, dK, dV out.
        EXPECT_EQ(colls.at(kAllToAll).count, c.l * c.m * 8) << c.name;
        EXPECT_EQ(colls.at(kAllToAll).bytes, c.l * c.m * (4 * q_chunk(c) + 4 * kv_chunk(c)))
            << c.name;
        EXPECT_EQ(colls.count(kAllGather), 0u) << c.name;
        EXPECT_EQ(colls.count(kReduceScatter), 0u) << c.name;
        EXPECT_EQ(run.ranks[r].to_next.count, 0) << c.name;
      }
    }
  }
}

TEST(ContextParallel, AllGatherIsAsBefore) {
  Config c;
  c.name = "allgather";
  c.algo = CpAlgo::kAllGather;
  c.cp = 4;
  c.m = 2;
  const Traces run = generate_and_read(c);
  ASSERT_EQ(static_cast<int64_t>(run.ranks.size()), c.ranks());
  for (const RankSums& x : run.ranks) {
    ASSERT_TRUE(x.cp_colls.count(kAllGather));
    // K and V gathered forward (each rank puts in its chunk); their
    // gradients (all query heads, the whole sequence) reduce-scattered.
    EXPECT_EQ(x.cp_colls.at(kAllGather).count, c.l * c.m * 2);
    EXPECT_EQ(x.cp_colls.at(kAllGather).bytes, c.l * c.m * 2 * kv_chunk(c));
    EXPECT_EQ(x.cp_colls.at(kReduceScatter).count, c.l * c.m * 2);
    EXPECT_EQ(x.cp_colls.at(kReduceScatter).bytes, c.l * c.m * 2 * q_chunk(c) * c.cp);
    EXPECT_EQ(x.to_next.count, 0);
  }
}

// Under --framework megatron the kernel gives dK and dV in the KV heads'
// shape (TransformerEngine's all-gather attention reduces them so): per
// block and micro-batch 2 reduce-scatters over cp of b x s x (g/tp) x d
// elements (the whole sequence; each rank keeps its s/cp), bf16 -- not of
// the tp rank's a/tp query heads, twice as many here (a/g = 2).
TEST(ContextParallel, AllGatherReduceScattersKvHeadGradientsUnderMegatron) {
  for (int64_t tp : {1, 2}) {
    Config c;
    c.name = "allgather_megatron_tp" + std::to_string(tp);
    c.algo = CpAlgo::kAllGather;
    c.megatron = true;
    c.a = 8;
    c.g = 4;
    c.tp = tp;
    c.cp = 4;
    c.dp = 2;  // the dp x cp gradient group is then not a cp group
    c.B = 8;
    c.m = 2;
    const Traces run = generate_and_read(c);
    ASSERT_EQ(static_cast<int64_t>(run.ranks.size()), c.ranks());
    const int64_t d = c.h / c.a, bytes = 2;
    const int64_t kv_sequence = c.b() * c.s * (c.g / tp) * d * bytes;
    for (const RankSums& x : run.ranks) {
      ASSERT_TRUE(x.cp_colls.count(kAllGather)) << c.name;
      ASSERT_TRUE(x.cp_colls.count(kReduceScatter)) << c.name;
      EXPECT_EQ(x.cp_colls.at(kAllGather).count, c.l * c.m * 2) << c.name;
      EXPECT_EQ(x.cp_colls.at(kAllGather).bytes, c.l * c.m * 2 * kv_sequence / c.cp) << c.name;
      EXPECT_EQ(x.cp_colls.at(kReduceScatter).count, c.l * c.m * 2) << c.name;
      EXPECT_EQ(x.cp_colls.at(kReduceScatter).bytes, c.l * c.m * 2 * kv_sequence) << c.name;
    }
  }
}

TEST(ContextParallel, TotalWorkDoesNotDependOnTheAlgorithm) {
  for (const bool megatron : {false, true}) {
    for (const bool causal : {false, true}) {
      if (causal && !megatron) continue;  // the causal saving is Megatron-LM's
      // g 4: two query heads per KV head (grouped-query attention).
      for (const auto& [kind, g] :
           std::vector<std::pair<std::string, int64_t>>{{"llama", 8}, {"llama", 4}, {"gpt", 8}}) {
        Config base;
        base.kind = kind;
        base.megatron = megatron;
        base.causal = causal;
        base.g = g;
        base.cp = 4;
        base.dp = 2;
        base.B = 8;
        base.m = 2;
        std::map<std::string, int64_t> totals;
        for (const auto& [name, algo] :
             std::vector<std::pair<std::string, CpAlgo>>{{"allgather", CpAlgo::kAllGather},
                                                         {"ring", CpAlgo::kRing},
                                                         {"ulysses", CpAlgo::kUlysses}}) {
          Config c = base;
          c.algo = algo;
          c.name = "flops_" + kind + std::to_string(g) + "_" + name +
                   (megatron ? "_megatron" : "") + (causal ? "_causal" : "");
          totals[name] = generate_and_read(c).total_flops();
        }
        EXPECT_GT(totals["allgather"], 0);
        EXPECT_EQ(totals["ring"], totals["allgather"]) << kind << g << " megatron " << megatron;
        EXPECT_EQ(totals["ulysses"], totals["allgather"]) << kind << g << " megatron " << megatron;
      }
    }
  }
}

TEST(ContextParallel, RingComposesWithTpPpAndMegatron) {
  Config c;
  c.name = "ring_tp2_pp2_megatron";
  c.megatron = true;
  c.causal = true;
  c.tp = 2;
  c.pp = 2;
  c.cp = 2;
  c.m = 2;
  const Traces run = generate_and_read(c);
  ASSERT_EQ(static_cast<int64_t>(run.ranks.size()), c.ranks());
  const int64_t messages = (c.l / c.pp) * c.m * 6 * (c.cp - 1);
  for (const RankSums& x : run.ranks) {
    EXPECT_EQ(x.to_next.count, messages);
    EXPECT_EQ(x.to_next.bytes, messages * kv_chunk(c) * 2);  // bf16
  }
  EXPECT_EQ(run.sends, run.recvs);
}

// ---------------------------------------------------------------------------
// Refusals and the two spellings of the axis.

TEST(ContextParallel, UlyssesNeedsCpToDivideTheKvHeads) {
  stg_test::TempDir tmp({.prefix = "stg_cp_refused"});
  Config c;
  c.algo = CpAlgo::kUlysses;
  c.cp = 4;
  c.tp = 2;
  c.g = 4;  // 2 KV heads per tp rank
  try {
    generate(options_of(c, (tmp.path() / "out").string()));
    ADD_FAILURE() << "not refused";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("--cp_algo ulysses"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("--kvhead 4 / --tp 2"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(std::filesystem::exists(tmp.path() / "out" / "workload.0.et"));
}

TEST(ContextParallel, CommandLineSpellings) {
  stg_test::TempDir tmp({.prefix = "stg_cp_cli"});
  const std::vector<std::string> model = {
      "--model_type", "llama", "--num_stacks", "2", "--dmodel", "256",  "--dff",   "512",
      "--head",       "8",     "--kvhead",     "4", "--dvocal", "1024", "--batch", "4",
      "--seq",        "64",    "--quiet"};
  auto run = [&](const std::string& out, std::vector<std::string> args) {
    args.insert(args.begin(), model.begin(), model.end());
    args.push_back("--output_dir");
    args.push_back((tmp.path() / out).string());
    return stg_test::run_stg(args, tmp.path());
  };
  // --cp and --sp name one axis: the same traces.
  ASSERT_EQ(run("sp", {"--sp", "2"}).status, 0);
  ASSERT_EQ(run("cp", {"--cp", "2"}).status, 0);
  ASSERT_EQ(run("both", {"--cp", "2", "--sp", "2"}).status, 0);
  for (const char* dir : {"cp", "both"})
    for (int r = 0; r < 2; ++r) {
      const std::string f = "workload." + std::to_string(r) + ".et";
      EXPECT_EQ(stg_test::read_file(tmp.path() / dir / f),
                stg_test::read_file(tmp.path() / "sp" / f))
          << dir << " " << f;
    }
  // Two different values: refused, one line naming both flags, nothing written.
  const stg_test::RunResult r = run("bad", {"--cp", "4", "--sp", "2"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err,
            "stg: error: --sp 2 and --cp 4 are two spellings of one degree: give one of them\n");
  EXPECT_FALSE(std::filesystem::exists(tmp.path() / "bad" / "workload.0.et"));
  const stg_test::RunResult algo = run("algo", {"--cp", "2", "--cp_algo", "rings"});
  EXPECT_EQ(algo.status, 2);
  EXPECT_NE(algo.err.find("--cp_algo 'rings' is unknown: did you mean ring?"), std::string::npos)
      << algo.err;
  const stg_test::RunResult seed = stg_test::run_stg(
      {"--sp", "2", "--cp_algo", "ring", "--output_dir", (tmp.path() / "seed").string()},
      tmp.path());
  EXPECT_EQ(seed.status, 2);
  EXPECT_NE(seed.err.find("--cp_algo ring and ulysses"), std::string::npos) << seed.err;
}

}  // namespace
}  // namespace stg::context_parallel
