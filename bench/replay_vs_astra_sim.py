#!/usr/bin/env python3
"""stg's replay against ASTRA-sim, rank by rank, over a matrix of trace sets.

Usage: python3 bench/replay_vs_astra_sim.py ASTRA_SIM_BINARY [--stg PATH]
           [--jobs N] [--only TEXT] [--keep DIR] [--output FILE]
           [--replay_args "ARGS"]

For each case of the matrix below (both frameworks, every pipeline schedule,
context parallelism with every --cp_algo, MoE with --ep, world-group
collectives on multi-dimensional networks, 16 and 32 ranks across nodes,
--gpu's two-level networks, `stg infer` serving with and without
--disaggregate; small sizes, seconds each) it
  1. writes the trace set with `stg ... --astra_sim DIR` (network.yml,
     system.json, run.sh next to the traces),
  2. runs ASTRA-sim on it (`DIR/run.sh BINARY`) and reads every rank's
     "sys[R] finished, T cycles" line (1 cycle = 1 ns),
  3. runs `stg validate --replay DIR --json` (plus --replay_args) and reads
     the makespan's end time of every rank,
and prints one row per case: the ranks, ASTRA-sim's and stg's last finish,
the largest |stg / ASTRA-sim - 1| over the ranks (with that rank), how many
ranks finish at the same nanosecond, and |makespan / ASTRA-sim's last
finish - 1| of `--print_makespan` (the replay of one rank per pipeline
stage, at generation; "-" for the cases whose network or system file the
script edits after generation: ASTRA-sim's other topologies, bandwidths and
latencies per dimension, and system settings). The last lines give the
largest and the median of the per-case figures, the median over all ranks,
and how many cases are within 2% on every rank.

ASTRA_SIM_BINARY is AstraSim_Analytical_Congestion_Unaware. It is not part
of stg and this script is not run in CI; without the binary the script says
how to build it and exits with 0 ("skipped"). To build it (about 6 minutes
on two cores; needs cmake, a C++17 compiler, protobuf and yaml-cpp):
  git clone --recursive https://github.com/astra-sim/astra-sim.git
  cd astra-sim && ./build/astra_analytical/build.sh -t congestion_unaware
  # -> build/astra_analytical/build/bin/AstraSim_Analytical_Congestion_Unaware
(ASTRA-sim's README has the details; the comparison in
bench/replay_vs_astra_sim.txt used astra-sim 518bd513ae11 with the
analytical network backend 599a0473a9a7.)

Exit status: 0 (also when skipped), 1 when a case fails to generate or to
run, 2 for a usage error.
"""
import argparse
import concurrent.futures
import hashlib
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

BUILD_STEPS = """  git clone --recursive https://github.com/astra-sim/astra-sim.git
  cd astra-sim && ./build/astra_analytical/build.sh -t congestion_unaware
  # -> build/astra_analytical/build/bin/AstraSim_Analytical_Congestion_Unaware
then: python3 bench/replay_vs_astra_sim.py PATH/TO/AstraSim_Analytical_Congestion_Unaware"""

SMALL = "--num_stacks 4 --dmodel 256 --dff 1024 --head 8 --seq 128 --batch 16"
MEDIUM = "--num_stacks 4 --dmodel 1024 --dff 4096 --head 16 --seq 1024 --batch 16"
SCHEDULES = ["none", "gpipe", "1f1b", "interleaved --virtual_stages 2", "zb-h1", "dualpipe",
             "dualpipev"]
FRAMEWORKS = ["reference", "megatron"]


def short_schedule(s):
    return s.split()[0]


