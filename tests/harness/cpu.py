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
