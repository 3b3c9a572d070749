"""Account URLs under /accounts/: login (and the single-user link), logout, sign-up, API tokens."""

from django.contrib.auth import views as auth_views
from django.urls import path

from search import account_views

urlpatterns = [
    path("signup/", account_views.signup, name="signup"),
    path("login/", account_views.ThrottledLoginView.as_view(), name="login"),
    path("local/", account_views.local_login, name="local_login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("token/", account_views.tokens, name="tokens"),
]
