// storesrv: the one script of every app page. Every page works without it
// (plain forms post and redirect); this script adds upload progress, drag
// and drop, copy buttons, local times, likes and comments without a page
// reload, the gallery lightbox, and "Your uploads": what this browser
// uploaded, kept in localStorage with the owner tokens, to extend, show as
// a QR code or delete. It never builds HTML from strings:
// every user-controlled value goes through textContent.
"use strict";

(function () {
  function el(tag, attrs, text) {
    var node = document.createElement(tag);
    if (attrs) {
      Object.keys(attrs).forEach(function (k) { node.setAttribute(k, attrs[k]); });
    }
    if (text !== undefined && text !== null) { node.textContent = String(text); }
    return node;
  }

  // --- Times: shown in the reader's time zone, expiry also as "in 4 hours".
  var UNITS = [["year", 31536000], ["month", 2592000], ["day", 86400], ["hour", 3600], ["minute", 60], ["second", 1]];

  function relative(date) {
    var secs = Math.round((date.getTime() - Date.now()) / 1000);
    var fmt = typeof Intl !== "undefined" && Intl.RelativeTimeFormat
      ? new Intl.RelativeTimeFormat(undefined, { numeric: "auto" }) : null;
    for (var i = 0; i < UNITS.length; i++) {
      var unit = UNITS[i];
      if (Math.abs(secs) >= unit[1] || unit[0] === "second") {
        var n = Math.round(secs / unit[1]);
        if (fmt) { return fmt.format(n, unit[0]); }
        return n >= 0 ? "in " + n + " " + unit[0] + "s" : -n + " " + unit[0] + "s ago";
      }
    }
    return "";
  }

  function localTimes(root) {
    root.querySelectorAll("time[datetime]").forEach(function (t) {
      var d = new Date(t.getAttribute("datetime"));
      if (isNaN(d.getTime())) { return; }
      var local = d.toLocaleString();
      t.title = local;
      t.textContent = t.hasAttribute("data-rel") ? relative(d) + " (" + local + ")" : local;
    });
  }

  // --- Copy buttons.
  function copy(text, button) {
    function done(ok) {
      var before = button.textContent;
      button.textContent = ok ? "Copied" : "Copy failed";
      setTimeout(function () { button.textContent = before; }, 1500);
    }
    if (navigator.clipboard && navigator.clipboard.writeText) {
      navigator.clipboard.writeText(text).then(function () { done(true); }, function () { done(false); });
    } else {
      done(false);
    }
  }

  function copyButton(text) {
    var b = el("button", { type: "button", "class": "secondary small", "data-copy": text }, "Copy");
    return b;
  }

  document.addEventListener("click", function (ev) {
    var b = ev.target.closest ? ev.target.closest("button[data-copy]") : null;
    if (b) { ev.preventDefault(); copy(b.getAttribute("data-copy"), b); }
  });

  // --- Uploads with a progress bar per request.
  function send(method, url, body, headers, bar) {
    return new Promise(function (resolve, reject) {
      var xhr = new XMLHttpRequest();
      xhr.open(method, url);
      xhr.setRequestHeader("Accept", "application/json");
      Object.keys(headers || {}).forEach(function (k) { xhr.setRequestHeader(k, headers[k]); });
      xhr.upload.onprogress = function (e) {
        if (e.lengthComputable) { bar.max = e.total; bar.value = e.loaded; }
      };
      xhr.onload = function () {
        var data = null;
        try { data = JSON.parse(xhr.responseText); } catch (e) { data = null; }
        if (xhr.status >= 200 && xhr.status < 300) {
          bar.value = bar.max;
          resolve(data || {});
        } else {
          var e = new Error(data && data.error ? data.error : "HTTP " + xhr.status);
          e.status = xhr.status;
          e.code = data && data.code;
          e.retryAfter = data && data.retry_after;
          reject(e);
        }
      };
      xhr.onerror = function () { reject(new Error("the connection failed")); };
      xhr.send(body);
    });
  }

  // --- Resumable uploads (tus 1.0.0, CONTRACT.md) of large single files,
  // with tus-js-client (vendored, /static/tus.js, which the home page
  // loads). A broken connection is retried from where the server's bytes
  // end; after a reload, the same file picked again offers to go on from
  // there (tus-js-client remembers the upload's URL in localStorage by the
  // file's name, type, size and date). Smaller files go in one request:
  // the page says from which size (data-resumable-from), and only where
  // the server takes files that large.
  // Each PATCH stays under the body caps of proxies in front of a server
  // (Cloudflare's is 100 MB).
  var TUS_CHUNK_BYTES = 64 * 1048576;
  // tus-js-client retries a refused PATCH (409) too: the last wait covers
  // a server process that died in the middle of a PATCH, whose hold on
  // the upload lasts the server's lease (data-resumable-lease, seconds).
  function retryDelays() {
    var from = document.querySelector("[data-resumable-lease]");
    var lease = from ? Number(from.getAttribute("data-resumable-lease")) || 20 : 20;
    return [0, 1000, 3000, 5000, 10000, Math.max(20000, lease * 1000)];
  }

  // tus-js-client's requests, sent to this page's origin: the server's
  // Location names its base URL, which may be another origin than the
  // one the page was reached by (a proxy in front, localhost for
  // 127.0.0.1), where the page's policy lets nothing connect.
  function sameOrigin() {
    var stack = new window.tus.DefaultHttpStack();
    return {
      createRequest: function (method, url) {
        return stack.createRequest(method, window.location.origin + localPath(url));
      },
      getName: function () { return "storesrv-same-origin"; }
    };
  }
  // The owner token of an upload in progress, by its URL: the answer that
  // made the file has none, and a reload must not lose it.
  var TUS_OWNER_KEY = "storesrv.tus-owner:";
  // The header a new object's password travels in (CONTRACT.md).
  var PASSWORD_HEADER = "X-Store-Password";

  function resumable(f) {
    var from = document.querySelector("[data-resumable-from]");
    return !!from && typeof window.tus !== "undefined" && window.tus.isSupported &&
      f.size >= Number(from.getAttribute("data-resumable-from"));
  }

  function ownerKey(url) {
    return TUS_OWNER_KEY + localPath(url);
  }

  // The options of a plain upload, as tus metadata: the same names, which
  // the server reads as the query of a plain upload.
  function tusMetadata(f, params) {
    var meta = { filename: f.name, filetype: f.type || "application/octet-stream" };
    params.forEach(function (p) {
      if (p[0] !== WIRE.params.name && p[1] !== "" && p[1] !== null && p[1] !== undefined) {
        meta[p[0]] = String(p[1]);
      }
    });
    return meta;
  }

  // A tus-js-client error as `send` rejects: the server's message and code.
  function tusError(err) {
    var res = err && err.originalResponse;
    var data = null;
    try { data = res ? JSON.parse(res.getBody()) : null; } catch (e) { data = null; }
    var e = new Error(data && data.error ? data.error : res ? "HTTP " + res.getStatus() : "the connection failed");
    e.status = res ? res.getStatus() : 0;
    e.code = data && data.code;
    e.retryAfter = data && data.retry_after;
    return e;
  }

  // The record of the file a completed upload made, with the owner token
  // its creation handed out. Should asking for the record fail, the file
  // is still made: the last answer named it (X-Store-Url), and that is
  // what is shown.
  function finishResumable(url, last) {
    var owner = null;
    try {
      owner = window.localStorage.getItem(ownerKey(url));
      window.localStorage.removeItem(ownerKey(url));
    } catch (e) { owner = null; }
    var named = { url: last ? last.getHeader("X-Store-Url") : "", id: last ? last.getHeader("X-Store-Id") : "" };
    return fetch(localPath(url), { headers: { Accept: "application/json" } })
      .then(function (res) { return res.ok ? res.json() : named; }, function () { return named; })
      .then(function (data) {
        if (!data || !data.url) { throw new Error("the upload ended, but the server did not say where the file is"); }
        if (owner) { data.owner_token = owner; }
        return data;
      });
  }

  // An earlier upload of the same file, still on the server: asks whether
  // to go on from where it stopped or start over (which ends the old one
  // and frees its room). Answers the upload to resume, or null.
  function offerResume(item, previous, headers) {
    var prev = previous && previous[0];
    if (!prev) { return Promise.resolve(null); }
    var forget = function () {
      window.tus.defaultOptions.urlStorage.removeUpload(prev.urlStorageKey);
      try { window.localStorage.removeItem(ownerKey(prev.uploadUrl)); } catch (e) { /* storage off */ }
    };
    var head = { method: "HEAD", headers: { "Tus-Resumable": "1.0.0" } };
    return fetch(localPath(prev.uploadUrl), head).then(function (res) {
      if (!res.ok) { forget(); return null; }
      var offset = Number(res.headers.get("Upload-Offset")) || 0;
      var length = Number(res.headers.get("Upload-Length")) || 1;
      return new Promise(function (resolve) {
        var box = el("div", { "class": "notice", "data-resume": "" });
        box.appendChild(el("p", null, "An upload of this file stopped at " + Math.floor(100 * offset / length) +
          "% (" + binarySize(offset) + " of " + binarySize(length) + "). Go on from there, or start over?"));
        var go = el("button", { type: "button", "data-resume-go": "" }, "Resume");
        var over = el("button", { type: "button", "class": "secondary", "data-resume-over": "" }, "Start over");
        box.appendChild(go);
        box.appendChild(document.createTextNode(" "));
        box.appendChild(over);
        item.li.insertBefore(box, item.bar);
        go.addEventListener("click", function () { box.remove(); resolve(prev); });
        over.addEventListener("click", function () {
          box.remove();
          window.tus.Upload.terminate(prev.uploadUrl, { headers: headers, httpStack: sameOrigin() })
            .catch(function () { /* gone already */ });
          forget();
          resolve(null);
        });
        go.focus();
      });
    }, function () { return null; });
  }

  // One file through tus: resolves with its record, as `send` does.
  function sendResumable(root, f, params, headers, item) {
    var endpoint = new URL(root.replace(/\/$/, "") + WIRE.routes.tus_create, window.location.href).href;
    var metadata = tusMetadata(f, params);
    // A resumable upload's password goes in its metadata, once, rather
    // than in a header of every PATCH.
    if (headers[PASSWORD_HEADER]) {
      metadata.password = headers[PASSWORD_HEADER];
      delete headers[PASSWORD_HEADER];
    }
    return new Promise(function (resolve, reject) {
      var upload = new window.tus.Upload(f, {
        endpoint: endpoint,
        chunkSize: TUS_CHUNK_BYTES,
        retryDelays: retryDelays(),
        httpStack: sameOrigin(),
        metadata: metadata,
        headers: headers,
        removeFingerprintOnSuccess: true,
        onAfterResponse: function (req, res) {
          var owner = res.getHeader("X-Store-Owner");
          var location = res.getHeader("Location");
          if (req.getMethod() === "POST" && owner && location) {
            try { window.localStorage.setItem(ownerKey(new URL(location, endpoint).href), owner); } catch (e) { /* storage off */ }
          }
        },
        onProgress: function (done, total) { item.bar.max = total; item.bar.value = done; },
        onError: function (err) { reject(tusError(err)); },
        onSuccess: function (payload) {
          finishResumable(upload.url, payload && payload.lastResponse).then(resolve, reject);
        }
      });
      upload.findPreviousUploads().then(function (previous) {
        return offerResume(item, previous, headers);
      }).then(function (prev) {
        if (prev) { upload.resumeFromPreviousUpload(prev); }
        upload.start();
      }).catch(reject);
    });
  }

  function resultItem(list, label) {
    var li = el("li");
    li.appendChild(el("div", null, label));
    var bar = el("progress", { max: "1", value: "0", "aria-label": "Uploading " + label });
    li.appendChild(bar);
    list.appendChild(li);
    return { li: li, bar: bar };
  }

  // A token shown once, with a copy button and what it is for.
  function secret(label, token, what) {
    var p = el("p", { "class": "notice secret" });
    p.appendChild(el("strong", null, label + " (shown once): "));
    p.appendChild(el("code", null, token));
    p.appendChild(document.createTextNode(" "));
    p.appendChild(copyButton(token));
    p.appendChild(el("br"));
    p.appendChild(document.createTextNode(what));
    return p;
  }

  // The path of one of our URLs: pages reach the server by the browser's
  // origin, which may differ from the configured base URL.
  function localPath(url) {
    try { var u = new URL(url, window.location.href); return u.pathname + u.search; } catch (e) { return url; }
  }

  // `path` with the query parameter `name` (a name from WIRE.params) set
  // to `value`.
  function withParam(path, name, value) {
    return path + (path.indexOf("?") < 0 ? "?" : "&") + name + "=" + encodeURIComponent(value);
  }

  // The page that describes an upload: a file's info page (which never
  // spends a download), a bundle's or dir's own page.
  function infoPage(url, kind) {
    return kind === "file" ? withParam(localPath(url), WIRE.params.info, "1") : localPath(url);
  }

  function kindOf(data) {
    if (data.dir) { return "dir"; }
    return Array.isArray(data.files) ? "bundle" : "file";
  }

  // What the server applied, in the words of the form: a person reads
  // here that what they ticked is what happened.
  function applied(data, kind) {
    var out = [];
    if (kind === "dir") {
      out.push(data.write_protected ? "changes need the write token" : "anyone with the link may add, change and delete files");
      if (data.listed) { out.push("listed under Folders"); }
    } else {
      if (data.once) {
        out.push("burn after reading");
      } else if (data.downloads_left !== undefined && data.downloads_left !== null) {
        out.push(data.downloads_left + " download(s) allowed");
      }
      out.push(data.protected ? "only you may change or delete it" : "anyone with the link may change or delete it");
    }
    return "Applied: " + out.join("; ") + ".";
  }

  function showResult(item, data, asked) {
    item.bar.remove();
    var kind = kindOf(data);
    var p = el("p");
    var link = data.secret_link || data.url;
    var a = el("a", { href: link, "data-result-url": "" }, link);
    p.appendChild(a);
    p.appendChild(document.createTextNode(" "));
    p.appendChild(copyButton(link));
    p.appendChild(document.createTextNode(" "));
    p.appendChild(el("a", { href: infoPage(data.url, kind) }, kind === "file" ? "Details and QR code" : "Page and QR code"));
    item.li.appendChild(p);
    if (data.secret_link) {
      item.li.appendChild(el("p", { "class": "notice", "data-secret-note": "" },
        "Encrypted: send the whole link. The part after # is the key; it never reached the server, and this page does not keep it. Whoever opens the link decrypts the file in their browser, or runs: curl -fsS '" + data.url + "' | age -d -i key.txt"));
    }
    if (data.password) {
      item.li.appendChild(el("p", { "class": "notice", "data-password-note": "" },
        "Password protected: send the password apart from the link (another message, a call). Whoever opens the link types it in their browser, or runs: curl -u ':<password>' '" + data.url + "'"));
    }
    item.li.appendChild(el("p", { "class": "muted", "data-applied": "" }, applied(data, kind)));
    var reused = !!(asked && asked.dirname && !data.owner_token);
    if (reused) {
      item.li.appendChild(el("p", { "class": "notice" },
        "The folder " + asked.dirname + " already existed: the files were added to it (which slides its lifetime); the lifetime, write token and listing you chose were not applied."));
    }
    if (data.write_token) {
      item.li.appendChild(secret("Write token", data.write_token,
        "Whoever has it may add, change and delete this folder's files (the X-Store-Write header, or the folder page's write token field); without it the folder is read-only."));
    }
    if (data.owner_token) {
      item.li.appendChild(secret("Owner token", data.owner_token,
        "It changes the expiry, and deletes or edits a protected upload. This browser keeps it under Your uploads."));
    }
    if (data.expires_at) {
      var exp = el("p", { "class": "muted" }, "Expires ");
      var t = el("time", { datetime: data.expires_at, "data-rel": "" }, data.expires_at);
      exp.appendChild(t);
      item.li.appendChild(exp);
      var clamped = reused ? "" : clampNote(asked && asked.ttl, data.expires_at);
      if (clamped) { item.li.appendChild(el("p", { "class": "notice" }, clamped)); }
      localTimes(item.li);
    } else if (data.expires_at === null) {
      item.li.appendChild(el("p", { "class": "muted" }, "Retained: never expires."));
    }
  }

  // "4h" or "3d" in seconds, or 0.
  function ttlSeconds(ttl) {
    var m = /^(\d+)([hd])$/.exec(ttl || "");
    if (!m) { return 0; }
    return Number(m[1]) * (m[2] === "d" ? 86400 : 3600);
  }

  // Says so when the lifetime the server gave is not the one asked for
  // (it clamps a ttl to its bounds; a dir's bounds differ from a file's).
  function clampNote(ttl, expiresAt) {
    var asked = ttlSeconds(ttl);
    if (!asked) { return ""; }
    var got = Math.round((new Date(expiresAt).getTime() - Date.now()) / 1000);
    if (Math.abs(got - asked) < 120) { return ""; }
    return "You asked for " + ttl + "; this server's bounds gave it " + describeSecs(got) + ".";
  }

  function describeSecs(secs) {
    if (secs >= 86400 && secs % 86400 < 300) { return Math.round(secs / 86400) + " day(s)"; }
    return Math.round(secs / 3600) + " hour(s)";
  }

  function showError(item, err) {
    item.bar.remove();
    item.li.appendChild(el("p", { "class": "error", role: "alert" }, err.message));
  }

  // `5 MiB`, `1.2 KiB`, `512 B`: as the server writes sizes
  // (store_core::limits::binary_size), so that a file's size and the
  // limit the page shows read alike.
  function binarySize(n) {
    var units = [["GiB", 1073741824], ["MiB", 1048576], ["KiB", 1024]];
    for (var i = 0; i < units.length; i++) {
      if (n >= units[i][1]) {
        return (n / units[i][1]).toFixed(1).replace(/\.0$/, "") + " " + units[i][0];
      }
    }
    return n + " B";
  }

  // An error in the page's words, by its stable code (SPEC.md, Errors):
  // `ctx.tokenName` names the token the form asks for, `ctx.sentToken`
  // whether one went with the request, `ctx.maxLabel` the size limit as
  // the page shows it. Other refusals keep the server's own sentence.
  function inWords(e, ctx) {
    switch (e.code) {
      case "too_large":
        return ctx.maxLabel ? "Too large: this server takes up to " + ctx.maxLabel + " per file."
          : "Too large for this server.";
      case "write_denied":
        return ctx.sentToken ? "The " + ctx.tokenName + " is wrong: check it and upload again."
          : "This needs the " + ctx.tokenName + ": enter it above, then upload again.";
      case "rate_limited":
        return "Too many requests from here: wait " + (e.retryAfter || 60) + " s, then upload again.";
      case "pool_full":
        return "The server has no room left right now: try again later.";
      default:
        return e.message;
    }
  }

  // A query string of [name, value] pairs, names from WIRE.params; empty
  // values are left out.
  function query(pairs) {
    var parts = [];
    pairs.forEach(function (p) {
      if (p[1] !== "" && p[1] !== null && p[1] !== undefined) {
        parts.push(encodeURIComponent(p[0]) + "=" + encodeURIComponent(p[1]));
      }
    });
    return parts.length ? "?" + parts.join("&") : "";
  }

  function formData(files) {
    var fd = new FormData();
    files.forEach(function (f) { fd.append("file", f, f.name); });
    return fd;
  }

  // --- End-to-end encryption in the age format (CONTRACT.md, "Private
  // sharing"), with typage (vendored, /static/age.js, which defines
  // ageEncryption). The key leaves this browser only in the link's
  // fragment, which browsers never send. The file's name travels inside
  // the ciphertext, in a stanza of its own that age tools skip, sealed
  // under a key derived from the file key: the header's MAC covers it, and
  // `age -d` still gives the file's bytes alone.
  var NAME_STANZA = "storesrv/name";
  var NAME_INFO = "storesrv file name";

  function nameCipher(fileKey) {
    var A = window.ageEncryption;
    var info = new TextEncoder().encode(NAME_INFO);
    // A key of its own per file, so a fixed nonce is never used twice.
    return A.chacha20poly1305(A.hkdf(A.sha256, fileKey, new Uint8Array(0), info, 32), new Uint8Array(12));
  }

  // A recipient that wraps no key: it carries the name.
  function nameRecipient(name) {
    return {
      wrapFileKey: function (fileKey) {
        var sealed = nameCipher(fileKey).encrypt(new TextEncoder().encode(name));
        return [new window.ageEncryption.Stanza([NAME_STANZA], sealed)];
      }
    };
  }

  // `f` encrypted to a new X25519 identity: the bytes and the identity.
  function seal(f) {
    var A = window.ageEncryption;
    var identity;
    return A.generateX25519Identity().then(function (id) {
      identity = id;
      return Promise.all([A.identityToRecipient(id), f.arrayBuffer()]);
    }).then(function (got) {
      var e = new A.Encrypter();
      e.addRecipient(got[0]);
      e.addRecipient(nameRecipient(f.name));
      return e.encrypt(new Uint8Array(got[1]));
    }).then(function (bytes) { return { bytes: bytes, identity: identity }; });
  }

  // Ciphertext decrypted with `identity`: the bytes, and the name it
  // carries ("" for a file encrypted elsewhere). Throws at once for a
  // string that is no X25519 identity.
  function unseal(bytes, identity) {
    var A = window.ageEncryption;
    var inner = new A.X25519Identity(identity);
    var found = { name: "" };
    var d = new A.Decrypter();
    d.addIdentity({
      unwrapFileKey: function (stanzas) {
        return Promise.resolve(inner.unwrapFileKey(stanzas)).then(function (key) {
          var s = stanzas.filter(function (x) { return x.args[0] === NAME_STANZA; })[0];
          if (key && s) {
            try { found.name = new TextDecoder().decode(nameCipher(key).decrypt(s.body)); } catch (e) { found.name = ""; }
          }
          return key;
        });
      }
    });
    return d.decrypt(bytes).then(function (plain) { return { bytes: plain, name: found.name }; });
  }

  // One file encrypted here and uploaded with no name: resolves with its
  // record, and the link that opens it (the key after #).
  function sendEncrypted(root, f, params, headers, item) {
    return seal(f).then(function (sealed) {
      var p = params.filter(function (kv) { return kv[0] !== WIRE.params.name; })
        .concat([[WIRE.params.encrypted, "age"]]);
      headers["Content-Type"] = "application/octet-stream";
      return send("POST", root + query(p), new Blob([sealed.bytes]), headers, item.bar).then(function (v) {
        v.secret_link = v.url + "#" + sealed.identity;
        return v;
      });
    });
  }

  // The home form's "Encrypt in this browser", if ticked.
  function encrypting() {
    var box = document.querySelector("form[data-upload=home] [data-encrypt]");
    return !!(box && box.checked);
  }

  // The home form's requests: separate files, one bundle, or a dir. Each
  // answer is shown and remembered under Your uploads. They go where the
  // form posts, which is the service's root wherever it is mounted.
  function homeJobs(root, files, list, field, auth, fail, sent) {
    var jobs = [];
    var mode = files.length > 1 ? field("mode") || "files" : "files";
    var common = { ttl: field("ttl"), once: field("once") };
    var done = function (item, label, asked, these) {
      return function (v) { sent(these); showResult(item, v, asked); remember(v, label); };
    };
    if (encrypting() && mode !== "files") {
      var refused = resultItem(list, files.length + " files");
      fail(refused)(new Error("Encrypt in this browser makes one link per file: choose Separate links, or encrypt one zip of them."));
      return jobs;
    }
    if (mode === "bundle") {
      var label = "Bundle of " + files.length + " files";
      var b = resultItem(list, label);
      // Burn after reading and download limits apply to single files
      // only: the form disables them for a bundle (modeNote).
      jobs.push(send("POST", root + query([[WIRE.params.ttl, common.ttl], [WIRE.params.protect, field("protect")]]), formData(files), auth(null), b.bar)
        .then(done(b, label, common, files), fail(b)));
    } else if (mode === "dir") {
      var name = field("dirname");
      var dirLabel = name ? "Folder " + name : "New folder";
      var d = resultItem(list, dirLabel);
      var asked = { ttl: field("ttl"), dirname: name };
      var dirQuery = [[WIRE.params.dir, "1"], [WIRE.params.name, name], [WIRE.params.ttl, field("ttl")], [WIRE.params.write, field("write")], [WIRE.params.listed, field("listed")]];
      jobs.push(send("POST", root + query(dirQuery), formData(files), auth(null), d.bar)
        .then(done(d, dirLabel, asked, files), fail(d)));
    } else {
      files.forEach(function (f) {
        var item = resultItem(list, f.name);
        var params = [[WIRE.params.name, f.name], [WIRE.params.ttl, common.ttl], [WIRE.params.once, common.once], [WIRE.params.max_downloads, field("max_downloads")], [WIRE.params.protect, field("protect")]];
        var job = encrypting() ? sendEncrypted(root, f, params, auth(null), item)
          : resumable(f) ? sendResumable(root, f, params, auth(null), item)
          : send("POST", root + query(params), f, auth({ "Content-Type": f.type || "application/octet-stream" }), item.bar);
        jobs.push(job.then(done(item, f.name, common, [f]), fail(item)));
      });
    }
    return jobs;
  }

  // Why the options the chosen mode cannot honour are off, or "".
  function modeNote(mode) {
    if (mode === "bundle") {
      return "A bundle is downloaded whole, as one zip: burn after reading and download limits are for separate links.";
    }
    if (mode === "dir") {
      return "A folder keeps its files until it expires and its write token guards changes: burn after reading, download limits and owner-only changes are for separate links and bundles.";
    }
    return "";
  }

  // The home form's options follow what was picked: the choice between
  // links, a bundle and a folder shows for two files or more, the folder's
  // fields for a folder only, and what the mode cannot honour is disabled
  // with the reason beside it (a disabled field is not sent).
  function showMode(form, count) {
    var several = form.querySelector("[data-several]");
    if (!several) { return; }
    several.hidden = count < 2;
    var checked = form.querySelector("input[name=mode]:checked");
    var mode = count >= 2 && checked ? checked.value : "files";
    var folder = form.querySelector("[data-folder]");
    if (folder) {
      folder.hidden = mode !== "dir";
      // A hidden field is neither sent nor checked: a folder name typed
      // before switching to a bundle must not block the upload.
      folder.querySelectorAll("input").forEach(function (f) { f.disabled = folder.hidden; });
    }
    form.querySelectorAll("[data-single]").forEach(function (f) { f.disabled = mode !== "files"; });
    form.querySelectorAll("[data-protect] input").forEach(function (f) { f.disabled = mode === "dir"; });
    var note = form.querySelector("[data-mode-note]");
    if (note) {
      note.textContent = modeNote(mode);
      note.hidden = !note.textContent;
    }
  }

  // The files picked so far, by the chooser or dropped anywhere on the
  // page, each with its size and a button that removes it.
  function showPicked(form, picked, onRemove) {
    var ul = form.querySelector("ul.picked-files");
    if (!ul) { return; }
    ul.textContent = "";
    picked.forEach(function (f, i) {
      var li = el("li", null, f.name + " (" + binarySize(f.size) + ") ");
      var remove = el("button", { type: "button", "class": "secondary small", "aria-label": "Remove " + f.name }, "Remove");
      remove.addEventListener("click", function () { onRemove(i); });
      li.appendChild(remove);
      ul.appendChild(li);
    });
    // The live line says what changed, for a screen reader too.
    var note = form.querySelector(".picked");
    if (note) {
      note.textContent = picked.length ? picked.length + " file(s) picked; drop or choose more, or upload."
        : "…or drop them anywhere on this page.";
    }
  }

  function uploader(form, takesPageDrops) {
    var kind = form.getAttribute("data-upload");
    var input = form.querySelector("input[type=file]");
    var list = form.parentNode.querySelector(".results") || form.appendChild(el("ul", { "class": "results" }));
    var zone = form.querySelector(".drop");
    var button = form.querySelector("button[type=submit]");
    var picked = [];
    form.classList.add("js-picking");

    function changed() {
      // Picked files stand in for the chooser's: it may be left empty.
      if (picked.length) { input.removeAttribute("required"); } else { input.setAttribute("required", ""); }
      showPicked(form, picked, function (i) {
        picked.splice(i, 1);
        changed();
        // Focus stays in the list (or goes back to the chooser), not lost.
        var buttons = form.querySelectorAll("ul.picked-files button");
        (buttons[Math.min(i, buttons.length - 1)] || input).focus();
      });
      showMode(form, picked.length);
    }

    function add(files) {
      picked = picked.concat(Array.prototype.slice.call(files || []));
      changed();
    }

    input.addEventListener("change", function () {
      add(input.files);
      // Kept in `picked`; cleared here so that picking again adds.
      input.value = "";
    });
    form.querySelectorAll("input[name=mode]").forEach(function (r) {
      r.addEventListener("change", function () { showMode(form, picked.length); });
    });

    // A drop anywhere on the page picks the files: a drop beside the box
    // would otherwise make the browser leave the page for the file.
    // Only a drag of files: text dragged into a field drops as usual.
    var carriesFiles = function (e) {
      return !!e.dataTransfer && Array.prototype.indexOf.call(e.dataTransfer.types || [], "Files") >= 0;
    };
    var target = takesPageDrops ? document : zone;
    if (target) {
      ["dragenter", "dragover"].forEach(function (n) {
        target.addEventListener(n, function (e) {
          if (!carriesFiles(e)) { return; }
          e.preventDefault();
          if (zone) { zone.classList.add("over"); }
        });
      });
      ["dragleave", "drop"].forEach(function (n) {
        target.addEventListener(n, function (e) {
          if (!carriesFiles(e)) { return; }
          e.preventDefault();
          if (zone) { zone.classList.remove("over"); }
        });
      });
      target.addEventListener("drop", function (e) { if (carriesFiles(e)) { add(e.dataTransfer.files); } });
    }
    changed();

    var field = function (name) {
      var f = form.elements.namedItem(name);
      if (!f) { return ""; }
      // Radio buttons: the checked one's value, unless they are off.
      if (typeof RadioNodeList !== "undefined" && f instanceof RadioNodeList) {
        var on = Array.prototype.filter.call(f, function (r) { return r.checked && !r.disabled; })[0];
        return on ? on.value : "";
      }
      if (f.disabled) { return ""; }
      if (f.type === "checkbox") { return f.checked ? f.value : ""; }
      return f.value;
    };

    form.addEventListener("submit", function (ev) {
      var files = picked.slice();
      if (!files.length) { return; }
      ev.preventDefault();
      // One upload per click: a second click while this one is in flight
      // would send everything again.
      if (button.disabled) { return; }
      // A dir's page asks for its write token; the home and gallery
      // pages for the server's upload token, where it takes one.
      var tokenField = kind === "dir" ? "write" : "token";
      var words = {
        maxLabel: form.getAttribute("data-max-label") || "",
        tokenName: kind === "dir" ? "write token" : "upload token",
        sentToken: !!field(tokenField) || kind === "dir" && !!dirOwner(form.getAttribute("action"))
      };
      // Refuse oversized files here: the server answers 413 from the
      // Content-Length at once, which a browser still sending the body
      // often reports as a broken connection instead.
      var max = Number(form.getAttribute("data-max") || 0);
      var big = max ? files.filter(function (f) { return f.size > max; }) : [];
      if (big.length) {
        big.forEach(function (f) {
          var item = resultItem(list, f.name);
          showError(item, new Error(f.name + " is " + binarySize(f.size) + ": this server takes up to " + words.maxLabel + " per file. Remove it to upload the others."));
        });
        return;
      }
      // A server closed to anonymous uploads (STORE_UPLOAD_TOKEN) shows a
      // token field; every request of this upload carries it.
      var auth = function (headers) {
        var out = {};
        Object.keys(headers || {}).forEach(function (k) { out[k] = headers[k]; });
        if (field("token")) { out.Authorization = "Bearer " + field("token"); }
        // A password travels in a header, never in the URL (the server
        // refuses it there).
        if (field("password")) { out[PASSWORD_HEADER] = field("password"); }
        return out;
      };
      var failures = 0;
      var fail = function (item) {
        return function (e) {
          failures += 1;
          if (kind === "dir" && e.code === "write_denied" && dirOwner(form.getAttribute("action"))) {
            dropDirOwner(form.getAttribute("action"));
          }
          showError(item, new Error(inWords(e, words)));
        };
      };
      // Files whose upload succeeded leave the list: sending again after
      // a partial failure sends only what failed.
      var sent = function (done) {
        picked = picked.filter(function (f) { return done.indexOf(f) < 0; });
      };
      button.disabled = true;
      var jobs = kind === "home" ? homeJobs(form.getAttribute("action"), files, list, field, auth, fail, sent) : [];
      if (kind !== "home") {
        // A dir or a gallery: one multipart request, then show the new state.
        var headers = auth(null);
        var token = field("write");
        if (token) { headers["X-Store-Write"] = token; }
        var owner = kind === "dir" ? dirOwner(form.getAttribute("action")) : "";
        if (owner) { headers["X-Store-Owner"] = owner; }
        var item2 = resultItem(list, files.length + " file(s)");
        // A drop link answers the names its files were stored under, and
        // there is nothing else to see: say what arrived.
        var after = kind === "drop" ? function (v) { sent(files); showDropped(item2, v); }
          : function () { window.location.reload(); };
        jobs.push(send("POST", form.getAttribute("action"), formData(files), headers, item2.bar)
          .then(after, fail(item2)));
      }
      var finish = function () {
        button.disabled = false;
        // After a refusal the form keeps its choices and what failed, to
        // fix and send again; only a wholly successful upload clears it.
        if (!failures) { form.reset(); picked = []; }
        changed();
      };
      Promise.all(jobs).then(finish, finish);
    });
  }

  // What a drop link took: each file under the name it was stored as.
  function showDropped(item, v) {
    item.bar.remove();
    var names = (v && v.files || []).map(function (f) { return f.name + " (" + binarySize(f.size) + ")"; });
    item.li.appendChild(el("p", { "class": "notice", "data-dropped": "" }, "Sent: " + names.join(", ")));
  }

  // --- Your uploads: what this browser uploaded, kept in localStorage
  // with the owner (and write) tokens, so that it survives a reload. The
  // tokens never leave this browser except to this server, in the
  // X-Store-Owner header of an extend or a delete.
  var UPLOADS_KEY = "storesrv.uploads";
  var UPLOADS_MAX = 200;

  function loadUploads() {
    try {
      var v = JSON.parse(window.localStorage.getItem(UPLOADS_KEY) || "[]");
      // Another script, or an older version of this one, may have left
      // anything here: keep only entries this one can show.
      return Array.isArray(v) ? v.filter(function (u) { return u && typeof u.url === "string"; }) : [];
    } catch (e) { return []; }
  }

  function saveUploads(list) {
    try { window.localStorage.setItem(UPLOADS_KEY, JSON.stringify(list.slice(0, UPLOADS_MAX))); } catch (e) { /* storage full or off */ }
  }

  // Downloads left, from a record's `downloads_left`, or null.
  function leftOf(data) {
    return data.downloads_left !== undefined && data.downloads_left !== null ? data.downloads_left : null;
  }

  function remember(data, label) {
    if (!data || !data.url) { return; }
    var old = loadUploads().filter(function (u) { return u.url === data.url; })[0] || {};
    keep({
      url: data.url,
      name: label,
      kind: kindOf(data),
      // A named dir that already existed answers no owner token: keep the
      // one this browser got when it made it, unless the dir of that name
      // is a newer one. A dir's write token is not kept: the owner token
      // passes the dir's write gate.
      owner: data.owner_token || (old.created && old.created !== data.created_at ? "" : old.owner) || "",
      created: data.created_at || old.created || null,
      expires_at: data.expires_at || null,
      counted: !!data.once || leftOf(data) !== null,
      left: leftOf(data),
      at: old.at || new Date().toISOString()
    });
  }

  // Puts `entry` first in Your uploads, in place of any older one for
  // its URL.
  function keep(entry) {
    var rest = loadUploads().filter(function (u) { return u.url !== entry.url; });
    saveUploads([entry].concat(rest));
    renderUploads();
  }

  // The page that made a drop link: the folder is kept under Your
  // uploads with its owner token, its owner link (what opens it in a
  // browser) and its drop link (what its owner hands out).
  function rememberDrop() {
    var made = document.querySelector("[data-drop-url][data-owner]");
    if (!made) { return; }
    var url = made.getAttribute("data-url");
    var owner = made.getAttribute("data-owner");
    var mine = made.querySelector("a[data-owner-link]");
    keep({
      url: url,
      name: "Drop link (folder " + localPath(url).split("/").pop() + ")",
      kind: "dir",
      owner: owner,
      created: made.getAttribute("data-created"),
      expires_at: made.getAttribute("data-expires") || null,
      counted: false,
      left: null,
      drop: made.getAttribute("data-drop-url"),
      ownerLink: mine ? mine.getAttribute("href") : null,
      files: 0,
      at: new Date().toISOString()
    });
  }

  // A gallery's admin page: its address is the admin key, kept with the
  // gallery under Your uploads so that it is not lost with the tab.
  function rememberGallery() {
    var admin = document.querySelector("[data-gallery-admin]");
    if (!admin) { return; }
    var url = admin.getAttribute("data-url");
    var old = loadUploads().filter(function (u) { return u.url === url; })[0] || {};
    keep({
      url: url,
      name: admin.getAttribute("data-name") || url,
      kind: "gallery",
      owner: "",
      admin: window.location.pathname,
      expires_at: old.expires_at || null,
      counted: false,
      left: null,
      at: old.at || new Date().toISOString()
    });
  }

  function forget(url) {
    saveUploads(loadUploads().filter(function (u) { return u.url !== url; }));
    renderUploads();
  }

  function update(url, change) {
    saveUploads(loadUploads().map(function (u) { return u.url === url ? change(u) : u; }));
    renderUploads();
  }

  // An owner's request (extend, delete, or a look at the record).
  function ownerRequest(method, url, owner) {
    return request(method, url, owner ? { "X-Store-Owner": owner } : {}, null);
  }

  function ttlOptions() {
    var select = document.querySelector("form[data-upload=home] select[name=ttl]");
    var out = [];
    if (select) {
      Array.prototype.forEach.call(select.options, function (o) {
        if (o.value) { out.push([o.value, o.textContent]); }
      });
    }
    return out;
  }

  var KIND_WORDS = { file: "file", bundle: "bundle", dir: "folder", gallery: "gallery" };

  function uploadItem(u) {
    var li = el("li", { "data-upload-url": u.url });
    var title = el("div");
    var opens = u.ownerLink || (u.kind === "gallery" ? localPath(u.url) : infoPage(u.url, u.kind));
    title.appendChild(el("a", { href: opens }, u.name || u.url));
    var about = " · " + (KIND_WORDS[u.kind] || u.kind);
    if (u.drop && !u.gone) { about += " · " + (u.files || 0) + " file(s) received"; }
    if (!u.gone && u.left !== null && u.left !== undefined) { about += " · " + u.left + " download(s) left"; }
    title.appendChild(el("span", { "class": "muted" }, about));
    li.appendChild(title);
    var when = el("div", { "class": "muted expiry", "data-state": u.gone || "live" });
    if (u.gone === "read") {
      when.textContent = "Read, gone: its downloads are spent and the link no longer works.";
    } else if (u.gone) {
      when.textContent = "Gone: it expired or was deleted.";
    } else if (u.expires_at) {
      when.appendChild(document.createTextNode("Expires "));
      when.appendChild(el("time", { datetime: u.expires_at, "data-rel": "" }, u.expires_at));
    } else {
      when.textContent = "Retained: never expires.";
    }
    li.appendChild(when);
    var status = el("span", { "class": "status muted", role: "status" });
    var actions = el("div", { "class": "actions" });
    if (!u.gone) {
      // A drop folder is handed out by its drop link: its own URL
      // answers 404 to everyone but its owner.
      actions.appendChild(copyButton(u.drop || u.url));
      if (!u.drop) { actions.appendChild(qrButton(li, u)); }
      if (u.admin) { actions.appendChild(el("a", { "class": "button small", href: u.admin, "data-admin": "" }, "Admin")); }
      if (u.owner) {
        if (ttlOptions().length && u.expires_at) { actions.appendChild(extendControl(u, status)); }
        actions.appendChild(deleteButton(u, status));
      }
    }
    var forgetIt = el("button", { type: "button", "class": "secondary small", "data-forget": "", "aria-label": "Forget " + (u.name || u.url) }, "Forget");
    forgetIt.addEventListener("click", function () { forget(u.url); });
    actions.appendChild(forgetIt);
    actions.appendChild(status);
    li.appendChild(actions);
    return li;
  }

  // The QR code is drawn by the server (`?qr=1`), shown on demand.
  function qrButton(li, u) {
    var b = el("button", { type: "button", "class": "secondary small", "aria-expanded": "false", "data-qr": "" }, "QR code");
    b.addEventListener("click", function () {
      var shown = li.querySelector("img.qr");
      if (shown) { shown.remove(); b.setAttribute("aria-expanded", "false"); return; }
      li.appendChild(el("img", { "class": "qr", src: withParam(localPath(u.url), WIRE.params.qr, "1"), alt: "QR code of " + u.url, width: "160", height: "160" }));
      b.setAttribute("aria-expanded", "true");
    });
    return b;
  }

  // The lifetime choices with the one that keeps the upload at least as
  // long as it has left chosen: the control extends by default, and
  // asks before it shortens.
  function extendControl(u, status) {
    var wrap = el("span");
    var left = Math.max(0, Math.round((new Date(u.expires_at).getTime() - Date.now()) / 1000));
    var select = el("select", { "aria-label": "New lifetime for " + (u.name || u.url), "data-extend-ttl": "" });
    var options = ttlOptions();
    var chosen = options.filter(function (o) { return ttlSeconds(o[0]) >= left; })[0] || options[options.length - 1];
    options.forEach(function (o) {
      var option = el("option", { value: o[0] }, o[1]);
      if (o === chosen) { option.selected = true; }
      select.appendChild(option);
    });
    var go = el("button", { type: "button", "class": "secondary small", "data-extend": "" }, "Extend");
    // Two minutes of slack: the lifetime left shrinks while the page is
    // open, and "4 hours" on a fresh upload is no shortening.
    var shortens = function () { return ttlSeconds(select.value) < left - 120; };
    select.addEventListener("change", function () { go.removeAttribute("data-armed"); go.textContent = shortens() ? "Shorten" : "Extend"; });
    go.addEventListener("click", function () {
      var shorter = shortens();
      if (shorter && go.getAttribute("data-armed") !== "1") {
        go.setAttribute("data-armed", "1");
        go.textContent = "Shorten to " + select.options[select.selectedIndex].textContent + "?";
        return;
      }
      status.textContent = "…";
      ownerRequest("POST", withParam(localPath(u.url), WIRE.params.ttl, select.value), u.owner).then(function (v) {
        update(u.url, function (old) { old.expires_at = v.expires_at || null; return old; });
      }, function (e) { failed(u, status, e); });
    });
    wrap.appendChild(select);
    wrap.appendChild(go);
    return wrap;
  }

  // Deleting cannot be undone: the first click asks, the second deletes.
  function deleteButton(u, status) {
    var b = el("button", { type: "button", "class": "secondary small", "data-delete": "" }, "Delete");
    b.addEventListener("click", function () {
      if (b.getAttribute("data-armed") !== "1") {
        b.setAttribute("data-armed", "1");
        b.textContent = "Really delete?";
        return;
      }
      ownerRequest("DELETE", localPath(u.url), u.owner).then(function () {
        forget(u.url);
      }, function (e) { failed(u, status, e); });
    });
    return b;
  }

  function failed(u, status, e) {
    if (e.status === 404) {
      markGone(u);
      return;
    }
    status.className = "status error";
    status.textContent = e.message;
  }

  // The record of an upload, read without spending a download: a file's
  // `?info=1`, a bundle's `?json=1`, a dir or a gallery as JSON.
  function recordUrl(u) {
    var path = localPath(u.url);
    if (u.kind === "file") { return withParam(path, WIRE.params.info, "1"); }
    return u.kind === "bundle" ? withParam(path, WIRE.params.json, "1") : path;
  }

  // A 404: read to its last download (a counted upload whose lifetime
  // had not run out), or gone otherwise. Kept, so that the person sees
  // what became of it, until they forget it.
  function markGone(u) {
    var expired = u.expires_at && new Date(u.expires_at).getTime() <= Date.now();
    update(u.url, function (old) { old.gone = old.counted && !expired ? "read" : "gone"; return old; });
  }

  // Entries refreshed from the server when the page loads: the newest
  // (another device may have extended or deleted them, a reader spent a
  // download), then those whose stored expiry has passed (a dir's
  // lifetime slides with every write). At most this many requests per
  // visit, a fifth of the default rate limit, and none after a 429.
  var REFRESHED_MAX = 20;

  function refreshUploads(list) {
    var now = Date.now();
    var expired = function (u) { return u.expires_at && new Date(u.expires_at).getTime() <= now; };
    var live = list.filter(function (u) { return !u.gone; });
    // The newest first, then the expired ones past them, at most
    // REFRESHED_MAX requests in all, one after another, stopping at a 429.
    var due = live.slice(0, REFRESHED_MAX).concat(live.slice(REFRESHED_MAX).filter(expired))
      .slice(0, REFRESHED_MAX);
    var next = function (i) {
      if (i >= due.length) { return; }
      var u = due[i];
      // A drop folder answers 404 to all but its owner: its record is
      // asked for with the owner token.
      ownerRequest("GET", recordUrl(u), u.drop ? u.owner : "").then(function (v) {
        var left = leftOf(v);
        var files = u.drop ? v.file_count : u.files;
        if (v.expires_at !== u.expires_at || left !== u.left || files !== u.files) {
          update(u.url, function (old) { old.expires_at = v.expires_at || null; old.left = left; old.files = files; return old; });
        }
        next(i + 1);
      }, function (e) {
        if (e.status === 404) { markGone(u); }
        if (e.status !== 429) { next(i + 1); }
      });
    };
    next(0);
  }

  function renderUploads(refresh) {
    var section = document.getElementById("your-uploads");
    if (!section) { return; }
    var list = loadUploads();
    var ul = section.querySelector("ul.uploads");
    ul.textContent = "";
    list.forEach(function (u) { ul.appendChild(uploadItem(u)); });
    var empty = section.querySelector(".empty");
    if (empty) { empty.hidden = list.length > 0; }
    localTimes(ul);
    if (refresh) { refreshUploads(list); }
  }

  // --- Likes and comments without reloading the page.
  // A JSON request to the service: the answer's JSON, or an Error with
  // the status and `retry_after`, so that callers can say a 404 is gone
  // and a 429 how long to wait.
  function request(method, url, headers, body) {
    var all = { Accept: "application/json" };
    Object.keys(headers).forEach(function (k) { all[k] = headers[k]; });
    return fetch(url, { method: method, headers: all, body: body, credentials: "same-origin" })
      .then(function (r) {
        return r.json().catch(function () { return {}; }).then(function (data) {
          if (!r.ok) {
            var e = new Error(data.error || "HTTP " + r.status);
            e.status = r.status;
            e.code = data.code;
            e.retryAfter = data.retry_after;
            throw e;
          }
          return data;
        });
      });
  }

  function post(url, body, contentType) {
    return request("POST", url, contentType ? { "Content-Type": contentType } : {}, body);
  }

  function likeForm(form) {
    form.addEventListener("submit", function (ev) {
      ev.preventDefault();
      post(form.getAttribute("action"), null).then(function (v) {
        var count = form.querySelector("[data-likes]");
        if (count) { count.textContent = v.likes; }
        var button = form.querySelector("button");
        if (button) {
          button.setAttribute("aria-pressed", v.liked ? "true" : "false");
        }
      }, function (e) { alert(e.message); });
    });
  }

  function commentForm(form) {
    var status = form.querySelector(".status");
    form.addEventListener("submit", function (ev) {
      ev.preventDefault();
      var body = new URLSearchParams(new FormData(form)).toString();
      post(form.getAttribute("action"), body, "application/x-www-form-urlencoded").then(function (c) {
        var list = document.getElementById("comment-list");
        var art = el("article", { "class": "comment", id: "c-" + c.id });
        var head = el("div");
        head.appendChild(el("strong", null, c.name));
        head.appendChild(document.createTextNode(" · "));
        var when = el("time", { datetime: new Date(c.ts * 1000).toISOString() });
        head.appendChild(when);
        art.appendChild(head);
        art.appendChild(el("p", null, c.text));
        list.appendChild(art);
        localTimes(art);
        form.elements.namedItem("text").value = "";
        if (status) { status.className = "status ok"; status.textContent = "Posted."; }
      }, function (e) {
        if (!status) { return; }
        status.className = "status error";
        var cooldown = form.getAttribute("data-cooldown");
        status.textContent = e.status === 429 && e.retryAfter
          ? "Please wait " + e.retryAfter + " s before commenting again (one comment per " + cooldown + " s)."
          : e.message;
      });
    });
  }

  // --- The gallery lightbox: the full image over the grid, arrows to move.
  function lightbox() {
    var links = Array.prototype.slice.call(document.querySelectorAll("a[data-lightbox]"));
    if (!links.length || typeof HTMLDialogElement === "undefined") { return; }
    var dialog = el("dialog", { "class": "lightbox", "aria-label": "Image viewer" });
    var bar = el("div", { "class": "bar" });
    // Arrows and short words: the bar stays one or two rows on a phone.
    var prev = el("button", { type: "button", "class": "small", "aria-label": "Previous image" }, "←");
    var caption = el("span", { "class": "caption" });
    var next = el("button", { type: "button", "class": "small", "aria-label": "Next image" }, "→");
    var close = el("button", { type: "button", "class": "small", "aria-label": "Close the viewer", "data-lightbox-close": "" }, "✕");
    // Like, download and the original, for the image shown.
    var like = el("button", { type: "button", "class": "small", "data-lightbox-like": "" }, "♥");
    var download = el("a", { "class": "button small", "data-lightbox-download": "" }, "Download");
    var original = el("a", { "class": "button small", target: "_blank", rel: "noopener" }, "Original");
    var img = el("img", { alt: "" });
    var tools = el("span", { "class": "tools" });
    tools.appendChild(like); tools.appendChild(download); tools.appendChild(original);
    bar.appendChild(prev); bar.appendChild(caption); bar.appendChild(tools); bar.appendChild(next); bar.appendChild(close);
    dialog.appendChild(bar);
    dialog.appendChild(img);
    document.body.appendChild(dialog);
    var at = 0;
    function currentLikeForm() {
      var fig = links[at].closest("figure");
      return fig ? fig.querySelector("form[data-like]") : null;
    }
    function showLikes() {
      var form = currentLikeForm();
      var count = form ? form.querySelector("[data-likes]") : null;
      var pressed = form ? form.querySelector("button").getAttribute("aria-pressed") : null;
      like.hidden = !form;
      // The visible "♥ 3" starts the accessible name, as on the grid.
      like.textContent = "♥ " + (count ? count.textContent : "");
      like.appendChild(el("span", { "class": "sr-only" }, " likes; like this image"));
      like.setAttribute("aria-pressed", pressed === "true" ? "true" : "false");
    }
    function show(i) {
      at = (i + links.length) % links.length;
      var href = links[at].getAttribute("href");
      img.src = href;
      img.alt = links[at].getAttribute("data-name") || "";
      caption.textContent = img.alt + " (" + (at + 1) + "/" + links.length + ")";
      download.href = withParam(href, WIRE.params.download, "1");
      original.href = href;
      showLikes();
    }
    like.addEventListener("click", function () {
      var form = currentLikeForm();
      if (!form) { return; }
      post(form.getAttribute("action"), null).then(function (v) {
        var count = form.querySelector("[data-likes]");
        if (count) { count.textContent = v.likes; }
        form.querySelector("button").setAttribute("aria-pressed", v.liked ? "true" : "false");
        showLikes();
      }, function (e) { alert(e.message); });
    });
    links.forEach(function (a, i) {
      a.addEventListener("click", function (ev) {
        ev.preventDefault();
        show(i);
        dialog.showModal();
      });
    });
    prev.addEventListener("click", function () { show(at - 1); });
    next.addEventListener("click", function () { show(at + 1); });
    close.addEventListener("click", function () { dialog.close(); });
    dialog.addEventListener("keydown", function (e) {
      if (e.key === "ArrowLeft") { show(at - 1); }
      if (e.key === "ArrowRight") { show(at + 1); }
    });
  }

  // Marks the navigation's link to the section this page is in: the
  // home page by its own path, the others also for the pages under them.
  function markSection() {
    var here = window.location.pathname;
    var links = document.querySelectorAll("header.top nav a");
    var home = document.querySelector("header.top a.brand");
    var root = home ? new URL(home.href).pathname : "/";
    links.forEach(function (a) {
      var path = new URL(a.href).pathname;
      var inside = path === here || path !== root && here.indexOf(path.replace(/\/$/, "") + "/") === 0;
      if (inside) { a.setAttribute("aria-current", "page"); }
    });
  }

  // --- A dir's page for those who may change it.
  // The owner token this browser keeps for the dir at `path`, or "": not
  // for an entry known gone, nor for a dir of the same name made since
  // (its creation time differs from the one this browser saw).
  function dirOwner(path) {
    var form = document.querySelector("form[data-upload=dir]");
    var created = form ? form.getAttribute("data-created") : null;
    var mine = loadUploads().filter(function (u) {
      return u.kind === "dir" && u.owner && !u.gone && localPath(u.url) === path &&
        (!u.created || !created || u.created === created);
    })[0];
    return mine ? mine.owner : "";
  }

  // The server refused this browser's owner token for the dir at `path`
  // (a different dir of the same name): forget the token, and offer the
  // write token field again.
  function dropDirOwner(path) {
    loadUploads().forEach(function (u) {
      if (u.kind === "dir" && localPath(u.url) === path && u.owner) {
        update(u.url, function (old) { old.owner = ""; return old; });
      }
    });
    var form = document.querySelector("form[data-upload=dir]");
    var field = form && form.querySelector("[data-write-field]");
    if (field) { field.hidden = false; }
    var note = form && form.querySelector("[data-owner-note]");
    if (note) { note.hidden = true; }
  }

  // The headers that let this browser write to the dir: its owner token,
  // or the write token typed on the page.
  function dirWriteHeaders(form) {
    var owner = dirOwner(form.getAttribute("action"));
    if (owner) { return { "X-Store-Owner": owner }; }
    var typed = form.querySelector("input[name=write]");
    return typed && typed.value ? { "X-Store-Write": typed.value } : {};
  }

  function dirFileError(cell, e, form) {
    var owner = dirOwner(form.getAttribute("action"));
    if (owner && e.code === "write_denied") { dropDirOwner(form.getAttribute("action")); }
    var sent = Object.keys(dirWriteHeaders(form)).length > 0;
    var status = cell.querySelector(".status") || cell.appendChild(el("span", { "class": "status error", role: "alert" }));
    status.className = "status error";
    status.textContent = " " + inWords(e, { tokenName: "write token", sentToken: sent, maxLabel: form.getAttribute("data-max-label") || "" });
  }

  // A text file's editor, in a row under the file's: the text as it is
  // now, saved with PUT (which records the change in the dir's history).
  function editRow(tr, form) {
    var next = tr.nextElementSibling;
    if (next && next.hasAttribute("data-editor")) { next.remove(); return; }
    var url = tr.getAttribute("data-file-url");
    var row = el("tr", { "data-editor": "" });
    var cell = el("td", { colspan: "5" });
    var area = el("textarea", { rows: "10", "aria-label": "Text of " + tr.getAttribute("data-file-name") });
    // Nothing to save until the text is in: saving an empty or partial
    // editor would replace the file with it.
    var save = el("button", { type: "button", "data-save": "", disabled: "" }, "Save");
    cell.appendChild(area);
    cell.appendChild(save);
    row.appendChild(cell);
    tr.parentNode.insertBefore(row, tr.nextSibling);
    fetch(url, { credentials: "same-origin" }).then(function (r) {
      if (!r.ok) { throw Object.assign(new Error("HTTP " + r.status), { status: r.status }); }
      return r.text();
    }).then(function (t) {
      area.value = t;
      save.disabled = false;
    }, function (e) { dirFileError(cell, e, form); });
    save.addEventListener("click", function () {
      save.disabled = true;
      var headers = dirWriteHeaders(form);
      headers["Content-Type"] = tr.getAttribute("data-type") || "text/plain";
      request("PUT", url, headers, area.value).then(function () { window.location.reload(); },
        function (e) { save.disabled = false; dirFileError(cell, e, form); });
    });
  }

  function dirPage() {
    var form = document.querySelector("form[data-upload=dir]");
    if (!form) { return; }
    if (dirOwner(form.getAttribute("action"))) {
      var field = form.querySelector("[data-write-field]");
      if (field) { field.hidden = true; }
      var note = form.querySelector("[data-owner-note]");
      if (note) { note.hidden = false; }
    }
    document.querySelectorAll("tr[data-file-url]").forEach(function (tr) {
      var cell = tr.querySelector("[data-file-actions]");
      if (!cell) { return; }
      var name = tr.getAttribute("data-file-name");
      // Editable as the server decides it (text files); the editor holds
      // a page's worth at most.
      if (tr.hasAttribute("data-editable") && Number(tr.getAttribute("data-size")) <= 65536) {
        var edit = el("button", { type: "button", "class": "secondary small", "data-edit": "", "aria-label": "Edit " + name }, "Edit");
        edit.addEventListener("click", function () { editRow(tr, form); });
        cell.appendChild(edit);
        cell.appendChild(document.createTextNode(" "));
      }
      // Deleting cannot be undone: the first click asks, the second deletes.
      var del = el("button", { type: "button", "class": "secondary small", "data-delete-file": "", "aria-label": "Delete " + name }, "Delete");
      del.addEventListener("click", function () {
        if (del.getAttribute("data-armed") !== "1") {
          del.setAttribute("data-armed", "1");
          del.textContent = "Really delete?";
          return;
        }
        request("DELETE", tr.getAttribute("data-file-url"), dirWriteHeaders(form), null)
          .then(function () { window.location.reload(); }, function (e) { dirFileError(cell, e, form); });
      });
      cell.appendChild(del);
    });
  }

  // --- A burn-after-reading page after its download: the page says the
  // link is spent, since the next visit answers only SPEC.md's JSON 404.
  function spent(left) {
    var note = document.querySelector("[data-burnt]");
    if (!note) { return; }
    note.hidden = false;
    note.textContent = left > 1
      ? "Downloaded. " + (left - 1) + " download(s) left; after the last the link no longer works."
      : "Your download has started, and the file is deleted as it is served: this link no longer works, for you or anyone else.";
    if (left <= 1) {
      var actions = document.querySelector(".once-actions");
      if (actions) { actions.hidden = true; }
    }
  }

  function oncePage() {
    var link = document.querySelector("a[data-burn]");
    if (!link) { return; }
    link.addEventListener("click", function () {
      var left = Number(link.getAttribute("data-left") || 1);
      spent(left);
      link.setAttribute("data-left", String(Math.max(left - 1, 1)));
    });
    var reveal = document.querySelector("button[data-reveal]");
    if (!reveal) { return; }
    reveal.addEventListener("click", function () {
      reveal.disabled = true;
      fetch(reveal.getAttribute("data-reveal"), { credentials: "same-origin" }).then(function (r) {
        if (!r.ok) { throw new Error(r.status === 404 ? "This link no longer works: the file was already read, or it expired." : "HTTP " + r.status); }
        return r.text();
      }).then(function (text) {
        var pre = document.querySelector("[data-revealed]");
        pre.textContent = text;
        pre.hidden = false;
        spent(1);
      }, function (e) {
        var note = document.querySelector("[data-burnt]");
        note.hidden = false;
        note.className = "notice error";
        note.textContent = e.message;
        // A 404 is final; anything else (a 429, a lost connection) may
        // be tried again.
        reveal.disabled = e.message.indexOf("no longer works") >= 0;
      });
    });
  }

  // --- The page of an encrypted file: the key from the link's fragment
  // (or pasted), the bytes fetched (the one download this spends, for a
  // counted file, on the button only), decrypted here and saved under the
  // name they carry.
  function encryptedPage() {
    var button = document.querySelector("button[data-decrypt]");
    if (!button) { return; }
    var box = document.querySelector("[data-key-box]");
    var keyField = document.querySelector("[data-age-key]");
    var status = document.querySelector("[data-decrypted]");
    var fromLink = window.location.hash.slice(1);
    if (fromLink) { keyField.value = decodeURIComponent(fromLink); } else { box.hidden = false; }
    var say = function (text, error) {
      status.hidden = false;
      status.className = error ? "notice error" : "notice";
      status.textContent = text;
    };
    var go = function () {
      var key = keyField.value.trim();
      try {
        new window.ageEncryption.X25519Identity(key);
      } catch (e) {
        box.hidden = false;
        say("That is not an age key: it starts with AGE-SECRET-KEY-1 (the part of the link after #).", true);
        return;
      }
      button.disabled = true;
      say("Downloading and decrypting…");
      fetch(button.getAttribute("data-decrypt"), { credentials: "same-origin", cache: "no-store" }).then(function (r) {
        if (!r.ok) { throw new Error(r.status === 404 ? "This link no longer works: the file was deleted, or it expired." : "HTTP " + r.status); }
        return r.arrayBuffer();
      }).then(function (buf) {
        return unseal(new Uint8Array(buf), key).catch(function () { throw new Error("This key does not open this file."); });
      }).then(function (out) {
        var name = out.name || button.getAttribute("data-name") || "file";
        say("Decrypted: ");
        var a = el("a", { href: URL.createObjectURL(new Blob([out.bytes])), download: name, "data-plain": "" }, "save " + name);
        status.appendChild(a);
        a.click();
        button.disabled = false;
      }, function (e) {
        say(e.message, true);
        button.disabled = false;
      });
    };
    button.addEventListener("click", go);
    // The whole link opens the file at once, as CONTRACT.md has it,
    // unless opening it counts as a download. At the load event: the age
    // library is a deferred script after this one, not run yet when this
    // page's script starts.
    if (fromLink && !button.hasAttribute("data-counted")) {
      if (document.readyState === "complete") { go(); } else { window.addEventListener("load", go); }
    }
  }

  function start() {
    localTimes(document);
    markSection();
    oncePage();
    encryptedPage();
    dirPage();
    rememberGallery();
    rememberDrop();
    var uploadForms = document.querySelectorAll("form[data-upload]");
    // A page with one upload form takes files dropped anywhere on it.
    uploadForms.forEach(function (f) { uploader(f, uploadForms.length === 1); });
    document.querySelectorAll("form[data-like]").forEach(likeForm);
    document.querySelectorAll("form[data-comment]").forEach(commentForm);
    document.querySelectorAll(".js-only").forEach(function (n) { n.classList.remove("hidden-js"); });
    lightbox();
    renderUploads(true);
    document.documentElement.setAttribute("data-ready", "1");
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
