"""Whether this deployment may run pasted code: a system check and a page notice.

A multi-user site (KERNELWEB_LOCAL off) refuses to start where the runner cannot contain
candidates. Single-user mode starts anyway, says on every page that candidates run with the
user's own rights, and lets the runner's `sandbox` check pass with that said.
"""

from __future__ import annotations

import os
from typing import Any

from django.conf import settings
from django.core.checks import Error, Tags, register
from django.http import HttpRequest

from gpurunner.containment import available


@register(Tags.security)
def runner_containment(app_configs: Any = None, **kwargs: Any) -> list[Error]:
    """An error (startup refused) when candidates would run uncontained on a multi-user site."""
    ok, why = available()
    if ok or settings.LOCAL_MODE:
        return []
    return [Error(f"candidates cannot be contained on this machine: {why}",
                  hint="run the web server and task consumers as root (the runner then gives "
                  "each sandbox its own user id, namespaces and a seccomp filter), or set "
                  "KERNELWEB_LOCAL=1 for a single user who accepts running candidates with "
                  "their own rights", id="kernelweb.E010")]


def accept_in_single_user_mode() -> None:
    """In single-user mode without containment, verdicts say so instead of failing."""
    if settings.LOCAL_MODE and not available()[0]:
        os.environ.setdefault("GPURUNNER_UNCONFINED", "1")


def sandbox_notice(request: HttpRequest) -> dict[str, str]:
    """Template context: a sentence for the page when candidates run uncontained."""
    ok, why = available()
    if ok:
        return {"sandbox_notice": ""}
    return {"sandbox_notice": "Candidates run with your own rights on this machine, not in a "
            f"sandbox ({why})."}
