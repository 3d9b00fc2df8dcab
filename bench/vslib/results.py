"""Figures of both systems per measurement, their ratios and goals, and the outputs:
bench/RESULTS.md (the part between the run-vs-slurm markers) and the ratios picture."""
import os
import statistics
import time

from vslib.config import (API_B, API_BC, API_C, API_N, BURSTS, LAT_REPS, N, NBIG, NPEND, REPS,
                          RESULTS, SECTIONS)
from vslib.util import LOG, machine, say, sh

class Results:
    """Per metric: the values of each system, the unit and which direction is better."""

    def __init__(self):
        self.rows = {}   # key -> dict(unit, better, slurm=[], tessera=[], note, goal)
        self.order = []

    def add(self, key, system, value, unit, better, goal=None, note=None):
        if key not in self.rows:
            self.rows[key] = {"unit": unit, "better": better, "Slurm": [], "Tessera": [],
                              "goal": goal, "note": note}
            self.order.append(key)
        self.rows[key][system].append(value)
        if note:
            self.rows[key]["note"] = note

    @staticmethod
    def fmt(vals):
        if not vals:
            return "—"
        m = statistics.median(vals)
        f = (lambda v: f"{v:,.0f}") if m >= 100 else (lambda v: f"{v:,.1f}") if m >= 10 else \
            (lambda v: f"{v:,.2f}")
        return f"{f(m)}" + (f" [{f(min(vals))}–{f(max(vals))}]" if len(vals) > 1 else "") + \
            f" (n={len(vals)})"

    def ratio(self, key):
        """(tessera/slurm, advantage): advantage > 1 means Tessera is better."""
        r = self.rows[key]
        if not r["Slurm"] or not r["Tessera"]:
            return None, None
        s, t = statistics.median(r["Slurm"]), statistics.median(r["Tessera"])
        if s == 0 or t == 0:
            return None, None
        return t / s, (t / s if r["better"] == "higher" else s / t)


R = Results()


def goal_met(key):
    r = R.rows[key]
    g = r["goal"]
    if not g:
        return ""
    kind, target = g
    tvals = r["Tessera"]
    if not tvals:
        return "n/a"
    t = statistics.median(tvals)
    _, adv = R.ratio(key)
    if kind == "ratio":
        ok = adv is not None and adv >= target
        return f"≥{target:g}x: {'MET' if ok else 'MISSED'}"
    if kind == "max":
        return f"≤{target:g}: {'MET' if t <= target else 'MISSED'}"
    if kind == "min":
        return f"≥{target:,g}: {'MET' if t >= target else 'MISSED'}"
    if kind == "zero":
        return f"0 in every run: {'MET' if max(tvals) == 0 else 'MISSED'}"
    return ""


def report(key):
    r = R.rows[key]
    tr, adv = R.ratio(key)
    rat = f" | Tessera/Slurm {tr:.3g} ({adv:.3g}x {'better' if adv >= 1 else 'worse'})" \
        if tr is not None else ""
    say(f"RESULT {key} [{r['unit']}]: Slurm {R.fmt(r['Slurm'])} | Tessera {R.fmt(r['Tessera'])}"
        f"{rat} {goal_met(key)}")


