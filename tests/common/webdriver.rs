//! Just enough of the W3C WebDriver protocol to drive headless Chromium
//! through Debian's `chromedriver`: a session, navigation, elements, script
//! and screenshots. It speaks plain JSON over loopback HTTP with the ureq
//! agent the other tests already use (docs/DEPENDENCIES.md says why this is
//! not fantoccini).

use std::io::{BufRead, BufReader};
use std::net::TcpListener;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

/// The W3C key of an element reference in JSON.
const ELEMENT_KEY: &str = "element-6066-11e4-a52e-4f735466cecf";

/// Where chromedriver may be on Debian and elsewhere.
const DRIVERS: &[&str] = &[
    "/usr/bin/chromedriver",
    "/usr/lib/chromium/chromedriver",
    "/usr/local/bin/chromedriver",
];
const BROWSERS: &[&str] = &[
    "/usr/bin/chromium",
    "/usr/bin/chromium-browser",
    "/usr/bin/google-chrome",
];

fn first_existing(paths: &[&str], env: &str) -> Option<PathBuf> {
    std::env::var_os(env)
        .map(PathBuf::from)
        .into_iter()
        .chain(paths.iter().map(PathBuf::from))
        .find(|p| p.exists())
}

fn post_json(
    agent: &ureq::Agent,
    url: &str,
    body: &Value,
) -> Result<ureq::http::Response<ureq::Body>, ureq::Error> {
    agent
        .post(url)
        .header("Content-Type", "application/json")
        .send(body.to_string().as_bytes())
}

fn read_json(res: &mut ureq::http::Response<ureq::Body>) -> Option<Value> {
    let text = res
        .body_mut()
        .with_config()
        .limit(64 << 20)
        .read_to_string()
        .ok()?;
    serde_json::from_str(&text).ok()
}

/// A chromedriver process and one browser session in it, in a browser
/// of its own.
pub struct Browser {
    driver: Child,
    /// The headless shell the test started itself, if it runs in one.
    shell: Option<Child>,
    base: String,
    session: String,
    agent: ureq::Agent,
    _profile: tempfile::TempDir,
}

#[derive(Debug, Clone)]
pub struct Element(String);

/// The folder under the profile that downloads go to.
const DOWNLOADS_DIR: &str = "downloads";

/// Debian's `chromium-headless-shell`: the same Blink as `chromium`, without
/// the desktop browser around it. A session in it costs a quarter of the
/// processor time of one in `chromium --headless=new` (docs/DECISIONS.md,
/// "The suite on one more diet").
const SHELLS: &[&str] = &["/usr/bin/chromium-headless-shell"];

/// The flags every browser of the suite runs with. Nothing a test looks at
/// works in the background: the browser fetches no components, syncs,
/// translates or reports nothing (this machine reaches only loopback
/// anyway), and the tests take a quarter less time.
const BROWSER_FLAGS: &[&str] = &[
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--window-size=1280,900",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-default-apps",
    "--disable-extensions",
    "--disable-sync",
    "--disable-breakpad",
    "--disable-client-side-phishing-detection",
    "--disable-features=Translate,OptimizationHints,MediaRouter,AutofillServerCommunication",
    "--metrics-recording-only",
    "--password-store=basic",
    "--mute-audio",
];

