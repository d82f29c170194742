#include "timed_run.h"

#include <filesystem>
#include <string>
#include <string_view>
#include <utility>

#include "stg/emit/astra_sim_inputs.h"
#include "stg/tools/makespan_setup.h"
#include "time_summary.h"

namespace cli {

stg::tools::MakespanOptions makespan_defaults(const stg::Options& o) {
  stg::tools::MakespanOptions m;
  m.durations = o.compute_time == stg::Options::ComputeTime::kModel;
  if (!o.gpu) return m;
  const stg::emit::AstraSimMachine machine = stg::emit::machine_of(o);
  m.roofline = {machine.peak_tflops, machine.hbm_gbps};
  return m;
}

std::optional<stg::tools::MakespanOptions> makespan_options(const GenerateFlags& f) {
  const std::pair<const char*, double> figures[] = {{"--peak_tflops", f.peak_tflops},
                                                    {"--mem_bw_gbps", f.mem_bw_gbps},
                                                    {"--link_gbps", f.link_gbps}};
  if (!f.print_makespan) {
    for (const auto& [flag, value] : figures)
      if (value > 0)
        throw stg::UsageError(std::string(flag) +
                              " applies to --print_makespan only: add --print_makespan");
    return std::nullopt;
  }
  const stg::Options& o = f.options;
  if (o.compute_time == stg::Options::ComputeTime::kModel)
    for (const auto& [flag, value] : figures)
      if (value > 0 && std::string_view(flag) != "--link_gbps")
        throw stg::UsageError(std::string(flag) +
                              " sets the roofline, which --compute_time model replaces with each "
                              "node's duration: drop " +
                              flag);
  if (o.shard_count > 1)
    throw stg::UsageError(
        "--shard writes part of the run, which --print_makespan cannot replay: drop one of them "
        "(--ranks with the first rank of each stage can)");
  stg::tools::MakespanOptions m = makespan_defaults(o);
  if (f.peak_tflops > 0) m.roofline.peak_tflops = f.peak_tflops;
  if (f.mem_bw_gbps > 0) m.roofline.mem_bw_gbps = f.mem_bw_gbps;
  if (f.link_gbps > 0) m.link_gbps = f.link_gbps;
  return m;
}

stg::tools::MakespanResult stage_makespan(const GenerateFlags& f, const stg::RunSummary& s,
                                          stg::tools::MakespanOptions m) {
  const std::filesystem::path dir = f.options.output_dir;
  if (f.options.astra_sim) {
    stg::tools::MakespanFigures figures;
    figures.peak_tflops_given = f.peak_tflops > 0;
    figures.mem_bw_gbps_given = f.mem_bw_gbps > 0;
    figures.link_gbps = m.link_gbps;
    figures.link_gbps_given = f.link_gbps > 0;
    stg::tools::MakespanResult out;
    const bool durations = m.durations;  // kept with --link_gbps (no system file read)
    if (!stg::tools::makespan_options_for(dir.string(), m.roofline, figures, false, m, out.error))
      return out;
    m.durations = durations;
  }
  return stg::tools::makespan_by_stage(dir.string(), (dir / s.comm_group_path).string(), s.stages,
                                       m, f.options.threads);
}

void add_makespan_json(nlohmann::ordered_json& j, const stg::RunSummary& s,
                       const stg::tools::MakespanResult& makespan) {
  if (!makespan.completed) {
    j["makespan_error"] = makespan.error;
    return;
  }
  j["makespan_ns"] = makespan.makespan_ns;
  j["time_breakdown"] = time_breakdown_json(s, makespan);
}

}  // namespace cli
