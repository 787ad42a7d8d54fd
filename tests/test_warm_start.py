"""The suite's warm process starts (``tests/warm_start.py``) behave as the interpreter's
own: the command line, the environment and working directory given, the output, a
listening socket handed over, a socket pair as stdin and stdout, the exit status, and a
signal's end."""

from __future__ import annotations

import signal
import socket
import subprocess
from pathlib import Path

import pytest

from tests import warm_start

pytestmark = pytest.mark.once

SHOW = (
    "import json, os, sys\n"
    "print(json.dumps({'argv': sys.argv, 'cwd': os.getcwd(), 'env': os.environ.get('WARM'),"
    " 'has_env_of_test': 'PYTEST_CURRENT_TEST' in os.environ}), flush=True)\n"
    "print('to stderr', file=sys.stderr)\n"
    "sys.exit(int(sys.argv[1]))\n"
)


@pytest.fixture(params=["warm", "popen"])
def mode(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("TEST_WARM_START", "1" if request.param == "warm" else "0")
    return str(request.param)


def test_a_script_runs_with_its_arguments_environment_and_directory(mode, tmp_path):
    code, output = warm_start.run(
        ["-c", SHOW, "3", "more"], env={"WARM": mode}, cwd=tmp_path, timeout=60
    )
    assert code == 3
    shown, errors = output.splitlines()
    assert shown == (
        f'{{"argv": ["-c", "3", "more"], "cwd": "{tmp_path}", "env": "{mode}",'
        ' "has_env_of_test": false}'
    )
    assert errors == "to stderr"


def test_output_and_errors_go_to_their_own_files(mode, tmp_path):
    out, err = tmp_path / "out", tmp_path / "err"
    process = warm_start.start(["-c", SHOW, "0"], env={}, cwd=tmp_path, output=out, errors=err)
    assert process.wait(60) == 0
    assert out.read_text().startswith('{"argv": ["-c", "0"]')
    assert err.read_text() == "to stderr\n"


def test_a_module_runs_as_main_with_the_listener_it_was_handed(mode, tmp_path):
    listener = socket.create_server(("127.0.0.1", 0))
    serve = (
        "import socket, sys\n"
        "server = socket.socket(fileno=int(sys.argv[1]))\n"
        "connection, _ = server.accept()\n"
        "connection.sendall(b'served by ' + sys.argv[0].encode())\n"
    )
    (tmp_path / "serve_once.py").write_text(serve)
    process = warm_start.start(
        ["-m", "serve_once", warm_start.LISTENER_FD],
        env={"PYTHONPATH": str(tmp_path)},
        cwd=tmp_path,
        output=tmp_path / "log",
        listener=listener,
    )
    with socket.create_connection(listener.getsockname(), timeout=60) as client:
        reply = client.recv(1000)
    assert reply == f"served by {tmp_path / 'serve_once.py'}".encode()
    assert process.wait(60) == 0
    listener.close()


def test_a_killed_process_ends_by_its_signal_and_wait_can_time_out(mode, tmp_path):
    process = warm_start.start(
        ["-c", "import time\nwhile True: time.sleep(1)"], env={}, cwd=tmp_path
    )
    assert process.poll() is None
    with pytest.raises(subprocess.TimeoutExpired):
        process.wait(0.2)
    process.send_signal(signal.SIGKILL)
    assert process.wait(60) == -signal.SIGKILL
    assert process.returncode == -signal.SIGKILL
    assert process.poll() == -signal.SIGKILL


def test_the_manage_py_of_the_example_project_runs(mode):
    root = Path(__file__).resolve().parents[1]
    env = {"DJANGO_SETTINGS_MODULE": "example_project.settings", "SECRET_KEY": "x"}
    code, output = warm_start.run(
        ["manage.py", "check"],
        env={**env, "DATABASE_URL": "sqlite:///:memory:"},
        cwd=root,
        timeout=120,
    )
    assert code == 0, output


def test_a_socket_pair_is_the_process_s_stdin_and_stdout(mode, tmp_path):
    ours, theirs = socket.socketpair()
    echo = "import sys\nline = sys.stdin.readline()\nprint('heard', line.strip(), flush=True)\n"
    process = warm_start.start(["-c", echo], env={}, cwd=tmp_path, talk=theirs)
    theirs.close()
    ours.settimeout(60)
    ours.sendall(b"hello\n")
    with ours.makefile("r") as replies:
        assert replies.readline() == "heard hello\n"
    assert process.wait(60) == 0
    ours.close()
