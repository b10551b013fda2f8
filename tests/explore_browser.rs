//! The `explore` report in a real browser: headless Chromium driven over WebDriver
//! (`chromedriver`, Debian's `chromium` and `chromium-driver`; `.ci/run` installs them).
//! Skips with a message when either is missing.
//!
//! * `vector_add.ptx`: clicking the PTX `ld.global` line highlights the SASS lines it maps
//!   to (`LDG.E`, class `hl`), and only lines of that statement; hovering a SASS line shows
//!   its control fields in words in the info bar; a screenshot of the page is not blank
//!   (pixel variance of the decoded PNG). `EXPLORE_SCREENSHOT=PATH` also writes that
//!   screenshot (of `EXPLORE_SAMPLE`, default `vector_add.ptx`) to `PATH`
//!   (`docs/explore.png` is made so, see `scripts/explore-screenshot.sh`).
//! * Every sample's report loads with its script run to the end (`data-ready`), and a click
//!   and a hover on it raise no JavaScript error (`window.onerror` collected by the test).

use fantoccini::actions::{InputSource, MouseActions, PointerAction};
use fantoccini::{Client, ClientBuilder, Locator};
use ptx2sass::driver::Options;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The first of `names` found on `PATH`.
fn on_path(names: &[&str]) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    names.iter().find_map(|n| std::env::split_paths(&path).map(|d| d.join(n)).find(|p| p.is_file()))
}

