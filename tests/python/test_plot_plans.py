"""examples/plot_plans.py draws a PNG of a small sweep (matplotlib, Agg)."""

import os
import re
import subprocess
import sys
import tempfile
import unittest

import stg

EXAMPLE = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "plot_plans.py")


class PlotPlansTest(unittest.TestCase):
    def test_writes_a_png_of_every_plan(self):
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "plans.png")
            p = subprocess.run([sys.executable, EXAMPLE, "--model", "llama3-8b", "--gpus", "16",
                                "--batch", "32", "--out", out],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            self.assertEqual(p.returncode, 0, p.stderr)
            with open(out, "rb") as f:
                self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")
        plans = stg.plans(model="llama3-8b", gpus=16, batch=32, framework="megatron")
        m = re.match(r"plot_plans: (\d+) plans \((\d+) fit in 80 GiB\)", p.stdout)
        self.assertIsNotNone(m, p.stdout)
        self.assertEqual(int(m.group(1)), len(plans))
        self.assertEqual(int(m.group(2)), sum(1 for r in plans if r["memory_gib"] <= 80))


if __name__ == "__main__":
    unittest.main()
