#include "stg/tools/trace_set.h"

#include <algorithm>
#include <thread>

#include "stg/util/parallel.h"

namespace stg::tools {

bool TraceSet::open(const std::string& dir, const std::string& comm_group_file) {
  *this = TraceSet();
  dir_ = dir;
  if (!scan_trace_dir(dir, comm_group_file, listing_, error_)) return false;
  if (listing_.files.empty()) {
    error_ = dir + ": no trace files (NAME.<rank>.et / .json)";
    return false;
  }
  for (const RankFile& f : listing_.files)
    if (rank_files_.empty() || rank_files_.back().first != f.first) rank_files_.push_back(f);
  return true;
}

bool TraceSet::read_comm_groups() {
  if (listing_.comm_group_file.empty()) return true;
  return tools::read_comm_groups(listing_.comm_group_file, comm_groups_, error_);
}

int64_t TraceSet::ranks() const {
  int64_t max_rank = last_file_rank();
  for (const auto& [id, members] : comm_groups_.groups)
    for (int64_t m : members) max_rank = std::max(max_rank, m);
  return max_rank + 1;
}

void TraceSet::run(const std::vector<RankFile>& files, int threads, const Job& job) {
  stg::util::parallel_for(0, static_cast<int64_t>(files.size()),
                          worker_threads(threads, files.size()), [&](int64_t i) {
                            const auto& [rank, path] = files[static_cast<size_t>(i)];
                            job(rank, path);
                          });
}

int worker_threads(int requested, size_t jobs) {
  const int64_t wanted =
      requested > 0 ? requested : std::max(1u, std::thread::hardware_concurrency());
  return static_cast<int>(
      std::max<int64_t>(1, std::min<int64_t>(wanted, static_cast<int64_t>(jobs))));
}

}  // namespace stg::tools
