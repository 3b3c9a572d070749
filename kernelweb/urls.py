from django.contrib import admin
from django.urls import include, path

from search.api import api

urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/", api.urls),
    path("accounts/", include("search.account_urls")),
    path("", include("search.urls")),
]
