"""Servers on loopback for the scripts that start them (benches, the browser test): a free port
to give one, and a wait until it answers."""
import socket
import time
import urllib.request


def free_port():
    """A port the kernel had free a moment ago on 127.0.0.1."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def wait_http(url, proc, seconds=30):
    """Waits until `url` answers; raises when `proc` exits first or `seconds` pass."""
    deadline = time.time() + seconds
    while time.time() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{url}: the server exited with {proc.returncode}")
        try:
            urllib.request.urlopen(url, timeout=1).read()
            return
        except Exception:
            time.sleep(0.1)
    raise RuntimeError(f"{url} did not answer")


def stop(proc, seconds=20):
    """SIGTERM (a server's graceful stop), then SIGKILL if it is still there after `seconds`."""
    if proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(timeout=seconds)
    except Exception:
        proc.kill()
        proc.wait()
