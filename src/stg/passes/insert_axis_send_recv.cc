#include "stg/passes/insert_axis_send_recv.h"

#include <map>
#include <utility>

#include "stg/passes/insertion.h"

namespace stg::passes {

namespace {

int axis_of(const mesh::Mesh& mesh, const graph::Tensor& t) {
  for (int a = 0; a < mesh.size(); ++a)
    if (mesh.axis(a).symbol == t.shift_symbol) return a;
  throw graph::GraphError(t.id() + " is shifted along '" + t.shift_symbol +
                          "', which is no axis of the mesh");
}

}  // namespace

void insert_axis_send_recv(graph::Graph& g, const mesh::Mesh& mesh) {
  const int n = static_cast<int>(g.size());
  // Transfers per (stage, micro-batch), in graph order.
  std::map<std::pair<int, int>, int> count;
  std::map<int, int> per_micro_batch;  // by stage
  for (int t = 0; t < n; ++t) {
    if (g[t].shift == 0) continue;
    if (g[t].op != graph::Op::kIdentity || g[t].micro_batch < 0)
      throw graph::GraphError(g[t].id() + ": only an identity of a micro-batch can be shifted");
    int& c = per_micro_batch[g[t].stage];
    c = std::max(c, ++count[{g[t].stage, g[t].micro_batch}]);
  }
  if (per_micro_batch.empty()) return;
  count.clear();
  Insertions ins(g);
  for (int t = 0; t < n; ++t) {
    if (g[t].shift == 0) continue;
    const int axis = axis_of(mesh, g[t]);
    const int k = count[{g[t].stage, g[t].micro_batch}]++;
    const int tag = k + per_micro_batch[g[t].stage] * g[t].micro_batch;
    graph::Tensor send = g[t];
    send.name += ".send";
    send.op = graph::Op::kSend;
    send.shift = 0;
    send.shift_symbol.clear();
    send.extra_deps.clear();
    send.comm.peer = mesh::Peer::along(axis, g[t].shift);
    send.comm.tag = tag;
    send.comm.label = g[t].id() + "_SEND";
    send.comm.label_number_at = g[t].number_at;
    graph::Tensor& recv = g.mutable_tensor(t);
    recv.op = graph::Op::kRecv;
    recv.comm.peer = mesh::Peer::along(axis, -recv.shift);
    recv.comm.tag = tag;
    recv.comm.label = recv.id() + "_RECV";
    recv.comm.label_number_at = recv.number_at;
    recv.shift = 0;
    recv.shift_symbol.clear();
    ins.before(t, std::move(send));
  }
  ins.apply();
}

}  // namespace stg::passes
