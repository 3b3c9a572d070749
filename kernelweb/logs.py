"""Log filters: the once-a-minute check for stale searches is not news."""

from __future__ import annotations

import logging

QUIET_TASKS = ("reclaim_stale_searches",)  # periodic tasks whose runs are not logged


class QuietPeriodicTasks(logging.Filter):
    """Drops huey's "Executing ..." / "... executed in" lines for QUIET_TASKS; their errors
    are still logged (at ERROR, which this filter lets through)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno >= logging.WARNING:
            return True
        message = record.getMessage()
        return not any(name in message for name in QUIET_TASKS)
