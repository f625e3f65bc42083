//! Processor time of one webhook POST on the sending thread, against a
//! keep-alive receiver on the other core: `taskset -c 1 cargo run
//! --release -p store-fetch --example webhook_cost` (the sender pins
//! itself to core 0). Prints the median of 7 batches, in microseconds.

use std::io::{Read, Write};
use std::time::Duration;

use store_core::ports::WebhookSender;
use store_fetch::{Guard, Policy, UreqWebhook};
use store_testkit::origin::KeepAlive;
use store_testkit::pin::pin_this_thread;

const POSTS_PER_BATCH: usize = 4000;
const ANSWER: &[u8] = b"HTTP/1.1 204 No Content\r\nContent-Length: 0\r\n\r\n";

fn main() {
    let receiver = KeepAlive::start(ANSWER);
    pin_this_thread("0");
    let guard = Guard {
        policy: Policy::AllowPrivate,
        own: vec![],
    };
    let hook = UreqWebhook::new(&receiver.url, guard, Duration::from_secs(10), 1).unwrap();
    let body = vec![b'x'; 300];
    let headers = [
        ("webhook-id", "msg_2Kq9yTt8xYzAbCdEfGhIjKlMn".to_string()),
        ("webhook-timestamp", "1764331200".to_string()),
        ("webhook-signature", format!("v1,{}", "A".repeat(44))),
    ];
    let ureq_us = median(|| hook.post(&headers, &body).unwrap());
    let addr = receiver
        .url
        .trim_start_matches("http://")
        .trim_end_matches("/hook")
        .to_string();
    let mut raw = std::net::TcpStream::connect(&addr).unwrap();
    raw.set_nodelay(true).unwrap();
    let mut request = format!(
        "POST /hook HTTP/1.1\r\nhost: {addr}\r\ncontent-type: application/json\r\n\
         webhook-id: {}\r\nwebhook-timestamp: {}\r\nwebhook-signature: {}\r\n\
         content-length: {}\r\n\r\n",
        headers[0].1,
        headers[1].1,
        headers[2].1,
        body.len()
    )
    .into_bytes();
    request.extend_from_slice(&body);
    let mut answer = vec![0; ANSWER.len()];
    let raw_us = median(|| {
        raw.write_all(&request).unwrap();
        raw.read_exact(&mut answer).unwrap();
    });
    println!("ureq post: {ureq_us:.1} µs of thread CPU; one write + one read: {raw_us:.1} µs");
}

/// The median over 7 batches of the thread's processor time per call.
fn median(mut post: impl FnMut()) -> f64 {
    for _ in 0..500 {
        post();
    }
    let mut per_call: Vec<f64> = (0..7)
        .map(|_| {
            let before = thread_cpu_ns();
            for _ in 0..POSTS_PER_BATCH {
                post();
            }
            (thread_cpu_ns() - before) as f64 / POSTS_PER_BATCH as f64 / 1000.0
        })
        .collect();
    per_call.sort_by(f64::total_cmp);
    per_call[3]
}

/// Nanoseconds this thread has run, from the scheduler's own account.
fn thread_cpu_ns() -> u64 {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").unwrap();
    text.split_whitespace().next().unwrap().parse().unwrap()
}
