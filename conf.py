"""Sphinx configuration of the book "Self-Attention, Step by Step".

Build it through CMake (the README's first command), which first runs Doxygen and
every chapter program, then calls /usr/bin/sphinx-build with warnings as errors.
"""
import html
import os
import re
import shutil
import sys
import xml.etree.ElementTree as ElementTree

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.directives.code import LiteralInclude
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "tools"))
sys.path.insert(1, os.path.join(os.path.dirname(os.path.abspath(__file__)), "tools", "checks"))
import exercises as exercise_markers  # noqa: E402  (the one reader of the exercise markers)
import check_markers as snippet_markers  # noqa: E402  (the one reader of the snippet and elision markers)

project = "Self-Attention, Step by Step"
author = "The authors of Self-Attention, Step by Step"
copyright = "2026, " + author
release = "1.0"

root_doc = "docs/index"
exclude_patterns = ["build", "build-*", "workspace", "README.md", "docs/contributing.md", ".ci", "tools", "src",
                    "tests", ".git"]
extensions = [
    "sphinx.ext.mathjax",
    "sphinx.ext.graphviz",
    "sphinx_copybutton",
    "breathe",
]

html_theme = "furo"
html_title = project
html_static_path = ["docs/_static"]
html_css_files = ["book.css"]
html_show_sourcelink = False
html_copy_source = False
html_favicon = "docs/_static/favicon.svg"
# book.js: accessibility fixes to the theme; listings.js: wrapped code keeps a hanging indent.
html_js_files = ["book.js", "listings.js"]
templates_path = ["docs/_templates"]

# Code colours that every reader can read: each token's colour has a contrast of at
# least 4.5:1 (WCAG 2.1 AA) against its listing's background, in light and dark mode.
# Furo's defaults (tango, native) fall short: tango's strings are 3.3:1 on #f8f8f8.
# tools/browser/accessibility.py checks the rendered pages against the same threshold.
pygments_style = "xcode"
pygments_dark_style = "github-dark"

# C++ is the language of every listing; the API page comes from Doxygen's XML.
highlight_language = "cpp"
primary_domain = "cpp"
breathe_projects = {"selfattention": os.environ.get("BOOK_DOXYGEN_XML", "build/doxygen/xml")}
breathe_default_project = "selfattention"
breathe_domain_by_extension = {"hpp": "cpp"}

graphviz_output_format = "svg"

# MathJax 2.7 from Debian's libjs-mathjax, copied into the book so it works offline.
MATHJAX_SOURCE = "/usr/share/javascript/mathjax"
MATHJAX_PARTS = [
    "MathJax.js",
    "config/TeX-AMS_SVG-full.js",
    "extensions",
    "jax/input/TeX",
    "jax/element",
    "jax/output/SVG/jax.js",
    "jax/output/SVG/config.js",
    "jax/output/SVG/autoload",
    "jax/output/SVG/fonts/TeX",
    "localization/en",
]
mathjax_path = "mathjax/MathJax.js?config=TeX-AMS_SVG-full"
mathjax2_config = {
    "showMathMenu": False,
    "messageStyle": "none",
    "SVG": {"linebreaks": {"automatic": False}},
}

# The chapter programs write their figures here when the book is built.
FIGURES = os.environ.get("BOOK_FIGURES", os.path.join(os.path.dirname(__file__), "build", "figures"))


