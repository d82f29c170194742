#include "dot_command.h"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <limits>

#include "command_line.h"
#include "integer_flags.h"
#include "stg/options.h"
#include "stg/tools/dot_graph.h"
#include "stg/tools/trace_set.h"

namespace cli {

int dot_main(const std::vector<std::string>& args) {
  CLI::App app{
      "Prints one rank's Chakra trace in DIR as a Graphviz graph (render with\n"
      "`dot -Tsvg`): compute nodes as boxes, collectives as hexagons, sends and\n"
      "receives as arrows, each labelled with its size and group or peer; data\n"
      "dependencies solid, the schedule's control dependencies dashed; the nodes\n"
      "of each micro-batch in a cluster.",
      "stg dot"};
  app.footer("Exit status: 0, or 2 on unreadable input or a usage error.");
  std::string dir;
  int64_t rank = 0;
  stg::tools::DotOptions options;
  app.add_option("DIR", dir, "directory of per-rank traces")->required();
  IntegerFlags integers;
  integers.add(app, "--rank", rank, "the rank to draw (default 0)", stg::kMaxRanks - 1,
               "an integer from 0 to " + std::to_string(stg::kMaxRanks - 1), 0);
  integers.add(app, "--max_nodes", options.max_nodes,
               "draw the first N nodes of the trace, 0 for all (default 60: a readable "
               "picture)",
               std::numeric_limits<int64_t>::max(), "an integer >= 0 (0: all)", 0);
  if (const auto done = parse_command(app, integers, "dot", args)) return *done;

  stg::tools::TraceSet set;
  if (!set.open(dir)) {
    std::fprintf(stderr, "stg dot: error: %s\n", set.error().c_str());
    return 2;
  }
  std::string path;
  for (const auto& [r, p] : set.rank_files())
    if (r == rank) path = p;
  if (path.empty()) {
    std::fprintf(
        stderr, "stg dot: error: --rank %lld: %s holds no trace of that rank (ranks 0..%lld)\n",
        static_cast<long long>(rank), dir.c_str(), static_cast<long long>(set.last_file_rank()));
    return 2;
  }
  std::vector<stg::tools::TraceNode> nodes;
  stg::tools::TraceFormat format;
  std::string error;
  if (!stg::tools::read_trace(path, nodes, format, error)) {
    std::fprintf(stderr, "stg dot: error: %s\n", error.c_str());
    return 2;
  }
  const stg::tools::DotGraph graph = stg::tools::dot_graph(nodes, options);
  std::fputs(graph.text.c_str(), stdout);
  if (graph.drawn < graph.nodes)
    std::fprintf(stderr,
                 "stg dot: note: drew the first %lld of %lld nodes (--max_nodes N draws more, "
                 "--max_nodes 0 all)\n",
                 static_cast<long long>(graph.drawn), static_cast<long long>(graph.nodes));
  return 0;
}

}  // namespace cli
