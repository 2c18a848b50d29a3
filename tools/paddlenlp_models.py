"""Build a tiny PaddleNLP LLaMA with random weights, save it as a Paddle inference model and
record Paddle's inference outputs on seeded token ids of two batch sizes and lengths.

Runs inside the paddlenlp virtual environment (tools/setup_paddlenlp.sh), never in the
project's own: ``python tools/paddlenlp_models.py NAME OUT_DIR``. Writes the saved model
(``model.json`` with Paddle 3's PIR, ``model.pdiparams``) and ``io.npz``, ``io_b.npz`` (batch 2 x
length 11 and 1 x 6: inputs ``in<i>`` in the predictor's feed order, outputs ``out<i>``).

The model is PaddleNLP's own ``LlamaForCausalLM`` (2 layers, hidden 64, 4 query heads over 2
key/value heads, ``fuse_attention_qkv`` and ``fuse_attention_ffn``, so that the MLP is one
one-input ``swiglu`` over the fused gate/up projection), its forward (token ids to logits, no
cache) saved with ``paddle.jit.save`` on ``input_ids`` of dynamic batch and length. PaddleNLP's
own exports are not used: ``llm/predict/export_model.py`` (not in the wheel) writes the fused
inference model (block attention and fused ops, for GPU inference), and
``to_static`` saves the sampling loop (``sample_d2s``: a while loop over top-p sampling, random).
On CPU PaddleNLP itself takes its unfused paths for rotary embedding (Paddle has no CPU
kernel for ``fused_rotary_position_embedding``; PaddleNLP turns ``use_fused_rope`` off) and
for RMSNorm (its fused path imports the GPU-only ``fused_ln`` extension), so the saved graph
holds ``swiglu`` and the decomposed rotary embedding, RMSNorm, causal mask and attention;
``llama_tiny_fused_norm`` (below) takes the fused RMSNorm path through Paddle's own op.
Weights are drawn at 1/sqrt(fan_in) scale (not PaddleNLP's 0.02) and the RMSNorm scales spread
around 1, so that logits vary by a few units.
"""

from __future__ import annotations

import os
import sys

import numpy as np
import paddle
from toolkit_io import predict, save_io

MODELS = {
    "llama_tiny": dict(
        vocab_size=256,
        hidden_size=64,
        intermediate_size=96,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=64,
        rms_norm_eps=1e-6,
        use_fused_rope=False,
        use_fused_rms_norm=False,
        use_flash_attention=False,
        tie_word_embeddings=False,
    ),
}
# The same model with PaddleNLP's fused RMSNorm path (use_fused_rms_norm). PaddleNLP sends it to
# its fused_ln extension, built for GPUs only; here its rms_norm_fused is pointed at Paddle's own
# paddle.incubate.nn.functional.fused_rms_norm (what PaddleNLP itself calls on intel_hpu), which
# has a CPU kernel, so the saved graph holds Paddle's fused RMSNorm op in each of the 5 norms.
MODELS["llama_tiny_fused_norm"] = dict(MODELS["llama_tiny"], use_fused_rms_norm=True)


def _paddle_fused_rms_norm(x, weight, eps, use_fast_ln=False):
    from paddle.incubate.nn.functional import fused_rms_norm

    return fused_rms_norm(x, weight, None, eps, x.ndim - 1)[0]


def _composite_rms_norm(x, weight, eps, use_fast_ln=False):
    """fused_rms_norm spelled out in Paddle ops: the reference on CPUs without AVX-512, where
    Paddle 3.3's fused_rms_norm CPU kernel dies with SIGILL (tests/harness/cpu.py)."""
    return x * paddle.rsqrt((x * x).mean(axis=-1, keepdim=True) + eps) * weight


def _has_avx512() -> bool:
    with open("/proc/cpuinfo") as f:
        return any(line.startswith("flags") and "avx512f" in line.split() for line in f)


class _Logits(paddle.nn.Layer):
    """Token ids to logits, no cache: the forward a causal LM runs on a prompt."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_ids):
        return self.model(input_ids, use_cache=False, return_dict=False)[0]


def build(name: str, out_dir: str, shapes=((2, 11), (1, 6))) -> None:
    """One io file per (batch, length): ``io.npz``, ``io_b.npz``."""
    from paddlenlp.transformers import LlamaConfig, LlamaForCausalLM

    os.makedirs(out_dir, exist_ok=True)
    rng = np.random.default_rng(0)
    paddle.seed(0)
    config = LlamaConfig(**MODELS[name])
    # Set after construction: PretrainedConfig.__init__ (run last) resets both to False.
    config.fuse_attention_ffn = True
    config.fuse_attention_qkv = True
    if config.use_fused_rms_norm:
        config.use_fast_layer_norm = False  # read by the fused path, set by PaddleNLP's trainer
        from paddlenlp.transformers.llama import fusion_ops

        fusion_ops.rms_norm_fused = _paddle_fused_rms_norm
    model = LlamaForCausalLM(config)
    model.eval()
    for pname, param in model.named_parameters():
        shape = list(param.shape)
        if "norm" in pname:
            value = rng.uniform(0.5, 1.5, shape)
        elif len(shape) == 2 and "embed_tokens" in pname:
            value = rng.normal(0.0, 1.0, shape)
        else:
            value = rng.normal(0.0, 1.0 / np.sqrt(shape[0]), shape)
        param.set_value(value.astype("float32"))
    layer = _Logits(model)
    spec = [paddle.static.InputSpec([None, None], "int64", "input_ids")]
    static = paddle.jit.to_static(layer, input_spec=spec, full_graph=True)
    paddle.jit.save(static, os.path.join(out_dir, "model"))
    model_file = os.path.join(out_dir, "model.json")
    composite = config.use_fused_rms_norm and not _has_avx512()
    if composite:  # the saved graph keeps the fused op; only the reference is computed without it
        fusion_ops.rms_norm_fused = _composite_rms_norm
        paddle.jit.enable_to_static(False)  # run the layer's Python forward, not the saved program
        print(f"{name}: reference from the eager model with RMSNorm spelled out (this CPU lacks AVX-512)")
    for k, (batch, length) in enumerate(shapes):
        feeds = {"input_ids": rng.integers(0, config.vocab_size, (batch, length)).astype("int64")}
        with paddle.no_grad():  # no backward program (fused_rms_norm has no float32 CPU grad)
            eager = layer(paddle.to_tensor(feeds["input_ids"])).numpy()
        if composite:
            names, outs = ["input_ids"], [eager]
        else:
            names, outs = predict(model_file, os.path.join(out_dir, "model.pdiparams"), feeds)
            np.testing.assert_allclose(outs[0], eager, rtol=1e-4, atol=1e-4)
        save_io(os.path.join(out_dir, "io.npz" if k == 0 else "io_b.npz"), names, feeds, outs)
        print(
            f"{name} {batch}x{length}: inputs {names}, outputs {[o.shape for o in outs]}, std {outs[0].std():.3f}"
        )


if __name__ == "__main__":
    build(sys.argv[1], sys.argv[2])
