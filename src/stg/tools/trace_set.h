// A directory of per-rank traces as `stg validate`, `stg inspect` and the
// replay see it: its trace files by rank, its comm-group file and groups,
// and a parallel loop over the ranks. Typical use:
//   TraceSet set;
//   if (!set.open(dir, comm_group_file) || !set.read_comm_groups()) fail(set.error());
//   set.for_each_rank(threads, [&](int64_t rank, const std::string& path) { ... });
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "stg/tools/trace_reader.h"

namespace stg::tools {

class TraceSet {
 public:
  using RankFile = std::pair<int64_t, std::string>;  // (rank, path)
  using Job = std::function<void(int64_t rank, const std::string& path)>;

  // Lists `dir` (scan_trace_dir): the comm-group file is `comm_group_file`
  // when given, else the one found in the directory. False with error() when
  // the directory cannot be listed, holds several comm-group files or holds
  // no trace file.
  bool open(const std::string& dir, const std::string& comm_group_file = "");
  // Parses the comm-group file; true when there is none. False with error()
  // when it is not a comm-group file; comm_groups() then holds the groups
  // read before the problem (inspect still reports them).
  bool read_comm_groups();

  const std::string& dir() const { return dir_; }
  const std::string& error() const { return error_; }
  const std::string& comm_group_file() const { return listing_.comm_group_file; }  // "" if none
  const CommGroups& comm_groups() const { return comm_groups_; }

  // Every trace file, by rank then name (a rank may have several).
  const std::vector<RankFile>& files() const { return listing_.files; }
  // The first file of each rank, by rank: the one the tools check.
  const std::vector<RankFile>& rank_files() const { return rank_files_; }
  // Highest rank with a trace file.
  int64_t last_file_rank() const {
    return listing_.files.empty() ? -1 : listing_.files.back().first;
  }
  // N of ranks 0..N-1: covers the trace files and every member of the comm
  // groups read so far.
  int64_t ranks() const;

  // job(rank, path) for each of rank_files() on `threads` workers (0: one per
  // core; never more than there are files). Rethrows the first exception of
  // a job after all workers stop.
  void for_each_rank(int threads, const Job& job) const { run(rank_files_, threads, job); }
  // The same over files(), several files of one rank included.
  void for_each_file(int threads, const Job& job) const { run(listing_.files, threads, job); }

 private:
  static void run(const std::vector<RankFile>& files, int threads, const Job& job);

  std::string dir_;
  std::string error_;
  TraceDir listing_;
  std::vector<RankFile> rank_files_;
  CommGroups comm_groups_;
};

// Worker threads for `jobs` independent jobs: `requested` when positive,
// else one per core, at most one per job and at least one.
int worker_threads(int requested, size_t jobs);

}  // namespace stg::tools
