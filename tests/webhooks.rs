//! Webhooks (CONTRACT.md "Operators: moderation and webhooks"): every
//! event signed as the Standard Webhooks specification says (checked by
//! its reference library), retried after failures and time-outs with one
//! id, in order per object, and never in the way of the request that
//! made it. The cluster suite runs these on two processes too.

use std::sync::mpsc;
use std::time::Duration;

use serde_json::json;

use crate::common::webhook::{env, Answer, Delivery, Receiver};
use crate::common::{json, Server};

const ADMIN: &str = "hook-admin-token";

fn server(receiver: &Receiver, timeout_ms: &'static str) -> Server {
    let mut vars = env(&receiver.url, timeout_ms);
    vars.push(("STORE_ADMIN_TOKEN", ADMIN.to_string()));
    let vars: Vec<(&str, &str)> = vars.iter().map(|(k, v)| (*k, v.as_str())).collect();
    Server::with_env(&vars)
}

/// The deliveries taken of events about `key`, as (type, id).
fn taken_for(deliveries: &[Delivery], key: &str) -> Vec<(String, String)> {
    deliveries
        .iter()
        .filter(|d| d.taken && d.body["data"]["key"] == key)
        .map(|d| (d.body["type"].as_str().unwrap().to_string(), d.id.clone()))
        .collect()
}

#[test]
fn an_event_is_signed_and_retried_with_one_id_after_failures_and_a_time_out() {
    // Two failures, then longer than the sender waits (200 ms here, which
    // makes the pauses between tries 75 times shorter), then taken.
    let receiver = Receiver::start(vec![
        Answer::Fail,
        Answer::Fail,
        Answer::Sleep(Duration::from_millis(800)),
    ]);
    let s = server(&receiver, "200");
    let mut res = s.post("/?name=hello.txt", b"hello");
    assert_eq!(res.status(), 201);
    let id = json(&mut res)["id"].as_str().unwrap().to_string();
    let taken = receiver.wait_for("the event taken", |d| d.iter().find(|d| d.taken).cloned());
    let all = receiver.deliveries();
    assert!(all.len() >= 4, "failed twice, timed out, taken: {all:?}");
    assert!(
        all.iter().all(|d| d.verified),
        "every signature verifies: {all:?}"
    );
    assert!(
        all.iter().all(|d| d.id == taken.id),
        "one id on every try: {all:?}"
    );
    assert_eq!(taken.body["type"], "object.created");
    assert_eq!(taken.body["data"]["key"], id.as_str());
    assert_eq!(taken.body["data"]["kind"], "file");
    assert_eq!(taken.body["data"]["name"], "hello.txt");
    assert!(taken.body["timestamp"].as_str().unwrap().ends_with('Z'));
    let secret = crate::common::webhook::SECRET;
    let key = secret.trim_start_matches("whsec_");
    assert!(!s.log().contains(key), "the secret is never logged");
}