def training_cases():
    cases = []
    for fw in FRAMEWORKS:
        units = " --units physical" if fw == "reference" else ""
        for s in SCHEDULES:
            for size_name, size in (("small", SMALL), ("medium", MEDIUM)):
                cases.append((f"{fw}/gpt/dp2tp2pp2/{short_schedule(s)}/{size_name}",
                              f"--framework {fw} --model_type gpt --dp 2 --tp 2 --pp 2 {size} "
                              f"--micro_batch 4 --pipeline_schedule {s}{units}"))
            cases.append((f"{fw}/llama/dp2tp2pp2/{short_schedule(s)}",
                          f"--framework {fw} --model_type llama --kvhead 4 --dp 2 --tp 2 --pp 2 "
                          f"{SMALL} --micro_batch 4 --pipeline_schedule {s}{units}"))
        for s in ("none", "1f1b", "interleaved --virtual_stages 2", "zb-h1", "dualpipev"):
            cases.append((f"{fw}/moe/dp2tp2pp2ep2/{short_schedule(s)}",
                          f"--framework {fw} --model_type moe --kvhead 4 --dp 2 --tp 2 --pp 2 "
                          f"--ep 2 {SMALL} --micro_batch 4 --pipeline_schedule {s}{units}"))
        for algo in ("allgather", "ring", "ulysses"):
            for s in ("none", "1f1b", "interleaved --virtual_stages 2"):
                cases.append((f"{fw}/llama/tp2pp2cp2/{algo}/{short_schedule(s)}",
                              f"--framework {fw} --model_type llama --kvhead 4 --tp 2 --pp 2 "
                              f"--cp 2 --cp_algo {algo} {SMALL} --micro_batch 4 "
                              f"--pipeline_schedule {s}{units}"))
        cases += [
            (f"{fw}/gpt/dp8", f"--framework {fw} --model_type gpt --dp 8 {SMALL}{units}"),
            (f"{fw}/gpt/tp8", f"--framework {fw} --model_type gpt --tp 8 {SMALL}{units}"),
            (f"{fw}/gpt/tp4dp2/net2,2,2",
             f"--framework {fw} --model_type gpt --tp 4 --dp 2 {SMALL}{units} "
             "--network_dims 2,2,2"),
            (f"{fw}/gpt/dp2tp2pp4/16ranks",
             f"--framework {fw} --model_type gpt --dp 2 --tp 2 --pp 4 {SMALL} --micro_batch 4 "
             f"--pipeline_schedule 1f1b{units}"),
            (f"{fw}/gpt/dp4tp2pp2/16ranks/zero3",
             f"--framework {fw} --model_type gpt --dp 4 --tp 2 --pp 2 {SMALL} --micro_batch 4 "
             f"--pipeline_schedule 1f1b --zero_stage 3{units}"),
            (f"{fw}/llama/dp2tp2pp2/recompute",
             f"--framework {fw} --model_type llama --kvhead 4 --dp 2 --tp 2 --pp 2 {SMALL} "
             f"--micro_batch 4 --pipeline_schedule 1f1b --activation_recompute "
             f"{'1' if fw == 'reference' else 'full'}{units}"),
            (f"{fw}/moe/dp4tp2ep4", f"--framework {fw} --model_type moe --kvhead 4 --dp 4 "
             f"--tp 2 --ep 4 {SMALL} --batch 32 --micro_batch 16{units}"),
        ]
    # --gpu: the GPU's roofline and its two-level network (scale-up domain,
    # scale-out per GPU).
    for gpu in ("h100-sxm", "a100-80gb", "b200", "mi300x"):
        cases.append((f"megatron/llama/dp2tp4pp2/1f1b/gpu-{gpu}",
                      f"--framework megatron --model_type llama --kvhead 4 --dp 2 --tp 4 --pp 2 "
                      f"{MEDIUM} --micro_batch 4 --pipeline_schedule 1f1b --gpu {gpu}"))
    cases += [
        ("reference/seed/dp2tp2pp2/physical", "--dp 2 --tp 2 --pp 2 --units physical"),
        ("reference/seed/dp2tp2pp2/stg-units", "--dp 2 --tp 2 --pp 2"),
        ("reference/gpt/dp2tp2pp2/sp2", f"--model_type gpt --dp 2 --tp 2 --pp 2 --sp 2 "
         f"--weight_sharded 1 {SMALL} --micro_batch 4 --units physical"),
    ]
    return cases


