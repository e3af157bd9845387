"""Evaluation reports embed their PNG plots, and every plot they name exists (docs/evaluation)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EVALUATION = ROOT / "docs" / "evaluation"
PNG = b"\x89PNG\r\n\x1a\n"
EMBED = re.compile(r"!\[[^\]]*\]\(([^)\s]+\.png)\)")
ANY_REF = re.compile(r"\]\(([^)\s]+\.png)\)|`((?:docs/evaluation/)?img/[\w.-]+\.png)`")
REPORTS = sorted(p for p in EVALUATION.glob("*.md") if not p.stem.endswith("-results"))


def _refs(page: Path) -> set[str]:
    return {a or b for a, b in ANY_REF.findall(page.read_text(encoding="utf-8"))}


def test_there_are_reports() -> None:
    assert {p.stem for p in REPORTS} >= {"harvesting", "hdfs_grid", "phoenix", "jockey"}


@pytest.mark.parametrize("page", REPORTS, ids=lambda p: p.name)
def test_each_report_embeds_a_plot(page: Path) -> None:
    assert EMBED.findall(page.read_text(encoding="utf-8")), f"{page.name} embeds no PNG (![...](img/....png))"


@pytest.mark.parametrize("page", sorted(EVALUATION.glob("*.md")), ids=lambda p: p.name)
def test_every_plot_a_page_names_exists_and_is_a_png(page: Path) -> None:
    for ref in _refs(page):
        path = (ROOT / ref) if ref.startswith("docs/") else (page.parent / ref)
        assert path.is_file(), f"{page.name} names {ref}, which does not exist"
        assert path.read_bytes()[:8] == PNG and path.stat().st_size > 2000, f"{ref} is not a real PNG plot"


def test_every_plot_is_embedded_somewhere() -> None:
    embedded = {(page.parent / ref).resolve() for page in EVALUATION.glob("*.md")
                for ref in EMBED.findall(page.read_text(encoding="utf-8"))}
    orphans = [p.name for p in sorted((EVALUATION / "img").glob("*.png")) if p.resolve() not in embedded]
    assert orphans == [], f"plots no report embeds (only linked or not at all): {orphans}"
