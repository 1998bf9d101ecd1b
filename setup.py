"""Build hook: the shipped scenarios and game data (``scenarios/``) install with the package
as ``analyzer/scenarios`` (non-editable installs and wheels), so data files are found from any
working directory. An editable install reads the repository's ``scenarios/`` directly
(``analyzer.core.questions.SCENARIO_ROOT``). Everything else is in ``pyproject.toml``."""
import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent
DATA_SUFFIXES = {".yaml", ".yml", ".md"}


class build_py_with_scenarios(build_py):
    def run(self):
        super().run()
        if getattr(self, "editable_mode", False):
            return
        target = Path(self.build_lib) / "analyzer" / "scenarios"
        if target.exists():
            shutil.rmtree(target)
        for src in sorted((HERE / "scenarios").rglob("*")):
            if src.is_file() and src.suffix in DATA_SUFFIXES:
                dst = target / src.relative_to(HERE / "scenarios")
                dst.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(src, dst)


setup(cmdclass={"build_py": build_py_with_scenarios})
