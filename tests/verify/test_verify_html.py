"""``verify --html``: the page shows the verdict, one point per compared op along the program,
the first divergence and each failed replay marked on the op they name, and the counts; it is
self-contained (nothing fetched) and written whole or not at all. Read back with Python's HTML
parser and, where Debian's chromium is installed, rendered by it headless (its DOM and a
screenshot)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from html.parser import HTMLParser

import pytest

from pd2onnx.cli import main
from pd2onnx.convert.registry import get_mapper, overriding
from pd2onnx.paddle import load
from verify_cases import built, perturbed, save_feeds



class _Page(HTMLParser):
    """The elements of the page, with their attributes and the text of their <title>."""

    def __init__(self):
        super().__init__()
        self.elements: list[tuple[str, dict]] = []
        self.titles: list[tuple[str, dict, str]] = []  # (parent tag, its attrs, title text)
        self.text: list[str] = []
        self._stack: list[tuple[str, dict]] = []
        self._in_title = False

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.elements.append((tag, attrs))
        if tag == "title" and self._stack:
            self._in_title = True
        self._stack.append((tag, attrs))

    def handle_endtag(self, tag):
        while self._stack:
            top, _ = self._stack.pop()
            if top == tag:
                break
        if tag == "title":
            self._in_title = False

    def handle_data(self, data):
        self.text.append(data)
        if self._in_title and len(self._stack) >= 2:
            parent, attrs = self._stack[-2]
            self.titles.append((parent, attrs, data))


def _page(path) -> _Page:
    page = _Page()
    page.feed(open(path, encoding="utf-8").read())
    return page






def test_html_of_a_broken_conversion_marks_the_op(tmp_path):
    case = built("verify_small", "pir")
    program = load(case.model_file)
    tanh = next(op for op in program.main.ops if op.type == "tanh")
    page_file, json_file = tmp_path / "report.html", tmp_path / "report.json"
    with overriding("tanh", perturbed(get_mapper("tanh"))):
        code = main(["verify", case.model_file, "--inputs", save_feeds(case, tmp_path / "in.npz"), "--locate",
                     "--replay", "--json", str(json_file), "--html", str(page_file)])
    assert code == 3
    doc = json.loads(json_file.read_text())
    page = _page(page_file)
    verdict = next(a for t, a in page.elements if a.get("id") == "verdict")
    assert verdict is not None and "mismatch" in "".join(page.text)
    assert any(t == "svg" for t, _ in page.elements)
    label = f"tanh (block {tanh.block_idx}, op #{tanh.index}"
    failed = [text for tag, attrs, text in page.titles if attrs.get("class") == "replay-failed"]
    assert len(failed) == 1 and label in failed[0], failed
    first = [text for tag, attrs, text in page.titles if attrs.get("class") == "first-divergence"]
    assert len(first) == 1 and label in first[0], first
    points = [text for tag, attrs, text in page.titles if attrs.get("class") == "located"]
    assert len(points) == sum(1 for op in doc["ops"] if op.get("located") and op["block"] == 0) > 3
    # self-contained: nothing to fetch
    assert not any(k in ("src", "href") for _, attrs in page.elements for k in attrs)


def test_html_of_an_amplified_model_has_no_failure(tmp_path):
    case = built("verify_amplifier", "pir")
    page_file = tmp_path / "report.html"
    assert main(["verify", case.model_file, "--inputs", save_feeds(case, tmp_path / "in.npz"), "--locate",
                 "--replay", "--html", str(page_file)]) == 0
    page = _page(page_file)
    assert "amplified" in "".join(page.text)
    assert not [a for t, a in page.elements if a.get("class") == "replay-failed"]
    assert [a for t, a in page.elements if a.get("class") == "first-divergence"]  # where the noise left
    _render_in_chromium(page_file, tmp_path)


def test_html_to_an_unwritable_place_is_refused_before_any_work(tmp_path):
    case = built("verify_small", "pir")
    code = main(["verify", case.model_file, "--html", str(tmp_path / "missing" / "r.html")])
    assert code == 1
    assert not os.path.exists(tmp_path / "missing")


def _render_in_chromium(page_file, tmp_path) -> None:
    """Where Debian's chromium is installed: its DOM of the page holds the plot and the
    verdict, and its screenshot is a picture, not an empty page."""
    chromium = shutil.which("chromium")
    if chromium is None:
        return  # the parser above has read the page; a browser is not a test dependency
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             f"--user-data-dir={tmp_path / 'profile'}"]
    dom = subprocess.run([chromium, *flags, "--dump-dom", f"file://{page_file}"], capture_output=True,
                         text=True, timeout=120)
    assert dom.returncode == 0, dom.stderr[-2000:]
    assert "<svg" in dom.stdout and "amplified" in dom.stdout
    shot = tmp_path / "shot.png"
    proc = subprocess.run([chromium, *flags, f"--screenshot={shot}", "--window-size=1040,900",
                           f"file://{page_file}"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and shot.exists(), proc.stderr[-2000:]
    assert shot.stat().st_size > 10_000  # a rendered plot, not a blank page


@pytest.fixture(autouse=True)
def _no_progress(monkeypatch):
    monkeypatch.setenv("PD2ONNX_PROGRESS_DELAY", "1000")
