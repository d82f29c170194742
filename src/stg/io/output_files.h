// Writing a run's files so that the output directory only ever holds complete
// runs. prepare() makes a staging directory inside the output directory
// (".stg-staging-<pid>-XXXXXX"); write() puts every file of the run there;
// commit() moves them into place (renames within one filesystem) and then
// removes stale rank files. Until commit() the output directory is untouched:
// a write error or a stop request (cancel.h) ends in abort(), which removes
// the staging directory (the destructor does so too).
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "stg/io/error.h"

namespace stg::io {

// Expands the single "%d" of a trace name pattern (Python %-formatting:
// "%%" is a literal percent sign).
std::string expand_rank(const std::string& pattern, int64_t rank);
// Throws OutputError when `pattern` has no "%d" or another % directive.
void check_rank_pattern(const std::string& pattern);
// The rank whose file `expand_rank(pattern, rank)` is `name`, if there is one
// (the rank written in decimal without leading zeros, as %d writes it).
std::optional<int64_t> match_rank(const std::string& pattern, const std::string& name);

// The trace files of a run that writes every rank: regular files of the
// output directory named by `pattern` for a rank r with count <= r <
// earlier_count are stale: an earlier run of stg wrote them (its comm-group
// file, earlier_run.h, says it had earlier_count ranks) and this run does not
// replace them. Nothing else is ever removed: not a file of a rank the
// earlier run did not have, nor any file outside the output directory.
struct RankFiles {
  std::string pattern;
  int64_t count = 0;
  int64_t earlier_count = 0;
};

class OutputFiles {
 public:
  // `detach_bytes`: when a stop request ends a run that has staged at least
  // this many bytes, abort() leaves their removal to a detached `rm` so that
  // the process ends at once (unlinking gigabytes takes ext4 seconds); the
  // staging directory is hidden and goes within seconds.
  static constexpr int64_t kDetachBytes = int64_t{256} << 20;
  explicit OutputFiles(std::string dir, int64_t detach_bytes = kDetachBytes);
  ~OutputFiles();  // abort() unless commit() succeeded
  OutputFiles(const OutputFiles&) = delete;
  OutputFiles& operator=(const OutputFiles&) = delete;

  // Creates the output directory (and parents), its sub-directories
  // `subdirs` (relative paths, for names like "traces/workload.%d.et") and
  // the staging directory; throws OutputError when it cannot.
  void prepare(const std::vector<std::string>& subdirs = {});
  // Writes `content` as the run's file `name` (relative to the output
  // directory) into the staging directory. Safe to call from several threads
  // for different names. Checks stop_signal before the file and between
  // chunks (throws Interrupted); throws OutputError naming the file and the
  // reason when a write fails (ENOSPC, EFBIG, ...).
  // `executable`: mode 0777 less the umask (a script), not 0666.
  void write(const std::string& name, const std::string& content, bool executable = false);

  // A run's file written in pieces (same checks and errors as write()):
  // append() as often as needed, then close(). Destroying an unclosed File
  // closes its descriptor and leaves the partial file to abort().
  class File {
   public:
    File(File&& other) noexcept
        : shown_(std::move(other.shown_)), fd_(other.fd_), written_(other.written_) {
      other.fd_ = -1;
    }
    File& operator=(File&&) = delete;
    ~File();
    void append(std::string_view bytes);
    void close();

   private:
    friend class OutputFiles;
    File(std::string shown, int fd, std::atomic<int64_t>* written)
        : shown_(std::move(shown)), fd_(fd), written_(written) {}
    [[noreturn]] void fail(const std::string& what, int err);
    std::string shown_;  // the file's final path, for messages
    int fd_ = -1;
    std::atomic<int64_t>* written_;  // the run's staged bytes
  };
  // Creates the run's file `name` in the staging directory.
  File open(const std::string& name, bool executable = false);
  // Moves every written file into place and removes the staging directory;
  // then, given `stale`, removes the stale rank files (not the run's own).
  // Returns how many stale files it removed. Throws Interrupted if a stop was
  // asked for before the first move; after that it finishes.
  int64_t commit(const std::optional<RankFiles>& stale = std::nullopt);
  // Removes the staging directory and the directories prepare() created (if
  // empty). Returns how that leaves the output directory, to end an error
  // message: ": nothing was written to DIR" (or what was left, and where);
  // "" after a successful commit().
  std::string abort();

  const std::string& staging_dir() const { return staging_; }

 private:
  std::string target(const std::string& name) const;

  // Starts a detached removal of the staging directory and the directories
  // prepare() created; false when it cannot be started.
  bool remove_detached();

  std::string dir_;  // as given ("" = ".")
  int64_t detach_bytes_;
  std::atomic<int64_t> written_{0};
  std::string staging_;               // "" before prepare() and after commit/abort
  std::vector<std::string> created_;  // directories prepare() made, deepest first
  std::mutex mutex_;                  // guards names_, slots_
  std::vector<std::string> names_;    // file i of the run is staging_/i
  std::unordered_map<std::string, size_t> slots_;
  size_t moved_ = 0;
  bool committed_ = false;
};

}  // namespace stg::io
