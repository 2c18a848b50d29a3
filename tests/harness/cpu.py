"""What this machine's CPU can run of Paddle's CPU kernels.

Paddle 3.3's CPU wheel compiles some fused kernels with AVX-512 instructions and calls them
without checking the CPU: on a CPU without AVX-512 the process dies with SIGILL (seen on an
AMD EPYC with AVX2 only, in ``phi::fusion::FusedLayerNormAvxKernel`` and
``fused_rms_norm_quant``). Cases of those ops take their reference from a numpy rendering of
the kernel there (``case(..., reference=...)``); where the CPU has AVX-512, Paddle's own
outputs are the reference and the rendering is checked against them.
"""

from __future__ import annotations

import functools
import os

# op -> the CPU flag (as /proc/cpuinfo spells it) its Paddle 3.3 CPU kernel needs
PADDLE_KERNEL_NEEDS = {
    "fused_bias_residual_layernorm": "avx512f",
    "fused_rms_norm_quant": "avx512f",
}


@functools.lru_cache(maxsize=1)
def cpu_flags() -> frozenset[str]:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return frozenset(line.split(":", 1)[1].split())
    except OSError:
        pass
    return frozenset()


def paddle_runs(op: str) -> bool:
    """Whether Paddle's CPU kernel of ``op`` runs on this CPU."""
    need = PADDLE_KERNEL_NEEDS.get(op)
    return need is None or need in cpu_flags()


def missing_for(ops) -> list[str]:
    """The ops (of ``ops``) whose Paddle CPU kernel cannot run here, with the flag each needs."""
    return [f"{op} (needs {PADDLE_KERNEL_NEEDS[op]})" for op in ops if not paddle_runs(op)]


def int8_dot_saturates() -> bool:
    """Whether ONNX Runtime's u8s8 integer kernels can saturate here: x86 CPUs without VNNI
    add pairs of u8*s8 products into int16 (vpmaddubsw), which saturates for large weights
    and activations (documented by OpenVINO as the "saturation issue" of pre-VNNI CPUs)."""
    flags = cpu_flags()
    return "sse2" in flags and not flags & {"avx512_vnni", "avx_vnni"}


def native_cpu_class() -> str:
    """The class of ``runtime_notes.CPU_CLASSES`` this CPU belongs to (by its flags): the
    kernels OpenVINO's CPU plugin picks here uncapped. ``"older"`` below AVX2."""
    flags = cpu_flags()
    core = {"avx512f", "avx512bw", "avx512vl", "avx512dq"} <= flags
    if core and {"amx_tile", "amx_bf16"} <= flags:
        return "amx"
    if core and "avx512_bf16" in flags:
        return "avx512_bf16"
    if core:
        return "avx512"
    if {"avx2", "fma"} <= flags:
        return "avx2"
    return "older"


def openvino_cpu_classes() -> list[str]:
    """The CPU classes the OpenVINO checks run under here, the machine's own first: it and
    every lower class of ``CPU_CLASSES`` (capped with ONEDNN_MAX_CPU_ISA). The environment
    variable ``PD2ONNX_OPENVINO_CPUS`` (comma-separated class names, or ``native``) narrows
    that; a class above this CPU's cannot be run and is an error."""
    from pd2onnx.convert.runtime_notes import CPU_CLASSES

    native = native_cpu_class()
    order = list(CPU_CLASSES)
    runnable = [native] + ([c for c in reversed(order[: order.index(native)])] if native in order else [])
    asked = os.environ.get("PD2ONNX_OPENVINO_CPUS", "").strip()
    if not asked:
        return runnable
    chosen = [native if c.strip() == "native" else c.strip() for c in asked.split(",") if c.strip()]
    unknown = [c for c in chosen if c not in runnable]
    if unknown:
        raise RuntimeError(f"PD2ONNX_OPENVINO_CPUS asks for {unknown}: this CPU ({native}) runs {runnable}")
    return list(dict.fromkeys(chosen))
