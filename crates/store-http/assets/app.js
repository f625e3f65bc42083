// storesrv: the one script of every app page. Every page works without it
// (plain forms post and redirect); this script adds upload progress, drag
// and drop, copy buttons, local times, likes and comments without a page
// reload, and the gallery lightbox. It never builds HTML from strings:
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

  function showResult(item, data) {
    item.bar.remove();
    var p = el("p");
    var a = el("a", { href: data.url, "data-result-url": "" }, data.url);
    p.appendChild(a);
    p.appendChild(document.createTextNode(" "));
    p.appendChild(copyButton(data.url));
    item.li.appendChild(p);
    if (data.write_token) {
      item.li.appendChild(el("p", { "class": "notice secret" }, "Write token (shown once): " + data.write_token));
    }
    if (data.owner_token) {
      var owner = el("p", { "class": "notice secret" }, "Owner token (shown once, to change the expiry or, if protected, to edit or delete): ");
      owner.appendChild(el("code", null, data.owner_token));
      owner.appendChild(document.createTextNode(" "));
      owner.appendChild(copyButton(data.owner_token));
      item.li.appendChild(owner);
    }
    if (data.expires_at) {
      var exp = el("p", { "class": "muted" }, "Expires ");
      var t = el("time", { datetime: data.expires_at, "data-rel": "" }, data.expires_at);
      exp.appendChild(t);
      item.li.appendChild(exp);
      localTimes(item.li);
    } else {
      item.li.appendChild(el("p", { "class": "muted" }, "Retained: never expires."));
    }
  }

  function showError(item, err) {
    item.bar.remove();
    item.li.appendChild(el("p", { "class": "error", role: "alert" }, err.message));
  }

  function query(params) {
    var parts = [];
    Object.keys(params).forEach(function (k) {
      if (params[k] !== "" && params[k] !== null && params[k] !== undefined) {
        parts.push(encodeURIComponent(k) + "=" + encodeURIComponent(params[k]));
      }
    });
    return parts.length ? "?" + parts.join("&") : "";
  }

  function formData(files) {
    var fd = new FormData();
    files.forEach(function (f) { fd.append("file", f, f.name); });
    return fd;
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
      var jobs = [];
      if (kind === "home") {
        var mode = field("mode") || "files";
        var common = { ttl: field("ttl"), once: field("once") };
        if (mode === "bundle" && files.length > 1) {
          var b = resultItem(list, "Bundle of " + files.length + " files");
          // Burn after reading applies to single files only.
          jobs.push(send("POST", "/" + query({ ttl: common.ttl }), formData(files), auth(null), b.bar)
            .then(function (d) { showResult(b, d); }, function (e) { showError(b, e); }));
        } else if (mode === "dir") {
          var name = field("dirname");
          var d = resultItem(list, name ? "Dir " + name : "New dir");
          jobs.push(send("POST", "/" + query({ dir: "1", name: name, ttl: field("ttl"), write: field("protect") }), formData(files), auth(null), d.bar)
            .then(function (v) { showResult(d, v); }, function (e) { showError(d, e); }));
        } else {
          files.forEach(function (f) {
            var item = resultItem(list, f.name);
            var params = { name: f.name, ttl: common.ttl, once: common.once };
            jobs.push(send("POST", "/" + query(params), f, auth({ "Content-Type": f.type || "application/octet-stream" }), item.bar)
              .then(function (v) { showResult(item, v); }, function (e) { showError(item, e); }));
          });
        }
      } else {
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

  // --- Likes and comments without reloading the page.
  function post(url, body, contentType) {
    var headers = { Accept: "application/json" };
    if (contentType) { headers["Content-Type"] = contentType; }
    return fetch(url, { method: "POST", headers: headers, body: body, credentials: "same-origin" })
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
    var img = el("img", { alt: "" });
    bar.appendChild(prev); bar.appendChild(caption); bar.appendChild(next); bar.appendChild(close);
    dialog.appendChild(bar);
    dialog.appendChild(img);
    document.body.appendChild(dialog);
    var at = 0;
    function show(i) {
      at = (i + links.length) % links.length;
      img.src = links[at].getAttribute("href");
      img.alt = links[at].getAttribute("data-name") || "";
      caption.textContent = img.alt + " (" + (at + 1) + "/" + links.length + ")";
    }
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
    document.documentElement.setAttribute("data-ready", "1");
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
