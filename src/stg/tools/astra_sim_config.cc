#include "stg/tools/astra_sim_config.h"

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

namespace stg::tools {

namespace {

std::string trimmed(const std::string& s) {
  const size_t a = s.find_first_not_of(" \t\r");
  if (a == std::string::npos) return "";
  const size_t b = s.find_last_not_of(" \t\r");
  std::string out = s.substr(a, b - a + 1);
  if (out.size() >= 2 && (out.front() == '"' || out.front() == '\'') && out.back() == out.front())
    out = out.substr(1, out.size() - 2);
  return out;
}

std::vector<std::string> split_flow_list(const std::string& inside) {
  std::vector<std::string> out;
  std::stringstream in(inside);
  std::string item;
  while (std::getline(in, item, ','))
    if (!trimmed(item).empty()) out.push_back(trimmed(item));
  return out;
}

// The top-level keys of a yml file whose values are lists (flow or block)
// or scalars (a list of one); false with `error` on a malformed list.
bool read_yml_lists(const std::string& path, std::map<std::string, std::vector<std::string>>& out,
                    std::string& error) {
  std::ifstream in(path);
  if (!in) {
    error = path + ": cannot be read";
    return false;
  }
  std::string line, key, flow;
  bool in_flow = false;
  while (std::getline(in, line)) {
    line = line.substr(0, line.find('#'));
    const std::string text = trimmed(line);
    if (text.empty()) continue;
    if (in_flow) {
      flow += " " + text;
    } else if (line[0] == ' ' || line[0] == '\t' || line[0] == '-') {
      if (text[0] == '-' && !key.empty()) out[key].push_back(trimmed(text.substr(1)));
      continue;  // a block-list item, or a nested value the replay does not read
    } else {
      const size_t colon = line.find(':');
      if (colon == std::string::npos) {
        error = path + ": '" + text + "' is not a 'key: value' line";
        return false;
      }
      key = trimmed(line.substr(0, colon));
      flow = trimmed(line.substr(colon + 1));
      out[key];
      if (flow.empty()) continue;
      if (flow[0] != '[') {
        out[key].push_back(flow);
        continue;
      }
    }
    in_flow = flow.find(']') == std::string::npos;
    if (!in_flow) {
      const size_t open = flow.find('[');
      out[key] = split_flow_list(flow.substr(open + 1, flow.find(']') - open - 1));
    }
  }
  if (in_flow) error = path + ": the list of '" + key + "' has no closing ']'";
  return error.empty();
}

bool parse_number(const std::string& text, double& value) {
  char* end = nullptr;
  value = std::strtod(text.c_str(), &end);
  return !text.empty() && end == text.c_str() + text.size() && std::isfinite(value);
}

// One dimension's field `key` from its yml list.
bool dim_values(const std::map<std::string, std::vector<std::string>>& yml, const char* key,
                size_t dims, const std::string& path, std::vector<double>& values,
                std::string& error) {
  const auto it = yml.find(key);
  if (it == yml.end()) {
    error = path + ": no '" + key + "' list";
    return false;
  }
  if (it->second.size() != dims) {
    error = path + ": '" + key + "' has " + std::to_string(it->second.size()) + " entries for " +
            std::to_string(dims) + " dimensions (one per 'topology' entry)";
    return false;
  }
  for (const std::string& v : it->second) {
    double x = 0;
    if (!parse_number(v, x)) {
      error = path + ": '" + key + "' entry '" + v + "' is not a number";
      return false;
    }
    values.push_back(x);
  }
  return true;
}

bool read_network(const std::string& path, std::vector<NetworkDim>& dims, std::string& error) {
  std::map<std::string, std::vector<std::string>> yml;
  if (!read_yml_lists(path, yml, error)) return false;
  const auto topology = yml.find("topology");
  if (topology == yml.end() || topology->second.empty()) {
    error = path + ": no 'topology' list (Ring, Switch or FullyConnected per dimension)";
    return false;
  }
  const size_t n = topology->second.size();
  std::vector<double> npus, bandwidth, latency;
  if (!dim_values(yml, "npus_count", n, path, npus, error) ||
      !dim_values(yml, "bandwidth", n, path, bandwidth, error) ||
      !dim_values(yml, "latency", n, path, latency, error))
    return false;
  for (size_t d = 0; d < n; ++d) {
    const std::string& t = topology->second[d];
    NetworkDim dim;
    if (t == "Ring")
      dim.topology = NetworkTopology::kRing;
    else if (t == "Switch")
      dim.topology = NetworkTopology::kSwitch;
    else if (t == "FullyConnected")
      dim.topology = NetworkTopology::kFullyConnected;
    else
      error = path + ": topology '" + t + "' is not Ring, Switch or FullyConnected";
    if (npus[d] < 2 || npus[d] != std::floor(npus[d]) || npus[d] > 1e9)
      error =
          path + ": npus_count entry " + std::to_string(npus[d]) + " is not a whole number >= 2";
    if (bandwidth[d] <= 0) error = path + ": bandwidth entries must be > 0";
    if (latency[d] < 0) error = path + ": latency entries must be >= 0";
    if (!error.empty()) return false;
    dim.npus = static_cast<int64_t>(npus[d]);
    dim.bandwidth_gbps = bandwidth[d];
    dim.latency_ns = latency[d];
    dims.push_back(dim);
  }
  return true;
}

bool json_number(const nlohmann::json& j, const char* key, double& value) {
  const auto it = j.find(key);
  if (it == j.end()) return false;
  if (!it->is_number()) throw std::runtime_error(std::string("'") + key + "' is not a number");
  value = it->get<double>();
  return true;
}

// The "<collective>-implementation" lists: "ring" entries, at most one per
// network dimension (ASTRA-sim asserts that).
void read_implementations(const nlohmann::json& j, size_t dims, AstraSimSystem& s) {
  static const char* const kKeys[kCollectiveKinds] = {
      "all-reduce-implementation", "all-gather-implementation", "reduce-scatter-implementation",
      "all-to-all-implementation"};
  for (int k = 0; k < kCollectiveKinds; ++k) {
    const auto it = j.find(kKeys[k]);
    if (it == j.end() || !it->is_array() || it->empty())
      throw std::runtime_error(std::string("no '") + kKeys[k] + "' list");
    if (it->size() > dims)
      throw std::runtime_error(std::string("'") + kKeys[k] + "' has more entries than the " +
                               std::to_string(dims) + " network dimensions");
    for (const auto& v : *it)
      if (!v.is_string() || v.get<std::string>() != "ring")
        throw std::runtime_error(std::string("'") + kKeys[k] + "' entry " + v.dump() +
                                 ": the replay models \"ring\" only");
    s.implementations[k] = static_cast<int64_t>(it->size());
  }
  for (const char* key : {"all-reduce-implementation-custom", "all-gather-implementation-custom",
                          "reduce-scatter-implementation-custom",
                          "all-to-all-implementation-custom", "per-node-custom-implementation"})
    if (j.contains(key)) throw std::runtime_error(std::string("'") + key + "' is not modelled");
}

void read_system_fields(const nlohmann::json& j, size_t dims, AstraSimSystem& s) {
  double v = 0;
  if (json_number(j, "endpoint-delay", v)) s.endpoint_delay_ns = static_cast<int64_t>(v);
  if (json_number(j, "active-chunks-per-dimension", v))
    s.active_chunks_per_dim = static_cast<int64_t>(v);
  if (!json_number(j, "preferred-dataset-splits", v) || v < 1)
    throw std::runtime_error("'preferred-dataset-splits' must be a number >= 1");
  s.preferred_dataset_splits = static_cast<int64_t>(v);
  if (s.active_chunks_per_dim < 1)
    throw std::runtime_error("'active-chunks-per-dimension' must be >= 1");
  if (const auto it = j.find("scheduling-policy"); it != j.end()) {
    const std::string p = it->is_string() ? it->get<std::string>() : it->dump();
    if (p != "LIFO" && p != "FIFO" && p != "EXPLICIT")
      throw std::runtime_error("'scheduling-policy' " + p + " is not LIFO, FIFO or EXPLICIT");
  }
  if (const auto it = j.find("collective-optimization"); it != j.end()) {
    const std::string o = it->is_string() ? it->get<std::string>() : it->dump();
    if (o != "baseline" && o != "localBWAware")
      throw std::runtime_error("'collective-optimization' " + o +
                               " is not baseline or "
                               "localBWAware");
    s.local_bw_aware = o == "localBWAware";
  }
  s.has_peak_perf = json_number(j, "peak-perf", s.roofline.peak_tflops);
  s.has_local_mem_bw = json_number(j, "local-mem-bw", s.roofline.mem_bw_gbps);
  if (json_number(j, "roofline-enabled", v)) s.roofline_enabled = v != 0;
  if (json_number(j, "model-shared-bus", v) && v == 1)
    throw std::runtime_error("'model-shared-bus' 1 is not modelled");
  if (json_number(j, "replay-only", v) && v != 0)
    throw std::runtime_error("'replay-only' is not modelled");
  if (!s.has_local_mem_bw || s.roofline.mem_bw_gbps <= 0)
    throw std::runtime_error("'local-mem-bw' must be a number > 0 (a reduction's time uses it)");
  if (s.roofline_enabled && (!s.has_peak_perf || s.roofline.peak_tflops <= 0))
    throw std::runtime_error("'roofline-enabled' needs 'peak-perf' > 0");
  read_implementations(j, dims, s);
}

bool read_system(const std::string& path, size_t dims, AstraSimSystem& s, std::string& error) {
  std::ifstream in(path);
  if (!in) {
    error = path + ": cannot be read";
    return false;
  }
  const nlohmann::json j = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) {
    error = path + ": not a JSON object";
    return false;
  }
  try {
    read_system_fields(j, dims, s);
  } catch (const std::exception& e) {
    error = path + ": " + e.what();
    return false;
  }
  return true;
}

}  // namespace

