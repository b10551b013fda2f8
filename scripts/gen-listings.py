#!/usr/bin/env python3
"""Generates SASS listings (ptx2sass's listing syntax) of shapes that made the hazard
checker (`ptx2sass check`) blow up (issue 20), for scripts/check-cost.sh.

usage: gen-listings.py SHAPE N > FILE.sass
  loads N     N load/use pairs, each use waiting on the load's barrier
  nowait N    N load/use pairs, no use waiting (every use is a hazard)
  calltree N  functions f0..fN, each calling the next from two sites (2^N call stacks)
  ssy N       N if/else regions with SSY/SYNC (ptx2sass's shape for divergent branches)
  braces N    one instruction followed by N `}`
"""
import sys


class Listing:
    def __init__(self, name):
        self.lines = ["\tcode for sm_50", f"\t\tFunction : {name}", f"{name}:"]
        self.addr = 8

    def add(self, text, ctrl):
        self.lines.append(f"        /*{self.addr:04x}*/                   {text} {ctrl} ;")
        self.addr += 8
        if self.addr % 32 == 0:  # every fourth slot holds control words
            self.addr += 8

    def text(self):
        return "\n".join(self.lines) + "\n"


def loads(n, wait):
    l = Listing("k")
    for i in range(n):
        r = 2 + 2 * (i % 50)
        l.add(f"LDG.E R{r}, [R200]", "&wr0 ?WAIT2")
        l.add(f"FADD R{r + 1}, R{r}, R{r + 1}", ("&req={0} " if wait else "") + "?WAIT6")
    l.add("EXIT", "?WAIT15")
    return l.text()


def calltree(depth):
    out = ""
    for i in range(depth + 1):
        l = Listing(f"f{i}")
        if i < depth:
            l.add(f"CAL `(f{i + 1})", "?WAIT13")
            l.add("MOV R2, R3", "?WAIT6")
            l.add(f"CAL `(f{i + 1})", "?WAIT13")
        else:
            l.add("MUFU.RCP R4, R5", "&wr0 ?WAIT2")
            l.add("FADD R6, R4, R4", "&req={0} ?WAIT6")
        l.add("EXIT" if i == 0 else "RET", "?WAIT15")
        out += l.text()
    return out


def ssy(n):
    body = []
    for i in range(n):
        body += [(f"SSY E{i}", "?WAIT1"), (f"ISETP.NE.AND P0, PT, R{2 + i % 20}, RZ, PT", "?WAIT13"),
                 (f"@P0 BRA X{i}", "?WAIT13"), (f"FADD R{30 + i % 20}, R{30 + i % 20}, 1", "?WAIT1"),
                 ("SYNC", "?WAIT15"), (f"X{i}:", None), (f"FADD R{30 + i % 20}, R{30 + i % 20}, 2", "?WAIT1"),
                 ("SYNC", "?WAIT15"), (f"E{i}:", None)]
    body.append(("EXIT", "?WAIT15"))
    # Addresses of the labels, as Listing.add assigns them.
    labels, a = {}, 8
    for t, c in body:
        if c is None:
            labels[t[:-1]] = a
            continue
        a += 8
        if a % 32 == 0:
            a += 8
    l = Listing("k")
    for t, c in body:
        if c is None:
            continue
        for kw in ("BRA ", "SSY "):
            if kw in t and t.split(kw)[1] in labels:
                t = t.split(kw)[0] + kw + "0x%x" % labels[t.split(kw)[1]]
        l.add(t, c)
    return l.text()


def braces(n):
    l = Listing("k")
    l.add("EXIT " + "}" * n, "?WAIT15")
    return l.text()


shape, n = sys.argv[1], int(sys.argv[2])
print({"loads": lambda: loads(n, True), "nowait": lambda: loads(n, False), "calltree": lambda: calltree(n),
       "ssy": lambda: ssy(n), "braces": lambda: braces(n)}[shape](), end="")
