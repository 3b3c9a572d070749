"""Accounts: log in (throttled), the single-user login link, sign-up (when open), and the page
where a user makes and revokes API tokens for scripts."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.contrib.auth.forms import UserCreationForm
from django.contrib.auth.views import LoginView
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_GET, require_http_methods

from search import throttle
from search.api_auth import create_token, revoke_token, revoke_tokens
from search.local_user import LOCAL_USERNAME, is_login_key, local_user
from search.models import ApiToken

BACKEND = "django.contrib.auth.backends.ModelBackend"


class ThrottledLoginView(LoginView):
    """Django's login, refused with 429 once an account or an address has failed too often."""

    template_name = "accounts/login.html"

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        return {**super().get_context_data(**kwargs), "local_mode": settings.LOCAL_MODE,
                "signup_open": settings.SIGNUP_OPEN}

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        username = request.POST.get("username", "")
        address = throttle.client_address(request)
        refused = throttle.refusal(username, address)
        if refused:
            form = self.get_form_class()(request, initial={"username": username})
            return self.render_to_response(self.get_context_data(form=form, throttled=refused),
                                           status=429)
        response = super().post(request, *args, **kwargs)
        if request.user.is_authenticated:
            throttle.record_success(username, address)
        else:
            throttle.record_failure(username, address)
        return response


@require_GET
def local_login(request: HttpRequest) -> HttpResponse:
    """Single-user mode: the link with the local login key logs this browser in as the local
    user (a session cookie from then on); any other key is refused."""
    if not settings.LOCAL_MODE:
        raise Http404("Single-user mode is off.")
    if not is_login_key(request.GET.get("key")):
        return render(request, "accounts/login.html", {
            "local_mode": True, "local_refused": True, "signup_open": False,
        }, status=403)
    login(request, local_user(), backend=BACKEND)
    target = request.GET.get("next") or "/"
    if not url_has_allowed_host_and_scheme(target, {request.get_host()}, request.is_secure()):
        target = "/"
    return redirect(target)


@require_http_methods(["GET", "POST"])
def signup(request: HttpRequest) -> HttpResponse:
    """Create an account and log it in; then the new-search page. Only when sign-up is open."""
    if not settings.SIGNUP_OPEN:
        return render(request, "accounts/signup.html", {"closed": True}, status=403)
    form = UserCreationForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        if form.cleaned_data["username"] == LOCAL_USERNAME:
            form.add_error("username", "This name is reserved for single-user mode.")
        else:
            user = form.save()
            login(request, user, backend=BACKEND)
            return redirect("home")
    return render(request, "accounts/signup.html", {"form": form},
                  status=400 if request.method == "POST" else 200)


def _token_lifetime(raw: str | None) -> float | None:
    raw = (raw or "").strip()
    if not raw:
        return None
    try:
        return float(raw)
    except ValueError:
        raise ValueError(f"the lifetime must be a number of days, not {raw!r}") from None


@login_required
@require_http_methods(["GET", "POST"])
def tokens(request: HttpRequest) -> HttpResponse:
    """List the user's API tokens; POST `create` shows a new token once, `revoke` deletes one
    token (`token` = its id), `revoke_all` deletes them all."""
    new_token, error = "", ""
    if request.method == "POST":
        action = request.POST.get("action")
        if action == "revoke_all":
            revoke_tokens(request.user)
            return redirect("tokens")
        if action == "revoke":
            revoke_token(request.user, int(request.POST.get("token") or 0))
            return redirect("tokens")
        name = (request.POST.get("name") or "script").strip()[:100] or "script"
        try:
            new_token = create_token(request.user, name=name,
                                     scope=request.POST.get("scope") or ApiToken.Scope.WRITE,
                                     expires_in_days=_token_lifetime(request.POST.get("expires_days")))
        except ValueError as exc:
            error = str(exc)
    rows = ApiToken.objects.filter(user=request.user).order_by("-created")
    return render(request, "accounts/tokens.html", {
        "tokens": rows, "new_token": new_token, "error": error, "scopes": ApiToken.Scope.choices,
        "local_mode": settings.LOCAL_MODE,
    }, status=422 if error else 200)
