"""Shared by the toolkit build scripts (``tools/<toolkit>_models.py``), which run inside the
toolkits' own virtual environments, without the test harness: run Paddle's inference
predictor on a saved model and write the ``io.npz`` the model tests read."""

from __future__ import annotations

import numpy as np


def predict(model_file: str, params_file: str, feeds: dict) -> tuple[list[str], list[np.ndarray]]:
    """(input names in the predictor's feed order, outputs) of Paddle's CPU predictor, with
    graph optimizations and oneDNN off (the plain kernels the conversion is compared with)."""
    import paddle.inference as pi

    config = pi.Config(model_file, params_file)
    config.disable_gpu()
    config.switch_ir_optim(False)
    config.disable_glog_info()
    if hasattr(config, "disable_mkldnn"):
        config.disable_mkldnn()
    predictor = pi.create_predictor(config)
    names = predictor.get_input_names()
    for feed in names:
        handle = predictor.get_input_handle(feed)
        handle.reshape(feeds[feed].shape)
        handle.copy_from_cpu(feeds[feed])
    predictor.run()
    return names, [predictor.get_output_handle(o).copy_to_cpu() for o in predictor.get_output_names()]


def save_io(path: str, names: list[str], feeds: dict, outs: list[np.ndarray]) -> None:
    """``in<i>`` in feed order and ``out<i>``, as ``harness.check.load_io`` reads them."""
    arrays = {f"in{i}": feeds[feed] for i, feed in enumerate(names)}
    arrays.update({f"out{i}": o for i, o in enumerate(outs)})
    np.savez(path, **arrays)
