"""Seeded call sequences for the web search API, shared by test_web_search.py and record_web_search.py (which runs
them through bfcl-eval's own `WebSearchAPI` in a scratch venv). Standard library only.

Each sequence is one instance (its `show_snippet`) and the calls made on it: searches with odd keywords, counts
and regions and each failure the fake service offers; fetches of pages with odd HTML and encodings, in each mode,
redirects, error statuses, broken connections and URLs that are no URLs; and calls that do not bind.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from collections.abc import Callable
from typing import Any

from web_search_server import Page  # tests/ is on the path: under pytest (rootdir conftest), and in the recorder

SEED = 20260323
SEQUENCES = 60
KEY = "fake-key+/=0123"  # characters a URL encodes, so a leak of it in any form would show

Call = tuple[str, list[Any], dict[str, Any]]  # method, positional arguments, keyword arguments
Sequence = tuple[bool, list[Call]]  # show_snippet, calls

#: pieces of pages: the markup html2text and BeautifulSoup each read in their own way
FRAGMENTS = [
    "<h1>Title &amp; more</h1>",
    "<h2>Sub</h2><h3>Subsub</h3><h6>six</h6>",
    "<p>Para with <b>bold</b>, <i>italic</i>, <em>em</em>, <strong>strong</strong> and <code>x = 1</code></p>",
    "<ul><li>one<li>two<li><ul><li>nested</ul></ul>",
    "<ol start='3'><li>a</li><li>b</li></ol>",
    "<table><tr><th>A</th><th>B</th></tr><tr><td>1</td><td>2<td>3</tr></table>",
    "<script>var x = '<p>not text</p>'; if (a < b) {}</script>",
    "<style>p { color: red } /* </p> */</style>",
    "<!-- a comment <p>hidden</p> -->",
    "<pre>  spaced\n\tcode  \n\n  more</pre>",
    "<a href='/rel?x=1&amp;y=2'>relative link</a> <a href='https://example.org/a b'>spaced</a>",
    "<img src='a.png' alt='An image'><img src='b.png'>",
    "<blockquote>quoted<br>line<blockquote>deeper</blockquote></blockquote>",
    "&nbsp;&#x27;&#8212;&eacute;&lt;tag&gt;&amp;amp;&copy;&unknown;",
    "<div>unclosed <span>spans <p>and a para",
    "<![CDATA[ cdata <b>x</b> ]]>",
    "Ünïcödé 中文 emoji 😀 right-to-left עברית",
    "<noscript>no js</noscript><iframe src='x'>frame</iframe>",
    "<hr/><br/><br/>",
    "<dl><dt>term</dt><dd>definition</dd></dl>",
    "<p>" + "long line of words " * 30 + "</p>",
    "<svg><text>svg text</text></svg><math><mi>x</mi></math>",
    "<template><p>template</p></template><textarea><b>raw</b></textarea>",
    "<a href='javascript:void(0)'>js</a><a name='anchor'></a><a href='#top'>top</a>",
    "</p></div></span></body>",
    "<p>*stars* _under_ [brackets] `ticks` # hash + plus - minus 1. one</p>",
    "<sup>2</sup><sub>3</sub><s>old</s><del>x</del><ins>y</ins><u>u</u>",
    "<form><input value='v'><button>Go</button><select><option>o1<option>o2</select></form>",
    "<p>   spaces   \n\n\n  around   </p>\t\t<p></p><p> </p>",
    "<head><title>Page title</title><meta charset='utf-8'><link rel='x'></head>",
    "<abbr title='t'>abbr</abbr><q>quote</q><cite>cite</cite><kbd>kbd</kbd><var>v</var>",
    "<p>a<br>b<br/>c</p><p>d\r\ne\rf</p>",
    "<center>centered</center><font color=red>font</font><marquee>m</marquee>",
]
#: content types a page may come with: requests decodes each its own way (no charset: Latin-1 or a guess)
CONTENT_TYPES = [
    "text/html; charset=utf-8",
    "text/html",
    None,
    "text/html; charset=windows-1252",
    "application/xhtml+xml",
    "text/plain; charset=utf-8",
]
KEYWORDS = [
    "Nobel Prize in Literature 2024",
    "richest billionaire China April 2025",
    'l\'été "cité" café',
    "a & b + c # d % e ? f = g",
    "中文 搜索 😀",
    "",
    "   padded   ",
    "new\nline\ttab",
    "x" * 300,
    "semi;colon/slash\\back",
]
DIRECTIVES = [
    "!429x1",
    "!429x3",
    "!h429x2",
    "!status500",
    "!status403",
    "!html",
    "!list",
    "!pairs",
    "!noorganic",
    "!notlist",
    "!strings",
    "!lackssnippet",
    "!lackslink",
    "!lackstitle",
    "!close",
    "!empty",
]
MAX_RESULTS: list[object] = [10, 0, 1, 3, 25, None, -2, True, "5", 2.5]
REGIONS: list[object] = ["wt-wt", "us-en", "", None, "xx", 7, "de-de"]
MODES: list[object] = ["raw", "markdown", "truncate", "Markdown", "", None, 3]
BAD_URLS: list[object] = [
    "ftp://127.0.0.1/x",
    "HTTP://127.0.0.1/x",
    "http://",
    "https://",
    "http://127.0.0.1:1/refused",
    "www.example.org",
    5,
    None,
    ["http://127.0.0.1/"],
    b"http://127.0.0.1/",
]


def pages() -> dict[str, Page]:
    """The fake site's pages, made from the seed: composed pages in each content type, and the odd ones."""
    rng = random.Random(SEED)
    made: dict[str, Page] = {}
    for n in range(40):
        body = "".join(rng.choice(FRAGMENTS) for _ in range(rng.randint(1, 8)))
        if rng.random() < 0.5:
            body = f"<!DOCTYPE html><html><body>{body}</body></html>"
        content_type = CONTENT_TYPES[n % len(CONTENT_TYPES)]
        encoding = "windows-1252" if content_type and "1252" in content_type else "utf-8"
        data = body.encode(encoding, errors="xmlcharrefreplace")
        headers = (("Content-Type", content_type),) if content_type else ()
        made[f"/page/{n}"] = Page(data, headers=headers, gzipped=n % 7 == 3)
    made["/empty"] = Page(b"")
    made["/blank"] = Page(b"  \n\t ")
    made["/bytes"] = Page(bytes(range(256)), headers=(("Content-Type", "application/octet-stream"),))
    made["/latin"] = Page("<p>café naïve</p>".encode("latin-1"), headers=(("Content-Type", "text/html"),))
    made["/bom"] = Page("\ufeff<p>with a BOM</p>".encode(), headers=())
    for status in (404, 403, 500, 503, 429, 418, 451, 599):
        made[f"/status/{status}"] = Page(b"<h1>error page</h1>", status=status)
    made["/status/204"] = Page(b"", status=204)
    made["/query?a=1&b=%20x"] = Page(b"<p>the query page</p>")
    return made


