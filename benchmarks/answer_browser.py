"""How fast a report of a 100,000-record run opens, answer browser included, made as users make it.

    python benchmarks/answer_browser.py                 # 50,000 items = 100,000 records
    python benchmarks/answer_browser.py --items 5000 --opens 10

Runs ``genderprobe run relationship-levy --model reference:random --out DIR``
and ``genderprobe report DIR`` as commands, then opens DIR/report.html in
headless Chromium (Debian's chromium and chromedriver, driven by Selenium,
offline, a 1280 x 900 window): the first open in a new browser, then
``--opens`` more in the same one. For each open it reports when the answer
browser had drawn its first answers (its ``data-ready``, milliseconds since
the navigation started) and when the page's load event ended. The target is
under 2 seconds.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CHROMIUM, CHROMEDRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage", "--window-size=1280,900")
TIMES = """const n = performance.getEntriesByType('navigation')[0];
return [+document.getElementById('answer-browser').dataset.ready, n.loadEventEnd,
        +document.getElementById('answer-browser').dataset.matching];"""


def genderprobe(*args: str) -> float:
    """Seconds a genderprobe command took, run as a user runs it."""
    command = [str(Path(sys.executable).with_name("genderprobe")), *args]
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def browser(profile: str):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    os.environ["SE_OFFLINE"] = "true"  # Selenium Manager never goes online
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in (*FLAGS, f"--user-data-dir={profile}"):
        options.add_argument(flag)
    return webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)


def open_once(driver, page: Path) -> tuple[float, float, float, int]:
    """(wall seconds of the navigation, ms to the first answers, ms to the load event's end, answers held)."""
    driver.get("about:blank")
    start = time.perf_counter()
    driver.get(page.resolve().as_uri())
    wall = time.perf_counter() - start
    ready, loaded, held = driver.execute_script(TIMES)
    return wall, ready, loaded, int(held)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--items", type=int, default=50_000, help="RelationshipLevy items (two records each)")
    parser.add_argument("--opens", type=int, default=5, help="opens after the first, in the same browser")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="answer-browser-") as tmp:
        run = Path(tmp) / "run"
        ran = genderprobe("run", "relationship-levy", "--model", "reference:random", "--sample-k", str(args.items),
                          "--out", str(run), "--no-cache", "--resamples", "200", "-q")
        records = sum(1 for _ in (run / "records.jsonl").open(encoding="utf-8"))
        reported = genderprobe("report", str(run))
        page = run / "report.html"
        print(f"{records:,} records; run {ran:.1f} s; genderprobe report {reported:.1f} s; "
              f"report.html {page.stat().st_size / 1e6:.1f} MB")
        driver = browser(str(Path(tmp) / "profile"))
        try:
            opens = [open_once(driver, page) for _ in range(1 + args.opens)]
        finally:
            driver.quit()
    wall, ready, loaded, held = opens[0]
    print(f"first open (new browser): answers drawn at {ready:.0f} ms, load event at {loaded:.0f} ms, "
          f"navigation {wall:.2f} s; {held:,} answers in the page")
    rest = opens[1:]
    if rest:
        print(f"next {len(rest)} opens: answers drawn at median {statistics.median(o[1] for o in rest):.0f} ms "
              f"(max {max(o[1] for o in rest):.0f}), load event median {statistics.median(o[2] for o in rest):.0f} ms, "
              f"navigation median {statistics.median(o[0] for o in rest):.2f} s")
    worst = max(max(o[1], o[2]) for o in opens) / 1000
    print(f"slowest open: {worst:.2f} s ({'under' if worst < 2 else 'OVER'} the 2 s target)")


if __name__ == "__main__":
    main()
