"""``analyzer list`` reads the catalog from a cache keyed by a fingerprint of the sources and
shipped data: the cached listing is the built one, and any change to those files rebuilds it."""
import json
import os

from analyzer.outputs import catalog_cache
from analyzer.outputs.catalog import catalog


def test_the_cached_listing_is_the_built_one_and_a_source_edit_rebuilds_it(tmp_path, monkeypatch):
    monkeypatch.setenv("WARGAME_ANALYZER_CACHE", str(tmp_path / "cache"))
    built = json.loads(json.dumps(catalog(), default=str))
    assert catalog_cache.cached_catalog() == built                 # built and saved
    files = list((tmp_path / "cache").glob("catalog-*.json"))
    assert len(files) == 1 and json.loads(files[0].read_text()) == built
    assert catalog_cache.cached_catalog("b17") == {"b17": built["b17"]}

    # a fake source tree: editing a file (size or mtime) changes the fingerprint
    src = tmp_path / "src"
    (src / "pkg").mkdir(parents=True)
    (src / "pkg" / "mod.py").write_text("x = 1\n")
    monkeypatch.setattr(catalog_cache, "_source_roots", lambda: [(src, (".py",))])
    before = catalog_cache.fingerprint()
    (src / "pkg" / "mod.py").write_text("x = 22\n")
    assert catalog_cache.fingerprint() != before
    st = os.stat(src / "pkg" / "mod.py")
    again = catalog_cache.fingerprint()
    os.utime(src / "pkg" / "mod.py", ns=(st.st_atime_ns, st.st_mtime_ns + 1))
    assert catalog_cache.fingerprint() != again
    (src / "pkg" / "notes.txt").write_text("not a source")             # other files do not count
    assert catalog_cache.fingerprint() == catalog_cache.fingerprint()

    # a corrupt cache file is rebuilt, not shown
    path = tmp_path / "cache" / f"catalog-{catalog_cache.fingerprint()}.json"
    path.write_text("{not json")
    assert catalog_cache.cached_catalog() == built
    assert json.loads(path.read_text()) == built
    assert len(list((tmp_path / "cache").glob("catalog-*.json"))) == 1   # the old listing was removed


def test_an_unwritable_cache_folder_only_costs_the_rebuild(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("a file where the cache folder should be")
    monkeypatch.setenv("WARGAME_ANALYZER_CACHE", str(blocker / "cache"))
    assert catalog_cache.cached_catalog("dice") == json.loads(json.dumps(catalog("dice"), default=str))
