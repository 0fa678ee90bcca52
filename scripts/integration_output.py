"""What scripts/enzyme_integration.py makes of a command's output: running it in its own
process group with a timeout, the line that names a build error or a run's failure, a grouping
key for error lines, and how a process ended."""
import os
import re
import signal
import subprocess


def first_error(output):
    for line in output.splitlines():
        if re.search(r"\berror\b:", line) or line.startswith("Assertion Failed") or \
                "fatal error" in line:
            return line.strip()
    for line in output.splitlines():
        if line.strip():
            return line.strip()
    return "(no output)"


def failure_line(output):
    """The line of a failed run that says what went wrong (the test's own check if any)."""
    lines = [l.strip() for l in output.splitlines() if l.strip()]
    for l in lines:
        if l.startswith("Assertion Failed") or "Assertion" in l or "failures" in l:
            return l
    for l in reversed(lines):
        if re.search(r"error|free\(\)|corrupt|Segmentation|abort", l, re.I):
            return l
    return lines[-1] if lines else "(no output)"


def error_key(line, srcdir):
    """A grouping key for an error line: paths and source positions removed."""
    line = line.replace(srcdir + os.sep, "")
    line = re.sub(r"^[^\s:]+\.(c|cpp|cc|h|hpp|o|ll)(:\d+)*:\s*", "", line)
    line = re.sub(r"/tmp/\S+", "<tmp>", line)
    line = re.sub(r"instruction '.*?' \(", "instruction '...' (", line)
    line = re.sub(r"#\d+\b", "#N", line)
    return line


def run_cmd(cmd, cwd, timeout, env, stdin=subprocess.DEVNULL):
    """Run cmd in its own process group; kill the group on timeout. -> (rc, output, timed_out)"""
    p = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         stdin=stdin, env=env, start_new_session=True)
    try:
        out, _ = p.communicate(timeout=timeout)
        return p.returncode, out.decode("utf-8", "replace"), False
    except subprocess.TimeoutExpired:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except OSError:
            pass
        out, _ = p.communicate()
        return None, out.decode("utf-8", "replace"), True


def describe_exit(rc):
    if rc is not None and rc < 0:
        try:
            return "killed by " + signal.Signals(-rc).name
        except ValueError:
            return "killed by signal %d" % -rc
    return "exit status %s" % rc


def tail(text, n=6):
    lines = [l for l in text.splitlines() if l.strip()]
    return lines[-n:]
