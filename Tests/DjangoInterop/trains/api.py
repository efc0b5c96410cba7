import django_filters
from rest_framework import filters, routers, serializers, viewsets

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


class TrainViewSet(viewsets.ModelViewSet):
    queryset = Train.objects.all()
    serializer_class = TrainSerializer
    filter_backends = [django_filters.rest_framework.DjangoFilterBackend, filters.SearchFilter]
    filterset_fields = ["company", "in_service"]
    search_fields = ["company"]


class CarViewSet(viewsets.ModelViewSet):
    queryset = Car.objects.all()
    serializer_class = CarSerializer
    filter_backends = [django_filters.rest_framework.DjangoFilterBackend]
    filterset_class = CarFilter


router = routers.DefaultRouter()
router.register("trains", TrainViewSet)
router.register("cars", CarViewSet)
urlpatterns = router.urls
