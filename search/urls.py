"""Page URLs: new search, the user's searches, the search page, downloads, share pages."""

from django.conf import settings
from django.contrib.staticfiles.views import serve as serve_static
from django.urls import path, re_path

from search import views

urlpatterns = [
    path("", views.new_search, name="home"),
    path("searches/", views.search_list, name="search_list"),
    path("searches/<int:search_id>/", views.search_page, name="search"),
    path("searches/<int:search_id>/nodes/<int:node_id>/panel", views.node_panel, name="node_panel"),
    path("searches/<int:search_id>/nodes/<int:node_id>/kernel.py", views.node_kernel, name="node_kernel"),
    path("searches/<int:search_id>/best.py", views.best_kernel, name="best_kernel"),
    path("searches/<int:search_id>/search.json", views.search_download, name="search_json"),
    path("searches/<int:search_id>/cancel", views.cancel, name="search_cancel"),
    path("searches/<int:search_id>/share", views.share, name="search_share"),
    path("searches/<int:search_id>/revoke", views.revoke, name="search_revoke"),
    path("s/<str:slug>", views.share_page, name="share"),
    path("s/<str:slug>/best.py", views.share_best_kernel, name="share_best_kernel"),
    path("s/<str:slug>/nodes/<int:node_id>/panel", views.share_panel, name="share_panel"),
    # daphne serves no static files: the app serves its own few (a proxy may take over).
    re_path(rf"^{settings.STATIC_URL.strip('/')}/(?P<path>.+)$", serve_static, {"insecure": True}),
]
