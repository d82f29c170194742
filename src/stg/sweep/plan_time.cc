#include "stg/sweep/plan_time.h"

#include <algorithm>
#include <cmath>

namespace stg::sweep {

namespace {

// ASTRA-sim's analytical backend reads a dimension's GB/s as GiB/s
// (tools/astra_sim_network.h); a Switch dimension is two hops.
double bytes_per_second(double gbps) { return gbps * 1024.0 * 1024.0 * 1024.0; }
constexpr double kSwitchHops = 2;

// Megatron-LM's data-parallel gradient buckets (DistributedDataParallelConfig
// bucket_size: 40 M elements), of fp32 gradients (4 bytes): the last bucket
// is reduced after the backward ends, so no overlap hides it.
constexpr double kBucketBytes = 40e6 * 4;

// A ring phase of one chunk of `data` bytes on `n` members, as the replay
// runs it (tools/astra_sim_network.h): messages each rank sends, their
// size as a share of `data`, and how many of them wait for a reduction.
struct RingPhase {
  double messages, share, reductions;
};

RingPhase ring_phase(int kind, double n) {
  switch (kind) {
    case kAllReduce:  // reduce-scatter then all-gather of data / n pieces
      return {2 * (n - 1), 1 / n, n - 1};
    case kAllGather:  // each rank's data forwarded round the ring
      return {n - 1, 1, 0};
    case kReduceScatter:
      return {n - 1, 1 / n, n - 1};
    default:  // all-to-all
      return {n * (n - 1) / 2, 1 / n, 0};
  }
}

}  // namespace

double compute_seconds(const ComputeFigures& c, double flops) {
  return flops / (c.peak_flops * c.efficiency);
}

double collective_seconds(const NetworkFigures& net, int kind, int64_t members, bool scale_up,
                          double bytes, double collectives) {
  if (members < 2 || collectives <= 0) return 0;
  const RingPhase p = ring_phase(kind, static_cast<double>(members));
  // A collective is cut into `chunks` chunks, `active_chunks` of them on the
  // ring at once (the system file's splits); a congestion-unaware link
  // carries concurrent messages at full bandwidth, so they run in waves.
  const double waves = std::ceil(static_cast<double>(net.chunks) / net.active_chunks);
  const double per_message_ns = kSwitchHops * net.link_latency_ns + net.endpoint_delay_ns;
  const double bandwidth = bytes_per_second(scale_up ? net.scale_up_gbps : net.scale_out_gbps);
  // Bytes of every message of every collective: a chunk is 1/chunks.
  const double message_bytes = bytes / net.chunks * p.share;
  const double latency = collectives * waves * p.messages * per_message_ns * 1e-9;
  const double wire = waves * p.messages * message_bytes / bandwidth;
  // A reduction reads 3 x the message from local memory (local-mem-bw).
  const double reduce = waves * p.reductions * 3 * message_bytes / (net.hbm_gbps * 1e9);
  return latency + wire + reduce;
}

double world_collective_seconds(const NetworkFigures& net, int kind,
                                const std::vector<int64_t>& dims, const std::vector<bool>& scale_up,
                                double bytes, double collectives) {
  const size_t last = dims.size() - 1;
  auto phase = [&](int k, size_t d, double share) {
    return collective_seconds(net, k, dims[d], scale_up[d], bytes * share, collectives);
  };
  double seconds = 0, share = 1;
  switch (kind) {
    case kAllReduce:
      // localBWAware (the system file --astra_sim writes).
      for (size_t d = 0; d < last; ++d) {
        seconds += phase(kReduceScatter, d, share);
        share /= static_cast<double>(dims[d]);
      }
      seconds += phase(kAllReduce, last, share);
      for (size_t d = last; d-- > 0;) {
        seconds += phase(kAllGather, d, share);
        share *= static_cast<double>(dims[d]);
      }
      return seconds;
    case kAllGather:  // from the last dimension down, each rank's piece growing
      for (size_t d = last + 1; d-- > 0;) {
        seconds += phase(kAllGather, d, share);
        share *= static_cast<double>(dims[d]);
      }
      return seconds;
    case kReduceScatter:
      for (size_t d = 0; d <= last; ++d) {
        seconds += phase(kReduceScatter, d, share);
        share /= static_cast<double>(dims[d]);
      }
      return seconds;
    default:
      for (size_t d = 0; d <= last; ++d) seconds += phase(kind, d, 1);
      return seconds;
  }
}

double send_seconds(const NetworkFigures& net, bool scale_up, double bytes, double sends) {
  if (sends <= 0) return 0;
  const double bandwidth = bytes_per_second(scale_up ? net.scale_up_gbps : net.scale_out_gbps);
  return sends * kSwitchHops * net.link_latency_ns * 1e-9 + bytes / bandwidth;
}

namespace {

// One stage's time before the bubble: compute, exposed traffic, and the
// data-parallel traffic left after the overlap.
StepTime stage_time(const StageLoad& s, const PlanShape& shape, const ComputeFigures& c,
                    const NetworkFigures& net) {
  StepTime t;
  t.compute = compute_seconds(c, s.flops);
  double overlapped = 0, overlapped_bytes = 0;
  for (const AxisLoad& a : s.axes) {
    double seconds = send_seconds(net, a.scale_up, a.sent_bytes, a.sends);
    for (int k = 0; k < kCollectiveKinds; ++k)
      seconds +=
          a.world_dims.empty()
              ? collective_seconds(net, k, a.members, a.scale_up, a.bytes[k], a.collectives[k])
              : world_collective_seconds(net, k, a.world_dims, a.world_scale_up, a.bytes[k],
                                         a.collectives[k]);
    if (a.overlaps_backward) {
      overlapped += seconds;
      for (double b : a.bytes) overlapped_bytes += b;
    } else {
      t.exposed += seconds;
    }
  }
  if (overlapped > 0) {
    // Megatron-LM reduces each gradient bucket as the last micro-batch's
    // backward produces it (Narayanan et al., SC'21, §4; DESIGN.md §10):
    // the backward is 2/3 of a micro-batch's compute (backward = 2 x
    // forward). What it does not hide, and at least the last bucket, is
    // exposed.
    const double window = t.compute / static_cast<double>(shape.micro_batches) * 2.0 / 3.0;
    const double last_bucket = overlapped * std::min(1.0, kBucketBytes / overlapped_bytes);
    t.overlapped_tail = std::max(overlapped - window, last_bucket);
  }
  return t;
}

}  // namespace

StepTime step_time(const std::vector<StageLoad>& stages, const PlanShape& shape,
                   const ComputeFigures& c, const NetworkFigures& net) {
  // The pipeline runs at its slowest stage's pace (Narayanan et al., SC'21,
  // §2.2): 1F1B idles (p - 1) of those slots per m micro-batches, the
  // interleaved schedule (p - 1) / v (DESIGN.md §10).
  StepTime worst;
  for (const StageLoad& s : stages) {
    StepTime t = stage_time(s, shape, c, net);
    const double busy = t.compute + t.exposed;
    t.bubble = busy * static_cast<double>(shape.stages - 1) /
               static_cast<double>(shape.virtual_stages * shape.micro_batches);
    t.total = busy + t.bubble + t.overlapped_tail;
    if (t.total > worst.total) worst = t;
  }
  return worst;
}

}  // namespace stg::sweep
