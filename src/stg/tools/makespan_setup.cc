#include "stg/tools/makespan_setup.h"

#include <memory>

#include "stg/tools/astra_sim_config.h"

namespace stg::tools {

bool makespan_options_for(const std::string& dir, const hardware::RooflineFigures& roofline,
                          const MakespanFigures& f, bool timeline, MakespanOptions& out,
                          std::string& error) {
  out = MakespanOptions();
  out.roofline = roofline;
  out.link_gbps = f.link_gbps;
  out.timeline = timeline;
  const bool named = !f.network_file.empty() || !f.system_file.empty();
  if (f.link_gbps_given && named) {
    error = std::string(f.network_file.empty() ? "--system" : "--network") +
            " charges messages on ASTRA-sim's network, --link_gbps at one bandwidth: drop one";
    return false;
  }
  if (f.link_gbps_given || (!named && !f.look_in_dir)) return true;
  auto config = std::make_shared<AstraSimConfig>();
  bool found = false;
  if (!find_astra_sim_config(dir, f.network_file, f.system_file, *config, found, error)) {
    // Name the flag that gave the file at fault.
    if (!f.network_file.empty() && error.find(f.network_file) != std::string::npos)
      error = "--network: " + error;
    else if (!f.system_file.empty() && error.find(f.system_file) != std::string::npos)
      error = "--system: " + error;
    return false;
  }
  if (!found) return true;
  if (config->system.has_peak_perf && !f.peak_tflops_given)
    out.roofline.peak_tflops = config->system.roofline.peak_tflops;
  if (!f.mem_bw_gbps_given) out.roofline.mem_bw_gbps = config->system.roofline.mem_bw_gbps;
  out.network = std::move(config);
  return true;
}

}  // namespace stg::tools
