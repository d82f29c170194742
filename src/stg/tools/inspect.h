// `stg inspect DIR`: a summary of a directory of per-rank Chakra traces
// (ours or the reference's): ranks, nodes by type, total compute, sizes per
// collective type and per group size, send/recv, structure groups (ranks
// whose graphs are identical up to group ids, peers and tags), file sizes
// and the per-step figures (report/step_figures.h: FLOPs per rank, bytes per
// parallel axis per rank); `--json` prints the same figures as JSON.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace stg::tools {

struct InspectOptions {
  std::string comm_group_file;  // empty: the comm-group file found in the directory
  int threads = 0;              // 0: one per core (at most one per file)
  bool per_rank = false;        // also list every rank
};

// The figures of a directory as JSON (the `--json` output). Files that
// cannot be read are listed under "errors" and left out of the figures;
// a directory that cannot be listed gives {"errors": [...]} only.
nlohmann::ordered_json inspect_dir(const std::string& dir, const InspectOptions& options = {});

// Prints the figures of inspect_dir as text tables.
void print_inspection(const nlohmann::ordered_json& figures);

// `stg inspect` with the arguments after the word "inspect" (commands.cc):
//   DIR [--comm_group FILE] [--json] [--per_rank] [--threads N]
// Returns 0, or 2 on unreadable input or a usage error.
int inspect_main(const std::vector<std::string>& args);

}  // namespace stg::tools
