"""What this deployment can run, for the new-search form and `services.clean_config`: which
proposers have their credentials (search.proposers decides) and whether a GPU, or GPU workers,
exist."""

from __future__ import annotations

from django.conf import settings


def unavailable_proposers() -> dict[str, str]:
    """Proposers this server cannot run, each with why (naming the variable to set)."""
    from search.execution import provider_keys
    from search.proposers import available_proposers

    return {name: reason for name, ok, reason in available_proposers(provider_keys()) if not ok}


def gpu_available() -> bool:
    """Whether a search can run on CUDA here: a GPU on this machine or GPU workers (scale-out)."""
    return settings.RUNNER_DEVICE == "cuda" or bool(settings.RUNNER_REMOTE)


def device_problem(device: str) -> str | None:
    """Why `device` cannot run on this deployment, or None."""
    if device == "cuda" and not gpu_available():
        return ("this server has no GPU and no GPU workers: choose cpu, or run it on a GPU machine "
                "(RUNNER_DEVICE=cuda) or with GPU workers (RUNNER_REMOTE=1)")
    return None
