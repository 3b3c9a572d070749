"""Crash resume on PostgreSQL: two worker processes re-claiming stale searches at the same
moment claim each search exactly once between them."""

import json
import subprocess
import sys
import time

from tests.fixtures.services import ROOT, django_env, django_script, postgres_url, run_django  # noqa: F401

SEARCHES = 30

MAKE_STALE = f"""
from datetime import timedelta
from django.contrib.auth import get_user_model
from django.utils import timezone
from search.models import Problem, Search
user = get_user_model().objects.create(username="owner")
problem = Problem.objects.create(owner=user, name="p", source="x")
old = timezone.now() - timedelta(hours=1)
Search.objects.bulk_create([Search(owner=user, problem=problem, status="running", heartbeat=old)
                            for _ in range({SEARCHES})])
print(json.dumps(sorted(Search.objects.values_list("id", flat=True))))
"""

CLAIM = """
import json, sys, time
from search.execution import reclaim_stale
start = float(sys.argv[1])
time.sleep(max(0.0, start - time.time()))  # both claimers start together
print(json.dumps(reclaim_stale()))
"""


def test_two_workers_reclaiming_together_claim_each_search_once(postgres_url):  # noqa: F811
    ids = json.loads(run_django(postgres_url, "import json\n" + MAKE_STALE))
    start = time.time() + 4.0  # after both have imported Django
    env = django_env(postgres_url)
    claimers = [subprocess.Popen([sys.executable, "-c", django_script(CLAIM), str(start)], cwd=ROOT, env=env,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    results = []
    for proc in claimers:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        results.append({search_id for search_id, _claim in json.loads(out)})
    first, second = results
    assert not first & second
    assert first | second == set(ids)
    resumes = json.loads(run_django(postgres_url, "import json\nfrom search.models import Search\n"
                                    "print(json.dumps(sorted(set(Search.objects.values_list('resumes', flat=True)))))"))
    assert resumes == [1]
