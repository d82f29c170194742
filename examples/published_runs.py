#!/usr/bin/env python3
"""stg's predicted step time beside published training runs (docs/published-runs.md).

For each run below, stg writes the traces of the first rank of every pipeline
stage (--ranks) with ASTRA-sim's network for the run's GPU (--gpu,
--astra_sim), replays them (--print_makespan) and prints a Markdown table:
the published step time, stg's, their ratio and both MFUs; then, for the
stage that ends last, where stg's step goes: compute by kernel kind, exposed
communication by axis and the pipeline bubble, in % of the step.

A published figure is either a step time or TFLOP/s per GPU. The latter is
turned into a step time with the publisher's own FLOP count (Megatron-LM's
formulas, written out below); MFU = model FLOPs / (step time x GPUs x dense
peak), with model FLOPs as Megatron-LM counts them today for a run without
recomputation (non-causal attention, see MODEL_FLOPS).

usage: python3 examples/published_runs.py [--stg ./build/stg] [--compute_time MODE]
       [--only NAME | --all]
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

# Dense BF16/FP16 tensor-core peaks, TFLOP/s (docs/gpus.md has the datasheets).
PEAK = {"h100-sxm": 989.4, "h800": 989.4, "a100-80gb": 312.0}


def megatron_2024_flops(b, s, l, h, heads, kv_heads, f, v, gated):
    """FLOPs of one step, no recomputation: Megatron-LM's
    num_floating_point_operations (megatron/training/training.py, July 2024):
    12 B s l h^2 [(1 + g/a + s/h) (q/h) + (f/h) k r + V/(2 l h)], q/h = 1,
    k = 1 expert, r = 3/2 gated. Attention is counted without the causal
    saving."""
    gated_factor = 1.5 if gated else 1.0
    return 12 * b * s * l * h * h * ((1 + kv_heads / heads + s / h) + (f / h) * gated_factor + v / (2 * l * h))


def narayanan_2021_flops(b, s, l, h, v):
    """Narayanan et al., SC'21, eq. (3): a GPT step with full activation
    recomputation, 96 B s l h^2 (1 + s/(6h) + V/(16 l h))."""
    return 96 * b * s * l * h * h * (1 + s / (6 * h) + v / (16 * l * h))


def gpt(layers, hidden, heads, seq, vocab):
    return dict(l=layers, h=hidden, heads=heads, kv_heads=heads, f=4 * hidden, s=seq, v=vocab, gated=False)


LLAMA3_405B = dict(l=126, h=16384, heads=128, kv_heads=8, f=53248, s=8192, v=128256, gated=True)

# Each run: its stg flags (the plan as published; what the source leaves open
# is said in "assumed"), GPUs, GPU, the published figure and its source.
RUNS = [
    dict(
        name="llama3-405b-8k",
        what="Llama 3 405B, 8,192 H100",
        model=LLAMA3_405B, batch=2048, gpus=8192, gpu="h100-sxm", pp=16,
        flags="--framework megatron --model llama3-405b --tp 8 --pp 16 --dp 64 --batch 2048 "
        "--micro_batch 64 --pipeline_schedule interleaved --virtual_stages 7",
        published=("tflops", 430, "megatron_2024"),
        source="Meta, The Llama 3 Herd of Models (2024), Table 4",
        assumed="interleaved 1F1B with 7 virtual stages, the most that 126 layers on 16 stages allow (the paper gives none)"),
    dict(
        name="llama3-405b-16k",
        what="Llama 3 405B, 16,384 H100",
        model=LLAMA3_405B, batch=2048, gpus=16384, gpu="h100-sxm", pp=16,
        flags="--framework megatron --model llama3-405b --tp 8 --pp 16 --dp 128 --batch 2048 "
        "--micro_batch 128 --pipeline_schedule interleaved --virtual_stages 7",
        published=("tflops", 400, "megatron_2024"),
        source="Meta, The Llama 3 Herd of Models (2024), Table 4",
        assumed="as above"),
    dict(
        name="llama3-405b-128k",
        what="Llama 3 405B, 16,384 H100, 128K tokens, cp 16",
        model=dict(LLAMA3_405B, s=131072), batch=128, gpus=16384, gpu="h100-sxm", pp=16,
        flags="--framework megatron --model llama3-405b --seq 131072 --tp 8 --cp 16 --cp_algo allgather "
        "--pp 16 --dp 8 --batch 128 --micro_batch 8 --pipeline_schedule interleaved --virtual_stages 7",
        published=("tflops", 380, "megatron_2024"),
        source="Meta, The Llama 3 Herd of Models (2024), Table 4",
        assumed="as above; all-gather context parallelism (the paper's)"),
    dict(
        name="gpt3-175b-a100",
        what="GPT-3 175B, 1,024 A100",
        model=gpt(96, 12288, 96, 2048, 51200), batch=1536, gpus=1024, gpu="a100-80gb", pp=16,
        flags="--framework megatron --model gpt3-175b --tp 8 --pp 16 --dp 8 --batch 1536 --micro_batch 8 "
        "--pipeline_schedule 1f1b --activation_recompute 1 --dtype fp16",
        published=("seconds", 32.0, "narayanan_2021"),
        source="NVIDIA/Megatron-LM README, GPT-3 Example (about 32 s per step, 138 TFLOP/s per GPU)",
        assumed="full recomputation (the 138 TFLOP/s count it), 1F1B"),
    dict(
        name="gpt-1t-a100",
        what="GPT 1T, 3,072 A100",
        model=gpt(128, 25600, 160, 2048, 51200), batch=3072, gpus=3072, gpu="a100-80gb", pp=64,
        flags="--framework megatron --model_type gpt --num_stacks 128 --dmodel 25600 --head 160 --dff 102400 "
        "--seq 2048 --dvocal 51200 --tp 8 --pp 64 --dp 6 --batch 3072 --micro_batch 6 "
        "--pipeline_schedule 1f1b --activation_recompute 1 --dtype fp16",
        published=("tflops", 163, "narayanan_2021"),
        source="Narayanan et al., SC'21, Table 1",
        assumed="full recomputation, 1F1B (the paper's interleaving is not given per row), micro-batch 1"),
    dict(
        name="mcore-177b-h100",
        what="Megatron-Core GPT 177B, 2,304 H100",
        model=gpt(96, 12288, 96, 4096, 131072), batch=1152, gpus=2304, gpu="h100-sxm", pp=6,
        flags="--framework megatron --model_type gpt --num_stacks 96 --dmodel 12288 --head 96 --dff 49152 "
        "--seq 4096 --dvocal 131072 --tp 8 --pp 6 --dp 48 --batch 1152 --micro_batch 48 "
        "--pipeline_schedule 1f1b",
        published=("tflops", 432.8, "megatron_2024"),
        source="NVIDIA/Megatron-LM README, Performance Benchmarking (model table)",
        assumed="1F1B, micro-batch 1, no recomputation"),
    dict(
        name="mcore-462b-h100",
        what="Megatron-Core GPT 462B, 6,144 H100",
        model=gpt(112, 18432, 144, 4096, 131072), batch=3072, gpus=6144, gpu="h100-sxm", pp=16,
        flags="--framework megatron --model_type gpt --num_stacks 112 --dmodel 18432 --head 144 --dff 73728 "
        "--seq 4096 --dvocal 131072 --tp 8 --pp 16 --dp 48 --batch 3072 --micro_batch 48 "
        "--pipeline_schedule 1f1b",
        published=("tflops", 459.9, "megatron_2024"),
        source="NVIDIA/Megatron-LM README, Performance Benchmarking (model table)",
        assumed="as above"),
    dict(
        name="deepseek-v3-h800",
        what="DeepSeek-V3, 2,048 H800",
        model=None, batch=15360, gpus=2048, gpu="h800", pp=16, slow=True,
        flags="--framework megatron --model deepseek-v3 --pp 16 --dp 2 --ep 64 --batch 15360 "
        "--micro_batch 128 --pipeline_schedule dualpipe",
        # 180K H800 GPU hours per trillion tokens, 15,360 sequences of 4,096
        # tokens per step, on 2,048 GPUs.
        published=("seconds", 15360 * 4096 * 180e3 * 3600 / 1e12 / 2048, None),
        source="DeepSeek-AI, DeepSeek-V3 Technical Report (2024): 180K H800 GPU hours per trillion "
        "tokens; pp 16, ep 64, ZeRO-1, DualPipe, batch 15,360",
        assumed="micro-batch 1 sequence per rank (120 per step), no recomputation"),
]

FORMULAS = {
    "megatron_2024": lambda m, b: megatron_2024_flops(b, m["s"], m["l"], m["h"], m["heads"], m["kv_heads"], m["f"],
                                                      m["v"], m["gated"]),
    "narayanan_2021": lambda m, b: narayanan_2021_flops(b, m["s"], m["l"], m["h"], m["v"]),
}


def predicted_step(stg, run, compute_time):
    """stg's makespan of the run in seconds, from the first rank of each stage, and
    where the time of the stage that ends last goes (--json's time_breakdown)."""
    per_stage = run["gpus"] // run["pp"]
    ranks = ",".join(str(stage * per_stage) for stage in range(run["pp"]))
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "run")
        command = [stg] + run["flags"].split() + [
            "--gpu", run["gpu"], "--trace_detail", "sim", "--astra_sim", out, "--ranks", ranks,
            "--print_makespan", "--json"]
        if compute_time:
            command += ["--compute_time", compute_time]
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode != 0:
            sys.exit("published_runs: %s failed: %s" % (run["name"], done.stderr.strip()))
        result = json.loads(done.stdout)
        if "makespan_ns" not in result:
            sys.exit("published_runs: %s: no makespan: %s" % (run["name"], result.get("makespan_error")))
        last = max(result["time_breakdown"], key=lambda stage: stage["done_ms"])
        return result["makespan_ns"] / 1e9, last


