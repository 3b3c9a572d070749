"""Sandbox user ids come from one allocator for the whole host: processes that start
together (a web server and a task consumer) never hold the same id."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from gpurunner.uids import UID_BASE, UID_SLOTS, UidSlot, state_dir

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="sandbox user ids need root")

HOLD = """
import json, sys, time
from gpurunner.uids import UidSlot
slots = [UidSlot.acquire() for _ in range(40)]
print(json.dumps([s.uid for s in slots]), flush=True)
sys.stdin.read()
"""


def test_two_processes_started_together_never_share_a_user_id():
    procs = [subprocess.Popen([sys.executable, "-c", HOLD], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True, cwd=os.getcwd())
             for _ in range(2)]
    try:
        held = [json.loads(p.stdout.readline()) for p in procs]
    finally:
        for p in procs:
            p.stdin.close()
            p.wait(timeout=30)
    assert len(held[0]) == len(held[1]) == 40
    assert not set(held[0]) & set(held[1])
    assert all(UID_BASE <= uid < UID_BASE + UID_SLOTS for uid in held[0] + held[1])


def test_an_id_is_held_until_released():
    slot = UidSlot.acquire()
    lock = state_dir() / "uids" / f"{slot.slot}.lock"
    probe = [sys.executable, "-c", "import fcntl, sys; f = open(sys.argv[1]); "
             "fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)", str(lock)]
    assert subprocess.run(probe, capture_output=True).returncode != 0
    slot.release()
    assert subprocess.run(probe, capture_output=True).returncode == 0


def test_the_lock_files_live_in_a_folder_only_the_runner_can_open():
    UidSlot.acquire().release()
    st = os.stat(state_dir() / "uids")
    assert st.st_uid == os.geteuid() and st.st_mode & 0o777 == 0o700
