#!/usr/bin/env python3
"""Plots every parallel plan of a model on N GPUs: memory per rank against
bytes sent per rank per step, one point per plan, coloured by the
tensor-parallel degree, with the GPU's memory as a line (stg.plans, the
figures of `stg plans --csv`).

usage: PYTHONPATH=build python3 examples/plot_plans.py [--model llama3-70b]
           [--gpus 512] [--batch 512] [--framework megatron] [--gpu_gib 80]
           [--out plans.png]
Needs matplotlib (Debian: python3-matplotlib); draws without a display."""

import argparse
import collections
import sys

try:
    import matplotlib
except ImportError:
    sys.exit("plot_plans.py: error: needs matplotlib: venv/bin/pip install '.[plot]' in a venv "
             "(docs/python.md), or Debian's python3-matplotlib for /usr/bin/python3")

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import stg  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="llama3-70b")
    ap.add_argument("--gpus", type=int, default=512)
    ap.add_argument("--batch", type=int, default=512)
    ap.add_argument("--framework", default="megatron", help="reference or megatron")
    ap.add_argument("--gpu_gib", type=float, default=80, help="memory of one GPU, GiB")
    ap.add_argument("--out", default="plans.png")
    a = ap.parse_args()
    plans = stg.plans(model=a.model, gpus=a.gpus, batch=a.batch, framework=a.framework)
    by_tp = collections.defaultdict(list)
    for p in plans:
        by_tp[p["tp"]].append(p)
    fig, ax = plt.subplots(figsize=(8, 5.5), dpi=100)
    for tp in sorted(by_tp):
        rows = by_tp[tp]
        ax.scatter([r["comm_gib"] for r in rows], [r["memory_gib"] for r in rows], s=6,
                   alpha=0.6, label="tp %d" % tp)
    ax.axhline(a.gpu_gib, color="black", linewidth=1, linestyle="--")
    fits = sum(1 for p in plans if p["memory_gib"] <= a.gpu_gib)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.text(ax.get_xlim()[0], a.gpu_gib * 1.08, " %g GiB per GPU" % a.gpu_gib, fontsize=8)
    ax.set_xlabel("GiB sent per rank per step (all axes)")
    ax.set_ylabel("memory per rank, GiB (the most loaded rank)")
    ax.set_title("%s on %d GPUs, batch %d, --framework %s: %d plans, %d fit in %g GiB" %
                 (a.model, a.gpus, a.batch, a.framework, len(plans), fits, a.gpu_gib),
                 fontsize=10)
    ax.legend(markerscale=3, fontsize=8)
    fig.subplots_adjust(left=0.1, right=0.97, top=0.93, bottom=0.1)
    fig.savefig(a.out)
    print("plot_plans: %d plans (%d fit in %g GiB) -> %s" % (len(plans), fits, a.gpu_gib, a.out))


if __name__ == "__main__":
    main()