class ChapterFigure(SphinxDirective):
    """``.. chapter-figure:: 02-scores/scores.svg`` shows a figure written at build time by a chapter program."""

    required_arguments = 1
    has_content = True
    option_spec = {"alt": directives.unchanged_required, "width": directives.unchanged}

    def run(self):
        if "alt" not in self.options:
            raise self.error(f"figure {self.arguments[0]} has no :alt: text; say what it shows "
                             "(for a heatmap, which cells dominate; for a plot, the trend)")
        path = os.path.join(FIGURES, self.arguments[0])
        if not os.path.exists(path):
            raise self.error(f"figure {self.arguments[0]} was not written by its chapter program (looked in {FIGURES})")
        self.env.note_dependency(path)
        uri = "/" + os.path.relpath(path, self.env.srcdir)
        image = nodes.image(uri=uri, alt=self.options["alt"])
        wide = svg_width(path) > COLUMN_WIDTH
        if "width" in self.options:
            image["width"] = self.options["width"]
        elif wide:
            # Shown scaled to the column, which makes Sphinx link it to the file itself
            # (html_scaled_image_link): a click opens it full size, where a compact heatmap's
            # cells give their values as tooltips.
            image["width"] = "100%"
        figure = nodes.figure("", image, classes=["chapter-figure"] + (["opens-full-size"] if wide else []))
        if self.content or wide:
            caption_text = " ".join(self.content)
            caption_nodes, messages = self.state.inline_text(caption_text, self.lineno)
            if wide:
                caption_nodes.append(nodes.Text((" " if caption_text else "") +
                                                "(Select the figure to open it full size.)"))
            figure += nodes.caption(caption_text, "", *caption_nodes)
            figure += messages
        return [figure]


# The widest figure the page's column shows at its own size, in CSS pixels (furo's content
# column at 1280 px); a wider one is scaled down and opens full size on a click.
COLUMN_WIDTH = 736


def svg_width(path):
    """The width attribute of an SVG file's root element, in pixels (0 where it has none)."""
    with open(path, encoding="utf-8") as file:
        head = file.read(2000)
    match = re.search(r'<svg\b[^>]*\swidth="([0-9.]+)', head)
    return float(match.group(1)) if match else 0.0


def copy_mathjax(app, exception):
    if exception is not None or app.builder.format != "html":
        return
    target = os.path.join(app.outdir, "_static", "mathjax")
    for part in MATHJAX_PARTS:
        source = os.path.join(MATHJAX_SOURCE, part)
        destination = os.path.join(target, part)
        if os.path.isdir(source):
            shutil.copytree(source, destination, dirs_exist_ok=True)
        else:
            os.makedirs(os.path.dirname(destination), exist_ok=True)
            shutil.copy2(source, destination)


# Debian's furo ships furo.js as an ES module that imports gumshoe-patched.js, but
# the theme loads it as a classic script (a SyntaxError in every page's console),
# and furo.css imports normalize.css from the web server's /javascript/ folder.
# Make both self-contained, so that the book also works from file:// and offline.
NORMALIZE_CSS = "/usr/share/javascript/normalize.css/normalize.css"
NORMALIZE_IMPORT = "@import url(/javascript/normalize.css/normalize.css);"
FURO_IMPORT = 'import Gumshoe from "./gumshoe-patched.js";'


def make_furo_self_contained(app, exception):
    if exception is not None or app.builder.format != "html":
        return
    scripts = os.path.join(app.outdir, "_static", "scripts")
    furo_js = os.path.join(scripts, "furo.js")
    gumshoe_js = os.path.join(scripts, "gumshoe-patched.js")
    if os.path.exists(furo_js) and os.path.exists(gumshoe_js):
        with open(furo_js, encoding="utf-8") as file:
            furo = file.read()
        if FURO_IMPORT in furo:
            with open(gumshoe_js, encoding="utf-8") as file:
                gumshoe = file.read()  # a UMD script: as a classic script it sets window.Gumshoe
            with open(furo_js, "w", encoding="utf-8") as file:
                file.write(gumshoe + "\n" + furo.replace(FURO_IMPORT, ""))
    styles = os.path.join(app.outdir, "_static", "styles")
    furo_css = os.path.join(styles, "furo.css")
    if os.path.exists(furo_css):
        with open(furo_css, encoding="utf-8") as file:
            css = file.read()
        if NORMALIZE_IMPORT in css:
            replacement = ""
            if os.path.exists(NORMALIZE_CSS):
                shutil.copy2(NORMALIZE_CSS, os.path.join(styles, "normalize.css"))
                replacement = "@import url(normalize.css);"
            with open(furo_css, "w", encoding="utf-8") as file:
                file.write(css.replace(NORMALIZE_IMPORT, replacement))


