"""Model folders as Paddle's toolkits leave them, assembled from programs Paddle saved for the
tests (the ``smoke_cnn`` case: conv + batch_norm + fc + softmax, both formats; the
one-file-per-parameter layouts of tests/reader/cases_layouts.py) plus the files each toolkit
writes beside the model (contents minimal) and files people keep there (notes, metrics).

Used by tests/test_folders.py and tools/make_smoke_fixtures.py (the clean-install smoke
stage's fixtures).
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass

_INFER_CFG = """mode: paddle
draw_threshold: 0.5
metric: COCO
use_dynamic_shape: false
arch: YOLO
min_subgraph_size: 3
Preprocess:
- interp: 2
  keep_ratio: false
  target_size: [8, 8]
  type: Resize
- type: Permute
label_list:
- cat
- dog
- bird
"""
_INFERENCE_YML = """Global:
  model_name: SmallCNN
PreProcess:
  transform_ops:
  - ResizeImage:
      size: [8, 8]
  - NormalizeImage:
      mean: [0.485, 0.456, 0.406]
      std: [0.229, 0.224, 0.225]
  - ToCHWImage: null
PostProcess:
  Topk:
    topk: 1
    label_list: [cat, dog, bird]
"""
_DEPLOY_YAML = """Deploy:
  input_shape: [-1, 3, 8, 8]
  model: model.pdmodel
  output_dtype: float32
  output_op: softmax
  params: model.pdiparams
  transforms:
  - type: Normalize
"""
_NLP = {
    "config.json": json.dumps({"architectures": ["SmallCNNForSequenceClassification"], "hidden_size": 4,
                               "num_labels": 3, "dtype": "float32"}),
    "tokenizer_config.json": json.dumps({"tokenizer_class": "BertTokenizer", "do_lower_case": True,
                                         "model_max_length": 8}),
    "special_tokens_map.json": json.dumps({"unk_token": "[UNK]", "pad_token": "[PAD]", "cls_token": "[CLS]",
                                           "sep_token": "[SEP]", "mask_token": "[MASK]"}),
    "generation_config.json": json.dumps({"max_length": 8, "decode_strategy": "greedy_search"}),
    "vocab.txt": "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\ncat\ndog\nbird\n",
}
# What people keep beside a model: never taken for the program, never copied.
UNRELATED = {
    "notes.json": json.dumps({"trained_on": "a test set", "epochs": 3}),
    "metrics.json": json.dumps({"top1": 0.5, "history": [0.1, 0.2, 0.5]}),
    "README.md": "# a model\n",
}


@dataclass(frozen=True)
class Kind:
    """One folder kind: the program's file stem (None: keep the layout's own names), the
    configs the toolkit writes, and the case that provides the program."""

    name: str
    stem: str | None
    configs: dict[str, str]
    case: str = "smoke_cnn"
    formats: tuple[str, ...] = ("pir", "legacy")


KINDS = {
    k.name: k
    for k in (
        Kind("paddlex", "inference", {"inference.yml": _INFERENCE_YML}),  # also PaddleOCR 3.x
        Kind("paddledet", "model", {"infer_cfg.yml": _INFER_CFG}),
        Kind("paddleseg", "model", {"deploy.yaml": _DEPLOY_YAML}),
        Kind("paddlenlp", "inference", dict(_NLP)),
        Kind("paddle1x", None, {}, case="layout_separate_files", formats=("legacy",)),
        Kind("pir_separate", None, {}, case="layout_pir_separate", formats=("pir",)),
    )
}
ONNX_NAME = {"paddlex": "inference.onnx", "paddledet": "model.onnx", "paddleseg": "model.onnx",
             "paddlenlp": "inference.onnx", "paddle1x": "model.onnx", "pir_separate": "model.onnx"}


def make_folder(kind: Kind, built, target: str) -> str:
    """Write ``target`` as ``kind``'s toolkit leaves a model folder, from a built case."""
    os.makedirs(target, exist_ok=True)
    if kind.stem is None:  # a layout case: copy its model folder as Paddle wrote it
        source = built.model_file
        for name in os.listdir(source):
            path = os.path.join(source, name)
            (shutil.copytree if os.path.isdir(path) else shutil.copy)(path, os.path.join(target, name))
        extra = {"meta.json": json.dumps({"framework": "paddle", "version": "1.8"})}
    else:
        program = built.model_file
        ext = os.path.splitext(program)[1]
        shutil.copy(program, os.path.join(target, kind.stem + ext))
        shutil.copy(os.path.splitext(program)[0] + ".pdiparams", os.path.join(target, kind.stem + ".pdiparams"))
        info = os.path.splitext(program)[0] + ".pdiparams.info"  # Paddle 2.x jit.save writes this pickle
        if os.path.exists(info):
            shutil.copy(info, os.path.join(target, kind.stem + ".pdiparams.info"))
        extra = {}
    for name, text in {**kind.configs, **UNRELATED, **extra}.items():
        with open(os.path.join(target, name), "w") as f:
            f.write(text)
    return target
