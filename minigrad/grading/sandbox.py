"""The sandbox a student's notebook runs in: bubblewrap, resource limits, and a cgroup where one can be made.

bubblewrap gives the worker new namespaces: no network, its own process
tree and session (every process dies with it), a private /tmp, and only
the system, Python and the minigrad package, read-only: no other
submission, no ``solutions/``, no grader's output. Memory is capped per
process (address space, which counts shared mappings) and, where a cgroup
can be made (as root), for all the worker's processes together, with their
number; otherwise the number of processes is capped by RLIMIT_NPROC.
"""

import contextlib
import errno
import functools
import itertools
import json
import os
import platform
import resource
import shutil
import site
import struct
import subprocess
import sys
import sysconfig
import threading
import time
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1]  # the minigrad package, bound into each sandbox

APPARMOR_USERNS = "/proc/sys/kernel/apparmor_restrict_unprivileged_userns"
CGROUP_ROOT = Path("/sys/fs/cgroup")
LAUNCHER = """
import json, os, resource, sys
spec = json.loads(sys.argv[1])
for procs in spec["cgroups"]:
    with open(procs, "w") as f:
        f.write(str(os.getpid()))
for limit, value in spec["limits"]:
    resource.setrlimit(limit, (value, value))
if spec["user"] is not None:
    os.setgroups([])
    os.setgid(spec["user"])
    os.setuid(spec["user"])
    os.umask(0o077)
os.execv(sys.argv[2], sys.argv[2:])
"""
MAX_PROCESSES = 64
SECCOMP = {"x86_64": (0xC000003E, (248, 249, 250)), "aarch64": (0xC00000B7, (217, 218, 219))}  # (add_key,
# request_key, keyctl): the audit architecture and the numbers of the calls
NOBODY = 65534  # the user the sandbox runs as, inside it
UNPRIVILEGED = 2_000_000_000  # the first of the users workers without a sandbox run as, one each, under root
SANDBOX_PACKAGE_PARENT = "/opt/minigrad"


def why_no_sandbox():
    """None where bubblewrap can start the worker here, else the reason (one line)."""
    if not sys.platform.startswith("linux"):
        return f"no sandbox on {sys.platform}: bubblewrap needs Linux"
    if shutil.which("bwrap") is None:
        return "bubblewrap (bwrap) is not installed: apt-get install bubblewrap"
    imports = "import minigrad.grading.worker, IPython"
    capabilities = "print(next(line for line in open('/proc/self/status') if line.startswith('CapEff')))"
    seccomp = seccomp_fd()
    try:
        probe = subprocess.run(command([sys.executable, "-c", f"{imports}; {capabilities}"], seccomp),
                               capture_output=True, text=True, timeout=60, pass_fds=(seccomp,) if seccomp else ())
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"bubblewrap could not start: {e}"
    finally:
        if seccomp is not None:
            os.close(seccomp)
    if probe.returncode != 0:  # (bwrap's own error, or Python's in the sandbox)
        return f"no sandbox here ({_namespaces_forbidden()}): {probe.stderr.strip()[-200:]}"
    if int(probe.stdout.split()[-1], 16) != 0:
        return f"bubblewrap leaves the sandbox capabilities ({probe.stdout.strip()}): a bubblewrap older than 0.4?"
    return None


def _namespaces_forbidden():
    """Why bubblewrap may be refused: Ubuntu's AppArmor policy (23.10 on) and its fix, or a guess."""
    try:
        restricted = Path(APPARMOR_USERNS).read_text().strip() == "1"
    except OSError:
        restricted = False
    if restricted:
        return (f"{APPARMOR_USERNS} is 1: AppArmor forbids user namespaces to unprivileged programs; "
                "allow them with sudo sysctl kernel.apparmor_restrict_unprivileged_userns=0, or run as root")
    return "user namespaces forbidden here? A container may need --privileged, or grade with --no-sandbox"


