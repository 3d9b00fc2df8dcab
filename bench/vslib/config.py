"""The run's settings: paths and the env knobs of bench/run-vs-slurm (see its docstring)."""
import os

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # bench/
ROOT = os.path.dirname(HERE)
E = os.environ.get
REPS = int(E("REPS", "3"))
N = int(E("N", "1000"))
NBIG = int(E("NBIG", "5000"))
NPEND = [int(x) for x in E("NPEND", "10000 100000").split()]
LAT_REPS = int(E("LAT_REPS", "10"))
API_N = int(E("API_N", "20000"))
API_C = int(E("API_C", "64"))
API_B = int(E("API_B", "500"))
API_BC = int(E("API_BC", "8"))
BURSTS = [float(x) for x in E("BURSTS", "0 0 0 1 3").split()]
SECTIONS = E("SECTIONS", "submit remote api e2e latency queue durability").split()
BUILD = os.path.abspath(E("BUILD", E("TESSERA_BUILD_DIR", os.path.join(ROOT, "build-bench"))))
BIN = os.path.join(BUILD, "bin")
BASE = E("BASE", "/tmp/tessera-bench")
KEEP = E("KEEP", "0") == "1"
RESULTS = E("RESULTS", os.path.join(HERE, "RESULTS.md"))
SVG = E("SVG", os.path.join(HERE, "ratios.svg"))
HZ = os.sysconf("SC_CLK_TCK")
TARGETS = ["tessera-ctld", "tessera-noded", "tessera-stepd", "tbatch", "tqueue", "tcancel",
           "tinfo", "tcontrol", "tacct", "tessera-bench-noop"]
