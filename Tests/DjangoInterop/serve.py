"""A Django REST framework app for MonoRail's interoperability tests.

Serves trains and cars on 127.0.0.1 with DRF's defaults (trailing slashes, bare bodies, 400 for
validation errors), and drf-spectacular's OpenAPI document of them at `/schema/?format=json`. Prints the port on the first line of stdout once it listens, then serves until
stdin closes, so the test process that started it takes it down with it.

    python3 serve.py            # a free port, a temporary database
    python3 serve.py 998        # with 998 more trains, "Bulk 0" to "Bulk 997"
    python3 serve.py 98 25      # and PAGE_SIZE = 25: every list paged unless asked otherwise
"""
import os
import shutil
import sys
import tempfile
import threading
from wsgiref.simple_server import WSGIRequestHandler, make_server

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import django
from django.conf import settings

folder = tempfile.mkdtemp(prefix="monorail-django-")
database = os.path.join(folder, "db.sqlite3")
settings.configure(
    DEBUG=False,
    SECRET_KEY="monorail-interop-tests",
    ALLOWED_HOSTS=["127.0.0.1", "localhost"],
    INSTALLED_APPS=[
        "django.contrib.contenttypes",
        "django.contrib.auth",
        "rest_framework",
        "django_filters",
        "drf_spectacular",
        "trains",
    ],
    DATABASES={"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": database}},
    ROOT_URLCONF="trains.api",
    MIDDLEWARE=[],
    USE_TZ=True,
    TIME_ZONE="UTC",
    REST_FRAMEWORK={
        "DEFAULT_AUTHENTICATION_CLASSES": [],
        "DEFAULT_PERMISSION_CLASSES": [],
        "UNAUTHENTICATED_USER": None,
        "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
        "PAGE_SIZE": int(sys.argv[2]) if len(sys.argv) > 2 else None,
        "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    },
    SPECTACULAR_SETTINGS={"TITLE": "Trains", "VERSION": "1.0.0"},
)
django.setup()

from django.core.management import call_command
from django.core.wsgi import get_wsgi_application

call_command("migrate", run_syncdb=True, verbosity=0)

from trains.models import Car, Train

first = Train.objects.create(company="MonoRail Co.", number_of_cars=5, max_speed=46.8, in_service=True, tags=["monorail"])
second = Train.objects.create(company="Deutsche Bahn AG", number_of_cars=12, max_speed=300.0, in_service=True)
Car.objects.create(occupancy=40, needs_repairs=False, train=first)
Car.objects.create(occupancy=12, needs_repairs=True, train=first)
Car.objects.create(occupancy=80, needs_repairs=False, train=second)
extra = int(sys.argv[1]) if len(sys.argv) > 1 else 0
Train.objects.bulk_create(
    [Train(company=f"Bulk {index}", number_of_cars=1, max_speed=float(index % 300), in_service=True) for index in range(extra)]
)


class QuietHandler(WSGIRequestHandler):
    def log_message(self, format, *args):
        pass


server = make_server("127.0.0.1", 0, get_wsgi_application(), handler_class=QuietHandler)
print(server.server_port, flush=True)
threading.Thread(target=server.serve_forever, daemon=True).start()
sys.stdin.read()  # returns when the parent closes the pipe or exits
server.shutdown()
shutil.rmtree(folder, ignore_errors=True)