def sequences() -> list[Sequence]:
    """The seeded call sequences, with `{base}` where the fake server's address goes."""
    rng = random.Random(SEED + 1)
    page_paths = [*pages(), "/redirect/1/page/0", "/redirect/3/page/5", "/loop", "/close", "/short", "/missing"]
    out: list[Sequence] = []
    for _ in range(SEQUENCES):
        calls: list[Call] = []
        for _ in range(rng.randint(4, 16)):
            roll = rng.random()
            if roll < 0.4:
                calls.append(_search(rng))
            elif roll < 0.9:
                calls.append(_fetch(rng, page_paths))
            elif roll < 0.95:
                url = rng.choice([*BAD_URLS, "https://{base}/page/1"])
                calls.append(("fetch_url_content", [url], {"mode": rng.choice(MODES)}))
            else:
                calls.append(
                    rng.choice(
                        [
                            ("search_engine_query", [], {"query": "x"}),
                            ("search_engine_query", [], {}),
                            ("fetch_url_content", ["{base}/page/0", "raw", "extra"], {}),
                            ("fetch_url_content", [], {"link": "{base}/page/0"}),
                        ]
                    )
                )
        out.append((rng.random() < 0.5, calls))
    return out


def _search(rng: random.Random) -> Call:
    words = rng.choice(KEYWORDS)
    if rng.random() < 0.3:
        words = f"{rng.choice(DIRECTIVES)} {words}"
    if rng.random() < 0.05:
        return ("search_engine_query", [[words, "second"]], {})
    args: list[Any] = [words]
    kwargs: dict[str, Any] = {}
    if rng.random() < 0.6:
        kwargs["max_results"] = rng.choice(MAX_RESULTS)
    if rng.random() < 0.5:
        kwargs["region"] = rng.choice(REGIONS)
    if rng.random() < 0.2 and "max_results" in kwargs:
        args.append(kwargs.pop("max_results"))
    return ("search_engine_query", args, kwargs)


def _fetch(rng: random.Random, paths: list[str]) -> Call:
    url = "{base}" + rng.choice(paths)
    roll = rng.random()
    if roll < 0.2:
        return ("fetch_url_content", [url], {})
    if roll < 0.35:
        return ("fetch_url_content", [url, rng.choice(MODES[:3])], {})
    return ("fetch_url_content", [url], {"mode": rng.choice(MODES[:3] * 3 + MODES[3:])})


def bind(calls: list[Call], base: str) -> list[Call]:
    """The calls with the fake server's address (`{base}` is `http://127.0.0.1:<port>`; `https://{base}` the same
    address spoken to in TLS)."""

    def fill(value: Any) -> Any:
        if isinstance(value, str):
            return value.replace("https://{base}", base.replace("http://", "https://")).replace("{base}", base)
        if isinstance(value, list):
            return [fill(item) for item in value]
        return value

    return [
        (method, fill(args), {name: fill(value) for name, value in kwargs.items()}) for method, args, kwargs in calls
    ]


def run(api: Any, calls: list[Call], render: Callable[[object], str], error: Callable[[Exception], str]) -> list[str]:
    """Each call's result string (`render` of what it returned, `error` of what it raised)."""
    out = []
    for method, args, kwargs in calls:
        try:
            value = getattr(api, method)(*args, **kwargs)
        except Exception as exc:
            out.append(error(exc))
        else:
            out.append(render(value))
    return out


def normalized(text: str, port: int) -> str:
    """A result string without what differs from one run to the next: the server's port, object addresses."""
    text = text.replace(f"127.0.0.1:{port}", "127.0.0.1:PORT").replace(f"port={port})", "port=PORT)")
    return re.sub(r"0x[0-9a-f]{6,}", "0x?", text)


def digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def upstream_render(value: object) -> str:
    """How bfcl's executor turns a returned value into its result string (docs/bfcl-multi-turn.md#result-strings),
    for the recorder."""
    if type(value) is str:
        return value
    if type(value) is dict:
        try:
            return json.dumps(value)
        except Exception:
            return str(value)
    return str(value)


def upstream_error(exc: Exception) -> str:
    return f"Error during execution: {exc}"