def seccomp_fd():
    """A pipe holding the sandbox's seccomp filter, for bubblewrap to read (None on another machine than
    x86-64 or arm64). It refuses the kernel's key calls: root's keyring is one for every process root
    starts, sandboxed or not, so a notebook could leave there what it saw, for the next one to show; and
    every call of another ABI (32-bit), whose numbers differ."""
    arch, calls = SECCOMP.get(platform.machine(), (None, ()))
    if arch is None:
        return None
    deny = 5 + len(calls)  # the index of the last instruction: (code, jump if true, jump if false, k)
    program = [(0x20, 0, 0, 4), (0x15, 0, deny - 2, arch),  # the call's ABI is this machine's,
               (0x20, 0, 0, 0), (0x35, deny - 4, 0, 0x40000000),  # and not x32's,
               *[(0x15, deny - 5 - k, 0, nr) for k, nr in enumerate(calls)],  # and not a key call:
               (0x06, 0, 0, 0x7FFF0000), (0x06, 0, 0, 0x00050000 | errno.EPERM)]  # allowed; else EPERM
    read, write = os.pipe()
    os.write(write, b"".join(struct.pack("=HBBI", *instruction) for instruction in program))
    os.close(write)
    return read


def command(argv, seccomp=None):
    """``argv`` wrapped in bubblewrap: only the system, Python and minigrad, read-only; nothing shared.
    ``seccomp``: the descriptor seccomp_fd() gave, to pass to the process."""
    cmd = [shutil.which("bwrap"), *(["--seccomp", str(seccomp)] if seccomp is not None else []),
           "--unshare-all", "--unshare-user", "--uid", str(NOBODY), "--gid", str(NOBODY),
           "--cap-drop", "ALL", "--die-with-parent", "--new-session",  # (run as root, it would keep root's powers)
           "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--chdir", "/tmp",
           "--clearenv", "--setenv", "HOME", "/tmp", "--setenv", "PATH", "/usr/bin:/bin",
           "--setenv", "PYTHONPATH", SANDBOX_PACKAGE_PARENT]
    for name in ("usr", "bin", "lib", "lib32", "lib64", "sbin"):
        path = Path("/") / name
        if path.is_symlink():
            cmd += ["--symlink", os.readlink(path), str(path)]
        elif path.is_dir():
            cmd += ["--ro-bind", str(path), str(path)]
    for path in ("/etc", *_python_dirs()):
        cmd += ["--ro-bind-try", path, path]
    package = PACKAGE
    cmd += ["--ro-bind", str(package), f"{SANDBOX_PACKAGE_PARENT}/minigrad"]
    for place in (Path(SANDBOX_PACKAGE_PARENT) / "minigrad", package):  # (the visible tests come stripped,
        cmd += ["--tmpfs", str(place / "grading" / "checks")]  # in the request: their expected values stay out)
    for key, value in worker_env().items():
        cmd += ["--setenv", key, value]
    return cmd + ["--", *argv]


def worker_env():
    """Variables the worker needs: one thread per library, no GUI backend."""
    return {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
            "MPLBACKEND": "Agg", "PYDEVD_DISABLE_FILE_VALIDATION": "1", "PYTHONDONTWRITEBYTECODE": "1"}


def _python_dirs():
    """Where this Python and its packages live (a virtual environment and its base), outside /usr."""
    paths = {sys.prefix, sys.base_prefix, sys.exec_prefix, str(Path(sys.executable).resolve().parents[1])}
    if site.ENABLE_USER_SITE and site.USER_SITE in sys.path:  # (packages installed with pip --user)
        paths.add(site.USER_SITE)
    paths |= {p for key in ("purelib", "platlib", "stdlib", "platstdlib") if (p := sysconfig.get_path(key))}
    package_root = str(PACKAGE.parent)  # (the repository: never whole)
    return sorted(p for p in paths if not p.startswith("/usr/") and p != package_root)


def unsandboxed_env(home):
    """The environment of a worker without a sandbox: the grader's, with this minigrad on the path."""
    root = str(PACKAGE.parent)
    path = os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH")) if p)
    return {**os.environ, **worker_env(), "PYTHONPATH": path, "HOME": str(home)}


@functools.cache
def drops_privileges():
    """Whether each worker without a sandbox runs as an unprivileged user of its own: where the grader is
    root (on Gradescope, say) and such a user can run this Python and minigrad. Then the student's code
    cannot read what only root can (the solutions, the grader's memory), write the grader's files, nor
    touch a notebook graded beside it (--jobs)."""
    return os.name == "posix" and os.getuid() == 0 and _runs_as(UNPRIVILEGED, "import minigrad.grading.worker, IPython")


def readable_without_privileges(folder):
    """Whether an unprivileged user can read ``folder`` (the solutions: then a worker could too)."""
    return _runs_as(UNPRIVILEGED, f"import os; os.listdir({str(Path(folder).resolve())!r})")


