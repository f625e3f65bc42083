"""Uploads a file through tuspy, a tus client no one here wrote, with its
connection cut in the middle of the body, then resumes it as a client
would after a break: a new uploader for the same upload URL asks where
the upload stands and sends the rest.

    tuspy_upload.py <proxy port> <server port> <file>

The server's base URL is the proxy's (STORE_BASE_URL), so every request
tuspy makes goes through the proxy, which cuts the first PATCH once half
its body has passed. Prints the upload's URL and the offset the server
had kept after the cut.
"""

import os
import socket
import sys
import threading
import time

from tusclient import client
from tusclient.exceptions import TusCommunicationError, TusUploadFailed


class CutProxy:
    """Forwards connections to the server; the first PATCH is cut after
    `cut_after` bytes from the client (its head and part of its body)."""

    def __init__(self, port, upstream_port, cut_after):
        self.upstream_port = upstream_port
        self.cut_after = cut_after
        self.cut = threading.Event()
        self.listener = socket.create_server(("127.0.0.1", port))
        threading.Thread(target=self.accept, daemon=True).start()

    def accept(self):
        while True:
            conn, _ = self.listener.accept()
            threading.Thread(target=self.relay, args=(conn,), daemon=True).start()

    def relay(self, conn):
        up = socket.create_connection(("127.0.0.1", self.upstream_port))
        threading.Thread(target=self.pump, args=(up, conn, None), daemon=True).start()
        self.pump(conn, up, self.cut_after)

    def pump(self, src, dst, limit):
        sent = 0
        cutting = False
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                if limit is not None and not self.cut.is_set() and data.startswith(b"PATCH"):
                    cutting = True
                if cutting:
                    data = data[: max(0, limit - sent)]
                dst.sendall(data)
                sent += len(data)
                if cutting and sent >= limit:
                    self.cut.set()
                    break
        except OSError:
            pass
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            s.close()


def main():
    proxy_port, server_port, path = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    size = os.path.getsize(path)
    proxy = CutProxy(proxy_port, server_port, cut_after=size // 2)
    tus = client.TusClient(f"http://127.0.0.1:{proxy_port}/uploads")
    metadata = {"filename": os.path.basename(path)}
    first = tus.uploader(path, chunk_size=size, metadata=metadata)
    try:
        first.upload()
        sys.exit("the upload was not cut")
    except (TusCommunicationError, TusUploadFailed, OSError) as cut:
        print(f"cut: {cut!r}", file=sys.stderr)
    assert proxy.cut.is_set(), "the proxy cut nothing"
    # A new uploader, as after a restart: it asks the server where the
    # upload stands (HEAD) and sends the rest. While the server is still
    # closing the cut PATCH, the upload answers 409: tuspy retries.
    again = tus.uploader(path, url=first.url, chunk_size=size, retries=20, retry_delay=0.2)
    # The server keeps what arrived before the cut once it has closed the
    # cut PATCH: wait for that, then go on from there.
    deadline = time.monotonic() + 10
    kept = again.get_offset()
    while kept == 0 and time.monotonic() < deadline:
        time.sleep(0.05)
        kept = again.get_offset()
    again.upload()
    print(first.url)
    print(kept)


main()
