"""The stale-search check runs every minute; its runs are not logged (a line a minute buries
what matters), its failures and every other task's runs are."""

from __future__ import annotations

import logging

import pytest


@pytest.fixture
def huey_records(settings):
    """What the `huey` logger, as the settings configure it, lets through."""
    logger = logging.getLogger("huey")
    kept: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            kept.append(record.getMessage())

    handler = Keep()
    logger.addHandler(handler)
    level, logger.level = logger.level, logging.INFO
    yield logger, kept
    logger.removeHandler(handler)
    logger.setLevel(level)


def test_runs_of_the_stale_search_check_are_not_logged(huey_records):
    logger, kept = huey_records
    logger.info("Executing %s", "search.tasks.reclaim_stale_searches: 5d1c")
    logger.info("%s executed in %0.3fs", "search.tasks.reclaim_stale_searches: 5d1c", 0.012)
    logger.info("Executing %s", "search.tasks.run_search_task: 77aa")
    logger.error("Unhandled exception in task %s", "search.tasks.reclaim_stale_searches: 5d1c")
    assert kept == ["Executing search.tasks.run_search_task: 77aa",
                    "Unhandled exception in task search.tasks.reclaim_stale_searches: 5d1c"]
    assert logging.getLogger("huey.consumer.Scheduler").getEffectiveLevel() == logging.WARNING
