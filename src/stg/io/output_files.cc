#include "stg/io/output_files.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <system_error>
#include <utility>

#include "stg/io/cancel.h"

extern char** environ;

namespace stg::io {

namespace fs = std::filesystem;

namespace {

// Files are written in chunks of this size; a stop request is seen between
// chunks.
constexpr size_t kChunk = size_t{1} << 20;

// strerror for `err`, safe in the writer threads.
std::string reason(int err) {
  char buf[256] = {};
#if defined(__GLIBC__) && defined(_GNU_SOURCE)
  return strerror_r(err, buf, sizeof buf);
#else
  return strerror_r(err, buf, sizeof buf) == 0 ? std::string(buf) : "error " + std::to_string(err);
#endif
}

// The text before and after the "%d" of `pattern`, with "%%" turned into
// "%"; nothing when `pattern` has no "%d".
std::optional<std::pair<std::string, std::string>> split_pattern(const std::string& pattern) {
  std::string before, after;
  bool seen = false;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] == '%' && i + 1 < pattern.size()) {
      if (pattern[i + 1] == '%') {
        (seen ? after : before) += '%';
        ++i;
        continue;
      }
      if (pattern[i + 1] == 'd' && !seen) {
        seen = true;
        ++i;
        continue;
      }
    }
    (seen ? after : before) += pattern[i];
  }
  if (!seen) return std::nullopt;
  return std::pair{std::move(before), std::move(after)};
}

}  // namespace

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

std::optional<int64_t> match_rank(const std::string& pattern, const std::string& name) {
  const auto parts = split_pattern(pattern);
  if (!parts) return std::nullopt;
  const auto& [before, after] = *parts;
  if (name.size() <= before.size() + after.size()) return std::nullopt;
  if (name.compare(0, before.size(), before) != 0) return std::nullopt;
  if (name.compare(name.size() - after.size(), after.size(), after) != 0) return std::nullopt;
  const std::string digits = name.substr(before.size(), name.size() - before.size() - after.size());
  // %d writes no sign and no leading zero; 18 digits always fit in int64_t.
  if (digits.size() > 18 || (digits.size() > 1 && digits[0] == '0')) return std::nullopt;
  int64_t rank = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return std::nullopt;
    rank = rank * 10 + (c - '0');
  }
  return rank;
}

OutputFiles::OutputFiles(std::string dir, int64_t detach_bytes)
    : dir_(std::move(dir)), detach_bytes_(detach_bytes) {}

OutputFiles::~OutputFiles() {
  if (committed_) return;
  try {
    abort();
  } catch (...) {
  }
}

std::string OutputFiles::target(const std::string& name) const {
  return (fs::path(dir_.empty() ? "." : dir_) / name).string();
}

void OutputFiles::prepare(const std::vector<std::string>& subdirs) {
  const fs::path dir = dir_.empty() ? "." : dir_;
  // Remember which directories are new, deepest first, to remove them again
  // on abort().
  auto create = [&](const fs::path& path, const std::string& shown) {
    fs::path p = path.lexically_normal();
    if (!p.has_filename() && p.has_parent_path()) p = p.parent_path();  // "out/" -> "out"
    std::error_code ec;
    std::vector<std::string> fresh;
    while (!p.empty() && !fs::exists(fs::symlink_status(p, ec))) {
      fresh.push_back(p.string());
      const fs::path parent = p.parent_path();
      if (parent == p) break;
      p = parent;
    }
    created_.insert(created_.begin(), fresh.begin(), fresh.end());
    fs::create_directories(path, ec);
    if (!ec) return;
    // "Not a directory" alone does not say which: name the file in the way.
    std::string why = ec.message();
    std::error_code status_ec;
    for (fs::path q = path.lexically_normal(); !q.empty(); q = q.parent_path()) {
      const fs::file_status st = fs::status(q, status_ec);
      if (fs::exists(st)) {
        if (!fs::is_directory(st)) {
          why = q.string();
          why.insert(0, 1, '\'');
          why += "' is a file, not a directory";
        }
        break;
      }
      if (q == q.parent_path()) break;
    }
    throw OutputError("cannot create directory '" + shown + "': " + why);
  };
  create(dir, dir_);
  for (const std::string& sub : subdirs) {
    create(dir / sub, target(sub));
    // A symbolic link among the sub-directories must not lead the run's
    // files out of the output directory.
    std::error_code inside_ec, root_ec;
    const fs::path inside = fs::canonical(dir / sub, inside_ec);
    const fs::path root = fs::canonical(dir, root_ec);
    const auto [end, ignored] =
        std::mismatch(root.begin(), root.end(), inside.begin(), inside.end());
    if (inside_ec || root_ec || end != root.end())
      throw OutputError("'" + target(sub) + "' leads outside '" + dir_ +
                        "' through a symbolic link");
  }
  std::string staging = (dir / (".stg-staging-" + std::to_string(::getpid()) + "-XXXXXX")).string();
  if (!::mkdtemp(staging.data()))
    throw OutputError("cannot write in '" + dir_ + "': " + reason(errno));
  staging_ = std::move(staging);
}

