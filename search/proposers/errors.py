"""A provider SDK's exceptions, sorted: retry, give up on this call, or stop the search.

The `openai` and `anthropic` SDKs share their exception names (APIStatusError, APITimeoutError,
APIConnectionError), so one function reads both.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

from search.engine.types import ProposerError, ProviderRefused
from search.proposers.retry import TransientError, retry_after

RETRY_STATUSES = {408, 409, 429, 529}  # and every 5xx; 529 is Anthropic's "overloaded"
# Error codes and words that mean no later call can succeed either: the account, not the call.
_ACCOUNT_CODES = {"insufficient_quota", "billing_hard_limit_reached", "billing_not_active",
                  "invalid_api_key", "model_not_found", "account_deactivated"}
_ACCOUNT_WORDS = ("credit balance", "billing", "quota", "api key", "api-key", "does not exist",
                  "not found", "no access", "do not have access", "permission")


def provider_message(exc: Any) -> str:
    """The provider's own sentence from an SDK error's body, else the SDK's message."""
    body = getattr(exc, "body", None)
    error = body.get("error", body) if isinstance(body, dict) else None
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        return error["message"].strip()
    if isinstance(error, str):
        return error.strip()
    return (getattr(exc, "message", "") or str(exc)).strip()


def _code(exc: Any) -> str:
    body = getattr(exc, "body", None)
    error = body.get("error", body) if isinstance(body, dict) else {}
    if not isinstance(error, dict):
        return ""
    return str(error.get("code") or error.get("type") or "")


def _refuses_account(status: int, code: str, message: str) -> bool:
    if status in (401, 402, 403, 404) or code in _ACCOUNT_CODES:
        return True
    if status in (400, 429):
        return any(word in message.lower() for word in _ACCOUNT_WORDS)
    return False


def translate(exc: Exception, sdk: ModuleType, provider: str, timeout_s: float) -> Exception:
    """An SDK exception as TransientError (retry), ProviderRefused (stop the search: key, quota,
    credit, unknown model) or ProposerError (this call failed), with the provider's message."""
    if isinstance(exc, sdk.APIStatusError):
        status = exc.status_code
        message = provider_message(exc)
        reason = f"HTTP {status} from {provider}: {message}"
        if _refuses_account(status, _code(exc), message):
            return ProviderRefused(f"{provider} refused the request (HTTP {status}): {message}")
        if status in RETRY_STATUSES or status >= 500:
            headers = exc.response.headers if exc.response is not None else None
            return TransientError(reason, retry_after(headers))
        return ProposerError(reason)
    if isinstance(exc, sdk.APITimeoutError):
        # The provider may bill an abandoned request: a slow model is not asked again.
        return ProposerError(f"{provider} did not answer within {timeout_s:g} s; not retried, "
                             f"since an abandoned request may still be billed (raise "
                             f"{provider.upper()}_TIMEOUT_S for slow reasoning models)")
    if isinstance(exc, sdk.APIConnectionError):
        return TransientError(f"could not reach the model server: {exc}")
    return ProposerError(f"malformed response from the model server: {type(exc).__name__}: {exc}")
