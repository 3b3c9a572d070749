"""Admin views of the search app's rows, read-mostly: the event log is append-only."""

from django.contrib import admin

from search.models import ApiToken, LibraryKernel, Node, Problem, Search, SearchEvent


@admin.register(Problem)
class ProblemAdmin(admin.ModelAdmin):
    list_display = ("id", "name", "owner", "signature", "created")
    search_fields = ("name", "signature")


@admin.register(Search)
class SearchAdmin(admin.ModelAdmin):
    list_display = ("id", "problem", "owner", "status", "round", "candidates", "correct", "resumes", "heartbeat")
    list_filter = ("status",)
    raw_id_fields = ("problem", "best_node")


@admin.register(Node)
class NodeAdmin(admin.ModelAdmin):
    list_display = ("id", "search", "key", "kind", "status", "speedup")
    list_filter = ("kind", "status")
    raw_id_fields = ("search", "parent")


@admin.register(SearchEvent)
class SearchEventAdmin(admin.ModelAdmin):
    list_display = ("id", "search", "kind", "created")
    list_filter = ("kind",)
    raw_id_fields = ("search",)

    def has_change_permission(self, request, obj=None) -> bool:
        return False


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    list_display = ("id", "user", "name", "prefix", "created", "last_used")
    readonly_fields = ("token_hash", "prefix")


@admin.register(LibraryKernel)
class LibraryKernelAdmin(admin.ModelAdmin):
    list_display = ("id", "owner", "signature", "device", "speedup", "search")
    raw_id_fields = ("owner", "problem", "search")