def _runs_as(user, code):
    limits = Limits(0, user=user)
    try:
        probe = subprocess.run(limits.wrap([sys.executable, "-c", code]), env=unsandboxed_env("/"), cwd="/",
                               capture_output=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return False
    finally:
        limits.release()
    return probe.returncode == 0


_users_in_use = set()
_users_lock = threading.Lock()


@contextlib.contextmanager
def unprivileged_user():
    """A user no other worker runs as now (--jobs): its uid, for the block."""
    with _users_lock:
        user = next(u for u in itertools.count(UNPRIVILEGED) if u not in _users_in_use)
        _users_in_use.add(user)
    try:
        yield user
    finally:
        with _users_lock:
            _users_in_use.discard(user)


class Limits:
    """Memory and process limits for one worker: a cgroup where one can be made, rlimits always; and the
    user it runs as (None: the grader's)."""

    def __init__(self, memory, processes=MAX_PROCESSES, user=None):
        self.memory, self.processes, self.user = memory, processes, user
        self.cgroups = _make_cgroups(memory, processes)

    def wrap(self, argv):
        """``argv`` started by a small launcher that joins the cgroups and sets the limits, then execs it.

        (Not a preexec_fn: the grader runs workers from several threads, where a forked child
        that runs Python code may deadlock.)
        """
        as_root = os.getuid() == 0 and self.user is None  # (root is not held by RLIMIT_NPROC)
        spec = {"cgroups": [str(g / "cgroup.procs") for g in self.cgroups], "user": self.user, "limits": [
            (resource.RLIMIT_CORE, 0),
            *([(resource.RLIMIT_AS, self.memory), (resource.RLIMIT_FSIZE, self.memory // 4)] if self.memory else []),
            *([(resource.RLIMIT_NPROC, self.processes)] if not self.cgroups and not as_root else []),
        ]}  # (memory: files too, which live in memory in the sandbox's /tmp)
        return [sys.executable, "-I", "-S", "-c", LAUNCHER, json.dumps(spec), *argv]

    def release(self):
        """Kill whatever is left in the cgroups, and remove them."""
        for group in self.cgroups:
            for _ in range(50):
                try:
                    pids = (group / "cgroup.procs").read_text().split()
                    for pid in pids:
                        os.kill(int(pid), 9)
                    group.rmdir()
                    break
                except (OSError, ValueError):
                    time.sleep(0.05)


def _make_cgroups(memory, processes):
    """The cgroups of one worker: v1, a group per controller (pids, memory, cpu); v2, one group for all.
    [] where none can be made; the cpu limit (one core: a notebook that keeps every core busy would make
    its neighbours' tests run out of time) only where the controller is there."""
    name = f"minigrad-grade-{os.getpid()}-{next(_serial)}"
    limit = int(memory * 1.25) + 2**28  # (the page cache counts too)
    if (CGROUP_ROOT / "pids" / "cgroup.procs").exists():  # v1: a hierarchy per controller
        plan = [(CGROUP_ROOT / "pids" / name, {"pids.max": processes})]
        if memory:
            plan.append((CGROUP_ROOT / "memory" / name, {"memory.limit_in_bytes": limit}))
        cpu = (CGROUP_ROOT / "cpu" / name, {"cpu.cfs_period_us": 100_000, "cpu.cfs_quota_us": 100_000})
    elif (CGROUP_ROOT / "cgroup.controllers").exists():  # v2: one group, every controller
        plan = [(CGROUP_ROOT / name, {"pids.max": processes, **({"memory.max": limit} if memory else {})})]
        cpu = (CGROUP_ROOT / name, {"cpu.max": "100000 100000"})
    else:
        return []
    made = []
    try:
        for group, files in plan:
            group.mkdir()
            made.append(group)
            _write(group, files)
    except OSError:  # (not root, or a controller not delegated here)
        for group in made:
            with contextlib.suppress(OSError):
                group.rmdir()
        return []
    with contextlib.suppress(OSError):
        cpu[0].mkdir(exist_ok=True)
        made += [cpu[0]] if cpu[0] not in made else []
        _write(*cpu)
    return made


def _write(group, files):
    for file, value in files.items():
        (group / file).write_text(str(value))


_serial = itertools.count(1)
