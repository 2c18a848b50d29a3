"""Which file in a folder is the Paddle program: by content, never by suffix alone.

Model folders hold more than the model: PaddleNLP writes ``config.json``,
``tokenizer_config.json`` and friends beside ``inference.json``, PaddleX writes
``inference.yml``, people keep notes and metrics in JSON. So a candidate file is checked:

- ``*.json`` is a program only if it is a Paddle PIR program. That is recognised from the
  file's first and last bytes (``base_code.magic == "pir"``; Paddle writes ``base_code``
  first, a re-saved file may hold it last), never by parsing a large unrelated JSON;
- ``*.pdmodel``, ``__model__`` and ``model`` only if they parse as a ProgramDesc with at
  least one op (read only when more than one candidate is left).

``X.json`` beside ``X.pdmodel`` is one model in two formats (the PIR file is read). Among
several programs, the one with its weights beside it is taken; two programs that both have
weights (or neither has) are a real ambiguity and an error naming them.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

from pd2onnx.errors import ModelFormatError

PROGRAM_SUFFIXES = (".json", ".pdmodel")
BARE_PROGRAM_NAMES = ("__model__", "model")  # program files without a suffix (Paddle 1.x)
PARAMS_SUFFIX = ".pdiparams"
COMBINED_NAMES = ("__params__", "params")  # combined params files without a suffix
# bare program name -> the combined params file written with it
BARE_PARAMS = {"__model__": "__params__", "model": "params"}

_SNIFF_BYTES = 1 << 16
_BOM = b"\xef\xbb\xbf"  # a UTF-8 byte order mark some editors write when re-saving
_PIR_HEAD = re.compile(rb'\A(?:\xef\xbb\xbf)?\s*\{\s*"base_code"\s*:\s*\{[^{}]*"magic"\s*:\s*"pir"')
_PIR_TAIL = re.compile(rb'"base_code"\s*:\s*\{[^{}]*"magic"\s*:\s*"pir"[^{}]*\}\s*\}\s*\Z')


@dataclass
class Discovery:
    """The program taken from a folder, and every candidate left aside with why."""

    directory: str
    model: str
    ignored: list[tuple[str, str]] = field(default_factory=list)  # (file name, why)


def looks_like_json(head: bytes) -> bool:
    """The first bytes open a JSON object (after an optional byte order mark and spaces)."""
    return head.removeprefix(_BOM).lstrip()[:1] == b"{"


def is_pir_program(path: str) -> bool:
    """True when ``path`` looks like a Paddle PIR program; reads at most 128 KB."""
    try:
        with open(path, "rb") as f:
            head = f.read(_SNIFF_BYTES)
            if _PIR_HEAD.search(head):
                return True
            if not looks_like_json(head):
                return False
            size = os.fstat(f.fileno()).st_size
            if size <= _SNIFF_BYTES:
                return bool(_PIR_TAIL.search(head))
            f.seek(size - _SNIFF_BYTES)
            return bool(_PIR_TAIL.search(f.read()))
    except OSError:
        return False


def program_desc_problem(path: str) -> str | None:
    """None when ``path`` parses as a ProgramDesc holding ops (or is a PIR program under a
    legacy name: the reader goes by content too), else what is wrong."""
    from pd2onnx.paddle.legacy import parse_program_desc

    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as exc:
        return f"unreadable ({exc.strerror})"
    if looks_like_json(data[:64]):
        return None if is_pir_program(path) else "a JSON file that is not a Paddle PIR program"
    try:
        desc = parse_program_desc(data, path)
    except ModelFormatError as exc:
        return exc.message
    if not any(op.HasField("type") for op in desc.blocks[0].ops):
        return "parses as protobuf but holds no Paddle program (no ops in block 0)"
    return None


def _candidates(directory: str) -> list[str]:
    try:
        listed = os.listdir(directory)
    except OSError as exc:
        raise ModelFormatError(f"cannot list the directory ({exc.strerror})", file=directory,
                               hint="check the path and its permissions") from None
    names = []
    for name in sorted(listed):
        if (name.endswith(PROGRAM_SUFFIXES) or name in BARE_PROGRAM_NAMES) and \
                os.path.isfile(os.path.join(directory, name)):
            names.append(name)
    return names


def _stem(name: str) -> str:
    for suffix in PROGRAM_SUFFIXES:
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def own_weights(model_file: str) -> str | None:
    """The combined params file written with this program (same stem, or ``__params__`` /
    ``params`` for the bare names), if it is there."""
    directory, name = os.path.split(model_file)
    names = [_stem(name) + PARAMS_SUFFIX, name + PARAMS_SUFFIX]
    if _stem(name) in BARE_PARAMS:
        names.append(BARE_PARAMS[_stem(name)])
    for cand in names:
        if os.path.isfile(os.path.join(directory, cand)):
            return os.path.join(directory, cand)
    return None


def _has_weights(model_file: str) -> bool:
    """Its own combined params file, or (one file per variable) the file of its first
    parameter; a program without parameters has none."""
    if own_weights(model_file):
        return True
    from pd2onnx.paddle.loader import read_program
    from pd2onnx.paddle.params import variable_file

    try:
        _, expected = read_program(model_file)
        return bool(expected) and os.path.isfile(variable_file(os.path.dirname(model_file), expected[0].name))
    except ModelFormatError:
        return False


def _programs(directory: str, parse_all: bool) -> tuple[list[str], list[tuple[str, str]]]:
    """(program file names, ignored (name, why)) by name and content. Legacy candidates are
    parsed when ``parse_all`` or when more than one candidate is left."""
    ignored: list[tuple[str, str]] = []
    by_stem: dict[str, list[str]] = {}
    for name in _candidates(directory):
        if name.endswith(".json") and not is_pir_program(os.path.join(directory, name)):
            ignored.append((name, "not a Paddle PIR program: no base_code.magic 'pir'"))
        else:
            by_stem.setdefault(_stem(name) if name.endswith(PROGRAM_SUFFIXES) else f"{name}/", []).append(name)
    programs = []
    for names in by_stem.values():  # X.json and X.pdmodel: one model in two formats
        pir = [n for n in names if n.endswith(".json")]
        chosen = pir[0] if pir else names[0]
        programs.append(chosen)
        ignored += [(n, f"the same model as {chosen} in the legacy format; the PIR file is read")
                    for n in names if n != chosen]
    if parse_all or len(programs) > 1:
        kept = []
        for name in programs:
            problem = None if name.endswith(".json") else program_desc_problem(os.path.join(directory, name))
            if problem:
                ignored.append((name, problem))
            else:
                kept.append(name)
        programs = kept
    return programs, ignored


def discover(directory: str) -> Discovery:
    """The one program in ``directory`` (see the module doc); a ModelFormatError names
    every file looked at when there is none, or the programs when there are several."""
    programs, ignored = _programs(directory, parse_all=False)
    if len(programs) > 1:
        weighted = [n for n in programs if _has_weights(os.path.join(directory, n))]
        if len(weighted) == 1:
            ignored += [(n, f"no weights beside it (unlike {weighted[0]})") for n in programs if n != weighted[0]]
            programs = weighted
        else:
            which = "each with its weights" if weighted else "none with weights beside it"
            names = ", ".join(weighted or programs)
            raise ModelFormatError(
                f"the directory holds {len(weighted or programs)} different programs: {names} ({which})",
                file=directory,
                hint="pick one: pass the file itself (e.g. DIR/" + (weighted or programs)[0] + ") or "
                "--model_filename NAME with --model_dir DIR",
            )
    if not programs:
        looked = "; ".join(f"{n}: {why}" for n, why in sorted(ignored))
        raise ModelFormatError(
            "no Paddle program in this directory (looked for *.json, *.pdmodel, __model__, model"
            + (f"; {looked})" if looked else ": none there)"),
            file=directory,
            hint="pass the directory or file written by paddle.jit.save / save_inference_model",
        )
    return Discovery(directory, os.path.join(directory, programs[0]), sorted(ignored))


def find_model_dirs(root: str, skip: tuple[str, ...] = ()) -> list[str]:
    """Every folder under ``root`` (itself included) holding a program by name and content,
    sorted; hidden folders and those in ``skip`` are not entered. Folders whose programs
    are ambiguous are included: converting them reports why."""
    found = []
    skip_abs = {os.path.abspath(s) for s in skip}
    for dirpath, dirnames, _ in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".")
                             and os.path.abspath(os.path.join(dirpath, d)) not in skip_abs)
        if _programs(dirpath, parse_all=True)[0]:
            found.append(dirpath)
    return sorted(found)
