"""Headless Debian Chromium for the report tests, driven by Selenium.

One browser per test session (started on first use, closed at exit). It uses
the system /usr/bin/chromium and /usr/bin/chromedriver: Selenium Manager is
skipped (an explicit driver path) and told to stay offline, so nothing is
downloaded. Console messages and network requests are read from Chrome's logs.
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
FLAGS = (
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-dev-shm-usage", "--window-size=1280,900", "--hide-scrollbars",
)
ARTIFACTS = Path(__file__).parent / "artifacts"


@dataclass
class PageLoad:
    url: str
    console: list[dict[str, Any]]  # every console/browser log entry
    requests: list[str]  # URLs requested besides the page itself

    @property
    def console_errors(self) -> list[dict[str, Any]]:
        return [e for e in self.console if e.get("level") in ("SEVERE", "ERROR")]


class Browser:
    def __init__(self) -> None:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service

        os.environ["SE_OFFLINE"] = "true"  # belt and braces: Selenium Manager never goes online
        self._profile = tempfile.mkdtemp(prefix="genderprobe-chromium-")
        options = webdriver.ChromeOptions()
        options.binary_location = str(CHROMIUM)
        for flag in FLAGS:
            options.add_argument(flag)
        options.add_argument(f"--user-data-dir={self._profile}")
        options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
        # Leave any alert() open so a test can see it instead of the driver dismissing it.
        options.set_capability("unhandledPromptBehavior", "ignore")
        self.driver = webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)

    def open(self, path: Path) -> PageLoad:
        """Load a local file; returns what it logged and requested."""
        self.dismiss_dialog()  # a dialog left by a failed test must not block the next page
        self.driver.get("about:blank")
        self.driver.get_log("browser")
        self.driver.get_log("performance")  # drain what came before this page
        url = path.resolve().as_uri()
        self.driver.get(url)
        console = self.driver.get_log("browser")
        requests = []
        for entry in self.driver.get_log("performance"):
            message = json.loads(entry["message"])["message"]
            if message["method"] == "Network.requestWillBeSent":
                requested = message["params"]["request"]["url"]
                if requested != url:
                    requests.append(requested)
        return PageLoad(url, console, requests)

    def js(self, script: str, *args: Any) -> Any:
        return self.driver.execute_script(script, *args)

    def open_dialog(self) -> str | None:
        """The text of an open alert/confirm/prompt dialog, or None."""
        from selenium.common.exceptions import NoAlertPresentException

        try:
            return self.driver.switch_to.alert.text
        except NoAlertPresentException:
            return None

    def dismiss_dialog(self) -> None:
        from selenium.common.exceptions import NoAlertPresentException

        try:
            self.driver.switch_to.alert.dismiss()
        except NoAlertPresentException:
            pass

    def screenshot(self, name: str) -> Path:
        """A full-page PNG in tests/artifacts (git ignores it)."""
        ARTIFACTS.mkdir(exist_ok=True)
        width = self.js("return document.documentElement.scrollWidth")
        height = self.js("return document.documentElement.scrollHeight")
        self.driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
            "width": max(1280, width), "height": min(height, 16000), "deviceScaleFactor": 1, "mobile": False})
        path = ARTIFACTS / name
        try:
            self.driver.save_screenshot(str(path))
        finally:
            self.driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
        return path

    def quit(self) -> None:
        try:
            self.driver.quit()
        finally:
            shutil.rmtree(self._profile, ignore_errors=True)


_BROWSER: Browser | None = None


def shared_browser() -> Browser:
    """The session's browser; skips the test when Chromium is not installed."""
    global _BROWSER
    if not (CHROMIUM.exists() and CHROMEDRIVER.exists()):
        pytest.skip("Debian's chromium and chromium-driver are not installed (.ci/run installs them)")
    pytest.importorskip("selenium")
    if _BROWSER is None:
        _BROWSER = Browser()
        atexit.register(_BROWSER.quit)
    return _BROWSER
