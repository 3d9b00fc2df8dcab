"""Issue 19 (h19 s6): srun --mpi=pmi2 direct launch. Each task gets a PMI-2 server on its node
(noded/pmi2.h: PMI_FD, PMI_RANK, PMI_SIZE, PMI_JOBID); fences gather every node's keys through
srun. Debian 12's MPI packages have no PMI-2 client here (Open MPI 4.1 is built with PMIx only:
no s1/s2 components; MPICH is not installed, and installing it would change the machine's mpirun
alternative), so the client is a small C program speaking the PMI-2 wire protocol as MPICH's
simple PMI-2 client does: handshake, fullinit, job-getid, info-getjobattr, kvs-put, kvs-fence,
kvs-get across 2 nodes (two rounds), finalize. A real munged, tessera-ctld and two noded."""
import os
import re
import shutil
import subprocess

import pytest

from harness import BIN, install_slurm_names

USER = "tessera-alice"

pytestmark = pytest.mark.skipif(not shutil.which("cc"), reason="no C compiler")

PROGRAM = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int fd;

static void put_msg(const char* body) {
  char head[8];
  snprintf(head, sizeof head, "%6d", (int)strlen(body));
  if (write(fd, head, 6) != 6 || write(fd, body, strlen(body)) != (ssize_t)strlen(body)) exit(90);
}
static void read_n(char* buf, size_t n) {
  size_t got = 0;
  while (got < n) {
    ssize_t r = read(fd, buf + got, n - got);
    if (r <= 0) exit(91);
    got += (size_t)r;
  }
}
static char reply[65536];
static const char* get_msg(void) {
  char head[7] = {0};
  read_n(head, 6);
  int n = atoi(head);
  if (n <= 0 || n >= (int)sizeof reply) exit(92);
  read_n(reply, (size_t)n);
  reply[n] = 0;
  return reply;
}
/* The value of key in a reply, ";;" unescaped; "" when absent. */
static const char* field(const char* msg, const char* key) {
  static char out[4096];
  char pat[64];
  snprintf(pat, sizeof pat, ";%s=", key);
  const char* p = strstr(msg, pat);
  size_t k = 0;
  out[0] = 0;
  if (!p) return out;
  for (p += strlen(pat); *p && k + 1 < sizeof out; ++p) {
    if (*p == ';' && p[1] == ';') { out[k++] = ';'; ++p; continue; }
    if (*p == ';') break;
    out[k++] = *p;
  }
  out[k] = 0;
  return out;
}