#[test]
fn every_kind_of_event_comes_in_order_for_its_object_and_none_holds_up_a_request() {
    // The first delivery is held while the requests that follow are
    // answered: none waits for it.
    let (go, held) = mpsc::channel();
    let receiver = Receiver::start(vec![Answer::Hold(held)]);
    let s = server(&receiver, "10000");
    let auth = format!("Bearer {ADMIN}");
    let mut made = s.post("/?name=doomed.txt", b"doomed bytes");
    let id = json(&mut made)["id"].as_str().unwrap().to_string();
    let report = json!({ "reason": "spam" }).to_string();
    let reported = s.post_with(
        &format!("/{id}?report=1"),
        &[("content-type", "application/json")],
        report.as_bytes(),
    );
    assert_eq!(reported.status(), 202);
    let digest: String = {
        use sha2::Digest;
        sha2::Sha256::digest(b"doomed bytes")
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    };
    let block = json!({ "sha256": digest, "reason": "malware" }).to_string();
    let blocked = s.post_with(
        "/admin/block",
        &[
            ("authorization", &auth),
            ("content-type", "application/json"),
        ],
        block.as_bytes(),
    );
    assert_eq!(blocked.status(), 200);
    receiver.wait_for("the held delivery", |d| (!d.is_empty()).then_some(()));
    drop(go);
    let order = receiver.wait_for("created, reported, deleted", |d| {
        let got = taken_for(d, &id);
        (got.len() == 3).then_some(got)
    });
    let types: Vec<&str> = order.iter().map(|(t, _)| t.as_str()).collect();
    assert_eq!(
        types,
        ["object.created", "object.reported", "object.deleted"]
    );
    let by_digest = format!("sha256:{digest}");
    let block_event = receiver.wait_for("the block", |d| {
        d.iter()
            .find(|d| d.taken && d.body["data"]["key"] == by_digest.as_str())
            .cloned()
    });
    assert_eq!(block_event.body["type"], "object.blocked");
    assert_eq!(block_event.body["data"]["reason"], "malware");
    let reported = receiver
        .deliveries()
        .into_iter()
        .find(|d| d.body["type"] == "object.reported")
        .unwrap();
    assert_eq!(reported.body["data"]["reason"], "spam");
    assert!(receiver.deliveries().iter().all(|d| d.verified));
}

#[test]
fn a_webhook_to_a_private_address_needs_the_operators_say_so() {
    let receiver = Receiver::start(vec![]);
    let mut vars = env(&receiver.url, "500");
    vars.retain(|(k, _)| *k != "STORE_WEBHOOK_ALLOW_PRIVATE");
    let vars: Vec<(&str, &str)> = vars.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let s = Server::with_env(&vars);
    assert_eq!(s.post("/?name=a.txt", b"a").status(), 201);
    // The guard refuses the address: the log says so, and nothing came.
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while !s.log().contains("webhook delivery failed") {
        assert!(std::time::Instant::now() < deadline, "{}", s.log());
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(s.log().contains("the guard blocks"));
    assert!(receiver.deliveries().is_empty());
}

#[test]
fn deliverers_yield_to_requests_and_still_deliver() {
    let receiver = Receiver::start(vec![]);
    let s = server(&receiver, "2000");
    // Each process's deliverer threads lower their own priority as they
    // start; its other threads keep the one the process started with
    // (this test's own, which a `nice` run of the suite raises).
    let started_at = nice_by_thread(std::process::id())
        .first()
        .map_or(0, |(_, nice)| *nice);
    let lowered = started_at.max(10);
    for pid in s.pids() {
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        loop {
            let threads = nice_by_thread(pid);
            let deliverers: Vec<i64> = threads
                .iter()
                .filter(|(name, _)| name.starts_with("store-webhooks"))
                .map(|(_, nice)| *nice)
                .collect();
            if deliverers.len() == 4 && deliverers.iter().all(|n| *n == lowered) {
                let others = threads
                    .iter()
                    .filter(|(n, _)| !n.starts_with("store-webhooks"));
                assert!(
                    others.clone().all(|(_, nice)| *nice == started_at),
                    "{threads:?}"
                );
                assert!(others.count() > 0, "{threads:?}");
                break;
            }
            assert!(std::time::Instant::now() < deadline, "{threads:?}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
    let mut made = s.post("/?name=niced.txt", b"niced");
    let id = json(&mut made)["id"].as_str().unwrap().to_string();
    receiver.wait_for("the event delivered", |d| {
        (!taken_for(d, &id).is_empty()).then_some(())
    });
}

/// Each thread of `pid`, by name, with its nice value (the 19th field of
/// its `stat`).
fn nice_by_thread(pid: u32) -> Vec<(String, i64)> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return vec![];
    };
    tasks
        .flatten()
        .filter_map(|task| {
            let stat = std::fs::read_to_string(task.path().join("stat")).ok()?;
            let (head, rest) = stat.rsplit_once(')')?;
            let name = head.split_once('(')?.1.to_string();
            let nice = rest.split_whitespace().nth(16)?.parse().ok()?;
            Some((name, nice))
        })
        .collect()
}
