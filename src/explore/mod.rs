//! `ptx2sass explore`: one self-contained HTML report (no network access, no external
//! files) showing a PTX file, its IR after lowering and its SASS side by side, linked by
//! provenance ([`crate::sass::instr::Instr::origin`], `ir::Block::origins`): hovering or
//! clicking a line highlights every line of the other columns that comes from the same PTX
//! statement. Each SASS line explains its control fields in words on hover; per function
//! the report gives registers, instructions, spills and estimated cycles, and the IR's
//! control-flow graph as SVG (laid out here; no Graphviz needed). Warnings are shown at
//! the PTX lines they concern.
//!
//! Markup is generated with `maud` (compile-time checked templates, escaping by default).
//! Linking is done by a small script that indexes the lines once at load (one pass) and
//! then touches only the lines of the statement under the pointer, so reports of thousands
//! of lines stay responsive.

pub mod live;

use crate::diag::{Diag, Severity, line_col};
use crate::driver::{self, Emit, Options};
use crate::sass::program::{Ctrl, address};
use crate::sass::source_map::SourceMap;
use crate::{ir, lower, ptx};
use live::Live;
use maud::{DOCTYPE, Markup, PreEscaped, html};
use std::collections::HashMap;
use std::fmt::Write;

/// The control fields of one instruction in words (ptxas findings section 7), e.g.
/// "stall 2 cycles; sets write barrier SB0 (released when the results are written); waits
/// on SB1".
pub fn ctrl_words(c: &Ctrl) -> String {
    let mut parts =
        vec![format!("stall {} cycle{} before the next instruction", c.stall, if c.stall == 1 { "" } else { "s" })];
    if c.yield_hint {
        parts.push("yield hint: the warp scheduler may switch warps".into());
    }
    if let Some(w) = c.wr {
        parts.push(format!("sets write barrier SB{w} (released when the results are written)"));
    }
    if let Some(r) = c.rd {
        parts.push(format!("sets read barrier SB{r} (released when the sources have been read)"));
    }
    if c.wait != 0 {
        let bs: Vec<String> = (0..6).filter(|b| c.wait >> b & 1 == 1).map(|b| format!("SB{b}")).collect();
        parts.push(format!("waits on {} before issuing", bs.join(", ")));
    }
    if c.reuse != 0 {
        let slots: Vec<&str> =
            ["A", "B", "C"].into_iter().enumerate().filter(|(k, _)| c.reuse >> k & 1 == 1).map(|(_, s)| s).collect();
        parts.push(format!("reuses operand slot {} from the reuse cache", slots.join(", ")));
    }
    parts.join("; ")
}

/// The IR after lowering (what `--emit ir` prints), with its PTX origins.
fn lowered_ir(src: &str, opts: &Options) -> Result<ir::Module, Vec<Diag>> {
    let (module, _) = ptx::parse_with(src, &opts.front)?;
    let mut staged = lower::build(&module, &opts.lower);
    lower::clean_up(&mut staged, &opts.lower);
    lower::reconverge(&mut staged, &opts.lower);
    Ok(lower::finish(staged)?.0)
}

/// A simple top-down layout of one function's CFG as SVG: blocks in emission order, one
/// per row, edges as arcs on the right (forward) or left (backward, loops).
fn cfg_svg(f: &ir::Function) -> String {
    let (w, h, gap) = (150, 26, 18);
    let row: HashMap<_, _> = f.layout.iter().enumerate().map(|(k, &b)| (b, k)).collect();
    let n = f.layout.len();
    let mut edges = String::new();
    let mut lane = 0;
    for (k, &b) in f.layout.iter().enumerate() {
        for (j, s) in f.succs(b).into_iter().enumerate() {
            let Some(&t) = row.get(&s) else { continue };
            lane += 1;
            let y0 = 10 + k * (h + gap) + h / 2;
            let y1 = 10 + t * (h + gap) + h / 2;
            let taken = j == 0;
            let (x, bend) = if t > k { (40 + w, 40 + w + 8 * (lane % 8 + 1)) } else { (40, 40 - 4 * (lane % 8 + 1)) };
            let colour = if taken { "#36c" } else { "#999" };
            let _ = write!(
                edges,
                r#"<path d="M{x} {y0} C{bend} {y0} {bend} {y1} {x} {y1}" fill="none" stroke="{colour}" marker-end="url(#arr)"/>"#
            );
        }
    }
    let mut boxes = String::new();
    for (k, &b) in f.layout.iter().enumerate() {
        let y = 10 + k * (h + gap);
        let blk = &f.cfg[b];
        let label = format!("{} {} ({} instrs)", f.block_label(b.index() as u32), blk.name, blk.instrs.len());
        let label = maud::html! { (label) }.into_string();
        let _ = write!(
            boxes,
            r##"<rect x="40" y="{y}" width="{w}" height="{h}" rx="4" fill="#eef" stroke="#446"/><text x="46" y="{}" font-size="10" font-family="monospace">{label}</text>"##,
            y + 16
        );
    }
    format!(
        r##"<svg xmlns="http://www.w3.org/2000/svg" width="{}" height="{}"><defs><marker id="arr" viewBox="0 0 6 6" refX="6" refY="3" markerWidth="6" markerHeight="6" orient="auto"><path d="M0 0 L6 3 L0 6 z" fill="#666"/></marker></defs>{boxes}{edges}</svg>"##,
        w + 120,
        20 + n * (h + gap)
    )
}

