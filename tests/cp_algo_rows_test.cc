// The cp algorithm rows (models/parts/context_parallel.h; docs/
// architecture.md "How to add a cp algorithm"): every row is complete, the
// command line takes its names from the table, and the K/V each holds for
// the memory report is the algorithm's (docs/context_parallelism.md):
// all-gather the whole sequence's, ring two chunks of s/cp tokens (Liu et
// al., "Ring Attention"), Ulysses the whole sequence for 1/cp of the heads
// (Jacobs et al., "DeepSpeed Ulysses").
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "cli/flag_text.h"
#include "stg/models/parts/context_parallel.h"

namespace stg {
namespace {

using models::CpAlgoRow;

TEST(CpAlgoRows, EveryRowIsCompleteAndNamedOnce) {
  std::set<std::string> names;
  for (const CpAlgoRow* row : models::cp_algo_rows()) {
    EXPECT_TRUE(names.insert(row->name).second) << row->name;
    EXPECT_NE(row->kernel, nullptr) << row->name;
    EXPECT_NE(row->kv_bytes, nullptr) << row->name;
    EXPECT_NE(std::string(row->kv_held), "") << row->name;
    EXPECT_EQ(&models::cp_algo_row(row->name), row);
    EXPECT_EQ(cli::parse_cp_algo(row->name), row->name);
  }
  EXPECT_EQ(names, (std::set<std::string>{"allgather", "ring", "ulysses"}));
  EXPECT_THROW(models::cp_algo_row("rung"), UsageError);
  EXPECT_THROW(cli::parse_cp_algo("rung"), UsageError);
}

TEST(CpAlgoRows, KeysAndValuesHeldAreTheAlgorithms) {
  // b sequences of s tokens, (dk + dv) per KV head, kv heads, 2 bytes.
  const double b = 2, s = 4096, dk = 128, dv = 128, kv = 8, bytes = 2;
  const double whole = b * s * (dk + dv) * kv * bytes;
  for (const int cp : {2, 4, 8}) {
    const double chunk = b * (s / cp) * (dk + dv) * kv * bytes;
    EXPECT_DOUBLE_EQ(models::cp_algo_row("allgather").kv_bytes(whole, cp), whole);
    EXPECT_DOUBLE_EQ(models::cp_algo_row("ring").kv_bytes(whole, cp), 2 * chunk);
    EXPECT_DOUBLE_EQ(models::cp_algo_row("ulysses").kv_bytes(whole, cp),
                     b * s * (dk + dv) * (kv / cp) * bytes);
  }
}

// What a mixer's attention offers decides: a window refuses the ring only,
// and only the ring adds passes of its own.
TEST(CpAlgoRows, OnlyTheRingChunksTheWholeSequenceAndAddsPasses) {
  for (const CpAlgoRow* row : models::cp_algo_rows()) {
    const bool ring = std::string(row->name) == "ring";
    EXPECT_EQ(row->whole_sequence_chunks, ring) << row->name;
    EXPECT_EQ(row->add_passes != nullptr, ring) << row->name;
    EXPECT_EQ(row->decoder_only, std::string(row->name) != "allgather") << row->name;
  }
}

}  // namespace
}  // namespace stg
