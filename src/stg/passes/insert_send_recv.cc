#include "stg/passes/insert_send_recv.h"

#include <algorithm>
#include <map>
#include <utility>

#include "stg/passes/insertion.h"

namespace stg::passes {

using graph::Op;
using graph::Tensor;

namespace {

// A comm op carrying `producer` unchanged (its output view is the producer's).
Tensor carrier(const graph::Graph& g, int producer, Op op, int stage) {
  const Tensor& p = g[producer];
  const graph::OpResult& r = g.result(producer);
  Tensor t;
  t.op = op;
  t.x1 = producer;
  t.x1_shape = r.y_shape;
  t.x1_hidden = r.y_hidden;
  t.stage = stage;
  t.chunk = p.chunk;
  t.micro_batch = p.micro_batch;
  t.phase = p.phase;
  t.phase_step = p.phase_step;
  t.placement = p.placement;
  return t;
}

}  // namespace

void insert_send_recv(graph::Graph& g) {
  const int n = static_cast<int>(g.size());
  int pp = 1;
  for (int i = 0; i < n; ++i) pp = std::max(pp, g[i].stage + 1);
  const std::vector<std::vector<int>> members = graph::tensors_by_stage(g, pp);

  Insertions ins(g);
  int tag = 0;
  for (int s = 0; s < pp; ++s) {
    // (remote producer, read by a decode step from another step) -> its
    // RECV on this stage. A decode step that reads a value of an earlier
    // step or phase (the token sampled before it) receives it in every
    // step: the SEND and RECV are the step's and are named after the reader
    // (in a decode-step template, Tensor::succeeds says what later steps
    // send).
    std::map<std::pair<int, bool>, int> recv_of;
    for (int t : members[s]) {
      auto receive = [&](int in, int operand) {
        if (in < 0 || g[in].stage == s) return in;
        const bool for_step =
            g[t].phase == graph::Phase::kDecode &&
            (g[in].phase != graph::Phase::kDecode || g[in].phase_step != g[t].phase_step);
        auto [it, fresh] = recv_of.emplace(std::make_pair(in, for_step), -1);
        if (!fresh) return it->second;
        // The tensor the link is named after, and how.
        const Tensor& named = for_step ? g[t] : g[in];
        const std::string base =
            for_step ? named.name + ".in" + std::to_string(operand) : named.name;
        const std::string id = for_step ? named.id() + "_IN" + std::to_string(operand) : named.id();
        Tensor recv = carrier(g, in, Op::kRecv, s);
        const std::string shadow = "shadow_";
        recv.name = shadow + base + ".recv" + std::to_string(s);
        recv.number_at = graph::number_after(named.number_at, shadow.size());
        recv.step_at = graph::number_after(named.step_at, shadow.size());
        recv.revision = named.revision;
        recv.comm.peer = mesh::Peer::on_stage(g[in].stage);
        recv.comm.tag = tag;
        recv.comm.label = shadow + id + "_Y_RECV";
        recv.comm.label_number_at = recv.number_at;
        recv.comm.label_step_at = recv.step_at;
        Tensor send = carrier(g, in, Op::kSend, g[in].stage);
        send.name = base + ".send" + std::to_string(s);
        send.number_at = named.number_at;
        send.step_at = named.step_at;
        send.revision = named.revision;
        send.comm.peer = mesh::Peer::on_stage(s);
        send.comm.tag = tag;
        send.comm.label = id + "_Y_SEND";
        send.comm.label_number_at = send.number_at;
        send.comm.label_step_at = send.step_at;
        if (for_step)
          for (Tensor* link : {&recv, &send}) {
            link->phase = graph::Phase::kDecode;
            link->phase_step = g[t].phase_step;
          }
        it->second = ins.before(t, std::move(recv));
        ins.after(in, std::move(send));
        ++tag;
        return it->second;
      };
      // In this order: the tags follow first use (x1, x2, extra deps).
      const int x1 = receive(g[t].x1, 1), x2 = receive(g[t].x2, 2);
      std::vector<int> extra;
      for (size_t k = 0; k < g[t].extra_deps.size(); ++k)
        extra.push_back(receive(g[t].extra_deps[k], 3 + static_cast<int>(k)));
      if (x1 != g[t].x1) g.set_input(t, 1, x1);
      if (x2 != g[t].x2) g.set_input(t, 2, x2);
      for (size_t k = 0; k < extra.size(); ++k)
        if (extra[k] != g[t].extra_deps[k]) g.set_extra_dep(t, k, extra[k]);
    }
  }
  ins.apply();
}

}  // namespace stg::passes
