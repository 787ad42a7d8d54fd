"""The built wheel installs into a fresh project: INSTALLED_APPS + migrate, nothing else."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.once


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(out),
            str(REPO_ROOT),
        ],
        check=True,
        capture_output=True,
    )
    (built,) = out.glob("django_agent_sessions-*.whl")
    return built


def test_wheel_ships_the_app_and_only_the_app(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    assert "django_agent_sessions/py.typed" in names
    assert "django_agent_sessions/migrations/0001_initial.py" in names
    # The packaged chat: URLconf, views, templates and static files.
    for shipped in [
        "django_agent_sessions/urls.py",
        "django_agent_sessions/chat/views.py",
        "django_agent_sessions/rendering.py",
        "django_agent_sessions/templates/django_agent_sessions/base.html",
        "django_agent_sessions/templates/django_agent_sessions/chat.html",
        "django_agent_sessions/static/django_agent_sessions/chat/chat.js",
        "django_agent_sessions/static/django_agent_sessions/chat/chat.css",
        # The wire protocol's JSON Schema, for front ends to fetch.
        "django_agent_sessions/static/django_agent_sessions/wire-protocol.schema.json",
        # The message catalogue, the template for translations (bin/messages).
        "django_agent_sessions/locale/en/LC_MESSAGES/django.po",
    ]:
        assert shipped in names, shipped
    assert not [n for n in names if n.startswith(("tests/", "example_project/", "benchmarks/"))]


def run(args: list[str], cwd: Path, env: dict[str, str]) -> str:
    result = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def test_fresh_project_installs_and_migrates(wheel, tmp_path):
    target = tmp_path / "site"
    run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "-q",
            "--no-deps",
            "--target",
            str(target),
            str(wheel),
        ],
        tmp_path,
        dict(os.environ),
    )
    # The installed wheel first, then the dependencies already in this environment.
    env = {
        "PATH": os.environ["PATH"],
        "PYTHONPATH": os.pathsep.join([str(target), sysconfig.get_paths()["purelib"]]),
    }
    python = [sys.executable, "-m"]
    run([*python, "django", "startproject", "mysite", str(tmp_path)], tmp_path, env)
    settings = tmp_path / "mysite" / "settings.py"
    settings.write_text(
        settings.read_text().replace(
            "INSTALLED_APPS = [", "INSTALLED_APPS = [\n    'django_agent_sessions',"
        )
    )
    env["DJANGO_SETTINGS_MODULE"] = "mysite.settings"
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path), env["PYTHONPATH"]])
    out = run([*python, "django", "migrate", "-v", "1"], tmp_path, env)
    assert "Applying django_agent_sessions.0001_initial... OK" in out
    code = (
        "import asyncio, django; django.setup();"
        "import django_agent_sessions as app; from django_agent_sessions import DjangoSession;"
        "s = DjangoSession('fresh');"
        "asyncio.run(s.add_items([{'role': 'user', 'content': 'hi'}]));"
        "print(app.__file__, asyncio.run(s.get_items()))"
    )
    out = run([sys.executable, "-c", code], tmp_path, env)
    assert out.startswith(str(target))
    assert "'content': 'hi'" in out


def test_channels_and_daphne_are_the_websocket_extras_only(wheel):
    with zipfile.ZipFile(wheel) as archive:
        (metadata,) = [n for n in archive.namelist() if n.endswith(".dist-info/METADATA")]
        requires = [
            line.removeprefix("Requires-Dist: ")
            for line in archive.read(metadata).decode().splitlines()
            if line.startswith("Requires-Dist: ")
        ]
    core = [r for r in requires if "extra ==" not in r]
    assert not [r for r in core if r.startswith(("channels", "daphne"))], core
    websocket = [r.split(";")[0].strip() for r in requires if "extra == 'websocket'" in r]
    # pyOpenSSL: a floor under daphne's Twisted[tls] (pyproject.toml says why).
    assert sorted(websocket) == ["channels>=4.2", "daphne>=4.2.2", "pyopenssl>=25"]


WITHOUT_CHANNELS = """
import sys
sys.modules["channels"] = sys.modules["daphne"] = None  # as if not installed
import django
from django.conf import settings
settings.configure(
    INSTALLED_APPS=[
        "django.contrib.admin", "django.contrib.auth", "django.contrib.contenttypes",
        "django.contrib.sessions", "django.contrib.messages", "django_agent_sessions",
    ],
    DATABASES={"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": ":memory:"}},
    ROOT_URLCONF="tests.urls_without_channels",
    AGENT_SESSIONS={"AGENT": "tests.chat_agent.make_demo_agent"},
    SECRET_KEY="x",
)
django.setup()
from django.core import checks
errors = [m.id for m in checks.run_checks() if m.is_serious() and m.id.startswith("django_agent")]
from django.urls import reverse
from django_agent_sessions.conf.transports import chat_transport
print(errors, chat_transport(), reverse("django_agent_sessions:events", args=["c1"]))
try:
    import django_agent_sessions.routing
except ImportError as error:
    print(error)
"""


def test_the_app_and_its_sse_chat_work_without_channels():
    """Core, checks, URLs and the SSE transport import with Channels and daphne missing;
    the websocket routes say what to install."""
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    out = run([sys.executable, "-c", WITHOUT_CHANNELS], REPO_ROOT, env)
    assert out.splitlines()[0] == "[] sse /chat/c/c1/events/"
    assert 'pip install "django-agent-sessions[websocket]"' in out.splitlines()[1]
