// Writing a run's files safely: each file goes to a temporary name in the
// output directory and is renamed when complete, so no truncated trace ever
// carries a final name. If any file fails, every file of the run is removed.
#pragma once

#include <cstdint>
#include <functional>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

namespace stg::io {

class OutputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Expands the single "%d" of a trace name pattern (Python %-formatting:
// "%%" is a literal percent sign).
std::string expand_rank(const std::string& pattern, int64_t rank);
// Throws OutputError when `pattern` has no "%d" or another % directive.
void check_rank_pattern(const std::string& pattern);

class OutputFiles {
 public:
  explicit OutputFiles(std::string dir);
  ~OutputFiles();  // removes everything written unless commit() was called

  // Creates the directory (and parents); throws OutputError when it cannot.
  void prepare();
  // Writes `content` to `name` (inside the directory) atomically.
  void write(const std::string& name, const std::string& content);
  // Keeps the files.
  void commit() { committed_ = true; }

 private:
  std::string dir_;
  std::mutex mutex_;
  std::vector<std::string> written_;
  bool committed_ = false;
};

}  // namespace stg::io
