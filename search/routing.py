"""Websocket routes (kernelweb/asgi.py mounts them behind the session middleware)."""

from django.urls import path

from search.consumers import SearchEventsConsumer, SharedSearchEventsConsumer

websocket_urlpatterns = [
    path("ws/searches/<int:search_id>/", SearchEventsConsumer.as_asgi()),
    path("ws/share/<str:slug>/", SharedSearchEventsConsumer.as_asgi()),
]
