"""The page cache of the browser check (--cache): which pages passed, at which width, and every file
each result depended on, so that a run checks again only the pages where something changed.

- file_digest(): the SHA-256 of a file;
- checker_key(): one digest of the checker itself (every module of tools/browser/ and the JavaScript
  it runs in the pages, axe-core, Chromium, the native programs' folder, the exercises' answers):
  a change to any of them checks every page again;
- native_inputs(): the files a native program's run depends on (for the panels and the explorer);
- PageCache: the pages that passed, kept in browser-check.json in the --cache folder.
"""
import hashlib
import json
import os
import re
import subprocess
import threading

from browser_session import CHROMIUM, SCRIPTS

CACHE_FILE = "browser-check.json"  # in the --cache folder
# What the check itself is made of: a change to any of these redoes every page. Every module of the
# check (each .py file of tools/browser/, this one among them) and the reader of the exercise markers.
CHECKER_SOURCES = sorted(name for name in os.listdir(os.path.dirname(os.path.abspath(__file__)))
                         if name.endswith(".py")) + [os.path.join("..", "exercises.py")]


def file_digest(path):
    """The SHA-256 of a file's bytes, or None when there is no such file."""
    try:
        with open(path, "rb") as file:
            return hashlib.sha256(file.read()).hexdigest()
    except OSError:
        return None


def checker_key(axe_source, programs, solutions):
    """One digest of everything that every page's result depends on: the checker's own sources (its widths,
    rules and scripts), the JavaScript it runs in the pages, axe-core, the browser, the folder of the native
    programs and the exercises' answers (a page must never show one unasked)."""
    here = os.path.dirname(os.path.abspath(__file__))
    digest = hashlib.sha256()
    names = [os.path.join(here, name) for name in CHECKER_SOURCES]
    names += sorted(os.path.join(SCRIPTS, name) for name in os.listdir(SCRIPTS) if name.endswith(".js"))
    for name in names:
        digest.update(f"{os.path.basename(name)} {file_digest(name)}\n".encode())
    digest.update(hashlib.sha256((axe_source or "no audit").encode()).hexdigest().encode())
    try:
        version = subprocess.run([CHROMIUM, "--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        version = "unknown"
    digest.update(f"{version.strip()} {programs} {json.dumps(solutions, sort_keys=True)}".encode())
    return digest.hexdigest()


def native_inputs(programs, program, args):
    """The files a native program's run depends on: its binary, the files of the build folder whose paths
    it has compiled in (the corpus, a saved model), and those its arguments name as build/..."""
    binary = os.path.join(programs, program)
    build = os.path.dirname(programs)
    found = {binary}
    try:
        with open(binary, "rb") as file:
            text = file.read()
    except OSError:
        return found
    for match in re.findall(re.escape(build.encode()) + rb"/[\x21-\x7e]+", text):
        found.add(match.decode("ascii", "replace"))
    for value in args:
        if isinstance(value, str) and value.startswith("build/"):
            found.add(os.path.join(build, value[len("build/"):]))
    return {path for path in found if os.path.isfile(path)}


class PageCache:
    """The pages that passed, per width, with what each result depended on: the files the page loaded (the
    page itself, its _static files, figures, the panel's JavaScript, WebAssembly and data), the native
    programs and their inputs it was compared with, the pages it links to (they must still exist) and the
    screenshots it saved. A page whose every such file is unchanged (same SHA-256) since it passed is not
    checked again; the figures it shows are (with every other page's, at the end). A page that failed
    is never kept; --no-cache checks every page and keeps the new results."""

    def __init__(self, folder, key, read=True):
        self.path = os.path.join(folder, CACHE_FILE) if folder else None
        self.key = key
        self.lock = threading.Lock()
        self.digests = {}
        self.old = {}
        self.new = {}
        self.unchanged = {"desktop": [], "phone": []}
        if self.path and read:
            try:
                with open(self.path, encoding="utf-8") as file:
                    stored = json.load(file)
                if stored.get("checker") == key:
                    self.old = stored.get("pages", {})
            except (OSError, ValueError):
                pass

    def digest(self, path):
        with self.lock:
            if path not in self.digests:
                self.digests[path] = file_digest(path)
            return self.digests[path]

    def passed_before(self, width, page):
        """The entry of a page that passed at this width and whose inputs are all unchanged, or None."""
        entry = self.old.get(f"{width} {page}")
        if entry is None or not all(self.digest(path) == digest for path, digest in entry["files"].items()):
            return None
        if not all(os.path.isfile(path) for path in entry["links"] + entry["screenshots"]):
            return None
        with self.lock:
            self.new[f"{width} {page}"] = entry
            self.unchanged[width].append(page)
        return entry

    def passed(self, width, page, visit):
        """Keeps the result of a page that passed at this width."""
        files = {path: self.digest(path) for path in sorted(visit["files"])}
        with self.lock:
            self.new[f"{width} {page}"] = {"files": files, "links": sorted(visit["links"]),
                                           "screenshots": sorted(visit["screenshots"]),
                                           "figures": sorted(visit["figures"])}

    def save(self):
        if not self.path:
            return
        os.makedirs(os.path.dirname(self.path), exist_ok=True)
        with open(self.path + ".new", "w", encoding="utf-8") as file:
            json.dump({"checker": self.key, "pages": self.new}, file, indent=1, sort_keys=True)
        os.replace(self.path + ".new", self.path)