class BookLiteralInclude(LiteralInclude):
    """literalinclude without the exercise markers: a listing shows the code as a reader
    needs it, not the marker lines around each solution that tools/learn uses to make the
    exercise stubs (as Crafting Interpreters hides its snippet tags; tools/exercises.py reads them).

    A listing shows the step the prose explains, not its plumbing: the lines between
    ``//{ what they do`` and ``//}`` (argument checks, error messages) show as the one line
    ``// … what they do (see src/file.cpp)``, while the file stays the real file
    (tools/checks/check_markers.py reads the elisions and checks them).

    A listing that held such a region is the exercise's answer, so it comes folded in a
    ``<details class="solution">`` block: a learner scrolling past does not see it, and
    a reader opens it with one click. Listings of the chapter programs stay open."""

    def run(self):
        result = super().run()
        source = os.path.relpath(self.env.relfn2path(self.arguments[0])[1], self.env.srcdir)
        solutions = []
        for node in result:
            for block in node.findall(nodes.literal_block):
                lines = block.astext().split("\n")
                try:
                    kept, held = exercise_markers.without_markers(snippet_markers.elided(lines, source))
                except ValueError as problem:
                    raise self.error(str(problem))
                solutions += held
                if len(kept) != len(lines):
                    text = "\n".join(kept)
                    block.rawsource = text
                    block[:] = [nodes.Text(text)]
        if not solutions:
            return result
        return [nodes.raw("", solution_summary(solutions), format="html"), *result,
                nodes.raw("", "</details>", format="html")]


def solution_summary(markers):
    """The opening of the folded block, from markers such as "attention: chapter 7, The whole formula"."""
    names = [marker.split(":", 1)[0].strip() for marker in markers]
    chapter = markers[0].split(":", 1)[1].split(",", 1)[0].strip() if ":" in markers[0] else ""
    code = ", ".join(f'<code class="docutils literal notranslate"><span class="pre">{html.escape(name)}</span></code>'
                     for name in names)
    what = "solutions" if len(names) > 1 else "solution"
    exercise = "exercises" if len(names) > 1 else "exercise"
    of_chapter = f" of {html.escape(chapter)}" if chapter else ""
    return (f'<details class="solution"><summary>Show the {what}: the {exercise} {code}{of_chapter} '
            f'<span class="solution-note">(try it yourself first)</span></summary>')


# The playground (docs/playground): when the book build has compiled the chapter
# programs to WebAssembly, BOOK_PLAYGROUND names the folder that holds them, and each
# chapter page gets a "Try it here" section that runs its own program on the reader's
# numbers. A new chapter gets its panel from its folder name alone.
PLAYGROUND = os.environ.get("BOOK_PLAYGROUND", "")
if PLAYGROUND and os.path.isdir(os.path.join(PLAYGROUND, "playground")):
    html_static_path.append(PLAYGROUND)
# A config value: switching the playground on or off, or a chapter's module coming or going,
# reads every page again (a page read before its module was built would keep no panel).
book_playground = ";".join([PLAYGROUND] + sorted(os.listdir(os.path.join(PLAYGROUND, "playground")))
                           if PLAYGROUND and os.path.isdir(os.path.join(PLAYGROUND, "playground")) else [])
PLAYGROUND_INTRO = (
    "The chapter's own program, compiled to WebAssembly, runs here in your browser: the same "
    "code that the tests check, with the same options as on the command line. Change a field "
    "and the output and the figures follow. Nothing you type leaves this page.")
PLAYGROUND_PANEL = """<div class="playground" data-program="{program}">
<p class="playground-status" role="status">Loading the chapter program...</p>
<noscript><p>The panel needs JavaScript; the command line above runs the same program.</p></noscript>
</div>"""


