"""Deployment folders: the ONNX model beside the configs that deployment code reads.

PaddleX / PaddleOCR 3.x's ONNX Runtime backend, FastDeploy and PaddleDetection's
``deploy/python`` read an ONNX model folder the way they read the Paddle one: the model plus
``inference.yml`` / ``infer_cfg.yml`` / ``deploy.yaml``, PaddleNLP's model and tokenizer
files, PaddleTS's ``scaler.pkl``. ``export_folder`` writes ``OUTDIR/<stem>.onnx`` (named
after the program: ``inference.json`` -> ``inference.onnx``) and copies those configs - only
those: never the weights, never other files. The folder appears whole or not at all.
"""

from __future__ import annotations

import logging
import os
import shutil
from dataclasses import dataclass, field
from typing import Any

from pd2onnx.errors import UsageError

log = logging.getLogger(__name__)

# Files the toolkits' deployment code reads beside the model (copied as they are).
DEPLOYMENT_CONFIGS = (
    "inference.yml", "inference.yaml",  # PaddleX, PaddleOCR 3.x, PaddleClas
    "infer_cfg.yml",  # PaddleDetection
    "deploy.yaml", "deploy.yml",  # PaddleSeg
    # PaddleNLP: model config, tokenizer config and vocabularies
    "config.json", "generation_config.json", "tokenizer_config.json", "special_tokens_map.json",
    "added_tokens.json", "chat_template.json", "tokenizer.json", "vocab.txt", "vocab.json", "merges.txt",
    "sentencepiece.bpe.model", "spiece.model", "tokenizer.model",
    "scaler.pkl",  # PaddleTS (PaddleX time-series models)
)


def is_folder_target(output: str) -> bool:
    """``-o`` names a folder: an existing directory, or a path ending in a separator."""
    return output.endswith(("/", os.sep)) or os.path.isdir(output)


def shown_path(path: str) -> str:
    """``path`` relative to the working directory when it is below it (for messages)."""
    rel = os.path.relpath(path)
    return path if rel.startswith("..") else rel


def onnx_name(model_file: str) -> str:
    """``<stem>.onnx`` for the program file (``__model__`` and ``model`` -> ``model.onnx``)."""
    name = os.path.basename(model_file)
    for suffix in (".json", ".pdmodel"):
        if name.endswith(suffix):
            name = name[: -len(suffix)]
            break
    return "model.onnx" if name in ("__model__", "model", "") else name + ".onnx"


def deployment_configs(model_dir: str) -> list[str]:
    """The deployment configs present in ``model_dir`` (names, in DEPLOYMENT_CONFIGS order)."""
    return [n for n in DEPLOYMENT_CONFIGS if os.path.isfile(os.path.join(model_dir, n))]


@dataclass
class FolderPlan:
    """What ``export_folder`` writes: the ONNX file and the configs copied into ``out_dir``."""

    model_file: str
    out_dir: str
    onnx_file: str
    configs: list[str] = field(default_factory=list)  # source paths

    def targets(self) -> list[str]:
        return [self.onnx_file] + [os.path.join(self.out_dir, os.path.basename(c)) for c in self.configs]


def plan_folder(model_file: str, out_dir: str, *, copy_configs: bool = True, overwrite: bool = False) -> FolderPlan:
    """Decide the files; refuse (before any work) outputs that exist unless ``overwrite``.
    Configs that already are the very files (output into the model's own folder) are kept."""
    out_dir = os.path.abspath(out_dir)
    if os.path.exists(out_dir) and not os.path.isdir(out_dir):
        raise UsageError("the output folder is a file", file=out_dir, hint="give a folder (ending in /) or a .onnx file name")
    model_dir = os.path.dirname(os.path.abspath(model_file))
    configs = []
    for name in deployment_configs(model_dir) if copy_configs else []:
        source, target = os.path.join(model_dir, name), os.path.join(out_dir, name)
        if not (os.path.exists(target) and os.path.samefile(source, target)):
            configs.append(source)
    plan = FolderPlan(model_file, out_dir, os.path.join(out_dir, onnx_name(model_file)), configs)
    existing = [os.path.basename(t) for t in plan.targets() if os.path.lexists(t)]
    if existing and not overwrite:
        raise UsageError(
            f"the output folder already holds {', '.join(existing)}",
            file=out_dir,
            hint="pass --overwrite (overwrite=True) to replace them, or choose another output folder",
        )
    if not writable_ancestor(out_dir):
        raise UsageError("the output folder cannot be created here (no writable parent folder)", file=out_dir)
    return plan


