"""CPU seconds (user + system) of whole commands, run N times each after one warm-up.

    python bench/cpu_time.py 7 pd2onnx convert model.json -o /tmp/out.onnx
    PYTHONPATH=/other/checkout/src python bench/cpu_time.py 7 python -m pd2onnx convert ...
    python bench/cpu_time.py 7 CMD_A ... ::: CMD_B ... [::: CMD_C ...]   # paired: A B C A B C ...

Prints the minimum and the median of each command (and, paired, the median of the per-round
ratios to the first command). On a shared machine CPU time is far steadier than wall time
(bench/run.py measures wall time): other processes delay a command, they add little to its own
CPU seconds; alternating the commands spreads what load remains over all of them alike.
PYTHONDONTWRITEBYTECODE is dropped so that imports run from bytecode, as they do for users.
A leading ``PYTHONPATH=DIR`` word in a command sets that variable for it alone.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time


def _split(words: list[str]) -> list[list[str]]:
    cmds: list[list[str]] = [[]]
    for w in words:
        if w == ":::":
            cmds.append([])
        else:
            cmds[-1].append(w)
    return [c for c in cmds if c]


def _run(cmd: list[str], base_env: dict[str, str]) -> tuple[float, float]:
    env = dict(base_env)
    while cmd and "=" in cmd[0] and cmd[0].split("=", 1)[0].isupper():
        key, value = cmd[0].split("=", 1)
        env[key] = value
        cmd = cmd[1:]
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - start
    if status != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{proc.stderr.read().decode()[-2000:]}")
    return usage.ru_utime + usage.ru_stime, elapsed


def main() -> None:
    if len(sys.argv) < 3 or not sys.argv[1].isdigit():
        raise SystemExit(__doc__)
    runs, cmds = int(sys.argv[1]), _split(sys.argv[2:])
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    cpu: list[list[float]] = [[] for _ in cmds]
    wall: list[list[float]] = [[] for _ in cmds]
    for i in range(runs + 1):
        for k, cmd in enumerate(cmds):
            c, w = _run(cmd, env)
            if i:  # the first round warms the page cache and writes bytecode
                cpu[k].append(c)
                wall[k].append(w)
    for k, cmd in enumerate(cmds):
        line = (f"cpu min {min(cpu[k]):.3f} s, median {statistics.median(cpu[k]):.3f} s; "
                f"wall median {statistics.median(wall[k]):.3f} s ({runs} runs)")
        if k:
            ratio = statistics.median(a / b for a, b in zip(cpu[k], cpu[k - 1]))
            line += f"; median ratio to the one before {ratio:.2f}"
        print(f"[{k}] {' '.join(cmd)[:100]}\n    {line}")


if __name__ == "__main__":
    main()
