"""Settings for the Ridgeback Observatory imaging queue."""

# Camera
MAX_EXPOSURE_SECONDS = 120
GAIN = 100
COOLING_TARGET_C = -10

# Targets to image tonight, in order
TARGETS = ["M31", "M42", "NGC 7000"]

# Location
LATITUDE = 44.62
LONGITUDE = -110.41
SITE_NAME = "Ridgeback"
