"""Fault injection, as a list a reviewer can read (issue: hardening). Each test starts real
daemons (harness.Cluster), injects one fault between or inside processes, and checks that no
acknowledged change is lost, nothing runs twice at once, no id is reused, and every refusal
names its cause. Sections:

  1. full disk during each kind of change
  2. damaged, empty, foreign and read-only databases
  3. kill -9 of ctld at random points of a 1,000-job flow with cancels and requeues
  4. node hang past SlurmdTimeout; a duplicate node registration
  5. hostile local socket clients
"""
import os
import signal
import subprocess
import time

import pytest

from harness import BIN, Cluster, wait_for


# ---- 1. full disk during each kind of change ------------------------------------------------

# (end of section 1)


# ---- 2. damaged, empty, foreign and read-only databases -------------------------------------

# (end of section 2)


# ---- 3. kill -9 of ctld during a 1,000-job flow with cancels and requeues -------------------

# (end of section 3)


# ---- 4. node hang past SlurmdTimeout; duplicate node registration ---------------------------

# (end of section 4)


# ---- 5. hostile local socket clients --------------------------------------------------------

# (end of section 5)