def serving_cases():
    llama = "infer --model llama3-8b --num_stacks 4 --prompt_len 256"
    deepseek = ("infer --model deepseek-v3 --num_stacks 4 --dense_blocks 1 --experts 16 "
                "--prompt_len 256")
    cases = []
    for fw in FRAMEWORKS:
        cases += [
            (f"infer/{fw}/llama/tp2pp2",
             f"{llama} --framework {fw} --tp 2 --pp 2 --requests 16 --micro_batch 8 "
             "--decode_steps 2"),
            (f"infer/{fw}/llama/dp2tp2pp2",
             f"{llama} --framework {fw} --dp 2 --tp 2 --pp 2 --requests 32 --micro_batch 16 "
             "--decode_steps 2"),
            (f"infer/{fw}/llama/tp4/prefill-only",
             f"{llama} --framework {fw} --tp 4 --requests 16 --decode_steps 0"),
            (f"infer/{fw}/llama/tp2/decode-only",
             f"{llama} --framework {fw} --tp 2 --requests 16 --decode_steps 4 --prefill 0"),
            (f"infer/{fw}/llama/tp2/disaggregate1:1",
             f"{llama} --framework {fw} --tp 2 --requests 16 --decode_steps 4 "
             "--disaggregate 1:1"),
            (f"infer/{fw}/llama/tp2/disaggregate1:2",
             f"{llama} --framework {fw} --tp 2 --requests 16 --decode_steps 4 "
             "--disaggregate 1:2"),
            (f"infer/{fw}/llama/tp2pp2/disaggregate2:1",
             f"{llama} --framework {fw} --tp 2 --pp 2 --requests 16 --micro_batch 8 "
             "--decode_steps 2 --disaggregate 2:1"),
            (f"infer/{fw}/llama/tp2cp2", f"{llama} --framework {fw} --tp 2 --cp 2 --requests 8 "
             "--prompt_len 1024 --decode_steps 2"),
        ]
    cases += [
        ("infer/megatron/deepseek/dp2tp2pp2ep2",
         f"{deepseek} --framework megatron --dp 2 --tp 2 --pp 2 --ep 2 --requests 32 "
         "--micro_batch 16 --decode_steps 2"),
        ("infer/megatron/deepseek/dp2tp2ep2/disaggregate1:1",
         f"{deepseek} --framework megatron --dp 2 --tp 2 --ep 2 --requests 32 --micro_batch 16 "
         "--decode_steps 2 --disaggregate 1:1"),
        ("infer/reference/mixtral/tp2ep2",
         "infer --model mixtral-8x7b --num_stacks 4 --tp 2 --ep 2 --requests 16 "
         "--prompt_len 256 --decode_steps 2"),
    ]
    return cases


# Edits of the written network.yml / system.json: ASTRA-sim's other
# topologies, bandwidths and latencies per dimension, and system settings.
VARIANTS = [
    ("ring-topology", {"topology": "Ring"}, {}),
    ("fully-connected", {"topology": "FullyConnected"}, {}),
    ("mixed-bw-latency", {"bandwidth": [300.0, 75.0, 25.0, 50.0],
                          "latency": [200.0, 1500.0, 5000.0, 800.0]},
     {}),
    ("baseline-allreduce", {}, {"collective-optimization": "baseline"}),
    ("1-active-chunk", {}, {"active-chunks-per-dimension": 1}),
    ("16-splits-4-active", {}, {"preferred-dataset-splits": 16, "active-chunks-per-dimension": 4}),
    ("1-split", {}, {"preferred-dataset-splits": 1}),
    ("endpoint-delay-500", {}, {"endpoint-delay": 500}),
    ("slow-local-mem", {}, {"local-mem-bw": 50}),
    ("fifo-h200-like", {}, {"scheduling-policy": "FIFO", "peak-perf": 1979, "local-mem-bw": 4800}),
    ("roofline-off", {}, {"roofline-enabled": 0}),
]
VARIANT_BASES = [
    ("megatron/gpt/dp2tp2pp2/1f1b/medium",
     f"--framework megatron --model_type gpt --dp 2 --tp 2 --pp 2 {MEDIUM} --micro_batch 4 "
     "--pipeline_schedule 1f1b"),
    ("reference/gpt/tp8/net2,2,2",
     f"--model_type gpt --tp 8 {SMALL} --units physical --network_dims 2,2,2"),
    ("reference/moe/dp2tp2pp2ep2/1f1b",
     f"--model_type moe --kvhead 4 --dp 2 --tp 2 --pp 2 --ep 2 {SMALL} --micro_batch 4 "
     "--pipeline_schedule 1f1b --units physical"),
]