/// `chromedriver`, killed when dropped.
struct Driver(Child);

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts chromedriver on a free port and waits until it accepts connections.
fn start_driver(chromedriver: &Path) -> (Driver, u16) {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let child = Command::new(chromedriver)
        .arg(format!("--port={port}"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("chromedriver starts");
    let driver = Driver(child);
    let start = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(start.elapsed() < Duration::from_secs(20), "chromedriver did not listen on port {port}");
        std::thread::sleep(Duration::from_millis(50));
    }
    (driver, port)
}

async fn connect(port: u16, chromium: &Path) -> Client {
    let opts = serde_json::json!({
        "binary": chromium,
        "args": ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--window-size=1400,900", "--hide-scrollbars"],
    });
    let mut caps = serde_json::Map::new();
    caps.insert("goog:chromeOptions".into(), opts);
    let connector = hyper_util::client::legacy::connect::HttpConnector::new();
    ClientBuilder::new(connector)
        .capabilities(caps)
        .connect(&format!("http://127.0.0.1:{port}"))
        .await
        .expect("a WebDriver session")
}

fn sample(name: &str) -> String {
    std::fs::read_to_string(format!("{}/samples/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

/// Writes the report of sample `name` into `dir`; returns its `file://` URL.
fn report(dir: &Path, name: &str) -> String {
    let html = ptx2sass::explore::report(&sample(name), name, &Options::default())
        .unwrap_or_else(|d| panic!("{name}: no report: {d:?}"));
    let path = dir.join(format!("{name}.html"));
    std::fs::write(&path, html).unwrap();
    format!("file://{}", path.display())
}

/// Installs a collector of JavaScript errors on the open page.
const COLLECT_ERRORS: &str =
    "window.__errors = []; window.addEventListener('error', function(e) { window.__errors.push(String(e.message)); });";

/// Moves the mouse over `e`.
async fn hover(c: &Client, e: fantoccini::elements::Element) {
    let mv = MouseActions::new("mouse".into()).then(PointerAction::MoveToElement {
        element: e,
        duration: None,
        x: 0.0,
        y: 0.0,
    });
    c.perform_actions(mv).await.expect("hover");
}

/// Classes of the SASS lines currently highlighted, with their text.
async fn highlighted_sass(c: &Client) -> Vec<(String, String)> {
    let mut out = vec![];
    for e in c.find_all(Locator::Css("#sass .hl")).await.unwrap() {
        out.push((e.attr("data-p").await.unwrap().unwrap_or_default(), e.text().await.unwrap()));
    }
    out
}

/// Mean and variance of the luminance of a PNG, and how many distinct colours it has.
fn pixel_stats(png_bytes: &[u8]) -> (f64, f64, usize) {
    let mut dec = png::Decoder::new(std::io::Cursor::new(png_bytes));
    dec.set_transformations(png::Transformations::EXPAND | png::Transformations::STRIP_16);
    let mut reader = dec.read_info().expect("a PNG");
    let mut buf = vec![0; reader.output_buffer_size().expect("size")];
    let info = reader.next_frame(&mut buf).expect("a frame");
    let channels = info.color_type.samples();
    let px = &buf[..info.buffer_size()];
    let (mut sum, mut sq) = (0f64, 0f64);
    let mut colours = std::collections::HashSet::new();
    let n = px.len() / channels;
    for p in px.chunks(channels) {
        let y =
            if channels >= 3 { 0.299 * p[0] as f64 + 0.587 * p[1] as f64 + 0.114 * p[2] as f64 } else { p[0] as f64 };
        sum += y;
        sq += y * y;
        colours.insert(p[..channels.min(3)].to_vec());
    }
    let mean = sum / n as f64;
    (mean, sq / n as f64 - mean * mean, colours.len())
}

#[tokio::test(flavor = "current_thread")]
async fn reports_work_in_headless_chromium() {
    let (Some(chromium), Some(chromedriver)) =
        (on_path(&["chromium", "chromium-browser", "google-chrome"]), on_path(&["chromedriver"]))
    else {
        eprintln!(
            "SKIPPED explore_browser: chromium and chromedriver are needed on PATH \
             (Debian: apt-get install chromium chromium-driver; .ci/run installs them)"
        );
        return;
    };
    let started = Instant::now();
    let dir = tempfile::tempdir().unwrap();
    let (_driver, port) = start_driver(&chromedriver);
    let c = connect(port, &chromium).await;

    // Clicking the PTX `ld.global` line highlights its LDG, and nothing else.
    let name = "vector_add.ptx";
    let src = sample(name);
    c.goto(&report(dir.path(), name)).await.unwrap();
    c.execute(COLLECT_ERRORS, vec![]).await.unwrap();
    let line = src.lines().position(|l| l.trim_start().starts_with("ld.global")).unwrap() + 1;
    assert!(highlighted_sass(&c).await.is_empty(), "highlighted before any click");
    c.find(Locator::Css(&format!("#p{line}"))).await.unwrap().click().await.unwrap();
    let lit = highlighted_sass(&c).await;
    assert!(lit.iter().any(|(_, t)| t.contains("LDG.E")), "PTX line {line} clicked, SASS lit: {lit:?}");
    assert!(lit.iter().all(|(p, _)| *p == line.to_string()), "lines of other statements lit: {lit:?}");
    let ptx_lit = c.find(Locator::Css(&format!("#p{line}"))).await.unwrap().attr("class").await.unwrap();
    assert!(ptx_lit.is_some_and(|k| k.split(' ').any(|k| k == "hl")), "the clicked PTX line is not lit");

    // Hovering a SASS line shows its control fields in words.
    let ldg = c.find(Locator::XPath("//*[@id='sass']//span[contains(., 'LDG.E')]")).await.unwrap();
    hover(&c, ldg).await;
    let info = c.find(Locator::Id("info")).await.unwrap().text().await.unwrap();
    assert!(info.contains("stall") && info.contains("cycle"), "info bar after hovering LDG: {info:?}");
    assert!(info.contains("write barrier SB"), "LDG sets a write barrier: {info:?}");
    assert!(info.contains("registers and"), "no live-register count: {info:?}");

    // A screenshot of the page is not blank.
    let shot = c.screenshot().await.unwrap();
    let (mean, var, colours) = pixel_stats(&shot);
    assert!(var > 500.0 && colours > 20, "blank screenshot? mean {mean:.0}, variance {var:.0}, {colours} colours");
    let errors = c.execute("return window.__errors;", vec![]).await.unwrap();
    assert_eq!(errors, serde_json::json!([]), "{name}");

    // Every sample: the script runs to the end, a click and a hover raise no error.
    let dir_samples = format!("{}/samples", env!("CARGO_MANIFEST_DIR"));
    let mut names: Vec<String> = std::fs::read_dir(dir_samples)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".ptx"))
        .collect();
    names.sort();
    let mut slowest = (String::new(), 0.0);
    for name in &names {
        c.goto(&report(dir.path(), name)).await.unwrap();
        let ready = c.execute("return document.body.getAttribute('data-ready');", vec![]).await.unwrap();
        assert_eq!(ready, serde_json::json!("1"), "{name}: the report's script did not run to the end");
        let ms = c
            .execute(
                "var n = performance.getEntriesByType('navigation')[0]; return n.loadEventEnd - n.startTime;",
                vec![],
            )
            .await
            .unwrap()
            .as_f64()
            .unwrap_or(0.0);
        if ms > slowest.1 {
            slowest = (name.clone(), ms);
        }
        c.execute(COLLECT_ERRORS, vec![]).await.unwrap();
        let first = c.find(Locator::Css("#ptx .l[data-p]")).await.unwrap();
        let p = first.attr("data-p").await.unwrap().unwrap();
        first.click().await.unwrap();
        let lit = highlighted_sass(&c).await;
        assert!(!lit.is_empty() && lit.iter().all(|(q, _)| *q == p), "{name}: PTX line {p} clicked, SASS lit: {lit:?}");
        let sass = c.find(Locator::Css("#sass .s")).await.unwrap();
        hover(&c, sass).await;
        let errors = c.execute("return window.__errors;", vec![]).await.unwrap();
        assert_eq!(errors, serde_json::json!([]), "{name}: JavaScript errors");
    }
    eprintln!(
        "{} reports checked in {:.1} s; slowest load: {} ({:.0} ms)",
        names.len(),
        started.elapsed().as_secs_f64(),
        slowest.0,
        slowest.1
    );

    // `EXPLORE_SCREENSHOT=PATH [EXPLORE_SAMPLE=NAME]`: a screenshot for the docs, after
    // clicking the sample's first `ld.global`.
    if let Some(out) = std::env::var_os("EXPLORE_SCREENSHOT") {
        let name = std::env::var("EXPLORE_SAMPLE").unwrap_or_else(|_| "vector_add.ptx".into());
        let src = sample(&name);
        c.goto(&report(dir.path(), &name)).await.unwrap();
        if let Some(k) = src.lines().position(|l| l.trim_start().starts_with("ld.global")) {
            c.find(Locator::Css(&format!("#p{}", k + 1))).await.unwrap().click().await.unwrap();
            let ldg = c.find(Locator::Css("#sass .hl")).await.unwrap();
            hover(&c, ldg).await;
        }
        std::fs::write(&out, c.screenshot().await.unwrap()).unwrap();
        eprintln!("screenshot of {name} written to {}", Path::new(&out).display());
    }
    c.close().await.unwrap();
}
