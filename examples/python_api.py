#!/usr/bin/env python3
"""The Python module in a few calls: a run, its figures without files, the
checks of its directory, the plans of a model on 64 GPUs, and a serving iteration.

usage: PYTHONPATH=build python3 examples/python_api.py [OUTPUT_DIR]"""

import sys

import stg

out = sys.argv[1] if len(sys.argv) > 1 else "python_api/"
flags = dict(model="llama3-8b", num_stacks=2, dp=2, tp=2, pp=2, units="physical")

run = stg.generate(output_dir=out, **flags)
print("generate: %d ranks, %d files, %d bytes, %d nodes" %
      (run["ranks"], run["files"], run["bytes"], run["nodes"]))

plan = stg.plan(**flags)  # the same figures, nothing written
step = plan["step"]
print("plan: %d TFLOP per rank; per rank and step: tp %d bytes, dp %d bytes, pp %d bytes sent"
      % (step["flops"]["max"] // 10**12, step["axes"]["tp"]["bytes"]["max"],
         step["axes"]["dp"]["bytes"]["max"], step["axes"]["pp"]["bytes_sent"]["max"]))
print("plan: memory per rank %.3f GiB on stage 0" % (plan["memory"][0]["total"] / 2**30))

report = stg.validate(out, replay=True)
print(report["verdict"] + "; replay completed:", report["replay"]["completed"])
print("inspect: %d structure groups" % len(stg.inspect(out)["structure_groups"]))

try:
    stg.plan(model="llama3-8b", tp=3)
except ValueError as e:
    print("ValueError:", e)

best = stg.plans(model="llama3-8b", gpus=64, batch=128, framework="megatron", fits_gb=80,
                 sort="comm_gib")[0]
print("plans: least traffic that fits 80 GiB: dp %d tp %d pp %d cp %d, micro_batch %d, "
      "ZeRO %d: %.1f GiB memory, %.1f GiB sent per rank" %
      (best["dp"], best["tp"], best["pp"], best["cp"], best["micro_batch"], best["zero_stage"],
       best["memory_gib"], best["comm_gib"]))

serve = stg.infer(output_dir=out + "serve/", model="llama3-8b", num_stacks=2, tp=2, requests=16,
                  prompt_len=1024, decode_steps=8)["serving"]["stages"][0]
decode = serve["phases"][1]
print("infer: %s %.3f ms at the roofline (%d of %d bytes read from the KV cache); KV cache "
      "%d bytes per rank" % (decode["phase"], decode["roofline_ms"], decode["kv_bytes"],
                             decode["bytes_read"], serve["memory"]["kv_cache"]))
