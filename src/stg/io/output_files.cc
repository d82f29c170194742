#include "stg/io/output_files.h"

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <thread>

namespace stg::io {

namespace fs = std::filesystem;

void check_rank_pattern(const std::string& pattern) {
  int ranks = 0;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '%') continue;
    if (i + 1 < pattern.size() && pattern[i + 1] == '%') {
      ++i;
    } else if (i + 1 < pattern.size() && pattern[i + 1] == 'd') {
      ++ranks;
      ++i;
    } else {
      throw OutputError("'%' must be followed by 'd' (the rank) or '%'");
    }
  }
  if (ranks != 1) throw OutputError("must contain %d exactly once");
}

std::string expand_rank(const std::string& pattern, int64_t rank) {
  std::string out;
  out.reserve(pattern.size() + 8);
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] == '%' && i + 1 < pattern.size()) {
      if (pattern[i + 1] == 'd') {
        out += std::to_string(rank);
        ++i;
        continue;
      }
      if (pattern[i + 1] == '%') {
        out += '%';
        ++i;
        continue;
      }
    }
    out += pattern[i];
  }
  return out;
}

OutputFiles::OutputFiles(std::string dir) : dir_(std::move(dir)) {}

OutputFiles::~OutputFiles() {
  if (committed_) return;
  std::error_code ec;
  for (const std::string& path : written_) fs::remove(path, ec);
}

void OutputFiles::prepare() {
  std::error_code ec;
  fs::create_directories(dir_.empty() ? "." : dir_, ec);
  if (ec) throw OutputError("cannot create directory '" + dir_ + "': " + ec.message());
  const std::string probe = (fs::path(dir_.empty() ? "." : dir_) / ".stg_write_probe").string();
  FILE* f = std::fopen(probe.c_str(), "wb");
  if (!f) throw OutputError("cannot write in '" + dir_ + "': " + std::strerror(errno));
  std::fclose(f);
  fs::remove(probe, ec);
}

void OutputFiles::write(const std::string& name, const std::string& content) {
  const std::string path = (fs::path(dir_.empty() ? "." : dir_) / name).string();
  const std::string tmp = path + ".tmp" + std::to_string(::getpid());
  size_t slot;
  {
    std::lock_guard lock(mutex_);
    slot = written_.size();
    written_.push_back(tmp);
  }
  FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) throw OutputError("cannot create '" + tmp + "': " + std::strerror(errno));
  const size_t n = std::fwrite(content.data(), 1, content.size(), f);
  const bool flushed = std::fflush(f) == 0;
  const bool closed = std::fclose(f) == 0;
  if (n != content.size() || !flushed || !closed)
    throw OutputError("cannot write '" + path + "': " + std::strerror(errno));
  if (std::rename(tmp.c_str(), path.c_str()) != 0)
    throw OutputError("cannot rename to '" + path + "': " + std::strerror(errno));
  std::lock_guard lock(mutex_);
  written_[slot] = path;
}

}  // namespace stg::io
