"""docs/integration.md, followed to the letter on a fresh ``django-admin startproject``.

The code blocks are taken from the document itself (each is marked by an
``<!-- integration: PATH MODE -->`` comment). The install block runs as a shell script in
a temporary directory, in a new virtual environment of its own (its ``git clone`` reads
this checkout's files instead of the network); the other blocks are applied to the project
it starts, and the result must pass ``check``, ``migrate``, and chat in a real browser
through ``manage.py runserver`` (daphne's), exactly as the guide tells a developer to.
"""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.browser import axe_violations, browser, save_screenshot  # noqa: F401
from tests.checkout import repository_copy
from tests.services import free_port

# Installing into a new virtual environment takes a minute on an idle 2-core machine and
# more than the suite's 120 s default beside other work: the install has its own bound.
INSTALL_TIMEOUT = 600
pytestmark = [
    pytest.mark.browser,
    pytest.mark.once,
    pytest.mark.full,
    pytest.mark.timeout(INSTALL_TIMEOUT + 300),
    pytest.mark.long(60),
]

REPO_ROOT = Path(__file__).resolve().parents[1]
GUIDE = REPO_ROOT / "docs" / "integration.md"
USERNAME, PASSWORD = "tryout", "pw-tryout-1234"


def guide_blocks(
    guide: Path = GUIDE, marker: str = "integration"
) -> list[tuple[str, str | None, str]]:
    """The guide's marked blocks: ``<!-- MARKER: PATH MODE -->`` above a fenced block."""
    block = re.compile(
        rf"<!-- {marker}: (?P<target>\S+)(?: (?P<mode>append|replace|new))? -->\n"
        r"```(?P<lang>\w*)\n(?P<body>.*?\n)```$",  # the closing fence: a line of its own
        re.S | re.M,
    )
    return [(m["target"], m["mode"], m["body"]) for m in block.finditer(guide.read_text())]


def test_the_guide_covers_every_step():
    text = GUIDE.read_text()
    targets = {(target, mode) for target, mode, _body in guide_blocks()}
    assert targets == {
        ("mysite/settings.py", "append"),
        ("mysite/asgi.py", "replace"),
        ("mysite/urls.py", "replace"),
        ("mysite/chat_agent.py", "new"),
        ("templates/django_agent_sessions/base.html", "new"),
        ("install", None),
        ("shell", None),
    }
    assert 'pip install "./django-agent-sessions[websocket]"\n' in install_block()
    assert "pip install -e\n./django-agent-sessions" in text  # to work on the app
    assert "pip\nwheel --no-deps -w dist ./django-agent-sessions" in text  # a wheel
    assert "channels.layers.InMemoryChannelLayer" in text
    assert "channels_redis.core.RedisChannelLayer" in text
    # The production Redis hosts as the example project configures them (test_settings).
    assert '"socket_timeout": None, "max_connections": 1000' in text
    assert 'pip install "./django-agent-sessions[redis]"' in text
    readme = (REPO_ROOT / "README.md").read_text()
    assert "(docs/integration.md)" in readme


def install_block(guide: Path = GUIDE, marker: str = "integration") -> str:
    (body,) = [b for target, _mode, b in guide_blocks(guide, marker) if target == "install"]
    return body


