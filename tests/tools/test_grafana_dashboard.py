"""Issue 20 §3: etc/grafana/tessera-dashboard.json is valid JSON, every panel has a title and
queries, and every metric a panel's PromQL names is one tessera-ctld or tessera-noded exports
(the names registered in ctld/metrics, noded/noded_metrics.cc; histograms with their _bucket,
_count and _sum series)."""
import json
import os
import re
import unittest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
DASHBOARD = os.path.join(ROOT, "etc", "grafana", "tessera-dashboard.json")
SOURCES = ["ctld/metrics/ctld_metrics.cc", "ctld/metrics/state_gauges.cc", "noded/noded_metrics.cc"]


def exported():
    """(all metric names, histogram names) registered in the sources."""
    names, histograms = set(), set()
    for rel in SOURCES:
        with open(os.path.join(ROOT, rel)) as f:
            text = f.read()
        names |= set(re.findall(r'"(tessera_[a-z0-9_]+)"', text))
        histograms |= set(re.findall(r'Histogram\(\*registry_,\s*"(tessera_[a-z0-9_]+)"', text))
        histograms |= set(re.findall(r'BuildHistogram\(\)\s*\.Name\("(tessera_[a-z0-9_]+)"\)', text))
    return names, histograms


def series_known(name, names, histograms):
    if name in names:
        return True
    m = re.match(r"^(.*)_(bucket|count|sum)$", name)
    return bool(m) and m.group(1) in histograms


class DashboardTest(unittest.TestCase):
    def setUp(self):
        with open(DASHBOARD) as f:
            self.dash = json.load(f)  # valid JSON or the test fails here

    def test_catalogue_is_found(self):
        names, histograms = exported()
        # The source scan itself works (a renamed file would make every check below vacuous).
        self.assertIn("tessera_jobs_submitted_total", names)
        self.assertIn("tessera_sched_cycle_seconds", histograms)
        self.assertIn("tessera_rpc_duration_seconds", histograms)
        self.assertIn("tessera_noded_job_launches_total", names)
        self.assertFalse(series_known("tessera_no_such_metric", names, histograms))
        self.assertFalse(series_known("tessera_jobs_pending_bucket", names, histograms))

    def test_panels_have_titles_and_queries(self):
        panels = self.dash["panels"]
        self.assertGreaterEqual(len(panels), 10)
        ids = [p["id"] for p in panels]
        self.assertEqual(len(ids), len(set(ids)))
        for p in panels:
            self.assertTrue(p.get("title"), p)
            self.assertTrue(p.get("targets"), p["title"])
            for t in p["targets"]:
                self.assertTrue(t.get("expr"), p["title"])

    def test_every_expression_names_exported_metrics(self):
        names, histograms = exported()
        used = set()
        for p in self.dash["panels"]:
            for t in p["targets"]:
                found = re.findall(r"\b(tessera_[a-z0-9_]+)\b", t["expr"])
                self.assertTrue(found, f"{p['title']}: {t['expr']} names no tessera metric")
                for name in found:
                    self.assertTrue(series_known(name, names, histograms),
                                    f"panel {p['title']!r}: {name} is not exported")
                    used.add(name)
        # The main panels of issue 20 §3 are there.
        for needed in ["tessera_jobs_pending", "tessera_sched_cycle_seconds_bucket",
                       "tessera_rpc_duration_seconds_bucket", "tessera_store_commit_seconds_bucket",
                       "tessera_nodes", "tessera_gpus", "tessera_noded_job_launches_total",
                       "tessera_noded_stepd_starts_total"]:
            self.assertIn(needed, used)


if __name__ == "__main__":
    unittest.main()
