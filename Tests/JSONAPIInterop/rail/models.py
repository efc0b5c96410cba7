from django.db import models


class Depot(models.Model):
    name = models.CharField(max_length=200)
    city = models.CharField(max_length=200, blank=True, default="")

    class Meta:
        app_label = "rail"
        ordering = ["id"]


class Train(models.Model):
    company = models.CharField(max_length=200)
    number_of_cars = models.IntegerField(null=True, blank=True)
    max_speed = models.FloatField(null=True, blank=True)
    in_service = models.BooleanField(default=False)
    depots = models.ManyToManyField(Depot, blank=True, related_name="trains")

    class Meta:
        app_label = "rail"
        ordering = ["id"]


class Car(models.Model):
    occupancy = models.IntegerField(null=True, blank=True)
    needs_repairs = models.BooleanField(null=True, blank=True)
    train = models.ForeignKey(Train, null=True, blank=True, related_name="cars", on_delete=models.CASCADE)

    class Meta:
        app_label = "rail"
        ordering = ["id"]
