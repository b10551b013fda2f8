#!/usr/bin/env python3
"""Inventory of what the sample PTX files contain.

    samples/ptx_inventory.py [FILE.ptx ...]      (default: every samples/*.ptx)

Prints, with counts and the files each item occurs in:
  1. every distinct instruction form: the opcode with all of its modifiers
     (`ld.global.nc.v4.f32`, `setp.ge.s32`, `call.uni`, ...), predicated or not;
  2. the shapes of memory operands per ld/st form (`[reg]`, `[reg+imm]`, `[sym]`, ...);
  3. every kind of directive (module and function level), normalised so that names,
     sizes and register counts collapse (`.reg .b32 %r<N>`, `.shared .align N .b8 NAME[N]`),
     each with one verbatim example;
  4. special registers, label styles and other lexical details worth a parser's attention.
"""
import collections
import glob
import os
import re
import sys

ONE_LINE_DIRECTIVES = re.compile(r"^\s*\.(version|target|address_size|loc|file|section)\b")
LABEL = re.compile(r"^\s*([A-Za-z_$%][\w$]*)\s*:\s*")
PRED = re.compile(r"^@!?%[\w]+\s+")


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return [re.sub(r"//.*", "", line) for line in text.split("\n")]


def statements(path):
    """Yield (kind, text, labels) for each statement; kind is 'dir' or 'ins'."""
    buf = ""
    labels = []

    def flush_buf(final):
        nonlocal buf
        out = []
        while ";" in buf:
            stmt, buf = buf.split(";", 1)
            out.append(stmt)
        if final and buf.strip():
            out.append(buf)
            buf = ""
        return out

    lines = strip_comments(open(path).read())
    pending = []
    for line in lines:
        s = line.strip()
        while True:                      # labels own their line (or prefix a statement)
            m = LABEL.match(s)
            if not m or s.startswith("."):
                break
            labels.append(m.group(1))
            s = s[m.end():]
        if not s:
            continue
        if ONE_LINE_DIRECTIVES.match(s) and not buf.strip():
            pending.append(s)
            continue
        if s in ("{", "}"):
            pending.extend(flush_buf(final=True))
            continue
        buf += " " + s
        pending.extend(flush_buf(final=False))
    pending.extend(flush_buf(final=True))

    for stmt in pending:
        stmt = " ".join(stmt.split())
        if not stmt:
            continue
        yield ("dir" if stmt.startswith(".") else "ins"), stmt
    for lab in labels:
        yield "label", lab


def split_header(d):
    """`.visible .entry f(.param ..., .param ...)` -> ("... NAME(...)", [param decls])."""
    m = re.match(r"^(.*?\.(?:entry|func)\b.*?)([\w$]+)\s*\((.*)\)\s*$", d)
    if not m:
        return d, []
    params = [p.strip() for p in m.group(3).split(",") if p.strip()]
    return m.group(1) + m.group(2) + "(...)", params


def normalise_directive(d):
    d = re.sub(r"=\s*\{.*\}", "= {INIT...}", d)
    d = re.sub(r'"[^"]*"', '"STR"', d)
    d = re.sub(r"%(\w+)<\d+>", r"%\1<N>", d)
    d = re.sub(r"\[\d+\]", "[N]", d)
    d = re.sub(r"\.align \d+", ".align N", d)
    toks = []
    for t in re.split(r"(\s+|[(),])", d):
        if t is None or t == "":
            continue
        if t.isspace():
            toks.append(" ")
        elif t.startswith(".") or t in "(),=" or t.startswith("%") or t.startswith('"') \
                or t.startswith("{") or t.startswith("INIT") or t.startswith("...}"):
            toks.append(t)
        elif t == "N":
            toks.append(t)
        elif re.fullmatch(r"\d+(\.\d+)?", t):
            toks.append("N")
        elif re.fullmatch(r"[\w$]+(\[N\])?", t):
            toks.append(re.sub(r"^[\w$]+", "NAME", t))
        else:
            toks.append(t)
    out = "".join(toks)
    out = re.sub(r"\s+", " ", out).strip()
    out = re.sub(r"\( ", "(", out)
    out = re.sub(r" \)", ")", out)
    return out


def operand_shapes(ins):
    shapes = []
    for m in re.finditer(r"\[([^\]]*)\]", ins):
        inner = m.group(1).replace(" ", "")
        base = re.match(r"([^+-]+)([+-].*)?$", inner)
        b, off = base.group(1), base.group(2)
        bk = "reg" if b.startswith("%") else "sym"
        shapes.append("[%s%s]" % (bk, "+imm" if off and off != "+0" else ("+0" if off else "")))
    return shapes


