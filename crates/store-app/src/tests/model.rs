//! A model of file lifetimes against any random history of operations.

use super::*;

/// One step of a random history.
#[derive(Debug, Clone)]
enum Op {
    Upload {
        size: u8,
        ttl_hours: Option<u16>,
        once: bool,
        retain: bool,
    },
    Advance {
        secs: u32,
    },
    Read {
        pick: usize,
    },
    Head {
        pick: usize,
    },
    Retain {
        pick: usize,
    },
    Append {
        pick: usize,
    },
    Delete {
        pick: usize,
    },
    Sweep,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (
            1u8..40,
            prop::option::of(1u16..400),
            any::<bool>(),
            prop::bool::weighted(0.2)
        )
            .prop_map(|(size, ttl_hours, once, retain)| Op::Upload {
                size,
                ttl_hours,
                once,
                retain
            }),
        (0u32..200_000).prop_map(|secs| Op::Advance { secs }),
        any::<usize>().prop_map(|pick| Op::Read { pick }),
        any::<usize>().prop_map(|pick| Op::Head { pick }),
        any::<usize>().prop_map(|pick| Op::Retain { pick }),
        any::<usize>().prop_map(|pick| Op::Append { pick }),
        any::<usize>().prop_map(|pick| Op::Delete { pick }),
        Just(Op::Sweep),
    ]
}

/// What the model remembers of a file.
#[derive(Debug)]
struct Known {
    id: String,
    expires_at: Option<Timestamp>,
    once: bool,
    served: usize,
    gone: bool,
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// No sequence of operations makes an expired non-retained file
    /// readable; retained files never expire; a once file is served at most
    /// once; ttl lands in [4h, 14d]; the pool never passes its capacity and
    /// always equals the bytes of the files still stored.
    #[test]
    fn lifetimes_hold_under_any_history(ops in prop::collection::vec(op(), 1..60)) {
        let w = world_with(400);
        let mut known: Vec<Known> = vec![];
        for op in ops {
            let now = w.clock.now();
            match op {
                Op::Upload { size, ttl_hours, once, retain } => {
                    let req = NewFile {
                        name: Some("f.txt".into()),
                        ttl_secs: ttl_hours.map(|h| u64::from(h) * 3600),
                        once,
                        ..NewFile::default()
                    };
                    let auth = if retain { RetainAuth::Valid } else { RetainAuth::Absent };
                    match w.app.create_file(&req, upload(&w.app, &vec![b'x'; size.into()]), auth) {
                        Ok(v) => {
                            if let Some(secs) = expires_in(&v) {
                                prop_assert!((14_400..=1_209_600).contains(&secs));
                            }
                            prop_assert_eq!(v.lifetime.expires_at().is_none(), retain);
                            known.push(Known {
                                id: v.id.clone(),
                                expires_at: (!retain).then(|| now.plus_secs(expires_in(&v).unwrap())),
                                once,
                                served: 0,
                                gone: false,
                            });
                        }
                        Err(e) => prop_assert_eq!(code(Err::<(), _>(e)), ErrorCode::PoolFull),
                    }
                }
                Op::Advance { secs } => w.clock.advance_secs(secs.into()),
                Op::Read { pick } | Op::Head { pick } if !known.is_empty() => {
                    let intent = if matches!(op, Op::Read { .. }) { ReadIntent::Get } else { ReadIntent::Head };
                    let n = known.len();
                    let k = &mut known[pick % n];
                    let result = w.app.read(&k.id, intent, &crate::ReadKey::NONE);
                    let expired = k.expires_at.is_some_and(|at| now >= at);
                    if expired {
                        prop_assert!(result.is_err(), "an expired file was readable");
                    }
                    if k.expires_at.is_none() && !k.gone {
                        prop_assert!(result.is_ok(), "a retained file was not readable");
                    }
                    if result.is_ok() && intent == ReadIntent::Get {
                        k.served += 1;
                        if k.once { k.gone = true; }
                    }
                    if k.once { prop_assert!(k.served <= 1, "a once file was served twice"); }
                    // Evicted files may be gone too; a gone file stays gone.
                    if result.is_err() { k.gone = true; }
                }
                Op::Retain { pick } if !known.is_empty() => {
                    let n = known.len();
                    let k = &mut known[pick % n];
                    if w.app.retain(&k.id, RetainAuth::Valid).is_ok() {
                        prop_assert!(k.expires_at.is_none_or(|at| now < at), "an expired file was retained");
                        k.expires_at = None;
                    }
                }
                Op::Append { pick } if !known.is_empty() => {
                    let n = known.len();
                    let k = &mut known[pick % n];
                    let _ = w.app.append_file(&k.id, b"+", &RetainAuth::Valid.into());
                    if w.app.file_info(&k.id, &crate::ReadKey::NONE).is_ok_and(|v| v.lifetime.expires_at().is_none()) {
                        k.expires_at = None;
                    }
                }
                Op::Delete { pick } if !known.is_empty() => {
                    let n = known.len();
                    let k = &mut known[pick % n];
                    if w.app.delete(&k.id, &RetainAuth::Valid.into()).is_ok() { k.gone = true; }
                }
                Op::Sweep => { w.app.sweep(1000).unwrap(); }
                _ => {}
            }
            prop_assert!(w.app.pool_used_bytes().unwrap() <= 400);
            let mut stored = 0u64;
            store_core::ports::Repository::for_each(w.repo.as_ref(), &mut |_, o| {
                stored += o.pool_bytes();
                std::ops::ControlFlow::Continue(())
            }).unwrap();
            prop_assert_eq!(w.app.pool_used_bytes().unwrap(), stored, "the pool drifted from the records");
        }
    }
}
