"""The repository stands alone: a user who clones it has no shared folder of the team beside it. Nothing in it may
point there (specs quote their sources; digests live in ``docs/rules/``, the source documents
are listed by title in ``docs/sources.md``)."""
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SKIP_DIRS = {".git", ".venv", "build", "dist", "results", "__pycache__", ".pytest_cache", ".hypothesis"}
OUTSIDE = re.compile(r"\.\./shared|\bshared/(rules|seeds|STYLE|hooks)|\bseeds/\d{3}_[0-9a-f]{8,}")


def repository_text_files():
    for path in sorted(ROOT.rglob("*")):
        rel = path.relative_to(ROOT)
        if not path.is_file() or any(part in SKIP_DIRS or part.endswith(".egg-info") for part in rel.parts):
            continue
        try:
            yield rel, path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue   # binary (png, parquet, numba caches)


def test_no_file_refers_outside_the_repository():
    offenders = [f"{rel}:{n}: {line.strip()[:120]}" for rel, text in repository_text_files()
                 for n, line in enumerate(text.splitlines(), 1) if OUTSIDE.search(line)]
    assert not offenders, "files pointing outside the repository:\n" + "\n".join(offenders)


def test_every_game_has_its_digest_and_spec_in_the_repository():
    sources = (ROOT / "docs" / "sources.md").read_text()
    for game in ("uboat_leader", "b17", "dystopian_wars", "breaking_news", "hacse_naval"):
        assert f"`{game}`" in sources
        assert (ROOT / "docs" / "models" / f"{game}.md").is_file()
    for digest in re.findall(r"\(rules/([a-z0-9_]+\.md)\)", sources):
        assert (ROOT / "docs" / "rules" / digest).is_file(), digest
