"""Account URLs under /accounts/: sign-up, login, logout, API tokens."""

from django.contrib.auth import views as auth_views
from django.urls import path

from search import account_views

urlpatterns = [
    path("signup/", account_views.signup, name="signup"),
    path("login/", auth_views.LoginView.as_view(template_name="accounts/login.html"), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("token/", account_views.tokens, name="tokens"),
]
