// The files ASTRA-sim's analytical backend needs besides the traces and the
// comm-group file (--astra_sim): a network yml whose dimensions multiply to
// the rank count, a system json, a remote-memory json, and run.sh with the
// command line for the directory (README "ASTRA-sim inputs" has the formats
// and the defaults).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "stg/emit/network_shape.h"

namespace stg {
struct Options;
}

namespace stg::emit {

// The machine the files describe: an H100-like GPU (dense bf16 peak, HBM3
// bandwidth, NVLink within a node of 8 GPUs, a 400 Gb/s NIC between nodes).
struct AstraSimMachine {
  double peak_tflops = 989;      // system json "peak-perf"
  double hbm_gbps = 3350;        // system json "local-mem-bw"
  double intra_node_gbps = 400;  // network dimensions within a node
  double inter_node_gbps = 50;   // network dimensions across nodes
  double latency_ns = 936.25;    // every dimension (ASTRA-sim's examples)
  // system json: "endpoint-delay" (ns), "preferred-dataset-splits" and
  // "active-chunks-per-dimension" (stg plans charges collectives by them).
  int64_t endpoint_delay_ns = 10;
  int64_t dataset_splits = 4;
  int64_t active_chunks = 2;
  int64_t gpus_per_node = 8;
  // "roofline-enabled": off under --compute_time model, when ASTRA-sim
  // replays each compute node's duration_micros instead.
  bool roofline = true;
};

// The machine of --gpu (hardware/gpus.h): its dense peak for the trace's
// element type (fp8 under --dtype fp8), HBM bandwidth, scale-up domain and
// bandwidth, scale-out bandwidth; without --gpu, AstraSimMachine's defaults.
AstraSimMachine machine_of(const Options& o);

// --network_dims "2,4": whole numbers >= 2, separated by commas, whose
// product is `ranks`, at least two unless `ranks` is prime. Throws
// UsageError naming the flag and the fix.
std::vector<int64_t> parse_network_dims(std::string_view text, int64_t ranks);

struct AstraSimFiles {
  std::string network_yml, system_json, memory_json, run_sh;
};

// The file names inside the output directory.
inline constexpr const char* kNetworkFile = "network.yml";
inline constexpr const char* kSystemFile = "system.json";
inline constexpr const char* kMemoryFile = "memory.json";
inline constexpr const char* kRunScript = "run.sh";

// `trace_prefix` is ASTRA-sim's --workload-configuration relative to the
// output directory (rank r's file is PREFIX.r.et), `comm_group_name` the
// comm-group file's name there.
AstraSimFiles astra_sim_files(const NetworkShape& shape, const AstraSimMachine& machine,
                              const std::string& trace_prefix, const std::string& comm_group_name,
                              int64_t ranks);

}  // namespace stg::emit
