"""The API writes a scheduling cycle waits for (DynamicResources' PostFilter).

Upstream's PostFilter clears an unavailable claim's allocation (``UpdateStatus``) or
deletes a stale extended-resources claim (``deleteClaim``) before it returns, and its
status depends on the answer: ``deallocation of ResourceClaim completed`` on success,
the API's error otherwise (which also stops DefaultPreemption from running). Its
scheduling goroutine blocks meanwhile.

Here the scheduling cycle runs on the event loop, which cannot wait on a request that
needs the loop itself. ``CycleWrites`` is a thread with its own event loop and its own
``ApiClient`` (same connection settings; its own QPS bucket, as run's event and lease
clients have theirs): the cycle hands it the coroutine and blocks until the answer,
as upstream's cycle does. Informer events and binding completions wait on the main
loop for that one request, as upstream's next scheduling cycle waits. The thread
starts on first use (most runs never deallocate) and is closed with the client.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Callable, Coroutine
from typing import TypeVar

from .client import ApiClient

__all__ = ["CycleWrites"]

T = TypeVar("T")


class CycleWrites:
    def __init__(self, make_api: Callable[[], ApiClient]) -> None:
        self._make_api = make_api
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._api: ApiClient | None = None
        self._lock = threading.Lock()

    def _start(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None:
                loop = asyncio.new_event_loop()
                ready = threading.Event()

                def serve() -> None:
                    asyncio.set_event_loop(loop)
                    loop.call_soon(ready.set)
                    loop.run_forever()

                self._thread = threading.Thread(target=serve, name="cycle-writes", daemon=True)
                self._thread.start()
                ready.wait()
                self._loop = loop
            return self._loop

    async def _with_api(self, work: Callable[[ApiClient], Coroutine[object, object, T]]) -> T:
        if self._api is None:
            self._api = self._make_api()  # aiohttp: made inside the loop that uses it
        return await work(self._api)

    def run(self, work: Callable[[ApiClient], Coroutine[object, object, T]], timeout: float) -> T:
        """Run ``work(api)`` on the side loop and wait up to ``timeout`` seconds for its result
        (its exception is raised here; ``TimeoutError`` when the time is up)."""
        future = asyncio.run_coroutine_threadsafe(self._with_api(work), self._start())
        try:
            return future.result(timeout)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise TimeoutError(f"no answer from the API server within {timeout:.0f}s") from None

    async def close(self) -> None:
        """Close the side client and stop its thread (awaited on the main loop)."""
        with self._lock:
            loop, thread, self._loop, self._thread = self._loop, self._thread, None, None
        if loop is None or thread is None:
            return

        async def shut() -> None:
            if self._api is not None:
                await self._api.close()
                self._api = None

        await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(shut(), loop))
        loop.call_soon_threadsafe(loop.stop)
        await asyncio.to_thread(thread.join, 5.0)
        if not thread.is_alive():
            loop.close()
