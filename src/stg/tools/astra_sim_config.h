// ASTRA-sim's network and system descriptions (the network yml and system
// json of its analytical backend, as `stg --astra_sim DIR` writes them into
// DIR), read for the timed replay (makespan.h) so that it charges messages
// as ASTRA-sim's congestion-unaware backend does (network_makespan.h).
//
// Network yml: `topology` (Ring, Switch or FullyConnected), `npus_count`,
// `bandwidth` (GB/s) and `latency` (ns), one entry per dimension, as flow
// lists ([ a, b ]) or block lists (- a); other keys are ignored, as ASTRA-sim
// does. System json: the fields that move finish times (scheduling-policy,
// endpoint-delay, active-chunks-per-dimension, preferred-dataset-splits, the
// four <collective>-implementation lists, collective-optimization,
// local-mem-bw, peak-perf, roofline-enabled); features the replay does not
// model (other collective algorithms than "ring", custom implementations,
// the shared bus, replay-only) are refused with an error.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "stg/hardware/roofline.h"

namespace stg::tools {

// The file names `--astra_sim` writes (emit/astra_sim_inputs.h).
inline constexpr const char* kAstraSimNetworkFile = "network.yml";
inline constexpr const char* kAstraSimSystemFile = "system.json";

enum class NetworkTopology : uint8_t { kRing, kSwitch, kFullyConnected };

struct NetworkDim {
  NetworkTopology topology = NetworkTopology::kSwitch;
  int64_t npus = 0;
  double bandwidth_gbps = 0;
  double latency_ns = 0;
};

// The collectives ASTRA-sim runs, in the order of AstraSimSystem's lists.
enum class CollectiveKind : uint8_t { kAllReduce, kAllGather, kReduceScatter, kAllToAll };
inline constexpr int kCollectiveKinds = 4;

struct AstraSimSystem {
  int64_t endpoint_delay_ns = 10;        // "endpoint-delay"
  int64_t active_chunks_per_dim = 1;     // "active-chunks-per-dimension"
  int64_t preferred_dataset_splits = 0;  // "preferred-dataset-splits" (required)
  bool local_bw_aware = false;           // "collective-optimization": "localBWAware"
  // "<collective>-implementation": how many entries (all "ring"), per kind.
  std::array<int64_t, kCollectiveKinds> implementations{};
  bool roofline_enabled = false;       // "roofline-enabled"
  hardware::RooflineFigures roofline;  // "peak-perf", "local-mem-bw"
  bool has_peak_perf = false, has_local_mem_bw = false;
};

struct AstraSimConfig {
  std::vector<NetworkDim> dims;
  AstraSimSystem system;
  std::string network_file, system_file;  // where they were read from

  int64_t npus() const;
};

// Reads the two files; false with a one-line `error` that names the file.
bool read_astra_sim_config(const std::string& network_file, const std::string& system_file,
                           AstraSimConfig& out, std::string& error);

// The network and system files of a trace directory: `network_file` and
// `system_file` when given, else DIR/network.yml and DIR/system.json when
// DIR has a network.yml. `found` is false (and nothing is read) when neither
// is given and DIR has no network.yml; a network without a system file (or
// the reverse) is an error.
bool find_astra_sim_config(const std::string& dir, const std::string& network_file,
                           const std::string& system_file, AstraSimConfig& out, bool& found,
                           std::string& error);

}  // namespace stg::tools