void OutputFiles::write(const std::string& name, const std::string& content, bool executable) {
  File file = open(name, executable);
  file.append(content);
  file.close();
}

OutputFiles::File OutputFiles::open(const std::string& name, bool executable) {
  throw_if_stopped();
  if (staging_.empty()) throw std::logic_error("OutputFiles::open before prepare()");
  std::string staged;
  bool fresh = false;
  {
    std::lock_guard lock(mutex_);
    auto [it, added] = slots_.try_emplace(name, names_.size());
    if (added) names_.push_back(name);
    fresh = added;
    staged = staging_ + "/" + std::to_string(it->second);
  }
  // A new name is a new file of the (new, private) staging directory.
  // Neither O_TRUNC nor O_EXCL then: on ext4 each made the open of a new file
  // cost over a millisecond, more than writing 300 KB into it.
  const int flags = O_WRONLY | O_CREAT | O_CLOEXEC | (fresh ? 0 : O_TRUNC);
  File file(target(name), ::open(staged.c_str(), flags, executable ? 0777 : 0666), &written_);
  if (file.fd_ < 0) file.fail("create", errno);
  return file;
}

OutputFiles::File::~File() {
  if (fd_ >= 0) ::close(fd_);
}

// A failure while a stop was asked for (EINTR, ...) is reported as the stop.
void OutputFiles::File::fail(const std::string& what, int err) {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  throw_if_stopped();
  throw OutputError("cannot " + what + " '" + shown_ + "': " + reason(err));
}

void OutputFiles::File::append(std::string_view bytes) {
  if (fd_ < 0) throw std::logic_error("OutputFiles::File::append after close()");
  size_t done = 0;
  while (done < bytes.size()) {
    if (stop_signal.load(std::memory_order_relaxed)) {
      ::close(fd_);
      fd_ = -1;
      throw_if_stopped();
    }
    const ssize_t n = ::write(fd_, bytes.data() + done, std::min(kChunk, bytes.size() - done));
    if (n > 0) {
      done += static_cast<size_t>(n);
      written_->fetch_add(n, std::memory_order_relaxed);
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      fail("write", n < 0 ? errno : EIO);
    }
  }
}

void OutputFiles::File::close() {
  const int fd = fd_;
  fd_ = -1;
  if (fd >= 0 && ::close(fd) != 0) {
    const int err = errno;
    throw_if_stopped();
    throw OutputError("cannot write '" + shown_ + "': " + reason(err));
  }
}