def playground_program(docname):
    """The program of a chapter page, e.g. "ch07-attention", when its module was built."""
    match = re.fullmatch(r"chapters/(\d\d-[^/]+)/[^/]+", docname)
    if not match or not PLAYGROUND:
        return None
    program = f"ch{match.group(1)}"
    return program if os.path.isfile(os.path.join(PLAYGROUND, "playground", program + ".js")) else None


def add_playground(app, doctree):
    program = playground_program(app.env.docname)
    top = next(iter(doctree.findall(nodes.section)), None)
    if program is None or top is None:
        return
    section = nodes.section(ids=["try-it-here"], names=["try it here"])
    section += nodes.title("", "Try it here")
    section += nodes.paragraph("", PLAYGROUND_INTRO)
    section += nodes.raw("", PLAYGROUND_PANEL.format(program=program), format="html")
    # Right after "Try it yourself" (the same program on the command line), else at the end.
    sections = [child for child in top.children if isinstance(child, nodes.section)]
    after = next((child for child in sections if child[0].astext().startswith("Try it yourself")), None)
    top.insert(top.index(after) + 1 if after is not None else len(top.children), section)


def add_playground_script(app, pagename, templatename, context, doctree):
    # A chapter page with its panel, or another page (the front page) that shows an attention explorer.
    if playground_program(pagename) or (PLAYGROUND and 'class="explorer"' in context.get("body", "")):
        app.add_js_file("playground.js", defer="defer")


