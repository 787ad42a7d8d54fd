"""The direct hop onto asgiref's sync thread that DjangoSession takes, and the asgiref
internals it relies on.

The ``*_assumption`` tests fail loudly when an asgiref release changes those internals;
the others check that the hop runs where ``sync_to_async`` would, in the caller's context,
and that the general path is still taken under a sync caller, in a thread-sensitive
context and under ``bridge.shipped_path()``.
"""

from __future__ import annotations

import asyncio
import contextvars
import threading

from asgiref.sync import SyncToAsync, ThreadSensitiveContext, async_to_sync, sync_to_async

from django_agent_sessions.store import bridge


def test_asgiref_executor_choice_assumption():
    # asgiref 3.x picks the thread of a thread-sensitive call from exactly these.
    assert bridge.direct_hop_supported(), "asgiref changed how SyncToAsync picks its thread"


async def test_direct_hop_runs_where_asgiref_would():
    assert bridge._direct_hop_possible()
    asgiref_thread = await sync_to_async(threading.get_ident)()
    assert await bridge.run(threading.get_ident) == asgiref_thread
    assert asgiref_thread != threading.get_ident()
    # The same thread (and so the same connection) as Django's own async ORM.
    assert (
        await bridge.run(threading.get_ident)
        == await sync_to_async(threading.get_ident, thread_sensitive=True)()
    )


async def test_direct_hop_carries_the_callers_context():
    var: contextvars.ContextVar[str] = contextvars.ContextVar("var", default="unset")
    var.set("caller")
    assert await bridge.run(var.get) == "caller"


def test_under_a_sync_caller_the_hop_runs_on_the_callers_thread():
    async def inner() -> tuple[bool, int]:
        return bridge._direct_hop_possible(), await bridge.run(threading.get_ident)

    possible, thread = async_to_sync(inner)()
    assert not possible
    assert thread == threading.get_ident()


async def test_in_a_thread_sensitive_context_the_hop_uses_that_contexts_thread():
    async with ThreadSensitiveContext():
        assert not bridge._direct_hop_possible()
        context_thread = await sync_to_async(threading.get_ident)()
        assert await bridge.run(threading.get_ident) == context_thread
    assert context_thread != await sync_to_async(threading.get_ident)()


async def test_shipped_path_turns_the_direct_hop_off():
    with bridge.shipped_path():
        assert not bridge._direct_hop_possible()
        assert not await bridge.run(bridge.shortcuts_allowed)
        assert (
            await bridge.run(threading.get_ident)
            == SyncToAsync.single_thread_executor.submit(threading.get_ident).result()
        )
    assert await bridge.run(bridge.shortcuts_allowed)


async def test_a_remembered_task_still_honours_a_thread_sensitive_context():
    assert bridge._direct_hop_possible()  # the task is now remembered
    async with ThreadSensitiveContext():
        assert not bridge._direct_hop_possible()
        context_thread = await sync_to_async(threading.get_ident)()
        assert await bridge.run(threading.get_ident) == context_thread
    assert bridge._direct_hop_possible()


async def test_a_remembered_task_is_not_kept_alive_by_its_context():
    import gc
    import weakref

    async def hop() -> bool:
        return bridge._direct_hop_possible()

    gc.disable()  # freed by reference counting alone: a cycle through its context would stay
    try:
        task = asyncio.ensure_future(hop())
        assert await task
        finished = weakref.ref(task)
        del task
        await asyncio.sleep(0)  # the loop lets go of the finished task's last callback
        assert finished() is None
    finally:
        gc.enable()
    assert bridge._direct_hop_possible()  # this task still looks for itself


def test_a_task_under_a_sync_caller_is_never_remembered():
    # ThreadSensitiveContext clears AsyncToSync.executors.current inside it and restores
    # the sync caller's executor when it exits: the hop must see the restored value.
    async def inner() -> list[bool]:
        seen = [bridge._direct_hop_possible()]
        async with ThreadSensitiveContext():
            seen.append(bridge._direct_hop_possible())
        seen.append(bridge._direct_hop_possible())
        seen.append(await bridge.run(threading.get_ident) == caller)
        return seen

    caller = threading.get_ident()
    assert async_to_sync(inner)() == [False, False, False, True]


def test_asgiref_sets_the_sync_callers_executor_only_where_the_hop_expects():
    # The per-task memory in bridge._no_sync_caller relies on asgiref assigning
    # AsyncToSync.executors.current only in AsyncToSync.__call__ (the sync caller's
    # context) and in ThreadSensitiveContext, which restores it on exit.
    import inspect

    import asgiref.sync

    source = inspect.getsource(asgiref.sync)
    assigning = [line.strip() for line in source.splitlines() if "executors.current =" in line]
    assert sorted(assigning) == [
        "AsyncToSync.executors.current = None",
        "AsyncToSync.executors.current = self._old_executor",
        "self.executors.current = current_executor",
        "self.executors.current = old_executor",
    ], "asgiref changed where it sets AsyncToSync.executors.current"
