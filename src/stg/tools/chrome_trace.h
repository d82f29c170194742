// The replayed order of a directory of traces as Chrome trace-event JSON
// (`stg validate --replay --timeline FILE`): the format the PyTorch
// profiler and Chakra's timeline tool write, opened by Perfetto
// (ui.perfetto.dev) and chrome://tracing. One process per rank, compute and
// communication on separate threads (tracks), one complete ("X") event per
// node with its start and duration in microseconds.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace stg::tools {

enum class TimelineTrack : uint8_t { kCompute, kCommunication };

struct TimelineEvent {
  int64_t rank = 0;
  uint64_t node_id = 0;
  std::string name;
  TimelineTrack track = TimelineTrack::kCompute;
  double start_ns = 0;
  double end_ns = 0;
};

// The JSON text of `events` (any order; written by rank, then start time).
std::string chrome_trace_json(std::vector<TimelineEvent> events);

}  // namespace stg::tools
