"""Single-user mode: on a local install every request acts as one local account."""

from collections.abc import Callable

from django.conf import settings
from django.contrib.auth import get_user_model
from django.http import HttpRequest, HttpResponse

LOCAL_USERNAME = "local"


def local_user():
    user, _ = get_user_model().objects.get_or_create(username=LOCAL_USERNAME)
    return user


class LocalUserMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if settings.LOCAL_MODE and not request.user.is_authenticated:
            request.user = local_user()
        return self.get_response(request)
