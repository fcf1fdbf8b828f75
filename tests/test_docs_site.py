"""The docs site (`make docs`): MkDocs builds docs/ and an API reference written from the
docstrings, with every warning (a dead link, a missing anchor) an error; a real headless
browser then reads the home page, the tutorial and an API page, and searches.

The browser is Debian's Chromium driven by Selenium. Where it is not installed the browser
tests skip and say so, unless CHAINRULE_REQUIRE_BROWSER=1 (CI installs it and sets that).
"""

import functools
import http.server
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

pytest.importorskip("mkdocs", reason="the docs extra is not installed")
import docs_site  # noqa: E402  (needs mkdocs: the hook builds MkDocs' File objects)
import make_api_docs  # noqa: E402

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DRIVER = shutil.which("chromedriver")
REQUIRE_BROWSER = os.environ.get("CHAINRULE_REQUIRE_BROWSER") == "1"
BROWSER_REASON = ("Chromium and chromedriver are not installed (Debian's chromium and "
                  "chromium-driver; CI installs them: CHAINRULE_REQUIRE_BROWSER=1)")


# ---------------------------------------------------------------------------------------
# Docstrings as pages
# ---------------------------------------------------------------------------------------

def test_a_docstring_becomes_prose_and_console_blocks():
    doc = ("The gradient: ``grad(f)(x)``.\n\nMore words\non two lines.\n\n"
           ">>> cr.grad(lambda x: x * x)(3.0)\n6.0\n\nAfter the example.")
    assert docs_site.docstring_markdown(doc) == [
        "The gradient: `grad(f)(x)`.", "",
        "More words on two lines.", "",
        "```pycon", ">>> cr.grad(lambda x: x * x)(3.0)", "6.0", "```", "",
        "After the example.", ""]


def test_an_indented_block_stays_code_and_markdown_signs_are_escaped():
    doc = "Shapes::\n\n    (n, k) @ (k, m) -> (n, m)\n\na_b * c"
    assert docs_site.docstring_markdown(doc) == [
        "Shapes:", "", "```text", "(n, k) @ (k, m) -> (n, m)", "```", "",
        r"a\_b \* c", ""]


def test_every_section_of_the_reference_has_a_page_in_the_navigation():
    """The hook lists each section's page where mkdocs.yml names the reference, so a new
    section of docs/api.md is in the site's navigation with nothing written for it."""
    config = {"nav": [{"Home": "README.md"}, {"API reference": "reference/index.md"}]}
    reference = docs_site.on_config(config)["nav"][1]["API reference"]
    pages = docs_site.reference_pages()
    listed = [reference[0]] + [next(iter(entry.values())) for entry in reference[1:]]
    assert sorted(listed) == sorted(pages)
    assert [next(iter(entry)) for entry in reference[1:]] == [
        section.title for section in make_api_docs.sections()]


# ---------------------------------------------------------------------------------------
# The build
# ---------------------------------------------------------------------------------------

@functools.cache
def _built_site(into):
    """Build the site once per process, warnings as errors (mkdocs.yml: strict)."""
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    result = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict",
                             "--site-dir", str(into)], cwd=ROOT, env=env,
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    return into


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    return _built_site(tmp_path_factory.mktemp("site") / "site")


@pytest.mark.slow  # (about 15 s: every page and the reference of ~900 names)
def test_the_site_builds_with_a_page_per_docs_file_and_per_section(site):
    for page in ROOT.glob("docs/*.md"):
        name = "index.html" if page.name == "README.md" else page.stem + ".html"
        assert (site / name).exists(), name
    transforms = (site / "reference" / "transforms.html").read_text(encoding="utf-8")
    for name in ("cr.grad", "cr.hessian", "cr.sparse_jacobian", "cr.custom_vjp"):
        assert f'id="{name.replace(".", "-")}"' in transforms, name
    assert "&gt;&gt;&gt;" in transforms  # the examples are there, as code


# ---------------------------------------------------------------------------------------
# In a browser
# ---------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def served(site):
    """The built site on a local port, as a reader's browser would get it."""
    handler = functools.partial(_QuietHandler, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def browser():
    if not (CHROMIUM and DRIVER):
        if REQUIRE_BROWSER:
            pytest.fail(BROWSER_REASON)
        pytest.skip(BROWSER_REASON)
    webdriver = pytest.importorskip("selenium.webdriver")
    from selenium.webdriver.chrome.service import Service
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    # headless, as root in a container, and with nothing reaching out to the network
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--window-size=1280,1000"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(DRIVER), options=options)
    yield driver
    driver.quit()


def _visible_text(driver, selector):
    from selenium.webdriver.common.by import By
    return [element.text for element in driver.find_elements(By.CSS_SELECTOR, selector)]


def _open(driver, url, selector="article h1", tries=2):
    """Open url and wait for `selector` to be in the page. On a machine busy with the rest
    of the suite a load can end without the page's content, so a load that shows no such
    element is tried once more; a page that lacks it on both tries fails, naming what the
    browser showed instead."""
    from selenium.common.exceptions import TimeoutException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait
    for _ in range(tries):
        driver.get(url)
        try:
            WebDriverWait(driver, 20).until(
                lambda d: d.find_elements(By.CSS_SELECTOR, selector))
            return
        except TimeoutException:
            shown = driver.find_element(By.TAG_NAME, "body").text[:300]
    pytest.fail(f"{url} has no {selector!r} after {tries} loads; the browser showed "
                f"title {driver.title!r} and text {shown!r}")


@pytest.mark.slow
def test_the_home_page_the_tutorial_and_an_api_page_render(served, browser):
    _open(browser, f"{served}/index.html")
    assert "chainrule" in browser.title
    assert _visible_text(browser, "article h1") == ["Reading chainrule"]
    assert "Tutorial" in " ".join(_visible_text(browser, "nav.md-nav"))

    _open(browser, f"{served}/tutorial.html")
    assert _visible_text(browser, "article h1") == ["From one multiplication to a trained network"]
    headings = _visible_text(browser, "article h2")
    assert any("A number that remembers how it was made" in h for h in headings)

    _open(browser, f"{served}/reference/transforms.html#cr-hessian", "article h2")
    # (the heading a link points at shows its permalink sign)
    assert "cr.hessian" in [h.rstrip("¶") for h in _visible_text(browser, "article h2")]
    code = " ".join(_visible_text(browser, "article pre"))
    assert "cr.hessian(" in code and ">>>" in code  # the signature and its example


@pytest.mark.slow
def test_search_finds_hessian(served, browser):
    """Material's search (a web worker over the built index), opened with ?q= as its
    share links do; the results must lead to the page that defines cr.hessian."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait
    browser.get(f"{served}/index.html?q=hessian")
    WebDriverWait(browser, 30).until(
        lambda d: d.find_elements(By.CSS_SELECTOR, ".md-search-result__item"))
    meta = " ".join(_visible_text(browser, ".md-search-result__meta"))
    assert "matching document" in meta
    links = [a.get_attribute("href") for a in
             browser.find_elements(By.CSS_SELECTOR, ".md-search-result__link")]
    assert any("reference/transforms.html" in link for link in links), links
