// Sharding transitions become explicit collective ops (docs/facts.md §3).
//
// For every op input read in a different sharding than its producer wrote
// it, the transition table (graph/sharding.h) gives a chain of collectives,
// one per mesh axis in mesh order; the pass inserts one op per collective
// right after the consumer's position and points the consumer's input at
// the last. The op itself comes from an injected creator, so a framework
// mode can make different collectives (bucketed, differently sized, ...)
// without touching the pass. Comm ops are never consumers here: a
// collective reads its input in the view it sends, by construction.
#pragma once

#include <functional>

#include "stg/graph/sharding.h"
#include "stg/passes/pass.h"

namespace stg::passes {

// One collective of a chain, as the creator is asked for it.
struct CollectiveRequest {
  int consumer = 0;  // the op that reads the converted input
  int operand = 1;   // which of its inputs (1 or 2)
  int source = 0;    // the producer whose view is converted
  int input = 0;     // what this collective reads: source or the previous one
  int position = 0;  // index in the chain
  graph::Collective collective;
  const graph::Shape* from_shape = nullptr;  // the source's view
  const graph::Shape* from_hidden = nullptr;
  const graph::Shape* to_shape = nullptr;  // the consumer's view
  const graph::Shape* to_hidden = nullptr;
};

using CollectiveCreator =
    std::function<graph::Tensor(const graph::Graph& g, const CollectiveRequest& request)>;

// A collective that reads request.input in the source's view and delivers
// the consumer's: what every creator starts from (it adds the name, label
// and placement).
graph::Tensor collective_tensor(const CollectiveRequest& request);

// The reference's collectives: each reads the source's view (its comm_size
// is the source's per-rank size, also for the later ones of a chain),
// delivers the consumer's view, and is named after the consumer
// ("<consumer id>_X1COMM", "<consumer id>_X2_COMM").
graph::Tensor reference_collective(const graph::Graph& g, const CollectiveRequest& request);

void insert_collectives(graph::Graph& g, const graph::ShardingRule& rule,
                        const CollectiveCreator& create = reference_collective);

class InsertCollectives : public Pass {
 public:
  explicit InsertCollectives(graph::ShardingRule rule,
                             CollectiveCreator create = reference_collective)
      : rule_(std::move(rule)), create_(std::move(create)) {}
  std::string_view name() const override { return "insert-collectives"; }
  void run(graph::Graph& g, Analyses&) override { insert_collectives(g, rule_, create_); }

 private:
  graph::ShardingRule rule_;
  CollectiveCreator create_;
};

}  // namespace stg::passes
