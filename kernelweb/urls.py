from django.conf import settings
from django.contrib import admin
from django.urls import include, path

from search.api import api

urlpatterns = [
    path("api/", api.urls),
    path("accounts/", include("search.account_urls")),
    path("", include("search.urls")),
]
if settings.ADMIN_ENABLED:  # off unless KERNELWEB_ADMIN=1: one less login form to attack
    urlpatterns.insert(0, path("admin/", admin.site.urls))
