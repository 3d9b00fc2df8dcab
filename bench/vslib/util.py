"""Small helpers of the bench harness: the log, shell commands, /proc readings."""
import os
import platform
import re
import subprocess
import time

from vslib.config import HZ

LOG = []


def say(msg):
    line = time.strftime("%H:%M:%S ") + msg
    print(line, flush=True)
    LOG.append(line)


def sh(cmd, env=None, cwd=None, check=True, capture=True, timeout=None):
    p = subprocess.run(cmd, shell=isinstance(cmd, str), env=env, cwd=cwd, text=True,
                       capture_output=capture, timeout=timeout,
                       executable="/bin/bash" if isinstance(cmd, str) else None)
    if check and p.returncode != 0:
        raise RuntimeError(f"command failed ({p.returncode}): {cmd}\n{p.stdout}\n{p.stderr}")
    return p


def now():
    return time.time()


def children_cpu_s():
    """user+sys seconds of this process's waited-for descendants (the shell loops of a measurement
    and everything they ran)."""
    import resource
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def cpu_s(pid):
    """utime+stime of a process, seconds (10 ms resolution)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / HZ
    except (OSError, IndexError, ValueError):
        return 0.0


def rss_kb(pid, key="VmRSS"):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def read_pid(path):
    try:
        with open(path) as f:
            return int(f.read().strip())
    except (OSError, ValueError):
        return 0


def alive(pid):
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False


def wait_dead(pid, timeout=30):
    t = now()
    while alive(pid) and now() - t < timeout:
        # reap if it is our child (setsid'ed tessera-ctld started by this process)
        try:
            os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            pass
        time.sleep(0.01)


def machine_cpu():
    """(busy ticks, idle ticks) from /proc/stat."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    return sum(v[0:3]) + sum(v[5:8]), v[3] + v[4]


def machine():
    cpu = "?"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    with open("/proc/meminfo") as f:
        mem = int(f.readline().split()[1]) / 1024 / 1024
    osrel = ""
    if os.path.exists("/etc/os-release"):
        m = re.search(r'PRETTY_NAME="([^"]+)"', open("/etc/os-release").read())
        osrel = m.group(1) if m else ""
    return (f"{os.cpu_count()} CPUs (nproc), {cpu}, {mem:.1f} GiB memory, {osrel}, Linux "
            f"{platform.release()}")


def set_aside(jobs, old):
    """Moves the files of `jobs` into a new directory under `old`. This machine's root file
    system is ext4 without a journal, where creating a file first skips every inode of its group
    deleted in the last 60 s (360 s while the inode table block is dirty), one block lookup
    each: deleting the previous run's thousands of output files made each new output file of
    the next run cost more, by an amount set by the previous run. Moving them keeps the inodes
    in use; they are deleted once, after the measurements. Both systems' outputs are treated
    alike."""
    os.makedirs(old, exist_ok=True)
    dest = os.path.join(old, str(len(os.listdir(old))))
    os.makedirs(dest)
    for f in os.listdir(jobs):
        p = os.path.join(jobs, f)
        if os.path.isfile(p):
            os.rename(p, os.path.join(dest, f))