int64_t OutputFiles::commit(const std::optional<RankFiles>& stale) {
  if (staging_.empty()) throw std::logic_error("OutputFiles::commit before prepare()");
  throw_if_stopped();  // the last moment at which stopping leaves nothing behind
  const std::string shown = dir_.empty() ? "." : dir_;
  // What can be foreseen to fail is checked before anything moves.
  for (const std::string& name : names_) {
    const fs::path to = target(name);
    std::error_code ec;
    if (fs::is_directory(fs::symlink_status(to, ec)))
      throw OutputError("cannot move '" + to.string() + "' into place: a directory has that name");
    const fs::path parent = to.has_parent_path() ? to.parent_path() : fs::path(".");
    if (!fs::is_directory(fs::status(parent, ec)))
      throw OutputError("cannot move '" + to.string() +
                        "' into place: its directory does not exist");
  }
  for (size_t i = 0; i < names_.size(); ++i) {
    const std::string staged = staging_ + "/" + std::to_string(i);
    const std::string to = target(names_[i]);
    if (::rename(staged.c_str(), to.c_str()) != 0)
      throw OutputError("cannot move '" + to + "' into place: " + reason(errno));
    ++moved_;
  }
  committed_ = true;
  const std::string staging = std::exchange(staging_, std::string());
  created_.clear();
  if (::rmdir(staging.c_str()) != 0)
    throw OutputError("the files are in place in " + shown + ", but the staging directory '" +
                      staging + "' could not be removed: " + reason(errno));
  if (!stale || stale->earlier_count <= stale->count) return 0;

  // Stale rank files: in the directory the pattern names, files it gives for
  // ranks >= count (a "%d" in a directory part: nothing to look for).
  const auto parts = split_pattern(stale->pattern);
  if (!parts || parts->second.find('/') != std::string::npos) return 0;
  const size_t slash = parts->first.rfind('/');
  const std::string sub = slash == std::string::npos ? "" : parts->first.substr(0, slash + 1);
  const fs::path where = fs::path(target(sub));
  std::vector<std::string> doomed;
  std::error_code ec;
  for (fs::directory_iterator it(where, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = sub + it->path().filename().string();
    if (slots_.count(name)) continue;
    const auto rank = match_rank(stale->pattern, name);
    if (!rank || *rank < stale->count || *rank >= stale->earlier_count) continue;
    std::error_code type_ec;
    if (it->symlink_status(type_ec).type() == fs::file_type::regular) doomed.push_back(name);
  }
  if (ec)
    throw OutputError("the files are in place in " + shown + ", but '" + where.string() +
                      "' could not be searched for stale rank files: " + ec.message());
  std::sort(doomed.begin(), doomed.end());
  int64_t removed = 0;
  for (const std::string& name : doomed) {
    if (::unlink(target(name).c_str()) == 0) {
      ++removed;
    } else if (errno != ENOENT) {
      throw OutputError("the files are in place in " + shown + ", but the stale rank file '" +
                        target(name) + "' could not be removed: " + reason(errno));
    }
  }
  return removed;
}

bool OutputFiles::remove_detached() {
  // sh -c 'rm -rf -- "$1"; shift; for d; do rmdir -- "$d"; done' sh STAGING CREATED...
  std::vector<std::string> args = {
      "/bin/sh", "-c", "rm -rf -- \"$1\"; shift; for d; do rmdir -- \"$d\" 2>/dev/null; done", "sh",
      staging_};
  args.insert(args.end(), created_.begin(), created_.end());
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  posix_spawn_file_actions_init(&actions);
  posix_spawnattr_init(&attr);
  for (int fd = 0; fd <= 2; ++fd)
    posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", fd == 0 ? O_RDONLY : O_WRONLY, 0);
  // Its own session: a second Ctrl-C at the terminal does not stop it.
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSID);
  pid_t pid = 0;
  const int rc = ::posix_spawn(&pid, argv[0], &actions, &attr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  return rc == 0;
}

std::string OutputFiles::abort() {
  if (committed_) return "";
  const std::string shown = dir_.empty() ? "." : dir_;
  // Stopped after gigabytes: the process ends now, the files go in the
  // background (the staging directory is hidden and private to this run).
  if (!staging_.empty() && moved_ == 0 && stop_signal.load(std::memory_order_relaxed) != 0 &&
      written_.load() >= detach_bytes_ && remove_detached()) {
    const int64_t mb = written_.load() >> 20;
    staging_.clear();
    created_.clear();
    return ": nothing was written to " + shown + " (its " + std::to_string(mb) +
           " MiB of unfinished files are being removed in the background)";
  }
  if (!staging_.empty()) {
    std::error_code ec;
    fs::remove_all(staging_, ec);
    if (ec)
      return ": the unfinished files are left in '" + staging_ + "' (" + ec.message() +
             "); nothing else was written to " + shown;
    staging_.clear();
  }
  for (const std::string& dir : created_) ::rmdir(dir.c_str());  // only if empty
  created_.clear();
  if (moved_ > 0)
    return ": " + std::to_string(moved_) + " of " + std::to_string(names_.size()) +
           " files had already been moved into " + shown;
  return ": nothing was written to " + shown;
}

}  // namespace stg::io
