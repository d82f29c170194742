// Writing a run's files so that the output directory only ever holds complete
// runs. prepare() makes a staging directory inside the output directory
// (".stg-staging-<pid>-XXXXXX"); write() puts every file of the run there;
// commit() moves them into place (renames within one filesystem) and then
// removes stale rank files. Until commit() the output directory is untouched:
// a write error or a stop request (cancel.h) ends in abort(), which removes
// the staging directory (the destructor does so too).
#pragma once

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

// The trace files of a run that writes every rank: files of the output
// directory named by `pattern` with a rank >= `count` are stale.
struct RankFiles {
  std::string pattern;
  int64_t count = 0;
};

class OutputFiles {
 public:
  explicit OutputFiles(std::string dir);
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
    File(File&& other) noexcept : shown_(std::move(other.shown_)), fd_(other.fd_) {
      other.fd_ = -1;
    }
    File& operator=(File&&) = delete;
    ~File();
    void append(std::string_view bytes);
    void close();

   private:
    friend class OutputFiles;
    File(std::string shown, int fd) : shown_(std::move(shown)), fd_(fd) {}
    [[noreturn]] void fail(const std::string& what, int err);
    std::string shown_;  // the file's final path, for messages
    int fd_ = -1;
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

  std::string dir_;                   // as given ("" = ".")
  std::string staging_;               // "" before prepare() and after commit/abort
  std::vector<std::string> created_;  // directories prepare() made, deepest first
  std::mutex mutex_;                  // guards names_, slots_
  std::vector<std::string> names_;    // file i of the run is staging_/i
  std::unordered_map<std::string, size_t> slots_;
  size_t moved_ = 0;
  bool committed_ = false;
};

}  // namespace stg::io
