"""The README leads to every page of docs/, and no relative link in the README or docs/ is broken
(a newcomer found docs/emulator.md reachable from nowhere, issue 19)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
LINK = re.compile(r"\]\(([^)\s]+)\)")
PAGES = sorted([REPO / "README.md", *(REPO / "docs").rglob("*.md")])


def _relative_links(page: Path) -> list[str]:
    return [t for t in LINK.findall(page.read_text(encoding="utf-8")) if not re.match(r"[a-z]+:|#", t)]


def test_the_readme_links_every_page_of_docs() -> None:
    linked = {(REPO / t.split("#")[0]).resolve() for t in _relative_links(REPO / "README.md")}
    pages = sorted((REPO / "docs").glob("*.md"))
    assert pages, "docs/ has pages"
    missing = [str(p.relative_to(REPO)) for p in pages if p.resolve() not in linked]
    assert missing == [], "pages of docs/ the README does not link"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(REPO)))
def test_relative_links_point_at_files(page: Path) -> None:
    broken = [t for t in _relative_links(page) if not (page.parent / t.split("#")[0]).exists()]
    assert broken == [], f"{page.relative_to(REPO)} links to missing files"