int64_t AstraSimConfig::npus() const {
  int64_t n = 1;
  for (const NetworkDim& d : dims) n *= d.npus;
  return n;
}

bool read_astra_sim_config(const std::string& network_file, const std::string& system_file,
                           AstraSimConfig& out, std::string& error) {
  out = AstraSimConfig();
  out.network_file = network_file;
  out.system_file = system_file;
  if (!read_network(network_file, out.dims, error)) return false;
  if (out.npus() > (int64_t{1} << 31)) {
    error = network_file + ": more than 2^31 NPUs";
    return false;
  }
  return read_system(system_file, out.dims.size(), out.system, error);
}

bool find_astra_sim_config(const std::string& dir, const std::string& network_file,
                           const std::string& system_file, AstraSimConfig& out, bool& found,
                           std::string& error) {
  namespace fs = std::filesystem;
  const std::string network =
      network_file.empty() ? (fs::path(dir) / kAstraSimNetworkFile).string() : network_file;
  const std::string system =
      system_file.empty() ? (fs::path(dir) / kAstraSimSystemFile).string() : system_file;
  std::error_code ec;
  found = !network_file.empty() || !system_file.empty() || fs::is_regular_file(network, ec);
  if (!found) return true;
  for (const auto& [path, what] : {std::pair{network, "network"}, std::pair{system, "system"}})
    if (!fs::is_regular_file(path, ec)) {
      error = std::string("no ASTRA-sim ") + what + " file " + path +
              " (the replay needs both the network and the system description)";
      return false;
    }
  return read_astra_sim_config(network, system, out, error);
}

}  // namespace stg::tools
