#include "stg/emit/astra_sim_inputs.h"

#include <algorithm>
#include <cstdio>

#include "stg/options.h"

namespace stg::emit {

namespace {

bool is_prime(int64_t n) {
  if (n < 2) return false;
  for (int64_t d = 2; d <= n / d; ++d)
    if (n % d == 0) return false;
  return true;
}

// "[ 2, 4 ]".
std::string yaml_list(const std::vector<std::string>& values) {
  std::string out = "[ ";
  for (size_t i = 0; i < values.size(); ++i) out += (i ? ", " : "") + values[i];
  return out + " ]";
}

std::string fixed(double value, int decimals) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", decimals, value);
  return buffer;
}

std::string json_list(const std::string& word, size_t count) {
  std::string out = "[";
  for (size_t i = 0; i < count; ++i) out += (i ? ", \"" : "\"") + word + "\"";
  return out + "]";
}

std::string number(double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%g", value);
  return buffer;
}

// A word for the shell, in single quotes ("it's" -> 'it'\''s').
std::string shell_quoted(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string dims_text(const std::vector<int64_t>& dims) {
  std::string out;
  for (size_t i = 0; i < dims.size(); ++i) out += (i ? ", " : "") + std::to_string(dims[i]);
  return "[" + out + "]";
}

}  // namespace

AstraSimMachine machine_of(const Options& o) {
  AstraSimMachine m;
  m.roofline = o.compute_time == Options::ComputeTime::kRoofline;
  if (!o.gpu) return m;
  const hardware::Gpu& g = *o.gpu;
  const bool fp8 = o.dtype == DType::kFp8;
  if (fp8 && g.fp8_tflops <= 0)
    throw UsageError(std::string("--gpu ") + g.name +
                     " has no FP8 tensor cores: use --dtype bf16 (or fp16, fp32)");
  m.peak_tflops = fp8 ? g.fp8_tflops : g.bf16_tflops;
  m.hbm_gbps = g.hbm_gbps;
  m.intra_node_gbps = g.scale_up_gbps;
  m.inter_node_gbps = g.scale_out_gbps;
  m.gpus_per_node = g.scale_up_gpus;
  return m;
}

std::vector<int64_t> parse_network_dims(std::string_view text, int64_t ranks) {
  const std::string shown = "--network_dims '" + std::string(text) + "'";
  std::vector<int64_t> dims;
  int64_t product = 1;
  bool overflow = false;
  size_t start = 0;
  for (;;) {
    const size_t comma = text.find(',', start);
    const std::string_view part = text.substr(
        start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    int64_t value = 0;
    bool whole = !part.empty() && part.size() <= 18;
    for (char c : part) {
      whole = whole && c >= '0' && c <= '9';
      if (whole) value = value * 10 + (c - '0');
    }
    if (!whole || value < 2)
      throw UsageError(shown +
                       " is not a list of dimensions: use whole numbers >= 2 separated by "
                       "commas, e.g. 2,4 (ASTRA-sim refuses a dimension of 1)");
    dims.push_back(value);
    overflow = overflow || __builtin_mul_overflow(product, value, &product);
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  if (overflow || product != ranks)
    throw UsageError(shown + " has " + (overflow ? "more than 2^63" : std::to_string(product)) +
                     " NPUs but the run has " + std::to_string(ranks) +
                     " ranks: give dimensions whose product is " + std::to_string(ranks));
  if (dims.size() == 1 && !is_prime(ranks))
    throw UsageError(
        shown + " is one dimension: give at least two (e.g. " +
        dims_text(default_network_shape({{ranks, 0}}, AstraSimMachine{}.gpus_per_node).dims) +
        "); with one, ASTRA-sim can crash at exit when two sub-groups run the same "
        "collective");
  return dims;
}

namespace {

// network.yml: one Switch dimension per entry of dims, with its NPUs, GB/s and latency.
std::string network_yml(const NetworkShape& shape, const AstraSimMachine& machine, int64_t ranks) {
  const std::vector<int64_t>& dims = shape.dims;
  std::vector<std::string> npus, bandwidth;
  for (int64_t d : dims) npus.push_back(std::to_string(d));
  for (bool inside : shape.in_node)
    bandwidth.push_back(fixed(inside ? machine.intra_node_gbps : machine.inter_node_gbps, 1));
  const std::vector<std::string> topology(dims.size(), "Switch");
  const std::vector<std::string> latency(dims.size(), fixed(machine.latency_ns, 2));
  return "# ASTRA-sim network (analytical backend), written by stg --astra_sim: " +
         std::to_string(ranks) + " NPUs = " + dims_text(dims) +
         ", one dimension per parallel axis in rank order (the fastest-varying first);\n"
         "# GB/s within a node of " +
         std::to_string(machine.gpus_per_node) +
         " GPUs (filled with tp, cp, ep, dp, then pp groups, as Megatron-LM places ranks) and "
         "across nodes, latency in ns.\n"
         "topology: " +
         yaml_list(topology) + "\n" + "npus_count: " + yaml_list(npus) + "\n" +
         "bandwidth: " + yaml_list(bandwidth) + "\n" + "latency: " + yaml_list(latency) + "\n";
}

// system.json: the collective implementations and the roofline of one NPU.
std::string system_json(const std::vector<int64_t>& dims, const AstraSimMachine& machine) {
  // One implementation per dimension and collective (README "ASTRA-sim
  // inputs": with one for several dimensions ASTRA-sim shares it between
  // sub-groups and frees it twice at exit).
  const std::string rings = json_list("ring", dims.size());
  return "{\n"
         "  \"scheduling-policy\": \"LIFO\",\n"
         "  \"endpoint-delay\": " +
         std::to_string(machine.endpoint_delay_ns) + ",\n" +
         "  \"active-chunks-per-dimension\": " + std::to_string(machine.active_chunks) + ",\n" +
         "  \"preferred-dataset-splits\": " + std::to_string(machine.dataset_splits) +
         ",\n"
         "  \"all-reduce-implementation\": " +
         rings + ",\n" + "  \"all-gather-implementation\": " + rings + ",\n" +
         "  \"reduce-scatter-implementation\": " + rings + ",\n" +
         "  \"all-to-all-implementation\": " + rings + ",\n" +
         "  \"collective-optimization\": \"localBWAware\",\n"
         "  \"local-mem-bw\": " +
         number(machine.hbm_gbps) + ",\n" +
         "  \"roofline-enabled\": " + (machine.roofline ? "1" : "0") + ",\n" +
         "  \"peak-perf\": " + number(machine.peak_tflops) + "\n" + "}\n";
}

// run.sh: runs ASTRA-sim on the traces and fails unless every rank finished.
std::string run_sh(const std::vector<int64_t>& dims, const std::string& trace_prefix,
                   const std::string& comm_group_name, int64_t ranks) {
  const std::string n = std::to_string(ranks);
  return "#!/usr/bin/env bash\n"
         "# Runs ASTRA-sim's analytical backend on the " +
         n +
         " traces of this directory\n"
         "# (written by stg --astra_sim; network " +
         dims_text(dims) +
         ").\n"
         "#   usage: ./run.sh [ASTRA-sim binary]   (default: "
         "AstraSim_Analytical_Congestion_Unaware on PATH;\n"
         "#   a path is taken from where run.sh is called)\n"
         "# Its output goes to log/ here (emptied first). ASTRA-sim exits with 0 even when\n"
         "# ranks never finish (a deadlock): this script counts the \"sys[R] finished\" lines\n"
         "# and exits with 1 unless all " +
         n +
         " ranks finished and no line is [critical].\n"
         "set -uo pipefail\n"
         "here=\"$(cd \"$(dirname \"${BASH_SOURCE[0]}\")\" && pwd)\"\n"
         "astra_sim=\"${1:-AstraSim_Analytical_Congestion_Unaware}\"\n"
         "if [[ \"$astra_sim\" == */* ]]; then\n"
         "  astra_sim=\"$(cd \"$(dirname \"$astra_sim\")\" 2>/dev/null && pwd)/$(basename "
         "\"$astra_sim\")\"\n"
         "fi\n"
         "if ! command -v \"$astra_sim\" >/dev/null; then\n"
         "  echo \"run.sh: no ASTRA-sim binary ${1:-AstraSim_Analytical_Congestion_Unaware}: give "
         "its "
         "path, e.g. ./run.sh PATH/TO/AstraSim_Analytical_Congestion_Unaware\" >&2\n"
         "  exit 2\n"
         "fi\n"
         "case \"$here\" in\n"
         "  *empty*)\n"
         "    echo \"run.sh: ASTRA-sim ignores a comm-group file whose path contains 'empty': move "
         "$here\" >&2\n"
         "    exit 2 ;;\n"
         "esac\n"
         "log=\"$here/log\"\n"
         "rm -rf \"$log\" && mkdir -p \"$log\" && cd \"$log\" || exit 2\n"
         "\"$astra_sim\" \\\n"
         "  --workload-configuration=\"$here\"/" +
         shell_quoted(trace_prefix) + " \\\n" + "  --comm-group-configuration=\"$here\"/" +
         shell_quoted(comm_group_name) + " \\\n" + "  --system-configuration=\"$here\"/" +
         kSystemFile + " \\\n" + "  --remote-memory-configuration=\"$here\"/" + kMemoryFile +
         " \\\n" + "  --network-configuration=\"$here\"/" + kNetworkFile + " \\\n" +
         "  --logging-folder=\"$log\" 2>&1 | tee \"$log/stdout.txt\"\n"
         "status=${PIPESTATUS[0]}\n"
         "finished=$(grep -c 'sys\\[[0-9]*\\] finished' \"$log/stdout.txt\")\n"
         "critical=$(grep -c '\\[critical\\]' \"$log/stdout.txt\")\n"
         "echo \"run.sh: $finished of " +
         n +
         " ranks finished, $critical [critical] lines, ASTRA-sim exit status $status\"\n"
         "[[ $status -eq 0 && $finished -eq " +
         n + " && $critical -eq 0 ]]\n";
}

}  // namespace

AstraSimFiles astra_sim_files(const NetworkShape& shape, const AstraSimMachine& machine,
                              const std::string& trace_prefix, const std::string& comm_group_name,
                              int64_t ranks) {
  const std::vector<int64_t>& dims = shape.dims;
  AstraSimFiles f;
  f.network_yml = network_yml(shape, machine, ranks);
  f.system_json = system_json(dims, machine);
  f.memory_json = "{\n  \"memory-type\": \"NO_MEMORY_EXPANSION\"\n}\n";
  f.run_sh = run_sh(dims, trace_prefix, comm_group_name, ranks);
  return f;
}

}  // namespace stg::emit
