import django_filters
from django.urls import path
from drf_spectacular.views import SpectacularAPIView
from rest_framework import filters, pagination, routers, serializers, viewsets
from rest_framework.settings import api_settings

from .models import Car, Train


class TrainSerializer(serializers.ModelSerializer):
    class Meta:
        model = Train
        fields = ["id", "company", "number_of_cars", "max_speed", "in_service", "built_at", "tags"]


class CarSerializer(serializers.ModelSerializer):
    # MonoRail's convention is `train_id`; DRF would call the key `train`.
    train_id = serializers.PrimaryKeyRelatedField(
        source="train", queryset=Train.objects.all(), allow_null=True, required=False
    )

    class Meta:
        model = Car
        fields = ["id", "occupancy", "needs_repairs", "train_id"]


class CarFilter(django_filters.FilterSet):
    train_id = django_filters.NumberFilter(field_name="train_id")

    class Meta:
        model = Car
        fields = ["needs_repairs"]


class PageNumbers(pagination.PageNumberPagination):
    page_size = api_settings.PAGE_SIZE  # None: unpaged unless ?page_size= asks
    page_size_query_param = "page_size"
    max_page_size = 1000


class Offsets(pagination.LimitOffsetPagination):
    default_limit = api_settings.PAGE_SIZE  # None: unpaged unless ?limit= asks
    max_limit = 1000


class PageNumbersOrOffsets(pagination.BasePagination):
    """DRF's two paginators on one endpoint: `limit`/`offset` when asked that way, else `page`/`page_size`."""

    def paginate_queryset(self, queryset, request, view=None):
        self.delegate = Offsets() if "limit" in request.query_params else PageNumbers()
        return self.delegate.paginate_queryset(queryset, request, view)

    def get_paginated_response(self, data):
        return self.delegate.get_paginated_response(data)

    # drf-spectacular documents the page-number style, the one a client meets by default.
    def get_schema_operation_parameters(self, view):
        return PageNumbers().get_schema_operation_parameters(view)

    def get_paginated_response_schema(self, schema):
        return PageNumbers().get_paginated_response_schema(schema)


class TrainViewSet(viewsets.ModelViewSet):
    queryset = Train.objects.all().order_by("id")
    serializer_class = TrainSerializer
    pagination_class = PageNumbersOrOffsets
    filter_backends = [django_filters.rest_framework.DjangoFilterBackend, filters.SearchFilter, filters.OrderingFilter]
    filterset_fields = {
        "company": ["exact", "in"],
        "in_service": ["exact"],
        "max_speed": ["exact", "gte", "gt", "lte", "lt"],
    }
    search_fields = ["company"]
    ordering_fields = ["id", "company", "max_speed"]


class CarViewSet(viewsets.ModelViewSet):
    queryset = Car.objects.all()
    serializer_class = CarSerializer
    filter_backends = [django_filters.rest_framework.DjangoFilterBackend]
    filterset_class = CarFilter


router = routers.DefaultRouter()
router.register("trains", TrainViewSet)
router.register("cars", CarViewSet)
urlpatterns = router.urls + [path("schema/", SpectacularAPIView.as_view(), name="schema")]
