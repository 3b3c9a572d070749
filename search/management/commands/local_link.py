"""`manage.py local_link`: print the link that logs a browser in as the single-user mode's
local user (the key is readable only by the OS user who runs kernelweb)."""

from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from search.local_user import login_link


class Command(BaseCommand):
    help = "Print the single-user login link (open it in the browser)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--base", default="http://127.0.0.1:8000", help="the server's address")

    def handle(self, *args: Any, **opts: Any) -> None:
        if not settings.LOCAL_MODE:
            raise CommandError("single-user mode is off (KERNELWEB_LOCAL=0): log in with an account")
        self.stdout.write(login_link(opts["base"]))