const STYLE: &str = r#"
body{font-family:sans-serif;margin:0;font-size:13px;padding-bottom:5em}
header{padding:6px 12px;background:#223;color:#fff}
.cols{display:flex;height:78vh}
.col{flex:1;overflow:auto;border-right:1px solid #ccc}
.col h2{position:sticky;top:0;background:#eee;margin:0;padding:4px;font-size:13px}
pre{margin:0;font-family:monospace;font-size:12px}
.l{display:block;white-space:pre;padding-left:4px}
.l[data-p]{cursor:pointer}
.l:hover{background:#eef}
.hl{background:#ffe28a !important}
.w{color:#a40;font-style:italic}
.n{color:#888}
table{border-collapse:collapse;margin:6px 12px}td,th{border:1px solid #ccc;padding:2px 8px}
.cfg{display:flex;flex-wrap:wrap;gap:16px;padding:0 12px}
#sass{flex:1.4}
#sass .l{padding-left:94px;position:relative}
.s{box-shadow:inset var(--g) 0 0 #9bd}
.s::before{content:attr(data-g);position:absolute;left:62px;color:#468;font-size:10px}
.s[data-q]::before{content:attr(data-g) " p" attr(data-q)}
#info{position:fixed;bottom:0;left:0;right:0;background:#223;color:#fff;padding:4px 12px;white-space:pre-wrap;min-height:3em;font-family:monospace;font-size:12px}
"#;

const SCRIPT: &str = r#"
(function(){
  var idx = {};
  var all = document.querySelectorAll('[data-p]');
  for (var i = 0; i < all.length; i++) { var p = all[i].getAttribute('data-p'); (idx[p] = idx[p] || []).push(all[i]); }
  var lit = [], pinned = null;
  function show(p) {
    for (var i = 0; i < lit.length; i++) lit[i].classList.remove('hl');
    lit = idx[p] || [];
    for (var i = 0; i < lit.length; i++) lit[i].classList.add('hl');
  }
  var info = document.getElementById('info');
  document.addEventListener('mouseover', function(e) {
    var d = e.target.closest('.l[title]'); if (d) info.textContent = d.title;
    if (pinned !== null) return;
    var t = e.target.closest('[data-p]'); if (t) show(t.getAttribute('data-p'));
  });
  document.addEventListener('click', function(e) {
    var t = e.target.closest('[data-p]'); if (!t) return;
    var p = t.getAttribute('data-p');
    if (pinned === p) { pinned = null; return; }
    pinned = p; show(p);
    var l = idx[p] || [];
    for (var i = 0; i < l.length; i++) if (l[i] !== t && l[i].closest('.col') !== t.closest('.col')) l[i].scrollIntoView({block:'nearest'});
  });
  document.body.setAttribute('data-ready', '1');
})();
"#;

/// Per function of `program` (whose listing is `text`), per instruction: the occupied
/// registers ([`live::live_counts`]) and the width in pixels of the strip's bar (the
/// function's largest count is 60 px). Empty for a listing the analysis cannot read (the
/// report then has no strip; it never fails for it).
fn live_strip(program: &crate::sass::program::Program, text: &str) -> Vec<Vec<(Live, u32)>> {
    let Some(counts) = crate::sass::text::parse(text).ok().and_then(|fs| live::live_counts(&fs).ok()) else {
        return vec![];
    };
    counts
        .into_iter()
        .zip(&program.functions)
        .map(|(c, f)| {
            if c.len() != f.code.len() {
                return vec![];
            }
            let top = c.iter().map(|l| u32::from(l.gprs)).max().unwrap_or(0).max(1);
            c.into_iter().map(|l| (l, u32::from(l.gprs) * 60 / top)).collect()
        })
        .collect()
}

/// The report of PTX source `src` (named `name`) compiled with `opts` (whose `emit` is
/// ignored), as one HTML document. Errors are the compiler's diagnostics.
pub fn report(src: &str, name: &str, opts: &Options) -> Result<String, Vec<Diag>> {
    let out = driver::compile(src, &Options { emit: Emit::Sass, ..opts.clone() })?;
    let irm = lowered_ir(src, opts)?;
    let program = out.program.as_ref().expect("the SASS stage returns its program");
    let map = SourceMap::new(src);
    // PTX lines that have at least one IR or SASS instruction (the linkable ones).
    let mut linked: std::collections::HashSet<u32> = std::collections::HashSet::new();
    for f in &irm.functions {
        for b in &f.layout {
            linked.extend(f.cfg[*b].origins.iter().filter(|o| o.hi > o.lo).map(|o| map.line(o.lo)));
        }
    }
    let mut warn_at: HashMap<usize, Vec<String>> = HashMap::new();
    for d in &out.warnings {
        let (line, _) = line_col(src, d.primary.0.lo as usize);
        let kind = if d.severity == Severity::Error { "error" } else { "warning" };
        warn_at.entry(line).or_default().push(format!("{kind}: {}", d.message));
    }
    let ir_col = html! {
        @for f in &irm.functions {
            span.l.n { "." (if f.kind == ptx::ast::FuncKind::Entry { "entry" } else { "func" }) " " (f.name) }
            @for &b in &f.layout {
                span.l.n { (f.block_label(b.index() as u32)) ": " (f.cfg[b].name) }
                @for (i, o) in f.cfg[b].instrs.iter().zip(&f.cfg[b].origins) {
                    @if o.hi > o.lo {
                        @let p = map.line(o.lo);
                        span.l data-p=(p) title={ "PTX line " (p) ": " (map.statement(o.lo)) } { "    " (f.instr_text(i)) " ;" }
                    } @else {
                        span.l { "    " (f.instr_text(i)) " ;" }
                    }
                }
            }
        }
    };
    let text = program.to_string();
    let live = live_strip(program, &text);
    let mut funcs = program.functions.iter().enumerate();
    let mut code: &[crate::sass::program::Scheduled] = &[];
    let mut strip: &[(Live, u32)] = &[];
    let mut k = 0;
    let mut sass_lines: Vec<Markup> = Vec::new();
    for line in text.lines() {
        if line.starts_with("\t\tFunction : ") {
            let (g, f) = funcs.next().map_or((usize::MAX, &[][..]), |(g, f)| (g, &f.code[..]));
            code = f;
            strip = live.get(g).map_or(&[], |v| &v[..]);
            k = 0;
        }
        if line.trim_start().starts_with("/*") && k < code.len() {
            debug_assert!(line.contains(&format!("/*{:04x}*/", address(k))));
            let s = &code[k];
            let words = ctrl_words(&s.ctrl);
            // The listing pads every address to the instruction's column; one space is enough
            // here (the padding is the same on every line, so control fields stay aligned).
            let line = line.trim_start();
            let line = match line.find("*/") {
                Some(e) => format!("{} {}", &line[..e + 2], line[e + 2..].trim_start()),
                None => line.to_string(),
            };
            let (lv, width) = strip.get(k).copied().unwrap_or_default();
            let bar = format!("--g:{width}px");
            let live_words = format!("{} registers and {} predicates occupied", lv.gprs, lv.preds);
            sass_lines.push(match s.instr.origin {
                Some(at) => {
                    let p = map.line(at);
                    linked.insert(p);
                    html! { span.l.s data-p=(p) data-g=(lv.gprs) data-q=[(lv.preds > 0).then_some(lv.preds)] style=(bar) title={ (words) "\n" (live_words) "\nPTX line " (p) ": " (map.statement(at)) } { (line) } }
                }
                None => html! { span.l.s data-g=(lv.gprs) data-q=[(lv.preds > 0).then_some(lv.preds)] style=(bar) title={ (words) "\n" (live_words) } { (line) } },
            });
            k += 1;
        } else {
            sass_lines.push(html! { span.l.n { (line.trim_start()) } });
        }
    }
    let ptx_col = html! {
        @for (n, l) in src.lines().enumerate() {
            @let p = n + 1;
            @if linked.contains(&(p as u32)) {
                span.l data-p=(p) id={ "p" (p) } { (format!("{p:>5}  {l}")) }
            } @else {
                span.l id={ "p" (p) } { (format!("{p:>5}  {l}")) }
            }
            @if let Some(ws) = warn_at.get(&p) {
                @for w in ws { span.l.w { "       ^ " (w) } }
            }
        }
    };
    let doc = html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                title { "ptx2sass explore: " (name) }
                style { (PreEscaped(STYLE)) }
            }
            body {
                header { "ptx2sass explore — " (name) " — hover or click a line to see what it maps to" }
                table {
                    tr { th { "function" } th { "registers" } th { "instructions" } th { "spill bytes" } th { "frame bytes" } th { "estimated cycles" } }
                    @for s in &out.stats {
                        tr { td { (s.name) } td { (s.regs) } td { (s.instrs) } td { (s.spill_bytes) } td { (s.frame_bytes) } td { (s.cycles) } }
                    }
                }
                div.cols {
                    div.col #ptx { h2 { "PTX" } pre { (ptx_col) } }
                    div.col #ir { h2 { "IR after lowering" } pre { (ir_col) } }
                    div.col #sass { h2 { "SASS (bar and number: registers occupied; pN: predicates)" } pre { @for l in &sass_lines { (l) } } }
                }
                h3 { "Control-flow graphs (IR after lowering)" }
                div.cfg {
                    @for f in &irm.functions {
                        div { b { (f.name) } br; (PreEscaped(cfg_svg(f))) }
                    }
                }
                div #info { "Hover a line: what it maps to; on a SASS line, its control fields in words." }
                script { (PreEscaped(SCRIPT)) }
            }
        }
    };
    Ok(doc.into_string())
}