def main(argv):
    here = os.path.dirname(os.path.abspath(__file__))
    files = argv[1:] or sorted(glob.glob(os.path.join(here, "*.ptx")))
    ins_forms = collections.Counter()
    ins_files = collections.defaultdict(set)
    pred_count = collections.Counter()
    shapes = collections.defaultdict(collections.Counter)
    dir_kinds = collections.Counter()
    dir_example = {}
    dir_files = collections.defaultdict(set)
    sregs = collections.Counter()
    label_styles = collections.Counter()
    float_imms = collections.Counter()
    opnd_shapes = collections.defaultdict(collections.Counter)
    for path in files:
        name = os.path.basename(path)
        for kind, s in statements(path):
            if kind == "label":
                label_styles[re.sub(r"\d+", "N", s)] += 1
                continue
            if kind == "dir":
                head, params = split_header(s)
                items = [(normalise_directive(head), s)]
                kind_word = "entry" if ".entry" in head else "func"
                items += [("%s parameter: %s" % (kind_word, normalise_directive(p)), p) for p in params]
                for k, ex in items:
                    dir_kinds[k] += 1
                    dir_example.setdefault(k, ex if len(ex) < 160 else ex[:157] + "...")
                    dir_files[k].add(name)
                continue
            pm = PRED.match(s)
            body = s[pm.end():] if pm else s
            op = body.split()[0]
            if op.startswith("call"):
                k = "call syntax: " + re.sub(r"\s+", " ", body)
                dir_kinds[k] += 1
                dir_files[k].add(name)
            ins_forms[op] += 1
            ins_files[op].add(name)
            if pm:
                pred_count[("@!" if s.startswith("@!") else "@") + " " + op] += 1
            if op.split(".")[0] in ("mov", "selp", "add", "mul", "setp", "and", "shl", "shr") or op.startswith("cvt"):
                ops = [o.strip() for o in body[len(op):].split(",")]
                kinds = []
                for o in ops:
                    if re.fullmatch(r"%(tid|ntid|ctaid|nctaid)\.[xyz]", o):
                        kinds.append("sreg")
                    elif o.startswith("%"):
                        kinds.append("reg")
                    elif re.fullmatch(r"0[fFdD][0-9A-Fa-f]+", o):
                        kinds.append("fimm")
                    elif re.fullmatch(r"-?\d+", o):
                        kinds.append("imm")
                    else:
                        kinds.append("sym")
                if kinds != ["reg"] * len(kinds):
                    opnd_shapes[op][", ".join(kinds)] += 1
            if op.split(".")[0] in ("ld", "st"):
                for sh in operand_shapes(body):
                    shapes[op][sh] += 1
            for r in re.findall(r"%(tid|ntid|ctaid|nctaid|laneid|warpid|clock\w*|SPL?|envreg\d+)(\.[xyz])?", body):
                sregs["%" + r[0] + r[1]] += 1
            for f in re.findall(r"\b0[fFdD][0-9A-Fa-f]+\b", body):
                float_imms[f[:2].lower()] += 1

    w = max(len(k) for k in ins_forms) if ins_forms else 10
    print("## Instruction forms (%d distinct, %d total) in %d files" % (
        len(ins_forms), sum(ins_forms.values()), len(files)))
    for op in sorted(ins_forms, key=lambda o: (o.split(".")[0], o)):
        print("  %-*s %5d  %s" % (w, op, ins_forms[op], ",".join(sorted(f[:-4] for f in ins_files[op]))))
    print("\n## Predicated instructions")
    for k, v in sorted(pred_count.items()):
        print("  %-*s %5d" % (w + 3, k, v))
    print("\n## Memory operand shapes")
    for op in sorted(shapes):
        print("  %-*s %s" % (w, op, ", ".join("%s x%d" % kv for kv in sorted(shapes[op].items()))))
    print("\n## Non-register operands (mov/selp/add/mul/setp/and/shl/shr/cvt; all-register uses omitted)")
    for op in sorted(opnd_shapes):
        print("  %-*s %s" % (w, op, "; ".join("%s x%d" % kv for kv in sorted(opnd_shapes[op].items()))))
    print("\n## Directive kinds (normalised; example)")
    for k in sorted(dir_kinds):
        ex = dir_example.get(k, "")
        files_str = ",".join(sorted(f[:-4] for f in dir_files[k])) if k in dir_files else ""
        print("  %4d  %s" % (dir_kinds[k], k))
        if ex and ex != k:
            print("        e.g. %s" % ex)
        if files_str and len(dir_files[k]) <= 4:
            print("        in: %s" % files_str)
    print("\n## Special / stack registers")
    for k, v in sorted(sregs.items()):
        print("  %-10s %5d" % (k, v))
    print("\n## Label styles")
    for k, v in sorted(label_styles.items()):
        print("  %-12s %5d" % (k, v))
    print("\n## Float immediates")
    for k, v in sorted(float_imms.items()):
        print("  %s........ %5d" % (k, v))


if __name__ == "__main__":
    main(sys.argv)
