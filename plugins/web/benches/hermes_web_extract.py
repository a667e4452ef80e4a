#!/usr/bin/env python3
"""Hermes Agent 0.19.0's local share of `web_extract`, on the Markdown of the page that
toolhost's `web` bench converts.

Hermes has no local HTML conversion: its web_extract sends the URLs to a provider's
extract API (Firecrawl, Tavily, Exa, Parallel), which fetches and converts remotely.
What runs locally is the post-processing of the provider's answer, timed here on the
same text: `convert_base64_images_to_links` and `_truncate_with_footer` (head + tail
window, full text stored under the cache directory), char_limit 15000.

Usage:
  WEB_BENCH_MARKDOWN=/tmp/article.md cargo bench -p toolhost-plugin-web --bench web   # writes the file
  /opt/hermes/bin/python plugins/web/benches/hermes_web_extract.py /tmp/article.md [-n 50] [-r 5]
Prints median / min / max per-page milliseconds over R repetitions of N pages.
"""
import argparse
import os
import statistics
import tempfile
import time

os.environ.setdefault("HERMES_HOME", tempfile.mkdtemp(prefix="hermes-bench-home-"))
os.environ.setdefault("HERMES_DISABLE_LAZY_INSTALLS", "1")

from tools import web_tools  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("markdown")
    ap.add_argument("-n", type=int, default=50)
    ap.add_argument("-r", type=int, default=5)
    args = ap.parse_args()
    with open(args.markdown, encoding="utf-8") as f:
        text = f.read()

    def page():
        clean = web_tools.convert_base64_images_to_links(text)
        out, truncated = web_tools._truncate_with_footer(clean, "http://127.0.0.1/article", 15000)
        assert truncated and "Full text saved to" in out, out[-400:]

    for _ in range(3):
        page()
    per_page = []
    for _ in range(args.r):
        t0 = time.perf_counter()
        for _ in range(args.n):
            page()
        per_page.append((time.perf_counter() - t0) / args.n * 1000)
    print(
        f"hermes web_extract post-processing, {len(text):,} chars: "
        f"median {statistics.median(per_page):.3f} ms "
        f"(min {min(per_page):.3f}, max {max(per_page):.3f}; {args.r} x {args.n} pages)"
    )


if __name__ == "__main__":
    main()