def row(stg, run, compute_time):
    kind, value, formula = run["published"]
    if kind == "seconds":
        published_s = value
    else:
        counted = FORMULAS[formula](run["model"], run["batch"])
        published_s = counted / (run["gpus"] * value * 1e12)
    stg_s, last = predicted_step(stg, run, compute_time)
    figure = "%.1f s" % value if kind == "seconds" else "%g TFLOP/s" % value
    # MFU where Megatron-LM's count applies (dense GPT and Llama models).
    mfu = ("-", "-")
    if run["model"]:
        model_flops = FORMULAS["megatron_2024"](run["model"], run["batch"])
        peak = run["gpus"] * PEAK[run["gpu"]] * 1e12
        mfu = ("%.0f%%" % (100 * model_flops / (published_s * peak)),
               "%.0f%%" % (100 * model_flops / (stg_s * peak)))
    line = "| %s | %s | %.1f | %.1f | %.2f | %s | %s |" % (
        run["what"], figure.replace(".0 s", " s"), published_s, stg_s, stg_s / published_s, *mfu)
    return line, breakdown_row(run, stg_s, last)


# The axes of the breakdown's columns; any other exposed time goes to "other".
AXES = ["tp", "cp", "ep", "dp", "pp"]


def breakdown_row(run, stg_s, stage):
    """Where the step of the stage that ends last goes, in % of stg's step."""
    step_ms = stg_s * 1e3
    share = lambda ms: "%.0f" % (100 * ms / step_ms)
    kernels = stage.get("kernels_ms", {})
    compute = share(stage["compute_ms"])
    if kernels:
        compute += " (%s / %s / %s)" % tuple(share(kernels[k]) for k in ("GEMM", "attention", "memory-bound"))
    exposed = stage["exposed_comm_ms"]
    by_axis = {a: 0.0 for a in AXES + ["other"]}
    for axis, ms in exposed.items():
        by_axis[axis if axis in AXES else "other"] += ms
    cells = [share(by_axis[a]) for a in AXES + ["other"]]
    return "| %s | %d | %s | %s | %s |" % (run["what"], stage["stage"], compute, " | ".join(cells),
                                           share(stage["bubble_ms"]))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--stg", default="./build/stg")
    p.add_argument("--compute_time", default="", help="passed to stg (roofline when not given)")
    p.add_argument("--only", default="", help="one run's name")
    p.add_argument("--all", action="store_true", help="also the runs that take minutes (DeepSeek-V3)")
    a = p.parse_args()
    print("| run | published | published step s | stg step s | stg / published | published MFU | stg MFU |")
    print("|---|---|---|---|---|---|---|")
    breakdowns = []
    for run in RUNS:
        if (a.only and run["name"] != a.only) or (not a.only and not a.all and run.get("slow")):
            continue
        line, breakdown = row(a.stg, run, a.compute_time)
        print(line, flush=True)
        breakdowns.append(breakdown)
    # Where stg's step goes: compute (by kernel kind under --compute_time
    # model), exposed communication by axis and the pipeline bubble add up to
    # the step (docs/validate-inspect.md, "Where the step time goes").
    print()
    print("| run | stage that ends last | compute % (GEMM / attention / memory-bound) | exposed " +
          " | ".join(AXES) + " | other | bubble % |")
    print("|---|---|---|" + "---|" * (len(AXES) + 2))
    for line in breakdowns:
        print(line)


if __name__ == "__main__":
    main()