def write_svg(path):
    rows = []
    for k in R.order:
        tr, adv = R.ratio(k)
        if adv is not None and not k.startswith("crash: acknowledged"):
            rows.append((k, adv))
    if not rows:
        return
    import math
    w, lh, left, right = 1100, 26, 560, 60
    h = 70 + lh * len(rows) + 40
    lo, hi = -1.0, max(2.0, math.ceil(math.log10(max(a for _, a in rows) * 1.2)))
    lo = min(lo, math.floor(math.log10(min(a for _, a in rows))))
    span = hi - lo
    X = lambda v: left + (math.log10(v) - lo) / span * (w - left - right)  # noqa: E731
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" '
           f'font-family="sans-serif" font-size="12">',
           f'<rect width="{w}" height="{h}" fill="white"/>',
           f'<text x="{w / 2}" y="22" text-anchor="middle" font-size="15" font-weight="bold">'
           f'Tessera vs Slurm 22.05, same machine, same run: advantage (log scale, &gt;1 = '
           f'Tessera better)</text>']
    for e in range(int(lo), int(hi) + 1):
        x = X(10 ** e)
        out.append(f'<line x1="{x:.1f}" y1="40" x2="{x:.1f}" y2="{h - 30}" stroke="#ccc"/>')
        out.append(f'<text x="{x:.1f}" y="{h - 14}" text-anchor="middle">{10 ** e:g}x</text>')
    x1 = X(1)
    out.append(f'<line x1="{x1:.1f}" y1="40" x2="{x1:.1f}" y2="{h - 30}" stroke="black"/>')
    for i, (k, a) in enumerate(rows):
        y = 50 + i * lh
        xa = X(a)
        color = "#2a7" if a >= 1 else "#c33"
        out.append(f'<text x="{left - 8}" y="{y + 14}" text-anchor="end">'
                   f'{k.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")}</text>')
        out.append(f'<rect x="{min(x1, xa):.1f}" y="{y + 3}" width="{abs(xa - x1):.1f}" '
                   f'height="{lh - 8}" fill="{color}"/>')
        out.append(f'<text x="{max(x1, xa) + 4:.1f}" y="{y + 14}">{a:.3g}x</text>')
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def write_results(S, T, started, finished, cmdline):
    lines = ["# Tessera vs Slurm: side-by-side benchmark (bench/run-vs-slurm)", "",
             f"Run {time.strftime('%Y-%m-%d %H:%M', time.localtime(started))} – "
             f"{time.strftime('%H:%M', time.localtime(finished))} "
             f"({(finished - started) / 60:.1f} min).", "",
             f"- **Machine:** {machine()}",
             f"- **Slurm:** {S.version()} (Debian package), munge "
             f"{sh('munged -V 2>&1 | head -1', check=False).stdout.strip()}; slurmctld + 16 slurmd "
             f"(multiple-slurmd) on 127.0.0.1, config bench/slurm/slurm.conf.in (defaults; "
             f"MaxJobCount raised for the 100k queue)",
             f"- **Tessera:** {T.version()}; tessera-ctld + 16 tessera-noded on 127.0.0.1, "
             f"plaintext gRPC, own munged, config bench/tessera/tessera.conf.in (defaults; SQLite "
             f"WAL synchronous=FULL, submit acknowledged only when durable)",
             f"- **Command:** `{cmdline}`",
             f"- **Knobs:** REPS={REPS} N={N} NBIG={NBIG} NPEND=\"{' '.join(map(str, NPEND))}\" "
             f"LAT_REPS={LAT_REPS} API_N={API_N} API_C={API_C} API_B={API_B} API_BC={API_BC} BURSTS=\"{' '.join(f'{b:g}' for b in BURSTS)}\" "
             f"SECTIONS=\"{' '.join(SECTIONS)}\"",
             "- **Method:** each measurement runs on Slurm, then on Tessera, per repetition; "
             "clusters are both up but never measured at the same time. Each repetition starts "
             "from a freshly restarted controller with empty state. Figures: median [min–max] "
             "(n = samples). Wall-clock times with Python time.time() around the commands; "
             "CPU from /proc utime+stime (10 ms ticks).",
             "- **Advantage:** Tessera/Slurm for rates, Slurm/Tessera for times, memory and "
             "losses, so >1 always means Tessera is better. Picture: [ratios.svg](ratios.svg).",
             "", "| Measurement | unit | Slurm | Tessera | Tessera/Slurm | advantage | goal |",
             "|---|---|---|---|---|---|---|"]
    for k in R.order:
        r = R.rows[k]
        tr, adv = R.ratio(k)
        lines.append(f"| {k} | {r['unit']} | {R.fmt(r['Slurm'])} | {R.fmt(r['Tessera'])} | "
                     f"{'' if tr is None else f'{tr:.3g}'} | "
                     f"{'' if adv is None else f'{adv:.3g}x'} | {goal_met(k)} |")
    notes = [f"- {k}: {R.rows[k]['note']}" for k in R.order if R.rows[k]["note"]]
    if notes:
        lines += ["", "## Notes", ""] + notes
    lines += ["", "## Log", "", "```"] + LOG + ["```", ""]
    # RESULTS.md also holds other benchmarks' sections (the scheduler's): only the part between
    # the markers is this script's.
    begin, end = "<!-- run-vs-slurm:begin -->", "<!-- run-vs-slurm:end -->"
    body = begin + "\n" + "\n".join(lines) + "\n" + end
    old = open(RESULTS).read() if os.path.exists(RESULTS) else ""
    if begin in old and end in old:
        body = old[:old.index(begin)] + body + old[old.index(end) + len(end):]
    with open(RESULTS, "w") as f:
        f.write(body)
