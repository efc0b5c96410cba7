"""The JSON:API app's serializers, views and routes, written as djangorestframework-jsonapi's
documentation writes them: its ModelSerializer and ModelViewSet, ResourceRelatedField for
relationships with their `related` and `self` links, `included_serializers` for `include=`, and a
RelationshipView for `/trains/1/relationships/depots`."""
from django.urls import path, re_path
from rest_framework import routers
from rest_framework_json_api import serializers
from rest_framework_json_api.relations import ResourceRelatedField
from rest_framework_json_api.views import ModelViewSet, RelationshipView

from .models import Car, Depot, Train


class DepotSerializer(serializers.ModelSerializer):
    class Meta:
        model = Depot
        fields = ["name", "city"]


class TrainSerializer(serializers.ModelSerializer):
    depots = ResourceRelatedField(
        queryset=Depot.objects.all(), many=True, required=False,
        related_link_view_name="train-related", related_link_url_kwarg="pk",
        self_link_view_name="train-relationships",
    )
    cars = ResourceRelatedField(
        many=True, read_only=True,
        related_link_view_name="train-related", related_link_url_kwarg="pk",
        self_link_view_name="train-relationships",
    )
    included_serializers = {
        "depots": "rail.api.DepotSerializer",
        "cars": "rail.api.CarSerializer",
    }

    class Meta:
        model = Train
        fields = ["company", "number_of_cars", "max_speed", "in_service", "depots", "cars"]


class CarSerializer(serializers.ModelSerializer):
    train = ResourceRelatedField(
        queryset=Train.objects.all(), required=False, allow_null=True,
        related_link_view_name="car-related", related_link_url_kwarg="pk",
        self_link_view_name="car-relationships",
    )
    included_serializers = {"train": "rail.api.TrainSerializer"}

    class Meta:
        model = Car
        fields = ["occupancy", "needs_repairs", "train"]


class TrainViewSet(ModelViewSet):
    queryset = Train.objects.all()
    serializer_class = TrainSerializer
    filterset_fields = {
        "company": ("exact", "in"),
        "max_speed": ("exact", "gt", "gte", "lt", "lte"),
        "in_service": ("exact",),
    }
    ordering_fields = ["company", "max_speed", "number_of_cars", "id"]
    search_fields = ["company"]


class CarViewSet(ModelViewSet):
    queryset = Car.objects.all()
    serializer_class = CarSerializer
    filterset_fields = {"train": ("exact",), "needs_repairs": ("exact",), "occupancy": ("exact", "gte", "lte")}
    ordering_fields = ["occupancy", "id"]


class DepotViewSet(ModelViewSet):
    queryset = Depot.objects.all()
    serializer_class = DepotSerializer
    filterset_fields = {"city": ("exact",)}
    ordering_fields = ["name", "id"]


class TrainRelationships(RelationshipView):
    queryset = Train.objects.all()


class CarRelationships(RelationshipView):
    queryset = Car.objects.all()


router = routers.DefaultRouter(trailing_slash=False)
router.register("trains", TrainViewSet)
router.register("cars", CarViewSet)
router.register("depots", DepotViewSet)

urlpatterns = router.urls + [
    re_path(
        r"^trains/(?P<pk>[^/.]+)/(?P<related_field>\w+)$",
        TrainViewSet.as_view({"get": "retrieve_related"}),
        name="train-related",
    ),
    re_path(
        r"^trains/(?P<pk>[^/.]+)/relationships/(?P<related_field>\w+)$",
        TrainRelationships.as_view(),
        name="train-relationships",
    ),
    re_path(
        r"^cars/(?P<pk>[^/.]+)/(?P<related_field>\w+)$",
        CarViewSet.as_view({"get": "retrieve_related"}),
        name="car-related",
    ),
    re_path(
        r"^cars/(?P<pk>[^/.]+)/relationships/(?P<related_field>\w+)$",
        CarRelationships.as_view(),
        name="car-relationships",
    ),
]
