"""A script that posts with the session's cookie but without the page's CSRF token gets a 403
that says what scripts do instead: send `Authorization: Bearer <token>`, and how to get one."""

import json

from django.test import Client

from tests.fixtures.web import SOFTMAX_REFERENCE


def test_the_403_says_to_send_a_bearer_token_and_how_to_get_one(owner, production):
    script = Client(enforce_csrf_checks=True)  # what curl with a copied cookie is to the server
    script.force_login(owner)
    response = script.post("/api/searches", data=json.dumps({"reference": SOFTMAX_REFERENCE}),
                           content_type="application/json")
    assert response.status_code == 403
    detail = response.json()["detail"]
    assert "Authorization: Bearer <token>" in detail
    assert "python manage.py api_token local" in detail


def test_in_single_user_mode_a_cookieless_script_gets_the_same_hint(db, local_mode):
    script = Client(enforce_csrf_checks=True)
    response = script.post("/api/searches", data=json.dumps({"reference": SOFTMAX_REFERENCE}),
                           content_type="application/json")
    assert response.status_code == 403
    detail = response.json()["detail"]
    assert "Authorization: Bearer" in detail and "python manage.py api_token local" in detail
