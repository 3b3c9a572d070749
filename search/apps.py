from django.apps import AppConfig


class SearchConfig(AppConfig):
    name = "search"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from search import sandbox_status  # registers the containment check

        sandbox_status.accept_in_single_user_mode()
