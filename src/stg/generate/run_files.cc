#include "stg/generate/run_files.h"

#include <sys/resource.h>

#include <algorithm>
#include <filesystem>

#include "stg/emit/flat_writer.h"
#include "stg/emit/trace_writer.h"
#include "stg/io/earlier_run.h"
#include "stg/io/output_names.h"
#include "stg/lower/expand_stage.h"
#include "stg/util/parallel.h"

namespace stg {
namespace {

// Rank files a writer thread keeps open at once: up to 64, within half the
// descriptor limit over all threads.
int64_t files_open_per_thread(int threads) {
  rlimit limit{};
  int64_t open_max = 1024;  // when the limit cannot be read
  if (getrlimit(RLIMIT_NOFILE, &limit) == 0)
    open_max =
        limit.rlim_cur == RLIM_INFINITY ? int64_t{1} << 20 : static_cast<int64_t>(limit.rlim_cur);
  return std::clamp<int64_t>((open_max - 64) / (2 * std::max(1, threads)), 1, 64);
}

// v0.0.4: ranks of a stage are written in groups, their files open
// together: each piece of the stage is encoded once per group and spliced
// for each rank (emit/flat_writer.h).
void write_v004(WriteContext& c, int64_t first_rank, int64_t last_rank) {
  std::vector<std::optional<emit::FlatStageWriter>> writers(c.stages.size());
  for (size_t s = 0; s < c.stages.size(); ++s)
    if (c.stages[s]) writers[s].emplace(*c.stages[s], c.o.trace_detail);
  struct Group {
    int stage;
    int64_t first, last;
  };
  std::vector<Group> groups;
  const int64_t per_stage = c.layout.ranks_per_stage();
  const int64_t group_size = files_open_per_thread(c.threads);
  for (int64_t r = first_rank; r <= last_rank;) {
    const auto stage = static_cast<int>(r / per_stage);
    const int64_t last = std::min({last_rank, (stage + 1) * per_stage - 1, r + group_size - 1});
    groups.push_back({stage, r, last});
    r = last + 1;
  }
  util::parallel_for(0, static_cast<int64_t>(groups.size()), c.threads, [&](int64_t k) {
    const Group& group = groups[k];
    std::vector<mesh::RankBinding> bindings;
    std::vector<io::OutputFiles::File> rank_files;
    for (int64_t rank = group.first; rank <= group.last; ++rank) {
      bindings.push_back(c.layout.binding(rank));
      rank_files.push_back(c.files.open(io::expand_rank(c.out.rank_pattern, rank)));
    }
    std::vector<int64_t> sizes(bindings.size(), 0);
    writers[group.stage]->write_ranks(bindings, [&](size_t i, std::string_view piece) {
      rank_files[i].append(piece);
      sizes[i] += static_cast<int64_t>(piece.size());
    });
    for (size_t i = 0; i < rank_files.size(); ++i) {
      rank_files[i].close();
      c.bytes += sizes[i];
      c.nodes += static_cast<int64_t>(c.stages[group.stage]->num_nodes());
      c.listen.advance(1, sizes[i]);
    }
  });
}

// v0.0.1 and JSON: libprotobuf / nlohmann writers of each stage's nodes
// written out for every micro-batch (lower/expand_stage.h).

// v0.0.1 and JSON: libprotobuf / nlohmann writers of each stage's nodes
// written out for every micro-batch (lower/expand_stage.h).
void write_expanded(WriteContext& c, int64_t first_rank, int64_t last_rank) {
  std::vector<StageGraph> expanded(c.stages.size());
  util::parallel_for(0, static_cast<int64_t>(c.stages.size()), c.threads, [&](int64_t s) {
    if (c.stages[s]) expanded[s] = lower::expand(*c.stages[s]);
  });
  util::parallel_for(first_rank, last_rank + 1, c.threads, [&](int64_t rank) {
    const StageGraph& stage = expanded[c.layout.coords_of(rank).stage];
    std::string content;
    emit::append_trace(content, stage, c.layout.binding(rank), c.o.schema, c.o.trace_detail);
    c.files.write(io::expand_rank(c.out.rank_pattern, rank), content);
    c.bytes += static_cast<int64_t>(content.size());
    c.nodes += static_cast<int64_t>(stage.nodes.size());
    c.listen.advance(1, static_cast<int64_t>(content.size()));
  });
}

// What one rank of each stage computes and sends (stages not lowered: none).

}  // namespace

int64_t write_files(WriteContext& c, const emit::AstraSimPlan& astra_sim, const std::string& dump,
                    bool writes_groups, const std::vector<RankRange>& ranges) {
  if (writes_groups) {
    const std::string groups = c.layout.comm_group_json();
    c.files.write(c.out.comm_group_name, groups);
    c.bytes += static_cast<int64_t>(groups.size());
    for (const emit::AstraSimFile& file : astra_sim.files) {
      c.files.write(file.name, file.content, file.executable);
      c.bytes += static_cast<int64_t>(file.content.size());
    }
  }
  if (!c.o.dump_after.empty()) {
    c.files.write(c.o.dump_after + ".csv", dump);
    c.bytes += static_cast<int64_t>(dump.size());
  }
  c.listen.phase("writing", ranks_in(ranges), "ranks");
  for (const auto& [first_rank, last_rank] : ranges) {
    if (c.o.schema == emit::Schema::kV004)
      write_v004(c, first_rank, last_rank);
    else
      write_expanded(c, first_rank, last_rank);
  }
  std::optional<io::RankFiles> stale;
  const int64_t ranks = c.layout.num_ranks();
  const auto earlier =
      io::earlier_rank_count((std::filesystem::path(c.out.dir) / c.out.comm_group_name).string());
  if (ranks_in(ranges) == ranks && earlier)
    stale = io::RankFiles{c.out.rank_pattern, ranks, *earlier};
  return c.files.commit(stale);
}

// The figures of a lowered run: its notes, memory per stage (the text
// only with --print_gpu_vram), step figures, ranks and stages.

}  // namespace stg
