"""``make test`` runs ``pytest -n 2 --dist loadgroup``: the Dask tests share one cluster and the report
and answers-index modules one expensive fixture, each on ONE worker (``xdist_group``). pytest 9.2 keeps
node ids in ``Node._id`` and ignores the ``@group`` suffix pytest-xdist 3.8 writes to ``_nodeid``, so the
groups were spread over both workers without a word (pytest-dev/pytest-xdist#1386; measured here: the
index fixture built twice, 30 s each; pyproject.toml's test extra now pins pytest<9.2). This test fails
when the grouping is lost again."""
import pytest

pytestmark = pytest.mark.xdist_group("grouping_probe")


def test_an_xdist_group_reaches_the_scheduler(request):
    if not getattr(request.config.option, "loadgroup", False):
        pytest.skip("not under pytest -n N --dist loadgroup")
    assert request.node.nodeid.endswith("@grouping_probe"), (
        f"--dist loadgroup lost this test's xdist_group (node id {request.node.nodeid!r}): pytest "
        f"{pytest.__version__} with this pytest-xdist does not group (pytest-dev/pytest-xdist#1386); "
        f"install the test extra's pytest (<9.2)")
