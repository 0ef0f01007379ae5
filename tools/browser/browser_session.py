"""The browser the book's checks drive, and the book served to it: what the browser check
(browser_test.py and its modules) and the accessibility audit (accessibility.py) both need, so
that neither imports the other.

- Server: the built book on http://127.0.0.1:<a free port>/, remembering every path not found;
- start_browser(): headless Chromium through chromedriver, with no network beyond that server;
- book_pages(): every page of the book;
- browser_script(): the JavaScript the checks run in the pages, one program per file in
  tools/browser/.
"""
import functools
import http.server
import os
import sys
import threading
import urllib.parse

try:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
except ImportError:
    sys.exit("browser test: python3-selenium is missing. Install the Debian package: apt-get install python3-selenium")

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
DESKTOP = (1280, 900)


class Server:
    """The book on http://127.0.0.1:<free port>/, remembering every path that was not found."""

    def __init__(self, root):
        self.missing = []
        missing = self.missing

        class Handler(http.server.SimpleHTTPRequestHandler):
            def log_message(self, format, *args):  # noqa: A002 (the base class's name)
                pass

            def send_error(self, code, message=None, explain=None):
                # /favicon.ico is asked for when a figure is shown on its own, without a page.
                if code == 404 and self.path != "/favicon.ico":
                    missing.append(urllib.parse.unquote(self.path))
                super().send_error(code, message, explain)

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Handler, directory=root))
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()


def start_browser(profile):
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        "--no-default-browser-check",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-quic",
        "--disable-extensions",
        "--disable-dev-shm-usage",
        "--hide-scrollbars",
        # Nothing but the local server resolves: a request for another host is
        # still logged (and reported below) but never leaves the machine.
        "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1, EXCLUDE localhost",
        f"--user-data-dir={profile}",
        f"--window-size={DESKTOP[0]},{DESKTOP[1]}",
    ]:
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    service = Service(executable_path=CHROMEDRIVER, log_path=os.devnull)
    driver = webdriver.Chrome(service=service, options=options)
    driver.set_page_load_timeout(30)
    driver.set_script_timeout(200)  # a panel's run may take a while (chapter 3's experiment)
    return driver


def book_pages(book):
    """Every .html page of the book, as paths relative to its folder (the _static files excluded)."""
    pages = []
    for folder, subfolders, files in os.walk(book):
        subfolders[:] = sorted(d for d in subfolders if not d.startswith(("_", ".")))
        pages += [os.path.relpath(os.path.join(folder, f), book).replace(os.sep, "/") for f in files if f.endswith(".html")]
    return sorted(pages)


# The JavaScript that runs in the pages lives in tools/browser/, one program per file.
SCRIPTS = os.path.dirname(os.path.abspath(__file__))


def browser_script(name):
    """The text of tools/browser/<name>.js, a program for execute_script or execute_async_script."""
    with open(os.path.join(SCRIPTS, name + ".js"), encoding="utf-8") as file:
        return file.read()
