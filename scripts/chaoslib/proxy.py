"""proxy — the fault proxy: a userspace TCP proxy in front of each server,
all in one asyncio loop in a thread (ProxyThread), one listener each.

Modes (Proxy.set_mode, from the harness thread): "pass"; "blackhole"
(accept, drop every byte, until it heals: a partition; connections that
lost bytes are closed when it heals); "delay" (each chunk delay_ms late).
And, armed by a plan in Proxy.late, the next matching connection's client
bytes delivered late (late_handle).
"""

import asyncio
import threading

from .nodes import mono


class Conn:
    __slots__ = ("cw", "uw", "tainted")

    def __init__(self, cw, tainted):
        self.cw, self.uw, self.tainted = cw, None, tainted


class Proxy:
    def __init__(self, loop, target_port):
        self.loop = loop
        self.target = target_port
        self.mode = self.want = "pass"
        self.delay_ms = 0
        self.conns = set()
        self.port = None
        self.server = None
        # A plan for late delivery, until a connection takes it: delay_ms,
        # match(first bytes) -> bool, events (the delayed connection is
        # appended: at_ns, delay_ms, proxy) and proxy (an index, for events).
        self.late = None

    async def start(self):
        self.server = await asyncio.start_server(self.handle, "127.0.0.1", 0)
        self.port = self.server.sockets[0].getsockname()[1]

    def set_mode(self, mode, delay_ms=0):
        self.want = mode  # the harness thread's view; self.mode is the loop's

        def apply():
            old = self.mode
            self.mode, self.delay_ms = mode, delay_ms
            if old == "blackhole" and mode != "blackhole":
                # Bytes were dropped on these: the streams are broken now.
                for c in list(self.conns):
                    if c.tainted:
                        self._close(c)
        self.loop.call_soon_threadsafe(apply)

    def _close(self, c):
        for w in (c.cw, c.uw):
            if w is not None:
                try:
                    w.transport.abort()
                except Exception:
                    pass
        self.conns.discard(c)

    async def handle(self, cr, cw):
        if self.late is not None and self.mode == "pass":
            # The next connection whose first bytes match the plan is
            # delivered late (scripts/chaos_scenarios/lease.py arms it);
            # others pass meanwhile.
            await late_handle(self, cr, cw)
            return
        c = Conn(cw, self.mode == "blackhole")
        self.conns.add(c)
        try:
            if self.mode == "blackhole":
                # Accept, drop everything, until the partition heals.
                while self.mode == "blackhole":
                    data = await cr.read(65536)
                    if not data:
                        return
                return
            try:
                ur, uw = await asyncio.wait_for(
                    asyncio.open_connection("127.0.0.1", self.target), 2)
            except (OSError, asyncio.TimeoutError):
                return
            c.uw = uw
            await asyncio.gather(self.pump(c, cr, uw), self.pump(c, ur, cw))
        except Exception:
            pass
        finally:
            self._close(c)

    async def pump(self, c, r, w):
        try:
            while True:
                data = await r.read(65536)
                if not data:
                    break
                if self.mode == "blackhole":
                    c.tainted = True
                    continue
                if self.mode == "delay" and self.delay_ms > 0:
                    await asyncio.sleep(self.delay_ms / 1000)
                    if self.mode == "blackhole":
                        c.tainted = True
                        continue
                w.write(data)
                await w.drain()
        except Exception:
            pass
        finally:
            self._close(c)


class ProxyThread:
    def __init__(self):
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        asyncio.set_event_loop(self.loop)
        self.loop.run_forever()

    def add(self, target_port):
        p = Proxy(self.loop, target_port)
        asyncio.run_coroutine_threadsafe(p.start(), self.loop).result(5)
        return p

    def stop(self):
        async def shutdown():
            for t in asyncio.all_tasks():
                if t is not asyncio.current_task():
                    t.cancel()
        try:
            asyncio.run_coroutine_threadsafe(shutdown(), self.loop).result(2)
        except Exception:
            pass
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(2)


async def late_handle(proxy, cr, cw):
    """Runs in the proxy's loop for a new connection while proxy.late is
    armed. If the connection's first bytes match, everything the
    client sends on it reaches the server delay_ms late, also after the
    client gave up and closed it; server -> client bytes pass at once.
    Otherwise the connection just passes."""
    loop = asyncio.get_running_loop()
    try:
        ur, uw = await asyncio.wait_for(asyncio.open_connection("127.0.0.1", proxy.target), 2)
    except (OSError, asyncio.TimeoutError):
        cw.transport.abort()
        return
    try:
        first = await cr.read(65536)
    except Exception:
        first = b""
    plan = proxy.late
    delay = 0.0
    if plan is not None and first and plan["match"](first):
        proxy.late = None
        delay = plan["delay_ms"] / 1000
        plan["events"].append({"at_ns": mono(), "delay_ms": plan["delay_ms"],
                               "proxy": plan["proxy"]})
    q = asyncio.Queue()
    client_open = [True]

    async def reader(data):
        while True:
            q.put_nowait((loop.time() + delay, data))
            if not data:
                return
            try:
                data = await cr.read(65536)
            except Exception:
                data = b""

    async def writer():
        try:
            while True:
                due, data = await q.get()
                wait = due - loop.time()
                if wait > 0:
                    await asyncio.sleep(wait)
                if not data:
                    break
                uw.write(data)
                await uw.drain()
            # Everything delivered: give the server time to answer (the
            # answers go nowhere if the client has gone), then hang up.
            await asyncio.sleep(1.0 if delay else 0)
        except Exception:
            pass
        finally:
            uw.transport.abort()

    async def back():
        try:
            while True:
                d = await ur.read(65536)
                if not d:
                    break
                if client_open[0]:
                    try:
                        cw.write(d)
                        await cw.drain()
                    except Exception:
                        client_open[0] = False
        except Exception:
            pass
        finally:
            cw.transport.abort()

    try:
        await asyncio.gather(reader(first), writer(), back(), return_exceptions=True)
    except asyncio.CancelledError:
        pass   # the proxy is shutting down
    finally:
        for t in (uw.transport, cw.transport):
            t.abort()
