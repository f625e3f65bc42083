# The nextest passes of the test suite, as filters: sourced by scripts/test
# and scripts/stress-runs, so that both run the same tests. Each pass runs
# with STORE_TEST_BACKEND set as its name says (tests/common).
#
# The fault suite (tests/faults.rs) makes its own two processes on
# PostgreSQL and Garage, and runs once, in a pass of its own.
not_faults='not test(/^faults::/)'
# The embedded store (sled): every crate's tests and the HTTP suite.
pass_embedded="$not_faults"
# The browser suite (tests/browser.rs) runs in the first pass only: it
# tests the pages and their script, which see the same HTTP answers
# whatever holds the records and bytes (the HTTP suite, which checks those
# answers, runs in every pass). Chromium was a third of the CPU of each
# later pass (docs/DECISIONS.md, "The browser suite runs once").
# The Chromium test of the age pages (tests/private.rs) is one of them.
browser='test(/^browser::/) | test(=private::a_file_encrypted_in_the_browser_opens_with_age_and_the_other_way_round)'
# Records in PostgreSQL: the HTTP suite, less the modules that make their
# own database whatever the pass (cluster:: and migrate::), and so ran
# just so in the first.
same_on_postgres='test(/^cluster::/) | test(/^migrate::/)'
# The two tests that time how soon the server lets go of hundreds of
# sockets (tests/hostile.rs) need the machine to themselves
# (.config/nextest.toml), and this pass runs beside the fault suite
# (scripts/test). What they time is the server's sockets and queues,
# which are the same whatever holds the records: they run in the first
# pass. The slow readers' downloads run again in the two-process pass,
# where they stream from Garage; the image flood times one process's
# image queue, which is in front of any storage, and runs only in the
# first (alone, it left both cores idle for 10 s of that pass).
slow_readers='test(=hostile::slow_readers_are_dropped_after_the_send_deadline_and_starve_no_one)'
image_flood='test(=hostile::an_image_flood_is_refused_at_once_past_the_queue_and_others_are_served)'
# A test of the embedded store's own clock (libfaketime): the other stores
# decide expiry by the database's clock.
embedded_clock='test(=tus::an_abandoned_upload_expires_by_the_clock_and_leaves_nothing)'
pass_postgres="package(storesrv) & kind(test) & $not_faults & not ($same_on_postgres | $browser | $slow_readers | $image_flood | $embedded_clock)"
# Two processes, records in PostgreSQL and bytes in Garage: the HTTP suite.
pass_cluster="package(storesrv) & kind(test) & $not_faults & not ($browser | $image_flood | $embedded_clock)"
pass_faults='package(storesrv) & kind(test) & test(/^faults::/)'
# Without the default features: the server's allocator, jemalloc, which
# nothing a test checks depends on, and whose C build is a fifth of the
# workspace's. Without the micro benchmarks' package (bench/micro), which
# has no tests, and whose library the doctests would otherwise build with
# criterion. Every build and run of the passes uses these arguments.
workspace=(--workspace --exclude store-microbench --no-default-features)