def install_as_the_guide_says(
    root: Path, env: dict[str, str], guide: Path = GUIDE, marker: str = "integration"
) -> Path:
    """Run the guide's install block in ``root``; the project directory it ends in."""
    script = install_block(guide, marker)
    clone = re.search(r"^git clone \S+$", script, re.M)
    assert clone is not None, "the install block clones the repository"
    # No network here: the clone is a copy of this checkout, as a clone of it would hold.
    repository_copy(root / "django-agent-sessions")
    script = script.replace(clone.group(0), "test -f django-agent-sessions/pyproject.toml")
    done = subprocess.run(
        ["bash", "-euxc", script + "\npwd"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=INSTALL_TIMEOUT,
    )
    assert done.returncode == 0, f"the install block failed:\n{done.stdout}\n{done.stderr}"
    return Path(done.stdout.strip().splitlines()[-1])


def run(cwd: Path, env: dict[str, str], *args: str) -> str:
    """``python ARGS`` with the guide's virtual environment."""
    python = cwd.parent / ".venv" / "bin" / "python"
    done = subprocess.run(
        [str(python), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=180
    )
    assert done.returncode == 0, f"{' '.join(args)} failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout + done.stderr


@pytest.fixture(scope="module")
def project(
    tmp_path_factory: pytest.TempPathFactory, offline_pip: dict[str, str]
) -> tuple[Path, dict[str, str]]:
    root = tmp_path_factory.mktemp("fresh")
    env = fresh_environment(offline_pip)
    project_dir = install_as_the_guide_says(root, env)
    assert project_dir == root / "mysite"
    apply_blocks(project_dir, guide_blocks())
    return project_dir, env


def fresh_environment(offline_pip: dict[str, str]) -> dict[str, str]:
    """This process's environment, less what would configure the fresh project, with
    pip reading the run's wheelhouse (``tests/wheelhouse.py``)."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("DJANGO_", "OPENAI_", "AGENT_SESSIONS_")) and key != "PYTHONPATH"
    }
    env.update(PYTHONDONTWRITEBYTECODE="1", PYTHONUNBUFFERED="1", **offline_pip)
    return env


def apply_blocks(project_dir: Path, blocks: list[tuple[str, str | None, str]]) -> None:
    """Write each block into the project as its marker says (append, replace, new)."""
    for target, mode, body in blocks:
        if target in {"install", "shell"}:
            continue
        path = project_dir / target
        if mode == "append":
            path.write_text(path.read_text() + "\n" + body)
        else:
            assert (mode == "new") != path.exists(), f"{target}: the guide says {mode}"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(body)


def test_check_and_migrate_are_clean(project):
    project_dir, env = project
    out = run(project_dir, env, "manage.py", "check")
    assert "System check identified no issues (0 silenced)." in out, out
    run(project_dir, env, "manage.py", "migrate", "--no-input", "-v", "0")


@pytest.fixture(scope="module")
def server(project) -> Iterator[str]:
    project_dir, env = project
    migrate_with_a_user(project_dir, env)
    port = free_port()
    with served(
        project_dir, env, ["manage.py", "runserver", f"127.0.0.1:{port}", "--noreload"], port
    ) as url:
        yield url


def migrate_with_a_user(project_dir: Path, env: dict[str, str]) -> None:
    """The guide's ``migrate`` and ``createsuperuser`` (the tryout login)."""
    run(project_dir, env, "manage.py", "migrate", "--no-input", "-v", "0")
    run(
        project_dir,
        {**env, "DJANGO_SUPERUSER_PASSWORD": PASSWORD},
        "manage.py",
        "createsuperuser",
        "--no-input",
        "--username",
        USERNAME,
        "--email",
        "tryout@example.com",
    )


@contextlib.contextmanager
def served(project_dir: Path, env: dict[str, str], args: list[str], port: int) -> Iterator[str]:
    """``python ARGS`` (a server) in the guide's virtual environment, until it answers."""
    log_path = project_dir / "server.log"
    log = log_path.open("wb")
    python = str(project_dir.parent / ".venv" / "bin" / "python")
    process = subprocess.Popen(
        [python, *args], cwd=project_dir, env=env, stdout=log, stderr=subprocess.STDOUT
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            assert process.poll() is None, log_path.read_text()
            try:
                with urllib.request.urlopen(url + "/admin/login/", timeout=5) as reply:
                    if reply.status == 200:
                        break
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                pass
            assert time.monotonic() < deadline, "the server did not answer in 60 s"
            time.sleep(0.2)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=15)
        log.close()


def assert_styled_by_the_guides_base_template(page) -> None:
    """The guide's own base.html is the one in use, and chat.css still styles the page."""
    assert page.title().endswith(" · My site")
    styles = page.evaluate(
        """() => {
          const style = (id) => getComputedStyle(document.getElementById(id));
          return {
            send: style("send-button").backgroundColor,
            layout: getComputedStyle(document.querySelector(".layout")).display,
            sidebar: style("sidebar").width,
          };
        }"""
    )
    # chat.css's --das-accent on the Send button, and its 17rem sidebar beside the chat.
    assert styles == {"send": "rgb(29, 78, 216)", "layout": "flex", "sidebar": "272px"}, styles


def watched_page(browser: Any) -> tuple[Any, Any, list[str]]:  # noqa: F811
    """A desktop-sized page whose script errors and console errors are collected."""
    context = browser.new_context(viewport={"width": 1200, "height": 800})
    context.set_default_timeout(20_000)
    page = context.new_page()
    problems: list[str] = []
    page.on("pageerror", lambda error: problems.append(str(error)))
    page.on(
        "console",
        lambda note: (
            problems.append(f"{note.text} {note.location}") if note.type == "error" else None
        ),
    )
    return context, page, problems


def test_a_fresh_project_chats(browser, server):  # noqa: F811
    context, page, problems = watched_page(browser)
    # Nothing the pages ask for may fail: no favicon 404, no missing static file.
    page.on(
        "response",
        lambda response: (
            problems.append(f"{response.status} {response.url}") if response.status >= 400 else None
        ),
    )
    try:
        page.goto(server + "/chat/")
        # Not signed in: the admin's login page, as the guide's LOGIN_URL says.
        page.get_by_label("Username").fill(USERNAME)
        page.get_by_label("Password").fill(PASSWORD)
        page.get_by_role("button", name="Log in").click()
        page.wait_for_url(re.compile(r".*/chat/c/[0-9a-f]{32}/$"))
        page.wait_for_selector('#connection-status[data-state="connected"]')
        problems.clear()  # the admin's login page has no icon: its /favicon.ico is a 404
        icon = page.locator("link[rel=icon]").get_attribute("href")
        assert page.request.get(server + str(icon)).status == 200

        box = page.get_by_label("Message", exact=True)
        box.fill("hello there")
        box.press("Enter")
        reply = page.locator('[data-kind="message"][data-role="assistant"] .text.markdown')
        reply.wait_for()
        assert reply.locator("strong").first.text_content() == "hello there"
        assert reply.locator("li").count() == 2
        assert "print('hello from the chat')" in str(reply.locator("pre code").text_content())
        # The conversation now exists, and is listed under the title of its first message.
        page.wait_for_selector("#conversation-list a[aria-current=page]:text('hello there')")
        assert_styled_by_the_guides_base_template(page)
        save_screenshot(page, "integration-fresh-project")
        assert problems == []

        # Signing out works with nothing but the admin's URLs, and comes back to a login
        # (the admin's page, which has no icon of its own: its favicon request may 404).
        page.get_by_role("button", name=f"Log out {USERNAME}").click()
        page.wait_for_url(re.compile(r".*/admin/login/\?next=/chat/$"))
        assert page.request.get(server + "/chat/", max_redirects=0).status == 302
    finally:
        context.close()