def staging_prefix(pid: int) -> str:
    """How the hidden staging folders of process ``pid`` start (``batch`` removes those of a
    worker that died)."""
    return f".pd2onnx-{pid}-"


def writable_ancestor(path: str) -> str | None:
    """The nearest existing folder at or above ``path``, if writable."""
    while not os.path.isdir(path):
        parent = os.path.dirname(path)
        if parent == path:
            return None
        path = parent
    return path if os.access(path, os.W_OK) else None


def write_folder(model: Any, plan: FolderPlan, external_data: bool | str | None = None) -> list[str]:
    """Write the ONNX model and copy the configs: into a hidden folder beside the target
    first, then moved into place (the whole folder at once when it did not exist; else file
    by file, configs first and the model last). Returns the paths written."""
    from pd2onnx.onnx_io import save_model

    base = writable_ancestor(plan.out_dir)
    if base is None:
        raise UsageError("the output folder cannot be created here (no writable parent folder)", file=plan.out_dir)
    import uuid  # here: only a folder export needs it (2 ms of every conversion's start-up)

    staging = os.path.join(base, f"{staging_prefix(os.getpid())}{uuid.uuid4().hex[:8]}")
    os.mkdir(staging)
    try:
        for source in plan.configs:
            shutil.copy2(source, os.path.join(staging, os.path.basename(source)))
        written = save_model(model, os.path.join(staging, os.path.basename(plan.onnx_file)), external_data)
        names = [os.path.basename(c) for c in plan.configs] + [os.path.basename(w) for w in written[1:]] + \
            [os.path.basename(written[0])]
        if not os.path.isdir(plan.out_dir):
            os.makedirs(os.path.dirname(plan.out_dir), exist_ok=True)
            os.rename(staging, plan.out_dir)
        else:
            for name in names:
                os.replace(os.path.join(staging, name), os.path.join(plan.out_dir, name))
        return [os.path.join(plan.out_dir, n) for n in names]
    finally:
        shutil.rmtree(staging, ignore_errors=True)


@dataclass
class FolderResult:
    onnx_file: str
    files: list[str]  # every path written (the model last)
    configs: list[str]  # names of the configs copied
    opset: int
    nodes: int


def export_folder(
    model: str,
    out_dir: str,
    params_file: str | None = None,
    *,
    copy_configs: bool = True,
    overwrite: bool = False,
    check: bool = False,
    **convert_options: Any,
) -> FolderResult:
    """Convert ``model`` (folder, program file or prefix) into the deployment folder
    ``out_dir``: ``<stem>.onnx`` plus the deployment configs found beside the program.
    ``convert_options`` are those of ``pd2onnx.to_onnx``; ``check`` runs onnx.checker in
    full before writing. Outputs that exist are refused unless ``overwrite``."""
    from pd2onnx.api import check as full_check
    from pd2onnx.api import convert
    from pd2onnx.paddle.loader import locate

    model_file, _, _ = locate(os.fspath(model))
    plan = plan_folder(model_file, os.fspath(out_dir), copy_configs=copy_configs, overwrite=overwrite)
    onnx_model = convert(model_file, params_file, **convert_options)
    if check:
        full_check(onnx_model)
    files = write_folder(onnx_model, plan)
    nodes = sum(1 for _ in onnx_model.graph.all_nodes())
    return FolderResult(plan.onnx_file, files, [os.path.basename(c) for c in plan.configs],
                        onnx_model.opset_imports[""], nodes)
