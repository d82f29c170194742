// Allocator settings of the stg binary (linked only with jemalloc; see
// CMakeLists.txt).
//
// A run builds a graph and lowered nodes of many small objects and touches
// about 100 MB in a fraction of a second. With 4 KiB pages each first touch
// is a page fault, and on virtual machines a fault costs several
// microseconds: on the 2-core development VM the faults took about a third
// of the run (gpt defaults, 8 micro-batches: 29,000 faults, 0.6 s with
// glibc malloc; 4,000 faults, 0.25-0.3 s with jemalloc on huge pages;
// bench/run_bench.sh). jemalloc reads this string at start-up (its
// documented `malloc_conf` hook); with transparent huge pages disabled by the
// system it has no effect.
extern "C" {
// NOLINTNEXTLINE: the name and type are jemalloc's interface.
extern const char* malloc_conf;
const char* malloc_conf = "thp:always,metadata_thp:always";
}