impl Browser {
    /// Starts chromedriver and a headless Chromium session: in the
    /// headless shell when it is installed (scripts/test installs it) and
    /// CHROME_BIN names no other browser, else in `chromium
    /// --headless=new`. Fails at once, in one line, when
    /// neither is there: `scripts/test` (the README's test command)
    /// installs them (Debian packages `chromium`, `chromium-headless-shell`
    /// and `chromium-driver`).
    pub fn start() -> Self {
        let driver_path = first_existing(DRIVERS, "CHROMEDRIVER").unwrap_or_else(|| {
            panic!("chromedriver not found: run the tests with scripts/test, which installs chromium and chromium-driver (or set CHROMEDRIVER)")
        });
        let (driver, port) = start_driver(&driver_path);
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .proxy(None)
            .timeout_global(Some(Duration::from_secs(60)))
            .build()
            .into();
        let base = format!("http://127.0.0.1:{port}");
        let profile = tempfile::tempdir().expect("profile dir");
        let downloads = profile.path().join(DOWNLOADS_DIR);
        // A browser named by CHROME_BIN is what the person running the
        // tests asked for, and chromedriver starts it.
        let shell_path = match std::env::var_os("CHROME_BIN") {
            Some(_) => None,
            None => first_existing(SHELLS, "CHROME_HEADLESS_SHELL"),
        };
        let (shell, options) = match shell_path {
            Some(path) => {
                let (child, address) = start_shell(&path, profile.path());
                (Some(child), json!({ "debuggerAddress": address }))
            }
            None => (None, chromium_options(profile.path())),
        };
        let caps = json!({ "capabilities": { "alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": options,
        }}});
        let session = new_session(&agent, &base, &caps);
        let b = Self {
            driver,
            shell,
            base,
            session,
            agent,
            _profile: profile,
        };
        // What a page saves goes to the profile's downloads folder,
        // unasked: a test reads it there. Said through the DevTools
        // protocol, which both browsers take (an attached shell takes no
        // preferences).
        b.call(
            "POST",
            "/goog/cdp/execute",
            Some(json!({
                "cmd": "Browser.setDownloadBehavior",
                "params": { "behavior": "allow", "downloadPath": downloads }
            })),
        );
        b
    }

    /// Waits (up to 20 s) for a file the browser saved to be whole, and
    /// answers its bytes. A download in progress has a `.crdownload`
    /// name until its last byte is written.
    pub fn downloaded(&self, name: &str) -> Vec<u8> {
        let path = self._profile.path().join(DOWNLOADS_DIR).join(name);
        self.wait_for(&format!("the download of {name}"), || {
            std::fs::read(&path).ok()
        })
    }

    fn call(&self, method: &str, path: &str, body: Option<Value>) -> Value {
        let url = format!("{}/session/{}{path}", self.base, self.session);
        let res = match (method, body) {
            ("GET", _) => self.agent.get(&url).call(),
            ("DELETE", _) => self.agent.delete(&url).call(),
            (_, body) => post_json(&self.agent, &url, &body.unwrap_or_else(|| json!({}))),
        };
        let mut res = res.unwrap_or_else(|e| panic!("WebDriver {method} {path}: {e}"));
        let status = res.status().as_u16();
        let v = read_json(&mut res).expect("WebDriver answers JSON");
        assert!(
            status < 300,
            "WebDriver {method} {path} answered {status}: {v}"
        );
        v["value"].clone()
    }

    pub fn goto(&self, url: &str) {
        self.call("POST", "/url", Some(json!({ "url": url })));
    }

    pub fn title(&self) -> String {
        self.call("GET", "/title", None)
            .as_str()
            .unwrap_or_default()
            .to_string()
    }

    pub fn current_url(&self) -> String {
        self.call("GET", "/url", None)
            .as_str()
            .unwrap_or_default()
            .to_string()
    }

    /// Runs `script` as a function body with `args`; answers its return.
    pub fn execute(&self, script: &str, args: Value) -> Value {
        self.call(
            "POST",
            "/execute/sync",
            Some(json!({ "script": script, "args": args })),
        )
    }

    /// The element `css` matches now, if any (no waiting).
    pub fn try_find(&self, css: &str) -> Option<Element> {
        let url = format!("{}/session/{}/element", self.base, self.session);
        let mut res = post_json(
            &self.agent,
            &url,
            &json!({ "using": "css selector", "value": css }),
        )
        .ok()?;
        if res.status().as_u16() >= 300 {
            return None;
        }
        let v = read_json(&mut res)?;
        v["value"][ELEMENT_KEY].as_str().map(|s| Element(s.into()))
    }

    /// Waits up to ten seconds for an element.
    pub fn find(&self, css: &str) -> Element {
        self.wait_for(&format!("element {css}"), || self.try_find(css))
    }

    /// Polls `probe` until it answers `Some`, or fails the test after ten
    /// seconds with `what` in the message.
    pub fn wait_for<T>(&self, what: &str, mut probe: impl FnMut() -> Option<T>) -> T {
        let start = Instant::now();
        loop {
            if let Some(v) = probe() {
                return v;
            }
            assert!(
                start.elapsed() < Duration::from_secs(10),
                "timed out waiting for {what} on {}",
                self.current_url()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    pub fn text(&self, e: &Element) -> String {
        self.call("GET", &format!("/element/{}/text", e.0), None)
            .as_str()
            .unwrap_or_default()
            .to_string()
    }

    pub fn attr(&self, e: &Element, name: &str) -> Option<String> {
        self.call("GET", &format!("/element/{}/attribute/{name}", e.0), None)
            .as_str()
            .map(str::to_string)
    }

    pub fn click(&self, e: &Element) {
        self.call("POST", &format!("/element/{}/click", e.0), None);
    }

    /// Types into an input; for a file input, `text` is a file path.
    pub fn send_keys(&self, e: &Element, text: &str) {
        self.call(
            "POST",
            &format!("/element/{}/value", e.0),
            Some(json!({ "text": text })),
        );
    }

    /// Saves a PNG screenshot of the viewport. It is taken through
    /// Chrome's DevTools protocol, which can encode for speed instead of
    /// size: the screenshots are for people to look at, and the browser
    /// suite takes about a hundred.
    pub fn screenshot(&self, path: &Path) {
        use base64::Engine as _;
        let shot = self.call(
            "POST",
            "/goog/cdp/execute",
            Some(json!({
                "cmd": "Page.captureScreenshot",
                "params": { "format": "png", "optimizeForSpeed": true }
            })),
        );
        let png = base64::engine::general_purpose::STANDARD
            .decode(shot["data"].as_str().expect("base64 screenshot"))
            .expect("valid base64");
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).expect("screenshot dir");
        }
        std::fs::write(path, png).expect("screenshot written");
    }

    /// A PNG of one element, as the browser drew it.
    pub fn element_png(&self, e: &Element) -> Vec<u8> {
        use base64::Engine as _;
        let b64 = self.call("GET", &format!("/element/{}/screenshot", e.0), None);
        base64::engine::general_purpose::STANDARD
            .decode(b64.as_str().expect("base64 screenshot"))
            .expect("valid base64")
    }

    /// Makes the page see `prefers-color-scheme: dark` (or light), as a
    /// person whose system is dark does (Chrome's DevTools protocol,
    /// through chromedriver).
    pub fn color_scheme(&self, dark: bool) {
        let value = if dark { "dark" } else { "light" };
        self.call(
            "POST",
            "/goog/cdp/execute",
            Some(json!({
                "cmd": "Emulation.setEmulatedMedia",
                "params": { "features": [{ "name": "prefers-color-scheme", "value": value }] }
            })),
        );
    }

    /// Turns the pages' own scripts off, as for a person who browses
    /// without JavaScript (Chrome's DevTools protocol, through
    /// chromedriver). WebDriver's commands still work.
    pub fn without_script(&self) {
        self.call(
            "POST",
            "/goog/cdp/execute",
            Some(json!({ "cmd": "Emulation.setScriptExecutionDisabled", "params": { "value": true } })),
        );
    }

    /// axe-core's violations on the current page (tests/vendor/axe-core,
    /// injected into the page once per document), each as its rule, impact
    /// and first few nodes: empty when the page passes every rule axe runs
    /// by default.
    pub fn axe_violations(&self) -> Vec<Value> {
        self.axe_run(json!({ "resultTypes": ["violations"] }))
    }

    /// The violations of axe-core's rules that read the page's colours
    /// (text contrast, links told from text by colour alone): what can
    /// differ between two colour schemes of one document, whose markup,
    /// names and roles are the same.
    pub fn axe_colour_violations(&self) -> Vec<Value> {
        self.axe_run(json!({
            "resultTypes": ["violations"],
            "runOnly": { "type": "rule", "values": ["color-contrast", "link-in-text-block"] }
        }))
    }

    fn axe_run(&self, options: Value) -> Vec<Value> {
        static AXE: std::sync::OnceLock<String> = std::sync::OnceLock::new();
        if self.execute("return typeof window.axe", json!([])) != "object" {
            let source = AXE.get_or_init(|| {
                std::fs::read_to_string(super::repo("tests/vendor/axe-core/axe.min.js"))
                    .expect("tests/vendor/axe-core/axe.min.js (scripts/vendor-axe)")
            });
            self.execute(&format!("{source}\n;return null"), json!([]));
        }
        // Only the violations: axe skips gathering the passes, and the
        // answer is awaited by WebDriver's asynchronous script, not polled.
        let found = self.call(
            "POST",
            "/execute/async",
            Some(json!({ "script": AXE_RUN, "args": [options] })),
        );
        found
            .as_array()
            .cloned()
            .unwrap_or_else(|| panic!("axe-core's answer: {found}"))
    }

    pub fn set_window(&self, width: u32, height: u32) {
        self.call(
            "POST",
            "/window/rect",
            Some(json!({ "width": width, "height": height })),
        );
    }
}

