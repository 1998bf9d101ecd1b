"""``analyzer``: the command line. Thin: load, validate, call the library, write.

The Typer app, built from the command modules (one per command or small family: ``run`` and
``exact`` in :mod:`analyzer.cli.run`, ``matchup`` and ``solve`` in :mod:`analyzer.cli.balance`), each
command wrapped in the one error handler :func:`analyzer.cli.common.reported`; and :func:`main`.

The command modules are imported when needed (issue 32: ``analyzer list`` starts within 2.5x of
importing typer, pydantic, yaml and rich): :func:`main` given a command name first builds an
app of that command alone; ``app`` and ``COMMANDS`` (every command: ``--help``, the docs, the
tests) are built on first use (:func:`__getattr__`)."""
from __future__ import annotations

import importlib
import sys

import typer

from analyzer.cli.common import Group, fail, reported

HELP = ("Monte-Carlo balance analyzer for tabletop wargames.\n\n"
        "Describe a question in a scenario YAML file (game, question, params, optional sweep), "
        "then run it, compute its exact answer, or compare two scenarios. Outputs go to "
        "results/<scenario>/<run-id>/: answers.parquet (the tidy table), points.parquet, distributions.parquet, "
        "summary.json, manifest.json, PNG plots and report.html; 'analyzer index' combines runs.")

#: The commands, in the order ``analyzer --help`` (and the README's reference) lists them; a
#: :class:`~analyzer.cli.common.Group` is a family of sub-commands (``analyzer data check``), listed
#: after the single commands.
#: command name -> (module of :mod:`analyzer.cli`, its function or Group); ``COMMANDS`` is this
#: table loaded (:func:`load_commands`)
COMMAND_SOURCES = {"run": ("run", "run"), "exact": ("run", "exact"), "compare": ("compare", "compare"),
                   "validate": ("validate", "validate"), "list": ("catalog", "list_"),
                   "examples": ("init", "examples"), "init": ("init", "init"), "report": ("report", "report"),
                   "index": ("index", "index"), "sensitivity": ("sensitivity", "sensitivity"),
                   "plot": ("plot", "plot"), "bench": ("bench", "bench"), "matchup": ("balance", "matchup"),
                   "solve": ("balance", "solve"), "search": ("search", "search"),
                   "schema": ("schema", "schema"), "data": ("data", "GROUP")}


def load_commands(names=None) -> dict:
    """The commands ``names`` (all by default, in :data:`COMMAND_SOURCES` order): name -> function
    or :class:`~analyzer.cli.common.Group`, importing their modules."""
    return {name: getattr(importlib.import_module(f"analyzer.cli.{module}"), attr)
            for name, (module, attr) in COMMAND_SOURCES.items() if names is None or name in names}


#: ``-h`` as well as ``--help``, on the app and on every command
CONTEXT = {"help_option_names": ["-h", "--help"]}
#: the distribution whose version ``--version`` prints (pyproject.toml's ``name``)
DISTRIBUTION = "wargame-analyzer"


def version() -> str:
    """The installed version (a checkout that was never installed says so)."""
    from importlib.metadata import PackageNotFoundError, version as installed
    try:
        return installed(DISTRIBUTION)
    except PackageNotFoundError:
        return "unknown (not installed: pip install -e .)"


def _print_version(value: bool) -> None:
    if value:
        typer.echo(f"analyzer {version()}")
        raise typer.Exit()


def build(commands: dict) -> typer.Typer:
    """The app of ``commands`` (name -> function), each run inside :func:`reported`: an analyzer
    error is one line and its exit code, and a stop on a signal says "<name> stopped; nothing was
    written" unless the command says more."""
    cli = typer.Typer(add_completion=False, no_args_is_help=True, help=HELP, context_settings=CONTEXT)

    @cli.callback()
    def _app(show_version: bool = typer.Option(False, "--version", callback=_print_version, is_eager=True,
                                               help="Print the analyzer's version and exit.")) -> None:
        pass

    _app.__doc__ = HELP
    for name, command in commands.items():
        if isinstance(command, Group):
            sub = typer.Typer(add_completion=False, no_args_is_help=True, help=command.help, context_settings=CONTEXT)
            for sub_name, sub_command in command.commands.items():
                sub.command(sub_name, context_settings=CONTEXT)(
                    reported(f"{name} {sub_name} stopped; nothing was written")(sub_command))
            cli.add_typer(sub, name=name)
            continue
        cli.command(name, context_settings=CONTEXT)(reported(f"{name} stopped; nothing was written")(command))
    return cli


def __getattr__(name: str):
    """``app`` and ``COMMANDS``: every command, loaded on first use (then kept)."""
    if name == "COMMANDS":
        globals()["COMMANDS"] = load_commands()
        return globals()["COMMANDS"]
    if name == "app":
        globals()["app"] = build(__getattr__("COMMANDS"))
        return globals()["app"]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def app_for(argv: list[str]) -> typer.Typer:
    """The app :func:`main` runs for the arguments ``argv``: when the first is a command's name,
    an app of that command alone (it parses, helps and fails as the full app does for that
    command); otherwise (``--help``, ``--version``, no or an unknown command) the full app."""
    if argv and argv[0] in COMMAND_SOURCES:
        return build(load_commands({argv[0]}))
    return __getattr__("app")


#: Most numba threads ``NUMBA_NUM_THREADS`` may ask for: 4 per usable core, never more than 1024
#: (numba starts that many threads at its first parallel kernel: 100,000 segfaulted, 30,000 made
#: a run 10x slower).
MAX_THREADS_PER_CORE, MAX_THREADS = 4, 1024


def check_thread_env(environ=None) -> None:
    """Refuse, in one line, a ``NUMBA_NUM_THREADS`` that is not a whole number in
    1..min(4 per usable core, 1024). Runs before numba is imported (numba reads the variable
    once, at import: afterwards it is too late to refuse it)."""
    import os
    value = (os.environ if environ is None else environ).get("NUMBA_NUM_THREADS")
    if value is None or value.strip() == "":
        return
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    cap = min(MAX_THREADS, MAX_THREADS_PER_CORE * cores)
    try:
        n = int(value)
    except ValueError:
        n = None
    if n is None or not 1 <= n <= cap:
        fail(f"NUMBA_NUM_THREADS (environment): got {value!r}; allowed: a whole number 1..{cap} "
             f"({MAX_THREADS_PER_CORE} per usable core, at most {MAX_THREADS}); unset it to use every core")


def main() -> None:  # entry point
    try:
        check_thread_env()
    except typer.Exit as e:
        raise SystemExit(e.exit_code) from None
    app_for(sys.argv[1:])()


if __name__ == "__main__":
    main()
