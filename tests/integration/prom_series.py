#!/usr/bin/env python3
"""prom_series.py PER_STEP STEP:INSTANCE:FILE... — promtool's input_series
from .prom files that real runs wrote.

Each FILE is what the textfile collector would have read from INSTANCE
during step STEP (0, 1, ...): every sample line of it becomes a series with
instance="INSTANCE" added to its labels, holding its value for PER_STEP
samples (1m apart) of that step, and `_` (no sample) in steps where no file
of that instance has it. Prints the YAML list for a test's input_series.
"""

import re
import sys

LINE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s+(\S+)$')


def main():
    per = int(sys.argv[1])
    steps = {}
    n = 0
    for arg in sys.argv[2:]:
        step, inst, path = arg.split(":", 2)
        step = int(step)
        n = max(n, step + 1)
        for line in open(path, encoding="utf-8"):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            m = LINE.match(line)
            if not m:
                sys.exit("prom_series.py: %s: not a sample line: %r" % (path, line))
            labels = m.group(3) or ""
            labels = ("%s,instance=\"%s\"" % (labels, inst)) if labels else "instance=\"%s\"" % inst
            key = "%s{%s}" % (m.group(1), labels)
            steps.setdefault(key, {})[step] = m.group(4)
    for key in sorted(steps):
        vals = []
        for s in range(n):
            vals += [steps[key].get(s, "_")] * per
        print("      - series: '%s'" % key)
        print("        values: '%s'" % " ".join(vals))


main()
