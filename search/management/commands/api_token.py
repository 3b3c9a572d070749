"""`manage.py api_token USER`: create an API token for scripts and print it (shown only once)."""

from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from search.api_auth import create_token, revoke_tokens


class Command(BaseCommand):
    help = "Create an API token for USER (use it as Authorization: Bearer <token>)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("username")
        parser.add_argument("--name", default="script")
        parser.add_argument("--revoke-all", action="store_true", help="delete the user's tokens instead")

    def handle(self, *args: Any, **opts: Any) -> None:
        try:
            user = get_user_model().objects.get(username=opts["username"])
        except get_user_model().DoesNotExist:
            raise CommandError(f"no user named {opts['username']!r}") from None
        if opts["revoke_all"]:
            self.stdout.write(f"revoked {revoke_tokens(user)} token(s)")
            return
        self.stdout.write(create_token(user, name=opts["name"]))
