#include "stg/tools/chrome_trace.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <tuple>

namespace stg::tools {
namespace {

using json = nlohmann::ordered_json;

int thread_of(TimelineTrack t) { return t == TimelineTrack::kCompute ? 0 : 1; }

// Metadata events naming a rank's process and its two tracks.
void add_names(json& events, int64_t rank) {
  events.push_back(json{{"name", "process_name"},
                        {"ph", "M"},
                        {"pid", rank},
                        {"args", json{{"name", "rank " + std::to_string(rank)}}}});
  for (TimelineTrack t : {TimelineTrack::kCompute, TimelineTrack::kCommunication})
    events.push_back(
        json{{"name", "thread_name"},
             {"ph", "M"},
             {"pid", rank},
             {"tid", thread_of(t)},
             {"args", json{{"name", t == TimelineTrack::kCompute ? "compute" : "communication"}}}});
}

}  // namespace

std::string chrome_trace_json(std::vector<TimelineEvent> events) {
  std::sort(events.begin(), events.end(), [](const TimelineEvent& a, const TimelineEvent& b) {
    return std::tie(a.rank, a.start_ns, a.node_id) < std::tie(b.rank, b.start_ns, b.node_id);
  });
  json out_events = json::array();
  int64_t named_rank = -1;
  for (const TimelineEvent& e : events) {
    if (e.rank != named_rank) add_names(out_events, named_rank = e.rank);
    // Trace-event times are microseconds; fractions keep nanoseconds.
    out_events.push_back(json{{"name", e.name},
                              {"cat", e.track == TimelineTrack::kCompute ? "compute" : "comm"},
                              {"ph", "X"},
                              {"pid", e.rank},
                              {"tid", thread_of(e.track)},
                              {"ts", e.start_ns / 1000.0},
                              {"dur", (e.end_ns - e.start_ns) / 1000.0},
                              {"args", json{{"id", e.node_id}}}});
  }
  json out{{"traceEvents", std::move(out_events)}, {"displayTimeUnit", "ns"}};
  return out.dump() + "\n";
}

}  // namespace stg::tools
