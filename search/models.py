"""The search app's data: problems, searches, the tree of nodes, and the event log."""

from __future__ import annotations

import secrets

from django.conf import settings
from django.db import models

from search.engine import statuses

# The statuses of search.engine.statuses as the database's choices.
SearchStatus = models.TextChoices("SearchStatus", [(s.name, s.value) for s in statuses.SearchStatus])
NodeStatus = models.TextChoices("NodeStatus", [(s.name, s.value) for s in statuses.NodeStatus])


class Problem(models.Model):
    """A reference problem (KernelBench format) with what validation measured."""

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="problems")
    name = models.CharField(max_length=200)
    source = models.TextField()
    info = models.JSONField(default=dict)  # gpurunner ReferenceReport.to_dict()
    signature = models.CharField(max_length=500, blank=True, db_index=True)  # operators, for the library
    created = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return self.name


class Search(models.Model):
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="searches")
    problem = models.ForeignKey(Problem, on_delete=models.CASCADE, related_name="searches")
    title = models.CharField(max_length=200, blank=True)
    description = models.TextField(blank=True)
    config = models.JSONField(default=dict)  # search.engine.types.SearchConfig.to_dict()
    status = models.CharField(max_length=16, choices=SearchStatus.choices, default=SearchStatus.QUEUED,
                              db_index=True)
    status_reason = models.TextField(blank=True)
    round = models.IntegerField(default=0)
    heartbeat = models.DateTimeField(null=True, blank=True)
    checkpoint = models.JSONField(null=True, blank=True)
    resumes = models.IntegerField(default=0)
    cancel_requested = models.BooleanField(default=False)
    best_node = models.ForeignKey("Node", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    share_slug = models.CharField(max_length=64, null=True, blank=True, unique=True)
    candidates = models.IntegerField(default=0)
    correct = models.IntegerField(default=0)
    input_tokens = models.BigIntegerField(default=0)
    output_tokens = models.BigIntegerField(default=0)
    cost_usd = models.FloatField(default=0.0)
    gpu_seconds = models.FloatField(default=0.0)
    created = models.DateTimeField(auto_now_add=True)
    started = models.DateTimeField(null=True, blank=True)
    finished = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created"]

    def new_share_slug(self) -> str:
        self.share_slug = secrets.token_urlsafe(24)
        return self.share_slug


class Node(models.Model):
    """A node of the search tree: the reference, an idea, or a kernel."""

    KINDS = [(k, k) for k in ("reference", "idea", "kernel")]

    search = models.ForeignKey(Search, on_delete=models.CASCADE, related_name="nodes")
    parent = models.ForeignKey("self", null=True, blank=True, on_delete=models.CASCADE, related_name="children")
    key = models.CharField(max_length=64)  # engine identity, unique per search: resume never duplicates
    kind = models.CharField(max_length=10, choices=KINDS)
    round = models.IntegerField(default=0)
    idea = models.TextField(blank=True)
    category = models.CharField(max_length=32, blank=True)
    source = models.TextField(blank=True)
    backend = models.CharField(max_length=16, blank=True)
    status = models.CharField(max_length=16, choices=NodeStatus.choices, default=NodeStatus.PROPOSED)
    verdict = models.JSONField(default=dict)  # gpurunner Verdict.to_dict()
    speedup = models.FloatField(null=True, blank=True)
    speedup_vs_compile = models.FloatField(null=True, blank=True)
    cand_ms = models.FloatField(null=True, blank=True)
    error = models.TextField(blank=True)
    model = models.CharField(max_length=100, blank=True)
    input_tokens = models.IntegerField(default=0)
    output_tokens = models.IntegerField(default=0)
    cost_usd = models.FloatField(default=0.0)
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["search", "key"], name="unique_node_key_per_search")]
        ordering = ["id"]


class SearchEvent(models.Model):
    """Append-only log; the source of truth for streaming. The tree can be rebuilt from it."""

    search = models.ForeignKey(Search, on_delete=models.CASCADE, related_name="events")
    kind = models.CharField(max_length=32)
    payload = models.JSONField(default=dict)
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        indexes = [models.Index(fields=["search", "id"])]


class ApiToken(models.Model):
    """A per-user token for scripts (Authorization: Bearer <token>). Stored hashed.

    A `read` token only reads (GET); a `write` token may also start, cancel and share
    searches. A token stops working at `expires` (never when empty) or once deleted.
    """

    class Scope(models.TextChoices):
        READ = "read", "read: follow searches, fetch kernels"
        WRITE = "write", "write: also start, cancel and share searches"

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens")
    name = models.CharField(max_length=100, default="script")
    token_hash = models.CharField(max_length=64, unique=True)
    prefix = models.CharField(max_length=8)
    scope = models.CharField(max_length=8, choices=Scope.choices, default=Scope.WRITE)
    expires = models.DateTimeField(null=True, blank=True)
    created = models.DateTimeField(auto_now_add=True)
    last_used = models.DateTimeField(null=True, blank=True)


class LibraryKernel(models.Model):
    """The best kernel of a finished search, kept under its problem's operator signature.

    It seeds its owner's later searches (everyone's once the owner shares it), and only as a
    candidate the runner evaluates again against that search's reference: what it once
    measured is never taken on trust.
    """

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE,
                              related_name="library_kernels")
    shared = models.BooleanField(default=False)  # offered to other users' searches too
    signature = models.CharField(max_length=500, db_index=True)
    problem = models.ForeignKey(Problem, on_delete=models.CASCADE, related_name="library_kernels")
    search = models.OneToOneField(Search, on_delete=models.CASCADE, related_name="library_kernel")
    source = models.TextField()
    backend = models.CharField(max_length=16, blank=True)
    device = models.CharField(max_length=16, default="cpu")
    speedup = models.FloatField(null=True, blank=True)
    created = models.DateTimeField(auto_now_add=True)