def variant_cases():
    cases = []
    for name, args in VARIANT_BASES:
        for variant, network, system in VARIANTS:
            cases.append((f"{name}/{variant}", args, (network, system)))
    return cases


def all_cases():
    plain = [(n, a, None) for n, a in training_cases() + serving_cases()]
    return plain + variant_cases()


def edit_inputs(d, edits):
    """Applies a variant's edits to the network.yml and system.json in d."""
    network, system = edits
    path = os.path.join(d, "network.yml")
    lines = open(path).read().splitlines()
    dims = len(next(l for l in lines if l.startswith("npus_count")).split(","))
    for i, line in enumerate(lines):
        key = line.split(":")[0]
        if key in network:
            value = network[key]
            values = value[:dims] if isinstance(value, list) else [value] * dims
            lines[i] = f"{key}: [ {', '.join(str(x) for x in values)} ]"
    open(path, "w").write("\n".join(lines) + "\n")
    path = os.path.join(d, "system.json")
    j = json.load(open(path))
    j.update(system)
    json.dump(j, open(path, "w"), indent=2)


def run(cmd, timeout=900):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    return p.returncode, p.stdout + p.stderr


def astra_sim_finish(d, binary):
    """Every rank's finish time from ASTRA-sim, or an error text."""
    rc, out = run(["bash", os.path.join(d, "run.sh"), binary])
    ranks = len([f for f in os.listdir(d) if re.fullmatch(r"workload\.\d+\.et", f)])
    finish = {int(r): int(t) for r, t in re.findall(r"sys\[(\d+)\] finished, (\d+) cycles", out)}
    if rc != 0 or len(finish) != ranks:
        return None, f"ASTRA-sim: {len(finish)} of {ranks} ranks finished (run.sh status {rc})"
    return [finish[r] for r in range(ranks)], ""


def stg_finish(d, stg, replay_args):
    rc, out = run([stg, "validate", "--replay", d, "--json"] + replay_args)
    try:
        j = json.loads(out[out.index("{"):])
        return [float(t) for t in j["makespan"]["end_ns"]], ""
    except (ValueError, KeyError, TypeError):
        return None, "stg validate: " + " ".join(out.strip().splitlines()[-2:])[:200]


def measure(case, stg, binary, work, replay_args):
    name, args, edits = case
    d = os.path.join(work, re.sub(r"[^A-Za-z0-9_.-]+", "_", name))
    shutil.rmtree(d, ignore_errors=True)
    rc, out = run([stg] + args.split() + ["--astra_sim", d, "--quiet", "--print_makespan"])
    if rc != 0:
        return {"name": name, "error": "stg: " + out.strip().splitlines()[-1][:200]}
    by_stage = re.search(r"makespan: (\d+) ns over one rank per pipeline stage", out)
    by_stage = int(by_stage.group(1)) if by_stage and not edits else None
    if edits:
        edit_inputs(d, edits)
    astra, error = astra_sim_finish(d, binary)
    if astra is None:
        return {"name": name, "error": error}
    ours, error = stg_finish(d, stg, replay_args)
    if ours is None or len(ours) != len(astra):
        return {"name": name, "error": error or "stg validate: rank count differs"}
    errors = [abs(s / a - 1) if a else abs(s) for s, a in zip(ours, astra)]
    worst = max(range(len(errors)), key=lambda r: errors[r])
    return {"name": name, "ranks": len(astra), "astra_max": max(astra), "stg_max": max(ours),
            "worst": errors[worst], "worst_rank": worst, "errors": errors,
            "exact": sum(1 for a, o in zip(astra, ours) if round(o) == a),
            "by_stage": None if by_stage is None else abs(by_stage / max(astra) - 1)}