int main(void) {
  const char* e = getenv("PMI_FD");
  if (!e) { printf("no PMI_FD\n"); return 2; }
  fd = atoi(e);
  int my = atoi(getenv("PMI_RANK"));
  const char* init = "cmd=init pmi_version=2 pmi_subversion=0\n";
  if (write(fd, init, strlen(init)) < 0) return 3;
  char line[256];
  size_t k = 0;
  while (k + 1 < sizeof line) { read_n(line + k, 1); if (line[k++] == '\n') break; }
  line[k] = 0;
  if (!strstr(line, "cmd=response_to_init") || !strstr(line, "rc=0")) { printf("init: %s", line); return 4; }
  char buf[512];
  snprintf(buf, sizeof buf, "cmd=fullinit;pmirank=%d;threaded=FALSE;", my);
  put_msg(buf);
  const char* r = get_msg();
  int rank = atoi(field(r, "rank")), size = atoi(field(r, "size"));
  put_msg("cmd=job-getid;thrid=7;");
  r = get_msg();
  char jobid[128];
  snprintf(jobid, sizeof jobid, "%s", field(r, "jobid"));
  int thrid_ok = strstr(r, "thrid=7;") != NULL;
  put_msg("cmd=info-getjobattr;key=PMI_process_mapping;");
  r = get_msg();
  char mapping[256];
  snprintf(mapping, sizeof mapping, "%s", field(r, "value"));
  const char* node = getenv("SLURMD_NODENAME");
  for (int round = 1; round <= 2; ++round) {
    /* a value with a ';' in it: escaped on the wire */
    snprintf(buf, sizeof buf, "cmd=kvs-put;key=r%d-k%d;value=round%d;;node=%s;;rank=%d;", round, rank, round, node, rank);
    put_msg(buf);
    r = get_msg();
    if (!strstr(r, "cmd=kvs-put-response") || !strstr(r, "rc=0")) { printf("put: %s\n", r); return 5; }
    put_msg("cmd=kvs-fence;");
    r = get_msg();
    if (!strstr(r, "cmd=kvs-fence-response") || !strstr(r, "rc=0")) { printf("fence: %s\n", r); return 6; }
    printf("rank %d round %d got:", rank, round);
    for (int i = 0; i < size; ++i) {
      snprintf(buf, sizeof buf, "cmd=kvs-get;jobid=%s;srcid=-1;key=r%d-k%d;", jobid, round, i);
      put_msg(buf);
      r = get_msg();
      printf(" [%s]", strcmp(field(r, "found"), "TRUE") == 0 ? field(r, "value") : "missing");
    }
    printf("\n");
  }
  put_msg("cmd=kvs-get;key=no-such-key;");
  r = get_msg();
  printf("rank %d of %d jobid=%s thrid=%d mapping=%s absent=%s\n", rank, size, jobid, thrid_ok,
         mapping, field(r, "found"));
  put_msg("cmd=finalize;");
  r = get_msg();
  if (!strstr(r, "cmd=finalize-response")) return 7;
  return 0;
}
"""


@pytest.fixture(scope="module")
def slurm_bin(cluster):
    return install_slurm_names(cluster)


@pytest.fixture(scope="module")
def pmi_client(cluster):
    work = cluster.user_dir(USER)
    src = os.path.join(work, "pmi2_exchange.c")
    with open(src, "w") as f:
        f.write(PROGRAM)
    exe = os.path.join(work, "pmi2_exchange")
    subprocess.run(["cc", "-O1", "-Wall", "-o", exe, src], check=True)
    os.chmod(exe, 0o755)
    return exe


def srun(cluster, slurm_bin, argv, **kw):
    env = {"PATH": f"{slurm_bin}:{BIN}:/usr/sbin:/usr/bin:/sbin:/bin"}
    return cluster.run(argv, user=USER, env=env, check=False, timeout=90, **kw)


def test_srun_mpi_pmi2_exchanges_keys_across_two_nodes(cluster, slurm_bin, pmi_client):
    p = srun(cluster, slurm_bin, ["srun", "-N2", "--ntasks-per-node=2", "--mpi=pmi2", pmi_client],
             cwd=cluster.user_dir(USER))
    assert p.returncode == 0, p.stdout + p.stderr
    nodes = {0: "it1", 1: "it1", 2: "it2", 3: "it2"}
    for round_ in (1, 2):
        want = " ".join(f"[round{round_};node={nodes[i]};rank={i}]" for i in range(4))
        for rank in range(4):
            assert f"rank {rank} round {round_} got: {want}\n" in p.stdout, p.stdout
    finals = re.findall(r"rank (\d) of 4 jobid=(\S+) thrid=1 mapping=(\S+) absent=FALSE",
                        p.stdout)
    assert sorted(f[0] for f in finals) == ["0", "1", "2", "3"], p.stdout
    assert {f[2] for f in finals} == {"(vector,(0,2,2))"}
    assert len({f[1] for f in finals}) == 1 and re.fullmatch(r"\d+\.\d+", finals[0][1])


def test_srun_mpi_pmi2_in_a_batch_job_and_from_slurm_mpi_type(cluster, slurm_bin, pmi_client):
    work = cluster.user_dir(USER)
    p = srun(cluster, slurm_bin, ["sbatch", "--parsable", "-N2", "-n3", "-o", "pmi-%j.out",
                                  "--wrap", f"SLURM_MPI_TYPE=pmi2 srun {pmi_client}"], cwd=work)
    assert p.returncode == 0, p.stderr
    job = int(p.stdout.strip())
    state, _ = cluster.wait_state(job, ["COMPLETED", "FAILED", "CANCELLED"], timeout=90)
    out = open(os.path.join(work, f"pmi-{job}.out")).read()
    assert state == "COMPLETED", out
    assert len(re.findall(r"rank \d of 3 jobid=\S+ thrid=1 mapping=\S+ absent=FALSE", out)) == 3, out
    assert "[round2;node=it2;rank=2]" in out, out


def test_srun_mpi_pmix_is_refused_clearly(cluster, slurm_bin):
    p = srun(cluster, slurm_bin, ["srun", "--jobid=1", "--mpi=pmix", "true"])
    assert p.returncode == 1 and "no PMIx server" in p.stderr, p.stderr
