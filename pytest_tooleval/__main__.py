"""Small commands that live beside the plugin: `python -m pytest_tooleval COMMAND ...`.

    python -m pytest_tooleval import-judged evalution_outputs/ToolAlpaca7b.json

prints an upstream ToolAlpaca judge file as the plugin's ToolAlpaca table (Procedure / Response / Overall).
"""

from __future__ import annotations

import argparse
import sys

from .errors import ToolevalUsageError


def _import_judged(args: argparse.Namespace) -> int:
    from .suites.toolalpaca.summary import render_judged

    print("\n\n".join(render_judged(path) for path in args.files))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pytest_tooleval", description=__doc__.split("\n", 1)[0])
    commands = parser.add_subparsers(dest="command", required=True)
    judged = commands.add_parser("import-judged", help="summarise upstream ToolAlpaca judge files "
                                 "(evalution_outputs/*.json) as Procedure / Response / Overall")
    judged.add_argument("files", nargs="+", metavar="FILE")
    judged.set_defaults(run=_import_judged)
    args = parser.parse_args(argv)
    try:
        return int(args.run(args))
    except ToolevalUsageError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
