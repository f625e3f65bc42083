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
          var msg = data && data.error ? data.error : "HTTP " + xhr.status;
          if (data && data.retry_after) { msg += " (retry in " + data.retry_after + " s)"; }
          reject(new Error(msg));
        }
      };
      xhr.onerror = function () { reject(new Error("the connection failed")); };
      xhr.send(body);
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

  function showResult(item, data, asked) {
    item.bar.remove();
    var kind = kindOf(data);
    var p = el("p");
    var a = el("a", { href: data.url, "data-result-url": "" }, data.url);
    p.appendChild(a);
    p.appendChild(document.createTextNode(" "));
    p.appendChild(copyButton(data.url));
    p.appendChild(document.createTextNode(" "));
    p.appendChild(el("a", { href: infoPage(data.url, kind) }, kind === "file" ? "Details and QR code" : "Page and QR code"));
    item.li.appendChild(p);
    var reused = !!(asked && asked.dirname && !data.owner_token);
    if (reused) {
      item.li.appendChild(el("p", { "class": "notice" },
        "The dir " + asked.dirname + " already existed: the files were added to it (which slides its lifetime); the lifetime, write token and listing you chose were not applied."));
    }
    if (data.write_token) {
      item.li.appendChild(secret("Write token", data.write_token,
        "Whoever has it may add, change and delete this dir's files (the X-Store-Write header, or the dir page's write token field); without it the dir is read-only."));
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
    } else {
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

  // The home form's requests: separate files, one bundle, or a dir. Each
  // answer is shown and remembered under Your uploads. They go where the
  // form posts, which is the service's root wherever it is mounted.
  function homeJobs(root, files, list, field, auth) {
    var jobs = [];
    var mode = field("mode") || "files";
    var common = { ttl: field("ttl"), once: field("once") };
    var done = function (item, label, asked) {
      return function (v) { showResult(item, v, asked); remember(v, label); };
    };
    if (mode === "bundle" && files.length > 1) {
      var label = "Bundle of " + files.length + " files";
      var b = resultItem(list, label);
      // Burn after reading and download limits apply to single files only.
      jobs.push(send("POST", root + query([[WIRE.params.ttl, common.ttl], [WIRE.params.protect, field("protect")]]), formData(files), auth(null), b.bar)
        .then(done(b, label, common), function (e) { showError(b, e); }));
    } else if (mode === "dir") {
      var name = field("dirname");
      var dirLabel = name ? "Dir " + name : "New dir";
      var d = resultItem(list, dirLabel);
      var asked = { ttl: field("ttl"), dirname: name };
      var dirQuery = [[WIRE.params.dir, "1"], [WIRE.params.name, name], [WIRE.params.ttl, field("ttl")], [WIRE.params.write, field("write")], [WIRE.params.listed, field("listed")]];
      jobs.push(send("POST", root + query(dirQuery), formData(files), auth(null), d.bar)
        .then(done(d, dirLabel, asked), function (e) { showError(d, e); }));
    } else {
      files.forEach(function (f) {
        var item = resultItem(list, f.name);
        var params = [[WIRE.params.name, f.name], [WIRE.params.ttl, common.ttl], [WIRE.params.once, common.once], [WIRE.params.max_downloads, field("max_downloads")], [WIRE.params.protect, field("protect")]];
        jobs.push(send("POST", root + query(params), f, auth({ "Content-Type": f.type || "application/octet-stream" }), item.bar)
          .then(done(item, f.name, common), function (e) { showError(item, e); }));
      });
    }
    return jobs;
  }

  function uploader(form) {
    var kind = form.getAttribute("data-upload");
    var input = form.querySelector("input[type=file]");
    var list = form.parentNode.querySelector(".results") || form.appendChild(el("ul", { "class": "results" }));
    var zone = form.querySelector(".drop");
    var dropped = [];

    function chosen() {
      var files = Array.prototype.slice.call(input.files || []);
      return files.concat(dropped);
    }

    if (zone) {
      ["dragenter", "dragover"].forEach(function (n) {
        zone.addEventListener(n, function (e) { e.preventDefault(); zone.classList.add("over"); });
      });
      ["dragleave", "drop"].forEach(function (n) {
        zone.addEventListener(n, function (e) { e.preventDefault(); zone.classList.remove("over"); });
      });
      zone.addEventListener("drop", function (e) {
        var files = Array.prototype.slice.call(e.dataTransfer.files || []);
        dropped = dropped.concat(files);
        var note = zone.querySelector(".picked");
        if (note) { note.textContent = dropped.length + " file(s) dropped, ready to upload"; }
        // Dropping is enough: the file input is no longer required.
        input.removeAttribute("required");
      });
    }

    form.addEventListener("submit", function (ev) {
      var files = chosen();
      if (!files.length) { return; }
      ev.preventDefault();
      // Refuse oversized files here: the server answers 413 from the
      // Content-Length at once, which a browser still sending the body
      // often reports as a broken connection instead.
      var max = Number(form.getAttribute("data-max") || 0);
      var big = max ? files.filter(function (f) { return f.size > max; }) : [];
      if (big.length) {
        big.forEach(function (f) {
          var item = resultItem(list, f.name);
          showError(item, new Error("too large: " + f.size + " bytes, the limit is " + max));
        });
        return;
      }
      var field = function (name) {
        var f = form.elements.namedItem(name);
        if (!f) { return ""; }
        if (f.type === "checkbox") { return f.checked ? f.value : ""; }
        return f.value;
      };
      // A server closed to anonymous uploads (STORE_UPLOAD_TOKEN) shows a
      // token field; every request of this upload carries it.
      var auth = function (headers) {
        var out = {};
        Object.keys(headers || {}).forEach(function (k) { out[k] = headers[k]; });
        if (field("token")) { out.Authorization = "Bearer " + field("token"); }
        return out;
      };
      var jobs = kind === "home" ? homeJobs(form.getAttribute("action"), files, list, field, auth) : [];
      if (kind !== "home") {
        // A dir or a gallery: one multipart request, then show the new state.
        var headers = auth(null);
        var token = field("write");
        if (token) { headers["X-Store-Write"] = token; }
        var item2 = resultItem(list, files.length + " file(s)");
        jobs.push(send("POST", form.getAttribute("action"), formData(files), headers, item2.bar)
          .then(function () { window.location.reload(); }, function (e) { showError(item2, e); }));
      }
      Promise.all(jobs).then(function () {
        form.reset();
        dropped = [];
        input.setAttribute("required", "");
      });
    });
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

  function remember(data, label) {
    if (!data || !data.url) { return; }
    var list = loadUploads();
    var old = list.filter(function (u) { return u.url === data.url; })[0] || {};
    var entry = {
      url: data.url,
      name: label,
      kind: kindOf(data),
      // A named dir that already existed answers no owner token: keep the
      // one this browser got when it made it. A dir's write token is not
      // kept: the owner token passes the dir's write gate.
      owner: data.owner_token || old.owner || "",
      expires_at: data.expires_at || null,
      counted: !!data.once || data.downloads_left !== undefined && data.downloads_left !== null,
      at: old.at || new Date().toISOString()
    };
    saveUploads([entry].concat(list.filter(function (u) { return u.url !== data.url; })));
    renderUploads();
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

  function uploadItem(u) {
    var li = el("li", { "data-upload-url": u.url });
    var title = el("div");
    title.appendChild(el("a", { href: infoPage(u.url, u.kind) }, u.name || u.url));
    title.appendChild(el("span", { "class": "muted" }, " · " + u.kind + (u.counted ? " · downloads counted" : "")));
    li.appendChild(title);
    var when = el("div", { "class": "muted expiry" });
    if (u.expires_at) {
      when.appendChild(document.createTextNode("Expires "));
      when.appendChild(el("time", { datetime: u.expires_at, "data-rel": "" }, u.expires_at));
    } else {
      when.textContent = "Retained: never expires.";
    }
    li.appendChild(when);
    var status = el("span", { "class": "status muted", role: "status" });
    var actions = el("div", { "class": "actions" });
    actions.appendChild(copyButton(u.url));
    actions.appendChild(qrButton(li, u));
    if (u.owner) {
      if (ttlOptions().length) { actions.appendChild(extendControl(u, status)); }
      actions.appendChild(deleteButton(u, status));
    }
    var forgetIt = el("button", { type: "button", "class": "secondary small", "data-forget": "" }, "Forget");
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

  function extendControl(u, status) {
    var wrap = el("span");
    var select = el("select", { "aria-label": "New lifetime for " + (u.name || u.url), "data-extend-ttl": "" });
    ttlOptions().forEach(function (o) { select.appendChild(el("option", { value: o[0] }, o[1])); });
    var go = el("button", { type: "button", "class": "secondary small", "data-extend": "" }, "Set lifetime");
    go.addEventListener("click", function () {
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
      status.textContent = "Gone: it expired or was deleted.";
      setTimeout(function () { forget(u.url); }, 1500);
      return;
    }
    status.className = "status error";
    status.textContent = e.message;
  }

  // The record of an upload, read without spending a download: a file's
  // `?info=1`, a bundle's `?json=1`, a dir as JSON.
  function recordUrl(u) {
    var path = localPath(u.url);
    if (u.kind === "file") { return withParam(path, WIRE.params.info, "1"); }
    return u.kind === "bundle" ? withParam(path, WIRE.params.json, "1") : path;
  }

  // An entry whose stored expiry has passed may still be alive: a dir's
  // lifetime slides with every write, and another device may have
  // extended it. Ask the server; drop the entry only on a 404.
  function refreshExpired(list) {
    var now = Date.now();
    list.filter(function (u) { return u.expires_at && new Date(u.expires_at).getTime() <= now; })
      .forEach(function (u) {
        ownerRequest("GET", recordUrl(u), "").then(function (v) {
          if (v.expires_at !== u.expires_at) {
            update(u.url, function (old) { old.expires_at = v.expires_at || null; return old; });
          }
        }, function (e) { if (e.status === 404) { forget(u.url); } });
      });
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
    if (refresh) { refreshExpired(list); }
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
    var prev = el("button", { type: "button", "class": "small" }, "← Previous");
    var caption = el("span");
    var next = el("button", { type: "button", "class": "small" }, "Next →");
    var close = el("button", { type: "button", "class": "small" }, "Close");
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
      like.textContent = "♥ " + (count ? count.textContent : "");
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

  function start() {
    localTimes(document);
    document.querySelectorAll("form[data-upload]").forEach(uploader);
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
