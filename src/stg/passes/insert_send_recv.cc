#include "stg/passes/insert_send_recv.h"

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
    std::map<int, int> recv_of;  // remote producer -> its RECV on this stage
    for (int t : members[s]) {
      auto receive = [&](int in) {
        if (in < 0 || g[in].stage == s) return in;
        auto [it, fresh] = recv_of.emplace(in, -1);
        if (fresh) {
          const std::string id = g[in].id();
          Tensor recv = carrier(g, in, Op::kRecv, s);
          const std::string shadow = "shadow_";
          recv.name = shadow + g[in].name + ".recv" + std::to_string(s);
          recv.number_at = graph::number_after(g[in].number_at, shadow.size());
          recv.revision = g[in].revision;
          recv.comm.peer = mesh::Peer::on_stage(g[in].stage);
          recv.comm.tag = tag;
          recv.comm.label = shadow + id + "_Y_RECV";
          recv.comm.label_number_at = recv.number_at;
          it->second = ins.before(t, std::move(recv));
          Tensor send = carrier(g, in, Op::kSend, g[in].stage);
          send.name = g[in].name + ".send" + std::to_string(s);
          send.number_at = g[in].number_at;
          send.revision = g[in].revision;
          send.comm.peer = mesh::Peer::on_stage(s);
          send.comm.tag = tag;
          send.comm.label = id + "_Y_SEND";
          send.comm.label_number_at = send.number_at;
          ins.after(in, std::move(send));
          ++tag;
        }
        return it->second;
      };
      // In this order: the tags follow first use (x1, x2, extra deps).
      const int x1 = receive(g[t].x1), x2 = receive(g[t].x2);
      std::vector<int> extra;
      for (int d : g[t].extra_deps) extra.push_back(receive(d));
      if (x1 != g[t].x1) g.set_input(t, 1, x1);
      if (x2 != g[t].x2) g.set_input(t, 2, x2);
      for (size_t k = 0; k < extra.size(); ++k)
        if (extra[k] != g[t].extra_deps[k]) g.set_extra_dep(t, k, extra[k]);
    }
  }
  ins.apply();
}

}  // namespace stg::passes
