from django.contrib.auth import views as auth_views
from django.urls import include, path, re_path

from .views import DiscoveryView

urlpatterns = [
    re_path(r"^o/\.well-known/openid-configuration/?$", DiscoveryView.as_view()),
    path("o/", include("oauth2_provider.urls", namespace="oauth2_provider")),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
]
