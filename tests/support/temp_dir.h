// A fresh per-test scratch directory under the system temp dir, removed afterwards.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>
#include <system_error>
#include <utility>

#include "files.h"

namespace stg_test {

struct TempDirOptions {
  // Start of the directory name; the process id and a counter follow.
  std::string prefix = "stg_test";
  // End of the directory name; by default the running test's name.
  std::optional<std::string> tag;
  // Keep the directory if the test has failed, and say so on stderr as
  // "<label>: output kept in <dir>".
  bool keep_on_failure = false;
  std::string label = "test";
};

// Created (empty) on construction; removed with its content on destruction.
class TempDir {
 public:
  explicit TempDir(TempDirOptions options = {}) : options_(std::move(options)) {
    static std::atomic<int> counter{0};
    std::string name =
        options_.prefix + "_" + std::to_string(::getpid()) + "_" + std::to_string(counter++);
    if (options_.tag) {
      name += "_" + *options_.tag;
    } else if (const auto* info = ::testing::UnitTest::GetInstance()->current_test_info()) {
      name += std::string("_") + info->name();
    }
    for (char& c : name)
      if (c == '/') c = '_';
    path_ = std::filesystem::temp_directory_path() / name;
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    if (options_.keep_on_failure && ::testing::Test::HasFailure()) {
      std::fprintf(stderr, "%s: output kept in %s\n", options_.label.c_str(), path_.c_str());
      return;
    }
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  // The path of `name` in the directory (not created).
  std::string sub(const std::string& name) const { return (path_ / name).string(); }
  // Writes the file `name` in the directory; returns its path.
  std::string write(const std::string& name, const std::string& content) const {
    write_file(path_ / name, content);
    return sub(name);
  }

 private:
  TempDirOptions options_;
  std::filesystem::path path_;
};

}  // namespace stg_test
