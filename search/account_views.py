"""Accounts: sign-up, and the page where a user makes API tokens for scripts."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.contrib.auth.forms import UserCreationForm
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from search.api_auth import create_token, revoke_tokens
from search.local_user import LOCAL_USERNAME
from search.models import ApiToken


@require_http_methods(["GET", "POST"])
def signup(request: HttpRequest) -> HttpResponse:
    """Create an account and log it in; then the new-search page."""
    form = UserCreationForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        if form.cleaned_data["username"] == LOCAL_USERNAME:
            form.add_error("username", "This name is reserved for single-user mode.")
        else:
            user = form.save()
            login(request, user, backend="django.contrib.auth.backends.ModelBackend")
            return redirect("home")
    return render(request, "accounts/signup.html", {"form": form},
                  status=400 if request.method == "POST" else 200)


@login_required
@require_http_methods(["GET", "POST"])
def tokens(request: HttpRequest) -> HttpResponse:
    """List the user's API tokens; POST `create` shows a new token once, `revoke` deletes all."""
    new_token = ""
    if request.method == "POST":
        if request.POST.get("action") == "revoke":
            revoke_tokens(request.user)
            return redirect("tokens")
        name = (request.POST.get("name") or "script").strip()[:100] or "script"
        new_token = create_token(request.user, name=name)
    rows = ApiToken.objects.filter(user=request.user).order_by("-created")
    return render(request, "accounts/tokens.html", {
        "tokens": rows, "new_token": new_token, "local_mode": settings.LOCAL_MODE,
    })
