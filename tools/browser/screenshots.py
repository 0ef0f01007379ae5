"""The screenshots the browser check saves: the front page, the Softmax chapter and chapter 7's
panel after a reader's own run, at 1280 and at 390 pixels, each taken from its page as the checks
left it; a screenshot that cannot be taken or saved fails the page.
"""
import base64
import os
import time

from browser_session import DESKTOP
from check_core import PHONE, PLAYGROUND_RUN, CheckCore
from selenium.common.exceptions import TimeoutException, WebDriverException

PLAYGROUND_EXAMPLE = {"--tokens": "The,cat,sat,down", "--embeddings": "1,0;0,1;1,1;2,0", "--causal": True}


class Screenshots(CheckCore):
    """The screenshots of the page open now."""

    def screenshots_of(self, page, phone):
        """The screenshots of this page, taken as it is open after its checks: the whole page, or its panel
        after a reader's own run (four tokens, causal)."""
        for stem, what in self.shared.screenshot_pages.get(page, []):
            path = os.path.join(self.screenshots, f"{stem}-{PHONE}px.png" if phone else f"{stem}.png")
            try:
                os.makedirs(self.screenshots, exist_ok=True)
                saved = (self.screenshot_panel if what == "panel" else self.screenshot_page)(path, phone)
            except (TimeoutException, WebDriverException) as error:
                self.fail(page, f"the screenshot {os.path.basename(path)} failed: {str(error).splitlines()[0]}")
                continue
            if saved:
                self.visit["screenshots"].append(path)
                print(f"screenshot: {path}", flush=True)
            else:
                self.fail(page, f"could not save the screenshot {path}")
        self.lap(page, "screenshots")

    def screenshot_panel(self, path, phone):
        """The open page's panel after a reader's own run, as a picture of its whole section (taken by
        Chromium itself: an element screenshot through chromedriver cuts a tall one off, and slowly)."""
        self.driver.execute_async_script(PLAYGROUND_RUN, PLAYGROUND_EXAMPLE)
        section = self.driver.find_element("css selector", "section#try-it-here")
        box = self.driver.execute_script("const r = arguments[0].getBoundingClientRect(); "
                                         "return [r.left + scrollX, r.top + scrollY, r.width, r.height]", section)
        if phone:
            self.driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                                        {"width": PHONE, "height": 844, "deviceScaleFactor": 2, "mobile": True})
        try:
            shot = self.driver.execute_cdp_cmd("Page.captureScreenshot", {
                "format": "png", "captureBeyondViewport": True,
                "clip": {"x": box[0], "y": box[1], "width": box[2], "height": box[3], "scale": 1}})
        finally:
            if phone:
                self.driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                                            {"width": PHONE, "height": 844, "deviceScaleFactor": 1, "mobile": True})
        with open(path, "wb") as file:
            file.write(base64.b64decode(shot["data"]))
        return True

    def screenshot_page(self, path, phone):
        """The whole open page (at most 9000 pixels of it), at the width it is open at, its panel (if it has
        one) showing the panel's example again, as the page opens."""
        if self.driver.execute_script("return !!document.querySelector('.playground[data-program]')"):
            self.driver.execute_async_script(PLAYGROUND_RUN, {})
        self.driver.execute_script("window.scrollTo(0, 0)")
        height = min(self.driver.execute_script("return document.documentElement.scrollHeight"), 9000)
        if phone:
            self.driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                                        {"width": PHONE, "height": height, "deviceScaleFactor": 2, "mobile": True})
        else:
            self.driver.set_window_size(DESKTOP[0], height + (self.driver.get_window_size()["height"]
                                                              - self.driver.execute_script("return window.innerHeight")))
        time.sleep(0.3)
        try:
            return self.driver.save_screenshot(path)
        finally:
            if phone:
                self.driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                                            {"width": PHONE, "height": 844, "deviceScaleFactor": 1, "mobile": True})
            else:
                self.driver.set_window_size(*DESKTOP)
