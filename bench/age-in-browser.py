#!/usr/bin/env python3
"""Issue 34: how long the pages take to encrypt and decrypt 5 MiB with the
vendored age library (typage), in headless Chromium on this machine.

Usage: bench/age-in-browser.py BASE_URL [ROUNDS]
BASE_URL is a running storesrv (its home page loads /static/age.js). Starts
chromedriver on a free port, times ROUNDS (default 5) encryptions and
decryptions of the same 5 MiB of random bytes to a new X25519 identity,
and prints each round and the medians, in milliseconds. Not part of
storebench: it needs Chromium, which `scripts/test` installs."""

import json
import socket
import statistics
import subprocess
import sys
import time
import urllib.request

SCRIPT = """
const done = arguments[arguments.length - 1];
(async () => {
  const A = window.ageEncryption, n = 5 * 1024 * 1024, rounds = arguments[0];
  const data = new Uint8Array(n);
  for (let i = 0; i < n; i += 65536) crypto.getRandomValues(data.subarray(i, i + 65536));
  const out = [];
  for (let r = 0; r < rounds; r++) {
    const id = await A.generateX25519Identity();
    const to = await A.identityToRecipient(id);
    const t0 = performance.now();
    const e = new A.Encrypter(); e.addRecipient(to);
    const sealed = await e.encrypt(data);
    const t1 = performance.now();
    const d = new A.Decrypter(); d.addIdentity(id);
    const plain = await d.decrypt(sealed);
    const t2 = performance.now();
    if (plain.length !== n) throw new Error("decrypted " + plain.length + " bytes");
    out.push([t1 - t0, t2 - t1]);
  }
  return out;
})().then(done, (e) => done(String(e)));
"""


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    base, rounds = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 5
    port = free_port()
    driver = subprocess.Popen(["chromedriver", f"--port={port}"], stdout=subprocess.DEVNULL)
    root = f"http://127.0.0.1:{port}"

    def call(method, path, body=None):
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(root + path, data, {"Content-Type": "application/json"}, method=method)
        return json.load(urllib.request.urlopen(req, timeout=600))["value"]

    try:
        for _ in range(100):
            try:
                caps = {"browserName": "chrome", "goog:chromeOptions": {"args": ["--headless=new", "--no-sandbox", "--disable-gpu"]}}
                session = call("POST", "/session", {"capabilities": {"alwaysMatch": caps}})["sessionId"]
                break
            except OSError:
                time.sleep(0.1)
        call("POST", f"/session/{session}/url", {"url": base + "/"})
        times = call("POST", f"/session/{session}/execute/async", {"script": SCRIPT, "args": [rounds]})
        call("DELETE", f"/session/{session}")
    finally:
        driver.terminate()
    if isinstance(times, str):
        sys.exit(f"the page failed: {times}")
    for i, (enc, dec) in enumerate(times):
        print(f"round {i}: encrypt {enc:.0f} ms, decrypt {dec:.0f} ms")
    print(f"median: encrypt {statistics.median(t[0] for t in times):.0f} ms, "
          f"decrypt {statistics.median(t[1] for t in times):.0f} ms (5 MiB)")


main()
