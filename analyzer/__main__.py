"""``python -m analyzer``: the same command line as ``analyzer``."""
from analyzer.cli.app import main

if __name__ == "__main__":
    main()
