"""`manage.py api_token USER`: create an API token for scripts and print it (shown only once);
list a user's tokens, or revoke one or all of them."""

from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from search.api_auth import SCOPES, create_token, revoke_token, revoke_tokens
from search.local_user import LOCAL_USERNAME, local_user
from search.models import ApiToken


class Command(BaseCommand):
    help = "Create an API token for USER (use it as Authorization: Bearer <token>)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("username")
        parser.add_argument("--name", default="script")
        parser.add_argument("--scope", default="write", choices=SCOPES,
                            help="read: only reads; write: also starts, cancels and shares searches")
        parser.add_argument("--expires-days", type=float, default=None, help="lifetime (default: none)")
        parser.add_argument("--list", action="store_true", help="list the user's tokens instead")
        parser.add_argument("--revoke", type=int, metavar="ID", help="delete the token with this id")
        parser.add_argument("--revoke-all", action="store_true", help="delete the user's tokens instead")

    def handle(self, *args: Any, **opts: Any) -> None:
        try:
            user = get_user_model().objects.get(username=opts["username"])
        except get_user_model().DoesNotExist:
            if opts["username"] != LOCAL_USERNAME:
                raise CommandError(f"no user named {opts['username']!r}") from None
            user = local_user()  # single-user mode's user, made before the site's first visit
        if opts["list"]:
            for t in ApiToken.objects.filter(user=user).order_by("id"):
                expires = t.expires.isoformat() if t.expires else "never"
                self.stdout.write(f"{t.id}\t{t.prefix}…\t{t.scope}\texpires {expires}\t{t.name}")
            return
        if opts["revoke"] is not None:
            if not revoke_token(user, opts["revoke"]):
                raise CommandError(f"{user.username} has no token with id {opts['revoke']}")
            self.stdout.write(f"revoked token {opts['revoke']}")
            return
        if opts["revoke_all"]:
            self.stdout.write(f"revoked {revoke_tokens(user)} token(s)")
            return
        try:
            token = create_token(user, name=opts["name"], scope=opts["scope"],
                                 expires_in_days=opts["expires_days"])
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(token)