# Sphinx writes the front page at docs/index.html, because root_doc lives in docs/, and
# tools/book.sh prints that path. A reader who opens the book's folder looks for its
# index.html at the top: one is put there that forwards to the front page at once, with a
# plain meta refresh and a link (from file:// too, and without JavaScript), so that every
# browser follows it (tools/checks/check_book_path.py checks both).
FRONT_DOOR = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="refresh" content="0; url=docs/index.html">
<title>{title}</title>
<link rel="icon" href="_static/favicon.svg">
</head>
<body>
<p><a href="docs/index.html">{title}: open the front page</a></p>
</body>
</html>
"""


def write_front_door(app, exception):
    if exception is not None or app.builder.format != "html":
        return
    front = app.builder.get_target_uri(app.config.root_doc)
    if front != "index.html":
        with open(os.path.join(app.outdir, "index.html"), "w", encoding="utf-8") as file:
            file.write(FRONT_DOOR.replace("docs/index.html", front).format(title=html.escape(project)))


# Two accessibility fixes to what Sphinx 5.3 writes, made in the page's HTML so that
# they hold without JavaScript:
# - a toctree caption is <p class="caption" role="heading"> with no aria-level, which
#   ARIA requires of every heading; the book's part captions are level 2;
# - sphinx.ext.graphviz writes an SVG as <object> with its alt text as fallback
#   content, which a screen reader never reaches while the SVG loads; the object
#   gets role="img" and the alt text as its label.
CAPTION_HEADING = 'role="heading"'
GRAPHVIZ_OBJECT = re.compile(r'(<object data="[^"]*" type="image/svg\+xml" class="graphviz[^"]*")>\s*'
                             r'<p class="warning">(.*?)</p>', re.S)


def label_headings_and_objects(app, pagename, templatename, context, doctree):
    for part in ("furo_navigation_tree", "body"):  # the sidebar, and the front page's own toctrees
        if part in context:
            context[part] = context[part].replace(CAPTION_HEADING, CAPTION_HEADING + ' aria-level="2"')
    if "body" in context:
        context["body"] = GRAPHVIZ_OBJECT.sub(
            lambda match: f'{match.group(1)} role="img" aria-label="{match.group(2)}">'
                          f'<p class="warning">{match.group(2)}</p>', context["body"])


API_DIRECTIVE = re.compile(r"^\.\. doxygen\w+:: (sa::\w+)", re.M)


def check_api_page(app, doctree):
    """The API page says it shows every public name of the library: each class, struct, function,
    enum and constant of the namespace sa in Doxygen's XML needs its directive in docs/api.rst.
    A name without one is a warning, which fails the build (-W) and names the name."""
    if app.env.docname != "docs/api":
        return
    index = ElementTree.parse(os.path.join(breathe_projects["selfattention"], "index.xml")).getroot()
    public = set()
    for compound in index.iter("compound"):
        name = compound.findtext("name")
        if compound.get("kind") in ("class", "struct") and re.fullmatch(r"sa::\w+", name):
            public.add(name)
        elif compound.get("kind") == "namespace" and name == "sa":
            public.update("sa::" + member.findtext("name") for member in compound.findall("member")
                          if member.get("kind") in ("function", "enum", "variable", "typedef")
                          and re.fullmatch(r"\w+", member.findtext("name")))
    with open(app.env.doc2path("docs/api"), encoding="utf-8") as page:
        listed = set(API_DIRECTIVE.findall(page.read()))
    for name in sorted(public - listed):
        logging.getLogger(__name__).warning(f"the API page lists no {name}: add its directive to docs/api.rst",
                                            location="docs/api")


# Two hyphens that a page shows as one dash: Doxygen writes "--" in a comment as a dash (which
# Breathe passes on as the text "&#8212;") and Sphinx's smart quotes make "--" in running text an en
# dash, so an option written without backticks, --help, would read "–help". A dash glued to the word
# after it, or an HTML entity shown as text, is a warning, which fails the build (-W).
DASHED_OPTION = re.compile(r"(?<![\w-])(?:[\u2013\u2014]|&#821[12];)[a-z][a-z0-9-]*|&#\d+;")


def check_dashed_options(app, doctree):
    """Every option a page names reads as typed: --help, never a dash before the word (see DASHED_OPTION)."""
    for text in doctree.findall(nodes.Text):
        if isinstance(text.parent, (nodes.literal, nodes.literal_block, nodes.raw, nodes.math, nodes.math_block)):
            continue
        shown = text.astext()
        for match in DASHED_OPTION.finditer(shown):
            context = " ".join(shown[max(0, match.start() - 30):match.end() + 30].split())
            logging.getLogger(__name__).warning(
                f"{match.group(0)!r} (in \"{context}\") shows a dash or an HTML entity as text: write a "
                f"command-line option in backticks (`--help` in a C++ comment, ``--help`` in a page) so "
                f"that its two hyphens stay", location=text.parent)


def cache_newest_cpp_ids():
    """Sphinx 5.3 (Debian 12's) works out a C++ declaration's ID afresh every time a cross-reference is
    looked up, comparing it with each declaration of the same scope: half of the book's rendering went
    there (the API page's signatures name the library's types a thousand times). A declaration does
    not change once it is in the symbol tree, so its ID is kept after the first time, as later
    versions of Sphinx do; the pages come out byte for byte the same."""
    from sphinx.domains import cpp

    def get_newest_id(declaration):
        kept = declaration.__dict__.get("_book_newest_id")
        if kept is None:
            kept = declaration.get_id(cpp._max_id, True)
            declaration.__dict__["_book_newest_id"] = kept
        return kept

    cpp.ASTDeclaration.get_newest_id = get_newest_id


def setup(app):
    cache_newest_cpp_ids()
    app.add_directive("literalinclude", BookLiteralInclude, override=True)
    app.add_directive("chapter-figure", ChapterFigure)
    app.connect("build-finished", copy_mathjax)
    app.connect("build-finished", make_furo_self_contained)
    app.connect("build-finished", write_front_door)
    app.add_config_value("book_playground", "", "env")
    app.connect("doctree-read", check_api_page)
    app.connect("doctree-read", check_dashed_options)
    app.connect("doctree-read", add_playground, priority=100)  # before the table of contents is collected
    app.connect("html-page-context", add_playground_script)
    app.connect("html-page-context", label_headings_and_objects, priority=900)  # after furo's own (500)
    return {"parallel_read_safe": True}
