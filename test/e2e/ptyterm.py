"""A program on a pseudo-terminal of its own, as a terminal emulator runs a
shell: the program leads a new session whose controlling terminal is the
pty, so Ctrl-C written to the master is the terminal's SIGINT to whatever
group is in the foreground, and `bash -i` has job control."""
import os
import pty
import re
import select
import signal
import time


class PtyTerm:
    def __init__(self, argv, env=None, cwd=None):
        self.pid, self.fd = pty.fork()
        if self.pid == 0:
            try:
                # A terminal emulator starts its program with the signals
                # at their defaults; a test run from a background job of a
                # script inherits SIGINT and SIGQUIT ignored, which would
                # keep the terminal's Ctrl-C from anyone.
                for sig in (signal.SIGINT, signal.SIGQUIT):
                    signal.signal(sig, signal.SIG_DFL)
                if cwd:
                    os.chdir(cwd)
                os.execvpe(argv[0], argv, env if env is not None else os.environ)
            finally:
                os._exit(127)
        self.out = b""
        self.pos = 0        # expect() looks from here on
        self.status = None

    def send(self, data):
        os.write(self.fd, data.encode() if isinstance(data, str) else data)

    def _read(self, timeout):
        """Appends what the terminal printed within `timeout`; False once
        the slave side is closed everywhere."""
        ready, _, _ = select.select([self.fd], [], [], timeout)
        if not ready:
            return True
        try:
            data = os.read(self.fd, 65536)
        except OSError:   # EIO: no process holds the terminal any more
            return False
        self.out += data
        return bool(data)

    def text(self):
        return self.out.decode(errors="replace")

    def expect(self, pattern, timeout=30):
        """The first match of `pattern` (a regex) printed after the last
        match; None when it has not come within `timeout`."""
        rx = re.compile(pattern.encode() if isinstance(pattern, str) else pattern)
        deadline = time.monotonic() + timeout
        while True:
            m = rx.search(self.out, self.pos)
            if m:
                self.pos = m.end()
                return m
            left = deadline - time.monotonic()
            if left <= 0 or not self._read(min(left, 0.1)):
                m = rx.search(self.out, self.pos)
                if m:
                    self.pos = m.end()
                return m

    def drain(self, seconds):
        """Reads what comes within `seconds`."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline and self._read(deadline - time.monotonic()):
            pass

    def wait(self, timeout=30):
        """The program's wait status, reading its output meanwhile; None
        if it has not ended within `timeout`."""
        deadline = time.monotonic() + timeout
        while self.status is None:
            pid, st = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.status = st
                break
            if time.monotonic() > deadline:
                return None
            self._read(0.05)
        self.drain(0.1)
        return self.status

    def close(self):
        """Kills every process left in the terminal's session (jobs the
        shell left behind included) and closes the master."""
        for pid in session_members(self.pid):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        if self.status is None:
            try:
                os.kill(self.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.status = os.waitpid(self.pid, 0)[1]
        os.close(self.fd)


def proc_stat(pid):
    """The fields of /proc/PID/stat after the command name (state first),
    or None once the process is gone."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError):
        return None


def session_members(sid):
    out = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            st = proc_stat(int(name))
            if st and int(st[3]) == sid:
                out.append(int(name))
    return out


def children(pid):
    """The children of `pid`'s main thread (prof forks from it)."""
    try:
        with open("/proc/%d/task/%d/children" % (pid, pid)) as f:
            return [int(p) for p in f.read().split()]
    except (FileNotFoundError, ProcessLookupError):
        return []


def proc_report(pid):
    """What a test that waited in vain shows: the state and signal masks of
    `pid` and of its descendants, one line each."""
    lines = []
    todo = [pid]
    while todo:
        p = todo.pop(0)
        try:
            with open("/proc/%d/status" % p) as f:
                st = dict(l.split(":", 1) for l in f.read().splitlines() if ":" in l)
            with open("/proc/%d/wchan" % p) as f:
                wchan = f.read()
            with open("/proc/%d/cmdline" % p, "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode(errors="replace")[:60]
        except OSError as e:
            lines.append("pid %d: %s" % (p, e))
            continue
        keys = ("State", "SigPnd", "ShdPnd", "SigBlk", "SigIgn", "SigCgt", "Threads")
        lines.append("pid %d (%s) wchan=%s %s" % (p, cmd, wchan, " ".join(
            "%s=%s" % (k, st.get(k, "?").strip()) for k in keys)))
        todo += children(p)
    return "\n".join(lines)
