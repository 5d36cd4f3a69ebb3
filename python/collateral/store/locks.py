"""Who is writing: the writer's lock (a whole run, or one shard of N, under
``locks/``), the commit lock that lets one commit or repair run at a time, and
:func:`pid_alive`."""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator

from .problems import StoreError


class Locks:
    """:class:`~collateral.store.Store`'s locking (a mixin: the store keeps the state)."""

    def lock(self, shard: tuple[int, int] | None = None) -> None:
        """Takes the writer's lock: a whole-experiment run excludes every other run;
        shards exclude a second run of the same shard, any whole run and any shard of
        another N (the N of the running shards is recorded by ``locks/shards-of-N.lock``,
        held shared while they run)."""
        locks = self.path / "locks"
        locks.mkdir(exist_ok=True)
        whole = os.open(locks / "run.lock", os.O_RDWR | os.O_CREAT, 0o644)
        mode = fcntl.LOCK_SH if shard else fcntl.LOCK_EX
        try:
            fcntl.flock(whole, mode | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(whole)
            raise StoreError(
                f"{self.path}: another run is writing here; wait for it or stop it"
            ) from None
        self._locks.append(whole)
        if not shard:
            return
        i, n = shard
        try:
            self._lock_shard_count(n, i)
            name = locks / f"shard-{i}-of-{n}.lock"
            fd = os.open(name, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                raise StoreError(f"{self.path}: shard {i}/{n} is already running here") from None
            self._locks.append(fd)
        except BaseException:
            self.unlock()
            raise

    def _lock_shard_count(self, n: int, i: int) -> None:
        locks = self.path / "locks"
        mutex = os.open(locks / "shards.lock", os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(mutex, fcntl.LOCK_EX)  # held for a moment by whoever checks
            for f in sorted(locks.glob("shards-of-*.lock")):
                m_text = f.name.removeprefix("shards-of-").removesuffix(".lock")
                if not m_text.isdigit() or int(m_text) == n:
                    continue
                fd = os.open(f, os.O_RDWR)
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    m = int(m_text)
                    raise StoreError(
                        f"{self.path}: --shard {i}/{n} refused: shards of {m} are running"
                        f" here (recorded in locks/{f.name}); use --shard I/{m}, or wait"
                        f" for them to end"
                    ) from None
                else:
                    f.unlink()  # nobody runs with that N any more (only checked here)
                finally:
                    os.close(fd)
            fd = os.open(locks / f"shards-of-{n}.lock", os.O_RDWR | os.O_CREAT, 0o644)
            fcntl.flock(fd, fcntl.LOCK_SH)
            self._locks.append(fd)
        finally:
            os.close(mutex)

    def unlock(self) -> None:
        for fd in self._locks:
            with contextlib.suppress(OSError):
                os.close(fd)
        self._locks.clear()

    @contextlib.contextmanager
    def _commit_lock(self) -> Iterator[None]:
        """``locks/commit.lock``, exclusive: one commit (or repair) at a time."""
        if self._commit_depth == 0:
            (self.path / "locks").mkdir(exist_ok=True)
            fd = os.open(self.path / "locks" / "commit.lock", os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
            except BaseException:
                os.close(fd)
                raise
            self._commit_fd = fd
        self._commit_depth += 1
        try:
            yield
        finally:
            self._commit_depth -= 1
            if self._commit_depth == 0 and self._commit_fd is not None:
                os.close(self._commit_fd)
                self._commit_fd = None


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
