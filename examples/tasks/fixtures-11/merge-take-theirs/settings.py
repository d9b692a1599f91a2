"""Settings for the tidewatch worker.

Timeouts
========
All timeouts are in seconds.
"""
import os

<<<<<<< HEAD
FETCH_TIMEOUT = 30
||||||| 1a2b3c4
FETCH_TIMEOUT = 10
=======
FETCH_TIMEOUT = 45
SLOW_STATIONS = {"KLAGSHAMN", "FURUOGRUND"}
>>>>>>> feature/slow-stations

DATABASE_URL = os.environ.get("DATABASE_URL", "postgresql://localhost/tidewatch")

<<<<<<< HEAD
BATCH_SIZE = 500
RETRIES = 3
||||||| 1a2b3c4
BATCH_SIZE = 200
RETRIES = 3
=======
BATCH_SIZE = 200
RETRIES = 5
>>>>>>> feature/slow-stations

LOG_LEVEL = os.environ.get("LOG_LEVEL", "INFO")
<<<<<<< HEAD
METRICS_PORT = int(os.environ.get("METRICS_PORT", "9100"))
||||||| 1a2b3c4
METRICS_PORT = 9100
=======
>>>>>>> feature/slow-stations
EXPORT_DIR = "/srv/tidewatch/exports"
