// libFuzzer target: the trace reader (stg/tools/trace_reader.h) on arbitrary
// file bytes. The bytes are written as the trace of ranks 0 and 1 of a
// scratch directory (with a fixed comm-group file) and read with
// TraceReader, read_trace and read_comm_groups, then replayed with
// replay_dir and, when built with STG_FUZZ_VALIDATE (clang >= 16, see
// CMakeLists.txt), checked with validate_dir. Bad content must end up as an
// error string (the reader "never throws for bad file content"); any
// exception, crash or sanitizer report is a finding.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "stg/tools/replay.h"
#include "stg/tools/trace_reader.h"
#if STG_FUZZ_VALIDATE
#include "stg/tools/validate.h"
#endif

namespace fs = std::filesystem;
using namespace stg::tools;

namespace {

const fs::path& scratch() {
  static const fs::path dir = [] {
    fs::path d = fs::temp_directory_path() / ("stg_fuzz_trace_" + std::to_string(::getpid()));
    fs::create_directories(d);
    std::ofstream(d / "workload.json") << "{\"1\": [0, 1], \"2\": [0]}";
    return d;
  }();
  return dir;
}

void write(const fs::path& path, const uint8_t* data, size_t size) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 65536) return 0;
  const fs::path dir = scratch();
  const fs::path rank0 = dir / "workload.0.et", rank1 = dir / "workload.1.et";
  write(rank0, data, size);
  write(rank1, data, size);

  {
    TraceReader r;
    if (r.open(rank0.string())) {
      TraceNode n;
      int64_t count = 0;
      while (r.next(n) && ++count < 1000000) {
        (void)kind_name(n.kind);
        (void)missing_names(n.missing);
        if (n.comm_type) (void)coll_name(*n.comm_type);
      }
    }
  }
  {
    std::vector<TraceNode> nodes;
    TraceFormat format;
    std::string error;
    (void)read_trace(rank0.string(), nodes, format, error);
  }
  {
    CommGroups groups;
    std::string error;
    (void)may_be_comm_group_file(rank0.string());
    (void)read_comm_groups(rank0.string(), groups, error);
  }
#if STG_FUZZ_VALIDATE
  {
    ValidateOptions o;
    o.threads = 1;
    o.comm_group_file = (dir / "workload.json").string();
    const ValidationReport report = validate_dir(dir.string(), o);
    (void)report.verdict();
  }
#endif
  {
    const ReplayResult r = replay_dir(dir.string(), (dir / "workload.json").string(), 1);
    (void)replay_summary(r);
  }
  return 0;
}
