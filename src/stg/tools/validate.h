// `stg validate DIR`: checks that a directory of per-rank Chakra traces plus
// its comm-group file can be replayed by ASTRA-sim without a silent hang
// (docs/facts.md §6). Works on any generator's output.
//
// Rules (labels as printed):
//   R0 one trace file per rank 0..N-1, no gaps, no rank twice (the rank is
//      the last all-digit '.'-separated token of the file name; N also
//      covers every rank named in the comm-group file)
//   R1 every dependency id exists in the same file, no duplicate ids, no
//      dependency cycle
//   R2 every collective names its group (pg_name / comm_group /
//      communicator_id), the group is in the comm-group file, the rank is a
//      member, the group has >= 2 members, comm_type is ALL_REDUCE,
//      ALL_GATHER, REDUCE_SCATTER or ALL_TO_ALL and comm_size is present;
//      comm-group ids are positive integers and list no rank twice
//   R3 all members of a group issue the same sequence of (comm_type,
//      comm_size) on it, in dependency order (see validate.cc)
//   R4 every SEND (src, dst, tag, size) has exactly one RECV on dst with the
//      same (src, tag, size), and vice versa
//   R5 every compute node has num_ops and a non-zero tensor_size
// Warnings (not violations; the exit status does not change):
//   W1 a compute node without dependencies that ASTRA-sim's roofline runs in
//      0 ns with the hardware figures of ValidateOptions::roofline: ASTRA-sim
//      aborts at time 0 on it (roofline.h, docs/facts.md §6)
// An unreadable file (truncated, bad varint, malformed JSON) is an error,
// not a violation: exit status 2.
// With --replay (ValidateOptions::replay) the static checks are followed by
// a dynamic, order-only replay of all ranks (replay.h) that proves the set
// runs to completion; a stuck replay counts like a violation (exit 1).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "stg/hardware/roofline.h"
#include "stg/tools/makespan.h"
#include "stg/tools/makespan_setup.h"
#include "stg/tools/replay.h"
#include "stg/util/progress.h"

namespace stg::tools {

enum class Rule : int { kRankFiles = 0, kDeps, kGroups, kOrder, kP2P, kCompute };
inline constexpr int kNumRules = 6;
const char* rule_label(Rule r);  // "R0" .. "R5"
const char* rule_title(Rule r);  // "rank files", "dependencies", ...

struct ValidateOptions {
  std::string comm_group_file;  // empty: the comm-group file found in the directory
  int threads = 0;              // reader threads; 0 = one per core (at most one per file)
  int max_shown = 5;            // violations kept (and printed) per rule
  // Stricter R2 for v0.0.4 files: the group must be the string attribute
  // pg_name, which is what ASTRA-sim HEAD reads (the 2024 reference wrote
  // the int32 attribute comm_group instead).
  bool require_pg_name = false;
  // After the static checks, replay the whole set (replay.h). Opt-in: it
  // holds every rank's graph in memory at once.
  bool replay = false;
  // Hardware figures for the W1 warning (ASTRA-sim's system configuration).
  hardware::RooflineFigures roofline;
  // After a replay that completes, the timed run (makespan.h) with
  // `roofline` and `figures`: --link_gbps, or ASTRA-sim's network when the
  // directory has its files or the figures name them (makespan_setup.h).
  bool makespan = false;
  MakespanFigures figures;
  // The makespan also returns every node's times (MakespanResult::timeline).
  bool timeline = false;
  ProgressListener* progress = nullptr;  // told the files read and the replays
};

struct Violation {
  Rule rule;
  std::string message;
};

struct ValidationReport {
  std::string dir;
  std::string comm_group_file;      // "" when none was found
  int64_t ranks = 0;                // N: ranks 0..N-1 expected
  int64_t files = 0;                // trace files found
  int64_t nodes = 0;                // nodes in all readable files
  std::vector<std::string> errors;  // unreadable input or usage problems
  std::vector<std::string> notes;   // informational (e.g. no comm-group file)
  // W1: dependency-free compute nodes that run in 0 ns, and the first
  // max_shown of them, lowest rank first.
  int64_t zero_time_roots = 0;
  std::vector<std::string> warnings;
  hardware::RooflineFigures roofline;  // the figures W1 used
  std::array<int64_t, kNumRules> counts{};
  std::vector<Violation> shown;  // first max_shown per rule, in rule order
  // Set when options.replay was given (with an error when the input was
  // unreadable and the replay did not run).
  std::optional<ReplayResult> replay;
  // Set when options.makespan was given and the replay completed.
  std::optional<MakespanResult> makespan;

  int64_t violations() const;
  int64_t count(Rule r) const { return counts[static_cast<int>(r)]; }
  // 2 if there are errors, else 1 if there are violations or the replay is
  // stuck, else 0.
  int exit_status() const;
  // "validate: 0 violations in 8 ranks (572 nodes)" and variants.
  std::string verdict() const;
};

// Checks the traces in `dir`. Never throws for bad input: problems end up in
// report.errors.
ValidationReport validate_dir(const std::string& dir, const ValidateOptions& options = {});

}  // namespace stg::tools
