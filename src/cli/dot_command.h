// `stg dot`: one rank's trace as a Graphviz graph on standard output.
#pragma once

#include <string>
#include <vector>

namespace cli {

// `stg dot` with the arguments after the word "dot":
//   DIR [--rank R] [--max_nodes N]
// Returns 0, or 2 on unreadable input or a usage error.
int dot_main(const std::vector<std::string>& args);

}  // namespace cli
