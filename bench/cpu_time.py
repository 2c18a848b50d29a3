"""CPU seconds (user + system) of a whole command, run N times after one warm-up.

    python bench/cpu_time.py 7 pd2onnx convert model.json -o /tmp/out.onnx
    PYTHONPATH=/other/checkout/src python bench/cpu_time.py 7 python -m pd2onnx convert ...

Prints the minimum and the median. On a shared machine CPU time is far steadier than wall
time (bench/run.py measures wall time): other processes delay a command, they add little to
its own CPU seconds. PYTHONDONTWRITEBYTECODE is dropped so that imports run from bytecode,
as they do for users.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time


def main() -> None:
    if len(sys.argv) < 3 or not sys.argv[1].isdigit():
        raise SystemExit(__doc__)
    runs, cmd = int(sys.argv[1]), sys.argv[2:]
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    cpu: list[float] = []
    wall: list[float] = []
    for i in range(runs + 1):
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        _, status, usage = os.wait4(proc.pid, 0)
        elapsed = time.perf_counter() - start
        if status != 0:
            raise SystemExit(f"{' '.join(cmd)} failed:\n{proc.stderr.read().decode()[-2000:]}")
        if i:  # the first run warms the page cache and writes bytecode
            cpu.append(usage.ru_utime + usage.ru_stime)
            wall.append(elapsed)
    print(f"cpu min {min(cpu):.3f} s, median {statistics.median(cpu):.3f} s; wall median {statistics.median(wall):.3f} s "
          f"({runs} runs)")


if __name__ == "__main__":
    main()
