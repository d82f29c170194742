// `stg inspect DIR`: a summary of a directory of per-rank Chakra traces
// (ours or the reference's): ranks, nodes by type, total compute, sizes per
// collective type and per group size, send/recv, structure groups (ranks
// whose graphs are identical up to group ids, peers and tags), file sizes
// and the per-step figures (report/step_figures.h: FLOPs per rank, bytes per
// parallel axis per rank). The library returns the figures (InspectReport);
// the command line (src/cli/inspect_command.cc) prints them as text or as
// the JSON of to_json.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "stg/report/step_figures.h"
#include "stg/tools/trace_reader.h"

namespace stg::tools {

struct InspectOptions {
  std::string comm_group_file;  // empty: the comm-group file found in the directory
  int threads = 0;              // 0: one per core (at most one per file)
  bool per_rank = false;        // also list every rank
};

inline constexpr int kNumNodeKinds = static_cast<int>(NodeKind::kUnknown) + 1;

// How many nodes and the sum of their comm_size.
struct CountSize {
  int64_t count = 0;
  int64_t size = 0;
  void add(int64_t s) {
    ++count;
    size += s;
  }
  void add(const CountSize& o) {
    count += o.count;
    size += o.size;
  }
};

// A figure over the trace files: its sum, smallest and largest value per file.
struct Spread {
  int64_t total = 0, min = 0, max = 0;
};

// The figures of one trace file (a rank's second file has its own).
struct InspectFile {
  int64_t rank = 0;
  std::string file;  // file name, without the directory
  TraceFormat format = TraceFormat::kV004;
  int64_t file_bytes = 0;
  int64_t nodes = 0;
  std::array<int64_t, kNumNodeKinds> nodes_by_kind{};  // indexed by NodeKind
  int64_t num_ops = 0;                                 // of the compute nodes
  int64_t tensor_size = 0;                             // of the compute nodes
  CountSize collectives, send, recv;
  int64_t nodes_missing_attributes = 0;
  // Hash of the graph up to node ids, group ids, peers and tags.
  uint64_t structure_hash = 0;

  int64_t by_kind(NodeKind k) const { return nodes_by_kind[static_cast<int>(k)]; }
};

// Files whose graphs have the same structure_hash.
struct StructureGroup {
  InspectFile first;           // the figures of its lowest rank
  std::vector<int64_t> ranks;  // ascending (a rank with two such files twice)
};

// The comm-group file: its name and its groups counted by size.
struct CommGroupSummary {
  std::string file;
  int64_t groups = 0;
  std::map<int64_t, int64_t> groups_by_size;  // members -> groups
};

struct CollectiveFigures {
  CountSize total;
  std::map<int, CountSize> by_type;              // comm_type; -1: missing
  std::map<int64_t, CountSize> by_group_size;    // -1: group not in the comm-group file
  std::map<std::string, int64_t> by_group_attr;  // attribute naming the group -> collectives
  int64_t groups_used = 0;                       // distinct groups named
};

struct ComputeFigures {
  report::ExactTotal num_ops;                // over the files (it can pass 64 bits)
  int64_t num_ops_min = 0, num_ops_max = 0;  // per file
  int64_t tensor_size = 0;
};

struct InspectReport {
  std::string directory;
  // Files that cannot be read are listed here and left out of the figures.
  std::vector<std::string> errors;
  // False when the directory cannot be listed: nothing below is set.
  bool listed = false;
  std::vector<int64_t> ranks;                   // of the files read, ascending (one entry per file)
  std::vector<int64_t> missing_ranks;           // below the last file's rank, without a file
  std::vector<std::string> formats;             // format_name of the files, sorted, once each
  std::map<std::string, std::string> metadata;  // of the files' metadata nodes
  std::optional<CommGroupSummary> comm_group_file;  // none found or named
  Spread file_bytes, nodes;
  std::array<Spread, kNumNodeKinds> nodes_by_kind{};  // indexed by NodeKind
  int64_t nodes_missing_attributes = 0;
  ComputeFigures compute;
  CollectiveFigures collectives;
  CountSize send, recv;
  report::StepFigures step;
  std::vector<StructureGroup> structure_groups;      // in order of their first rank
  std::optional<std::vector<InspectFile>> per_rank;  // with InspectOptions::per_rank

  int exit_status() const { return errors.empty() ? 0 : 2; }
};

// Node kinds in print order.
inline constexpr NodeKind kNodeKindOrder[] = {
    NodeKind::kComp,     NodeKind::kColl,    NodeKind::kSend,
    NodeKind::kRecv,     NodeKind::kMemLoad, NodeKind::kMemStore,
    NodeKind::kMetadata, NodeKind::kInvalid, NodeKind::kUnknown};

// The figures of a directory. Never throws for bad input.
InspectReport inspect_dir(const std::string& dir, const InspectOptions& options = {});

// The `--json` layout. It lives beside the report rather than in the command
// line so that every caller (tests, other front ends) gets the one layout.
nlohmann::ordered_json to_json(const InspectReport& report);

// "0-3,8,10-11" (ascending ranks; a pair of neighbours as "4,5").
std::string ranks_text(const std::vector<int64_t>& ranks);

}  // namespace stg::tools
