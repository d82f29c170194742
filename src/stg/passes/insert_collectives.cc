#include "stg/passes/insert_collectives.h"

#include <algorithm>
#include <string>
#include <unordered_map>

#include "stg/graph/op.h"
#include "stg/passes/insertion.h"

namespace stg::passes {

using graph::Tensor;

Tensor collective_tensor(const CollectiveRequest& r) {
  Tensor t;
  t.op = graph::Op::kCollective;
  t.x1 = r.input;
  t.x1_shape = *r.from_shape;
  t.x1_hidden = *r.from_hidden;
  t.x2_shape = *r.to_shape;
  t.x2_hidden = *r.to_hidden;
  t.comm.type = r.collective.type;
  t.comm.axis = r.collective.axis;
  return t;
}

Tensor reference_collective(const graph::Graph& g, const CollectiveRequest& r) {
  const Tensor& consumer = g[r.consumer];
  Tensor t = collective_tensor(r);
  t.name = consumer.name + (r.operand == 1 ? ".x1comm" : ".x2comm") + std::to_string(r.position);
  t.number_at = consumer.number_at;
  t.step_at = consumer.step_at;
  t.revision = consumer.revision;
  t.comm.label = consumer.id() + (r.operand == 1 ? "_X1COMM" : "_X2_COMM");
  t.comm.label_number_at = consumer.number_at;
  t.comm.label_step_at = consumer.step_at;
  t.stage = consumer.stage;
  t.chunk = consumer.chunk;
  t.micro_batch = consumer.micro_batch;
  t.phase = consumer.phase;
  t.phase_step = consumer.phase_step;
  t.placement = consumer.placement;
  // A reduction runs in the wider of the two element types: a gradient
  // reduced into an fp32 buffer is reduced in fp32 (--framework megatron; 0
  // elsewhere). Gathers and all-to-alls move their input as it is.
  if (r.collective.type == graph::CollType::kAllReduce ||
      r.collective.type == graph::CollType::kReduceScatter)
    t.element_bytes = std::max(g[graph::carried(g, r.input)].element_bytes, consumer.element_bytes);
  return t;
}

void insert_collectives(graph::Graph& g, const graph::ShardingRule& rule,
                        const CollectiveCreator& create) {
  const int n = static_cast<int>(g.size());
  Insertions ins(g);
  // Transitions by the identities of the four views' expressions: replicated
  // blocks and micro-batches share their expressions.
  std::unordered_map<std::string, std::vector<graph::Collective>> cache;
  std::string key;
  for (int t = 0; t < n; ++t) {
    if (graph::is_comm(g[t].op)) continue;
    for (int operand : {1, 2}) {
      const int in = operand == 1 ? g[t].x1 : g[t].x2;
      if (in < 0) continue;
      const std::optional<graph::Shape>& shape = operand == 1 ? g[t].x1_shape : g[t].x2_shape;
      const std::optional<graph::Shape>& hidden = operand == 1 ? g[t].x1_hidden : g[t].x2_hidden;
      // Results are shared: keep the producer's alive while tensors are added.
      const std::shared_ptr<const graph::OpResult> from = g.shared_result(in);
      key.clear();
      for (const graph::Shape* view : {&from->y_shape, &from->y_hidden, &*shape, &*hidden}) {
        for (const expr::Expr& dim : *view) {
          const void* id = dim.identity();
          key.append(reinterpret_cast<const char*>(&id), sizeof id);
        }
        key += '|';
      }
      auto cached = cache.find(key);
      if (cached == cache.end()) {
        try {
          cached = cache
                       .emplace(key, graph::collectives_between(from->y_shape, from->y_hidden,
                                                                *shape, *hidden, rule))
                       .first;
        } catch (const graph::GraphError& e) {
          throw graph::GraphError("input " + g[in].id() + " of " + g[t].id() + ": " + e.what());
        }
      }
      if (cached->second.empty()) continue;
      const graph::Shape to_shape = *shape, to_hidden = *hidden;
      int input = in, position = 0;
      for (const graph::Collective& c : cached->second) {
        CollectiveRequest r;
        r.consumer = t;
        r.operand = operand;
        r.source = in;
        r.input = input;
        r.position = position++;
        r.collective = c;
        r.from_shape = &from->y_shape;
        r.from_hidden = &from->y_hidden;
        r.to_shape = &to_shape;
        r.to_hidden = &to_hidden;
        input = ins.after(t, create(g, r));
      }
      g.set_input(t, operand, input);
    }
  }
  ins.apply();
}

}  // namespace stg::passes
