"""Logging in: the researchers' login page and a rate limit shared with the admin's login.

The limit counts failed attempts per (client address, username) in the Django cache (Redis in production,
so all web workers share it; in-process when embedded). After LOGIN_RATE_LIMIT failures within
LOGIN_RATE_LIMIT_WINDOW_SECONDS, further POSTs for that pair get a 429 page without the password
being checked, until the window (counted from the first failure) ends. A success clears the count.
A second, larger count per client IP alone (LOGIN_RATE_LIMIT_PER_ADDRESS) stops one address trying a
few passwords on many names (password spraying); a success does not clear it, or one valid account
would reset it.

The username is counted as Django logs in with it: NFKC-normalised (``ｒｅｓB`` logs in as ``resB``), and
case-folded, so look-alike spellings of one name share its count. The client address is the one
``annotations.guards.client_address`` reads (TRUSTED_PROXIES for a reverse proxy).
"""
from __future__ import annotations

import hashlib
import unicodedata
from collections.abc import Callable
from functools import wraps

from django.conf import settings
from django.contrib.auth import views as auth_views
from django.core.cache import cache
from django.http import HttpRequest
from django.http.response import HttpResponseBase
from django.shortcuts import render

from annotations.guards.client_address import client_address
from annotations.guards.window_counter import window_count

View = Callable[..., HttpResponseBase]  # a class-based view's as_view() is typed to return the base class


def _keys(request: HttpRequest) -> tuple[str, str]:
    """The cache keys of the (address, name) count and of the address's count."""
    ip = client_address(request)
    # As Django's UsernameField normalises it before authenticating, then case-folded.
    username = unicodedata.normalize("NFKC", request.POST.get("username", "")).strip().casefold()
    pair = "login-failures:" + hashlib.sha256(f"{ip}\0{username}".encode()).hexdigest()
    return pair, "login-failures-address:" + hashlib.sha256(ip.encode()).hexdigest()


def _count_failure(key: str) -> None:
    window_count(key, seconds=settings.LOGIN_RATE_LIMIT_WINDOW_SECONDS)


def rate_limited_login(view: View) -> View:
    """Wrap a login view: a POST that re-shows the form (200) is a failure, a redirect is a success."""

    @wraps(view)
    def wrapped(request: HttpRequest, *args: object, **kwargs: object) -> HttpResponseBase:
        if request.method != "POST":
            return view(request, *args, **kwargs)
        key, address = _keys(request)
        counts = cache.get_many([key, address])
        if (counts.get(key, 0) >= settings.LOGIN_RATE_LIMIT
                or counts.get(address, 0) >= settings.LOGIN_RATE_LIMIT_PER_ADDRESS):
            minutes = max(1, settings.LOGIN_RATE_LIMIT_WINDOW_SECONDS // 60)
            limited = render(request, "registration/login_limited.html", {"minutes": minutes}, status=429)
            limited["Retry-After"] = str(settings.LOGIN_RATE_LIMIT_WINDOW_SECONDS)
            return limited
        response = view(request, *args, **kwargs)
        if response.status_code == 302 and request.user.is_authenticated:
            cache.delete(key)
        elif response.status_code == 200:
            _count_failure(key)
            _count_failure(address)
        return response

    return wrapped


researcher_login = rate_limited_login(auth_views.LoginView.as_view(redirect_authenticated_user=True))
researcher_logout = auth_views.LogoutView.as_view()
