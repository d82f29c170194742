// Where a timed replay's figures come from (`stg validate --replay`,
// --print_makespan): the flags, and ASTRA-sim's network and system files
// when the trace directory has them (as --astra_sim writes them) or the
// caller names them. With a network description the replay charges
// messages on it (network_makespan.h) and takes the system file's
// "peak-perf" and "local-mem-bw" for the roofline, unless --peak_tflops or
// --mem_bw_gbps is given; --link_gbps asks for the simple model
// (comm_size / link_gbps) instead, and cannot go with a named network.
#pragma once

#include <string>

#include "stg/hardware/roofline.h"
#include "stg/tools/makespan.h"

namespace stg::tools {

struct MakespanFigures {
  bool peak_tflops_given = false, mem_bw_gbps_given = false;
  double link_gbps = 100;
  bool link_gbps_given = false;
  // ASTRA-sim's files (--network, --system); "": DIR/network.yml and
  // DIR/system.json when DIR has a network.yml.
  std::string network_file, system_file;
  bool look_in_dir = true;  // false: only named files are read
};

// The options for a run over `dir` with the `roofline` asked for; false
// with a one-line `error` (a file that cannot be read, --link_gbps with
// --network or --system).
bool makespan_options_for(const std::string& dir, const hardware::RooflineFigures& roofline,
                          const MakespanFigures& figures, bool timeline, MakespanOptions& out,
                          std::string& error);

}  // namespace stg::tools
