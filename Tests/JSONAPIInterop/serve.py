"""A djangorestframework-jsonapi app for MonoRail's JSON:API interoperability tests.

Serves trains, their cars and depots on 127.0.0.1 as JSON:API 1.1 documents, configured as
djangorestframework-jsonapi's documentation suggests: its renderer, parser, exception handler
(error objects with `source.pointer`), page-number pagination (`page[number]`, `page[size]`,
PAGE_SIZE 10, `links` and `meta.pagination`), and filter backends (`filter[company]`,
`filter[max_speed.gte]`, `sort=-max_speed`, `filter[search]`), with types dasherized and
pluralized (`trains`). Prints the port on the first line of stdout once it listens, then serves
until stdin closes, so the test process that started it takes it down with it.

    python3 serve.py            # a free port, a temporary database
    python3 serve.py 998        # with 998 more trains, "Bulk 0" to "Bulk 997"
"""
import os
import sys
import tempfile
import threading
from wsgiref.simple_server import WSGIRequestHandler, make_server

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import django
from django.conf import settings

folder = tempfile.mkdtemp(prefix="monorail-jsonapi-")
settings.configure(
    DEBUG=False,
    SECRET_KEY="monorail-interop-tests",
    ALLOWED_HOSTS=["127.0.0.1", "localhost"],
    INSTALLED_APPS=[
        "django.contrib.contenttypes",
        "django.contrib.auth",
        "rest_framework",
        "rest_framework_json_api",
        "django_filters",
        "rail",
    ],
    DATABASES={"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": os.path.join(folder, "db.sqlite3")}},
    ROOT_URLCONF="rail.api",
    MIDDLEWARE=[],
    USE_TZ=True,
    TIME_ZONE="UTC",
    JSON_API_FORMAT_TYPES="dasherize",
    JSON_API_PLURALIZE_TYPES=True,
    REST_FRAMEWORK={
        "PAGE_SIZE": 10,
        "EXCEPTION_HANDLER": "rest_framework_json_api.exceptions.exception_handler",
        "DEFAULT_PAGINATION_CLASS": "rest_framework_json_api.pagination.JsonApiPageNumberPagination",
        "DEFAULT_PARSER_CLASSES": ("rest_framework_json_api.parsers.JSONParser",),
        "DEFAULT_RENDERER_CLASSES": ("rest_framework_json_api.renderers.JSONRenderer",),
        "DEFAULT_METADATA_CLASS": "rest_framework_json_api.metadata.JSONAPIMetadata",
        "DEFAULT_FILTER_BACKENDS": (
            "rest_framework_json_api.filters.QueryParameterValidationFilter",
            "rest_framework_json_api.filters.OrderingFilter",
            "rest_framework_json_api.django_filters.DjangoFilterBackend",
            "rest_framework.filters.SearchFilter",
        ),
        "SEARCH_PARAM": "filter[search]",
        "DEFAULT_AUTHENTICATION_CLASSES": [],
        "DEFAULT_PERMISSION_CLASSES": [],
        "UNAUTHENTICATED_USER": None,
    },
)
django.setup()

from django.core.management import call_command

call_command("migrate", run_syncdb=True, verbosity=0)

from django.core.wsgi import get_wsgi_application
from rail.models import Car, Depot, Train

north = Depot.objects.create(name="North Yard", city="Hamburg")
south = Depot.objects.create(name="South Yard", city="Munich")
first = Train.objects.create(company="MonoRail Co.", number_of_cars=5, max_speed=46.8, in_service=True)
second = Train.objects.create(company="Deutsche Bahn AG", number_of_cars=12, max_speed=300.0, in_service=True)
first.depots.set([north, south])
second.depots.set([south])
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