def table(results):
    lines = [f"{'case':56} {'ranks':>5} {'ASTRA-sim ns':>15} {'stg ns':>15} "
             f"{'max|stg/A-1|':>12} {'rank':>4} {'exact':>5} {'by stage':>8}"]
    for r in results:
        if "error" in r:
            lines.append(f"{r['name']:56} {'failed: ' + r['error']}")
            continue
        stage = "-" if r["by_stage"] is None else f"{r['by_stage']:.4f}"
        lines.append(f"{r['name']:56} {r['ranks']:5d} {r['astra_max']:15,d} "
                     f"{round(r['stg_max']):15,d} {r['worst']:12.4f} {r['worst_rank']:4d} "
                     f"{r['exact']:5d} {stage:>8}")
    done = [r for r in results if "error" not in r]
    if not done:
        return lines + ["no case measured"]
    worst = [r["worst"] for r in done]
    every = [e for r in done for e in r["errors"]]
    stages = [r["by_stage"] for r in done if r["by_stage"] is not None]
    lines += [
        f"cases: {len(results)} ({len(results) - len(done)} failed), ranks: {len(every)}, "
        f"ranks equal to the ns: {sum(r['exact'] for r in done)}",
        f"per-case max |stg/ASTRA-sim - 1|: largest {max(worst):.4f}, "
        f"median {statistics.median(worst):.4f}",
        f"over all ranks: median {statistics.median(every):.4f}",
        f"within 2% on every rank: {sum(1 for w in worst if w <= 0.02)} of {len(done)} cases",
    ]
    if stages:
        lines.append(f"--print_makespan (by stage) vs ASTRA-sim's last finish, {len(stages)} "
                     f"cases: largest {max(stages):.4f}, median {statistics.median(stages):.4f}")
    return lines


def parse_args():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("astra_sim", help="AstraSim_Analytical_Congestion_Unaware binary")
    p.add_argument("--stg", default="build/stg", help="stg binary (default build/stg)")
    p.add_argument("--jobs", type=int, default=1, help="cases run at once (default 1)")
    p.add_argument("--only", default="", help="only the cases whose name contains TEXT")
    p.add_argument("--keep", default="", help="write the trace sets into DIR and keep them")
    p.add_argument("--output", default="", help="also write the table to FILE")
    p.add_argument("--replay_args", default="", help="extra flags for stg validate --replay")
    return p.parse_args()


def main():
    a = parse_args()
    if not (os.path.isfile(a.astra_sim) and os.access(a.astra_sim, os.X_OK)):
        print(f"replay_vs_astra_sim: skipped: no ASTRA-sim binary at {a.astra_sim}. Build "
              "AstraSim_Analytical_Congestion_Unaware (about 6 minutes on two cores; cmake, a "
              "C++17 compiler, protobuf and yaml-cpp):\n" + BUILD_STEPS)
        return 0
    if not os.access(a.stg, os.X_OK):
        print(f"replay_vs_astra_sim: error: --stg {a.stg} is not an executable: build stg "
              "(bash scripts/build.sh) or name one", file=sys.stderr)
        return 2
    stg, binary = os.path.abspath(a.stg), os.path.abspath(a.astra_sim)
    cases = [c for c in all_cases() if a.only in c[0]]
    work = os.path.abspath(a.keep) if a.keep else tempfile.mkdtemp(prefix="stg_vs_astra_")
    os.makedirs(work, exist_ok=True)
    try:
        with concurrent.futures.ThreadPoolExecutor(max(1, a.jobs)) as pool:
            results = list(pool.map(
                lambda c: measure(c, stg, binary, work, a.replay_args.split()), cases))
    finally:
        if not a.keep:
            shutil.rmtree(work, ignore_errors=True)
    version = run([stg, "--version"])[1].strip().splitlines()[0]
    with open(binary, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()[:12]
    text = (f"{version}; ASTRA-sim: {os.path.basename(binary)} sha256 {digest}\n" +
            "\n".join(table(results)) + "\n")
    sys.stdout.write(text)
    if a.output:
        with open(a.output, "w") as f:
            f.write(text)
    return 1 if any("error" in r for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
