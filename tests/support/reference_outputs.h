// The reference generator's outputs (<root>/<case>/traces), when this machine has them.
#pragma once

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace stg_test {

inline const std::filesystem::path kReferenceRoot = "/work/shared/reference";

struct ReferenceCase {
  std::filesystem::path dir;     // <root>/<case>
  std::filesystem::path traces;  // <root>/<case>/traces
  // The comm-group file beside traces/ (workload.json over comm_group.json),
  // or "" if there is none.
  std::string comm_group_file;
};

// Every case under `root` that has a traces/ directory, in directory order.
inline std::vector<ReferenceCase> reference_cases(const std::filesystem::path& root) {
  std::vector<ReferenceCase> cases;
  for (const auto& entry : std::filesystem::directory_iterator(root)) {
    ReferenceCase c{entry.path(), entry.path() / "traces", ""};
    if (!std::filesystem::is_directory(c.traces)) continue;
    for (const char* name : {"comm_group.json", "workload.json"})
      if (std::filesystem::exists(c.dir / name)) c.comm_group_file = (c.dir / name).string();
    cases.push_back(std::move(c));
  }
  return cases;
}

}  // namespace stg_test