/// Runs axe-core over the document with the options it is given and hands
/// WebDriver each violation as its rule, impact and first four nodes (or
/// axe's failure as one).
const AXE_RUN: &str = "var done = arguments[arguments.length - 1]; \
    axe.run(document, arguments[0]).then(function (r) { \
      done(r.violations.map(function (v) { return { id: v.id, impact: v.impact, \
        nodes: v.nodes.slice(0, 4).map(function (n) { return n.target.join(' ') + ' ' + n.failureSummary; }) }; })); \
    }, function (e) { done([{ id: 'axe failed', nodes: [String(e)] }]); });";

/// Starts chromedriver on a free port; answers it and the port, once it
/// says it listens.
fn start_driver(driver_path: &Path) -> (Child, u16) {
    let port = TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let mut driver = Command::new(driver_path)
        .arg(format!("--port={port}"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("chromedriver starts");
    // chromedriver prints a line once it listens.
    let mut line = String::new();
    let mut out = BufReader::new(driver.stdout.take().expect("stdout is piped"));
    let started = Instant::now();
    while !line.contains("started successfully") && started.elapsed() < Duration::from_secs(20) {
        line.clear();
        if out.read_line(&mut line).unwrap_or(0) == 0 {
            break;
        }
    }
    std::thread::spawn(move || {
        // Keep draining so chromedriver never blocks on a full pipe.
        let mut sink = String::new();
        while out.read_line(&mut sink).unwrap_or(0) > 0 {
            sink.clear();
        }
    });
    (driver, port)
}

/// Starts the headless shell on a port of its choosing, with one blank
/// page for the session to drive; answers it and its DevTools address,
/// which it writes into the profile once it listens. chromedriver cannot
/// start the shell itself: the shell it starts opens no page, and the
/// session waits for one forever.
fn start_shell(path: &Path, profile: &Path) -> (Child, String) {
    let mut shell = Command::new(path)
        .args(BROWSER_FLAGS)
        .arg("--remote-debugging-port=0")
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg("about:blank")
        // A group of its own, so that the browser and every process it
        // starts go when the test ends (`Drop for Browser`). Debian's
        // /usr/bin entry is a script that runs the browser as its child,
        // not with exec: killing the script alone left the browser behind,
        // about 160 processes per run of the suite.
        .process_group(0)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("chromium-headless-shell starts");
    let active = profile.join("DevToolsActivePort");
    let started = Instant::now();
    loop {
        // Its first line is the port; the file is complete once the
        // second (the browser's path) is there.
        let text = std::fs::read_to_string(&active).unwrap_or_default();
        if let (Some(port), Some(_)) = (text.lines().next(), text.lines().nth(1)) {
            return (shell, format!("127.0.0.1:{port}"));
        }
        if let Ok(Some(status)) = shell.try_wait() {
            panic!("chromium-headless-shell exited at start: {status}");
        }
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "chromium-headless-shell wrote no DevToolsActivePort in 20 s"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The options that have chromedriver start `chromium --headless=new`
/// with the suite's flags and a profile of its own.
fn chromium_options(profile: &Path) -> Value {
    let browser_path = first_existing(BROWSERS, "CHROME_BIN").unwrap_or_else(|| {
        panic!("chromium not found: run the tests with scripts/test, which installs chromium and chromium-driver (or set CHROME_BIN)")
    });
    let mut args: Vec<String> = BROWSER_FLAGS.iter().map(|f| f.to_string()).collect();
    args.push("--headless=new".into());
    args.push(format!("--user-data-dir={}", profile.display()));
    json!({ "binary": browser_path, "args": args })
}

/// A new WebDriver session; chromedriver may need a moment before it
/// accepts one.
fn new_session(agent: &ureq::Agent, base: &str, caps: &Value) -> String {
    let mut last = Value::Null;
    for _ in 0..40 {
        match post_json(agent, &format!("{base}/session"), caps) {
            Ok(mut res) => {
                last = read_json(&mut res).unwrap_or(Value::Null);
                if let Some(id) = last["value"]["sessionId"].as_str() {
                    return id.to_string();
                }
            }
            Err(e) => last = json!({ "connect": e.to_string() }),
        }
        std::thread::sleep(Duration::from_millis(250));
    }
    panic!("no WebDriver session: {last}")
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self
            .agent
            .delete(format!("{}/session/{}", self.base, self.session))
            .call();
        let _ = self.driver.kill();
        let _ = self.driver.wait();
        if let Some(shell) = self.shell.as_mut() {
            // A session attached to a browser it did not start leaves the
            // browser running when it ends: the whole group goes here.
            let group = rustix::process::Pid::from_child(shell);
            let _ = rustix::process::kill_process_group(group, rustix::process::Signal::KILL);
            let _ = shell.wait();
        }
    }
}
