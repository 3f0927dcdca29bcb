"""Small commands that live beside the plugin: `python -m pytest_tooleval COMMAND ...`.

    python -m pytest_tooleval merge shards/*.json -o full.json --fail-under overall=0.6

joins the reports of `--tooleval-shard` runs into the report of the whole run, with its summary, gate and
comparison (report/merge.py); exit status 0 when the gate passes (or there is none), 1 when it fails or a
shard or sample is missing, 2 when the reports cannot be merged.

    python -m pytest_tooleval rescore last-release.json --acebench-revision 56dd66c -o rescored.json

scores the answers a report keeps (and the response cache) under another ACEBench revision, asking nothing again
(with --ask, only the samples whose prompt changed), prints the difference the benchmark alone made and every
sample that flipped with its reason, and writes the rescored report (report/rescore.py); exit status 0 when every
sample was rescored, 1 when one could not be rescored faithfully (it keeps its verdict and is named) or a sample
asked again ended in an error, 2 when the report cannot be rescored.

    python -m pytest_tooleval import-judged evalution_outputs/ToolAlpaca7b.json

prints an upstream ToolAlpaca judge file as the plugin's ToolAlpaca table (Procedure / Response / Overall).

    python -m pytest_tooleval schema > tooleval.schema.json

prints the JSON Schema of `tooleval.yaml` for the suites installed (settings/file.py).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TextIO

from .errors import ToolevalUsageError


def _import_judged(args: argparse.Namespace) -> int:
    from .suites.toolalpaca.summary import render_judged

    print("\n\n".join(render_judged(path) for path in args.files))
    return 0


def _merge(args: argparse.Namespace) -> int:
    """The merge; what it prints is what the shards' fields hold, shown safely (report/safe_text.py): no
    control character, bidi control or lone surrogate of a report reaches the terminal as itself."""
    from .report.safe_text import safe_line

    try:
        return _merged(args)
    except ToolevalUsageError as exc:  # one line, whatever a report's field put in it
        raise ToolevalUsageError(safe_line(exc)) from None


def _merged(args: argparse.Namespace) -> int:
    import os

    from .report.html import write_html
    from .report.json_report import check_report_path, write_report
    from .report.markdown import write_markdown
    from .report.merge import GateOptions, merge
    from .report.safe_text import safe_line, safe_text
    from .report.table import (
        made_differently,
        render_comparison,
        render_cost,
        render_no_tool_calls,
        render_summary,
        render_totals,
    )
    from .text import tidy_path

    def say(text: str, to: TextIO = sys.stdout) -> None:
        print(safe_text(text), file=to)

    for path, option, example in ((args.output, "-o", "full.json"), (args.markdown, "--markdown", "summary.md"),
                                  (args.html, "--html", "report.html")):
        if path:
            check_report_path(path, option, example)
    gate = GateOptions(_thresholds("fail-under", args.fail_under), _fraction("max-error-rate", args.max_error_rate),
                       _thresholds("max-regression", args.max_regression), _fraction("alpha", args.alpha),
                       # as the plugin reads a path option: from the folder the command started in
                       None if args.baseline is None else tidy_path(str(Path.cwd() / Path(args.baseline).expanduser())))
    merged = merge(args.files, gate)
    say(render_summary(merged.summary))
    say(render_totals(merged.totals))
    if (cost := render_cost(merged.totals)) is not None:
        say(cost)
    if (no_calls := render_no_tool_calls(merged.totals)) is not None:
        say(no_calls)
    if merged.comparison is not None:
        say("\n" + render_comparison(merged.comparison))
        for key, old, new in merged.comparison.fingerprint_differences:
            say(safe_line(made_differently(key, old, new)))
    if merged.gate is not None:
        say("\n".join(safe_line(line) for line in merged.gate.lines()))
    if merged.incomplete is not None:
        say(safe_line(f"tooleval merge: INCOMPLETE: {merged.incomplete}"), sys.stderr)
    step_summary = os.environ.get("GITHUB_STEP_SUMMARY")
    written: list[str] = []
    try:
        if args.output:
            write_report(args.output, merged.document)
            written.append(args.output)
        if args.markdown or step_summary:
            written.extend(write_markdown(merged.document, args.markdown,
                                          {"GITHUB_STEP_SUMMARY": step_summary or ""}))
        if args.html:
            written.append(str(write_html(merged.document, args.html)))
    except OSError as exc:  # a full disk, say
        where = exc.filename or "a report"
        raise ToolevalUsageError(f"merge: could not write {where}: {exc.strerror or exc}") from None
    finally:
        for path in written:
            say(safe_line(f"tooleval report: {path}"))
    failed = merged.incomplete is not None or (merged.gate is not None and not merged.gate.passed)
    return 1 if failed else 0


def _rescore(args: argparse.Namespace) -> int:
    """The rescore; what it prints of the report's fields is shown safely, as the merge's is."""
    from .report.document import read_document
    from .report.json_report import check_report_path, write_report
    from .report.rescore import RescoreOptions, rescore
    from .report.safe_text import safe_line, safe_text

    try:
        if args.output:
            check_report_path(args.output, "-o", "rescored.json")
        options = RescoreOptions({"acebench": args.acebench_revision}, ask=args.ask, base_url=args.base_url,
                                 api_key=args.api_key, data_dir=args.data_dir, cache_dir=args.cache_dir,
                                 offline=args.offline)
        rescored = rescore(args.report, options, output=args.output)
        print(safe_text("\n".join(rescored.lines())))
        if args.output:
            try:
                write_report(args.output, read_document(rescored.document))
            except OSError as exc:  # a full disk, say
                raise ToolevalUsageError(f"could not write {args.output}: {exc.strerror or exc}") from None
            print(safe_line(f"tooleval report: {args.output}"))
    except ToolevalUsageError as exc:  # one line, whatever a report's field put in it
        text = str(exc)
        raise ToolevalUsageError(safe_line(text if text.startswith("rescore") else f"rescore: {text}")) from None
    return rescored.exit_status


def _thresholds(name: str, text: str | None) -> dict[str, float]:
    value = _option(name, text)
    assert isinstance(value, dict)  # parse_thresholds' value, or the option's default ({})
    return value


def _fraction(name: str, text: str | None) -> float:
    value = _option(name, text)
    assert isinstance(value, float)  # parse_fraction's value, or the option's default
    return value


def _option(name: str, text: str | None) -> object:
    """A gate option of the merge as the plugin's option of that name reads it (its parser and its default)."""
    from .suites import all_options

    option = next(option for option in all_options() if option.name == name)
    if text is None:
        return option.default
    return option.parse(name, text) if option.parse is not None else text


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m pytest_tooleval", description=__doc__.split("\n", 1)[0])
    commands = parser.add_subparsers(dest="command", required=True)
    judged = commands.add_parser("import-judged", help="summarise upstream ToolAlpaca judge files "
                                 "(evalution_outputs/*.json) as Procedure / Response / Overall")
    judged.add_argument("files", nargs="+", metavar="FILE")
    judged.set_defaults(run=_import_judged)
    merging = commands.add_parser("merge", help="join the JSON reports of --tooleval-shard runs into the report "
                                  "of the whole run (summary, gate, comparison)")
    merging.add_argument("files", nargs="+", metavar="REPORT", help="the shards' --tooleval-report files")
    merging.add_argument("-o", "--output", metavar="PATH", help="write the merged JSON report here")
    merging.add_argument("--markdown", metavar="PATH", help="write the Markdown summary here (and to "
                         "$GITHUB_STEP_SUMMARY when set)")
    merging.add_argument("--html", metavar="PATH", help="write the HTML report here")
    merging.add_argument("--fail-under", metavar="FIGURE=FRACTION,...", help="the gate's thresholds, as "
                         "--tooleval-fail-under")
    merging.add_argument("--max-error-rate", metavar="FRACTION", help="as --tooleval-max-error-rate")
    merging.add_argument("--baseline", metavar="REPORT", help="compare with this report, as --tooleval-baseline")
    merging.add_argument("--max-regression", metavar="FIGURE=MARGIN,...", help="as --tooleval-max-regression")
    merging.add_argument("--alpha", metavar="P", help="as --tooleval-alpha")
    merging.set_defaults(run=_merge)
    rescoring = commands.add_parser("rescore", help="score a report's answers under another ACEBench revision "
                                    "(a baseline to compare with a run of that revision)")
    rescoring.add_argument("report", metavar="REPORT", help="a --tooleval-report file")
    rescoring.add_argument("--acebench-revision", required=True, metavar="REVISION",
                           help="the ACEBench revision to score against (as --tooleval-acebench-revision)")
    rescoring.add_argument("-o", "--output", metavar="PATH", help="write the rescored JSON report here")
    rescoring.add_argument("--ask", action="store_true", help="ask the samples whose prompt changed again, through "
                           "the report's model (default: score their answers to the old prompt, and list them)")
    rescoring.add_argument("--base-url", metavar="URL", help="the endpoint of the report's model: its response "
                           "cache is keyed by it (default: TOOLEVAL_BASE_URL, then OPENAI_BASE_URL)")
    rescoring.add_argument("--api-key", metavar="KEY", help="its API key, for --ask (default: TOOLEVAL_API_KEY, then "
                           "OPENAI_API_KEY); never printed or written")
    rescoring.add_argument("--data-dir", metavar="DIR", help="folder holding both revisions' data (default: "
                           "TOOLEVAL_DATA_DIR, then the download cache)")
    rescoring.add_argument("--cache-dir", metavar="DIR", help="downloads and the response cache (default: "
                           "TOOLEVAL_CACHE_DIR, then ~/.cache/pytest-tooleval)")
    rescoring.add_argument("--offline", action="store_true", help="never download data")
    rescoring.set_defaults(run=_rescore)
    printing = commands.add_parser("schema", help="print the JSON Schema of tooleval.yaml for the suites installed")
    printing.set_defaults(run=_schema)
    return parser


def _schema(args: argparse.Namespace) -> int:
    import json

    from .settings.file import schema
    from .suites import all_options

    print(json.dumps(schema(all_options()), indent=2, ensure_ascii=False))
    return 0


#: the commands' arguments that name files or folders: said back as given, less `.` and `..` steps (text.tidy_path)
PATH_ARGUMENTS = ("files", "output", "markdown", "html", "baseline", "report", "data_dir", "cache_dir")


def main(argv: list[str] | None = None) -> int:
    from .text import tidy_path

    args = build_parser().parse_args(argv)
    for name in PATH_ARGUMENTS:
        value = getattr(args, name, None)
        if isinstance(value, str) and value:
            setattr(args, name, tidy_path(value))
        elif isinstance(value, list):
            setattr(args, name, [tidy_path(item) for item in value])
    try:
        return int(args.run(args))
    except ToolevalUsageError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
