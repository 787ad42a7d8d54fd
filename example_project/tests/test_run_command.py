"""``bin/run``, the README's command, as a new user runs it.

The copy holds exactly the repository's files (no database, no ``.venv``), and ``bin/run``
builds its own virtual environment there from what ``pyproject.toml`` lists, so a runtime
dependency missing from that list fails here: the server does not start, or does not
answer a chat message. Only pip's download cache is shared with the machine, as it would
be on a developer's, and pip reads the run's wheelhouse instead of asking the package
index (``tests/wheelhouse.py``). Then the demo login signs in and a websocket message gets
a streamed reply from the offline demo model.
"""

from __future__ import annotations

import asyncio
import http.cookiejar
import os
import re
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from example_project.tests.live import LiveSocket
from example_project.tests.servers import wait_until_serving
from tests.checkout import repository_copy
from tests.services import free_port

# A new virtual environment with every dependency, from pip's cache: about a minute here.
START_TIMEOUT = 300.0

pytestmark = [pytest.mark.once, pytest.mark.full, pytest.mark.long(70)]


class RunCommand:
    def __init__(self, checkout: Path, port: int, offline_pip: dict[str, str]) -> None:
        self.checkout = checkout
        self.port = port
        self.output = checkout / f"bin-run-{time.monotonic_ns()}.log"
        env = {
            key: value
            for key, value in os.environ.items()
            if key not in {"DATABASE_URL", "REDIS_URL", "OPENAI_API_KEY", "PYTHONPATH"}
            and not key.startswith("DJANGO_")
        }
        # Nothing of the test environment: bin/run finds python3.11 (or python3) on PATH.
        env["PATH"] = os.pathsep.join(
            part for part in env.get("PATH", "").split(os.pathsep) if part != str(VENV_BIN)
        )
        env.pop("VIRTUAL_ENV", None)
        env.update(PORT=str(port), DEMO_MODEL_DELAY="0", **offline_pip)
        with self.output.open("wb") as log:
            # A session of its own, so that stop() reaches runserver's reloader child too.
            self.process = subprocess.Popen(
                ["bin/run"],
                cwd=checkout,
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def log(self) -> str:
        return self.output.read_text(errors="replace")

    def wait_until_serving(self) -> None:
        problem = wait_until_serving(self.url, self.process, START_TIMEOUT, poll=0.5)
        if problem is not None:
            self.stop()
            pytest.fail(f"bin/run {problem}:\n{self.log()}")

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGINT)  # Ctrl+C, as a user stops it
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=20)


VENV_BIN = Path(sys.prefix) / "bin"


def log_in_and_open_chat(url: str, username: str, password: str) -> tuple[str, str]:
    """The chat page the demo login lands on, and its session cookie."""
    jar = http.cookiejar.CookieJar()
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
    opener.open(url + "/accounts/login/", timeout=10).read()
    token = next(cookie.value for cookie in jar if cookie.name == "csrftoken")
    form = urllib.parse.urlencode(
        {"username": username, "password": password, "csrfmiddlewaretoken": token}
    ).encode()
    request = urllib.request.Request(
        url + "/accounts/login/", data=form, headers={"Referer": url + "/accounts/login/"}
    )
    with opener.open(request, timeout=10) as reply:
        # The newest conversation, or a new one for a login that has none.
        assert re.fullmatch(r"/c/[^/]+/", urllib.parse.urlparse(reply.url).path), reply.url
        page = str(reply.read().decode())
    session = next(cookie.value for cookie in jar if cookie.name == "sessionid")
    return page, f"sessionid={session}"


async def chat_once(url: str, cookie: str) -> list[dict[str, object]]:
    """One message over the websocket; the frames up to the run's end."""
    socket = LiveSocket(url, f"bin-run-{time.monotonic_ns()}", cookie)
    await socket.open()
    try:
        await socket.send({"type": "user_message", "text": "hello from a fresh clone"})
        return await socket.until("run.completed", "run.failed", timeout=60)
    finally:
        await socket.close()


@pytest.mark.timeout(2 * START_TIMEOUT + 60)
def test_bin_run_serves_the_chat_from_a_clean_checkout(tmp_path, offline_pip):
    checkout = repository_copy(tmp_path / "checkout")
    assert not (checkout / "db.sqlite3").exists()
    assert not (checkout / ".venv").exists()

    first = RunCommand(checkout, free_port(), offline_pip)
    try:
        first.wait_until_serving()
        assert "Demo login: demo / demo" in first.log()
        assert f"http://127.0.0.1:{first.port}/" in first.log()
        page, cookie = log_in_and_open_chat(first.url, "demo", "demo")
        assert "data-socket-path=" in page
        assert 'href="/admin/"' in page
        frames = asyncio.run(chat_once(first.url, cookie))
    finally:
        first.stop()
    kinds = [frame["type"] for frame in frames]
    assert kinds[0] == "run.started", kinds
    assert kinds[-1] == "run.completed", (frames[-1], first.log())
    assert "text.delta" in kinds, kinds
    assert (checkout / "db.sqlite3").exists()
    # bin/run built its own environment, with the project installed from this checkout.
    assert (checkout / ".venv" / "bin" / "daphne").exists()

    # Running it again reuses the database and the login.
    again = RunCommand(checkout, free_port(), offline_pip)
    try:
        again.wait_until_serving()
        assert "Demo login: demo / demo (created earlier" in again.log()
        log_in_and_open_chat(again.url, "demo", "demo")
        assert "Creating the virtual environment" not in again.log()
    finally:
        again.stop()
