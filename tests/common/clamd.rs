//! A real ClamAV clamd for the tests (issue 36): started on a socket in a
//! temporary directory, with a signature database built here by
//! `sigtool --md5` over the EICAR test file (the machines download no
//! signatures). The EICAR text is put together at run time, so that no
//! file of the repository holds it for a scanner on a developer's machine
//! to flag.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The EICAR anti-virus test file.
pub fn eicar() -> Vec<u8> {
    let halves = [
        r"X5O!P%@AP[4\PZX54(P^)7CC)7}$EICAR-",
        "STANDARD-ANTIVIRUS-TEST-FILE!$H+H*",
    ];
    halves.concat().into_bytes()
}

/// A running clamd; stopped when dropped.
pub struct Clamd {
    child: Option<Child>,
    pub socket: PathBuf,
    _dir: tempfile::TempDir,
}

impl Clamd {
    pub fn start() -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        let db = dir.path().join("db");
        std::fs::create_dir(&db).unwrap();
        let sample = dir.path().join("eicar.com");
        std::fs::write(&sample, eicar()).unwrap();
        let sig = Command::new("sigtool")
            .arg("--md5")
            .arg(&sample)
            .output()
            .expect("sigtool (Debian's clamav) is installed: scripts/test installs it");
        assert!(sig.status.success(), "sigtool --md5");
        std::fs::write(db.join("test.hdb"), sig.stdout).unwrap();
        let socket = dir.path().join("clamd.sock");
        let conf = dir.path().join("clamd.conf");
        std::fs::write(
            &conf,
            format!(
                "LocalSocket {}\nDatabaseDirectory {}\nForeground yes\nLogFile {}\nStreamMaxLength 100M\n",
                socket.display(),
                db.display(),
                dir.path().join("clamd.log").display()
            ),
        )
        .unwrap();
        let child = Command::new("clamd")
            .arg("-c")
            .arg(&conf)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("clamd (Debian's clamav-daemon) is installed: scripts/test installs it");
        let deadline = Instant::now() + Duration::from_secs(60);
        while std::os::unix::net::UnixStream::connect(&socket).is_err() {
            assert!(Instant::now() < deadline, "clamd listens on its socket");
            std::thread::sleep(Duration::from_millis(50));
        }
        Self {
            child: Some(child),
            socket,
            _dir: dir,
        }
    }

    /// `STORE_CLAMD` for this clamd.
    pub fn setting(&self) -> String {
        format!("unix:{}", self.socket.display())
    }

    /// Stops clamd, as an outage would, and waits until it is gone.
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for Clamd {
    fn drop(&mut self) {
        self.stop();
    }
}
